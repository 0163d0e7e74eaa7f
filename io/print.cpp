// format_torch: a line-by-line port of torch 1.13's torch/_tensor_str.py for dense real tensors.
#include <tapegrad/io/print.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string_view>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {
namespace {

// Python's "{:.{p}f}" / "{:.{p}e}". glibc's printf rounds the exact binary value to nearest-even
// just as Python's float formatting does, so the digits agree; the one difference is NaN, which
// Python always writes as "nan" while glibc writes "-nan" for the (common) negative NaN.
std::string py_format(double value, char conversion, int precision) {
  if (std::isnan(value)) return "nan";
  const char spec[] = {'%', '.', '*', conversion, '\0'};
  const int length = std::snprintf(nullptr, 0, spec, precision, value);
  std::string out(static_cast<size_t>(length) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec, precision, value);
  out.resize(static_cast<size_t>(length));
  return out;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// torch's _Formatter: one formatting decision for the whole (possibly summarized) tensor, so
// that all printed elements share a style and a width.
class Formatter {
 public:
  Formatter(const std::vector<double>& values, const PrintOptions& options)
      : precision_(options.precision) {
    std::vector<double> nonzero_finite;
    for (double v : values) {
      if (std::isfinite(v) && v != 0.0) nonzero_finite.push_back(v);
    }
    // torch returns before applying the sci_mode option here, so a forced sci_mode has no effect
    // on tensors holding only zeros, infs and nans.
    if (nonzero_finite.empty()) return;

    double min_abs = std::abs(nonzero_finite.front());
    double max_abs = min_abs;
    for (double v : nonzero_finite) {
      min_abs = std::min(min_abs, std::abs(v));
      max_abs = std::max(max_abs, std::abs(v));
    }
    for (double v : nonzero_finite) {
      if (v != std::ceil(v)) {
        int_mode_ = false;
        break;
      }
    }
    const bool wide_range = max_abs / min_abs > 1000.0 || max_abs > 1.0e8;
    // Widths come from the nonzero finite values only; zeros, infs and nans may therefore end up
    // wider than max_width_ and break the column alignment, exactly as in torch.
    if (wide_range || (!int_mode_ && min_abs < 1.0e-4)) {
      sci_mode_ = true;
      for (double v : nonzero_finite) {
        max_width_ = std::max(max_width_, py_format(v, 'e', precision_).size());
      }
    } else if (int_mode_) {
      // The +1 is for the '.' that marks an integral float.
      for (double v : nonzero_finite) {
        max_width_ = std::max(max_width_, py_format(v, 'f', 0).size() + 1);
      }
    } else {
      for (double v : nonzero_finite) {
        max_width_ = std::max(max_width_, py_format(v, 'f', precision_).size());
      }
    }
    if (options.sci_mode.has_value()) sci_mode_ = *options.sci_mode;
  }

  size_t width() const { return max_width_; }

  std::string format(double value) const {
    std::string out;
    if (sci_mode_) {
      out = py_format(value, 'e', precision_);
    } else if (int_mode_) {
      out = py_format(value, 'f', 0);
      if (std::isfinite(value)) out += '.';
    } else {
      out = py_format(value, 'f', precision_);
    }
    return pad_left(std::move(out), max_width_);
  }

 private:
  int precision_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t max_width_ = 1;
};

constexpr int64_t kEllipsis = -1;

class Printer {
 public:
  Printer(std::span<const int64_t> dims, std::span<const double> values,
          const PrintOptions& options, bool summarize)
      : dims_(dims), values_(values), options_(options), summarize_(summarize) {
    strides_.assign(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) strides_[d - 1] = strides_[d] * dims[d];
  }

  // The values torch's get_summarized_data keeps: exactly the ones that get printed.
  std::vector<double> shown_values() const {
    if (!summarize_ || dims_.empty()) return {values_.begin(), values_.end()};
    std::vector<double> out;
    collect(0, 0, out);
    return out;
  }

  std::string render(const Formatter& formatter) const {
    if (dims_.empty()) return formatter.format(values_[0]);
    return render_dim(formatter, 0, 0, static_cast<int>(std::string_view("tensor(").size()));
  }

 private:
  // Indices of dim d that are printed, with kEllipsis where torch puts "...".
  std::vector<int64_t> shown_indices(size_t d) const {
    const int64_t n = dims_[d];
    const int64_t edge = options_.edgeitems;
    std::vector<int64_t> out;
    if (!summarize_ || n <= 2 * edge) {
      for (int64_t i = 0; i < n; ++i) out.push_back(i);
      return out;
    }
    for (int64_t i = 0; i < edge; ++i) out.push_back(i);
    out.push_back(kEllipsis);
    // torch slices the last dim with self[-edgeitems:], which for edgeitems == 0 is self[0:], the
    // whole row; the outer dims use range(len - edgeitems, len), which is empty then.
    const bool last_dim = d + 1 == dims_.size();
    const int64_t tail_start = (last_dim && edge == 0) ? 0 : n - edge;
    for (int64_t i = tail_start; i < n; ++i) out.push_back(i);
    return out;
  }

  void collect(size_t d, int64_t offset, std::vector<double>& out) const {
    for (int64_t i : shown_indices(d)) {
      if (i == kEllipsis) continue;
      const int64_t at = offset + i * strides_[d];
      if (d + 1 == dims_.size()) {
        out.push_back(values_[static_cast<size_t>(at)]);
      } else {
        collect(d + 1, at, out);
      }
    }
  }

  std::string render_dim(const Formatter& formatter, size_t d, int64_t offset, int indent) const {
    if (d + 1 == dims_.size()) return render_vector(formatter, offset, indent);
    // Slices of a rank-r block are separated by r-1 newlines: one blank line between matrices of
    // a rank-3 tensor, two between the rank-3 blocks of a rank-4 one.
    const size_t block_rank = dims_.size() - d;
    const std::string separator =
        "," + std::string(block_rank - 1, '\n') + std::string(static_cast<size_t>(indent) + 1, ' ');
    std::string out = "[";
    bool first = true;
    for (int64_t i : shown_indices(d)) {
      if (!first) out += separator;
      first = false;
      out += i == kEllipsis ? std::string("...")
                            : render_dim(formatter, d + 1, offset + i * strides_[d], indent + 1);
    }
    return out + "]";
  }

  std::string render_vector(const Formatter& formatter, int64_t offset, int indent) const {
    const int64_t element_length = static_cast<int64_t>(formatter.width()) + 2;  // + ", "
    // Python's floor of a true division, which also floors a negative room (tiny linewidth).
    const int64_t per_line = std::max<int64_t>(
        1, static_cast<int64_t>(std::floor(static_cast<double>(options_.linewidth - indent) /
                                           static_cast<double>(element_length))));
    std::vector<std::string> items;
    for (int64_t i : shown_indices(dims_.size() - 1)) {
      items.push_back(i == kEllipsis ? std::string(" ...")
                                     : formatter.format(values_[static_cast<size_t>(offset + i)]));
    }
    const std::string line_break = ",\n" + std::string(static_cast<size_t>(indent) + 1, ' ');
    std::string out = "[";
    for (size_t k = 0; k < items.size(); ++k) {
      if (k > 0) out += (static_cast<int64_t>(k) % per_line == 0) ? line_break : ", ";
      out += items[k];
    }
    return out + "]";
  }

  std::span<const int64_t> dims_;
  std::span<const double> values_;
  const PrintOptions& options_;
  bool summarize_;
  std::vector<int64_t> strides_;
};

// torch's _add_suffixes, including its off-by-two line length (it counts the "\n" and one more).
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes, int indent,
                         int linewidth) {
  const size_t newline = text.rfind('\n');
  const int64_t newline_pos = newline == std::string::npos ? -1 : static_cast<int64_t>(newline);
  int64_t last_line_len = static_cast<int64_t>(text.size()) - newline_pos + 1;
  for (const std::string& suffix : suffixes) {
    const auto suffix_len = static_cast<int64_t>(suffix.size());
    if (last_line_len + suffix_len + 2 > linewidth) {
      text += ",\n" + std::string(static_cast<size_t>(indent), ' ') + suffix;
      last_line_len = indent + suffix_len;
    } else {
      text += ", " + suffix;
      last_line_len += suffix_len + 2;
    }
  }
  return text + ")";
}

// Python's str(tuple(shape)).
std::string size_tuple(std::span<const int64_t> dims) {
  std::string out = "(";
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d > 0) out += ", ";
    out += std::to_string(dims[d]);
  }
  return out + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string format_torch(std::span<const int64_t> dims, std::span<const double> values,
                         const PrintOptions& options) {
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error("format_torch: negative dimension " + std::to_string(d));
    numel *= d;
  }
  if (static_cast<int64_t>(values.size()) != numel) {
    throw Error("format_torch: shape " + size_tuple(dims) + " holds " + std::to_string(numel) +
                " values but " + std::to_string(values.size()) + " were given");
  }
  if (options.precision < 0 || options.edgeitems < 0) {
    throw Error("format_torch: precision and edgeitems must be non-negative");
  }

  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  std::string body;
  if (numel == 0) {
    // An empty tensor has no elements to show its shape, so torch states it unless it is (0,).
    if (dims.size() != 1) suffixes.push_back("size=" + size_tuple(dims));
    body = "[]";
  } else {
    const Printer printer(dims, values, options, numel > options.threshold);
    const Formatter formatter(printer.shown_values(), options);
    body = printer.render(formatter);
  }
  if (options.float64_suffix) suffixes.push_back("dtype=torch.float64");
  return add_suffixes(prefix + body, suffixes, indent, options.linewidth);
}

// Tensor's print, declared with Tensor in graph/tensor.h: defined here, so the engine does not
// depend on the format.
std::string Tensor::str() const {
  const Node& n = node();
  PrintOptions options;
  options.float64_suffix = n.dtype == DType::Float64;
  return format_torch(n.shape.dims(), values(), options);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << t.str();
}

}  // namespace tapegrad
