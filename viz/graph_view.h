// GraphView: a tape as a Boost.Graph (BGL) adjacency_list, for drawing and for graph algorithms.
//
// Vertex v < num_forward is tape node v (so vertex numbers are tape ids: stable from run to run,
// never pointers). An edge u -> v means "v reads u": for op inputs, in the op's argument order.
// With backward, a gradient vertex follows for every node the backward pass reaches from the
// root: an op's vertex stands for its backward (it receives dL/dY from its consumers' backward
// and sends dL/dX_k to its inputs'), a leaf's for the gradient it accumulates. Gradient edges run
// from the consumer's backward to the input's, so the whole picture flows one way: forward down
// to the loss, then backward down to the parameters' gradients.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

enum class VertexKind : uint8_t {
  Constant,   // a tape leaf that needs no gradient
  Input,      // a tape leaf that requires grad
  Parameter,  // a tape leaf bound to a Parameter
  Op,         // an op's output
  Backward,   // the backward of an op (gradient vertices only)
  Gradient,   // the gradient a leaf accumulates (gradient vertices only)
};
const char* vertex_kind_name(VertexKind kind);  // "constant", "input", ..., "gradient"

struct VertexProps {
  VertexKind kind = VertexKind::Constant;
  int32_t node = -1;  // the tape node (for gradient vertices: the node whose gradient it is)
  std::string op;     // Node::op_name(): "matmul", "parameter", ...
  std::string name;   // the node's user name ("W_query.weight", "attn_scores"), may be empty
  Shape shape;        // the value's shape (gradient vertices: the gradient's, the same)
  DType dtype = DType::Float32;
  int32_t scope = -1;  // GraphView::scopes index, -1 for the top level
  bool requires_grad = false;
};

struct EdgeProps {
  Shape shape;            // the tensor travelling along the edge (a value, or a gradient)
  int32_t input = -1;     // forward edges: the argument position at the consumer; else -1
  bool gradient = false;  // a gradient edge (or the seed edge from the root to its backward)
};

using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexProps, EdgeProps>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

struct ScopeInfo {
  std::string name;  // "head 0"
  int32_t parent = -1;
  std::string path;  // "MultiHeadAttentionWrapper/head 0"
};

struct GraphViewOptions {
  bool backward = false;  // add the gradient vertices and edges
  int32_t root = -1;      // the loss for backward; -1: the last node that requires grad
};

struct GraphView {
  Graph graph;
  std::vector<ScopeInfo> scopes;  // a copy of the tape's scopes, so the view stands alone
  int32_t num_forward = 0;        // vertices [0, num_forward) are the tape's nodes
  int32_t root = -1;              // the backward root (a tape id), -1 without backward
  // Per tape id: its gradient vertex, or -1 (none, or built without backward).
  std::vector<int32_t> gradient_vertex;

  const VertexProps& operator[](Vertex v) const { return graph[v]; }
  int32_t num_vertices() const { return static_cast<int32_t>(boost::num_vertices(graph)); }
  bool is_gradient(Vertex v) const { return static_cast<int32_t>(v) >= num_forward; }
};

GraphView make_graph_view(const Tape& tape, const GraphViewOptions& options = {});

// How many forward vertices each op (or leaf kind) has: {"matmul": 3, "parameter": 4, ...}.
std::map<std::string, int> op_counts(const GraphView& view);
// Vertices without in-edges (sources) or without out-edges (sinks), in vertex order.
std::vector<Vertex> sources(const GraphView& view);
std::vector<Vertex> sinks(const GraphView& view);

}  // namespace tapegrad
