// The King James Bible's verses from the text tools/kjv_text.sh writes (Debian's bible-kjv), where
// that text lives (the programs' default training text), and reading a training text file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad {

struct KjvVerse {
  std::string book;    // "Genesis", "1 Samuel", "Song of Solomon", ...
  int64_t book_index;  // 0 (Genesis) to 65 (Revelation): the order of the text
  int64_t chapter;     // from 1
  int64_t verse;       // from 1
  std::string text;    // the verse's wrapped lines joined with single spaces
  bool new_testament;  // Matthew onwards
};

// The layout of `bible "Gen1:1-Rev22:21"`: a chapter heading "Book C" between blank lines, then
// verses "  V text" whose text wraps onto unindented lines. Throws Error naming the line (1-based)
// when a verse comes before any heading or a heading is not "Name number"; an empty text gives
// no verses.
std::vector<KjvVerse> parse_kjv_verses(std::string_view text);

// Where tools/kjv_text.sh writes the King James Bible, the text every program trains on by
// default: ${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad/kjv.txt (./.cache/... without HOME).
std::string default_kjv_path();

// A text file a program trains on, whole. Throws Error "<who> <path>: <reason>" (who names the
// program and option, "tapegrad-train-gpt: --data") when it is missing (for default_kjv_path(),
// saying how to write it), a directory, unreadable, empty, or not text (it holds a NUL byte).
std::string read_training_text(const std::string& path, const std::string& who);

}  // namespace tapegrad
