// Tests for format_torch: hand-written cases plus byte-for-byte goldens from torch 1.13's repr().
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/io/print.h>
#include "tests/compare.h"
#include "tests/goldens.h"

namespace {

using tapegrad::format_torch;
using tapegrad::PrintOptions;

using tapegrad::testing::kInf;

// Float32 tensors reach format_torch widened exactly to double, so the hand-written cases do the
// same with float literals.
std::vector<double> widen(std::initializer_list<float> values) {
  return {values.begin(), values.end()};
}

std::string print(std::vector<int64_t> dims, const std::vector<double>& values,
                  const PrintOptions& options = {}) {
  return format_torch(dims, values, options);
}

// One case of tests/goldens/print/print_goldens.txt (records described in make_print_goldens.py).
struct Golden {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<double> values;
  PrintOptions options;
  std::string expected;
};

std::vector<Golden> load_goldens() {
  const tapegrad::testing::GoldenFile& file =
      tapegrad::testing::golden_file("print/print_goldens.txt");
  std::vector<Golden> goldens;
  for (const std::string& name : file.names()) {
    const tapegrad::testing::GoldenTensor& t = file[name];
    if (t.is_text) continue;  // the case's :options and :repr, read with its tensor
    Golden g;
    g.name = name;
    g.dims.assign(t.shape.dims().begin(), t.shape.dims().end());
    g.values = t.values;
    g.options.float64_suffix = t.dtype == tapegrad::DType::Float64;
    const std::vector<std::string> options =
        tapegrad::testing::words_of(file[name + ":options"].text);
    REQUIRE(options.size() == 5);
    g.options.precision = std::stoi(options[0]);
    g.options.linewidth = std::stoi(options[1]);
    g.options.threshold = std::stoll(options[2]);
    g.options.edgeitems = std::stoi(options[3]);
    if (options[4] == "true") g.options.sci_mode = true;
    if (options[4] == "false") g.options.sci_mode = false;
    g.expected = file[name + ":repr"].text;
    goldens.push_back(std::move(g));
  }
  return goldens;
}

const std::vector<Golden>& goldens() {
  static const std::vector<Golden> loaded = load_goldens();
  return loaded;
}

// Checks every golden of a group ("seed", "sci", ...) and returns how many there were, so that
// an emptied or renamed group fails instead of passing vacuously.
size_t check_group(const std::string& group) {
  size_t count = 0;
  for (const Golden& g : goldens()) {
    if (g.name.rfind(group + "/", 0) != 0) continue;
    ++count;
    INFO("golden " << g.name);
    CHECK(format_torch(g.dims, g.values, g.options) == g.expected);
  }
  return count;
}

const char* const kGroups[] = {"seed", "special", "negative", "sci", "int",    "rank",
                               "wrap", "summary", "empty",    "f64", "options"};

}  // namespace

TEST_CASE("print: the seed notebook's attention-score vector, from float32 literals") {
  const auto scores = widen({0.9544f, 1.4950f, 1.4754f, 0.8434f, 0.7070f, 1.0865f});
  CHECK(print({6}, scores) == "tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])");
}

TEST_CASE("print: a non-integral scalar keeps four decimals, an integral one prints as 1.") {
  CHECK(print({}, widen({0.99999994f})) == "tensor(1.0000)");
  CHECK(print({}, widen({1.0f})) == "tensor(1.)");
  CHECK(print({}, {0.5}) == "tensor(0.5000)");
}

TEST_CASE("print: rows of a matrix align under the opening bracket") {
  const auto x = widen({0.4421f, 0.5931f, 0.5790f, 0.4419f, 0.6515f, 0.5683f});
  CHECK(print({2, 3}, x) ==
        "tensor([[0.4421, 0.5931, 0.5790],\n"
        "        [0.4419, 0.6515, 0.5683]])");
}

TEST_CASE("print: -inf is wider than the integer width and is not padded") {
  // torch sizes columns from the nonzero finite values only, so "1." is not padded to "-inf".
  CHECK(print({2, 3}, {1, -kInf, -kInf, 1, 1, -kInf}) ==
        "tensor([[1., -inf, -inf],\n"
        "        [1., 1., -inf]])");
  // Among floats the common width (6) exceeds "-inf", so it is right-justified.
  CHECK(print({2}, {0.5, -kInf}) == "tensor([0.5000,   -inf])");
}

TEST_CASE("print: nan prints without a sign whatever its sign bit") {
  const double negative_nan = -std::numeric_limits<double>::quiet_NaN();
  REQUIRE(std::signbit(negative_nan));
  CHECK(print({2}, {negative_nan, 2.0}) == "tensor([nan, 2.])");
  CHECK(print({}, {negative_nan}) == "tensor(nan)");
}

TEST_CASE("print: float64 tensors carry torch's dtype suffix when asked") {
  PrintOptions f64;
  f64.float64_suffix = true;
  CHECK(print({}, {1.0 / 3.0}, f64) == "tensor(0.3333, dtype=torch.float64)");
  CHECK(print({0}, {}, f64) == "tensor([], dtype=torch.float64)");
  CHECK(print({2}, {1.0 / 3.0, 2.0}) == "tensor([0.3333, 2.0000])");
}

TEST_CASE("print: empty tensors state their size unless they are 1-D") {
  CHECK(print({0}, {}) == "tensor([])");
  CHECK(print({0, 3}, {}) == "tensor([], size=(0, 3))");
}

TEST_CASE("print: scientific notation for a wide range of magnitudes") {
  CHECK(print({3}, {123456.0, 1.5, -0.25}) == "tensor([ 1.2346e+05,  1.5000e+00, -2.5000e-01])");
  CHECK(print({2}, {1e-5, 0.5}) == "tensor([1.0000e-05, 5.0000e-01])");
}

TEST_CASE("print: a shape that does not match the value count is an error") {
  CHECK_THROWS_AS(print({2, 3}, {1, 2, 3}), tapegrad::Error);
  CHECK_THROWS_AS(print({-1}, {}), tapegrad::Error);
  CHECK_THROWS_AS(print({}, {}), tapegrad::Error);
}

TEST_CASE("print goldens: seed notebook tensors, causal masks and dropout") {
  CHECK(check_group("seed") > 0);
}
TEST_CASE("print goldens: nan, inf and signed zeros") {
  CHECK(check_group("special") > 0);
}
TEST_CASE("print goldens: negative numbers") {
  CHECK(check_group("negative") > 0);
}
TEST_CASE("print goldens: scientific mode and its thresholds") {
  CHECK(check_group("sci") > 0);
}
TEST_CASE("print goldens: all-integer tensors") {
  CHECK(check_group("int") > 0);
}
TEST_CASE("print goldens: ranks 0 to 4") {
  CHECK(check_group("rank") > 0);
}
TEST_CASE("print goldens: long rows wrap at linewidth 80") {
  CHECK(check_group("wrap") > 0);
}
TEST_CASE("print goldens: more than 1000 elements are summarized") {
  CHECK(check_group("summary") > 0);
}
TEST_CASE("print goldens: empty tensors") {
  CHECK(check_group("empty") > 0);
}
TEST_CASE("print goldens: float64 and its dtype suffix") {
  CHECK(check_group("f64") > 0);
}
TEST_CASE("print goldens: non-default print options") {
  CHECK(check_group("options") > 0);
}

TEST_CASE("print goldens: every golden belongs to a checked group") {
  std::map<std::string, int> per_group;
  for (const Golden& g : goldens()) per_group[g.name.substr(0, g.name.find('/'))]++;
  size_t checked = 0;
  for (const char* group : kGroups) checked += static_cast<size_t>(per_group[group]);
  CHECK(checked == goldens().size());
  CHECK(goldens().size() > 100);
}
