#!/usr/bin/env python3
"""Exact % of the first answer on each shipped model's held-out problems, by beam width.

Runs `tuneinfer eval --json --beam W` for every model of ours in weights/ whose JSON says it
was trained with a validation split (and, with --validated DIR, the models of that directory,
e.g. ConvAsm1x1U trained with the split by the README's "how well the recipe does" commands),
for each width W, and
prints exact % per width with the change against the width of 16 (the default decoding's width
when this tool was written). Used to choose the default decoding's width (issue #15: no change
that loses more than 0.3 points).

    tools/beam_widths.py [--widths 1,2,3,4,6,8,16] [--validated /tmp/validated] [--bin PATH]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DB = os.path.join(ROOT, "..", "shared", "miopen", "perfdb")



def split_models(directory):
    """(solver, arch, perf db path) of every model in `directory` trained with a validation split,
    as its JSON records them (`training.perf_db`, `training.val_fraction`)."""
    found = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(directory, name)) as f:
            meta = json.load(f)
        training = meta.get("training") or {}
        if not training.get("val_fraction"):
            continue
        db = training["perf_db"]
        path = next((p for p in (os.path.join(DB, db), os.path.join(DB, "history", db)) if os.path.exists(p)), None)
        if path is None:
            print(f"{name}: its perf db {db} is not in {DB}", file=sys.stderr)
            continue
        found.append((meta["solver"], meta["arch"], path))
    return found


def exact(binary, solver, arch, db, width, models):
    cmd = [binary, "eval", "--perf-db", db, "--arch", arch, "--solver", solver,
           "--beam", str(width), "--json"]
    if models:
        cmd += ["--models", models]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
    d = json.loads(out.stdout)
    want = "model, greedy (constrained)" if width == 1 else f"model, beam {width}"
    for m in d["methods"]:
        if m["method"] == want and m["kind"] is None:
            return (m["exact_pct"], m["problems"]), None
    return None, f"no '{want}' row"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", default="1,2,3,4,6,8,16")
    ap.add_argument("--validated", help="directory of ConvAsm1x1U models trained with the split")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "tuneinfer"))
    a = ap.parse_args()
    widths = [int(w) for w in a.widths.split(",")]
    runs = [(s, ar, db, None) for s, ar, db in split_models(os.path.join(ROOT, "weights"))]
    if a.validated:
        runs += [(s, ar, db, a.validated) for s, ar, db in split_models(a.validated)]
    print("| model: validation problems | " + " | ".join(f"w{w}" for w in widths) + " |")
    print("|---" * (len(widths) + 1) + "|")
    worst = {w: 0.0 for w in widths}
    for solver, arch, db, models in runs:
        cells, ref, n = [], None, None
        results = {}
        for w in widths:
            r, err = exact(a.bin, solver, arch, db, w, models)
            results[w] = r
            if r is None:
                print(f"{solver} {arch}: width {w}: {err}", file=sys.stderr)
        ref = results.get(16)
        for w in widths:
            r = results[w]
            if r is None:
                cells.append("-")
                continue
            n = r[1]
            if ref is not None and w != 16:
                delta = r[0] - ref[0]
                worst[w] = min(worst[w], delta)
                cells.append(f"{r[0]:.1f} ({delta:+.1f})")
            else:
                cells.append(f"{r[0]:.1f}")
        print(f"| {solver} {arch}: {n} | " + " | ".join(cells) + " |")
    print("worst change against width 16: " + ", ".join(f"w{w} {worst[w]:+.1f}" for w in widths if w != 16))


if __name__ == "__main__":
    main()
