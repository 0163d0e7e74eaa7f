// A real heap-allocation counter for tests: alloc_counter.cpp replaces malloc and friends for the
// whole test executable (tapegrad_alloc_tests), so every allocation counts, whoever makes it
// (operator new, std::vector, Eigen, the arena), on any thread.
#pragma once

#include <cstdint>

namespace tapegrad::testing {

// Calls of malloc, calloc, realloc, memalign, aligned_alloc and posix_memalign so far.
uint64_t heap_allocations();

// Runs `step` `warmup` times (first steps may grow the arena and the optimiser's state), then
// `measured` times, and returns the heap allocations made during the measured runs.
template <class Step>
uint64_t allocations_per_steps(Step&& step, int warmup, int measured) {
  for (int i = 0; i < warmup; ++i) step();
  const uint64_t before = heap_allocations();
  for (int i = 0; i < measured; ++i) step();
  return heap_allocations() - before;
}

}  // namespace tapegrad::testing
