// tapegrad::Error: the one exception type every op, the tape and the tools throw on bad input.
#pragma once

#include <stdexcept>
#include <string>

namespace tapegrad {

// Derived from std::invalid_argument: every Error is a caller's mistake (a shape, a dtype, an
// index, a file) found before anything was written, so catching it leaves all state intact.
class Error : public std::invalid_argument {
 public:
  explicit Error(const std::string& message) : std::invalid_argument(message) {}
};

}  // namespace tapegrad
