// For the kernel files CMake builds once per instruction-set level (tapegrad_isa_variants in
// CMakeLists.txt): checks that the flags are the level's and names the level's namespace:
// TAPEGRAD_ISA_NAMESPACE(vmath) is vmath_baseline, vmath_avx2 or vmath_avx512.
//
// The one-definition-rule trap: an inline function or template instantiated in a file built with
// AVX-512 flags is a weak symbol like the baseline file's copy of it, and the linker keeps one of
// them for the whole program, so a baseline caller could end up running AVX-512 code. So a
// per-level file defines everything in its level's namespace (helpers in an anonymous namespace
// inside it), and includes nothing that defines an inline function or template it could
// instantiate: this header, its own declarations header (plain structs and declarations),
// <cstdint>, and the C declarations of <sleef.h> and <immintrin.h> (GCC's intrinsics are
// always-inline gnu_inline functions, never emitted). It calls compiler builtins
// (__builtin_memcpy, __builtin_sqrtf, ...) rather than std::min or std::sqrt.
// tests/kernels/check_isa_object.cmake checks both rules on each object: no instruction above
// its level, and no symbol it defines for the linker outside its level's namespace.
#pragma once

#if !defined(TAPEGRAD_ISA_LEVEL)
#error "built by CMake only (tapegrad_isa_variants), with TAPEGRAD_ISA_LEVEL and the level's flags"
#elif TAPEGRAD_ISA_LEVEL == 2
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__) || \
    !defined(__AVX512VL__) || !defined(__FMA__)
#error "the AVX-512 variant needs -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma"
#endif
#define TAPEGRAD_ISA_SUFFIX avx512
#elif TAPEGRAD_ISA_LEVEL == 1
#if !defined(__AVX2__) || !defined(__FMA__) || defined(__AVX512F__)
#error "the AVX2 variant needs -mavx2 -mfma and no AVX-512"
#endif
#define TAPEGRAD_ISA_SUFFIX avx2
#elif TAPEGRAD_ISA_LEVEL == 0
#if defined(__AVX__) || defined(__FMA__)
#error "the baseline variant must be built without AVX or FMA"
#endif
#define TAPEGRAD_ISA_SUFFIX baseline
#else
#error "TAPEGRAD_ISA_LEVEL: 0 (baseline), 1 (AVX2) or 2 (AVX-512)"
#endif

// The width of the level's vector registers, in bytes: ZMM, YMM, or XMM and NEON's.
#if TAPEGRAD_ISA_LEVEL == 2
#define TAPEGRAD_ISA_REGISTER_BYTES 64
#elif TAPEGRAD_ISA_LEVEL == 1
#define TAPEGRAD_ISA_REGISTER_BYTES 32
#else
#define TAPEGRAD_ISA_REGISTER_BYTES 16
#endif

#define TAPEGRAD_ISA_CONCAT2(base, suffix) base##_##suffix
#define TAPEGRAD_ISA_CONCAT(base, suffix) TAPEGRAD_ISA_CONCAT2(base, suffix)
#define TAPEGRAD_ISA_NAMESPACE(base) TAPEGRAD_ISA_CONCAT(base, TAPEGRAD_ISA_SUFFIX)
