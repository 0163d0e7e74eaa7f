// AlignedBuffer: aligned_alloc'd storage, zeroed unless asked not to be.
#include <tapegrad/graph/aligned_buffer.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tapegrad {

void AlignedBuffer::FreeDeleter::operator()(void* p) const {
  std::free(p);
}

AlignedBuffer::AlignedBuffer(size_t bytes, bool zeroed) : bytes_(bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  memory_.reset(std::aligned_alloc(64, rounded));
  if (!memory_) throw std::bad_alloc();
  if (zeroed) std::memset(memory_.get(), 0, rounded);
}

}  // namespace tapegrad
