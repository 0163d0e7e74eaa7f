// DOT export over the Boost.Graph view of a tape: the writer (clusters, nodes, edges, legend),
// drawing with viz/dot_labels.h's labels and viz/dot_collapse.h's repeat collapsing.
#include <tapegrad/viz/dot.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/viz/dot_collapse.h>
#include <tapegrad/viz/dot_labels.h>
#include <tapegrad/viz/graph_view.h>

namespace tapegrad {

namespace {

using namespace dot_detail;

class DotWriter {
 public:
  DotWriter(const Tape& tape, const DotOptions& options)
      : tape_(tape),
        options_(options),
        view_(make_graph_view(tape, GraphViewOptions{options.backward, options.root})),
        collapser_(view_, options.collapse_heads, options.collapse_repeats),
        collapse_(collapser_.result()) {
    root_ = view_.root;
    if (root_ < 0) {  // no backward drawn: still mark the loss
      for (int32_t i = tape.size() - 1; i >= 0 && options.root < 0; --i) {
        if (tape.node(i).requires_grad) {
          root_ = i;
          break;
        }
      }
      if (options.root >= 0 && options.root < tape.size()) root_ = options.root;
    }
    expand_fused();
    place_beside();
  }

  void write(std::ostream& out) {
    out << "// tapegrad graph: " << tape_.size() << " tape nodes";
    if (!options_.title.empty()) out << ", " << options_.title.substr(0, options_.title.find('\n'));
    out << "\ndigraph tapegrad {\n";
    out << "  graph [rankdir=" << options_.rankdir << ", newrank=true, fontname=\"" << kFont
        << "\", fontsize=11, nodesep=0.3, ranksep=0.18, labelloc=t, labeljust=c";
    const std::string heading = heading_label();
    if (!heading.empty()) out << ", label=" << heading;
    out << "];\n";
    out << "  node [fontname=\"" << kFont
        << "\", fontsize=10, margin=\"0.08,0.03\", height=0.3];\n";
    out << "  edge [fontname=\"" << kFont
        << "\", fontsize=8, color=\"#5b6b80\", fontcolor=\"#5b6b80\", arrowsize=0.6];\n";

    write_cluster(out, -1, false, 1);
    if (has_drawn_gradient()) {
      out << "  subgraph cluster_backward {\n";
      out << "    label=<<b>backward</b>>; style=\"rounded,filled\"; fillcolor=\"#faf7fd\"; "
             "color=\"#a58cc7\"; fontcolor=\"#6a4c93\";\n";
      write_cluster(out, -1, true, 2);
      out << "  }\n";
    }
    write_edges(out);
    out << "}\n";
  }

 private:
  bool drawn(int32_t v) const { return collapse_.stand_in[static_cast<size_t>(v)] == v; }

  bool has_drawn_gradient() const {
    for (int32_t v = view_.num_forward; v < view_.num_vertices(); ++v) {
      if (drawn(v)) return true;
    }
    return false;
  }

  std::string vertex_id(int32_t v) const {
    const VertexProps& p = view_.graph[static_cast<Vertex>(v)];
    return (view_.is_gradient(static_cast<Vertex>(v)) ? "g" : "n") + std::to_string(p.node);
  }

  // The heading: the title (first line bold), the saved-bytes total, and the legend in one row,
  // so the legend costs the drawing one line of height instead of a tall box on its first rank.
  std::string heading_label() const {
    std::vector<std::string> rows;
    if (!options_.title.empty()) {
      const size_t newline = options_.title.find('\n');
      rows.push_back("<font point-size=\"15\"><b>" + html(options_.title.substr(0, newline)) +
                     "</b></font>");
      if (newline != std::string::npos) {
        rows.push_back("<font point-size=\"11\">" + html(options_.title.substr(newline + 1)) +
                       "</font>");
      }
    }
    if (options_.saved_bytes) {
      rows.push_back("<font point-size=\"10\" color=\"#7a5c00\">saved for backward: " +
                     html(bytes_text(total_saved_bytes())) +
                     " (distinct tensors and buffers)</font>");
    }
    if (options_.legend) rows.push_back(legend_row());
    if (rows.empty()) return "";
    std::string s = "<<table border=\"0\" cellborder=\"0\" cellspacing=\"0\" cellpadding=\"2\">";
    for (const std::string& row : rows) s += "<tr><td>" + row + "</td></tr>";
    return s + "</table>>";
  }

  int64_t total_saved_bytes() const {
    std::vector<char> counted(static_cast<size_t>(tape_.size()), 0);
    int64_t total = 0;
    for (int32_t i = 0; i < tape_.size(); ++i) {
      const Node& n = tape_.node(i);
      if (n.kind != NodeKind::Op || !n.requires_grad) continue;
      for (int32_t id : saved_tensors(n, i)) {
        if (!counted[static_cast<size_t>(id)]) total += tensor_bytes(tape_.node(id));
        counted[static_cast<size_t>(id)] = 1;
      }
      total += state_bytes(tape_, n);
    }
    return total;
  }

  LabelParts label_parts(int32_t v) const {
    const VertexProps& p = view_.graph[static_cast<Vertex>(v)];
    const Node& node = tape_.node(p.node);
    LabelParts l;
    l.shape = shape_text(p.shape, p.dtype);
    const bool small = options_.values && p.shape.numel() <= options_.max_values;
    switch (p.kind) {
      case VertexKind::Op:
        l.title = p.op;
        l.subtitle = p.name;
        l.arguments = op_arguments(tape_, p.node);
        if (options_.saved_bytes && node.requires_grad) {
          const int64_t b = saved_bytes(tape_, p.node);
          l.saved = b > 0 ? "saves " + bytes_text(b) : "saves nothing";
        }
        break;
      case VertexKind::Constant:
      case VertexKind::Input:
      case VertexKind::Parameter:
        l.title = p.name.empty() ? p.op : p.name;  // the kind shows in the colour (legend)
        break;
      case VertexKind::Backward:
        l.title = p.op + " backward";
        l.subtitle = p.name.empty() ? "" : "∂L/∂" + p.name;
        break;
      case VertexKind::Gradient:
        l.title = "∂L/∂" + (p.name.empty() ? p.op + " #" + std::to_string(p.node) : p.name);
        break;
    }
    const bool gradient_vertex = view_.is_gradient(static_cast<Vertex>(v));
    if (small && !gradient_vertex && node.value != nullptr) {
      l.values = values_table(node.value, node.dtype, node.shape, "#222222");
    }
    // Gradients go into the gradient vertex when the backward is drawn, else under the value.
    const bool grad_here =
        gradient_vertex || view_.gradient_vertex[static_cast<size_t>(p.node)] < 0;
    const void* grad = small && grad_here ? node.grad_to_read() : nullptr;
    if (grad != nullptr && node.requires_grad) {
      l.grads = values_table(grad, node.dtype, node.shape, "#6a4c93");
    }
    return l;
  }

  void write_vertex(std::ostream& out, int32_t v, int indent) const {
    const VertexProps& p = view_.graph[static_cast<Vertex>(v)];
    const bool is_root = !view_.is_gradient(static_cast<Vertex>(v)) && p.node == root_;
    write_node(out, vertex_id(v), style_of(p.kind, is_root), label_parts(v), indent);
  }

  static void write_node(std::ostream& out, const std::string& id, const Style& s,
                         const LabelParts& label, int indent) {
    out << std::string(static_cast<size_t>(indent) * 2, ' ') << id << " [shape=" << s.shape
        << ", style=\"" << s.style << "\", fillcolor=\"" << s.fill << "\", color=\"" << s.border
        << "\", penwidth=" << number(s.penwidth) << ", label=" << html_label(label) << "];\n";
  }

  // --- fused ops, drawn as the ops they compute (OpDef::decomposition) --------------------------

  // The ops a fused op's node stands for, recorded by its OpDef::decomposition on a scratch tape
  // whose first num_inputs nodes are leaves for the node's inputs (shapes only: they hold zeros).
  // The result is drawn with the node's own id, so the edges out of the node leave from it.
  struct Expansion {
    std::unique_ptr<Tape> tape;
    int32_t num_inputs = 0;
    int32_t output = -1;  // the scratch id of the result
  };

  // Records the expansion of every drawn op whose OpDef has a decomposition (not the loss).
  void expand_fused() {
    if (!options_.expand_fused) return;
    for (int32_t v = 0; v < view_.num_forward; ++v) {
      const VertexProps& p = view_.graph[static_cast<Vertex>(v)];
      if (!drawn(v) || p.kind != VertexKind::Op || p.node == root_) continue;
      const Node& node = tape_.node(p.node);
      if (node.op->decomposition == nullptr) continue;
      Expansion e;
      e.tape = std::make_unique<Tape>();
      e.num_inputs = node.num_inputs;
      std::vector<Tensor> leaves;
      for (int k = 0; k < node.num_inputs; ++k) {
        const Node& in = tape_.input(node, k);
        leaves.push_back(e.tape->leaf(in.shape, in.dtype, nullptr, false));
      }
      const NoGradGuard no_grad;  // nothing of it is differentiated
      const Tensor result = node.op->decomposition(leaves, node);
      if (&result.tape() != e.tape.get() || result.id() < e.num_inputs ||
          result.shape() != node.shape || result.dtype() != node.dtype) {
        throw Error(std::string("write_dot: the decomposition of ") + node.op->name + " at " +
                    tape_.describe_node(p.node) + " returned " + result.shape().str() + " " +
                    dtype_name(result.dtype()) + ", not a new op output of the node's " +
                    node.shape.str() + " " + dtype_name(node.dtype));
      }
      e.output = result.id();
      expansions_.emplace(v, std::move(e));
    }
  }

  std::string expansion_id(int32_t v, int32_t j) const {
    return j == expansions_.at(v).output ? vertex_id(v) : vertex_id(v) + "_" + std::to_string(j);
  }

  // Where an edge into v for its input `input` ends: v, or for an expanded op the composed ops
  // that read that input (the result when none does).
  std::vector<std::string> targets(int32_t v, int32_t input) const {
    const auto it = expansions_.find(v);
    if (it == expansions_.end() || input < 0) return {vertex_id(v)};
    const Tape& t = *it->second.tape;
    std::vector<std::string> out;
    for (int32_t j = it->second.num_inputs; j < t.size(); ++j) {
      const Node& n = t.node(j);
      for (int k = 0; k < n.num_inputs; ++k) {
        if (n.inputs[k] == input) out.push_back(expansion_id(v, j));
      }
    }
    if (out.empty()) out.push_back(vertex_id(v));
    return out;
  }

  // A cluster named after the fused op (its arguments, what it saves), holding the composed ops;
  // the result carries the node's name, values and gradients.
  void write_expansion(std::ostream& out, int32_t v, int indent) const {
    const Expansion& e = expansions_.at(v);
    const VertexProps& p = view_.graph[static_cast<Vertex>(v)];
    const Node& node = tape_.node(p.node);
    const std::string pad(static_cast<size_t>(indent) * 2, ' ');
    std::string label = "<b>" + html(p.op) + "</b>";
    const std::string arguments = op_arguments(tape_, p.node);
    if (!arguments.empty()) label += "<font color=\"#1f4e9c\"> · " + html(arguments) + "</font>";
    label += "<br/><font point-size=\"9\">one fused op, drawn as the ops it computes";
    if (options_.saved_bytes && node.requires_grad) {
      label += "; saves " + html(bytes_text(saved_bytes(tape_, p.node)));
    }
    label += "</font>";
    out << pad << "subgraph cluster_f" << p.node << " {\n";
    out << pad << "  label=<" << label << ">; style=\"" << kFusedStyle.style << "\"; fillcolor=\""
        << kFusedStyle.fill << "\"; color=\"" << kFusedStyle.border << "\"; penwidth=1.2;\n";
    for (int32_t j = e.num_inputs; j < e.tape->size(); ++j) {
      const Node& n = e.tape->node(j);
      LabelParts l;
      if (j == e.output) {
        l = label_parts(v);  // the node's values and gradients, when asked for
        l.saved.clear();     // the cluster says what the fused op keeps
        if (l.subtitle.empty()) l.subtitle = n.name;
      } else {
        l.subtitle = n.name;
      }
      l.title = n.kind == NodeKind::Op ? n.op_name() : (n.name.empty() ? "constant" : n.name);
      if (n.kind != NodeKind::Op) l.subtitle.clear();
      l.shape = shape_text(n.shape, n.dtype);
      l.arguments = op_arguments(*e.tape, j);
      write_node(out, expansion_id(v, j), n.kind == NodeKind::Op ? kOpStyle : kConstantStyle, l,
                 indent + 1);
    }
    out << pad << "}\n";
  }

  // The edges between the composed ops of an expanded op (those from its inputs: write_edges).
  void write_expansion_edges(std::ostream& out, int32_t v) const {
    const auto it = expansions_.find(v);
    if (it == expansions_.end()) return;
    const Tape& t = *it->second.tape;
    for (int32_t j = it->second.num_inputs; j < t.size(); ++j) {
      const Node& n = t.node(j);
      for (int k = 0; k < n.num_inputs; ++k) {
        const int32_t from = n.inputs[k];
        if (from < it->second.num_inputs) continue;
        std::vector<std::string> attrs;
        if (options_.edge_labels) attrs.push_back("label=\"" + t.node(from).shape.str() + "\"");
        write_edge(out, expansion_id(v, from), expansion_id(v, j), attrs);
      }
    }
  }

  // The drawn vertices and child scopes directly in `scope` (of the forward or the backward
  // part), each ordered by its first vertex: the order they were recorded (or run backward).
  void write_cluster(std::ostream& out, int32_t scope, bool gradient, int indent) const {
    struct Item {
      int32_t first_vertex;
      int32_t vertex;  // -1 for a child scope
      int32_t child;
    };
    std::vector<Item> items;
    std::map<int32_t, int32_t> child_first;  // child scope -> its first drawn vertex
    for (int32_t v = 0; v < view_.num_vertices(); ++v) {
      if (!drawn(v) || view_.is_gradient(static_cast<Vertex>(v)) != gradient) continue;
      const int32_t s = view_.graph[static_cast<Vertex>(v)].scope;
      if (s == scope) {
        // Vertices drawn beside an op are written with it.
        if (beside_[static_cast<size_t>(v)] < 0) items.push_back({v, v, -1});
        continue;
      }
      // The child of `scope` on the path from s up to it, if s lies below `scope`.
      int32_t child = -1;
      for (int32_t a = s; a >= 0; a = view_.scopes[static_cast<size_t>(a)].parent) {
        if (view_.scopes[static_cast<size_t>(a)].parent == scope) {
          child = a;
          break;
        }
      }
      if (child >= 0 && !child_first.count(child)) child_first[child] = v;
    }
    for (auto [child, first] : child_first) items.push_back({first, -1, child});
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.first_vertex < b.first_vertex; });

    const std::string pad(static_cast<size_t>(indent) * 2, ' ');
    for (const Item& item : items) {
      if (item.vertex >= 0) {
        if (expansions_.count(item.vertex) > 0) {
          write_expansion(out, item.vertex, indent);
        } else {
          write_with_beside(out, item.vertex, items.size() > 1, indent);
        }
        continue;
      }
      const ScopeInfo& info = view_.scopes[static_cast<size_t>(item.child)];
      int depth = 0;
      for (int32_t a = info.parent; a >= 0; a = view_.scopes[static_cast<size_t>(a)].parent)
        ++depth;
      // Deeper clusters are darker. (One 2-D table: GCC 12 -O2 miscompiles `(c ? a : b)[i]`
      // over two static arrays, always reading the first element.)
      static constexpr const char* kFills[2][4] = {
          {"#f3f6fb", "#e6edf7", "#d9e4f2", "#cddbed"},   // forward
          {"#f3eefa", "#e9e0f5", "#dfd2f0", "#d5c4eb"}};  // backward
      const char* fill = kFills[gradient ? 1 : 0][std::min(depth, 3)];
      std::string label = "<b>" + html(info.name) + "</b>";
      const int32_t heads = collapse_.count[static_cast<size_t>(item.child)];
      if (heads > 0) label += collapsed_label(info.name, item.child, heads);
      out << pad << "subgraph cluster_" << (gradient ? "b" : "s") << item.child << " {\n";
      out << pad << "  label=<" << label << ">; style=\"rounded,filled\"; fillcolor=\"" << fill
          << "\"; color=\"" << (gradient ? "#a58cc7" : "#8a9bb5")
          << "\"; penwidth=" << (heads > 0 ? "2" : "1") << ";\n";
      write_cluster(out, item.child, gradient, indent + 1);
      out << pad << "}\n";
    }
  }

  // " ×12" and a line on what the one drawn copy stands for.
  std::string collapsed_label(const std::string& name, int32_t scope, int32_t n) const {
    const std::string times =
        " <font color=\"#b23b2a\">×" + std::to_string(n) + "</font><br/><font point-size=\"9\">";
    if (collapse_.heads[static_cast<size_t>(scope)]) {
      return times + "one of " + std::to_string(n) + " identical heads drawn</font>";
    }
    std::string prefix;
    int64_t number = 0;
    split_numbered(name, prefix, number);
    const std::string range = html(name) + " … " + html(prefix) + std::to_string(n - 1);
    if (collapse_.chained[static_cast<size_t>(scope)]) {
      return times + "drawn once for " + range + ", each feeding the next</font>";
    }
    return times + "drawn once for " + range + ", side by side</font>";
  }

  // A weight drawn beside the op that uses it (on its rank) rather than above it keeps the data
  // flowing straight down: the input enters every projection from the top, its weight from the
  // side. The same for a leaf's gradient beside the backward that produces it. Flat edges point
  // left to right, so every second one is written reversed (dir=back) to put it on the right.
  void place_beside() {
    const int32_t nv = view_.num_vertices();
    beside_.assign(static_cast<size_t>(nv), -1);
    flipped_.assign(static_cast<size_t>(nv), 0);
    std::map<int32_t, int> placed;  // anchor -> vertices beside it so far
    for (int32_t v = 0; v < nv; ++v) {
      if (!drawn(v)) continue;
      const Vertex vx = static_cast<Vertex>(v);
      const VertexKind kind = view_.graph[vx].kind;
      int32_t anchor = -1;
      if (kind == VertexKind::Parameter && boost::out_degree(vx, view_.graph) == 1) {
        anchor = static_cast<int32_t>(
            boost::target(*boost::out_edges(vx, view_.graph).first, view_.graph));
      } else if (kind == VertexKind::Gradient && boost::in_degree(vx, view_.graph) == 1) {
        anchor = static_cast<int32_t>(
            boost::source(*boost::in_edges(vx, view_.graph).first, view_.graph));
      }
      // Only within one scope: the pair is then written, with its rank constraint, inside that
      // cluster (Graphviz 2.43 corrupts memory on flat labelled edges whose rank=same group
      // lies outside the cluster holding the nodes).
      if (anchor < 0 || !drawn(anchor) || expansions_.count(anchor) > 0 ||
          view_.graph[static_cast<Vertex>(anchor)].scope != view_.graph[vx].scope) {
        continue;
      }
      beside_[static_cast<size_t>(v)] = anchor;
      flipped_[static_cast<size_t>(v)] = placed[anchor]++ % 2 == 1;
    }
  }

  // An op with the weights (or gradients) drawn beside it: the weights to its left, every second
  // one to its right, all on one rank, in an invisible cluster of their own when the scope holds
  // more (so dot keeps them together).
  void write_with_beside(std::ostream& out, int32_t anchor, bool wrap, int indent) const {
    std::vector<int32_t> left, right;
    for (int32_t v = 0; v < view_.num_vertices(); ++v) {
      if (beside_[static_cast<size_t>(v)] != anchor) continue;
      (flipped_[static_cast<size_t>(v)] ? right : left).push_back(v);
    }
    if (left.empty() && right.empty()) {
      write_vertex(out, anchor, indent);
      return;
    }
    const std::string pad(static_cast<size_t>(indent) * 2, ' ');
    if (wrap) {
      out << pad << "subgraph cluster_" << vertex_id(anchor) << " {\n";
      out << pad << "  style=invis; margin=4;\n";
      ++indent;
    }
    std::vector<int32_t> row = left;
    row.push_back(anchor);
    row.insert(row.end(), right.begin(), right.end());
    for (int32_t v : row) write_vertex(out, v, indent);
    out << std::string(static_cast<size_t>(indent) * 2, ' ') << "{rank=same;";
    for (int32_t v : row) out << " " << vertex_id(v) << ";";
    out << "}\n";
    if (wrap) out << pad << "}\n";
  }

  void write_edges(std::ostream& out) const {
    struct Out {
      int32_t from;
      Edge edge;
      int count;  // edges from other copies folded into this one
    };
    // Vertices of chained copies (a block repeated in a row) take their edges from outside the
    // group to the vertex drawn for them: the gradient from the layer after the last block
    // enters the one block drawn.
    std::vector<std::vector<int32_t>> folded(static_cast<size_t>(view_.num_vertices()));
    for (int32_t w = 0; w < view_.num_vertices(); ++w) {
      const int32_t to = collapse_.stand_in[static_cast<size_t>(w)];
      if (to < 0 || to == w) continue;
      const int32_t copy = collapser_.outermost_other_copy(w);
      if (collapse_.chained[static_cast<size_t>(collapse_.first[static_cast<size_t>(copy)])]) {
        folded[static_cast<size_t>(to)].push_back(w);
      }
    }
    for (int32_t v = 0; v < view_.num_vertices(); ++v) {
      if (!drawn(v)) continue;
      std::vector<Out> edges;
      // An edge from u, folded into one already drawn from the same vertex.
      auto add = [&](Edge e, int32_t u, bool fold) {
        const int32_t from = collapse_.stand_in[static_cast<size_t>(u)];
        if (from < 0) return;
        if (fold || from != u) {  // an edge from another head: folded into the drawn head's edge
          auto it = std::find_if(edges.begin(), edges.end(),
                                 [&](const Out& o) { return o.from == from; });
          if (it != edges.end()) {
            ++it->count;
            return;
          }
        }
        edges.push_back({from, e, 1});
      };
      for (Edge e :
           boost::make_iterator_range(boost::in_edges(static_cast<Vertex>(v), view_.graph))) {
        const int32_t u = static_cast<int32_t>(boost::source(e, view_.graph));
        // From one copy of a chained group into another: the chain the ×N stands for.
        if (collapser_.across_copies(u, v) != kNone) continue;
        add(e, u, false);
      }
      for (int32_t w : folded[static_cast<size_t>(v)]) {
        const int32_t group =
            collapse_.first[static_cast<size_t>(collapser_.outermost_other_copy(w))];
        for (Edge e :
             boost::make_iterator_range(boost::in_edges(static_cast<Vertex>(w), view_.graph))) {
          const int32_t u = static_cast<int32_t>(boost::source(e, view_.graph));
          if (!collapser_.inside_group(u, group)) add(e, u, true);
        }
      }
      write_expansion_edges(out, v);
      for (const Out& o : edges) {
        const EdgeProps& p = view_.graph[o.edge];
        const bool seed = p.gradient && !view_.is_gradient(static_cast<Vertex>(o.from));
        const int32_t side = beside_[static_cast<size_t>(o.from)] == v   ? o.from
                             : beside_[static_cast<size_t>(v)] == o.from ? v
                                                                         : -1;
        const bool flip = side >= 0 && flipped_[static_cast<size_t>(side)];
        std::vector<std::string> attrs;
        if (options_.edge_labels) {
          std::string label = seed ? "∂L/∂L = 1" : p.shape.str();
          if (o.count > 1) label += " ×" + std::to_string(o.count);
          attrs.push_back("label=\"" + label + "\"");
        }
        if (p.gradient) attrs.push_back("color=\"#6a4c93\", fontcolor=\"#6a4c93\"");
        if (seed) attrs.push_back("style=dashed");
        if (o.count > 1) attrs.push_back("penwidth=2");
        if (flip) attrs.push_back("dir=back");
        // Short edges from the data: every op that reads an input sits right under it (the
        // projections of all heads on one rank), instead of wherever its result is needed.
        const VertexKind from_kind = view_.graph[static_cast<Vertex>(o.from)].kind;
        if (from_kind == VertexKind::Constant || from_kind == VertexKind::Input) {
          attrs.push_back("weight=4");
        }
        for (const std::string& to : targets(v, p.input)) {
          write_edge(out, flip ? to : vertex_id(o.from), flip ? vertex_id(o.from) : to, attrs);
        }
      }
    }
  }

  static void write_edge(std::ostream& out, const std::string& from, const std::string& to,
                         const std::vector<std::string>& attrs) {
    out << "  " << from << " -> " << to;
    if (!attrs.empty()) {
      out << " [";
      for (size_t i = 0; i < attrs.size(); ++i) out << (i ? ", " : "") << attrs[i];
      out << "]";
    }
    out << ";\n";
  }

  // One row: a swatch per kind drawn, then how edges and collapsed heads read.
  std::string legend_row() const {
    bool present[6] = {};
    bool loss = false;
    for (int32_t v = 0; v < view_.num_vertices(); ++v) {
      if (!drawn(v)) continue;
      const VertexProps& p = view_.graph[static_cast<Vertex>(v)];
      if (!view_.is_gradient(static_cast<Vertex>(v)) && p.node == root_) {
        loss = true;
      } else {
        present[static_cast<int>(p.kind)] = true;
      }
    }
    struct Entry {
      bool shown;
      const Style& style;
      const char* text;
    };
    const Entry entries[] = {
        {present[static_cast<int>(VertexKind::Parameter)], kParameterStyle, "parameter"},
        {present[static_cast<int>(VertexKind::Input)], kInputStyle, "input (requires grad)"},
        {present[static_cast<int>(VertexKind::Constant)], kConstantStyle, "constant"},
        {present[static_cast<int>(VertexKind::Op)], kOpStyle, "op: output shape · arguments"},
        {!expansions_.empty(), kFusedStyle, "a fused op: the ops it computes in one kernel"},
        {loss, kLossStyle, "loss"},
        {present[static_cast<int>(VertexKind::Backward)], kBackwardStyle, "an op's backward"},
        {present[static_cast<int>(VertexKind::Gradient)], kGradientStyle, "a leaf's gradient"},
    };
    std::string s =
        "<table border=\"0\" cellborder=\"0\" cellspacing=\"3\" cellpadding=\"1\"><tr>"
        "<td><font point-size=\"9\"><b>legend</b></font></td>";
    for (const Entry& e : entries) {
      if (!e.shown) continue;
      s += std::string("<td border=\"1\" bgcolor=\"") + e.style.fill + "\" color=\"" +
           e.style.border + "\" width=\"16\"></td><td align=\"left\"><font point-size=\"9\">" +
           html(e.text) + "</font></td>";
    }
    if (options_.edge_labels) {
      s += "<td><font point-size=\"9\" color=\"#5b6b80\">→ [shape]</font></td><td "
           "align=\"left\"><font point-size=\"9\">the tensor an edge carries</font></td>";
    }
    bool heads = false, chained = false, side_by_side = false;
    for (size_t g = 0; g < collapse_.count.size(); ++g) {
      if (collapse_.count[g] == 0) continue;
      heads = heads || collapse_.heads[g];
      chained = chained || (!collapse_.heads[g] && collapse_.chained[g]);
      side_by_side = side_by_side || (!collapse_.heads[g] && !collapse_.chained[g]);
    }
    if (heads) {
      s += "<td><font point-size=\"9\" color=\"#b23b2a\">×H</font></td><td "
           "align=\"left\"><font point-size=\"9\">one head drawn for H identical ones</font></td>";
    }
    if (chained) {
      s += "<td><font point-size=\"9\" color=\"#b23b2a\">×N</font></td><td "
           "align=\"left\"><font point-size=\"9\">one block drawn for N identical ones in a "
           "row</font></td>";
    }
    if (side_by_side) {
      s += "<td><font point-size=\"9\" color=\"#b23b2a\">×N</font></td><td "
           "align=\"left\"><font point-size=\"9\">one drawn for N identical ones side by "
           "side</font></td>";
    }
    return s + "</tr></table>";
  }

  const Tape& tape_;
  const DotOptions& options_;
  GraphView view_;
  Collapser collapser_;
  const Collapse& collapse_;
  int32_t root_ = -1;
  std::vector<int32_t> beside_;  // per vertex: the vertex it is drawn beside, or -1
  std::vector<char> flipped_;    // per vertex: its edge is written reversed (it goes right)
  std::map<int32_t, Expansion> expansions_;  // per expanded vertex (a fused op's): its ops
};

}  // namespace

std::string op_arguments(const Tape& tape, int32_t node) {
  const Node& n = tape.node(node);
  if (n.kind != NodeKind::Op || n.op->arguments == nullptr) return "";
  return n.op->arguments(tape, n);
}

int64_t saved_bytes(const Tape& tape, int32_t node) {
  const Node& n = tape.node(node);
  if (n.kind != NodeKind::Op) return 0;
  int64_t total = state_bytes(tape, n);
  for (int32_t id : saved_tensors(n, node)) total += tensor_bytes(tape.node(id));
  return total;
}

void write_dot(const Tape& tape, std::ostream& out, const DotOptions& options) {
  DotWriter(tape, options).write(out);
}

std::string to_dot(const Tape& tape, const DotOptions& options) {
  std::ostringstream out;
  write_dot(tape, out, options);
  return out.str();
}

}  // namespace tapegrad
