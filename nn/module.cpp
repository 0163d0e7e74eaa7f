// nn::Module: registration, torch's naming and order, state_dict loading, safetensors files.
#include <tapegrad/nn/module.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/io/safetensors.h>

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

// Levenshtein distance, for "did you mean" lists.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The class name of a module, for messages ("tapegrad::nn::Linear" -> "Linear").
std::string class_name(const Module& m) {
  int status = 0;
  const char* mangled = typeid(m).name();
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : mangled;
  if (const size_t colon = name.rfind("::"); colon != std::string::npos) name.erase(0, colon + 2);
  return name;
}

}  // namespace

// --- StateDict -----------------------------------------------------------------------------------

bool StateDict::contains(std::string_view name) const {
  for (const auto& [key, p] : *this) {
    if (key == name) return true;
  }
  return false;
}

const Parameter& StateDict::at(std::string_view name) const {
  for (const auto& [key, p] : *this) {
    if (key == name) return p;
  }
  // The three keys closest in edit distance, to point at a typo or a renamed layer.
  std::vector<std::pair<size_t, std::string>> close;
  for (const auto& [key, p] : *this) close.emplace_back(edit_distance(key, name), key);
  std::stable_sort(close.begin(), close.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> nearest;
  for (size_t i = 0; i < close.size() && i < 3; ++i) nearest.push_back(close[i].second);
  std::string msg = "StateDict.at: no key \"" + std::string(name) + "\" among " +
                    std::to_string(size()) + " keys";
  if (!nearest.empty()) msg += "; the closest: " + join(nearest);
  throw Error(msg);
}

Parameter& StateDict::at(std::string_view name) {
  return const_cast<Parameter&>(std::as_const(*this).at(name));
}

// --- Module --------------------------------------------------------------------------------------

Module::Module(std::string name) : name_(std::move(name)) {}

void Module::throw_not_member(const std::string& what) const {
  throw Error(
      name_ + ": " + what + " is not a member of this module's class (register a child " +
      "held elsewhere through a shared_ptr: register_module(name, std::shared_ptr<Module>))");
}

Parameter& Module::parameter_at(const ParameterSlot& slot) const {
  return slot.member(const_cast<Module&>(*this));
}

Module& Module::slot_module(const ChildSlot& slot) const {
  if (slot.owned) return *slot.owned;
  return slot.member(const_cast<Module&>(*this));
}

void Module::add_parameter(const std::string& name, std::function<Parameter&(Module&)> member) {
  Parameter& p = member(*this);
  if (!p.defined()) throw Error(name_ + ": register_parameter(\"" + name + "\"): undefined");
  if (p.name().empty()) p.set_name(name);
  parameters_.push_back({name, std::move(member)});
}

void Module::rename(const std::string& prefix) {
  if (stand_in_) {
    stand_in_->rename(prefix);
    return;
  }
  prefix_ = prefix;
  for (const ParameterSlot& slot : parameters_) {
    Parameter& p = parameter_at(slot);
    if (p.defined()) p.set_name(prefix + slot.name);
  }
  for (const ChildSlot& slot : children_) slot_module(slot).rename(prefix + slot.name + ".");
}

void Module::add_child(const std::string& name, std::function<Module&(Module&)> member) {
  member(*this).rename(name + ".");
  children_.push_back({name, std::move(member), nullptr});
}

void Module::register_module(const std::string& name, std::shared_ptr<Module> child) {
  if (!child) throw Error(name_ + ": register_module(\"" + name + "\"): null module");
  child->rename(name + ".");
  children_.push_back({name, {}, std::move(child)});
}

void Module::register_buffer(const std::string& name, std::function<Parameter()> make) {
  buffers_.push_back({name, std::move(make), nullptr});
}

void Module::collect(const std::string& prefix, bool with_buffers, std::vector<Entry>& out) const {
  if (stand_in_) {
    stand_in_->collect(prefix, with_buffers, out);
    return;
  }
  for (const ParameterSlot& slot : parameters_) {
    out.push_back({prefix + slot.name, parameter_at(slot), false, false});
  }
  if (with_buffers) {
    for (const BufferSlot& b : buffers_) {
      if (b.make) {
        out.push_back({prefix + b.name, b.make(), true, true});
      } else {
        out.push_back({prefix + b.name, b.member(const_cast<Module&>(*this)), true, false});
      }
    }
  }
  for (const ChildSlot& slot : children_) {
    slot_module(slot).collect(prefix + slot.name + ".", with_buffers, out);
  }
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
  const Module& self = effective();
  std::vector<std::pair<std::string, const Module*>> out;
  for (const ChildSlot& slot : self.children_) {
    out.emplace_back(slot.name, &self.slot_module(slot).effective());
  }
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_children() {
  Module& self = effective();
  std::vector<std::pair<std::string, Module*>> out;
  for (const ChildSlot& slot : self.children_) {
    out.emplace_back(slot.name, &self.slot_module(slot).effective());
  }
  return out;
}

std::vector<Module*> Module::modules() {
  std::vector<Module*> out;
  std::vector<Module*> stack{&effective()};
  while (!stack.empty()) {
    Module* m = stack.back();
    stack.pop_back();
    out.push_back(m);
    const auto children = m->named_children();
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(it->second);
  }
  return out;
}

Module::ChildSlot& Module::find_child_slot(const std::string& name) {
  Module& self = effective();
  std::vector<std::string> names;
  for (ChildSlot& slot : self.children_) {
    if (slot.name == name) return slot;
    names.push_back(slot.name);
  }
  throw Error(name_ + ": no child \"" + name + "\" (children: " + join(names) + ")");
}

Module& Module::child(const std::string& name) {
  return effective().slot_module(find_child_slot(name)).effective();
}

const Module& Module::child(const std::string& name) const {
  return const_cast<Module*>(this)->child(name);
}

Module& Module::requires_grad_(bool requires_grad) {
  for (Parameter& p : parameters()) p.set_requires_grad(requires_grad);
  return *this;
}

std::vector<Parameter> Module::trainable_parameters() const {
  std::vector<Parameter> out;
  for (const Parameter& p : parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

int64_t Module::num_trainable_parameters() const {
  int64_t n = 0;
  for (const Parameter& p : trainable_parameters()) n += p.numel();
  return n;
}

std::string Module::same_class_problem(const Module&) const {
  return "";
}

std::string Module::stand_in_problem(const Module& original) const {
  return "a " + class_name(*this) + " cannot stand in for a " + class_name(original);
}

std::string Module::replacement_problem(const Module& replacement) const {
  if (typeid(replacement) == typeid(*this)) return same_class_problem(replacement);
  return replacement.stand_in_problem(*this);
}

void Module::adopt(Module& slot, const std::string& keep_name, const std::string& keep_prefix) {
  // A member moved out before the call (LinearWithLoRA takes its Linear) left its names empty:
  // they follow from where it is registered, "<this module's prefix><child name>.".
  std::string name = keep_name, prefix = keep_prefix;
  Module& self = effective();
  for (const ChildSlot& child : self.children_) {
    if (&self.slot_module(child).effective() != &slot) continue;
    if (name.empty()) name = child.name;
    if (prefix.empty()) prefix = self.prefix_ + child.name + ".";
  }
  slot.name_ = name;
  slot.rename(prefix);
}

void Module::train(bool on) {
  training_ = on;
  if (stand_in_) stand_in_->train(on);
  for (const ChildSlot& slot : children_) slot_module(slot).train(on);
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
    if (!e.computed) {
      // Throws, naming the tensor, when its values were released (bfloat16 weights).
      e.tensor.raw_data();
      src.raw_data();
    }
    if (e.computed && src.values() != e.tensor.values()) {
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
    if (!e.computed && it != given.end()) copy_values(e.tensor, *it->second);
  }
}

void save_state_dict(const StateDict& state, const std::string& path) {
  std::vector<SafetensorsTensor> tensors;
  tensors.reserve(state.size());
  for (const auto& [name, p] : state) {
    const auto dims = p.shape().dims();
    tensors.push_back(
        {name, safetensors_dtype(p.dtype()), std::vector<int64_t>(dims.begin(), dims.end()),
         std::span<const uint8_t>(static_cast<const uint8_t*>(p.raw_data()),
                                  static_cast<size_t>(p.numel() * dtype_size(p.dtype())))});
  }
  write_safetensors(path, {{"format", "pt"}}, tensors);
}

StateDict load_state_dict_file(const std::string& path) {
  const MappedFile file(path);  // read in place: the only copy is each tensor's own storage
  const SafetensorsView view = parse_safetensors(file.bytes(), path);
  StateDict state;
  state.reserve(view.entries.size());
  for (const SafetensorsEntry& entry : view.entries) {
    DType dtype;
    if (entry.dtype == "F32") {
      dtype = DType::Float32;
    } else if (entry.dtype == "F64" || entry.dtype == "I64") {
      dtype = DType::Float64;
    } else {
      throw Error(path + ": tensor " + describe_entry(entry) +
                  ": only F32, F64 and I64 (read as float64) tensors can be loaded");
    }
    if (entry.shape.size() > static_cast<size_t>(kMaxRank)) {
      throw Error(path + ": tensor " + describe_entry(entry) + ": rank above " +
                  std::to_string(kMaxRank));
    }
    Parameter p(Shape(std::span<const int64_t>(entry.shape)), dtype, entry.name);
    const auto bytes = view.bytes(entry);
    if (entry.dtype == "I64") {
      // An integer tensor (BatchNorm's num_batches_tracked) as float64: exact below 2^53.
      std::vector<double> values(bytes.size() / sizeof(int64_t));
      for (size_t i = 0; i < values.size(); ++i) {
        int64_t v;
        std::memcpy(&v, bytes.data() + i * sizeof(int64_t), sizeof v);
        values[i] = static_cast<double>(v);
      }
      p.assign(values);
    } else if (!bytes.empty()) {
      std::memcpy(p.raw_data(), bytes.data(), bytes.size());
    }
    state.emplace_back(entry.name, std::move(p));
  }
  return state;
}

void Module::save(const std::string& path) const {
  try {
    save_state_dict(state_dict(), path);  // the buffers' storage lives while writing
  } catch (const Error& e) {
    throw Error(name_ + ".save: " + e.what());
  }
}

void Module::load(const std::string& path, bool strict) {
  StateDict state;
  try {
    state = load_state_dict_file(path);
  } catch (const Error& e) {
    throw Error(name_ + ".load: " + e.what());
  }
  try {
    load_state_dict(state, strict);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

// --- ModuleDict ----------------------------------------------------------------------------------

ModuleDict::ModuleDict(std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules,
                       std::string name)
    : Module(std::move(name)), modules_(std::move(modules)) {
  std::set<std::string> seen;
  for (const auto& [key, module] : modules_) {
    const std::string where = this->name() + ": key \"" + key + "\"";
    if (key.empty()) throw Error(this->name() + ": a key is empty");
    if (key.find('.') != std::string::npos) {
      throw Error(where + " holds '.' (it would split the parameter names' paths)");
    }
    if (!seen.insert(key).second) throw Error(where + " is given twice");
    if (!module) throw Error(where + ": null module");
  }
  for (const auto& [key, module] : modules_) register_module(key, module);
}

bool ModuleDict::contains(const std::string& key) const {
  return std::any_of(modules_.begin(), modules_.end(),
                     [&](const auto& entry) { return entry.first == key; });
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& entry : modules_) out.push_back(entry.first);
  return out;
}

Module& ModuleDict::operator[](const std::string& key) const {
  for (const auto& [k, module] : modules_) {
    if (k == key) return *module;
  }
  throw Error(name() + ": no key \"" + key + "\" (keys: " + join(keys()) + ")");
}

void ModuleDict::throw_wrong_class(const std::string& key) const {
  throw Error(name() + ": the module under \"" + key + "\" is a " + class_name((*this)[key]) +
              ", not of the class asked for");
}

// --- Sequential ----------------------------------------------------------------------------------

Sequential::Sequential(std::vector<std::shared_ptr<UnaryModule>> modules, std::string name)
    : UnaryModule(std::move(name)), modules_(std::move(modules)) {
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (!modules_[i]) throw Error(this->name() + ": module " + std::to_string(i) + " is null");
    register_module(std::to_string(i), modules_[i]);
  }
}

namespace {

// The two tapes a Sequential's frozen prefix runs on (one thread's, kept with their memory), and
// whether one such run is under way on this thread (a Sequential inside it records as usual).
struct FrozenPrefixTapes {
  Tape tapes[2];
  bool busy = false;
};

FrozenPrefixTapes& frozen_prefix_tapes() {
  thread_local FrozenPrefixTapes t;
  return t;
}

bool has_trainable_parameter(const Module& m) {
  const std::vector<Parameter> params = m.parameters();
  return std::any_of(params.begin(), params.end(),
                     [](const Parameter& p) { return p.requires_grad(); });
}

}  // namespace

Tensor Sequential::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  Tensor y = x;
  size_t first = 0;
  // A frozen prefix (the leading children without a trainable parameter, fed an input that needs
  // no gradient, as the book's chapter-6 recipe makes of all blocks but the last) needs nothing
  // kept for backward: its children run on two scratch tapes in turn, each reset before its
  // next child, and only the prefix's output is copied onto x's tape (a constant leaf). So the
  // step holds one frozen child's intermediate values at a time, not all of them, as torch frees
  // them; values, gradients and the random draws are the same as when recorded.
  FrozenPrefixTapes& scratch = frozen_prefix_tapes();
  if (grad_enabled() && !x.requires_grad() && !scratch.busy) {
    while (first < modules_.size() && !has_trainable_parameter(*modules_[first])) ++first;
  }
  if (first > 0) {
    scratch.busy = true;
    struct Release {
      bool& busy;
      ~Release() { busy = false; }
    } release{scratch.busy};
    Tensor cur = x;
    for (size_t i = 0; i < first; ++i) {
      Tape& tape = scratch.tapes[i % 2];  // cur lives on the other one (or on x's tape)
      tape.reset();
      TapeScope on_scratch(tape);
      cur = (*modules_[i])(tape.leaf(cur.shape(), cur.dtype(), cur.node().value, false));
    }
    y = x.tape().leaf(cur.shape(), cur.dtype(), cur.node().value, false);
  }
  for (size_t i = first; i < modules_.size(); ++i) y = (*modules_[i])(y);
  return y;
}

}  // namespace tapegrad::nn
