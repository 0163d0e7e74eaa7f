// isclose: torch.isclose(a, b, rtol, atol, equal_nan), 1/0 of the inputs' dtype, no gradient.
//
// As torch computes it, in the inputs' dtype: equal values (infinities included) are close, NaN
// and NaN only with equal_nan, and otherwise |a − b| must be finite and <= atol + |rtol·b|, each
// operation rounded on its own (torch's separate tensor ops). Recorded like the comparisons
// (ops/compare.cpp), with backwards that add nothing.
#include <cmath>
#include <string>

#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct IscloseState {
  double rtol;
  double atol;
  bool equal_nan;
};

void isclose_backward(Tape&, const Node&) {
  // Y = [A ≈ B]  =>  nothing: piecewise constant, and torch's bool result has no gradient
}

void isclose_grad_graph(GradGraph&) {
  // Y = [A ≈ B]  =>  nothing
}

const OpDef kIsclose{.name = "isclose",
                     .backward = isclose_backward,
                     .arguments =
                         [](const Tape&, const Node& n) {
                           const auto& s = n.state_as<IscloseState>();
                           return "rtol " + number_text(s.rtol) + ", atol " + number_text(s.atol) +
                                  (s.equal_nan ? ", equal_nan" : "");
                         },
                     .grad_graph = isclose_grad_graph};
TAPEGRAD_REGISTER_OP(kIsclose);

template <class T>
bool close(T a, T b, T rtol, T atol, bool equal_nan, bool exact) {
  if (a == b) return true;
  if (equal_nan && std::isnan(a) && std::isnan(b)) return true;
  if (exact) return false;       // both tolerances 0: torch checks equality only
  volatile T scaled = rtol * b;  // rounded alone: torch's rtol * other is its own op
  const T allowed = atol + std::abs(scaled);
  const T actual = std::abs(a - b);
  return std::isfinite(actual) && actual <= allowed;
}

}  // namespace

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_same_dtype("isclose", a, b);
  if (!(rtol >= 0.0)) {
    throw_binary_error("isclose", a, "and", b,
                       "rtol must be greater than or equal to zero, but got " + number_text(rtol));
  }
  if (!(atol >= 0.0)) {
    throw_binary_error("isclose", a, "and", b,
                       "atol must be greater than or equal to zero, but got " + number_text(atol));
  }
  const Shape out = broadcast_shape("isclose", a, "and", b);
  Tensor y = a.tape().record(kIsclose, out, a.dtype(), {a, b}, IscloseState{rtol, atol, equal_nan});
  dispatch(y.dtype(), [&]<class T>() {
    const T* av = a.data<T>();
    const T* bv = b.data<T>();
    T* yv = output_data<T>(y);
    const T rt = static_cast<T>(rtol), at = static_cast<T>(atol);
    const bool exact = rtol == 0.0 && atol == 0.0;
    for_each_broadcast(out, broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out),
                       [&](int64_t o, int64_t i, int64_t j) {
                         yv[o] = close(av[i], bv[j], rt, at, equal_nan, exact) ? T(1) : T(0);
                       });
  });
  return y;
}

}  // namespace tapegrad
