// Tests for ops/grad.cpp: grad and backward with create_graph, the functional family, and the
// second-order gradient check of every op that has a recorded backward.
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/ops/backward_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/losses.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/ops/pooling.h>
#include <tapegrad/viz/dot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace {

std::vector<double> values_of(const Tensor& t) {
  return t.values();
}

void require_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": " << a[i] << " vs " << b[i]);
    REQUIRE(std::abs(a[i] - b[i]) <= tol * (1.0 + std::abs(b[i])));
  }
}

Tensor f64(std::initializer_list<double> v, bool grad = true) {
  Tensor t = tensor(v, DType::Float64);
  return grad ? requires_grad(t) : t;
}

}  // namespace

TEST_CASE("grad: x³ differentiated three times", "[grad]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = f64({0.5, -2.0, 3.0});
  Tensor y = sum(x * x * x);
  Tensor d1 = grad(y, {x}, {.create_graph = true})[0];  // 3x²
  CHECK(values_of(d1) == std::vector<double>{0.75, 12.0, 27.0});
  CHECK(d1.requires_grad());
  Tensor d2 = grad(sum(d1), {x}, {.create_graph = true})[0];  // 6x
  CHECK(values_of(d2) == std::vector<double>{3.0, -12.0, 18.0});
  Tensor d3 = grad(sum(d2), {x})[0];  // 6
  CHECK(values_of(d3) == std::vector<double>{6.0, 6.0, 6.0});
  CHECK_FALSE(d3.requires_grad());
}

TEST_CASE("grad: leaves .grad untouched, backward(create_graph) accumulates into it", "[grad]") {
  Tape tape;
  TapeScope scope(tape);
  Parameter w = Parameter::from_values(Shape{2}, {1.0, 2.0}, DType::Float64, "w");
  Tensor x = f64({3.0, 4.0});
  Tensor loss = sum(mul(mul(w, w), x));  // Σ w²·x
  std::vector<Tensor> g = grad(std::vector<Tensor>{loss}, std::vector<Tensor>{Tensor(w), x}, {},
                               {.create_graph = true});
  CHECK(values_of(g[0]) == std::vector<double>{6.0, 16.0});  // 2·w·x
  CHECK(values_of(g[1]) == std::vector<double>{1.0, 4.0});   // w²
  CHECK_FALSE(w.has_grad());
  CHECK(x.grad_values().empty());
  // A gradient penalty: ‖∂loss/∂w‖², then its own backward into .grad.
  Tensor penalty = sum(mul(g[0], g[0]));  // Σ (2wx)² = Σ 4w²x²
  backward(std::vector<Tensor>{penalty});
  CHECK(w.grad_values() == std::vector<double>{72.0, 256.0});  // 8·w·x²
  CHECK(x.grad_values() == std::vector<double>{24.0, 128.0});  // 8·w²·x
}

TEST_CASE("grad without create_graph runs the kernels and leaves every .grad as it was", "[grad]") {
  Tape tape;
  TapeScope scope(tape);
  Parameter w = Parameter::from_values(Shape{2}, {1.0, 2.0}, DType::Float64, "w");
  Tensor x = requires_grad(f64({3.0, 4.0}));
  Tensor h = mul(mul(w, w), x);  // w²·x
  Tensor loss = sum(mul(h, h));  // Σ w⁴x²
  loss.backward({.retain_graph = true});
  const std::vector<double> w_grad = w.grad_values(), x_grad = x.grad_values();
  const std::vector<double> h_grad = h.grad_values();
  const std::vector<Tensor> wrt{Tensor(w), x, h};
  const std::vector<Tensor> fast = grad(std::vector<Tensor>{loss}, wrt, {}, {});
  CHECK(w.grad_values() == w_grad);
  CHECK(x.grad_values() == x_grad);
  CHECK(h.grad_values() == h_grad);
  CHECK(values_of(fast[0]) == std::vector<double>{36.0, 512.0});  // 4w³x²
  CHECK(values_of(fast[1]) == std::vector<double>{6.0, 128.0});   // 2w⁴x
  CHECK(values_of(fast[2]) == std::vector<double>{6.0, 32.0});    // 2h
  CHECK_FALSE(fast[0].requires_grad());
  // The tape counts as released afterwards, as torch's graph does.
  CHECK_THROWS_WITH(grad(std::vector<Tensor>{loss}, wrt, {}, {}),
                    Catch::Contains("grad") && Catch::Contains("retain_graph"));
}

TEST_CASE("backward(create_graph): .grad holds the first-order values", "[grad]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = f64({2.0, -1.0});
  backward(std::vector<Tensor>{sum(x * x * x)}, {}, {.create_graph = true});
  CHECK(x.grad_values() == std::vector<double>{12.0, 3.0});
  Tensor y = sum(x * x);
  backward(std::vector<Tensor>{y}, {}, {.create_graph = true});  // accumulates, as torch
  CHECK(x.grad_values() == std::vector<double>{16.0, 1.0});
}

TEST_CASE("grad: retain_graph as torch, errors name what is wrong", "[grad][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = f64({1.0, 2.0});
  Tensor c = f64({1.0, 2.0}, /*grad=*/false);
  Tensor y = sum(exp(x));
  CHECK_THROWS_WITH(grad(y, {c}), Catch::Contains("does not require grad"));
  Tensor unused = f64({5.0});
  CHECK_THROWS_WITH(grad(y, {unused}), Catch::Contains("allow_unused"));
  std::vector<Tensor> g =
      grad(std::vector<Tensor>{y}, std::vector<Tensor>{x, unused}, {}, {.allow_unused = true});
  CHECK(g[0].defined());
  CHECK_FALSE(g[1].defined());
  // The first grad did not retain the graph: another walk through it is an Error.
  CHECK_THROWS_WITH(grad(y, {x}), Catch::Contains("retain_graph"));
  CHECK_THROWS_WITH(tape.backward(y), Catch::Contains("retain_graph"));
}

TEST_CASE("grad: a non-scalar output needs its gradient, of its shape", "[grad][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = f64({1.0, 2.0});
  Tensor y = x * x;
  CHECK_THROWS_WITH(grad(y, {x}), Catch::Contains("not a scalar"));
  Tensor wrong = tensor({1.0, 2.0, 3.0}, DType::Float64);
  CHECK_THROWS_WITH(
      grad(std::vector<Tensor>{y}, std::vector<Tensor>{x}, std::vector<Tensor>{wrong}),
      Catch::Contains("[2]") && Catch::Contains("[3]"));
  Tensor v = tensor({1.0, 0.5}, DType::Float64);
  CHECK(values_of(grad(std::vector<Tensor>{y}, std::vector<Tensor>{x},
                       std::vector<Tensor>{v})[0]) == std::vector<double>{2.0, 2.0});
}

TEST_CASE("grad: the recorded backward is drawn beside the forward it reads", "[grad]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = f64({1.0, 2.0});
  Tensor e = exp(x);
  Tensor m = e * x;
  Tensor y = sum(m);
  grad(y, {x}, {.create_graph = true});
  REQUIRE(tape.size() > y.id() + 1);
  for (int32_t i = y.id() + 1; i < tape.size(); ++i) {
    if (tape.node(i).kind != NodeKind::Op) continue;  // the seed, the constants
    INFO(tape.describe_node(i));
    CHECK(tape.describe_node(i).find(" in backward") != std::string::npos);
  }
  const std::string dot = to_dot(tape);
  // A cluster per differentiated op, inside the "backward" cluster.
  CHECK(dot.find("mul #" + std::to_string(m.id())) != std::string::npos);
  CHECK(dot.find("exp #" + std::to_string(e.id())) != std::string::npos);
}

TEST_CASE("grad: w.r.t. an intermediate tensor", "[grad]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = f64({1.0, 2.0});
  Tensor h = exp(x);
  Tensor y = sum(h * h);
  CHECK(values_of(grad(y, {h})[0]) == values_of(scale(h, 2.0)));
}

namespace test_grad {

// An op with only a kernel backward (a user's op may leave grad_graph out); not registered, so
// the registry's checks do not see it.
void first_order_only_backward(Tape& tape, const Node& node) {
  if (double* d = tape.input_grad<double>(node, 0).to_add())
    d[0] += node.grad_as<const double>()[0];
}
const OpDef kFirstOrderOnly{.name = "first_order_only", .backward = first_order_only_backward};

}  // namespace test_grad

TEST_CASE("grad: an op without a recorded backward is an Error naming it", "[grad][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const auto record = [&tape](const Tensor& x) {
    Tensor y = tape.record(test_grad::kFirstOrderOnly, Shape{1}, DType::Float64, {x});
    output_data<double>(y)[0] = x.values()[0];
    return y;
  };
  Tensor x = requires_grad(tensor({2.0}, DType::Float64));
  record(x).backward();  // the kernel backward runs
  CHECK(x.grad_values() == std::vector<double>{1.0});
  tape.reset();
  Tensor x2 = requires_grad(tensor({2.0}, DType::Float64));
  CHECK_THROWS_WITH(grad(sum(record(x2)), {x2}),
                    Catch::Contains("first_order_only") && Catch::Contains("recorded backward"));
}

TEST_CASE("vjp, jvp, vhp and hvp against the Jacobian and Hessian", "[grad][functional]") {
  Tape tape;
  TapeScope scope(tape);
  // f(x, w) = tanh(x·W)·x₀ + Σ x²: not symmetric in its inputs, with a non-constant Hessian.
  const TensorFunction f = [](std::span<const Tensor> in) {
    return sum(tanh(matmul(in[0], in[1])) * in[0]) + sum(in[0] * in[0]);
  };
  const TensorFunction vector_f = [](std::span<const Tensor> in) {
    return tanh(matmul(in[0], in[1]));  // [2]
  };
  Tensor x = tensor({0.3, -0.7}, DType::Float64);
  Tensor w = tensor({{0.5, -1.0}, {2.0, 0.25}}, DType::Float64);
  const std::vector<Tensor> inputs{x, w};
  Tensor vx = tensor({1.0, -2.0}, DType::Float64);
  Tensor vw = tensor({{0.5, 0.0}, {-1.0, 3.0}}, DType::Float64);
  const std::vector<Tensor> v{vx, vw};

  // J of the vector function: [2, 2] w.r.t. x, [2, 2, 2] w.r.t. w.
  const std::vector<Tensor> jac = jacobian(vector_f, inputs);
  REQUIRE(jac[0].shape() == Shape{2, 2});
  REQUIRE(jac[1].shape() == Shape{2, 2, 2});
  const std::vector<double> jx = jac[0].values(), jw = jac[1].values();
  const std::vector<double> vxv = vx.values(), vwv = vw.values();
  // jvp: J·v summed over both inputs.
  std::vector<double> jv(2, 0.0);
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 2; ++i) jv[o] += jx[o * 2 + i] * vxv[i];
    for (int i = 0; i < 4; ++i) jv[o] += jw[o * 4 + i] * vwv[i];
  }
  require_close(jvp(vector_f, inputs, v).results[0].values(), jv, 1e-12);
  // vjp: uᵀ·J per input.
  Tensor u = tensor({0.5, -1.5}, DType::Float64);
  const FunctionalResult vj = vjp(vector_f, inputs, u);
  std::vector<double> ujx(2, 0.0), ujw(4, 0.0);
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 2; ++i) ujx[i] += u.values()[o] * jx[o * 2 + i];
    for (int i = 0; i < 4; ++i) ujw[i] += u.values()[o] * jw[o * 4 + i];
  }
  require_close(vj.results[0].values(), ujx, 1e-12);
  require_close(vj.results[1].values(), ujw, 1e-12);

  // H of the scalar function, by blocks; hvp and vhp against H·v (H symmetric: both agree).
  const std::vector<std::vector<Tensor>> h = hessian(f, inputs);
  REQUIRE(h[0][1].shape() == Shape{2, 2, 2});
  REQUIRE(h[1][0].shape() == Shape{2, 2, 2});
  std::vector<std::vector<double>> hv(2);
  const std::vector<std::vector<double>> vv{vxv, vwv};
  for (size_t i = 0; i < 2; ++i) {
    const size_t ni = i == 0 ? 2 : 4;
    hv[i].assign(ni, 0.0);
    for (size_t j = 0; j < 2; ++j) {
      const std::vector<double> block = h[i][j].values();
      const size_t nj = vv[j].size();
      for (size_t a = 0; a < ni; ++a) {
        for (size_t b = 0; b < nj; ++b) hv[i][a] += block[a * nj + b] * vv[j][b];
      }
    }
  }
  const FunctionalResult hvp_result = hvp(f, inputs, v);
  const FunctionalResult vhp_result = vhp(f, inputs, v);
  for (size_t i = 0; i < 2; ++i) {
    require_close(hvp_result.results[i].values(), hv[i], 1e-12);
    require_close(vhp_result.results[i].values(), hv[i], 1e-12);
  }
  // The Hessian is symmetric: block (0, 1) is block (1, 0) transposed.
  const std::vector<double> h01 = h[0][1].values(), h10 = h[1][0].values();
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 4; ++b) CHECK(std::abs(h01[a * 4 + b] - h10[b * 2 + a]) < 1e-12);
  }
}

TEST_CASE("hessian of a quadratic form is A + Aᵀ, exactly", "[grad][functional]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = tensor({{1.0, 2.0}, {3.0, 5.0}}, DType::Float64);
  const TensorFunction f = [&](std::span<const Tensor> in) {
    return sum(in[0] * matmul(a, in[0]));  // xᵀ·A·x
  };
  const auto h = hessian(f, std::vector<Tensor>{tensor({0.25, -4.0}, DType::Float64)});
  CHECK(h[0][0].values() == std::vector<double>{2.0, 5.0, 5.0, 10.0});
}

TEST_CASE("functional errors name the function and the mismatch", "[grad][functional][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const TensorFunction f = [](std::span<const Tensor> in) { return in[0] * in[0]; };
  const std::vector<Tensor> x{tensor({1.0, 2.0}, DType::Float64)};
  const std::vector<Tensor> v{tensor({1.0}, DType::Float64)};
  CHECK_THROWS_WITH(jvp(f, x, v), Catch::Contains("jvp") && Catch::Contains("[1]"));
  CHECK_THROWS_WITH(hvp(f, x, std::vector<Tensor>{tensor({1.0, 1.0}, DType::Float64)}),
                    Catch::Contains("one element"));
}

TEST_CASE("a MAML step: the outer gradient through an inner SGD step", "[grad]") {
  // w' = w − α·∂L_in(w)/∂w, L_out(w'): its gradient w.r.t. w against central differences.
  const auto outer = [](std::span<const Tensor> in) {
    const Tensor w = in[0];
    const Tensor x = tensor({{1.0, -0.5}, {0.25, 2.0}}, DType::Float64);
    const Tensor inner_loss = mean(tanh(matmul(x, w)) * tanh(matmul(x, w)));
    const Tensor dw = grad(inner_loss, {w}, {.create_graph = true})[0];
    const Tensor adapted = w - scale(dw, 0.5);
    return sum(sigmoid(matmul(x, adapted)));
  };
  auto report = gradcheck("maml", outer, {random_input({2, 3}, 11)});
  INFO(report.message);
  CHECK(report.passed);
}

// --- every recorded backward: second-order check and agreement with the kernel backward ------

namespace {

struct SecondOrderCase {
  const char* op;
  GradcheckFunction f;
  std::vector<GradcheckInput> inputs;
};

GradcheckInput away_from_zero(const Shape& shape, uint64_t seed) {
  GradcheckInput in = random_input(shape, seed, 0.2, 1.5);
  for (size_t i = 0; i < in.values.size(); i += 2) in.values[i] = -in.values[i];
  return in;
}

std::vector<SecondOrderCase> second_order_cases() {
  using S = std::span<const Tensor>;
  const auto r = [](const Shape& s, uint64_t seed) { return random_input(s, seed); };
  const auto pos = [](const Shape& s, uint64_t seed) { return random_input(s, seed, 0.5, 2.0); };
  return {
      {"add", [](S in) { return add(in[0], in[1]); }, {r({2, 3}, 1), r({3}, 2)}},
      {"sub", [](S in) { return sub(in[0], in[1]); }, {r({2, 1}, 3), r({2, 3}, 4)}},
      {"mul", [](S in) { return mul(in[0], in[1]); }, {r({2, 3}, 5), r({1, 3}, 6)}},
      {"div", [](S in) { return div(in[0], in[1]); }, {r({2, 3}, 7), pos({3}, 8)}},
      {"scale", [](S in) { return scale(in[0], -1.5) * in[0]; }, {r({4}, 9)}},
      {"scale", [](S in) { return div_scalar(in[0] * in[0], 3.0); }, {r({4}, 10)}},
      {"add_scalar", [](S in) { return add_scalar(in[0] * in[0], 2.0); }, {r({3}, 11)}},
      {"neg", [](S in) { return neg(in[0] * in[0]); }, {r({3}, 12)}},
      {"reciprocal", [](S in) { return reciprocal(in[0]); }, {pos({3}, 13)}},
      {"exp", [](S in) { return exp(in[0]); }, {r({2, 2}, 14)}},
      {"log", [](S in) { return log(in[0]); }, {pos({3}, 15)}},
      {"sqrt", [](S in) { return sqrt(in[0]); }, {pos({3}, 16)}},
      {"pow", [](S in) { return pow(in[0], 3.0); }, {r({3}, 17)}},
      {"pow", [](S in) { return pow(in[0], -0.5); }, {pos({3}, 18)}},
      {"pow", [](S in) { return pow(in[0], 0.0) * in[0]; }, {r({3}, 19)}},
      {"tanh", [](S in) { return tanh(in[0]); }, {r({3}, 20)}},
      {"sigmoid", [](S in) { return sigmoid(in[0]); }, {r({3}, 21)}},
      {"silu", [](S in) { return silu(in[0]); }, {r({3}, 22)}},
      {"relu", [](S in) { return relu(in[0]) * in[0]; }, {away_from_zero({4}, 23)}},
      {"leaky_relu",
       [](S in) { return leaky_relu(in[0], 0.2) * in[0]; },
       {away_from_zero({4}, 324)}},
      {"elu", [](S in) { return elu(in[0], 0.5); }, {away_from_zero({2, 3}, 325)}},
      {"softplus", [](S in) { return softplus(in[0]); }, {r({2, 3}, 326)}},
      {"softplus", [](S in) { return softplus(in[0], 2.0, 1.0); }, {away_from_zero({2, 3}, 327)}},
      {"mish", [](S in) { return mish(in[0]); }, {r({2, 3}, 328)}},
      {"gelu", [](S in) { return gelu(in[0], "tanh"); }, {r({2, 3}, 24)}},
      {"gelu_erf", [](S in) { return gelu(in[0]); }, {r({2, 3}, 329)}},
      {"gelu_backward",
       [](S in) { return gelu_backward(in[0], in[1], "tanh"); },
       {r({2, 3}, 412), r({2, 3}, 413)}},
      {"gelu_erf_backward",
       [](S in) { return gelu_backward(in[0], in[1]); },
       {r({2, 3}, 414), r({2, 3}, 415)}},
      {"linear_weight_backward",
       [](S in) { return linear_weight_backward(in[0], in[1]); },
       {r({2, 2, 3}, 416), r({2, 2, 4}, 417)}},
      {"sum", [](S in) { return sum(in[0] * in[0]); }, {r({2, 3}, 25)}},
      {"sum_dim", [](S in) { return sum(in[0] * in[0], 1); }, {r({2, 3, 2}, 26)}},
      {"sum_dim", [](S in) { return sum(in[0] * in[0], -1, true); }, {r({2, 3}, 27)}},
      {"mean", [](S in) { return mean(in[0] * in[0]); }, {r({2, 3}, 28)}},
      {"mean_dim", [](S in) { return mean(in[0] * in[0], 0); }, {r({3, 2}, 29)}},
      {"conv2d",
       [](S in) { return conv2d(in[0], in[1], in[2], 2, 1, 1, 2); },
       {r({1, 4, 4, 3}, 340), r({2, 2, 2, 2}, 341), r({2}, 342)}},
      {"conv_transpose2d",
       [](S in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1, 1); },
       {r({1, 2, 2, 3}, 343), r({2, 2, 3, 2}, 344), r({2}, 345)}},
      {"conv2d_weight_grad",
       [](S in) {
         // conv2d's weight gradient, recorded: dW = conv2d_weight_grad(dY = in[1], X = in[0]).
         const Tensor w = from_values(
             {2, 1, 2, 2}, std::vector<double>{0.5, -0.3, 0.2, 0.8, -0.6, 0.1, 0.4, -0.2},
             DType::Float64, true);
         const Tensor y = conv2d(in[0], w, Tensor(), 1, 0, {1, 2}, 1);
         return grad(std::vector<Tensor>{y}, std::vector<Tensor>{w}, std::vector<Tensor>{in[1]},
                     {.create_graph = true})[0];
       },
       {r({1, 1, 3, 4}, 346), r({1, 2, 2, 2}, 347)}},
      {"matmul", [](S in) { return matmul(in[0], in[1]); }, {r({2, 3}, 30), r({3, 2}, 31)}},
      {"matmul",
       [](S in) { return matmul(in[0], in[1]); },
       {r({2, 1, 2, 3}, 32), r({3, 3, 2}, 33)}},
      {"matmul", [](S in) { return matmul(in[0], in[1]); }, {r({3}, 34), r({2, 3, 2}, 35)}},
      {"matmul", [](S in) { return matmul(in[0], in[1]); }, {r({2, 3}, 36), r({3}, 37)}},
      {"matmul", [](S in) { return dot(in[0], in[1]); }, {r({3}, 38), r({3}, 39)}},
      {"linear",
       [](S in) { return linear(in[0], in[1], in[2]); },
       {r({2, 2, 3}, 40), r({4, 3}, 41), r({4}, 42)}},
      {"linear", [](S in) { return linear(in[0], in[1]); }, {r({3}, 43), r({2, 3}, 44)}},
      {"transpose", [](S in) { return transpose(in[0] * in[0], 0, 2); }, {r({2, 3, 2}, 45)}},
      {"reshape",
       [](S in) {
         return reshape(in[0] * in[0], {3, 2});
       },
       {r({2, 3}, 46)}},
      {"expand",
       [](S in) {
         return expand(in[0] * in[0], Shape{2, 3, 2});
       },
       {r({3, 1}, 47)}},
      {"sum_to_size",
       [](S in) {
         return sum_to_size(in[0] * in[0], Shape{3, 1});
       },
       {r({2, 3, 2}, 48)}},
      {"softmax", [](S in) { return softmax(in[0], 0); }, {r({3, 2}, 49)}},
      {"log_softmax", [](S in) { return log_softmax(in[0], -1); }, {r({2, 3}, 50)}},
      {"mse_loss", [](S in) { return mse_loss(in[0], in[1]); }, {r({2, 3}, 51), r({2, 3}, 52)}},
      {"masked_fill",
       [](S in) {
         const Tensor mask = tensor({{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}}, DType::Float64);
         return masked_fill(in[0] * in[0], mask, 5.0);
       },
       {r({2, 3}, 53)}},
      {"where",
       [](S in) {
         return where(tensor({1.0, 0.0, 1.0}, DType::Float64), in[0] * in[0], in[1] * in[0]);
       },
       {r({2, 3}, 54), r({3}, 55)}},
      {"dropout",
       [](S in) {
         Generator generator(123);
         return dropout(in[0] * in[0], 0.4, true, generator);
       },
       {r({3, 4}, 56)}},
      {"causal_mask", [](S in) { return causal_mask(in[0] * in[0], 0.5); }, {r({3, 3}, 57)}},
      {"tril", [](S in) { return tril(in[0] * in[0], 1); }, {r({3, 4}, 58)}},
      {"triu", [](S in) { return triu(in[0] * in[0], -1); }, {r({3, 4}, 59)}},
      {"split_heads", [](S in) { return split_heads(in[0] * in[0], 2); }, {r({1, 2, 4}, 60)}},
      {"merge_heads", [](S in) { return merge_heads(in[0] * in[0]); }, {r({1, 2, 3, 2}, 61)}},
      {"narrow", [](S in) { return narrow(in[0] * in[0], 1, 1, 2); }, {r({2, 4}, 62)}},
      {"select", [](S in) { return select(in[0] * in[0], 0, 1); }, {r({3, 2}, 63)}},
      {"cat",
       [](S in) {
         return cat({in[0] * in[0], in[1]}, 1);
       },
       {r({2, 1}, 64), r({2, 3}, 65)}},
      {"max_dim", [](S in) { return max(in[0] * in[0], 1); }, {r({2, 4}, 66)}},
      {"embedding",
       [](S in) {
         return embedding(in[0] * in[0], std::vector<int64_t>{2, 0, 2}, Shape{3});
       },
       {r({3, 2}, 67)}},
      {"cross_entropy",
       [](S in) {
         return cross_entropy(in[0], std::vector<int64_t>{1, -100, 0});
       },
       {r({3, 4}, 68)}},
      {"layer_norm",
       [](S in) { return layer_norm(in[0], in[1], in[2], 1e-3); },
       {r({2, 4}, 69), r({4}, 70), r({4}, 71)}},
      {"causal_softmax", [](S in) { return causal_softmax(in[0], 2.0); }, {r({3, 3}, 72)}},
      {"rms_norm",
       [](S in) { return rms_norm(in[0], in[1], in[2], 1e-3); },
       {r({2, 4}, 160), r({4}, 161), r({4}, 162)}},
      {"rope",
       [](S in) { return rope(in[0] * in[0], in[1], in[2]); },
       {r({2, 3, 4}, 163), r({4, 4}, 164), r({4, 4}, 165)}},
      {"causal_attention",
       [](S in) { return causal_attention(in[0], in[1], in[2], 2); },
       {r({1, 3, 4}, 73), r({1, 3, 4}, 74), r({1, 3, 4}, 75)}},
      {"grouped_query_attention",
       [](S in) { return grouped_query_attention(in[0], in[1], in[2]); },
       {r({1, 4, 3, 2}, 166), r({1, 2, 3, 2}, 167), r({1, 2, 3, 2}, 168)}},
      {"causal_dot_product_attention",
       [](S in) {
         Generator generator(5);
         return causal_dot_product_attention(in[0], in[1], in[2], 2, 0.3, true, generator);
       },
       {r({1, 3, 4}, 76), r({1, 3, 4}, 77), r({1, 3, 4}, 78)}},
      {"top_k_filter", [](S in) { return top_k_filter(in[0] * in[0], 2); }, {r({2, 4}, 79)}},
      {"square", [](S in) { return square(in[0]); }, {r({2, 3}, 80)}},
      {"rsqrt", [](S in) { return rsqrt(in[0]); }, {pos({3}, 81)}},
      {"exp2", [](S in) { return exp2(in[0]); }, {r({3}, 82)}},
      {"log2", [](S in) { return log2(in[0]); }, {pos({3}, 83)}},
      {"log10", [](S in) { return log10(in[0]); }, {pos({3}, 84)}},
      {"sin", [](S in) { return sin(in[0]); }, {r({2, 2}, 85)}},
      {"cos", [](S in) { return cos(in[0]); }, {r({2, 2}, 86)}},
      {"tan", [](S in) { return tan(in[0]); }, {random_input({3}, 120, -1.2, 1.2)}},
      {"asin", [](S in) { return asin(in[0]); }, {random_input({3}, 121, -0.9, 0.9)}},
      {"acos", [](S in) { return acos(in[0]); }, {random_input({3}, 122, -0.9, 0.9)}},
      {"atan", [](S in) { return atan(in[0]); }, {r({3}, 123)}},
      {"sinh", [](S in) { return sinh(in[0]); }, {r({3}, 124)}},
      {"cosh", [](S in) { return cosh(in[0]); }, {r({3}, 125)}},
      {"asinh", [](S in) { return asinh(in[0]); }, {r({3}, 126)}},
      {"acosh", [](S in) { return acosh(in[0]); }, {random_input({3}, 127, 1.2, 3.0)}},
      {"atanh", [](S in) { return atanh(in[0]); }, {random_input({3}, 128, -0.9, 0.9)}},
      {"log1p", [](S in) { return log1p(in[0]); }, {random_input({3}, 129, -0.5, 2.0)}},
      {"expm1", [](S in) { return expm1(in[0]); }, {r({3}, 130)}},
      {"erf", [](S in) { return erf(in[0]); }, {r({3}, 131)}},
      {"erfc", [](S in) { return erfc(in[0]); }, {r({3}, 132)}},
      {"trunc",
       [](S in) { return trunc(in[0]) * in[0] * in[0]; },
       {random_input({3}, 133, 1.1, 1.9)}},
      {"frac", [](S in) { return frac(in[0]) * in[0]; }, {random_input({3}, 134, 1.1, 1.9)}},
      {"atan2", [](S in) { return atan2(in[0], in[1]); }, {r({2, 3}, 135), pos({3}, 136)}},
      {"logaddexp", [](S in) { return logaddexp(in[0], in[1]); }, {r({2, 1}, 137), r({3}, 138)}},
      // fmod's and remainder's quotients are piecewise constant: a·(·) keeps a second derivative.
      {"fmod",
       [](S in) { return fmod(in[0], in[1]) * in[1]; },
       {random_input({3}, 139, 0.2, 0.8), random_input({3}, 140, 1.0, 2.0)}},
      {"remainder",
       [](S in) { return remainder(in[0], in[1]) * in[1]; },
       {random_input({3}, 141, -0.8, -0.2), random_input({3}, 142, 1.0, 2.0)}},
      // Piecewise: abs'' and the masks' derivatives are zero; x² around each keeps a second
      // derivative to check. Inputs away from the kinks (0, the clamp bounds, ties).
      {"abs", [](S in) { return abs(in[0]) * in[0]; }, {away_from_zero({4}, 87)}},
      {"binary_cross_entropy",
       [](S in) { return binary_cross_entropy_elementwise(in[0], in[1]); },
       {random_input({2, 3}, 200, 0.2, 0.8), random_input({2, 3}, 201, 0.0, 1.0)}},
      {"sign", [](S in) { return sign(in[0]) * in[0] * in[0]; }, {away_from_zero({4}, 88)}},
      {"clamp", [](S in) { return clamp(in[0] * in[0], 0.3, 0.8); }, {r({2, 3}, 89)}},
      {"clamp", [](S in) { return clamp_max(in[0] * in[0], 0.5); }, {r({4}, 90)}},
      // clamp with tensor bounds: composed of where (no op of its own).
      {"where",
       [](S in) { return clamp(in[0] * in[0], in[1], in[2]); },
       {random_input({2, 3}, 306, -1.5, 1.5), random_input({3}, 307, 0.2, 0.6),
        random_input({2, 1}, 308, 0.9, 1.4)}},
      {"maximum", [](S in) { return maximum(in[0] * in[0], in[1]); }, {r({2, 3}, 91), r({3}, 92)}},
      {"minimum",
       [](S in) { return minimum(in[0], in[1] * in[1]); },
       {r({2, 1}, 93), r({2, 3}, 94)}},
      {"floor",
       [](S in) { return floor(in[0]) * in[0] * in[0]; },
       {random_input({3}, 95, 1.1, 1.9)}},
      {"ceil", [](S in) { return ceil(in[0]) * in[0] * in[0]; }, {random_input({3}, 96, 1.1, 1.9)}},
      {"round",
       [](S in) { return round(in[0]) * in[0] * in[0]; },
       {random_input({3}, 97, 0.6, 1.4)}},
      // No gradient flows through a comparison or isnan...: each is a constant mask here (both
      // operands also reach the output through mul, so grad() finds them).
      {"eq",
       [](S in) { return in[0] * in[1] * (eq(in[0], in[1]) + 1.0); },
       {r({2, 3}, 98), r({3}, 99)}},
      {"ne", [](S in) { return in[0] * in[1] * ne(in[0], in[1]); }, {r({2, 3}, 100), r({3}, 101)}},
      {"lt", [](S in) { return in[0] * in[0] * lt(in[0], 0.1); }, {r({2, 3}, 102)}},
      {"le", [](S in) { return in[0] * in[1] * le(in[0], in[1]); }, {r({2, 3}, 103), r({3}, 104)}},
      {"gt",
       [](S in) { return in[0] * in[1] * gt(in[0], in[1]); },
       {r({2, 3}, 105), r({2, 1}, 106)}},
      {"ge", [](S in) { return in[0] * in[0] * ge(in[0], -0.2); }, {r({2, 3}, 107)}},
      {"isnan", [](S in) { return in[0] * in[0] * (isnan(in[0]) + 1.0); }, {r({3}, 108)}},
      {"isinf", [](S in) { return in[0] * in[0] * (isinf(in[0]) + 1.0); }, {r({3}, 109)}},
      {"isfinite", [](S in) { return in[0] * in[0] * isfinite(in[0]); }, {r({3}, 110)}},
      // reductions (issue #35)
      {"amax", [](S in) { return amax(in[0] * in[0], {1}); }, {r({2, 4}, 201)}},
      {"amin",
       [](S in) {
         return amin(in[0] * in[0], {0, -1}, true);
       },
       {r({2, 3, 2}, 202)}},
      {"max", [](S in) { return max(in[0] * in[0]); }, {r({2, 3}, 203)}},
      {"min", [](S in) { return min(in[0] * in[0]); }, {r({2, 3}, 204)}},
      {"min_dim", [](S in) { return min(in[0] * in[0], 1); }, {r({2, 4}, 205)}},
      {"sum_dims",
       [](S in) {
         return sum(in[0] * in[0], {0, 2});
       },
       {r({2, 3, 2}, 206)}},
      {"mean_dims",
       [](S in) {
         return mean(in[0] * in[0], {0, -1}, true);
       },
       {r({2, 3}, 207)}},
      {"var", [](S in) { return var(in[0], {1}); }, {r({2, 4}, 208)}},
      {"var", [](S in) { return var(in[0], {}, 0); }, {r({2, 3}, 209)}},
      {"std", [](S in) { return tapegrad::std(in[0], {0}, 1, true); }, {r({3, 2}, 210)}},
      {"logsumexp",
       [](S in) {
         return logsumexp(in[0], {0, 1});
       },
       {r({2, 3}, 211)}},
      {"logsumexp", [](S in) { return logsumexp(in[0], -1, true); }, {r({2, 3}, 212)}},
      {"prod", [](S in) { return prod(in[0]); }, {pos({2, 3}, 213)}},
      {"prod_dim", [](S in) { return prod(in[0], 1); }, {r({2, 3}, 214)}},
      {"norm", [](S in) { return norm(in[0], 2.0, {1}); }, {r({2, 3}, 215)}},
      {"norm", [](S in) { return norm(in[0] * in[0], 1.0, {0}); }, {r({2, 3}, 216)}},
      {"norm",
       [](S in) { return norm(in[0] * in[0], std::numeric_limits<double>::infinity(), {1}); },
       {r({2, 3}, 217)}},
      {"cumsum", [](S in) { return cumsum(in[0] * in[0], 1); }, {r({2, 3}, 218)}},
      {"cumprod", [](S in) { return cumprod(in[0], 0); }, {r({3, 2}, 219)}},
      // Shapes and indexing: x² inside keeps a second derivative to check; repeated indices
      // where the op adds them up.
      {"squeeze", [](S in) { return squeeze(in[0] * in[0]); }, {r({2, 1, 3}, 301)}},
      {"unsqueeze", [](S in) { return unsqueeze(in[0] * in[0], 1); }, {r({2, 3}, 302)}},
      {"flatten", [](S in) { return flatten(in[0] * in[0], 1); }, {r({2, 3, 2}, 303)}},
      {"unflatten",
       [](S in) {
         return unflatten(in[0] * in[0], 1, {3, -1});
       },
       {r({2, 6}, 304)}},
      {"permute",
       [](S in) {
         return permute(in[0] * in[0], {2, 0, 1});
       },
       {r({2, 3, 2}, 305)}},
      {"movedim", [](S in) { return movedim(in[0] * in[0], 0, 2); }, {r({2, 3, 2}, 306)}},
      {"stack",
       [](S in) {
         return stack({in[0] * in[0], in[1]}, 1);
       },
       {r({2, 3}, 307), r({2, 3}, 308)}},
      {"flip",
       [](S in) {
         return flip(in[0] * in[0], {0, 1});
       },
       {r({2, 3}, 309)}},
      {"roll",
       [](S in) {
         return roll(in[0] * in[0], {1, -1}, {0, 1});
       },
       {r({2, 3}, 310)}},
      {"roll", [](S in) { return roll(in[0] * in[0], 2); }, {r({2, 3}, 311)}},
      {"repeat",
       [](S in) {
         return repeat(in[0] * in[0], {2, 1, 2});
       },
       {r({2, 3}, 312)}},
      {"repeat_interleave",
       [](S in) { return repeat_interleave(in[0] * in[0], 2, 1); },
       {r({2, 3}, 313)}},
      {"index_select",
       [](S in) {
         return index_select(in[0] * in[0], 0, Ids::from_row({2, 0, 2}));
       },
       {r({3, 2}, 314)}},
      {"gather",
       [](S in) {
         return gather(in[0] * in[0], 1, Ids::from_rows({{0, 0}, {2, 1}}));
       },
       {r({2, 3}, 315)}},
      {"scatter",
       [](S in) {
         return scatter(in[0] * in[0], 1, Ids::from_rows({{2}, {0}}), in[1] * in[1]);
       },
       {r({2, 3}, 316), r({2, 1}, 317)}},
      {"scatter",
       [](S in) {
         return scatter(in[0] * in[0], 0, Ids::from_rows({{1, 0}}), 0.5);
       },
       {r({2, 2}, 318)}},
      {"scatter_add",
       [](S in) {
         return scatter_add(in[0] * in[0], 1, Ids::from_rows({{0, 0, 2}, {1, 1, 1}}),
                            in[1] * in[1]);
       },
       {r({2, 3}, 319), r({2, 3}, 320)}},
      {"index_add",
       [](S in) {
         return index_add(in[0] * in[0], 0, Ids::from_row({1, 1}), in[1] * in[1], 2.0);
       },
       {r({3, 2}, 321), r({2, 2}, 322)}},
      {"topk", [](S in) { return topk(in[0] * in[0], 2, 1).values; }, {r({2, 4}, 323)}},
      {"max_pool2d", [](S in) { return max_pool2d(in[0] * in[0], 2, 1); }, {r({1, 2, 3, 4}, 330)}},
      {"max_pool1d", [](S in) { return max_pool1d(in[0] * in[0], 2, 1, 1); }, {r({2, 5}, 331)}},
      {"adaptive_max_pool2d",
       [](S in) {
         return adaptive_max_pool2d(in[0] * in[0], {2, 3});
       },
       {r({1, 2, 3, 4}, 332)}},
      {"avg_pool2d",
       [](S in) { return avg_pool2d(in[0] * in[0], 3, 2, 1, true, false); },
       {r({1, 2, 5, 4}, 333)}},
      {"avg_pool1d", [](S in) { return avg_pool1d(in[0] * in[0], 3, 2, 1); }, {r({2, 6}, 334)}},
      {"adaptive_avg_pool2d",
       [](S in) {
         return adaptive_avg_pool2d(in[0] * in[0], {2, 3});
       },
       {r({1, 2, 3, 4}, 335)}},
      {"avg_pool_backward",
       [](S in) {
         const Tensor x = requires_grad(zeros({1, 2, 5, 4}, DType::Float64));
         const Tensor y = avg_pool2d(x, 3, 2, 1);
         return grad(std::vector<Tensor>{y}, std::vector<Tensor>{x},
                     std::vector<Tensor>{in[0] * in[0]}, {.create_graph = true})[0];
       },
       {r({1, 2, 3, 2}, 336)}},
      {"interpolate",
       [](S in) {
         return interpolate(in[0] * in[0],
                            {.size = Size2{5, 3}, .mode = InterpolateMode::Bilinear});
       },
       {r({1, 2, 3, 4}, 337)}},
      {"interpolate_backward",
       [](S in) {
         const Tensor x = requires_grad(zeros({1, 2, 3, 4}, DType::Float64));
         const Tensor y = interpolate(x, {.size = Size2{5, 3}, .mode = InterpolateMode::Bilinear});
         return grad(std::vector<Tensor>{y}, std::vector<Tensor>{x},
                     std::vector<Tensor>{in[0] * in[0]}, {.create_graph = true})[0];
       },
       {r({1, 2, 5, 3}, 338)}},
      // sorting, lerp, pow with a tensor exponent, the logical ops, any/all, isclose (#35)
      {"topk", [](S in) { return topk(in[0] * in[0], 2, 1, false).values; }, {r({2, 4}, 329)}},
      {"sort", [](S in) { return sort(in[0] * in[0], 1, true).values; }, {r({2, 4}, 330)}},
      {"sort", [](S in) { return sort(in[0] * in[0], 0, false, true).values; }, {r({3, 2}, 331)}},
      {"lerp_scalar",
       [](S in) { return lerp(in[0] * in[0], in[1] * in[1], 0.3); },
       {r({2, 3}, 332), r({3}, 333)}},
      {"lerp_scalar",
       [](S in) { return lerp(in[0], in[1] * in[0], 0.8); },
       {r({3}, 334), r({3}, 335)}},
      {"lerp",
       [](S in) { return lerp(in[0] * in[0], in[1], in[2] * in[2]); },
       {r({2, 3}, 336), r({2, 1}, 337), r({3}, 338)}},
      {"pow_tensor",
       [](S in) { return pow(in[0], in[1] * in[1]); },
       {pos({2, 3}, 339), r({3}, 340)}},
      {"pow_tensor", [](S in) { return pow(2.5, in[0] * in[0]); }, {r({2, 2}, 341)}},
      {"logical_and",
       [](S in) { return in[0] * in[1] * (logical_and(in[0], in[1]) + 1.0); },
       {r({2, 3}, 341), r({3}, 342)}},
      {"logical_or",
       [](S in) { return in[0] * in[1] * logical_or(in[0], in[1]); },
       {r({2, 3}, 343), r({3}, 344)}},
      {"logical_xor",
       [](S in) { return in[0] * in[1] * (logical_xor(in[0], in[1]) + 1.0); },
       {r({2, 3}, 345), r({3}, 346)}},
      {"logical_not",
       [](S in) { return in[0] * in[0] * (logical_not(in[0]) + 1.0); },
       {r({3}, 347)}},
      {"any", [](S in) { return in[0] * in[0] * any(in[0], 1, true); }, {r({2, 3}, 348)}},
      {"all", [](S in) { return in[0] * in[0] * all(in[0]); }, {r({2, 3}, 349)}},
      {"isclose",
       [](S in) { return in[0] * in[1] * (isclose(in[0], in[1], 0.5, 0.1) + 1.0); },
       {r({2, 3}, 350), r({3}, 351)}},
      {"diagonal", [](S in) { return diagonal(in[0] * in[0], 1, 1, 0); }, {r({3, 2, 4}, 352)}},
      {"diag_embed", [](S in) { return diag(in[0] * in[0], -1); }, {r({3}, 353)}},
      {"pad",
       [](S in) {
         return pad(in[0] * in[0], {2, 1, -1, 1}, PadMode::Reflect);
       },
       {r({1, 3, 4}, 354)}},
      {"pad",
       [](S in) {
         return pad(in[0] * in[0], {1, 2}, PadMode::Constant, 0.5);
       },
       {r({2, 3}, 355)}},
      {"pad_backward",
       [](S in) {
         const Tensor y = pad(in[0] * in[0], {2, 3}, PadMode::Circular);
         return grad(sum(y * y * y), {in[0]}, {.create_graph = true})[0];
       },
       {r({1, 4}, 356)}},
      // cummax/cummin/logcumsumexp, slice, masked_select (#35, last batch)
      {"cummax", [](S in) { return cummax(in[0] * in[0], 1).values; }, {r({2, 4}, 357)}},
      {"cummin", [](S in) { return cummin(in[0] * in[0], 0).values; }, {r({3, 2}, 358)}},
      {"logcumsumexp", [](S in) { return logcumsumexp(in[0] * in[0], 1); }, {r({2, 3}, 359)}},
      {"slice", [](S in) { return slice(in[0] * in[0], 1, -4, 5, 2); }, {r({2, 5}, 360)}},
      {"masked_select",
       [](S in) {
         return masked_select(
             in[0] * in[0],
             from_values({2, 3}, std::vector<double>{1, 0, 1, 0, 1, 1}, DType::Float64));
       },
       {r({3}, 361)}},
  };
}

// The ops with no recorded backward yet (grad() and create_graph stop at them with an Error).
const std::set<std::string> kWithoutRecordedBackward{};

}  // namespace

TEST_CASE("gradgradcheck: every op with a recorded backward", "[grad][gradgradcheck]") {
  for (const SecondOrderCase& c : second_order_cases()) {
    INFO(c.op);
    const GradcheckReport report = gradgradcheck(c.op, c.f, c.inputs);
    testing::require_gradcheck(report, c.op);
  }
}

TEST_CASE("the recorded backward gives the kernel backward's gradients", "[grad]") {
  // The two forms of one formula (docs/design.md): equal up to rounding on every case above.
  for (const SecondOrderCase& c : second_order_cases()) {
    INFO(c.op);
    Tape tape;
    TapeScope scope(tape);
    std::vector<Tensor> x;
    for (const GradcheckInput& in : c.inputs) {
      x.push_back(from_values(in.shape, in.values, DType::Float64, true));
    }
    const Tensor y = c.f(x);
    const Tensor v = from_values(y.shape(), random_input(y.shape(), 99).values, DType::Float64);
    const Tensor loss = sum(y * v);
    const std::vector<Tensor> recorded =
        grad(std::vector<Tensor>{loss}, x, {}, {.retain_graph = true});
    tape.backward(loss);
    for (size_t k = 0; k < x.size(); ++k)
      require_close(recorded[k].values(), x[k].grad_values(), 1e-12);
  }
}

TEST_CASE("every op has a recorded backward, a second-order case, or is listed without one",
          "[grad][registry]") {
  std::set<std::string> covered;
  for (const SecondOrderCase& c : second_order_cases()) covered.insert(c.op);
  const std::set<std::string> inference_only{"linear_bf16", "cached_attention"};
  for (const OpDef* op : registered_ops()) {
    INFO(op->name);
    if (op->grad_graph != nullptr) {
      CHECK(covered.count(op->name) == 1);
      CHECK(kWithoutRecordedBackward.count(op->name) == 0);
    } else {
      CHECK((kWithoutRecordedBackward.count(op->name) + inference_only.count(op->name)) == 1);
    }
  }
}
