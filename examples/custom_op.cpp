// A user's own op, defined entirely in this program (the C++ form of torch.autograd.Function):
// swish(x) = x · sigmoid(βx), with β an argument kept in the op's state. It shows the public op
// API of graph/op.h: the forward records the op with its state, the backward reads that state,
// the OpDef describes the arguments for the drawing, and gradcheck() checks the backward.
//
// One template per direction serves both dtypes: the forward and the backward run the instance
// the tensor's dtype asks for, so a float32 model trains with the op and the float64 gradcheck
// checks it, unchanged.
//
// Exit status: 0 when the gradcheck and the gradgradcheck pass, float32 and float64 agree, a bad β
// is refused and the drawing shows the op with its argument; 1 otherwise. Built in-tree and, by
// tests/consumer/, against the installed package (which installs this source under
// share/doc/tapegrad/examples/).
#include <cmath>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace {

// What the backward needs besides the tensors OpDef::saves keeps: β. A plain struct, copied
// onto the tape at record time.
struct SwishState {
  double beta;
};

template <class T>
T sigmoid(T v) {
  return T(1) / (T(1) + std::exp(-v));
}

// Y = X ⊙ s, s = σ(βX)  =>  dX += dY ⊙ (s + β·Y ⊙ (1 − s))   (reads X, Y and β)
template <class T>
void swish_backward_typed(Tape& tape, const Node& node) {
  T* dx = tape.input_grad<T>(node, 0).to_add();  // null when x needs no gradient
  if (dx == nullptr) return;
  const T* x = tape.input(node, 0).value_as<const T>();
  const T* y = node.value_as<const T>();
  const T* dy = node.grad_as<const T>();
  const T beta = static_cast<T>(node.state_as<SwishState>().beta);
  for (int64_t i = 0; i < node.shape.numel(); ++i) {
    const T s = sigmoid(beta * x[i]);
    dx[i] += dy[i] * (s + beta * y[i] * (T(1) - s));
  }
}

void swish_backward(Tape& tape, const Node& node) {
  if (node.dtype == DType::Float32) {
    swish_backward_typed<float>(tape, node);
  } else {
    swish_backward_typed<double>(tape, node);
  }
}

// The same backward written with ops, so that grad() with create_graph records it and a second
// derivative flows through it (docs/autograd.md): dX += dY ⊙ (s + β·Y ⊙ (1 − s)), s = σ(βX).
void swish_grad_graph(GradGraph& g) {
  const double beta = g.state<SwishState>().beta;
  const Tensor x = g.input(0), y = g.output();
  const Tensor s = sigmoid(scale(x, beta));
  g.add(0, mul(g.grad(), s + scale(mul(y, 1.0 - s), beta)));
}

// The op: its name, its backward, its arguments as drawings and errors show them, what its
// backward reads (input 0 and the output; β is in the state), and its recorded backward.
const OpDef kSwish{
    .name = "swish",
    .backward = swish_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return "β = " + number_text(n.state_as<SwishState>().beta); },
    .saves = saves::kInput0 | saves::kOutput,
    .grad_graph = swish_grad_graph};
TAPEGRAD_REGISTER_OP(kSwish);

template <class T>
void swish_forward(const Tensor& x, const Tensor& y, double beta) {
  const T* xv = x.data<T>();
  T* yv = output_data<T>(y);  // the output's values, for the forward to write
  const T b = static_cast<T>(beta);
  for (int64_t i = 0; i < x.numel(); ++i) yv[i] = xv[i] * sigmoid(b * xv[i]);
}

}  // namespace

// swish(x, β) = x · sigmoid(βx), elementwise, like torch's x * torch.sigmoid(beta * x).
Tensor swish(const Tensor& x, double beta = 1.0) {
  if (!std::isfinite(beta)) {  // bad input throws before anything is recorded
    throw Error("swish: beta must be finite, got " + number_text(beta));
  }
  Tensor y = x.tape().record(kSwish, x.shape(), x.dtype(), {x}, SwishState{beta});
  if (x.dtype() == DType::Float32) {
    swish_forward<float>(x, y, beta);
  } else {
    swish_forward<double>(x, y, beta);
  }
  return y;
}

int main() {
  // The backward against central differences, in float64, as torch.autograd.gradcheck does.
  const GradcheckReport report =
      gradcheck("swish", [](std::span<const Tensor> in) { return swish(in[0], 1.5); },
                {random_input({3, 4}, 7, -3.0, 3.0)});
  std::cout << report.message << "\n";
  // The recorded backward, differentiated again (torch.autograd.gradgradcheck).
  const GradcheckReport second =
      gradgradcheck("swish", [](std::span<const Tensor> in) { return swish(in[0], 1.5); },
                    {random_input({3, 4}, 8, -3.0, 3.0)});
  std::cout << second.message << "\n";

  // The op in a drawing, with its argument (render(dot, "svg", "swish.svg") draws it), on a
  // float32 input.
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-1.0, 0.5, 2.0})).set_name("x");  // [3] float32
  Tensor loss = sum(swish(x, 1.5));                                  // []
  loss.backward({.retain_graph = true});
  std::cout << "swish(x, 1.5) for x = " << x << ": loss " << loss.item() << ", x.grad =";
  for (double g : x.grad_values()) std::cout << " " << g;

  // The same in float64: one template, the other instance; float32 rounding apart, the same.
  Tensor x64 = requires_grad(tensor({-1.0, 0.5, 2.0}, DType::Float64));
  Tensor loss64 = sum(swish(x64, 1.5));
  loss64.backward();
  bool agree = std::abs(loss64.item() - loss.item()) <= 1e-6 * std::abs(loss64.item());
  for (size_t i = 0; i < 3; ++i)
    agree = agree && std::abs(x64.grad_values()[i] - x.grad_values()[i]) <= 1e-6;
  std::cout << "\nfloat32 and float64: " << (agree ? "agree" : "DIFFER") << " (float64 loss "
            << loss64.item() << ")";

  // A bad argument is an Error naming the op and the argument, before anything is recorded.
  bool refused = false;
  try {
    swish(x, std::nan(""));
  } catch (const Error& e) {
    refused = std::string(e.what()).find("swish: beta must be finite") != std::string::npos;
    std::cout << "\nbad input: " << e.what();
  }

  const std::string dot = to_dot(tape, {.title = "swish, a user's op"});
  const bool drawn =
      dot.find("swish") != std::string::npos && dot.find("β = 1.5") != std::string::npos;
  std::cout << "\ndrawing: " << (drawn ? "shows swish with β = 1.5" : "MISSING swish or β = 1.5")
            << "\n";
  return report.passed && second.passed && agree && refused && drawn ? 0 : 1;
}
