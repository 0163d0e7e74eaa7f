#!/usr/bin/env bash
# Builds tapegrad-bench against an older tapegrad commit (its library, this benchmark, the
# composed path only), for `tapegrad-bench --baseline DIR/build/tools/bench/tapegrad-bench`:
# the before/after of the engine changes, interleaved in one run.
#   bash tools/bench/build_baseline.sh ead622a /tmp/tapegrad-base
set -euo pipefail
commit=${1:?usage: build_baseline.sh COMMIT DIR}
dir=${2:?usage: build_baseline.sh COMMIT DIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$dir" && mkdir -p "$dir"
git -C "$here" archive "$commit" | tar -x -C "$dir"
mkdir -p "$dir/tools"
cp -r "$here/tools/bench" "$dir/tools/"
# The benchmark's engine needs the thread setting; older commits lack it (nothing in their ops
# uses it, so their products stay as they were).
[ -f "$dir/graph/threads.h" ] || cp "$here/graph/threads.h" "$here/graph/threads.cpp" "$dir/graph/"
cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DTAPEGRAD_BUILD_TESTS=OFF \
  -DTAPEGRAD_BENCH_TORCH=OFF -DCMAKE_CXX_FLAGS=-DTAPEGRAD_BENCH_COMPOSED_ONLY >/dev/null
cmake --build "$dir/build" -j2 --target tapegrad-bench
echo "built $dir/build/tools/bench/tapegrad-bench"
