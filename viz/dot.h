// Graphviz export of a tape: a readable, stable DOT drawing, and rendering it to SVG/PNG
// in-process.
//
// One node per tape node (id n<tape index>), labelled with its op, its user name, its output
// shape and its arguments (scale 1/√2, dropout p, heads, ...); parameters, inputs and constants
// drawn distinctly; edges labelled with the shapes they carry; one cluster per NameScope
// (modules, layers, heads), repeated ones optionally drawn once and marked ×N; a fused op drawn as
// the ops it computes, in a cluster named after it (OpDef::decomposition; ids n<index>_<k>, the
// result keeping n<index>); a legend. The same program gives byte-identical DOT on every run:
// nothing in it depends on addresses or on time, so DOT files work as goldens.
//
//   Tape tape;  TapeScope scope(tape);
//   Tensor loss = ...;  loss.backward({.retain_graph = true});
//   std::ofstream out("model.dot");
//   write_dot(tape, out, {.backward = true, .title = "MultiHeadAttention"});
//   render(to_dot(tape), "svg", "model.svg");
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

struct DotOptions {
  bool backward = false;        // draw the backward pass too (see viz/graph_view.h)
  int32_t root = -1;            // its root (the loss); -1: the last node that requires grad
  bool values = false;          // print the values (and gradients) of small tensors in their nodes
  int64_t max_values = 24;      // "small": at most this many elements
  bool collapse_heads = false;  // draw only the first of sibling scopes "head 0", "head 1", ...
  // Draw only the first of any sibling scopes numbered 0, 1, ... ("TransformerBlock 0" ...
  // "TransformerBlock 11", "head 0", ...) whose ops and shapes match one for one, marked ×N.
  // Edges between the copies (a block feeding the next) are left out; edges from outside into
  // any copy, or out of any, are drawn to or from the one drawn.
  bool collapse_repeats = false;
  // Draw a fused op whose OpDef has a decomposition (causal_dot_product_attention) as the ops it
  // computes (split heads, q·kᵀ, mask, scale, softmax, dropout, ·v, merge heads), with their
  // shapes, inside a cluster named after the op; false: one node. Its backward, one kernel, is
  // drawn as one node either way; `values` shows only the result's (the composed ops are
  // recorded on a scratch tape for their shapes, not run on the node's values).
  bool expand_fused = true;
  bool saved_bytes = false;  // show what each op keeps for its backward, in bytes
  bool edge_labels = true;   // label edges with the shape they carry
  bool legend = true;
  std::string rankdir = "TB";  // Graphviz rankdir: TB reads top to bottom, LR left to right
  std::string title = "";      // drawn above the graph when not empty
};

void write_dot(const Tape& tape, std::ostream& out, const DotOptions& options = {});
std::string to_dot(const Tape& tape, const DotOptions& options = {});

// The arguments an op shows in its node, e.g. "× 1/√2", "p = 0.1", "H = 2", "dim -1"; empty
// for ops without arguments. The op's OpDef::arguments says them.
std::string op_arguments(const Tape& tape, int32_t node);
// The bytes op node `node` keeps for its backward (the tensors its OpDef::saves names plus its
// OpDef::state_bytes); 0 for leaves.
int64_t saved_bytes(const Tape& tape, int32_t node);

// Lays out `dot` with Graphviz's dot engine (libgvc, in-process) and writes it in `format`
// ("svg", "png", "pdf", any format the installed Graphviz renders) to `path`, or returns the
// rendered bytes. Throws Error with Graphviz's message when the text does not parse, the
// format is unknown or the file cannot be written. Not for concurrent use from several threads:
// Graphviz reports errors through one process-wide hook.
void render(std::string_view dot, std::string_view format, const std::string& path);
std::string render(std::string_view dot, std::string_view format);

}  // namespace tapegrad
