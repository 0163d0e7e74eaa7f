// The basic layers: parameters drawn as torch.nn draws them, forwards through the ops.
#include <tapegrad/nn/layers.h>

#include <algorithm>
#include <cmath>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>  // round_to_bf16_bits
#include <tapegrad/nn/init.h>
#include <tapegrad/ops/detail/op_util.h>  // position_text

namespace tapegrad::nn {

void check_dropout_probability(const std::string& module, double p) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw Error(module + ": dropout probability " + std::to_string(p) + " is not in [0, 1)");
  }
}

// --- Linear --------------------------------------------------------------------------------------

namespace {
thread_local bool bf16_loading = false;
constexpr const char* kBf16Released =
    "its float32 values were freed when the layer took bfloat16 weights (use_bf16_weights, "
    "inference only): it cannot be trained, read, saved or loaded";
constexpr const char* kAwaitingBf16 =
    "it was built under Bf16LoadGuard and holds no values until its loader gives it bfloat16 "
    "ones (set_bf16_weight)";
}  // namespace

Bf16LoadGuard::Bf16LoadGuard() : previous_(bf16_loading) {
  bf16_loading = true;
}
Bf16LoadGuard::~Bf16LoadGuard() {
  bf16_loading = previous_;
}
bool Bf16LoadGuard::active() {
  return bf16_loading;
}

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
  if (dtype == DType::Float32 && Bf16LoadGuard::active()) {
    weight.release_values(kAwaitingBf16);
    if (bias) linear_init_bias(this->bias.data<float>(), out_features, in_features, generator);
  } else if (dtype == DType::Float32) {
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

void Linear::set_bf16_weight(const std::function<void(uint16_t* bits)>& fill) {
  if (weight.dtype() != DType::Float32) {
    throw Error("Linear \"" + name() + "\": set_bf16_weight needs a float32 weight; \"" +
                weight.name() + "\" is " + dtype_name(weight.dtype()));
  }
  AlignedBuffer bits(static_cast<size_t>(weight.numel()) * sizeof(uint16_t), /*zeroed=*/false);
  fill(static_cast<uint16_t*>(bits.data()));
  bf16_weight_ = std::move(bits);
  weight.release_values(kBf16Released);
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
  weight.release_values(kBf16Released);
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
    : Embedding(num_embeddings, embedding_dim, EmbeddingOptions{}, dtype, std::move(name),
                generator) {}

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, EmbeddingOptions options,
                     DType dtype, std::string name, Generator& generator)
    : Module(std::move(name)), options_(options) {
  const std::string module = "Embedding \"" + this->name() + "\"";
  if (num_embeddings <= 0 || embedding_dim <= 0) {
    throw Error(module + ": num_embeddings " + std::to_string(num_embeddings) +
                " and embedding_dim " + std::to_string(embedding_dim) + " must be positive");
  }
  if (options_.padding_idx) {
    int64_t& pad = *options_.padding_idx;
    if (pad < -num_embeddings || pad >= num_embeddings) {
      throw Error(module + ": padding_idx " + std::to_string(pad) + " must be within [-" +
                  std::to_string(num_embeddings) + ", " + std::to_string(num_embeddings) + ")");
    }
    if (pad < 0) pad += num_embeddings;
  }
  if (options_.max_norm && !(*options_.max_norm > 0.0)) {
    throw Error(module + ": max_norm " + std::to_string(*options_.max_norm) + " must be > 0");
  }
  if (!(options_.norm_type > 0.0)) {
    throw Error(module + ": norm_type " + std::to_string(options_.norm_type) + " must be > 0");
  }
  weight = Parameter(Shape{num_embeddings, embedding_dim}, dtype, "weight");  // [V, C]
  dispatch(dtype, [&]<class T>() {
    if (Bf16LoadGuard::active()) return;  // zeros, until loaded
    T* w = weight.data<T>();
    generator.normal(w, weight.numel());
    // torch's _fill_padding_idx_with_zero, after the draw: the stream is the same as without.
    if (options_.padding_idx)
      std::fill_n(w + *options_.padding_idx * embedding_dim, embedding_dim, T(0));
  });
  register_parameter("weight", &Embedding::weight);
}

Tensor Embedding::forward(const Ids& ids) const {
  return forward(ids.values(), ids.shape());
}

void Embedding::renorm_rows(std::span<const int64_t> ids, const Shape& ids_shape) const {
  const int64_t rows = num_embeddings(), cols = embedding_dim();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows) {
      throw Error("Embedding \"" + name() + "\": id" + position_text(ids_shape, int64_t(i)) +
                  " = " + std::to_string(ids[i]) + " is out of range [0, " + std::to_string(rows) +
                  ")");
    }
  }
  std::vector<int64_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const double p = options_.norm_type, max_norm = *options_.max_norm;
  dispatch(weight.dtype(), [&]<class T>() {
    for (const int64_t id : sorted) {
      T* row = weight.data<T>() + id * cols;
      // The norm rounded to the weight's dtype, as torch's row.norm(p) returns it.
      double total = 0;
      for (int64_t j = 0; j < cols; ++j) {
        const double a = std::abs(double(row[j]));
        total = std::isinf(p) ? std::max(total, a) : total + std::pow(a, p);
      }
      const double norm = double(T(std::isinf(p) || p == 1 ? total : std::pow(total, 1.0 / p)));
      if (!(norm > max_norm)) continue;
      // torch's row *= max_norm / (norm + 1e-7): the factor rounded to the weight's dtype.
      const T factor = T(max_norm / (norm + 1e-7));
      for (int64_t j = 0; j < cols; ++j) row[j] *= factor;
    }
  });
}

Tensor Embedding::forward(std::span<const int64_t> ids, const Shape& ids_shape) const {
  Tape& tape = current_tape();
  NameScope scope(name(), tape);
  if (options_.max_norm) renorm_rows(ids, ids_shape);
  Tensor out = embedding(tape.parameter(weight), ids, ids_shape);  // ids_shape + [C]
  if (!options_.padding_idx) return out;
  // torch's embedding_backward skips the padding rows: those positions take a detached copy of
  // their values, so their gradient reaches no row.
  std::vector<double> padded(ids.size());
  bool any = false;
  for (size_t i = 0; i < ids.size(); ++i) {
    padded[i] = ids[i] == *options_.padding_idx ? 1.0 : 0.0;
    any = any || padded[i] != 0.0;
  }
  if (!any || !grad_enabled()) return out;
  std::vector<int64_t> mask_dims(ids_shape.dims().begin(), ids_shape.dims().end());
  mask_dims.push_back(1);
  const Tensor mask = from_values(Shape(std::span<const int64_t>(mask_dims)), padded, out.dtype());
  return where(mask, detach(out), out);  // ids_shape + [C]
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
