// logical_and, logical_or, logical_xor, logical_not: torch's truth of a float (nonzero, NaN
// included, is true), 1/0 results of the inputs' dtype, no gradient.
//
// As the comparisons (ops/compare.cpp): recorded, so a recorded backward may build masks with
// them, but both backwards add nothing, as nothing flows through torch's bool results.
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

enum class Logic { And, Or, Xor };

void logical_backward(Tape&, const Node&) {
  // Y = [A ∧ B], [A ∨ B], [A ⊕ B] or [¬X]  =>  nothing: piecewise constant, and torch's bool result
  // has no gradient
}

void logical_grad_graph(GradGraph&) {
  // Y = [A ∧ B], [A ∨ B], [A ⊕ B] or [¬X]  =>  nothing
}

#define TAPEGRAD_LOGICAL_OP(var, op_name)                                               \
  const OpDef var{                                                                      \
      .name = op_name, .backward = logical_backward, .grad_graph = logical_grad_graph}; \
  TAPEGRAD_REGISTER_OP(var)

TAPEGRAD_LOGICAL_OP(kLogicalAnd, "logical_and");
TAPEGRAD_LOGICAL_OP(kLogicalOr, "logical_or");
TAPEGRAD_LOGICAL_OP(kLogicalXor, "logical_xor");
TAPEGRAD_LOGICAL_OP(kLogicalNot, "logical_not");

template <Logic L>
Tensor logical(const OpDef& op, const Tensor& a, const Tensor& b) {
  check_same_dtype(op.name, a, b);
  const Shape out = broadcast_shape(op.name, a, "and", b);
  Tensor y = a.tape().record(op, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    const T* av = a.data<T>();
    const T* bv = b.data<T>();
    T* yv = output_data<T>(y);
    for_each_broadcast(out, broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out),
                       [&](int64_t o, int64_t i, int64_t j) {
                         const bool p = av[i] != T(0), q = bv[j] != T(0);  // NaN != 0: true
                         bool r = false;
                         if constexpr (L == Logic::And) r = p && q;
                         if constexpr (L == Logic::Or) r = p || q;
                         if constexpr (L == Logic::Xor) r = p != q;
                         yv[o] = r ? T(1) : T(0);
                       });
  });
  return y;
}

}  // namespace

Tensor logical_and(const Tensor& a, const Tensor& b) {
  return logical<Logic::And>(kLogicalAnd, a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return logical<Logic::Or>(kLogicalOr, a, b);
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  return logical<Logic::Xor>(kLogicalXor, a, b);
}

Tensor logical_not(const Tensor& x) {
  Tensor y = x.tape().record(kLogicalNot, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) yv[i] = xv[i] == T(0) ? T(1) : T(0);
  });
  return y;
}

}  // namespace tapegrad
