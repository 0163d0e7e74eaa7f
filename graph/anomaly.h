// Anomaly mode: NaN/Inf checks of every forward value and gradient, naming the op that made them.
#pragma once

#include <cstdint>
#include <span>

namespace tapegrad {

class Tape;

// Anomaly mode (off by default; a scope guard, per thread), like torch.autograd.detect_anomaly:
// every forward value and every gradient is checked for NaN and Inf, and the Error names the op
// that produced it, the node's name, and where in the forward pass it was created (its node
// index on the tape and its NameScope path), e.g.
//   anomaly: forward: exp #4 "logits" in attention/head 0 produced Inf (first at element 3 of
//   [2, 3], float32) from finite inputs; found when matmul consumed it as input 0
// What is checked, and when:
//  - forward: an op writes its output after it is recorded, so each value is checked when it is
//    next used: when an op consumes it, when backward starts from it (the loss), and when it is
//    read with values(), item() or str(). Every node the loss depends on is therefore checked
//    before backward runs. NaN is always an anomaly. ±inf is one only where it first appears:
//    an op output holding inf when none of its inputs did (exp overflow, log(0), x / 0), or a
//    parameter holding inf. Infinities a caller put in a constant (an additive -inf mask), that
//    propagate from an input, or that masked_fill / causal_mask write on purpose are not.
//  - backward: the seed gradient, and after each node's backward the gradients of its inputs.
// A forward check throws before the consuming op records anything. Outside anomaly mode nothing
// is checked and nothing is slower.
bool anomaly_mode_enabled();
class AnomalyMode {
 public:
  AnomalyMode();
  ~AnomalyMode();
  AnomalyMode(const AnomalyMode&) = delete;
  AnomalyMode& operator=(const AnomalyMode&) = delete;

 private:
  bool previous_;
};

// The checks the tape runs while anomaly mode is on. `consumer` names the op using the value
// (as its input `k`), or is null with k = -1 when backward starts from it, -2 when it is read.
void check_forward_value(Tape& tape, int32_t id, const char* consumer, int k);
// The seed gradient given to backward(root, grad).
void check_seed_gradient(const Tape& tape, int32_t root, std::span<const double> grad);
// The gradient of input `k` of op node `consumer`, after that node's backward ran.
void check_gradient(const Tape& tape, int32_t consumer, int k);

}  // namespace tapegrad
