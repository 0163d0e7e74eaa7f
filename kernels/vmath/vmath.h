// Vectorised float/double kernels over arrays (SLEEF's transcendental functions, as torch's CPU
// kernels use them): the elementwise and per-row math of gelu, exp, tanh, sigmoid, softmax,
// cross-entropy and layer_norm. Not an op: the ops call these on their buffers.
//
// The transcendental functions are SLEEF's 1-ulp ("u10") ones, the same torch 1.13's
// Vectorized<float>/<double> call (Sleef_expf16_u10 / Sleef_expf8_u10, Sleef_tanhf16_u10,
// Sleef_expm1f16_u10, Sleef_logf16_u10 and their double versions), at the width of the CPU level
// in use (kernels/cpu/cpu.h; AVX-512: 16 floats, AVX2: 8, with the same bits); at the baseline
// level, the C library's functions, as torch's DEFAULT kernels call them.
// Tails are computed in a padded vector too, so every element of an array goes through the same
// function whatever its position (as torch's Vectorized::loadu(ptr, count) does).
// The arithmetic around them follows torch's kernels operation by operation (noted per function);
// tests/kernels/vmath/test_vmath.cpp measures the ulp distance to libm and to torch.
#pragma once

#include <cstdint>

namespace tapegrad::vmath {

// The variant in use ("avx512", "avx2", "baseline": the CPU level in use), for benchmark reports.
const char* isa();

// Elementwise; y may alias x.
void exp(const float* x, float* y, int64_t n);
void exp(const double* x, double* y, int64_t n);
void expm1(const float* x, float* y, int64_t n);
void expm1(const double* x, double* y, int64_t n);
void log(const float* x, float* y, int64_t n);
void log(const double* x, double* y, int64_t n);
void tanh(const float* x, float* y, int64_t n);
void tanh(const double* x, double* y, int64_t n);
void cos(const float* x, float* y, int64_t n);
void cos(const double* x, double* y, int64_t n);
void sin(const float* x, float* y, int64_t n);
void sin(const double* x, double* y, int64_t n);

// The op library's elementwise functions (ops/abs.cpp, ops/sin.cpp, ...), y = f(x) over n
// elements, y may alias x. At AVX2 and AVX-512 the transcendental ones are SLEEF's 1-ulp
// functions (erfc: SLEEF's 1.5-ulp, the only one it has), as torch's Vectorized calls them where
// it has them, the others exact (the same bits as the C library's: sqrt, the roundings, |x|,
// sign, x², x − trunc x); at baseline every one is the C library's, as the ops computed them
// before. Round is to nearest, ties to even (nearbyint: torch.round).
enum class Unary : int {
  kAbs,
  kSign,
  kSquare,
  kSqrt,
  kFloor,
  kCeil,
  kRound,
  kTrunc,
  kFrac,
  kExp,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kErf,
  kErfc,
  kLog1p,
  kExpm1,
  kExp2,
  kLog2,
  kLog10,
};
void map(Unary f, const float* x, float* y, int64_t n);
void map(Unary f, const double* x, double* y, int64_t n);

// The op library's binary functions of two tensors: SLEEF's at AVX2 and AVX-512 (torch's
// Vectorized pow, atan2 and fmod), the C library's at baseline (torch's DEFAULT kernels);
// remainder (the sign of b) and floor_divide (torch's floor division of floats, its quotient
// consistent with remainder) from fmod. SLEEF's fmod is exact, so fmod, remainder and
// floor_divide give the same bits at every level.
enum class Binary : int { kPow, kAtan2, kFmod, kRemainder, kFloorDivide };
// y[i] = f(a[i], b[i]) over n contiguous elements (y may alias a or b).
void map(Binary f, const float* a, const float* b, float* y, int64_t n);
void map(Binary f, const double* a, const double* b, double* y, int64_t n);

// y = base^x (torch's pow of a float32 number and a tensor, SLEEF's powf).
void pow_base(float base, const float* x, float* y, int64_t n);
// Σ x over n contiguous elements, as torch 1.13's sum kernel adds them (its cascade sum, one
// thread, AVX2's 8-float / 4-double vectors), at every level: the same bits everywhere. n = 0
// gives +0.
float sum(const float* x, int64_t n);
double sum(const double* x, int64_t n);
// Dropout's product with its saved mask: y = x·(keep ? scale : 0), or y += that (one rounded
// product, then the add, as torch's separate mul and autograd's add). y may alias x.
void masked_scale(const float* x, const uint8_t* keep, float scale, float* y, int64_t n,
                  bool accumulate = false);
void masked_scale(const double* x, const uint8_t* keep, double scale, double* y, int64_t n,
                  bool accumulate = false);
// y = 1 / (1 + exp(-x)), torch's sigmoid kernel.
void sigmoid(const float* x, float* y, int64_t n);
void sigmoid(const double* x, double* y, int64_t n);

// GELU, tanh approximation (torch's approximate='tanh' kernel and the book's GELU module):
//   y = 0.5·x·(1 + tanh(β·(x + κ·x³))),  β = √(2/π), κ = 0.044715,  x³ computed as (x·x)·x.
inline constexpr double kGeluBeta = 0.7978845608028654;  // as torch: M_SQRT2 · M_2_SQRTPI · 0.5
inline constexpr double kGeluKappa = 0.044715;
// tanh_u, when given, receives tanh(u), u = β·(x + κ·x³), for gelu_tanh_backward.
void gelu_tanh(const float* x, float* y, int64_t n, float* tanh_u = nullptr);
void gelu_tanh(const double* x, double* y, int64_t n, double* tanh_u = nullptr);
// dx += dy·(½(1 + tanh u) + ½x·(1 − tanh² u)·β(1 + 3κx²)), u = β(x + κx³): torch's
// GeluBackward order (left_derivative + right_derivative). tanh_u: the forward's tanh(u), which
// saves computing it again (the same bits: u is the same expression in both), or null. dx may
// not alias x, tanh_u or dy.
void gelu_tanh_backward(const float* x, const float* dy, float* dx, int64_t n,
                        const float* tanh_u = nullptr);
void gelu_tanh_backward(const double* x, const double* dy, double* dx, int64_t n,
                        const double* tanh_u = nullptr);

// Row-wise over a contiguous [rows, cols] array (cols > 0). Rows with a NaN give NaN; a row of
// -inf gives NaN like torch.
// y = softmax(x) per row: m = max, e = exp(x − m), y = e · (1 / Σe), torch's
// _vec_softmax_lastdim operation by operation (the level's exp, torch's AVX2 summation order at
// every level), so the bits do not depend on the row's address: the softmax op's rows, shared
// with the ops that must agree with it bit for bit. -inf entries give exactly 0. y may alias x.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols);
void softmax_rows(const double* x, double* y, int64_t rows, int64_t cols);
// dx += y ⊙ (dy − Σ dy ⊙ y) per row (y is softmax's output; the dot in torch's order, the term
// rounded before it is added). With accumulate = false, dx = y ⊙ (dy − Σ dy ⊙ y): the same bits
// as += into zeros, but for the sign of a zero.
void softmax_rows_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols,
                           bool accumulate = true);
void softmax_rows_backward(const double* y, const double* dy, double* dx, int64_t rows,
                           int64_t cols, bool accumulate = true);
// lse[r] = m + log Σ exp(x − m) per row (m the row max), the sum accumulated in T.
void logsumexp_rows(const float* x, float* lse, int64_t rows, int64_t cols);
void logsumexp_rows(const double* x, double* lse, int64_t rows, int64_t cols);
// y = x − lse per row (log_softmax), given the row log-sum-exps. y may alias x.
void log_softmax_rows(const float* x, const float* lse, float* y, int64_t rows, int64_t cols);
void log_softmax_rows(const double* x, const double* lse, double* y, int64_t rows, int64_t cols);

// layer_norm over the last dim, the arithmetic of ops/layer_norm.cpp (two-pass: the mean, then
// the biased variance about it; r = 1/√(var + eps); y = (x − μ)·r·w + b). weight and bias may be
// null (1 and 0); mean and rstd receive one value per row.
void layer_norm_rows(const float* x, const float* weight, const float* bias, float* y, float* mean,
                     float* rstd, int64_t rows, int64_t cols, double eps);
void layer_norm_rows(const double* x, const double* weight, const double* bias, double* y,
                     double* mean, double* rstd, int64_t rows, int64_t cols, double eps);
// Backward from the saved mean and rstd, accumulating (any of dx, dweight, dbias may be null):
//   G = dy·w, x̂ = (x − μ)·r:  dx += r·(G − mean(G) − x̂·mean(G·x̂)), dw += Σ_rows dy·x̂,
//   db += Σ_rows dy.
void layer_norm_rows_backward(const float* x, const float* weight, const float* mean,
                              const float* rstd, const float* dy, float* dx, float* dweight,
                              float* dbias, int64_t rows, int64_t cols);
void layer_norm_rows_backward(const double* x, const double* weight, const double* mean,
                              const double* rstd, const double* dy, double* dx, double* dweight,
                              double* dbias, int64_t rows, int64_t cols);

}  // namespace tapegrad::vmath
