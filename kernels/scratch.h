// Per-thread scratch buffers that only grow: a kernel allocates nothing once it has seen its sizes.
#pragma once

#include <cstddef>

#include <tapegrad/graph/aligned_buffer.h>

namespace tapegrad::detail {

// At least `elements` T, 64-byte aligned, this thread's own for each Tag; the contents are not
// kept when it grows. Give each use its own Tag type (an incomplete struct will do): kernels call
// one another, and a shared buffer could grow under a caller still holding it.
template <class Tag, class T>
T* thread_scratch(size_t elements) {
  thread_local AlignedBuffer buffer;
  if (buffer.bytes() < elements * sizeof(T)) buffer = AlignedBuffer(elements * sizeof(T), false);
  return static_cast<T*>(buffer.data());
}

}  // namespace tapegrad::detail
