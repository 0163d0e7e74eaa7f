// Optimizer base: group bookkeeping, validation at construction, and state save/restore.
#include <tapegrad/optim/optimizer.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/optim/util.h>

namespace tapegrad {

using optim_detail::format_number;

const StateScalar* OptimizerState::find_scalar(const std::string& name) const {
  for (const StateScalar& s : scalars) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const StateTensor* OptimizerState::find_tensor(const std::string& name) const {
  for (const StateTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Optimizer::~Optimizer() = default;

Optimizer::Optimizer(std::string name, std::vector<ParamGroup> groups, double lr,
                     double weight_decay)
    : name_(std::move(name)) {
  // NaN lr means "not given" (torch's lr=required): then every group must set its own.
  if (!std::isnan(lr) && !(std::isfinite(lr) && lr >= 0)) {
    fail("lr must be >= 0, got " + format_number(lr));
  }
  if (!(std::isfinite(weight_decay) && weight_decay >= 0)) {
    fail("weight_decay must be >= 0, got " + format_number(weight_decay));
  }
  size_t total = 0;
  for (const ParamGroup& g : groups) total += g.params.size();
  if (total == 0) fail("got an empty parameter list");
  // Frozen parameters may be given (the book passes model.parameters() after freezing most of
  // them; they never get a gradient, so step() skips them), but not only frozen ones.
  bool any_trainable = false;
  for (const ParamGroup& g : groups) {
    for (const Parameter& p : g.params)
      any_trainable = any_trainable || !p.defined() || p.requires_grad();
  }
  if (!any_trainable) {
    fail("none of the " + std::to_string(total) +
         " parameters requires a gradient (all are frozen: requires_grad_(false))");
  }

  std::map<const ParameterImpl*, size_t> seen;  // parameter -> its group
  size_t index = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    ParamGroup& g = groups[gi];
    const std::string where = groups.size() > 1 ? "group " + std::to_string(gi) + ": " : "";
    const double group_lr = g.lr.value_or(lr);
    if (std::isnan(group_lr) && !g.lr) {
      fail(where + "no lr given (set options.lr or the group's lr)");
    }
    if (!(std::isfinite(group_lr) && group_lr >= 0)) {
      fail(where + "lr must be >= 0, got " + format_number(group_lr));
    }
    const double group_wd = g.weight_decay.value_or(weight_decay);
    if (!(std::isfinite(group_wd) && group_wd >= 0)) {
      fail(where + "weight_decay must be >= 0, got " + format_number(group_wd));
    }
    for (const Parameter& p : g.params) {
      if (!p.defined()) {
        fail(where + "parameter #" + std::to_string(index) + " is undefined (default-constructed)");
      }
      const auto [it, inserted] = seen.emplace(p.get(), gi);
      if (!inserted) {
        fail(describe_param(p, index) + " is given twice " +
             (it->second == gi ? "in group " + std::to_string(gi)
                               : "(in group " + std::to_string(it->second) + " and in group " +
                                     std::to_string(gi) + ")"));
      }
      ++index;
    }
    groups_.push_back(Group{std::move(g.params), group_lr, group_wd, std::nullopt});
  }
  states_.resize(total);
}

void Optimizer::set_state_layout(std::vector<std::string> slot_names, bool per_param_step) {
  slot_names_ = std::move(slot_names);
  per_param_step_ = per_param_step;
}

void Optimizer::fail(const std::string& what) const {
  throw Error(name_ + ": " + what);
}

std::string Optimizer::describe_param(const Parameter& p, size_t index) {
  const std::string who = p.name().empty() ? "#" + std::to_string(index) : "\"" + p.name() + "\"";
  return "parameter " + who + " " + p.shape().str();
}

void Optimizer::ensure_state(ParamState& state, const Parameter& p) {
  if (state.initialized) return;
  const size_t bytes = static_cast<size_t>(p.numel() * dtype_size(p.dtype()));
  for (size_t s = 0; s < slot_names_.size(); ++s) {
    if (state.slots[s].bytes() != bytes) {
      state.slots[s] = AlignedBuffer(bytes);
      ++state_allocations_;
    } else if (bytes > 0) {  // an empty parameter's buffers hold no memory (null data)
      std::memset(state.slots[s].data(), 0, bytes);
    }
  }
  state.step = 0;
  state.initialized = true;
}

void Optimizer::zero_grad() {
  for (const Group& g : groups_) {
    for (const Parameter& p : g.params) p.zero_grad();
  }
}

const Optimizer::Group& Optimizer::group_at(size_t group) const {
  if (group >= groups_.size()) {
    fail("no group " + std::to_string(group) + " (this optimizer has " +
         std::to_string(groups_.size()) + (groups_.size() == 1 ? " group)" : " groups)"));
  }
  return groups_[group];
}

const std::vector<Parameter>& Optimizer::params(size_t group) const {
  return group_at(group).params;
}

double Optimizer::lr(size_t group) const {
  return group_at(group).lr;
}

void Optimizer::set_lr(size_t group, double lr) {
  group_at(group);
  if (!(std::isfinite(lr) && lr >= 0)) {
    fail("group " + std::to_string(group) + ": lr must be >= 0, got " + format_number(lr));
  }
  groups_[group].lr = lr;
}

double Optimizer::weight_decay(size_t group) const {
  return group_at(group).weight_decay;
}

void Optimizer::set_weight_decay(size_t group, double weight_decay) {
  group_at(group);
  if (!(std::isfinite(weight_decay) && weight_decay >= 0)) {
    fail("group " + std::to_string(group) + ": weight_decay must be >= 0, got " +
         format_number(weight_decay));
  }
  groups_[group].weight_decay = weight_decay;
}

std::optional<double> Optimizer::initial_lr(size_t group) const {
  return group_at(group).initial_lr;
}

void Optimizer::set_initial_lr(size_t group, double lr) {
  group_at(group);
  groups_[group].initial_lr = lr;
}

std::vector<Parameter> Optimizer::parameters() const {
  std::vector<Parameter> all;
  for (const Group& g : groups_) all.insert(all.end(), g.params.begin(), g.params.end());
  return all;
}

namespace {

// "1 group", "2 groups", "3 parameters".
std::string count(size_t n, const std::string& kind) {
  const std::string noun = kind == "param" ? "parameter" : kind;
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::vector<double> buffer_values(const AlignedBuffer& buffer, DType dtype, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = dtype == DType::Float32
                                      ? static_cast<const float*>(buffer.data())[i]
                                      : static_cast<const double*>(buffer.data())[i];
  }
  return out;
}

}  // namespace

OptimizerState Optimizer::state() const {
  OptimizerState out;
  out.optimizer = name_;
  out.step = steps_;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = "group." + std::to_string(g) + ".";
    out.scalars.push_back({prefix + "lr", groups_[g].lr});
    out.scalars.push_back({prefix + "weight_decay", groups_[g].weight_decay});
    if (groups_[g].initial_lr)
      out.scalars.push_back({prefix + "initial_lr", *groups_[g].initial_lr});
  }
  size_t index = 0;
  for (const Group& g : groups_) {
    for (const Parameter& p : g.params) {
      const ParamState& st = states_[index];
      if (st.initialized) {
        const std::string prefix = "param." + std::to_string(index) + ".";
        if (per_param_step_) out.scalars.push_back({prefix + "step", static_cast<double>(st.step)});
        for (size_t s = 0; s < slot_names_.size(); ++s) {
          out.tensors.push_back({prefix + slot_names_[s], p.shape(), p.dtype(),
                                 buffer_values(st.slots[s], p.dtype(), p.numel())});
        }
      }
      ++index;
    }
  }
  return out;
}

void Optimizer::load_state(const OptimizerState& state) {
  const std::string where = "load_state: ";
  if (state.optimizer != name_) {
    fail(where + "the state is from " +
         (state.optimizer.empty() ? std::string("an unnamed optimizer") : state.optimizer) +
         ", not " + name_);
  }
  if (state.step < 0) fail(where + "step must be >= 0, got " + std::to_string(state.step));

  // Parse every name first; nothing is written until all of it checks out.
  struct GroupValues {
    std::optional<double> lr, weight_decay, initial_lr;
  };
  std::vector<GroupValues> group_values(groups_.size());
  const size_t num_params = states_.size();
  std::vector<std::optional<int64_t>> steps(num_params);
  std::vector<std::array<const StateTensor*, kMaxSlots>> tensors(num_params);
  for (auto& t : tensors) t.fill(nullptr);
  std::set<std::string> names;

  // "group.<g>.<field>" / "param.<i>.<field>": returns the index, or fails.
  auto parse_index = [&](const std::string& name, const char* kind, size_t limit,
                         std::string& field) -> size_t {
    const size_t prefix = std::strlen(kind) + 1;
    const size_t dot = name.find('.', prefix);
    size_t value = 0;
    const char* first = name.data() + prefix;
    const char* last = dot == std::string::npos ? name.data() + name.size() : name.data() + dot;
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last || first == last || dot == std::string::npos) {
      fail(where + "unknown entry \"" + name + "\"");
    }
    if (value >= limit) {
      fail(where + "\"" + name + "\": this optimizer has " + count(limit, kind));
    }
    field = name.substr(dot + 1);
    return value;
  };
  auto starts_with = [](const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
  };

  for (const StateScalar& s : state.scalars) {
    if (!names.insert(s.name).second) fail(where + "\"" + s.name + "\" appears twice");
    std::string field;
    if (starts_with(s.name, "group.")) {
      const size_t g = parse_index(s.name, "group", groups_.size(), field);
      const bool nonnegative = std::isfinite(s.value) && s.value >= 0;
      if (field == "lr" || field == "weight_decay" || field == "initial_lr") {
        if (!nonnegative) {
          fail(where + "\"" + s.name + "\" must be >= 0, got " + format_number(s.value));
        }
        (field == "lr"             ? group_values[g].lr
         : field == "weight_decay" ? group_values[g].weight_decay
                                   : group_values[g].initial_lr) = s.value;
        continue;
      }
    } else if (starts_with(s.name, "param.")) {
      const size_t i = parse_index(s.name, "param", num_params, field);
      if (field == "step" && per_param_step_) {
        if (!(s.value >= 1 && s.value == std::floor(s.value) && s.value < 9.0e15)) {
          fail(where + "\"" + s.name + "\" must be a whole number >= 1, got " +
               format_number(s.value));
        }
        steps[i] = static_cast<int64_t>(s.value);
        continue;
      }
    }
    fail(where + "unknown entry \"" + s.name + "\"");
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (const char* field : {"lr", "weight_decay"}) {
      const bool present = std::string(field) == "lr" ? group_values[g].lr.has_value()
                                                      : group_values[g].weight_decay.has_value();
      if (!present) {
        fail(where + "missing \"group." + std::to_string(g) + "." + field +
             "\" (this optimizer has " + count(groups_.size(), "group") + ")");
      }
    }
  }

  const std::vector<Parameter> all = parameters();
  for (const StateTensor& t : state.tensors) {
    if (!names.insert(t.name).second) fail(where + "\"" + t.name + "\" appears twice");
    std::string field;
    if (!starts_with(t.name, "param.")) fail(where + "unknown entry \"" + t.name + "\"");
    const size_t i = parse_index(t.name, "param", num_params, field);
    size_t slot = 0;
    while (slot < slot_names_.size() && slot_names_[slot] != field) ++slot;
    if (slot == slot_names_.size()) {
      fail(where + "unknown entry \"" + t.name + "\" (" + name_ + " here keeps " +
           (slot_names_.empty() ? std::string("no tensors") : [&] {
             std::string list;
             for (const std::string& n : slot_names_) list += (list.empty() ? "" : ", ") + n;
             return list;
           }()) +
           ")");
    }
    const Parameter& p = all[i];
    if (t.shape != p.shape() || t.dtype != p.dtype()) {
      fail(where + "\"" + t.name + "\" is " + t.shape.str() + " " + dtype_name(t.dtype) + ", but " +
           describe_param(p, i) + " is " + dtype_name(p.dtype()));
    }
    if (static_cast<int64_t>(t.values.size()) != p.numel()) {
      fail(where + "\"" + t.name + "\" " + t.shape.str() + " holds " +
           std::to_string(t.values.size()) + " values, expected " + std::to_string(p.numel()));
    }
    tensors[i][slot] = &t;
  }
  // A parameter has all of its state or none of it.
  for (size_t i = 0; i < num_params; ++i) {
    size_t present = 0;
    for (size_t s = 0; s < slot_names_.size(); ++s) present += tensors[i][s] != nullptr;
    const bool has_step = steps[i].has_value();
    const bool any = present > 0 || has_step;
    const bool complete = present == slot_names_.size() && (has_step || !per_param_step_);
    if (any && !complete) {
      std::string missing;
      for (size_t s = 0; s < slot_names_.size(); ++s) {
        if (!tensors[i][s]) missing += (missing.empty() ? "" : ", ") + slot_names_[s];
      }
      if (per_param_step_ && !has_step)
        missing += (missing.empty() ? "" : ", ") + std::string("step");
      fail(where + describe_param(all[i], i) + " has only part of its state (missing " + missing +
           ")");
    }
  }

  // Everything checks out: apply.
  steps_ = state.step;
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].lr = *group_values[g].lr;
    groups_[g].weight_decay = *group_values[g].weight_decay;
    groups_[g].initial_lr = group_values[g].initial_lr;
  }
  for (size_t i = 0; i < num_params; ++i) {
    ParamState& st = states_[i];
    const bool has_state = steps[i].has_value() || (!slot_names_.empty() && tensors[i][0]);
    if (!has_state) {
      st.initialized = false;
      st.step = 0;
      continue;
    }
    st.initialized = false;
    ensure_state(st, all[i]);
    st.step = steps[i].value_or(0);
    const Parameter& p = all[i];
    for (size_t s = 0; s < slot_names_.size(); ++s) {
      const std::vector<double>& v = tensors[i][s]->values;
      for (int64_t k = 0; k < p.numel(); ++k) {
        if (p.dtype() == DType::Float32) {
          static_cast<float*>(st.slots[s].data())[k] =
              static_cast<float>(v[static_cast<size_t>(k)]);
        } else {
          static_cast<double*>(st.slots[s].data())[k] = v[static_cast<size_t>(k)];
        }
      }
    }
  }
}

}  // namespace tapegrad
