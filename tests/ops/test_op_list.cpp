// docs/ops.md's op list is the real one: every function its "The ops" section names in backquotes
// is declared in a public header (graph/, ops/, nn/) or is a registered op.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <tapegrad/graph/op.h>

namespace test_op_list {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The section "## The ops" of docs/ops.md, without its code blocks.
std::string op_section() {
  const std::string text = read_text(fs::path(TAPEGRAD_SOURCE_DIR) / "docs" / "ops.md");
  const size_t start = text.find("## The ops");
  const std::string section = text.substr(start, text.find("\n## ", start + 1) - start);
  std::string prose;
  size_t at = 0;
  for (size_t fence; (fence = section.find("```", at)) != std::string::npos;) {
    prose += section.substr(at, fence - at);
    const size_t close = section.find("```", fence + 3);
    at = close == std::string::npos ? section.size() : close + 3;
  }
  return prose + section.substr(std::min(at, section.size()));
}

// The names the section gives as functions: a backquoted `name(...)`, or a backquoted list of
// bare lower-case names (`add sub mul`).
std::set<std::string> named_functions(const std::string& section) {
  static const std::regex quoted("`([^`]+)`");
  static const std::regex call(R"(^([a-z][a-z0-9_]*)\()");
  static const std::regex word("[a-z][a-z0-9_]*");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(section.begin(), section.end(), quoted);
       it != std::sregex_iterator(); ++it) {
    const std::string span = (*it)[1].str();
    std::smatch m;
    if (std::regex_search(span, m, call)) {
      names.insert(m[1].str());
      continue;
    }
    std::istringstream words(span);
    std::set<std::string> list;
    bool all_names = true;
    for (std::string w; words >> w;) {
      all_names = all_names && std::regex_match(w, word);
      list.insert(w);
    }
    if (all_names) names.insert(list.begin(), list.end());
  }
  return names;
}

// Every identifier the public headers follow with '(' outside // comments: the functions they
// declare (and some they call, which is harmless here).
std::set<std::string> declared_names() {
  std::set<std::string> names;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const char* folder : {"graph", "ops", "nn"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(TAPEGRAD_SOURCE_DIR) / folder)) {
      if (entry.path().extension() != ".h") continue;
      const std::string text = read_text(entry.path());
      size_t i = 0;
      while (i < text.size()) {
        if (text.compare(i, 2, "//") == 0) {
          i = text.find('\n', i);
          if (i == std::string::npos) break;
        } else if (is_word(text[i])) {
          const size_t begin = i;
          while (i < text.size() && is_word(text[i])) ++i;
          size_t next = i;
          while (next < text.size() && (text[next] == ' ' || text[next] == '\n')) ++next;
          if (next < text.size() && text[next] == '(') names.insert(text.substr(begin, i - begin));
        } else {
          ++i;
        }
      }
    }
  }
  return names;
}

}  // namespace test_op_list

TEST_CASE("op list: every function docs/ops.md names is declared", "[registry][docs]") {
  const std::set<std::string> names = test_op_list::named_functions(test_op_list::op_section());
  REQUIRE(names.size() > 150);  // the section was found and read
  REQUIRE(names.count("logspace") == 1);
  // Words the list backquotes that are arguments or types, not functions (and the book's name
  // for rope).
  const std::set<std::string> not_functions = {"approximate", "correction", "create_graph",
                                               "descending",  "double",     "ignore_index",
                                               "keepdim",     "stable",     "apply_rope"};
  const std::set<std::string> declared = test_op_list::declared_names();
  std::string missing;
  for (const std::string& name : names) {
    if (not_functions.count(name) != 0 || declared.count(name) != 0 ||
        tapegrad::find_registered_op(name) != nullptr) {
      continue;
    }
    missing += " " + name;
  }
  INFO("named in docs/ops.md but declared nowhere:" << missing);
  CHECK(missing.empty());
}
