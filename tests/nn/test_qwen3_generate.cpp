// Tests for the KV cache of Qwen3Model and Llama3Model (nn/gqa_cache.cpp) and their generation
// (nn/generate.cpp): the book's generate on the checkpoints of tests/goldens/qwen3/hf.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/random.h>
#include <tapegrad/nn/generate.h>
#include <tapegrad/nn/hf_weights.h>
#include "tests/goldens.h"

using namespace tapegrad;

namespace test_qwen3_generate {

constexpr nn::Qwen3Config kQwenTiny{97, 16, 32, 4, 2, 48, 8, true, 2, 1000000.0};
constexpr nn::Llama3Config kLlamaTiny{97, 16, 64, 32,       4,
                                      2,  48, 2,  500000.0, {32.0, 1.0, 4.0, 8192}};

std::string hf_dir(const std::string& name) {
  return std::string(TAPEGRAD_GOLDEN_DIR) + "/qwen3/hf/" + name;
}

Ids golden_ids(const std::string& key) {
  const testing::GoldenFile golden("qwen3", "hf.txt");
  return Ids(golden[key].shape, golden[key].ints());
}

Ids prompt_row(int64_t row) {
  const Ids all = golden_ids("in_idx");
  const auto v = all.values().subspan(static_cast<size_t>(row * 6), 6);
  return Ids(Shape{1, 6}, std::vector<int64_t>(v.begin(), v.end()));
}

std::vector<int64_t> as_vector(const Ids& ids) {
  return {ids.values().begin(), ids.values().end()};
}

// The book's generate on `model` (greedy and sampled, with and without the cache) against the
// goldens `<prefix>.greedy` and `<prefix>.sampled`.
template <class Model>
void check_generation(const Model& model, const Ids& prompt, const std::string& prefix) {
  for (const bool cache : {true, false}) {
    INFO("use_cache " << cache);
    nn::GenerateOptions greedy;
    greedy.max_new_tokens = 14;
    greedy.context_size = 16;
    greedy.use_cache = cache;
    CHECK(as_vector(nn::generate(model, prompt, greedy)) ==
          as_vector(golden_ids(prefix + ".greedy")));
    CHECK(as_vector(nn::generate_text_simple(model, prompt, 14, 16, cache)) ==
          as_vector(golden_ids(prefix + ".greedy")));
    nn::GenerateOptions sampled = greedy;
    sampled.temperature = 1.5;
    sampled.top_k = 20;
    manual_seed(42);
    CHECK(as_vector(nn::generate(model, prompt, sampled)) ==
          as_vector(golden_ids(prefix + ".sampled")));
  }
}

// A second generation runs on the model's kept tape and draws no new memory from the heap; while
// another caller holds it, generation takes a tape of its own and gives the same ids.
template <class Model>
void check_kept_tape(const Model& model, const Ids& prompt) {
  nn::GenerateOptions options;
  options.max_new_tokens = 8;
  const std::vector<int64_t> first = as_vector(nn::generate(model, prompt, options));
  Tape* kept = model.acquire_generation_tape();
  REQUIRE(kept != nullptr);
  CHECK(kept->size() == 0);  // handed back reset
  const size_t blocks = kept->arena().heap_allocations();
  const size_t reserved = kept->arena().bytes_reserved();
  CHECK(blocks > 0);
  CHECK(model.acquire_generation_tape() == nullptr);
  CHECK(as_vector(nn::generate(model, prompt, options)) == first);
  CHECK(kept->arena().heap_allocations() == blocks);
  model.release_generation_tape();
  CHECK(as_vector(nn::generate(model, prompt, options)) == first);
  kept = model.acquire_generation_tape();
  REQUIRE(kept != nullptr);
  CHECK(kept->arena().heap_allocations() == blocks);
  CHECK(kept->arena().bytes_reserved() == reserved);
  model.release_generation_tape();
}

}  // namespace test_qwen3_generate

TEST_CASE("Qwen3Model generation: the book's greedy and sampled ids, with and without the cache",
          "[qwen3][generate][goldens]") {
  using namespace test_qwen3_generate;
  manual_seed(5);
  nn::Qwen3Model model(kQwenTiny);
  nn::load_qwen3_weights(model, hf_dir("qwen3_tiny"));
  model.eval();
  // 6 prompt tokens and 14 new ones: past the context of 16, so the window slides.
  check_generation(model, prompt_row(0), "qwen3");
}

TEST_CASE("Llama3Model generation: the book's greedy and sampled ids, with and without the cache",
          "[llama3][generate][goldens]") {
  using namespace test_qwen3_generate;
  manual_seed(5);
  nn::Llama3Model model(kLlamaTiny);
  nn::load_llama3_weights(model, hf_dir("llama3_tiny"));
  model.eval();
  check_generation(model, prompt_row(1), "llama3");
}

TEST_CASE("Qwen3Model and Llama3Model generation reuse the model's tape and its memory",
          "[qwen3][llama3][generate]") {
  using namespace test_qwen3_generate;
  manual_seed(5);
  nn::Qwen3Model qwen(kQwenTiny);
  qwen.eval();
  check_kept_tape(qwen, prompt_row(0));
  nn::Llama3Model llama(kLlamaTiny);
  llama.eval();
  check_kept_tape(llama, prompt_row(1));
}

TEST_CASE("Qwen3Model KV cache: prefill then one token a step gives the uncached logits",
          "[qwen3][generate]") {
  using namespace test_qwen3_generate;
  manual_seed(5);
  const nn::Qwen3Model model(kQwenTiny);
  const Ids all(Shape{2, 9}, {3, 41, 7, 96, 0, 12, 5, 8, 60, 55, 55, 2, 80, 61, 9, 1, 44, 70});
  NoGradGuard no_grad;
  Tape tape;
  TapeScope scope(tape);
  const std::vector<double> full = model(all).values();  // [2, 9, 97]
  auto rows = [&](int64_t begin, int64_t count) {
    std::vector<int64_t> v;
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t t = begin; t < begin + count; ++t) v.push_back(all[b * 9 + t]);
    }
    return Ids(Shape{2, count}, v);
  };
  // A prefill of 4, a chunk of 2, then one token at a time (the buffers grow past the first
  // prefill's size: nothing was reserved).
  std::vector<std::pair<int64_t, int64_t>> steps{{0, 4}, {4, 2}, {6, 1}, {7, 1}, {8, 1}};
  for (const auto& [begin, count] : steps) {
    const std::vector<double> got = model.forward(rows(begin, count), true).values();
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t t = 0; t < count; ++t) {
        for (int64_t v = 0; v < 97; ++v) {
          const double want = full[static_cast<size_t>((b * 9 + begin + t) * 97 + v)];
          const double have = got[static_cast<size_t>((b * count + t) * 97 + v)];
          INFO("row " << b << " position " << begin + t << " logit " << v);
          REQUIRE(std::abs(have - want) <= 1e-5 * std::max(1.0, std::abs(want)));
        }
      }
    }
  }
  CHECK(model.cache_position() == 9);
  // last_position_only: the head for the last position alone.
  model.reset_cache();
  const Tensor last = model.forward(rows(0, 9), true, true);
  CHECK(last.shape() == Shape{2, 1, 97});
  CHECK(std::abs(last.values()[97 + 5] - full[(9 + 8) * 97 + 5]) <= 1e-5);
  model.reset_cache();
}

TEST_CASE("Qwen3Model and Llama3Model KV cache: bad calls are Errors before anything changes",
          "[qwen3][llama3][generate]") {
  using namespace test_qwen3_generate;
  manual_seed(5);
  const nn::Qwen3Model model(kQwenTiny);
  nn::Llama3Model llama(kLlamaTiny);
  Tape tape;
  TapeScope scope(tape);
  const Ids two(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  // Gradients on: the cache is for inference.
  CHECK_THROWS_WITH(model.forward(two, true),
                    Catch::Contains("Qwen3Model") && Catch::Contains("NoGradGuard"));
  CHECK_THROWS_WITH(llama.forward(two, true),
                    Catch::Contains("Llama3Model") && Catch::Contains("NoGradGuard"));
  CHECK(model.cache_position() == 0);
  NoGradGuard no_grad;
  model.forward(two, true);
  // Another batch while tokens are cached.
  CHECK_THROWS_WITH(model.forward(Ids(Shape{1, 1}, {7}), true),
                    Catch::Contains("batch 1") && Catch::Contains("reset_cache"));
  // Past the context of 16.
  CHECK_THROWS_WITH(model.forward(Ids(Shape{2, 14}, std::vector<int64_t>(28, 1)), true),
                    Catch::Contains("reset"));
  CHECK(model.cache_position() == 3);
  model.reset_cache();
  CHECK(model.cache_position() == 0);
  model.forward(Ids(Shape{1, 1}, {7}), true);  // a new batch after the reset
  // generate checks its arguments before running anything.
  nn::GenerateOptions o;
  o.max_new_tokens = 2;
  o.context_size = 17;
  CHECK_THROWS_WITH(nn::generate(model, two, o), Catch::Contains("context_size 17"));
  o.context_size = 0;
  o.top_k = 98;
  CHECK_THROWS_WITH(nn::generate(llama, two, o), Catch::Contains("top_k 98"));
}
