// libFuzzer target: arbitrary bytes through the safetensors parser and the checkpoint loader must
// give a clean tapegrad::Error or a valid load, never a crash, a sanitizer report or another
// exception. Run it with tools/fuzz/run_fuzz.sh SECONDS.
#include <cstddef>
#include <cstdint>

#include "tools/fuzz/fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tapegrad::fuzz::load_both_ways({data, size});
  return 0;
}
