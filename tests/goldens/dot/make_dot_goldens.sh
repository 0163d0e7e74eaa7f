#!/usr/bin/env bash
# Regenerates the DOT goldens, each with the command the tests compare against; review the
# result with `git diff tests/goldens/dot` before committing it.
#   bash tests/goldens/dot/make_dot_goldens.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build}
tool="$build/bin/tapegrad-dot"
out=tests/goldens/dot

# tests/apps/test_dot.cpp: the tool's output for each model and a few flag sets.
for model in simplified self-attention-v1 self-attention-v2 causal multihead-wrapper multihead; do
  "$tool" --model "$model" -o "$out/$model.dot"
done
"$tool" --model multihead --backward --saved-bytes -o "$out/multihead_backward.dot"
"$tool" --model multihead-wrapper --collapse-heads -o "$out/multihead-wrapper_collapsed.dot"
"$tool" --model simplified --backward --values -o "$out/simplified_backward_values.dot"
"$tool" --model causal --dropout 0.5 -o "$out/causal_dropout.dot"
# The chapter-4 GPT on a small config (3 blocks, drawn once, x3): the 124M default takes 650 MB.
"$tool" --model gpt --vocab 50 --context 8 --emb 8 --heads 2 --layers 3 --seq 4 \
  -o "$out/gpt_small.dot"

# tests/viz/test_dot.cpp: small hand-built tapes, written by the test itself.
TAPEGRAD_UPDATE_GOLDENS=1 "$build/tests/tapegrad_tests" "[dot][golden]" >/dev/null
