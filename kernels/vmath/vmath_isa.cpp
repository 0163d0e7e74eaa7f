// vmath's kernels (kernels/vmath/vmath.h), built once per instruction-set level from this one
// file (TAPEGRAD_ISA_LEVEL, kernels/cpu/isa_level.h): SLEEF's vector functions at AVX2 and
// AVX-512, the C library's at x86's baseline, SLEEF's AdvSIMD ones at arm64's baseline (NEON,
// every armv8-a CPU has it), as torch 1.13 calls them at each level, and plain loops (which the
// compiler vectorises for the level) for the arithmetic around them. No standard header: see
// kernels/cpu/isa_level.h.
#include <cstdint>

#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/kernels/vmath/vmath_isa.h>

#if TAPEGRAD_ISA_LEVEL >= 1
#include <immintrin.h>
#include <sleef.h>
#endif
// arm64's baseline: NEON registers of 4 floats or 2 doubles, SLEEF's AdvSIMD functions (GCC's
// NEON intrinsics are always-inline gnu_inline functions, never emitted, as immintrin.h's).
#if TAPEGRAD_ISA_LEVEL == 0 && defined(__aarch64__)
#define TAPEGRAD_VMATH_NEON 1
#include <arm_neon.h>
#include <sleef.h>
#else
#define TAPEGRAD_VMATH_NEON 0
#endif

#define TAPEGRAD_VMATH_NAMESPACE TAPEGRAD_ISA_NAMESPACE(vmath)

namespace tapegrad::vmath::levels::TAPEGRAD_VMATH_NAMESPACE {
namespace {

enum class Fn { kExp, kExpm1, kLog, kTanh, kCos, kSin };

// The work goes in chunks through stack buffers, so the SLEEF pass and the arithmetic passes
// around it stay in L1.
constexpr int64_t kChunk = 256;

// kLanes: the width the transcendental functions are called at; kSumLanes: the lanes of the
// row sums (a vector's at AVX2 and AVX-512; at baseline torch's 32-byte Vectorized, which the
// compiler maps to two SSE registers, or two NEON ones on arm64, where torch's Vectorized is 32
// bytes too).
#if TAPEGRAD_ISA_LEVEL == 2
constexpr int kFloatLanes = 16, kDoubleLanes = 8;
constexpr int kFloatSumLanes = 16, kDoubleSumLanes = 8;
#elif TAPEGRAD_ISA_LEVEL == 1
constexpr int kFloatLanes = 8, kDoubleLanes = 4;
constexpr int kFloatSumLanes = 8, kDoubleSumLanes = 4;
#elif TAPEGRAD_VMATH_NEON
constexpr int kFloatLanes = 4, kDoubleLanes = 2;
constexpr int kFloatSumLanes = 8, kDoubleSumLanes = 4;
#else
constexpr int kFloatLanes = 1, kDoubleLanes = 1;
constexpr int kFloatSumLanes = 8, kDoubleSumLanes = 4;
#endif
template <class T>
constexpr int kLanesOf = sizeof(T) == 4 ? kFloatLanes : kDoubleLanes;
template <class T>
constexpr int kSumLanesOf = sizeof(T) == 4 ? kFloatSumLanes : kDoubleSumLanes;

// pow, atan2 and fmod on one vector at AVX2 and AVX-512: torch's Vectorized ones. (arm64's
// AdvSIMD functions, named otherwise, have their own below.)
#if TAPEGRAD_ISA_LEVEL >= 1
#define TAPEGRAD_SLEEF_BINARY(W)                                        \
  if constexpr (B == Binary::kPow) return Sleef_pow##W##_u10(a, b);     \
  if constexpr (B == Binary::kAtan2) return Sleef_atan2##W##_u10(a, b); \
  if constexpr (B == Binary::kFmod) return Sleef_fmod##W(a, b);
#endif

#if TAPEGRAD_ISA_LEVEL == 2
template <Fn F>
__m512 call(__m512 v) {
  if constexpr (F == Fn::kExp) return Sleef_expf16_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1f16_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logf16_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhf16_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosf16_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sinf16_u10(v);
}
template <Fn F>
__m512d call(__m512d v) {
  if constexpr (F == Fn::kExp) return Sleef_expd8_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1d8_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logd8_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhd8_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosd8_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sind8_u10(v);
}
// base^v, torch's Vectorized<float>::pow.
inline __m512 pow_of(float base, __m512 v) {
  return Sleef_powf16_u10(_mm512_set1_ps(base), v);
}
template <Binary B>
__m512 sleef_binary(__m512 a, __m512 b) {
  TAPEGRAD_SLEEF_BINARY(f16)
}
template <Binary B>
__m512d sleef_binary(__m512d a, __m512d b) {
  TAPEGRAD_SLEEF_BINARY(d8)
}
inline __m512 load(const float* p) {
  return _mm512_loadu_ps(p);
}
inline __m512d load(const double* p) {
  return _mm512_loadu_pd(p);
}
inline void store(float* p, __m512 v) {
  _mm512_storeu_ps(p, v);
}
inline void store(double* p, __m512d v) {
  _mm512_storeu_pd(p, v);
}
// The first n < 16 (8) lanes, the others zero; storing the first n only.
inline __m512 load_first(const float* p, int64_t n) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
}
inline __m512d load_first(const double* p, int64_t n) {
  return _mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << n) - 1), p);
}
inline void store_first(float* p, __m512 v, int64_t n) {
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
}
inline void store_first(double* p, __m512d v, int64_t n) {
  _mm512_mask_storeu_pd(p, static_cast<__mmask8>((1u << n) - 1), v);
}
#elif TAPEGRAD_ISA_LEVEL == 1
template <Fn F>
__m256 call(__m256 v) {
  if constexpr (F == Fn::kExp) return Sleef_expf8_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1f8_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logf8_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhf8_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosf8_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sinf8_u10(v);
}
template <Fn F>
__m256d call(__m256d v) {
  if constexpr (F == Fn::kExp) return Sleef_expd4_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1d4_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logd4_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhd4_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosd4_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sind4_u10(v);
}
inline __m256 pow_of(float base, __m256 v) {
  return Sleef_powf8_u10(_mm256_set1_ps(base), v);
}
template <Binary B>
__m256 sleef_binary(__m256 a, __m256 b) {
  TAPEGRAD_SLEEF_BINARY(f8)
}
template <Binary B>
__m256d sleef_binary(__m256d a, __m256d b) {
  TAPEGRAD_SLEEF_BINARY(d4)
}
inline __m256 load(const float* p) {
  return _mm256_loadu_ps(p);
}
inline __m256d load(const double* p) {
  return _mm256_loadu_pd(p);
}
inline void store(float* p, __m256 v) {
  _mm256_storeu_ps(p, v);
}
inline void store(double* p, __m256d v) {
  _mm256_storeu_pd(p, v);
}
#elif TAPEGRAD_VMATH_NEON
template <Fn F>
float32x4_t call(float32x4_t v) {
  if constexpr (F == Fn::kExp) return Sleef_expf4_u10advsimd(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1f4_u10advsimd(v);
  if constexpr (F == Fn::kLog) return Sleef_logf4_u10advsimd(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhf4_u10advsimd(v);
  if constexpr (F == Fn::kCos) return Sleef_cosf4_u10advsimd(v);
  if constexpr (F == Fn::kSin) return Sleef_sinf4_u10advsimd(v);
}
template <Fn F>
float64x2_t call(float64x2_t v) {
  if constexpr (F == Fn::kExp) return Sleef_expd2_u10advsimd(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1d2_u10advsimd(v);
  if constexpr (F == Fn::kLog) return Sleef_logd2_u10advsimd(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhd2_u10advsimd(v);
  if constexpr (F == Fn::kCos) return Sleef_cosd2_u10advsimd(v);
  if constexpr (F == Fn::kSin) return Sleef_sind2_u10advsimd(v);
}
inline float32x4_t pow_of(float base, float32x4_t v) {
  return Sleef_powf4_u10advsimd(vdupq_n_f32(base), v);
}
#define TAPEGRAD_SLEEF_BINARY(W)                                               \
  if constexpr (B == Binary::kPow) return Sleef_pow##W##_u10advsimd(a, b);     \
  if constexpr (B == Binary::kAtan2) return Sleef_atan2##W##_u10advsimd(a, b); \
  if constexpr (B == Binary::kFmod) return Sleef_fmod##W##_advsimd(a, b);
template <Binary B>
float32x4_t sleef_binary(float32x4_t a, float32x4_t b) {
  TAPEGRAD_SLEEF_BINARY(f4)
}
template <Binary B>
float64x2_t sleef_binary(float64x2_t a, float64x2_t b) {
  TAPEGRAD_SLEEF_BINARY(d2)
}
inline float32x4_t load(const float* p) {
  return vld1q_f32(p);
}
inline float64x2_t load(const double* p) {
  return vld1q_f64(p);
}
inline void store(float* p, float32x4_t v) {
  vst1q_f32(p, v);
}
inline void store(double* p, float64x2_t v) {
  vst1q_f64(p, v);
}
#else
// The C library's functions, as torch's DEFAULT kernels call them (std::exp, ...).
template <Fn F>
float call(float v) {
  if constexpr (F == Fn::kExp) return __builtin_expf(v);
  if constexpr (F == Fn::kExpm1) return __builtin_expm1f(v);
  if constexpr (F == Fn::kLog) return __builtin_logf(v);
  if constexpr (F == Fn::kTanh) return __builtin_tanhf(v);
  if constexpr (F == Fn::kCos) return __builtin_cosf(v);
  if constexpr (F == Fn::kSin) return __builtin_sinf(v);
}
template <Fn F>
double call(double v) {
  if constexpr (F == Fn::kExp) return __builtin_exp(v);
  if constexpr (F == Fn::kExpm1) return __builtin_expm1(v);
  if constexpr (F == Fn::kLog) return __builtin_log(v);
  if constexpr (F == Fn::kTanh) return __builtin_tanh(v);
  if constexpr (F == Fn::kCos) return __builtin_cos(v);
  if constexpr (F == Fn::kSin) return __builtin_sin(v);
}
inline float pow_of(float base, float v) {
  return __builtin_powf(base, v);
}
template <Binary B>
float sleef_binary(float a, float b) {
  if constexpr (B == Binary::kPow) return __builtin_powf(a, b);
  if constexpr (B == Binary::kAtan2) return __builtin_atan2f(a, b);
  if constexpr (B == Binary::kFmod) return __builtin_fmodf(a, b);
}
template <Binary B>
double sleef_binary(double a, double b) {
  if constexpr (B == Binary::kPow) return __builtin_pow(a, b);
  if constexpr (B == Binary::kAtan2) return __builtin_atan2(a, b);
  if constexpr (B == Binary::kFmod) return __builtin_fmod(a, b);
}
inline float load(const float* p) {
  return *p;
}
inline double load(const double* p) {
  return *p;
}
inline void store(float* p, float v) {
  *p = v;
}
inline void store(double* p, double v) {
  *p = v;
}
#endif

// The op library's functions (vmath::Unary) on one vector (at baseline one element): the exact
// ones by instruction, the transcendental ones SLEEF's (the C library's at baseline).
#define TAPEGRAD_SLEEF_UNARY(W)                                     \
  if constexpr (U == Unary::kExp) return Sleef_exp##W##_u10(v);     \
  if constexpr (U == Unary::kSin) return Sleef_sin##W##_u10(v);     \
  if constexpr (U == Unary::kCos) return Sleef_cos##W##_u10(v);     \
  if constexpr (U == Unary::kTan) return Sleef_tan##W##_u10(v);     \
  if constexpr (U == Unary::kAsin) return Sleef_asin##W##_u10(v);   \
  if constexpr (U == Unary::kAcos) return Sleef_acos##W##_u10(v);   \
  if constexpr (U == Unary::kAtan) return Sleef_atan##W##_u10(v);   \
  if constexpr (U == Unary::kSinh) return Sleef_sinh##W##_u10(v);   \
  if constexpr (U == Unary::kCosh) return Sleef_cosh##W##_u10(v);   \
  if constexpr (U == Unary::kAsinh) return Sleef_asinh##W##_u10(v); \
  if constexpr (U == Unary::kAcosh) return Sleef_acosh##W##_u10(v); \
  if constexpr (U == Unary::kAtanh) return Sleef_atanh##W##_u10(v); \
  if constexpr (U == Unary::kErf) return Sleef_erf##W##_u10(v);     \
  if constexpr (U == Unary::kErfc) return Sleef_erfc##W##_u15(v);   \
  if constexpr (U == Unary::kLog1p) return Sleef_log1p##W##_u10(v); \
  if constexpr (U == Unary::kExpm1) return Sleef_expm1##W##_u10(v); \
  if constexpr (U == Unary::kExp2) return Sleef_exp2##W##_u10(v);   \
  if constexpr (U == Unary::kLog2) return Sleef_log2##W##_u10(v);   \
  if constexpr (U == Unary::kLog10) return Sleef_log10##W##_u10(v);

#if TAPEGRAD_ISA_LEVEL >= 1
constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
constexpr int kCeil = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
constexpr int kRoundEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr int kTrunc = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
#endif

#if TAPEGRAD_ISA_LEVEL == 2
template <Unary U>
__m512 transcendental(__m512 v) {
  TAPEGRAD_SLEEF_UNARY(f16)
}
template <Unary U>
__m512d transcendental(__m512d v) {
  TAPEGRAD_SLEEF_UNARY(d8)
}
template <int Mode>
__m512 round_as(__m512 v) {
  return _mm512_roundscale_ps(v, Mode);
}
template <int Mode>
__m512d round_as(__m512d v) {
  return _mm512_roundscale_pd(v, Mode);
}
inline __m512 abs_of(__m512 v) {
  return _mm512_abs_ps(v);
}
inline __m512d abs_of(__m512d v) {
  return _mm512_abs_pd(v);
}
inline __m512 sqrt_of(__m512 v) {
  return _mm512_sqrt_ps(v);
}
inline __m512d sqrt_of(__m512d v) {
  return _mm512_sqrt_pd(v);
}
// (0 < v) − (v < 0) as the scalar code computes it: +0 for ±0 and NaN.
inline __m512 sign_of(__m512 v) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  return _mm512_sub_ps(_mm512_maskz_mov_ps(_mm512_cmp_ps_mask(zero, v, _CMP_LT_OQ), one),
                       _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), one));
}
inline __m512d sign_of(__m512d v) {
  const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0);
  return _mm512_sub_pd(_mm512_maskz_mov_pd(_mm512_cmp_pd_mask(zero, v, _CMP_LT_OQ), one),
                       _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, zero, _CMP_LT_OQ), one));
}
#elif TAPEGRAD_ISA_LEVEL == 1
template <Unary U>
__m256 transcendental(__m256 v) {
  TAPEGRAD_SLEEF_UNARY(f8)
}
template <Unary U>
__m256d transcendental(__m256d v) {
  TAPEGRAD_SLEEF_UNARY(d4)
}
template <int Mode>
__m256 round_as(__m256 v) {
  return _mm256_round_ps(v, Mode);
}
template <int Mode>
__m256d round_as(__m256d v) {
  return _mm256_round_pd(v, Mode);
}
inline __m256 abs_of(__m256 v) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}
inline __m256d abs_of(__m256d v) {
  return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
}
inline __m256 sqrt_of(__m256 v) {
  return _mm256_sqrt_ps(v);
}
inline __m256d sqrt_of(__m256d v) {
  return _mm256_sqrt_pd(v);
}
inline __m256 sign_of(__m256 v) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  return _mm256_sub_ps(_mm256_and_ps(_mm256_cmp_ps(zero, v, _CMP_LT_OQ), one),
                       _mm256_and_ps(_mm256_cmp_ps(v, zero, _CMP_LT_OQ), one));
}
inline __m256d sign_of(__m256d v) {
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  return _mm256_sub_pd(_mm256_and_pd(_mm256_cmp_pd(zero, v, _CMP_LT_OQ), one),
                       _mm256_and_pd(_mm256_cmp_pd(v, zero, _CMP_LT_OQ), one));
}
#elif TAPEGRAD_VMATH_NEON
#define TAPEGRAD_SLEEF_ADVSIMD_UNARY(W)                                    \
  if constexpr (U == Unary::kExp) return Sleef_exp##W##_u10advsimd(v);     \
  if constexpr (U == Unary::kSin) return Sleef_sin##W##_u10advsimd(v);     \
  if constexpr (U == Unary::kCos) return Sleef_cos##W##_u10advsimd(v);     \
  if constexpr (U == Unary::kTan) return Sleef_tan##W##_u10advsimd(v);     \
  if constexpr (U == Unary::kAsin) return Sleef_asin##W##_u10advsimd(v);   \
  if constexpr (U == Unary::kAcos) return Sleef_acos##W##_u10advsimd(v);   \
  if constexpr (U == Unary::kAtan) return Sleef_atan##W##_u10advsimd(v);   \
  if constexpr (U == Unary::kSinh) return Sleef_sinh##W##_u10advsimd(v);   \
  if constexpr (U == Unary::kCosh) return Sleef_cosh##W##_u10advsimd(v);   \
  if constexpr (U == Unary::kAsinh) return Sleef_asinh##W##_u10advsimd(v); \
  if constexpr (U == Unary::kAcosh) return Sleef_acosh##W##_u10advsimd(v); \
  if constexpr (U == Unary::kAtanh) return Sleef_atanh##W##_u10advsimd(v); \
  if constexpr (U == Unary::kErf) return Sleef_erf##W##_u10advsimd(v);     \
  if constexpr (U == Unary::kErfc) return Sleef_erfc##W##_u15advsimd(v);   \
  if constexpr (U == Unary::kLog1p) return Sleef_log1p##W##_u10advsimd(v); \
  if constexpr (U == Unary::kExpm1) return Sleef_expm1##W##_u10advsimd(v); \
  if constexpr (U == Unary::kExp2) return Sleef_exp2##W##_u10advsimd(v);   \
  if constexpr (U == Unary::kLog2) return Sleef_log2##W##_u10advsimd(v);   \
  if constexpr (U == Unary::kLog10) return Sleef_log10##W##_u10advsimd(v);
template <Unary U>
float32x4_t transcendental(float32x4_t v) {
  TAPEGRAD_SLEEF_ADVSIMD_UNARY(f4)
}
template <Unary U>
float64x2_t transcendental(float64x2_t v) {
  TAPEGRAD_SLEEF_ADVSIMD_UNARY(d2)
}
// The rounding modes of round_as, as the x86 levels name theirs.
constexpr int kFloor = 0, kCeil = 1, kRoundEven = 2, kTrunc = 3;
template <int Mode>
float32x4_t round_as(float32x4_t v) {
  if constexpr (Mode == kFloor) return vrndmq_f32(v);
  if constexpr (Mode == kCeil) return vrndpq_f32(v);
  if constexpr (Mode == kRoundEven) return vrndnq_f32(v);
  if constexpr (Mode == kTrunc) return vrndq_f32(v);
}
template <int Mode>
float64x2_t round_as(float64x2_t v) {
  if constexpr (Mode == kFloor) return vrndmq_f64(v);
  if constexpr (Mode == kCeil) return vrndpq_f64(v);
  if constexpr (Mode == kRoundEven) return vrndnq_f64(v);
  if constexpr (Mode == kTrunc) return vrndq_f64(v);
}
inline float32x4_t abs_of(float32x4_t v) {
  return vabsq_f32(v);
}
inline float64x2_t abs_of(float64x2_t v) {
  return vabsq_f64(v);
}
inline float32x4_t sqrt_of(float32x4_t v) {
  return vsqrtq_f32(v);
}
inline float64x2_t sqrt_of(float64x2_t v) {
  return vsqrtq_f64(v);
}
// (0 < v) − (v < 0) as the scalar code computes it: +0 for ±0 and NaN.
inline float32x4_t sign_of(float32x4_t v) {
  const float32x4_t zero = vdupq_n_f32(0.0f);
  const uint32x4_t one = vreinterpretq_u32_f32(vdupq_n_f32(1.0f));
  return vsubq_f32(vreinterpretq_f32_u32(vandq_u32(vcltq_f32(zero, v), one)),
                   vreinterpretq_f32_u32(vandq_u32(vcltq_f32(v, zero), one)));
}
inline float64x2_t sign_of(float64x2_t v) {
  const float64x2_t zero = vdupq_n_f64(0.0);
  const uint64x2_t one = vreinterpretq_u64_f64(vdupq_n_f64(1.0));
  return vsubq_f64(vreinterpretq_f64_u64(vandq_u64(vcltq_f64(zero, v), one)),
                   vreinterpretq_f64_u64(vandq_u64(vcltq_f64(v, zero), one)));
}
#endif

#if TAPEGRAD_ISA_LEVEL >= 1 || TAPEGRAD_VMATH_NEON
template <Unary U, class V>
V unary_of(V v) {
  if constexpr (U == Unary::kAbs) {
    return abs_of(v);
  } else if constexpr (U == Unary::kSign) {
    return sign_of(v);
  } else if constexpr (U == Unary::kSquare) {
    return v * v;
  } else if constexpr (U == Unary::kSqrt) {
    return sqrt_of(v);
  } else if constexpr (U == Unary::kFloor) {
    return round_as<kFloor>(v);
  } else if constexpr (U == Unary::kCeil) {
    return round_as<kCeil>(v);
  } else if constexpr (U == Unary::kRound) {
    return round_as<kRoundEven>(v);
  } else if constexpr (U == Unary::kTrunc) {
    return round_as<kTrunc>(v);
  } else if constexpr (U == Unary::kFrac) {
    return v - round_as<kTrunc>(v);
  } else {
    return transcendental<U>(v);
  }
}
#else
// The C library's, as the ops called them (std::floor, std::sin, ...).
#define TAPEGRAD_LIBM_UNARY(SUFFIX)                                        \
  if constexpr (U == Unary::kAbs) return __builtin_fabs##SUFFIX(v);        \
  if constexpr (U == Unary::kSign) return T(T(0) < v) - T(v < T(0));       \
  if constexpr (U == Unary::kSquare) return v * v;                         \
  if constexpr (U == Unary::kSqrt) return __builtin_sqrt##SUFFIX(v);       \
  if constexpr (U == Unary::kFloor) return __builtin_floor##SUFFIX(v);     \
  if constexpr (U == Unary::kCeil) return __builtin_ceil##SUFFIX(v);       \
  if constexpr (U == Unary::kRound) return __builtin_nearbyint##SUFFIX(v); \
  if constexpr (U == Unary::kTrunc) return __builtin_trunc##SUFFIX(v);     \
  if constexpr (U == Unary::kFrac) return v - __builtin_trunc##SUFFIX(v);  \
  if constexpr (U == Unary::kExp) return __builtin_exp##SUFFIX(v);         \
  if constexpr (U == Unary::kSin) return __builtin_sin##SUFFIX(v);         \
  if constexpr (U == Unary::kCos) return __builtin_cos##SUFFIX(v);         \
  if constexpr (U == Unary::kTan) return __builtin_tan##SUFFIX(v);         \
  if constexpr (U == Unary::kAsin) return __builtin_asin##SUFFIX(v);       \
  if constexpr (U == Unary::kAcos) return __builtin_acos##SUFFIX(v);       \
  if constexpr (U == Unary::kAtan) return __builtin_atan##SUFFIX(v);       \
  if constexpr (U == Unary::kSinh) return __builtin_sinh##SUFFIX(v);       \
  if constexpr (U == Unary::kCosh) return __builtin_cosh##SUFFIX(v);       \
  if constexpr (U == Unary::kAsinh) return __builtin_asinh##SUFFIX(v);     \
  if constexpr (U == Unary::kAcosh) return __builtin_acosh##SUFFIX(v);     \
  if constexpr (U == Unary::kAtanh) return __builtin_atanh##SUFFIX(v);     \
  if constexpr (U == Unary::kErf) return __builtin_erf##SUFFIX(v);         \
  if constexpr (U == Unary::kErfc) return __builtin_erfc##SUFFIX(v);       \
  if constexpr (U == Unary::kLog1p) return __builtin_log1p##SUFFIX(v);     \
  if constexpr (U == Unary::kExpm1) return __builtin_expm1##SUFFIX(v);     \
  if constexpr (U == Unary::kExp2) return __builtin_exp2##SUFFIX(v);       \
  if constexpr (U == Unary::kLog2) return __builtin_log2##SUFFIX(v);       \
  if constexpr (U == Unary::kLog10) return __builtin_log10##SUFFIX(v);
template <Unary U>
float unary_of(float v) {
  using T = float;
  TAPEGRAD_LIBM_UNARY(f)
}
template <Unary U>
double unary_of(double v) {
  using T = double;
  TAPEGRAD_LIBM_UNARY()
}
#endif

#if TAPEGRAD_ISA_LEVEL >= 1 || TAPEGRAD_VMATH_NEON
template <class V>
V floor_of(V v) {
  return round_as<kFloor>(v);
}
// 0 with q's sign, as copysign(0, q): q's sign bit through the integer vector of its lanes.
template <class V>
V signed_zero(V q) {
  using Bits = decltype(q < q);
  return (V)((Bits)q & (Bits)(-V{}));
}
#else
inline float floor_of(float v) {
  return __builtin_floorf(v);
}
inline double floor_of(double v) {
  return __builtin_floor(v);
}
inline float signed_zero(float q) {
  return __builtin_copysignf(0.0f, q);
}
inline double signed_zero(double q) {
  return __builtin_copysign(0.0, q);
}
#endif

// vmath::Binary on one vector (at baseline one element). remainder and floor_divide are torch's
// from the exact fmod (remainder_kernel, div_floor_floating), their branches as lane selects, so
// every level gives the same bits.
template <Binary B, class T, class V>
V binary_of(V a, V b) {
  if constexpr (B == Binary::kPow || B == Binary::kAtan2 || B == Binary::kFmod) {
    return sleef_binary<B>(a, b);
  } else {
    const V zero = V{}, one = zero + T(1), half = zero + T(0.5);
    const V mod = sleef_binary<Binary::kFmod>(a, b);
    const auto moved = (mod != zero) & ((b < zero) != (mod < zero));  // mod's sign is not b's
    if constexpr (B == Binary::kRemainder) {
      return moved ? mod + b : mod;
    } else {
      V div = (a - mod) / b;
      div = moved ? div - one : div;
      V floordiv = floor_of(div);
      floordiv = div - floordiv > half ? floordiv + one : floordiv;
      const V q = a / b;
      return b == zero ? q : (div == zero ? signed_zero(q) : floordiv);
    }
  }
}

// y = F(x) over n elements (y may alias x); the tail goes through a zero-padded vector (with
// AVX-512, masked loads and stores: short rows such as the book's attention rows are all tail).
template <class T, class G>
void apply_vector(const T* x, T* y, int64_t n, G g) {
  constexpr int kLanes = kLanesOf<T>;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, g(load(x + i)));
#if TAPEGRAD_ISA_LEVEL == 2
  if (i < n) store_first(y + i, g(load_first(x + i, n - i)), n - i);
#else
  if (i < n) {
    T pad[kLanes] = {};
    __builtin_memcpy(pad, x + i, static_cast<__SIZE_TYPE__>(n - i) * sizeof(T));
    store(pad, g(load(pad)));
    __builtin_memcpy(y + i, pad, static_cast<__SIZE_TYPE__>(n - i) * sizeof(T));
  }
#endif
}

// y = g(a, b) over n elements (y may alias a or b), the tail as apply_vector's.
template <class T, class G>
void apply_vector2(const T* a, const T* b, T* y, int64_t n, G g) {
  constexpr int kLanes = kLanesOf<T>;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, g(load(a + i), load(b + i)));
#if TAPEGRAD_ISA_LEVEL == 2
  if (i < n) store_first(y + i, g(load_first(a + i, n - i), load_first(b + i, n - i)), n - i);
#else
  if (i < n) {
    // The pads are 1s, so no lane of the tail's vector raises a spurious exception.
    T pa[kLanes], pb[kLanes];
    for (int k = 0; k < kLanes; ++k) pa[k] = pb[k] = T(1);
    __builtin_memcpy(pa, a + i, static_cast<__SIZE_TYPE__>(n - i) * sizeof(T));
    __builtin_memcpy(pb, b + i, static_cast<__SIZE_TYPE__>(n - i) * sizeof(T));
    store(pa, g(load(pa), load(pb)));
    __builtin_memcpy(y + i, pa, static_cast<__SIZE_TYPE__>(n - i) * sizeof(T));
  }
#endif
}

template <Fn F, class T>
void apply(const T* x, T* y, int64_t n) {
  apply_vector(x, y, n, [](auto v) { return call<F>(v); });
}

template <class T>
void sigmoid_impl(const T* x, T* y, int64_t n) {
  // torch: (1 + (−x).exp()).reciprocal()
  alignas(64) T e[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t len = n - s < kChunk ? n - s : kChunk;
    for (int64_t i = 0; i < len; ++i) e[i] = -x[s + i];
    apply<Fn::kExp>(e, e, len);
    for (int64_t i = 0; i < len; ++i) y[s + i] = T(1) / (T(1) + e[i]);
  }
}

constexpr double kBeta = kGeluBeta;
constexpr double kKappa = kGeluKappa;

// u = β(x + κx³), the same expression in the forward and the backward, so a tanh the forward
// saved is the one the backward would compute.
template <class T>
void gelu_inner(const T* x, T* u, int64_t len) {
  const T beta = static_cast<T>(kBeta), kappa = static_cast<T>(kKappa);
  for (int64_t i = 0; i < len; ++i) {
    const T v = x[i], v2 = v * v;
    u[i] = beta * (v + kappa * (v2 * v));
  }
}

// tanh_u: where tanh(u) goes too (for the backward), or null.
template <class T>
void gelu_impl(const T* x, T* y, T* tanh_u, int64_t n) {
  alignas(64) T scratch[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t len = n - s < kChunk ? n - s : kChunk;
    const T* xs = x + s;
    T* t = tanh_u ? tanh_u + s : scratch;
    gelu_inner(xs, t, len);
    apply<Fn::kTanh>(t, t, len);
    T* ys = y + s;
    for (int64_t i = 0; i < len; ++i) ys[i] = T(0.5) * xs[i] * (T(1) + t[i]);
  }
}

// tanh_u: the forward's tanh(u), or null to compute it here.
template <class T>
void gelu_backward_impl(const T* __restrict x, const T* __restrict tanh_u, const T* __restrict dy,
                        T* __restrict dx, int64_t n) {
  const T beta = static_cast<T>(kBeta), kappa = static_cast<T>(kKappa);
  alignas(64) T scratch[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t len = n - s < kChunk ? n - s : kChunk;
    const T* xs = x + s;
    const T* t = scratch;
    if (tanh_u != nullptr) {
      t = tanh_u + s;
    } else {
      gelu_inner(xs, scratch, len);
      apply<Fn::kTanh>(scratch, scratch, len);
    }
    const T* dys = dy + s;
    T* dxs = dx + s;
    for (int64_t i = 0; i < len; ++i) {
      const T v = xs[i], v2 = v * v, th = t[i];
      const T left = T(0.5) * (T(1) + th);
      const T right = T(0.5) * v * (T(1) - th * th) * (beta * (T(1) + T(3) * kappa * v2));
      dxs[i] += dys[i] * (left + right);
    }
  }
}

inline float root(float x) {
  return __builtin_sqrtf(x);
}
inline double root(double x) {
  return __builtin_sqrt(x);
}

// Max of a row, NaN-propagating (a NaN anywhere makes the row NaN, as torch's max does).
template <class T>
T row_max(const T* x, int64_t cols) {
  T m = -static_cast<T>(__builtin_inf());
  bool nan = false;
  for (int64_t j = 0; j < cols; ++j) {
    m = m < x[j] ? x[j] : m;  // std::max
    nan |= x[j] != x[j];
  }
  return nan ? static_cast<T>(__builtin_nan("")) : m;
}

template <class T>
T row_sum(const T* x, int64_t cols) {
  // Lane-wise partial sums, then a pairwise fold: the order a vectorised reduction uses.
  constexpr int kLanes = kSumLanesOf<T>;
  T acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= cols; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += x[j + l];
  }
  for (int l = 0; j < cols; ++j, ++l) acc[l] += x[j];
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
  }
  return acc[0];
}

// x rounded on its own: a product the compiler may not fuse into the add that takes it (GCC
// contracts a·b + c by default), as torch's separate multiply and add round it. A macro, as a
// function taking 32-byte vectors would change the ABI at baseline.
#if __has_builtin(__builtin_assoc_barrier)
#define TAPEGRAD_ROUNDED(x) __builtin_assoc_barrier(x)
#else
#define TAPEGRAD_ROUNDED(x) (x)
#endif

template <class T>
void masked_scale_impl(const T* x, const uint8_t* keep, T scale, T* y, int64_t n, bool accumulate) {
  if (!accumulate) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * (keep[i] != 0 ? scale : T(0));
    return;
  }
  // The products through memory: the vectoriser fuses them into the add otherwise.
  alignas(64) T product[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t len = n - s < kChunk ? n - s : kChunk;
    for (int64_t i = 0; i < len; ++i) product[i] = x[s + i] * (keep[s + i] != 0 ? scale : T(0));
    for (int64_t i = 0; i < len; ++i) y[s + i] += product[i];
  }
}

// Σ x in the order of torch 1.13's vec::reduce_all for its AVX2 kernels (Debian's build), at
// every level: rows shorter than a vector (8 floats, 4 doubles) add left to right; longer ones
// keep one partial sum per lane (the tail added to the first lanes), then fold the lanes: floats
// pairwise ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) (VecReduceAllSIMD<float>), doubles
// left to right. With kDot, Σ a ⊙ b in the order of torch's vec::map2_reduce_all (its softmax
// backward's dot): each product rounded on its own (torch's multiply, then its add), then summed
// as above. n = 0 gives -0.
template <class T, bool kDot>
T torch_sum(const T* a, const T* b, int64_t n) {
  constexpr int kLanes = sizeof(T) == 4 ? 8 : 4;
  typedef T Lanes __attribute__((vector_size(32)));
  // Lanes d .. d + count of the terms into v (-0 in the others, which leaves a lane's sum as it
  // is). Through a reference: a 32-byte vector returned by value changes the ABI at baseline.
  auto load = [&](Lanes& v, int64_t d, int64_t count) {
    v = -Lanes{};
    __builtin_memcpy(&v, a + d, static_cast<__SIZE_TYPE__>(count) * sizeof(T));
    if constexpr (kDot) {
      Lanes w = -Lanes{};
      __builtin_memcpy(&w, b + d, static_cast<__SIZE_TYPE__>(count) * sizeof(T));
      const Lanes p = TAPEGRAD_ROUNDED(v * w);
      for (int l = 0; l < kLanes; ++l) v[l] = l < count ? p[l] : -T(0);
    }
  };
  if (n < kLanes) {
    Lanes v;
    load(v, 0, n);
    T s = v[0];
    for (int64_t j = 1; j < n; ++j) s += v[j];
    return s;
  }
  Lanes acc, v;
  load(acc, 0, kLanes);
  int64_t d = kLanes;
  for (; d + kLanes <= n; d += kLanes) {
    load(v, d, kLanes);
    acc += v;
  }
  if (d < n) {
    load(v, d, n - d);
    acc += v;
  }
  if constexpr (kLanes == 8) {
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  } else {
    return ((acc[0] + acc[1]) + acc[2]) + acc[3];
  }
}

// torch 1.13's cascade sum (SumKernel.cpp's multi_row_sum): `rows` rows of four columns, added
// into acc[0] 2^power rows at a time, each full group carried up four levels of partial sums so
// that only sums of similar size meet; add(a, i, k) adds column k of row i into a. A is T or a
// register of lanes; results come back through `out` (a 32-byte vector by value would change the
// ABI at baseline).
template <class A, class Add>
void cascade_rows(int64_t rows, Add add, A (&out)[4]) {
  constexpr int kLevels = 4;
  const int64_t ceil_log2 = rows <= 2 ? 1 : 64 - __builtin_clzll(static_cast<uint64_t>(rows - 1));
  const int64_t power = ceil_log2 / kLevels > 4 ? ceil_log2 / kLevels : 4;
  const int64_t step = int64_t{1} << power, mask = step - 1;
  A acc[kLevels][4];
  for (auto& level : acc)
    for (A& a : level) a = A{};
  int64_t i = 0;
  while (i + step <= rows) {
    for (int64_t j = 0; j < step; ++j, ++i)
      for (int k = 0; k < 4; ++k) add(acc[0][k], i, k);
    for (int j = 1; j < kLevels; ++j) {
      for (int k = 0; k < 4; ++k) {
        acc[j][k] += acc[j - 1][k];
        acc[j - 1][k] = A{};
      }
      if ((i & (mask << (j * power))) != 0) break;
    }
  }
  for (; i < rows; ++i)
    for (int k = 0; k < 4; ++k) add(acc[0][k], i, k);
  for (int j = 1; j < kLevels; ++j)
    for (int k = 0; k < 4; ++k) acc[0][k] += acc[j][k];
  for (int k = 0; k < 4; ++k) out[k] = acc[0][k];
}

// torch's row_sum: n terms as rows of four (cascade_rows), the rest added to the first column,
// then the columns left to right; add(a, i) adds term i into a.
template <class A, class Add>
void cascade_sum(int64_t n, Add add, A& out) {
  A partial[4];
  cascade_rows<A>(
      n / 4, [&](A& a, int64_t i, int k) { add(a, i * 4 + k); }, partial);
  for (int64_t i = n / 4 * 4; i < n; ++i) add(partial[0], i);
  for (int k = 1; k < 4; ++k) partial[0] += partial[k];
  out = partial[0];
}

// Σ x as torch 1.13's sum of a contiguous tensor (cascade_sum, one thread, its AVX2 build's 8-float
// / 4-double vectors) at every level: from 8 floats (4 doubles) on, cascade_sum over whole vectors,
// then the scalar tail left to right, then the vector's lanes in order; below that, cascade_sum
// over the scalars. Into a zero, as torch's output starts: Σ of nothing or of -0 is +0.
template <class T>
T sum_impl(const T* x, int64_t n) {
  constexpr int64_t kLanes = sizeof(T) == 4 ? 8 : 4;
  typedef T Lanes __attribute__((vector_size(32)));
  if (n < kLanes) {
    T s;
    cascade_sum<T>(
        n, [&](T& a, int64_t i) { a += x[i]; }, s);
    return T(0) + s;
  }
  const int64_t vectors = n / kLanes;
  Lanes acc;
  cascade_sum<Lanes>(
      vectors,
      [&](Lanes& a, int64_t v) {
        Lanes w;
        __builtin_memcpy(&w, x + v * kLanes, sizeof w);
        a += w;
      },
      acc);
  T s = 0;
  for (int64_t i = vectors * kLanes; i < n; ++i) s += x[i];
  for (int64_t l = 0; l < kLanes; ++l) s += acc[l];
  return T(0) + s;
}

// The max of a row, a vector of lanes at a time (a max is the same in any order, but for the
// sign of a zero max, which x − max and so softmax do not see). It skips NaNs, where torch's
// propagates them: either way a NaN (or +inf) entry makes x − m NaN there, so the sum and the
// whole softmax row are NaN.
template <class T>
T vector_max(const T* x, int64_t n) {
  constexpr int kLanes = sizeof(T) == 4 ? 8 : 4;
  typedef T Lanes __attribute__((vector_size(32)));
  T m = -static_cast<T>(__builtin_inf());
  int64_t j = 0;
  if (n >= kLanes) {
    Lanes lanes = Lanes{} + m, v;
    for (; j + kLanes <= n; j += kLanes) {
      __builtin_memcpy(&v, x + j, sizeof v);
      lanes = lanes < v ? v : lanes;
    }
    for (int l = 0; l < kLanes; ++l) m = m < lanes[l] ? lanes[l] : m;
  }
  for (; j < n; ++j) m = m < x[j] ? x[j] : m;
  return m;
}

// torch's _vec_softmax_lastdim per row: the max, exp(x − max) through the level's exp, the sum
// in torch's order, 1 / sum, times it. Every step is elementwise or in a fixed order, so the bits
// depend neither on where the row lies in memory nor on the level (but for the level's exp).
template <class T>
void softmax_impl(const T* x, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    const T m = vector_max(xr, cols);
    for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - m;
    apply<Fn::kExp>(yr, yr, cols);
    const T inv = T(1) / torch_sum<T, false>(yr, nullptr, cols);
    for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
  }
}

// dx (+)= y ⊙ (dy − Σ dy ⊙ y) per row, torch's _vec_softmax_backward lastdim (its dot in
// map2_reduce_all's order); with accumulate the term is rounded before it is added.
template <class T>
void softmax_backward_impl(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols,
                           bool accumulate) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* yr = y + r * cols;
    const T* dyr = dy + r * cols;
    T* dxr = dx + r * cols;
    const T s = torch_sum<T, true>(dyr, yr, cols);
    if (accumulate) {
      for (int64_t j = 0; j < cols; ++j) dxr[j] += TAPEGRAD_ROUNDED(yr[j] * (dyr[j] - s));
    } else {
      for (int64_t j = 0; j < cols; ++j) dxr[j] = yr[j] * (dyr[j] - s);
    }
  }
}

template <class T>
void logsumexp_impl(const T* x, T* lse, int64_t rows, int64_t cols) {
  alignas(64) T e[kChunk];
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T m = row_max(xr, cols);
    // An infinite max (a row of −inf, or +inf) would give inf − inf: its log-sum-exp is m.
    if (__builtin_isinf(m)) {
      lse[r] = m;
      continue;
    }
    T sum = 0;
    for (int64_t s = 0; s < cols; s += kChunk) {
      const int64_t len = cols - s < kChunk ? cols - s : kChunk;
      for (int64_t j = 0; j < len; ++j) e[j] = xr[s + j] - m;
      apply<Fn::kExp>(e, e, len);
      sum += row_sum(e, len);
    }
    T log_sum;
    apply<Fn::kLog>(&sum, &log_sum, 1);
    lse[r] = m + log_sum;
  }
}

template <class T>
void log_softmax_impl(const T* x, const T* lse, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const T l = lse[r];
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = x[r * cols + j] - l;
  }
}

template <class T>
void layer_norm_impl(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows,
                     int64_t cols, double eps) {
  const T n = static_cast<T>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    const T mu = row_sum(xr, cols) / n;
    // The centred values go through y, which then holds the output: one read of x per pass.
    for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - mu;
    T sq = 0;
    {
      constexpr int kLanes = kSumLanesOf<T>;
      T acc[kLanes] = {};
      int64_t j = 0;
      for (; j + kLanes <= cols; j += kLanes) {
        for (int l = 0; l < kLanes; ++l) acc[l] += yr[j + l] * yr[j + l];
      }
      for (int l = 0; j < cols; ++j, ++l) acc[l] += yr[j] * yr[j];
      for (int width = kLanes / 2; width > 0; width /= 2) {
        for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
      }
      sq = acc[0];
    }
    const T var = sq / n;
    const T rs = T(1) / root(var + static_cast<T>(eps));
    mean[r] = mu;
    rstd[r] = rs;
    if (w != nullptr && b != nullptr) {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs * w[j] + b[j];
    } else if (w != nullptr) {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs * w[j];
    } else if (b != nullptr) {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs + b[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs;
    }
  }
}

template <class T>
void layer_norm_backward_impl(const T* x, const T* w, const T* mean, const T* rstd, const T* dy,
                              T* dx, T* dw, T* db, int64_t rows, int64_t cols) {
  const T n = static_cast<T>(cols);
  alignas(64) T xhat_buf[kChunk];
  alignas(64) T g_buf[kChunk];
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    const T mu = mean[r], rs = rstd[r];
    T sum_g = 0, sum_gx = 0;
    // Pass 1: the two row sums, and dw/db (they need x̂ and dy, which this pass reads anyway).
    for (int64_t s = 0; s < cols; s += kChunk) {
      const int64_t len = cols - s < kChunk ? cols - s : kChunk;
      for (int64_t j = 0; j < len; ++j) xhat_buf[j] = (xr[s + j] - mu) * rs;
      for (int64_t j = 0; j < len; ++j)
        g_buf[j] = w != nullptr ? dyr[s + j] * w[s + j] : dyr[s + j];
      if (dx != nullptr) {
        for (int64_t j = 0; j < len; ++j) {
          sum_g += g_buf[j];
          sum_gx += g_buf[j] * xhat_buf[j];
        }
      }
      if (dw != nullptr) {
        for (int64_t j = 0; j < len; ++j) dw[s + j] += dyr[s + j] * xhat_buf[j];
      }
      if (db != nullptr) {
        for (int64_t j = 0; j < len; ++j) db[s + j] += dyr[s + j];
      }
    }
    if (dx == nullptr) continue;
    const T mean_g = sum_g / n, mean_gx = sum_gx / n;
    T* dxr = dx + r * cols;
    for (int64_t j = 0; j < cols; ++j) {
      const T xhat = (xr[j] - mu) * rs;
      const T g = w != nullptr ? dyr[j] * w[j] : dyr[j];
      dxr[j] += rs * (g - mean_g - xhat * mean_gx);
    }
  }
}

template <class T>
void exp_k(const T* x, T* y, int64_t n) {
  apply<Fn::kExp>(x, y, n);
}
template <class T>
void expm1_k(const T* x, T* y, int64_t n) {
  apply<Fn::kExpm1>(x, y, n);
}
template <class T>
void log_k(const T* x, T* y, int64_t n) {
  apply<Fn::kLog>(x, y, n);
}
template <class T>
void tanh_k(const T* x, T* y, int64_t n) {
  apply<Fn::kTanh>(x, y, n);
}
template <class T>
void cos_k(const T* x, T* y, int64_t n) {
  apply<Fn::kCos>(x, y, n);
}
template <class T>
void sin_k(const T* x, T* y, int64_t n) {
  apply<Fn::kSin>(x, y, n);
}
void pow_base_k(float base, const float* x, float* y, int64_t n) {
  apply_vector(x, y, n, [base](auto v) { return pow_of(base, v); });
}

template <Unary U, class T>
void map_one(const T* x, T* y, int64_t n) {
  apply_vector(x, y, n, [](auto v) { return unary_of<U>(v); });
}

template <class T>
void map_k(int f, const T* x, T* y, int64_t n) {
  switch (static_cast<Unary>(f)) {
    case Unary::kAbs:
      return map_one<Unary::kAbs>(x, y, n);
    case Unary::kSign:
      return map_one<Unary::kSign>(x, y, n);
    case Unary::kSquare:
      return map_one<Unary::kSquare>(x, y, n);
    case Unary::kSqrt:
      return map_one<Unary::kSqrt>(x, y, n);
    case Unary::kFloor:
      return map_one<Unary::kFloor>(x, y, n);
    case Unary::kCeil:
      return map_one<Unary::kCeil>(x, y, n);
    case Unary::kRound:
      return map_one<Unary::kRound>(x, y, n);
    case Unary::kTrunc:
      return map_one<Unary::kTrunc>(x, y, n);
    case Unary::kFrac:
      return map_one<Unary::kFrac>(x, y, n);
    case Unary::kExp:
      return map_one<Unary::kExp>(x, y, n);
    case Unary::kSin:
      return map_one<Unary::kSin>(x, y, n);
    case Unary::kCos:
      return map_one<Unary::kCos>(x, y, n);
    case Unary::kTan:
      return map_one<Unary::kTan>(x, y, n);
    case Unary::kAsin:
      return map_one<Unary::kAsin>(x, y, n);
    case Unary::kAcos:
      return map_one<Unary::kAcos>(x, y, n);
    case Unary::kAtan:
      return map_one<Unary::kAtan>(x, y, n);
    case Unary::kSinh:
      return map_one<Unary::kSinh>(x, y, n);
    case Unary::kCosh:
      return map_one<Unary::kCosh>(x, y, n);
    case Unary::kAsinh:
      return map_one<Unary::kAsinh>(x, y, n);
    case Unary::kAcosh:
      return map_one<Unary::kAcosh>(x, y, n);
    case Unary::kAtanh:
      return map_one<Unary::kAtanh>(x, y, n);
    case Unary::kErf:
      return map_one<Unary::kErf>(x, y, n);
    case Unary::kErfc:
      return map_one<Unary::kErfc>(x, y, n);
    case Unary::kLog1p:
      return map_one<Unary::kLog1p>(x, y, n);
    case Unary::kExpm1:
      return map_one<Unary::kExpm1>(x, y, n);
    case Unary::kExp2:
      return map_one<Unary::kExp2>(x, y, n);
    case Unary::kLog2:
      return map_one<Unary::kLog2>(x, y, n);
    case Unary::kLog10:
      return map_one<Unary::kLog10>(x, y, n);
  }
}

template <Binary B, class T>
void map2_one(const T* a, const T* b, T* y, int64_t n) {
  apply_vector2(a, b, y, n, [](auto u, auto v) { return binary_of<B, T>(u, v); });
}

template <class T>
void map2_k(int f, const T* a, const T* b, T* y, int64_t n) {
  switch (static_cast<Binary>(f)) {
    case Binary::kPow:
      return map2_one<Binary::kPow>(a, b, y, n);
    case Binary::kAtan2:
      return map2_one<Binary::kAtan2>(a, b, y, n);
    case Binary::kFmod:
      return map2_one<Binary::kFmod>(a, b, y, n);
    case Binary::kRemainder:
      return map2_one<Binary::kRemainder>(a, b, y, n);
    case Binary::kFloorDivide:
      return map2_one<Binary::kFloorDivide>(a, b, y, n);
  }
}

template <class T>
constexpr Kernels<T> table(void (*pow_base)(T, const T*, T*, int64_t)) {
  return {&exp_k<T>,
          &expm1_k<T>,
          &log_k<T>,
          &tanh_k<T>,
          &cos_k<T>,
          &sin_k<T>,
          pow_base,
          &masked_scale_impl<T>,
          &sum_impl<T>,
          &sigmoid_impl<T>,
          &gelu_impl<T>,
          &gelu_backward_impl<T>,
          &softmax_impl<T>,
          &softmax_backward_impl<T>,
          &logsumexp_impl<T>,
          &log_softmax_impl<T>,
          &layer_norm_impl<T>,
          &layer_norm_backward_impl<T>,
          &map_k<T>,
          &map2_k<T>};
}

}  // namespace

const Kernels<float> kFloat = table<float>(&pow_base_k);
const Kernels<double> kDouble = table<double>(nullptr);

}  // namespace tapegrad::vmath::levels::TAPEGRAD_VMATH_NAMESPACE
