// Tests for examples/custom_op.cpp: a user's swish op gradchecks and draws with its argument
// (the program's own checks decide its exit status).
#ifdef TAPEGRAD_CUSTOM_OP

#include <catch2/catch.hpp>

#include "tests/apps/run_program.h"

using namespace tapegrad::testing;

TEST_CASE("custom_op: the user's swish op passes gradcheck and draws", "[custom_op]") {
  const ProgramRun run = run_program(TAPEGRAD_CUSTOM_OP, "");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  CHECK(run.status == 0);
  CHECK(run.out.find("drawing: shows swish with β = 1.5") != std::string::npos);
}

#endif
