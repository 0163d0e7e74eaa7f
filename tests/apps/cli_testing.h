// Checks every program's command line the same way: --help answers with exit 0 and lists the
// options; a malformed value exits non-zero, names the option, and does nothing else.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/apps/run_program.h"

namespace tapegrad::testing {

inline void check_help(const std::string& exe, const std::vector<std::string>& options) {
  for (const char* flag : {"--help", "-h"}) {
    const ProgramRun run = run_program(exe, flag);
    INFO(exe << " " << flag << "\nstdout:\n" << run.out << "\nstderr:\n" << run.err);
    CHECK(run.status == 0);
    for (const std::string& option : options) {
      INFO("option " << option);
      CHECK(run.out.find(option) != std::string::npos);
    }
  }
}

// `args` holds one malformed value of `option`: the program refuses it by name, prints nothing
// on stdout (it did not start working).
inline void check_refused(const std::string& exe, const std::string& args,
                          const std::string& option) {
  const ProgramRun run = run_program(exe, args);
  INFO(exe << " " << args << "\nstdout:\n" << run.out << "\nstderr:\n" << run.err);
  CHECK(run.status != 0);
  CHECK(run.status != -1);
  CHECK(run.err.find(option) != std::string::npos);
  CHECK(run.out.empty());
}

}  // namespace tapegrad::testing
