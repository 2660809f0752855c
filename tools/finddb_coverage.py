#!/usr/bin/env python3
"""How many of the problems MIOpen's find-db says a tunable solver wins get an answer from
tuneinfer for that winning solver (issue 36: "batch --solver all on MIOpen's find-db problems").

    tools/finddb_coverage.py FDB --arch GPU [--system-db FILE|none] [--tuneinfer BIN] [--keep DIR]

FDB is a MIOpen find-db, e.g. `src/kernels/gfx900_56.HIP.fdb.txt.bz2` of MIOpen's source tree
(`fetch ROCm/MIOpen`, then `git cat-file -p HEAD:src/kernels/gfx900_56.HIP.fdb.txt.bz2 > F`;
never copied into this repository). Each line is `KEY=algo:Solver,time,workspace,...;...` (newer files:
`KEY=Solver:time,workspace,algo;...`); the solver with the smallest time wins. A winner counts when it is one of MIOpen's tunable solvers
(`ConvTunableSolver<...>` in MIOpen's `src/include/miopen/conv/solvers.hpp`, the list below).
For every winning solver tuneinfer knows, `tuneinfer batch --arch GPU --solver S` (default
`--method best`) answers its problems; the first answer's source is counted (model, neighbour,
default, perf-db: the value tuned in the system perf db given). Prints one row per solver and
the totals; exit status 0.
"""

import argparse
import bz2
import collections
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

# MIOpen's tunable solvers (ConvTunableSolver<...>, src/include/miopen/conv/solvers.hpp at
# ROCm/MIOpen 2d1fd997a), as the find-db names them.
TUNABLE = set(
    """ConvAsm1x1U ConvAsm1x1UV2 ConvAsm3x3U ConvAsmBwdWrW1x1 ConvAsmBwdWrW3x3 ConvBinWinogradRxSf2x3
ConvBinWinogradRxSf3x2 ConvCkIgemmFwdV6r1DlopsNchw ConvHipImplicitGemmBwdDataV1R1 ConvHipImplicitGemmBwdDataV4R1
ConvHipImplicitGemmV4R1Fwd ConvHipImplicitGemmV4R1WrW ConvHipImplicitGemmV4R4Fwd ConvHipImplicitGemmV4R4WrW
ConvMlirIgemmBwd ConvMlirIgemmBwdXdlops ConvMlirIgemmFwd ConvMlirIgemmFwdXdlops ConvMlirIgemmWrW
ConvMlirIgemmWrWXdlops ConvOclBwdWrW2<1> ConvOclBwdWrW2<2> ConvOclBwdWrW2<4> ConvOclBwdWrW2<8>
ConvOclBwdWrW2<16> ConvOclDirectFwd ConvOclDirectFwd1x1 ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC
ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC
ConvAsmImplicitGemmGTCDynamicFwdDlopsNCHWC ConvHipImplicitGemmBwdDataV4R1Xdlops
ConvHipImplicitGemmBwdDataV1R1Xdlops ConvHipImplicitGemmForwardV4R4Xdlops
ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm ConvHipImplicitGemmForwardV4R5Xdlops
ConvHipImplicitGemmWrwV4R4Xdlops ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm ConvHipImplicitGemmFwdXdlops
ConvHipImplicitGemmBwdXdlops ConvHipImplicitGemmGroupFwdXdlops ConvHipImplicitGemmGroupBwdXdlops
ConvHipImplicitGemmGroupWrwXdlops ConvHipImplicitGemm3DGroupFwdXdlops ConvHipImplicitGemm3DGroupBwdXdlops
ConvHipImplicitGemm3DGroupWrwXdlops ConvHipImplicitGemmF16F8F16FwdXdlops ConvHipImplicitGemmF16F8F16BwdXdlops
ConvHipImplicitGemmF16F8F16WrwXdlops""".split()
)


def winners(path):
    """(key, winning solver) of every line whose fastest solver is tunable, and the line count."""
    out, total = [], 0
    opener = bz2.open if str(path).endswith(".bz2") else open
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if "=" not in line:
                continue
            key, rest = line.split("=", 1)
            best = None
            for entry in rest.split(";"):
                if ":" not in entry:
                    continue
                # Older find-dbs: `algo:Solver,time,workspace,...`; newer (MIOpen 2.x on):
                # `Solver:time,workspace,algo`.
                head, tail = entry.split(":", 1)
                fields = tail.split(",") if head.startswith("miopen") else [head] + tail.split(",")
                try:
                    t = float(fields[1])
                except (IndexError, ValueError):
                    continue
                if best is None or t < best[1]:
                    best = (fields[0], t)
            total += 1
            if best and best[0] in TUNABLE:
                out.append((key, best[0]))
    return out, total


def known_solvers(binary):
    text = subprocess.run([binary, "eval", "--help"], capture_output=True, text=True).stdout
    line = next((l for l in text.splitlines() if l.startswith("Solvers: ")), "")
    return set(s.strip() for s in line[len("Solvers: "):].split(","))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fdb")
    ap.add_argument("--arch", required=True)
    ap.add_argument("--system-db", default="none")
    ap.add_argument("--tuneinfer", default=str(ROOT / "target" / "release" / "tuneinfer"))
    ap.add_argument("--keep", help="keep each solver's batch TSV in this directory")
    a = ap.parse_args()
    wins, total = winners(a.fdb)
    known = known_solvers(a.tuneinfer)
    by_solver = collections.defaultdict(list)
    for key, solver in wins:
        by_solver[solver].append(key)
    rows, totals = [], collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for solver, keys in sorted(by_solver.items(), key=lambda kv: -len(kv[1])):
            counts = collections.Counter()
            note = ""
            if solver not in known:
                note = "not a tuneinfer solver"
            else:
                inp = pathlib.Path(tmp) / "in.txt"
                inp.write_text("\n".join(keys) + "\n")
                out = pathlib.Path(a.keep or tmp) / f"{solver.replace('<', '_').replace('>', '')}.tsv"
                p = subprocess.run(
                    [a.tuneinfer, "batch", "--arch", a.arch, "--solver", solver, "--system-db", a.system_db,
                     "--input", str(inp), "--output", str(out)],
                    capture_output=True, text=True,
                )
                if p.returncode not in (0, 1):
                    note = (p.stderr.strip().splitlines() or ["?"])[-1][:100]
                else:
                    bad = sum(1 for l in p.stderr.splitlines() if "invalid problem" in l and "empty" in l)
                    if bad:
                        note = f"{bad}+ keys with an empty output (MIOpen clamps them; tuneinfer refuses them)"
                    seen = set()
                    for line in out.read_text().splitlines()[1:]:
                        f = line.split("\t")
                        if len(f) >= 6 and f[2] == "1" and f[0] not in seen:
                            seen.add(f[0])
                            counts[f[5]] += 1
            answered = sum(counts.values())
            totals["wins"] += len(keys)
            totals["answered"] += answered
            for k, v in counts.items():
                totals[k] += v
            rows.append((solver, len(keys), answered, counts, note))
    print(f"{a.fdb}: {total:,} problems, {len(wins):,} won by a tunable solver; tuneinfer batch --arch {a.arch} "
          f"--system-db {a.system_db}")
    print(f"| winning solver | wins | answered | % | model | neighbour | default | perf-db | unanswered: why |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for solver, n, answered, c, note in rows:
        print(f"| {solver} | {n:,} | {answered:,} | {100 * answered / n:.1f} | {c['model']:,} | {c['neighbour']:,} | "
              f"{c['default']:,} | {c['perf-db']:,} | {note} |")
    w = totals["wins"]
    print(f"| all | {w:,} | {totals['answered']:,} | {100 * totals['answered'] / max(w, 1):.1f} | {totals['model']:,} | "
          f"{totals['neighbour']:,} | {totals['default']:,} | {totals['perf-db']:,} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
