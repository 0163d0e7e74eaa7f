// Appendix E's LoRA layers, the book's replacement walk, merging and adapter-only files.
#include <tapegrad/nn/lora.h>

#include <utility>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/nn/init.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

namespace {

void check_rank(const std::string& who, int64_t in_dim, int64_t rank) {
  if (rank < 1 || rank > in_dim) {
    throw Error(who + ": LoRA rank " + std::to_string(rank) + " must be in [1, " +
                std::to_string(in_dim) + "] (the layer's in_features " + std::to_string(in_dim) +
                ")");
  }
}

// (alpha / rank)·(A·B)ᵀ, [out, in], in double (merge adds it once to the float weight).
std::vector<double> lora_delta(const LoRALayer& lora) {
  const int64_t in = lora.A.shape()[0], r = lora.rank(), out = lora.B.shape()[1];
  const std::vector<double> a = lora.A.values(), b = lora.B.values();
  std::vector<double> delta(static_cast<size_t>(out * in), 0.0);
  for (int64_t i = 0; i < in; ++i) {
    for (int64_t k = 0; k < r; ++k) {
      const double aik = a[static_cast<size_t>(i * r + k)];
      for (int64_t o = 0; o < out; ++o) {
        delta[static_cast<size_t>(o * in + i)] += aik * b[static_cast<size_t>(k * out + o)];
      }
    }
  }
  for (double& d : delta) d *= lora.scaling();
  return delta;
}

// weight + sign·delta, rounded once to the weight's dtype.
std::vector<double> shifted(const Parameter& weight, const std::vector<double>& delta,
                            double sign) {
  std::vector<double> w = weight.values();
  for (size_t i = 0; i < w.size(); ++i) w[i] += sign * delta[i];
  return w;
}

}  // namespace

// --- LoRALayer -----------------------------------------------------------------------------------

LoRALayer::LoRALayer(int64_t in_dim, int64_t out_dim, int64_t rank, double alpha, DType dtype,
                     Generator& generator, std::string name)
    : UnaryModule(std::move(name)), alpha_(alpha) {
  if (in_dim < 1 || out_dim < 1) {
    throw Error(this->name() + ": in_dim " + std::to_string(in_dim) + " and out_dim " +
                std::to_string(out_dim) + " must be positive");
  }
  check_rank(this->name(), in_dim, rank);
  A = Parameter(Shape{in_dim, rank}, dtype, "A");   // [in, r]
  B = Parameter(Shape{rank, out_dim}, dtype, "B");  // [r, out], zeros
  // kaiming_uniform_(A, a=√5): fan_in of a 2-D tensor is its size(1), here the rank; the same
  // draw as a Linear weight [in_dim, rank].
  if (dtype == DType::Float32) {
    linear_init_weight(A.data<float>(), in_dim, rank, generator);
  } else {
    linear_init_weight(A.data<double>(), in_dim, rank, generator);
  }
  register_parameter("A", &LoRALayer::A);
  register_parameter("B", &LoRALayer::B);
}

Tensor LoRALayer::forward(const Tensor& x) const {
  Tape& tape = x.tape();
  NameScope scope(name(), tape);
  if (x.rank() < 1 || x.size(-1) != A.shape()[0]) {
    throw Error("LoRALayer \"" + name() + "\": input " + x.shape().str() + " must end in " +
                std::to_string(A.shape()[0]) + " features (A " + A.shape().str() + ")");
  }
  Tensor xa = matmul(x, tape.parameter(A));    // [.., r]
  Tensor xab = matmul(xa, tape.parameter(B));  // [.., out]
  return scale(xab, scaling());                // [.., out]
}

// --- LinearWithLoRA ------------------------------------------------------------------------------

LinearWithLoRA::LinearWithLoRA(Linear linear_, int64_t rank, double alpha, Generator& generator,
                               std::string name)
    : UnaryModule(std::move(name)),
      linear(std::move(linear_)),
      lora(linear.in_features(), linear.out_features(), rank, alpha, linear.weight.dtype(),
           generator, "lora") {
  register_module("linear", &LinearWithLoRA::linear);
  register_module("lora", &LinearWithLoRA::lora);
}

Tensor LinearWithLoRA::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  if (merged_) return linear(x);  // [.., out]
  return linear(x) + lora(x);     // [.., out]
}

void LinearWithLoRA::merge() {
  if (merged_) return;
  linear.weight.assign(shifted(linear.weight, lora_delta(lora), 1.0));
  merged_ = true;
}

void LinearWithLoRA::unmerge() {
  if (!merged_) return;
  linear.weight.assign(shifted(linear.weight, lora_delta(lora), -1.0));
  merged_ = false;
}

std::string LinearWithLoRA::stand_in_problem(const Module& original) const {
  const auto* base = dynamic_cast<const Linear*>(&original);
  if (base == nullptr) return Module::stand_in_problem(original);
  if (base->in_features() != linear.in_features() ||
      base->out_features() != linear.out_features()) {
    return "a LinearWithLoRA of " + linear.weight.shape().str() + " cannot stand in for a Linear " +
           "of " + std::to_string(base->in_features()) + " -> " +
           std::to_string(base->out_features()) + " features";
  }
  return "";
}

// --- the model-wide functions --------------------------------------------------------------------

int64_t replace_linear_with_lora(Module& model, int64_t rank, double alpha, Generator& generator) {
  // The book recurses: for name, module in model.named_children(): a Linear is replaced, any
  // other module is recursed into. The same depth-first order with an explicit stack of
  // (parent, child name), children pushed last-first so the first is taken first. A first pass
  // checks every layer, so a bad rank changes nothing.
  std::vector<std::pair<Module*, std::string>> targets;
  std::vector<std::pair<Module*, std::string>> stack;
  auto push_children = [&stack](Module& parent) {
    const auto children = parent.named_children();
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      stack.emplace_back(&parent, it->first);
    }
  };
  push_children(model);
  while (!stack.empty()) {
    auto [parent, name] = std::move(stack.back());
    stack.pop_back();
    Module& child = parent->child(name);
    if (auto* linear = dynamic_cast<Linear*>(&child)) {
      check_rank("replace_linear_with_lora: \"" + linear->name() + "\"", linear->in_features(),
                 rank);
      targets.emplace_back(parent, name);
    } else if (dynamic_cast<LinearWithLoRA*>(&child) == nullptr) {
      push_children(child);
    }
  }
  for (auto& [parent, name] : targets) {
    auto& linear = static_cast<Linear&>(parent->child(name));
    parent->replace_module(name, LinearWithLoRA(std::move(linear), rank, alpha, generator));
  }
  return static_cast<int64_t>(targets.size());
}

std::vector<LinearWithLoRA*> lora_layers(Module& model) {
  std::vector<LinearWithLoRA*> out;
  for (Module* m : model.modules()) {
    if (auto* l = dynamic_cast<LinearWithLoRA*>(m)) out.push_back(l);
  }
  return out;
}

void merge_lora(Module& model) {
  for (LinearWithLoRA* l : lora_layers(model)) l->merge();
}

void unmerge_lora(Module& model) {
  for (LinearWithLoRA* l : lora_layers(model)) l->unmerge();
}

StateDict merged_state_dict(const Module& model) {
  // The adapters by the prefix of their keys ("trf_blocks.0.att.W_query."), in order.
  std::vector<std::pair<std::string, const LinearWithLoRA*>> adapters;
  std::vector<std::pair<std::string, const Module*>> stack{{"", &model}};
  while (!stack.empty()) {
    auto [prefix, m] = stack.back();
    stack.pop_back();
    if (const auto* l = dynamic_cast<const LinearWithLoRA*>(m)) {
      adapters.emplace_back(prefix, l);
      continue;
    }
    const auto children = m->named_children();
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      stack.emplace_back(prefix + it->first + ".", it->second);
    }
  }
  StateDict out;
  for (const auto& [key, p] : model.state_dict()) {
    const LinearWithLoRA* owner = nullptr;
    std::string prefix;
    for (const auto& [pre, l] : adapters) {
      if (key.starts_with(pre)) owner = l, prefix = pre;
    }
    if (owner == nullptr) {
      out.emplace_back(key, p);
      continue;
    }
    const std::string rest = key.substr(prefix.size());
    if (rest.starts_with("lora.")) continue;
    const std::string base_key = prefix + rest.substr(std::string("linear.").size());
    if (rest == "linear.weight" && !owner->merged()) {
      Parameter merged(p.shape(), p.dtype(), base_key);
      merged.assign(shifted(p, lora_delta(owner->lora), 1.0));
      out.emplace_back(base_key, std::move(merged));
    } else {
      out.emplace_back(base_key, p);
    }
  }
  return out;
}

StateDict lora_state_dict(const Module& model) {
  StateDict out;
  for (const auto& [key, p] : model.named_parameters()) {
    if (key.ends_with(".lora.A") || key.ends_with(".lora.B") || key == "lora.A" ||
        key == "lora.B") {
      out.emplace_back(key, p);
    }
  }
  return out;
}

void save_lora(const Module& model, const std::string& path) {
  const StateDict state = lora_state_dict(model);
  if (state.empty()) throw Error("save_lora(" + path + "): " + model.name() + " has no adapter");
  save_state_dict(state, path);
}

void load_lora(Module& model, const std::string& path) {
  const StateDict file = load_state_dict_file(path);
  const StateDict own = lora_state_dict(model);
  std::string missing, unexpected;
  for (const auto& [key, p] : own) {
    if (!file.contains(key)) missing += " \"" + key + "\"";
  }
  for (const auto& [key, p] : file) {
    if (!own.contains(key)) unexpected += " \"" + key + "\"";
  }
  if (!missing.empty() || !unexpected.empty()) {
    throw Error("load_lora(" + path + "): the adapters differ from " + model.name() + "'s" +
                (missing.empty() ? "" : "; missing:" + missing) +
                (unexpected.empty() ? "" : "; unexpected:" + unexpected));
  }
  model.load_state_dict(file, /*strict=*/false);  // checks every shape before copying
}

}  // namespace tapegrad::nn
