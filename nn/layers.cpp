// The basic layers: parameters drawn as torch.nn draws them, forwards through the ops.
#include <tapegrad/nn/layers.h>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>  // round_to_bf16_bits
#include <tapegrad/nn/init.h>

namespace tapegrad::nn {

void check_dropout_probability(const std::string& module, double p) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw Error(module + ": dropout probability " + std::to_string(p) + " is not in [0, 1)");
  }
}

// --- Linear --------------------------------------------------------------------------------------

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype, std::string name,
               Generator& generator)
    : UnaryModule(std::move(name)), in_features_(in_features), out_features_(out_features) {
  if (in_features <= 0 || out_features <= 0) {
    throw Error("Linear \"" + this->name() + "\": in_features " + std::to_string(in_features) +
                " and out_features " + std::to_string(out_features) + " must be positive");
  }
  weight =
      Parameter(Shape{out_features, in_features}, dtype, this->name() + ".weight");  // [out, in]
  if (bias) this->bias = Parameter(Shape{out_features}, dtype, this->name() + ".bias");  // [out]
  // reset_parameters: the whole weight, then the bias.
  if (dtype == DType::Float32) {
    linear_init_weight(weight.data<float>(), out_features, in_features, generator);
    if (bias) linear_init_bias(this->bias.data<float>(), out_features, in_features, generator);
  } else {
    linear_init_weight(weight.data<double>(), out_features, in_features, generator);
    if (bias) linear_init_bias(this->bias.data<double>(), out_features, in_features, generator);
  }
  register_parameter("weight", &Linear::weight);
  if (bias) register_parameter("bias", &Linear::bias);
}

Tensor Linear::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  if (x.rank() < 1 || x.size(-1) != in_features_) {
    throw Error("Linear \"" + name() + "\": input " + x.shape().str() + " must end in " +
                std::to_string(in_features_) + " features (weight " + weight.shape().str() + ")");
  }
  if (has_bf16_weight()) {
    // Inference only; named after the weight here, since the op sees only its bits.
    if (grad_enabled()) {
      throw Error("Linear \"" + name() + "\": weight \"" + weight.name() + "\" " +
                  weight.shape().str() +
                  " is bfloat16 (use_bf16_weights), for inference only: run under NoGradGuard");
    }
    if (x.dtype() != DType::Float32) {
      throw Error("Linear \"" + name() + "\": input " + x.shape().str() + " is " +
                  dtype_name(x.dtype()) + "; bfloat16 weights take float32 inputs");
    }
    const Bf16Weight w{bf16_weight(), out_features_, in_features_};  // [out, in]
    if (!bias.defined()) return linear_bf16(x, w);                   // [.., out]
    return linear_bf16(x, w, x.tape().parameter(bias));              // [.., out]
  }
  Tensor w = x.tape().parameter(weight);     // [out, in]
  if (!bias.defined()) return linear(x, w);  // [.., out]
  Tensor b = x.tape().parameter(bias);       // [out]
  return linear(x, w, b);                    // [.., out]
}

std::string Linear::same_class_problem(const Module& replacement) const {
  const auto& r = static_cast<const Linear&>(replacement);
  if (r.in_features() != in_features_ || r.weight.dtype() != weight.dtype()) {
    return "the replacing Linear has weight " + r.weight.shape().str() + " (" +
           dtype_name(r.weight.dtype()) + "); this layer takes " + std::to_string(in_features_) +
           " input features (weight " + weight.shape().str() + ", " + dtype_name(weight.dtype()) +
           ")";
  }
  return "";
}

void Linear::use_bf16_weight() {
  if (has_bf16_weight()) return;
  if (weight.dtype() != DType::Float32) {
    throw Error("Linear \"" + name() + "\": use_bf16_weight needs a float32 weight; \"" +
                weight.name() + "\" is " + dtype_name(weight.dtype()));
  }
  AlignedBuffer bits(static_cast<size_t>(weight.numel()) * sizeof(uint16_t), /*zeroed=*/false);
  round_to_bf16_bits(weight.data<float>(), static_cast<uint16_t*>(bits.data()), weight.numel());
  bf16_weight_ = std::move(bits);
  weight.release_values(
      "its float32 values were freed when the layer took bfloat16 weights (use_bf16_weights, "
      "inference only): it cannot be trained, read, saved or loaded");
}

int64_t use_bf16_weights(Module& model) {
  // Every Linear checked before any is converted: nothing changes when one cannot be.
  std::vector<Linear*> linears;
  for (Module* m : model.modules()) {
    auto* linear = dynamic_cast<Linear*>(m);
    if (linear == nullptr) continue;
    if (linear->weight.dtype() != DType::Float32) {
      throw Error("use_bf16_weights: Linear \"" + linear->weight.name() + "\" is " +
                  dtype_name(linear->weight.dtype()) + "; only float32 layers take bfloat16");
    }
    linears.push_back(linear);
  }
  for (Linear* linear : linears) linear->use_bf16_weight();
  return static_cast<int64_t>(linears.size());
}

// --- Embedding -----------------------------------------------------------------------------------

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, DType dtype, std::string name,
                     Generator& generator)
    : Module(std::move(name)) {
  if (num_embeddings <= 0 || embedding_dim <= 0) {
    throw Error("Embedding \"" + this->name() + "\": num_embeddings " +
                std::to_string(num_embeddings) + " and embedding_dim " +
                std::to_string(embedding_dim) + " must be positive");
  }
  weight = Parameter(Shape{num_embeddings, embedding_dim}, dtype, "weight");  // [V, C]
  if (dtype == DType::Float32) {
    generator.normal(weight.data<float>(), weight.numel());
  } else {
    generator.normal(weight.data<double>(), weight.numel());
  }
  register_parameter("weight", &Embedding::weight);
}

Tensor Embedding::forward(const Ids& ids) const {
  return forward(ids.values(), ids.shape());
}

Tensor Embedding::forward(std::span<const int64_t> ids, const Shape& ids_shape) const {
  Tape& tape = current_tape();
  NameScope scope(name(), tape);
  return embedding(tape.parameter(weight), ids, ids_shape);  // ids_shape + [C]
}

std::string Embedding::same_class_problem(const Module& replacement) const {
  const auto& r = static_cast<const Embedding&>(replacement);
  if (r.embedding_dim() != embedding_dim() || r.weight.dtype() != weight.dtype()) {
    return "the replacing Embedding has weight " + r.weight.shape().str() +
           "; this one gives embedding_dim " + std::to_string(embedding_dim()) + " (weight " +
           weight.shape().str() + ")";
  }
  return "";
}

// --- Dropout -------------------------------------------------------------------------------------

Dropout::Dropout(double p, std::string name, Generator& generator)
    : UnaryModule(std::move(name)), p_(p), generator_(&generator) {
  check_dropout_probability(this->name(), p);
}

Tensor Dropout::forward(const Tensor& x) const {
  // nn.Dropout draws nothing when p == 0 or in eval mode: the op returns x itself then.
  Tensor y = dropout(x, p_, training(), *generator_);  // [..]
  // Named, not scoped: one module applied twice (a block's drop_shortcut) would put both uses
  // in one NameScope, a box in the drawing spanning everything recorded between them.
  if (y.id() != x.id()) y.set_name(name());
  return y;
}

// --- LayerNorm -----------------------------------------------------------------------------------

LayerNorm::LayerNorm(int64_t emb_dim, DType dtype, std::string name)
    : UnaryModule(std::move(name)) {
  if (emb_dim <= 0) {
    throw Error("LayerNorm \"" + this->name() + "\": emb_dim " + std::to_string(emb_dim) +
                " must be positive");
  }
  scale = Parameter(Shape{emb_dim}, dtype, "scale");  // [C], ones
  shift = Parameter(Shape{emb_dim}, dtype, "shift");  // [C], zeros
  scale.assign(std::vector<double>(static_cast<size_t>(emb_dim), 1.0));
  register_parameter("scale", &LayerNorm::scale);
  register_parameter("shift", &LayerNorm::shift);
}

Tensor LayerNorm::forward(const Tensor& x) const {
  Tape& tape = x.tape();
  NameScope scope(name(), tape);
  if (x.rank() < 1 || x.size(-1) != scale.shape()[0]) {
    throw Error("LayerNorm \"" + name() + "\": input " + x.shape().str() + " must end in " +
                std::to_string(scale.shape()[0]) + " features (scale " + scale.shape().str() + ")");
  }
  return layer_norm(x, tape.parameter(scale), tape.parameter(shift), eps);  // [.., C]
}

GELU::GELU(std::string approximate_, std::string name)
    : UnaryModule(std::move(name)), approximate(std::move(approximate_)) {
  if (approximate != "none" && approximate != "tanh") {
    throw Error("GELU \"" + this->name() + "\": approximate must be \"none\" or \"tanh\", got \"" +
                approximate + "\"");
  }
}

}  // namespace tapegrad::nn

namespace tapegrad::nn {

std::string LayerNorm::same_class_problem(const Module& replacement) const {
  const auto& r = static_cast<const LayerNorm&>(replacement);
  if (r.scale.shape() != scale.shape() || r.scale.dtype() != scale.dtype()) {
    return "the replacing LayerNorm has scale " + r.scale.shape().str() + "; this one normalises " +
           scale.shape().str();
  }
  return "";
}

}  // namespace tapegrad::nn
