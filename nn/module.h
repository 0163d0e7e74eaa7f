// nn::Module: the base of every layer and model; children and parameters registered by name.
//
// As in torch.nn.Module, a module registers its parameters and its child modules under the
// attribute names the book uses, in the order it creates them; the names of named_parameters()
// and state_dict() then come from the structure: "tok_emb.weight",
// "trf_blocks.0.att.W_query.weight", "final_norm.scale", ... Buffers (constant tensors such as
// the causal mask) are in state_dict() and in saved files, as torch's persistent buffers are,
// but are not parameters: they are computed, never stored, and not trained.
//
// Ownership: modules are values. A module owns its children as members (or through a container
// that owns them by shared_ptr), and registers each member by its pointer-to-member
// (register_module("att", &TransformerBlock::att)): the base keeps how to reach the member from
// any object of the class, not where it lay, so a moved module reads its own members, and modules
// can be moved (held by value in a std::vector that grows, returned from functions, assigned).
// They cannot be copied: parameters are shared handles, and a copy would silently share the
// weights. The ones parameters() returns are the module's own weights.
//
// Parameter::name() of each parameter is kept equal to its path relative to the outermost module
// that registered it ("trf_blocks.0.att.W_query.weight"), so checkpoints and drawings name it as
// torch does. A module used on its own may prefix its names (nn::Linear "proj" names its weight
// "proj.weight"); named_parameters() always gives the structural path ("weight").
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad::nn {

// (name, tensor) pairs in torch's order; the tensors are handles to the module's own storage.
// A vector (iterated in order, as torch's OrderedDict) that also looks a tensor up by name.
class StateDict : public std::vector<std::pair<std::string, Parameter>> {
 public:
  using vector::at;
  using vector::vector;
  // The tensor named `name`; throws Error naming it (and the keys closest to it) when absent.
  const Parameter& at(std::string_view name) const;
  Parameter& at(std::string_view name);
  bool contains(std::string_view name) const;
};

class Module {
 public:
  explicit Module(std::string name);
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // Moves keep names, parameters, buffers, children and registration (see above).
  Module(Module&&) noexcept = default;
  Module& operator=(Module&&) noexcept = default;

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
  // The registered children in registration order (a replaced child gives its replacement).
  std::vector<std::pair<std::string, const Module*>> named_children() const;
  std::vector<std::pair<std::string, Module*>> named_children();
  // This module and every module below it, depth first, each parent before its children in
  // registration order (torch's modules()).
  std::vector<Module*> modules();
  // The child registered as `name` (its replacement if replaced); throws Error listing the
  // children when there is none.
  Module& child(const std::string& name);
  const Module& child(const std::string& name) const;

  // torch's requires_grad_: sets requires_grad on every parameter of this module and its
  // descendants. A parameter that does not require a gradient is a constant on the tape: no
  // backward product runs for it (the ops skip the gradients of inputs that need none).
  Module& requires_grad_(bool requires_grad = true);
  // The parameters that require a gradient, in named_parameters order, and their element count.
  std::vector<Parameter> trainable_parameters() const;
  int64_t num_trainable_parameters() const;

  // torch's `model.<name> = replacement`: the child registered as `name` is replaced, keeping
  // its place in named_parameters / state_dict order, its name and its parameters' names
  // ("out_head.weight"). A replacement of the child's own class is moved into the member
  // (model.out_head is then the new layer); a replacement of another class must be able to
  // stand in for it (a UnaryModule that says so, as LinearWithLoRA does for a Linear): the member
  // then forwards to it. Throws Error (and changes nothing) when there is no such child, when
  // the replacement is of another kind, or when its shape does not fit (Linear: the same
  // in_features, the input the layer receives). Returns the replacement in place.
  template <class M>
  requires std::derived_from<M, Module> M& replace_module(const std::string& name, M&& replacement);

  // Why `replacement` cannot replace this module ("" when it can): its class, then its shape
  // (same_class_problem / stand_in_problem below).
  std::string replacement_problem(const Module& replacement) const;

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
  // Registers the Parameter member `member` of the module's class M under `name`, in
  // named_parameters order: register_parameter("weight", &Linear::weight). Its name is set to
  // `name` unless it already has one. Throws Error when this module is not an M.
  template <class M>
  requires std::derived_from<M, Module>
  void register_parameter(const std::string& name, Parameter M::*member);
  // Registers the child module `member` of the module's class M under `name`, and renames the
  // child's parameters "<name>.<path>": register_module("att", &TransformerBlock::att). Register a
  // child after it is fully built. Throws Error when this module is not an M.
  template <class M, class Child>
  requires std::derived_from<M, Module> && std::derived_from<Child, Module>
  void register_module(const std::string& name, Child M::*member);
  // A child owned through a shared_ptr (a container's element: Sequential, ModuleList).
  void register_module(const std::string& name, std::shared_ptr<Module> child);
  // A persistent, computed buffer: `make` returns its current value (a fresh tensor). It must
  // not capture `this` (the module may move): capture the values it is computed from.
  void register_buffer(const std::string& name, std::function<Parameter()> make);
  // A persistent buffer the module updates and load_state_dict copies into, as torch's
  // BatchNorm running statistics: in state_dict (after the parameters, with the other buffers,
  // in registration order), never in parameters(), so no optimiser steps it.
  template <class M>
  requires std::derived_from<M, Module>
  void register_buffer(const std::string& name, Parameter M::*member);

  // Replacement rules of a class (see replacement_problem): "" when `replacement`, of the same
  // class as this module, fits this module's place; the default accepts any.
  virtual std::string same_class_problem(const Module& replacement) const;
  // Whether this module (of another class than `original`) can stand in for `original`, and
  // why not; the default: it cannot.
  virtual std::string stand_in_problem(const Module& original) const;

  // The module standing in for this one after a replace_module of another class, or null.
  const Module* stand_in() const { return stand_in_.get(); }

 private:
  struct Entry {
    std::string name;
    Parameter tensor;
    bool buffer;
    bool computed;  // a computed buffer: load_state_dict checks it, does not copy into it
  };
  // A buffer: computed by `make`, or (loaded) the member reached by `member`.
  struct BufferSlot {
    std::string name;
    std::function<Parameter()> make;
    std::function<Parameter&(Module&)> member;
  };
  // How to reach a registered member from this module (any object of its class, so also after a
  // move), or, for a child, `owned` when the module holds it through a shared_ptr.
  struct ParameterSlot {
    std::string name;
    std::function<Parameter&(Module&)> member;
  };
  struct ChildSlot {
    std::string name;
    std::function<Module&(Module&)> member;  // empty when owned
    std::shared_ptr<Module> owned;
  };
  Parameter& parameter_at(const ParameterSlot& slot) const;
  // The member is reached through `member` on this module, which the caller has checked is an M.
  void add_parameter(const std::string& name, std::function<Parameter&(Module&)> member);
  void add_child(const std::string& name, std::function<Module&(Module&)> member);
  // Throws unless this module is an M (what a pointer-to-member of M needs).
  template <class M>
  M& as_class(const std::string& what) {
    M* self = dynamic_cast<M*>(this);
    if (self == nullptr) throw_not_member(what);
    return *self;
  }
  [[noreturn]] void throw_not_member(const std::string& what) const;
  // The registered member itself (not its stand-in).
  Module& slot_module(const ChildSlot& slot) const;
  ChildSlot& find_child_slot(const std::string& name);
  // This module, or what stands in for it.
  const Module& effective() const { return stand_in_ ? stand_in_->effective() : *this; }
  Module& effective() { return stand_in_ ? stand_in_->effective() : *this; }
  // Names every parameter of this subtree "<prefix><path>" (register_module, replace_module).
  void rename(const std::string& prefix);
  void collect(const std::string& prefix, bool with_buffers, std::vector<Entry>& out) const;
  // replace_module's last step: `slot` (moved into, or the new stand-in) takes the replaced
  // module's display name and parameter names.
  void adopt(Module& slot, const std::string& keep_name, const std::string& keep_prefix);

  std::string name_;
  std::string prefix_;  // this module's path in the outermost module that registered it, + "."
  bool training_ = true;
  std::vector<ParameterSlot> parameters_;
  std::vector<BufferSlot> buffers_;
  std::vector<ChildSlot> children_;
  std::shared_ptr<Module> stand_in_;
};

template <class M>
requires std::derived_from<M, Module> M& Module::replace_module(const std::string& name,
                                                                M&& replacement) {
  static_assert(!std::is_lvalue_reference_v<M>, "replace_module takes the replacement by move");
  Module& current = child(name);
  if (const std::string problem = current.replacement_problem(replacement); !problem.empty()) {
    throw Error(name_ + ".replace_module(\"" + name + "\"): " + problem);
  }
  const std::string keep_name = current.name_;
  const std::string keep_prefix = current.prefix_;
  if (typeid(current) == typeid(M)) {
    M& target = static_cast<M&>(current);
    target = std::move(replacement);
    adopt(target, keep_name, keep_prefix);
    return target;
  }
  auto owned = std::make_shared<M>(std::move(replacement));
  current.stand_in_ = owned;
  adopt(*owned, keep_name, keep_prefix);
  return *owned;
}

template <class M>
requires std::derived_from<M, Module>
void Module::register_parameter(const std::string& name, Parameter M::*member) {
  as_class<M>("parameter \"" + name + "\"");
  add_parameter(name,
                [member](Module& self) -> Parameter& { return static_cast<M&>(self).*member; });
}

template <class M>
requires std::derived_from<M, Module>
void Module::register_buffer(const std::string& name, Parameter M::*member) {
  as_class<M>("buffer \"" + name + "\"");
  buffers_.push_back({name, nullptr, [member](Module& self) -> Parameter& {
                        return static_cast<M&>(self).*member;
                      }});
}

template <class M, class Child>
requires std::derived_from<M, Module> && std::derived_from<Child, Module>
void Module::register_module(const std::string& name, Child M::*member) {
  as_class<M>("child \"" + name + "\"");
  add_child(name, [member](Module& self) -> Module& { return static_cast<M&>(self).*member; });
}

// A state dict as a safetensors file (F32/F64 tensors, written atomically, io/safetensors.h; I64
// entries read back as float64), and
// such a file read back (from tapegrad or torch); Module::save / load use them.
void save_state_dict(const StateDict& state, const std::string& path);
StateDict load_state_dict_file(const std::string& path);

// A module with one tensor in and one out: what Sequential chains. Call it as m(x): a module
// replaced by one of another class (replace_module) forwards to its stand-in.
class UnaryModule : public Module {
 public:
  using Module::Module;
  virtual Tensor forward(const Tensor& x) const = 0;
  Tensor operator()(const Tensor& x) const {
    if (const Module* s = stand_in()) return static_cast<const UnaryModule&>(*s)(x);
    return forward(x);
  }
};

// torch.nn.Sequential: children named "0", "1", ...; forward applies them in order. A frozen
// prefix (the leading children without a trainable parameter, fed an input that needs no
// gradient, grad mode on) runs on two scratch tapes of the calling thread, one child at a time,
// and x's tape gets one constant leaf holding its output: nothing of it is needed for backward,
// so its values are not kept (the same values and gradients as when recorded).
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

// torch.nn.ModuleList: children named "0", "1", ...; no forward of its own. M is the class the
// elements share; ModuleList<Module> (or ModuleList<UnaryModule>) holds modules of mixed classes,
// as torch's does, each reached as its own class by at<C>(i).
template <class M = Module>
class ModuleList : public Module {
 public:
  explicit ModuleList(std::vector<std::unique_ptr<M>> modules, std::string name = "ModuleList")
      : Module(std::move(name)) {
    modules_.reserve(modules.size());
    for (auto& m : modules) modules_.push_back(std::shared_ptr<M>(std::move(m)));
    for (size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
  }
  size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.empty(); }
  M& operator[](size_t i) const { return *modules_.at(i); }
  M& front() const { return *modules_.front(); }
  // The i-th module as its own class C (std::bad_cast when it is not one).
  template <class C>
  C& at(size_t i) const {
    return dynamic_cast<C&>(*modules_.at(i));
  }

 private:
  std::vector<std::shared_ptr<M>> modules_;
};

// torch.nn.ModuleDict: children registered under their keys, in the order given, so parameters
// are named "<key>.<path>" ("encoder.weight") as in torch's state_dict. Modules of any class; no
// forward of its own. Throws Error when a module is null or a key is empty, holds '.', or repeats.
class ModuleDict : public Module {
 public:
  explicit ModuleDict(std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules,
                      std::string name = "ModuleDict");
  size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.empty(); }
  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const;  // in order
  // The module under `key`; throws Error listing the keys when there is none.
  Module& operator[](const std::string& key) const;
  // The same as its own class C; throws Error naming the key when it is not a C.
  template <class C>
  C& at(const std::string& key) const {
    Module& m = (*this)[key];
    C* typed = dynamic_cast<C*>(&m);
    if (typed == nullptr) throw_wrong_class(key);
    return *typed;
  }

 private:
  [[noreturn]] void throw_wrong_class(const std::string& key) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules_;
};

}  // namespace tapegrad::nn
