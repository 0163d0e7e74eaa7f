// Byte-level BPE, the core GPT-2's, Llama 3's and Qwen3's tokenizers share: a pre-tokenizing
// regex run by PCRE2, then the merges of each piece by tiktoken's rule or Hugging Face's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tapegrad::detail {

// A byte-level token's text (GPT-2's bytes_to_unicode: every byte a printable code point below
// U+0144) -> the bytes it stands for; nullopt when the text is not such a token.
std::optional<std::string> byte_level_bytes(std::string_view token);

// The tokenizers' patterns spell whitespace `\s` / `\S`, meaning the Unicode White_Space property
// (what tiktoken's Rust regex, Python's regex module and Hugging Face's Oniguruma mean by \s);
// PCRE2's own \s differs (it also matches U+180E), so they are rewritten as explicit classes.
std::string pattern_with_unicode_whitespace(std::string_view pattern);

class BytePairEncoder {
 public:
  enum class Rule {
    // tiktoken's byte_pair_merge: merge the adjacent parts whose joined bytes are the token of
    // lowest rank (the rank is the id), the leftmost of equals; a piece that is one token is it.
    Ranks,
    // Hugging Face's BPE model: merge the adjacent pair that comes first in the merges list, the
    // leftmost of equals; only listed pairs merge.
    Merges,
  };
  // `tokens[id]` is the bytes of mergeable token `id`: all 256 single bytes must be among them.
  // `merges` (Rule::Merges only): pairs of ids in priority order, each joining into a token.
  // `whole_piece_first`: a piece that is one token becomes it before any merge (tiktoken's
  // shortcut, Hugging Face's ignore_merges). `who` names the tokenizer in errors. Throws Error
  // naming `who` for repeated tokens, a missing byte, a merge into no token, or a bad pattern.
  BytePairEncoder(std::string who, std::vector<std::string> tokens,
                  const std::vector<std::pair<int32_t, int32_t>>& merges, std::string_view pattern,
                  Rule rule, bool whole_piece_first);
  ~BytePairEncoder();
  BytePairEncoder(const BytePairEncoder&) = delete;
  BytePairEncoder& operator=(const BytePairEncoder&) = delete;

  // Splits `text` by the pattern and appends each piece's ids to `out`; `base` is the text's
  // offset in what the user passed (for the error's byte position when it is not UTF-8).
  void encode(std::string_view text, size_t base, std::vector<int64_t>& out) const;
  std::optional<int32_t> find(std::string_view bytes) const;  // the id of a token's bytes
  const std::string& bytes(int64_t id) const { return tokens_[static_cast<size_t>(id)]; }
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }

 private:
  struct Pattern;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Merge {
    int32_t rank, id;
  };
  static constexpr int32_t kNoRank = INT32_MAX;
  static constexpr size_t kLongPiece = 64;  // bytes; longer pieces merge through merge_heap()

  void bpe(std::string_view piece, std::vector<int64_t>& out) const;
  void bpe_short(std::string_view piece, std::vector<int64_t>& out) const;
  void merge_heap(std::string_view piece, std::vector<int64_t>& out) const;
  Merge pair(std::string_view piece, size_t start, size_t end, int32_t left, int32_t right) const;

  std::string who_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ranks_;
  std::unordered_map<uint64_t, Merge> merges_;  // (left << 32 | right) -> its rank and token
  Rule rule_;
  bool whole_piece_first_;
  std::unique_ptr<Pattern> pattern_;
};

}  // namespace tapegrad::detail
