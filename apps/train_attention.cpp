// Trains the attention layers of chapter 3 of *Build a Large Language Model (From Scratch)* by
// stochastic gradient descent, the same run PyTorch makes step for step.
//
// The task (fixed, so that tests/goldens/chapter3/train_attention.txt, written by PyTorch from
// the same seeds, pins every step's loss): a student layer learns to imitate a teacher layer of
// the same kind.
//   x        the book's six token embeddings ("Your journey starts with one step"): the batch
//            of two copies [2, 6, 3] for MultiHeadAttention, the [6, 3] matrix for
//            SelfAttention_v1
//   student  manual_seed(123), then MultiHeadAttention(d_in 3, d_out 2, context_length 6,
//            dropout 0.0, num_heads 2) (the book's §3.6.2 layer) or SelfAttention_v1(3, 2)
//   target   manual_seed(456), then a teacher layer of the same kind;
//            target = teacher(x) + 0.1 * rand(shape of teacher(x)), computed once
//   loss     mse_loss(student(x), target)
//   training SGD with lr 0.5 (p -= lr * grad) on every parameter (W_query, W_key, W_value and,
//            for MultiHeadAttention, out_proj), 200 steps of zero_grad, forward, backward, step
// Every step prints its loss; a summary follows (first and last loss, how many times lower,
// the trained weights). In float32 the loss falls from 0.238 to 0.00052 for MultiHeadAttention
// and from 0.230 to 0.00039 for SelfAttention_v1.
//
// Usage: tapegrad-train-attention [--model mha|sa_v1|both] [--dtype float32|float64] [--steps N]
//                                 [--lr LR] [--dot FILE] [--svg FILE]       (--help lists them)
//   --dot FILE / --svg FILE write the graph of the last training step (MultiHeadAttention's
//   when it trains): Graphviz DOT text (viz/dot.h), or the SVG Graphviz renders from it.
//
// Dimension names: B = 2 sequences, T = 6 tokens, C_in = d_in = 3, D = d_out = 2, H = 2 heads.
#include <tapegrad/cli/cli.h>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/io/atomic_file.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/optim/sgd.h>
#include <tapegrad/tapegrad.h>
#include <tapegrad/viz/dot.h>

using namespace tapegrad;

namespace {

constexpr const char* kProgram = "tapegrad-train-attention";  // its name in bin/

const std::vector<double> kInputs = {0.43, 0.15, 0.89,   // Your     (x^1)
                                     0.55, 0.87, 0.66,   // journey  (x^2)
                                     0.57, 0.85, 0.64,   // starts   (x^3)
                                     0.22, 0.58, 0.33,   // with     (x^4)
                                     0.77, 0.25, 0.10,   // one      (x^5)
                                     0.05, 0.80, 0.55};  // step     (x^6)

// The input on the current tape: [T, C_in], or the batch of two copies [B, T, C_in].
Tensor make_input(bool batched, DType dtype) {
  Tensor inputs = from_values({6, 3}, kInputs, dtype);  // [T, C_in]
  if (!batched) return inputs;
  Tensor one = reshape(inputs, {1, 6, 3});  // [1, T, C_in]
  return cat({one, one}, 0);                // [B, T, C_in]
}

// One layer behind a common face: its forward and its parameters.
struct Layer {
  std::string title;
  bool batched;
  std::function<Tensor(const Tensor&)> forward;
  std::vector<Parameter> parameters;
};

Layer make_layer(const std::string& kind, DType dtype) {
  if (kind == "mha") {
    auto m = std::make_shared<nn::MultiHeadAttention>(3, 2, 6, 0.0, 2, false, dtype);
    return {"MultiHeadAttention", true, [m](const Tensor& x) { return m->forward(x); },
            m->parameters()};
  }
  auto m = std::make_shared<nn::SelfAttentionV1>(3, 2, dtype);
  return {"SelfAttention_v1", false, [m](const Tensor& x) { return m->forward(x); },
          m->parameters()};
}

struct Options {
  std::string model = "both";
  DType dtype = DType::Float32;
  int steps = 200;
  double lr = 0.5;
  std::string dot_file, svg_file;
};

// Trains one layer on `tape` (left holding the last step's graph); returns the losses.
std::vector<double> train(const std::string& kind, const Options& options, Tape& tape) {
  TapeScope scope(tape);
  const char* dtype = dtype_name(options.dtype);

  // The student, then the teacher and its noisy output as the target.
  manual_seed(123);
  Layer student = make_layer(kind, options.dtype);
  manual_seed(456);
  Layer teacher = make_layer(kind, options.dtype);
  std::vector<double> target_values;
  Shape target_shape;
  {
    NoGradGuard no_grad;
    Tensor y = teacher.forward(make_input(teacher.batched, options.dtype));  // [B, T, D] or [T, D]
    Tensor target = y + rand(y.shape(), options.dtype) * 0.1;                // same shape
    target_values = target.values();
    target_shape = target.shape();
  }
  std::cout << "== " << student.title << " (" << dtype << "): SGD lr " << options.lr << ", "
            << options.steps << " steps ==\n";

  SGD sgd(student.parameters, options.lr);
  std::vector<double> losses;
  const int digits = options.dtype == DType::Float32 ? 9 : 17;
  for (int step = 1; step <= options.steps; ++step) {
    tape.reset();  // a fresh graph each step; the parameters keep their values
    Tensor x = make_input(student.batched, options.dtype).set_name("x");
    Tensor target = from_values(target_shape, target_values, options.dtype).set_name("target");
    sgd.zero_grad();
    Tensor loss = mse_loss(student.forward(x), target);  // []
    loss.set_name("loss");
    loss.backward();
    sgd.step();
    losses.push_back(loss.item());
    std::cout << "step " << std::setw(4) << step << "  loss " << std::setprecision(digits)
              << losses.back() << "\n";
  }

  std::cout << std::setprecision(6) << student.title << " (" << dtype << "): loss "
            << losses.front() << " -> " << losses.back() << " after " << options.steps << " steps ("
            << std::setprecision(4) << losses.front() / losses.back()
            << "x lower)\ntrained parameters:\n";
  for (const Parameter& p : student.parameters) {
    std::cout << p.name() << ":\n" << tape.parameter(p).str() << "\n";
  }
  std::cout << "\n";
  return losses;
}

// --dot FILE: the tape as Graphviz DOT text; --svg FILE: rendered by Graphviz (libgvc).
void write_drawing(const Tape& tape, const std::string& title, const Options& options) {
  DotOptions dot_options;
  dot_options.title = title + ": the last SGD step's forward, " + dtype_name(options.dtype);
  const std::string dot = to_dot(tape, dot_options);
  if (!options.dot_file.empty()) {
    try {
      write_file_atomically(options.dot_file, dot);
    } catch (const Error& e) {
      throw Error("--dot: " + std::string(e.what()));
    }
    std::cout << "wrote " << options.dot_file << "\n";
  }
  if (!options.svg_file.empty()) {
    try {
      render(dot, "svg", options.svg_file);
    } catch (const Error& e) {
      throw Error("--svg: " + std::string(e.what()));
    }
    std::cout << "wrote " << options.svg_file << "\n";
  }
}

// Fills `o` from the command line (cli/cli.h: --help exits 0, a bad value exits 2).
std::optional<int> parse(int argc, char** argv, Options& o) {
  CLI::App app(
      "Trains chapter 3's attention layers (a student imitating a teacher) by SGD, "
      "the run PyTorch makes step for step.",
      kProgram);
  std::string dtype = "float32";
  app.add_option("--model", o.model, "the layer(s) to train")
      ->check(CLI::IsMember({"mha", "sa_v1", "both"}));
  app.add_option("--dtype", dtype, "element type")->check(CLI::IsMember({"float32", "float64"}));
  app.add_option("--steps", o.steps, "SGD steps")->check(cli::positive());
  app.add_option("--lr", o.lr, "learning rate")->check(cli::positive_finite());
  app.add_option("--dot", o.dot_file, "write the last step's graph as Graphviz DOT text");
  app.add_option("--svg", o.svg_file, "write the last step's graph as SVG (Graphviz)");
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return exit_code;
  o.dtype = dtype == "float64" ? DType::Float64 : DType::Float32;
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (const std::optional<int> exit_code = parse(argc, argv, options)) return *exit_code;
  try {
    Tape mha_tape, sa_tape;  // each keeps its layer's last step, for the drawing
    if (options.model == "mha" || options.model == "both") train("mha", options, mha_tape);
    if (options.model == "sa_v1" || options.model == "both") train("sa_v1", options, sa_tape);
    // The graph of the last training step: the MultiHeadAttention's when it was trained.
    if (!options.dot_file.empty() || !options.svg_file.empty()) {
      if (mha_tape.size() > 0) {
        write_drawing(mha_tape, "MultiHeadAttention", options);
      } else {
        write_drawing(sa_tape, "SelfAttention_v1", options);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << cli::error_message(kProgram, e.what()) << "\n";
    return 2;
  }
  return 0;
}
