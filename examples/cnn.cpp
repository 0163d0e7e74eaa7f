// A small convolutional network trained on 1×28×28 images: the program to copy for a first CNN.
//
// Two Conv2d + ReLU + MaxPool2d blocks and a Linear head (nn::Sequential), trained with SGD and
// momentum on mini-batches from data::TensorDataset + data::DataLoader, with the training loss
// and the accuracies printed per epoch and the test accuracy at the end. --dot draws the graph
// of one step, one cluster per layer (`dot -Tsvg cnn.dot -o cnn.svg`).
//
// The images are made here: nothing can be downloaded on the machines this runs on, and no
// installed package ships MNIST. Each is a seven-segment digit 0-9 (the label) drawn with a random
// size, position, stroke width and brightness over uniform noise, so the network has to find
// strokes wherever they are, as it would on handwritten digits.
//
// Shapes: N images per batch, 1 channel, 28×28 pixels; 10 classes.
#include <tapegrad/cli/cli.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace {

constexpr int64_t kSide = 28, kClasses = 10;

// Seven-segment digits: which of the segments a (top), b (upper right), c (lower right),
// d (bottom), e (lower left), f (upper left), g (middle) each digit lights.
constexpr std::array<const char*, kClasses> kSegments = {
    "abcdef", "bc", "abdeg", "abcdg", "bcfg", "acdfg", "acdefg", "abc", "abcdefg", "abcdfg"};

// A uniform integer in [low, high] from the generator (the program's own draws, so a seed gives
// the same images everywhere).
int64_t uniform_int(Generator& gen, int64_t low, int64_t high) {
  return low + static_cast<int64_t>(gen.random() % static_cast<uint32_t>(high - low + 1));
}

// A uniform float in [0, 1) from the generator (24 random bits, as torch.rand draws a float32).
float uniform(Generator& gen) {
  return static_cast<float>(gen.random() & ((1u << 24) - 1)) / static_cast<float>(1u << 24);
}

// Draws `digit` into one 28×28 image (row-major, values in [0, 1]).
void draw_digit(int digit, Generator& gen, float* image) {
  for (int64_t p = 0; p < kSide * kSide; ++p) image[p] = 0.3f * uniform(gen);
  const int64_t width = uniform_int(gen, 10, 16), height = uniform_int(gen, 16, 24);
  const int64_t left = uniform_int(gen, 1, kSide - 1 - width);
  const int64_t top = uniform_int(gen, 1, kSide - 1 - height);
  const int64_t stroke = uniform_int(gen, 2, 3);
  const float ink = 0.7f + 0.3f * uniform(gen);
  const int64_t right = left + width - stroke, middle = top + (height - stroke) / 2;
  const int64_t bottom = top + height - stroke;
  // Segment k as a rectangle: first row, first column, rows, columns.
  auto fill = [&](int64_t r0, int64_t c0, int64_t rows, int64_t cols) {
    for (int64_t r = r0; r < r0 + rows; ++r) {
      for (int64_t c = c0; c < c0 + cols; ++c) image[r * kSide + c] = ink;
    }
  };
  for (const char* s = kSegments[static_cast<size_t>(digit)]; *s != '\0'; ++s) {
    switch (*s) {
      case 'a':
        fill(top, left, stroke, width);
        break;
      case 'b':
        fill(top, right, middle - top + stroke, stroke);
        break;
      case 'c':
        fill(middle, right, bottom - middle + stroke, stroke);
        break;
      case 'd':
        fill(bottom, left, stroke, width);
        break;
      case 'e':
        fill(middle, left, bottom - middle + stroke, stroke);
        break;
      case 'f':
        fill(top, left, middle - top + stroke, stroke);
        break;
      case 'g':
        fill(middle, left, stroke, width);
        break;
    }
  }
}

// `count` images [count, 1, 28, 28] and their labels [count], the labels in turn 0, 1, ..., 9.
data::TensorDataset make_digits(int64_t count, uint64_t seed) {
  Generator gen(seed);
  Parameter images(Shape{count, 1, kSide, kSide});
  std::vector<int64_t> labels(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    labels[static_cast<size_t>(i)] = i % kClasses;
    draw_digit(static_cast<int>(i % kClasses), gen, images.data<float>() + i * kSide * kSide);
  }
  return data::TensorDataset({images, Ids(Shape{count}, labels)});
}

// The network: [N, 1, 28, 28] -> [N, 10] logits. Each layer is named, so each is one cluster in
// the drawing and its parameters are "conv1.weight", ... in the state_dict.
nn::Sequential make_cnn() {
  return nn::Sequential({
      std::make_shared<nn::Conv2d>(1, 16, 3, 1, 1, 1, 1, true, DType::Float32, "conv1"),
      std::make_shared<nn::ReLU>("relu1"),                                     // [N, 16, 28, 28]
      std::make_shared<nn::MaxPool2d>(2, std::nullopt, 0, 1, false, "pool1"),  // [N, 16, 14, 14]
      std::make_shared<nn::Conv2d>(16, 32, 3, 1, 1, 1, 1, true, DType::Float32, "conv2"),
      std::make_shared<nn::ReLU>("relu2"),                                     // [N, 32, 14, 14]
      std::make_shared<nn::MaxPool2d>(2, std::nullopt, 0, 1, false, "pool2"),  // [N, 32, 7, 7]
      std::make_shared<nn::Flatten>(1, -1, "flatten"),                         // [N, 1568]
      std::make_shared<nn::Linear>(32 * 7 * 7, kClasses, true, DType::Float32, "fc"),
  });
}

// How many of the batch's rows the logits [N, 10] classify right.
int64_t correct(const Tensor& logits, const Ids& labels) {
  const Ids predicted = argmax(logits, 1);
  int64_t right = 0;
  for (size_t i = 0; i < labels.values().size(); ++i) {
    right += predicted.values()[i] == labels.values()[i] ? 1 : 0;
  }
  return right;
}

// The share of `dataset` the model classifies right (eval mode, no graph kept).
double accuracy(nn::Sequential& model, const data::TensorDataset& dataset) {
  model.eval();
  NoGradGuard no_grad;
  Tape tape;
  int64_t right = 0;
  data::DataLoader loader(dataset, 256);
  for (const data::Batch& batch : loader) {
    tape.reset();
    TapeScope scope(tape);
    right += correct(model(batch.tensor(0)), batch.ids(1));
  }
  model.train();
  return static_cast<double>(right) / static_cast<double>(dataset.size());
}

}  // namespace

int main(int argc, char** argv) {
  int64_t epochs = 4, train_size = 2000, test_size = 500, batch_size = 32;
  double lr = 0.02;
  uint64_t seed = 123;
  std::string dot;
  CLI::App app(
      "Trains a small CNN (two Conv2d + ReLU + MaxPool2d blocks and a Linear) on 1x28x28 "
      "seven-segment digits generated here, printing the loss and accuracies per epoch.",
      "cnn");
  app.add_option("--epochs", epochs, "passes over the training set")->check(cli::positive());
  app.add_option("--train-size", train_size, "training images")->check(cli::positive());
  app.add_option("--test-size", test_size, "test images")->check(cli::positive());
  app.add_option("--batch-size", batch_size, "images per step")->check(cli::positive());
  app.add_option("--lr", lr, "SGD's learning rate (momentum 0.9)")->check(cli::positive_finite());
  app.add_option("--seed", seed, "seeds the images, the weights and the shuffles");
  app.add_option("--dot", dot, "write the graph of one training step here (Graphviz DOT)");
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return *exit_code;

  return cli::run("cnn", [&] {
    const data::TensorDataset train = make_digits(train_size, seed);
    const data::TensorDataset test = make_digits(test_size, seed + 1);
    manual_seed(seed);
    nn::Sequential model = make_cnn();
    SGD optimizer(model.parameters(), {.lr = lr, .momentum = 0.9});
    Generator shuffle(seed);
    data::DataLoader loader(train, batch_size, /*shuffle=*/true, /*drop_last=*/false, &shuffle);
    std::printf(
        "cnn: %lld parameters; %lld training and %lld test images of 1x28x28, %lld "
        "batches of %lld per epoch\n",
        static_cast<long long>(model.num_parameters()), static_cast<long long>(train.size()),
        static_cast<long long>(test.size()), static_cast<long long>(loader.size()),
        static_cast<long long>(batch_size));

    Tape tape;  // one graph per step, its memory kept from step to step
    for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
      double loss_sum = 0;
      int64_t right = 0;
      for (const data::Batch& batch : loader) {
        tape.reset();
        TapeScope scope(tape);
        optimizer.zero_grad();
        const Tensor logits = model(batch.tensor(0));             // [N, 10]
        const Tensor loss = cross_entropy(logits, batch.ids(1));  // []
        loss.backward();
        optimizer.step();
        const auto n = static_cast<int64_t>(batch.ids(1).values().size());
        loss_sum += loss.item() * static_cast<double>(n);
        right += correct(logits, batch.ids(1));
      }
      std::printf("epoch %lld/%lld: train loss %.4f, train accuracy %.1f%%, test accuracy %.1f%%\n",
                  static_cast<long long>(epoch), static_cast<long long>(epochs),
                  loss_sum / static_cast<double>(train.size()),
                  100.0 * static_cast<double>(right) / static_cast<double>(train.size()),
                  100.0 * accuracy(model, test));
      std::fflush(stdout);
    }
    const double final_accuracy = accuracy(model, test);
    std::printf(
        "final test accuracy: %.1f%% (%lld of %lld)\n", 100.0 * final_accuracy,
        static_cast<long long>(std::llround(final_accuracy * static_cast<double>(test.size()))),
        static_cast<long long>(test.size()));

    if (!dot.empty()) {
      // One training step's graph on 4 test images: forward and backward, each layer a cluster.
      tape.reset();
      TapeScope scope(tape);
      std::vector<int64_t> rows;
      for (int64_t i = 0; i < std::min<int64_t>(4, test.size()); ++i) rows.push_back(i);
      const data::Batch batch = test.batch(rows);
      const Tensor loss = cross_entropy(model(batch.tensor(0)), batch.ids(1));
      loss.backward({.retain_graph = true});
      std::ofstream out(dot);
      write_dot(tape, out, {.backward = true, .title = "cnn: one training step"});
      if (!out.flush()) throw Error("--dot: cannot write " + dot);
      std::printf("graph of one step written to %s\n", dot.c_str());
    }
    return 0;
  });
}
