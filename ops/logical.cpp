// logical_and, logical_or, logical_xor, logical_not: torch's truth of a float (nonzero, NaN
// included, is true), 1/0 results of the inputs' dtype, no gradient.
//
// As the comparisons (ops/compare.cpp): recorded, so a recorded backward may build masks with
// them, but both backwards add nothing, as nothing flows through torch's bool results.
#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
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
  return binary_forward(op, a, b, []<class T>(T x, T z) {
    const bool p = x != T(0), q = z != T(0);  // NaN != 0: true
    bool r = false;
    if constexpr (L == Logic::And) r = p && q;
    if constexpr (L == Logic::Or) r = p || q;
    if constexpr (L == Logic::Xor) r = p != q;
    return r ? T(1) : T(0);
  });
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
  return unary_forward(kLogicalNot, x, []<class T>(T v) { return v == T(0) ? T(1) : T(0); });
}

}  // namespace tapegrad
