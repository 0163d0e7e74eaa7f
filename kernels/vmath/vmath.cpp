// vmath's public functions (kernels/vmath/vmath.h): each calls the variant of the CPU level in
// use (kernels/cpu/cpu.h), built from kernels/vmath/vmath_isa.cpp once per level.
#include <tapegrad/kernels/vmath/vmath.h>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/vmath/vmath_isa.h>

namespace tapegrad::vmath {
namespace {

// The level is one atomic load (cpu.cpp), so the table is picked per call and follows the test
// hook; AVX512_BF16 adds nothing here.
template <class T>
const levels::Kernels<T>& kernels() {
  const auto pick =
      [](const levels::Kernels<float>& f, const levels::Kernels<double>& d) -> const auto& {
    if constexpr (sizeof(T) == sizeof(float)) {
      (void)d;
      return f;
    } else {
      (void)f;
      return d;
    }
  };
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512)
    return pick(levels::vmath_avx512::kFloat, levels::vmath_avx512::kDouble);
  if (level == CpuCapability::Avx2)
    return pick(levels::vmath_avx2::kFloat, levels::vmath_avx2::kDouble);
#endif
  return pick(levels::vmath_baseline::kFloat, levels::vmath_baseline::kDouble);
}

}  // namespace

const char* isa() {
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512) return "avx512";
  if (level == CpuCapability::Avx2) return "avx2";
#endif
  return "baseline";
}

void exp(const float* x, float* y, int64_t n) {
  kernels<float>().exp(x, y, n);
}
void exp(const double* x, double* y, int64_t n) {
  kernels<double>().exp(x, y, n);
}
void expm1(const float* x, float* y, int64_t n) {
  kernels<float>().expm1(x, y, n);
}
void expm1(const double* x, double* y, int64_t n) {
  kernels<double>().expm1(x, y, n);
}
void log(const float* x, float* y, int64_t n) {
  kernels<float>().log(x, y, n);
}
void log(const double* x, double* y, int64_t n) {
  kernels<double>().log(x, y, n);
}
void tanh(const float* x, float* y, int64_t n) {
  kernels<float>().tanh(x, y, n);
}
void tanh(const double* x, double* y, int64_t n) {
  kernels<double>().tanh(x, y, n);
}
void cos(const float* x, float* y, int64_t n) {
  kernels<float>().cos(x, y, n);
}
void cos(const double* x, double* y, int64_t n) {
  kernels<double>().cos(x, y, n);
}
void map(Unary f, const float* x, float* y, int64_t n) {
  kernels<float>().map(static_cast<int>(f), x, y, n);
}
void map(Unary f, const double* x, double* y, int64_t n) {
  kernels<double>().map(static_cast<int>(f), x, y, n);
}
void map(Binary f, const float* a, const float* b, float* y, int64_t n) {
  kernels<float>().map2(static_cast<int>(f), a, b, y, n);
}
void map(Binary f, const double* a, const double* b, double* y, int64_t n) {
  kernels<double>().map2(static_cast<int>(f), a, b, y, n);
}
void sin(const float* x, float* y, int64_t n) {
  kernels<float>().sin(x, y, n);
}
void sin(const double* x, double* y, int64_t n) {
  kernels<double>().sin(x, y, n);
}
float sum(const float* x, int64_t n) {
  return kernels<float>().sum(x, n);
}
double sum(const double* x, int64_t n) {
  return kernels<double>().sum(x, n);
}
void masked_scale(const float* x, const uint8_t* keep, float scale, float* y, int64_t n,
                  bool accumulate) {
  kernels<float>().masked_scale(x, keep, scale, y, n, accumulate);
}
void masked_scale(const double* x, const uint8_t* keep, double scale, double* y, int64_t n,
                  bool accumulate) {
  kernels<double>().masked_scale(x, keep, scale, y, n, accumulate);
}
void sigmoid(const float* x, float* y, int64_t n) {
  kernels<float>().sigmoid(x, y, n);
}
void sigmoid(const double* x, double* y, int64_t n) {
  kernels<double>().sigmoid(x, y, n);
}
void gelu_tanh(const float* x, float* y, int64_t n, float* tanh_u) {
  kernels<float>().gelu_tanh(x, y, tanh_u, n);
}
void gelu_tanh(const double* x, double* y, int64_t n, double* tanh_u) {
  kernels<double>().gelu_tanh(x, y, tanh_u, n);
}
void gelu_tanh_backward(const float* x, const float* dy, float* dx, int64_t n,
                        const float* tanh_u) {
  kernels<float>().gelu_tanh_backward(x, tanh_u, dy, dx, n);
}
void gelu_tanh_backward(const double* x, const double* dy, double* dx, int64_t n,
                        const double* tanh_u) {
  kernels<double>().gelu_tanh_backward(x, tanh_u, dy, dx, n);
}
void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  kernels<float>().softmax_rows(x, y, rows, cols);
}
void softmax_rows(const double* x, double* y, int64_t rows, int64_t cols) {
  kernels<double>().softmax_rows(x, y, rows, cols);
}
void softmax_rows_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols,
                           bool accumulate) {
  kernels<float>().softmax_rows_backward(y, dy, dx, rows, cols, accumulate);
}
void softmax_rows_backward(const double* y, const double* dy, double* dx, int64_t rows,
                           int64_t cols, bool accumulate) {
  kernels<double>().softmax_rows_backward(y, dy, dx, rows, cols, accumulate);
}
void logsumexp_rows(const float* x, float* lse, int64_t rows, int64_t cols) {
  kernels<float>().logsumexp_rows(x, lse, rows, cols);
}
void logsumexp_rows(const double* x, double* lse, int64_t rows, int64_t cols) {
  kernels<double>().logsumexp_rows(x, lse, rows, cols);
}
void log_softmax_rows(const float* x, const float* lse, float* y, int64_t rows, int64_t cols) {
  kernels<float>().log_softmax_rows(x, lse, y, rows, cols);
}
void log_softmax_rows(const double* x, const double* lse, double* y, int64_t rows, int64_t cols) {
  kernels<double>().log_softmax_rows(x, lse, y, rows, cols);
}
void layer_norm_rows(const float* x, const float* weight, const float* bias, float* y, float* mean,
                     float* rstd, int64_t rows, int64_t cols, double eps) {
  kernels<float>().layer_norm_rows(x, weight, bias, y, mean, rstd, rows, cols, eps);
}
void layer_norm_rows(const double* x, const double* weight, const double* bias, double* y,
                     double* mean, double* rstd, int64_t rows, int64_t cols, double eps) {
  kernels<double>().layer_norm_rows(x, weight, bias, y, mean, rstd, rows, cols, eps);
}
void layer_norm_rows_backward(const float* x, const float* weight, const float* mean,
                              const float* rstd, const float* dy, float* dx, float* dweight,
                              float* dbias, int64_t rows, int64_t cols) {
  kernels<float>().layer_norm_rows_backward(x, weight, mean, rstd, dy, dx, dweight, dbias, rows,
                                            cols);
}
void layer_norm_rows_backward(const double* x, const double* weight, const double* mean,
                              const double* rstd, const double* dy, double* dx, double* dweight,
                              double* dbias, int64_t rows, int64_t cols) {
  kernels<double>().layer_norm_rows_backward(x, weight, mean, rstd, dy, dx, dweight, dbias, rows,
                                             cols);
}
void pow_base(float base, const float* x, float* y, int64_t n) {
  kernels<float>().pow_base(base, x, y, n);
}

}  // namespace tapegrad::vmath
