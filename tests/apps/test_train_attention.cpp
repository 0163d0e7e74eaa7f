// Tests for apps/train_attention.cpp: the SGD run against PyTorch's run of the same task
// (tests/goldens/chapter3/train_attention.txt): initial weights bit for bit, every step's loss
// within 1e-5 relative in float32 and 1e-9 in float64, final parameters within 1e-5 (1e-9).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/sgd.h>
#include "tests/examples/chapter3_goldens.h"
#include "tests/viz/dot_testing.h"

using namespace tapegrad;
namespace golden = tapegrad::testing::chapter3;
using golden::check_close;
using golden::check_exact;
using golden::goldens;

namespace {

constexpr const char* kFile = "train_attention.txt";
constexpr int kSteps = 200;
constexpr double kLr = 0.5;

Tensor make_input(bool batched, DType dtype) {
  Tensor inputs = tensor({{0.43, 0.15, 0.89},
                          {0.55, 0.87, 0.66},
                          {0.57, 0.85, 0.64},
                          {0.22, 0.58, 0.33},
                          {0.77, 0.25, 0.10},
                          {0.05, 0.80, 0.55}},
                         dtype);
  if (!batched) return inputs;
  Tensor one = reshape(inputs, {1, 6, 3});
  return cat({one, one}, 0);
}

// The student/teacher layer of the task, behind one face.
struct Layer {
  std::shared_ptr<nn::MultiHeadAttention> mha;
  std::shared_ptr<nn::SelfAttentionV1> sa;
  Tensor operator()(const Tensor& x) const { return mha ? mha->forward(x) : sa->forward(x); }
  std::vector<Parameter> parameters() const { return mha ? mha->parameters() : sa->parameters(); }
  bool batched() const { return mha != nullptr; }
};

Layer make_layer(const std::string& kind, DType dtype) {
  Layer l;
  if (kind == "mha") {
    l.mha = std::make_shared<nn::MultiHeadAttention>(3, 2, 6, 0.0, 2, false, dtype);
  } else {
    l.sa = std::make_shared<nn::SelfAttentionV1>(3, 2, dtype);
  }
  return l;
}

void check_parameters(const std::vector<Parameter>& params, const std::string& prefix,
                      double tolerance) {
  for (const Parameter& p : params) {
    INFO("parameter " << p.name());
    if (tolerance == 0.0) {
      check_exact(p, goldens(kFile)[prefix + "." + p.name()]);
    } else {
      check_close(p, goldens(kFile)[prefix + "." + p.name()], tolerance, tolerance);
    }
  }
}

// The run of apps/train_attention.cpp, through the library; checks it against the goldens.
void check_training_run(const std::string& kind, DType dtype, double loss_rtol, double param_tol) {
  const std::string tag = kind + (dtype == DType::Float32 ? ".f32" : ".f64");
  const auto& g = goldens(kFile);
  Tape tape;
  TapeScope scope(tape);

  manual_seed(123);
  Layer student = make_layer(kind, dtype);
  manual_seed(456);
  Layer teacher = make_layer(kind, dtype);
  check_parameters(student.parameters(), tag + ".init", 0.0);
  check_parameters(teacher.parameters(), tag + ".teacher", 0.0);

  std::vector<double> target_values;
  Shape target_shape;
  {
    NoGradGuard no_grad;
    Tensor y = teacher(make_input(teacher.batched(), dtype));
    Tensor target = y + rand(y.shape(), dtype) * 0.1;
    check_close(target, g[tag + ".target"], 0.0, param_tol * 0.1);
    target_values = target.values();
    target_shape = target.shape();
  }

  SGD sgd(student.parameters(), kLr);
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    tape.reset();
    Tensor x = make_input(student.batched(), dtype);
    Tensor target = from_values(target_shape, target_values, dtype);
    sgd.zero_grad();
    Tensor loss = mse_loss(student(x), target);
    loss.backward();
    sgd.step();
    losses.push_back(loss.item());
  }

  tape.reset();
  Tensor loss_values = from_values({kSteps}, losses, dtype);
  check_close(loss_values, g[tag + ".losses"], 0.0, loss_rtol);
  check_parameters(student.parameters(), tag + ".final", param_tol);

  // The loss falls substantially (PyTorch: float32 459x / 586x, float64 45x / 53x).
  INFO(tag << ": loss " << losses.front() << " -> " << losses.back());
  CHECK(losses.back() < losses.front() / (dtype == DType::Float32 ? 100.0 : 20.0));
}

}  // namespace

TEST_CASE("train_attention: MultiHeadAttention float32 SGD follows PyTorch's trajectory",
          "[chapter3][train]") {
  check_training_run("mha", DType::Float32, 1e-5, 1e-5);
}

TEST_CASE("train_attention: MultiHeadAttention float64 SGD follows PyTorch's trajectory",
          "[chapter3][train]") {
  check_training_run("mha", DType::Float64, 1e-9, 1e-9);
}

TEST_CASE("train_attention: SelfAttention_v1 float32 SGD follows PyTorch's trajectory",
          "[chapter3][train]") {
  check_training_run("sa_v1", DType::Float32, 1e-5, 1e-5);
}

TEST_CASE("train_attention: SelfAttention_v1 float64 SGD follows PyTorch's trajectory",
          "[chapter3][train]") {
  check_training_run("sa_v1", DType::Float64, 1e-9, 1e-9);
}

// --- the program itself
// ----------------------------------------------------------------------------

namespace {

// The losses printed under each "== <title> (<dtype>) ..." header, by title.
std::map<std::string, std::vector<double>> printed_losses(const std::string& output) {
  std::map<std::string, std::vector<double>> out;
  std::istringstream lines(output);
  std::string line, section;
  while (std::getline(lines, line)) {
    if (line.rfind("== ", 0) == 0) {
      section = line.substr(3, line.find(' ', 3) - 3);
    } else if (line.rfind("step ", 0) == 0) {
      const size_t at = line.find("loss ");
      if (at != std::string::npos)
        out[section].push_back(std::strtod(line.c_str() + at + 5, nullptr));
    }
  }
  return out;
}

void check_program(const std::string& args, DType dtype, double rtol) {
  int status = -1;
  const std::string command = golden::app_binary("tapegrad-train-attention") + " " + args + " 2>&1";
  const std::string output = golden::run_program(command, &status);
  INFO("command: " << command << " (build the examples: cmake --build build)\noutput:\n"
                   << output.substr(0, 2000));
  REQUIRE(status == 0);
  const auto losses = printed_losses(output);
  const std::string suffix = dtype == DType::Float32 ? ".f32.losses" : ".f64.losses";
  for (const auto& [title, kind] :
       {std::pair<std::string, std::string>{"MultiHeadAttention", "mha"},
        {"SelfAttention_v1", "sa_v1"}}) {
    INFO(title);
    REQUIRE(losses.count(title) == 1);
    const auto& expected = goldens(kFile)[kind + suffix];
    const auto c = golden::compare_values(title + " printed losses",
                                          {static_cast<int64_t>(losses.at(title).size())}, dtype,
                                          losses.at(title), expected, 0.0, rtol);
    INFO(c.message);
    CHECK(c.ok);
  }
}

}  // namespace

TEST_CASE("example train_attention prints PyTorch's float32 losses",
          "[chapter3][examples][train]") {
  // Nine significant digits are printed: the comparison keeps the 1e-5 relative bound.
  check_program("", DType::Float32, 1e-5);
}

TEST_CASE("example train_attention --dtype float64 prints PyTorch's float64 losses",
          "[chapter3][examples][train]") {
  check_program("--dtype float64", DType::Float64, 1e-9);
}

TEST_CASE("example train_attention rejects bad options", "[chapter3][examples][train]") {
  int status = -1;
  const std::string output = golden::run_program(
      golden::app_binary("tapegrad-train-attention") + " --model gpt 2>&1", &status);
  CHECK(status != 0);
  CHECK(output.find("--model: gpt not in {mha,sa_v1,both}") != std::string::npos);  // CLI11's
}

TEST_CASE("example train_attention --dot/--svg draws MultiHeadAttention's last step",
          "[chapter3][examples][train][dot]") {
  const std::string dot_path = std::string(TAPEGRAD_BINARY_DIR) + "/train_attention_test.dot";
  const std::string svg_path = std::string(TAPEGRAD_BINARY_DIR) + "/train_attention_test.svg";
  std::remove(dot_path.c_str());
  std::remove(svg_path.c_str());
  int status = -1;
  const std::string output =
      golden::run_program(golden::app_binary("tapegrad-train-attention") + " --steps 2 --dot " +
                              dot_path + " --svg " + svg_path + " 2>&1",
                          &status);
  INFO(output);
  REQUIRE(status == 0);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string dot = slurp(dot_path);
  // One box per module and layer, the named tensors, the loss.
  for (const char* needle : {"digraph", "MultiHeadAttention", "W_query", "out_proj", "context_vec",
                             "causal_dot_product_attention", "mse_loss"}) {
    INFO(needle);
    CHECK(dot.find(needle) != std::string::npos);
  }
  // The fused attention the step ran, drawn as the book's ops with their shapes: heads
  // [B, H, T, D/H] = [2, 2, 6, 1], weights [2, 2, 6, 6], in a cluster named after the op.
  tapegrad::testing::check_attention_drawn_as_ops(dot, "[2, 2, 6, 1]", "[2, 2, 6, 6]");
  CHECK(tapegrad::testing::run_dot_program(dot, "train_attention_test") == 0);
  const std::string svg = slurp(svg_path);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("context_vec") != std::string::npos);
}
