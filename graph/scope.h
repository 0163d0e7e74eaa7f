// The per-thread current tape, grad mode and module name scopes (guards, like torch.no_grad()).
#pragma once

#include <string_view>

namespace tapegrad {

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
