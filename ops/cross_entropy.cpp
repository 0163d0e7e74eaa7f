// cross_entropy: the mean over rows of −log softmax(logits)[target], via a stable log-sum-exp;
// rows whose target is ignore_index count for nothing (torch's ignore_index, default −100).
#include <algorithm>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct CrossEntropyState {
  int64_t rows, cols;
  const int64_t* targets;  // [rows], copied into the tape's arena
  const void* lse;         // [rows] row log-sum-exps, in the logits' dtype
  int64_t ignore_index;    // rows with this target take no part
  int64_t counted;         // rows whose target is not ignore_index: the mean's divisor
};

void cross_entropy_backward(Tape& tape, const Node& node) {
  // y = Σ_i (lse_i − X[i, t_i]) / N  =>  dX[i, c] += (softmax(X)[i, c] − [c = t_i]) / N · dy
  // (i over the rows not ignored, N their count; an ignored row gets no gradient)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    // Every element gets a term: a gradient still zero is written, not read (InputGrad::overwrite).
    const InputGrad<T> dx = tape.input_grad<T>(node, 0);
    if (dx.data == nullptr) return;
    T* d = dx.data;
    const bool overwrite = dx.overwrite;
    const auto& [rows, cols, targets, saved_lse, ignore_index, counted] =
        node.state_as<CrossEntropyState>();
    const T* lse = static_cast<const T*>(saved_lse);
    const T g = node.grad_as<T>()[0] / static_cast<T>(counted);
    const T* X = x.value_as<T>();
    // One row of softmax at a time (exp(x − lse) through SLEEF's exp): the [N, C]
    // probabilities are never stored. Rows split over the threads, each part with its own row
    // buffer; a row's arithmetic does not depend on the split, so neither does the result.
    T* buffers = tape.arena().allocate_array<T>(num_threads() * cols);
    parallel_for(rows, 8.0 * static_cast<double>(cols), [&](int part, int64_t r0, int64_t r1) {
      T* p = buffers + part * cols;
      for (int64_t i = r0; i < r1; ++i) {
        const T* xr = X + i * cols;
        T* dr = d + i * cols;
        if (targets[i] == ignore_index) {
          if (overwrite) std::fill(dr, dr + cols, T(0));
          continue;
        }
        for (int64_t c = 0; c < cols; ++c) p[c] = xr[c] - lse[i];
        vmath::exp(p, p, cols);
        if (overwrite) {
          for (int64_t c = 0; c < cols; ++c) dr[c] = g * p[c];
        } else {
          for (int64_t c = 0; c < cols; ++c) dr[c] += g * p[c];
        }
        dr[targets[i]] -= g;
      }
    });
  });
}

void cross_entropy_grad_graph(GradGraph& g) {
  // y = −Σ_i log_softmax(X)[i, t_i] / N, recorded as those ops (its second derivative is theirs)
  const CrossEntropyState s = g.state<CrossEntropyState>();
  const Tensor x = g.input(0);
  std::vector<double> picks(static_cast<size_t>(s.rows * s.cols));
  for (int64_t i = 0; i < s.rows; ++i) {
    if (s.targets[i] != s.ignore_index) picks[static_cast<size_t>(i * s.cols + s.targets[i])] = 1;
  }
  const Tensor pick = from_values(x.shape(), picks, x.dtype());
  grad_through(g, [&](std::span<const Tensor> in) {
    return div_scalar(neg(sum(mul(log_softmax(in[0], -1), pick))), static_cast<double>(s.counted));
  });
}

const OpDef kCrossEntropy{.name = "cross_entropy",
                          .backward = cross_entropy_backward,
                          .saves = saves::kInput0,
                          .state_bytes =
                              [](const Tape&, const Node& n) {
                                return n.state_as<CrossEntropyState>().rows *
                                       (8 + dtype_size(n.dtype));
                              },
                          .grad_graph = cross_entropy_grad_graph};
TAPEGRAD_REGISTER_OP(kCrossEntropy);

}  // namespace

Tensor cross_entropy(const Tensor& logits, std::span<const int64_t> targets, int64_t ignore_index) {
  if (logits.rank() != 1 && logits.rank() != 2) {
    throw Error("cross_entropy: " + describe("logits", logits) +
                ": expected logits of shape [N, C] or [C]");
  }
  const int64_t rows = logits.rank() == 2 ? logits.size(0) : 1;
  const int64_t cols = logits.size(-1);
  if (static_cast<int64_t>(targets.size()) != rows) {
    throw Error("cross_entropy: " + describe("logits", logits) + ": " +
                std::to_string(targets.size()) + " targets for " + std::to_string(rows) +
                (rows == 1 ? " row" : " rows"));
  }
  int64_t counted = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == ignore_index) continue;
    ++counted;
    if (targets[i] < 0 || targets[i] >= cols) {
      throw Error("cross_entropy: " + describe("logits", logits) + ": targets[" +
                  std::to_string(i) + "] = " + std::to_string(targets[i]) +
                  " is out of range [0, " + std::to_string(cols) + ")");
    }
  }
  Arena& arena = logits.tape().arena();
  auto* saved_targets = arena.allocate_array<int64_t>(rows);
  std::copy(targets.begin(), targets.end(), saved_targets);
  void* saved_lse = arena.allocate(static_cast<size_t>(rows * dtype_size(logits.dtype())));
  Tensor y = logits.tape().record(
      kCrossEntropy, Shape{}, logits.dtype(), {logits},
      CrossEntropyState{rows, cols, saved_targets, saved_lse, ignore_index, counted});
  dispatch(y.dtype(), [&]<class T>() {
    const T* X = logits.data<T>();
    T* lse = static_cast<T*>(saved_lse);
    // log Σ exp(x) = m + log Σ exp(x − m), m the row max (no overflow for large logits), with
    // SLEEF's exp and log in the logits' dtype, as torch's log_softmax kernel (vmath.h).
    // Rows split over the threads (each row's log-sum-exp is computed whole by one of them).
    parallel_for(rows, 8.0 * static_cast<double>(cols), [&](int, int64_t r0, int64_t r1) {
      vmath::logsumexp_rows(X + r0 * cols, lse + r0, r1 - r0, cols);
    });
    // The mean in row order, on the calling thread: the same sum whatever the thread count.
    double total = 0.0;
    for (int64_t i = 0; i < rows; ++i) {
      if (saved_targets[i] == ignore_index) continue;
      total += static_cast<double>(lse[i]) - static_cast<double>(X[i * cols + saved_targets[i]]);
    }
    // An empty batch, or one whose targets are all ignored, gives 0/0 = NaN, as in torch.
    output_data<T>(y)[0] = static_cast<T>(total / static_cast<double>(counted));
  });
  return y;
}

}  // namespace tapegrad
