// any and all: whether some or every element is true (nonzero, NaN included), over all elements
// or along a dim (torch.any, torch.all); 1/0 of x's dtype, no gradient.
//
// Recorded like the comparisons (ops/compare.cpp), with backwards that add nothing.
#include <string>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void any_all_backward(Tape&, const Node&) {
  // Y = ∃/∀ X ≠ 0  =>  nothing: piecewise constant, and torch's bool result has no gradient
}

void any_all_grad_graph(GradGraph&) {
  // Y = ∃/∀ X ≠ 0  =>  nothing
}

std::string any_all_arguments(const Tape& tape, const Node& n) {
  const int dim = n.state_as<int>();
  return dim < 0 ? "" : reduction_text(dim, tape.input(n, 0), n);
}

const OpDef kAny{.name = "any",
                 .backward = any_all_backward,
                 .arguments = any_all_arguments,
                 .grad_graph = any_all_grad_graph};
const OpDef kAll{.name = "all",
                 .backward = any_all_backward,
                 .arguments = any_all_arguments,
                 .grad_graph = any_all_grad_graph};
TAPEGRAD_REGISTER_OP(kAny);
TAPEGRAD_REGISTER_OP(kAll);

// every = false: any (starts false, one true makes it true); every = true: all.
Tensor any_all(const OpDef& op, const Tensor& x, bool every) {
  Tensor y = x.tape().record(op, Shape{}, x.dtype(), {x}, -1);
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    bool r = every;
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
      if ((xv[i] != T(0)) != every) {  // a true element decides any, a false one all
        r = !every;
        break;
      }
    }
    output_data<T>(y)[0] = r ? T(1) : T(0);
  });
  return y;
}

Tensor any_all(const OpDef& op, const Tensor& x, int dim, bool keepdim, bool every) {
  const DimReduction r = plan_dim_reduction(op.name, x, dim, keepdim);
  Tensor y = x.tape().record(op, r.out_shape, x.dtype(), {x}, r.dim);
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const int64_t n_out = r.view.outer * r.view.inner;
    for (int64_t o = 0; o < n_out; ++o) yv[o] = every ? T(1) : T(0);
    for_each_reduced(r.view, [&](int64_t o, int64_t i, int64_t) {
      if ((xv[i] != T(0)) != every) yv[o] = every ? T(0) : T(1);
    });
  });
  return y;
}

}  // namespace

Tensor any(const Tensor& x) {
  return any_all(kAny, x, false);
}
Tensor any(const Tensor& x, int dim, bool keepdim) {
  return any_all(kAny, x, dim, keepdim, false);
}
Tensor all(const Tensor& x) {
  return any_all(kAll, x, true);
}
Tensor all(const Tensor& x, int dim, bool keepdim) {
  return any_all(kAll, x, dim, keepdim, true);
}

}  // namespace tapegrad
