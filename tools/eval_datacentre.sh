#!/usr/bin/env bash
# Evaluates every model in MODELS_DIR named {dbname}_{solver}.json (as tools/train_datacentre.sh
# writes them) on its own held-out geometries with `tuneinfer eval --json`, MIOpen's gfx908 KTN
# model beside ConvAsm1x1U on gfx908 (eval adds it when ../shared/miopen/models is there) and,
# on MI300X, the second tuning run history/gfx942130.2024-12 as the noise ceiling; then prints
# the markdown table of tools/eval_table.py (per solver, arch and precision). Models other than
# MI300X's are not evaluated again: the table `train` recorded in their JSON (same split, same
# files) is used.
#
#   tools/eval_datacentre.sh MODELS_DIR OUT_DIR
#
# Environment: TUNEINFER (default target/release/tuneinfer), DATA (../shared/miopen/perfdb).
set -euo pipefail
models=${1:?usage: tools/eval_datacentre.sh MODELS_DIR OUT_DIR}
out=${2:?usage: tools/eval_datacentre.sh MODELS_DIR OUT_DIR}
bin=${TUNEINFER:-target/release/tuneinfer}
data=${DATA:-../shared/miopen/perfdb}
mkdir -p "$out"
for json in "$models"/*.json; do
  name=$(basename "$json" .json)
  db=${name%%_*}
  solver=${name#*_}
  case "$db" in gfx90878|gfx90a68|gfx942130) ;; *) continue ;; esac
  [ -s "$out/$name.eval.json" ] && continue
  if [ "$db" != gfx942130 ] || [ ! -f "$data/history/gfx942130.2024-12.db.txt.bz2" ]; then
    # The table train recorded on these very files (same split) is the evaluation.
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["validation"]))' "$json" > "$out/$name.eval.json"
    continue
  fi
  extra=(--second-run "$data/history/gfx942130.2024-12.db.txt.bz2")
  echo "$(date +%T) eval $name" >&2
  "$bin" eval --perf-db "$data/$db.db.txt.bz2" --arch "$db" --solver "$solver" --models "$models" \
    --json "${extra[@]}" > "$out/$name.eval.json.tmp"
  mv "$out/$name.eval.json.tmp" "$out/$name.eval.json"
done
python3 "$(dirname "$0")/eval_table.py" "$out"/*.eval.json
