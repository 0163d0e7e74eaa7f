// Activation checkpointing: the checkpoint node, its scratch tapes and its recomputing backward.
#include <tapegrad/graph/checkpoint.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>

namespace tapegrad {

namespace {

// A copy of the generator lives in the arena, which runs no destructors.
static_assert(std::is_trivially_copyable_v<Generator> &&
              std::is_trivially_destructible_v<Generator>);

// One scratch tape per nesting level (a checkpoint inside a checkpointed function records on the
// next one), kept by the thread across steps: after the first step each arena holds a block big
// enough for its largest segment and allocates nothing more.
struct ScratchTapes {
  std::vector<std::unique_ptr<Tape>> tapes;
  std::vector<size_t> peak;  // per level, bytes_in_use at its largest
  size_t depth = 0;
};

ScratchTapes& scratch_tapes() {
  thread_local ScratchTapes scratch;
  return scratch;
}

// The next level's scratch tape, empty, for one computation of a segment; reset again when done,
// so nothing of the segment outlives it.
class ScratchLease {
 public:
  ScratchLease() : pool_(scratch_tapes()) {
    if (pool_.depth == pool_.tapes.size()) {
      pool_.tapes.push_back(std::make_unique<Tape>());
      pool_.peak.push_back(0);
    }
    tape_ = pool_.tapes[pool_.depth++].get();
    tape_->reset();
  }
  ~ScratchLease() {
    size_t& peak = pool_.peak[pool_.depth - 1];
    peak = std::max(peak, tape_->arena().bytes_in_use());
    tape_->reset();
    --pool_.depth;
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Tape& tape() { return *tape_; }

 private:
  ScratchTapes& pool_;
  Tape* tape_ = nullptr;
};

// Puts a generator back to `state` for the recomputation and back to where it was afterwards
// (also when fn throws).
class RestoredGenerator {
 public:
  RestoredGenerator(Generator* generator, const Generator* state) : generator_(generator) {
    if (generator_ == nullptr) return;
    now_.emplace(*generator_);
    *generator_ = *state;
  }
  ~RestoredGenerator() {
    if (generator_ != nullptr) *generator_ = *now_;
  }
  RestoredGenerator(const RestoredGenerator&) = delete;
  RestoredGenerator& operator=(const RestoredGenerator&) = delete;

 private:
  Generator* generator_;
  std::optional<Generator> now_;
};

struct CheckpointState {
  const CheckpointFunction* fn;  // owned by the tape until reset (Tape::own_until_reset)
  Generator* generator;          // null: the random state is not preserved
  const Generator* rng;          // the generator as the forward found it, in the arena
  ParameterImpl* const* params;  // the parameters the segment used, in the arena
  int32_t num_params;
};

// Runs fn on `scratch` over leaves aliasing `inputs` (of `tape`), named inside `scope` of `tape`
// so that errors and drawings say where the segment sits.
Tensor run_segment(const CheckpointFunction& fn, Tape& scratch, Tape& tape,
                   std::span<const Tensor> inputs, int32_t scope) {
  std::vector<Tensor> leaves;
  leaves.reserve(inputs.size());
  for (const Tensor& in : inputs) {
    Tensor leaf = scratch.alias_leaf(in);
    Node& n = scratch.node(leaf.id());
    n.requires_grad = in.requires_grad();
    n.kind = n.requires_grad ? NodeKind::Input : NodeKind::Constant;
    n.name = in.name();
    leaves.push_back(leaf);
  }
  std::optional<NameScope> name;
  if (scope >= 0) name.emplace(tape.scopes().path(scope), scratch);
  TapeScope on_scratch(scratch);
  return fn(leaves);
}

std::string describe_result(const Tensor& y) {
  return y.shape().str() + " " + dtype_name(y.dtype());
}

template <class T>
void add_input_gradients(Tape& tape, const Node& node, Tape& scratch, const Tensor& y,
                         std::span<const Tensor> leaves) {
  // An input whose gradient already holds terms (from consumers after the segment) lends that
  // buffer to its leaf, so the segment's terms are added to it one by one in the order the
  // unsegmented walk adds them; an input with nothing yet gets the leaf's sum copied: both give
  // the same bits as without the checkpoint.
  std::vector<InputGrad<T>> grads(leaves.size());
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (!leaves[k].requires_grad()) continue;
    grads[k] = tape.input_grad<T>(node, static_cast<int>(k));
    if (!grads[k].overwrite) scratch.node(leaves[k].id()).grad = grads[k].data;
  }
  scratch.backward(y, to_doubles(node.grad, node.dtype, node.shape.numel()));
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (grads[k].data == nullptr || !grads[k].overwrite) continue;
    const T* g = static_cast<const T*>(scratch.node(leaves[k].id()).grad);
    if (g == nullptr) {
      std::fill_n(grads[k].data, grads[k].numel, T(0));  // no path from this input to y
    } else {
      std::copy_n(g, grads[k].numel, grads[k].data);
    }
  }
}

void checkpoint_backward(Tape& tape, const Node& node) {
  const auto& state = node.state_as<CheckpointState>();
  std::vector<Tensor> inputs;
  inputs.reserve(static_cast<size_t>(node.num_inputs));
  for (int k = 0; k < node.num_inputs; ++k) inputs.push_back(tape.tensor(node.inputs[k]));
  ScratchLease lease;
  Tape& scratch = lease.tape();
  Tensor y;
  {
    RestoredGenerator restored(state.generator, state.rng);
    EnableGradGuard grad_on;
    y = run_segment(*state.fn, scratch, tape, inputs, node.scope);
  }
  if (!y.defined() || &y.tape() != &scratch || y.shape() != node.shape || y.dtype() != node.dtype ||
      !y.requires_grad()) {
    const std::string got = !y.defined() || &y.tape() != &scratch ? "no tensor of its inputs"
                            : !y.requires_grad() ? describe_result(y) + " that needs no gradient"
                                                 : describe_result(y);
    throw Error("checkpoint: recomputing " +
                tape.describe_node(static_cast<int32_t>(&node - &tape.node(0))) +
                " in backward gave " + got + ", the forward " + node.shape.str() + " " +
                dtype_name(node.dtype) + ": the function must compute the same thing both times");
  }
  std::vector<Tensor> leaves;
  leaves.reserve(inputs.size());
  for (int32_t k = 0; k < node.num_inputs; ++k) leaves.push_back(scratch.tensor(k));
  if (node.dtype == DType::Float32) {
    add_input_gradients<float>(tape, node, scratch, y, leaves);
  } else {
    add_input_gradients<double>(tape, node, scratch, y, leaves);
  }
}

std::string checkpoint_arguments(const Tape&, const Node& node) {
  return node.state_as<CheckpointState>().generator != nullptr ? "preserve_rng_state" : "";
}

int64_t checkpoint_state_bytes(const Tape&, const Node& node) {
  return node.state_as<CheckpointState>().generator != nullptr ? sizeof(Generator) : 0;
}

uint32_t checkpoint_saves(const Node& node) {
  // Its backward reads every input (runs fn on them again); the flags name the first 31.
  uint32_t flags = saves::kNothing;
  for (int k = 0; k < std::min(node.num_inputs, 31); ++k) flags |= 1u << k;
  return flags;
}

// Not registered: it has no gradcheck of its own (the tests compare it with the unsegmented ops)
// and no recorded backward, so grad() names it and stops, as for any op without one.
const OpDef kCheckpoint{"checkpoint",    checkpoint_backward,    checkpoint_arguments,
                        saves::kNothing, checkpoint_state_bytes, checkpoint_saves};

}  // namespace

std::span<ParameterImpl* const> checkpoint_parameters(const Tape& tape, int32_t node) {
  const Node& n = tape.node(node);
  if (n.op != &kCheckpoint || n.state == nullptr) return {};
  const auto& state = n.state_as<CheckpointState>();
  return {state.params, static_cast<size_t>(state.num_params)};
}

Tensor checkpoint(const CheckpointFunction& fn, Inputs inputs, const CheckpointOptions& options) {
  if (!fn) throw Error("checkpoint: no function (an empty CheckpointFunction)");
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].defined()) {
      throw Error("checkpoint: input " + std::to_string(k) +
                  " is undefined (a default-constructed Tensor)");
    }
    if (&inputs[k].tape() != &inputs[0].tape()) {
      throw Error("checkpoint: input " + std::to_string(k) +
                  " belongs to another tape than input 0");
    }
    inputs[k].node();  // a stale handle throws here, before anything runs
  }
  Tape& tape = inputs.empty() ? current_tape() : inputs[0].tape();
  Generator* generator = nullptr;
  if (options.preserve_rng_state) {
    generator = options.generator != nullptr ? options.generator : &default_generator();
  }
  std::optional<Generator> rng;
  if (generator != nullptr) rng.emplace(*generator);
  ScratchLease lease;
  Tape& scratch = lease.tape();
  const Tensor y = run_segment(fn, scratch, tape, inputs, tape.scopes().current());
  if (!y.defined()) throw Error("checkpoint: the function returned no tensor (an undefined one)");
  if (&y.tape() != &scratch) {
    throw Error(
        "checkpoint: the function returned a tensor of another tape; it must compute its result "
        "from the inputs it is given (pass every tensor it uses as an input)");
  }
  const Node& result = y.node();
  const bool needs_grad = result.requires_grad && grad_enabled();
  CheckpointState state{nullptr, nullptr, nullptr, nullptr, 0};
  if (needs_grad) {
    // The segment's parameters: its own leaves' and those of checkpoints nested in it.
    std::vector<ParameterImpl*> used;
    for (int32_t i = 0; i < static_cast<int32_t>(scratch.size()); ++i) {
      const Node& n = scratch.node(i);
      if (n.kind == NodeKind::Parameter && n.requires_grad) used.push_back(n.param.get());
      for (ParameterImpl* p : checkpoint_parameters(scratch, i)) used.push_back(p);
    }
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    auto* params = static_cast<ParameterImpl**>(
        tape.arena().allocate(std::max<size_t>(used.size(), 1) * sizeof(ParameterImpl*)));
    std::copy(used.begin(), used.end(), params);
    state.params = params;
    state.num_params = static_cast<int32_t>(used.size());
    auto kept = std::make_shared<const CheckpointFunction>(fn);
    state.fn = kept.get();
    tape.own_until_reset(std::move(kept));
    if (generator != nullptr) {
      state.generator = generator;
      state.rng = new (tape.arena().allocate(sizeof(Generator))) Generator(*rng);
    }
  }
  Tensor out = tape.record(kCheckpoint, result.shape, result.dtype, inputs, state);
  Node& n = tape.node(out.id());
  n.requires_grad = needs_grad;
  std::memcpy(n.value, y.node().value, n.bytes());
  return out;
}

size_t checkpoint_scratch_peak_bytes() {
  size_t total = 0;
  for (size_t peak : scratch_tapes().peak) total += peak;
  return total;
}

void reset_checkpoint_peak() {
  for (size_t& peak : scratch_tapes().peak) peak = 0;
}

}  // namespace tapegrad
