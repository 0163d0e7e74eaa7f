// Tests for io/atomic_file.cpp: the whole content or the old file, never a temporary left behind.
#include <tapegrad/io/atomic_file.h>

#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>

#include "tests/temp_dir.h"

using namespace tapegrad;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

using tapegrad::testing::TempDir;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("atomic file: writes the whole content, then replaces it", "[atomic_file]") {
  TempDir dir("tapegrad_atomic");
  const std::string path = (dir.path / "out.txt").string();
  write_file_atomically(path, std::string_view("first\n"));
  CHECK(read_text(path) == "first\n");
  const std::string binary("a\0b\xff", 4);
  write_file_atomically(path, std::string_view(binary));
  CHECK(read_text(path) == binary);

  AtomicFile file(path);
  CHECK(file.temporary().rfind(path + ".tmp.", 0) == 0);
  CHECK(fs::exists(file.temporary()));
  const std::vector<uint8_t> bytes{'x', 'y'};
  file.write(bytes);
  file.write(std::string_view("z"));
  CHECK(read_text(path) == binary);  // nothing at the target before commit()
  file.commit();
  CHECK(read_text(path) == "xyz");
  CHECK_THROWS_WITH(file.write(std::string_view("more")), Contains("already committed"));
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});

  write_file_atomically(path, std::string_view(""));
  CHECK(fs::file_size(path) == 0);
}

TEST_CASE("atomic file: a writer abandoned before commit leaves the old file and no temporary",
          "[atomic_file]") {
  TempDir dir("tapegrad_atomic");
  const std::string path = (dir.path / "keep.txt").string();
  write_file_atomically(path, std::string_view("old"));
  {
    AtomicFile file(path);
    file.write(std::string_view("half of the new"));
  }  // an exception thrown between write() and commit() ends here too
  CHECK(read_text(path) == "old");
  CHECK(dir.entries() == std::vector<std::string>{"keep.txt"});
}

TEST_CASE("atomic file: failures name the path and leave the old file and no temporary",
          "[atomic_file]") {
  TempDir dir("tapegrad_atomic");
  // A directory that does not exist: nothing can be created.
  const std::string missing = (dir.path / "no" / "such" / "out.txt").string();
  CHECK_THROWS_WITH(write_file_atomically(missing, std::string_view("x")),
                    Contains("cannot write " + missing) && Contains("No such file or directory"));
  CHECK(dir.entries().empty());

  // A target that is a non-empty directory: the temporary is written, the rename fails.
  const fs::path taken = dir.path / "taken";
  fs::create_directory(taken);
  write_file_atomically((taken / "inside.txt").string(), std::string_view("old"));
  CHECK_THROWS_WITH(write_file_atomically(taken.string(), std::string_view("new")),
                    Contains("cannot write " + taken.string()) && Contains("renaming"));
  CHECK(fs::is_directory(taken));
  CHECK(read_text(taken / "inside.txt") == "old");
  CHECK(dir.entries() == std::vector<std::string>{"taken"});
}
