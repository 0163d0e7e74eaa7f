// The library's layout: includes run one way between its folders, and every file says its job.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Which folders a folder's files may include. graph/ is the engine and includes nothing above
// it; kernels/ knows no op; ops/ knows no module; io/checkpoint holds optimiser state.
const std::map<std::string, std::set<std::string>>& allowed_includes() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      {"graph", {"graph"}},
      {"kernels", {"graph", "kernels"}},
      {"ops", {"graph", "kernels", "ops"}},
      {"optim", {"graph", "kernels", "optim"}},  // kernels: AdamW's vector loop
      {"io", {"graph", "io", "optim"}},
      {"nn", {"graph", "kernels", "ops", "io", "nn"}},
      {"viz", {"graph", "io", "viz"}},
      {"text", {"graph", "text"}},
      {"data", {"graph", "text", "data"}},  // text: BatchSampler and randperm (torch's order)
      {"train", {"graph", "kernels", "ops", "nn", "optim", "io", "text", "train"}},
      {"dist",
       {"graph", "kernels", "ops", "nn", "optim", "io", "train", "dist"}},  // train: sharding
      {"cli", {"graph", "kernels", "cli"}},  // kernels: the --matmul-precision option
  };
  return allowed;
}

// The wrong-way includes of one file (its path relative to the root, and its text), each as
// "nn/gpt.cpp includes <tapegrad/apps/x.h>".
std::vector<std::string> wrong_way_includes(const std::string& path, const std::string& text) {
  std::vector<std::string> found;
  const std::string folder = path.substr(0, path.find('/'));
  const auto rule = allowed_includes().find(folder);
  if (rule == allowed_includes().end()) return found;
  static const std::regex include_line(R"(^\s*#\s*include\s*<tapegrad/([a-z_]+)/[^>]*>)");
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, include_line)) continue;
    if (rule->second.count(m[1].str()) == 0) {
      found.push_back(path + " includes " + line.substr(line.find('<')));
    }
  }
  return found;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every .h/.cpp of the library's folders, relative to the source root.
std::vector<std::string> library_files() {
  const fs::path root = TAPEGRAD_SOURCE_DIR;
  std::vector<std::string> files;
  for (const auto& [folder, _] : allowed_includes()) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".h" || ext == ".cpp") {
        files.push_back(fs::relative(entry.path(), root).generic_string());
      }
    }
  }
  return files;
}

}  // namespace

TEST_CASE("layout: the checker reports an include that runs the wrong way") {
  CHECK(wrong_way_includes("kernels/gemm/gemm.cpp", "#include <tapegrad/ops/ops.h>\n") ==
        std::vector<std::string>{"kernels/gemm/gemm.cpp includes <tapegrad/ops/ops.h>"});
  CHECK(wrong_way_includes("graph/tape.cpp", "  #  include <tapegrad/nn/module.h>\n").size() == 1);
  CHECK(wrong_way_includes("ops/linear.cpp", "#include <tapegrad/nn/layers.h>\n").size() == 1);
  CHECK(wrong_way_includes("nn/gpt.cpp", "#include <tapegrad/ops/ops.h>\n#include <vector>\n")
            .empty());
}

TEST_CASE("layout: includes run one way between the library's folders") {
  const std::vector<std::string> files = library_files();
  REQUIRE(files.size() > 100);
  std::vector<std::string> wrong;
  for (const std::string& file : files) {
    for (std::string& w :
         wrong_way_includes(file, read_all(fs::path(TAPEGRAD_SOURCE_DIR) / file))) {
      wrong.push_back(std::move(w));
    }
  }
  INFO("allowed: see allowed_includes() in tests/test_layout.cpp");
  for (const std::string& w : wrong) UNSCOPED_INFO(w);
  CHECK(wrong.empty());
}

// A quoted include of a tapegrad folder ("nn/layers.h") would search the includer's include path,
// where a user's own nn/layers.h can stand first; <tapegrad/nn/layers.h> cannot be shadowed.
TEST_CASE("layout: every file of the tree includes tapegrad's headers as <tapegrad/...>") {
  const fs::path root = TAPEGRAD_SOURCE_DIR;
  static const std::regex quoted(
      R"(^\s*#\s*include\s*"(tapegrad\.h|(graph|kernels|ops|nn|optim|io|viz|text|data|train|dist|cli)/))");
  std::vector<std::string> quoted_includes;
  size_t files = 0;
  for (const char* folder : {"graph", "kernels", "ops", "nn", "optim", "io", "viz", "text", "data",
                             "train", "dist", "cli", "apps", "examples", "tools", "tests"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cpp") continue;
      // The consumer that includes its own headers named like tapegrad's, on purpose.
      if (entry.path().filename() == "colliding_headers_consumer.cpp") continue;
      ++files;
      std::istringstream lines(read_all(entry.path()));
      std::string line;
      while (std::getline(lines, line)) {
        if (std::regex_search(line, quoted)) {
          quoted_includes.push_back(fs::relative(entry.path(), root).generic_string() + ": " +
                                    line);
        }
      }
    }
  }
  REQUIRE(files > 300);
  for (const std::string& q : quoted_includes) UNSCOPED_INFO(q);
  CHECK(quoted_includes.empty());
}

TEST_CASE("layout: every library file opens with a line saying its job") {
  std::vector<std::string> silent;
  for (const std::string& file : library_files()) {
    const std::string text = read_all(fs::path(TAPEGRAD_SOURCE_DIR) / file);
    if (text.rfind("// ", 0) != 0) silent.push_back(file);
  }
  for (const std::string& s : silent) UNSCOPED_INFO(s);
  CHECK(silent.empty());
}

TEST_CASE("layout: the engine (tape, tensor, parameter) stays within 600 code lines") {
  // Code lines as cloc counts them here: neither blank nor a // comment. The engine is what a
  // newcomer reads in one sitting (docs/design.md); what grows goes into another file.
  int64_t code = 0;
  for (const char* name :
       {"tape.h", "tape.cpp", "tensor.h", "tensor.cpp", "parameter.h", "parameter.cpp"}) {
    std::istringstream lines(read_all(fs::path(TAPEGRAD_SOURCE_DIR) / "graph" / name));
    for (std::string line; std::getline(lines, line);) {
      const size_t first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line.compare(first, 2, "//") != 0) ++code;
    }
  }
  INFO(code << " code lines");
  CHECK(code <= 600);
  CHECK(code > 300);  // the files were read
}

TEST_CASE("layout: no test case name holds a semicolon (ctest would split it in two)") {
  // catch_discover_tests hands the names to ctest as a list, where ';' separates items: a name
  // with one becomes two tests that match nothing ("No tests ran").
  static const std::regex with_semicolon(R"(TEST_CASE\(\s*"[^"]*;)");
  std::vector<std::string> found;
  size_t files = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(TAPEGRAD_SOURCE_DIR) / "tests")) {
    if (entry.path().extension() != ".cpp") continue;
    ++files;
    if (std::regex_search(read_all(entry.path()), with_semicolon)) {
      found.push_back(entry.path().filename().string());
    }
  }
  for (const std::string& f : found) UNSCOPED_INFO(f);
  CHECK(files > 100);
  CHECK(found.empty());
}
