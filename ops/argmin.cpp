// argmin: the index of the smallest value along a dim, torch.argmin; ids, no gradient.
//
// Not recorded on the tape (an index has no gradient, as in torch). Ties give the first index,
// and a NaN counts as the smallest value (the first NaN wins), as torch's CPU kernel does.
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

void argmin(const Tensor& x, int dim, bool keepdim, Ids& out) {
  arg_extreme_along("argmin", x, dim, keepdim, false, out);
}

Ids argmin(const Tensor& x, int dim, bool keepdim) {
  Ids out;
  argmin(x, dim, keepdim, out);
  return out;
}

}  // namespace tapegrad
