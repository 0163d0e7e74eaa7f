// The random generator's block loops (Generator::BlockLoops) built per CPU level: what the ops
// that draw in bulk (dropout, attention's dropout) pass to the Generator, which lives in graph/
// and knows no CPU level.
#pragma once

#include <tapegrad/graph/random.h>

namespace tapegrad::random_kernels {

// The loops of the CPU level in use (kernels/cpu/cpu.h): the same words as
// Generator::own_loops(), at the level's vector width. Throws as cpu_capability() does.
const Generator::BlockLoops& block_loops();

}  // namespace tapegrad::random_kernels
