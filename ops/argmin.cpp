// argmin: the index of the smallest value along a dim, torch.argmin; ids, no gradient.
//
// Not recorded on the tape (an index has no gradient, as in torch). Ties give the first index,
// and a NaN counts as the smallest value (the first NaN wins), as torch's CPU kernel does.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

void argmin(const Tensor& x, int dim, bool keepdim, Ids& out) {
  const DimReduction r = plan_dim_reduction("argmin", x, dim, keepdim);
  const DimView v = r.view;
  if (v.size == 0) {
    throw_unary_error("argmin", x,
                      "cannot take the argmin along dim " + std::to_string(dim) + " of size 0");
  }
  out.resize(r.out_shape);
  int64_t* ids = out.values().data();
  dispatch(x.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const T* row = xv + o * v.size * v.inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < v.size && !std::isnan(row[best * v.inner]); ++k) {
          const T e = row[k * v.inner];
          if (e < row[best * v.inner] || std::isnan(e)) best = k;
        }
        ids[o * v.inner + i] = best;
      }
    }
  });
}

Ids argmin(const Tensor& x, int dim, bool keepdim) {
  Ids out;
  argmin(x, dim, keepdim, out);
  return out;
}

}  // namespace tapegrad
