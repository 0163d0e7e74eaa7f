// The King James Bible's verses from the text tools/kjv_text.sh writes (Debian's bible-kjv).
#include <tapegrad/text/kjv.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <tapegrad/graph/error.h>

namespace tapegrad {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

[[noreturn]] void bad_line(int64_t line, const std::string& what) {
  throw Error("parse_kjv_verses: line " + std::to_string(line) + ": " + what);
}

}  // namespace

std::vector<KjvVerse> parse_kjv_verses(std::string_view text) {
  std::vector<KjvVerse> verses;
  std::string book;
  int64_t book_index = -1, chapter = 0;
  bool new_testament = false;
  bool previous_blank = true;
  int64_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      previous_blank = true;
      continue;
    }
    if (line.starts_with("  ")) {  // "  V text"
      const size_t first = line.find_first_not_of(' ');
      const size_t space = line.find(' ', first);
      const std::string_view number = line.substr(first, space - first);
      if (!all_digits(number)) bad_line(line_number, "an indented line that is not \"  V text\"");
      if (book.empty()) bad_line(line_number, "a verse before any chapter heading");
      verses.push_back({book, book_index, chapter, std::stoll(std::string(number)),
                        space == std::string_view::npos ? "" : std::string(line.substr(space + 1)),
                        new_testament});
    } else if (previous_blank) {  // "Book C"
      const size_t space = line.rfind(' ');
      if (space == std::string_view::npos || !all_digits(line.substr(space + 1))) {
        bad_line(line_number,
                 "a heading that is not \"Book chapter\": '" + std::string(line) + "'");
      }
      const std::string name(line.substr(0, space));
      if (name != book) {
        book = name;
        ++book_index;
        if (book == "Matthew") new_testament = true;
      }
      chapter = std::stoll(std::string(line.substr(space + 1)));
    } else {  // the verse's text wraps
      if (verses.empty()) bad_line(line_number, "text before any verse");
      verses.back().text += ' ';
      verses.back().text += line;
    }
    previous_blank = false;
  }
  return verses;
}

std::string default_kjv_path() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = cache != nullptr && *cache != '\0' ? cache
                           : home != nullptr                  ? std::string(home) + "/.cache"
                                                              : ".cache";
  return base + "/tapegrad/kjv.txt";
}

std::string read_training_text(const std::string& path, const std::string& who) {
  namespace fs = std::filesystem;
  const std::string where = who + " " + path + ": ";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw Error(where + "no such file" +
                (path == default_kjv_path()
                     ? " (the default text: `bash tools/kjv_text.sh` writes it from Debian's "
                       "bible-kjv)"
                     : ""));
  }
  if (fs::is_directory(path, ec)) throw Error(where + "is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(where + "cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  if (text.empty()) throw Error(where + "the file is empty");
  const size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    throw Error(where + "not a text file (a NUL byte at offset " + std::to_string(nul) + ")");
  }
  return text;
}

}  // namespace tapegrad
