// Tests for anomaly mode (graph/tape.h AnomalyMode): NaN/Inf traced to the op and the place in
// the forward pass that produced them, in forward and in backward, and no false alarms.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/ops.h>

#include "tests/compare.h"

using namespace tapegrad;
using Catch::Contains;

namespace {
using tapegrad::testing::kInf;
using tapegrad::testing::kNaN;

Tensor vec(std::vector<double> v, bool grad = false) {
  return from_values({static_cast<int64_t>(v.size())}, v, DType::Float64, grad);
}
}  // namespace

TEST_CASE("anomaly: off by default, and the guard nests and restores", "[anomaly]") {
  CHECK_FALSE(anomaly_mode_enabled());
  {
    AnomalyMode outer;
    CHECK(anomaly_mode_enabled());
    {
      AnomalyMode inner;
      CHECK(anomaly_mode_enabled());
    }
    CHECK(anomaly_mode_enabled());
  }
  CHECK_FALSE(anomaly_mode_enabled());
}

TEST_CASE("anomaly: without the guard NaN flows silently, as in torch", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = vec({-1.0, 4.0}, true);
  Tensor y = sum(log(x));
  CHECK(std::isnan(y.item()));
  CHECK_NOTHROW(y.backward());
}

TEST_CASE("anomaly: a NaN is traced to the op, its name and its scope", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor x = vec({4.0, -1.0}, true);
  Tensor lp;
  {
    NameScope model("model");
    NameScope block("block 1");
    lp = log(x);
    lp.set_name("log_probs");
  }
  const int32_t before = tape.size();
  CHECK_THROWS_WITH(sum(lp),
                    "anomaly: forward: log #1 \"log_probs\" in model/block 1 produced NaN "
                    "(first at element 1 of [2], float64); found when sum consumed it "
                    "as input 0");
  CHECK(tape.size() == before);  // the consuming op recorded nothing
}

TEST_CASE("anomaly: an overflow to Inf is reported where it first appears", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor x = from_values({2, 2}, std::vector<double>{1, 2, 100, 3}, DType::Float32, true);
  Tensor e = exp(x);  // exp(100) overflows float32
  e.set_name("logits");
  Tensor w = ones({2, 2});
  CHECK_THROWS_WITH(matmul(e, w),
                    Contains("exp #1 \"logits\" produced Inf (first at element 2 of [2, 2], "
                             "float32) from finite inputs; found when matmul consumed it as "
                             "input 0"));
}

TEST_CASE("anomaly: division by zero and log(0) are anomalies", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor a = vec({1.0, 2.0});
  Tensor b = vec({1.0, 0.0});
  CHECK_THROWS_WITH(sum(div(a, b)), Contains("div #2 produced Inf (first at element 1"));
  CHECK_THROWS_WITH(sum(log(vec({0.0, 1.0}))), Contains("log #"));
}

TEST_CASE("anomaly: infinities that are meant raise no alarm", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  SECTION("the causal mask's -inf, softmax and backward of an attention step") {
    Tensor q = from_values({1, 3, 2}, std::vector<double>{0.1, 0.2, 0.3, -0.4, 0.5, 0.6},
                           DType::Float64, true);
    Tensor scores = matmul(q, transpose(q, 1, 2));
    Tensor weights = softmax(causal_mask(scores), -1);
    Tensor loss = sum(matmul(weights, q));
    CHECK_NOTHROW(loss.backward());
    CHECK(std::isfinite(loss.item()));
  }
  SECTION("masked_fill with -inf") {
    Tensor x = vec({1, 2, 3}, true);
    Tensor mask = vec({0, 1, 0});
    Tensor filled = masked_fill(x, mask, -kInf);
    CHECK_NOTHROW(filled.values());
    CHECK_NOTHROW(sum(softmax(filled, 0)).backward());
  }
  SECTION("an additive -inf mask the caller built, passed on by add") {
    Tensor x = vec({1, 2, 3}, true);
    Tensor mask = vec({0, -kInf, 0});
    Tensor masked = add(x, mask);  // inherits the constant's -inf: not where it appeared
    CHECK_NOTHROW(sum(softmax(masked, 0)).backward());
  }
}

TEST_CASE("anomaly: a NaN in a constant or an Inf in a parameter is named", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor c = vec({1.0, kNaN});
  c.set_name("batch");
  CHECK_THROWS_WITH(add(c, c), Contains("constant #0 \"batch\" holds NaN (first at element 1 of "
                                        "[2], float64); found when add consumed it as input 0"));
  Parameter w = Parameter::from_values({2}, std::vector<double>{kInf, 1.0}, DType::Float32, "W");
  Tensor x = ones({2});
  CHECK_THROWS_WITH(mul(x, w), Contains("parameter #2 \"W\" holds Inf (first at element 0 of [2], "
                                        "float32); found when mul consumed it as input 1"));
}

TEST_CASE("anomaly: the loss itself is checked when backward starts", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor x = from_values({2}, std::vector<double>{3e38, 3e38}, DType::Float32, true);
  Tensor loss;
  {
    NameScope s("loss");
    loss = sum(x);  // 6e38 overflows float32: nobody consumes the loss, backward must catch it
  }
  loss.set_name("total");
  CHECK_THROWS_WITH(loss.backward(),
                    "anomaly: forward: sum #1 \"total\" in loss produced Inf "
                    "(first at element 0 of [], float32) from finite inputs; "
                    "found when backward started from it");
  CHECK(x.grad_values().empty());  // nothing ran
}

TEST_CASE("anomaly: an output nobody consumes is checked when it is read", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor y = sqrt(vec({-4.0, 4.0}));
  CHECK_THROWS_WITH(y.values(), Contains("sqrt #1 produced NaN (first at element 0 of [2], "
                                         "float64); found when its values were read"));
  CHECK_THROWS_WITH(y.str(), Contains("sqrt #1 produced NaN"));
  CHECK_THROWS_WITH(sum(y).item(), Contains("sqrt #1"));  // sum consumes it first
}

TEST_CASE("anomaly: a non-finite gradient names the backward that produced it", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor x = vec({0.0, 4.0}, true);
  x.set_name("x");
  Tensor r;
  {
    NameScope s("norm");
    r = sqrt(x);  // sqrt(0) = 0 is fine forward; its derivative 1 / (2 sqrt(0)) is Inf
    r.set_name("root");
  }
  Tensor loss = sum(r);
  CHECK_THROWS_WITH(loss.backward(),
                    "anomaly: backward: the backward of sqrt #1 \"root\" in norm "
                    "produced Inf in the gradient of its input 0, input #0 \"x\" "
                    "(first at element 0 of [2], float64)");
}

TEST_CASE("anomaly: a NaN gradient from 0 * Inf in backward", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  // pow(x, 0.5) at 0: forward 0, backward 0.5 * 0^-0.5 = Inf; times the upstream 0 from the
  // masked entry of mul gives NaN in torch's formula order as well.
  Tensor x = vec({0.0, 1.0}, true);
  Tensor p = pow(x, 0.5);
  Tensor loss = sum(mul(p, vec({1.0, 1.0})));
  CHECK_THROWS_WITH(loss.backward(), Contains("the backward of pow #1 produced"));
}

TEST_CASE("anomaly: a non-finite seed gradient is rejected", "[anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor x = vec({1.0, 2.0}, true);
  Tensor y = add(x, x);
  y.set_name("y");
  CHECK_THROWS_WITH(tape.backward(y, std::vector<double>{1.0, kNaN}),
                    "anomaly: backward: the gradient given for add #1 \"y\" [2] holds NaN or Inf");
}

TEST_CASE("anomaly: a clean training step passes and gives the same gradients", "[anomaly]") {
  auto run = [](bool anomaly) {
    Parameter w =
        Parameter::from_values({2, 2}, std::vector<double>{0.5, -1, 2, 0.25}, DType::Float64, "W");
    Tape tape;
    TapeScope scope(tape);
    Tensor x = from_values({3, 2}, std::vector<double>{0.1, -0.2, 0.3, 0.4, -0.5, 0.6},
                           DType::Float64);  // small: the softmax is far from saturated
    // Weights on the attention matrix: sum(softmax(...)) alone has an exactly zero gradient
    // (every row sums to 1), which could not show anomaly mode changing a gradient.
    Tensor weights =
        from_values({3, 3}, std::vector<double>{1, -2, 3, 0.5, 4, -1, 2, 1, -3}, DType::Float64);
    auto step = [&] {
      Tensor h = matmul(x, w);
      sum(mul(softmax(causal_mask(matmul(h, t(h))), -1), weights)).backward();
    };
    if (anomaly) {
      AnomalyMode mode;
      step();
    } else {
      step();
    }
    return w.grad_values();
  };
  const std::vector<double> with_anomaly = run(true);
  const std::vector<double> without = run(false);
  CHECK(with_anomaly == without);
  double largest = 0.0;
  for (double g : without) largest = std::max(largest, std::abs(g));
  INFO("largest |dW| " << largest);
  CHECK(largest > 1e-3);  // a gradient that anomaly mode could have changed
}
