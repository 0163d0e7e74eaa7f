// DOT export over the Boost.Graph view of a tape, and in-process rendering through libgvc.
#include "viz/dot.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <vector>

#include "graph/error.h"
#include "io/atomic_file.h"
#include "viz/graph_view.h"

namespace tapegrad {

namespace {

// --- numbers and escaping ----------------------------------------------------------------------

std::string number(double v) {
  return number_text(v);
}

// A value in a node: four significant digits, as torch prints.
std::string value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "<br/>";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string bytes_text(int64_t bytes) {
  if (bytes < 10 * 1024) return std::to_string(bytes) + " B";
  if (bytes < 10 * 1024 * 1024) return number(std::round(bytes / 102.4) / 10.0) + " KiB";
  return number(std::round(bytes / (102.4 * 1024)) / 10.0) + " MiB";
}

int64_t tensor_bytes(const Node& n) {
  return n.shape.numel() * dtype_size(n.dtype);
}

// The tape ids the op's backward reads (OpDef::saves: inputs by flag, then the output itself).
std::vector<int32_t> saved_tensors(const Node& node, int32_t id) {
  const uint32_t saves = saved_by(node);
  std::vector<int32_t> out;
  for (int k = 0; k < std::min(node.num_inputs, 31); ++k) {
    if (saves & (1u << k)) out.push_back(node.inputs[k]);
  }
  if (saves & saves::kOutput) out.push_back(id);
  return out;
}

// The bytes of what the op keeps besides those tensors (OpDef::state_bytes).
int64_t state_bytes(const Tape& tape, const Node& node) {
  return node.op->state_bytes != nullptr ? node.op->state_bytes(tape, node) : 0;
}

// --- labels ------------------------------------------------------------------------------------

constexpr const char* kFont = "Helvetica";

struct Style {
  const char* shape;
  const char* style;
  const char* fill;
  const char* border;
  double penwidth;
};

constexpr Style kOpStyle{"box", "rounded,filled", "#ffffff", "#4a5a70", 1.0};
constexpr Style kLossStyle{"box", "rounded,filled", "#fbd9d3", "#b23b2a", 2.0};
constexpr Style kParameterStyle{"box", "filled", "#ffe0b2", "#c26a00", 1.6};
constexpr Style kInputStyle{"box", "rounded,filled", "#d7efd6", "#2e7d32", 1.2};
constexpr Style kConstantStyle{"box", "rounded,filled,dashed", "#eeeeee", "#777777", 1.0};
constexpr Style kBackwardStyle{"box", "rounded,filled", "#eee6f8", "#6a4c93", 1.0};
constexpr Style kGradientStyle{"box", "filled", "#e2d4f5", "#6a4c93", 1.6};
// The cluster around a fused op's composed ops (not a node style: the legend's swatch).
constexpr Style kFusedStyle{"box", "rounded,filled,dashed", "#fff8e1", "#c28a00", 1.2};

const Style& style_of(VertexKind kind, bool is_root) {
  switch (kind) {
    case VertexKind::Constant:
      return kConstantStyle;
    case VertexKind::Input:
      return kInputStyle;
    case VertexKind::Parameter:
      return kParameterStyle;
    case VertexKind::Op:
      return is_root ? kLossStyle : kOpStyle;
    case VertexKind::Backward:
      return kBackwardStyle;
    case VertexKind::Gradient:
      return kGradientStyle;
  }
  return kOpStyle;
}

std::string shape_text(const Shape& shape, DType dtype) {
  std::string s = shape.str();
  if (dtype != DType::Float32) s += std::string(" ") + dtype_name(dtype);
  return s;
}

// A small tensor's values as an HTML table in row-major order, one row of the last dim after
// another; narrow rows share a line (up to 8 values, set apart by a bar) so that a [2, 2, 6, 1]
// tensor takes 3 lines, not 24.
std::string values_table(const void* data, DType dtype, const Shape& shape, const char* color) {
  const int64_t n = shape.numel();
  const int64_t cols = shape.rank() == 0 ? 1 : std::max<int64_t>(shape.size(-1), 1);
  const int64_t rows_per_line = std::max<int64_t>(1, 8 / cols);
  const std::string cell =
      std::string("<td align=\"right\"><font face=\"Courier\" point-size=\"8\" color=\"") + color +
      "\">";
  std::string s = "<table border=\"0\" cellborder=\"0\" cellspacing=\"0\" cellpadding=\"0\">";
  for (int64_t line = 0; line * rows_per_line * cols < n; ++line) {
    s += "<tr>";
    for (int64_t r = line * rows_per_line; r < (line + 1) * rows_per_line && r * cols < n; ++r) {
      if (r > line * rows_per_line) {
        s += "<td><font face=\"Courier\" point-size=\"8\" color=\"#aaaaaa\">│ </font></td>";
      }
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        const double v = dtype == DType::Float32 ? static_cast<const float*>(data)[i]
                                                 : static_cast<const double*>(data)[i];
        s += cell + html(value_text(v)) + " </font></td>";
      }
    }
    s += "</tr>";
  }
  return s + "</table>";
}

struct LabelParts {
  std::string title;     // bold first line
  std::string subtitle;  // italic second line
  std::string shape;
  std::string arguments;
  std::string saved;
  std::string values;  // an HTML table, already escaped
  std::string grads;   // an HTML table, already escaped
};

// Two lines, so a whole model fits a screen: "<b>op</b> <i>name</i>", then "shape · arguments";
// then what was asked for (saved bytes, values, gradients).
std::string html_label(const LabelParts& p) {
  std::string s = "<<table border=\"0\" cellborder=\"0\" cellspacing=\"0\" cellpadding=\"1\">";
  s += "<tr><td><b>" + html(p.title) + "</b>";
  if (!p.subtitle.empty()) s += " <i>" + html(p.subtitle) + "</i>";
  s += "</td></tr><tr><td><font point-size=\"9\" color=\"#444444\">" + html(p.shape) + "</font>";
  if (!p.arguments.empty()) {
    s += "<font point-size=\"9\" color=\"#1f4e9c\"> · " + html(p.arguments) + "</font>";
  }
  s += "</td></tr>";
  if (!p.saved.empty()) {
    s += "<tr><td><font point-size=\"8\" color=\"#7a5c00\">" + html(p.saved) + "</font></td></tr>";
  }
  if (!p.values.empty()) s += "<tr><td>" + p.values + "</td></tr>";
  if (!p.grads.empty()) s += "<tr><td>" + p.grads + "</td></tr>";
  return s + "</table>>";
}

// --- the drawing -------------------------------------------------------------------------------

constexpr int32_t kNone = -1;

// Which vertices are drawn, and as whom. A group is a set of sibling scopes numbered 0, 1, ...
// ("head 0", "head 1", or "TransformerBlock 0" ... "TransformerBlock 11") whose vertices match
// one for one (op, shape, scope path within the copy); only its first copy is drawn, and every
// vertex of another copy stands in for the vertex at the same position in the first.
struct Collapse {
  std::vector<int32_t> stand_in;  // per vertex: the vertex drawn for it, -1 when none
  std::vector<int32_t> count;     // per scope: N for the drawn first copy of a group, else 0
  std::vector<int32_t> first;     // per scope: the first copy of its group, -1 outside groups
  std::vector<char> chained;      // per scope (a first copy): each copy feeds the next
  std::vector<char> heads;        // per scope (a first copy): the copies are "head N"
};

bool is_head_name(const std::string& name) {
  if (name.size() < 6 || name.compare(0, 5, "head ") != 0) return false;
  return std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "TransformerBlock 3" -> ("TransformerBlock ", 3); "0" -> ("", 0); false without a number at
// the end (or with a leading zero, so that "01" is not "1").
bool split_numbered(const std::string& name, std::string& prefix, int64_t& number) {
  size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  const size_t length = name.size() - digits;
  if (length == 0 || length > 9 || (length > 1 && name[digits] == '0')) return false;
  prefix = name.substr(0, digits);
  number = std::stoll(name.substr(digits));
  return true;
}

class Collapser {
 public:
  // heads: collapse the groups of "head N" scopes; repeats: every numbered group.
  Collapser(const GraphView& view, bool heads, bool repeats) : view_(view) { run(heads, repeats); }
  Collapser(const Collapser&) = delete;
  Collapser& operator=(const Collapser&) = delete;

  const Collapse& result() const { return c_; }

  // The group (its first copy) when u and v lie in two different copies of one group, else -1.
  int32_t across_copies(int32_t u, int32_t v) const {
    for (int32_t a = scope_of(u); a >= 0; a = parent(a)) {
      const int32_t g = c_.first[static_cast<size_t>(a)];
      if (g == kNone) continue;
      for (int32_t b = scope_of(v); b >= 0; b = parent(b)) {
        if (b != a && c_.first[static_cast<size_t>(b)] == g) return g;
      }
    }
    return kNone;
  }

  // The outermost scope around v that is a copy, but not the first, of a group; -1 when none.
  int32_t outermost_other_copy(int32_t v) const {
    int32_t found = kNone;
    for (int32_t a = scope_of(v); a >= 0; a = parent(a)) {
      const int32_t g = c_.first[static_cast<size_t>(a)];
      if (g != kNone && g != a) found = a;
    }
    return found;
  }

  // Whether v lies in some copy of group g.
  bool inside_group(int32_t v, int32_t g) const {
    for (int32_t a = scope_of(v); a >= 0; a = parent(a)) {
      if (c_.first[static_cast<size_t>(a)] == g) return true;
    }
    return false;
  }

 private:
  void run(bool heads, bool repeats) {
    const int32_t nv = view_.num_vertices();
    const int32_t ns = static_cast<int32_t>(view_.scopes.size());
    Collapse& c = c_;
    c.stand_in.resize(static_cast<size_t>(nv));
    for (int32_t v = 0; v < nv; ++v) c.stand_in[static_cast<size_t>(v)] = v;
    c.count.assign(static_cast<size_t>(ns), 0);
    c.first.assign(static_cast<size_t>(ns), kNone);
    c.chained.assign(static_cast<size_t>(ns), 0);
    c.heads.assign(static_cast<size_t>(ns), 0);
    if (!heads && !repeats) return;

    // Candidate groups: siblings with one prefix, numbered 0, 1, ... in the order created.
    std::map<std::pair<int32_t, std::string>, std::vector<int32_t>> candidates;
    for (int32_t s = 0; s < ns; ++s) {
      const ScopeInfo& info = view_.scopes[static_cast<size_t>(s)];
      std::string prefix;
      int64_t number = 0;
      if (!split_numbered(info.name, prefix, number)) continue;
      if (!(repeats || is_head_name(info.name))) continue;
      auto& copies = candidates[{info.parent, prefix}];
      if (number == static_cast<int64_t>(copies.size())) copies.push_back(s);
    }
    for (auto& [key, copies] : candidates) {
      if (copies.size() < 2) continue;
      for (int32_t s : copies) c.first[static_cast<size_t>(s)] = copies[0];
    }
    collect_members();
    // Keep only the groups whose copies match the first one vertex for vertex.
    for (auto& [key, copies] : candidates) {
      if (copies.size() < 2) continue;
      bool same = true;
      for (size_t k = 1; k < copies.size() && same; ++k) same = matches(copies[0], copies[k]);
      if (!same) {
        for (int32_t s : copies) c.first[static_cast<size_t>(s)] = kNone;
        continue;
      }
      c.count[static_cast<size_t>(copies[0])] = static_cast<int32_t>(copies.size());
      c.heads[static_cast<size_t>(copies[0])] = is_head_name(key.second + "0");
    }
    collect_members();
    // A group is chained when a forward edge runs from one of its copies into another.
    for (int32_t v = 0; v < view_.num_forward; ++v) {
      for (Edge e :
           boost::make_iterator_range(boost::in_edges(static_cast<Vertex>(v), view_.graph))) {
        const int32_t g = across_copies(static_cast<int32_t>(boost::source(e, view_.graph)), v);
        if (g != kNone) c.chained[static_cast<size_t>(g)] = 1;
      }
    }
    // Each vertex in a copy other than the first moves to its place in the first copy of the
    // outermost such group, until it lies in first copies only (nested groups: the heads of a
    // repeated block).
    for (int32_t v = 0; v < nv; ++v) {
      int32_t s = v;
      while (s != kNone) {
        const int32_t copy = outermost_other_copy(s);
        if (copy == kNone) break;
        const bool gradient = view_.is_gradient(static_cast<Vertex>(s));
        const std::vector<int32_t>& own = members_[{copy, gradient}];
        const std::vector<int32_t>& drawn =
            members_[{c.first[static_cast<size_t>(copy)], gradient}];
        const size_t position =
            static_cast<size_t>(std::lower_bound(own.begin(), own.end(), s) - own.begin());
        s = position < drawn.size() ? drawn[position] : kNone;
      }
      c.stand_in[static_cast<size_t>(v)] = s;
    }
  }

  int32_t scope_of(int32_t v) const { return view_.graph[static_cast<Vertex>(v)].scope; }
  int32_t parent(int32_t s) const { return view_.scopes[static_cast<size_t>(s)].parent; }

  // The vertices inside each copy (at any depth), forward and gradient apart, in vertex order.
  void collect_members() {
    members_.clear();
    for (int32_t v = 0; v < view_.num_vertices(); ++v) {
      const bool gradient = view_.is_gradient(static_cast<Vertex>(v));
      for (int32_t a = scope_of(v); a >= 0; a = parent(a)) {
        if (c_.first[static_cast<size_t>(a)] != kNone) members_[{a, gradient}].push_back(v);
      }
    }
  }

  // The scope path of s below `copy`: "att/W_query/".
  std::string path_within(int32_t s, int32_t copy) const {
    std::string path;
    for (; s >= 0 && s != copy; s = parent(s)) {
      path = view_.scopes[static_cast<size_t>(s)].name + "/" + path;
    }
    return path;
  }

  // The edges into v from inside `copy` (a block's output feeds the next block twice, the final
  // norm once: only the edges within a copy must match).
  int inner_degree(Vertex v, int32_t copy) const {
    int n = 0;
    for (Edge e : boost::make_iterator_range(boost::in_edges(v, view_.graph))) {
      for (int32_t a = scope_of(static_cast<int32_t>(boost::source(e, view_.graph))); a >= 0;
           a = parent(a)) {
        if (a == copy) {
          ++n;
          break;
        }
      }
    }
    return n;
  }

  // Copies a and b hold the same ops on the same shapes, in the same order and scopes.
  bool matches(int32_t a, int32_t b) {
    for (bool gradient : {false, true}) {
      const std::vector<int32_t>& x = members_[{a, gradient}];
      const std::vector<int32_t>& y = members_[{b, gradient}];
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        const Vertex vx = static_cast<Vertex>(x[i]);
        const Vertex vy = static_cast<Vertex>(y[i]);
        const VertexProps& p = view_.graph[vx];
        const VertexProps& q = view_.graph[vy];
        if (p.kind != q.kind || p.op != q.op || p.shape != q.shape || p.dtype != q.dtype ||
            inner_degree(vx, a) != inner_degree(vy, b) ||
            path_within(p.scope, a) != path_within(q.scope, b)) {
          return false;
        }
      }
    }
    return true;
  }

  const GraphView& view_;
  Collapse c_;
  std::map<std::pair<int32_t, bool>, std::vector<int32_t>> members_;
};

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

// --- rendering ---------------------------------------------------------------------------------

thread_local std::string graphviz_errors;

int collect_graphviz_error(char* message) {
  graphviz_errors += message;
  return 0;
}

// Graphviz reports through a process-wide callback: collect its messages while we call it.
class GraphvizErrors {
 public:
  GraphvizErrors() : previous_(agseterrf(collect_graphviz_error)) { graphviz_errors.clear(); }
  ~GraphvizErrors() { agseterrf(previous_); }
  GraphvizErrors(const GraphvizErrors&) = delete;
  GraphvizErrors& operator=(const GraphvizErrors&) = delete;
  std::string message(const char* what) const {
    std::string m = std::string("render: ") + what;
    std::string details = graphviz_errors;
    while (!details.empty() && (details.back() == '\n' || details.back() == ' '))
      details.pop_back();
    return details.empty() ? m : m + ": " + details;
  }

 private:
  agusererrf previous_;
};

// One Graphviz context for the whole process, never freed. Graphviz 2.42's pango text-layout
// plugin remembers the last font name it measured in a static pointer (pango_textlayout's
// `fontname`) that points into the context's font dictionary: with a context per render, the
// next render's strcmp reads the freed name (AddressSanitizer: heap-use-after-free). Graphviz is
// not thread-safe either, so renders hold graphviz_mutex().
GVC_t* shared_context() {
  static GVC_t* const gvc = gvContext();
  return gvc;
}

std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

// A laid-out graph on the shared context, freed in the right order (layout, graph).
class Layout {
 public:
  Layout(std::string_view dot, const GraphvizErrors& errors) : gvc_(shared_context()) {
    if (gvc_ == nullptr) throw Error(errors.message("cannot create a Graphviz context"));
    const std::string text(dot);
    graph_ = agmemread(text.c_str());
    if (graph_ == nullptr) throw Error(errors.message("Graphviz could not parse the DOT text"));
    if (gvLayout(gvc_, graph_, "dot") != 0) {
      agclose(graph_);
      throw Error(errors.message("Graphviz could not lay out the graph"));
    }
  }
  ~Layout() {
    gvFreeLayout(gvc_, graph_);
    agclose(graph_);
  }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
  GVC_t* gvc() const { return gvc_; }
  Agraph_t* graph() const { return graph_; }

 private:
  GVC_t* gvc_;
  Agraph_t* graph_ = nullptr;
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

void render(std::string_view dot, std::string_view format, const std::string& path) {
  write_file_atomically(path, render(dot, format));
}

std::string render(std::string_view dot, std::string_view format) {
  const std::lock_guard<std::mutex> lock(graphviz_mutex());
  GraphvizErrors errors;
  Layout layout(dot, errors);
  const std::string fmt(format);
  char* data = nullptr;
  unsigned int length = 0;
  if (gvRenderData(layout.gvc(), layout.graph(), fmt.c_str(), &data, &length) != 0) {
    if (data != nullptr) gvFreeRenderData(data);
    throw Error(errors.message(("cannot render " + fmt).c_str()));
  }
  std::string out(data, length);
  gvFreeRenderData(data);
  return out;
}

}  // namespace tapegrad
