// Tests for graph/tape.cpp: recording, reverse-mode backward, accumulation and the guards.
#include <tapegrad/graph/tape.h>

#include <catch2/catch.hpp>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

using namespace tapegrad;

TEST_CASE("tape: a value used twice gets both gradients", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({3}, std::vector<double>{1, 2, 3}, DType::Float64, true);
  Tensor y = sum(add(x, x));
  y.backward();
  CHECK(x.grad_values() == std::vector<double>{2, 2, 2});
}

TEST_CASE("tape: gradients accumulate into parameters across backward passes", "[tape]") {
  Parameter w = Parameter::from_values({2}, std::vector<double>{1, 2}, DType::Float64, "w");
  for (int step = 0; step < 3; ++step) {
    Tape tape;
    TapeScope scope(tape);
    sum(add(w, w)).backward();
  }
  CHECK(w.grad_values() == std::vector<double>{6, 6});
  w.zero_grad();
  CHECK(w.grad_values() == std::vector<double>{0, 0});
}

TEST_CASE("tape: a parameter's gradient is allocated by the first backward that reaches it",
          "[tape]") {
  Parameter w = Parameter::from_values({2}, std::vector<double>{1, 2}, DType::Float64, "w");
  Parameter unused({3}, DType::Float64, "unused");
  CHECK_FALSE(w.has_grad());
  {
    Tape tape;
    TapeScope scope(tape);
    const Tensor y = sum(mul(w, w));
    CHECK_FALSE(w.has_grad());  // recording alone allocates none
    w.zero_grad();              // none stays none
    CHECK_FALSE(w.has_grad());
    y.backward();
  }
  CHECK(w.has_grad());
  CHECK_FALSE(unused.has_grad());
  CHECK(unused.grad_values() == std::vector<double>{0, 0, 0});  // read as zeros, not allocated
  CHECK_FALSE(unused.has_grad());
  CHECK(w.grad_values() == std::vector<double>{2, 4});
  w.zero_grad();  // keeps the memory, zeroed
  CHECK(w.has_grad());
  CHECK(w.grad_values() == std::vector<double>{0, 0});
  CHECK(unused.grad<double>()[0] == 0.0);  // asking for the buffer makes a zeroed one
  CHECK(unused.has_grad());
}

TEST_CASE("tape: no_grad records no backward", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2}, std::vector<double>{1, 2}, DType::Float64, true);
  Tensor y;
  {
    NoGradGuard no_grad;
    y = sum(add(x, x));
  }
  CHECK_FALSE(y.requires_grad());
  CHECK(y.item() == 6.0);
  CHECK_THROWS_AS(y.backward(), Error);
  CHECK(sum(x).requires_grad());  // the guard is restored on scope exit
}

TEST_CASE("tape: detach stops the gradient and shares storage", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2}, std::vector<double>{1, 2}, DType::Float64, true);
  Tensor d = detach(x);
  CHECK_FALSE(d.requires_grad());
  CHECK(d.data<double>() == x.data<double>());
  sum(add(x, d)).backward();
  CHECK(x.grad_values() == std::vector<double>{1, 1});
}

TEST_CASE("tape: a second backward without retain_graph throws", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2}, std::vector<double>{1, 2}, DType::Float64, true);
  Tensor y = sum(x);
  y.backward();
  CHECK_THROWS_WITH(y.backward(), Catch::Contains("retain_graph"));
}

TEST_CASE("tape: with retain_graph a second backward accumulates", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2}, std::vector<double>{1, 2}, DType::Float64, true);
  Tensor y = sum(add(x, x));
  y.backward({.retain_graph = true});
  y.backward();
  CHECK(x.grad_values() == std::vector<double>{4, 4});
}

TEST_CASE("tape: backward frees op outputs' gradients as it passes them, unless retained",
          "[tape]") {
  // A chain of [256] float64 ops: without retain_graph each gradient is dead once its op's
  // backward ran, so the next (earlier) one reuses its memory and the arena grows by about two
  // gradients, not by one per node.
  auto run = [](bool retain) {
    Tape tape;
    TapeScope scope(tape);
    Tensor x = from_values({256}, std::vector<double>(256, 0.5), DType::Float64, true);
    Tensor y = x;
    Tensor middle;
    for (int i = 0; i < 20; ++i) {
      y = mul(y, x);
      if (i == 10) middle = y;
    }
    const Tensor loss = sum(y);
    const size_t before = tape.arena().bytes_in_use();
    loss.backward({.retain_graph = retain});
    CHECK(x.grad_values().size() == 256);  // a leaf keeps its gradient
    CHECK((middle.grad<double>() != nullptr) == retain);
    return tape.arena().bytes_in_use() - before;
  };
  const size_t retained = run(true), released = run(false);
  CHECK(retained >= 21 * 256 * sizeof(double));
  CHECK(released <= 4 * 256 * sizeof(double));
}

TEST_CASE("tape: backward of a non-scalar needs an explicit gradient", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2}, std::vector<double>{1, 2}, DType::Float64, true);
  Tensor y = add(x, x);
  CHECK_THROWS_WITH(y.backward(), Catch::Contains("[2] is not a scalar"));
  tape.backward(y, std::vector<double>{1.0, 10.0});
  CHECK(x.grad_values() == std::vector<double>{2, 20});
}

TEST_CASE("tape: a 100,000-node chain backpropagates without recursion", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({1}, std::vector<double>{1}, DType::Float64, true);
  Tensor one = from_values({1}, std::vector<double>{1}, DType::Float64);
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = add(y, one);
  CHECK(tape.size() > 100000);
  sum(y).backward();
  CHECK(x.grad_values() == std::vector<double>{1.0});
}

TEST_CASE("tape: a tensor used after its tape was reset throws", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2});
  tape.reset();
  CHECK_THROWS_WITH(x.values(), Catch::Contains("reset"));
}

TEST_CASE("tape: steady-state steps reuse the arena and grow no memory", "[tape]") {
  Parameter w = Parameter::from_values({8, 8}, std::vector<double>(64, 0.5), DType::Float32, "w");
  Tape tape;
  TapeScope scope(tape);
  auto step = [&] {
    tape.reset();
    Tensor x = ones({4, 8});
    sum(matmul(x, w)).backward();
  };
  step();
  step();
  const size_t allocations = tape.arena().heap_allocations();
  const size_t reserved = tape.arena().bytes_reserved();
  for (int i = 0; i < 20; ++i) step();
  CHECK(tape.arena().heap_allocations() == allocations);
  CHECK(tape.arena().bytes_reserved() == reserved);
}

TEST_CASE("tape: mixing tapes in one op is an error", "[tape]") {
  Tape a, b;
  Tensor x, y;
  {
    TapeScope scope(a);
    x = zeros({2});
  }
  {
    TapeScope scope(b);
    y = zeros({2});
  }
  CHECK_THROWS_WITH(add(x, y), Catch::Contains("another tape"));
}

TEST_CASE("tape: name scopes and names describe nodes", "[tape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y;
  {
    NameScope attention("attention");
    NameScope head("head 0");
    y = add(zeros({2}), zeros({2}));
    y.set_name("scores");
  }
  CHECK(tape.describe_node(y.id()) == "add #2 \"scores\" in attention/head 0");
}

TEST_CASE("tape: anomaly mode names the op that produced a NaN", "[tape][anomaly]") {
  Tape tape;
  TapeScope scope(tape);
  AnomalyMode anomaly;
  Tensor x = from_values({2}, std::vector<double>{1, 1e308}, DType::Float64, true);
  Tensor y = add(x, x);
  y.set_name("doubled");
  CHECK_THROWS_WITH(sum(y), Catch::Contains("add #1 \"doubled\""));
}
