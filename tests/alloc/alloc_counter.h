// Heap allocations per training step, counted by the benchmark's counter (tools/process/
// heap_counter.cpp replaces malloc and friends for the whole tapegrad_alloc_tests executable).
#pragma once

#include <cstdint>

#include "tools/process/heap_counter.h"

namespace tapegrad::testing {

using process::heap_allocations;

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
