// The bad-input table: wrong shapes, dims, indices, probabilities, states and files across the
// API. Each row must throw tapegrad::Error (not crash, not abort) with a message naming the op,
// the tensors' names and their shapes; an op records nothing when it refuses, and an optimiser,
// scheduler, clip or load that refuses leaves every parameter and every state as it was.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/io/checkpoint.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/optim.h>

#include "tests/compare.h"

using namespace tapegrad;

namespace {

using tapegrad::testing::kNaN;

// What a row may leave for the runner to check after its call threw.
int32_t op_nodes(const Tape& tape) {
  int32_t n = 0;
  for (int32_t i = 0; i < tape.size(); ++i) n += tape.node(i).kind == NodeKind::Op ? 1 : 0;
  return n;
}

// Every row sets at least one probe (the runner fails a row that sets none), so each row checks
// both the message and that the refusal recorded nothing or changed nothing.
struct Probe {
  int32_t ops = -1;                // set by mark(): the failing op must record no op node
  int32_t nodes = -1;              // set by mark_all(): the failing call must record no node
  std::function<bool()> intact{};  // true when no state was changed
  void mark() { ops = op_nodes(current_tape()); }
  void mark_all() {
    mark();
    nodes = current_tape().size();
  }
  bool probes_something() const { return ops >= 0 || nodes >= 0 || static_cast<bool>(intact); }
};

struct Row {
  const char* name;
  std::function<void(Probe&)> run;     // must throw tapegrad::Error
  std::vector<std::string> fragments;  // each must be in the message
};

// A named tensor of 0.5s on the current tape.
Tensor T(const Shape& shape, const char* name = nullptr, DType dtype = DType::Float32,
         bool requires_grad = false) {
  Tensor t = from_values(shape, std::vector<double>(static_cast<size_t>(shape.numel()), 0.5), dtype,
                         requires_grad);
  if (name != nullptr) t.set_name(name);
  return t;
}

using tapegrad::testing::parameter_bits;

std::vector<uint8_t> grad_bits(const Parameter& p) {
  const auto* b = static_cast<const uint8_t*>(p.raw_grad());
  return {b, b + p.numel() * dtype_size(p.dtype())};
}

// A parameter with distinct values and a gradient, so any change shows.
Parameter P(const Shape& shape, const char* name, DType dtype = DType::Float32) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * static_cast<double>(i) - 1.0;
  Parameter p = Parameter::from_values(shape, v, dtype, name);
  for (int64_t i = 0; i < p.numel(); ++i) {
    if (dtype == DType::Float32) {
      p.grad<float>()[i] = 0.5f;
    } else {
      p.grad<double>()[i] = 0.5;
    }
  }
  return p;
}

// Runs each row in its own section, on a fresh tape.
void run_rows(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.name) {
      Tape tape;
      TapeScope scope(tape);
      Probe probe;
      std::string message = "(no exception)";
      try {
        row.run(probe);
      } catch (const Error& e) {
        message = e.what();
      } catch (const std::exception& e) {
        message = std::string("(not a tapegrad::Error) ") + e.what();
      }
      INFO("message: " << message);
      CHECK(message.rfind("(no", 0) != 0);
      for (const std::string& fragment : row.fragments) {
        CHECK_THAT(message, Catch::Contains(fragment));
      }
      INFO("a row must probe what its refusal left (mark, mark_all or intact)");
      CHECK(probe.probes_something());
      if (probe.ops >= 0) CHECK(op_nodes(tape) == probe.ops);
      if (probe.nodes >= 0) CHECK(tape.size() == probe.nodes);
      if (probe.intact) CHECK(probe.intact());
    }
  }
}

// Marks the tape, then calls the op (its inputs are leaves): the runner then checks that no op
// node was recorded.
#define OP(call) \
  [](Probe& p) { \
    p.mark();    \
    call;        \
  }

}  // namespace

TEST_CASE("bad inputs: elementwise ops and broadcasting", "[bad_inputs]") {
  run_rows({
      {"add of shapes that do not broadcast",
       [](Probe& p) {
         Tensor x = T({2, 3}, "x"), y = T({4, 3}, "y");
         p.mark();
         add(x, y);
       },
       {"add: a \"x\" [2, 3] + b \"y\" [4, 3]: cannot broadcast (dim -2: 2 vs 4)"}},
      {"mul of transposed shapes",
       [](Probe& p) {
         Tensor x = T({2, 3}, "keys"), y = T({3, 2}, "queries");
         p.mark();
         mul(x, y);
       },
       {"mul: a \"keys\" [2, 3]", "b \"queries\" [3, 2]", "cannot broadcast"}},
      {"div failing in the batch dim of rank 4",
       [](Probe& p) {
         Tensor x = T({2, 3, 4, 5}), y = T({3, 3, 1, 5});
         p.mark();
         div(x, y);
       },
       {"div: a [2, 3, 4, 5] / b [3, 3, 1, 5]: cannot broadcast (dim -4: 2 vs 3)"}},
      {"sub of mixed dtypes",
       [](Probe& p) {
         Tensor x = T({2}, "x"), y = T({2}, "y", DType::Float64);
         p.mark();
         sub(x, y);
       },
       {"sub: a \"x\" [2] is float32 but b \"y\" [2] is float64"}},
      {"operands from two tapes",
       [](Probe& p) {
         Tensor x = T({2});
         p.mark_all();  // this tape: nothing more
         auto other = std::make_shared<Tape>();
         TapeScope scope(*other);
         Tensor y = T({2});
         p.intact = [=] { return other->size() == 1; };  // the other tape: only y
         add(y, x);
       },
       {"add: input 1 belongs to another tape"}},
  });
}

TEST_CASE("bad inputs: matmul and linear", "[bad_inputs]") {
  run_rows({
      {"matmul inner-dim mismatch",
       [](Probe& p) {
         Tensor w = T({3, 2}, "W_query"), x = T({4, 5}, "x");
         p.mark();
         matmul(w, x);
       },
       {"matmul: a \"W_query\" [3, 2] x b \"x\" [4, 5]: inner dims 2 != 4"}},
      {"batched matmul inner-dim mismatch",
       [](Probe& p) {
         Tensor q = T({2, 4, 6, 8}, "queries"), k = T({2, 4, 6, 8}, "keys");
         p.mark();
         matmul(q, k);  // forgot the transpose
       },
       {"matmul: a \"queries\" [2, 4, 6, 8] x b \"keys\" [2, 4, 6, 8]: inner dims 8 != 6"}},
      {"matmul batch dims that do not broadcast",
       [](Probe& p) {
         Tensor a = T({2, 3, 4}), b = T({3, 4, 5});
         p.mark();
         matmul(a, b);
       },
       {"matmul: a [2, 3, 4] x b [3, 4, 5]: batch dims [2] and [3] do not broadcast"}},
      {"matmul of a scalar",
       [](Probe& p) {
         Tensor a = T({}), b = T({3});
         p.mark();
         matmul(a, b);
       },
       {"matmul: a [] x b [3]: both operands need at least 1 dim"}},
      {"matmul of mixed dtypes",
       [](Probe& p) {
         Tensor a = T({2, 2}), b = T({2, 2}, "w", DType::Float64);
         p.mark();
         matmul(a, b);
       },
       {"matmul: a [2, 2] is float32 but b \"w\" [2, 2] is float64"}},
      {"dot of vectors of different lengths",
       [](Probe& p) {
         Tensor a = T({3}), b = T({4});
         p.mark();
         dot(a, b);
       },
       {"dot: a [3] x b [4]: lengths 3 != 4"}},
      {"dot of a matrix",
       [](Probe& p) {
         Tensor a = T({3, 1}), b = T({3});
         p.mark();
         dot(a, b);
       },
       {"dot: a [3, 1] x b [3]: expected 1-D operands"}},
      {"linear with a weight of other in-features",
       [](Probe& p) {
         Tensor x = T({2, 3}, "inputs"), w = T({4, 5}, "W");
         p.mark();
         linear(x, w);
       },
       {"linear: x \"inputs\" [2, 3] x weight \"W\" [4, 5]: in features 3 != 5"}},
      {"linear with a bias of the wrong size",
       [](Probe& p) {
         Tensor x = T({2, 3}), w = T({4, 3}, "W"), b = T({3}, "b");
         p.mark();
         linear(x, w, b);
       },
       {"linear: x [2, 3] x weight \"W\" [4, 3]: bias \"b\" [3] should have shape [4]"}},
      {"linear with a 1-D weight",
       [](Probe& p) {
         Tensor x = T({2, 3}), w = T({3}, "W");
         p.mark();
         linear(x, w);
       },
       {"linear: x [2, 3] x weight \"W\" [3]: weight must be 2-D [out, in]"}},
  });
}

TEST_CASE("bad inputs: layout ops and heads", "[bad_inputs]") {
  run_rows({
      {"transpose of a dim out of range",
       OP(transpose(T({2, 3}, "x"), 0, 2)),
       {"transpose: x \"x\" [2, 3]: dim 2 is out of range (expected -2..1)"}},
      {"reshape to another element count",
       OP(reshape(T({2, 3}, "x"), {4, 2})),
       {"reshape: x \"x\" [2, 3]: shape [4, 2] is invalid for 6 elements"}},
      {"reshape with two -1",
       OP(reshape(T({2, 3}), {-1, -1})),
       {"reshape: x [2, 3]: shape [-1, -1] has more than one -1"}},
      {"reshape to a negative dim",
       OP(reshape(T({2, 3}), {-2, -3})),
       {"reshape: x [2, 3]: shape [-2, -3] has invalid size -2"}},
      {"reshape to rank 9",
       OP(reshape(T({2, 3}), {1, 1, 2, 1, 1, 1, 1, 3, 1})),
       {"reshape: x [2, 3]: shape [1, 1, 2, 1, 1, 1, 1, 3, 1] has rank 9, above the maximum of 8"}},
      {"reshape of an empty tensor with -1",
       OP(reshape(T({0, 3}), {-1, 0})),
       {"reshape: x [0, 3]: shape [-1, 0] is ambiguous"}},
      {"select past the end",
       OP(select(T({2, 3}, "x"), 1, 3)),
       {"select: x \"x\" [2, 3]: index 3 is out of range for dim 1 of size 3"}},
      {"select before the start",
       OP(select(T({2, 3}), 1, -4)),
       {"select: x [2, 3]: index -4 is out of range for dim 1 of size 3"}},
      {"narrow past the end",
       OP(narrow(T({2, 3}), 1, 2, 2)),
       {"narrow: x [2, 3]: start 2 + length 2 exceeds size 3 of dim 1"}},
      {"narrow with a negative length",
       OP(narrow(T({2, 3}), 1, 0, -1)),
       {"narrow: x [2, 3]: length -1 is negative"}},
      {"cat of mismatched sizes",
       OP(cat({T({2, 3}), T({2, 4})}, 0)),
       {"cat: xs[0] [2, 3] and xs[1] [2, 4]: sizes differ in dim 1 (3 vs 4)"}},
      {"cat of mismatched ranks",
       OP(cat({T({2, 3}), T({2})}, 0)),
       {"cat: xs[0] [2, 3] and xs[1] [2]: ranks differ (2 vs 1)"}},
      {"cat of nothing",
       OP(cat(std::span<const Tensor>(), 0)),
       {"cat: expected at least one tensor"}},
      {"heads that do not divide d_out",
       OP(split_heads(T({2, 4, 6}, "context"), 4)),
       {"split_heads: x \"context\" [2, 4, 6]: C 6 is not divisible by num_heads 4"}},
      {"zero heads",
       OP(split_heads(T({2, 4, 6}), 0)),
       {"split_heads: x [2, 4, 6]: num_heads must be positive (got 0)"}},
      {"negative heads",
       OP(split_heads(T({2, 4, 6}), -2)),
       {"split_heads: x [2, 4, 6]: num_heads must be positive (got -2)"}},
      {"split_heads without a batch dim",
       OP(split_heads(T({4, 6}), 2)),
       {"split_heads: x [4, 6]: expected a 3-D [B, T, C] tensor"}},
      {"merge_heads of a 3-D tensor",
       OP(merge_heads(T({2, 4, 6}))),
       {"merge_heads: x [2, 4, 6]: expected a 4-D [B, H, T, D] tensor"}},
  });
}

TEST_CASE("bad inputs: attention pieces", "[bad_inputs]") {
  run_rows({
      {"softmax over a dim out of range",
       OP(softmax(T({2, 3}, "scores"), 2)),
       {"softmax: x \"scores\" [2, 3]: dim 2 out of range for rank 2"}},
      {"a mask of the wrong size",
       OP(masked_fill(T({4, 4}, "attn_scores"), T({3, 3}, "mask"), -1)),
       {"masked_fill: x \"attn_scores\" [4, 4], mask \"mask\" [3, 3]: the mask must broadcast to "
        "x's shape"}},
      {"a mask that would enlarge x",
       OP(masked_fill(T({4}), T({3, 4}, "mask"), -1)),
       {"masked_fill: x [4], mask \"mask\" [3, 4]", "it would enlarge x to [3, 4]"}},
      {"a fill value that overflows float32",
       OP(masked_fill(T({2}), T({2}), 1e39)),
       {"masked_fill: x [2]: value", "overflows float32"}},
      {"a causal mask on a vector",
       OP(causal_mask(T({4}, "scores"))),
       {"causal_mask: x \"scores\" [4]: expected at least 2 dims [.., Tq, Tk]"}},
      {"tril of a vector", OP(tril(T({4}))), {"tril: x [4]: expected at least 2 dims"}},
      {"triu of a scalar", OP(triu(T({}))), {"triu: x []: expected at least 2 dims"}},
      {"dropout p = 1",
       OP(dropout(T({4}, "weights"), 1.0, true)),
       {"dropout: x \"weights\" [4]: p must be in [0, 1), got 1"}},
      {"dropout p < 0",
       OP(dropout(T({4}), -0.1, true)),
       {"dropout: x [4]: p must be in [0, 1), got -0.1"}},
      {"dropout p = NaN",
       OP(dropout(T({4}), kNaN, true)),
       {"dropout: x [4]: p must be in [0, 1), got nan"}},
      {"dropout p > 1 even in eval mode",
       OP(dropout(T({4}), 1.5, false)),
       {"dropout: x [4]: p must be in [0, 1), got 1.5"}},
  });
}

TEST_CASE("bad inputs: reductions, losses and the GPT block", "[bad_inputs]") {
  run_rows({
      {"sum over a dim out of range",
       OP(sum(T({2, 3}, "x"), 2)),
       {"sum_dim: x \"x\" [2, 3]: dim 2 is out of range for rank 2 (expected -2..1)"}},
      {"sum over a dim of a scalar",
       OP(sum(T({}), 1)),
       {"sum_dim: x []: dim 1 is out of range for rank 0"}},
      {"mean over a dim out of range",
       OP(mean(T({2, 3}), -3)),
       {"mean_dim: x [2, 3]: dim -3 is out of range for rank 2"}},
      {"max over an empty dim",
       OP(max(T({2, 0}, "x"), 1)),
       {"max_dim: x \"x\" [2, 0]: cannot take the max along dim 1 of size 0"}},
      {"mse_loss of different shapes",
       OP(mse_loss(T({2, 3}, "pred"), T({3, 2}, "target"))),
       {"mse_loss: prediction \"pred\" [2, 3] and target \"target\" [3, 2]: shapes must be equal "
        "or broadcast"}},
      {"cross_entropy target = C",
       [](Probe& p) {
         const std::vector<int64_t> targets{0, 3};
         Tensor logits = T({2, 3}, "logits");
         p.mark();
         cross_entropy(logits, targets);
       },
       {"cross_entropy: logits \"logits\" [2, 3]: targets[1] = 3 is out of range [0, 3)"}},
      {"cross_entropy negative target",
       [](Probe& p) {
         const std::vector<int64_t> targets{-1, 0};
         Tensor logits = T({2, 3});
         p.mark();
         cross_entropy(logits, targets);
       },
       {"cross_entropy: logits [2, 3]: targets[0] = -1 is out of range [0, 3)"}},
      {"cross_entropy with too few targets",
       [](Probe& p) {
         const std::vector<int64_t> targets{0};
         Tensor logits = T({2, 3});
         p.mark();
         cross_entropy(logits, targets);
       },
       {"cross_entropy: logits [2, 3]: 1 targets for 2 rows"}},
      {"cross_entropy of 3-D logits",
       [](Probe& p) {
         const std::vector<int64_t> targets{0, 0};
         Tensor logits = T({1, 2, 3});
         p.mark();
         cross_entropy(logits, targets);
       },
       {"cross_entropy: logits [1, 2, 3]: expected logits of shape [N, C] or [C]"}},
      {"layer_norm weight of the wrong size",
       OP(layer_norm(T({2, 4}, "x"), T({3}, "gamma"), Tensor())),
       {"layer_norm: x \"x\" [2, 4] and weight \"gamma\" [3]: weight must have shape [4]"}},
      {"layer_norm bias of another dtype",
       OP(layer_norm(T({2, 4}, "x"), Tensor(), T({4}, "beta", DType::Float64))),
       {"layer_norm: x \"x\" [2, 4] is float32 but bias \"beta\" [4] is float64"}},
      {"layer_norm of a scalar",
       OP(layer_norm(T({}), Tensor(), Tensor())),
       {"layer_norm: x []: expected at least one dim"}},
      {"embedding id past the vocabulary",
       [](Probe& p) {
         const std::vector<int64_t> ids{0, 5};
         Tensor weight = T({5, 3}, "tok_emb");
         p.mark();
         embedding(weight, ids, Shape{2});
       },
       {"embedding: weight \"tok_emb\" [5, 3]: id 5 at ids[1] is out of range [0, 5)"}},
      {"embedding negative id",
       [](Probe& p) {
         const std::vector<int64_t> ids{-1};
         Tensor weight = T({5, 3});
         p.mark();
         embedding(weight, ids, Shape{1});
       },
       {"embedding: weight [5, 3]: id -1 at ids[0] is out of range [0, 5)"}},
      {"embedding ids that do not fill ids_shape",
       [](Probe& p) {
         const std::vector<int64_t> ids{0, 1, 2};
         Tensor weight = T({5, 3});
         p.mark();
         embedding(weight, ids, Shape{2});
       },
       {"embedding: weight [5, 3]: 3 ids for ids shape [2] (2 elements)"}},
      {"embedding output above rank 8",
       [](Probe& p) {
         const std::vector<int64_t> ids{0};
         Tensor weight = T({5, 3});
         p.mark();
         embedding(weight, ids, Shape{1, 1, 1, 1, 1, 1, 1, 1});
       },
       {"embedding: ids of shape [1, 1, 1, 1, 1, 1, 1, 1] would give an output of rank 9 (at most "
        "8)"}},
  });
}

TEST_CASE("bad inputs: shapes, factories and tensors", "[bad_inputs]") {
  run_rows({
      {"a rank-9 shape",
       [](Probe& p) {
         p.mark_all();
         zeros({1, 2, 3, 4, 5, 1, 1, 1, 1});
       },
       {"Shape: [1, 2, 3, 4, 5, 1, 1, 1, 1] has rank 9, above the maximum of 8"}},
      {"a negative dim",
       [](Probe& p) {
         p.mark_all();
         zeros({2, -1});
       },
       {"Shape: [2, -1] has a negative dimension -1"}},
      {"a shape too large to address",
       [](Probe& p) {
         p.mark_all();
         zeros({1 << 30, 1 << 30, 1 << 30});
       },
       {"Shape: [1073741824, 1073741824, 1073741824] has more than 2^60 elements"}},
      {"values that do not fill the shape",
       [](Probe& p) {
         p.mark_all();
         from_values({2, 3}, std::vector<double>{1, 2});
       },
       {"shape [2, 3] holds 6 values, got 2"}},
      {"Parameter::assign of the wrong size",
       [](Probe& p) {
         Parameter w = P({2}, "W");
         const std::vector<uint8_t> before = parameter_bits(w);
         p.intact = [=] { return parameter_bits(w) == before; };
         w.assign(std::vector<double>{1, 2, 3});
       },
       {"Parameter::assign: \"W\" [2] holds 2 values, got 3"}},
      {"reading float32 data as float64",
       [](Probe& p) {
         Tensor x = T({2}, "x");
         p.mark_all();
         x.data<double>();
       },
       {"\"x\" [2]: is float32, accessed as float64"}},
      {"item of a vector",
       [](Probe& p) {
         Tensor x = T({2}, "x");
         p.mark_all();
         x.item();
       },
       {"item: constant #0 \"x\" [2] has more than one element"}},
      {"a default-constructed tensor",
       OP(add(Tensor(), T({2}))),
       {"Tensor: used before it was assigned (default-constructed)"}},
      {"a default-constructed parameter",
       [](Probe& p) {
         Tensor y = T({2});
         p.mark_all();
         add(Tensor(Parameter()), y);
       },
       {"Tensor: a default-constructed Parameter has no value"}},
  });
}

TEST_CASE("bad inputs: the tape and backward", "[bad_inputs]") {
  run_rows({
      {"backward on a non-scalar without a gradient",
       [](Probe& p) {
         Tensor x = T({2}, "x", DType::Float64, true);
         Tensor y = add(x, x);
         y.set_name("scores");
         p.mark_all();
         p.intact = [=] { return x.grad_values().empty(); };  // no gradient was made
         y.backward();
       },
       {"backward: add #1 \"scores\" [2] is not a scalar; pass a gradient of the same shape"}},
      {"a gradient of the wrong length",
       [](Probe& p) {
         Tensor x = T({2}, "x", DType::Float64, true);
         Tensor y = add(x, x);
         p.mark_all();
         p.intact = [=] { return x.grad_values().empty(); };  // no gradient was made
         current_tape().backward(y, std::vector<double>{1});
       },
       {"backward: the gradient for add #1 [2] has 1 values, expected 2"}},
      {"a second backward without retain_graph",
       [](Probe& p) {
         Tensor x = T({2}, "x", DType::Float64, true);
         Tensor y = sum(x);
         y.backward();
         const std::vector<double> grad = x.grad_values();
         p.intact = [=] { return x.grad_values() == grad; };  // the first pass's, untouched
         y.backward();
       },
       {"backward: this tape was already walked", "retain_graph = true"}},
      {"backward of a value that needs no gradient",
       [](Probe& p) {
         Tensor y = sum(T({2}));
         p.mark_all();
         y.backward();
       },
       {"backward: sum #1 does not require grad"}},
      {"a tensor whose tape was reset",
       [](Probe& p) {
         Tensor x = T({2}, "x");
         current_tape().reset();
         p.mark_all();  // the reset tape stays empty
         add(x, x);
       },
       {"Tensor #0: its tape was reset (or cleared) after it was made"}},
      {"a tensor whose tape was reset, read",
       [](Probe& p) {
         Tensor x = T({2}, "x");
         current_tape().reset();
         p.mark_all();
         x.values();
       },
       {"Tensor #0: its tape was reset"}},
      {"backward through a tape from another tensor",
       [](Probe& p) {
         Tensor x = T({}, "x", DType::Float64, true);
         Tensor loss = sum(x);
         auto other = std::make_shared<Tape>();
         p.mark_all();
         p.intact = [=] { return other->size() == 0 && x.grad_values().empty(); };
         other->backward(loss);
       },
       {"backward: the tensor belongs to another tape"}},
  });
}

TEST_CASE("bad inputs: optimisers, schedules and clipping change nothing when they refuse",
          "[bad_inputs]") {
  run_rows({
      {"an optimiser given a parameter twice",
       [](Probe& p) {
         Parameter w = P({2}, "W");
         p.intact = [=, v = parameter_bits(w), g = grad_bits(w)] {
           return parameter_bits(w) == v && grad_bits(w) == g;
         };
         SGD sgd({w, w}, 0.1);
       },
       {"SGD: parameter \"W\" [2] is given twice in group 0"}},
      {"a parameter twice across groups",
       [](Probe& p) {
         Parameter w = P({2}, "W"), b = P({2}, "b");
         p.intact = [=, v = parameter_bits(w), gv = grad_bits(w), c = parameter_bits(b),
                     gc = grad_bits(b)] {
           return parameter_bits(w) == v && grad_bits(w) == gv && parameter_bits(b) == c &&
                  grad_bits(b) == gc;
         };
         AdamW adamw({ParamGroup{.params = {w, b}}, ParamGroup{.params = {b}}}, AdamWOptions{});
       },
       {"AdamW: parameter \"b\" [2] is given twice (in group 0 and in group 1)"}},
      {"an empty parameter list",
       [](Probe& p) {
         p.mark_all();  // nothing to change but the tape, which stays empty
         SGD sgd(std::vector<Parameter>{}, 0.1);
       },
       {"SGD: got an empty parameter list"}},
      {"a negative learning rate",
       [](Probe& p) {
         Parameter w = P({2}, "W");
         p.intact = [=, v = parameter_bits(w), g = grad_bits(w)] {
           return parameter_bits(w) == v && grad_bits(w) == g;
         };
         SGD sgd({w}, -0.1);
       },
       {"SGD: lr must be >= 0, got -0.1"}},
      {"Adam betas outside [0, 1)",
       [](Probe& p) {
         Parameter w = P({2}, "W");
         p.intact = [=, v = parameter_bits(w), g = grad_bits(w)] {
           return parameter_bits(w) == v && grad_bits(w) == g;
         };
         Adam adam({w}, AdamOptions{.betas = {1.0, 0.9}});
       },
       {"Adam: betas[0] must be in [0, 1), got 1"}},
      {"set_lr to NaN",
       [](Probe& p) {
         auto sgd = std::make_shared<SGD>(std::vector<Parameter>{P({2}, "W")}, 0.1);
         p.intact = [=] { return sgd->lr(0) == 0.1; };
         sgd->set_lr(0, kNaN);
       },
       {"SGD: group 0: lr must be >= 0, got nan"}},
      {"load_state from another optimiser",
       [](Probe& p) {
         Parameter w = P({2, 2}, "W");
         auto adam = std::make_shared<Adam>(std::vector<Parameter>{w});
         adam->step();
         const OptimizerState other = [&] {
           Parameter v = P({2, 2}, "W");
           SGD sgd({v}, SGDOptions{.lr = 0.1, .momentum = 0.9});
           sgd.step();
           return sgd.state();
         }();
         const OptimizerState before = adam->state();
         const std::vector<uint8_t> w_before = parameter_bits(w);
         p.intact = [=] {
           const OptimizerState now = adam->state();
           return parameter_bits(w) == w_before && now.step == before.step &&
                  now.tensors.size() == before.tensors.size() &&
                  now.tensors[0].values == before.tensors[0].values;
         };
         adam->load_state(other);
       },
       {"Adam: load_state: the state is from SGD, not Adam"}},
      {"load_state with a tensor of another shape",
       [](Probe& p) {
         Parameter w = P({2, 2}, "W");
         auto sgd = std::make_shared<SGD>(std::vector<Parameter>{w},
                                          SGDOptions{.lr = 0.1, .momentum = 0.9});
         sgd->step();
         const std::vector<double> before = sgd->state().tensors[0].values;
         OptimizerState state = sgd->state();
         // Feed other values than the optimiser holds, so a partial write would show.
         for (double& v : state.tensors[0].values) v += 1.0;
         state.tensors[0].shape = Shape{4};
         p.intact = [=, w_before = parameter_bits(w)] {
           return sgd->state().tensors[0].values == before && parameter_bits(w) == w_before;
         };
         sgd->load_state(state);
       },
       {"SGD: load_state: \"param.0.momentum_buffer\" is [4] float32, but parameter \"W\" [2, 2] "
        "is float32"}},
      {"clipping non-finite gradients with error_if_nonfinite",
       [](Probe& p) {
         Parameter w = P({3}, "W"), b = P({2}, "b");
         b.grad<float>()[1] = std::numeric_limits<float>::infinity();
         const std::vector<uint8_t> gw = grad_bits(w), gb = grad_bits(b);
         p.intact = [=] { return grad_bits(w) == gw && grad_bits(b) == gb; };
         clip_grad_norm_({w, b}, 1.0, 2.0, /*error_if_nonfinite=*/true);
       },
       {"clip_grad_norm_: the total norm of order 2 of the gradients is inf"}},
      {"clipping to a negative norm",
       [](Probe& p) {
         Parameter w = P({3}, "W");
         const std::vector<uint8_t> gw = grad_bits(w);
         p.intact = [=] { return grad_bits(w) == gw; };
         clip_grad_norm_({w}, -1.0);
       },
       {"clip_grad_norm_: max_norm must be >= 0, got -1"}},
  });
}

TEST_CASE("bad inputs: checkpoints and generator states change nothing when they refuse",
          "[bad_inputs]") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tapegrad_bad_inputs_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.safetensors").string();
  {
    Parameter w = P({4, 3}, "W"), b = P({4}, "b", DType::Float64);
    SGD sgd({w, b}, SGDOptions{.lr = 0.1, .momentum = 0.9});
    sgd.step();
    CheckpointExtras extras{&sgd, nullptr, {}, {}};
    save_checkpoint(path, {{"W", w}, {"b", b}}, extras);
  }
  // A model to load into, and the check that a refused load left it alone.
  struct Target {
    Parameter w = P({4, 3}, "W"), b = P({4}, "b", DType::Float64);
    std::vector<uint8_t> w_before = parameter_bits(w), b_before = parameter_bits(b);
    bool intact() const { return parameter_bits(w) == w_before && parameter_bits(b) == b_before; }
  };
  auto load_rows = std::vector<Row>{
      {"a checkpoint into a model of other shapes",
       [&](Probe& p) {
         auto t = std::make_shared<Target>();
         Parameter wide = P({4, 5}, "W");
         const std::vector<uint8_t> wide_before = parameter_bits(wide);
         p.intact = [=] { return t->intact() && parameter_bits(wide) == wide_before; };
         load_checkpoint(path, {{"b", t->b}, {"W", wide}});  // b would load first: it must not
       },
       {"model.safetensors: parameter \"W\" [4, 5] float32 does not match the checkpoint's \"W\" "
        "[4, 3] F32 (shape differs)"}},
      {"a checkpoint into a model of other dtypes",
       [&](Probe& p) {
         auto t = std::make_shared<Target>();
         Parameter w64 = P({4, 3}, "W", DType::Float64);
         p.intact = [=] { return t->intact(); };
         load_checkpoint(path, {{"b", t->b}, {"W", w64}});
       },
       {"parameter \"W\" [4, 3] float64 does not match the checkpoint's \"W\" [4, 3] F32 (dtype "
        "differs)"}},
      {"an optimiser state that does not fit",
       [&](Probe& p) {
         auto t = std::make_shared<Target>();
         auto adam = std::make_shared<Adam>(std::vector<Parameter>{t->w, t->b});
         p.intact = [=] { return t->intact() && adam->step_count() == 0; };
         CheckpointExtras extras{adam.get(), nullptr, {}, {}};
         load_checkpoint(path, {{"W", t->w}, {"b", t->b}}, extras);
       },
       {"model.safetensors: Adam: load_state: the state is from SGD, not Adam"}},
      {"a truncated checkpoint",
       [&](Probe& p) {
         std::vector<uint8_t> file = read_whole_file(path);
         file.resize(file.size() - 5);
         auto t = std::make_shared<Target>();
         p.intact = [=] { return t->intact(); };
         CheckpointExtras none;
         load_checkpoint_bytes(file, "cut.safetensors", {{"W", t->w}, {"b", t->b}}, none);
       },
       {"cut.safetensors: tensor", "run past the end of the data", "the file is truncated"}},
      {"a file that is not a checkpoint",
       [&](Probe& p) {
         const std::string text = "{\"W\": [1, 2, 3]}\n";
         auto t = std::make_shared<Target>();
         p.intact = [=] { return t->intact(); };
         CheckpointExtras none;
         load_checkpoint_bytes({reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                               "weights.json", {{"W", t->w}}, none);
       },
       {"weights.json: invalid safetensors file: header length", "exceeds the limit"}},
      {"a generator state of the wrong size",
       [](Probe& p) {
         auto g = std::make_shared<Generator>(3);
         const std::vector<uint64_t> before = g->state();
         p.intact = [=] { return g->state() == before; };
         g->set_state(std::vector<uint64_t>{1, 2});
       },
       {"Generator::set_state: expected 630 words, got 2"}},
      {"uniform with from > to",
       [](Probe& p) {
         auto g = std::make_shared<Generator>(5);
         auto x = std::make_shared<float>(0.0f);
         p.intact = [=, before = g->state()] { return *x == 0.0f && g->state() == before; };
         g->uniform(x.get(), 1, 2.0, 1.0);
       },
       {"uniform: expects a [from, to) range"}},
  };
  run_rows(load_rows);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad inputs: empty tensors work through forward and backward", "[bad_inputs]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(zeros({0, 3}, DType::Float64));
  Tensor w = requires_grad(ones({3, 2}, DType::Float64));
  Tensor h = softmax(matmul(x, w), -1);  // [0, 2]
  CHECK(h.shape() == Shape{0, 2});
  Tensor y = sum(h);
  CHECK(y.item() == 0.0);  // torch: sum of nothing is 0
  y.backward();
  CHECK(x.grad_values().empty());
  CHECK(w.grad_values() == std::vector<double>(6, 0.0));
  CHECK(std::isnan(mean(zeros({0, 4})).item()));  // torch: mean of nothing is NaN
  CHECK(matmul(zeros({2, 0}), zeros({0, 3})).values() == std::vector<double>(6, 0.0));
  CHECK(split_heads(zeros({0, 4, 6}), 2).shape() == Shape{0, 2, 4, 3});
  CHECK(cat({zeros({0, 3}), ones({2, 3})}, 0).shape() == Shape{2, 3});
  const std::vector<int64_t> none;
  CHECK(embedding(zeros({5, 3}), none, Shape{0}).shape() == Shape{0, 3});
  CHECK(std::isnan(cross_entropy(zeros({0, 3}), none).item()));  // torch: NaN
  CHECK(dropout(zeros({0, 3}), 0.5, true).shape() == Shape{0, 3});
  CHECK(layer_norm(zeros({0, 4}), Tensor(), Tensor()).shape() == Shape{0, 4});
}

TEST_CASE("bad inputs: optimisers step over empty parameters (found by the fuzz target)",
          "[bad_inputs]") {
  // Adam's first step used to memset the empty parameter's (null) state buffers: UB that
  // UBSan reports as "null pointer passed as argument 1".
  Parameter empty({0, 2}, DType::Float32, "empty");
  Parameter w = P({2}, "W");
  Adam adam({empty, w});
  SGD sgd({empty, w}, SGDOptions{.lr = 0.1, .momentum = 0.9});
  for (int i = 0; i < 2; ++i) {
    adam.step();
    sgd.step();
  }
  CHECK(adam.step_count() == 2);
  const OptimizerState state = adam.state();
  Adam again({empty, w});
  again.load_state(state);
  again.step();
  CHECK(again.step_count() == 3);
  CHECK(empty.values().empty());
}
