// PyTorch-compatible random numbers: MT19937 streams bit-exact to torch's CPU generator.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tapegrad {

// Reproduces torch 1.13's CPU generator (at::CPUGeneratorImpl) and the CPU kernels that draw from
// it, value for value, so a model initialised and trained here matches the same script in torch
// (checked against Debian's python3-torch 1.13.1, x86-64, AVX2 kernels; see
// tests/goldens/random/make_random_goldens.py).
//
// Exact arithmetic, as torch does it (all confirmed by experiment against torch):
//  - Engine: MT19937 seeded with the low 32 bits of the seed (identical to std::mt19937), while
//    the full 64-bit seed is kept for initial_seed().
//  - float32 uniform in [0, 1): (random() & 0xFFFFFF) * 2^-24;
//    float64: (random64() & (2^53 - 1)) * 2^-53.
//  - uniform(from, to): from/to are first cast to the element type; r = to - from in that type;
//    value = fma(u, r, from): torch's AVX2 kernels are compiled with FMA contraction (on a CPU
//    without AVX2, torch's DEFAULT kernels round u * r first and can differ in the last bit).
//  - Bernoulli / dropout: one float64 uniform per element, success when u < prob.
//  - Draws fill the output in row-major order.
// Not thread-safe: a Generator must not be used from two threads at once (torch locks a mutex).
class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;  // torch.Generator()'s seed
  static constexpr int kStateWords = 624;                      // MT19937's state size
  // Length of state(): tag, seed, left, next, 624 words, normal-cache flag, normal-cache bits.
  static constexpr size_t kStateSize = 4 + kStateWords + 2;

  explicit Generator(uint64_t seed = kDefaultSeed);
  // torch's Generator.manual_seed: restarts the stream and drops any cached normal sample.
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }

  uint32_t random();    // one 32-bit draw
  uint64_t random64();  // two draws: the first is the high word (torch's make64BitsFrom32Bits)

  // torch.rand / Tensor.uniform_(from, to) on n contiguous elements. Throws Error when from or to
  // is outside the dtype's range, from > to, or to - from overflows, as torch's uniform_ does.
  void uniform(float* out, int64_t n, double from = 0.0, double to = 1.0);
  void uniform(double* out, int64_t n, double from = 0.0, double to = 1.0);

  // The loops of a block draw (graph/mt19937_loops.inc): twist the 624 state words, temper n of
  // them into draws, and dropout's compare. own_loops() are compiled for the library's target;
  // kernels/random/random.h has the same loops built per CPU level, which the ops pass (graph/
  // knows no CPU level). Every version gives the same bits.
  struct BlockLoops {
    void (*twist)(uint32_t* words);
    void (*temper)(const uint32_t* words, uint32_t* out, int64_t n);
    void (*keep_below)(const uint32_t* words, uint8_t* keep, int64_t m, int64_t threshold);
  };
  static const BlockLoops& own_loops();

  // The mask of torch.nn.functional.dropout(x, p, training=True) on CPU: keep[i] = 1 when a
  // float64 uniform is < 1 - p (torch's bernoulli_(1 - p)). p == 0 and p == 1 draw nothing: torch
  // returns the input itself, or multiplies by a zero scalar, without touching the generator.
  // Throws Error unless 0 <= p <= 1. See dropout_scale() for how kept values are scaled.
  // The draws run `loops` (see BlockLoops).
  void dropout_keep_mask(uint8_t* keep, int64_t n, double p, const BlockLoops& loops = own_loops());

  // torch.randn / Tensor.normal_(mean, std) on n contiguous elements (std >= 0, else Error).
  //  - n >= 16: torch's block Box-Muller (normal_fill): n uniforms of the element type, then
  //    blocks of 16 (u1 = 1 - data[j], u2 = data[j + 8]); when n % 16 != 0, 16 fresh uniforms
  //    overwrite the last 16 outputs and are transformed again. float32 reproduces the AVX2
  //    kernel (cephes polynomials of avx_mathfun.h, with the FMAs the compiler fused);
  //    float64 uses libm log/sin/cos, like torch.
  //  - n < 16: per element, a float64 Box-Muller pair from two float64 uniforms (u1, u2):
  //    r = sqrt(-2 log(1 - u2)), theta = 2 pi u1; returns r cos(theta) and caches r sin(theta)
  //    for the next scalar-path draw (the cache survives between calls, as in torch).
  // Values depend on libm (the float64 paths call log/sin/cos, as torch does through the same
  // glibc), and float32 n >= 16 follows torch's AVX2 kernel: a torch running its CPU kernels at
  // another capability (DEFAULT on CPUs without AVX2, or AVX512 in builds that compile it; this
  // Debian build does not) takes the generic libm path and gives other float32 values.
  void normal(float* out, int64_t n, double mean = 0.0, double std = 1.0);
  void normal(double* out, int64_t n, double mean = 0.0, double std = 1.0);

  // torch.bernoulli(p) on CPU (torch 1.13 without MKL, Debian's build): out[i] = 1 when a uniform
  // of p's dtype is < p[i] (float32: one 24-bit draw, float64: a 53-bit draw of two words), else
  // 0. Every p[i] must be in [0, 1] (NaN is not), else Error naming its position, before any draw.
  void bernoulli(float* out, const float* p, int64_t n);
  void bernoulli(double* out, const double* p, int64_t n);
  // torch.bernoulli(x, p) / Tensor.bernoulli_(p) with one probability: a float64 uniform per
  // element, whatever the dtype (as dropout_keep_mask, but p == 0 and p == 1 draw too, as
  // torch's bernoulli_ does). 0 <= p <= 1, else Error.
  void bernoulli(float* out, int64_t n, double p);
  void bernoulli(double* out, int64_t n, double p);

  // torch.randperm(n) on CPU in torch 1.13, for every n: out = 0..n-1, then for i in 0..n-2 swap
  // out[i] with out[i + random() % (n - i)] (one 32-bit draw each, n - 1 draws in all). torch
  // 2.x draws 64-bit words from n >= 2^32 / 20; 1.13 does not (checked at n = 214748364).
  void randperm(int64_t* out, int64_t n);

  // Tensor.exponential_(lambd) on n contiguous elements, as torch 1.13's CPU kernel without MKL
  // (Debian's build): per element one float64 uniform u, then -1 / lambd * log(1 - u) in double
  // with libm's scalar log, cast to the element type. lambd must be > 0 and finite, else Error.
  // torch.multinomial draws these (see ops/multinomial.cpp).
  void exponential(float* out, int64_t n, double lambd = 1.0);
  void exponential(double* out, int64_t n, double lambd = 1.0);

  // Complete state for checkpoints, kStateSize words:
  //   [0] kStateTag, [1] seed, [2] left (draws before the next twist, 1..624), [3] next (index of
  //   the next word, 0..624), [4..627] the MT19937 words, [628] 1 when a normal sample is cached,
  //   [629] that cached float64's bit pattern (0 when none).
  // seed/left/next/words are the fields of torch.get_rng_state()'s legacy_pod.
  std::vector<uint64_t> state() const;
  // Restores a state() exactly; throws Error (leaving this generator unchanged) on a wrong size or
  // tag, an out-of-range field, or left/next that the engine could never reach.
  void set_state(std::span<const uint64_t> state);

  static constexpr uint64_t kStateTag = 0x54474D5431393901ULL;  // "TGMT199" + format version 1

 private:
  double uniform_double();  // float64 uniform in [0, 1)
  // The next n draws of random(), in order, written to out: words are tempered a block at a
  // time (loops.temper) instead of one call per draw; same words, same state.
  void random_block(uint32_t* out, int64_t n, const BlockLoops& loops);
  float uniform_float();   // float32 uniform in [0, 1)
  double scalar_normal();  // one standard normal from the scalar path (uses and fills the cache)
  void twist();

  uint64_t seed_ = kDefaultSeed;
  int32_t left_ = 1;
  uint32_t next_ = 0;
  std::array<uint32_t, kStateWords> words_{};
  std::optional<double> next_normal_;  // torch's next_double_normal_sample_
};

// The process's default generator, what torch.manual_seed seeds. It is thread_local: each thread
// has its own, starting at Generator::kDefaultSeed (torch's default generator is process-wide and
// starts from a nondeterministic seed), and manual_seed() below seeds only the calling thread's.
Generator& default_generator();
void manual_seed(uint64_t seed);  // default_generator().manual_seed(seed)

// Dropout's factor for kept values, as torch computes it on CPU: noise = mask.div_(1 - p) in the
// tensor's dtype, i.e. T(1) / T(1 - p) with 1 - p rounded in double first, then cast to T.
// The output is then x * noise elementwise, where noise is this scale for kept elements and 0 for
// dropped ones (so a dropped negative x gives -0, a dropped inf or NaN gives NaN). For float32
// this differs from float(1 / (1 - p)) for some p. p == 1 is special: torch returns x * 0.
template <class T>
inline T dropout_scale(double p) {
  return T(1) / static_cast<T>(1.0 - p);
}

}  // namespace tapegrad
