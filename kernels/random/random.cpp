// The generator's block loops of the CPU level in use (kernels/random/random.h), from the
// variants kernels/random/random_isa.cpp builds.
#include <tapegrad/kernels/random/random.h>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/random/random_isa.h>

namespace tapegrad::random_kernels {

#define TAPEGRAD_RANDOM_LOOPS(level)                                 \
  Generator::BlockLoops {                                            \
    &isa::level::twist, &isa::level::temper, &isa::level::keep_below \
  }

// The level is one atomic load (cpu.cpp): picked per call, so the test hook reaches it.
const Generator::BlockLoops& block_loops() {
  static constexpr auto baseline = TAPEGRAD_RANDOM_LOOPS(random_baseline);
#if defined(__x86_64__)
  static constexpr auto avx2 = TAPEGRAD_RANDOM_LOOPS(random_avx2);
  static constexpr auto avx512 = TAPEGRAD_RANDOM_LOOPS(random_avx512);
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512) return avx512;
  if (level == CpuCapability::Avx2) return avx2;
#endif
  return baseline;
}

#undef TAPEGRAD_RANDOM_LOOPS

}  // namespace tapegrad::random_kernels
