// 64-byte vectors of float or double (GCC/Clang vector extensions), and how many lanes one holds:
// the width the kernels' shape rules are written in (the small-product kernel's n, the direct
// attention kernel's D) and the benchmark's bandwidth probe. One AVX-512 register, two AVX2 ones
// or four SSE ones, as the build targets. The kernels that compute on vectors are built per CPU
// level, each with a register type of its level (kernels/cpu/isa_level.h says why they cannot
// share this header's). Internal to kernels/ and the benchmarks.
#pragma once

#include <cstdint>
#include <cstring>

namespace tapegrad::detail {

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(64)));
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

}  // namespace tapegrad::detail
