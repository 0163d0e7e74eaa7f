// tapegrad-dot: draws the graph of a chapter-3 attention model or the chapter-4 GPT as DOT, SVG
// or PNG.
//
//   tapegrad-dot --model multihead -o mha.dot --svg mha.svg
//   tapegrad-dot --model gpt --svg gpt.svg           (GPT_CONFIG_124M, one block drawn, ×12)
//   tapegrad-dot --model multihead-wrapper --collapse-heads --backward --png wrapper.png
//   tapegrad-dot --model causal -o tests/goldens/dot/causal.dot    (regenerates a golden)
//
// The DOT is byte-identical from run to run for the same flags. SVG and PNG are rendered
// in-process by Graphviz's libgvc (the dot layout engine).
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include <tapegrad/cli/cli.h>
#include <tapegrad/graph/error.h>
#include <tapegrad/io/atomic_file.h>
#include <tapegrad/viz/dot.h>
#include "apps/dot_models.h"

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

// Fills `a` from the command line (cli/cli.h: --help and --list-models exit 0, a bad value
// exits 2).
std::optional<int> parse(int argc, char** argv, Arguments& a) {
  CLI::App app(
      "Builds one of the chapter-3 attention models of \"Build a Large Language Model (From "
      "Scratch)\", or its chapter-4 GPT, runs its forward pass, a loss (the sum of the output; "
      "for gpt, the cross entropy of its logits) and backward, and draws the tape. The DOT goes "
      "to standard output when none of -o, --svg, --png is given. For gpt, the identical "
      "TransformerBlocks are drawn once, marked xN (--no-collapse-repeats draws them all); the "
      "124M config takes ~650 MB of weights.",
      "tapegrad-dot");
  bool list_models = false;
  std::string models;
  for (std::string_view m : tools::model_names())
    models += (models.empty() ? "" : " | ") + std::string(m);

  const std::string model = "model";
  app.add_option("--model", a.model, models)->group(model);
  app.add_option("--batch", a.sizes.batch, "batch size (the causal, multi-head and gpt models)")
      ->check(cli::positive())
      ->group(model);
  app.add_option("--seq", a.sizes.seq, "tokens, also the context length (gpt: tokens, default 3)")
      ->check(cli::positive())
      ->group(model);
  app.add_option("--d-in", a.sizes.d_in, "input embedding size")
      ->check(cli::positive())
      ->group(model);
  app.add_option("--d-out", a.sizes.d_out, "output size (per head in the wrapper)")
      ->check(cli::positive())
      ->group(model);
  app.add_option("--heads", a.sizes.heads, "number of heads (gpt: n_heads, default 12)")
      ->check(cli::positive())
      ->group(model);
  app.add_option("--dropout", a.sizes.dropout,
                 "dropout on the attention weights (the book: 0.0; gpt: drop_rate, default 0.1)")
      ->check(cli::probability())
      ->group(model);
  app.add_option("--seed", a.sizes.seed, "parameter seed (default: the book's, 123, or 789 for v2)")
      ->group(model);
  app.add_flag("--list-models", list_models, "print the model names and exit")->group(model);

  // gpt's GPTConfig (default: the book's GPT_CONFIG_124M); --heads, --dropout, --batch and --seq
  // above set n_heads, drop_rate, the batch and the tokens.
  const std::string gpt = "gpt (default: GPT_CONFIG_124M)";
  nn::GPTConfig& cfg = a.sizes.gpt;
  app.add_option("--vocab", cfg.vocab_size, "vocab_size")->check(cli::positive())->group(gpt);
  app.add_option("--context", cfg.context_length, "context_length")
      ->check(cli::positive())
      ->group(gpt);
  app.add_option("--emb", cfg.emb_dim, "emb_dim (divisible by --heads)")
      ->check(cli::positive())
      ->group(gpt);
  app.add_option("--layers", cfg.n_layers, "n_layers, the TransformerBlocks")
      ->check(cli::positive())
      ->group(gpt);
  app.add_flag("--qkv-bias", cfg.qkv_bias, "biases on W_query, W_key, W_value")->group(gpt);

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
      ->check(cli::non_negative())
      ->group(drawing);
  app.add_flag("--collapse-heads", a.dot.collapse_heads,
               "draw the first of the heads \"head 0\", \"head 1\", ... once, marked xH")
      ->group(drawing);
  bool collapse_repeats = false, no_collapse_repeats = false;
  app.add_flag("--collapse-repeats", collapse_repeats,
               "draw the first of identical numbered modules (\"TransformerBlock 0\", ...) once, "
               "marked xN (the default for gpt)")
      ->group(drawing);
  app.add_flag("--no-collapse-repeats", no_collapse_repeats, "draw every repeated module")
      ->group(drawing);
  app.add_flag("--saved-bytes", a.dot.saved_bytes, "show the bytes each op keeps for its backward")
      ->group(drawing);
  app.add_option("--rankdir", a.dot.rankdir, "TB (top to bottom) or LR")
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
  if (a.model == "gpt") {
    // The shared options, when given, set gpt's sizes; the chapter-3 ones do not apply.
    for (const char* option : {"--d-in", "--d-out"}) {
      if (app.count(option) > 0) {
        std::cerr << "tapegrad-dot: " << option << " does not apply to --model gpt (--emb sets "
                  << "emb_dim)\n";
        return cli::kUsageError;
      }
    }
    if (app.count("--heads") > 0) cfg.n_heads = a.sizes.heads;
    if (app.count("--dropout") > 0) cfg.drop_rate = a.sizes.dropout;
    if (app.count("--seq") > 0) a.sizes.tokens = a.sizes.seq;
    a.dot.collapse_repeats = !no_collapse_repeats;
  } else {
    for (const char* option : {"--vocab", "--context", "--emb", "--layers", "--qkv-bias"}) {
      if (app.count(option) > 0) {
        std::cerr << "tapegrad-dot: " << option << " applies to --model gpt only\n";
        return cli::kUsageError;
      }
    }
    a.dot.collapse_repeats = collapse_repeats && !no_collapse_repeats;
  }
  a.title_given = app.count("--title") > 0;
  a.dot.legend = !no_legend;
  a.dot.edge_labels = !no_edge_labels;
  return std::nullopt;
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
    // Each output: a failure names its option ("-o: cannot create ...").
    auto output = [](const char* option, auto write) {
      try {
        write();
      } catch (const Error& e) {
        throw Error(option + std::string(": ") + e.what());
      }
    };
    if (!a.dot_path.empty()) output("-o", [&] { write_file_atomically(a.dot_path, dot); });
    if (!a.svg_path.empty()) output("--svg", [&] { render(dot, "svg", a.svg_path); });
    if (!a.png_path.empty()) output("--png", [&] { render(dot, "png", a.png_path); });
    if (a.dot_path.empty() && a.svg_path.empty() && a.png_path.empty()) {
      std::cout << dot;  // the drawing itself is the output: nothing else on stdout
      return 0;
    }
    std::string wrote;
    for (const std::string* path : {&a.dot_path, &a.svg_path, &a.png_path}) {
      if (!path->empty()) wrote += (wrote.empty() ? "" : ", ") + *path;
    }
    std::cout << "tapegrad-dot: wrote " << wrote << ": --model " << a.model << " (" << model.title
              << ")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << cli::error_message("tapegrad-dot", e.what()) << "\n";
    return 1;
  }
}
