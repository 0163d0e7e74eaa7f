// nn::Module: registration, torch's naming and order, state_dict loading, safetensors files.
#include "nn/module.h"

#include <cstring>
#include <map>
#include <set>

#include "graph/error.h"
#include "io/safetensors.h"

namespace tapegrad::nn {

namespace {

const char* safetensors_dtype(DType dtype) {
  return dtype == DType::Float32 ? "F32" : "F64";
}

// Copies src's values into dst (same shape), converting the element type when it differs.
void copy_values(Parameter dst, const Parameter& src) {  // dst: a handle to the storage
  if (dst == src) return;
  if (dst.dtype() == src.dtype()) {
    std::memcpy(dst.raw_data(), src.raw_data(),
                static_cast<size_t>(dst.numel() * dtype_size(dst.dtype())));
  } else {
    dst.assign(src.values());
  }
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}

void Module::register_parameter(const std::string& name, Parameter& p) {
  if (!p.defined()) throw Error(name_ + ": register_parameter(\"" + name + "\"): undefined");
  if (p.name().empty()) p.set_name(name);
  parameters_.emplace_back(name, &p);
}

void Module::register_module(const std::string& name, Module& child) {
  for (auto& [path, p] : child.named_parameters()) p.set_name(name + "." + path);
  children_.emplace_back(name, &child);
}

void Module::register_buffer(const std::string& name, std::function<Parameter()> make) {
  buffers_.emplace_back(name, std::move(make));
}

void Module::collect(const std::string& prefix, bool with_buffers, std::vector<Entry>& out) const {
  for (const auto& [name, p] : parameters_) out.push_back({prefix + name, *p, false});
  if (with_buffers) {
    for (const auto& [name, make] : buffers_) out.push_back({prefix + name, make(), true});
  }
  for (const auto& [name, child] : children_)
    child->collect(prefix + name + ".", with_buffers, out);
}

StateDict Module::named_parameters() const {
  std::vector<Entry> entries;
  collect("", false, entries);
  StateDict out;
  out.reserve(entries.size());
  for (Entry& e : entries) out.emplace_back(std::move(e.name), std::move(e.tensor));
  return out;
}

std::vector<Parameter> Module::parameters() const {
  std::vector<Parameter> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Parameter& p : parameters()) n += p.numel();
  return n;
}

StateDict Module::state_dict() const {
  std::vector<Entry> entries;
  collect("", true, entries);
  StateDict out;
  out.reserve(entries.size());
  for (Entry& e : entries) out.emplace_back(std::move(e.name), std::move(e.tensor));
  return out;
}

std::vector<std::pair<std::string, const Module*>> Module::named_children() const {
  return {children_.begin(), children_.end()};
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  const std::string where = "load_state_dict(" + name_ + "): ";
  std::map<std::string, const Parameter*> given;
  for (const auto& [name, p] : state) {
    if (!p.defined()) throw Error(where + "tensor \"" + name + "\" is undefined");
    if (!given.emplace(name, &p).second) throw Error(where + "key \"" + name + "\" given twice");
  }
  std::vector<Entry> own;
  collect("", true, own);

  // Check everything before changing anything.
  std::vector<std::string> missing, unexpected;
  std::set<std::string> known;
  for (const Entry& e : own) {
    known.insert(e.name);
    auto it = given.find(e.name);
    if (it == given.end()) {
      missing.push_back(e.name);
      continue;
    }
    const Parameter& src = *it->second;
    if (src.shape() != e.tensor.shape()) {
      throw Error(where + "size mismatch for \"" + e.name + "\": copying a tensor of shape " +
                  src.shape().str() + ", the shape in the module is " + e.tensor.shape().str());
    }
    if (e.buffer && src.values() != e.tensor.values()) {
      throw Error(where + "buffer \"" + e.name + "\" " + src.shape().str() +
                  " differs from the module's (it is computed, not loaded)");
    }
  }
  for (const auto& [name, p] : state) {
    if (!known.count(name)) unexpected.push_back(name);
  }
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string msg = where + "error(s) in loading state_dict:";
    if (!missing.empty()) msg += " missing key(s): " + join(missing) + ".";
    if (!unexpected.empty()) msg += " unexpected key(s): " + join(unexpected) + ".";
    throw Error(msg);
  }
  for (const Entry& e : own) {
    auto it = given.find(e.name);
    if (!e.buffer && it != given.end()) copy_values(e.tensor, *it->second);
  }
}

void Module::save(const std::string& path) const {
  const StateDict state = state_dict();  // keeps the buffers' storage alive while writing
  std::vector<SafetensorsTensor> tensors;
  tensors.reserve(state.size());
  for (const auto& [name, p] : state) {
    const auto dims = p.shape().dims();
    tensors.push_back(
        {name, safetensors_dtype(p.dtype()), std::vector<int64_t>(dims.begin(), dims.end()),
         std::span<const uint8_t>(static_cast<const uint8_t*>(p.raw_data()),
                                  static_cast<size_t>(p.numel() * dtype_size(p.dtype())))});
  }
  try {
    write_safetensors(path, {{"format", "pt"}}, tensors);
  } catch (const Error& e) {
    throw Error(name_ + ".save: " + e.what());
  }
}

void Module::load(const std::string& path, bool strict) {
  const MappedFile file(path);  // read in place, no copy of the file
  const SafetensorsView view = parse_safetensors(file.bytes(), path);
  StateDict state;
  state.reserve(view.entries.size());
  for (const SafetensorsEntry& entry : view.entries) {
    DType dtype;
    if (entry.dtype == "F32") {
      dtype = DType::Float32;
    } else if (entry.dtype == "F64") {
      dtype = DType::Float64;
    } else {
      throw Error(name_ + ".load: " + path + ": tensor " + describe_entry(entry) +
                  ": only F32 and F64 tensors can be loaded");
    }
    if (entry.shape.size() > static_cast<size_t>(kMaxRank)) {
      throw Error(name_ + ".load: " + path + ": tensor " + describe_entry(entry) + ": rank above " +
                  std::to_string(kMaxRank));
    }
    Parameter p(Shape(std::span<const int64_t>(entry.shape)), dtype, entry.name);
    const auto bytes = view.bytes(entry);
    if (!bytes.empty()) std::memcpy(p.raw_data(), bytes.data(), bytes.size());
    state.emplace_back(entry.name, std::move(p));
  }
  try {
    load_state_dict(state, strict);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

// --- Sequential ----------------------------------------------------------------------------------

Sequential::Sequential(std::vector<std::shared_ptr<UnaryModule>> modules, std::string name)
    : UnaryModule(std::move(name)), modules_(std::move(modules)) {
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (!modules_[i]) throw Error(this->name() + ": module " + std::to_string(i) + " is null");
    register_module(std::to_string(i), *modules_[i]);
  }
}

Tensor Sequential::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  Tensor y = x;
  for (const auto& m : modules_) y = m->forward(y);
  return y;
}

}  // namespace tapegrad::nn
