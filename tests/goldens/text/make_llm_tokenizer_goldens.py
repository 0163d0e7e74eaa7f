#!/usr/bin/python3
"""Token ids of Qwen3's and Llama 3's tokenizers for tests/text/test_llm_tokenizers.cpp.

Run:  /usr/bin/python3 make_llm_tokenizer_goldens.py NODE_MODULES [TOKENIZERS_DIR]
NODE_MODULES holds npm's tokenizers@0.23.2 (Hugging Face's Rust tokenizers, what the book's
Qwen3Tokenizer calls) and tiktoken@1.0.22 (tiktoken's Rust core built for WebAssembly, what the
book's Llama3Tokenizer calls):
    npm install --prefix /tmp/tok tokenizers@0.23.2 tiktoken@1.0.22   (NODE_MODULES=/tmp/tok/node_modules)
TOKENIZERS_DIR holds qwen3/tokenizer.json and llama3/tokenizer.json (default: where
tools/fetch_tokenizers.sh puts them). Needs python3-torch (golden_format.py writes through it).
It rewrites llm_tokenizer_goldens.txt beside it.

node runs the two reference libraries on the texts; the book's wrappers around them are
reimplemented below as the book has them (rasbt/LLMs-from-scratch, Apache-2.0 licence):
  - Qwen3Tokenizer.encode: the stripped text that is one special token is it; else the chat
    wrapping, then re.split on (<\\|[^>]+?\\|>|<think>|</think>), each part a special token's id
    or Tokenizer.encode(part).ids;
  - Llama3Tokenizer.encode (tiktoken over the ranks, allowed_special=set(), disallowed_special=())
    and ChatFormat.encode (the user header, "\\n\\n", the stripped message, <|eot_id|>).
The Llama 3 ranks are tokenizer.json's vocab in tiktoken's file format (base64 token and rank),
which is what Meta's tokenizer.model holds.

Records in the suite's one golden format (tests/goldens/golden_format.py): "<name>:text hex
<UTF-8 bytes>", then "<name>:<mode> i64 <n> <ids>" for the modes qwen3, qwen3_hf, qwen3_chat,
qwen3_chat_thinking, llama3 and llama3_chat.
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import bytes_line, golden_line  # noqa: E402  the one golden format

HERE = os.path.dirname(os.path.abspath(__file__))

TEXTS = {
    "hello": "Hello, world!",
    "book_prompt": "Give me a short introduction to large language models.",
    "digits": "12345 and 3.14159, 1000000 apples; 2025-11-27",
    "whitespace_runs": "a  b   c\n\n\n  d\t\te  \r\n\r\nx   ",
    "leading_trailing": "   leading and trailing   ",
    "cjk": "你好，世界！大型语言模型。こんにちは、世界。한국어 텍스트",
    "emoji": "I \u2764\ufe0f \U0001f999 and \U0001f409\U0001f525! \U0001f468\u200d\U0001f469\u200d\U0001f467",
    "nel_bom": "x\u0085y \ufeffz\u00a0\u00a0nbsp\u3000ideographic \u2028line",
    "nfc": "e\u0301 cafe\u0301 A\u030a \u212b \ufb01 \u1100\u1161\u11a8",
    "contractions": "I'M you'RE they'll it's DON'T we'Ve o'clock",
    "code": "def f(x):\n    return x**2  # square\n\n\tprint(f(3))\n",
    "long_run": "a" * 300 + " " + "ab" * 100 + " " + "\u00e9" * 70,
    "scripts": "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u0440\u0443\u0441\u0441\u043a\u0438\u0439 "
               "\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0939\u093f\u0928\u094d\u0926\u0940",
    "qwen_specials": "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "endoftext_inside": "a <|endoftext|> b<|endoftext|>c",
    "think": "<think>\nok\n</think>\n\nanswer",
    "fim": "x<|fim_prefix|>y <tool_call>{}</tool_call>",
    "unknown_bars": "<|hello|> unknown <||> <|a>b|> <|x|y|>",
    "one_special": "  <|im_end|> \n",
    "llama_specials_as_text": "<|begin_of_text|><|start_header_id|>user<|end_header_id|> <|reserved_3|>",
    "punctuation": "!!!??? ... --- (((x))) \"quoted\" 'single' \u00ab\u00bb \u2014 \u2026",
    "numbers_in_words": "abc123def 4567890 x1y22z333",
}

# The book's Qwen3Tokenizer._SPECIALS and _SPLIT_RE.
QWEN3_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<think>", "</think>",
]
QWEN3_SPLIT_RE = re.compile(r"(<\|[^>]+?\|>|<think>|</think>)")
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

NODE_SCRIPT = r"""
const fs = require('fs');
const path = require('path');
const modules = process.argv[1];  // node -e SCRIPT MODULES
const { Tokenizer } = require(path.join(modules, 'tokenizers'));
const { Tiktoken } = require(path.join(modules, 'tiktoken'));
const job = JSON.parse(fs.readFileSync(0, 'utf8'));
(async () => {
  const qwen = Tokenizer.fromFile(job.qwen3_file);
  const out = { qwen3: [], llama3: [] };
  for (const text of job.qwen3_texts) {
    const encoding = await qwen.encode(text);  // add_special_tokens as the book's encode(part)
    out.qwen3.push(Array.from(encoding.getIds()));
  }
  const llama = new Tiktoken(fs.readFileSync(job.llama3_ranks, 'utf8'), job.llama3_specials,
                             job.llama3_pattern);
  for (const text of job.llama3_texts) out.llama3.push(Array.from(llama.encode(text, [], [])));
  process.stdout.write(JSON.stringify(out));
})();
"""


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
    return dict(zip([chr(c) for c in cs], bs))


def llama3_specials():  # the book's Llama3Tokenizer.special_tokens
    specials = {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001,
                "<|start_header_id|>": 128006, "<|end_header_id|>": 128007, "<|eot_id|>": 128009}
    specials.update({f"<|reserved_{i}|>": 128002 + i for i in range(256)
                     if (128002 + i) not in specials.values()})
    return specials


class Requests:
    """Texts for one reference library, each run once; ids looked up after node has run."""

    def __init__(self):
        self.texts, self.ids = [], None

    def add(self, text):
        self.texts.append(text)
        return len(self.texts) - 1


def qwen3_book_encode(text, hf, chat=False, add_generation_prompt=True, add_thinking=False):
    """The book's Qwen3Tokenizer.encode; `hf` queues a text for Tokenizer.encode(...).ids."""
    specials = {s: i for i, s in enumerate(QWEN3_SPECIALS)}  # resolved to ids later
    stripped = text.strip()
    if stripped in specials and "\n" not in stripped:
        return [("special", stripped)]
    if chat:
        text = f"<|im_start|>user\n{text}<|im_end|>\n"
        if add_generation_prompt:
            text += "<|im_start|>assistant"
            text += "\n" if add_thinking else "\n<think>\n\n</think>\n\n"
    plan = []
    for part in filter(None, QWEN3_SPLIT_RE.split(text)):
        plan.append(("special", part) if part in specials else ("hf", hf.add(part)))
    return plan


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    modules = sys.argv[1]
    cache = os.environ.get("XDG_CACHE_HOME", os.path.join(os.environ["HOME"], ".cache"))
    tok_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(cache, "tapegrad")
    qwen3_file = os.path.join(tok_dir, "qwen3", "tokenizer.json")
    llama3_file = os.path.join(tok_dir, "llama3", "tokenizer.json")

    with open(qwen3_file, encoding="utf-8") as f:
        qwen3_added = {t["content"]: t["id"] for t in json.load(f)["added_tokens"]}
    with open(llama3_file, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    byte_of = bytes_to_unicode()
    lines = []
    for token, rank in sorted(vocab.items(), key=lambda kv: kv[1]):
        lines.append(base64.b64encode(bytes(byte_of[c] for c in token)).decode() + " " + str(rank))
    specials = llama3_specials()

    hf, tk = Requests(), Requests()
    plans = {}
    for name, text in TEXTS.items():
        plans[name] = {
            "qwen3": qwen3_book_encode(text, hf),
            "qwen3_hf": [("hf", hf.add(text))],
            "qwen3_chat": qwen3_book_encode(text, hf, chat=True),
            "qwen3_chat_thinking": qwen3_book_encode(text, hf, chat=True, add_thinking=True),
            "llama3": [("tk", tk.add(text))],
            # ChatFormat.encode: the header, then the stripped message, then <|eot_id|>.
            "llama3_chat": [("id", specials["<|start_header_id|>"]), ("tk", tk.add("user")),
                            ("id", specials["<|end_header_id|>"]), ("tk", tk.add("\n\n")),
                            ("tk", tk.add(text.strip())), ("id", specials["<|eot_id|>"])],
        }

    with tempfile.NamedTemporaryFile("w", suffix=".tiktoken", delete=False) as ranks:
        ranks.write("\n".join(lines) + "\n")
    try:
        job = {"qwen3_file": qwen3_file, "qwen3_texts": hf.texts, "llama3_ranks": ranks.name,
               "llama3_specials": specials, "llama3_pattern": LLAMA3_PATTERN,
               "llama3_texts": tk.texts}
        result = subprocess.run(["node", "-e", NODE_SCRIPT, modules], input=json.dumps(job),
                                capture_output=True, text=True, check=True)
    finally:
        os.unlink(ranks.name)
    out = json.loads(result.stdout)
    hf.ids, tk.ids = out["qwen3"], out["llama3"]

    records = ["# Made by make_llm_tokenizer_goldens.py (Hugging Face's tokenizers 0.23.2 and "
               "tiktoken 1.0.22 under the book's wrappers)."]
    for name, text in TEXTS.items():
        records.append(bytes_line(name + ":text", text.encode("utf-8")))
        for mode, plan in plans[name].items():
            ids = []
            for kind, value in plan:
                if kind == "special":
                    ids.append(qwen3_added[value])
                elif kind == "hf":
                    ids.extend(hf.ids[value])
                elif kind == "tk":
                    ids.extend(tk.ids[value])
                else:
                    ids.append(value)
            records.append(golden_line(f"{name}:{mode}", torch.tensor(ids, dtype=torch.int64)))
    with open(os.path.join(HERE, "llm_tokenizer_goldens.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(records) + "\n")


if __name__ == "__main__":
    main()
