// Runs a built program (an example or a tool) from a test: its exit status, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/viz/dot_testing.h"

namespace tapegrad::testing {

struct ProgramRun {
  int status = -1;  // the exit status; -1 when the program did not exit normally
  std::string out, err;
};

// `exe args` through the shell, its output captured in scratch files of this process.
inline ProgramRun run_program(const std::string& exe, const std::string& args) {
  // One pair of files per process: ctest runs test cases in parallel processes.
  const std::string base = scratch_path("program." + std::to_string(::getpid()));
  std::filesystem::create_directories(std::filesystem::path(base).parent_path());
  const std::string command =
      "\"" + exe + "\" " + args + " > \"" + base + ".out\" 2> \"" + base + ".err\" < /dev/null";
  const int status = std::system(command.c_str());
  ProgramRun run;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_text_file(base + ".out");
  run.err = read_text_file(base + ".err");
  return run;
}

}  // namespace tapegrad::testing
