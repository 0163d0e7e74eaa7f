// The registry of OpDefs, filled at static initialisation by TAPEGRAD_REGISTER_OP.
#include "graph/op.h"

#include "graph/tape.h"

#include <cstdio>
#include <string_view>
#include <vector>

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

}  // namespace tapegrad
