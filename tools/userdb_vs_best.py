#!/usr/bin/env python3
"""Issue 52 item 1: does `userdb` write exactly what `batch --method best` serves?

For each GPU, the problems of MIOpen's find-db (every Nth key; --every 1: all of them) go
through `tuneinfer batch --method best --solver all` and `tuneinfer userdb` (both
`--system-db none`, on the CPU). A (problem, solver) pair agrees when userdb writes best's first
answer where best serves the model or the neighbour, and writes nothing where best serves
MIOpen's static default. Prints per GPU: pairs compared, disagreements, and the first few.

    python3 tools/userdb_vs_best.py [--every N] [--bin target/release/tuneinfer] [GPU ...]
"""
import bz2
import glob
import os
import subprocess
import sys
import tempfile

FINDDB = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "miopen", "finddb")
GPUS = ["gfx900_56", "gfx906_60", "gfx1030_36", "gfx90878", "gfx90a68", "gfx942130"]


def keys(gpu, every):
    files = sorted(glob.glob(os.path.join(os.environ.get("TUNEINFER_MIOPEN_DATA", FINDDB.rsplit("/finddb", 1)[0]), "finddb", f"{gpu}.*.fdb.txt.bz2")))
    if not files:
        sys.exit(f"no find-db of {gpu} under ../shared/miopen/finddb")
    with bz2.open(files[-1], "rt") as f:
        out = [key24(line.split("=", 1)[0]) for i, line in enumerate(f) if "=" in line and i % every == 0]
    return [k for k in out if k]


def key24(key):
    """A find-db key in MIOpen's 24-field form (the key userdb writes), or None."""
    group = 1
    if "_g" in key:
        key, g = key.rsplit("_g", 1)
        group = int(g)
    f = key.split("-")
    try:
        if len(f) == 15:  # 2-D: C-H-W-YxX-K-Ho-Wo-N-PxQ-UxV-LxJ-bias-LAYOUT-TYPE-DIR
            c, h, w, yx, k, _ho, _wo, n, pq, uv, lj, bias, layout, ty, d = f
            y, x = yx.split("x"); ph, pw = pq.split("x"); sh, sw = uv.split("x"); dh, dw = lj.split("x")
            nums = [2, c, h, w, 1, y, x, 1, k, n, ph, pw, 0, sh, sw, 0, dh, dw, 0, bias, group]
        elif len(f) == 17:  # 3-D: C-D-H-W-ZxYxX-K-Do-Ho-Wo-N-PdxPhxPw-SdxShxSw-DdxDhxDw-bias-LAYOUT-TYPE-DIR
            c, dd, h, w, zyx, k, _do, _ho, _wo, n, p3, s3, d3, bias, layout, ty, d = f
            z, y, x = zyx.split("x"); pd, ph, pw = p3.split("x"); sd, sh, sw = s3.split("x"); ddl, dh, dw = d3.split("x")
            nums = [3, c, h, w, dd, y, x, z, k, n, ph, pw, pd, sh, sw, sd, dh, dw, ddl, bias, group]
        else:
            return None
    except ValueError:
        return None
    return "x".join(str(v) for v in nums) + f"x{layout}x{ty}x{d}"


def compare(binary, gpu, problems):
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "problems.txt")
        open(inp, "w").write("\n".join(problems) + "\n")
        common = ["--arch", gpu, "--system-db", "none", "--device", "cpu", "--input", inp]
        batch = subprocess.run([binary, "batch", "--method", "best", "--solver", "all"] + common,
                               capture_output=True, text=True).stdout
        out = os.path.join(tmp, "udb")
        subprocess.run([binary, "userdb", "--out", out, "--miopen-version", "HIP.3_5_1_00000000"] + common,
                       capture_output=True, text=True)
        written = {}
        for f in glob.glob(os.path.join(out, "*.udb.txt")):
            for line in open(f):
                key, _, entries = line.strip().partition("=")
                for e in entries.split(";"):
                    if e:
                        solver, _, params = e.partition(":")
                        written[(key, solver)] = params
    # The problem column is the line as given; userdb writes the problem's perf-db key (the
    # same text for find-db keys).
    served = {}
    for line in batch.splitlines()[1:]:
        problem, solver, rank, config, _score, source = line.split("\t")
        if rank == "1":
            served[(problem, solver)] = (config, source)
    bad = []
    for pair, (config, source) in served.items():
        want = config if source in ("model", "neighbour") else None
        got = written.get(pair)
        if want != got:
            bad.append((pair, source, want, got))
    extra = [p for p in written if p not in served]
    return len(served), bad, extra


def main():
    args = sys.argv[1:]
    every, binary = 1, "target/release/tuneinfer"
    if "--every" in args:
        i = args.index("--every"); every = int(args[i + 1]); del args[i:i + 2]
    if "--bin" in args:
        i = args.index("--bin"); binary = args[i + 1]; del args[i:i + 2]
    total_pairs = total_bad = 0
    for gpu in args or GPUS:
        pairs, bad, extra = compare(binary, gpu, keys(gpu, every))
        total_pairs += pairs
        total_bad += len(bad) + len(extra)
        print(f"{gpu}: {pairs} (problem, solver) pairs, {len(bad)} disagree, {len(extra)} written but not served")
        for b in bad[:5]:
            print("   ", b)
    print(f"all: {total_pairs} pairs, {total_bad} disagree")
    sys.exit(1 if total_bad else 0)


if __name__ == "__main__":
    main()
