// clamp with tensor bounds (torch.clamp(x, min, max) with tensors, either optional), composed of
// where over constant masks, so its gradients of every order are where's and are torch's.
#include <limits>
#include <string>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void check_bound(const Tensor& x, const Tensor& bound, const char* role, const Shape& out,
                 Shape* result) {
  if (!bound.defined()) return;
  check_same_dtype("clamp", x, bound);
  bool ok = true;
  *result = broadcast_shape(out, bound.shape(), &ok);
  if (!ok) {
    throw_binary_error("clamp", x, "with", bound,
                       std::string("cannot broadcast ") + role + " to " + out.str());
  }
}

}  // namespace

Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max) {
  if (!min.defined() && !max.defined()) {
    throw_unary_error("clamp", x, "at least one of min and max must be given");
  }
  Shape out = x.shape();
  check_bound(x, min, "min", Shape(out), &out);
  check_bound(x, max, "max", Shape(out), &out);
  // torch's forward, min(max(x, min), max) with any NaN giving NaN, as a constant: the value where
  // no branch below takes the gradient (a NaN anywhere, or x beyond min == max).
  const Tensor xd = detach(x);
  Tensor value = xd;
  if (min.defined()) value = maximum(value, detach(min));
  if (max.defined()) value = minimum(value, detach(max));
  // torch's gradient masks (clamp_backward, clamp_backward_min_max); a NaN makes each false.
  if (!max.defined()) {  // dX where X >= min, dmin where X < min
    return where(ge(x, min), x, where(lt(x, min), min, value));
  }
  if (!min.defined()) {  // dX where X <= max, dmax where X > max
    return where(le(x, max), x, where(gt(x, max), max, value));
  }
  // dX where min <= X <= max; dmin where X < min < max; dmax where X > max or max < min. The
  // value at a NaN min is NaN, so that case's dmax (X > max) comes from a zero term.
  const Tensor keep = logical_and(ge(x, min), le(x, max));
  const Tensor to_min = logical_and(lt(x, min), lt(min, max));
  const Tensor nan_min = isnan(min);
  const Tensor to_max = logical_and(logical_or(gt(x, max), lt(max, min)), logical_not(nan_min));
  const Tensor y = where(keep, x, where(to_min, min, where(to_max, max, value)));
  const Tensor zero = zeros(Shape{}, x.dtype());
  return y + where(logical_and(gt(x, max), nan_min), max - detach(max), zero);
}

}  // namespace tapegrad
