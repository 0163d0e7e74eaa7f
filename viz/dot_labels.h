// The DOT drawing's node labels: styles, numbers and HTML escaping, shapes, value tables, and
// what an op keeps for its backward (viz/dot.cpp's writer draws with them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/graph/tape.h>
#include <tapegrad/viz/graph_view.h>

namespace tapegrad::dot_detail {

inline constexpr const char* kFont = "Helvetica";

struct Style {
  const char* shape;
  const char* style;
  const char* fill;
  const char* border;
  double penwidth;
};

inline constexpr Style kOpStyle{"box", "rounded,filled", "#ffffff", "#4a5a70", 1.0};
inline constexpr Style kLossStyle{"box", "rounded,filled", "#fbd9d3", "#b23b2a", 2.0};
inline constexpr Style kParameterStyle{"box", "filled", "#ffe0b2", "#c26a00", 1.6};
inline constexpr Style kInputStyle{"box", "rounded,filled", "#d7efd6", "#2e7d32", 1.2};
inline constexpr Style kConstantStyle{"box", "rounded,filled,dashed", "#eeeeee", "#777777", 1.0};
inline constexpr Style kBackwardStyle{"box", "rounded,filled", "#eee6f8", "#6a4c93", 1.0};
inline constexpr Style kGradientStyle{"box", "filled", "#e2d4f5", "#6a4c93", 1.6};
// The cluster around a fused op's composed ops (not a node style: the legend's swatch).
inline constexpr Style kFusedStyle{"box", "rounded,filled,dashed", "#fff8e1", "#c28a00", 1.2};

const Style& style_of(VertexKind kind, bool is_root);

std::string number(double v);
// A value in a node: four significant digits, as torch prints.
std::string value_text(double v);
std::string html(std::string_view s);
std::string bytes_text(int64_t bytes);
int64_t tensor_bytes(const Node& n);
// The tape ids the op's backward reads (OpDef::saves: inputs by flag, then the output itself).
std::vector<int32_t> saved_tensors(const Node& node, int32_t id);
// The bytes of what the op keeps besides those tensors (OpDef::state_bytes).
int64_t state_bytes(const Tape& tape, const Node& node);

std::string shape_text(const Shape& shape, DType dtype);
// A small tensor's values as an HTML table in row-major order, one row of the last dim after
// another; narrow rows share a line (up to 8 values, set apart by a bar) so that a [2, 2, 6, 1]
// tensor takes 3 lines, not 24.
std::string values_table(const void* data, DType dtype, const Shape& shape, const char* color);

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
std::string html_label(const LabelParts& p);

}  // namespace tapegrad::dot_detail
