#!/usr/bin/env python3
"""Runs every console example of README.md and compares what it prints with what the README shows.

Each ```console block holds `$ tuneinfer ...` commands followed by their expected output (stdout
and stderr together; where both streams print, their lines may interleave in another order). A
line `...` stands for any lines (elided output). `$ cat FILE` lines define FILE (its lines are the
expected output) for the commands after it. `tuneinfer bench` examples print timings and are only
run (exit status 0), not compared. Commands run in a scratch directory
beside ../shared (so `../shared/miopen/...` paths resolve) with target/release/tuneinfer.

    tools/readme_examples.py            # build first: cargo build --release
Exit status 1 when any example differs (the differences are printed), 0 when all agree.
"""

import os
import pathlib
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "tuneinfer"
SHARED = (ROOT / ".." / "shared").resolve()


def examples(text):
    """(command, expected lines) in README order; `cat` files as ("cat", name, lines)."""
    out, block, inside = [], None, False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```console"
            block = None
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            block = [line[2:], []]
            out.append(block)
        elif block is not None:
            block[1].append(line)
    for b in out:
        while b[1] and b[1][-1] == "":
            b[1].pop()
    return out


def matches(expected, got):
    """Do the printed lines equal the README's, `...` lines matching any run of lines?"""
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


def main():
    if not BIN.is_file():
        sys.exit(f"{BIN} not found: run cargo build --release first")
    readme = (ROOT / "README.md").read_text()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="tuneinfer-readme-"))
    work = scratch / "work"
    work.mkdir()
    os.symlink(SHARED, scratch / "shared")
    env = dict(os.environ)
    env.pop("TUNEINFER_MODELS", None)
    env["PATH"] = f"{BIN.parent}:{env['PATH']}"
    failed = ran = 0
    for command, expected in examples(readme):
        words = shlex.split(command)
        if words[:1] == ["cat"] and len(words) == 2:
            (work / words[1]).write_text("\n".join(expected) + "\n")
            continue
        if words[:1] != ["tuneinfer"]:
            continue
        ran += 1
        proc = subprocess.run(command + " 2>&1", shell=True, cwd=work, env=env, capture_output=True, text=True)
        got = proc.stdout.rstrip("\n").split("\n") if proc.stdout.strip() else []
        if words[1:2] == ["bench"]:
            if proc.returncode != 0:
                failed += 1
                print(f"FAILED (exit {proc.returncode}): $ {command}")
            continue
        if not matches(expected, got):
            failed += 1
            print(f"DIFFERS: $ {command}")
            for line in expected:
                if line not in got:
                    print(f"  README: {line}")
            for line in got:
                if line not in expected:
                    print(f"  prints: {line}")
    print(f"{ran} README examples run, {failed} differ")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
