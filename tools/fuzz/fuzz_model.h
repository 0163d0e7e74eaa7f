// The model the checkpoint fuzz target loads into, and one fuzz iteration; shared with the
// regression test (tests/graph/test_fuzz_regressions.cpp) so a finding replays the same path.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/io/checkpoint.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/schedule.h>

namespace tapegrad::fuzz {

// Parameters of both dtypes and an empty one, an optimiser with state, a schedule, a generator:
// every part of load_checkpoint has something to check.
struct FuzzModel {
  Parameter w{Shape{4, 3}, DType::Float32, "w"};
  Parameter b{Shape{4}, DType::Float64, "b"};
  Parameter empty{Shape{0, 2}, DType::Float32, "empty"};
  Adam adam{std::vector<Parameter>{w, b, empty}};
  StepLR schedule{adam, 2, 0.5};
  Generator generator{1};

  NamedParameters named() const { return {{"w", w}, {"b", b}, {"empty", empty}}; }
  CheckpointExtras extras() { return {&adam, &schedule, {{"default", &generator}}, {}}; }
};

// The input with its "tapegrad.crc32" digits (if any) recomputed, so that mutated files get past
// the CRC to the checks behind it.
inline std::vector<uint8_t> with_fixed_crc(std::span<const uint8_t> data) {
  std::vector<uint8_t> fixed(data.begin(), data.end());
  const std::string_view text(reinterpret_cast<const char*>(fixed.data()), fixed.size());
  const std::string field = "\"" + std::string(kCrcKey) + "\":\"";
  const size_t at = text.find(field);
  if (at == std::string_view::npos || fixed.size() - (at + field.size()) < 8) return fixed;
  uint8_t* digits = fixed.data() + at + field.size();
  std::memset(digits, '0', 8);
  uint32_t crc = crc32(fixed);
  for (int i = 7; i >= 0; --i, crc >>= 4)
    digits[i] = static_cast<uint8_t>("0123456789abcdef"[crc & 0xF]);
  return fixed;
}

// Loads `data` into a fresh model, as is and with its CRC fixed up. Returns how many of the two
// loads succeeded; a tapegrad::Error is a clean rejection, anything else escapes (a finding).
inline int load_both_ways(std::span<const uint8_t> data) {
  int loaded = 0;
  for (int variant = 0; variant < 2; ++variant) {
    const std::vector<uint8_t> bytes =
        variant == 0 ? std::vector<uint8_t>(data.begin(), data.end()) : with_fixed_crc(data);
    FuzzModel model;
    CheckpointExtras extras = model.extras();
    try {
      const SafetensorsView view = parse_safetensors(bytes, "fuzz");
      for (const SafetensorsEntry& e : view.entries) (void)view.bytes(e);
      load_checkpoint_bytes(bytes, "fuzz", model.named(), extras);
      ++loaded;
    } catch (const Error&) {
    }
  }
  return loaded;
}

}  // namespace tapegrad::fuzz
