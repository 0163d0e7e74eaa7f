// Tests for apps/dot.cpp and apps/dot_models.cpp: goldens, Graphviz, and graph structure.
//
// Built only when the tool is (TAPEGRAD_BUILD_EXAMPLES). Regenerating the goldens: see
// tests/goldens/dot/README.md.
#ifdef TAPEGRAD_HAVE_DOT_TOOL

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/viz/dot.h>
#include <tapegrad/viz/graph_view.h>
#include "apps/dot_models.h"
#include "tests/viz/dot_testing.h"

using namespace tapegrad;
using tapegrad::testing::check_attention_drawn_as_ops;
using tapegrad::testing::check_golden;
using tapegrad::testing::read_text_file;
using tapegrad::testing::run_dot_program;
using tapegrad::testing::scratch_path;

namespace {

// Runs the tool with `args`; returns its exit status, its stderr in `errors`.
int run_tool(const std::string& args, std::string* errors = nullptr) {
  // One file per process: ctest runs these test cases in parallel processes.
  const std::string err_path = scratch_path("tool_stderr." + std::to_string(::getpid()) + ".txt");
  std::filesystem::create_directories(std::filesystem::path(err_path).parent_path());
  const std::string command =
      std::string("\"") + TAPEGRAD_DOT_TOOL + "\" " + args + " 2> \"" + err_path + "\"";
  const int status = std::system(command.c_str());
  if (errors != nullptr) *errors = read_text_file(err_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The tool's DOT for `args` (written with -o to a scratch file named `name`).
std::string tool_dot(const std::string& args, const std::string& name) {
  const std::string path = scratch_path(name + ".dot");
  std::filesystem::remove(path);
  std::string errors;
  INFO("tapegrad-dot " << args);
  REQUIRE(run_tool(args + " -o \"" + path + "\"", &errors) == 0);
  INFO(errors);
  return read_text_file(path);
}

int graphviz_accepts(const std::string& dot_path) {
  const std::string command = std::string("\"") + TAPEGRAD_DOT_PROGRAM + "\" -Tsvg \"" + dot_path +
                              "\" -o \"" + dot_path + ".svg\"";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string golden(const std::string& name) {
  return std::string(TAPEGRAD_GOLDEN_DIR) + "/dot/" + name + ".dot";
}

// A GPT small enough for a test, through the tool's own code path (tools::build_model "gpt"):
// 3 blocks, 2 heads, 8-dim embeddings, a vocabulary of 50, 4 tokens.
const tools::ModelSizes kSmallGpt = {.gpt = {.vocab_size = 50,
                                             .context_length = 8,
                                             .emb_dim = 8,
                                             .n_heads = 2,
                                             .n_layers = 3,
                                             .drop_rate = 0.1,
                                             .qkv_bias = false},
                                     .tokens = 4};
const std::string kSmallGptArgs =
    "--model gpt --vocab 50 --context 8 --emb 8 --heads 2 --layers 3 --seq 4";

// The ids of the nodes a DOT text declares ("n12", "g3"), in order.
std::vector<std::string> node_ids(const std::string& dot) {
  std::vector<std::string> ids;
  std::istringstream lines(dot);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || (line[start] != 'n' && line[start] != 'g')) continue;
    const size_t end = line.find(" [shape=", start);
    if (end == std::string::npos) continue;
    const std::string id = line.substr(start, end - start);
    if (id.size() > 1 &&
        std::all_of(id.begin() + 1, id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      ids.push_back(id);
    }
  }
  return ids;
}

// The line declaring node `id` ("n12"), or empty.
std::string node_line(const std::string& dot, const std::string& id) {
  std::istringstream lines(dot);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, id.size() + 8, id + " [shape=") == 0) {
      return line;
    }
  }
  return "";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The scopes named `name` in the view.
std::vector<int32_t> scopes_named(const GraphView& view, const std::string& name) {
  std::vector<int32_t> out;
  for (size_t s = 0; s < view.scopes.size(); ++s) {
    if (view.scopes[s].name == name) out.push_back(static_cast<int32_t>(s));
  }
  return out;
}

}  // namespace

// --- goldens: the tool's output, byte for byte -----------------------------------------------

TEST_CASE("tapegrad-dot: golden DOT of every chapter-3 model", "[tapegrad-dot][golden]") {
  for (std::string_view model : tools::model_names()) {
    if (model == "gpt") continue;  // 124M by default: its golden is a small config, below
    const std::string name(model);
    check_golden(tool_dot("--model " + name, name), golden(name));
  }
}

TEST_CASE("tapegrad-dot: golden DOT with backward, collapsed heads, saved bytes, values, dropout",
          "[tapegrad-dot][golden]") {
  check_golden(tool_dot("--model multihead --backward --saved-bytes", "multihead_backward"),
               golden("multihead_backward"));
  check_golden(tool_dot("--model multihead-wrapper --collapse-heads", "wrapper_collapsed"),
               golden("multihead-wrapper_collapsed"));
  check_golden(tool_dot("--model simplified --backward --values", "simplified_values"),
               golden("simplified_backward_values"));
  check_golden(tool_dot("--model causal --dropout 0.5", "causal_dropout"),
               golden("causal_dropout"));
}

TEST_CASE("tapegrad-dot: the same flags give byte-identical DOT", "[tapegrad-dot]") {
  const std::string args = "--model multihead --backward --values --saved-bytes";
  CHECK(tool_dot(args, "run1") == tool_dot(args, "run2"));
  // In-process too, through the model builders and write_dot.
  auto draw = [] {
    Tape tape;
    tools::BuiltModel m = tools::build_model(tape, "multihead-wrapper");
    m.loss.backward();
    return to_dot(tape, {.backward = true, .values = true});
  };
  CHECK(draw() == draw());
}

// --- Graphviz accepts everything the tool writes ----------------------------------------------

TEST_CASE("tapegrad-dot: Graphviz's dot accepts every model's DOT", "[tapegrad-dot][graphviz]") {
  const std::vector<std::string> variants = {"", "--backward", "--collapse-heads",
                                             "--values --saved-bytes --backward",
                                             "--rankdir LR --no-legend --no-edge-labels"};
  int i = 0;
  for (std::string_view model : tools::model_names()) {
    if (model == "gpt") continue;  // below, on a small config
    for (const std::string& flags : variants) {
      const std::string path = scratch_path("accepts" + std::to_string(i++) + ".dot");
      INFO("tapegrad-dot --model " << model << " " << flags);
      REQUIRE(run_tool("--model " + std::string(model) + " " + flags + " -o \"" + path + "\"") ==
              0);
      CHECK(graphviz_accepts(path) == 0);
    }
  }
}

#if TAPEGRAD_HAVE_GRAPHVIZ  // in-process rendering: a build with libgvc only
TEST_CASE("tapegrad-dot: --svg and --png render in-process", "[tapegrad-dot][graphviz]") {
  const std::string svg = scratch_path("mha.svg"), png = scratch_path("mha.png");
  std::filesystem::remove(svg);
  std::filesystem::remove(png);
  REQUIRE(run_tool("--model multihead --svg \"" + svg + "\" --png \"" + png + "\"") == 0);
  CHECK_THAT(read_text_file(svg), Catch::Contains("<svg") && Catch::Contains("MultiHeadAttention"));
  const std::string png_bytes = read_text_file(png);
  REQUIRE(png_bytes.size() > 8);
  CHECK(png_bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
}
#endif

TEST_CASE("tapegrad-dot: bad arguments are reported, with an exit status", "[tapegrad-dot]") {
  std::string errors;
  CHECK(run_tool("--model gpt2 -o /dev/null", &errors) == 1);
  CHECK_THAT(errors, Catch::Contains("unknown model \"gpt2\"; the models are simplified, "
                                     "self-attention-v1"));
  CHECK(run_tool("--model multihead --d-out 3 --heads 2 -o /dev/null", &errors) == 1);
  CHECK_THAT(errors, Catch::Contains("d_out 3 must be divisible by heads 2"));
  CHECK(run_tool("--model multihead --frobnicate", &errors) == 2);
  CHECK_THAT(errors, Catch::Contains("not expected: --frobnicate"));  // CLI11's words
  CHECK(run_tool("--model multihead --seq six", &errors) == 2);
  CHECK_THAT(errors, Catch::Contains("--seq: must be a positive integer, got six"));
  CHECK(run_tool("--backward", &errors) == 2);
  CHECK_THAT(errors, Catch::Contains("--model is required"));
}

TEST_CASE("tapegrad-dot: sizes change the shapes drawn", "[tapegrad-dot]") {
  const std::string dot =
      tool_dot("--model multihead --batch 3 --seq 4 --d-in 5 --d-out 8 --heads 4", "sizes");
  CHECK_THAT(dot, Catch::Contains("[3, 4, 5]"));  // the batch
  CHECK_THAT(dot, Catch::Contains("[3, 4, 8]"));  // the projections, [B, T, d_out]
  CHECK_THAT(dot, Catch::Contains("H = 4"));
  CHECK_THAT(dot, Catch::Contains("batch 3, seq 4, d_in 5, d_out 8, heads 4"));
}

// --- the attention drawn as the book's ops (OpDef::decomposition) --------------------------------

TEST_CASE("tapegrad-dot: multihead draws the fused attention as the book's ops",
          "[tapegrad-dot][attention_drawing]") {
  const std::string dot = tool_dot("--model multihead", "multihead_ops");
  check_attention_drawn_as_ops(dot, "[2, 2, 6, 1]", "[2, 2, 6, 6]");
  CHECK(count(dot, "<b>dropout</b>") == 0);  // the book's dropout 0.0 draws no mask
  const std::string path = scratch_path("multihead_ops.dot");
  CHECK(graphviz_accepts(path) == 0);
  // With dropout, its node and p, between softmax and ·v.
  const std::string dropout = tool_dot("--model multihead --dropout 0.1", "multihead_dropout");
  CHECK(count(dropout, "<b>dropout</b>") == 1);
  CHECK_THAT(dropout, Catch::Contains("H = 2, dropout p = 0.1"));
  CHECK(graphviz_accepts(scratch_path("multihead_dropout.dot")) == 0);
  // The wrapper keeps its head clusters, each with the composed ops it really runs.
  const std::string wrapper = tool_dot("--model multihead-wrapper", "wrapper_ops");
  CHECK(count(wrapper, "subgraph cluster_f") == 0);
  CHECK_THAT(wrapper, Catch::Contains("label=<<b>head 0</b>>"));
  CHECK_THAT(wrapper, Catch::Contains("label=<<b>head 1</b>>"));
  CHECK(count(wrapper, "<b>softmax</b>") == 2);
}

TEST_CASE("tapegrad-dot: gpt draws the one block's attention as the book's ops",
          "[tapegrad-dot][attention_drawing][gpt]") {
  // Collapsed ×3: the drawn block's attention expanded once, the others not drawn.
  const std::string dot = tool_dot(kSmallGptArgs, "gpt_ops");
  CHECK(count(dot, "subgraph cluster_f") == 1);
  CHECK(count(dot, "<b>split_heads</b>") == 3);
  CHECK(count(dot, "<b>softmax</b>") == 1);
  // drop_emb; in the block two drop_shortcut and the attention weights' (drop_rate 0.1).
  CHECK(count(dot, "<b>dropout</b>") == 4);
  CHECK_THAT(dot, Catch::Contains("H = 2, dropout p = 0.1"));
  CHECK_THAT(dot, Catch::Contains("<b>softmax</b> <i>attn_weights</i></td></tr><tr><td><font "
                                  "point-size=\"9\" color=\"#444444\">[2, 2, 4, 4]"));
}

// --- structure, on the Boost.Graph view ------------------------------------------------------

TEST_CASE("models: the multi-head attention graph, op by op", "[tapegrad-dot][graph_view]") {
  Tape tape;
  const tools::BuiltModel m = tools::build_model(tape, "multihead");
  const GraphView view = make_graph_view(tape);
  const std::map<std::string, int> counts = op_counts(view);
  // 3 projections and out_proj; between them one op: heads, q·kᵀ, mask, softmax, (dropout), ·v.
  CHECK(counts.at("linear") == 4);
  CHECK(counts.at("causal_dot_product_attention") == 1);
  CHECK(counts.count("dropout") == 0);  // p = 0 (the book's): nothing drawn, as torch
  CHECK(counts.at("sum") == 1);
  CHECK(counts.at("parameter") == 5);  // W_query, W_key, W_value, out_proj weight and bias
  CHECK(counts.at("constant") == 1);   // the batch
  CHECK(counts.size() == 5);
  // The parameters (and the batch) are the sources, the loss the only sink.
  std::set<std::string> source_names;
  for (Vertex v : sources(view)) source_names.insert(view[v].name);
  CHECK(source_names == std::set<std::string>{"batch", "W_query.weight", "W_key.weight",
                                              "W_value.weight", "out_proj.weight",
                                              "out_proj.bias"});
  CHECK(sinks(view) == std::vector<Vertex>{static_cast<Vertex>(m.loss.id())});
  CHECK(view[static_cast<Vertex>(m.loss.id())].name == "loss");
  // One cluster per projection inside the module.
  for (const char* layer : {"W_query", "W_key", "W_value", "out_proj"}) {
    const std::vector<int32_t> s = scopes_named(view, layer);
    REQUIRE(s.size() == 1);
    CHECK(view.scopes[static_cast<size_t>(s[0])].path ==
          std::string("MultiHeadAttention/") + layer);
  }
  CHECK(m.parameters.size() == 5);
}

TEST_CASE("models: dropout appears with its p when p > 0", "[tapegrad-dot][graph_view]") {
  Tape tape;
  tools::build_model(tape, "multihead", {.dropout = 0.1});
  const GraphView view = make_graph_view(tape);
  CHECK(op_counts(view).count("dropout") == 0);  // inside the attention op
  int32_t attention_node = -1;
  for (int32_t v = 0; v < view.num_forward; ++v) {
    if (view[static_cast<Vertex>(v)].op == "causal_dot_product_attention") attention_node = v;
  }
  REQUIRE(attention_node >= 0);
  CHECK(op_arguments(tape, attention_node) == "H = 2, dropout p = 0.1");
  CHECK(view[static_cast<Vertex>(attention_node)].shape[1] == 6);  // [B, T, d_out]
}

TEST_CASE("models: the wrapper has one cluster per head, each a full causal attention",
          "[tapegrad-dot][graph_view]") {
  for (int64_t heads : {2, 3}) {
    Tape tape;
    const tools::BuiltModel m =
        tools::build_model(tape, "multihead-wrapper", {.heads = heads, .dropout = 0.5});
    const GraphView view = make_graph_view(tape);
    const std::vector<int32_t> wrapper = scopes_named(view, "MultiHeadAttentionWrapper");
    REQUIRE(wrapper.size() == 1);
    for (int64_t h = 0; h < heads; ++h) {
      const std::string name = "head " + std::to_string(h);
      INFO(name);
      const std::vector<int32_t> s = scopes_named(view, name);
      REQUIRE(s.size() == 1);
      CHECK(view.scopes[static_cast<size_t>(s[0])].parent == wrapper[0]);
      // Everything of the head lies in its cluster: its 3 weights, 3 projections, the scores,
      // the mask, the scale, softmax, dropout and the context.
      std::map<std::string, int> in_head;
      for (int32_t v = 0; v < view.num_forward; ++v) {
        const int32_t scope = view[static_cast<Vertex>(v)].scope;
        if (scope < 0) continue;
        const std::string& path = view.scopes[static_cast<size_t>(scope)].path;
        if (path.rfind("MultiHeadAttentionWrapper/" + name, 0) == 0) {
          ++in_head[view[static_cast<Vertex>(v)].op];
        }
      }
      CHECK(in_head == std::map<std::string, int>{{"parameter", 3},
                                                  {"linear", 3},
                                                  {"transpose", 1},
                                                  {"matmul", 2},
                                                  {"causal_mask", 1},
                                                  {"scale", 1},
                                                  {"softmax", 1},
                                                  {"dropout", 1}});
    }
    CHECK(scopes_named(view, "head " + std::to_string(heads)).empty());
    CHECK(op_counts(view).at("cat") == 1);
    CHECK(op_counts(view).at("parameter") == 3 * heads);
    CHECK(sinks(view) == std::vector<Vertex>{static_cast<Vertex>(m.loss.id())});
    for (Vertex v : sources(view)) {
      const VertexKind kind = view[v].kind;
      CHECK((kind == VertexKind::Parameter || view[v].name == "batch"));
    }
    // The DOT draws one cluster per head, labelled with its name.
    const std::string dot = to_dot(tape);
    for (int64_t h = 0; h < heads; ++h) {
      CHECK_THAT(dot, Catch::Contains("label=<<b>head " + std::to_string(h) + "</b>>"));
    }
  }
}

TEST_CASE("models: the tool draws the library's modules, seeded as the book seeds them",
          "[tapegrad-dot][graph_view]") {
  // The book's batch: two copies of "Your journey starts with one step" (§3.3), [2, 6, 3].
  const std::vector<double> inputs = {0.43, 0.15, 0.89, 0.55, 0.87, 0.66, 0.57, 0.85, 0.64,
                                      0.22, 0.58, 0.33, 0.77, 0.25, 0.10, 0.05, 0.80, 0.55};
  std::vector<double> batch = inputs;
  batch.insert(batch.end(), inputs.begin(), inputs.end());
  auto same_parameters = [](const std::vector<Parameter>& drawn,
                            const std::vector<Parameter>& module) {
    REQUIRE(drawn.size() == module.size());
    for (size_t i = 0; i < drawn.size(); ++i) {
      INFO(module[i].name());
      CHECK(drawn[i].name() == module[i].name());
      CHECK(drawn[i].values() == module[i].values());
    }
  };
  Tape tape;
  TapeScope on_tape(tape);
  SECTION("self-attention-v1, torch.manual_seed(123)") {
    const tools::BuiltModel m = tools::build_model(tape, "self-attention-v1");
    manual_seed(123);
    const nn::SelfAttentionV1 module(3, 2);
    same_parameters(m.parameters, module.parameters());
    CHECK(m.output.values() == module(from_values({6, 3}, inputs)).values());
  }
  SECTION("self-attention-v2, torch.manual_seed(789)") {
    const tools::BuiltModel m = tools::build_model(tape, "self-attention-v2");
    manual_seed(789);
    const nn::SelfAttentionV2 module(3, 2);
    same_parameters(m.parameters, module.parameters());
    CHECK(m.output.values() == module(from_values({6, 3}, inputs)).values());
  }
  SECTION("causal, torch.manual_seed(123)") {
    const tools::BuiltModel m = tools::build_model(tape, "causal");
    manual_seed(123);
    const nn::CausalAttention module(3, 2, 6, 0.0);
    same_parameters(m.parameters, module.parameters());
    CHECK(m.output.values() == module(from_values({2, 6, 3}, batch)).values());
  }
  SECTION("multihead-wrapper, torch.manual_seed(123)") {
    const tools::BuiltModel m = tools::build_model(tape, "multihead-wrapper");
    manual_seed(123);
    const nn::MultiHeadAttentionWrapper module(3, 2, 6, 0.0, 2);
    same_parameters(m.parameters, module.parameters());
    CHECK(m.output.values() == module(from_values({2, 6, 3}, batch)).values());
  }
  SECTION("multihead, torch.manual_seed(123)") {
    const tools::BuiltModel m = tools::build_model(tape, "multihead");
    manual_seed(123);
    const nn::MultiHeadAttention module(3, 2, 6, 0.0, 2);
    same_parameters(m.parameters, module.parameters());
    CHECK(m.output.values() == module(from_values({2, 6, 3}, batch)).values());
  }
  SECTION("--seed replaces the book's seed") {
    const tools::BuiltModel m = tools::build_model(tape, "multihead", {.seed = 7});
    manual_seed(7);
    const nn::MultiHeadAttention module(3, 2, 6, 0.0, 2);
    same_parameters(m.parameters, module.parameters());
  }
}

TEST_CASE("models: backward reaches every parameter", "[tapegrad-dot][graph_view]") {
  for (std::string_view model : tools::model_names()) {
    INFO(model);
    Tape tape;
    const tools::BuiltModel m =
        tools::build_model(tape, model, model == "gpt" ? kSmallGpt : tools::ModelSizes{});
    m.loss.backward({.retain_graph = true});
    for (const Parameter& p : m.parameters) {
      INFO(p.name());
      const std::vector<double> g = p.grad_values();
      CHECK(std::any_of(g.begin(), g.end(), [](double x) { return x != 0.0; }));
    }
    const GraphView view = make_graph_view(tape, {.backward = true});
    CHECK(view.root == m.loss.id());
    int gradients = 0;
    for (int32_t v = view.num_forward; v < view.num_vertices(); ++v) {
      gradients += view[static_cast<Vertex>(v)].kind == VertexKind::Gradient;
    }
    // One gradient sink per parameter (the simplified model's is its input).
    CHECK(gradients == (m.parameters.empty() ? 1 : static_cast<int>(m.parameters.size())));
  }
}

// --- the chapter-4 GPT, on a small config through the tool's own code path ------------------

namespace {

// Forward vertices whose scope path starts with `prefix`.
std::vector<int32_t> vertices_in(const GraphView& view, const std::string& prefix) {
  std::vector<int32_t> out;
  for (int32_t v = 0; v < view.num_forward; ++v) {
    const int32_t scope = view[static_cast<Vertex>(v)].scope;
    if (scope < 0) continue;
    const std::string path = view.scopes[static_cast<size_t>(scope)].path + "/";
    if (path.rfind(prefix + "/", 0) == 0) out.push_back(v);
  }
  return out;
}

const std::string kBlocks = "GPTModel/trf_blocks/TransformerBlock ";

}  // namespace

TEST_CASE("models: gpt draws one TransformerBlock in full, marked ×N", "[tapegrad-dot][gpt]") {
  Tape tape;
  const tools::BuiltModel m = tools::build_model(tape, "gpt", kSmallGpt);
  const GraphView view = make_graph_view(tape);
  // A cluster per module, named and nested as torch's modules.
  std::set<std::string> paths;
  for (const ScopeInfo& s : view.scopes) paths.insert(s.path);
  for (const std::string& path :
       {std::string("GPTModel/tok_emb"), std::string("GPTModel/pos_emb"),
        std::string("GPTModel/final_norm"), std::string("GPTModel/out_head"), kBlocks + "0/norm1",
        kBlocks + "0/att", kBlocks + "0/att/W_query", kBlocks + "0/att/out_proj",
        kBlocks + "0/ff/layers/0", kBlocks + "0/ff/layers/2", kBlocks + "0/norm2",
        kBlocks + "2/ff"}) {
    INFO(path);
    CHECK(paths.count(path) == 1);
  }
  // Dropout is named after its module (drop_emb, drop_shortcut), inside the scope that uses it.
  std::map<std::string, int> dropouts;
  for (int32_t v = 0; v < view.num_forward; ++v) {
    if (view[static_cast<Vertex>(v)].op == "dropout") ++dropouts[view[static_cast<Vertex>(v)].name];
  }
  // Per block two shortcut dropouts; the attention weights' dropout is the op itself.
  CHECK(dropouts["drop_emb"] == 1);
  CHECK(dropouts["drop_shortcut"] == 2 * 3);

  // Parameters (with their shapes) are the sources, the cross entropy the one sink.
  std::set<std::string> source_names;
  for (Vertex v : sources(view)) {
    CHECK(view[v].kind == VertexKind::Parameter);
    source_names.insert(view[v].name);
  }
  CHECK(source_names.size() == m.parameters.size());
  CHECK(source_names.count("tok_emb.weight") == 1);
  CHECK(source_names.count("trf_blocks.2.ff.layers.0.weight") == 1);
  CHECK(sinks(view) == std::vector<Vertex>{static_cast<Vertex>(m.loss.id())});
  CHECK(view[static_cast<Vertex>(m.loss.id())].op == "cross_entropy");

  const std::string dot = to_dot(tape, {.collapse_repeats = true});
  // Block 0 drawn in full, blocks 1 and 2 not at all.
  const std::vector<int32_t> block0 = vertices_in(view, kBlocks + "0");
  REQUIRE(block0.size() > 20);
  for (int32_t v : block0) CHECK_FALSE(node_line(dot, "n" + std::to_string(v)).empty());
  for (const char* k : {"1", "2"}) {
    const std::vector<int32_t> hidden = vertices_in(view, kBlocks + k);
    CHECK(hidden.size() == block0.size());
    for (int32_t v : hidden) CHECK(node_line(dot, "n" + std::to_string(v)).empty());
  }
  CHECK(node_ids(dot).size() == static_cast<size_t>(view.num_forward) - 2 * block0.size());
  CHECK_THAT(dot, Catch::Contains("<b>TransformerBlock 0</b> <font color=\"#b23b2a\">×3</font>"));
  CHECK_THAT(dot, Catch::Contains("drawn once for TransformerBlock 0 … TransformerBlock 2, each "
                                  "feeding the next"));
  CHECK_THAT(dot, Catch::Contains("one block drawn for N identical ones in a row"));
  CHECK(count(dot, "<b>TransformerBlock ") == 1);
  CHECK_THAT(node_line(dot, "n" + std::to_string(vertices_in(view, "GPTModel/tok_emb")[0])),
             Catch::Contains("tok_emb.weight") && Catch::Contains("[50, 8]"));
  // The chain of blocks is the ×3: final_norm reads the drawn block's output.
  const int32_t block_out = block0.back();  // x + shortcut
  const int32_t final_norm = vertices_in(view, "GPTModel/final_norm").back();
  CHECK(view[static_cast<Vertex>(block_out)].op == "add");
  CHECK_THAT(dot, Catch::Contains("  n" + std::to_string(block_out) + " -> n" +
                                  std::to_string(final_norm) + " ["));
  CHECK(run_dot_program(dot, "gpt_collapsed") == 0);

  // The backward enters the drawn block from final_norm's backward, as the forward leaves it.
  m.loss.backward({.retain_graph = true});
  const std::string backward = to_dot(tape, {.backward = true, .collapse_repeats = true});
  CHECK_THAT(backward, Catch::Contains("  g" + std::to_string(final_norm) + " -> g" +
                                       std::to_string(block_out) + " ["));
  CHECK(run_dot_program(backward, "gpt_collapsed_backward") == 0);

  // Without collapsing, every block.
  CHECK(count(to_dot(tape), "<b>TransformerBlock ") == 3);
}

TEST_CASE("models: gpt's drawing has as many nodes for any sizes, so 124M's is readable",
          "[tapegrad-dot][gpt]") {
  // The collapsed drawing depends on the structure, not on the sizes or the number of blocks:
  // the 124M config (12 blocks of 768) draws as many nodes as these (the tool, run on it, says
  // the same; README).
  auto nodes = [](const tools::ModelSizes& sizes) {
    Tape tape;
    tools::build_model(tape, "gpt", sizes);
    return node_ids(to_dot(tape, {.collapse_repeats = true})).size();
  };
  tools::ModelSizes other = kSmallGpt;
  other.gpt = {.vocab_size = 64,
               .context_length = 16,
               .emb_dim = 12,
               .n_heads = 3,
               .n_layers = 5,
               .drop_rate = 0.2,
               .qkv_bias = false};
  other.batch = 3;
  other.tokens = 5;
  const size_t small = nodes(kSmallGpt);
  CHECK(nodes(other) == small);
  CHECK(small <= 150);
}

TEST_CASE("tapegrad-dot: gpt on a small config: golden, Graphviz, options",
          "[tapegrad-dot][gpt][golden]") {
  check_golden(tool_dot(kSmallGptArgs, "gpt_small"), golden("gpt_small"));
  int i = 0;
  for (const char* flags :
       {"--backward", "--no-collapse-repeats", "--backward --saved-bytes --values",
        "--rankdir LR --no-legend --no-edge-labels", "--qkv-bias"}) {
    const std::string path = scratch_path("gpt_accepts" + std::to_string(i++) + ".dot");
    INFO(kSmallGptArgs << " " << flags);
    REQUIRE(run_tool(kSmallGptArgs + " " + flags + " -o \"" + path + "\"") == 0);
    CHECK(graphviz_accepts(path) == 0);
  }
  const std::string full = tool_dot(kSmallGptArgs + " --no-collapse-repeats", "gpt_full");
  CHECK(count(full, "<b>TransformerBlock ") == 3);
  CHECK(count(full, "×3") == 0);
  CHECK_THAT(tool_dot(kSmallGptArgs + " --batch 3 --dropout 0.2", "gpt_sizes"),
             Catch::Contains("batch 3, tokens 4; vocab 50, context 8, emb 8, heads 2, layers 3, "
                             "drop_rate 0.2;"));
  std::string errors;
  CHECK(run_tool("--model gpt --d-in 4 -o /dev/null", &errors) == 2);
  CHECK_THAT(errors, Catch::Contains("--d-in does not apply to --model gpt"));
  CHECK(run_tool("--model multihead --layers 2 -o /dev/null", &errors) == 2);
  CHECK_THAT(errors, Catch::Contains("--layers applies to --model gpt only"));
  CHECK(run_tool("--model gpt --vocab 0 -o /dev/null", &errors) == 2);
  CHECK(run_tool("--model gpt --vocab 50 --context 8 --emb 10 --heads 3 --layers 1 -o /dev/null",
                 &errors) == 1);
  CHECK_THAT(errors, Catch::Contains("emb_dim 10 must be divisible by n_heads 3"));
  CHECK(run_tool(
            "--model gpt --vocab 50 --context 8 --emb 8 --heads 2 --layers 1 --seq 9 -o /dev/null",
            &errors) == 1);
  CHECK_THAT(errors, Catch::Contains("gpt: tokens 9 is more than the context length 8"));
}

#endif  // TAPEGRAD_HAVE_DOT_TOOL
