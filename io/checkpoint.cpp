// Checkpoints: what goes into the safetensors file, and the all-or-nothing load.
#include <tapegrad/io/checkpoint.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <deque>
#include <optional>
#include <set>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/optim/optimizer.h>
#include <tapegrad/optim/schedule.h>

namespace tapegrad {

namespace {

constexpr const char* kFormatKey = "tapegrad.format";
constexpr const char* kFormatVersion = "1";

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::string_view(s).substr(0, prefix.size()) == prefix;
}

bool reserved_metadata_key(const std::string& key) {
  return starts_with(key, "tapegrad.") || starts_with(key, "optim.") || starts_with(key, "sched.");
}

const char* file_dtype(DType dtype) {
  return dtype == DType::Float32 ? "F32" : "F64";
}

std::string format_double(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

// Owned little-endian bytes of `values` converted to `dtype` (exact: they came from it).
std::vector<uint8_t> encode(const std::vector<double>& values, DType dtype) {
  std::vector<uint8_t> bytes(values.size() * static_cast<size_t>(dtype_size(dtype)));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::Float32) {
      const auto f = static_cast<float>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &f, 4);
    } else {
      std::memcpy(bytes.data() + 8 * i, &values[i], 8);
    }
  }
  return bytes;
}

std::vector<double> decode(std::span<const uint8_t> bytes, DType dtype) {
  const size_t size = static_cast<size_t>(dtype_size(dtype));
  std::vector<double> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::Float32) {
      float f = 0;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      values[i] = f;
    } else {
      std::memcpy(&values[i], bytes.data() + 8 * i, 8);
    }
  }
  return values;
}

class Loader {
 public:
  Loader(const SafetensorsView& view, const std::string& source)
      : view_(view), where_(source + ": ") {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + what); }

  const std::string& metadata(const std::string& key) const {
    const std::string* v = view_.find_metadata(key);
    if (v == nullptr) fail("missing metadata \"" + key + "\"");
    return *v;
  }
  int64_t metadata_int(const std::string& key) const {
    const std::string& text = metadata(key);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      fail("metadata \"" + key + "\" = \"" + text + "\" is not an integer");
    }
    return v;
  }
  double parse_double(const std::string& key, const std::string& text) const {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      fail("metadata \"" + key + "\" = \"" + text + "\" is not a number");
    }
    return v;
  }

  // The entry `name`, which must be float32/float64 (returned) and of rank <= kMaxRank.
  DType float_entry(const SafetensorsEntry& e) const {
    if (e.dtype != "F32" && e.dtype != "F64") {
      fail("tensor " + describe_entry(e) + ": expected dtype F32 or F64");
    }
    if (e.shape.size() > static_cast<size_t>(kMaxRank)) {
      fail("tensor " + describe_entry(e) + ": rank " + std::to_string(e.shape.size()) +
           " is above the maximum of " + std::to_string(kMaxRank));
    }
    return e.dtype == "F32" ? DType::Float32 : DType::Float64;
  }

  OptimizerState optimizer_state() const {
    OptimizerState state;
    if (view_.find_metadata("optim.optimizer") == nullptr) {
      fail("the checkpoint holds no optimizer state (it was saved without an optimizer)");
    }
    state.optimizer = metadata("optim.optimizer");
    state.step = metadata_int("optim.step");
    for (const auto& [key, value] : view_.metadata) {
      if (!starts_with(key, "optim.") || key == "optim.optimizer" || key == "optim.step") continue;
      state.scalars.push_back({key.substr(6), parse_double(key, value)});
    }
    for (const SafetensorsEntry& e : view_.entries) {
      if (!starts_with(e.name, "optim.")) continue;
      const DType dtype = float_entry(e);
      state.tensors.push_back({e.name.substr(6), Shape(std::span<const int64_t>(e.shape)), dtype,
                               decode(view_.bytes(e), dtype)});
    }
    return state;
  }

  SchedulerState scheduler_state() const {
    if (view_.find_metadata("sched.step") == nullptr) {
      fail("the checkpoint holds no lr scheduler state (it was saved without a scheduler)");
    }
    SchedulerState state;
    state.step = metadata_int("sched.step");
    const int64_t groups = metadata_int("sched.groups");
    if (groups < 0 || static_cast<size_t>(groups) > view_.metadata.size()) {
      fail("metadata \"sched.groups\" = " + std::to_string(groups) + " is out of range");
    }
    for (int64_t g = 0; g < groups; ++g) {
      const std::string key = "sched.base_lr." + std::to_string(g);
      state.base_lrs.push_back(parse_double(key, metadata(key)));
    }
    return state;
  }

 private:
  const SafetensorsView& view_;
  std::string where_;
};

}  // namespace

void save_checkpoint(const std::string& path, const NamedParameters& params,
                     const CheckpointExtras& extras) {
  const std::string where = "save_checkpoint: " + path + ": ";
  std::vector<SafetensorsTensor> tensors;
  std::deque<std::vector<uint8_t>> owned;  // converted optimiser and RNG state (stable addresses)
  std::vector<std::pair<std::string, std::string>> metadata{{kFormatKey, kFormatVersion}};

  std::set<std::string, std::less<>> names;
  for (const auto& [name, p] : params) {
    if (name.empty() || name == "__metadata__" || starts_with(name, "optim.") ||
        starts_with(name, "rng.")) {
      throw Error(where + "parameter name \"" + name +
                  "\" is empty or reserved (\"__metadata__\", \"optim.*\", \"rng.*\")");
    }
    if (!names.insert(name).second)
      throw Error(where + "parameter name \"" + name + "\" is used twice");
    if (!p.defined()) throw Error(where + "parameter \"" + name + "\" is undefined");
    const auto* data = static_cast<const uint8_t*>(p.raw_data());
    const size_t bytes = static_cast<size_t>(p.numel() * dtype_size(p.dtype()));
    tensors.push_back({name,
                       file_dtype(p.dtype()),
                       std::vector<int64_t>(p.shape().dims().begin(), p.shape().dims().end()),
                       {data, bytes}});
  }
  if (extras.optimizer != nullptr) {
    const OptimizerState state = extras.optimizer->state();
    metadata.emplace_back("optim.optimizer", state.optimizer);
    metadata.emplace_back("optim.step", std::to_string(state.step));
    for (const StateScalar& s : state.scalars) {
      if (s.name == "optimizer" || s.name == "step") {
        throw Error(where + "optimizer scalar \"" + s.name + "\" collides with a reserved key");
      }
      metadata.emplace_back("optim." + s.name, format_double(s.value));
    }
    for (const StateTensor& t : state.tensors) {
      owned.push_back(encode(t.values, t.dtype));
      tensors.push_back({"optim." + t.name, file_dtype(t.dtype),
                         std::vector<int64_t>(t.shape.dims().begin(), t.shape.dims().end()),
                         owned.back()});
    }
  }
  if (extras.scheduler != nullptr) {
    const SchedulerState state = extras.scheduler->state();
    metadata.emplace_back("sched.step", std::to_string(state.step));
    metadata.emplace_back("sched.groups", std::to_string(state.base_lrs.size()));
    for (size_t g = 0; g < state.base_lrs.size(); ++g) {
      metadata.emplace_back("sched.base_lr." + std::to_string(g), format_double(state.base_lrs[g]));
    }
  }
  for (const auto& [name, generator] : extras.generators) {
    if (generator == nullptr) throw Error(where + "generator \"" + name + "\" is null");
    const std::vector<uint64_t> words = generator->state();
    std::vector<uint8_t> bytes(words.size() * 8);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    owned.push_back(std::move(bytes));
    tensors.push_back({"rng." + name, "U64", {static_cast<int64_t>(words.size())}, owned.back()});
  }
  for (const auto& [key, value] : extras.metadata) {
    if (reserved_metadata_key(key)) {
      throw Error(where + "metadata key \"" + key +
                  "\" is reserved (\"tapegrad.*\", \"optim.*\", \"sched.*\")");
    }
    metadata.emplace_back(key, value);
  }
  try {
    write_safetensors(path, std::move(metadata), tensors);
  } catch (const Error& e) {
    throw Error("save_checkpoint: " + std::string(e.what()));
  }
}

void load_checkpoint_bytes(std::span<const uint8_t> file, const std::string& source,
                           const NamedParameters& params, CheckpointExtras& extras) {
  const SafetensorsView view = parse_safetensors(file, source);
  const Loader loader(view, source);
  if (const std::string* version = view.find_metadata(kFormatKey)) {
    if (*version != kFormatVersion) {
      loader.fail("tapegrad checkpoint format " + *version +
                  " is not supported (this build reads " + kFormatVersion + ")");
    }
    // tapegrad always writes the CRC: a tapegrad file without one has a damaged header.
    if (!view.crc_verified) loader.fail(std::string("corrupted file: no ") + kCrcKey);
  }

  // 1. Parameters: every one present, same dtype and shape; no stray tensor in the file.
  struct Copy {
    void* destination;
    std::span<const uint8_t> source;
  };
  std::vector<Copy> copies;
  std::set<std::string, std::less<>> names;
  for (const auto& [name, p] : params) {
    if (!names.insert(name).second) loader.fail("parameter name \"" + name + "\" is given twice");
    if (!p.defined()) loader.fail("parameter \"" + name + "\" is undefined");
    const std::string model = "\"" + name + "\" " + p.shape().str() + " " + dtype_name(p.dtype());
    const SafetensorsEntry* e = view.find(name);
    if (e == nullptr) loader.fail("the model's parameter " + model + " is not in the checkpoint");
    const std::span<const int64_t> dims = p.shape().dims();
    const bool same_shape = std::equal(dims.begin(), dims.end(), e->shape.begin(), e->shape.end());
    if (e->dtype != file_dtype(p.dtype()) || !same_shape) {
      loader.fail("parameter " + model + " does not match the checkpoint's " + describe_entry(*e) +
                  (same_shape ? " (dtype differs)" : " (shape differs)"));
    }
    copies.push_back({p.raw_data(), view.bytes(*e)});
  }
  for (const SafetensorsEntry& e : view.entries) {
    if (starts_with(e.name, "optim.") || starts_with(e.name, "rng.")) continue;
    if (names.find(e.name) == names.end()) {
      loader.fail("the checkpoint holds " + describe_entry(e) +
                  ", which the model has no parameter for (saved from another model?)");
    }
  }

  // 2. Generators: each state must be one Generator::set_state accepts.
  std::vector<std::vector<uint64_t>> rng_states;
  for (const auto& [name, generator] : extras.generators) {
    if (generator == nullptr) loader.fail("generator \"" + name + "\" is null");
    const SafetensorsEntry* e = view.find("rng." + name);
    if (e == nullptr) loader.fail("the checkpoint holds no state for generator \"" + name + "\"");
    if (e->dtype != "U64" || e->shape.size() != 1 ||
        e->shape[0] != static_cast<int64_t>(Generator::kStateSize)) {
      loader.fail("generator state " + describe_entry(*e) + ": expected U64 [" +
                  std::to_string(Generator::kStateSize) + "]");
    }
    std::vector<uint64_t> words(Generator::kStateSize);
    std::memcpy(words.data(), view.bytes(*e).data(), words.size() * 8);
    try {
      Generator probe;
      probe.set_state(words);
    } catch (const Error& err) {
      loader.fail("generator state " + describe_entry(*e) + ": " + err.what());
    }
    rng_states.push_back(std::move(words));
  }

  // 3. Optimiser and scheduler state, parsed; load_state validates them all before applying.
  OptimizerState optimizer_state;
  SchedulerState scheduler_state;
  if (extras.optimizer != nullptr) optimizer_state = loader.optimizer_state();
  if (extras.scheduler != nullptr) scheduler_state = loader.scheduler_state();

  std::map<std::string, std::string> user_metadata;
  for (const auto& [key, value] : view.metadata) {
    if (!reserved_metadata_key(key)) user_metadata.emplace(key, value);
  }

  // 4. Apply. The optimiser and scheduler loads may still refuse (each changes nothing then); a
  // refusal of the second rolls the first back. Nothing after them can fail.
  if (extras.scheduler != nullptr || extras.optimizer != nullptr) {
    std::optional<OptimizerState> old_optimizer;
    std::optional<SchedulerState> old_scheduler;
    if (extras.optimizer != nullptr) old_optimizer = extras.optimizer->state();
    if (extras.scheduler != nullptr) old_scheduler = extras.scheduler->state();
    try {
      // The scheduler first: it sets each group's lr from its step; the optimiser's saved lrs
      // (the exact values at save time) then win.
      if (extras.scheduler != nullptr) extras.scheduler->load_state(scheduler_state);
      if (extras.optimizer != nullptr) extras.optimizer->load_state(optimizer_state);
    } catch (const Error& err) {
      if (old_scheduler) extras.scheduler->load_state(*old_scheduler);
      if (old_optimizer) extras.optimizer->load_state(*old_optimizer);
      loader.fail(err.what());
    }
  }
  for (size_t i = 0; i < rng_states.size(); ++i)
    extras.generators[i].second->set_state(rng_states[i]);
  for (const Copy& c : copies) std::memcpy(c.destination, c.source.data(), c.source.size());
  extras.metadata = std::move(user_metadata);
}

void load_checkpoint(const std::string& path, const NamedParameters& params,
                     CheckpointExtras& extras) {
  const MappedFile file(path);  // read in place, no copy of the file
  load_checkpoint_bytes(file.bytes(), path, params, extras);
}

void load_checkpoint(const std::string& path, const NamedParameters& params) {
  CheckpointExtras none;
  load_checkpoint(path, params, none);
}

}  // namespace tapegrad
