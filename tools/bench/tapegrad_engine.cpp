// The tapegrad side of the benchmark: one training step of causal multi-head self-attention,
// recorded on a tape that is reset (its memory kept) every step.
#include "tools/bench/tapegrad_engine.h"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "graph/random.h"
#include "graph/tape.h"
#include "graph/threads.h"
#include "ops/ops.h"
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
#include "kernels/gemm.h"
#endif

namespace tapegrad_bench {

using namespace tapegrad;

namespace {

Parameter random_parameter(const Shape& shape, const char* name, double factor) {
  Parameter p(shape, DType::Float32, name);
  default_generator().uniform(p.data<float>(), p.numel());
  if (factor != 1.0) {
    const float f = static_cast<float>(factor);  // as the LibTorch engine scales
    float* v = p.data<float>();
    for (int64_t i = 0; i < p.numel(); ++i) v[i] *= f;
  }
  return p;
}

double sum_of(const Parameter& p) {
  double s = 0;
  for (int64_t i = 0; i < p.numel(); ++i) s += static_cast<double>(p.data<float>()[i]);
  return s;
}

// torch.optim.SGD without momentum: p.add_(grad, alpha=-lr), which LibTorch's AVX2 kernel
// computes as one fused multiply-add; then the gradient is zeroed for the next step.
void sgd_update(const Parameter& p, float lr) {
  float* v = p.data<float>();
  float* g = p.grad<float>();
  parallel_for(p.numel(), 2.0, [&](int, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      v[i] = std::fma(g[i], -lr, v[i]);
      g[i] = 0.0f;
    }
  });
}

}  // namespace

struct TapegradEngine::State {
  Tape tape;
  Parameter x, wq, wk, wv, wo, bo;
};

TapegradEngine::TapegradEngine(const tgb_shape& shape, int threads, Path path, bool openblas)
    : shape_(shape), path_(path), state_(std::make_unique<State>()) {
  set_num_threads(threads);
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  // Set either way: the library's default (OpenBLAS when linked) must not decide a row.
  if (!set_gemm_backend(openblas ? GemmBackend::OpenBLAS : GemmBackend::Eigen)) {
    throw std::runtime_error("this tapegrad was built without OpenBLAS (TAPEGRAD_OPENBLAS)");
  }
#else
  if (openblas) throw std::runtime_error("this build has no OpenBLAS backend");
#endif
  const tgb_shape& s = shape_;
  const double in_factor = s.scaled ? 1.0 / std::sqrt(static_cast<double>(s.d_in)) : 1.0;
  const double out_factor = s.scaled ? 1.0 / std::sqrt(static_cast<double>(s.d_out)) : 1.0;
  default_generator().manual_seed(123);
  State& st = *state_;
  st.x = random_parameter({s.b, s.t, s.d_in}, "x", 1.0);
  st.x.set_requires_grad(false);
  st.wq = random_parameter({s.d_in, s.d_out}, "W_query", in_factor);
  st.wk = random_parameter({s.d_in, s.d_out}, "W_key", in_factor);
  st.wv = random_parameter({s.d_in, s.d_out}, "W_value", in_factor);
  st.wo = random_parameter({s.d_out, s.d_out}, "W_out", out_factor);
  st.bo = random_parameter({s.d_out}, "b_out", out_factor);
}

TapegradEngine::~TapegradEngine() = default;

double TapegradEngine::checksum() const {
  const State& st = *state_;
  return sum_of(st.x) + sum_of(st.wq) + sum_of(st.wk) + sum_of(st.wv) + sum_of(st.wo) +
         sum_of(st.bo);
}

double TapegradEngine::step() {
  State& st = *state_;
  const tgb_shape& s = shape_;
  Tape& tape = st.tape;
  tape.reset();
  TapeScope scope(tape);
  const Tensor x = st.x;
  const Tensor q = matmul(x, st.wq), k = matmul(x, st.wk), v = matmul(x, st.wv);
  const double divisor = std::sqrt(static_cast<double>(s.d_out / s.heads));
  Tensor ctx;
#ifdef TAPEGRAD_BENCH_COMPOSED_ONLY  // building against an older tapegrad, for --baseline
  if (path_ != Path::Composed) throw std::runtime_error("this build has the composed path only");
  const Tensor qh = split_heads(q, s.heads), kh = split_heads(k, s.heads),
               vh = split_heads(v, s.heads);
  ctx = merge_heads(
      matmul(softmax(div_scalar(causal_mask(matmul(qh, transpose(kh, 2, 3))), divisor), -1), vh));
#else
  if (path_ == Path::Attention) {
    ctx = causal_attention(q, k, v, s.heads);
  } else {
    const Tensor qh = split_heads(q, s.heads), kh = split_heads(k, s.heads),
                 vh = split_heads(v, s.heads);
    const Tensor scores = matmul(qh, transpose(kh, 2, 3));
    const Tensor w = path_ == Path::CausalSoftmax
                         ? causal_softmax(scores, divisor)
                         : softmax(div_scalar(causal_mask(scores), divisor), -1);
    ctx = merge_heads(matmul(w, vh));
  }
#endif
  const Tensor out = add(matmul(ctx, st.wo), st.bo);
#ifdef TAPEGRAD_BENCH_COMPOSED_ONLY  // older commits may lack mean; the same arithmetic
  const Tensor loss = div_scalar(sum(mul(out, out)), static_cast<double>(out.numel()));
#else
  const Tensor loss = mean(mul(out, out));
#endif
  tape.backward(loss);
  const float lr = 1e-3f;
  for (const Parameter* p : {&st.wq, &st.wk, &st.wv, &st.wo, &st.bo}) sgd_update(*p, lr);
  return static_cast<double>(loss.data<float>()[0]);
}

const char* TapegradEngine::path_name(Path path) {
  switch (path) {
    case Path::Composed:
      return "composed";
    case Path::CausalSoftmax:
      return "causal_softmax";
    case Path::Attention:
      return "attention";
  }
  return "?";
}

size_t TapegradEngine::arena_bytes() const {
  return state_->tape.arena().bytes_reserved();
}

}  // namespace tapegrad_bench
