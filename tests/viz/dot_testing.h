// Test helpers for DOT output: files, byte-for-byte golden comparison, and running Graphviz.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tapegrad::testing {

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A scratch path in the build tree for files the tests write.
inline std::string scratch_path(const std::string& name) {
  return std::string(TAPEGRAD_BINARY_DIR) + "/tests/dot_scratch/" + name;
}

// What check_golden does, from TAPEGRAD_UPDATE_GOLDENS and CI (null when unset). The DOT goldens
// are snapshots the project wrote itself: CI must compare them, never rewrite them, so
// TAPEGRAD_UPDATE_GOLDENS=1 under CI (CI set to anything but "", "0" or "false", as GitHub
// Actions' CI=true) is refused.
enum class GoldenMode { Compare, Update, RefusedUnderCI };
inline GoldenMode golden_mode(const char* update, const char* ci) {
  if (update == nullptr || std::string(update) != "1") return GoldenMode::Compare;
  const bool under_ci = ci != nullptr && std::string(ci) != "" && std::string(ci) != "0" &&
                        std::string(ci) != "false";
  return under_ci ? GoldenMode::RefusedUnderCI : GoldenMode::Update;
}

// Requires `text` to equal the golden file byte for byte. With TAPEGRAD_UPDATE_GOLDENS=1 in the
// environment the golden is rewritten first (then review the change with `git diff`); under CI
// that fails instead and rewrites nothing.
inline void check_golden(const std::string& text, const std::string& golden) {
  const GoldenMode mode = golden_mode(std::getenv("TAPEGRAD_UPDATE_GOLDENS"), std::getenv("CI"));
  if (mode == GoldenMode::RefusedUnderCI) {
    FAIL(
        "TAPEGRAD_UPDATE_GOLDENS=1 under CI: the goldens are snapshots CI must compare, not "
        "rewrite ("
        << golden << " left as it is)");
  }
  if (mode == GoldenMode::Update) write_text_file(golden, text);
  INFO("golden: " << golden);
  REQUIRE(std::filesystem::exists(golden));
  const std::string expected = read_text_file(golden);
  if (text != expected) {
    // Name the first differing line, so a failure says what changed.
    std::istringstream a(text), b(expected);
    std::string la, lb;
    int line = 0;
    while (true) {
      ++line;
      const bool ga = static_cast<bool>(std::getline(a, la));
      const bool gb = static_cast<bool>(std::getline(b, lb));
      if (!ga && !gb) break;
      if (la != lb || ga != gb) {
        INFO("first difference at line " << line << "\n  got:      " << la
                                         << "\n  expected: " << lb);
        CHECK(text == expected);
        return;
      }
    }
  }
  CHECK(text == expected);
}

// Runs Graphviz's `dot -Tsvg` on the text (written to a scratch file) and returns its exit
// status; its SVG goes to a scratch file next to it.
inline int run_dot_program(const std::string& dot_text, const std::string& name) {
  const std::string dot_path = scratch_path(name + ".dot");
  write_text_file(dot_path, dot_text);
  const std::string command = std::string("\"") + TAPEGRAD_DOT_PROGRAM + "\" -Tsvg \"" + dot_path +
                              "\" -o \"" + scratch_path(name + ".svg") + "\"";
  return std::system(command.c_str());
}

// How many times `what` occurs in `text`.
inline size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The done-when of the attention drawing: MultiHeadAttention runs one fused op, and the DOT
// draws the book's ops it computes (split heads, q·kᵀ, the mask, the scale, softmax, ·v, merge
// heads) with their shapes, inside a cluster named after the op, among the module's clusters.
// For tapegrad-dot's multihead model and train_attention's --dot file ([2, 6, 2] outputs).
inline void check_attention_drawn_as_ops(const std::string& dot, const std::string& heads_shape,
                                         const std::string& weights_shape) {
  for (const char* op :
       {"split_heads", "transpose", "matmul", "causal_mask", "scale", "softmax", "merge_heads"}) {
    INFO(op);
    CHECK_THAT(dot, Catch::Contains("<b>" + std::string(op) + "</b>"));
  }
  CHECK(occurrences(dot, "<b>split_heads</b>") == 3);  // queries, keys, values
  CHECK(occurrences(dot, "<b>matmul</b>") == 2);       // q·kᵀ and weights·v
  CHECK_THAT(dot, Catch::Contains("<b>split_heads</b> <i>queries</i></td></tr><tr><td><font "
                                  "point-size=\"9\" color=\"#444444\">" +
                                  heads_shape));
  CHECK_THAT(dot, Catch::Contains("<b>softmax</b> <i>attn_weights</i></td></tr><tr><td><font "
                                  "point-size=\"9\" color=\"#444444\">" +
                                  weights_shape));
  CHECK_THAT(dot, Catch::Contains("<b>merge_heads</b> <i>context_vec</i></td></tr><tr><td><font "
                                  "point-size=\"9\" color=\"#444444\">[2, 6, 2]"));
  CHECK_THAT(dot, Catch::Contains("label=<<b>causal_dot_product_attention</b>"));
  CHECK(occurrences(dot, "subgraph cluster_f") == 1);
  CHECK(occurrences(dot, "subgraph cluster_") >= 2);
  CHECK_THAT(dot, Catch::Contains("label=<<b>MultiHeadAttention</b>"));
}

}  // namespace tapegrad::testing
