// AlignedBuffer: owned, 64-byte aligned heap storage (parameters' values and gradients, optimiser
// state).
#pragma once

#include <cstddef>
#include <memory>

namespace tapegrad {

// Zero-initialised unless asked (a gradient about to be written whole).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes, bool zeroed = true);
  void* data() const { return memory_.get(); }
  size_t bytes() const { return bytes_; }

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, FreeDeleter> memory_;
  size_t bytes_ = 0;
};

}  // namespace tapegrad
