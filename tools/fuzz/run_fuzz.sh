#!/usr/bin/env bash
# Fuzzes the checkpoint loader (tools/fuzz/fuzz_checkpoint.cpp) for SECONDS (default 60) with
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer, built by clang in build-fuzz/.
# Needs clang and libFuzzer (Debian: clang-14, libclang-rt-14-dev). Not run in CI: CI replays the
# kept inputs of tests/goldens/fuzz/ (tests/graph/test_fuzz_regressions.cpp). A finding is
# written to build-fuzz/fuzz/findings/; fix it, then copy the input to tests/goldens/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
build=build-fuzz

if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAPEGRAD_FUZZ=ON \
    -DTAPEGRAD_SANITIZE=address,undefined -DTAPEGRAD_BUILD_TESTS=OFF \
    -DTAPEGRAD_BUILD_EXAMPLES=OFF -DTAPEGRAD_WERROR=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target fuzz_checkpoint fuzz_make_seeds

corpus=$build/fuzz/corpus
findings=$build/fuzz/findings
mkdir -p "$corpus" "$findings"
"$build/fuzz/fuzz_make_seeds" "$corpus"
# New inputs go to the first directory; the kept regression inputs seed the run too.
"$build/fuzz/fuzz_checkpoint" "$corpus" tests/goldens/fuzz \
  -dict=tools/fuzz/safetensors.dict -max_total_time="$seconds" -max_len=8192 \
  -artifact_prefix="$findings/" -print_final_stats=1
