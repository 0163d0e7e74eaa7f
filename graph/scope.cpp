// The per-thread current tape, grad mode and name scopes, and the tape's table of those scopes.
#include <tapegrad/graph/scope.h>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

namespace {
thread_local Tape* current_tape_ptr = nullptr;
thread_local bool grad_mode = true;
}  // namespace

Tape& current_tape() {
  if (current_tape_ptr != nullptr) return *current_tape_ptr;
  thread_local Tape default_tape;
  return default_tape;
}

TapeScope::TapeScope(Tape& tape) : previous_(current_tape_ptr) {
  current_tape_ptr = &tape;
}
TapeScope::~TapeScope() {
  current_tape_ptr = previous_;
}

bool grad_enabled() {
  return grad_mode;
}
NoGradGuard::NoGradGuard() : previous_(grad_mode) {
  grad_mode = false;
}
NoGradGuard::~NoGradGuard() {
  grad_mode = previous_;
}
EnableGradGuard::EnableGradGuard() : previous_(grad_mode) {
  grad_mode = true;
}
EnableGradGuard::~EnableGradGuard() {
  grad_mode = previous_;
}

NameScope::NameScope(std::string_view name, Tape& tape) : tape_(tape) {
  tape_.scopes().push(name);
}
NameScope::~NameScope() {
  tape_.scopes().pop();
}

// --- ScopeTable ---------------------------------------------------------------------------------

void ScopeTable::push(std::string_view name) {
  for (size_t i = 0; i < scopes_.size(); ++i) {
    if (scopes_[i].parent == current_ && scopes_[i].name == name) {
      current_ = static_cast<int32_t>(i);
      return;
    }
  }
  scopes_.push_back(Scope{std::string(name), current_});
  current_ = static_cast<int32_t>(scopes_.size() - 1);
}

void ScopeTable::pop() {
  if (current_ >= 0) current_ = scopes_[static_cast<size_t>(current_)].parent;
}

std::string ScopeTable::path(int32_t scope) const {
  std::string path;
  for (int32_t s = scope; s >= 0; s = scopes_[static_cast<size_t>(s)].parent) {
    path = path.empty() ? scopes_[static_cast<size_t>(s)].name
                        : scopes_[static_cast<size_t>(s)].name + "/" + path;
  }
  return path;
}

std::string Tape::describe_node(int32_t id) const {
  const Node& n = nodes_[static_cast<size_t>(id)];
  std::string s = std::string(n.op_name()) + " #" + std::to_string(id);
  if (!n.display_name().empty()) s += " \"" + n.display_name() + "\"";
  if (n.scope >= 0) s += " in " + scopes_.path(n.scope);
  return s;
}

}  // namespace tapegrad
