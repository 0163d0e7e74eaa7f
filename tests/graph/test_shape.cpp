// Tests for graph/shape.h: the unchecked operator[] and the checked size(dim) it documents.
#include <catch2/catch.hpp>
#include <string>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/shape.h>

using namespace tapegrad;

TEST_CASE("Shape: operator[] reads dims 0..rank-1, size(dim) also from the end", "[shape]") {
  Shape s{2, 6, 3};
  CHECK(s[0] == 2);
  CHECK(s[1] == 6);
  CHECK(s[2] == 3);
  CHECK(s.size(-1) == 3);
  CHECK(s.size(-3) == 2);
  CHECK(s.size(1) == 6);
  s[1] = 7;  // the writable operator[]
  CHECK(s.size(-2) == 7);
  CHECK(s.str() == "[2, 7, 3]");
}

TEST_CASE("Shape: size(dim) out of range throws naming size, the dim and the rank", "[shape]") {
  const Shape s{2, 6, 3};
  for (int dim : {3, -4, 100}) {
    INFO("dim " << dim);
    try {
      (void)s.size(dim);
      FAIL("no throw");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("size") != std::string::npos);
      CHECK(what.find("dim " + std::to_string(dim)) != std::string::npos);
      CHECK(what.find("rank 3") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(Shape{}.size(1), Error);  // a scalar has no dim 1
}
