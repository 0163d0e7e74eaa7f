// The per-thread current tape, grad mode and module name scopes (guards, like torch.no_grad()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad {

// One tape's module name scopes (clusters in the drawing; context in errors): a tree of names,
// interned across resets so that steady-state steps allocate nothing. Node::scope indexes it.
class ScopeTable {
 public:
  void push(std::string_view name);  // enters the child `name` of the current scope
  void pop();
  void leave_all() { current_ = -1; }
  int32_t current() const { return current_; }
  int32_t size() const { return static_cast<int32_t>(scopes_.size()); }
  const std::string& name(int32_t scope) const { return scopes_[static_cast<size_t>(scope)].name; }
  int32_t parent(int32_t scope) const { return scopes_[static_cast<size_t>(scope)].parent; }
  std::string path(int32_t scope) const;  // "MultiHeadAttention/head 0"; empty for -1

 private:
  struct Scope {
    std::string name;
    int32_t parent;
  };
  std::vector<Scope> scopes_;
  int32_t current_ = -1;
};

class Tape;

// Leaves (constants, parameters) are created on the current tape: the innermost TapeScope's,
// else a per-thread default tape. Ops record on their inputs' tape.
Tape& current_tape();

class TapeScope {
 public:
  explicit TapeScope(Tape& tape);
  ~TapeScope();
  TapeScope(const TapeScope&) = delete;
  TapeScope& operator=(const TapeScope&) = delete;

 private:
  Tape* previous_;
};

bool grad_enabled();

// Like torch.no_grad(): ops still compute, but record no backward and need no gradient.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Like torch.enable_grad(): records backwards again inside a NoGradGuard (the recorded backward
// of a fused op records its composite form this way).
class EnableGradGuard {
 public:
  EnableGradGuard();
  ~EnableGradGuard();
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool previous_;
};

// Names the nodes recorded inside it (on the current tape) as part of a module or head.
class NameScope {
 public:
  explicit NameScope(std::string_view name, Tape& tape = current_tape());
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

 private:
  Tape& tape_;
};

}  // namespace tapegrad
