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
default, perf-db: the value tuned in the system perf db given). A default answer counts as
"validated default" when `tuneinfer info` names a model or cell record for the solver whose
held-out figures chose MIOpen's default (validated_default), else as "default, not validated" (no
record, or a record that chose the neighbour run without a system perf db). A line whose fastest
entry is a solver MIOpen runs only with an environment switch on (OFF_BY_DEFAULT) counts its next
fastest, as MIOpen does. Prints one row per solver, the totals and the share of the wins the
system perf db has not tuned that a model or a neighbour answers; exit status 0.
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


# Solvers MIOpen does not run unless an environment switch enables them, in ROCm/MIOpen 2d1fd997a
# and MIOpen 3.5.1 alike. MIOpen skips a find-db entry whose solver `IsApplicable` refuses and takes
# the next fastest (`src/ocl/convolutionocl.cpp:749`, `GetSolutions`), so such an entry is never a
# winner on a default install: the next one is.
OFF_BY_DEFAULT = {
    # WORKAROUND_SWDEV_411729: `if(!env::enabled(MIOPEN_DEBUG_CONV_CK_IGEMM_FWD_V6R1_DLOPS_NCHW))
    # return false;` (src/solver/conv/conv_ck_igemm_fwd_v6r1_dlops_nchw.cpp:37, :92-98)
    "ConvCkIgemmFwdV6r1DlopsNchw",
}


def winners(path, skipped=None):
    """(key, winning solver) of every line whose fastest solver MIOpen runs by default is tunable,
    and the line count. `skipped` (a Counter) counts the lines whose fastest entry was a solver of
    OFF_BY_DEFAULT, by that solver."""
    out, total = [], 0
    opener = bz2.open if str(path).endswith(".bz2") else open
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if "=" not in line:
                continue
            key, rest = line.split("=", 1)
            timed = []
            for entry in rest.split(";"):
                if ":" not in entry:
                    continue
                # Older find-dbs: `algo:Solver,time,workspace,...`; newer (MIOpen 2.x on):
                # `Solver:time,workspace,algo`.
                head, tail = entry.split(":", 1)
                fields = tail.split(",") if head.startswith("miopen") else [head] + tail.split(",")
                try:
                    timed.append((float(fields[1]), fields[0]))
                except (IndexError, ValueError):
                    continue
            total += 1
            timed.sort(key=lambda e: e[0])
            if timed and timed[0][1] in OFF_BY_DEFAULT and skipped is not None:
                skipped[timed[0][1]] += 1
            best = next((s for _, s in timed if s not in OFF_BY_DEFAULT), None)
            if best in TUNABLE:
                out.append((key, best))
    return out, total


def known_solvers(binary):
    text = subprocess.run([binary, "eval", "--help"], capture_output=True, text=True).stdout
    line = next((l for l in text.splitlines() if l.startswith("Solvers: ")), "")
    return set(s.strip() for s in line[len("Solvers: "):].split(","))


def recorded_solvers(binary, arch):
    """How `tuneinfer info --arch ARCH` serves each solver it has a model or a cell record for:
    "network", "record" (a neighbour record whose held-out figures chose MIOpen's default
    everywhere) or "record, neighbour" (one that chose the nearest tuned neighbour somewhere,
    which needs a system perf db: without one those problems get MIOpen's default unvalidated)."""
    text = subprocess.run([binary, "info", "--arch", arch], capture_output=True, text=True).stdout
    out, current = {}, None
    for line in text.splitlines():
        parts = line.split()
        if line.startswith("  ") and not line.startswith("   ") and len(parts) >= 2:
            current = None
            if parts[1] != "none:":
                current = parts[0]
                out[current] = "record" if "(no network" in line else "network"
        elif current and "--method best answers with:" in line and out[current] == "record":
            if "nearest neighbour" in line:
                out[current] = "record, neighbour"
    return out


def validated_default(how, system_db):
    """Whether a default answer of a solver served as `how` (recorded_solvers) is `--method
    best`'s validated choice: a network's cell chose it per kind; a record's, unless the record
    chose the neighbour and no system perf db gives the neighbours."""
    return how in ("network", "record") or (how == "record, neighbour" and system_db != "none")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fdb")
    ap.add_argument("--arch", required=True)
    ap.add_argument("--system-db", default="none")
    ap.add_argument("--tuneinfer", default=str(ROOT / "target" / "release" / "tuneinfer"))
    ap.add_argument("--keep", help="keep each solver's batch TSV in this directory")
    a = ap.parse_args()
    skipped = collections.Counter()
    wins, total = winners(a.fdb, skipped)
    known = known_solvers(a.tuneinfer)
    recorded = recorded_solvers(a.tuneinfer, a.arch)
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
                            source = f[5]
                            if source == "default" and validated_default(recorded.get(solver), a.system_db):
                                source = "validated default"
                            counts[source] += 1
            answered = sum(counts.values())
            totals["wins"] += len(keys)
            totals["answered"] += answered
            for k, v in counts.items():
                totals[k] += v
            rows.append((solver, len(keys), answered, counts, note))
    print(f"{a.fdb}: {total:,} problems, {len(wins):,} won by a tunable solver MIOpen runs by default; "
          f"tuneinfer batch --arch {a.arch} --system-db {a.system_db}")
    for solver, n in sorted(skipped.items()):
        print(f"({n:,} problems whose fastest entry is {solver}, which MIOpen runs only with an environment switch "
              f"on: the next fastest counts, as MIOpen's GetSolutions skips it)")
    print("| winning solver | wins | answered | % | model | neighbour | validated default | default, not validated "
          "| perf-db | unanswered: why |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for solver, n, answered, c, note in rows:
        print(f"| {solver} | {n:,} | {answered:,} | {100 * answered / n:.1f} | {c['model']:,} | {c['neighbour']:,} | "
              f"{c['validated default']:,} | {c['default']:,} | {c['perf-db']:,} | {note} |")
    w = totals["wins"]
    print(f"| all | {w:,} | {totals['answered']:,} | {100 * totals['answered'] / max(w, 1):.1f} | {totals['model']:,} | "
          f"{totals['neighbour']:,} | {totals['validated default']:,} | {totals['default']:,} | {totals['perf-db']:,} | |")
    untuned = w - totals["perf-db"]
    pct = lambda v: 100 * v / max(untuned, 1)
    predicted = totals["model"] + totals["neighbour"]
    print(f"\nwins the system perf db has not tuned: {untuned:,}; answered by a model or a neighbour: "
          f"{predicted:,} ({pct(predicted):.1f}%); with the validated default: "
          f"{predicted + totals['validated default']:,} ({pct(predicted + totals['validated default']):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
