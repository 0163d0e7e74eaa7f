// Every op tapegrad offers, one declaration each; each is defined, with its backward, in
// ops/<name>.cpp.
//
// Conventions (as in PyTorch unless said): shapes are row-major, dims may be negative (counted
// from the end), binary elementwise ops broadcast, and every op checks its operands' shapes
// when it is called and throws tapegrad::Error naming the op, the tensors' names and shapes.
// All ops except the leaf factories record on their inputs' tape. Outputs are always new,
// contiguous tensors: no op returns a view of its input (reshape copies too, see README).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/size2.h>

namespace tapegrad {

class Generator;  // graph/random.h
Generator& default_generator();

// --- elementwise, with broadcasting -----------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor scale(const Tensor& x, double factor);  // x * factor
// x / divisor, divided as torch divides (not x * (1/divisor), which rounds differently); it is
// recorded as op "scale" with the divide flag set.
Tensor div_scalar(const Tensor& x, double divisor);
Tensor add_scalar(const Tensor& x, double c);  // x + c
Tensor neg(const Tensor& x);
Tensor reciprocal(const Tensor& x);  // 1 / x
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
// torch.pow(x, exponent) with a tensor exponent (broadcast, one dtype): SLEEF's 1-ulp pow as
// torch's vector kernel (the C library's at baseline). dX += dY ⊙ (p·Xᵖ⁻¹) (0 where p = 0), dP +=
// dY ⊙ (Y ⊙ ln X) (0 where X = 0 and p >= 0, as torch's masked formula).
Tensor pow(const Tensor& x, const Tensor& exponent);
// torch.pow(base, exponent) with a number base (Python's `base ** t`): the base rounded to the
// exponent's dtype, then pow with a tensor exponent (dP += dY ⊙ Y ⊙ ln base, 0 where base = 0
// and p >= 0, as torch).
Tensor pow(double base, const Tensor& exponent);
// torch.lerp(start, end, weight) = start + weight·(end − start), computed as torch's CPU kernel
// (from end when weight >= 0.5: end − (end − start)·(1 − weight)); broadcast, one dtype.
Tensor lerp(const Tensor& start, const Tensor& end, double weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor square(const Tensor& x);  // x * x (torch.square; its gradient is pow's, dY ⊙ 2X)
Tensor rsqrt(const Tensor& x);   // 1 / √x, divided as torch divides; rsqrt(0) = inf
Tensor exp2(const Tensor& x);    // 2ˣ
Tensor log2(const Tensor& x);    // log₂ x (0 gives −inf, a negative nan)
Tensor log10(const Tensor& x);   // log₁₀ x
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);  // NaN outside [−1, 1], as every function below outside its domain
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);  // x >= 1
Tensor atanh(const Tensor& x);  // ±inf at ±1
Tensor log1p(const Tensor& x);  // ln(1 + x), exact for small x
Tensor expm1(const Tensor& x);  // eˣ − 1, exact for small x
Tensor erf(const Tensor& x);
Tensor erfc(const Tensor& x);  // 1 − erf(x), exact where erf(x) is near 1
// Binary, with broadcasting (one dtype): atan2(a, b) is the angle of the point (b, a), as
// torch.atan2(input, other); logaddexp is ln(eᵃ + eᵇ) without overflow; fmod(a, b) is C's fmod
// (the sign of a) and remainder(a, b) Python's % (the sign of b), both NaN where b is 0.
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor logaddexp(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
// exp2, log2, log10 and the functions from sin to erfc call the C library in float32 too, where
// torch calls SLEEF's 1-ulp functions, and their gradients' formulas round as the compiler fuses
// them: results may differ from torch's in the last bits (ops/DERIVATIVES.md).

// --- piecewise: kinks and ties get torch's gradients (ops/DERIVATIVES.md) ----------------------
Tensor abs(const Tensor& x);   // |x|; the gradient at 0 is 0 (torch's dY ⊙ sgn(X))
Tensor sign(const Tensor& x);  // −1, 0 or 1; sign(nan) = 0 as torch 1.13; gradient zero
// min(max(x, min), max) with either bound optional (not both absent); a bound is rounded to x's
// dtype first. min > max gives max everywhere; a NaN x stays NaN. The gradient passes where
// min <= X <= max, bounds included; NaN X gets none.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max = std::nullopt);
Tensor clamp_min(const Tensor& x, double min);  // clamp(x, min, none)
Tensor clamp_max(const Tensor& x, double max);  // clamp(x, none, max)
// torch.clamp with tensor bounds, either undefined (Tensor()) but not both; x, min and max
// broadcast together. A NaN in x or in a bound gives NaN; min > max gives max. Gradients are
// torch's: dX where min <= X <= max, dmin where X < min < max, dmax where X > max or max < min.
// Composed of where over constant masks, so differentiable to any order.
Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max);
// torch.clip: clamp's alias.
inline Tensor clip(const Tensor& x, std::optional<double> min,
                   std::optional<double> max = std::nullopt) {
  return clamp(x, min, max);
}
inline Tensor clip(const Tensor& x, const Tensor& min, const Tensor& max) {
  return clamp(x, min, max);
}
// Elementwise maximum / minimum with broadcasting; a NaN in either operand gives NaN. At a tie
// (A = B) each operand gets dY / 2, as in torch; with a NaN both get all of dY.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// Rounding to an integer value: floor, ceil, round half to even (torch.round, 2.5 -> 2) and trunc;
// ±inf and NaN stay. The gradient is zero everywhere, as in torch.
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor trunc(const Tensor& x);  // toward zero
// x − trunc(x), keeping x's sign (torch.frac; ±inf gives NaN); its gradient passes dY.
Tensor frac(const Tensor& x);

// --- comparisons and tests (no gradient) ------------------------------------------------------
// torch.eq, ne, lt, le, gt, ge: 1 where the relation holds, else 0. tapegrad has no bool dtype:
// the result is a float tensor of the inputs' dtype (a mask masked_fill and where take as it is;
// torch returns bool). Tensor-tensor forms broadcast and need one dtype; a scalar is rounded to
// x's dtype first, as torch compares. A NaN compares unequal to everything (ne gives 1). They
// are recorded, but no gradient flows through them: their backward adds nothing.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& x, double c);
Tensor ne(const Tensor& x, double c);
Tensor lt(const Tensor& x, double c);
Tensor le(const Tensor& x, double c);
Tensor gt(const Tensor& x, double c);
Tensor ge(const Tensor& x, double c);
// torch.isnan, isinf, isfinite: 1 or 0 per element, of x's dtype (no bool dtype); no gradient.
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
// torch.logical_and, or, xor, not: a nonzero (NaN included) counts as true; 1/0 of the inputs'
// dtype (broadcast, one dtype); no gradient.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);
// torch.any, all: over every element ([] result) or along dim; 1/0 of x's dtype; no gradient.
// An empty input gives any = 0, all = 1, as torch.
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int dim, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int dim, bool keepdim = false);
// torch.isclose: |a − b| <= atol + rtol·|b| (infinities close only to themselves, NaN to NaN only
// with equal_nan); broadcast, one dtype; 1/0 of the inputs' dtype; no gradient.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);

// --- activations ------------------------------------------------------------------------------
Tensor relu(const Tensor& x);     // max(x, 0); NaN stays NaN
Tensor tanh(const Tensor& x);     // the hyperbolic tangent
Tensor sigmoid(const Tensor& x);  // 1 / (1 + exp(-x)), torch's order of operations
Tensor silu(const Tensor& x);     // x * sigmoid(x), computed as torch does: x / (1 + exp(-x))
// torch.nn.functional's leaky_relu, elu, softplus and mish, each in torch's CPU order of
// operations; at a kink the gradient is torch's (ops/DERIVATIVES.md). A scalar argument must be
// finite (and fit x's dtype); it is rounded to x's dtype, as torch rounds a Python number.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);  // x > 0 ? x : slope·x
Tensor elu(const Tensor& x, double alpha = 1.0);  // x > 0 ? x : alpha·(exp(x) − 1)
// log(1 + exp(beta·x)) / beta, and x itself where beta·x > threshold; beta must not be 0.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor mish(const Tensor& x);  // x·tanh(softplus(x))
// torch.where(cond, a, b): a where cond is nonzero (NaN counts as nonzero), else b. cond is a
// float32/float64 mask as for masked_fill and gets no gradient; cond, a and b broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// torch.where with a Python number for a branch: the number is rounded to the tensor branch's
// dtype (torch's wrapped number) and broadcast; with both numbers the result is `dtype`,
// float32 as torch's default. A number branch gets no gradient.
Tensor where(const Tensor& cond, const Tensor& a, double b);
Tensor where(const Tensor& cond, double a, const Tensor& b);
Tensor where(const Tensor& cond, double a, double b, DType dtype = DType::Float32);

inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor operator-(const Tensor& x) {
  return neg(x);
}
inline Tensor operator*(const Tensor& x, double c) {
  return scale(x, c);
}
inline Tensor operator*(double c, const Tensor& x) {
  return scale(x, c);
}
inline Tensor operator/(const Tensor& x, double c) {
  return div_scalar(x, c);
}
inline Tensor operator+(const Tensor& x, double c) {
  return add_scalar(x, c);
}
inline Tensor operator-(const Tensor& x, double c) {
  return add_scalar(x, -c);
}
// A scalar on the left, computed as torch computes it: c + x is x + c; c - x is (-x) + c (exactly
// torch's rsub, c - x, in IEEE arithmetic); c / x is reciprocal(x) * c (torch's __rdiv__, which
// rounds twice, so it can differ from a division in the last bit).
inline Tensor operator+(double c, const Tensor& x) {
  return add_scalar(x, c);
}
inline Tensor operator-(double c, const Tensor& x) {
  return add_scalar(neg(x), c);
}
inline Tensor operator/(double c, const Tensor& x) {
  return scale(reciprocal(x), c);
}

// --- linear algebra ---------------------------------------------------------------------------
// torch.matmul: 1-D operands are promoted (and the added dim removed), leading batch dims of
// ranks 3 and 4 broadcast: [B, H, T, D] @ [B, H, D, T], [B, T, C] @ [C, D].
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);  // 1-D · 1-D -> scalar (matmul of vectors)
// nn.Linear's layout: W [out, in], y = x Wᵀ + b; bias may be an undefined Tensor.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// --- convolution (torch.nn.functional's names, argument order and defaults) -------------------
// Sizes as one int or a pair: Size2 (ops/size2.h).
// conv2d's and conv1d's padding: zeros on each side (an int or a pair), or torch's "valid" (none)
// or "same" (the output keeps the input's size; stride 1 only; an odd total pads one more at the
// bottom and right, as torch). Any other string is an Error of the op.
struct ConvPadding {
  Size2 size;
  std::string_view mode;                     // empty for sizes
  bool pair = false;                         // given as two numbers (conv1d takes one)
  ConvPadding(int64_t both) : size(both) {}  // NOLINT(google-explicit-constructor)
  ConvPadding(int64_t rows, int64_t cols) : size(rows, cols), pair(true) {}
  template <size_t N>
  ConvPadding(const char (&name)[N]) : size(0), mode(name, N - 1) {}  // NOLINT: "same", "valid"
};
// torch.nn.functional.conv2d: input [N, C_in, H, W] (or unbatched [C_in, H, W]), weight
// [C_out, C_in / groups, kH, kW], bias [C_out] or undefined -> [N, C_out, H_out, W_out] with
// H_out = (H + 2·padding − dilation·(kH − 1) − 1) / stride + 1 (rounded down), W_out alike. Runs
// as im2col and one GEMM per image and group (kernels/conv/conv.h). Throws Error naming conv2d,
// the argument and the shapes for bad ranks, channels that do not match the weight, groups that
// do not divide the channels, a (dilated) kernel larger than the padded input, a stride or
// dilation below 1, negative padding, and "same" with a stride above 1.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              Size2 stride = 1, ConvPadding padding = 0, Size2 dilation = 1, int64_t groups = 1);
// torch.nn.functional.conv1d: input [N, C_in, L] (or [C_in, L]), weight [C_out, C_in / groups,
// k] -> [N, C_out, L_out]: conv2d on a height-1 view, its checks named conv1d.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              int64_t stride = 1, ConvPadding padding = 0, int64_t dilation = 1,
              int64_t groups = 1);
// torch.nn.functional.conv_transpose2d (note torch's order: groups before dilation): input
// [N, C_in, H, W] (or unbatched), weight [C_in, C_out / groups, kH, kW], bias [C_out] ->
// [N, C_out, H_out, W_out] with H_out = (H − 1)·stride − 2·padding + dilation·(kH − 1) +
// output_padding + 1: conv2d's gradient w.r.t. its input, plus the bias. output_padding must be
// smaller than the stride or the dilation, as torch.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        Size2 stride = 1, Size2 padding = 0, Size2 output_padding = 0,
                        int64_t groups = 1, Size2 dilation = 1);
// torch.nn.functional.conv_transpose1d: input [N, C_in, L] (or [C_in, L]), weight
// [C_in, C_out / groups, k], bias [C_out] -> [N, C_out, L_out], L_out = (L − 1)·stride −
// 2·padding + dilation·(k − 1) + output_padding + 1: conv_transpose2d on height-1 views, its
// errors prefixed by conv_transpose1d and the 1-D shapes.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        int64_t stride = 1, int64_t padding = 0, int64_t output_padding = 0,
                        int64_t groups = 1, int64_t dilation = 1);

// --- layout (each copies into a new contiguous tensor) -----------------------------------------
Tensor transpose(const Tensor& x, int dim0, int dim1);
inline Tensor t(const Tensor& x) {
  return transpose(x, 0, 1);
}  // the book's `x.T` for 2-D
// One dim may be -1 (inferred).
Tensor reshape(const Tensor& x, std::initializer_list<int64_t> dims);
Tensor reshape(const Tensor& x, std::span<const int64_t> dims);
// torch's Tensor.view: reshape's alias (tapegrad has no views: a copy, one dim may be -1).
inline Tensor view(const Tensor& x, std::initializer_list<int64_t> dims) {
  return reshape(x, dims);
}
inline Tensor view(const Tensor& x, std::span<const int64_t> dims) {
  return reshape(x, dims);
}
Tensor select(const Tensor& x, int dim, int64_t index);  // x[index] along dim, dim removed
Tensor narrow(const Tensor& x, int dim, int64_t start, int64_t length);
Tensor cat(std::span<const Tensor> xs, int dim);
inline Tensor cat(std::initializer_list<Tensor> xs, int dim) {
  return cat(std::span<const Tensor>(xs.begin(), xs.size()), dim);
}
// [B, T, C] -> [B, H, T, C/H] (view + transpose(1, 2) in the book); C % H must be 0.
Tensor split_heads(const Tensor& x, int64_t num_heads);
// [B, H, T, D] -> [B, T, H*D], the inverse of split_heads.
Tensor merge_heads(const Tensor& x);

// --- shapes and indexing (torch's names, argument order and defaults; each a copy) -----------
// Reshapes: the same elements in order under a new shape.
Tensor squeeze(const Tensor& x);             // every dim of size 1 removed
Tensor squeeze(const Tensor& x, int dim);    // dim removed if its size is 1, else x's shape
Tensor unsqueeze(const Tensor& x, int dim);  // a dim of size 1 inserted at dim (-rank-1..rank)
// Dims start_dim..end_dim merged into one; a 0-dim x gives [1].
Tensor flatten(const Tensor& x, int start_dim = 0, int end_dim = -1);
// Dim `dim` split into `sizes` (one may be -1, inferred), which multiply to its size.
Tensor unflatten(const Tensor& x, int dim, std::span<const int64_t> sizes);
Tensor unflatten(const Tensor& x, int dim, std::initializer_list<int64_t> sizes);
// Output dim d is x's dim dims[d] (a permutation; negative dims count from the end).
Tensor permute(const Tensor& x, std::span<const int64_t> dims);
Tensor permute(const Tensor& x, std::initializer_list<int64_t> dims);
// Dims `source` moved to positions `destination`, the others keeping their order.
Tensor movedim(const Tensor& x, std::span<const int64_t> source,
               std::span<const int64_t> destination);
Tensor movedim(const Tensor& x, int source, int destination);

// Joining, cutting, reordering and repeating.
// xs (one shape and dtype) joined along a new dim (-rank-1..rank).
Tensor stack(std::span<const Tensor> xs, int dim = 0);
inline Tensor stack(std::initializer_list<Tensor> xs, int dim = 0) {
  return stack(std::span<const Tensor>(xs.begin(), xs.size()), dim);
}
// x cut along dim into pieces of split_size (the last may be smaller), or of the given sizes
// (adding up to the dim's size). Each piece is a narrow of x, recorded as one.
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int dim = 0);
std::vector<Tensor> split(const Tensor& x, std::span<const int64_t> split_sizes, int dim = 0);
std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> split_sizes, int dim = 0);
// split into pieces of ceil(size / chunks): at most `chunks` pieces, as torch.
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int dim = 0);
// Every slice along dim, the dim removed (selects of x).
std::vector<Tensor> unbind(const Tensor& x, int dim = 0);
// The order of the elements along each of dims reversed.
Tensor flip(const Tensor& x, std::span<const int64_t> dims);
Tensor flip(const Tensor& x, std::initializer_list<int64_t> dims);
// Elements shifted cyclically by shifts[i] along dims[i]; without dims, along the flattened x
// (one shift), the shape kept.
Tensor roll(const Tensor& x, std::span<const int64_t> shifts, std::span<const int64_t> dims = {});
Tensor roll(const Tensor& x, std::initializer_list<int64_t> shifts,
            std::initializer_list<int64_t> dims);
Tensor roll(const Tensor& x, int64_t shift);
Tensor roll(const Tensor& x, int64_t shift, int dim);
// x tiled repeats[d] times along each dim; extra leading repeats add dims (torch.Tensor.repeat).
Tensor repeat(const Tensor& x, std::span<const int64_t> repeats);
Tensor repeat(const Tensor& x, std::initializer_list<int64_t> repeats);
// Each slice along dim repeated `repeats` times in place ([a, b] -> [a, a, b, b]); without dim,
// of the flattened x.
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int> dim = std::nullopt);

// Indexing by integer indices (Ids): every index is checked, an out-of-range one is an Error
// naming the op, the index and its position. The indices get no gradient.
// The slices of x at index (0-dim or 1-dim) along dim: x's shape with dim = index.numel().
Tensor index_select(const Tensor& x, int dim, const Ids& index);
// Y[p] = x[p with its dim coordinate replaced by index[p]]; index has x's rank and is no larger
// than x outside dim; Y has index's shape.
Tensor gather(const Tensor& x, int dim, const Ids& index);
// x with Y[p with its dim coordinate replaced by index[p]] = src[p] (or = value); src no smaller
// than index. Where two positions name one element, the last (row-major) write wins; torch calls
// this undefined, and src's gradient is gathered at every position, as torch's.
Tensor scatter(const Tensor& x, int dim, const Ids& index, const Tensor& src);
Tensor scatter(const Tensor& x, int dim, const Ids& index, double value);
// The same, adding: repeated positions add up, in index's row-major order.
Tensor scatter_add(const Tensor& x, int dim, const Ids& index, const Tensor& src);
// x with alpha·source[.., i, ..] added at x[.., index[i], ..] (index 0-dim or 1-dim; source is
// x's shape with dim = index.numel()); repeated indices add up, in order.
Tensor index_add(const Tensor& x, int dim, const Ids& index, const Tensor& source,
                 double alpha = 1.0);
// torch's x[start:end:step] along one dim (aten::slice(x, dim, start, end, step)): the elements
// start, start + step, .. before end. A negative start or end counts from the end; both are then
// clamped to [0, size] (an empty result when end <= start), as Python slices. step > 0 (torch
// refuses others); a 0-dim x is an Error. The gradient scatters back into zeros.
Tensor slice(const Tensor& x, int dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
// torch.masked_select(x, mask): the elements of x where mask is nonzero (NaN counts as nonzero),
// x and mask broadcast together, as a 1-D tensor in row-major order. mask is a float32 or float64
// 0/1 tensor as masked_fill's (docs/design.md) and gets no gradient; x's gradient is dY scattered
// back to the picked positions (summed where x was broadcast).
Tensor masked_select(const Tensor& x, const Tensor& mask);
// torch.nonzero: the coordinates of every nonzero element (NaN counts), row-major, as Ids [n,
// rank] (a 0-dim x gives [1, 0] or [0, 0], as torch). Not recorded.
Ids nonzero(const Tensor& x);
Ids nonzero(const Ids& x);
// gather along dim with x and indices (x's rank) broadcast in the other dims; without dim, the
// flattened x at the flattened indices.
Tensor take_along_dim(const Tensor& x, const Ids& indices, std::optional<int> dim = std::nullopt);
// torch.einsum(equation, operands): subscripts a-z and A-Z, one `...` per operand (its dims
// broadcast, aligned on the right), `->` and the output's subscripts, or without it torch's
// implicit output (the ellipsis dims, then every subscript used once, in character order). A
// subscript repeated in an operand takes its diagonal (`ii->i`, a trace `ii`); one missing from
// the output is summed; sizes of one subscript agree or are 1 (broadcast). Composed of diagonal,
// sum, permute, reshape, expand, mul and matmul (operands contracted left to right, each pair as
// one batched matmul, as torch without opt_einsum), so its gradients of every order are theirs.
// A bad equation or shape is an Error naming einsum, the equation and the operand.
Tensor einsum(std::string_view equation, std::span<const Tensor> operands);
inline Tensor einsum(std::string_view equation, std::initializer_list<Tensor> operands) {
  return einsum(equation, std::span<const Tensor>(operands.begin(), operands.size()));
}
// torch.diagonal(x, offset, dim1, dim2): the elements x[.., i, .., i + offset, ..] of the two
// dims (offset > 0 above the main diagonal, < 0 below), the two dims removed and the diagonal
// appended as the last dim (length max(0, min(size(dim1), size(dim2) − offset)) for offset >= 0,
// max(0, min(size(dim1) + offset, size(dim2))) below). x: rank >= 2, dim1 != dim2. The gradient
// goes back to the diagonal.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int dim1 = 0, int dim2 = 1);
// torch.diag: x [n] gives the [n + |offset|]² matrix with x on diagonal `offset` (zeros
// elsewhere); x [n, m] gives its diagonal `offset` (diagonal(x, offset)). Other ranks: Error.
Tensor diag(const Tensor& x, int64_t offset = 0);
// torch.nn.functional.pad(x, pad, mode, value): pad = {left, right} for the last dim, then
// {left, right} for the one before, ... (at most x's rank pairs). Constant pads with `value` and
// a negative pad crops; reflect (pads < the dim's size), replicate and circular (pads <= its
// size) pad the last 1 to 3 dims of an input with one or two more leading dims, as torch 1.13.
// The gradient sums back into the elements each padded one was copied from.
enum class PadMode { Constant, Reflect, Replicate, Circular };
Tensor pad(const Tensor& x, std::span<const int64_t> pad, PadMode mode = PadMode::Constant,
           double value = 0.0);
inline Tensor pad(const Tensor& x, std::initializer_list<int64_t> pads,
                  PadMode mode = PadMode::Constant, double value = 0.0) {
  return pad(x, std::span<const int64_t>(pads.begin(), pads.size()), mode, value);
}
// torch.nn.functional.one_hot(ids, num_classes): ids [..] -> [.., C], 1 at each id, of `dtype`
// (torch: int64); C = max id + 1 when num_classes is -1. A leaf on the current tape, no gradient.
// An id outside [0, C), num_classes < -1, or -1 with no ids is an Error.
Tensor one_hot(const Ids& ids, int64_t num_classes = -1, DType dtype = DType::Float32);

// --- integer arithmetic on Ids (torch's int64 ops; broadcast; off the tape, no gradient) --------
// add, sub and mul wrap on overflow (two's complement, as torch's int64 kernels). floor_divide
// rounds toward −inf (torch 1.13: −7 // 2 = −4) and remainder takes the divisor's sign (Python's
// %); a zero divisor is an Error naming the op and its position (torch's ZeroDivisionError). The
// comparisons give 0/1 Ids (torch: bool); from_ids turns Ids into a float tensor (a leaf on the
// current tape, a mask where and masked_fill take). Each also takes an int64_t as b.
Ids add(const Ids& a, const Ids& b);
Ids sub(const Ids& a, const Ids& b);
Ids mul(const Ids& a, const Ids& b);
Ids floor_divide(const Ids& a, const Ids& b);
Ids remainder(const Ids& a, const Ids& b);
Ids eq(const Ids& a, const Ids& b);
Ids ne(const Ids& a, const Ids& b);
Ids lt(const Ids& a, const Ids& b);
Ids le(const Ids& a, const Ids& b);
Ids gt(const Ids& a, const Ids& b);
Ids ge(const Ids& a, const Ids& b);
Ids add(const Ids& a, int64_t b);
Ids sub(const Ids& a, int64_t b);
Ids mul(const Ids& a, int64_t b);
Ids floor_divide(const Ids& a, int64_t b);
Ids remainder(const Ids& a, int64_t b);
Ids eq(const Ids& a, int64_t b);
Ids ne(const Ids& a, int64_t b);
Ids lt(const Ids& a, int64_t b);
Ids le(const Ids& a, int64_t b);
Ids gt(const Ids& a, int64_t b);
Ids ge(const Ids& a, int64_t b);
Tensor from_ids(const Ids& ids, DType dtype = DType::Float32);
// torch's x.long(): each value truncated toward zero, so a float result (arange, a rounded
// tensor) can index gather, index_select or embedding. A NaN, ±inf or a value beyond int64 is an
// Error naming its position (torch's cast is undefined there). Off the tape, no gradient.
Ids to_ids(const Tensor& x);
inline Ids operator+(const Ids& a, const Ids& b) {
  return add(a, b);
}
inline Ids operator-(const Ids& a, const Ids& b) {
  return sub(a, b);
}
inline Ids operator*(const Ids& a, const Ids& b) {
  return mul(a, b);
}
inline Ids operator%(const Ids& a, const Ids& b) {  // Python's %, as torch's
  return remainder(a, b);
}
inline Ids operator+(const Ids& a, int64_t b) {
  return add(a, b);
}
inline Ids operator-(const Ids& a, int64_t b) {
  return sub(a, b);
}
inline Ids operator*(const Ids& a, int64_t b) {
  return mul(a, b);
}
inline Ids operator%(const Ids& a, int64_t b) {
  return remainder(a, b);
}

// --- attention pieces -------------------------------------------------------------------------
// Stable (max subtracted): -inf entries give 0; a row that is all -inf gives NaN, as in torch.
Tensor softmax(const Tensor& x, int dim);
// Where mask (broadcast to x, never enlarging it; float32 or float64) is nonzero, the output is
// `value`; the gradient there is zero. The mask itself never gets a gradient.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
// masked_fill with the book's triu(ones(Tq, Tk), diagonal=1) over the last two dims: (i, j) is
// filled when j > i. `value` is -inf unless given (a finite one is for gradient checks).
Tensor causal_mask(const Tensor& x, double value = -std::numeric_limits<double>::infinity());
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// In training, zeroes each element with probability p (torch's CPU mask stream) and scales the
// rest by 1/(1-p) as torch does; the mask is kept on the tape for backward. p must be in [0, 1).
// In eval mode, or with p == 0, returns x itself (no new node, nothing drawn), like torch.
Tensor dropout(const Tensor& x, double p, bool training,
               Generator& generator = default_generator());

// --- fused attention (for speed; each equals the composed ops above up to rounding) ------------
// softmax(causal_mask(scores) / divisor, -1) in one pass over [.., Tq, Tk]: (i, j) with j > i
// gives exactly 0, and the division is torch's (not a multiply by 1/divisor). The backward reads
// only the output: dX = Y ⊙ (dY − Σ_j dY ⊙ Y) / divisor.
Tensor causal_softmax(const Tensor& scores, double divisor = 1.0);
// Causal scaled dot-product attention, softmax(causal_mask(q·kᵀ) / √D)·v per (batch, head),
// computed in blocks of queries and keys with an online softmax, so the [T, T] scores are never
// held whole (only the rows' log-sum-exp is saved; backward recomputes the scores per block),
// and blocks wholly above the diagonal are skipped. Two layouts:
//  - q, k, v [B, H, T, D] and num_heads == 0: returns [B, H, T, D];
//  - q, k, v [B, T, C] and num_heads = H > 0 (C % H == 0): the heads are read in place and the
//    result is [B, T, C], i.e. merge_heads(causal_attention(split_heads(q, H), ...)) without
//    the four copies.
// The (batch, head) pairs are split over set_num_threads() threads.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_heads = 0);

// MultiHeadAttention's attention on the projections q, k, v [B, T, C] with H = num_heads heads of
// D = C / H (read in place, no split/merge copies): per (batch, head),
// dropout(softmax(causal_mask(q·kᵀ) / √D, -1), dropout_p, training, generator)·v, returned as
// [B, T, C]. It computes exactly what the composed ops compute (merge_heads(matmul(dropout(
// softmax(causal_mask(matmul(qh, transpose(kh, 2, 3))) / √D, -1), ...), vh)) with qh =
// split_heads(q, H), ...), bit for bit, output and gradients, and draws the same dropout mask
// from generator (torch's, over the whole [B, H, T, T] weights); it keeps only the
// probabilities [B, H, T, T] and the mask for backward. dropout_p in [0, 1); nothing is drawn in
// eval mode (training = false) or for p = 0. The (batch, head) pairs are split over the threads.
Tensor causal_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    int64_t num_heads, double dropout_p = 0.0,
                                    bool training = false,
                                    Generator& generator = default_generator());
// The softmax weights [B, H, T, T] (before dropout) that produced `out`, an output of
// causal_dot_product_attention, row-major. Throws Error for any other tensor.
std::vector<double> causal_attention_weights(const Tensor& out);

// --- selection and sampling (ids carry no gradient) ---------------------------------------------
// torch.argmax(x, dim, keepdim): the first maximum (a NaN counts as the maximum); not recorded.
Ids argmax(const Tensor& x, int dim, bool keepdim = false);
// The same into `out`, reusing its storage (no allocation once it is large enough).
void argmax(const Tensor& x, int dim, bool keepdim, Ids& out);
struct TopK {
  Tensor values;  // x's shape with dim = k, sorted descending; the gradient flows to the picks
  Ids indices;    // the same shape: where each value sits along dim
};
// torch.topk(x, k, dim, largest) (sorted), 0 <= k <= size(dim): the k largest, descending, or
// with largest = false the k smallest, ascending (NaN counts as the largest either way). Equal
// values come in the order torch's CPU kernel leaves them (ops/detail/topk_row.h), not
// necessarily lowest index first.
TopK topk(const Tensor& x, int64_t k, int dim = -1, bool largest = true);
// torch.sort(x, dim, descending, stable): the values along dim in order, NaN as the largest, and
// where each came from. stable keeps equal values in index order (std::stable_sort, as torch's
// CPU kernel); without it, equal values come in the order torch's std::sort leaves them. The
// gradient flows back to where each value came from.
struct Sorted {
  Tensor values;  // x's shape
  Ids indices;    // the same shape
};
Sorted sort(const Tensor& x, int dim = -1, bool descending = false, bool stable = false);
// torch.argsort: sort's indices; not recorded (ids carry no gradient).
Ids argsort(const Tensor& x, int dim = -1, bool descending = false, bool stable = false);
// torch.multinomial(probs, num_samples) on CPU (without replacement, torch's default), from the
// same stream as torch for the same seed: probs [V] -> ids [num_samples], [N, V] ->
// [N, num_samples]. probs need not sum to 1, must be finite and >= 0 with a positive row sum.
// Nothing is recorded on the tape.
Ids multinomial(const Tensor& probs, int64_t num_samples = 1,
                Generator& generator = default_generator());
// The same into `out`, reusing its storage; its scratch comes from the tape's arena, so with
// num_samples == 1 a warm call allocates nothing from the heap.
void multinomial(const Tensor& probs, int64_t num_samples, Generator& generator, Ids& out);
// torch.bernoulli(p): p's shape and dtype, 1 where a uniform of p's dtype drawn for the element
// is < p (float32 p draws one 32-bit word per element, float64 two), else 0: torch's CPU numbers
// from the same seed. Every p must be in [0, 1] (an Error naming the first that is not, by its
// position). torch.bernoulli(x, p): x's shape and dtype, each 1 with probability p (a float64
// uniform per element, whatever the dtype, as torch). A leaf with no gradient, on x's tape
// (torch's gradient of bernoulli is zero).
Tensor bernoulli(const Tensor& p, Generator& generator = default_generator());
Tensor bernoulli(const Tensor& x, double p, Generator& generator = default_generator());
// The book's top-k filter (§5.3) along the last dim: min_val = topk(x, k).values[.., -1:], then
// torch.where(x < min_val, -inf, x), so every value below its row's k-th largest becomes -inf
// (ties with the k-th largest stay). 1 <= k <= size(-1). The k-th largest comes from topk's sort
// (equal values as torch orders them), its scratch from the tape's arena, so a warm call
// allocates nothing from the heap. The gradient flows to the values kept.
Tensor top_k_filter(const Tensor& x, int64_t k);

// --- inference only ---------------------------------------------------------------------------
// These ops read operands that are not tensors on the tape (bfloat16 weight bits, a KV cache the
// next step overwrites), which no gradient can reach: each throws Error naming the op when grad
// mode is on (run it under NoGradGuard, torch.no_grad()), before recording anything.

// A weight [out_features, in_features] held as bfloat16 bits, row-major (nn.Linear's layout),
// outside any tape: what nn::Linear::use_bf16_weight keeps.
struct Bf16Weight {
  const uint16_t* bits;
  int64_t out_features;
  int64_t in_features;
};
// linear with bfloat16 weights: x [.., in] float32, bias [out] float32 (or undefined) ->
// [.., out] float32. Each weight is widened to float32 exactly and the sums run in float32
// (kernels/gemm/linear_bf16.h; one row is a matrix-vector product).
Tensor linear_bf16(const Tensor& x, const Bf16Weight& weight, const Tensor& bias = Tensor());

// A key/value cache as cached_attention reads it (nn::MultiHeadAttention's): keys and values
// [batch, kv_heads, window, head_dim] each, row-major, of which positions [0, length) hold tokens,
// oldest first. kv_heads 0 means heads; fewer (a divisor of heads) is grouped-query attention
// (Qwen3's, Llama 3's): query head h reads kv head h / (heads / kv_heads), nothing repeated.
template <class T>
struct KVCacheRef {
  std::span<const T> keys;
  std::span<const T> values;
  int64_t batch;
  int64_t heads;
  int64_t window;
  int64_t head_dim;
  int64_t length;
  int64_t kv_heads = 0;
};
// Attention of the T newest tokens over a KV cache that holds them (T <= cache.length): q
// [B, T, H·D_h] (the query projection, heads side by side, q's dtype the cache's) -> [B, T, H·D_h],
// query i at position length − T + i seeing keys 0 .. that position: per head
// softmax(q·kᵀ / √D_h)·v, heads merged back (the book's context_vec before out_proj).
Tensor cached_attention(const Tensor& q, const KVCacheRef<float>& cache);
Tensor cached_attention(const Tensor& q, const KVCacheRef<double>& cache);

// --- reductions and losses --------------------------------------------------------------------
Tensor sum(const Tensor& x);
// x broadcast to `sizes` (torch's expand: -1 keeps a size, new dims go on the left), as a copy.
Tensor expand(const Tensor& x, std::span<const int64_t> sizes);
inline Tensor expand(const Tensor& x, std::initializer_list<int64_t> sizes) {
  return expand(x, std::span<const int64_t>(sizes.begin(), sizes.size()));
}
// torch.broadcast_to: expand's alias.
inline Tensor broadcast_to(const Tensor& x, std::span<const int64_t> sizes) {
  return expand(x, sizes);
}
inline Tensor broadcast_to(const Tensor& x, std::initializer_list<int64_t> sizes) {
  return expand(x, sizes);
}
// (Shapes by value here and in sum_to_size: callers pass other tensors' shapes, which recording
// may move.)
inline Tensor expand(const Tensor& x, Shape shape) {
  return expand(x, shape.dims());
}
// x summed over the dims along which `shape` broadcasts to x (torch's sum_to_size): the inverse
// of expand, and how a broadcast's gradient returns to its operand. x itself when equal.
Tensor sum_to_size(const Tensor& x, Shape shape);
Tensor sum(const Tensor& x, int dim, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int dim, bool keepdim = false);
Tensor max(const Tensor& x, int dim, bool keepdim = false);       // values; gradient to the arg max
Tensor mse_loss(const Tensor& prediction, const Tensor& target);  // mean of squared errors
// logits [N, C] (or [C]), targets in [0, C) or ignore_index: mean cross entropy via a stable
// log-softmax over the rows whose target is not ignore_index (torch's default −100; the padding
// targets of chapter 7's collate). Every row ignored gives NaN, as in torch. Class weights, the
// other reductions, label smoothing, probability targets and more losses: ops/losses.h.
Tensor cross_entropy(const Tensor& logits, std::span<const int64_t> targets,
                     int64_t ignore_index = -100);
// The same with targets as Ids ([N], or [] for logits [C]).
inline Tensor cross_entropy(const Tensor& logits, const Ids& targets, int64_t ignore_index = -100) {
  return cross_entropy(logits, targets.values(), ignore_index);
}
// torch.log_softmax(x, dim): x - max - log(sum(exp(x - max))), stable.
Tensor log_softmax(const Tensor& x, int dim);

// --- reductions over all elements, one dim or a list of dims (issue #35) -----------------------
// A list of dims may count from the end and must not repeat a dim; an empty list reduces every
// dim (torch's dim=[] or None); a 0-D x takes dim 0 or -1. Each op taking a list also takes it
// braced, `amax(x, {0, 2}, true)`, and most take one dim as an int.
Tensor sum(const Tensor& x, std::span<const int> dims, bool keepdim = false);
inline Tensor sum(const Tensor& x, std::initializer_list<int> dims, bool keepdim = false) {
  return sum(x, std::span<const int>(dims.begin(), dims.size()), keepdim);
}
Tensor mean(const Tensor& x, std::span<const int> dims, bool keepdim = false);
inline Tensor mean(const Tensor& x, std::initializer_list<int> dims, bool keepdim = false) {
  return mean(x, std::span<const int>(dims.begin(), dims.size()), keepdim);
}
// torch.amax / amin: NaN propagates; ties share the gradient evenly (a NaN result's group gets a
// NaN gradient, torch's formula). A reduced dim of size 0 is an Error (no identity), as in torch.
Tensor amax(const Tensor& x, std::span<const int> dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, std::span<const int> dims = {}, bool keepdim = false);
inline Tensor amax(const Tensor& x, std::initializer_list<int> dims, bool keepdim = false) {
  return amax(x, std::span<const int>(dims.begin(), dims.size()), keepdim);
}
inline Tensor amin(const Tensor& x, std::initializer_list<int> dims, bool keepdim = false) {
  return amin(x, std::span<const int>(dims.begin(), dims.size()), keepdim);
}
inline Tensor amax(const Tensor& x, int dim, bool keepdim = false) {
  return amax(x, {dim}, keepdim);
}
inline Tensor amin(const Tensor& x, int dim, bool keepdim = false) {
  return amin(x, {dim}, keepdim);
}
// torch.max(x) / min(x): the extreme of all elements, a scalar; NaN propagates; the gradient is
// shared evenly among the elements equal to it (among the NaNs when it is NaN). An empty x is an
// Error, as in torch.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
// torch.min(x, dim, keepdim)'s values (as max above): the first minimum gets the gradient; a NaN
// is the minimum. argmin gives the indices: the first minimum, or the first NaN; not recorded.
Tensor min(const Tensor& x, int dim, bool keepdim = false);
Ids argmin(const Tensor& x, int dim, bool keepdim = false);
void argmin(const Tensor& x, int dim, bool keepdim, Ids& out);
// torch.var / std (dim, *, correction, keepdim): Σ (x − mean)² / max(0, n − correction), n the
// elements per output; n <= correction gives inf or NaN, as torch. std is √var; its gradient is 0
// where std is 0. The sums run in double. correction = 1 is torch's unbiased=True, 0 its False.
// (With `using namespace tapegrad`, write tapegrad::std: a plain `std(` names the namespace.)
Tensor var(const Tensor& x, std::span<const int> dims = {}, int64_t correction = 1,
           bool keepdim = false);
Tensor std(const Tensor& x, std::span<const int> dims = {}, int64_t correction = 1,
           bool keepdim = false);
inline Tensor var(const Tensor& x, std::initializer_list<int> dims, int64_t correction = 1,
                  bool keepdim = false) {
  return var(x, std::span<const int>(dims.begin(), dims.size()), correction, keepdim);
}
inline Tensor std(const Tensor& x, std::initializer_list<int> dims, int64_t correction = 1,
                  bool keepdim = false) {
  return std(x, std::span<const int>(dims.begin(), dims.size()), correction, keepdim);
}
inline Tensor var(const Tensor& x, int dim, int64_t correction = 1, bool keepdim = false) {
  return var(x, {dim}, correction, keepdim);
}
inline Tensor std(const Tensor& x, int dim, int64_t correction = 1, bool keepdim = false) {
  return std(x, {dim}, correction, keepdim);
}
// torch.var_mean / std_mean: {var or std, mean}, the two ops above and mean over the same dims.
std::pair<Tensor, Tensor> var_mean(const Tensor& x, std::span<const int> dims = {},
                                   int64_t correction = 1, bool keepdim = false);
std::pair<Tensor, Tensor> std_mean(const Tensor& x, std::span<const int> dims = {},
                                   int64_t correction = 1, bool keepdim = false);
inline std::pair<Tensor, Tensor> var_mean(const Tensor& x, std::initializer_list<int> dims,
                                          int64_t correction = 1, bool keepdim = false) {
  return var_mean(x, std::span<const int>(dims.begin(), dims.size()), correction, keepdim);
}
inline std::pair<Tensor, Tensor> std_mean(const Tensor& x, std::initializer_list<int> dims,
                                          int64_t correction = 1, bool keepdim = false) {
  return std_mean(x, std::span<const int>(dims.begin(), dims.size()), correction, keepdim);
}
// torch.logsumexp(x, dims, keepdim): log Σ exp(x − m) + m with m the group's max (0 where that is
// ±inf), so all −inf gives −inf, a +inf gives +inf and a NaN gives NaN, as torch. An empty group
// gives −inf. (An empty list reduces every dim, where torch 1.13 raises.)
Tensor logsumexp(const Tensor& x, std::span<const int> dims, bool keepdim = false);
inline Tensor logsumexp(const Tensor& x, std::initializer_list<int> dims, bool keepdim = false) {
  return logsumexp(x, std::span<const int>(dims.begin(), dims.size()), keepdim);
}
inline Tensor logsumexp(const Tensor& x, int dim, bool keepdim = false) {
  return logsumexp(x, {dim}, keepdim);
}
// torch.prod: the product of all elements (1 for an empty x), or along one dim. The gradient is
// dY ⊙ Y / X without zeros, the product of the other elements where x holds zeros, as torch.
Tensor prod(const Tensor& x);
Tensor prod(const Tensor& x, int dim, bool keepdim = false);
// torch.norm(x, p, dim, keepdim) for p = 1, 2 or inf (others are an Error): Σ|x|, √Σx², max|x|
// (NaN propagates; an empty group gives 0). At 0 the gradient is 0 (torch's sgn and masked 0/0);
// for inf, ties with the max share the gradient evenly.
Tensor norm(const Tensor& x, double p = 2.0, std::span<const int> dims = {}, bool keepdim = false);
inline Tensor norm(const Tensor& x, double p, std::initializer_list<int> dims,
                   bool keepdim = false) {
  return norm(x, p, std::span<const int>(dims.begin(), dims.size()), keepdim);
}
inline Tensor norm(const Tensor& x, double p, int dim, bool keepdim = false) {
  return norm(x, p, {dim}, keepdim);
}
// torch.cumsum / cumprod along a dim (a 0-D x takes 0 or -1), accumulated in double with every
// output rounded, as torch's CPU kernels. cumprod's gradient where x holds zeros is the sum of
// the products that leave each element out (torch's formula, computed directly).
Tensor cumsum(const Tensor& x, int dim);
Tensor cumprod(const Tensor& x, int dim);
// torch.cummax / cummin along a dim (a 0-D x takes 0 or -1): the running maximum (minimum) and
// where it sits. As torch's CPU kernel, an element equal to the running extreme takes its place
// (ties give the later index), and a NaN, once met, is the extreme from there on (each later NaN
// taking its index). The gradient goes to the index each output came from, summed where one
// element stays the extreme (torch's scatter_add).
struct ValuesIndices {
  Tensor values;  // x's shape
  Ids indices;    // the same shape
};
ValuesIndices cummax(const Tensor& x, int dim);
ValuesIndices cummin(const Tensor& x, int dim);
// torch.logcumsumexp: ln Σ_{j≤k} exp(x_j) along a dim, accumulated in double (torch's CPU kernel:
// a NaN propagates, all −inf so far gives −inf, a +inf gives +inf). The gradient is torch's
// formula (ops/DERIVATIVES.md): NaN where the running value is −inf, as torch.
Tensor logcumsumexp(const Tensor& x, int dim);

// --- GPT block --------------------------------------------------------------------------------
// Normalises over the last dim; weight and bias ([C]) may be undefined Tensors.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// torch.nn.functional.group_norm: x [N, C, *] in num_groups groups of C/num_groups channels, each
// (sample, group) normalised over its channels and spatial dims (biased variance), then weight and
// bias [C] (either may be undefined) per channel. Composed from reshape, layer_norm, mul and add.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// torch.nn.functional.batch_norm: x [N, C, *] normalised per channel C. Training: by the batch's
// mean and biased variance over every dim but 1 (more than one value per channel, else Error),
// and running_mean / running_var (either may be undefined) move to (1 − momentum)·running +
// momentum·(the batch's mean, unbiased variance). Not training: by running_mean and running_var
// (both required). Then weight and bias [C] (either may be undefined). Composed from ops.
Tensor batch_norm(const Tensor& x, Parameter running_mean, Parameter running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  bool training = false, double momentum = 0.1, double eps = 1e-5);
// torch.nn.functional.gelu: approximate "none" (x·Φ(x), by erf) or "tanh" (the book's GPT's);
// anything else throws Error naming the option.
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
// --- Qwen3 and Llama 3 blocks (the book's qwen3.py and llama3.py) ------------------------------
// The book's RMSNorm: x·rsqrt(mean(x², -1) + eps)·weight + bias over the last dim; weight and bias
// ([C]) may be undefined Tensors.
Tensor rms_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-6);
// The book's apply_rope: x [.., T, D] (D even) rotated by the first T rows of the tables cos and
// sin [L, D] (L >= T): x·cos + cat(-x[.., D/2:], x[.., :D/2])·sin, halves rotated (not
// interleaved). Gradients flow to x and, when they require grad, to the tables.
Tensor rope(const Tensor& x, const Tensor& cos, const Tensor& sin);
// Grouped-query causal attention, the book's Qwen3 and Llama 3 GroupedQueryAttention without its
// projections: q [B, H, T, D], k and v [B, G, T, D] with H a multiple of G (query head h uses kv
// head h / (H / G)) -> softmax(causal_mask(q·kᵀ) / √D)·v [B, H, T, D]. Composed from
// repeat_interleave and causal_attention (so the gradient of a kv head sums over the query heads
// that share it); the repeated keys and values are materialised.
Tensor grouped_query_attention(const Tensor& q, const Tensor& k, const Tensor& v);
// Llama 3's frequency smoothing (the book's cfg["rope_freq"]).
struct RopeFreqConfig {
  double factor = 32.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_context_length = 8192;
};
// The cos and sin tables [context_length, head_dim], row-major float32.
struct RopeTables {
  int64_t context_length = 0, head_dim = 0;
  std::vector<float> cos, sin;
};
// The book's compute_rope_params (qwen3.py; llama3.py with freq_config), in its float32
// arithmetic: inv_freq = 1 / theta_base^(2i / head_dim), angles = position · inv_freq (repeated
// for both halves), then cos and sin. Throws Error unless head_dim is positive and even,
// context_length positive and theta_base > 0.
RopeTables compute_rope_params(int64_t head_dim, double theta_base = 10000.0,
                               int64_t context_length = 4096,
                               const std::optional<RopeFreqConfig>& freq_config = std::nullopt);
// weight [V, C], ids (any shape `ids_shape`, values in [0, V)) -> ids_shape + [C].
Tensor embedding(const Tensor& weight, std::span<const int64_t> ids, const Shape& ids_shape);
// The same with Ids ([B, T] -> [B, T, C]).
inline Tensor embedding(const Tensor& weight, const Ids& ids) {
  return embedding(weight, ids.values(), ids.shape());
}

}  // namespace tapegrad
