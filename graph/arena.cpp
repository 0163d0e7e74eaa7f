// Arena: bump allocation over a few large aligned blocks, reclaimed all at once.
#include <tapegrad/graph/arena.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tapegrad {

namespace {
constexpr size_t kMinBlockBytes = size_t{1} << 16;
size_t round_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}
}  // namespace

void Arena::FreeDeleter::operator()(std::byte* p) const {
  std::free(p);
}

void Arena::add_block(size_t min_bytes) {
  const size_t last = blocks_.empty() ? 0 : blocks_.back().size;
  const size_t size = round_up(std::max({min_bytes, kMinBlockBytes, 2 * last}), kAlignment);
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(kAlignment, size));
  if (memory == nullptr) throw std::bad_alloc();
  ++heap_allocations_;
  blocks_.push_back(Block{std::unique_ptr<std::byte, FreeDeleter>(memory), size, 0});
  current_ = blocks_.size() - 1;
}

void* Arena::allocate(size_t bytes) {
  bytes = round_up(std::max<size_t>(bytes, 1), kAlignment);
  auto fit = free_.end();  // the smallest released range that holds it, carved from its end
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second >= bytes && (fit == free_.end() || it->second < fit->second)) fit = it;
  }
  if (fit != free_.end()) return fit->first + (fit->second -= bytes);
  while (current_ < blocks_.size() && blocks_[current_].size - blocks_[current_].used < bytes) {
    ++current_;
  }
  if (current_ == blocks_.size()) add_block(bytes);
  Block& block = blocks_[current_];
  void* p = block.memory.get() + block.used;
  block.used += bytes;
  return p;
}

void* Arena::allocate_zeroed(size_t bytes) {
  void* p = allocate(bytes);
  std::memset(p, 0, bytes);
  return p;
}

void Arena::release(void* p, size_t bytes) {
  auto* start = static_cast<std::byte*>(p);
  bytes = round_up(std::max<size_t>(bytes, 1), kAlignment);
  for (auto& [begin, size] : free_) {  // joined to a neighbour when it touches one
    if (begin + size == start) return void(size += bytes);
    if (start + bytes == begin) return void((begin = start, size += bytes));
  }
  free_.emplace_back(start, bytes);
}

void Arena::reset() {
  free_.clear();
  if (blocks_.size() > 1) {
    size_t total = 0;
    for (const Block& b : blocks_) total += b.size;
    blocks_.clear();
    add_block(total);
  }
  for (Block& b : blocks_) b.used = 0;
  current_ = 0;
}

size_t Arena::bytes_in_use() const {
  size_t n = 0;
  for (const Block& b : blocks_) n += b.used;
  return n;
}

size_t Arena::bytes_reserved() const {
  size_t n = 0;
  for (const Block& b : blocks_) n += b.size;
  return n;
}

}  // namespace tapegrad
