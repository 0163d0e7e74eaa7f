// Internal helpers shared by the optim/ sources (not installed API): number formatting, dtype
// dispatch, one-group construction, the (threaded) pass over all parameters' elements.
#pragma once

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include <tapegrad/graph/shape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/optim/optimizer.h>

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

// One pass over all parameters' elements as one index space [0, Σ numel): `segments` holds each
// parameter's work in order, each with its element count in `.n`; fn(segment, begin, end) runs
// on a range inside one segment. With set_num_threads(k > 1) the space is split into k nearly
// equal contiguous ranges (the split cuts parameters anywhere, since the updates are
// elementwise: every element gets the same arithmetic whichever thread runs it, so the result is
// bit-identical to one thread's). `cost` is the rough flops per element.
template <class Segment, class F>
void for_all_elements(const std::vector<Segment>& segments, double cost, F&& fn) {
  int64_t total = 0;
  for (const Segment& s : segments) total += s.n;
  parallel_for(total, cost, [&](int, int64_t begin, int64_t end) {
    int64_t offset = 0;
    for (const Segment& s : segments) {
      const int64_t lo = std::max(begin, offset), hi = std::min(end, offset + s.n);
      if (lo < hi) fn(s, lo - offset, hi - offset);
      offset += s.n;
      if (offset >= end) break;
    }
  });
}

}  // namespace tapegrad::optim_detail
