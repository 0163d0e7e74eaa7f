// Tests for viz/dot.cpp: the DOT drawing of a tape (content, stability, goldens) and rendering.
#include <tapegrad/viz/dot.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"
#include "tests/viz/dot_testing.h"

using namespace tapegrad;

#if defined(__SANITIZE_ADDRESS__)
// Graphviz's libgvc and the pango/fontconfig/cairo it loads keep allocations for the life of
// the process; LeakSanitizer would report them at exit.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libgvc\nleak:libcgraph\nleak:libgvplugin\nleak:libpango\nleak:libfontconfig\n"
         "leak:libglib\nleak:libcairo\nleak:libgobject\n";
}
#endif
using tapegrad::testing::check_golden;
using tapegrad::testing::occurrences;
using tapegrad::testing::run_dot_program;

namespace {

// x [2, 3] (constant) -> Model/Linear: x·W + b -> loss = sum, with W [3, 2] and b [2, 2].
struct SmallModel {
  Parameter W = Parameter::from_values({3, 2}, std::vector<double>{0.5, -1, 0.25, 2, -0.75, 1},
                                       DType::Float32, "Linear.weight");
  Parameter b = Parameter::from_values({2, 2}, std::vector<double>{0.1, -0.2, 0.3, 0},
                                       DType::Float32, "Linear.bias");
  Tensor loss;
  explicit SmallModel(Tape& tape) {
    TapeScope scope(tape);
    Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
    x.set_name("x");
    Tensor h;
    {
      NameScope model("Model");
      NameScope linear("Linear");
      // One statement per node: argument evaluation order is unspecified in C++.
      Tensor w = W;
      Tensor xw = matmul(x, w);
      Tensor bias = b;
      h = add(xw, bias);
      h.set_name("h");
    }
    loss = sum(h);
    loss.set_name("loss");
  }
};

std::string small_model_dot(const DotOptions& options, bool run_backward = false) {
  Tape tape;
  SmallModel m(tape);
  if (run_backward) m.loss.backward({.retain_graph = true});  // keeps the gradients to draw
  return to_dot(tape, options);
}

// A node of an op whose OpDef says nothing about its arguments or saved state.
void no_backward(Tape&, const Node&) {}
const OpDef kFakeUnknown{"says_nothing", no_backward};

struct FakeState {
  double a;
  int64_t b;
};

Tensor fake(const OpDef& op, const Tensor& x, Shape shape, FakeState state) {
  return x.tape().record(op, shape, x.dtype(), {x}, state);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The line declaring node `id`.
std::string node_line(const std::string& dot, const std::string& id) {
  std::istringstream lines(dot);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, id.size() + 2, id + " [") == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("dot: the same program draws byte-identical DOT", "[dot]") {
  const DotOptions all{.backward = true, .values = true, .saved_bytes = true, .title = "small"};
  const std::string first = small_model_dot(all, true);
  // Other allocations in between move every address the second drawing could depend on.
  std::vector<std::unique_ptr<Tape>> noise;
  for (int i = 0; i < 3; ++i) noise.push_back(std::make_unique<Tape>());
  const std::string second = small_model_dot(all, true);
  CHECK(first == second);
  CHECK(small_model_dot({}) == small_model_dot({}));
}

TEST_CASE("dot: golden drawings of a small model", "[dot][golden]") {
  const std::string dir = std::string(TAPEGRAD_GOLDEN_DIR) + "/dot/";
  check_golden(small_model_dot({}), dir + "small_forward.dot");
  check_golden(small_model_dot(
                   {.backward = true, .values = true, .saved_bytes = true, .title = "small"}, true),
               dir + "small_backward_values.dot");
}

TEST_CASE("dot: TAPEGRAD_UPDATE_GOLDENS=1 rewrites goldens only outside CI", "[dot]") {
  using testing::golden_mode;
  using testing::GoldenMode;
  CHECK(golden_mode(nullptr, nullptr) == GoldenMode::Compare);
  CHECK(golden_mode(nullptr, "true") == GoldenMode::Compare);
  CHECK(golden_mode("0", nullptr) == GoldenMode::Compare);
  CHECK(golden_mode("1", nullptr) == GoldenMode::Update);
  CHECK(golden_mode("1", "false") == GoldenMode::Update);
  CHECK(golden_mode("1", "true") == GoldenMode::RefusedUnderCI);  // GitHub Actions sets CI=true
  CHECK(golden_mode("1", "1") == GoldenMode::RefusedUnderCI);
}

TEST_CASE("dot: nodes are n<tape id>, one per node, with op, name and shape", "[dot]") {
  const std::string dot = small_model_dot({});
  // Tape: 0 x, 1 W, 2 matmul, 3 b, 4 add "h", 5 sum "loss".
  for (const char* id : {"n0", "n1", "n2", "n3", "n4", "n5"}) {
    INFO(id);
    CHECK(count(dot, std::string("  ") + id + " [") == 1);
  }
  CHECK(count(dot, "  n6 [") == 0);
  CHECK_THAT(node_line(dot, "n2"), Catch::Contains("<b>matmul</b>") && Catch::Contains("[2, 2]"));
  CHECK_THAT(node_line(dot, "n4"), Catch::Contains("<b>add</b>") && Catch::Contains("<i>h</i>"));
  CHECK_THAT(node_line(dot, "n1"),
             Catch::Contains("<b>Linear.weight</b>") && Catch::Contains("[3, 2]"));
  CHECK_THAT(node_line(dot, "n0"), Catch::Contains("<b>x</b>") && Catch::Contains("[2, 3]"));
}

TEST_CASE("dot: parameters, inputs, constants, ops and the loss are drawn distinctly", "[dot]") {
  Tape tape;
  TapeScope scope(tape);
  Parameter w = Parameter::from_values({2}, std::vector<double>{1, 2}, DType::Float32, "w");
  Tensor c = ones({2});
  Tensor in = from_values({2}, std::vector<double>{3, 4}, DType::Float32, true);
  Tensor a = add(c, in);  // 2
  Tensor wt = w;          // 3
  sum(add(a, wt));        // 4, 5
  const std::string dot = to_dot(tape);
  auto style = [&](const char* id) {
    const std::string line = node_line(dot, id);  // the attributes before the label
    const size_t start = line.find(" [shape=");
    return line.substr(start, line.find(", label=") - start);
  };
  const std::string constant = style("n0"), input = style("n1"), parameter = style("n3"),
                    op = style("n2"), loss = style("n5");
  CHECK_THAT(parameter, Catch::Contains("#ffe0b2"));
  CHECK_THAT(input, Catch::Contains("#d7efd6"));
  CHECK_THAT(constant, Catch::Contains("dashed"));
  CHECK_THAT(loss, Catch::Contains("#fbd9d3"));
  const std::set<std::string> distinct{constant, input, parameter, op, loss};
  CHECK(distinct.size() == 5);
  CHECK(style("n4") == op);  // every plain op alike
}

TEST_CASE("dot: edges carry the shape of their tensor", "[dot]") {
  const std::string dot = small_model_dot({});
  CHECK_THAT(dot, Catch::Contains("  n0 -> n2 [label=\"[2, 3]\", weight=4];\n"));
  CHECK_THAT(dot, Catch::Contains("  n1 -> n2 [label=\"[3, 2]\"];\n"));
  CHECK_THAT(dot, Catch::Contains("  n3 -> n4 [label=\"[2, 2]\"];\n"));
  CHECK_THAT(dot, Catch::Contains("  n4 -> n5 [label=\"[2, 2]\"];\n"));
  const std::string bare = small_model_dot({.edge_labels = false});
  CHECK_THAT(bare, Catch::Contains("  n1 -> n2;\n"));
  CHECK(count(bare, "label=\"[") == 0);
}

TEST_CASE("dot: one cluster per name scope, nested as the scopes are", "[dot]") {
  const std::string dot = small_model_dot({});
  const size_t model = dot.find("subgraph cluster_s0 {");
  const size_t linear = dot.find("subgraph cluster_s1 {");
  REQUIRE(model != std::string::npos);
  REQUIRE(linear != std::string::npos);
  CHECK(model < linear);
  CHECK(dot.find("label=<<b>Model</b>>", model) < linear);
  CHECK(dot.find("label=<<b>Linear</b>>", linear) != std::string::npos);
  // The layer's parameters and ops are inside its cluster; the input and the loss are not.
  const size_t linear_end = dot.find("\n    }\n", linear);
  for (const char* id : {"    n1 [", "    n2 [", "    n3 [", "    n4 ["}) {
    INFO(id);
    const size_t at = dot.find(id);
    CHECK(at > linear);
    CHECK(at < linear_end);
  }
  CHECK(dot.find("\n  n0 [") < model);
  CHECK(dot.find("\n  n5 [") > linear_end);
}

TEST_CASE("dot: ops show their arguments, read per op from the node", "[dot]") {
  // The real ops, so the table is checked against how each op stores its arguments.
  Tape tape;
  TapeScope scope(tape);
  Generator generator(123);
  Tensor x = ones({2, 6, 4});
  Tensor s1 = x / std::sqrt(2.0);          // the attention scale 1/√d_k, divided as the book
  Tensor s2 = x * (1.0 / std::sqrt(8.0));  // the same, multiplied
  Tensor s3 = x * 0.5;
  Tensor s4 = x / 2.0;
  Tensor d = dropout(x, 0.1, true, generator);
  Tensor sh = split_heads(x, 2);  // [2, 2, 6, 2]
  Tensor mh = merge_heads(sh);
  Tensor sm = softmax(x, -1);
  Tensor sm1 = softmax(x, 1);
  Tensor cm = causal_mask(x);
  Tensor tr = transpose(sh, 2, 3);
  Tensor ct = cat({x, x}, -1);
  Tensor nr = narrow(x, 1, 2, 3);
  Tensor sd = sum(x, 1, true);
  Tensor md = mean(x, -1);
  Tensor u = fake(kFakeUnknown, x, x.shape(), {7.0, 7});
  CHECK(op_arguments(tape, s1.id()) == "× 1/√2");
  CHECK(op_arguments(tape, s2.id()) == "× 1/√8");
  CHECK(op_arguments(tape, s3.id()) == "× 0.5");
  CHECK(op_arguments(tape, s4.id()) == "÷ 2");
  CHECK(op_arguments(tape, d.id()) == "p = 0.1");
  CHECK(op_arguments(tape, sh.id()) == "H = 2");
  CHECK(op_arguments(tape, mh.id()) == "H = 2");
  CHECK(op_arguments(tape, sm.id()) == "dim -1");
  CHECK(op_arguments(tape, sm1.id()) == "dim 1");
  CHECK(op_arguments(tape, cm.id()) == "triu(1) → -inf");
  CHECK(op_arguments(tape, tr.id()) == "dims 2, 3");
  CHECK(op_arguments(tape, ct.id()) == "dim -1");
  CHECK(op_arguments(tape, nr.id()) == "dim 1, start 2, length 3");
  CHECK(op_arguments(tape, sd.id()) == "dim 1, keepdim");
  CHECK(op_arguments(tape, md.id()) == "dim -1");
  CHECK(op_arguments(tape, u.id()).empty());  // no OpDef::arguments: name and shape only
  CHECK(op_arguments(tape, x.id()).empty());  // leaves have none
  const std::string dot = to_dot(tape);
  CHECK_THAT(node_line(dot, "n" + std::to_string(s1.id())), Catch::Contains("× 1/√2"));
  CHECK_THAT(node_line(dot, "n" + std::to_string(d.id())), Catch::Contains("p = 0.1"));
}

TEST_CASE("dot: what each op keeps for its backward, in bytes", "[dot]") {
  Tape tape;
  TapeScope scope(tape);
  Generator generator(123);
  Tensor x = requires_grad(ones({2, 6, 4}));    // 48 float32: 192 bytes
  Tensor sm = softmax(x, -1);                   // keeps its output
  Tensor d = dropout(x, 0.5, true, generator);  // keeps a one-byte mask per element
  Tensor e = exp(x);                            // keeps its output
  Tensor a = add(x, x);                         // keeps nothing
  Tensor m = mul(x, x);                         // keeps both inputs
  CHECK(saved_bytes(tape, sm.id()) == 192);
  CHECK(saved_bytes(tape, d.id()) == 48);
  CHECK(saved_bytes(tape, e.id()) == 192);
  CHECK(saved_bytes(tape, a.id()) == 0);
  CHECK(saved_bytes(tape, m.id()) == 384);
  // The total counts each tensor once: x (kept by mul), softmax's and exp's outputs, the mask.
  CHECK_THAT(to_dot(tape, {.saved_bytes = true}),
             Catch::Contains("saved for backward: 624 B (distinct tensors and buffers)"));
}

TEST_CASE("dot: the fused attention ops report what they keep", "[dot]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(ones({2, 6, 4}));  // 48 float32: 192 bytes
  Tensor q = requires_grad(ones({2, 6, 4}));
  Tensor cs = causal_softmax(x, 2.0);        // keeps its output
  Tensor ca = causal_attention(x, q, x, 2);  // q, k, v, its output, a T row per head
  CHECK(saved_bytes(tape, cs.id()) == 192);
  CHECK(saved_bytes(tape, ca.id()) == 4 * 192 + 2 * 2 * 6 * 4);
}

TEST_CASE("dot: names are escaped for Graphviz's HTML labels", "[dot]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = ones({2});
  x.set_name("a<b>&\"c\"");
  {
    NameScope odd("scope <&>");
    sum(x).set_name("l\"o\"ss");
  }
  const std::string dot = to_dot(tape, {.title = "t<i>tle & \"more\""});
  CHECK_THAT(dot, Catch::Contains("<b>a&lt;b&gt;&amp;&quot;c&quot;</b>"));
  CHECK_THAT(dot, Catch::Contains("<b>scope &lt;&amp;&gt;</b>"));
  CHECK_THAT(dot, Catch::Contains("<i>l&quot;o&quot;ss</i>"));
  CHECK_THAT(dot, Catch::Contains("<b>t&lt;i&gt;tle &amp; &quot;more&quot;</b>"));
  CHECK(run_dot_program(dot, "escaped") == 0);
}

TEST_CASE("dot: values and gradients of small tensors only", "[dot]") {
  Tape tape;
  SmallModel m(tape);
  m.loss.backward();
  const std::string forward = to_dot(tape, {.values = true, .max_values = 4});
  // W [3, 2] has 6 values: too many for max_values 4; b [2, 2] shows its values and its
  // gradient (all ones, under a sum).
  CHECK_THAT(node_line(forward, "n1"), !Catch::Contains("Courier"));
  CHECK_THAT(node_line(forward, "n3"), Catch::Contains(">0.1 <") && Catch::Contains(">-0.2 <"));
  CHECK_THAT(node_line(forward, "n3"), Catch::Contains("color=\"#6a4c93\">1 <"));
  CHECK_THAT(node_line(forward, "n5"), Catch::Contains("Courier"));  // the loss, a scalar
  CHECK(count(to_dot(tape), "Courier") == 0);                        // only when asked
  // With the backward drawn, gradients move to the gradient vertices.
  const std::string backward = to_dot(tape, {.backward = true, .values = true, .max_values = 4});
  CHECK_THAT(node_line(backward, "n3"), !Catch::Contains("#6a4c93"));
  CHECK_THAT(node_line(backward, "g3"), Catch::Contains("color=\"#6a4c93\">1 <"));
}

TEST_CASE("dot: saved-for-backward sizes in bytes", "[dot]") {
  Tape tape;
  SmallModel m(tape);
  // matmul keeps x [2, 3] and W [3, 2] (float32): 48 bytes; add and sum keep nothing.
  CHECK(saved_bytes(tape, 2) == 48);
  CHECK(saved_bytes(tape, 4) == 0);
  CHECK(saved_bytes(tape, 0) == 0);
  const std::string dot = to_dot(tape, {.saved_bytes = true});
  CHECK_THAT(node_line(dot, "n2"), Catch::Contains("saves 48 B"));
  CHECK_THAT(node_line(dot, "n4"), Catch::Contains("saves nothing"));
  CHECK_THAT(dot, Catch::Contains("saved for backward: 48 B"));
  CHECK(count(to_dot(tape), "saves") == 0);
}

TEST_CASE("dot: collapsed heads draw the first head once, marked ×H", "[dot]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = ones({2, 3});
  x.set_name("x");
  std::vector<Parameter> weights;
  std::vector<Tensor> heads;
  {
    NameScope model("Wrapper");
    for (int h = 0; h < 3; ++h) {
      NameScope head("head " + std::to_string(h));
      weights.emplace_back(Shape{3, 2}, DType::Float32, "heads." + std::to_string(h) + ".W");
      heads.push_back(matmul(x, weights.back()));
    }
  }
  sum(add(add(heads[0], heads[1]), heads[2]));
  // Tape: 0 x, 1 W0, 2 mm0, 3 W1, 4 mm1, 5 W2, 6 mm2, 7 add, 8 add, 9 sum.
  const std::string full = to_dot(tape);
  CHECK(count(full, "subgraph cluster_") == 4);
  const std::string dot = to_dot(tape, {.collapse_heads = true});
  CHECK(count(dot, "subgraph cluster_") == 2);  // Wrapper and head 0
  CHECK_THAT(dot, Catch::Contains("<b>head 0</b> <font color=\"#b23b2a\">×3</font>"));
  for (const char* hidden : {"n3", "n4", "n5", "n6"}) CHECK(node_line(dot, hidden).empty());
  CHECK_FALSE(node_line(dot, "n2").empty());
  // add(mm0, mm1): both arguments are drawn as one edge from head 0; add(add, mm2) keeps its
  // first edge and folds mm2 into an edge from mm0.
  CHECK_THAT(dot, Catch::Contains("  n2 -> n7 [label=\"[2, 2] ×2\", penwidth=2];\n"));
  CHECK_THAT(dot, Catch::Contains("  n7 -> n8 [label=\"[2, 2]\"];\n"));
  CHECK_THAT(dot, Catch::Contains("  n2 -> n8 [label=\"[2, 2]\"];\n"));
  CHECK(count(dot, " -> ") == 6);  // x->mm0, W0->mm0, mm0->add ×2, add->add, mm0->add, add->sum
  CHECK_THAT(dot, Catch::Contains("one head drawn for H identical ones"));
  CHECK(run_dot_program(dot, "collapsed") == 0);
  // Backward vertices of the other heads fold the same way.
  const std::string backward = to_dot(tape, {.backward = true, .collapse_heads = true});
  CHECK(node_line(backward, "g4").empty());
  CHECK_FALSE(node_line(backward, "g2").empty());
  CHECK(run_dot_program(backward, "collapsed_backward") == 0);
}

TEST_CASE("dot: the legend lists the kinds drawn", "[dot]") {
  const std::string forward = small_model_dot({});
  CHECK_THAT(forward, Catch::Contains("<b>legend</b>"));
  CHECK_THAT(forward, Catch::Contains(">parameter</font>"));
  CHECK_THAT(forward, Catch::Contains(">constant</font>"));
  CHECK_THAT(forward, Catch::Contains(">loss</font>"));
  CHECK_THAT(forward, !Catch::Contains("an op's backward") && !Catch::Contains("cluster_backward"));
  CHECK_THAT(forward, !Catch::Contains("input (requires grad)"));
  const std::string backward = small_model_dot({.backward = true});
  CHECK_THAT(backward, Catch::Contains("a leaf's gradient") && Catch::Contains("an op's backward"));
  CHECK_THAT(small_model_dot({.legend = false}), !Catch::Contains("legend"));
  CHECK_THAT(small_model_dot({.legend = false, .title = "t"}), !Catch::Contains("legend"));
}

TEST_CASE("dot: graph attributes: rankdir, title", "[dot]") {
  CHECK_THAT(small_model_dot({}), Catch::Contains("graph [rankdir=TB,"));
  const std::string lr = small_model_dot({.rankdir = "LR", .title = "My model"});
  CHECK_THAT(lr, Catch::Contains("graph [rankdir=LR,"));
  CHECK_THAT(lr, Catch::Contains("<b>My model</b>"));
  CHECK(lr.rfind("// tapegrad graph: 6 tape nodes, My model\ndigraph tapegrad {\n", 0) == 0);
}

TEST_CASE("dot: an empty tape is an empty, valid drawing", "[dot][graphviz]") {
  Tape tape;
  const std::string dot = to_dot(tape, {.backward = true, .values = true, .saved_bytes = true});
  CHECK(dot.find(" -> ") == std::string::npos);
  CHECK(dot.find("subgraph") == std::string::npos);
  CHECK(run_dot_program(dot, "empty") == 0);
  CHECK(run_dot_program(to_dot(tape, {.legend = false}), "empty_bare") == 0);
}

TEST_CASE("dot: Graphviz's dot program accepts every variant", "[dot][graphviz]") {
  int i = 0;
  for (bool backward : {false, true}) {
    for (bool values : {false, true}) {
      for (bool saved : {false, true}) {
        const DotOptions options{.backward = backward,
                                 .values = values,
                                 .collapse_heads = true,
                                 .saved_bytes = saved,
                                 .title = "variant"};
        INFO("backward " << backward << ", values " << values << ", saved " << saved);
        CHECK(run_dot_program(small_model_dot(options, true), "variant" + std::to_string(i++)) ==
              0);
      }
    }
  }
}

// --- fused ops drawn as the ops they compute (OpDef::decomposition) ---------------------------

namespace {

// q, k, v [2, 6, 4] requiring grad -> causal_dot_product_attention with 2 heads -> sum.
struct FusedAttention {
  Tensor q, k, v, out, loss;
  FusedAttention(Tape& tape, double dropout_p) {
    TapeScope scope(tape);
    Generator data(7);
    q = requires_grad(rand({2, 6, 4}, DType::Float32, data)).set_name("q");
    k = requires_grad(rand({2, 6, 4}, DType::Float32, data)).set_name("k");
    v = requires_grad(rand({2, 6, 4}, DType::Float32, data)).set_name("v");
    Generator masks;
    out = causal_dot_product_attention(q, k, v, 2, dropout_p, dropout_p > 0.0, masks);
    out.set_name("context_vec");
    loss = sum(out).set_name("loss");
  }
};

}  // namespace

TEST_CASE("dot: a fused op's decomposition computes what the op computes", "[dot]") {
  // The drawing shows causal_dot_product_attention as its decomposition: these must be the ops
  // the kernel computes. With dropout drawn the op runs its exact kernel: value for value, mask
  // included (both on a fresh generator). With p = 0 it runs the fused kernels, which sum in
  // another order: within float32 (float64) rounding.
  const OpDef* op = find_registered_op("causal_dot_product_attention");
  REQUIRE(op != nullptr);
  REQUIRE(op->decomposition != nullptr);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (double p : {0.0, 0.4}) {
      INFO(dtype_name(dtype) << ", dropout p = " << p);
      Tape tape;
      TapeScope scope(tape);
      Generator data(11);
      const Tensor q = rand({3, 5, 6}, dtype, data);
      const Tensor k = rand({3, 5, 6}, dtype, data);
      const Tensor v = rand({3, 5, 6}, dtype, data);
      Generator masks;
      const Tensor fused = causal_dot_product_attention(q, k, v, 3, p, true, masks);
      const std::vector<Tensor> inputs = {q, k, v};
      const Tensor composed = op->decomposition(inputs, fused.node());
      CHECK(composed.shape() == fused.shape());
      CHECK(composed.dtype() == fused.dtype());
      if (p > 0.0) {
        CHECK(composed.values() == fused.values());
      } else {
        const double tolerance = dtype == DType::Float32 ? 1e-6 : 1e-14;
        CHECK(testing::max_abs_difference(composed.values(), fused.values()) <= tolerance);
      }
      // The ops it recorded, as the book's MultiHeadAttention.forward writes them.
      std::multiset<std::string> ops;
      for (int32_t i = fused.id() + 1; i <= composed.id(); ++i) ops.insert(tape.node(i).op_name());
      std::multiset<std::string> expected = {
          "split_heads", "split_heads", "split_heads", "transpose", "matmul",
          "causal_mask", "scale",       "softmax",     "matmul",    "merge_heads"};
      if (p > 0.0) expected.insert("dropout");
      CHECK(ops == expected);
    }
  }
}

TEST_CASE("dot: a fused op is drawn as the ops it computes inside a cluster named after it",
          "[dot][graphviz]") {
  Tape tape;
  FusedAttention m(tape, 0.0);
  m.loss.backward({.retain_graph = true});
  const std::string dot = to_dot(tape);
  const std::string fused = "n" + std::to_string(m.out.id());
  // One cluster, named after the op, with its arguments.
  CHECK(occurrences(dot, "subgraph cluster_f") == 1);
  CHECK_THAT(dot, Catch::Contains("subgraph cluster_f" + std::to_string(m.out.id()) + " {"));
  CHECK_THAT(dot, Catch::Contains("label=<<b>causal_dot_product_attention</b><font "
                                  "color=\"#1f4e9c\"> · H = 2</font><br/>"));
  // Inside: the book's ops with their shapes; heads [B, H, T, D/H], weights [B, H, T, T].
  for (const char* op : {"split_heads", "transpose", "causal_mask", "scale", "softmax"}) {
    INFO(op);
    CHECK(occurrences(dot, "<b>" + std::string(op) + "</b>") ==
          (op == std::string("split_heads") ? 3 : 1));
  }
  CHECK(occurrences(dot, "<b>matmul</b>") == 2);
  CHECK_THAT(dot, Catch::Contains("<b>split_heads</b> <i>queries</i></td></tr><tr><td><font "
                                  "point-size=\"9\" color=\"#444444\">[2, 2, 6, 2]</font>"));
  CHECK_THAT(dot, Catch::Contains("<b>matmul</b> <i>attn_scores</i></td></tr><tr><td><font "
                                  "point-size=\"9\" color=\"#444444\">[2, 2, 6, 6]</font>"));
  CHECK_THAT(dot, Catch::Contains("× 1/√2"));
  CHECK(occurrences(dot, "<b>dropout</b>") == 0);  // no mask was drawn: p = 0
  // The result keeps the node's id and name: the edges out of the op leave from it.
  CHECK_THAT(dot, Catch::Contains("  " + fused + " [shape=box"));
  CHECK_THAT(dot, Catch::Contains("<b>merge_heads</b> <i>context_vec</i>"));
  CHECK_THAT(dot, Catch::Contains("  " + fused + " -> n" + std::to_string(m.loss.id()) + " ["));
  CHECK(occurrences(dot, "causal_dot_product_attention") == 1);  // the cluster's label
  CHECK_THAT(dot, Catch::Contains("a fused op: the ops it computes in one kernel"));
  // Each input enters the op that reads it: q the queries' split_heads.
  CHECK_THAT(dot, Catch::Contains("  n" + std::to_string(m.q.id()) + " -> " + fused + "_"));
  CHECK(run_dot_program(dot, "fused_expanded") == 0);

  // Off: one node, as the tape holds it.
  const std::string one = to_dot(tape, {.expand_fused = false});
  CHECK(occurrences(one, "subgraph cluster_f") == 0);
  CHECK(occurrences(one, "<b>softmax</b>") == 0);
  CHECK_THAT(one, Catch::Contains("<b>causal_dot_product_attention</b> <i>context_vec</i>"));

  // The backward is one kernel: one node; values and saved bytes go to the result and the cluster.
  const std::string all =
      to_dot(tape, {.backward = true, .values = true, .max_values = 1000, .saved_bytes = true});
  CHECK_THAT(all, Catch::Contains("<b>causal_dot_product_attention backward</b>"));
  CHECK_THAT(all, Catch::Contains("one fused op, drawn as the ops it computes; saves "));
  CHECK(run_dot_program(all, "fused_expanded_all") == 0);
}

TEST_CASE("dot: a fused op's drawing shows its dropout when it drew a mask", "[dot]") {
  Tape tape;
  FusedAttention m(tape, 0.25);
  const std::string dot = to_dot(tape);
  CHECK_THAT(dot, Catch::Contains("H = 2, dropout p = 0.25"));
  CHECK(occurrences(dot, "<b>dropout</b>") == 1);
  CHECK_THAT(dot, Catch::Contains("p = 0.25</font>"));
  CHECK(run_dot_program(dot, "fused_dropout") == 0);
}

#if TAPEGRAD_HAVE_GRAPHVIZ
TEST_CASE("render: SVG and PNG through libgvc, in-process", "[dot][graphviz]") {
  const std::string dot = small_model_dot({.backward = true, .title = "small"});
  const std::string svg = render(dot, "svg");
  CHECK_THAT(svg, Catch::Contains("<svg") && Catch::Contains("matmul") &&
                      Catch::Contains("Linear.weight"));
  const std::string png_path = tapegrad::testing::scratch_path("small.png");
  std::filesystem::create_directories(std::filesystem::path(png_path).parent_path());
  std::filesystem::remove(png_path);
  render(dot, "png", png_path);
  const std::string png = tapegrad::testing::read_text_file(png_path);
  REQUIRE(png.size() > 8);
  CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
}

TEST_CASE("render: errors name what Graphviz refused", "[dot][graphviz]") {
  CHECK_THROWS_WITH(render("digraph { a -> ", "svg"),
                    Catch::StartsWith("render: Graphviz could not parse the DOT text"));
  CHECK_THROWS_WITH(render("digraph { a -> b }", "no-such-format"),
                    Catch::StartsWith("render: cannot render no-such-format: ") &&
                        Catch::Contains("no-such-format is unavailable"));
  CHECK_THROWS_WITH(render("digraph { a -> b }", "svg", "/no/such/dir/x.svg"),
                    Catch::Contains("/no/such/dir/x.svg"));
}
#else
// A build without Graphviz's libgvc (TAPEGRAD_GRAPHVIZ: the arm64 cross build) renders nothing,
// and says why, writing no file.
TEST_CASE("render: without Graphviz, an Error says the build has none", "[dot]") {
  const std::string dot = small_model_dot({.title = "small"});
  CHECK_THROWS_WITH(render(dot, "svg"),
                    Catch::StartsWith("render: cannot render svg: this tapegrad was built "
                                      "without Graphviz"));
  const std::string path = tapegrad::testing::scratch_path("no_graphviz.svg");
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(render(dot, "svg", path), Catch::Contains("libgraphviz-dev"));
  CHECK_FALSE(std::filesystem::exists(path));
}
#endif
