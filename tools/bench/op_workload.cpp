// tapegrad-bench's op table: every row of op_rows.h run as a user runs it, forward, the sum of the
// output, backward (tapegrad: a fresh graph on a reset tape, Parameter inputs, Tensor::backward;
// LibTorch: leaf tensors, .sum().backward(), .grad set to none before each run), on the same
// numbers in both. One worker process per engine serves every row; the parent asks each for one
// sample at a time, rotating who goes first, so a change of load hits every engine alike.
#include "tools/bench/op_workload.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/ops/ops.h>
#include "tools/bench/gpt_workload.h"
#include "tools/bench/op_rows.h"
#include "tools/bench/process_stats.h"
#include "tools/bench/worker_args.h"
#include "tools/process/worker_process.h"

namespace tapegrad_bench {

namespace {

using tapegrad::Ids;
using tapegrad::Parameter;
using tapegrad::Tensor;

Parameter float_parameter(const std::vector<float>& v, int64_t rows, int64_t cols, bool grad) {
  Parameter p({rows, cols});
  std::copy(v.begin(), v.end(), p.data<float>());
  p.set_requires_grad(grad);
  return p;
}

struct TapegradOp {
  const OpRow* row = nullptr;
  Parameter a, b;
  Ids index;
  std::function<Tensor()> f;       // the differentiable rows and the comparisons
  std::function<double()> ids_op;  // the arg-reductions: Σ of the indices
  tapegrad::Tape tape;
};

// The row's op, as a tapegrad user writes it; empty for a name this file does not know.
std::function<Tensor()> op_of(const std::string& n, TapegradOp& o) {
  using namespace tapegrad;
  const Parameter& a = o.a;
  const Parameter& b = o.b;
  const Ids& i = o.index;
  static constexpr int kDim1[] = {1};
  const std::span<const int> d1(kDim1);
  using F = std::function<Tensor()>;
  if (n == "abs") return F([&] { return abs(a); });
  if (n == "sign") return F([&] { return sign(a); });
  if (n == "square") return F([&] { return square(a); });
  if (n == "rsqrt") return F([&] { return rsqrt(a); });
  if (n == "log1p") return F([&] { return log1p(a); });
  if (n == "expm1") return F([&] { return expm1(a); });
  if (n == "exp2") return F([&] { return exp2(a); });
  if (n == "log2") return F([&] { return log2(a); });
  if (n == "log10") return F([&] { return log10(a); });
  if (n == "sin") return F([&] { return sin(a); });
  if (n == "cos") return F([&] { return cos(a); });
  if (n == "tan") return F([&] { return tan(a); });
  if (n == "asin") return F([&] { return asin(a); });
  if (n == "acos") return F([&] { return acos(a); });
  if (n == "atan") return F([&] { return atan(a); });
  if (n == "sinh") return F([&] { return sinh(a); });
  if (n == "cosh") return F([&] { return cosh(a); });
  if (n == "asinh") return F([&] { return asinh(a); });
  if (n == "acosh") return F([&] { return acosh(a); });
  if (n == "atanh") return F([&] { return atanh(a); });
  if (n == "erf") return F([&] { return erf(a); });
  if (n == "erfc") return F([&] { return erfc(a); });
  if (n == "floor") return F([&] { return floor(a); });
  if (n == "ceil") return F([&] { return ceil(a); });
  if (n == "round") return F([&] { return round(a); });
  if (n == "trunc") return F([&] { return trunc(a); });
  if (n == "frac") return F([&] { return frac(a); });
  if (n == "clamp") return F([&] { return clamp(a, -0.5, 0.5); });
  const std::string base = n.substr(0, n.find('/'));
  if (base == "maximum") return F([&] { return maximum(a, b); });
  if (base == "minimum") return F([&] { return minimum(a, b); });
  if (base == "pow") return F([&] { return pow(a, b); });
  if (base == "atan2") return F([&] { return atan2(a, b); });
  if (base == "fmod") return F([&] { return fmod(a, b); });
  if (base == "remainder") return F([&] { return remainder(a, b); });
  if (base == "logaddexp") return F([&] { return logaddexp(a, b); });
  if (base == "lerp") return F([&] { return lerp(a, b, 0.3); });
  if (base == "lt") return F([&] { return lt(a, b); });
  if (n == "isnan") return F([&] { return isnan(a); });
  if (n == "sum(all)") return F([&] { return sum(a); });
  if (n == "sum(dim 0)") return F([&] { return sum(a, 0); });
  if (n == "sum") return F([&] { return sum(a, 1); });
  if (n == "mean") return F([&] { return mean(a, 1); });
  if (n == "max(all)") return F([&] { return max(a); });
  if (n == "max") return F([&] { return max(a, 1); });
  if (n == "min") return F([&] { return min(a, 1); });
  if (n == "amax") return F([&, d1] { return amax(a, d1); });
  if (n == "amin") return F([&, d1] { return amin(a, d1); });
  if (n == "prod") return F([&] { return prod(a, 1); });
  if (n == "var") return F([&, d1] { return var(a, d1); });
  if (n == "std") return F([&, d1] { return tapegrad::std(a, d1); });
  if (n == "logsumexp") return F([&, d1] { return logsumexp(a, d1); });
  if (n == "norm") return F([&, d1] { return norm(a, 2.0, d1); });
  if (n == "norm(p=1)") return F([&, d1] { return norm(a, 1.0, d1); });
  if (n == "cumsum") return F([&] { return cumsum(a, 1); });
  if (n == "cumprod") return F([&] { return cumprod(a, 1); });
  if (n == "cummax") return F([&] { return cummax(a, 1).values; });
  if (n == "cummin") return F([&] { return cummin(a, 1).values; });
  if (n == "logcumsumexp") return F([&] { return logcumsumexp(a, 1); });
  if (n == "sort") return F([&] { return sort(a, 1).values; });
  if (n == "topk(16)") return F([&] { return topk(a, 16, 1).values; });
  if (n == "gather") return F([&] { return gather(a, 1, i); });
  if (n == "take_along_dim") return F([&] { return take_along_dim(a, i, 1); });
  if (n == "scatter") return F([&] { return scatter(a, 1, i, b); });
  if (n == "scatter_add") return F([&] { return scatter_add(a, 1, i, b); });
  if (n == "index_select") return F([&] { return index_select(a, 0, i); });
  if (n == "index_add") return F([&] { return index_add(a, 0, i, b); });
  return F();
}

double sum_ids(const Ids& ids) {
  double s = 0;
  for (int64_t k = 0; k < ids.numel(); ++k) s += static_cast<double>(ids[k]);
  return s;
}

std::unique_ptr<TapegradOp> make_tapegrad_op(const std::string& name) {
  const OpRow* r = find_op_row(name.c_str());
  if (r == nullptr) return nullptr;
  auto o = std::make_unique<TapegradOp>();
  o->row = r;
  const OpRowInputs in = make_op_row_inputs(*r);
  const bool grad = r->kind != OpKind::Forward;
  o->a = float_parameter(in.a, kOpRows, kOpCols, grad);
  const bool b_used = r->kind == OpKind::Binary || r->kind == OpKind::Forward ||
                      name == "scatter" || name == "scatter_add" || name == "index_add";
  o->b = float_parameter(in.b, kOpRows, op_row_second_cols(*r), grad && b_used);
  if (!in.index.empty()) {
    const int64_t n = static_cast<int64_t>(in.index.size());
    o->index = n == kOpRows * kOpCols ? Ids({kOpRows, kOpCols}, in.index) : Ids({n}, in.index);
  }
  const TapegradOp& c = *o;
  if (name == "argmax") {
    o->ids_op = [&c] { return sum_ids(tapegrad::argmax(c.a, 1)); };
  } else if (name == "argmin") {
    o->ids_op = [&c] { return sum_ids(tapegrad::argmin(c.a, 1)); };
  } else {
    o->f = op_of(name, *o);
    if (!o->f) return nullptr;
  }
  return o;
}

double run_tapegrad_op(TapegradOp& o, int reps) {
  double loss = 0;
  for (int rep = 0; rep < reps; ++rep) {
    o.tape.reset();  // a fresh graph each run, its memory kept
    tapegrad::TapeScope scope(o.tape);
    if (o.ids_op) {
      loss = o.ids_op();
      continue;
    }
    o.a.zero_grad();
    o.b.zero_grad();
    const Tensor s = tapegrad::sum(o.f());
    if (o.row->kind != OpKind::Forward) s.backward();
    loss = s.item();
  }
  return loss;
}

double tapegrad_grad_sum(const TapegradOp& o) {
  if (!o.a.requires_grad() || !o.a.has_grad()) return 0;
  double s = 0;
  for (int64_t k = 0; k < o.a.numel(); ++k) s += static_cast<double>(o.a.grad<float>()[k]);
  return s;
}

// The LibTorch plugin's op entries (torch_ops.cpp).
struct TorchOps {
  void* (*create)(const char*, int) = nullptr;
  double (*run)(void*, int) = nullptr;
  double (*grad_sum)(void*) = nullptr;
  void (*destroy)(void*) = nullptr;
};

bool load_torch_ops(const std::string& path, TorchOps& t) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "tapegrad-bench: cannot load the LibTorch plugin: %s\n", dlerror());
    return false;
  }
  t.create = reinterpret_cast<decltype(t.create)>(dlsym(h, "tgb_torch_op_create"));
  t.run = reinterpret_cast<decltype(t.run)>(dlsym(h, "tgb_torch_op_run"));
  t.grad_sum = reinterpret_cast<decltype(t.grad_sum)>(dlsym(h, "tgb_torch_op_grad_sum"));
  t.destroy = reinterpret_cast<decltype(t.destroy)>(dlsym(h, "tgb_torch_op_destroy"));
  if (!t.create || !t.run || !t.grad_sum || !t.destroy) {
    std::fprintf(stderr, "tapegrad-bench: the LibTorch plugin lacks the op entries\n");
    return false;
  }
  return true;
}

// One engine's figures for one row.
struct OpResult {
  std::vector<double> us;  // per run, one per sample
  double loss = 0, grad_sum = 0;
  double median() const { return Result::median_of(us); }
};

// A worker's answer to "r ROW K".
struct Answer {
  double seconds = 0, loss = 0, grad_sum = 0;
};

Answer ask(tapegrad::process::WorkerProcess& w, const std::string& row, int reps) {
  const std::string line = "r " + row + "\t" + std::to_string(reps) + "\n";
  w.send(line.c_str());
  std::istringstream ss(w.receive());
  Answer a;
  ss >> a.seconds >> a.loss >> a.grad_sum;
  if (!ss) {
    std::fprintf(stderr, "tapegrad-bench: a worker failed on the op row %s\n", row.c_str());
    std::exit(2);
  }
  return a;
}

}  // namespace

std::vector<std::string> op_row_names() {
  std::vector<std::string> names;
  for (const OpRow& r : kOpTable) names.emplace_back(r.name);
  return names;
}

int op_worker_main(const std::vector<std::string>& args) {
  const WorkerArgs a = parse_worker_args(args);
  const std::string &engine = a.engine, &plugin = a.plugin;
  const int threads = a.threads;
  const bool torch = engine == "torch-ops";
  TorchOps t;
  if (torch && !load_torch_ops(plugin, t)) return 2;
  if (!torch) tapegrad::set_num_threads(threads);
  std::printf("ready %s\n", torch ? "LibTorch" : tapegrad::cpu_capability_info().c_str());
  std::fflush(stdout);
  std::string current;
  std::unique_ptr<TapegradOp> op;
  void* torch_op = nullptr;
  char line[256];
  while (std::fgets(line, sizeof line, stdin) != nullptr) {
    if (line[0] == 'q') break;
    // "r ROW\tK": row names hold spaces, so a tab ends them.
    std::string s(line + 2);
    const size_t tab = s.find('\t');
    if (line[0] != 'r' || tab == std::string::npos) return 2;
    const std::string row = s.substr(0, tab);
    const int reps = std::stoi(s.substr(tab + 1));
    if (row != current) {
      op.reset();
      if (torch_op != nullptr) t.destroy(torch_op);
      torch_op = nullptr;
      if (torch) {
        torch_op = t.create(row.c_str(), threads);
      } else {
        op = make_tapegrad_op(row);
      }
      if (torch_op == nullptr && op == nullptr) {
        std::fprintf(stderr, "tapegrad-bench: unknown op row %s\n", row.c_str());
        return 2;
      }
      current = row;
    }
    const double t0 = now_seconds();
    const double loss = torch ? t.run(torch_op, reps) : run_tapegrad_op(*op, reps);
    const double seconds = now_seconds() - t0;
    const double g = torch ? t.grad_sum(torch_op) : tapegrad_grad_sum(*op);
    std::printf("%.9g %.17g %.17g\n", seconds, loss, g);
    std::fflush(stdout);
  }
  if (torch_op != nullptr) t.destroy(torch_op);
  return 0;
}

int run_op_workloads(const std::vector<std::string>& rows, const std::vector<int>& thread_counts,
                     double sample_factor, const char* torch_plugin) {
  using tapegrad::process::WorkerProcess;
  const std::vector<std::string> names = rows.empty() ? op_row_names() : rows;
  const int samples = std::max(3, static_cast<int>(std::lround(7 * sample_factor)));
  constexpr double kSampleSeconds = 0.02;  // each sample at least this long for the slowest
  std::printf("Op table: load average at start: %s\n", load_average().c_str());
  for (const int threads : thread_counts) {
    const std::string n = std::to_string(threads);
    struct Worker {
      std::string label;
      std::unique_ptr<WorkerProcess> process;
    };
    std::vector<Worker> workers;
    workers.push_back({"tapegrad", std::make_unique<WorkerProcess>(
                                       "/proc/self/exe",
                                       std::vector<std::string>{"tapegrad-bench", "--worker",
                                                                "tapegrad-ops", "--threads", n})});
    if (torch_plugin != nullptr) {
      // LibTorch at its best: glibc's default malloc, and malloc told to keep its memory.
      for (const bool tuned : {false, true}) {
        std::vector<std::string> env;
        if (tuned) {
          for (const auto& kv : kMallocTuned) env.push_back(std::string(kv[0]) + "=" + kv[1]);
        }
        workers.push_back({tuned ? "LibTorch/tuned-malloc" : "LibTorch/default-malloc",
                           std::make_unique<WorkerProcess>(
                               "/proc/self/exe",
                               std::vector<std::string>{"tapegrad-bench", "--worker", "torch-ops",
                                                        "--threads", n, "--plugin", torch_plugin},
                               env)});
      }
    }
    for (Worker& w : workers) {
      const std::string ready = w.process->receive();
      std::printf("  %s: %s\n", w.label.c_str(), ready.c_str() + std::min<size_t>(6, ready.size()));
    }
    std::printf(
        "\n== %d thread%s: forward + sum + backward on [%lld, %lld] float32, median of %d samples "
        "(us per run) ==\n",
        threads, threads == 1 ? "" : "s", static_cast<long long>(kOpRows),
        static_cast<long long>(kOpCols), samples);
    std::printf("| %-16s | %10s | %10s | %-9s | %8s | %s\n", "op", "tapegrad", "LibTorch", "malloc",
                "x torch", "check (rel. diff of Σ y, Σ dx)");
    std::printf("|---|---|---|---|---|---|\n");
    std::fflush(stdout);
    std::vector<std::string> missed;
    for (const std::string& row : names) {
      std::fprintf(stderr, "[%d thread%s] %s...\n", threads, threads == 1 ? "" : "s", row.c_str());
      std::vector<OpResult> r(workers.size());
      // Warm-up: set-up, first touches, allocator growth; the second run's time sizes the samples.
      double slowest = 0;
      for (size_t e = 0; e < workers.size(); ++e) {
        ask(*workers[e].process, row, 1);
        slowest = std::max(slowest, ask(*workers[e].process, row, 1).seconds);
      }
      const int reps = std::max(1, static_cast<int>(std::ceil(kSampleSeconds / slowest)));
      for (int s = 0; s < samples; ++s) {
        for (size_t k = 0; k < workers.size(); ++k) {
          const size_t e = (k + static_cast<size_t>(s)) % workers.size();
          const Answer a = ask(*workers[e].process, row, reps);
          r[e].us.push_back(a.seconds / reps * 1e6);
          r[e].loss = a.loss;
          r[e].grad_sum = a.grad_sum;
        }
      }
      const double tg = r[0].median();
      if (workers.size() == 1) {
        std::printf("| %-16s | %10.1f | %10s | %-9s | %8s |\n", row.c_str(), tg, "-", "-", "-");
        continue;
      }
      const size_t best = r[2].median() < r[1].median() ? 2 : 1;
      const double speedup = r[best].median() / tg;
      auto rel = [](double x, double ref) {
        return std::abs(x - ref) / std::max(1.0, std::abs(ref));
      };
      const double dl = rel(r[0].loss, r[best].loss), dg = rel(r[0].grad_sum, r[best].grad_sum);
      std::printf("| %-16s | %10.1f | %10.1f | %-9s | %7.2fx | %.1e, %.1e%s\n", row.c_str(), tg,
                  r[best].median(), best == 2 ? "tuned" : "default", speedup, dl, dg,
                  dl > 1e-3 || dg > 1e-3 ? " DIFFERS" : "");
      std::fflush(stdout);
      if (speedup < 1.0) missed.push_back(row);
    }
    for (Worker& w : workers) w.process->send("q\n");
    if (torch_plugin != nullptr) {
      std::printf("\n%zu of %zu rows below 1.0x LibTorch:", missed.size(), names.size());
      for (const std::string& m : missed) std::printf(" %s;", m.c_str());
      std::printf("\n");
    }
  }
  std::printf("\nOp table: load average at end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace tapegrad_bench
