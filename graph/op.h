// The op seam: an OpDef carries everything the engine, the drawing and the error messages know
// about an op. The library's ops and a user's own ops (the C++ torch.autograd.Function) use it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tapegrad {

class GradGraph;  // ops/grad.h
class Tape;
class Tensor;
struct Node;

// A backward reads node.grad (dL/dY) and adds its terms to each input's gradient, which it gets
// from Tape::input_grad(node, k) (graph/tape.h says the two ways to write it).
using BackwardFn = void (*)(Tape& tape, const Node& node);
// The same backward written with ops (ops/grad.h), so that it is recorded and can itself be
// differentiated: what grad() and backward() run with create_graph, and what grad() runs without.
using GradGraphFn = void (*)(GradGraph& g);
// The op's arguments as the book writes them ("dim -1", "p = 0.1", "H = 12"); "" for none.
using ArgumentsFn = std::string (*)(const Tape& tape, const Node& node);
// Bytes an op's backward keeps besides the tensors named by OpDef::saves (masks, statistics).
using StateBytesFn = int64_t (*)(const Tape& tape, const Node& node);
// What a backward reads when that depends on the node (saves:: flags), e.g. an optional input.
using SavesFn = uint32_t (*)(const Node& node);
// True when the op wrote ±inf on purpose (masked_fill with an infinite value).
using WritesInfFn = bool (*)(const Node& node);
// A fused op's decomposition, for drawing only: records on the tape of `inputs` (leaves standing
// for the node's inputs, in its argument order: their shapes and dtypes) the composed ops the
// fused op computes, with their names, and returns their result, of the node's shape and dtype.
// `node` (the fused node) gives the op's attributes: read them before recording, as recording on
// node's own tape may move it.
// The DOT writer (viz/dot.h) calls it on a scratch tape, once per drawn node, and draws those
// ops in place of the node, inside a cluster named after the op; nothing else calls it, so a
// training step pays nothing for it. A test should run it on real inputs and compare with the
// op's output, so the drawing cannot drift from the kernel (tests/viz/test_dot.cpp does this for
// causal_dot_product_attention, dropout included).
using DecompositionFn = Tensor (*)(std::span<const Tensor> inputs, const Node& node);

// The tensors a backward reads, so they stay alive for it: input k is bit k, the output kOutput.
namespace saves {
constexpr uint32_t kNothing = 0;
constexpr uint32_t kInput0 = 1u << 0;
constexpr uint32_t kInput1 = 1u << 1;
constexpr uint32_t kInput2 = 1u << 2;
constexpr uint32_t kOutput = 1u << 31;
}  // namespace saves

struct OpDef {
  const char* name;
  BackwardFn backward;
  ArgumentsFn arguments = nullptr;          // null: the op shows no arguments
  uint32_t saves = saves::kNothing;         // what the backward reads (saves:: flags)
  StateBytesFn state_bytes = nullptr;       // null: nothing besides those tensors
  SavesFn saves_of = nullptr;               // non-null: overrides `saves` per node
  WritesInfFn writes_inf = nullptr;         // anomaly mode does not report such infinities
  DecompositionFn decomposition = nullptr;  // fused ops: the ops drawn for it (null: one node)
  GradGraphFn grad_graph = nullptr;         // null: no recorded backward (ops/DERIVATIVES.md)
};

// The saves:: flags of a node's op (its saves_of when it has one); kNothing for leaves.
uint32_t saved_by(const Node& node);

// Lists `op` in registered_ops(); returns true so it can initialise a static (see below).
bool register_op(const OpDef& op);
// Every OpDef registered in this program: the library's ops and any a user registered.
std::span<const OpDef* const> registered_ops();
const OpDef* find_registered_op(std::string_view name);

// For ArgumentsFn: a number as drawings show it (0.1, 2, -inf, 0.707107: "%.6g").
std::string number_text(double v);

// For a forward: the values of `y`, the output Tape::record just returned, for the op to write
// (y.data<T>() is read-only). Throws Error unless y is an op's output of element type T
// (float or double), so a forward cannot write into a leaf or a parameter by mistake.
template <class T>
T* output_data(const Tensor& y);
extern template float* output_data<float>(const Tensor& y);
extern template double* output_data<double>(const Tensor& y);

}  // namespace tapegrad

// Registers an OpDef at static initialisation, once, in the file that defines it:
//   const OpDef kGelu{"gelu", gelu_backward, nullptr, saves::kInput0};
//   TAPEGRAD_REGISTER_OP(kGelu);
#define TAPEGRAD_REGISTER_OP(def) \
  [[maybe_unused]] const bool tapegrad_registered_##def = ::tapegrad::register_op(def)
