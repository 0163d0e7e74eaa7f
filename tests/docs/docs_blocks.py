# Keeps README.md and docs/*.md true: cuts out every C++ block (to be built against the installed
# package and run), runs every shell block that calls an installed program, and checks every
# repository path the pages name. Driven by tests/docs/run_docs_test.cmake (ctest: docs_blocks).
#
#   docs_blocks.py extract SOURCE_DIR SRC_DIR   writes SRC_DIR/block_NN.cpp and blocks.json,
#                                               checks paths
#   docs_blocks.py run SOURCE_DIR WORK_DIR PREFIX   runs the built blocks and the shell blocks
#
# A block is marked illustrative (not built, not run, but counted) by an HTML comment on the line
# directly above its fence, starting "<!-- illustrative"; say why after it.
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

# The programs `cmake --install` puts in bin/: a shell block naming one is run (or illustrative).
PROGRAMS = [
    "tapegrad-train-attention", "tapegrad-train-gpt", "tapegrad-train-simple",
    "tapegrad-generate", "tapegrad-dot", "tapegrad-finetune-classifier",
    "tapegrad-finetune-instruct",
]
PROGRAM_RE = re.compile(r"(?<![\w/-])(" + "|".join(map(re.escape, PROGRAMS)) + r")(?![\w-])")
CPP_LANGS = {"cpp", "c++", "cxx"}
SH_LANGS = {"sh", "bash", "shell", "console"}
# A repository path in backticks: a folder, a slash, a file with one of these endings.
PATH_RE = re.compile(r"`([A-Za-z0-9_][A-Za-z0-9_./-]*/[A-Za-z0-9_.-]+"
                     r"\.(?:h|cpp|py|sh|md|cmake|txt|png|in|supp))`")
LINK_RE = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# Headers and includes every wrapped fragment gets; the fragment runs as main's body.
WRAP_HEAD = """#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

int main() {
"""
WRAP_TAIL = "\n  return 0;\n}\n"


def pages(source):
    root = pathlib.Path(source)
    return [root / "README.md"] + sorted((root / "docs").glob("*.md"))


def blocks(page):
    """(language, first line number of the code, code, illustrative) for each fenced block."""
    lines = page.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```\s*([\w+-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang = m.group(1).lower()
        above = lines[i - 1].strip() if i > 0 else ""
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise SystemExit(f"{page}:{i + 1}: a ``` fence is never closed")
        yield lang, i + 2, "\n".join(lines[i + 1:j]) + "\n", above.startswith("<!-- illustrative")
        i = j + 1


def check_paths(source, page):
    """The repository paths and relative links a page names that do not exist."""
    root = pathlib.Path(source)
    text = page.read_text(encoding="utf-8")
    missing, checked = [], 0
    for n, line in enumerate(text.split("\n"), 1):
        for p in PATH_RE.findall(line):
            checked += 1
            if not (root / p).exists() and not (page.parent / p).exists():
                missing.append(f"{page.relative_to(root)}:{n}: `{p}` does not exist")
        for link in LINK_RE.findall(line):
            if re.match(r"^[a-z]+:", link):  # https:, mailto:
                continue
            checked += 1
            target = (page.parent / link).resolve()
            if not target.exists():
                missing.append(f"{page.relative_to(root)}:{n}: link {link} does not exist")
    return missing, checked


def extract(source, src_dir):
    root = pathlib.Path(source)
    out = pathlib.Path(src_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest, missing, checked = [], [], 0
    for page in pages(source):
        rel = str(page.relative_to(root))
        m, c = check_paths(source, page)
        missing += m
        checked += c
        for lang, line, code, illustrative in blocks(page):
            entry = {"page": rel, "line": line, "lang": lang, "illustrative": illustrative}
            if lang in CPP_LANGS and not illustrative:
                name = f"block_{len([e for e in manifest if e.get('target')]) + 1:02d}"
                whole = re.search(r"\bint\s+main\s*\(", code) is not None
                directive = f'#line {line} "{page}"\n'
                text = directive + code if whole else WRAP_HEAD + directive + code + WRAP_TAIL
                target = out / f"{name}.cpp"
                # Unchanged blocks keep their file (and time stamp), so a rebuild is incremental.
                if not target.exists() or target.read_text(encoding="utf-8") != text:
                    target.write_text(text, encoding="utf-8")
                entry.update(target=name, whole=whole)
            elif lang in SH_LANGS:
                entry.update(code=code, programs=sorted(set(PROGRAM_RE.findall(code))))
            manifest.append(entry)
    for stale in set(out.glob("block_*.cpp")) - {out / f"{e['target']}.cpp" for e in manifest
                                                  if e.get("target")}:
        stale.unlink()
    (out / "blocks.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    for m in missing:
        print(m)
    built = sum(1 for e in manifest if e.get("target"))
    print(f"docs_blocks: {built} C++ blocks to build; {checked} paths and links checked, "
          f"{len(missing)} missing")
    return 1 if missing else 0


def fixtures(source, cwd):
    """The folder each block runs in: the files the pages' examples read, small stand-ins."""
    root = pathlib.Path(source)
    cwd.mkdir(parents=True, exist_ok=True)
    # A GPT-2 in Hugging Face's layout with random weights (2 layers): stands in for
    # huggingface.co/gpt2's model.safetensors.
    shutil.copy(root / "tests/goldens/gpt2/gpt2_tiny.safetensors", cwd / "model.safetensors")
    # A tiny Qwen3 in Hugging Face's layout (config.json, two shards, their index): stands in
    # for huggingface.co/Qwen/Qwen3-0.6B's directory.
    shutil.copytree(root / "tests/goldens/qwen3/hf/qwen3_tiny", cwd / "qwen3-tiny",
                    dirs_exist_ok=True)
    # Plain text to train on: a part of the King James Bible.
    shutil.copy(root / "tests/text/data/kjv_sample.txt", cwd / "text.txt")


def run(source, work_dir, prefix):
    work = pathlib.Path(work_dir).resolve()
    prefix = pathlib.Path(prefix).resolve()
    manifest = json.loads((work / "src/blocks.json").read_text(encoding="utf-8"))
    env = dict(os.environ)
    env["PATH"] = str(prefix / "bin") + os.pathsep + env.get("PATH", "")
    failures, ran_cpp, ran_sh, skipped, other_sh = [], 0, 0, [], 0
    for n, e in enumerate(manifest):
        where = f"{e['page']}:{e['line']}"
        cwd = work / "run" / f"{n:02d}"
        if e.get("target"):
            fixtures(source, cwd)
            exe = work / "build" / e["target"]
            r = subprocess.run([str(exe)], cwd=cwd, env=env, capture_output=True, text=True,
                               errors="replace", timeout=300)
            if r.returncode != 0:
                failures.append(f"{where}: the C++ block ({e['target']}) exited with "
                                f"{r.returncode}\n{r.stdout}{r.stderr}")
            else:
                ran_cpp += 1
        elif e["lang"] in SH_LANGS and not e["illustrative"] and e["programs"]:
            absent = [p for p in e["programs"] if not (prefix / "bin" / p).exists()]
            if absent:
                print(f"SKIP {where}: {', '.join(absent)} not installed in {prefix / 'bin'}")
                skipped.append(where)
                continue
            block_env = dict(env)
            if re.search(r"^\s*mpirun\b", e["code"], re.M):
                if shutil.which("mpirun", path=env["PATH"]) is None:
                    print(f"SKIP {where}: mpirun is not installed")
                    skipped.append(where)
                    continue
                # Open MPI refuses root without these (CI runs as root); LeakSanitizer would
                # report Open MPI's own allocations held until exit.
                block_env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
                block_env["ASAN_OPTIONS"] = ":".join(
                    filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
            fixtures(source, cwd)
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", e["code"]], cwd=cwd,
                               env=block_env, capture_output=True, text=True, errors="replace",
                               timeout=600)
            if r.returncode != 0:
                failures.append(f"{where}: the shell block exited with {r.returncode}\n"
                                f"{e['code']}{r.stdout}{r.stderr}")
            else:
                ran_sh += 1
        elif e["lang"] in SH_LANGS and not e["illustrative"]:
            other_sh += 1
    for f in failures:
        print("FAILED " + f)
    ill_cpp = sum(1 for e in manifest if e["lang"] in CPP_LANGS and e["illustrative"])
    ill_sh = [f"{e['page']}:{e['line']}" for e in manifest
              if e["lang"] in SH_LANGS and e["illustrative"]]
    print(f"docs_blocks: {ran_cpp} C++ blocks built and ran "
          f"({sum(1 for e in manifest if e.get('target') and e['whole'])} whole programs, "
          f"{sum(1 for e in manifest if e.get('target') and not e['whole'])} wrapped in main), "
          f"{ill_cpp} illustrative")
    print(f"docs_blocks: {ran_sh} shell blocks of installed programs ran, {len(skipped)} skipped "
          f"(program not installed), {len(ill_sh)} illustrative "
          f"({', '.join(ill_sh) or 'none'}); {other_sh} set-up and build blocks not run")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "extract":
        sys.exit(extract(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 5 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3], sys.argv[4]))
    sys.exit(__doc__ or "usage: docs_blocks.py extract SOURCE SRC | run SOURCE WORK PREFIX")
