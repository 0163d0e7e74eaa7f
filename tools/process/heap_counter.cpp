// Replaces glibc's allocation entry points, counting each call: allocations are measured, not
// taken from the arena's own bookkeeping. (libstdc++'s operator new calls malloc, so it is counted
// too; tests/alloc/test_alloc.cpp checks that.) Link it into a program only, never the library.
#include "tools/process/heap_counter.h"

#include <atomic>
#include <cstddef>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {
std::atomic<uint64_t> g_allocations{0};
void count() {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

uint64_t tapegrad::process::heap_allocations() {
  return g_allocations.load(std::memory_order_relaxed);
}

extern "C" {
void* malloc(size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  count();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  count();
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  count();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  count();
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  count();
  void* p = __libc_memalign(a, n);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}
