// The Boost.Graph view of a tape: one vertex per node (and per gradient), edges in argument order.
#include <tapegrad/viz/graph_view.h>

#include <tapegrad/graph/error.h>

namespace tapegrad {

namespace {

VertexKind forward_kind(NodeKind kind) {
  switch (kind) {
    case NodeKind::Constant:
      return VertexKind::Constant;
    case NodeKind::Input:
      return VertexKind::Input;
    case NodeKind::Parameter:
      return VertexKind::Parameter;
    case NodeKind::Op:
      break;
  }
  return VertexKind::Op;
}

int32_t default_root(const Tape& tape) {
  for (int32_t i = tape.size() - 1; i >= 0; --i) {
    if (tape.node(i).requires_grad) return i;
  }
  return -1;
}

}  // namespace

const char* vertex_kind_name(VertexKind kind) {
  switch (kind) {
    case VertexKind::Constant:
      return "constant";
    case VertexKind::Input:
      return "input";
    case VertexKind::Parameter:
      return "parameter";
    case VertexKind::Op:
      return "op";
    case VertexKind::Backward:
      return "backward";
    case VertexKind::Gradient:
      return "gradient";
  }
  return "op";
}

GraphView make_graph_view(const Tape& tape, const GraphViewOptions& options) {
  GraphView view;
  const ScopeTable& scopes = tape.scopes();
  view.scopes.reserve(static_cast<size_t>(scopes.size()));
  for (int32_t s = 0; s < scopes.size(); ++s) {
    view.scopes.push_back(ScopeInfo{scopes.name(s), scopes.parent(s), scopes.path(s)});
  }

  const int32_t n = tape.size();
  view.num_forward = n;
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = tape.node(i);
    VertexProps p;
    p.kind = forward_kind(node.kind);
    p.node = i;
    p.op = node.op_name();
    p.name = node.display_name();
    p.shape = node.shape;
    p.dtype = node.dtype;
    p.scope = node.scope;
    p.requires_grad = node.requires_grad;
    boost::add_vertex(std::move(p), view.graph);
  }
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = tape.node(i);
    for (int k = 0; k < node.num_inputs; ++k) {
      const int32_t from = node.inputs[k];
      boost::add_edge(static_cast<Vertex>(from), static_cast<Vertex>(i),
                      EdgeProps{tape.node(from).shape, k, false}, view.graph);
    }
  }

  view.gradient_vertex.assign(static_cast<size_t>(n), -1);
  if (!options.backward) return view;
  const int32_t root = options.root >= 0 ? options.root : default_root(tape);
  if (root >= n) {
    throw Error("make_graph_view: root " + std::to_string(root) + " is not a node of the tape (" +
                std::to_string(n) + " nodes)");
  }
  if (root < 0) return view;  // nothing requires grad: there is no backward to draw
  if (!tape.node(root).requires_grad) {
    throw Error("make_graph_view: the root " + tape.describe_node(root) +
                " does not require grad, so it has no backward");
  }
  view.root = root;

  // The nodes the backward walk reaches from the root, in the order it visits them.
  std::vector<char> reached(static_cast<size_t>(n), 0);
  reached[static_cast<size_t>(root)] = 1;
  for (int32_t i = root; i >= 0; --i) {
    const Node& node = tape.node(i);
    if (!reached[static_cast<size_t>(i)] || node.kind != NodeKind::Op) continue;
    for (int k = 0; k < node.num_inputs; ++k) {
      if (tape.input(node, k).requires_grad) reached[static_cast<size_t>(node.inputs[k])] = 1;
    }
  }
  for (int32_t i = root; i >= 0; --i) {
    if (!reached[static_cast<size_t>(i)]) continue;
    VertexProps p = view.graph[static_cast<Vertex>(i)];
    p.kind = p.kind == VertexKind::Op ? VertexKind::Backward : VertexKind::Gradient;
    view.gradient_vertex[static_cast<size_t>(i)] =
        static_cast<int32_t>(boost::add_vertex(std::move(p), view.graph));
  }
  const Shape& root_shape = tape.node(root).shape;
  boost::add_edge(static_cast<Vertex>(root),
                  static_cast<Vertex>(view.gradient_vertex[static_cast<size_t>(root)]),
                  EdgeProps{root_shape, -1, true}, view.graph);
  for (int32_t i = root; i >= 0; --i) {
    const Node& node = tape.node(i);
    const int32_t from = view.gradient_vertex[static_cast<size_t>(i)];
    if (from < 0 || node.kind != NodeKind::Op) continue;
    for (int k = 0; k < node.num_inputs; ++k) {
      const int32_t to = view.gradient_vertex[static_cast<size_t>(node.inputs[k])];
      if (to < 0) continue;
      boost::add_edge(static_cast<Vertex>(from), static_cast<Vertex>(to),
                      EdgeProps{tape.input(node, k).shape, -1, true}, view.graph);
    }
  }
  return view;
}

std::map<std::string, int> op_counts(const GraphView& view) {
  std::map<std::string, int> counts;
  for (int32_t v = 0; v < view.num_forward; ++v) ++counts[view.graph[static_cast<Vertex>(v)].op];
  return counts;
}

std::vector<Vertex> sources(const GraphView& view) {
  std::vector<Vertex> out;
  for (Vertex v : boost::make_iterator_range(boost::vertices(view.graph))) {
    if (boost::in_degree(v, view.graph) == 0) out.push_back(v);
  }
  return out;
}

std::vector<Vertex> sinks(const GraphView& view) {
  std::vector<Vertex> out;
  for (Vertex v : boost::make_iterator_range(boost::vertices(view.graph))) {
    if (boost::out_degree(v, view.graph) == 0) out.push_back(v);
  }
  return out;
}

}  // namespace tapegrad
