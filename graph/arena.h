// Arena: the bump allocator a tape draws every value, gradient and saved buffer from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace tapegrad {

// Memory is handed out by bumping a pointer and reclaimed all at once by reset(); ranges given
// back early with release() are reused before bumping (the smallest that fits). After the first
// training step the arena holds one block big enough for a whole step, so later steps allocate
// nothing from the heap.
class Arena {
 public:
  static constexpr size_t kAlignment = 64;  // a cache line; also enough for AVX-512 loads

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* allocate(size_t bytes);
  void* allocate_zeroed(size_t bytes);
  template <class T>
  T* allocate_array(int64_t n) {
    return static_cast<T*>(allocate(static_cast<size_t>(n) * sizeof(T)));
  }
  template <class T>
  T* allocate_zeroed_array(int64_t n) {
    return static_cast<T*>(allocate_zeroed(static_cast<size_t>(n) * sizeof(T)));
  }

  // Hands a buffer back before reset(): later allocations of this cycle reuse its memory first
  // (backward releases each op output's gradient once that op's backward has run).
  void release(void* p, size_t bytes);

  // Forgets every allocation. When the last cycle overflowed into several blocks, they are
  // merged into one block of their total size, so the next identical cycle fits in it.
  void reset();

  size_t bytes_in_use() const;                                   // handed out since the last reset
  size_t bytes_reserved() const;                                 // held from the heap
  size_t heap_allocations() const { return heap_allocations_; }  // blocks ever requested

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  struct Block {
    std::unique_ptr<std::byte, FreeDeleter> memory;
    size_t size = 0;
    size_t used = 0;
  };
  void add_block(size_t min_bytes);

  std::vector<Block> blocks_;
  std::vector<std::pair<std::byte*, size_t>> free_;  // released ranges: start, bytes
  size_t current_ = 0;
  size_t heap_allocations_ = 0;
};

}  // namespace tapegrad
