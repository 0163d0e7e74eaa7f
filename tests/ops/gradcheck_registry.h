// Test-side registry of gradient checks: each GRADCHECK_TEST_CASE (or, for an inference-only op,
// INFERENCE_ONLY_TEST_CASE) names the op it checks, and tests/ops/test_registry.cpp fails when a
// registered op (TAPEGRAD_REGISTER_OP) has none.
#pragma once

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/graph/op.h>

namespace tapegrad::testing {

std::set<std::string>& gradchecked_ops();

struct GradcheckRegistration {
  explicit GradcheckRegistration(const char* op) { gradchecked_ops().insert(op); }
};

// Requires the check to pass, to have exercised `op`, and to have met only registered ops.
inline void require_gradcheck(const GradcheckReport& report, const std::string& op) {
  INFO(report.message);
  REQUIRE(report.passed);
  REQUIRE(report.checked > 0);
  bool exercised = false;
  for (const std::string& name : report.ops) {
    INFO("op recorded by the check: " << name);
    REQUIRE(find_registered_op(name) != nullptr);
    exercised = exercised || name == op;
  }
  INFO("the gradcheck never recorded op " << op);
  REQUIRE(exercised);
}

}  // namespace tapegrad::testing

#define TAPEGRAD_CAT2(a, b) a##b
#define TAPEGRAD_CAT(a, b) TAPEGRAD_CAT2(a, b)
// A Catch2 test case checking `op`'s backward in float64; registers the op as checked.
#define GRADCHECK_TEST_CASE(op, description)                                                    \
  static const ::tapegrad::testing::GradcheckRegistration TAPEGRAD_CAT(gradcheck_registration_, \
                                                                       __COUNTER__){op};        \
  TEST_CASE(op " gradcheck: " description, "[gradcheck][" op "]")
// A Catch2 test case for an inference-only op (ops.h), which has no gradient to check: it must
// show that the op refuses to record in grad mode. Registers the op as checked.
#define INFERENCE_ONLY_TEST_CASE(op, description)                                               \
  static const ::tapegrad::testing::GradcheckRegistration TAPEGRAD_CAT(gradcheck_registration_, \
                                                                       __COUNTER__){op};        \
  TEST_CASE(op " is inference only: " description, "[inference_only][" op "]")
