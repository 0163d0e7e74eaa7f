// Helpers for the tests of the kernels built once per CPU level: the levels this CPU has, and a
// guard that forces one through cpu.h's test hook.
#pragma once

#include <optional>
#include <vector>

#include <tapegrad/kernels/cpu/cpu.h>

namespace tapegrad::testing {

// Forces a CPU level for the test hook and gives the environment's back on exit.
class CpuLevelGuard {
 public:
  explicit CpuLevelGuard(CpuCapability level) { detail::set_cpu_capability_for_testing(level); }
  ~CpuLevelGuard() { detail::set_cpu_capability_for_testing(std::nullopt); }
  CpuLevelGuard(const CpuLevelGuard&) = delete;
  CpuLevelGuard& operator=(const CpuLevelGuard&) = delete;
};

// Every level up to this CPU's, lowest first.
inline std::vector<CpuCapability> cpu_levels_here() {
  std::vector<CpuCapability> levels;
  for (int l = 0; l <= static_cast<int>(cpu_detected_capability()); ++l)
    levels.push_back(static_cast<CpuCapability>(l));
  return levels;
}

// Whether a level calls the C library's transcendental functions (torch's DEFAULT kernels do):
// x86's baseline. arm64's baseline calls SLEEF's AdvSIMD functions, as torch does there. Tests
// holding torch's SLEEF bits compare within a stated number of ulps at such a level.
inline bool calls_libm(CpuCapability level) {
#if defined(__aarch64__)
  (void)level;
  return false;
#else
  return level == CpuCapability::Baseline;
#endif
}
inline bool active_level_calls_libm() {
  return calls_libm(cpu_capability());
}

// Whether a level's product kernels (the small products, the matrix-vector product) fuse each
// product into its sum: all but x86's baseline (SSE2 has no FMA; every arm64 CPU has it, and its
// baseline's NEON loops use it).
inline bool level_fuses(CpuCapability level) {
#if defined(__aarch64__)
  (void)level;
  return true;
#else
  return level != CpuCapability::Baseline;
#endif
}

}  // namespace tapegrad::testing
