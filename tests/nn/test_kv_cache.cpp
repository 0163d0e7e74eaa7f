// Tests for the KV cache (nn/attention.*, nn/gpt.*, nn/generate.*) against PyTorch's ids in
// tests/goldens/kv_cache/kv_cache.txt (written by make_kv_cache_goldens.py with the book's
// optimized KV-cache GPT, ch04/03_kv-cache, SMALL config): cached greedy ids, the sliding window,
// chunked prefill; cached and uncached logits and ids agree for every sampling mode; the
// callback streams each token; bad use is a clear Error that leaves the cache unchanged.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/tensor.h>
#include <tapegrad/nn/generate.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/ops/ops.h>
#include "tests/nn/small_gpt.h"

using namespace tapegrad;

namespace {

using testing::Rows;
using testing::SmallModel;
using testing::to_ids;
using testing::to_rows;

Rows kv_cache_golden(const std::string& name) {
  return testing::golden_rows("kv_cache/kv_cache.txt", name);
}

// Columns [begin, begin + n) of every row.
Ids columns(const Rows& rows, size_t begin, size_t n) {
  Rows cut;
  for (const auto& r : rows) cut.emplace_back(r.begin() + begin, r.begin() + begin + n);
  return to_ids(cut);
}

// The book's generate_text_simple_cached after a prefill of `chunks` (in order): argmax of the
// last position, fed back one token at a time.
Rows cached_greedy(const nn::GPTModel& model, const Rows& prompt, const std::vector<size_t>& chunks,
                   int64_t max_new_tokens) {
  Tape tape;
  TapeScope use(tape);
  NoGradGuard no_grad;
  model.reset_cache();
  Rows rows = prompt;
  std::vector<double> last;
  size_t begin = 0;
  for (size_t n : chunks) {
    tape.reset();
    last = select(model.forward(columns(prompt, begin, n), true, true), 1, 0).values();  // [B, V]
    begin += n;
  }
  const int64_t V = model.config().vocab_size;
  for (int64_t step = 0; step < max_new_tokens; ++step) {
    Rows next;
    for (size_t b = 0; b < rows.size(); ++b) {
      int64_t best = 0;
      for (int64_t j = 1; j < V; ++j) {
        if (last[b * V + j] > last[b * V + best]) best = j;
      }
      rows[b].push_back(best);
      next.push_back({best});
    }
    if (step + 1 < max_new_tokens) {
      tape.reset();
      last = select(model.forward(to_ids(next), true, true), 1, 0).values();  // [B, V]
    }
  }
  model.reset_cache();
  return rows;
}

}  // namespace

TEST_CASE("KV cache: the book's cached greedy ids, prefill and one token per step",
          "[kv_cache][gpt]") {
  SmallModel m;
  const Rows prompt = kv_cache_golden("prompt");  // [2, 6]
  CHECK(cached_greedy(m.model, prompt, {6}, 2) == kv_cache_golden("cached_greedy"));
  CHECK(to_rows(nn::generate_text_simple(m.model, to_ids(prompt), 2, 8)) ==
        kv_cache_golden("cached_greedy"));
  CHECK(to_rows(nn::generate_text_simple(m.model, to_ids(prompt), 2, 8, /*use_cache=*/false)) ==
        kv_cache_golden("cached_greedy"));
}

TEST_CASE("KV cache: a window shorter than the context slides as the book's", "[kv_cache][gpt]") {
  SmallModel m;
  m.model.set_cache_window(4);
  CHECK(m.model.trf_blocks.at<nn::TransformerBlock>(1).att.cache_window() == 4);
  CHECK(cached_greedy(m.model, kv_cache_golden("window_prompt"), {3}, 5) ==
        kv_cache_golden("window4_greedy"));
  // a 6-token prompt in chunks no longer than the window: 4, then 2
  CHECK(cached_greedy(m.model, kv_cache_golden("prompt"), {4, 2}, 2) ==
        kv_cache_golden("window4_chunked_greedy"));
}

TEST_CASE("KV cache: cached logits equal the uncached last position's", "[kv_cache][gpt]") {
  SmallModel m;
  SmallModel plain;                                   // the same weights, never cached
  const Rows ids = kv_cache_golden("cached_greedy");  // [2, 8]: prompt and two greedy tokens
  Tape tape;
  TapeScope use(tape);
  NoGradGuard no_grad;
  m.model.reset_cache();
  // a 5-token prefill, then one token at a time up to the context's end
  for (size_t end = 5; end <= 8; ++end) {
    tape.reset();
    const size_t begin = end == 5 ? 0 : end - 1;
    const std::vector<double> cached =
        select(m.model.forward(columns(ids, begin, end - begin), true, true), 1, 0)
            .values();  // [B, V]
    CHECK(m.model.cache_position() == static_cast<int64_t>(end));
    const std::vector<double> full =
        select(plain.model(columns(ids, 0, end)), 1, static_cast<int64_t>(end) - 1)
            .values();  // [B, V]
    REQUIRE(full.size() == cached.size());
    for (size_t i = 0; i < full.size(); ++i) CHECK(std::abs(full[i] - cached[i]) <= 1e-5);
  }
  m.model.reset_cache();
}

TEST_CASE("KV cache: generate gives the same ids with and without it, every sampling mode",
          "[kv_cache][generate][gpt]") {
  SmallModel m;
  const Ids prompt = to_ids(kv_cache_golden("prompt"));  // [2, 6]
  const Ids one = columns(kv_cache_golden("prompt"), 0, 6);
  for (int64_t context : {8, 4, 3}) {  // 3, 4: the cache refills once the window is full
    CHECK(to_rows(nn::generate_text_simple(m.model, prompt, 10, context, true)) ==
          to_rows(nn::generate_text_simple(m.model, prompt, 10, context, false)));
    for (double temperature : {0.0, 0.7, 1.4}) {
      for (std::optional<int64_t> top_k : {std::optional<int64_t>{}, std::optional<int64_t>{25}}) {
        for (std::optional<int64_t> eos : {std::optional<int64_t>{}, std::optional<int64_t>{19}}) {
          Generator g1(7), g2(7);
          CHECK(to_rows(nn::generate(m.model, prompt, 12, context, temperature, top_k, eos, g1,
                                     true)) ==
                to_rows(nn::generate(m.model, prompt, 12, context, temperature, top_k, eos, g2,
                                     false)));
        }
      }
    }
  }
  (void)one;
}

TEST_CASE("KV cache: the callback streams each token, the stats count the steps",
          "[kv_cache][generate][gpt]") {
  SmallModel m;
  const Ids prompt = to_ids(kv_cache_golden("prompt"));
  Rows streamed(2);
  nn::GenerationStats stats;
  nn::GenerateOptions options;
  options.max_new_tokens = 7;
  options.context_size = 8;
  options.on_token = [&](const Ids& next) {
    REQUIRE(next.shape() == Shape{2, 1});
    streamed[0].push_back(next[0]);
    streamed[1].push_back(next[1]);
  };
  options.stats = &stats;
  const Rows got = to_rows(nn::generate(m.model, prompt, options));
  const Rows expected = to_rows(nn::generate_text_simple(m.model, prompt, 7, 8));
  CHECK(got == expected);
  for (size_t b = 0; b < 2; ++b) {
    CHECK(streamed[b] == std::vector<int64_t>(expected[b].begin() + 6, expected[b].end()));
  }
  CHECK(stats.prompt_tokens == 6);
  CHECK(stats.decode_tokens == 6);
  CHECK(stats.prefill_seconds > 0.0);
  CHECK(stats.decode_seconds > 0.0);
  CHECK(m.model.cache_position() == 0);  // reset after the call
}

TEST_CASE("KV cache: bad use is a clear Error and changes nothing", "[kv_cache][gpt]") {
  SmallModel m;
  const Rows prompt = kv_cache_golden("prompt");
  Tape tape;
  TapeScope use(tape);
  {
    // gradients enabled
    m.model.reset_cache();
    CHECK_THROWS_WITH(m.model.forward(columns(prompt, 0, 2), true),
                      Catch::Contains("NoGradGuard") && Catch::Contains("inference"));
    CHECK(m.model.cache_position() == 0);
  }
  NoGradGuard no_grad;
  // a larger batch than the cache was made for
  m.model.reset_cache();
  m.model.forward(columns({prompt[0]}, 0, 3), true);
  CHECK_THROWS_WITH(m.model.forward(columns(prompt, 3, 1), true),
                    Catch::Contains("made for batch 1"));
  CHECK(m.model.cache_position() == 3);
  // cached and uncached mixed without a reset, both ways
  CHECK_THROWS_WITH(m.model(columns({prompt[0]}, 0, 3)), Catch::Contains("reset_cache()"));
  m.model.reset_cache();
  m.model(columns(prompt, 0, 3));
  CHECK_THROWS_WITH(m.model.forward(columns(prompt, 0, 3), true),
                    Catch::Contains("after an uncached one"));
  // positions past the context (sliding off: the window is the context)
  m.model.reset_cache();
  m.model.forward(columns(prompt, 0, 6), true);
  CHECK_THROWS_WITH(m.model.forward(columns(prompt, 0, 3), true),
                    Catch::Contains("past context_length 8"));
  CHECK(m.model.cache_position() == 6);
  // a prompt longer than the context
  m.model.reset_cache();
  const Rows long_prompt = kv_cache_golden("cached_greedy");  // 8 tokens
  Rows nine = long_prompt;
  for (auto& r : nine) r.push_back(1);
  CHECK_THROWS_WITH(m.model.forward(to_ids(nine), true),
                    Catch::Contains("more than context_length 8"));
  // more new tokens than a window
  m.model.set_cache_window(4);
  CHECK_THROWS_WITH(m.model.forward(to_ids(long_prompt), true), Catch::Contains("window 4"));
  CHECK(m.model.cache_position() == 0);
  CHECK_THROWS_WITH(m.model.set_cache_window(0), Catch::Contains(">= 1"));
  // training mode with dropout
  m.model.train();
  CHECK_THROWS_WITH(m.model.forward(columns(prompt, 0, 2), true), Catch::Contains("eval()"));
  m.model.eval();
  m.model.reset_cache();
}
