// For the module tests: whether what a module recorded lies in its own drawing cluster.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/tape.h>

namespace tapegrad::testing {

// Every node recorded on `tape` from node `first` on lies in the scope named `scope`.
inline bool all_in_scope(const Tape& tape, int32_t first, const std::string& scope) {
  if (first >= tape.size()) return false;
  for (int32_t id = first; id < tape.size(); ++id) {
    const int32_t s = tape.node(id).scope;
    if (s < 0 || tape.scopes().name(s) != scope) return false;
  }
  return true;
}

}  // namespace tapegrad::testing
