// The DOT drawing's node labels: styles, numbers and HTML escaping, shapes, value tables.
#include <tapegrad/viz/dot_labels.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tapegrad::dot_detail {

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

}  // namespace tapegrad::dot_detail
