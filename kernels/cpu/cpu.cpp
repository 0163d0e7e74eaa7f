// The CPU's instruction-set level (kernels/cpu/cpu.h): CPUID for what the CPU has, XGETBV for
// which register state the operating system saves (a CPU with AVX-512 under an OS that does not
// save the ZMM registers must not run AVX-512 code), TAPEGRAD_CPU_CAPABILITY to force a lower one.
#include <tapegrad/kernels/cpu/cpu.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <tapegrad/graph/error.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tapegrad {

namespace {

constexpr const char* kVariable = "TAPEGRAD_CPU_CAPABILITY";
constexpr CpuCapability kLevels[] = {CpuCapability::Baseline, CpuCapability::Avx2,
                                     CpuCapability::Avx512, CpuCapability::Avx512Bf16};

#if defined(__x86_64__) || defined(__i386__)
bool bit(unsigned word, int n) {
  return (word >> n) & 1u;
}

// XCR0, by the instruction's encoding: the xgetbv intrinsic needs -mxsave, which the library's
// baseline build does not have. Only where CPUID says OSXSAVE.
uint64_t xcr0() {
  uint32_t eax = 0, edx = 0;
  asm volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuCapability detect() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return CpuCapability::Baseline;
  const bool osxsave = bit(ecx, 27), avx = bit(ecx, 28), fma = bit(ecx, 12);
  if (!osxsave || !avx || !fma) return CpuCapability::Baseline;
  const uint64_t xcr = xcr0();
  if ((xcr & 0x6) != 0x6) return CpuCapability::Baseline;  // XMM and YMM state
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return CpuCapability::Baseline;
  if (!bit(ebx, 5)) return CpuCapability::Baseline;                                  // AVX2
  const bool avx512 = bit(ebx, 16) && bit(ebx, 17) && bit(ebx, 30) && bit(ebx, 31);  // F DQ BW VL
  if (!avx512 || (xcr & 0xe0) != 0xe0)
    return CpuCapability::Avx2;  // opmask, ZMM0-15 high, ZMM16-31
  unsigned eax1 = 0, ebx1 = 0, ecx1 = 0, edx1 = 0;
  if (__get_cpuid_count(7, 1, &eax1, &ebx1, &ecx1, &edx1) && bit(eax1, 5)) {
    return CpuCapability::Avx512Bf16;
  }
  return CpuCapability::Avx512;
}
#else
CpuCapability detect() {
  return CpuCapability::Baseline;
}
#endif

std::string levels_list() {
  return "baseline, avx2, avx512 or avx512_bf16";
}

// TAPEGRAD_CPU_CAPABILITY's level, nullopt when unset or empty; read once (a function-local
// static: retried while it throws).
std::optional<CpuCapability> from_environment() {
  static const std::optional<CpuCapability> level = [] {
    const char* env = std::getenv(kVariable);
    return detail::parse_cpu_capability(env == nullptr ? "" : env, cpu_detected_capability());
  }();
  return level;
}

constexpr int kNotForced = -1;
std::atomic<int> forced_for_testing{kNotForced};

}  // namespace

CpuCapability cpu_detected_capability() {
  static const CpuCapability level = detect();
  return level;
}

const char* cpu_capability_name(CpuCapability level) {
  switch (level) {
    case CpuCapability::Baseline:
      return "baseline";
    case CpuCapability::Avx2:
      return "avx2";
    case CpuCapability::Avx512:
      return "avx512";
    case CpuCapability::Avx512Bf16:
      return "avx512_bf16";
  }
  return "unknown";
}

CpuCapability cpu_capability() {
  const int forced = forced_for_testing.load(std::memory_order_acquire);
  if (forced != kNotForced) return static_cast<CpuCapability>(forced);
  return from_environment().value_or(cpu_detected_capability());
}

std::string cpu_capability_info() {
  const CpuCapability cpu = cpu_detected_capability();
  const CpuCapability used = cpu_capability();
  std::string by;
  if (forced_for_testing.load(std::memory_order_acquire) != kNotForced) {
    by = "forced for testing";
  } else if (from_environment()) {
    by = std::string("forced by ") + kVariable;
  } else {
    return std::string("cpu: ") + cpu_capability_name(used) + " (this CPU)";
  }
  return std::string("cpu: ") + cpu_capability_name(used) + ", " + by +
         "; this CPU: " + cpu_capability_name(cpu);
}

namespace detail {

std::optional<CpuCapability> parse_cpu_capability(std::string_view value, CpuCapability cpu) {
  if (value.empty()) return std::nullopt;
  for (const CpuCapability level : kLevels) {
    if (value != cpu_capability_name(level)) continue;
    if (level > cpu) {
      throw Error(std::string(kVariable) + "=" + std::string(value) + ": this CPU's level is " +
                  cpu_capability_name(cpu) + "; it can only be forced lower");
    }
    return level;
  }
  throw Error(std::string(kVariable) + "=" + std::string(value) + ": expected " + levels_list() +
              " (this CPU's level: " + cpu_capability_name(cpu) + ")");
}

void set_cpu_capability_for_testing(std::optional<CpuCapability> level) {
  if (level && *level > cpu_detected_capability()) {
    throw Error(std::string("set_cpu_capability_for_testing(") + cpu_capability_name(*level) +
                "): this CPU's level is " + cpu_capability_name(cpu_detected_capability()));
  }
  forced_for_testing.store(level ? static_cast<int>(*level) : kNotForced,
                           std::memory_order_release);
}

}  // namespace detail

}  // namespace tapegrad
