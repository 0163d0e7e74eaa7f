// Tests for ops/argmin.cpp.
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("argmin: first minimum, first NaN, keepdim, 0-D, reuse of the output", "[argmin]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = tensor({{3.0, 1.0, 1.0, 0.0, 0.0}, {2.0, nan, 5.0, nan, -9.0}});
  Ids ids = argmin(x, 1);
  CHECK(ids.shape() == Shape{2});
  CHECK(std::vector<int64_t>(ids.values().begin(), ids.values().end()) ==
        std::vector<int64_t>{3, 1});
  argmin(x, 0, true, ids);
  CHECK(ids.shape() == Shape{1, 5});
  CHECK(std::vector<int64_t>(ids.values().begin(), ids.values().end()) ==
        std::vector<int64_t>{1, 1, 0, 1, 1});
  CHECK(argmin(scalar(2.0), 0).shape() == Shape{});
  CHECK(argmin(zeros({0, 3}), 1).shape() == Shape{0});
  CHECK_THROWS_WITH(argmin(zeros({0, 3}), 0),
                    "argmin: x [0, 3]: cannot take the argmin along dim 0 of size 0");
}

TEST_CASE("argmin: matches torch's indices, ties and NaN", "[argmin][goldens]") {
  const testing::GoldenFile& golden = testing::reductions2_goldens();
  for (const char* values : {"argmin_special", "argmin_ties"}) {
    for (int dim : {0, 1}) {
      for (const auto& [tag, dtype] : testing::golden_dtypes()) {
        const std::string name = std::string(values) + "_dim" + std::to_string(dim) + "." + tag;
        INFO(name);
        Tape tape;
        TapeScope scope(tape);
        const testing::GoldenTensor& gx = golden[name + ".x"];
        const Ids ids = argmin(from_values(gx.shape, gx.values, dtype), dim);
        CHECK(ids.shape() == golden[name + ".y"].shape);
        CHECK(std::vector<int64_t>(ids.values().begin(), ids.values().end()) ==
              golden[name + ".y"].ints());
      }
    }
  }
}
