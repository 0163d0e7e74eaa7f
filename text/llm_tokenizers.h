// The tokenizers of Qwen3 and Llama 3, as the book's Qwen3Tokenizer and Llama3Tokenizer (with its
// ChatFormat) run them: byte-level BPE over Hugging Face's or Meta's files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/text/tokenizer.h>

namespace tapegrad {

// Qwen3's tokenizer (the Qwen3 models share one): Hugging Face's tokenizer.json, run as its
// `tokenizers` library does (added tokens split off first, leftmost-longest; NFC; the
// pre-tokenizing regex, which takes digits one by one; BPE by the merges list), wrapped as the
// book's Qwen3Tokenizer.encode wraps it. 151,669 ids. Copies share the loaded vocabulary.
class Qwen3Tokenizer final : public Tokenizer {
 public:
  // Throws Error naming the file when it cannot be read or is not Qwen3's tokenizer.json (e.g.
  // Llama 3's: no <|im_start|>).
  static Qwen3Tokenizer from_file(const std::filesystem::path& tokenizer_json);

  // The book's encode(text) with apply_chat_template=False: a text that is one special token
  // once stripped is that token; otherwise the spans `<|...|>`, `<think>` and `</think>` are
  // split off (a known special token becomes its id) and each other span is encoded alone.
  std::vector<int64_t> encode(std::string_view text) const override;
  struct ChatOptions {
    bool add_generation_prompt = true;  // "<|im_start|>assistant\n" after the user's turn
    bool add_thinking = false;          // false: an empty "<think>\n\n</think>\n\n" is prefilled
  };
  // The book's encode with apply_chat_template=True: "<|im_start|>user\n{message}<|im_end|>\n"
  // and the generation prompt.
  std::vector<int64_t> encode_chat(std::string_view user_message, ChatOptions options) const;
  // Hugging Face's Tokenizer.encode(text).ids, without the book's wrapping.
  std::vector<int64_t> encode_hf(std::string_view text) const;
  std::string decode(std::span<const int64_t> ids) const override;
  int64_t n_vocab() const override;
  std::optional<int64_t> eot_token() const override;  // <|endoftext|>
  std::string name() const override { return "qwen3"; }
  // The id of an added token ("<|im_end|>", "<think>", ...); throws Error naming it when none.
  int64_t token_id(std::string_view added_token) const;
  // The book's choice: <|endoftext|> ends a base model's text, <|im_end|> a chat model's turn.
  int64_t eos_token_id(bool base_model) const;

  struct Impl;

 private:
  explicit Qwen3Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Llama 3's tokenizer (Llama 3, 3.1 and 3.2 share it): tiktoken over 128,000 ranks with the
// book's pattern and its 256 special tokens (its names: <|begin_of_text|>, <|end_of_text|>,
// <|start_header_id|>, <|end_header_id|>, <|eot_id|>, the others <|reserved_N|>). 128,256 ids.
class Llama3Tokenizer final : public Tokenizer {
 public:
  // Meta's tokenizer.model (tiktoken's format: a base64 token and its rank a line) or a Hugging
  // Face tokenizer.json of Llama 3 (its vocab gives the same ranks), told apart by content.
  // Throws Error naming the file when it is neither or not Llama 3's (e.g. not 128,000 ranks).
  static Llama3Tokenizer from_file(const std::filesystem::path& path);

  struct EncodeOptions {
    bool bos = false;            // <|begin_of_text|> first
    bool eos = false;            // <|end_of_text|> last
    bool allow_special = false;  // special tokens in the text become their ids (else plain text)
  };
  // The book's encode(text): special tokens' text is encoded as ordinary text, as tiktoken's
  // encode(text, allowed_special=set(), disallowed_special=()) does.
  std::vector<int64_t> encode(std::string_view text) const override;
  std::vector<int64_t> encode(std::string_view text, EncodeOptions options) const;
  // The book's ChatFormat.encode: the user header, the stripped message, <|eot_id|>.
  std::vector<int64_t> encode_chat(std::string_view user_message) const;
  std::string decode(std::span<const int64_t> ids) const override;
  int64_t n_vocab() const override { return kVocabSize; }
  std::optional<int64_t> eot_token() const override { return kEndOfText; }
  std::string name() const override { return "llama3"; }

  static constexpr int64_t kVocabSize = 128256;
  static constexpr int64_t kBeginOfText = 128000;
  static constexpr int64_t kEndOfText = 128001;
  static constexpr int64_t kStartHeader = 128006;
  static constexpr int64_t kEndHeader = 128007;
  static constexpr int64_t kEndOfTurn = 128009;  // <|eot_id|>

  struct Impl;

 private:
  explicit Llama3Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Where tools/fetch_tokenizers.sh puts a model's tokenizer file ("qwen3" or "llama3"):
// $TAPEGRAD_TOKENIZERS_DIR/<model>/tokenizer.json when set, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad/<model>/tokenizer.json.
std::filesystem::path default_tokenizer_file(std::string_view model);

}  // namespace tapegrad
