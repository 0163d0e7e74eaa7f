// argmax: the index of the largest value along a dim, torch.argmax; ids, no gradient.
//
// Not recorded on the tape (an index has no gradient, as in torch). Ties give the first index,
// and a NaN counts as the largest value (the first NaN wins), as torch's CPU kernel does.
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

void argmax(const Tensor& x, int dim, bool keepdim, Ids& out) {
  arg_extreme_along("argmax", x, dim, keepdim, true, out);
}

Ids argmax(const Tensor& x, int dim, bool keepdim) {
  Ids out;
  argmax(x, dim, keepdim, out);
  return out;
}

}  // namespace tapegrad
