// The generator's block loops (graph/mt19937_loops.inc: MT19937's twist, its tempering, dropout's
// compare), built once per instruction-set level from this one file (TAPEGRAD_ISA_LEVEL,
// kernels/cpu/isa_level.h): plain integer loops the compiler vectorises at the level's width, so
// every level gives the same words. No standard header: see kernels/cpu/isa_level.h.
#include <cstdint>

#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/random/random_isa.h>

#define TAPEGRAD_RANDOM_NAMESPACE TAPEGRAD_ISA_NAMESPACE(random)

namespace tapegrad::random_kernels::isa::TAPEGRAD_RANDOM_NAMESPACE {

#include <tapegrad/graph/mt19937_loops.inc>

}  // namespace tapegrad::random_kernels::isa::TAPEGRAD_RANDOM_NAMESPACE
