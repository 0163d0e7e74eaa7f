// The rows of tapegrad-bench's op table (--workloads ops): each op's inputs, shared by tapegrad's
// worker (op_workload.cpp) and the LibTorch plugin's (torch_ops.cpp), so both run the same op on
// the same numbers. Plain C++: the plugin does not link tapegrad.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace tapegrad_bench {

inline constexpr int64_t kOpRows = 1024, kOpCols = 1024;  // every row's [1024, 1024] input

enum class OpKind {
  Unary,     // y = f(x), x [1024, 1024]
  Binary,    // y = f(a, b), a [1024, 1024], b the same or (broadcast) [1024, 1]
  Forward,   // no gradient: the forward alone (comparisons, arg-reductions)
  Reduce,    // y = f(x) over dim 1 (or over everything), x [1024, 1024]
  Indexing,  // gather / scatter family: x [1024, 1024] and indices (a source of x's shape)
};

struct OpRow {
  const char* name;  // the row's label, the key each engine's switch reads
  OpKind kind;
  float lo, hi;  // inputs drawn uniformly in [lo, hi) (inside the op's domain)
  bool broadcast = false;
};

// clang-format off
inline constexpr OpRow kOpTable[] = {
    // Elementwise, one input.
    {"abs", OpKind::Unary, -2, 2},      {"sign", OpKind::Unary, -2, 2},
    {"square", OpKind::Unary, -2, 2},   {"rsqrt", OpKind::Unary, 0.1f, 4},
    {"log1p", OpKind::Unary, -0.5f, 4}, {"expm1", OpKind::Unary, -4, 4},
    {"exp2", OpKind::Unary, -8, 8},     {"log2", OpKind::Unary, 0.1f, 8},
    {"log10", OpKind::Unary, 0.1f, 8},  {"sin", OpKind::Unary, -4, 4},
    {"cos", OpKind::Unary, -4, 4},      {"tan", OpKind::Unary, -1.4f, 1.4f},
    {"asin", OpKind::Unary, -0.99f, 0.99f}, {"acos", OpKind::Unary, -0.99f, 0.99f},
    {"atan", OpKind::Unary, -4, 4},     {"sinh", OpKind::Unary, -4, 4},
    {"cosh", OpKind::Unary, -4, 4},     {"asinh", OpKind::Unary, -4, 4},
    {"acosh", OpKind::Unary, 1.01f, 8}, {"atanh", OpKind::Unary, -0.99f, 0.99f},
    {"erf", OpKind::Unary, -3, 3},      {"erfc", OpKind::Unary, -3, 3},
    {"floor", OpKind::Unary, -8, 8},    {"ceil", OpKind::Unary, -8, 8},
    {"round", OpKind::Unary, -8, 8},    {"trunc", OpKind::Unary, -8, 8},
    {"frac", OpKind::Unary, -8, 8},     {"clamp", OpKind::Unary, -2, 2},
    // Elementwise, two inputs: [1024, 1024] with [1024, 1024], then with [1024, 1].
    {"maximum", OpKind::Binary, -2, 2},   {"maximum/bcast", OpKind::Binary, -2, 2, true},
    {"minimum", OpKind::Binary, -2, 2},   {"minimum/bcast", OpKind::Binary, -2, 2, true},
    {"pow", OpKind::Binary, 0.5f, 2},     {"pow/bcast", OpKind::Binary, 0.5f, 2, true},
    {"atan2", OpKind::Binary, -2, 2},     {"atan2/bcast", OpKind::Binary, -2, 2, true},
    {"fmod", OpKind::Binary, 0.5f, 8},    {"fmod/bcast", OpKind::Binary, 0.5f, 8, true},
    {"remainder", OpKind::Binary, 0.5f, 8}, {"remainder/bcast", OpKind::Binary, 0.5f, 8, true},
    {"logaddexp", OpKind::Binary, -4, 4}, {"logaddexp/bcast", OpKind::Binary, -4, 4, true},
    {"lerp", OpKind::Binary, -2, 2},      {"lerp/bcast", OpKind::Binary, -2, 2, true},
    // No gradient: comparisons (tapegrad's 0/1 floats, torch's bool), arg-reductions over dim 1.
    {"lt", OpKind::Forward, -2, 2},       {"lt/bcast", OpKind::Forward, -2, 2, true},
    {"isnan", OpKind::Forward, -2, 2},    {"argmax", OpKind::Forward, -2, 2},
    {"argmin", OpKind::Forward, -2, 2},
    // Reductions: over dim 1 unless named otherwise.
    {"sum(all)", OpKind::Reduce, -2, 2},  {"sum(dim 0)", OpKind::Reduce, -2, 2},
    {"sum", OpKind::Reduce, -2, 2},       {"mean", OpKind::Reduce, -2, 2},
    {"max(all)", OpKind::Reduce, -2, 2},  {"max", OpKind::Reduce, -2, 2},
    {"min", OpKind::Reduce, -2, 2},       {"amax", OpKind::Reduce, -2, 2},
    {"amin", OpKind::Reduce, -2, 2},      {"prod", OpKind::Reduce, 0.95f, 1.05f},
    {"var", OpKind::Reduce, -2, 2},       {"std", OpKind::Reduce, -2, 2},
    {"logsumexp", OpKind::Reduce, -4, 4}, {"norm", OpKind::Reduce, -2, 2},
    {"norm(p=1)", OpKind::Reduce, -2, 2}, {"cumsum", OpKind::Reduce, -2, 2},
    {"cumprod", OpKind::Reduce, 0.95f, 1.05f}, {"cummax", OpKind::Reduce, -2, 2},
    {"cummin", OpKind::Reduce, -2, 2},    {"logcumsumexp", OpKind::Reduce, -4, 4},
    {"sort", OpKind::Reduce, -2, 2},      {"topk(16)", OpKind::Reduce, -2, 2},
    // Gather / scatter along dim 1 (index_select, index_add along dim 0).
    {"gather", OpKind::Indexing, -2, 2},  {"take_along_dim", OpKind::Indexing, -2, 2},
    {"scatter", OpKind::Indexing, -2, 2}, {"scatter_add", OpKind::Indexing, -2, 2},
    {"index_select", OpKind::Indexing, -2, 2}, {"index_add", OpKind::Indexing, -2, 2},
};
// clang-format on

inline const OpRow* find_op_row(const char* name) {
  for (const OpRow& r : kOpTable) {
    if (std::strcmp(r.name, name) == 0) return &r;
  }
  return nullptr;
}

// The second input's shape: b of a binary row ([1024, 1] when broadcast), or the source of a
// scatter-family row.
inline int64_t op_row_second_cols(const OpRow& r) {
  return r.broadcast ? 1 : kOpCols;
}

// Deterministic inputs, the same in every engine: a 64-bit LCG (Knuth's MMIX constants), its top
// 24 bits as a float in [0, 1), scaled to [lo, hi).
class OpRowRandom {
 public:
  explicit OpRowRandom(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return s_;
  }
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  }
  std::vector<float> floats(int64_t n, float lo, float hi) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = uniform(lo, hi);
    return v;
  }
  // n indices in [0, bound).
  std::vector<int64_t> indices(int64_t n, int64_t bound) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t& i : v) i = static_cast<int64_t>((next() >> 33) % static_cast<uint64_t>(bound));
    return v;
  }
  // Each of `rows` rows a permutation of [0, cols) (scatter's targets: no two writes collide,
  // so the result does not depend on the order of the writes).
  std::vector<int64_t> row_permutations(int64_t rows, int64_t cols) {
    std::vector<int64_t> v(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t* p = v.data() + r * cols;
      for (int64_t c = 0; c < cols; ++c) p[c] = c;
      for (int64_t c = cols - 1; c > 0; --c) {
        const int64_t j = static_cast<int64_t>((next() >> 33) % static_cast<uint64_t>(c + 1));
        std::swap(p[c], p[j]);
      }
    }
    return v;
  }

 private:
  uint64_t s_;
};

// A row's inputs: x (or a) [1024, 1024]; b [1024, op_row_second_cols] for binary rows and the
// scatter family's source; the indices of the indexing rows (gather, take_along_dim: [1024, 1024]
// in [0, 1024); scatter, scatter_add: each row a permutation; index_select, index_add: 1024 row
// indices in [0, 1024)).
struct OpRowInputs {
  std::vector<float> a, b;
  std::vector<int64_t> index;
};

inline OpRowInputs make_op_row_inputs(const OpRow& r) {
  uint64_t seed = 14695981039346656037ull;  // FNV-1a of the name: each row its own numbers
  for (const char* c = r.name; *c != 0; ++c)
    seed = (seed ^ static_cast<uint8_t>(*c)) * 1099511628211ull;
  OpRowRandom rng(seed);
  OpRowInputs in;
  in.a = rng.floats(kOpRows * kOpCols, r.lo, r.hi);
  in.b = rng.floats(kOpRows * op_row_second_cols(r), r.lo, r.hi);
  const std::string_view name = r.name;
  if (name == "scatter" || name == "scatter_add") {
    in.index = rng.row_permutations(kOpRows, kOpCols);
  } else if (name == "index_select" || name == "index_add") {
    in.index = rng.indices(kOpRows, kOpRows);
  } else if (r.kind == OpKind::Indexing) {
    in.index = rng.indices(kOpRows * kOpCols, kOpCols);
  }
  return in;
}

}  // namespace tapegrad_bench

// The LibTorch plugin's op workers (torch_ops.cpp), C linkage as the plugin's other entries.
extern "C" {
// Sets up `row` (its inputs from make_op_row_inputs) at `threads` threads; null for an unknown row.
void* tgb_torch_op_create(const char* row, int threads);
// Runs the row `reps` times (forward, Σ of the output, backward of it); returns Σ y of the last.
double tgb_torch_op_run(void* op, int reps);
// Σ of the last run's gradient of the first input (0 for rows without a gradient).
double tgb_torch_op_grad_sum(void* op);
void tgb_torch_op_destroy(void* op);
}
