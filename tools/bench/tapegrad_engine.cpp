// The tapegrad side of the benchmark: one training step of causal multi-head self-attention
// through nn::MultiHeadAttention, recorded on a tape that is reset (its memory kept) every step.
#include "tools/bench/tapegrad_engine.h"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/ops/ops.h>
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
#include <tapegrad/nn/attention.h>
#include <tapegrad/optim/sgd.h>
#endif

namespace tapegrad_bench {

using namespace tapegrad;

namespace {

// Fills p with uniform [0, 1) draws of the default generator, times factor rounded to float32
// (as the LibTorch engine scales).
void fill_random(const Parameter& p, double factor) {
  default_generator().uniform(p.data<float>(), p.numel());
  if (factor != 1.0) {
    const float f = static_cast<float>(factor);
    float* v = p.data<float>();
    for (int64_t i = 0; i < p.numel(); ++i) v[i] *= f;
  }
}

double sum_of(const Parameter& p) {
  double s = 0;
  for (int64_t i = 0; i < p.numel(); ++i) s += static_cast<double>(p.data<float>()[i]);
  return s;
}

#ifdef TAPEGRAD_BENCH_COMPOSED_ONLY
// torch.optim.SGD without momentum: p.add_(grad, alpha=-lr); then the gradient is zeroed.
void sgd_update(const Parameter& p, float lr) {
  float* v = p.data<float>();
  float* g = p.grad<float>();
  for (int64_t i = 0; i < p.numel(); ++i) {
    v[i] = std::fma(g[i], -lr, v[i]);
    g[i] = 0.0f;
  }
}
#endif

}  // namespace

struct TapegradEngine::State {
  Tape tape;
  Parameter x;
  std::vector<Parameter> params;  // W_query, W_key, W_value, out_proj weight and bias
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  std::unique_ptr<nn::MultiHeadAttention> mha;
  std::unique_ptr<SGD> sgd;
#endif
};

TapegradEngine::TapegradEngine(const tgb_shape& shape, int threads)
    : shape_(shape), state_(std::make_unique<State>()) {
  set_num_threads(threads);
  const tgb_shape& s = shape_;
  State& st = *state_;
#ifdef TAPEGRAD_BENCH_COMPOSED_ONLY
  if (s.dropout != 0.0) throw std::runtime_error("this build has no dropout");
  for (const Shape& w : {Shape{s.d_out, s.d_in}, Shape{s.d_out, s.d_in}, Shape{s.d_out, s.d_in},
                         Shape{s.d_out, s.d_out}, Shape{s.d_out}}) {
    st.params.emplace_back(w, DType::Float32, "w");
  }
#else
  // The module first (its own init draws), then the benchmark's weights over it, as the
  // LibTorch engine does.
  st.mha = std::make_unique<nn::MultiHeadAttention>(s.d_in, s.d_out, s.t, s.dropout, s.heads);
  st.params = {st.mha->W_query.weight, st.mha->W_key.weight, st.mha->W_value.weight,
               st.mha->out_proj.weight, st.mha->out_proj.bias};
#endif
  const double in_factor = s.scaled ? 1.0 / std::sqrt(static_cast<double>(s.d_in)) : 1.0;
  const double out_factor = s.scaled ? 1.0 / std::sqrt(static_cast<double>(s.d_out)) : 1.0;
  default_generator().manual_seed(123);
  st.x = Parameter({s.b, s.t, s.d_in}, DType::Float32, "x");
  st.x.set_requires_grad(false);
  fill_random(st.x, 1.0);
  for (size_t i = 0; i < st.params.size(); ++i)
    fill_random(st.params[i], i < 3 ? in_factor : out_factor);
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  st.sgd = std::make_unique<SGD>(st.params, 1e-3);
#endif
}

TapegradEngine::~TapegradEngine() = default;

double TapegradEngine::checksum() const {
  double s = sum_of(state_->x);
  for (const Parameter& p : state_->params) s += sum_of(p);
  return s;
}

double TapegradEngine::step() {
  State& st = *state_;
  Tape& tape = st.tape;
  tape.reset();
  TapeScope scope(tape);
  const Tensor x = st.x;
#ifdef TAPEGRAD_BENCH_COMPOSED_ONLY  // building against an older tapegrad, for --baseline
  const tgb_shape& s = shape_;
  const std::vector<Parameter>& w = st.params;
  const Tensor q = matmul(x, transpose(w[0], 0, 1)), k = matmul(x, transpose(w[1], 0, 1)),
               v = matmul(x, transpose(w[2], 0, 1));
  const double divisor = std::sqrt(static_cast<double>(s.d_out / s.heads));
  const Tensor qh = split_heads(q, s.heads), kh = split_heads(k, s.heads),
               vh = split_heads(v, s.heads);
  const Tensor ctx = merge_heads(
      matmul(softmax(div_scalar(causal_mask(matmul(qh, transpose(kh, 2, 3))), divisor), -1), vh));
  const Tensor out = add(matmul(ctx, transpose(w[3], 0, 1)), w[4]);
  const Tensor loss = div_scalar(sum(mul(out, out)), static_cast<double>(out.numel()));
  tape.backward(loss);
  for (const Parameter& p : w) sgd_update(p, 1e-3f);
#else
  st.sgd->zero_grad();
  const Tensor out = (*st.mha)(x);  // [B, T, d_out]
  const Tensor loss = mean(mul(out, out));
  tape.backward(loss);
  st.sgd->step();
#endif
  return static_cast<double>(loss.data<float>()[0]);
}

size_t TapegradEngine::arena_bytes() const {
  return state_->tape.arena().bytes_reserved();
}

}  // namespace tapegrad_bench
