// What the generation tests share (test_generate.cpp, test_kv_cache.cpp): gpt_reference.py's
// SMALL GPT, built as the goldens' scripts build it, and ids as rows of a `name: 1 2 | 3 4` file.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/ids.h"
#include "graph/random.h"
#include "nn/gpt.h"

namespace tapegrad::testing {

// gpt_reference.py's SMALL.
inline const nn::GPTConfig kSmallGpt{50, 8, 8, 2, 2, 0.1, false};

using Rows = std::vector<std::vector<int64_t>>;

// The rows of line `name: 1 2 3 | 4 5 6` of tests/goldens/<relative> (rows split at "|").
// Throws std::runtime_error when the file or the line is missing.
inline Rows golden_rows(const std::string& relative, const std::string& name) {
  const std::string path = std::string(TAPEGRAD_GOLDEN_DIR) + "/" + relative;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.substr(0, colon) != name) continue;
    Rows rows(1);
    std::istringstream words(line.substr(colon + 1));
    std::string w;
    while (words >> w) {
      if (w == "|") {
        rows.emplace_back();
      } else {
        rows.back().push_back(std::stoll(w));
      }
    }
    return rows;
  }
  throw std::runtime_error(path + " has no line " + name);
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
