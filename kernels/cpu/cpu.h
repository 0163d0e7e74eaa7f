// The CPU's instruction-set level as tapegrad's kernels see it: what the CPU and the operating
// system support (CPUID and XGETBV), optionally forced lower by TAPEGRAD_CPU_CAPABILITY, so the
// kernels compiled for several levels (kernels/gemm/gemm_small_isa.cpp) pick theirs at run time.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tapegrad {

// Each level includes the ones below it.
// - Baseline: x86-64's SSE2 (and any CPU that is not x86-64).
// - Avx2: AVX2 and FMA, the YMM state saved by the OS.
// - Avx512: AVX512F, BW, DQ and VL, the ZMM and opmask state saved by the OS.
// - Avx512Bf16: Avx512 and AVX512_BF16 (matmul_precision.h's bfloat16 kernels).
enum class CpuCapability { Baseline, Avx2, Avx512, Avx512Bf16 };

// The level the kernels use: the CPU's, or TAPEGRAD_CPU_CAPABILITY's when set (baseline, avx2,
// avx512 or avx512_bf16; read once, at the first call). A level above the CPU's, or any other
// value, throws tapegrad::Error naming the variable, the value and the CPU's level, at every
// call (so at the first matrix product) until the process is restarted.
CpuCapability cpu_capability();
// The CPU's own level, whatever the variable says.
CpuCapability cpu_detected_capability();
// "baseline", "avx2", "avx512", "avx512_bf16": the names TAPEGRAD_CPU_CAPABILITY takes.
const char* cpu_capability_name(CpuCapability level);
// One line: "cpu: avx512_bf16 (this CPU)", or "cpu: avx2, forced by TAPEGRAD_CPU_CAPABILITY;
// this CPU: avx512_bf16". Throws as cpu_capability() does.
std::string cpu_capability_info();

namespace detail {
// The level a TAPEGRAD_CPU_CAPABILITY value asks for on a CPU of level `cpu` (nullopt for an
// empty value: the CPU's own); throws tapegrad::Error as cpu_capability() describes.
std::optional<CpuCapability> parse_cpu_capability(std::string_view value, CpuCapability cpu);
// Test hook: a level to use instead of the environment's (nullopt: back to it). A level above
// the CPU's throws tapegrad::Error. Set it between products, as set_num_threads.
void set_cpu_capability_for_testing(std::optional<CpuCapability> level);
}  // namespace detail

}  // namespace tapegrad
