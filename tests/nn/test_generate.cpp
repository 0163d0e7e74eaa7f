// Tests for nn/generate.* against PyTorch's ids in tests/goldens/generate/generate.txt
// (written by make_generate_goldens.py with gpt_reference.py's GPTModel, SMALL config): greedy
// and sampled ids exactly, cropping, eos, no tape leaks, the model's tape reused, bad input.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/generate.h>
#include <tapegrad/nn/gpt.h>
#include "tests/goldens.h"
#include "tests/nn/small_gpt.h"

using namespace tapegrad;

namespace {

using testing::Rows;
using testing::SmallModel;
using testing::to_ids;
using testing::to_rows;

Rows generate_golden(const std::string& name) {
  return testing::golden_rows("generate/generate.txt", name);
}

}  // namespace

TEST_CASE("generate_text_simple: greedy ids equal torch's, cropping the context",
          "[generate][gpt]") {
  SmallModel m;
  const Ids prompt = to_ids(generate_golden("prompt"));  // [2, 6]; 10 new tokens outgrow context 8
  CHECK(to_rows(nn::generate_text_simple(m.model, prompt, 10, 8)) == generate_golden("greedy"));
  CHECK(to_rows(nn::generate_text_simple(m.model, prompt, 10, 4)) ==
        generate_golden("greedy_context_4"));
  CHECK(to_rows(nn::generate(m.model, prompt, 10, 8)) ==
        generate_golden("argmax"));  // temperature 0
  CHECK(to_rows(nn::generate_text_simple(m.model, prompt, 0, 8)) == generate_golden("prompt"));
}

TEST_CASE("generate: sampled ids equal torch's for the same seed", "[generate][gpt]") {
  SmallModel m;
  const Ids prompt = to_ids(generate_golden("prompt"));
  const Ids one = to_ids({generate_golden("prompt")[0]});
  Generator g(7);
  CHECK(to_rows(nn::generate(m.model, one, 12, 8, 1.4, 25, std::nullopt, g)) ==
        generate_golden("sampled_seed7_t1.4_k25"));
  g.manual_seed(7);
  CHECK(to_rows(nn::generate(m.model, prompt, 12, 8, 1.4, 25, std::nullopt, g)) ==
        generate_golden("sampled_seed7_t1.4_k25_batch"));
  // the default generator, as torch.manual_seed + torch.multinomial
  manual_seed(11);
  CHECK(to_rows(nn::generate(m.model, one, 12, 8, 0.7)) == generate_golden("sampled_seed11_t0.7"));
  manual_seed(11);
  CHECK(to_rows(nn::generate(m.model, one, 6, 8, 1.0, 1)) ==
        generate_golden("sampled_seed11_t1.0_k1"));
}

TEST_CASE("generate: stops without appending when eos_id is produced", "[generate][gpt]") {
  SmallModel m;
  const Ids one = to_ids({generate_golden("prompt")[0]});
  const int64_t eos = testing::golden_file("generate/generate.txt")["eos_id"].ints().at(0);
  Generator g(7);
  const Rows got = to_rows(nn::generate(m.model, one, 12, 8, 1.4, 25, eos, g));
  CHECK(got == generate_golden("sampled_seed7_t1.4_k25_eos"));
  // the same as the run without eos_id, cut before the first eos
  g.manual_seed(7);
  Rows full = to_rows(nn::generate(m.model, one, 12, 8, 1.4, 25, std::nullopt, g));
  const auto first = std::find(full[0].begin() + one.size(1), full[0].end(), eos);
  REQUIRE(first != full[0].end());
  full[0].erase(first, full[0].end());
  CHECK(got == full);
  // greedy with eos: a batch stops only when every row produces it
  const Rows greedy = generate_golden("greedy");
  const Ids prompt = to_ids(generate_golden("prompt"));
  const int64_t row0_first = greedy[0][6];  // row 0's first new token; row 1's differs
  REQUIRE(greedy[1][6] != row0_first);
  REQUIRE(std::find(greedy[1].begin() + 6, greedy[1].end(), row0_first) == greedy[1].end());
  CHECK(to_rows(nn::generate(m.model, prompt, 10, 8, 0.0, std::nullopt, row0_first)) ==
        generate_golden("argmax"));
}

TEST_CASE("generate: runs on its own tape, leaving the caller's untouched", "[generate][gpt]") {
  SmallModel m;
  Tape tape;
  TapeScope scope(tape);
  Tensor x = ones(Shape{2});
  const int32_t before = tape.size();
  const Ids out = nn::generate(m.model, to_ids(generate_golden("prompt")), 3, 8, 1.0, 5);
  CHECK(out.size(1) == 9);
  CHECK(tape.size() == before);
  CHECK(x.values() == std::vector<double>{1.0, 1.0});  // still valid
}

TEST_CASE("generate: a second generation reuses the model's tape and its memory",
          "[generate][gpt]") {
  SmallModel m;
  const Ids prompt = to_ids(generate_golden("prompt"));
  const Rows first = to_rows(nn::generate_text_simple(m.model, prompt, 10, 8));
  Tape* kept = m.model.acquire_generation_tape();
  REQUIRE(kept != nullptr);
  CHECK(kept->size() == 0);  // handed back reset
  const size_t blocks = kept->arena().heap_allocations();
  const size_t reserved = kept->arena().bytes_reserved();
  CHECK(blocks > 0);
  // Held elsewhere: generation runs on a tape of its own, with the same ids.
  CHECK(m.model.acquire_generation_tape() == nullptr);
  CHECK(to_rows(nn::generate_text_simple(m.model, prompt, 10, 8)) == first);
  CHECK(kept->arena().heap_allocations() == blocks);
  m.model.release_generation_tape();
  // Given back: the same ids again, drawn from the memory the first generation took.
  CHECK(to_rows(nn::generate_text_simple(m.model, prompt, 10, 8)) == first);
  CHECK(to_rows(nn::generate_text_simple(m.model, prompt, 10, 8)) == generate_golden("greedy"));
  kept = m.model.acquire_generation_tape();
  REQUIRE(kept != nullptr);
  CHECK(kept->arena().heap_allocations() == blocks);
  CHECK(kept->arena().bytes_reserved() == reserved);
  m.model.release_generation_tape();
}

TEST_CASE("generate: bad arguments throw Error before anything is drawn",
          "[generate][gpt][errors]") {
  SmallModel m;
  const Ids prompt = to_ids(generate_golden("prompt"));
  Generator g(3);
  const std::vector<uint64_t> state = g.state();
  auto throws = [&](auto&& call, const std::string& what) {
    INFO(what);
    CHECK_THROWS_AS(call(), Error);
    try {
      call();
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(what));
    }
    CHECK(g.state() == state);
  };
  throws([&] { return nn::generate(m.model, prompt, -1, 8, 1.0, 5, std::nullopt, g); },
         "max_new_tokens -1");
  throws([&] { return nn::generate_text_simple(m.model, prompt, -1, 8); }, "max_new_tokens -1");
  // A count whose ids could never be held: refused, naming the limit (not std::bad_alloc).
  throws([&] { return nn::generate(m.model, prompt, 1000000000000, 8, 1.0, 5, std::nullopt, g); },
         "max_new_tokens 1000000000000 must be in [0, 16777216]");
  throws(
      [&] {
        nn::GenerateOptions o;
        o.max_new_tokens = nn::kMaxNewTokens + 1;
        o.generator = &g;
        return nn::generate(m.model, prompt, o);
      },
      "max_new_tokens 16777217");
  throws([&] { return nn::generate(m.model, prompt, 3, 8, -0.5, 5, std::nullopt, g); },
         "temperature");
  throws([&] { return nn::generate(m.model, prompt, 3, 8, std::nan(""), 5, std::nullopt, g); },
         "temperature");
  throws([&] { return nn::generate(m.model, prompt, 3, 8, 1.0, 0, std::nullopt, g); }, "top_k 0");
  throws([&] { return nn::generate(m.model, prompt, 3, 8, 1.0, 51, std::nullopt, g); }, "top_k 51");
  throws([&] { return nn::generate(m.model, prompt, 3, 8, 1.0, 5, 50, g); }, "eos_id 50");
  throws([&] { return nn::generate(m.model, prompt, 3, 9, 1.0, 5, std::nullopt, g); },
         "context_size 9");
  throws([&] { return nn::generate(m.model, prompt, 3, 0, 1.0, 5, std::nullopt, g); },
         "context_size 0");
  throws(
      [&] {
        return nn::generate(m.model, Ids::from_rows({{1, 50}}), 3, 8, 1.0, 5, std::nullopt, g);
      },
      "id 50");
  throws(
      [&] {
        return nn::generate(m.model, Ids::from_row({1, 2}), 3, 8, 1.0, 5, std::nullopt, g);
      },
      "must be [B, T]");
  throws(
      [&] {
        return nn::generate_text_simple(m.model, Ids(Shape{1, 0}, {}), 3, 8);
      },
      "must be [B, T]");
  // a prompt longer than context_length is cropped, as the book does, not refused
  const Ids long_prompt = Ids::from_rows({{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}});
  CHECK(nn::generate_text_simple(m.model, long_prompt, 2, 8).size(1) == 13);
}
