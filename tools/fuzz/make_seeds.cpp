// Writes the fuzz target's seed corpus: checkpoints of tools/fuzz/fuzz_model.h's model as tapegrad
// saves them (full, weights only) and as a plain safetensors writer would (no CRC).
#include <cstdio>
#include <string>

#include <tapegrad/io/atomic_file.h>
#include "tools/fuzz/fuzz_model.h"

using namespace tapegrad;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  fuzz::FuzzModel model;
  model.w.assign(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  for (int i = 0; i < 4; ++i) model.w.grad<float>()[i] = 0.5f;
  model.adam.step();
  model.schedule.step();
  CheckpointExtras extras = model.extras();
  extras.metadata["epoch"] = "1";
  save_checkpoint(dir + "/full.safetensors", model.named(), extras);
  save_checkpoint(dir + "/weights.safetensors", model.named());
  // The same without tapegrad's metadata, as Python would write it.
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F64","shape":[4],"data_offsets":[0,32]},)"
      R"("w":{"dtype":"F32","shape":[4,3],"data_offsets":[32,80]},)"
      R"("empty":{"dtype":"F32","shape":[0,2],"data_offsets":[80,80]}})";
  const uint64_t n = header.size();
  AtomicFile file(dir + "/plain.safetensors");
  file.write({reinterpret_cast<const uint8_t*>(&n), 8});
  file.write(header);
  file.write({static_cast<const uint8_t*>(model.b.raw_data()), 8 * 4});
  file.write({static_cast<const uint8_t*>(model.w.raw_data()), 4 * 12});
  file.commit();
  return 0;
}
