// Tests for viz/graph_view.cpp: the Boost.Graph view of a tape, forward and backward.
#include <tapegrad/viz/graph_view.h>

#include <catch2/catch.hpp>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>

using namespace tapegrad;

namespace {

// x [2, 3] (constant) · W [3, 2] (parameter) inside "Layer", then the loss sum(y).
struct MatmulModel {
  Parameter W =
      Parameter::from_values({3, 2}, std::vector<double>{1, 2, 3, 4, 5, 6}, DType::Float32, "W");
  Tensor x, y, loss;
  explicit MatmulModel(Tape& tape) {
    TapeScope scope(tape);
    x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
    x.set_name("x");
    {
      NameScope layer("Layer");
      y = matmul(x, W);
    }
    loss = sum(y);
  }
};

std::vector<std::pair<int32_t, int32_t>> in_edges_of(const GraphView& view, Vertex v) {
  std::vector<std::pair<int32_t, int32_t>> out;  // (source, argument position)
  for (Edge e : boost::make_iterator_range(boost::in_edges(v, view.graph))) {
    out.emplace_back(static_cast<int32_t>(boost::source(e, view.graph)), view.graph[e].input);
  }
  return out;
}

}  // namespace

TEST_CASE("graph view: one vertex per tape node, numbered by tape id", "[graph_view]") {
  Tape tape;
  MatmulModel m(tape);
  const GraphView view = make_graph_view(tape);
  REQUIRE(view.num_vertices() == 4);
  CHECK(view.num_forward == 4);
  CHECK(view[0].kind == VertexKind::Constant);
  CHECK(view[0].name == "x");
  CHECK(view[0].op == "constant");
  CHECK(view[1].kind == VertexKind::Parameter);
  CHECK(view[1].name == "W");
  CHECK(view[1].shape == Shape{3, 2});
  CHECK(view[2].kind == VertexKind::Op);
  CHECK(view[2].op == "matmul");
  CHECK(view[2].shape == Shape{2, 2});
  CHECK(view[2].requires_grad);
  CHECK(view[3].op == "sum");
  CHECK(view[3].shape == Shape{});
  for (int32_t v = 0; v < 4; ++v) CHECK(view[static_cast<Vertex>(v)].node == v);
}

TEST_CASE("graph view: edges run from inputs to consumers, in argument order, with shapes",
          "[graph_view]") {
  Tape tape;
  MatmulModel m(tape);
  const GraphView view = make_graph_view(tape);
  CHECK(boost::num_edges(view.graph) == 3);
  CHECK(in_edges_of(view, 2) == std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 1}});
  CHECK(in_edges_of(view, 3) == std::vector<std::pair<int32_t, int32_t>>{{2, 0}});
  for (Edge e : boost::make_iterator_range(boost::edges(view.graph))) {
    CHECK(view.graph[e].shape == view[boost::source(e, view.graph)].shape);
    CHECK_FALSE(view.graph[e].gradient);
  }
}

TEST_CASE("graph view: a tensor used twice gives two parallel edges", "[graph_view]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2}, std::vector<double>{1, 2}, DType::Float64, true);
  add(x, x);
  const GraphView view = make_graph_view(tape);
  CHECK(in_edges_of(view, 1) == std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {0, 1}});
  CHECK(view[0].kind == VertexKind::Input);
}

TEST_CASE("graph view: scopes are copied with their paths", "[graph_view]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = zeros({2});
  Tensor b;
  {
    NameScope outer("Model");
    NameScope inner("head 1");
    b = add(a, a);
  }
  const GraphView view = make_graph_view(tape);
  const int32_t s = view[static_cast<Vertex>(b.id())].scope;
  REQUIRE(s >= 0);
  CHECK(view.scopes[static_cast<size_t>(s)].name == "head 1");
  CHECK(view.scopes[static_cast<size_t>(s)].path == "Model/head 1");
  const int32_t parent = view.scopes[static_cast<size_t>(s)].parent;
  REQUIRE(parent >= 0);
  CHECK(view.scopes[static_cast<size_t>(parent)].name == "Model");
  CHECK(view[0].scope == -1);
}

TEST_CASE("graph view: leaves are the sources, the loss is the only sink", "[graph_view]") {
  Tape tape;
  MatmulModel m(tape);
  const GraphView view = make_graph_view(tape);
  CHECK(sources(view) == std::vector<Vertex>{0, 1});
  CHECK(sinks(view) == std::vector<Vertex>{3});
  CHECK(op_counts(view) ==
        std::map<std::string, int>{{"constant", 1}, {"parameter", 1}, {"matmul", 1}, {"sum", 1}});
}

TEST_CASE("graph view: backward adds a vertex per node the backward reaches", "[graph_view]") {
  Tape tape;
  MatmulModel m(tape);
  const GraphView view = make_graph_view(tape, {.backward = true});
  CHECK(view.root == 3);
  // sum's backward, matmul's backward, W's gradient: x is a constant and gets none.
  REQUIRE(view.num_vertices() == 7);
  CHECK(view.gradient_vertex == std::vector<int32_t>{-1, 6, 5, 4});
  CHECK(view[4].kind == VertexKind::Backward);
  CHECK(view[4].op == "sum");
  CHECK(view[5].kind == VertexKind::Backward);
  CHECK(view[5].op == "matmul");
  CHECK(view[6].kind == VertexKind::Gradient);
  CHECK(view[6].name == "W");
  CHECK(view[6].shape == Shape{3, 2});
  CHECK(view.is_gradient(4));
  CHECK_FALSE(view.is_gradient(3));
  // The seed edge from the loss, then gradients flowing from consumers to inputs.
  std::vector<std::pair<int32_t, int32_t>> gradient_edges;
  for (Edge e : boost::make_iterator_range(boost::edges(view.graph))) {
    if (!view.graph[e].gradient) continue;
    gradient_edges.emplace_back(static_cast<int32_t>(boost::source(e, view.graph)),
                                static_cast<int32_t>(boost::target(e, view.graph)));
  }
  std::sort(gradient_edges.begin(), gradient_edges.end());
  CHECK(gradient_edges == std::vector<std::pair<int32_t, int32_t>>{{3, 4}, {4, 5}, {5, 6}});
  // The parameter's gradient is the last stop.
  CHECK(sinks(view) == std::vector<Vertex>{6});
}

TEST_CASE("graph view: the backward root is the last node requiring grad, or the one given",
          "[graph_view]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2}, std::vector<double>{1, 2}, DType::Float64, true);
  Tensor a = add(x, x);  // 1
  sum(a);                // 2
  zeros({2});            // 3: a constant after the loss does not become the root
  CHECK(make_graph_view(tape, {.backward = true}).root == 2);
  const GraphView from_a = make_graph_view(tape, {.backward = true, .root = 1});
  CHECK(from_a.root == 1);
  CHECK(from_a.gradient_vertex == std::vector<int32_t>{5, 4, -1, -1});
  // add(x, x) sends two gradients to x: two parallel gradient edges.
  CHECK(boost::in_degree(5, from_a.graph) == 2);
  CHECK_THROWS_WITH(make_graph_view(tape, {.backward = true, .root = 3}),
                    Catch::Contains("constant #3") && Catch::Contains("does not require grad"));
  CHECK_THROWS_WITH(make_graph_view(tape, {.backward = true, .root = 9}),
                    Catch::Contains("root 9 is not a node of the tape (4 nodes)"));
}

TEST_CASE("graph view: a tape where nothing requires grad has no backward", "[graph_view]") {
  Tape tape;
  TapeScope scope(tape);
  sum(add(zeros({2}), ones({2})));
  const GraphView view = make_graph_view(tape, {.backward = true});
  CHECK(view.root == -1);
  CHECK(view.num_vertices() == 4);
  CHECK(view.gradient_vertex == std::vector<int32_t>{-1, -1, -1, -1});
}
