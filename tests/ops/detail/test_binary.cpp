// Tests for ops/detail/binary.h: the chunked walk hands its kernel every output once, in order,
// with the operands' values at those outputs, on both of its broadcast paths.
#include <tapegrad/ops/detail/binary.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

using namespace tapegrad;

namespace test_binary {

// a's and b's values seen at each output, walking with for_each_binary_chunk; values are
// their own flat index, so each is checked against for_each_broadcast's index.
void check_chunks(const Shape& a_shape, const Shape& b_shape) {
  bool ok = false;
  const Shape out = broadcast_shape(a_shape, b_shape, &ok);
  REQUIRE(ok);
  std::vector<double> a(static_cast<size_t>(a_shape.numel())),
      b(static_cast<size_t>(b_shape.numel()));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i);
  std::vector<double> seen_a(static_cast<size_t>(out.numel()), -1), seen_b(seen_a);
  int64_t next = 0;
  for_each_binary_chunk(a.data(), a_shape, b.data(), b_shape, out,
                        [&](int64_t o, const double* ac, const double* bc, int64_t n) {
                          CHECK(o == next);
                          CHECK(n >= 1);
                          CHECK(n <= kBinaryChunk);
                          for (int64_t i = 0; i < n; ++i) {
                            seen_a[static_cast<size_t>(o + i)] = ac[i];
                            seen_b[static_cast<size_t>(o + i)] = bc[i];
                          }
                          next = o + n;
                        });
  CHECK(next == out.numel());
  std::vector<double> want_a(seen_a.size()), want_b(seen_a.size());
  for_each_broadcast(out, broadcast_strides(a_shape, out), broadcast_strides(b_shape, out),
                     [&](int64_t o, int64_t i, int64_t j) {
                       want_a[static_cast<size_t>(o)] = a[static_cast<size_t>(i)];
                       want_b[static_cast<size_t>(o)] = b[static_cast<size_t>(j)];
                     });
  CHECK(seen_a == want_a);
  CHECK(seen_b == want_b);
}

}  // namespace test_binary

TEST_CASE("binary: the chunked walk sees each output's operands once, in order", "[broadcast]") {
  test_binary::check_chunks(Shape{3, 700}, Shape{3, 700});  // both cover out
  test_binary::check_chunks(Shape{3, 700}, Shape{3, 1});    // long rows: a column repeated
  test_binary::check_chunks(Shape{1, 300}, Shape{4, 300});  // long rows: a row repeated
  test_binary::check_chunks(Shape{2, 1, 90}, Shape{5, 1});  // long rows, both broadcast
  test_binary::check_chunks(Shape{70, 5}, Shape{5});        // short rows, across rows
  test_binary::check_chunks(Shape{4, 3, 1}, Shape{1, 7});   // short rows, both broadcast
  test_binary::check_chunks(Shape{0, 100}, Shape{100});     // empty
  test_binary::check_chunks(Shape{}, Shape{});              // 0-D
}
