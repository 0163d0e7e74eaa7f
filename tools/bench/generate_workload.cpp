// tapegrad-bench's generation workloads: nn::generate with the KV cache (greedy, a 64-token
// prompt, then one token per step) against the book's KV-cache GPT in PyTorch eager
// (ch04/03_kv-cache's optimized variant, tools/bench/torch_gpt.py --generate) on OpenBLAS's
// AVX-512 kernels with malloc tuned. Both build the model from manual_seed(123) (tapegrad's
// GPTModel holds torch's weights bit for bit), take the same prompt, and must produce the same
// ids (checked). Each engine runs in a worker process of its own (tools/process/worker_process.h:
// this program re-executed for tapegrad, so its peak RSS is the generation's alone; python3 for
// PyTorch); one warm-up run, then the timed runs. The bound is the read
// bandwidth measured in the same run (a streaming sum over a 1 GiB buffer, best of 5 passes) at
// the same thread count: a decode step must read every weight but the embedding tables once,
// plus the cached keys and values.
//
// generate-124m-bf16 runs tapegrad twice, with float32 weights and with bfloat16 linear weights
// (nn::use_bf16_weights), beside the same PyTorch peer (float32): its bound counts the bfloat16
// bytes, and its worker reports the first step's logits with bfloat16 weights against float32's.
//
// generate-qwen3-0.6b (and -bf16, likewise): the book's Qwen3Model with QWEN_CONFIG_06_B in
// float32 from manual_seed(123), 64 prompt tokens then 50 greedy ones, against the book's
// kv_cache/qwen3.py (tools/bench/qwen3_kv_reference.py) in PyTorch eager.
#include "tools/bench/generate_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/threads.h>
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
#include <tapegrad/kernels/cpu/cpu.h>
#endif
#include <tapegrad/kernels/vec.h>
#include <tapegrad/nn/generate.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/qwen3.h>
#include "tools/bench/process_stats.h"
#include "tools/bench/worker_args.h"
#include "tools/process/heap_counter.h"
#include "tools/process/worker_process.h"

namespace tapegrad_bench {

namespace {

// "; cpu: avx2, forced by ...": the kernels' CPU level, for the worker's info line.
std::string level_info() {
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  return "; " + tapegrad::cpu_capability_info();
#else
  return "";
#endif
}

struct GenerateWorkload {
  const char* name;
  tapegrad::nn::GPTConfig cfg;
  const char* peer;   // torch_gpt.py's workload (float32)
  bool bf16 = false;  // also tapegrad with bfloat16 linear weights
};

const GenerateWorkload kGenerateWorkloads[] = {
    {"generate-124m", tapegrad::nn::GPT_CONFIG_124M, "generate-124m"},
    {"generate-124m-bf16", tapegrad::nn::GPT_CONFIG_124M, "generate-124m", true},
    {"generate-355m", {50257, 1024, 1024, 16, 24, 0.1, false}, "generate-355m"},  // GPT-2 medium
};

struct QwenWorkload {
  const char* name;
  tapegrad::nn::Qwen3Config cfg;
  const char* peer;  // torch_gpt.py's workload (float32)
  bool bf16 = false;
};

const QwenWorkload kQwenWorkloads[] = {
    {"generate-qwen3-0.6b", tapegrad::nn::QWEN_CONFIG_06_B, "generate-qwen3-0.6b"},
    {"generate-qwen3-0.6b-bf16", tapegrad::nn::QWEN_CONFIG_06_B, "generate-qwen3-0.6b", true},
};

constexpr int64_t kPromptTokens = 64;
constexpr int64_t kNewTokens = 32;
constexpr int64_t kQwenNewTokens = 50;
constexpr int kReps = 3;

const QwenWorkload* find_qwen_workload(const std::string& name) {
  for (const QwenWorkload& w : kQwenWorkloads) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

std::vector<int64_t> prompt_ids(int64_t vocab) {
  std::vector<int64_t> ids(kPromptTokens);
  for (int64_t i = 0; i < kPromptTokens; ++i) ids[i] = (i * 7919 + 13) % vocab;
  return ids;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// What one engine's process reports.
struct Report {
  std::string ids, info;
  std::vector<double> prefill, decode;  // seconds per run
  long rss_kib = 0;
  long end_rss_kib = 0;        // resident at the end of the timed runs (VmRSS)
  long long allocations = -1;  // heap allocations per decode step (tapegrad only)
  double logits_max_abs = -1, logits_relative = -1;  // bf16's first logits against float32's
};

// "key v v v" lines into a Report.
Report parse(const std::string& text) {
  Report r;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "ids") {
      words >> r.ids;
    } else if (key == "info") {
      std::getline(words, r.info);
    } else if (key == "allocations_per_decode_step") {
      words >> r.allocations;
    } else if (key == "logits_error") {
      words >> r.logits_max_abs >> r.logits_relative;
    } else if (key == "peak_rss_kib") {
      words >> r.rss_kib;
    } else if (key == "end_rss_kib") {
      words >> r.end_rss_kib;
    } else if (key == "prefill_seconds" || key == "decode_seconds") {
      double s;
      while (words >> s) (key == "prefill_seconds" ? r.prefill : r.decode).push_back(s);
    }
  }
  return r;
}

// Runs a worker (argv[0] the program, "/proc/self/exe" for this one) and returns its lines up to
// and including its last one, "info ..." (a generation) or "bandwidth ..." (the read bandwidth).
std::string run_worker(const std::vector<std::string>& argv) {
  tapegrad::process::WorkerProcess worker(argv[0], argv);
  std::string text;
  for (;;) {
    const std::string line = worker.receive();
    text += line + "\n";
    if (line.rfind("info", 0) == 0 || line.rfind("bandwidth", 0) == 0) return text;
  }
}

const GenerateWorkload& find_generate_workload(const std::string& name) {
  for (const GenerateWorkload& w : kGenerateWorkloads) {
    if (name == w.name) return w;
  }
  std::fprintf(stderr, "tapegrad-bench: unknown generation workload %s\n", name.c_str());
  std::exit(2);
}

// How many of two comma-separated id lists' entries agree, position by position.
int same_ids(const std::string& a, const std::string& b, int* total) {
  std::istringstream ia(a), ib(b);
  std::string x, y;
  int same = 0;
  *total = 0;
  while (std::getline(ia, x, ',') && std::getline(ib, y, ',')) {
    ++*total;
    same += x == y ? 1 : 0;
  }
  return same;
}

// The tapegrad worker: the timed generations, reported on stdout as "key v v v" lines. With
// bf16, the model's linear weights are bfloat16, and "logits_error" gives the first step's
// logits against the float32 weights' (max abs, L2 relative).
void tapegrad_generate(FILE* out, const GenerateWorkload& w, int threads, bool bf16) {
  using namespace tapegrad;
  set_num_threads(threads);
  manual_seed(123);
  nn::GPTModel model(w.cfg);
  model.eval();
  const Ids prompt(Shape{1, kPromptTokens}, prompt_ids(w.cfg.vocab_size));
  if (bf16) {
    const nn::Bf16Conversion c = nn::convert_to_bf16_weights(model, prompt);
    std::fprintf(out, "logits_error %.6g %.6g\n", c.max_abs_error, c.relative_error);
  }
  std::vector<double> prefill, decode;
  std::vector<uint64_t> at_token;  // the allocation count as each token is drawn
  Ids got;
  for (int rep = 0; rep < 1 + kReps; ++rep) {
    nn::GenerationStats stats;
    nn::GenerateOptions options;
    options.max_new_tokens = kNewTokens;
    options.stats = &stats;
    at_token.clear();
    at_token.reserve(kNewTokens);
    options.on_token = [&](const Ids&) { at_token.push_back(process::heap_allocations()); };
    got = nn::generate(model, prompt, options);
    if (rep > 0) {
      prefill.push_back(stats.prefill_seconds);
      decode.push_back(stats.decode_seconds);
    }
  }
  std::fprintf(out, "ids ");
  for (int64_t i = kPromptTokens; i < got.size(1); ++i) {
    std::fprintf(out, "%s%lld", i > kPromptTokens ? "," : "", static_cast<long long>(got[i]));
  }
  std::fprintf(out, "\nprefill_seconds");
  for (double s : prefill) std::fprintf(out, " %.9g", s);
  std::fprintf(out, "\ndecode_seconds");
  for (double s : decode) std::fprintf(out, " %.9g", s);
  // Heap allocations per decode step (between two tokens), the most of any step after the first.
  uint64_t most = 0;
  for (size_t i = 2; i < at_token.size(); ++i) most = std::max(most, at_token[i] - at_token[i - 1]);
  std::fprintf(out, "\nallocations_per_decode_step %llu", static_cast<unsigned long long>(most));
  std::fprintf(out, "\nend_rss_kib %ld", rss_kib());
  std::fprintf(out, "\npeak_rss_kib %ld\ninfo tapegrad nn::generate (KV cache%s%s)\n",
               peak_rss_kib(), bf16 ? ", bfloat16 linear weights" : "", level_info().c_str());
}

// The Qwen3 worker: as tapegrad_generate, with the model's cache reserved by nn::generate.
void tapegrad_generate_qwen(FILE* out, const QwenWorkload& w, int threads, bool bf16) {
  using namespace tapegrad;
  set_num_threads(threads);
  manual_seed(123);
  nn::Qwen3Model model(w.cfg);
  model.eval();
  const Ids prompt(Shape{1, kPromptTokens}, prompt_ids(w.cfg.vocab_size));
  if (bf16) {
    auto logits = [&] {
      Tape tape;
      TapeScope scope(tape);
      NoGradGuard no_grad;
      return model.forward(prompt, false, true).values();
    };
    const std::vector<double> reference = logits();
    nn::use_bf16_weights(model);
    const std::vector<double> got = logits();
    double d2 = 0, r2 = 0, max_abs = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      d2 += (got[i] - reference[i]) * (got[i] - reference[i]);
      r2 += reference[i] * reference[i];
      max_abs = std::max(max_abs, std::abs(got[i] - reference[i]));
    }
    std::fprintf(out, "logits_error %.6g %.6g\n", max_abs, std::sqrt(d2 / r2));
  }
  std::vector<double> prefill, decode;
  std::vector<uint64_t> at_token;
  Ids got;
  for (int rep = 0; rep < 1 + kReps; ++rep) {
    nn::GenerationStats stats;
    nn::GenerateOptions options;
    options.max_new_tokens = kQwenNewTokens;
    options.stats = &stats;
    at_token.clear();
    at_token.reserve(kQwenNewTokens);
    options.on_token = [&](const Ids&) { at_token.push_back(process::heap_allocations()); };
    got = nn::generate(model, prompt, options);
    if (rep > 0) {
      prefill.push_back(stats.prefill_seconds);
      decode.push_back(stats.decode_seconds);
    }
  }
  std::fprintf(out, "ids ");
  for (int64_t i = kPromptTokens; i < got.size(1); ++i) {
    std::fprintf(out, "%s%lld", i > kPromptTokens ? "," : "", static_cast<long long>(got[i]));
  }
  std::fprintf(out, "\nprefill_seconds");
  for (double s : prefill) std::fprintf(out, " %.9g", s);
  std::fprintf(out, "\ndecode_seconds");
  for (double s : decode) std::fprintf(out, " %.9g", s);
  uint64_t most = 0;
  for (size_t i = 2; i < at_token.size(); ++i) most = std::max(most, at_token[i] - at_token[i - 1]);
  std::fprintf(out, "\nallocations_per_decode_step %llu", static_cast<unsigned long long>(most));
  std::fprintf(out, "\nend_rss_kib %ld", rss_kib());
  std::fprintf(out, "\npeak_rss_kib %ld\ninfo tapegrad nn::generate (Qwen3Model, KV cache%s%s)\n",
               peak_rss_kib(), bf16 ? ", bfloat16 linear weights" : "", level_info().c_str());
}

// Bytes a Qwen3 decode step reads: every linear weight (4 bytes, or 2 as bfloat16) and norm, one
// embedding row; `all` adds the whole embedding table.
double qwen_weight_bytes(const tapegrad::nn::Qwen3Config& c, bool all, bool bf16 = false) {
  const double C = static_cast<double>(c.emb_dim), V = static_cast<double>(c.vocab_size);
  const double HD = static_cast<double>(c.n_heads * c.resolved_head_dim());
  const double GD = static_cast<double>(c.n_kv_groups * c.resolved_head_dim());
  const double F = static_cast<double>(c.hidden_dim), L = static_cast<double>(c.n_layers);
  const double linear = L * (2 * C * HD + 2 * C * GD + 3 * C * F) + V * C;
  const double other =
      L * (2 * C + 2 * static_cast<double>(c.resolved_head_dim())) + C + (all ? V * C : C);
  return (bf16 ? 2.0 : 4.0) * linear + 4.0 * other;
}

// The Qwen3 rows: tapegrad (float32, and bfloat16 weights for -bf16) and the book's KV-cache
// Qwen3 in PyTorch, at each thread count.
int run_qwen_workload(const QwenWorkload& w, const std::vector<int>& threads,
                      const std::vector<double>& bandwidth) {
  const tapegrad::nn::Qwen3Config& c = w.cfg;
  const double all = qwen_weight_bytes(c, true), read = qwen_weight_bytes(c, false);
  const double kv_token =
      2.0 * static_cast<double>(c.n_layers * c.n_kv_groups * c.resolved_head_dim()) * 4;
  const double mean_kv = kv_token * static_cast<double>(kPromptTokens + kQwenNewTokens / 2);
  std::printf(
      "\n%s: %lld new tokens; %.0f MB of float32 weights, %.0f MB read per decode token (+ %.1f "
      "MB of keys and values)\n",
      w.name, static_cast<long long>(kQwenNewTokens), all / 1e6, read / 1e6, mean_kv / 1e6);
  if (w.bf16) {
    std::printf("  with bfloat16 linear weights: %.0f MB read per decode token\n",
                qwen_weight_bytes(c, false, true) / 1e6);
  }
  std::printf("%-34s %7s %12s %12s %9s %10s %9s\n", "engine", "threads", "prefill tok/s",
              "decode tok/s", "of bound", "peak RSS", "ids");
  int failures = 0;
  for (size_t ti = 0; ti < threads.size(); ++ti) {
    const int t = threads[ti];
    const auto tapegrad_run = [&](bool bf16) {
      return parse(
          run_worker({"/proc/self/exe", "--worker", "tapegrad-generate", "--workload", w.name,
                      "--threads", std::to_string(t), "--dtype", bf16 ? "bf16" : "float32"}));
    };
    struct Row {
      const char* engine;
      Report report;
      bool bf16;
    };
    std::vector<Row> rows;
    rows.push_back({"tapegrad", tapegrad_run(false), false});
    if (w.bf16) rows.push_back({"tapegrad, bf16 weights", tapegrad_run(true), true});
    std::string ids;
    for (int64_t id : prompt_ids(c.vocab_size))
      ids += (ids.empty() ? "" : ",") + std::to_string(id);
    rows.push_back(
        {"PyTorch eager (book's kv_cache/qwen3)",
         parse(run_worker({"/usr/bin/python3", TAPEGRAD_BENCH_TORCH_GPT, "--generate", "--workload",
                           w.peer, "--threads", std::to_string(t), "--malloc", "tuned",
                           "--prompt-ids", ids, "--new-tokens", std::to_string(kQwenNewTokens),
                           "--reps", std::to_string(kReps)})),
         false});
    const Report& pt = rows.back().report;
    std::vector<double> decode, prefill;
    for (const Row& row : rows) {
      const double bound = bandwidth[ti] * 1e9 / (qwen_weight_bytes(c, false, row.bf16) + mean_kv);
      prefill.push_back(static_cast<double>(kPromptTokens) / median(row.report.prefill));
      decode.push_back(static_cast<double>(kQwenNewTokens - 1) / median(row.report.decode));
      int total = 0;
      const int same = same_ids(row.report.ids, pt.ids, &total);
      std::printf("%-34s %7d %12.1f %12.2f %8.0f%% %7.0f MB %6d/%d\n", row.engine, t,
                  prefill.back(), decode.back(), 100.0 * decode.back() / bound,
                  static_cast<double>(row.report.rss_kib) / 1024, same, total);
    }
    failures += rows.front().report.ids == pt.ids ? 0 : 1;
    std::printf("  %d thread%s: decode %.2fx PyTorch, prefill %.2fx PyTorch; bound %.2f tokens/s\n",
                t, t == 1 ? "" : "s", decode[0] / decode.back(), prefill[0] / prefill.back(),
                bandwidth[ti] * 1e9 / (read + mean_kv));
    if (w.bf16) {
      std::printf(
          "  bf16 weights: decode %.2fx tapegrad float32, %.2fx PyTorch; first step's logits "
          "against float32's: max abs error %.4g, relative error %.4g (L2)\n",
          decode[1] / decode[0], decode[1] / decode.back(), rows[1].report.logits_max_abs,
          rows[1].report.logits_relative);
    }
    for (size_t r = 0; r + 1 < rows.size(); ++r) {
      std::printf("  %s heap allocations per decode step: %lld\n", rows[r].engine,
                  rows[r].report.allocations);
    }
    if (ti == 0) std::printf("  PyTorch: %s\n", pt.info.c_str());
  }
  return failures;
}

// GB/s of a streaming read (a sum over 1 GiB of floats) at `threads` threads: best of 5 passes.
void read_bandwidth(FILE* out, int threads) {
  using namespace tapegrad;
  using detail::Vec;
  set_num_threads(threads);
  const int64_t n = (int64_t{1} << 30) / sizeof(float);
  std::vector<float> buffer(static_cast<size_t>(n), 1.0f);
  const int64_t L = detail::kLanes<float>;
  double best = 1e30, total = 0;
  for (int pass = 0; pass < 6; ++pass) {
    std::vector<double> sums(static_cast<size_t>(threads), 0.0);
    const double t0 = now_seconds();
    parallel_for(n / (4 * L), 1e9, [&](int part, int64_t b, int64_t e) {
      Vec<float> a0{}, a1{}, a2{}, a3{};
      for (int64_t i = b * 4 * L; i < e * 4 * L; i += 4 * L) {
        Vec<float> x0, x1, x2, x3;
        detail::vload(x0, buffer.data() + i);
        detail::vload(x1, buffer.data() + i + L);
        detail::vload(x2, buffer.data() + i + 2 * L);
        detail::vload(x3, buffer.data() + i + 3 * L);
        a0 += x0;
        a1 += x1;
        a2 += x2;
        a3 += x3;
      }
      const Vec<float> a = a0 + a1 + a2 + a3;
      double s = 0;
      for (int64_t l = 0; l < L; ++l) s += a[l];
      sums[static_cast<size_t>(part)] = s;
    });
    if (pass > 0) best = std::min(best, now_seconds() - t0);
    for (double s : sums) total += s;
  }
  std::fprintf(out, "bandwidth %.6g %.0f\n", static_cast<double>(n) * sizeof(float) / best / 1e9,
               total);
}

// The PyTorch peer: tools/bench/torch_gpt.py --generate, which sets its own environment (OpenBLAS
// with this CPU's kernels, malloc tuned) and re-executes itself.
Report torch_generate(const GenerateWorkload& w, int threads) {
  std::string ids;
  for (int64_t id : prompt_ids(w.cfg.vocab_size))
    ids += (ids.empty() ? "" : ",") + std::to_string(id);
  return parse(
      run_worker({"/usr/bin/python3", TAPEGRAD_BENCH_TORCH_GPT, "--generate", "--workload", w.peer,
                  "--threads", std::to_string(threads), "--malloc", "tuned", "--prompt-ids", ids,
                  "--new-tokens", std::to_string(kNewTokens), "--reps", std::to_string(kReps)}));
}

// Bytes of all parameters, and those a decode step reads (all but the embedding tables); with
// bf16, the linear layers' weights take 2 bytes each, the rest (biases, norms, embeddings) 4.
double weight_bytes(const tapegrad::nn::GPTConfig& c, bool read_per_token, bool bf16 = false) {
  const double C = static_cast<double>(c.emb_dim), V = static_cast<double>(c.vocab_size);
  const double L = static_cast<double>(c.n_layers);
  const double linear = L * (4 * C * C + 8 * C * C) + V * C;                  // att, ff, out_head
  double other = L * ((c.qkv_bias ? 3 * C : 0) + C + 5 * C + 4 * C) + 2 * C;  // biases, norms
  if (!read_per_token) other += V * C + static_cast<double>(c.context_length) * C;
  return (bf16 ? 2.0 : 4.0) * linear + 4.0 * other;
}

}  // namespace

int generate_worker_main(const std::vector<std::string>& args) {
  const WorkerArgs a = parse_worker_args(args);
  const std::string &engine = a.engine, &name = a.workload;
  const int threads = a.threads;
  const bool bf16 = a.bf16;
  if (engine == "read-bandwidth") {
    read_bandwidth(stdout, threads);
  } else if (const QwenWorkload* q = find_qwen_workload(name)) {
    tapegrad_generate_qwen(stdout, *q, threads, bf16);
  } else {
    tapegrad_generate(stdout, find_generate_workload(name), threads, bf16);
  }
  std::fflush(stdout);
  return 0;
}

bool is_generate_workload(const std::string& name) {
  for (const GenerateWorkload& w : kGenerateWorkloads) {
    if (name == w.name) return true;
  }
  return find_qwen_workload(name) != nullptr;
}

int run_generate_workloads(const std::vector<std::string>& names, const std::vector<int>& threads) {
  std::printf(
      "\nGeneration: greedy, a %lld-token prompt, %lld new tokens (the first from the "
      "prefill), %d timed runs after one warm-up; medians. Decode bound: read bandwidth / "
      "(weights read per token + mean KV cache bytes).\n",
      static_cast<long long>(kPromptTokens), static_cast<long long>(kNewTokens), kReps);
  std::vector<double> bandwidth;
  for (int t : threads) {
    std::istringstream in(run_worker(
        {"/proc/self/exe", "--worker", "read-bandwidth", "--threads", std::to_string(t)}));
    std::string key;
    double gbs = 0;
    in >> key >> gbs;
    bandwidth.push_back(gbs);
    std::printf("read bandwidth, %d thread%s: %.1f GB/s\n", t, t == 1 ? "" : "s", gbs);
  }
  int failures = 0;
  for (const std::string& name : names) {
    if (const QwenWorkload* q = find_qwen_workload(name)) {
      failures += run_qwen_workload(*q, threads, bandwidth);
      continue;
    }
    const GenerateWorkload& w = find_generate_workload(name);
    const tapegrad::nn::GPTConfig& c = w.cfg;
    const double all = weight_bytes(c, false), read = weight_bytes(c, true);
    const double cache = 2.0 * static_cast<double>(c.n_layers * c.context_length * c.emb_dim) * 4;
    const double mean_kv = 2.0 * static_cast<double>(c.n_layers * c.emb_dim) * 4 *
                           static_cast<double>(kPromptTokens + kNewTokens / 2);
    std::printf(
        "\n%s: %.0f MB of float32 weights, %.0f MB read per decode token (+ %.1f MB of "
        "keys and values), KV cache %.0f MB\n",
        name.c_str(), all / 1e6, read / 1e6, mean_kv / 1e6, cache / 1e6);
    if (w.bf16) {
      std::printf(
          "  with bfloat16 linear weights: %.0f MB of weights, %.0f MB read per decode token\n",
          weight_bytes(c, false, true) / 1e6, weight_bytes(c, true, true) / 1e6);
    }
    std::printf("%-34s %7s %12s %12s %9s %10s %9s\n", "engine", "threads", "prefill tok/s",
                "decode tok/s", "of bound", "peak RSS", "ids");
    for (size_t ti = 0; ti < threads.size(); ++ti) {
      const int t = threads[ti];
      const auto tapegrad_run = [&](bool bf16) {
        return parse(
            run_worker({"/proc/self/exe", "--worker", "tapegrad-generate", "--workload", name,
                        "--threads", std::to_string(t), "--dtype", bf16 ? "bf16" : "float32"}));
      };
      // Engines in this order, each in a process of its own: tapegrad float32, tapegrad bf16
      // (generate-124m-bf16 only), PyTorch.
      struct Row {
        const char* engine;
        Report report;
        bool bf16;
      };
      std::vector<Row> rows;
      rows.push_back({"tapegrad", tapegrad_run(false), false});
      if (w.bf16) rows.push_back({"tapegrad, bf16 weights", tapegrad_run(true), true});
      rows.push_back({"PyTorch eager (KV cache, OpenBLAS)", torch_generate(w, t), false});
      const Report& tg = rows.front().report;
      const Report& pt = rows.back().report;
      // tapegrad float32 must give PyTorch's ids; bfloat16 weights may change an id where the
      // margin is small, so theirs are reported, not required.
      failures += tg.ids == pt.ids ? 0 : 1;
      std::vector<double> decode, prefill;
      for (const Row& row : rows) {
        const double bound = bandwidth[ti] * 1e9 / (weight_bytes(c, true, row.bf16) + mean_kv);
        prefill.push_back(static_cast<double>(kPromptTokens) / median(row.report.prefill));
        decode.push_back(static_cast<double>(kNewTokens - 1) / median(row.report.decode));
        // bfloat16's ids: how many agree with PyTorch's, position by position.
        int total = 0;
        const int same = same_ids(row.report.ids, pt.ids, &total);
        const std::string ids = !row.bf16 ? (row.report.ids == pt.ids ? "same" : "DIFFER")
                                          : std::to_string(same) + "/" + std::to_string(total);
        std::printf("%-34s %7d %12.1f %12.2f %8.0f%% %7.0f MB %9s\n", row.engine, t, prefill.back(),
                    decode.back(), 100.0 * decode.back() / bound,
                    static_cast<double>(row.report.rss_kib) / 1024, ids.c_str());
      }
      const double bound = bandwidth[ti] * 1e9 / (read + mean_kv);
      std::printf(
          "  %d thread%s: decode %.2fx PyTorch, prefill %.2fx PyTorch; bound %.2f "
          "tokens/s; tapegrad peak RSS %.2fx (weights + KV cache)\n",
          t, t == 1 ? "" : "s", decode[0] / decode.back(), prefill[0] / prefill.back(), bound,
          static_cast<double>(tg.rss_kib) * 1024 / (all + cache));
      if (w.bf16) {
        const Report& b = rows[1].report;
        std::printf(
            "  bf16 weights: decode %.2fx tapegrad float32, prefill %.2fx; bound %.2f tokens/s "
            "(bfloat16 bytes); first step's logits against float32's: max abs error %.4g, "
            "relative error %.4g (L2); resident at the end %.0f MB (float32: %.0f MB; the peak is "
            "the float32 model's, built before the conversion)\n",
            decode[1] / decode[0], prefill[1] / prefill[0],
            bandwidth[ti] * 1e9 / (weight_bytes(c, true, true) + mean_kv), b.logits_max_abs,
            b.logits_relative, static_cast<double>(b.end_rss_kib) / 1024,
            static_cast<double>(tg.end_rss_kib) / 1024);
      }
      for (size_t r = 0; r + 1 < rows.size(); ++r) {
        std::printf(
            "  %s heap allocations per decode step (most of any step after the second "
            "token): %lld\n",
            rows[r].engine, rows[r].report.allocations);
      }
      for (size_t r = 0; r + 1 < rows.size(); ++r) {
        if (rows[r].report.ids != pt.ids && !rows[r].bf16) {
          std::printf("  ids differ:\n    %s %s\n    PyTorch  %s\n", rows[r].engine,
                      rows[r].report.ids.c_str(), pt.ids.c_str());
        }
      }
      if (ti == 0) std::printf("  PyTorch: %s\n", pt.info.c_str());
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace tapegrad_bench
