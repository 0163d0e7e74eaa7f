// Reducing over a list of dims (amax, amin, sum and mean over dims, var, std, logsumexp, norm):
// the dims check, the kept and output shapes, and the walk that maps each element to its output.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/detail/reduce_rows.h>

namespace tapegrad {

// Which of x's dims a reduction removes: bit d set for dim d. Plain data, kept in the op's state.
struct ReducedDims {
  uint32_t mask = 0;
  bool keepdim = false;
};

struct DimsReduction {
  ReducedDims dims;
  Shape kept_shape;   // x's shape with the reduced dims as 1 (what the output broadcasts from)
  Shape out_shape;    // kept_shape, or without the reduced dims unless keepdim
  int64_t group = 1;  // elements per output element: the product of the reduced sizes
};

// Checks each dim against x's rank (negative dims count from the end; a 0-D x takes -1 and 0)
// and that none repeats; an empty list reduces every dim, as torch's sum(x, dim=[]) and amax do.
// Throws `amax: x "scores" [2, 3]: dim 2 is out of range for rank 2 (expected -2..1)` or
// `...: dim 0 appears more than once in the list of dims`.
DimsReduction plan_dims_reduction(const char* op, const Tensor& x, std::span<const int> dims,
                                  bool keepdim);

// The same plan again from the input's shape and the recorded dims (in a backward).
DimsReduction replan_dims_reduction(const Shape& x_shape, ReducedDims dims);

// The recorded dims as drawings show them: "dims (0, -1), keepdim", "all dims".
std::string reduced_dims_text(const Node& x, ReducedDims dims);

// Calls f(out_index, in_index) for every element of x (shape `s`), in memory order, where
// out_index is its element of the reduction's output (kept or not, the same order).
template <class F>
void for_each_in_reduction(const Shape& s, uint32_t mask, F&& f) {
  const int rank = s.rank();
  if (rank == 0) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  if (s.numel() == 0) return;
  std::array<int64_t, kMaxRank> out_stride{}, index{};
  int64_t kept = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if ((mask >> d) & 1u) continue;  // a reduced dim does not move the output
    out_stride[static_cast<size_t>(d)] = kept;
    kept *= s[d];
  }
  const int last = rank - 1;
  const int64_t n_last = s[last], step_last = out_stride[static_cast<size_t>(last)];
  int64_t in = 0, out = 0;
  while (true) {
    for (int64_t k = 0; k < n_last; ++k) f(out + k * step_last, in + k);
    in += n_last;
    int d = last - 1;
    for (; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      out += out_stride[u];
      if (++index[u] < s[d]) break;
      out -= out_stride[u] * s[d];
      index[u] = 0;
    }
    if (d < 0) return;
  }
}

// The reduced dims as a list, 0..rank-1 (for the recorded backwards, which reduce again).
std::vector<int> reduced_dims_list(ReducedDims dims, int rank);

// Σ x over each output element's group, in double (float32 keeps its precision over long
// groups), divided by `divisor`: the forward of sum and mean over dims.
template <class T>
void sum_over(Arena& arena, const Shape& s, uint32_t mask, int64_t n_out, const T* x, T* out,
              double divisor) {
  if (reduces_last_dims(s, mask)) {
    const int64_t group = n_out == 0 ? 0 : s.numel() / n_out;
    for (int64_t o = 0; o < n_out; ++o) {
      out[o] = static_cast<T>(row_sum(x + o * group, group) / divisor);
    }
    return;
  }
  double* acc = arena.allocate_array<double>(n_out);
  for (int64_t o = 0; o < n_out; ++o) acc[o] = 0.0;
  for_each_in_reduction(s, mask, [&](int64_t o, int64_t i) { acc[o] += x[i]; });
  for (int64_t o = 0; o < n_out; ++o) out[o] = static_cast<T>(acc[o] / divisor);
}

// dY of a reduction over dims read with those dims kept as 1 (no copy when they already are),
// so that it broadcasts back over the input: for the recorded backwards.
Tensor kept_view(const Tensor& dy, Shape kept_shape);

}  // namespace tapegrad
