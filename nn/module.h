// nn::Module: the base of every layer and model; children and parameters registered by name.
//
// As in torch.nn.Module, a module registers its parameters and its child modules under the
// attribute names the book uses, in the order it creates them; the names of named_parameters()
// and state_dict() then come from the structure: "tok_emb.weight",
// "trf_blocks.0.att.W_query.weight", "final_norm.scale", ... Buffers (constant tensors such as
// the causal mask) are in state_dict() and in saved files, as torch's persistent buffers are,
// but are not parameters: they are computed, never stored, and not trained.
//
// Ownership: a module owns its children as members (or through a container that owns them), and
// the base keeps pointers to them, so modules can be neither copied nor moved (build them in
// place, or hold them by std::shared_ptr / std::unique_ptr). Parameters are shared handles: the
// ones parameters() returns are the module's own weights.
//
// Parameter::name() of each parameter is kept equal to its path relative to the outermost module
// that registered it ("trf_blocks.0.att.W_query.weight"), so checkpoints and drawings name it as
// torch does. A module used on its own may prefix its names (nn::Linear "proj" names its weight
// "proj.weight"); named_parameters() always gives the structural path ("weight").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/parameter.h"
#include "graph/tape.h"

namespace tapegrad::nn {

// (name, tensor) pairs in torch's order; the tensors are handles to the module's own storage.
using StateDict = std::vector<std::pair<std::string, Parameter>>;

class Module {
 public:
  explicit Module(std::string name);
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The module's display name: forward records inside NameScope(name()) (one box per module in
  // the DOT drawing). Not part of parameter names.
  const std::string& name() const { return name_; }

  // Own parameters first, then each child's, recursively (torch's named_parameters order).
  StateDict named_parameters() const;
  std::vector<Parameter> parameters() const;
  int64_t num_parameters() const;  // total element count
  // Parameters and buffers as torch's state_dict(): per module its parameters, its buffers, then
  // its children. Buffers are freshly computed tensors; parameters are the module's own.
  StateDict state_dict() const;
  std::vector<std::pair<std::string, const Module*>> named_children() const;

  // Training mode (dropout active) for this module and all its descendants; modules start in
  // training mode, as torch's do.
  void train(bool on = true);
  void eval() { train(false); }
  bool training() const { return training_; }

  // Copies values by name (converting float32 <-> float64 when the dtypes differ), as torch's
  // load_state_dict. All or nothing: every name, shape and buffer is checked first, and an
  // Error names the tensor and both shapes on a mismatch, or lists the missing and unexpected
  // keys together (strict); nothing is changed then. With strict = false, missing and unexpected
  // keys are ignored (shapes are still checked). Buffers given must equal the module's.
  void load_state_dict(const StateDict& state, bool strict = true);

  // state_dict() as a safetensors file (F32/F64 tensors, written atomically, io/safetensors.h)
  // that safetensors.torch.load_file + the book's GPTModel.load_state_dict(strict=True) accept;
  // load() reads such a file, from tapegrad or from torch, through load_state_dict.
  void save(const std::string& path) const;
  void load(const std::string& path, bool strict = true);

 protected:
  // `p` must be a member of the derived module (the base keeps its address). Its name is set to
  // `name` unless it already has one.
  void register_parameter(const std::string& name, Parameter& p);
  // `child` must outlive this module (a member, or owned by a member container). Renames the
  // child's parameters to "<name>.<path>". Register a child after it is fully built.
  void register_module(const std::string& name, Module& child);
  // A persistent, computed buffer: `make` returns its current value (a fresh tensor).
  void register_buffer(const std::string& name, std::function<Parameter()> make);

 private:
  struct Entry {
    std::string name;
    Parameter tensor;
    bool buffer;
  };
  void collect(const std::string& prefix, bool with_buffers, std::vector<Entry>& out) const;

  std::string name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Parameter*>> parameters_;
  std::vector<std::pair<std::string, std::function<Parameter()>>> buffers_;
  std::vector<std::pair<std::string, Module*>> children_;
};

// A module with one tensor in and one out: what Sequential chains.
class UnaryModule : public Module {
 public:
  using Module::Module;
  virtual Tensor forward(const Tensor& x) const = 0;
  Tensor operator()(const Tensor& x) const { return forward(x); }
};

// torch.nn.Sequential: children named "0", "1", ...; forward applies them in order.
class Sequential : public UnaryModule {
 public:
  explicit Sequential(std::vector<std::shared_ptr<UnaryModule>> modules,
                      std::string name = "Sequential");
  Tensor forward(const Tensor& x) const override;
  size_t size() const { return modules_.size(); }
  UnaryModule& operator[](size_t i) const { return *modules_.at(i); }
  // The i-th module as its own class (std::bad_cast when it is not one).
  template <class M>
  M& at(size_t i) const {
    return dynamic_cast<M&>(*modules_.at(i));
  }

 private:
  std::vector<std::shared_ptr<UnaryModule>> modules_;
};

// torch.nn.ModuleList of one module class: children named "0", "1", ...; no forward of its own.
template <class M>
class ModuleList : public Module {
 public:
  explicit ModuleList(std::vector<std::unique_ptr<M>> modules, std::string name = "ModuleList")
      : Module(std::move(name)), modules_(std::move(modules)) {
    for (size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), *modules_[i]);
  }
  size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.empty(); }
  M& operator[](size_t i) const { return *modules_.at(i); }
  M& front() const { return *modules_.front(); }

 private:
  std::vector<std::unique_ptr<M>> modules_;
};

}  // namespace tapegrad::nn
