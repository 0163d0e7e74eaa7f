// tapegrad-dot: draws the graph of a chapter-3 attention model as DOT, SVG or PNG.
//
//   tapegrad-dot --model multihead -o mha.dot --svg mha.svg
//   tapegrad-dot --model multihead-wrapper --collapse-heads --backward --png wrapper.png
//   tapegrad-dot --model causal -o tests/goldens/dot/causal.dot    (regenerates a golden)
//
// The DOT is byte-identical from run to run for the same flags. SVG and PNG are rendered
// in-process by Graphviz's libgvc (the dot layout engine).
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "graph/dot.h"
#include "graph/error.h"
#include "tools/models.h"

using namespace tapegrad;

#if defined(__SANITIZE_ADDRESS__)
// Graphviz's libgvc and the pango/fontconfig/cairo it loads keep allocations for the life of
// the process; LeakSanitizer would report them at exit.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libgvc\nleak:libcgraph\nleak:libgvplugin\nleak:libpango\nleak:libfontconfig\n"
         "leak:libglib\nleak:libcairo\nleak:libgobject\n";
}
#endif

namespace {

constexpr const char* kUsage = R"usage(usage: tapegrad-dot --model NAME [options]

Builds one of the chapter-3 attention models of "Build a Large Language Model (From Scratch)",
runs its forward pass, a loss (the sum of its output) and backward, and draws the tape.

model:
  --model NAME        simplified | self-attention-v1 | self-attention-v2 | causal |
                      multihead-wrapper | multihead
  --batch N           batch size (default 2; the causal and multi-head models)
  --seq N             tokens, also the context length (default 6)
  --d-in N            input embedding size (default 3)
  --d-out N           output size (per head in the wrapper; default 2)
  --heads N           number of heads (default 2)
  --dropout P         dropout on the attention weights (default 0.0, as the book)
  --seed S            parameter seed (default: the book's, 123, or 789 for v2)

output (the DOT goes to standard output when none of -o, --svg, --png is given):
  -o FILE.dot         write the DOT text
  --svg FILE.svg      render with Graphviz (libgvc, in-process)
  --png FILE.png      render with Graphviz (libgvc, in-process)

drawing:
  --backward          draw the backward pass: each op's backward and the leaves' gradients
  --values            print the values (and gradients) of small tensors in their nodes
  --max-values N      "small": at most N elements (default 24)
  --collapse-heads    draw the first of the heads "head 0", "head 1", ... once, marked xH
  --saved-bytes       show the bytes each op keeps for its backward
  --rankdir DIR       TB (top to bottom, default) or LR
  --title TEXT        the heading (default: the model's name and sizes)
  --no-legend         leave the legend out
  --no-edge-labels    leave the shapes off the edges
  --list-models       print the model names and exit
  -h, --help          print this help and exit
)usage";

struct UsageError {
  std::string message;
};

struct Arguments {
  std::string model;
  tools::ModelSizes sizes;
  std::string dot_path, svg_path, png_path;
  DotOptions dot;
  bool title_given = false;
};

int64_t parse_int(std::string_view flag, std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw UsageError{std::string(flag) + " expects an integer, got \"" + std::string(text) + "\""};
  }
  return value;
}

double parse_double(std::string_view flag, std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) {
    throw UsageError{std::string(flag) + " expects a number, got \"" + s + "\""};
  }
  return value;
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view flag = args[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= args.size()) throw UsageError{std::string(flag) + " needs a value"};
      return args[++i];
    };
    if (flag == "-h" || flag == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (flag == "--list-models") {
      for (std::string_view m : tools::model_names()) std::cout << m << "\n";
      std::exit(0);
    } else if (flag == "--model") {
      a.model = value();
    } else if (flag == "--batch") {
      a.sizes.batch = parse_int(flag, value());
    } else if (flag == "--seq") {
      a.sizes.seq = parse_int(flag, value());
    } else if (flag == "--d-in") {
      a.sizes.d_in = parse_int(flag, value());
    } else if (flag == "--d-out") {
      a.sizes.d_out = parse_int(flag, value());
    } else if (flag == "--heads") {
      a.sizes.heads = parse_int(flag, value());
    } else if (flag == "--dropout") {
      a.sizes.dropout = parse_double(flag, value());
    } else if (flag == "--seed") {
      a.sizes.seed = parse_int(flag, value());
    } else if (flag == "-o") {
      a.dot_path = value();
    } else if (flag == "--svg") {
      a.svg_path = value();
    } else if (flag == "--png") {
      a.png_path = value();
    } else if (flag == "--backward") {
      a.dot.backward = true;
    } else if (flag == "--values") {
      a.dot.values = true;
    } else if (flag == "--max-values") {
      a.dot.max_values = parse_int(flag, value());
    } else if (flag == "--collapse-heads") {
      a.dot.collapse_heads = true;
    } else if (flag == "--saved-bytes") {
      a.dot.saved_bytes = true;
    } else if (flag == "--rankdir") {
      a.dot.rankdir = value();
      if (a.dot.rankdir != "TB" && a.dot.rankdir != "LR") {
        throw UsageError{"--rankdir must be TB or LR, got \"" + a.dot.rankdir + "\""};
      }
    } else if (flag == "--title") {
      a.dot.title = value();
      a.title_given = true;
    } else if (flag == "--no-legend") {
      a.dot.legend = false;
    } else if (flag == "--no-edge-labels") {
      a.dot.edge_labels = false;
    } else {
      throw UsageError{"unknown option \"" + std::string(flag) + "\""};
    }
  }
  if (a.model.empty()) throw UsageError{"--model is required"};
  return a;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw Error("cannot write \"" + path + "\"");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Arguments a = parse(argc, argv);
    Tape tape;
    const tools::BuiltModel model = tools::build_model(tape, a.model, a.sizes);
    model.loss.backward({.retain_graph = true});
    if (!a.title_given) a.dot.title = model.title + "\n" + model.description;
    const std::string dot = to_dot(tape, a.dot);
    if (!a.dot_path.empty()) write_file(a.dot_path, dot);
    if (!a.svg_path.empty()) render(dot, "svg", a.svg_path);
    if (!a.png_path.empty()) render(dot, "png", a.png_path);
    if (a.dot_path.empty() && a.svg_path.empty() && a.png_path.empty()) std::cout << dot;
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "tapegrad-dot: " << e.message << "\n(tapegrad-dot --help lists the options)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tapegrad-dot: " << e.what() << "\n";
    return 1;
  }
}
