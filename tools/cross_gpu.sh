#!/usr/bin/env bash
# Measures training across GPUs with the GPU as an input (`train --other-gpu-perf-db`, issue 27):
# for each cell and seed, one model of the target GPU's rows alone and one with the other GPUs'
# rows (POOL), both evaluated on the target GPU's held-out geometries of that seed beside the
# nearest neighbour (over the target's rows) and MIOpen's default. Niced; one line per run on
# stdout and in OUT_DIR/summary.tsv.
#
#   tools/cross_gpu.sh OUT_DIR CELL...      CELL = dbname:solver:arch, e.g. gfx1030_36:ConvOclBwdWrW2<1>:gfx1030
#
# Environment: SEEDS (default "1 2 3"), MEMBERS (3), PATIENCE (10), EPOCHS (150), POOL (the other
# GPUs' files, comma-separated; default every shared database but the target's; names as MIOpen
# names them; MI300X's gfx942130 only with POOL_MI300=1: its ~22,000 Winograd rows make an epoch
# ten times longer), ONLY (own|pooled: run only that variant), TIME_LIMIT (seconds per member,
# default 300), TUNEINFER, DATA (../shared/miopen/perfdb).
set -euo pipefail
out=${1:?usage: tools/cross_gpu.sh OUT_DIR CELL...}
shift
bin=${TUNEINFER:-target/release/tuneinfer}
data=${DATA:-../shared/miopen/perfdb}
seeds=${SEEDS:-1 2 3}
mkdir -p "$out"
summary="$out/summary.tsv"
[ -f "$summary" ] || printf 'cell\tvariant\tseed\tproblems\tmodel\tnn\tdefault\tseconds\n' >"$summary"

for cell in "$@"; do
  IFS=: read -r db solver arch <<<"$cell"
  file="$data/$db.db"
  [ -f "$file" ] || file="$data/$db.db.txt.bz2"
  pool=${POOL:-}
  if [ -z "$pool" ]; then
    for f in "$data"/gfx900_56.db "$data"/gfx906_60.db "$data"/gfx1030_36.db "$data"/gfx90878.db.txt.bz2 \
             "$data"/gfx90a68.db.txt.bz2 ${POOL_MI300:+"$data"/gfx942130.db.txt.bz2}; do
      [ "$(basename "$f" | cut -d. -f1)" = "$db" ] && continue
      pool=${pool:+$pool,}$f
    done
  fi
  fsolver=${solver//</_}
  for seed in $seeds; do
    for variant in own pooled; do
      [ -n "${ONLY:-}" ] && [ "$ONLY" != "$variant" ] && continue
      dir="$out/$variant-s$seed"
      name=${arch}_${fsolver//>/}
      mkdir -p "$dir"
      if [ ! -f "$dir/$name.json" ]; then
        extra=()
        [ "$variant" = pooled ] && extra=(--other-gpu-perf-db "$pool")
        start=$(date +%s)
        if ! nice -n 10 "$bin" train --perf-db "$file" --arch "$arch" --solver "$solver" --seed "$seed" \
            --members "${MEMBERS:-3}" --epochs "${EPOCHS:-150}" --patience "${PATIENCE:-10}" --time-limit "${TIME_LIMIT:-300}" "${extra[@]}" \
            --out "$dir" --checkpoint "$dir/$name.ckpt.safetensors" >"$dir/$name.log" 2>&1; then
          echo "FAILED $cell $variant seed $seed (see $dir/$name.log)"
          continue
        fi
        secs=$(( $(date +%s) - start ))
      else
        secs=-
      fi
      line=$(python3 - "$dir/$name.json" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
def pick(prefix):
    for m in v["methods"]:
        if m.get("kind") is None and m["method"].startswith(prefix):
            return m
model = pick("model, beam")
print(f'{model["problems"]}\t{model["exact_pct"]:.1f}\t{pick("nearest neighbour")["exact_pct"]:.1f}\t{pick("MIOpen static default")["exact_pct"]:.1f}')
EOF
)
      printf '%s\t%s\t%s\t%s\t%s\n' "$cell" "$variant" "$seed" "$line" "$secs" | tee -a "$summary"
    done
  done
done
