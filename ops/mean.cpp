// mean: the mean of all elements (a scalar).
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void mean_backward(Tape& tape, const Node& node) {
  // y = Σ x / n  =>  dX += dy / n (broadcast)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const int64_t n = x.shape.numel();
      ArrayMap<T>(d, n) += node.grad_as<T>()[0] / static_cast<T>(n);
    }
  });
}

void mean_grad_graph(GradGraph& g) {
  // Y = Σ X / n  =>  dX += dY / n broadcast to shape(X)
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  g.add(0, div_scalar(expand(g.grad(), shape), static_cast<double>(shape.numel())));
}

const OpDef kMean{.name = "mean", .backward = mean_backward, .grad_graph = mean_grad_graph};
TAPEGRAD_REGISTER_OP(kMean);

// Σ x in double. float32: sixteen running sums (two vectors of doubles, a conversion and an add
// per element; Eigen's cast<double>().sum() does not vectorise the conversion); float64: Eigen's.
double sum_in_double(const float* x, int64_t n) {
  constexpr int kSums = 16;
  double acc[kSums] = {};
  int64_t i = 0;
  for (; i + kSums <= n; i += kSums) {
    for (int l = 0; l < kSums; ++l) acc[l] += static_cast<double>(x[i + l]);
  }
  double total = 0;
  for (int l = 0; l < kSums; ++l) total += acc[l];
  for (; i < n; ++i) total += static_cast<double>(x[i]);
  return total;
}
double sum_in_double(const double* x, int64_t n) {
  return ConstArrayMap<double>(x, n).sum();
}

}  // namespace

Tensor mean(const Tensor& x) {
  Tensor y = x.tape().record(kMean, Shape{}, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    // Summed in double (float32 keeps its precision); an empty tensor gives 0/0 = NaN, as torch.
    const double total = sum_in_double(x.data<T>(), x.numel());
    output_data<T>(y)[0] = static_cast<T>(total / static_cast<double>(x.numel()));
  });
  return y;
}

}  // namespace tapegrad
