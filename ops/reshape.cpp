// reshape: the same elements under a new shape (one dim may be -1); a copy, never a view.
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void reshape_backward(Tape& tape, const Node& node) {
  // Y = X read in a new shape  =>  dX += dY read in X's shape
  dispatch(node.dtype, [&]<class T>() {
    const auto [d, overwrite, numel] = tape.input_grad<T>(node, 0);  // written when still zero
    if (d == nullptr) return;
    if (overwrite) {
      layout::copy_run<false>(node.grad_as<const T>(), d, numel);
    } else {
      layout::copy_run<true>(node.grad_as<const T>(), d, numel);
    }
  });
}

void reshape_grad_graph(GradGraph& g) {
  // Y = X read in a new shape  =>  dX += dY read in X's shape
  const Shape shape = g.input(0).shape();
  g.add(0, reshape(g.grad(), shape.dims()));
}

const OpDef kReshape{
    .name = "reshape", .backward = reshape_backward, .grad_graph = reshape_grad_graph};
TAPEGRAD_REGISTER_OP(kReshape);

std::string dims_str(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

Tensor reshape(const Tensor& x, std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    throw_unary_error("reshape", x,
                      "shape " + dims_str(dims) + " has rank " + std::to_string(dims.size()) +
                          ", above the maximum of " + std::to_string(kMaxRank));
  }
  std::array<int64_t, kMaxRank> out{};
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    out[i] = dims[i];
    if (dims[i] == -1) {
      if (inferred >= 0) {
        throw_unary_error("reshape", x, "shape " + dims_str(dims) + " has more than one -1");
      }
      inferred = static_cast<int>(i);
    } else if (dims[i] < 0) {
      throw_unary_error("reshape", x,
                        "shape " + dims_str(dims) + " has invalid size " + std::to_string(dims[i]));
    } else {
      known *= dims[i];
    }
  }
  const int64_t numel = x.numel();
  if (inferred >= 0) {
    if (known == 0) {
      throw_unary_error("reshape", x,
                        "shape " + dims_str(dims) + " is ambiguous: the -1 could be any size");
    }
    out[static_cast<size_t>(inferred)] = numel / known;
  }
  const Shape shape(std::span<const int64_t>(out.data(), dims.size()));
  if (shape.numel() != numel) {
    throw_unary_error(
        "reshape", x,
        "shape " + dims_str(dims) + " is invalid for " + std::to_string(numel) + " elements");
  }
  Tensor y = x.tape().record(kReshape, shape, x.dtype(), {x});
  dispatch(y.dtype(),
           [&]<class T>() { layout::copy_run<false>(x.data<T>(), output_data<T>(y), numel); });
  return y;
}

Tensor reshape(const Tensor& x, std::initializer_list<int64_t> dims) {
  return reshape(x, std::span<const int64_t>(dims.begin(), dims.size()));
}

}  // namespace tapegrad
