// Helpers shared by the ops: error messages and the inference-only ops' guard.
#include <tapegrad/ops/detail/op_util.h>

#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/scope.h>

namespace tapegrad {

std::string describe(const char* role, const Tensor& t) {
  const Node& n = t.node();
  std::string s = role;
  if (!n.display_name().empty()) s += " \"" + n.display_name() + "\"";
  return s + " " + n.shape.str();
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw Error(std::string(op) + ": " + describe("a", a) + " is " + dtype_name(a.dtype()) +
                " but " + describe("b", b) + " is " + dtype_name(b.dtype()));
  }
}

void throw_binary_error(const char* op, const Tensor& a, const char* joiner, const Tensor& b,
                        const std::string& what) {
  throw Error(std::string(op) + ": " + describe("a", a) + " " + joiner + " " + describe("b", b) +
              ": " + what);
}

void throw_unary_error(const char* op, const Tensor& x, const std::string& what) {
  throw Error(std::string(op) + ": " + describe("x", x) + ": " + what);
}

void check_scalar_argument(const char* op, const Tensor& x, const char* name, double value) {
  if (!std::isfinite(value)) {
    throw_unary_error(op, x, std::string(name) + " " + number_text(value) + " must be finite");
  }
  if (x.dtype() == DType::Float32 &&
      std::abs(value) > static_cast<double>(std::numeric_limits<float>::max())) {
    throw_unary_error(op, x, std::string(name) + " " + number_text(value) + " overflows float32");
  }
}

void check_inference_only(const char* op, const Tensor& x) {
  if (grad_enabled()) {
    throw_unary_error(op, x,
                      "inference only (no gradient): run it under NoGradGuard (torch.no_grad())");
  }
}

void inference_only_backward(Tape&, const Node& node) {
  throw Error(std::string(node.op->name) + ": inference only, it has no backward");
}

std::string dim_text(int64_t dim, int rank) {
  return "dim " + std::to_string(dim == rank - 1 ? int64_t{-1} : dim);
}

std::string position_text(const Shape& shape, int64_t flat) {
  std::vector<int64_t> coords(static_cast<size_t>(shape.rank()));
  for (int d = shape.rank() - 1; d >= 0; --d) {
    coords[static_cast<size_t>(d)] = flat % shape[d];
    flat /= shape[d];
  }
  std::string out = "[";
  for (size_t d = 0; d < coords.size(); ++d) out += (d ? ", " : "") + std::to_string(coords[d]);
  return out + "]";
}

}  // namespace tapegrad
