// Runs a built program (an example or a tool) from a test: its exit status, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
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

// An empty scratch directory `group/name` in the build tree for a program run to write into
// (removed first; its parent created): what a test of a program's --out passes.
inline std::string scratch_dir(const std::string& group, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(TAPEGRAD_BINARY_DIR) / group / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir.parent_path());
  return dir.string();
}

// A command's exit status and its output (stdout and stderr together).
struct CommandResult {
  int status;
  std::string output;
};

// The number printed after `label` in `text` (searched from `from`); fails the test when the
// label is absent.
inline double number_after(const std::string& text, const std::string& label, size_t from = 0) {
  const size_t at = text.find(label, from);
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + label.size()));
}

}  // namespace tapegrad::testing
