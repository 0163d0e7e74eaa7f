#!/usr/bin/env bash
# Writes the King James Bible as plain text into the user's cache (text/kjv.h's default_kjv_path(),
# the default text of tapegrad-train-gpt, tapegrad-train-simple and the fine-tuning programs), from
# Debian's bible-kjv-text through the `bible` reader of bible-kjv: the package stores the text
# compressed, in its own format. Usage: tools/kjv_text.sh [FILE]; does nothing when FILE exists.
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/tapegrad/kjv.txt}
[ -s "$out" ] && exit 0
command -v bible >/dev/null || { echo "kjv_text.sh: no 'bible' program: apt-get install bible-kjv" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tmp=$(mktemp "$out.XXXXXX")
bible "Gen1:1-Rev22:21" > "$tmp"
[ "$(wc -c < "$tmp")" -gt 4000000 ] || { rm -f "$tmp"; echo "kjv_text.sh: the text came out short" >&2; exit 1; }
mv "$tmp" "$out"
echo "kjv_text.sh: wrote $out ($(wc -c < "$out") bytes)"
