// tapegrad-dist-bench: the speed of data-parallel GPT training over MPI. Runs tapegrad-bench's two
// GPT workloads (gpt-tiny, gpt2-124m: tools/bench/gpt_workload.cpp) as a user trains them with
// dist::DataParallel: GPTModel forward, cross_entropy, backward, average_gradients,
// clip_grad_norm_, AdamW. The GLOBAL batch is fixed and split over the processes (shard_of), so
// `mpirun -np N tapegrad-dist-bench` does the same work per step for every N and tokens/s compare
// directly: 1 process × 2 threads against 2 processes × 1 thread on a 2-core machine.
//
//   tapegrad-dist-bench --workload gpt-tiny --threads 2              # 1 process (no mpirun)
//   mpirun -np 2 tapegrad-dist-bench --workload gpt-tiny --threads 1
//
// Rank 0 prints processes × threads, the median (and mean) step time (each step's time is the
// slowest rank's), tokens/s (global tokens per step / median step), and the all-reduce time per
// step (DataParallel::allreduce_seconds, averaged over ranks; it includes waiting for the slowest
// rank) and its share of the step time (summed all-reduce time / summed step time).
// --shard-optimizer trains with dist::ShardedAdamW (ZeRO stage 1: the reduce-scatter, started
// from backward with --overlap on, and the all-gather in its step, clipping by its
// set_clip_grad_norm) instead of average_gradients and AdamW; every run ends with the largest
// rank's AdamW state and peak RSS (VmHWM).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/cli/cli.h>
#include <tapegrad/dist/data_parallel.h>
#include <tapegrad/dist/sharded_adamw.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace {

struct Workload {
  const char* name;
  nn::GPTConfig cfg;
  int64_t batch, t;  // the global batch: [batch, t] tokens per step
};

// tapegrad-bench's GPT workloads (gpt_workload.cpp's kGptWorkloads, torch_gpt.py's WORKLOADS).
const Workload kWorkloads[] = {
    {"gpt-tiny", {256, 64, 64, 4, 2, 0.1, false}, 16, 64},
    {"gpt2-124m", nn::GPT_CONFIG_124M, 4, 64},
};

// The process's peak resident set (VmHWM of /proc/self/status), in KiB; -1 when unknown.
long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int run(const std::string& name, int threads, int steps, int warmup, double bucket_mib,
        const std::string& mode, bool progress_thread, bool sharding, int rank, int world_size) {
  const Workload* found = nullptr;
  for (const Workload& w : kWorkloads) {
    if (name == w.name) found = &w;
  }
  if (found == nullptr) throw Error("tapegrad-dist-bench: --workload " + name + " is unknown");
  const Workload& w = *found;
  set_num_threads(threads);

  // Every rank builds rank 0's model (the broadcast makes sure), then draws its own dropout.
  manual_seed(123);
  nn::GPTModel model(w.cfg);
  model.train();
  const std::vector<Parameter> params = model.parameters();
  const int64_t bucket_bytes = static_cast<int64_t>(bucket_mib * (1 << 20));
  dist::DataParallel ddp(params, {.bucket_bytes = bucket_bytes});
  // --progress-thread: a second DataParallel whose overlapped reductions a thread moves on,
  // measured after the first in the same run.
  std::optional<dist::DataParallel> ddp_thread;
  if (progress_thread && !sharding && world_size > 1 && mode != "off") {
    ddp_thread.emplace(
        params, dist::DataParallelOptions{.bucket_bytes = bucket_bytes, .progress_thread = true});
  }
  dist::DataParallel* active = &ddp;
  manual_seed(dist::rank_seed(123, rank));
  const AdamWOptions adamw{.lr = 4e-4, .weight_decay = 0.1};
  std::unique_ptr<AdamW> whole;
  std::unique_ptr<dist::ShardedAdamW> sharded;
  if (sharding) {
    sharded = std::make_unique<dist::ShardedAdamW>(params, adamw);
    sharded->set_clip_grad_norm(1.0);
  } else {
    whole = std::make_unique<AdamW>(params, adamw);
  }
  Optimizer& optimizer = sharding ? static_cast<Optimizer&>(*sharded) : *whole;
  // Seconds in the gradients' exchange so far: DataParallel's, or the sharded step's.
  auto exchange_seconds = [&] {
    return sharding ? sharded->communication_seconds() : active->allreduce_seconds();
  };

  // The global batch (torch.randint's rule on a generator seeded 123, as tapegrad-bench), of
  // which this rank trains rows [begin, end).
  const dist::Shard shard = dist::shard_of(w.batch, rank, world_size);
  const int64_t t = w.t, v = w.cfg.vocab_size, rows = shard.end - shard.begin;
  Generator gen(123);
  std::vector<int64_t> tokens(static_cast<size_t>(w.batch * (t + 1)));
  for (int64_t& id : tokens) id = static_cast<int64_t>(gen.random() % static_cast<uint64_t>(v));
  std::vector<int64_t> input_ids, targets;
  for (int64_t r = shard.begin; r < shard.end; ++r) {
    for (int64_t j = 0; j < t; ++j) {
      input_ids.push_back(tokens[static_cast<size_t>(r * (t + 1) + j)]);
      targets.push_back(tokens[static_cast<size_t>(r * (t + 1) + j + 1)]);
    }
  }
  const Ids inputs(Shape{rows, t}, input_ids);

  Tape tape;
  auto step = [&](bool overlap) {
    tape.reset();
    TapeScope scope(tape);
    optimizer.zero_grad();
    const Tensor logits = model(inputs);                                         // [b, T, V]
    const Tensor loss = cross_entropy(reshape(logits, {rows * t, v}), targets);  // []
    if (!overlap) {
      loss.backward();
    } else {
      loss.backward(sharding ? sharded->backward_options(tape) : active->backward_options(tape));
    }
    if (!sharding) {
      active->average_gradients();
      clip_grad_norm_(params, 1.0);
    }
    optimizer.step();  // sharded: averages, clips, updates this rank's share, all-gathers
    return loss.item();
  };

  const double bytes = static_cast<double>(model.num_parameters()) * 4.0;
  if (rank == 0) {
    std::printf(
        "tapegrad-dist-bench: %s, %d process%s x %d thread%s, global batch %lld x T %lld "
        "(%lld rows per process), %lld parameters: %.2f MB of float32 gradients per step",
        w.name, world_size, world_size > 1 ? "es" : "", threads, threads > 1 ? "s" : "",
        static_cast<long long>(w.batch), static_cast<long long>(t), static_cast<long long>(rows),
        static_cast<long long>(model.num_parameters()), bytes / 1e6);
    if (sharding) {
      std::printf(
          ", sharded AdamW (ZeRO stage 1: reduce-scatter, 1/%d of the update, all-gather)\n",
          world_size);
    } else if (world_size > 1) {
      std::printf(", all-reduced in %d bucket%s of <= %g MiB (the first <= 1 MiB)\n",
                  ddp.num_buckets(), ddp.num_buckets() == 1 ? "" : "s", bucket_mib);
    } else {
      std::printf(" (nothing to all-reduce with 1 process)\n");
    }
  }
  // One mode's timed steps; on rank 0, the mean step time and the mean time in DataParallel.
  auto measure = [&](bool overlap) {
    for (int i = 0; i < warmup; ++i) step(overlap);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank starts the timed steps together
    // Per step: this rank's wall time and its time in DataParallel's calls.
    std::vector<double> seconds(static_cast<size_t>(steps)), reduce(seconds.size());
    double loss = 0.0;
    for (size_t i = 0; i < seconds.size(); ++i) {
      const double reduce0 = exchange_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      loss = step(overlap);
      seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      reduce[i] = exchange_seconds() - reduce0;
    }
    // A step is as long as its slowest rank; the all-reduce time and the loss are averaged over
    // the ranks.
    std::vector<double> slowest(seconds.size()), reduce_sum(seconds.size());
    MPI_Reduce(seconds.data(), slowest.data(), steps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(reduce.data(), reduce_sum.data(), steps, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double loss_sum = 0.0;
    MPI_Reduce(&loss, &loss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) return std::pair<double, double>{};
    double step_total = 0.0, reduce_total = 0.0;
    for (size_t i = 0; i < slowest.size(); ++i) {
      reduce_sum[i] /= world_size;
      step_total += slowest[i];
      reduce_total += reduce_sum[i];
    }
    const double step_s = median(slowest), reduce_s = median(reduce_sum);
    // The share is of the summed times (a median of ratios would pair unrelated steps).
    std::printf(
        "  %s: %d timed steps after %d warm-up: median %.2f ms/step (mean %.2f), %.0f tokens/s; "
        "all-reduce median %.2f ms/step (mean %.2f), %.1f%% of the step time; last loss %.4f\n",
        sharding  ? (overlap ? "sharded, overlapped" : "sharded, blocking")
        : overlap ? (active != &ddp ? "overlapped, progress thread" : "overlapped")
                  : "blocking",
        steps, warmup, step_s * 1e3, step_total / steps * 1e3,
        static_cast<double>(w.batch * t) / step_s, reduce_s * 1e3, reduce_total / steps * 1e3,
        100.0 * reduce_total / step_total, loss_sum / world_size);
    return std::pair<double, double>{step_total / steps, reduce_total / steps};
  };
  const bool blocking = mode != "on", overlapped = mode != "off";
  const auto [step_blocking, reduce_blocking] = blocking ? measure(false) : std::pair{0.0, 0.0};
  const double step_overlapped = overlapped ? measure(true).first : 0.0;
  if (rank == 0 && blocking && overlapped && world_size > 1 && reduce_blocking > 0.0) {
    // What the overlap hides: the step time it saves, as a share of the blocking all-reduce.
    // (The overlapped path's own figure counts the reductions' progress inside the reverse walk,
    // which on shared memory is copying and adding done during backward, not waiting.)
    std::printf(
        "  %s hidden behind backward: %.1f%% (the overlapped step is %.2f ms shorter; "
        "the blocking exchange takes %.2f ms/step), %.3fx the blocking step's speed\n",
        sharding ? "reduce-scatter + all-gather" : "all-reduce",
        100.0 * (step_blocking - step_overlapped) / reduce_blocking,
        (step_blocking - step_overlapped) * 1e3, reduce_blocking * 1e3,
        step_blocking / step_overlapped);
  }
  if (ddp_thread) {
    active = &*ddp_thread;
    const double step_threaded = measure(true).first;
    if (rank == 0 && step_overlapped > 0.0) {
      std::printf("  progress thread: %.3fx the speed of the overlap tested from the walk\n",
                  step_overlapped / step_threaded);
    }
  }
  // Memory per rank: the optimiser's moment buffers, and the process's peak resident set.
  const int64_t state = sharding ? sharded->state_bytes() : 2 * model.num_parameters() * 4;
  const long mine[2] = {static_cast<long>(state / 1024), peak_rss_kib()};
  long most[2] = {0, 0};
  MPI_Reduce(mine, most, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("  per rank (the largest): AdamW state %.1f MB, peak RSS %.1f MB\n",
                static_cast<double>(most[0]) * 1024 / 1e6,
                static_cast<double>(most[1]) * 1024 / 1e6);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string workload = "gpt-tiny";
  int threads = 1, steps = 20, warmup = 3;
  double bucket_mib = 25.0;
  std::string overlap = "both";
  bool shard = false, progress_thread = false;
  CLI::App app{
      "tapegrad-dist-bench: data-parallel GPT training speed over MPI (a fixed global batch split "
      "over the processes). Run it alone (1 process) or under mpirun -np N."};
  app.add_option("--workload", workload, "gpt-tiny or gpt2-124m (tapegrad-bench's GPT workloads)")
      ->check(CLI::IsMember({"gpt-tiny", "gpt2-124m"}));
  app.add_option("--threads", threads, "threads per process")->check(cli::positive());
  app.add_option("--steps", steps, "timed steps")->check(cli::positive());
  app.add_option("--warmup", warmup, "untimed steps first")->check(cli::non_negative());
  app.add_option("--bucket-mib", bucket_mib, "DataParallel's bucket size in MiB (torch's 25)")
      ->check(cli::positive_finite());
  app.add_option("--overlap", overlap,
                 "on: reduce each bucket while backward runs (DataParallel::backward_options); "
                 "off: after it (blocking); both: off, then on, in the same run")
      ->check(CLI::IsMember({"on", "off", "both"}));
  app.add_flag("--progress-thread", progress_thread,
               "also the overlap with its reductions moved on by a thread of DataParallel's own "
               "(DataParallelOptions::progress_thread), measured after the one that calls "
               "MPI_Test from the reverse walk, in the same run");
  app.add_flag("--shard-optimizer", shard,
               "ZeRO stage 1: dist::ShardedAdamW (each process 1/N of AdamW's state and update; "
               "--overlap starts its reduce-scatter from backward)");
  if (const auto code = cli::parse(app, argc, argv)) return *code;
  dist::MpiSession mpi(argc, argv);
  return dist::run_or_abort([&] {
    return run(workload, threads, steps, warmup, bucket_mib, overlap, progress_thread, shard,
               mpi.rank(), mpi.world_size());
  });
}
