// atan2: the angle of (b, a) elementwise with broadcasting, torch.atan2(a, b) (a the y-coordinate),
// SLEEF's 1-ulp atan2 as torch's vector kernel (the C library's at baseline).
#include <cstdint>

#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void atan2_backward(Tape& tape, const Node& node) {
  // Y = atan2(A, B)  =>  dA += reduce(dY·B / (A² + B²)), dB += reduce(dY·(−A) / (A² + B²))
  // (torch's atan2_backward: the reciprocal of A·A + B·B, then the products, in that order)
  binary_backward_rows(
      tape, node,
      []<class T>(const T* a, const T* b, const T*, const T* dy, T* ga, T* gb, int64_t n) {
        if (ga != nullptr) {
          for (int64_t i = 0; i < n; ++i) {
            ga[i] = dy[i] * b[i] * (T(1) / (a[i] * a[i] + b[i] * b[i]));
          }
        }
        if (gb != nullptr) {
          for (int64_t i = 0; i < n; ++i) {
            gb[i] = dy[i] * -a[i] * (T(1) / (a[i] * a[i] + b[i] * b[i]));
          }
        }
      });
}

void atan2_grad_graph(GradGraph& g) {
  // Y = atan2(A, B)  =>  dA += reduce(dY·B / (A² + B²)), dB += reduce(dY·(−A) / (A² + B²))
  const Tensor a = g.input(0), b = g.input(1);
  const Shape a_shape = a.shape(), b_shape = b.shape();
  const Tensor recip = reciprocal(mul(a, a) + mul(b, b));
  if (g.needs(0)) g.add(0, sum_to_size(mul(mul(g.grad(), b), recip), a_shape));
  if (g.needs(1)) g.add(1, sum_to_size(mul(mul(g.grad(), neg(a)), recip), b_shape));
}

const OpDef kAtan2{.name = "atan2",
                   .backward = atan2_backward,
                   .saves = saves::kInput0 | saves::kInput1,
                   .grad_graph = atan2_grad_graph};
TAPEGRAD_REGISTER_OP(kAtan2);

}  // namespace

Tensor atan2(const Tensor& a, const Tensor& b) {
  return binary_forward_rows(kAtan2, a, b, []<class T>(const T* y, const T* x, T* out, int64_t n) {
    vmath::map(vmath::Binary::kAtan2, y, x, out, n);
  });
}

}  // namespace tapegrad
