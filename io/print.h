// Tensor printing in PyTorch's format, so a reader of the book can compare numbers by eye.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
namespace tapegrad {
// The fields mirror torch.set_printoptions (defaults = torch 1.13's defaults), plus the dtype
// suffix that torch derives from the tensor itself.
//
// No float32 flag is needed: torch 1.13's _Formatter takes abs/min/max and the `value != ceil`
// test in the tensor's own dtype, all of which are exact, then widens to double before the
// ratio and threshold tests and formats Python floats; so a float32 tensor widened exactly to
// double makes every decision and every digit come out the same.
struct PrintOptions {
  int precision = 4;
  int linewidth = 80;
  int64_t threshold = 1000;
  int edgeitems = 3;
  bool float64_suffix = false;  // append ", dtype=torch.float64" as torch does for double tensors
  // torch's sci_mode: nullopt lets the formatter choose, true/false forces scientific notation.
  std::optional<bool> sci_mode = std::nullopt;
};
// Formats values (row-major, numel = product of dims) as `tensor(...)` exactly like torch 1.13.
// Throws tapegrad::Error when a dim is negative, values.size() != numel, or precision/edgeitems
// are negative.
std::string format_torch(std::span<const int64_t> dims, std::span<const double> values,
                         const PrintOptions& options = {});
}  // namespace tapegrad
