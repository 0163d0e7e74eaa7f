// The generator's block loops per instruction-set level (kernels/random/random_isa.cpp, built
// once per level with that level's flags), as random.cpp hands them out. Only declarations here
// (kernels/cpu/isa_level.h says why).
#pragma once

#include <cstdint>

#include <tapegrad/kernels/cpu/isa_declare.h>

namespace tapegrad::random_kernels::isa {

#define TAPEGRAD_RANDOM_DECLARE                             \
  void twist(uint32_t* w);                                  \
  void temper(const uint32_t* w, uint32_t* out, int64_t n); \
  void keep_below(const uint32_t* words, uint8_t* keep, int64_t m, int64_t threshold);

TAPEGRAD_DECLARE_PER_LEVEL(random, TAPEGRAD_RANDOM_DECLARE)
#undef TAPEGRAD_RANDOM_DECLARE

}  // namespace tapegrad::random_kernels::isa
