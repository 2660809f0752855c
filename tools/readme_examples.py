#!/usr/bin/env python3
"""Runs every console example of README.md and docs/*.md and compares what it prints with the page.

Each ```console block holds `$ COMMAND` lines followed by their expected output (stdout and
stderr together; where both streams print, their lines may interleave in another order). A line
`...` stands for any lines (elided output). `$ cat FILE` lines define FILE (its lines are the
expected output) for the commands after it on the same page; a fenced block whose info string
names a file (```` ```c file=my.c ````) defines that file too. Commands that run: `tuneinfer ...`
(target/release/tuneinfer on PATH), `cc ...` (with `include/`, `examples/` and `target/` of the
checkout at hand), `./PROGRAM ...` (what a `cc` example built) and `python3 FILE.py` (only where
the `tuneinfer` Python package imports: `pip install .`; otherwise counted as skipped). Examples
that need a Vulkan adapter (`--device gpu`, `--devices gpu`, `tuneinfer info`) are skipped where
there is none (CI installs lavapipe: mesa-vulkan-drivers). Anything
else (`ls`, `cat` of a written file, ...) is not run. `tuneinfer bench` examples print timings
and are only run (exit status 0), not compared. Each page runs in its own scratch directory
beside ../shared (so `../shared/miopen/...` paths resolve).

    tools/readme_examples.py            # build first: cargo build --release
    tools/readme_examples.py docs/cli.md README.md     # only these pages
It also checks that the README's support summary and docs/support.md's per-solver table are what
tools/support_table.py makes of weights/ (when README.md or docs/support.md is among the pages).
Exit status 1 when any example (or the table) differs (the differences are printed), 0 when all agree.
"""

import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "tuneinfer"
SHARED = (ROOT / ".." / "shared").resolve()


# `--update`: an example that differs (and has no `...` line) is rewritten with what it prints;
# review the diff before committing it.
UPDATE = "--update" in sys.argv[1:]


def pages():
    """README.md, then every docs/*.md in name order."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def examples(text):
    """Page order: ("run", command, expected lines) and ("file", name, lines)."""
    out, block, kind = [], None, None
    for line in text.splitlines():
        if line.startswith("```"):
            info = line[3:].strip()
            if kind is None:
                named = re.search(r"\bfile=(\S+)", info)
                kind = "console" if info == "console" else ("file" if named else "other")
                block = None
                if named:
                    block = ["file", named.group(1), []]
                    out.append(block)
            else:
                kind, block = None, None
            continue
        if kind == "file":
            block[2].append(line)
        elif kind == "console":
            if line.startswith("$ "):
                block = ["run", line[2:], []]
                out.append(block)
            elif block is not None:
                block[2].append(line)
    for b in out:
        while b[0] == "run" and b[2] and b[2][-1] == "":
            b[2].pop()
    return out


def matches(expected, got):
    """Do the printed lines equal the page's, `...` lines matching any run of lines?"""
    if "..." not in [e.strip() for e in expected]:
        return got == expected or sorted(got) == sorted(expected)
    segments, current = [], []
    for e in expected:
        if e.strip() == "...":
            segments.append(current)
            current = []
        else:
            current.append(e)
    segments.append(current)
    at = 0
    for i, seg in enumerate(segments):
        if not seg:
            continue
        if i == 0:
            if got[: len(seg)] != seg:
                return False
            at = len(seg)
            continue
        found = next((j for j in range(at, len(got) - len(seg) + 1) if got[j : j + len(seg)] == seg), None)
        if found is None:
            return False
        at = found + len(seg)
    last = segments[-1]
    return not last or got[len(got) - len(last) :] == last


def gpu_ready(env):
    """Is there any Vulkan adapter (lavapipe counts)? `tuneinfer info` says so."""
    info = subprocess.run([str(BIN), "info"], env=env, capture_output=True, text=True)
    return "no Vulkan adapter" not in info.stdout + info.stderr


def needs_gpu(words):
    """Examples that need a Vulkan adapter: `--device gpu`, `--devices gpu`, and `info` (adapters)."""
    pairs = set(zip(words, words[1:]))
    return ("--device", "gpu") in pairs or ("--devices", "gpu") in pairs or words[:2] == ["tuneinfer", "info"]


def python_ready(env):
    return subprocess.run([sys.executable, "-c", "import tuneinfer"], env=env, capture_output=True).returncode == 0


def run_page(page, env, counts, has_gpu):
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="tuneinfer-examples-"))
    work = scratch / "work"
    work.mkdir()
    os.symlink(SHARED, scratch / "shared")
    for name in ("include", "examples", "target"):
        os.symlink(ROOT / name, work / name)
    shown = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
    has_python = None
    updates = []
    for kind, command, expected in examples(page.read_text()):
        if kind == "file":
            (work / command).write_text("\n".join(expected) + "\n")
            continue
        words = shlex.split(command)
        if words[:1] == ["cat"] and len(words) == 2:
            (work / words[1]).write_text("\n".join(expected) + "\n")
            continue
        program = words[0] if words else ""
        if program == "python3":
            if has_python is None:
                has_python = python_ready(env)
            if not has_python:
                counts["skipped"] += 1
                print(f"skipped (no tuneinfer Python package; pip install .): {shown}: $ {command}")
                continue
        elif program not in ("tuneinfer", "cc") and not program.startswith("./"):
            continue
        if needs_gpu(words) and not has_gpu:
            counts["skipped"] += 1
            print(f"skipped (no Vulkan adapter; install mesa-vulkan-drivers): {shown}: $ {command}")
            continue
        counts["ran"] += 1
        proc = subprocess.run(
            "{ " + command + "\n} 2>&1", shell=True, cwd=work, env=env, capture_output=True, text=True
        )
        got = proc.stdout.rstrip("\n").split("\n") if proc.stdout.strip() else []
        if words[:2] == ["tuneinfer", "bench"]:
            if proc.returncode != 0:
                counts["failed"] += 1
                print(f"FAILED (exit {proc.returncode}): {shown}: $ {command}")
            continue
        if not matches(expected, got):
            if UPDATE and "..." not in [e.strip() for e in expected]:
                counts["updated"] += 1
                updates.append((command, expected, got))
                print(f"UPDATED: {shown}: $ {command}")
                continue
            counts["failed"] += 1
            print(f"DIFFERS: {shown}: $ {command}")
            for line in expected:
                if line not in got:
                    print(f"  page:   {line}")
            for line in got:
                if line not in expected:
                    print(f"  prints: {line}")
    if updates:
        text, at = page.read_text(), 0
        for command, expected, got in updates:
            old = "\n".join([f"$ {command}"] + expected) + "\n"
            new = "\n".join([f"$ {command}"] + got) + "\n"
            i = text.find(old, at)
            if i < 0:
                continue
            text = text[:i] + new + text[i + len(old) :]
            at = i + len(new)
        page.write_text(text)


def main():
    if not BIN.is_file():
        sys.exit(f"{BIN} not found: run cargo build --release first")
    chosen = [pathlib.Path(a).resolve() for a in sys.argv[1:] if a != "--update"] or pages()
    env = dict(os.environ)
    env.pop("TUNEINFER_MODELS", None)
    env["PATH"] = f"{BIN.parent}:{env['PATH']}"
    counts = {"ran": 0, "failed": 0, "skipped": 0, "updated": 0}
    has_gpu = gpu_ready(env)
    for page in chosen:
        run_page(page, env, counts, has_gpu)
    if ROOT / "README.md" in chosen or ROOT / "docs" / "support.md" in chosen:
        table = subprocess.run([sys.executable, str(ROOT / "tools" / "support_table.py"), "--check"])
        counts["failed"] += table.returncode != 0
    print(
        f"{counts['ran']} examples run on {len(chosen)} pages, {counts['failed']} differ"
        + (f", {counts['skipped']} skipped" if counts["skipped"] else "")
        + (f", {counts['updated']} rewritten with what they print (--update)" if counts["updated"] else "")
    )
    sys.exit(1 if counts["failed"] else 0)


if __name__ == "__main__":
    main()
