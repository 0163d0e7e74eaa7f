// Tests for examples/custom_op.cpp: a user's swish op gradchecks in float64, runs in float32 with
// the same results, refuses a bad argument by name and draws with it (the program's own checks
// decide its exit status).
#ifdef TAPEGRAD_CUSTOM_OP

#include <catch2/catch.hpp>

#include "tests/apps/run_program.h"

using namespace tapegrad::testing;

TEST_CASE("custom_op: the user's swish op passes gradcheck and draws", "[custom_op]") {
  const ProgramRun run = run_program(TAPEGRAD_CUSTOM_OP, "");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  CHECK(run.status == 0);
  CHECK(run.out.find("gradcheck \"swish\" passed") != std::string::npos);
  CHECK(run.out.find("drawing: shows swish with β = 1.5") != std::string::npos);
}

TEST_CASE("custom_op: the user's swish op runs in float32 and float64 alike", "[custom_op]") {
  const ProgramRun run = run_program(TAPEGRAD_CUSTOM_OP, "");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  CHECK(run.status == 0);
  CHECK(run.out.find("float32 and float64: agree") != std::string::npos);
}

TEST_CASE("custom_op: a non-finite beta is an error naming the op and the argument, not the shape",
          "[custom_op]") {
  const ProgramRun run = run_program(TAPEGRAD_CUSTOM_OP, "");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  CHECK(run.status == 0);
  CHECK(run.out.find("bad input: swish: beta must be finite, got nan\n") != std::string::npos);
}

#endif
