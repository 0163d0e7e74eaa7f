// A real heap-allocation counter: heap_counter.cpp replaces malloc and friends for the whole
// program that links it (tapegrad-bench, tapegrad_alloc_tests), so every allocation counts,
// whoever makes it (operator new, std::vector, Eigen, the arena, a LibTorch plugin), on any thread.
#pragma once

#include <cstdint>

namespace tapegrad::process {

// Calls of malloc, calloc, realloc, memalign, aligned_alloc and posix_memalign so far.
uint64_t heap_allocations();

}  // namespace tapegrad::process
