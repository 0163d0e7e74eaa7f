// Tests for the command lines of apps/dot.cpp and tools/bench/bench.cpp (CLI11 via
// cli/cli.h): --help, and each malformed value refused by name.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include <tapegrad/kernels/cpu/cpu.h>
#include "tests/apps/cli_testing.h"

using namespace tapegrad::testing;

#ifdef TAPEGRAD_HAVE_DOT_TOOL
TEST_CASE("tapegrad-dot: --help lists every option", "[cli][tapegrad-dot]") {
  check_help(TAPEGRAD_DOT_TOOL, {"--model",
                                 "--batch",
                                 "--seq",
                                 "--d-in",
                                 "--d-out",
                                 "--heads",
                                 "--dropout",
                                 "--seed",
                                 "--list-models",
                                 "-o",
                                 "--svg",
                                 "--png",
                                 "--backward",
                                 "--values",
                                 "--max-values",
                                 "--collapse-heads",
                                 "--saved-bytes",
                                 "--rankdir",
                                 "--title",
                                 "--no-legend",
                                 "--no-edge-labels",
                                 "multihead-wrapper"});
}

TEST_CASE("tapegrad-dot: a drawing written to files is reported in one line",
          "[cli][tapegrad-dot]") {
  const std::string dot = scratch_path("cli_dot/causal.dot");
  std::filesystem::create_directories(std::filesystem::path(dot).parent_path());
  const ProgramRun run = run_program(TAPEGRAD_DOT_TOOL, "--model causal -o " + dot);
  INFO(run.err);
  CHECK(run.status == 0);
  CHECK(run.out.rfind("tapegrad-dot: wrote " + dot + ": --model causal (", 0) == 0);
  CHECK(std::count(run.out.begin(), run.out.end(), '\n') == 1);
  // Without a file, stdout is the drawing and nothing else.
  const ProgramRun to_stdout = run_program(TAPEGRAD_DOT_TOOL, "--model causal");
  CHECK(to_stdout.out == read_text_file(dot));
}

TEST_CASE("tapegrad-dot: a malformed value exits 2 naming the option", "[cli][tapegrad-dot]") {
  const struct {
    const char* args;
    const char* option;
  } cases[] = {
      {"--model multihead --heads 0", "--heads"},
      {"--model multihead --heads -2", "--heads"},
      {"--model multihead --batch abc", "--batch"},
      {"--model multihead --seq 1e99", "--seq"},
      {"--model multihead --d-in 1.5", "--d-in"},
      {"--model multihead --d-out -1", "--d-out"},
      {"--model causal --dropout 1", "--dropout"},
      {"--model causal --dropout x", "--dropout"},
      {"--model multihead --max-values -1", "--max-values"},
      {"--model multihead --rankdir XY", "--rankdir"},
      {"--model multihead --seed 1x", "--seed"},
      {"--model multihead --frobnicate", "--frobnicate"},
      {"--model", "--model"},
      {"--backward", "--model"},
  };
  for (const auto& c : cases) {
    check_refused(TAPEGRAD_DOT_TOOL, c.args, c.option);
    CHECK(run_program(TAPEGRAD_DOT_TOOL, c.args).status == 2);
  }
}

TEST_CASE("tapegrad-dot: --list-models answers without --model", "[cli][tapegrad-dot]") {
  const ProgramRun run = run_program(TAPEGRAD_DOT_TOOL, "--list-models");
  CHECK(run.status == 0);
  CHECK(run.out.find("multihead-wrapper\n") != std::string::npos);
}
#endif

#ifdef TAPEGRAD_BENCH_TOOL
TEST_CASE("tapegrad-bench: --help lists every option", "[cli][bench]") {
  check_help(TAPEGRAD_BENCH_TOOL,
             {"--threads", "--workloads", "--dropout", "--samples-factor", "--no-torch",
              "--baseline", "--keep-openblas-env", "--op-rows", "--cpu-level", "--levels"});
}

TEST_CASE("tapegrad-bench: a malformed value exits non-zero naming the option", "[cli][bench]") {
  const struct {
    const char* args;
    const char* option;
  } cases[] = {
      {"--threads 0", "--threads"},
      {"--threads -1", "--threads"},
      {"--threads 1,abc", "--threads"},
      {"--threads 1e99", "--threads"},
      {"--samples-factor abc", "--samples-factor"},
      {"--samples-factor 0", "--samples-factor"},
      {"--workloads book,nope", "--workloads"},
      {"--dropout 0,nope", "--dropout"},
      {"--dropout 1", "--dropout"},
      {"--op-rows abs,nope", "--op-rows"},
      {"--cpu-level avx3", "--cpu-level"},
      {"--levels avx2,nope", "--levels"},
      {"--levels all,avx2", "--levels"},
      {"--levels avx2 --cpu-level avx2", "--levels"},
      {"--frobnicate", "--frobnicate"},
  };
  for (const auto& c : cases) check_refused(TAPEGRAD_BENCH_TOOL, c.args, c.option);
}

TEST_CASE("tapegrad-bench: the op table runs the rows asked for, names with spaces included",
          "[cli][bench]") {
  const ProgramRun run =
      run_program(TAPEGRAD_BENCH_TOOL,
                  "--workloads ops --op-rows 'abs,sum(dim 0)' --no-torch --samples-factor 0.1");
  INFO(run.out << run.err);
  CHECK(run.status == 0);
  CHECK(run.out.find("| abs ") != std::string::npos);
  CHECK(run.out.find("| sum(dim 0) ") != std::string::npos);
  CHECK(run.out.find("| lt ") == std::string::npos);  // only the rows asked for
}

TEST_CASE("tapegrad-bench: --levels runs the workloads once per level, each engine limited to it",
          "[cli][bench]") {
  const bool has_avx2 = tapegrad::cpu_detected_capability() >= tapegrad::CpuCapability::Avx2;
  const ProgramRun run = run_program(
      TAPEGRAD_BENCH_TOOL, std::string("--levels ") + (has_avx2 ? "baseline,avx2" : "baseline") +
                               " --workloads ops --op-rows abs --no-torch --samples-factor 0.1");
  INFO(run.out << run.err);
  CHECK(run.status == 0);
  // Each level's settings, then its tapegrad worker at that level, lowest first.
  const size_t baseline = run.out.find(
      "CPU level baseline: tapegrad TAPEGRAD_CPU_CAPABILITY=baseline; OpenBLAS (tapegrad's and "
      "the peers') and the peers: ATEN_CPU_CAPABILITY=default, OPENBLAS_CORETYPE=Prescott, "
      "DNNL_MAX_CPU_ISA=SSE41");
  const size_t baseline_worker = run.out.find("cpu: baseline, forced by TAPEGRAD_CPU_CAPABILITY");
  const size_t avx2 = run.out.find(
      "CPU level avx2: tapegrad TAPEGRAD_CPU_CAPABILITY=avx2; OpenBLAS (tapegrad's and the "
      "peers') and the peers: ATEN_CPU_CAPABILITY=avx2, OPENBLAS_CORETYPE=Haswell, "
      "DNNL_MAX_CPU_ISA=AVX2");
  const size_t avx2_worker = run.out.find("cpu: avx2, forced by TAPEGRAD_CPU_CAPABILITY");
  REQUIRE(baseline != std::string::npos);
  CHECK(baseline < baseline_worker);
  CHECK(baseline_worker != std::string::npos);
  if (has_avx2) {
    CHECK(baseline_worker < avx2);
    CHECK(avx2 < avx2_worker);
    CHECK(avx2_worker != std::string::npos);
  }
}
#endif
