// Tests for ops/detail/reduce_dim.cpp: the [outer, size, inner] plan shared by sum_dim, mean_dim,
// max_dim.
#include <catch2/catch.hpp>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/reduce_dim.h>

using namespace tapegrad;

TEST_CASE("reduce_dim: view and output shape for every dim of a rank-4 tensor", "[reduce_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3, 4, 5});
  struct Case {
    int dim;
    DimView view;
    Shape out, out_keep;
  };
  for (const Case& c :
       {Case{0, {1, 2, 60}, {3, 4, 5}, {1, 3, 4, 5}}, Case{1, {2, 3, 20}, {2, 4, 5}, {2, 1, 4, 5}},
        Case{-2, {6, 4, 5}, {2, 3, 5}, {2, 3, 1, 5}},
        Case{-1, {24, 5, 1}, {2, 3, 4}, {2, 3, 4, 1}}}) {
    INFO("dim " << c.dim);
    const DimReduction r = plan_dim_reduction("sum_dim", x, c.dim, false);
    CHECK(r.dim == (c.dim + 4) % 4);
    CHECK(r.view.outer == c.view.outer);
    CHECK(r.view.size == c.view.size);
    CHECK(r.view.inner == c.view.inner);
    CHECK(r.out_shape == c.out);
    CHECK(plan_dim_reduction("sum_dim", x, c.dim, true).out_shape == c.out_keep);
  }
}

TEST_CASE("reduce_dim: a scalar reduces to a scalar along dim 0 or -1", "[reduce_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = scalar(2.0);
  for (int dim : {0, -1}) {
    for (bool keepdim : {false, true}) {
      const DimReduction r = plan_dim_reduction("sum_dim", x, dim, keepdim);
      CHECK(r.out_shape == Shape{});
      CHECK(r.view.outer * r.view.size * r.view.inner == 1);
    }
  }
}

TEST_CASE("reduce_dim: for_each_reduced walks memory in order", "[reduce_dim]") {
  const DimView v{2, 3, 2};
  std::vector<int64_t> outs, ins, ks;
  for_each_reduced(v, [&](int64_t o, int64_t i, int64_t k) {
    outs.push_back(o);
    ins.push_back(i);
    ks.push_back(k);
  });
  CHECK(ins == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(outs == std::vector<int64_t>{0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3});
  CHECK(ks == std::vector<int64_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
}

TEST_CASE("reduce_dim: an out-of-range dim names the op and the tensor", "[reduce_dim][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("scores");
  CHECK_THROWS_WITH(plan_dim_reduction("max_dim", x, 2, false),
                    "max_dim: x \"scores\" [2, 3]: dim 2 is out of range for rank 2 (expected "
                    "-2..1)");
  CHECK_THROWS_WITH(plan_dim_reduction("sum_dim", x, -3, true),
                    "sum_dim: x \"scores\" [2, 3]: dim -3 is out of range for rank 2 (expected "
                    "-2..1)");
  CHECK_THROWS_WITH(plan_dim_reduction("sum_dim", scalar(1.0), 1, false),
                    "sum_dim: x []: dim 1 is out of range for rank 0 (expected -1..0)");
}
