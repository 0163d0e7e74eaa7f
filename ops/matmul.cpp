// matmul: torch.matmul (1-D operands promoted, batch dims broadcast), and dot as its 1-D form.
//
// A kernel, so over the 120-line budget of an op file: broadcasting batch dims, the 1-D forms
// and the one-GEMM fast paths (forward and both gradients) belong together.
#include <algorithm>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

constexpr int kMaxBatch = kMaxRank - 2;  // batch dims beside the two matrix dims
using BatchDims = std::array<int64_t, kMaxBatch>;

// How the operands split into matrices: Y[i] = A[i] · B[i] for every slice i of the output batch
// (`batch`, right-aligned into kMaxBatch slots, 1 where unused), where A[i] starts at matrix
// Σ_d index_d(i)·a_step[d] of a: a step is 0 along a dim that operand is broadcast in.
struct Geometry {
  int64_t m = 1, k = 1, n = 1;
  int64_t kb = 1;  // b's inner dim, to check against k
  BatchDims batch{};
  BatchDims a_step{}, b_step{};
  int64_t slices = 1;  // the output's matrices: the product of `batch`
  int batch_rank = 0;
  bool broadcasts = true;
};

// The batch dims of an operand (all but its last two), right-aligned into kMaxBatch slots.
BatchDims batch_dims(const Shape& s) {
  BatchDims out;
  out.fill(1);
  const int r = std::max(s.rank() - 2, 0);
  for (int i = 0; i < r; ++i) out[static_cast<size_t>(kMaxBatch - r + i)] = s[i];
  return out;
}

// An operand's matrix strides per batch dim: row-major over its own batch, 0 where it is 1.
BatchDims batch_steps(const BatchDims& dims) {
  BatchDims step{};
  int64_t stride = 1;
  for (int d = kMaxBatch - 1; d >= 0; --d) {
    const auto u = static_cast<size_t>(d);
    step[u] = dims[u] == 1 ? 0 : stride;
    stride *= dims[u];
  }
  return step;
}

Geometry geometry(const Shape& a, const Shape& b) {
  Geometry g;
  const bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
  g.m = a_vec ? 1 : a[a.rank() - 2];
  g.k = a[a.rank() - 1];
  g.kb = b_vec ? b[0] : b[b.rank() - 2];
  g.n = b_vec ? 1 : b[b.rank() - 1];
  g.batch_rank = std::max({a.rank() - 2, b.rank() - 2, 0});
  const BatchDims ab = batch_dims(a), bb = batch_dims(b);
  for (size_t d = 0; d < kMaxBatch; ++d) {
    if (ab[d] != bb[d] && ab[d] != 1 && bb[d] != 1) g.broadcasts = false;
    g.batch[d] = ab[d] == 1 ? bb[d] : ab[d];
    g.slices *= g.batch[d];
  }
  g.a_step = batch_steps(ab);
  g.b_step = batch_steps(bb);
  return g;
}

// How many matrices an operand holds: less than the output batch when it broadcasts.
int64_t matrices(const BatchDims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The first matrix of output slice i in an operand read with `step`.
int64_t slice_offset(const Geometry& g, int64_t i, const BatchDims& step) {
  int64_t offset = 0;
  for (int d = kMaxBatch - 1; d >= 0 && i > 0; --d) {
    const auto u = static_cast<size_t>(d);
    offset += (i % g.batch[u]) * step[u];
    i /= g.batch[u];
  }
  return offset;
}

// Runs f(i, parallel) for every output batch slice i. Slices are independent when each writes
// its own output: then they are split over the threads (each product on one thread, in a fixed
// order); otherwise (an operand's gradient is shared by broadcast slices) they run in order and
// each product splits itself over the threads.
template <class F>
void for_each_slice(const Geometry& g, bool independent, F&& f) {
  const int64_t count = g.slices;
  const double flops = 2.0 * static_cast<double>(g.m * g.n * g.k);
  if (independent && count >= num_threads()) {
    parallel_for(count, flops, [&](int, int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) f(i, false);
    });
    return;
  }
  for (int64_t i = 0; i < count; ++i) f(i, true);
}

// When b has no batch dims, a's batch is the output's and A reads as one [batch·M, K] matrix.
bool folds(const Shape& b) {
  return b.rank() <= 2;
}

void matmul_backward(Tape& tape, const Node& node) {
  // Y = A·B  =>  dA += dY·Bᵀ, dB += Aᵀ·dY  (per batch slice; summed where an operand broadcast)
  dispatch(node.dtype, [&]<class T>() {
    const Node& a = tape.input(node, 0);
    const Node& b = tape.input(node, 1);
    const Geometry g = geometry(a.shape, b.shape);
    const int64_t m = g.m, k = g.k, n = g.n;
    const T* av = a.value_as<T>();
    const T* bv = b.value_as<T>();
    const T* dy = node.grad_as<T>();
    const int64_t slices = g.slices;
    // An operand's gradient that is still zero is written, not accumulated (BLAS's beta 0;
    // InputGrad::overwrite), when each of its elements gets one product: always when b folds,
    // else unless the operand was broadcast over the batch (its slices then sum).
    const auto target = [&](int k_input, const Shape& shape) {
      InputGrad<T> d = tape.input_grad<T>(node, k_input);
      if (!folds(b.shape) && matrices(batch_dims(shape)) != slices) d.to_add();
      return d;
    };
    const InputGrad<T> da_target = target(0, a.shape), db_target = target(1, b.shape);
    T* da = da_target.data;
    T* db = db_target.data;
    const bool da_overwrite = da_target.overwrite, db_overwrite = db_target.overwrite;
    if (folds(b.shape)) {
      const int64_t rows = g.slices * m;
      if (da) {
        gemm(matrix(da, rows, k), matrix(dy, rows, n), matrix(bv, k, n).t(),
             {.accumulate = !da_overwrite});
      }
      if (db) {
        gemm(matrix(db, k, n), matrix(av, rows, k).t(), matrix(dy, rows, n),
             {.accumulate = !db_overwrite});
      }
      return;
    }
    if (da) {
      for_each_slice(g, matrices(batch_dims(a.shape)) == slices, [&](int64_t i, bool par) {
        const T* dys = dy + i * m * n;
        const T* bs = bv + slice_offset(g, i, g.b_step) * k * n;
        gemm(matrix(da + slice_offset(g, i, g.a_step) * m * k, m, k), matrix(dys, m, n),
             matrix(bs, k, n).t(), {.accumulate = !da_overwrite, .parallel = par});
      });
    }
    if (db) {
      for_each_slice(g, matrices(batch_dims(b.shape)) == slices, [&](int64_t i, bool par) {
        const T* dys = dy + i * m * n;
        const T* as = av + slice_offset(g, i, g.a_step) * m * k;
        gemm(matrix(db + slice_offset(g, i, g.b_step) * k * n, k, n), matrix(as, m, k).t(),
             matrix(dys, m, n), {.accumulate = !db_overwrite, .parallel = par});
      });
    }
  });
}

void matmul_grad_graph(GradGraph& g) {
  // Y = A·B  =>  dA += sum_to_size(dY·Bᵀ), dB += sum_to_size(Aᵀ·dY)   (1-D operands as matrices)
  const Tensor a = g.input(0), b = g.input(1);
  const Tensor a2 = a.rank() == 1 ? reshape(a, {1, a.shape()[0]}) : a;
  const Tensor b2 = b.rank() == 1 ? reshape(b, {b.shape()[0], 1}) : b;
  const Shape out = g.grad().shape();
  std::vector<int64_t> dims(out.dims().begin(), out.dims().end());
  if (a.rank() == 1) dims.insert(dims.end() - (b.rank() == 1 ? 0 : 1), 1);
  if (b.rank() == 1) dims.push_back(1);
  // Reshapes copy: only a 1-D operand's needs one.
  const bool vectors = a.rank() == 1 || b.rank() == 1;
  const Tensor dy = vectors ? reshape(g.grad(), dims) : g.grad();
  if (g.needs(0)) {
    const Shape a2_shape = a2.shape(), a_shape = a.shape();
    const Tensor da = sum_to_size(matmul(dy, transpose(b2, -2, -1)), a2_shape);
    g.add(0, a.rank() == 1 ? reshape(da, a_shape.dims()) : da);
  }
  if (g.needs(1)) {
    const Shape b2_shape = b2.shape(), b_shape = b.shape();
    const Tensor db = sum_to_size(matmul(transpose(a2, -2, -1), dy), b2_shape);
    g.add(1, b.rank() == 1 ? reshape(db, b_shape.dims()) : db);
  }
}

const OpDef kMatmul{.name = "matmul",
                    .backward = matmul_backward,
                    .saves = saves::kInput0 | saves::kInput1,
                    .grad_graph = matmul_grad_graph};
TAPEGRAD_REGISTER_OP(kMatmul);

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_dtype("matmul", a, b);
  if (a.rank() == 0 || b.rank() == 0) {
    throw_binary_error("matmul", a, "x", b, "both operands need at least 1 dim");
  }
  const Geometry g = geometry(a.shape(), b.shape());
  if (g.k != g.kb) {
    throw_binary_error("matmul", a, "x", b,
                       "inner dims " + std::to_string(g.k) + " != " + std::to_string(g.kb));
  }
  if (!g.broadcasts) {
    const Shape a_batch(a.shape().dims().first(static_cast<size_t>(std::max(a.rank() - 2, 0))));
    const Shape b_batch(b.shape().dims().first(static_cast<size_t>(std::max(b.rank() - 2, 0))));
    throw_binary_error(
        "matmul", a, "x", b,
        "batch dims " + a_batch.str() + " and " + b_batch.str() + " do not broadcast");
  }
  std::array<int64_t, kMaxRank> dims{};
  size_t r = 0;
  for (int d = kMaxBatch - g.batch_rank; d < kMaxBatch; ++d) {
    dims[r++] = g.batch[static_cast<size_t>(d)];
  }
  if (a.rank() > 1) dims[r++] = g.m;
  if (b.rank() > 1) dims[r++] = g.n;
  const Shape out(std::span<const int64_t>(dims.data(), r));

  Tensor y = a.tape().record(kMatmul, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t m = g.m, k = g.k, n = g.n;
    const T* av = a.data<T>();
    const T* bv = b.data<T>();
    T* yv = output_data<T>(y);
    if (folds(b.shape())) {
      const int64_t rows = g.slices * m;
      gemm(matrix(yv, rows, n), matrix(av, rows, k), matrix(bv, k, n));
      return;
    }
    for_each_slice(g, true, [&](int64_t i, bool par) {
      const int64_t ao = slice_offset(g, i, g.a_step) * m * k;
      const int64_t bo = slice_offset(g, i, g.b_step) * k * n;
      gemm(matrix(yv + i * m * n, m, n), matrix(av + ao, m, k), matrix(bv + bo, k, n),
           {.parallel = par});
    });
  });
  return y;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  check_same_dtype("dot", a, b);
  if (a.rank() != 1 || b.rank() != 1) throw_binary_error("dot", a, "x", b, "expected 1-D operands");
  if (a.shape()[0] != b.shape()[0]) {
    throw_binary_error(
        "dot", a, "x", b,
        "lengths " + std::to_string(a.shape()[0]) + " != " + std::to_string(b.shape()[0]));
  }
  return matmul(a, b);
}

}  // namespace tapegrad
