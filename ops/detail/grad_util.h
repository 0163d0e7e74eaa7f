// Small pieces the ops' recorded backwards (OpDef::grad_graph) share: constant masks, and the
// broadcast and placement steps written with ops. Shapes are taken by value: a formula passes its
// inputs' shapes, which the ops it records may move.
#pragma once

#include <cstdint>
#include <functional>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

// A constant of x's shape and dtype: 1 where pred(x's value) holds, else 0. For masks a
// derivative multiplies by and that have no derivative of their own (relu's [Y > 0]).
Tensor indicator(const Tensor& x, const std::function<bool(double)>& pred);

// dy of a reduction along `dim` read with that dim kept as 1 (no copy when it already is), so it
// broadcasts back over `shape`, the reduced input's shape.
Tensor keepdim_view(const Tensor& dy, Shape shape, int dim);

// A tensor of `shape`, zero except for dy placed at `start` along `dim`: the gradient of a slice.
Tensor placed(const Tensor& dy, Shape shape, int dim, int64_t start);

// A constant of `shape`: 1 at index[o] along `dim` for every position o of the reduced shape.
Tensor one_hot_along(Shape shape, int dim, const int64_t* index, DType dtype);

// The recorded backward of a fused op written as its composite form: records `composite` on the
// node's inputs (the op's forward again, with simpler ops) and adds the gradient of that
// composite w.r.t. each input, through the composite ops' own recorded backwards. For ops whose
// second derivative is the composite's (layer_norm, gelu's kin, the fused attentions).
class GradGraph;
void grad_through(GradGraph& g, const std::function<Tensor(std::span<const Tensor>)>& composite);

}  // namespace tapegrad
