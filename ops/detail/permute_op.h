// What permute and movedim share: both reorder x's dims by a permutation, and undo it backward.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

struct PermuteState {
  int rank;
  std::array<int64_t, kMaxRank> perm;  // output dim d is input dim perm[d]
};

// Y = permute(X, p)  =>  dX += permute(dY, p⁻¹) (kernel and recorded forms).
void permute_backward(Tape& tape, const Node& node);
void permute_grad_graph(GradGraph& g);
std::string permute_arguments(const Tape& tape, const Node& node);

// Records `op` on x with the permutation in `state` (checked by the caller) and copies x in.
Tensor record_permute(const OpDef& op, const Tensor& x, const PermuteState& state);

}  // namespace tapegrad
