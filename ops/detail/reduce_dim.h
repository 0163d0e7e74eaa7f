// Reducing along one dim (sum_dim, mean_dim, max_dim): x read as [outer, size, inner].
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

// x viewed as [outer, size, inner] around the reduced dim; the output is [outer, inner].
struct DimView {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
};

// `shape` viewed around `dim` (0..rank-1).
inline DimView view_around(const Shape& shape, int dim) {
  DimView v;
  for (int d = 0; d < dim; ++d) v.outer *= shape[d];
  v.size = shape[dim];
  for (int d = dim + 1; d < shape.rank(); ++d) v.inner *= shape[d];
  return v;
}

struct DimReduction {
  int dim = 0;  // normalised to 0..rank-1 (0 for a scalar)
  DimView view;
  Shape out_shape;  // x's shape with dim removed, or kept as 1 when keepdim
};

// Checks dim against x's rank and plans the reduction; throws
// `max_dim: x "scores" [2, 3]: dim 2 is out of range for rank 2 (expected -2..1)`.
DimReduction plan_dim_reduction(const char* op, const Tensor& x, int dim, bool keepdim);

// argmax (largest) or argmin along dim into out, as torch's CPU kernels: ties give the first
// index, and a NaN counts as the extreme value (the first NaN wins). An Error naming op when dim
// is out of range or of size 0.
void arg_extreme_along(const char* op, const Tensor& x, int dim, bool keepdim, bool largest,
                       Ids& out);

// A reduction's arguments as drawings show them: "dim 1, keepdim" (x's rank and the output's
// rank tell whether it kept the dim).
std::string reduction_text(int dim, const Node& x, const Node& y);

// Calls f(out_index, in_index, k) for every element of x, in memory order, where k is the
// element's position along the reduced dim and out_index its output element. Walking memory
// in order keeps the inner loop contiguous (and vectorisable) whatever dim is reduced.
template <class F>
void for_each_reduced(const DimView& v, F&& f) {
  if (v.inner == 1) {  // contiguous rows: no inner loop of one element per element
    for (int64_t o = 0; o < v.outer; ++o) {
      const int64_t base = o * v.size;
      for (int64_t k = 0; k < v.size; ++k) f(o, base + k, k);
    }
    return;
  }
  int64_t in = 0;
  for (int64_t o = 0; o < v.outer; ++o) {
    const int64_t out_base = o * v.inner;
    for (int64_t k = 0; k < v.size; ++k) {
      for (int64_t i = 0; i < v.inner; ++i, ++in) f(out_base + i, in, k);
    }
  }
}

// dX[in] = 0 + d(out), or dX[in] += d(out) once a term is there, for every element `in` of x
// reduced into output element `out`: a sum's gradient spread back over what it summed. d is
// called once a row where the reduced dim is the innermost, once an element otherwise.
template <class T, class D>
void spread_back(const DimView& v, const InputGrad<T>& g, D d) {
  T* dx = g.data;
  if (v.inner == 1) {
    for (int64_t o = 0; o < v.outer; ++o) {
      const T value = d(o);
      T* row = dx + o * v.size;
      if (g.overwrite) {
        for (int64_t k = 0; k < v.size; ++k) row[k] = T(0) + value;
      } else {
        for (int64_t k = 0; k < v.size; ++k) row[k] += value;
      }
    }
    return;
  }
  if (g.overwrite) {  // 0 + term, without zero-filling first
    for_each_reduced(v, [&](int64_t out, int64_t in, int64_t) { dx[in] = T(0) + d(out); });
  } else {
    for_each_reduced(v, [&](int64_t out, int64_t in, int64_t) { dx[in] += d(out); });
  }
}

// out[o] = (Σ_k x[o, k, i]) / divisor, summed in double so float32 keeps its precision over
// long dims (for float32, a double scratch of the output's size comes from the arena). A float32
// row's order of additions shows only where its double sums straddle a float's rounding boundary.
template <class T>
void sum_along(Arena& arena, const DimView& v, const T* x, T* out, double divisor) {
  const int64_t n_out = v.outer * v.inner;
  if (v.inner == 1) {  // contiguous rows
    if constexpr (std::is_same_v<T, double>) {
      // Each row summed in order as below, but eight rows at a time, so the additions of
      // different rows overlap instead of each waiting for the one before.
      constexpr int64_t kRows = 8;
      int64_t o = 0;
      for (; o + kRows <= v.outer; o += kRows) {
        double acc[kRows] = {};
        const T* rows = x + o * v.size;
        for (int64_t k = 0; k < v.size; ++k) {
          for (int64_t r = 0; r < kRows; ++r) acc[r] += rows[r * v.size + k];
        }
        for (int64_t r = 0; r < kRows; ++r) out[o + r] = static_cast<T>(acc[r] / divisor);
      }
      for (; o < v.outer; ++o) {
        double acc = 0.0;
        for (int64_t k = 0; k < v.size; ++k) acc += x[o * v.size + k];
        out[o] = static_cast<T>(acc / divisor);
      }
    } else {
      // Eight running sums a vector wide, not one in a chain.
      for (int64_t o = 0; o < n_out; ++o) {
        const T* row = x + o * v.size;
        double lane[8] = {};
        int64_t k = 0;
        for (; k + 8 <= v.size; k += 8) {
          for (int j = 0; j < 8; ++j) lane[j] += static_cast<double>(row[k + j]);
        }
        double total = 0.0;
        for (double l : lane) total += l;
        for (; k < v.size; ++k) total += static_cast<double>(row[k]);
        out[o] = static_cast<T>(total / divisor);
      }
    }
    return;
  }
  double* acc;
  if constexpr (std::is_same_v<T, double>) {
    acc = out;
  } else {
    acc = arena.allocate_array<double>(n_out);
  }
  for (int64_t o = 0; o < n_out; ++o) acc[o] = 0.0;
  for_each_reduced(v, [&](int64_t o, int64_t i, int64_t) { acc[o] += x[i]; });
  for (int64_t o = 0; o < n_out; ++o) out[o] = static_cast<T>(acc[o] / divisor);
}

}  // namespace tapegrad
