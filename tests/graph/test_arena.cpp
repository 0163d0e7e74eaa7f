// Tests for graph/arena.cpp: bump allocation, ranges released early and reused, reset.
#include <tapegrad/graph/arena.h>

#include <catch2/catch.hpp>
#include <cstddef>

using namespace tapegrad;

TEST_CASE("arena: a released range is reused (the smallest that fits) before bumping", "[arena]") {
  Arena arena;
  auto* a = static_cast<std::byte*>(arena.allocate(1024));
  auto* b = static_cast<std::byte*>(arena.allocate(256));
  arena.allocate(64);  // keeps b's range from touching the bump pointer
  const size_t in_use = arena.bytes_in_use();
  arena.release(a, 1024);
  arena.release(b, 256);
  // 200 bytes (rounded to 256) fit both; the smaller range, b's, is taken whole.
  CHECK(arena.allocate(200) == b);
  // 512 bytes come from the end of a's range, the rest of it stays free.
  CHECK(arena.allocate(512) == a + 512);
  CHECK(arena.allocate(512) == a);
  CHECK(arena.bytes_in_use() == in_use);  // nothing bumped
  CHECK(arena.allocate(64) != a);         // all reused: this one bumps
  CHECK(arena.bytes_in_use() == in_use + 64);
}

TEST_CASE("arena: released neighbours join, and reset forgets released ranges", "[arena]") {
  Arena arena;
  auto* a = static_cast<std::byte*>(arena.allocate(128));
  auto* b = static_cast<std::byte*>(arena.allocate(128));
  CHECK(b == a + 128);
  arena.allocate(64);
  arena.release(b, 128);
  arena.release(a, 128);  // joins b's range: 256 contiguous bytes
  CHECK(arena.allocate(256) == a);
  arena.release(a, 256);
  arena.reset();
  CHECK(arena.bytes_in_use() == 0);
  CHECK(arena.allocate(64) == a);  // from the start of the block again, not the released list
}
