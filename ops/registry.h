// The registry of op names: every op recorded on a tape is listed here, and the test suite
// fails when any listed op has no float64 gradient check.
#pragma once

#include <span>
#include <string_view>

namespace tapegrad {

std::span<const std::string_view> registered_ops();
bool is_registered_op(std::string_view name);

}  // namespace tapegrad
