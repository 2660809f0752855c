#!/usr/bin/env python3
"""Re-records the held-out figures of every shipped model and cell record (issue 44: after a
change to how configs are compared, to MIOpen's default or to the neighbour): `eval --record` of
each `weights/*.json` model on its own database (with its older databases; and on every GPU of
its `validation_by_gpu`), `eval --no-model --record` of each `*.neighbour.json` cell. Progress
and a one-line summary per file on stderr/stdout; exit status 1 when any eval failed.

    tools/rerecord.py [--only SUBSTRING] [--models-only | --cells-only] [--dry-run]

Environment: TUNEINFER (target/release/tuneinfer), DATA (../shared/miopen/perfdb). Takes
about an hour on 2 cores (the models' beam search over their held-out problems); rebuild the
binary afterwards, the models are built into it.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = os.environ.get("TUNEINFER", str(ROOT / "target/release/tuneinfer"))
DATA = pathlib.Path(os.environ.get("DATA", str(ROOT.parent / "shared/miopen/perfdb")))


def db_path(name):
    for p in (DATA / name, DATA / "history" / name):
        if p.exists():
            return str(p)
    raise FileNotFoundError(f"{name}: not in {DATA} or its history/")


def db_of_gpu(gpu):
    for suffix in (".db.txt.bz2", ".db"):
        p = DATA / (gpu + suffix)
        if p.exists():
            return str(p)
    raise FileNotFoundError(f"no database of {gpu} in {DATA}")


def older_names(t):
    out = []
    for o in t.get("older_perf_dbs") or []:
        out.append(o if isinstance(o, str) else o.get("file") or o.get("path") or o.get("name"))
    return [o for o in out if o]


def commands(path, j):
    solver = j["solver"]
    if j.get("format", "").startswith("tuneinfer-neighbour"):
        arch = j["arch"]
        seed = str((j.get("training") or {}).get("seed", 1))
        yield [BIN, "eval", "--no-model", "--perf-db", db_of_gpu(arch), "--arch", arch, "--solver", solver,
               "--seed", seed, "--record", "--models", str(path.parent)]
        return
    t = j.get("training") or {}
    cmd = [BIN, "eval", "--model", str(path), "--perf-db", db_path(t["perf_db"]), "--arch", j["arch"],
           "--solver", solver, "--record"]
    older = older_names(t)
    if older:
        cmd += ["--older-perf-db", ",".join(db_path(o) for o in older)]
    yield cmd
    for gpu in sorted((j.get("validation_by_gpu") or {}).keys()):
        yield [BIN, "eval", "--model", str(path), "--perf-db", db_of_gpu(gpu), "--arch", gpu, "--solver", solver,
               "--record"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="only files whose name contains this")
    ap.add_argument("--models-only", action="store_true")
    ap.add_argument("--cells-only", action="store_true")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    files = sorted((ROOT / "weights").glob("*.json"))
    failed = 0
    for path in files:
        if a.only and a.only not in path.name:
            continue
        cell = path.name.endswith(".neighbour.json")
        if (cell and a.models_only) or (not cell and a.cells_only):
            continue
        j = json.loads(path.read_text())
        for cmd in commands(path, j):
            if a.dry_run:
                print(" ".join(cmd))
                continue
            t0 = time.time()
            r = subprocess.run(["nice"] + cmd, capture_output=True, text=True)
            secs = time.time() - t0
            if r.returncode != 0:
                failed += 1
                print(f"FAILED {path.name}: {' '.join(cmd)}\n{r.stderr.strip()}", flush=True)
                continue
            head = [l for l in r.stdout.splitlines() if l.startswith(("model, beam", "MIOpen static default",
                                                                       "nearest neighbour"))]
            print(f"{path.name} ({cmd[cmd.index('--arch') + 1]}, {secs:.0f} s): " + "; ".join(
                " ".join(l.split()[:-7]) + " " + l.split()[-7] for l in head[:5]), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
