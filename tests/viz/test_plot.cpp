// plot_attention (viz/plot.cpp): bad input throws before anything runs, a missing gnuplot is a
// clear Error, and with gnuplot a real PNG comes out (also from ch03_05's --heatmap).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/shape.h>
#include <tapegrad/viz/plot.h>
#include "tests/examples/chapter3_goldens.h"

using namespace tapegrad;
namespace fs = std::filesystem;

namespace {

// Causal weights [H, T, T]: row i spreads over keys 0..i, tilted differently per head.
std::vector<double> causal_weights(int64_t H, int64_t T) {
  std::vector<double> w(static_cast<size_t>(H * T * T), 0.0);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i = 0; i < T; ++i) {
      double total = 0;
      for (int64_t j = 0; j <= i; ++j) total += 1.0 + static_cast<double>((h + 1) * j);
      for (int64_t j = 0; j <= i; ++j) {
        w[static_cast<size_t>((h * T + i) * T + j)] =
            (1.0 + static_cast<double>((h + 1) * j)) / total;
      }
    }
  }
  return w;
}

bool have_gnuplot() {
  return std::system("command -v gnuplot > /dev/null 2>&1") == 0;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint32_t big_endian(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t k = 0; k < 4; ++k) v = v << 8 | static_cast<unsigned char>(bytes[at + k]);
  return v;
}

// A PNG: its signature, an IHDR chunk first, and the image size it declares (width, height).
std::pair<uint32_t, uint32_t> check_png(const fs::path& path) {
  const std::string png = read_bytes(path);
  INFO(path.string() << ": " << png.size() << " bytes");
  REQUIRE(png.size() > 24);
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(png.substr(12, 4) == "IHDR");
  return {big_endian(png, 16), big_endian(png, 20)};
}

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() /
         ("tapegrad_test_plot_" + std::to_string(getpid()) + "_" + name);
}

// Sets an environment variable for one scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("plot_attention: bad shapes and inputs throw before anything runs", "[text][plot]") {
  const std::vector<std::string> tokens{"a", "b", "c"};
  const std::vector<double> w = causal_weights(2, 3);  // [2, 3, 3]
  const std::string out = scratch("never.png").string();
  CHECK_THROWS_WITH(plot_attention(out, Shape({3, 3}), std::span(w).first(9), tokens),
                    Catch::Contains("plot_attention") && Catch::Contains("[3, 3]") &&
                        Catch::Contains("[H, T, T]"));
  CHECK_THROWS_WITH(plot_attention(out, Shape({2, 3, 4}), w, tokens),
                    Catch::Contains("[2, 3, 4]") && Catch::Contains("[H, T, T]"));
  CHECK_THROWS_WITH(plot_attention(out, Shape({0, 3, 3}), {}, tokens),
                    Catch::Contains("[0, 3, 3]"));
  CHECK_THROWS_WITH(plot_attention(out, Shape({2, 3, 3}), std::span(w).first(17), tokens),
                    Catch::Contains("needs 18 values, got 17"));
  CHECK_THROWS_WITH(plot_attention(out, Shape({2, 3, 3}), w, {"a", "b"}),
                    Catch::Contains("2 tokens") && Catch::Contains("T = 3"));
  std::vector<double> nan = w;
  nan[4] = std::nan("");
  CHECK_THROWS_WITH(plot_attention(out, Shape({2, 3, 3}), nan, tokens),
                    Catch::Contains("non-finite") && Catch::Contains("flat index 4"));
  CHECK_THROWS_WITH(plot_attention("", Shape({2, 3, 3}), w, tokens),
                    Catch::Contains("png_path is empty"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("plot_attention: a missing gnuplot is a clear Error and writes nothing", "[text][plot]") {
  const fs::path out = scratch("missing.png");
  const std::vector<double> w = causal_weights(1, 2);
  ScopedEnv env("TAPEGRAD_GNUPLOT", "/nonexistent/gnuplot");
  CHECK_THROWS_WITH(plot_attention(out.string(), Shape({1, 2, 2}), w, {"x", "y"}),
                    Catch::Contains("gnuplot not found") && Catch::Contains("gnuplot-nox") &&
                        Catch::Contains(out.string()));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("plot_attention: gnuplot draws a PNG of every head", "[text][plot]") {
  if (!have_gnuplot()) {
    WARN("gnuplot is not installed: the PNG is not checked (install gnuplot-nox)");
    return;
  }
  const fs::path out = scratch("heads.png");
  // Tokens that need care in a gnuplot script: quotes, a backslash, a newline, a space, a
  // lone byte that is not UTF-8, an accented letter.
  const std::vector<std::string> tokens{"it's", "\\", "\n", " the", "\xE2", "caf\xC3\xA9"};
  const std::vector<double> w = causal_weights(2, 6);
  plot_attention(out.string(), Shape({2, 6, 6}), w, tokens, "two heads, six \"tokens\"");
  const auto [width, height] = check_png(out);
  CHECK(width > 400);  // two panels side by side
  CHECK(height > 200);
  CHECK(width > height);
  CHECK(fs::file_size(out) > 10000);  // drawn, not blank: labels, cells and colour bar

  // Six heads: two rows of panels (four, then two); a long sequence: no numbers in the cells.
  const std::vector<double> w6 = causal_weights(6, 40);
  const std::vector<std::string> many(40, "t");
  plot_attention(out.string(), Shape({6, 40, 40}), w6, many);
  const auto [width6, height6] = check_png(out);
  CHECK(height6 > height);
  CHECK(width6 > width);
  fs::remove(out);
}

TEST_CASE("plot_attention: a failing gnuplot leaves the old file and says why", "[text][plot]") {
  const fs::path out = scratch("keep.png");
  { std::ofstream(out) << "old"; }
  ScopedEnv env("TAPEGRAD_GNUPLOT", "/bin/false");
  const std::vector<double> w = causal_weights(1, 2);
  CHECK_THROWS_WITH(plot_attention(out.string(), Shape({1, 2, 2}), w, {"x", "y"}),
                    Catch::Contains("/bin/false failed (exit status 1)"));
  CHECK(read_bytes(out) == "old");
  fs::remove(out);
}

TEST_CASE("example ch03_05_multihead_attention --heatmap draws chapter 3's weights",
          "[text][plot][examples]") {
  namespace golden = tapegrad::testing::chapter3;
  const std::string program = golden::example_binary("ch03_05_multihead_attention");
  int status = -1;
  const std::string plain = golden::run_program(program + " 2>/dev/null", &status);
  INFO("program: " << program << " (build the examples: cmake --build build)");
  REQUIRE(status == 0);
  const std::string help = golden::run_program(program + " --help 2>&1", &status);
  CHECK(status == 0);
  CHECK(help.find("--heatmap FILE") != std::string::npos);
  const std::string usage = golden::run_program(program + " --heatmap 2>&1", &status);
  CHECK(WEXITSTATUS(status) == 2);  // a usage error: --heatmap without its FILE
  CHECK(usage.find("--heatmap") != std::string::npos);
  if (!have_gnuplot()) {
    WARN("gnuplot is not installed: --heatmap is not run (install gnuplot-nox)");
    return;
  }
  const fs::path out = scratch("ch03.png");
  const std::string with_heatmap =
      golden::run_program(program + " --heatmap '" + out.string() + "' 2>/dev/null", &status);
  CHECK(status == 0);
  CHECK(with_heatmap == plain);  // the printed output is the same with the flag
  const auto [width, height] = check_png(out);
  CHECK(width > height);  // two heads side by side
  CHECK(fs::file_size(out) > 10000);
  fs::remove(out);
}

TEST_CASE("plot_values: the book's training curves, and bad series", "[text][plot]") {
  const fs::path out = scratch("values.png");
  const std::vector<double> epochs{0, 0.5, 1}, seen{0, 80, 160}, train{1.2, 0.7, 0.4},
      val{1.3, 0.9, 0.6};
  CHECK_THROWS_WITH(plot_values(out.string(), epochs, seen, train, std::vector<double>{1.0}),
                    Catch::Contains("plot_values") && Catch::Contains("same number of points"));
  CHECK_THROWS_WITH(plot_values("", epochs, seen, train, val), Catch::Contains("png_path"));
  {
    ScopedEnv env("TAPEGRAD_GNUPLOT", "/nonexistent/gnuplot");
    CHECK_THROWS_WITH(plot_values(out.string(), epochs, seen, train, val),
                      Catch::Contains("plot_values: gnuplot not found"));
  }
  CHECK_FALSE(fs::exists(out));
  if (!have_gnuplot()) {
    WARN("gnuplot is not installed: the PNG is not checked (install gnuplot-nox)");
    return;
  }
  plot_values(out.string(), epochs, seen, train, val, "accuracy");
  const auto [width, height] = check_png(out);
  CHECK(width == 800);
  CHECK(height == 480);
  plot_values(out.string(), std::vector<double>{0}, std::vector<double>{0}, std::vector<double>{1},
              std::vector<double>{1});  // one point: autoscaled axes
  fs::remove(out);
}
