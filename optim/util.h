// Internal helpers shared by the optim/ sources (not installed API): number formatting, dtype
// dispatch, one-group construction.
#pragma once

#include <charconv>
#include <string>

#include "graph/shape.h"
#include "optim/optimizer.h"

namespace tapegrad::optim_detail {

// All parameters in one group: what the single-list constructors mean.
inline std::vector<ParamGroup> one_group(std::vector<Parameter> params) {
  std::vector<ParamGroup> groups(1);
  groups[0].params = std::move(params);
  return groups;
}

// The shortest text that reads back as `v` ("0.1", "-3", "1e-08"), for error messages.
inline std::string format_number(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

// Calls f.template operator()<float>() or <double>() for the dtype.
template <class F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  if (dtype == DType::Float32) return f.template operator()<float>();
  return f.template operator()<double>();
}

// Turns runtime flags into template arguments, so an update loop is compiled once per
// combination with no branch inside (and vectorizes):
//   with_flags([&]<bool kA, bool kB>() { loop<kA, kB>(...); }, a, b);
template <bool... Known, class F>
void with_flags(F&& f) {
  f.template operator()<Known...>();
}
template <bool... Known, class F, class... Rest>
void with_flags(F&& f, bool flag, Rest... rest) {
  if (flag) {
    with_flags<Known..., true>(f, rest...);
  } else {
    with_flags<Known..., false>(f, rest...);
  }
}

}  // namespace tapegrad::optim_detail
