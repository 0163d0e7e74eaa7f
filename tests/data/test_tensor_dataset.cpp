// Tests for data/tensor_dataset.h: rows and batches, torch's shuffled orders and splits from the
// same seeds (tests/goldens/data/make_data_goldens.py), and bad arguments.
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>
#include "tests/goldens.h"

using namespace tapegrad;
using tapegrad::testing::GoldenFile;

namespace test_tensor_dataset {

// TensorDataset(arange(n)) as torch's goldens use it: row i holds the id i.
data::TensorDataset arange_dataset(int64_t n) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), int64_t{0});
  return data::TensorDataset({Ids(Shape{n}, ids)});
}

// One epoch of `loader` (range-for), its rows concatenated and its batch sizes.
void read_epoch(data::DataLoader& loader, std::vector<int64_t>& rows, std::vector<int64_t>& sizes) {
  rows.clear();
  sizes.clear();
  for (const data::Batch& b : loader) {
    const Ids& ids = b.ids(0);
    rows.insert(rows.end(), ids.values().begin(), ids.values().end());
    sizes.push_back(ids.numel());
  }
}

void check_epochs(const GoldenFile& golden, const std::string& name, data::DataLoader& loader) {
  std::vector<int64_t> rows, sizes;
  for (int epoch = 0; epoch < 2; ++epoch) {
    const std::string key = name + ".e" + std::to_string(epoch);
    INFO(key);
    read_epoch(loader, rows, sizes);
    CHECK(rows == golden[key].ints());
    CHECK(sizes == golden[key + ".sizes"].ints());
    CHECK(static_cast<int64_t>(sizes.size()) == loader.size());
  }
}

}  // namespace test_tensor_dataset

TEST_CASE("TensorDataset: rows, batches and torch's defaults", "[data]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = from_values(
      Shape{5, 2}, std::vector<double>{0, 1, 10, 11, 20, 21, 30, 31, 40, 41}, DType::Float64);
  const data::TensorDataset ds({x, Ids(Shape{5}, {7, 8, 9, 10, 11})});
  CHECK(ds.size() == 5);
  CHECK(ds.num_tensors() == 2);

  const data::Batch row = ds[-1];  // dim 0 removed, as dataset[i]
  CHECK(row.tensor(0).shape() == Shape{2});
  CHECK(row.tensor(0).values() == std::vector<double>{40, 41});
  CHECK(row.ids(1).shape() == Shape{});
  CHECK(row.ids(1)[0] == 11);

  // batch_size 1, no shuffle, keep the last batch: torch's DataLoader defaults.
  data::DataLoader one(ds);
  CHECK(one.size() == 5);
  int64_t seen = 0;
  for (const data::Batch& b : one) {
    CHECK(b.tensor(0).shape() == Shape{1, 2});
    CHECK(b.tensor(0).values()[0] == 10.0 * static_cast<double>(seen));
    CHECK(!b.tensor(0).requires_grad());
    CHECK(b.ids(1)[0] == 7 + seen);
    ++seen;
  }
  CHECK(seen == 5);

  data::DataLoader loader(ds, 2);
  std::vector<Shape> shapes;
  for (const data::Batch& b : loader) shapes.push_back(b.tensor(0).shape());
  CHECK(shapes == std::vector<Shape>{Shape{2, 2}, Shape{2, 2}, Shape{1, 2}});
  data::DataLoader dropping(ds, 2, false, true);
  CHECK(dropping.size() == 2);
  data::Batch b;
  int64_t batches = 0;
  while (dropping.next(b)) ++batches;
  CHECK(batches == 2);
  CHECK(ds.batch(std::vector<int64_t>{2, 0}).tensor(0).values() ==
        std::vector<double>{20, 21, 0, 1});

  // A batch's tensor is made on the current tape when asked for: a loop may read the batch, reset
  // its tape at the start of the step, then use it. Asked twice, it is one leaf.
  data::DataLoader again(ds, 3);
  REQUIRE(again.next(b));
  tape.reset();
  const Tensor first = b.tensor(0);
  CHECK(first.values() == std::vector<double>{0, 1, 10, 11, 20, 21});
  CHECK(b.tensor(0).id() == first.id());
  CHECK(b.values(0).shape() == Shape{3, 2});
}

TEST_CASE("DataLoader and random_split: torch's orders from the same seeds", "[data][goldens]") {
  const GoldenFile golden("data", "data.txt");
  for (const auto& [n, seed] :
       std::vector<std::pair<int64_t, uint64_t>>{{1, 0}, {5, 0}, {10, 42}, {100, 7}, {1000, 123}}) {
    Generator g(seed);
    const Ids perm = randperm(n, g);
    CHECK(std::vector<int64_t>(perm.values().begin(), perm.values().end()) ==
          golden["randperm.n" + std::to_string(n) + ".s" + std::to_string(seed)].ints());
  }
  struct LoaderCase {
    int64_t n;
    uint64_t seed;
    int64_t batch_size;
    bool drop_last;
  };
  for (const LoaderCase& c : std::vector<LoaderCase>{
           {10, 42, 3, false}, {10, 42, 3, true}, {7, 1, 1, false}, {64, 2026, 16, false}}) {
    const data::TensorDataset ds = test_tensor_dataset::arange_dataset(c.n);
    Generator g(c.seed);
    data::DataLoader loader(ds, c.batch_size, true, c.drop_last, &g);
    test_tensor_dataset::check_epochs(
        golden,
        "loader.n" + std::to_string(c.n) + ".s" + std::to_string(c.seed) + ".b" +
            std::to_string(c.batch_size) + (c.drop_last ? ".drop" : ""),
        loader);
  }
  {
    // No generator: the seed comes from the global generator, as torch.manual_seed then
    // DataLoader(shuffle=True).
    const data::TensorDataset ds = test_tensor_dataset::arange_dataset(10);
    manual_seed(5);
    data::DataLoader loader(ds, 4, true);
    test_tensor_dataset::check_epochs(golden, "loader_global.n10.s5.b4", loader);
  }
  struct SplitCase {
    int64_t n;
    uint64_t seed;
    std::vector<int64_t> lengths;
    std::string tag;
  };
  for (const SplitCase& c : std::vector<SplitCase>{
           {10, 42, {7, 3}, "7_3"}, {100, 0, {80, 10, 10}, "80_10_10"}, {5, 3, {0, 5}, "0_5"}}) {
    const data::TensorDataset ds = test_tensor_dataset::arange_dataset(c.n);
    const std::vector<data::Subset> parts = data::random_split(ds, c.lengths, c.seed);
    REQUIRE(parts.size() == c.lengths.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string key = "split.n" + std::to_string(c.n) + ".s" + std::to_string(c.seed) +
                              "." + c.tag + ".p" + std::to_string(i);
      INFO(key);
      CHECK(parts[i].size() == c.lengths[i]);
      CHECK(parts[i].indices() == golden[key].ints());  // the rows of arange are their indices
      const data::TensorDataset copy = parts[i].to_dataset();
      const Ids& ids = copy.tensors()[0].ids();
      CHECK(std::vector<int64_t>(ids.values().begin(), ids.values().end()) == golden[key].ints());
    }
  }
}

TEST_CASE("TensorDataset, DataLoader and random_split: bad arguments are Errors naming them",
          "[data]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros(Shape{3, 2});
  CHECK_THROWS_WITH(data::TensorDataset({x, Ids(Shape{4}, {0, 1, 2, 3})}),
                    Catch::Contains("TensorDataset") && Catch::Contains("size mismatch") &&
                        Catch::Contains("[3, 2]") && Catch::Contains("[4]"));
  CHECK_THROWS_WITH(data::TensorDataset({x, scalar(1.0)}), Catch::Contains("TensorDataset") &&
                                                               Catch::Contains("tensor 1 []") &&
                                                               Catch::Contains("0-dim"));
  CHECK_THROWS_WITH(data::TensorDataset({}), Catch::Contains("TensorDataset: no tensors"));
  const data::TensorDataset ds({x});
  CHECK_THROWS_WITH(data::DataLoader(ds, 0),
                    Catch::Contains("DataLoader") && Catch::Contains("batch_size must be >= 1"));
  CHECK_THROWS_WITH(data::random_split(ds, {2, 2}, 0), Catch::Contains("random_split") &&
                                                           Catch::Contains("[2, 2] add up to 4") &&
                                                           Catch::Contains("3 rows"));
  CHECK_THROWS_WITH(data::random_split(ds, {4, -1}, 0),
                    Catch::Contains("random_split") && Catch::Contains("negative"));
  CHECK_THROWS_WITH(ds[3], Catch::Contains("TensorDataset[3]") && Catch::Contains("3 rows"));
  CHECK_THROWS_WITH(ds.batch(std::vector<int64_t>{0, 5}),
                    Catch::Contains("index 5") && Catch::Contains("position 1"));
  CHECK_THROWS_WITH(ds[0].ids(0), Catch::Contains("holds float values"));
  CHECK_THROWS_WITH(ds[0].tensor(1),
                    Catch::Contains("Batch.tensor(1)") && Catch::Contains("holds 1 tensors"));
  const data::TensorDataset labelled({x, Ids(Shape{3}, {0, 1, 0})});
  CHECK_THROWS_WITH(labelled[0].tensor(1), Catch::Contains("holds ids: read it with ids(1)"));
}
