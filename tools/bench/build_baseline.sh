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
mkdir -p "$dir/tools" "$dir/cli"
cp -r "$here/tools/bench" "$dir/tools/"
cp "$here/cli/cli.h" "$dir/cli/"
# The older tree builds only the attention benchmark (its library has no GPTModel, no SLEEF
# target, no CLI target): a CMakeLists of its own for tools/bench, CLI11 being header-only.
cat >"$dir/tools/bench/CMakeLists.txt" <<'CMAKE'
add_executable(tapegrad-bench bench.cpp tapegrad_engine.cpp)
target_compile_definitions(tapegrad-bench PRIVATE TAPEGRAD_BENCH_COMPOSED_ONLY)
target_link_libraries(tapegrad-bench PRIVATE tapegrad tapegrad_warnings ${CMAKE_DL_LIBS})
target_include_directories(tapegrad-bench PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(tapegrad-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
CMAKE
# The benchmark's engine needs the thread setting; older commits lack it (nothing in their ops
# uses it, so their products stay as they were).
[ -f "$dir/graph/threads.h" ] || cp "$here/graph/threads.h" "$here/graph/threads.cpp" "$dir/graph/"
cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DTAPEGRAD_BUILD_TESTS=OFF \
  -DTAPEGRAD_BENCH_TORCH=OFF >/dev/null
cmake --build "$dir/build" -j2 --target tapegrad-bench
echo "built $dir/build/tools/bench/tapegrad-bench"
