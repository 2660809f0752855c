#!/usr/bin/env bash
# Learning curve of one (database, solver) cell: trains on N of the training-side rows for each N
# given (`train --max-train-rows N`, spread evenly over the database; the validation and
# early-stop geometries stay the whole database's), with the same epochs and time limit, and
# prints rows used vs the validation exact match of the model, the nearest neighbour and the
# static default.
#
#   tools/learning_curve.sh OUT_DIR DBNAME SOLVER N...      e.g. /tmp/lc gfx90a68 ConvAsmBwdWrW1x1 2000 6000 18000
#
# Environment: TUNEINFER (default target/release/tuneinfer), DATA (../shared/miopen/perfdb),
# EPOCHS (40), PATIENCE (6), LIMIT_S (300, per run).
set -euo pipefail
out=${1:?usage: tools/learning_curve.sh OUT_DIR DBNAME SOLVER N...}
db=${2:?dbname}
solver=${3:?solver}
shift 3
bin=${TUNEINFER:-target/release/tuneinfer}
data=${DATA:-../shared/miopen/perfdb}
for n in "$@"; do
  dir="$out/$n"
  mkdir -p "$dir"
  if [ ! -f "$dir/${db}_${solver}.json" ]; then
    nice -n 10 "$bin" train --perf-db "$data/$db.db.txt.bz2" --arch "$db" --solver "$solver" \
      --max-train-rows "$n" --epochs "${EPOCHS:-40}" --patience "${PATIENCE:-6}" \
      --time-limit "${LIMIT_S:-300}" --out "$dir" --checkpoint "$dir/ckpt.safetensors" >"$dir/train.log" 2>&1
  fi
  python3 - "$dir/${db}_${solver}.json" "$n" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["training"]
rows = {m["method"]: m for m in d["validation"]["methods"] if m.get("kind") is None}
get = lambda p: next(v["exact_pct"] for k, v in rows.items() if k.startswith(p))
print(f"rows {sys.argv[2]:>6}  used {t['data_report']['used']:>6}  epochs {max(t['epochs_run'])}  "
      f"{t.get('train_seconds', 0):.0f} s  model {get('model, beam'):.1f}  nearest neighbour "
      f"{get('nearest neighbour'):.1f}  static default {get('MIOpen static default'):.1f}")
PY
done
