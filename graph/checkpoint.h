// Activation checkpointing, torch.utils.checkpoint's reentrant form: a segment's intermediate
// values are dropped after the forward and recomputed in backward.
//
//   Tensor y = checkpoint([&](std::span<const Tensor> in) { return block(in[0]); }, {x});
//
// The forward runs `fn` on a scratch tape (leaves aliasing the inputs' values; the parameters fn
// uses get leaves there too), copies its result onto the inputs' tape as one "checkpoint" node
// and resets the scratch tape: the tape keeps the segment's inputs and output, not what lies
// between. That node's backward runs fn again on a scratch tape with the generator restored to
// its state before the forward (torch's preserve_rng_state: the same dropout masks), walks that
// recording back from the output's gradient (parameters' gradients accumulate into the
// parameters, the inputs' into the node's inputs), and resets it. Gradients are bit-identical
// to the same ops recorded without checkpoint (docs/design.md, "Activation checkpointing").
#pragma once

#include <cstddef>
#include <functional>
#include <span>

#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

// The segment: its inputs in, one tensor computed from them (and from parameters) out. It must
// compute the same thing when run again: no tensor of another tape may enter (pass it as an
// input), and what it captures by reference must live until the backward.
using CheckpointFunction = std::function<Tensor(std::span<const Tensor>)>;

struct CheckpointOptions {
  // Restore `generator` for the recomputation, so random ops draw what they drew in the forward;
  // the generator is put back afterwards, so the backward leaves its stream where it was.
  bool preserve_rng_state = true;
  Generator* generator = nullptr;  // the one the segment's random ops draw from; null: default
};

// fn(inputs), recorded as one node. The inputs: tensors of one tape (none: the current tape).
// The node requires grad when grad mode is on and fn's result does (through an input or a
// parameter). Throws Error when an input is undefined or on another tape, when fn returns no
// tensor or one not computed on the inputs it was given, and, in backward, when the recomputation
// returns another shape or dtype. grad() and create_graph cannot go through the node (it has no
// recorded backward; torch's reentrant checkpoint refuses them too): that is an Error.
Tensor checkpoint(const CheckpointFunction& fn, Inputs inputs,
                  const CheckpointOptions& options = {});

// The parameters the segment of checkpoint node `node` of `tape` used (nested segments'
// included): the node's backward accumulates their gradients, so a reverse walk has them final
// only after it (dist/'s overlapped buckets ask). Empty for a node that is not a checkpoint, or
// one that needs no gradient.
std::span<ParameterImpl* const> checkpoint_parameters(const Tape& tape, int32_t node);

// The most bytes this thread's checkpoint scratch tapes held at once since the last
// reset_checkpoint_peak() (summed over nesting levels): the memory checkpointing adds to the
// tape's own arena (Arena::bytes_in_use) while a segment is computed or recomputed.
size_t checkpoint_scratch_peak_bytes();
void reset_checkpoint_peak();

}  // namespace tapegrad
