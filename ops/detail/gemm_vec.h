// 64-byte vectors of float or double (GCC/Clang vector extensions) for the hand-blocked kernels:
// the small-product kernel (gemm_small.cpp) and the fused attention's direct kernel. One
// AVX-512 register, two AVX2 ones or four SSE ones, as the build targets; the compiler maps the
// arithmetic. Internal to ops/.
#pragma once

#include <cstdint>
#include <cstring>

namespace tapegrad::detail {

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(64)));
  typedef int32_t lanes __attribute__((vector_size(64)));
  static constexpr lanes kIota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(64)));
  typedef int64_t lanes __attribute__((vector_size(64)));
  static constexpr lanes kIota = {0, 1, 2, 3, 4, 5, 6, 7};
};
// Passed by reference only: by value, a 64-byte vector's ABI depends on the target flags.
template <class T>
using Vec = typename VecOf<T>::type;
template <class T>
constexpr int64_t kLanes = 64 / sizeof(T);

template <class T>
inline void vload(Vec<T>& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}
template <class T>
inline void vstore(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace tapegrad::detail
