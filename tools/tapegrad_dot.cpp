// tapegrad-dot: draws the graph of a chapter-3 attention model as DOT, SVG or PNG.
//
//   tapegrad-dot --model multihead -o mha.dot --svg mha.svg
//   tapegrad-dot --model multihead-wrapper --collapse-heads --backward --png wrapper.png
//   tapegrad-dot --model causal -o tests/goldens/dot/causal.dot    (regenerates a golden)
//
// The DOT is byte-identical from run to run for the same flags. SVG and PNG are rendered
// in-process by Graphviz's libgvc (the dot layout engine).
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "graph/dot.h"
#include "graph/error.h"
#include "tools/cli.h"
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

struct Arguments {
  std::string model;
  tools::ModelSizes sizes;
  std::string dot_path, svg_path, png_path;
  DotOptions dot;
  bool title_given = false;
};

// Fills `a` from the command line (tools/cli.h: --help and --list-models exit 0, a bad value
// exits 2).
std::optional<int> parse(int argc, char** argv, Arguments& a) {
  CLI::App app(
      "Builds one of the chapter-3 attention models of \"Build a Large Language Model (From "
      "Scratch)\", runs its forward pass, a loss (the sum of its output) and backward, and draws "
      "the tape. The DOT goes to standard output when none of -o, --svg, --png is given.",
      "tapegrad-dot");
  bool list_models = false;
  std::string models;
  for (std::string_view m : tools::model_names())
    models += (models.empty() ? "" : " | ") + std::string(m);

  const std::string model = "model";
  app.add_option("--model", a.model, models)->group(model);
  app.add_option("--batch", a.sizes.batch, "batch size (the causal and multi-head models)")
      ->capture_default_str()
      ->check(cli::positive())
      ->group(model);
  app.add_option("--seq", a.sizes.seq, "tokens, also the context length")
      ->capture_default_str()
      ->check(cli::positive())
      ->group(model);
  app.add_option("--d-in", a.sizes.d_in, "input embedding size")
      ->capture_default_str()
      ->check(cli::positive())
      ->group(model);
  app.add_option("--d-out", a.sizes.d_out, "output size (per head in the wrapper)")
      ->capture_default_str()
      ->check(cli::positive())
      ->group(model);
  app.add_option("--heads", a.sizes.heads, "number of heads")
      ->capture_default_str()
      ->check(cli::positive())
      ->group(model);
  app.add_option("--dropout", a.sizes.dropout, "dropout on the attention weights (the book: 0.0)")
      ->capture_default_str()
      ->check(cli::probability())
      ->group(model);
  app.add_option("--seed", a.sizes.seed, "parameter seed (default: the book's, 123, or 789 for v2)")
      ->group(model);
  app.add_flag("--list-models", list_models, "print the model names and exit")->group(model);

  const std::string output = "output";
  app.add_option("-o", a.dot_path, "write the DOT text (FILE.dot)")->group(output);
  app.add_option("--svg", a.svg_path, "render with Graphviz (libgvc, in-process)")->group(output);
  app.add_option("--png", a.png_path, "render with Graphviz (libgvc, in-process)")->group(output);

  const std::string drawing = "drawing";
  app.add_flag("--backward", a.dot.backward,
               "draw the backward pass: each op's backward and the leaves' gradients")
      ->group(drawing);
  app.add_flag("--values", a.dot.values, "print the values (and gradients) of small tensors")
      ->group(drawing);
  app.add_option("--max-values", a.dot.max_values, "\"small\": at most N elements")
      ->capture_default_str()
      ->check(cli::non_negative())
      ->group(drawing);
  app.add_flag("--collapse-heads", a.dot.collapse_heads,
               "draw the first of the heads \"head 0\", \"head 1\", ... once, marked xH")
      ->group(drawing);
  app.add_flag("--saved-bytes", a.dot.saved_bytes, "show the bytes each op keeps for its backward")
      ->group(drawing);
  app.add_option("--rankdir", a.dot.rankdir, "TB (top to bottom) or LR")
      ->capture_default_str()
      ->check(CLI::IsMember({"TB", "LR"}))
      ->group(drawing);
  app.add_option("--title", a.dot.title, "the heading (default: the model's name and sizes)")
      ->group(drawing);
  bool no_legend = false, no_edge_labels = false;
  app.add_flag("--no-legend", no_legend, "leave the legend out")->group(drawing);
  app.add_flag("--no-edge-labels", no_edge_labels, "leave the shapes off the edges")
      ->group(drawing);

  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return exit_code;
  if (list_models) {
    for (std::string_view m : tools::model_names()) std::cout << m << "\n";
    return 0;
  }
  if (a.model.empty()) {
    std::cerr << "tapegrad-dot: --model is required\n(tapegrad-dot --help lists the options)\n";
    return cli::kUsageError;
  }
  a.title_given = app.count("--title") > 0;
  a.dot.legend = !no_legend;
  a.dot.edge_labels = !no_edge_labels;
  return std::nullopt;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw Error("cannot write \"" + path + "\"");
}

}  // namespace

int main(int argc, char** argv) {
  Arguments a;
  if (const std::optional<int> exit_code = parse(argc, argv, a)) return *exit_code;
  try {
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
  } catch (const std::exception& e) {
    std::cerr << "tapegrad-dot: " << e.what() << "\n";
    return 1;
  }
}
