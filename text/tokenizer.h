// Tokenizers: GPT-2's byte-level BPE (exact to tiktoken's "gpt2" encoding) and a 256-id bytes one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad {

// What a data loader and a training script need of a tokenizer; both below implement it, so a
// script runs the same with GPT-2's vocabulary or, without its files, on raw bytes.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Text -> ids. "<|endoftext|>" is allowed as the special token where the tokenizer has one
  // (tiktoken's encode(text, allowed_special={"<|endoftext|>"}), what the book passes).
  // Throws Error when text is not valid UTF-8 (GPT-2's tokenizer; the bytes one takes any bytes).
  virtual std::vector<int64_t> encode(std::string_view text) const = 0;
  // Ids -> the bytes they stand for (tiktoken's decode_bytes). Ids that cut a UTF-8 character
  // give partial bytes, which tiktoken's decode() would show as U+FFFD. Throws Error naming the
  // first id outside [0, n_vocab()).
  virtual std::string decode(std::span<const int64_t> ids) const = 0;
  virtual int64_t n_vocab() const = 0;
  // The id of "<|endoftext|>" (tiktoken's eot_token), or none.
  virtual std::optional<int64_t> eot_token() const = 0;
  virtual std::string name() const = 0;  // "gpt2" or "bytes"
};

// GPT-2's tokenizer: the pre-tokenizing regex (tiktoken's form of GPT-2's pattern, run by PCRE2),
// then byte-level BPE merges of each piece, as tiktoken does them (the lowest-ranked adjacent
// pair whose bytes are a token, leftmost first). 50257 ids; "<|endoftext|>" is 50256.
// Copies share the loaded vocabulary; encode and decode may run from several threads at once.
class GPT2Tokenizer final : public Tokenizer {
 public:
  // OpenAI's files: encoder.json (token -> id) and vocab.bpe (the 50000 merges in rank order).
  // The ranks are built from vocab.bpe as tiktoken does and must equal encoder.json's ids; a
  // missing file, a file that is not GPT-2's format or a mismatch throws Error naming the file.
  static GPT2Tokenizer from_files(const std::filesystem::path& encoder_json,
                                  const std::filesystem::path& vocab_bpe);
  // dir/encoder.json + dir/vocab.bpe (what tools/fetch_gpt2_vocab.sh puts in its folder).
  static GPT2Tokenizer from_dir(const std::filesystem::path& dir);
  // Hugging Face's tokenizer.json of GPT-2 (a BPE model with byte-level pre-tokenizer; merges
  // as "a b" strings or as pairs), checked the same way against its vocab.
  static GPT2Tokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json);

  std::vector<int64_t> encode(std::string_view text) const override;
  // Every byte is text: "<|endoftext|>" becomes ordinary tokens (tiktoken's encode_ordinary).
  std::vector<int64_t> encode_ordinary(std::string_view text) const;
  std::string decode(std::span<const int64_t> ids) const override;
  int64_t n_vocab() const override { return kVocabSize; }
  std::optional<int64_t> eot_token() const override { return kEndOfText; }
  std::string name() const override { return "gpt2"; }

  static constexpr int64_t kVocabSize = 50257;
  static constexpr int64_t kEndOfText = 50256;

  struct Impl;

 private:
  explicit GPT2Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// The fallback: one id per byte (256 ids), no merges and no special token; decode(encode(s)) == s
// for any bytes.
class ByteTokenizer final : public Tokenizer {
 public:
  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(std::span<const int64_t> ids) const override;
  int64_t n_vocab() const override { return 256; }
  std::optional<int64_t> eot_token() const override { return std::nullopt; }
  std::string name() const override { return "bytes"; }
};

// Where tools/fetch_gpt2_vocab.sh puts GPT-2's files: $TAPEGRAD_GPT2_DIR when set, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad/gpt2.
std::filesystem::path default_gpt2_vocab_dir();

// "gpt2" -> GPT2Tokenizer::from_dir(dir), "bytes" -> ByteTokenizer; anything else throws Error
// naming the option.
std::unique_ptr<Tokenizer> make_tokenizer(
    std::string_view kind, const std::filesystem::path& gpt2_dir = default_gpt2_vocab_dir());

}  // namespace tapegrad
