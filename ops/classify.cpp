// isnan, isinf and isfinite: three ops sharing everything but the test, 1/0 results of x's dtype
// (tapegrad has no bool dtype; torch returns bool), no gradient.
//
// Recorded like the comparisons (ops/compare.cpp), with backwards that add nothing.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void classify_backward(Tape&, const Node&) {
  // Y = [X is nan / ±inf / finite]  =>  nothing (torch's bool result has no gradient)
}

void classify_grad_graph(GradGraph&) {
  // Y = [X is nan / ±inf / finite]  =>  nothing
}

const OpDef kIsnan{
    .name = "isnan", .backward = classify_backward, .grad_graph = classify_grad_graph};
const OpDef kIsinf{
    .name = "isinf", .backward = classify_backward, .grad_graph = classify_grad_graph};
const OpDef kIsfinite{
    .name = "isfinite", .backward = classify_backward, .grad_graph = classify_grad_graph};
TAPEGRAD_REGISTER_OP(kIsnan);
TAPEGRAD_REGISTER_OP(kIsinf);
TAPEGRAD_REGISTER_OP(kIsfinite);

template <class F>
Tensor classified(const OpDef& op, const Tensor& x, F test) {
  Tensor y = x.tape().record(op, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = test(in[i]) ? T(1) : T(0);
  });
  return y;
}

}  // namespace

Tensor isnan(const Tensor& x) {
  return classified(kIsnan, x, [](auto v) { return std::isnan(v); });
}

Tensor isinf(const Tensor& x) {
  return classified(kIsinf, x, [](auto v) { return std::isinf(v); });
}

Tensor isfinite(const Tensor& x) {
  return classified(kIsfinite, x, [](auto v) { return std::isfinite(v); });
}

}  // namespace tapegrad
