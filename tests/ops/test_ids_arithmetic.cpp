// Tests for ops/ids_arithmetic.cpp and randint with a float dtype (graph/factory.cpp): torch
// goldens from tests/goldens/integer/make_integer_goldens.py (negative floor division and
// remainders, broadcasting, 0-dim, empty; randint's stream), wrapping, and division by zero.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_ids_arithmetic {

const testing::GoldenFile& goldens() {
  static const testing::GoldenFile golden("integer", "integer.txt");
  return golden;
}

Ids ids_of(const testing::GoldenTensor& t) {
  return Ids(t.shape, t.ints());
}

std::vector<int64_t> ints(const Ids& ids) {
  return {ids.values().begin(), ids.values().end()};
}

}  // namespace test_ids_arithmetic

TEST_CASE("Ids arithmetic and comparisons: torch goldens (negative floor division, broadcasting)",
          "[ids_arithmetic][goldens]") {
  using test_ids_arithmetic::ids_of;
  using test_ids_arithmetic::ints;
  using Op = std::function<Ids(const Ids&, const Ids&)>;
  const std::vector<std::pair<std::string, Op>> ops{
      {"add", [](const Ids& a, const Ids& b) { return a + b; }},
      {"sub", [](const Ids& a, const Ids& b) { return a - b; }},
      {"mul", [](const Ids& a, const Ids& b) { return a * b; }},
      {"floor_divide", [](const Ids& a, const Ids& b) { return floor_divide(a, b); }},
      {"remainder", [](const Ids& a, const Ids& b) { return a % b; }},
      {"eq", [](const Ids& a, const Ids& b) { return eq(a, b); }},
      {"ne", [](const Ids& a, const Ids& b) { return ne(a, b); }},
      {"lt", [](const Ids& a, const Ids& b) { return lt(a, b); }},
      {"le", [](const Ids& a, const Ids& b) { return le(a, b); }},
      {"gt", [](const Ids& a, const Ids& b) { return gt(a, b); }},
      {"ge", [](const Ids& a, const Ids& b) { return ge(a, b); }}};
  const testing::GoldenFile& golden = test_ids_arithmetic::goldens();
  for (const std::string name : {"same", "broadcast", "scalar", "empty"}) {
    const Ids a = ids_of(golden[name + ".a"]), b = ids_of(golden[name + ".b"]);
    for (const auto& [op, f] : ops) {
      INFO(name << " " << op);
      const testing::GoldenTensor& want = golden[name + "." + op];
      const Ids got = f(a, b);
      CHECK(got.shape() == want.shape);
      CHECK(ints(got) == want.ints());
    }
  }
}

TEST_CASE("Ids arithmetic: scalars, wrapping at 2^63, division by zero, shapes",
          "[ids_arithmetic]") {
  using test_ids_arithmetic::ints;
  const int64_t max = std::numeric_limits<int64_t>::max(),
                min = std::numeric_limits<int64_t>::min();
  const Ids x = Ids::from_row({-7, 7, max, min});
  CHECK(ints(floor_divide(x, 2)) == std::vector<int64_t>{-4, 3, max / 2, min / 2});
  CHECK(ints(x % -3) == std::vector<int64_t>{-1, -2, -2, -2});
  CHECK(ints(x + 1) == std::vector<int64_t>{-6, 8, min, min + 1});
  CHECK(ints(x - 1) == std::vector<int64_t>{-8, 6, max - 1, max});
  CHECK(ints(x * 2) == std::vector<int64_t>{-14, 14, -2, 0});
  CHECK(ints(floor_divide(x, -1)) == std::vector<int64_t>{7, -7, -max, min});
  CHECK(ints(remainder(x, -1)) == std::vector<int64_t>{0, 0, 0, 0});
  CHECK(ints(ge(x, 7)) == std::vector<int64_t>{0, 1, 1, 0});
  CHECK_THROWS_WITH(floor_divide(x, Ids::from_row({1, 0, 1, 1})),
                    "floor_divide: b [4] (Ids): integer division by zero at b[1] (torch's "
                    "ZeroDivisionError)");
  CHECK_THROWS_WITH(x % 0, Catch::StartsWith("remainder: b [] (Ids): integer division by zero"));
  CHECK_THROWS_WITH(x + Ids::from_row({1, 2}),
                    "add: a [4], b [2] (Ids): the shapes do not broadcast");
  Tape tape;
  TapeScope scope(tape);
  const Tensor mask = from_ids(lt(x, 0), DType::Float64);
  CHECK(mask.values() == std::vector<double>{1, 0, 0, 1});
  CHECK(masked_fill(tensor({1.0, 2.0, 3.0, 4.0}, DType::Float64), mask, 0.0).values() ==
        std::vector<double>{0, 2, 3, 0});
}

TEST_CASE("to_ids: torch's .long() of float tensors, usable as indices", "[ids_arithmetic]") {
  const testing::GoldenFile& golden = test_ids_arithmetic::goldens();
  for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                   std::pair<std::string, DType>{"f64", DType::Float64}}) {
    INFO(tag);
    Tape tape;
    TapeScope scope(tape);
    const testing::GoldenTensor& x = golden["to_ids." + tag + ".x"];
    const Ids ids = to_ids(from_values(x.shape, x.values, dtype));
    CHECK(ids.shape() == x.shape);
    CHECK(test_ids_arithmetic::ints(ids) == golden["to_ids." + tag + ".y"].ints());
  }
  Tape tape;
  TapeScope scope(tape);
  // arange's values as indices: gather along a row.
  const Tensor table = tensor({{10.0, 11.0, 12.0}, {20.0, 21.0, 22.0}});
  CHECK(index_select(table, 1, to_ids(arange(3.0))).values() == table.values());
  CHECK_THROWS_WITH(to_ids(tensor({{1.0, 2.0}, {NAN, 0.0}})),
                    Catch::StartsWith("to_ids: ") && Catch::Contains("at [1, 0]"));
  CHECK_THROWS_WITH(to_ids(tensor({1e19})), Catch::Contains("not an int64"));
  CHECK(to_ids(zeros({0, 2})).shape() == Shape{0, 2});
}

TEST_CASE("randint with a float dtype: torch's stream from the same seed",
          "[ids_arithmetic][random]") {
  const testing::GoldenFile& golden = test_ids_arithmetic::goldens();
  struct Case {
    std::string name;
    int64_t low, high;
    Shape shape;
  };
  for (const Case& c :
       {Case{"small", 0, 10, {7}}, Case{"negative", -50, 13, {3, 4}},
        Case{"wide", -5, (int64_t{1} << 31) + 7, {6}}, Case{"huge", -5, int64_t{1} << 40, {5}}}) {
    const std::vector<std::pair<std::string, DType>> dtypes{{"f32", DType::Float32},
                                                            {"f64", DType::Float64}};
    for (const auto& [tag, dtype] : dtypes) {
      const std::string name = "randint_" + c.name + "." + tag;
      INFO(name);
      Tape tape;
      TapeScope scope(tape);
      Generator g(20261130);
      if (!golden.contains(name)) {
        CHECK_THROWS_WITH(randint(c.low, c.high, c.shape, dtype, g),
                          Catch::StartsWith("randint: float32 takes high - low < 2^32"));
        continue;
      }
      const Tensor t = randint(c.low, c.high, c.shape, dtype, g);
      CHECK(t.dtype() == dtype);
      CHECK(t.shape() == golden[name].shape);
      CHECK(t.values() == golden[name].values);
    }
    Generator g(20261130);
    CHECK(test_ids_arithmetic::ints(randint(c.low, c.high, c.shape, g)) ==
          golden["randint_" + c.name + ".i64"].ints());
  }
}
