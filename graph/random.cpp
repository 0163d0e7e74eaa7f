// Generator: torch's MT19937 engine and the CPU sampling kernels (uniform, dropout, normal,
// exponential, bernoulli, randperm).
#include <tapegrad/graph/random.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include <tapegrad/graph/error.h>

// Every multiply-add torch fuses is written as std::fma below, so results do not depend on
// -march or -ffp-contract. Other products must stay rounded on their own (GCC contracts across
// statements by default in C++, even with -std=c++20, once -march enables FMA): the only ones
// that feed an addition are exact (a uniform's k * 2^-24 or k * 2^-53, which GCC does fuse into
// 1 - u; exact products fuse to the same result).
#if defined(__FAST_MATH__)
#error "graph/random.cpp reproduces torch bit for bit and must not be compiled with -ffast-math"
#endif

namespace tapegrad {

namespace {

constexpr int kN = Generator::kStateWords;

#include <tapegrad/graph/mt19937_loops.inc>

void check_count(const char* op, int64_t n) {
  if (n < 0) throw Error(std::string(op) + ": negative element count " + std::to_string(n));
}

// torch's uniform_impl_ checks, in double, before anything is drawn.
template <class T>
void check_uniform_range(double from, double to) {
  const double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
  const double highest = static_cast<double>(std::numeric_limits<T>::max());
  const char* dtype = sizeof(T) == 4 ? "float32" : "float64";
  if (!(from >= lowest && from <= highest) || !(to >= lowest && to <= highest)) {
    throw Error(std::string("uniform: from=") + std::to_string(from) + " and to=" +
                std::to_string(to) + " must be finite and within " + dtype + "'s range");
  }
  if (!(from <= to)) {
    throw Error("uniform: expects a [from, to) range, but from=" + std::to_string(from) +
                " > to=" + std::to_string(to));
  }
  if (!(to - from <= highest)) {
    throw Error(std::string("uniform: to - from overflows ") + dtype);
  }
}

// ---- torch's AVX2 normal_fill_16 for float32, one lane at a time -------------------------------
// Constants and operation order of avx_mathfun.h (log256_ps, sincos256_ps); std::fma marks each
// multiply-add that GCC fused in libtorch_cpu's AVX2 kernel (read from its disassembly).
// It stays beside the engine rather than in kernels/: it is scalar code whose job is torch's
// bits, not speed, and Generator::normal calls it, while graph/ may include only graph/.

float from_bits(uint32_t bits) {
  return std::bit_cast<float>(bits);
}
uint32_t to_bits(float value) {
  return std::bit_cast<uint32_t>(value);
}

// log256_ps for u in [2^-24, 1], the only inputs normal_fill gives it (1 - a float32 uniform).
float cephes_logf(float u) {
  const float kMinNormPos = from_bits(0x00800000U);
  const float kSqrtHalf = 0.707106781186547524f;
  constexpr float kP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                           -1.2420140846E-1f, +1.4249322787E-1f, -1.6668057665E-1f,
                           +2.0000714765E-1f, -2.4999993993E-1f, +3.3333331174E-1f};
  constexpr float kQ1 = -2.12194440e-4f;
  constexpr float kQ2 = 0.693359375f;

  const uint32_t bits = to_bits(std::fmax(u, kMinNormPos));
  const int32_t exponent = static_cast<int32_t>(bits >> 23) - 0x7f;
  float x = from_bits((bits & ~0x7f800000U) | to_bits(0.5f));
  float e = static_cast<float>(exponent) + 1.0f;
  const bool below = x < kSqrtHalf;
  const float tmp = below ? x : 0.0f;
  x = x - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = kP[0];
  for (int k = 1; k < 9; ++k) y = std::fma(y, x, kP[k]);
  y = y * x;
  const float e_q1 = e * kQ1;
  y = std::fma(y, z, e_q1);
  y = std::fma(-z, 0.5f, y);
  x = x + y;
  return std::fma(e, kQ2, x);
}

// sincos256_ps for theta in [0, 2 pi): the sign of the input is always clear here.
void cephes_sincosf(float theta, float* sin_out, float* cos_out) {
  constexpr float kFourOverPi = 1.27323954473516f;
  constexpr float kMinusDp1 = -0.78515625f;
  constexpr float kMinusDp2 = -2.4187564849853515625e-4f;
  constexpr float kMinusDp3 = -3.77489497744594108e-8f;
  constexpr float kSinP0 = -1.9515295891E-4f, kSinP1 = 8.3321608736E-3f, kSinP2 = -1.6666654611E-1f;
  constexpr float kCosP0 = 2.443315711809948E-005f, kCosP1 = -1.388731625493765E-003f,
                  kCosP2 = 4.166664568298827E-002f;

  float x = std::fabs(theta);
  uint32_t sign_sin = to_bits(theta) & 0x80000000U;
  // Truncation, like _mm256_cvttps_epi32; x * 4/pi < 9 here.
  int32_t j = static_cast<int32_t>(x * kFourOverPi);
  j = (j + 1) & ~1;
  const float y = static_cast<float>(j);
  sign_sin ^= static_cast<uint32_t>(j & 4) << 29;
  const bool poly_mask = (j & 2) == 0;
  const uint32_t sign_cos = static_cast<uint32_t>(~(j - 2) & 4) << 29;

  x = std::fma(y, kMinusDp1, x);
  x = std::fma(y, kMinusDp2, x);
  x = std::fma(y, kMinusDp3, x);
  const float z = x * x;

  float yc = std::fma(kCosP0, z, kCosP1);
  yc = std::fma(yc, z, kCosP2);
  yc = z * yc;
  const float half_z = z * 0.5f;
  yc = std::fma(yc, z, -half_z);
  yc = yc + 1.0f;

  float ys = std::fma(kSinP0, z, kSinP1);
  ys = std::fma(ys, z, kSinP2);
  ys = z * ys;
  ys = std::fma(ys, x, x);

  // The vector code blends with bit masks and then adds; kept literally for the signed zeros.
  const float ysin2 = poly_mask ? ys : 0.0f;
  const float ysin1 = poly_mask ? 0.0f : yc;
  ys = ys - ysin2;
  yc = yc - ysin1;
  *sin_out = from_bits(to_bits(ysin1 + ysin2) ^ sign_sin);
  *cos_out = from_bits(to_bits(yc + ys) ^ sign_cos);
}

void normal_fill_16(float* data, float mean, float std) {
  const float two_pi = static_cast<float>(2.0 * std::numbers::pi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];
    const float u2 = data[j + 8];
    const float minus_two_log = cephes_logf(u1) * -2.0f;
    const float radius = std::sqrt(minus_two_log);
    const float theta = two_pi * u2;
    float sin_theta = 0.0f;
    float cos_theta = 0.0f;
    cephes_sincosf(theta, &sin_theta, &cos_theta);
    const float n1 = radius * cos_theta;
    const float n2 = radius * sin_theta;
    data[j] = std::fma(n1, std, mean);
    data[j + 8] = std::fma(n2, std, mean);
  }
}

// torch's generic normal_fill_16<double>.
void normal_fill_16(double* data, double mean, double std) {
  const double two_pi = 2.0 * std::numbers::pi;
  for (int j = 0; j < 8; ++j) {
    const double u1 = 1.0 - data[j];
    const double u2 = data[j + 8];
    const double minus_two_log = std::log(u1) * -2.0;
    const double radius = std::sqrt(minus_two_log);
    const double theta = two_pi * u2;
    const double n1 = radius * std::cos(theta);
    const double n2 = radius * std::sin(theta);
    data[j] = std::fma(n1, std, mean);
    data[j + 8] = std::fma(n2, std, mean);
  }
}

void check_normal_std(double std) {
  if (!(std >= 0.0)) throw Error("normal: expects std >= 0, but found std=" + std::to_string(std));
}

}  // namespace

// ---- the engine ---------------------------------------------------------------------------------

Generator::Generator(uint64_t seed) {
  manual_seed(seed);
}

void Generator::manual_seed(uint64_t seed) {
  seed_ = seed;
  words_[0] = static_cast<uint32_t>(seed & 0xffffffffU);
  for (int j = 1; j < kN; ++j) {
    const uint32_t prev = words_[static_cast<size_t>(j - 1)];
    words_[static_cast<size_t>(j)] = 1812433253U * (prev ^ (prev >> 30)) + static_cast<uint32_t>(j);
  }
  // torch's engine starts with left = 1, next = 0: the first draw twists.
  left_ = 1;
  next_ = 0;
  next_normal_.reset();
}

void Generator::twist() {
  tapegrad::twist(words_.data());
  left_ = kN;
  next_ = 0;
}

const Generator::BlockLoops& Generator::own_loops() {
  static constexpr BlockLoops loops{&tapegrad::twist, &temper, &keep_below};
  return loops;
}

uint32_t Generator::random() {
  if (--left_ == 0) twist();
  uint32_t y = words_[next_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

void Generator::random_block(uint32_t* out, int64_t n, const BlockLoops& loops) {
  while (n > 0) {
    // random() twists when left_ reaches 1 and then hands out words_[0..624); the state after
    // the block is what random() would leave: left_ + next_ == 625.
    if (left_ == 1) {
      loops.twist(words_.data());
      left_ = kN + 1;
      next_ = 0;
    }
    const int64_t take = std::min<int64_t>(n, left_ - 1);
    loops.temper(words_.data() + next_, out, take);
    next_ += static_cast<uint32_t>(take);
    left_ -= static_cast<int32_t>(take);
    out += take;
    n -= take;
  }
}

uint64_t Generator::random64() {
  const uint64_t hi = random();
  const uint64_t lo = random();
  return (hi << 32) | lo;
}

double Generator::uniform_double() {
  return static_cast<double>(random64() & ((uint64_t{1} << 53) - 1)) * 0x1.0p-53;
}

float Generator::uniform_float() {
  return static_cast<float>(random() & ((uint32_t{1} << 24) - 1)) * 0x1.0p-24f;
}

// ---- distributions ------------------------------------------------------------------------------

void Generator::uniform(float* out, int64_t n, double from, double to) {
  check_count("uniform", n);
  check_uniform_range<float>(from, to);
  const float lo = static_cast<float>(from);
  const float range = static_cast<float>(to) - lo;
  for (int64_t i = 0; i < n; ++i) out[i] = std::fma(uniform_float(), range, lo);
}

void Generator::uniform(double* out, int64_t n, double from, double to) {
  check_count("uniform", n);
  check_uniform_range<double>(from, to);
  const double range = to - from;
  for (int64_t i = 0; i < n; ++i) out[i] = std::fma(uniform_double(), range, from);
}

void Generator::dropout_keep_mask(uint8_t* keep, int64_t n, double p, const BlockLoops& loops) {
  check_count("dropout_keep_mask", n);
  if (!(p >= 0.0 && p <= 1.0)) {
    throw Error("dropout: probability has to be between 0 and 1, but got " + std::to_string(p));
  }
  if (p == 0.0 || p == 1.0) {
    const uint8_t value = p == 0.0 ? 1 : 0;
    for (int64_t i = 0; i < n; ++i) keep[i] = value;
    return;
  }
  const double prob = 1.0 - p;
  // uniform_double() < prob, in integers: the uniform is k * 2^-53 with k = the 53 low bits of
  // (hi << 32 | lo), exact, and prob * 2^53 is exact too, so u < prob <=> k < ceil(prob * 2^53).
  // The words come a block at a time (random_block) and the compare runs over the block: the
  // same mask as one uniform_double() per element, several times faster.
  const auto threshold = static_cast<int64_t>(std::ceil(prob * 0x1.0p53));
  constexpr int64_t kBlock = 512;  // elements per block: 2 words each
  uint32_t words[2 * kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    random_block(words, 2 * m, loops);
    loops.keep_below(words, keep + start, m, threshold);
  }
}

namespace {

void check_exponential_lambd(double lambd) {
  if (!(lambd > 0.0 && std::isfinite(lambd))) {
    throw Error("exponential_: lambd must be positive and finite, got " + std::to_string(lambd));
  }
}

}  // namespace

// torch's transformation::exponential on CPU: -1 / lambd * log(1 - u), in double, then cast.
void Generator::exponential(float* out, int64_t n, double lambd) {
  check_count("exponential", n);
  check_exponential_lambd(lambd);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>(-1.0 / lambd * std::log(1.0 - uniform_double()));
  }
}

void Generator::exponential(double* out, int64_t n, double lambd) {
  check_count("exponential", n);
  check_exponential_lambd(lambd);
  for (int64_t i = 0; i < n; ++i) out[i] = -1.0 / lambd * std::log(1.0 - uniform_double());
}

namespace {

void check_bernoulli_p(double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw Error("bernoulli: expects p to be in [0, 1], but got p=" + std::to_string(p));
  }
}

// Each probability in [0, 1] before anything is drawn (torch checks per element as it draws:
// "Expected p_in >= 0 && p_in <= 1").
template <class T>
void check_bernoulli_probabilities(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!(p[i] >= T(0) && p[i] <= T(1))) {
      throw Error("bernoulli: each probability must be in [0, 1], but p[" + std::to_string(i) +
                  "] (flat index) = " + std::to_string(p[i]));
    }
  }
}

}  // namespace

// torch's bernoulli_distribution<p's type>: uniform_real_distribution<T>(0, 1) < p.
void Generator::bernoulli(float* out, const float* p, int64_t n) {
  check_count("bernoulli", n);
  check_bernoulli_probabilities(p, n);
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_float() < p[i] ? 1.0f : 0.0f;
}

void Generator::bernoulli(double* out, const double* p, int64_t n) {
  check_count("bernoulli", n);
  check_bernoulli_probabilities(p, n);
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_double() < p[i] ? 1.0 : 0.0;
}

void Generator::bernoulli(float* out, int64_t n, double p) {
  check_count("bernoulli", n);
  check_bernoulli_p(p);
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_double() < p ? 1.0f : 0.0f;
}

void Generator::bernoulli(double* out, int64_t n, double p) {
  check_count("bernoulli", n);
  check_bernoulli_p(p);
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_double() < p ? 1.0 : 0.0;
}

void Generator::randperm(int64_t* out, int64_t n) {
  check_count("randperm", n);
  for (int64_t i = 0; i < n; ++i) out[i] = i;
  for (int64_t i = 0; i + 1 < n; ++i) {
    const auto z = static_cast<int64_t>(random() % static_cast<uint64_t>(n - i));
    std::swap(out[i], out[z + i]);
  }
}

double Generator::scalar_normal() {
  if (next_normal_) {
    const double cached = *next_normal_;
    next_normal_.reset();
    return cached;
  }
  const double u1 = uniform_double();
  const double u2 = uniform_double();
  const double minus_two_log = std::log(1.0 - u2) * -2.0;
  const double r = std::sqrt(minus_two_log);
  const double theta = 2.0 * std::numbers::pi * u1;
  next_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}

void Generator::normal(float* out, int64_t n, double mean, double std) {
  check_count("normal", n);
  check_normal_std(std);
  if (n < 16) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(std::fma(scalar_normal(), std, mean));
    return;
  }
  const float mean_f = static_cast<float>(mean);
  const float std_f = static_cast<float>(std);
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_float();
  for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16(out + i, mean_f, std_f);
  if (n % 16 != 0) {
    float* tail = out + n - 16;
    for (int i = 0; i < 16; ++i) tail[i] = uniform_float();
    normal_fill_16(tail, mean_f, std_f);
  }
}

void Generator::normal(double* out, int64_t n, double mean, double std) {
  check_count("normal", n);
  check_normal_std(std);
  if (n < 16) {
    for (int64_t i = 0; i < n; ++i) out[i] = std::fma(scalar_normal(), std, mean);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_double();
  for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16(out + i, mean, std);
  if (n % 16 != 0) {
    double* tail = out + n - 16;
    for (int i = 0; i < 16; ++i) tail[i] = uniform_double();
    normal_fill_16(tail, mean, std);
  }
}

// ---- state --------------------------------------------------------------------------------------

std::vector<uint64_t> Generator::state() const {
  std::vector<uint64_t> s;
  s.reserve(kStateSize);
  s.push_back(kStateTag);
  s.push_back(seed_);
  s.push_back(static_cast<uint64_t>(left_));
  s.push_back(next_);
  for (uint32_t w : words_) s.push_back(w);
  s.push_back(next_normal_ ? 1 : 0);
  s.push_back(next_normal_ ? std::bit_cast<uint64_t>(*next_normal_) : 0);
  return s;
}

void Generator::set_state(std::span<const uint64_t> s) {
  if (s.size() != kStateSize) {
    throw Error("Generator::set_state: expected " + std::to_string(kStateSize) + " words, got " +
                std::to_string(s.size()));
  }
  if (s[0] != kStateTag) throw Error("Generator::set_state: not a tapegrad generator state");
  const uint64_t left = s[2];
  const uint64_t next = s[3];
  // The engine only ever holds (left, next) = (1, 0) after seeding, or left + next = 625 with
  // left in 1..624; anything else would read past the words.
  const bool fresh = left == 1 && next == 0;
  const bool running = left >= 1 && left <= static_cast<uint64_t>(kN) &&
                       left + next == static_cast<uint64_t>(kN) + 1;
  if (!fresh && !running) {
    throw Error("Generator::set_state: invalid position left=" + std::to_string(left) +
                " next=" + std::to_string(next));
  }
  for (int j = 0; j < kN; ++j) {
    if (s[static_cast<size_t>(4 + j)] > 0xffffffffU) {
      throw Error("Generator::set_state: state word " + std::to_string(j) + " exceeds 32 bits");
    }
  }
  const uint64_t has_normal = s[4 + kN];
  const uint64_t normal_bits = s[5 + kN];
  if (has_normal > 1 || (has_normal == 0 && normal_bits != 0)) {
    throw Error("Generator::set_state: malformed cached normal sample");
  }
  seed_ = s[1];
  left_ = static_cast<int32_t>(left);
  next_ = static_cast<uint32_t>(next);
  for (int j = 0; j < kN; ++j) {
    words_[static_cast<size_t>(j)] = static_cast<uint32_t>(s[static_cast<size_t>(4 + j)]);
  }
  if (has_normal == 1) {
    next_normal_ = std::bit_cast<double>(normal_bits);
  } else {
    next_normal_.reset();
  }
}

Generator& default_generator() {
  thread_local Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) {
  default_generator().manual_seed(seed);
}

}  // namespace tapegrad
