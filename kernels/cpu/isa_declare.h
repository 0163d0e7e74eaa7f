// For the per-level declaration headers (kernels/*/*_isa.h): declares the same functions once per
// instruction-set level this CPU family builds, each in its level's namespace. Within the
// enclosing namespace,
//   TAPEGRAD_DECLARE_PER_LEVEL(gemv, void rows(const float* w, ...);)
// declares gemv_baseline::rows and, on x86-64, gemv_avx2::rows and gemv_avx512::rows: the
// namespaces kernels/cpu/isa_level.h names for the files built at each level. Only a macro here,
// so a per-level file may include it (kernels/cpu/isa_level.h says why that matters).
#pragma once

#if defined(__x86_64__)
#define TAPEGRAD_DECLARE_PER_LEVEL(base, ...) \
  namespace base##_baseline {                 \
    __VA_ARGS__                               \
  }                                           \
  namespace base##_avx2 {                     \
    __VA_ARGS__                               \
  }                                           \
  namespace base##_avx512 {                   \
    __VA_ARGS__                               \
  }
#else
#define TAPEGRAD_DECLARE_PER_LEVEL(base, ...) \
  namespace base##_baseline {                 \
    __VA_ARGS__                               \
  }
#endif
