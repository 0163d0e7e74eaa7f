// embedding: rows of a weight table looked up by integer ids (nn.Embedding).
#include <algorithm>
#include <array>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct EmbeddingState {
  int64_t n, cols;
  const int64_t* ids;  // [n], copied into the tape's arena
};

void embedding_backward(Tape& tape, const Node& node) {
  // Y[p] = W[ids[p]]  =>  dW[ids[p]] += dY[p] for every position p (repeated ids accumulate)
  dispatch(node.dtype, [&]<class T>() {
    const Node& w = tape.input(node, 0);
    T* d = tape.input_grad<T>(node, 0).to_add();
    if (d == nullptr) return;
    const auto& [n, cols, ids] = node.state_as<EmbeddingState>();
    MatrixMap<T> dW(d, w.shape[0], cols);
    ConstMatrixMap<T> dY(node.grad_as<T>(), n, cols);
    for (int64_t p = 0; p < n; ++p) dW.row(ids[p]) += dY.row(p);
  });
}

void embedding_grad_graph(GradGraph& g) {
  // Y[p] = W[ids[p]]  =>  dW[ids[p]] += dY[p]: a product with the constant one-hot matrix
  const EmbeddingState s = g.state<EmbeddingState>();
  const Tensor w = g.input(0);
  const int64_t n = g.grad().numel() / w.shape()[1];
  std::vector<double> one_hot(static_cast<size_t>(n * w.shape()[0]));
  for (int64_t p = 0; p < n; ++p) one_hot[static_cast<size_t>(p * w.shape()[0] + s.ids[p])] = 1.0;
  const Tensor m = from_values(Shape{n, w.shape()[0]}, one_hot, w.dtype());
  const int64_t cols = w.shape()[1];
  g.add(0, matmul(t(m), reshape(g.grad(), {n, cols})));
}

const OpDef kEmbedding{.name = "embedding",
                       .backward = embedding_backward,
                       .state_bytes =
                           [](const Tape&, const Node& n) {
                             return n.state_as<EmbeddingState>().n * int64_t{sizeof(int64_t)};
                           },
                       .grad_graph = embedding_grad_graph};
TAPEGRAD_REGISTER_OP(kEmbedding);

// "ids[1, 2]" for the flat position p in `shape` ("ids" for a scalar).
std::string id_position(int64_t p, const Shape& shape) {
  if (shape.rank() == 0) return "ids";
  std::array<int64_t, kMaxRank> index{};
  for (int d = shape.rank() - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = p % shape[d];
    p /= shape[d];
  }
  std::string s = "ids[";
  for (int d = 0; d < shape.rank(); ++d) {
    s += (d > 0 ? ", " : "") + std::to_string(index[static_cast<size_t>(d)]);
  }
  return s + "]";
}

}  // namespace

Tensor embedding(const Tensor& weight, std::span<const int64_t> ids, const Shape& ids_shape) {
  if (weight.rank() != 2) {
    throw Error("embedding: " + describe("weight", weight) + ": expected a weight of shape [V, C]");
  }
  if (ids_shape.rank() > kMaxRank - 1) {
    throw Error("embedding: ids of shape " + ids_shape.str() + " would give an output of rank " +
                std::to_string(ids_shape.rank() + 1) + " (at most " + std::to_string(kMaxRank) +
                ")");
  }
  const int64_t n = ids_shape.numel(), vocab = weight.size(0), cols = weight.size(1);
  if (static_cast<int64_t>(ids.size()) != n) {
    throw Error("embedding: " + describe("weight", weight) + ": " + std::to_string(ids.size()) +
                " ids for ids shape " + ids_shape.str() + " (" + std::to_string(n) + " elements)");
  }
  for (int64_t p = 0; p < n; ++p) {
    const int64_t id = ids[static_cast<size_t>(p)];
    if (id < 0 || id >= vocab) {
      throw Error("embedding: " + describe("weight", weight) + ": id " + std::to_string(id) +
                  " at " + id_position(p, ids_shape) + " is out of range [0, " +
                  std::to_string(vocab) + ")");
    }
  }
  std::array<int64_t, kMaxRank> dims{};
  std::copy(ids_shape.dims().begin(), ids_shape.dims().end(), dims.begin());
  dims[static_cast<size_t>(ids_shape.rank())] = cols;
  const Shape out_shape(
      std::span<const int64_t>(dims.data(), static_cast<size_t>(ids_shape.rank() + 1)));
  auto* saved_ids = weight.tape().arena().allocate_array<int64_t>(n);
  std::copy(ids.begin(), ids.end(), saved_ids);
  Tensor y = weight.tape().record(kEmbedding, out_shape, weight.dtype(), {weight},
                                  EmbeddingState{n, cols, saved_ids});
  dispatch(y.dtype(), [&]<class T>() {
    ConstMatrixMap<T> W(weight.data<T>(), vocab, cols);
    MatrixMap<T> Y(output_data<T>(y), n, cols);
    for (int64_t p = 0; p < n; ++p) Y.row(p) = W.row(saved_ids[p]);
  });
  return y;
}

}  // namespace tapegrad
