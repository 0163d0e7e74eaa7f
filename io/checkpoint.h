// Checkpoints: parameters, optimiser state and RNG state in one safetensors file, written
// atomically and loaded all-or-nothing.
//
// The file (see io/safetensors.h for the format) holds
//   "<name>"              each parameter under its name, F32 or F64, in its shape;
//   "optim.<entry>"       the optimiser's state tensors (Optimizer::state():
//   "optim.param.0.exp_avg",
//                         ...), in their parameters' dtypes;
//   "rng.<name>"          each generator's Generator::state() words, U64 [630];
//   __metadata__          "tapegrad.format": "1", "tapegrad.crc32" (of the whole file), the
//                         optimiser's name and
//                         step ("optim.optimizer", "optim.step") and scalars ("optim.group.0.lr",
//                         ... written as the shortest decimal that reads back exactly), the lr
//                         scheduler's ("sched.step", "sched.groups", "sched.base_lr.<g>"), and
//                         the caller's own strings (CheckpointExtras::metadata).
// Gradients are not saved (torch's state_dict does not save them either): resume with zero_grad.
// Python reads it with json + struct (or numpy), or safetensors.numpy.load_file; a file written
// by Python (or any safetensors writer) with the parameters' names, dtypes and shapes loads here.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/parameter.h>

namespace tapegrad {

class Generator;
class LRScheduler;
class Optimizer;

using NamedParameters = std::vector<std::pair<std::string, Parameter>>;

struct CheckpointExtras {
  Optimizer* optimizer = nullptr;    // its state is saved / restored when set
  LRScheduler* scheduler = nullptr;  // likewise (its step and base lrs)
  // Generators saved / restored by name, e.g. {{"default", &default_generator()}}.
  std::vector<std::pair<std::string, Generator*>> generators{};
  // The caller's own strings (epoch, data position, ...). On load, replaced by the file's
  // (every __metadata__ key not starting with "tapegrad." or "optim.").
  std::map<std::string, std::string> metadata{};
};

// Writes `params` (and the extras) to `path` atomically: a crash or SIGKILL during the save
// leaves the previous file at `path` intact. Throws Error, leaving `path` untouched, on a name
// that is empty, duplicated, "__metadata__" or starts with "optim." / "rng.", on reserved
// metadata keys, or on an I/O failure.
void save_checkpoint(const std::string& path, const NamedParameters& params,
                     const CheckpointExtras& extras = {});

// Loads `path` into `params` (and the extras' optimiser and generators). Everything is
// validated before anything is written: the file's structure and CRC, that every parameter is in
// the file with the same dtype and shape and that the file holds no tensor the model lacks
// (optim.* and rng.* entries are only read when an optimiser / that generator is given), the
// optimiser state (Optimizer::load_state's checks) and the generator states. On any problem it
// throws Error naming the file, the tensor and both shapes, and every parameter, the optimiser
// and the generators are left exactly as they were.
void load_checkpoint(const std::string& path, const NamedParameters& params,
                     CheckpointExtras& extras);
void load_checkpoint(const std::string& path, const NamedParameters& params);
// The same from bytes in memory (the fuzz target and tests); `source` names them in errors.
void load_checkpoint_bytes(std::span<const uint8_t> file, const std::string& source,
                           const NamedParameters& params, CheckpointExtras& extras);

}  // namespace tapegrad
