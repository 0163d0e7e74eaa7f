// What every op file uses: dtype dispatch and error messages (Eigen views: eigen_maps.h).
#pragma once

#include <string>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

// Calls f.template operator()<float>() or <double>() for the dtype, e.g.
//   dispatch(y.dtype(), [&]<class T>() { ... });
template <class F>
decltype(auto) dispatch(DType dtype, F&& f) {
  if (dtype == DType::Float32) return f.template operator()<float>();
  return f.template operator()<double>();
}

// What a kernel backward of y = f(x) that saved x and y reads and writes: dX (null when x needs no
// gradient), X, Y, dY, e.g.
//   const auto [dx, xv, yv, dy] = unary_grad<T>(tape, node);
//   if (dx == nullptr) return;
template <class T>
struct UnaryGrad {
  T* dx;
  const T* x;
  const T* y;
  const T* dy;
};
template <class T>
UnaryGrad<T> unary_grad(Tape& tape, const Node& node) {
  return {tape.input_grad<T>(node, 0).to_add(), tape.input(node, 0).value_as<const T>(),
          node.value_as<const T>(), node.grad_as<const T>()};
}

// `a "W_query" [3, 2]`, or `a [3, 2]` when the tensor has no name: the way errors name operands.
std::string describe(const char* role, const Tensor& t);

// Throws unless both operands share a dtype: `add: a [2] is float32 but b [2] is float64`.
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);

// Throws `op: <what>` with both operands described, e.g.
// `matmul: a "W_query" [3, 2] x b [4, 5]: inner dims 2 != 4`.
[[noreturn]] void throw_binary_error(const char* op, const Tensor& a, const char* joiner,
                                     const Tensor& b, const std::string& what);
[[noreturn]] void throw_unary_error(const char* op, const Tensor& x, const std::string& what);

// Throws `op: <x described>: <name> <value> ...` unless the scalar argument `value` is finite and,
// for a float32 x, within float32's range (it is rounded to x's dtype, as torch rounds a Python
// number), so a bad slope or coefficient is an Error, not a tensor of inf or NaN.
void check_scalar_argument(const char* op, const Tensor& x, const char* name, double value);

// For the inference-only ops (ops.h): throws `op: <x described>: inference only (...)` when
// grad mode is on, before anything is recorded.
void check_inference_only(const char* op, const Tensor& x);
// Their OpDef::backward: never reached, as they record nothing in grad mode; throws if it is.
void inference_only_backward(Tape& tape, const Node& node);

// "[1, 2]": the coordinates of element `flat` (row-major) of a tensor of `shape`; "[]" for a
// scalar. How errors name a bad element.
std::string position_text(const Shape& shape, int64_t flat);

// A dim as drawings show it ("dim -1"): the last one as -1, as the book writes softmax(x, dim=-1),
// others counted from the front. `dim` is normalised to 0..rank-1.
std::string dim_text(int64_t dim, int rank);

}  // namespace tapegrad
