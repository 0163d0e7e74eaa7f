// Chapter 4 of *Build a Large Language Model (From Scratch)*: the GPT model, step by step.
//
// Prints, in the book's order and torch's format: the batch of token ids the book gets from
// tiktoken for "Every effort moves you" and "Every day holds a", the logits of GPT_CONFIG_124M
// after manual_seed(123) in training mode (dropout active, as the book's first call), the
// parameter count with and without the output head, the model's float32 size, and the greedy
// continuation of "Hello, I am" by 6 tokens in eval mode. There is no tokenizer here: the ids
// are the book's. Besides the book's prints, `logits_corners[b][t]:` lines give the printed
// corners at full float32 precision, for tests/examples/test_ch04_gpt.cpp.
//
// The 124M model holds 163M float32 weights (~650 MB) and takes some seconds to build.
//
// Dimension names: B = 2 sequences, T = 4 tokens, C = emb_dim 768, V = vocab_size 50257.
#include <tapegrad/cli/cli.h>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace {

// Python's f"{n:,}": 163009536 -> "163,009,536".
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

std::string torch_size(const Shape& s) {
  return "torch.Size(" + s.str() + ")";
}

}  // namespace

int main(int argc, char** argv) {
  // No options: --help describes the program and anything else is an error naming it.
  CLI::App app(
      "Chapter 4 of Build a Large Language Model (From Scratch): GPT_CONFIG_124M after "
      "manual_seed(123), printed as PyTorch prints it.",
      "ch04_gpt");
  if (const std::optional<int> exit_code = tapegrad::cli::parse(app, argc, argv)) {
    return *exit_code;
  }
  // §4.1: tokenizer.encode of the two texts, stacked into a batch           [B, T]
  const Ids batch = Ids::from_rows({{6109, 3626, 6100, 345}, {6109, 1110, 6622, 257}});
  std::cout << "Input batch:\n " << batch.str() << "\n";

  // §4.6: the model, in training mode as torch's modules start
  manual_seed(123);
  nn::GPTModel model(nn::GPT_CONFIG_124M);
  Tape tape;
  TapeScope scope(tape);
  Tensor out = model(batch);  // [B, T, V]
  std::cout << "\nOutput shape: " << torch_size(out.shape()) << "\n" << out.str() << "\n";
  // The corners the print shows (first and last 3 logits of every row), at full precision.
  const std::vector<double> logits = out.values();
  const int64_t V = out.size(2);
  for (int64_t b = 0; b < out.size(0); ++b) {
    for (int64_t t = 0; t < out.size(1); ++t) {
      const double* row = logits.data() + (b * out.size(1) + t) * V;
      std::printf("logits_corners[%lld][%lld]:", static_cast<long long>(b),
                  static_cast<long long>(t));
      for (int64_t j : {int64_t{0}, int64_t{1}, int64_t{2}, V - 3, V - 2, V - 1}) {
        std::printf(" %.9g", row[j]);
      }
      std::printf("\n");
    }
  }
  std::fflush(stdout);
  tape.reset();

  const int64_t total_params = model.num_parameters();
  std::cout << "Total number of parameters: " << with_commas(total_params) << "\n";
  std::cout << "Token embedding layer shape: " << torch_size(model.tok_emb.weight.shape()) << "\n";
  std::cout << "Output layer shape: " << torch_size(model.out_head.weight.shape()) << "\n";
  // GPT-2 ties the output head to the token embedding: count it once.
  const int64_t total_params_gpt2 = total_params - model.out_head.num_parameters();
  std::cout << "Number of trainable parameters considering weight tying: "
            << with_commas(total_params_gpt2) << "\n";
  const double total_size_mb = static_cast<double>(total_params) * 4 / (1024.0 * 1024.0);
  std::printf("Total size of the model: %.2f MB\n", total_size_mb);
  std::fflush(stdout);

  // §4.7: greedy generation from "Hello, I am"
  const Ids encoded_tensor = Ids::from_rows({{15496, 11, 314, 716}});  // [1, 4]
  std::cout << "encoded: [15496, 11, 314, 716]\n";
  std::cout << "encoded_tensor.shape: " << torch_size(encoded_tensor.shape()) << "\n";
  model.eval();  // disable dropout
  const Ids generated =
      nn::generate_text_simple(model, encoded_tensor, 6, nn::GPT_CONFIG_124M.context_length);
  std::cout << "Output: " << generated.str() << "\n";
  std::cout << "Output length: " << generated.size(1) << "\n";
  return 0;
}
