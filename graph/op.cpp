// The registry of OpDefs, filled at static initialisation by TAPEGRAD_REGISTER_OP, and the
// helpers of graph/op.h for ops written outside the library.
#include <tapegrad/graph/op.h>

#include <tapegrad/graph/tape.h>

#include <cstdio>
#include <string_view>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

namespace {
// A function-local static: registrations run during other files' static initialisation.
std::vector<const OpDef*>& registry() {
  static std::vector<const OpDef*> ops;
  return ops;
}
}  // namespace

bool register_op(const OpDef& op) {
  registry().push_back(&op);
  return true;
}

std::span<const OpDef* const> registered_ops() {
  return registry();
}

const OpDef* find_registered_op(std::string_view name) {
  for (const OpDef* op : registry()) {
    if (op->name == name) return op;
  }
  return nullptr;
}

uint32_t saved_by(const Node& node) {
  if (node.op == nullptr) return saves::kNothing;
  return node.op->saves_of != nullptr ? node.op->saves_of(node) : node.op->saves;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

template <class T>
T* output_data(const Tensor& y) {
  const Node& n = y.node();
  if (n.kind != NodeKind::Op) {
    throw Error("output_data: " + y.tape().describe_node(y.id()) +
                " is not an op's output (a leaf's values are not an op's to write)");
  }
  if (n.dtype != dtype_of<T>()) {
    throw Error("output_data: " + y.tape().describe_node(y.id()) + " holds " + dtype_name(n.dtype) +
                ", not " + dtype_name(dtype_of<T>()));
  }
  return n.value_as<T>();
}
template float* output_data<float>(const Tensor& y);
template double* output_data<double>(const Tensor& y);

}  // namespace tapegrad
