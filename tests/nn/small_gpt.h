// What the generation tests share (test_generate.cpp, test_kv_cache.cpp): gpt_reference.py's
// SMALL GPT, built as the goldens' scripts build it, and a golden [B, T] ids record as rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/gpt.h>
#include "tests/goldens.h"

namespace tapegrad::testing {

// gpt_reference.py's SMALL.
inline const nn::GPTConfig kSmallGpt{50, 8, 8, 2, 2, 0.1, false};

using Rows = std::vector<std::vector<int64_t>>;

// The rows of the [B, T] i64 record `name` of tests/goldens/<relative> (the suite's one format,
// read through tests/goldens.h). Throws std::runtime_error when the file or the record is missing
// or the record is not [B, T] ids.
inline Rows golden_rows(const std::string& relative, const std::string& name) {
  const GoldenTensor& g = golden_file(relative)[name];
  if (!g.integer || g.shape.rank() != 2) {
    throw std::runtime_error(relative + ": \"" + name + "\" is not a [B, T] i64 record");
  }
  const std::vector<int64_t> ids = g.ints();
  const auto cols = static_cast<size_t>(g.shape[1]);
  Rows rows;
  for (size_t begin = 0; begin < ids.size(); begin += cols) {
    rows.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(begin),
                      ids.begin() + static_cast<std::ptrdiff_t>(begin + cols));
  }
  return rows;
}

inline Ids to_ids(const Rows& rows) {
  std::vector<int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return Ids(Shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, flat);
}

inline Rows to_rows(const Ids& ids) {
  Rows rows(static_cast<size_t>(ids.size(0)));
  for (int64_t b = 0; b < ids.size(0); ++b) {
    for (int64_t t = 0; t < ids.size(1); ++t) rows[b].push_back(ids[b * ids.size(1) + t]);
  }
  return rows;
}

// The goldens' model: manual_seed(123), GPTModel(SMALL), eval().
struct SmallModel {
  // (the comma seeds the default generator before the model draws its weights)
  SmallModel() : model((manual_seed(123), kSmallGpt)) { model.eval(); }
  nn::GPTModel model;
};

}  // namespace tapegrad::testing
