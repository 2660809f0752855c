#!/usr/bin/env python3
"""The per-cell table of docs/methods.md, from the figures recorded in weights/*.json.

Every shipped model (`validation`) and neighbour record (`metrics`) carries the table
`eval --record` measured on its held-out problems. This prints, per record, over all its
held-out problems: the exact % served by `--method best` (the system perf db at hand), the
model's (beam 16), the best of the three neighbours (and which), MIOpen's static default, the
default where valid else the model, and served minus the better of the default and the
neighbour.

    tools/cells_table.py                      # print the table
    tools/cells_table.py --update docs/methods.md   # rewrite it between the markers
    tools/cells_table.py --check docs/methods.md    # exit 1 if the doc's table is stale

Records without figures (trained with nothing held out) are listed under the table.
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- cells_table.py: begin -->"
END = "<!-- cells_table.py: end -->"
SERVED = "served by --method best"
NEIGHBOURS = {
    "nearest neighbour (": "solver",
    "nearest neighbour key (": "key",
    "nearest neighbour vote (": "vote",
}


def pct(x):
    return "-" if x is None else f"{x:.1f}"


def table(weights: Path) -> str:
    lines = [
        "| record | held out | served | model | neighbour | MIOpen default | default where valid | served - max(default, neighbour) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    missing = []
    for path in sorted(weights.glob("*.json")):
        record = json.loads(path.read_text())
        figures = record.get("validation") or record.get("metrics")
        name = path.name.removesuffix(".json")
        if not figures:
            missing.append(name)
            continue
        rows = [r for r in figures.get("methods", []) if r.get("kind") is None]

        def exact(prefix):
            for r in rows:
                if r["method"].startswith(prefix):
                    return r["exact_pct"], r.get("problems", 0)
            return None, 0

        served, n = exact(SERVED)
        model, _ = exact("model, beam")
        default, _ = exact("MIOpen static default")
        mix, _ = exact("default where valid")
        nn = [(exact(p)[0], v) for p, v in NEIGHBOURS.items() if exact(p)[0] is not None]
        best_nn = max(nn, key=lambda t: t[0]) if nn else (None, "")
        floor = max(x for x in (default, best_nn[0]) if x is not None) if default is not None else None
        margin = None if served is None or floor is None else served - floor
        lines.append(
            f"| {name} | {n:,} | {pct(served)} | {pct(model)} | "
            f"{pct(best_nn[0])} ({best_nn[1]}) | {pct(default)} | {pct(mix)} | "
            f"{'-' if margin is None else f'{margin:+.1f}'} |"
        )
    out = "\n".join(lines) + "\n"
    if missing:
        out += "\nNo held-out figures (trained with nothing held out): " + ", ".join(missing) + ".\n"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--update", metavar="DOC", help="rewrite the table between the markers in DOC")
    g.add_argument("--check", metavar="DOC", help="exit 1 if DOC's table differs from the weights'")
    ap.add_argument("--weights", default=str(ROOT / "weights"))
    a = ap.parse_args()
    text = table(Path(a.weights))
    doc_path = a.update or a.check
    if not doc_path:
        sys.stdout.write(text)
        return 0
    doc = Path(doc_path).read_text()
    if BEGIN not in doc or END not in doc:
        print(f"{doc_path}: no '{BEGIN}' ... '{END}' markers", file=sys.stderr)
        return 2
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + "\n" + text + END + tail
    if a.check:
        if new != doc:
            print(f"{doc_path}: the per-cell table is stale; run tools/cells_table.py --update {doc_path}", file=sys.stderr)
            return 1
        print(f"{doc_path}: per-cell table current")
        return 0
    Path(doc_path).write_text(new)
    print(f"{doc_path}: per-cell table written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
