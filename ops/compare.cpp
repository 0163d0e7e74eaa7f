// eq, ne, lt, le, gt, ge: six ops sharing everything but the relation; tensor-tensor (with
// broadcasting) and tensor-scalar forms, 1/0 results of the inputs' dtype, no gradient.
//
// tapegrad has no bool dtype: torch's bool result is a float tensor of 0 and 1 here, which
// masked_fill and where take as a mask. The ops are recorded (a recorded backward may build its
// masks with them: maximum's ties), but no gradient flows through them, as through torch's bool
// results: both backwards add nothing, so an input reached only through them gets no gradient.
#include <string>

#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

enum class Relation { Eq, Ne, Lt, Le, Gt, Ge };

template <Relation R, class T>
T holds(T a, T b) {
  if constexpr (R == Relation::Eq) return T(a == b);
  if constexpr (R == Relation::Ne) return T(a != b);
  if constexpr (R == Relation::Lt) return T(a < b);
  if constexpr (R == Relation::Le) return T(a <= b);
  if constexpr (R == Relation::Gt) return T(a > b);
  if constexpr (R == Relation::Ge) return T(a >= b);
}

struct CompareState {
  double scalar;    // the right operand of the tensor-scalar form
  bool has_scalar;  // false: the tensor-tensor form (two inputs)
};

void compare_backward(Tape&, const Node&) {
  // Y = [A ρ B]  =>  nothing: the relation is piecewise constant, and torch's bool result has no
  // gradient (the inputs' gradients are not even touched)
}

void compare_grad_graph(GradGraph&) {
  // Y = [A ρ B]  =>  nothing
}

std::string compare_arguments(const Tape&, const Node& n) {
  const CompareState& s = n.state_as<CompareState>();
  return s.has_scalar ? number_text(s.scalar) : "";
}

#define TAPEGRAD_COMPARE_OP(var, op_name)            \
  const OpDef var{.name = op_name,                   \
                  .backward = compare_backward,      \
                  .arguments = compare_arguments,    \
                  .grad_graph = compare_grad_graph}; \
  TAPEGRAD_REGISTER_OP(var)

TAPEGRAD_COMPARE_OP(kEq, "eq");
TAPEGRAD_COMPARE_OP(kNe, "ne");
TAPEGRAD_COMPARE_OP(kLt, "lt");
TAPEGRAD_COMPARE_OP(kLe, "le");
TAPEGRAD_COMPARE_OP(kGt, "gt");
TAPEGRAD_COMPARE_OP(kGe, "ge");

template <Relation R>
Tensor compare(const OpDef& op, const char* symbol, const Tensor& a, const Tensor& b) {
  check_same_dtype(op.name, a, b);
  const Shape out = broadcast_shape(op.name, a, symbol, b);
  Tensor y = a.tape().record(op, out, a.dtype(), {a, b}, CompareState{0.0, false});
  dispatch(y.dtype(), [&]<class T>() {
    const T* av = a.data<T>();
    const T* bv = b.data<T>();
    T* yv = output_data<T>(y);
    for_each_broadcast(out, broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out),
                       [&](int64_t o, int64_t i, int64_t j) { yv[o] = holds<R>(av[i], bv[j]); });
  });
  return y;
}

template <Relation R>
Tensor compare(const OpDef& op, const Tensor& x, double c) {
  Tensor y = x.tape().record(op, x.shape(), x.dtype(), {x}, CompareState{c, true});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const T ct = static_cast<T>(c);  // torch compares in x's dtype
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) yv[i] = holds<R>(xv[i], ct);
  });
  return y;
}

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) {
  return compare<Relation::Eq>(kEq, "==", a, b);
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return compare<Relation::Ne>(kNe, "!=", a, b);
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return compare<Relation::Lt>(kLt, "<", a, b);
}
Tensor le(const Tensor& a, const Tensor& b) {
  return compare<Relation::Le>(kLe, "<=", a, b);
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return compare<Relation::Gt>(kGt, ">", a, b);
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return compare<Relation::Ge>(kGe, ">=", a, b);
}
Tensor eq(const Tensor& x, double c) {
  return compare<Relation::Eq>(kEq, x, c);
}
Tensor ne(const Tensor& x, double c) {
  return compare<Relation::Ne>(kNe, x, c);
}
Tensor lt(const Tensor& x, double c) {
  return compare<Relation::Lt>(kLt, x, c);
}
Tensor le(const Tensor& x, double c) {
  return compare<Relation::Le>(kLe, x, c);
}
Tensor gt(const Tensor& x, double c) {
  return compare<Relation::Gt>(kGt, x, c);
}
Tensor ge(const Tensor& x, double c) {
  return compare<Relation::Ge>(kGe, x, c);
}

}  // namespace tapegrad
