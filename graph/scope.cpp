// The per-thread current tape, grad mode and name scopes.
#include "graph/scope.h"

#include "graph/tape.h"

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

NameScope::NameScope(std::string_view name, Tape& tape) : tape_(tape) {
  tape_.push_scope(name);
}
NameScope::~NameScope() {
  tape_.pop_scope();
}

}  // namespace tapegrad
