#!/usr/bin/env python3
"""Adds the row ids of issue 52 ("row": "model", "default", ...) beside the labels of every
recorded validation table in weights/*.json, as `tuneinfer eval --record` now writes them.

The ids are those of src/figures.rs (RowId): a row over all problems or of one kind is the
model's, MIOpen's default's, the default-where-valid mix's or one neighbour variant's by the
label it was written with (RowId::label_prefix). Other rows (greedy, hybrids, KTN, served)
get no id. Idempotent. --check: exit 1 when a file lacks ids, write nothing.

    python3 tools/row_ids.py [--check] [weights/*.json]
"""
import glob
import json
import sys

NEIGHBOURS = [("neighbour_solver", "nearest neighbour"), ("neighbour_key", "nearest neighbour key"),
              ("neighbour_vote", "nearest neighbour vote")]


def prefixes(per_kind):
    out = [("model", "beam " if per_kind else "model, beam"),
           ("default", "static default" if per_kind else "MIOpen static default"),
           ("default_where_valid", "default/model" if per_kind else "default where valid, else model")]
    out += [(i, f"{label}, " if per_kind else f"{label} (") for i, label in NEIGHBOURS]
    return out


def row_id(row):
    per_kind = row.get("kind") is not None
    for rid, prefix in prefixes(per_kind):
        if row.get("method", "").startswith(prefix):
            return rid
    return None


def with_ids(rows):
    out = []
    for r in rows:
        rid = row_id(r)
        new = {}
        for k, v in r.items():
            if k == "row":
                continue
            new[k] = v
            if k == "method":
                new["row"] = rid
        out.append(new)
    return out


def walk(o):
    if isinstance(o, dict):
        m = o.get("methods")
        if isinstance(m, list) and m and isinstance(m[0], dict) and "exact_pct" in m[0]:
            o["methods"] = with_ids(m)
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)


def main():
    args = sys.argv[1:]
    check = "--check" in args
    files = [a for a in args if a != "--check"] or sorted(glob.glob("weights/*.json"))
    stale = 0
    for f in files:
        text = open(f).read()
        data = json.loads(text)
        walk(data)
        new = json.dumps(data, indent=2, ensure_ascii=False) + ("\n" if text.endswith("\n") else "")
        if new != text:
            stale += 1
            if not check:
                open(f, "w").write(new)
    print(f"{len(files)} files, {stale} {'without ids' if check else 'given ids'}")
    sys.exit(1 if check and stale else 0)


if __name__ == "__main__":
    main()
