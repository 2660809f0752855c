#!/usr/bin/env bash
# Leave one GPU out (issue 34 item 3): how a model with the GPU as an input does on a GPU nobody
# tuned. For each cell, one model trained on the other GPUs' rows only (`train
# --other-gpu-perf-db POOL --leave-out-target`: none of the target's rows is trained on or
# early-stopped on), evaluated on the target GPU's held-out geometries of the seed beside the
# nearest neighbour over the target's own rows, the nearest neighbour over the other GPUs' rows,
# MIOpen's default, and the target's own shipped model (weights/; its stored validation, the
# same split when it was trained with the same seed and validation fraction on the same files).
# Niced; one line per run on stdout and in OUT_DIR/summary.tsv.
#
#   tools/leave_one_out.sh OUT_DIR CELL...   CELL = dbname:solver:arch, e.g. gfx90a68:ConvAsm1x1U:gfx90a68
#
# Environment: SEEDS (default "1"), MEMBERS (1), PATIENCE (10), EPOCHS (150), TIME_LIMIT (seconds
# per member, default 300), POOL (the other GPUs' files, comma-separated; default every shared
# database but the target's, named as MIOpen names them; MI300X's gfx942130 only with POOL_MI300=1:
# its 23,000-71,000 rows per solver make an epoch several times longer), WEIGHTS (weights),
# TUNEINFER, DATA (../shared/miopen/perfdb). An interrupted run resumes from its checkpoint.
set -euo pipefail
out=${1:?usage: tools/leave_one_out.sh OUT_DIR CELL...}
shift
bin=${TUNEINFER:-target/release/tuneinfer}
data=${DATA:-../shared/miopen/perfdb}
weights=${WEIGHTS:-weights}
seeds=${SEEDS:-1}
mkdir -p "$out"
summary="$out/summary.tsv"
[ -f "$summary" ] || printf 'cell\tseed\tpool\tproblems\ttrain_rows\tleave_out_exact\tleave_out_top16\tshipped_exact\tshipped_top16\tshipped\tnn_target\tnn_other_gpus\tdefault\ttrain_s\twall_s\n' >"$summary"

for cell in "$@"; do
  IFS=: read -r db solver arch <<<"$cell"
  file="$data/$db.db.txt.bz2"
  [ -f "$file" ] || file="$data/$db.db"
  pool=${POOL:-}
  if [ -z "$pool" ]; then
    for f in "$data"/gfx900_56.db "$data"/gfx906_60.db "$data"/gfx1030_36.db "$data"/gfx90878.db.txt.bz2 \
             "$data"/gfx90a68.db.txt.bz2 ${POOL_MI300:+"$data"/gfx942130.db.txt.bz2}; do
      [ "$(basename "$f" | cut -d. -f1)" = "$db" ] && continue
      pool=${pool:+$pool,}$f
    done
  fi
  fsolver=${solver//</_}
  fsolver=${fsolver//>/}
  name=${arch}_${fsolver}
  for seed in $seeds; do
    dir="$out/loo-s$seed"
    mkdir -p "$dir"
    secs=-
    if [ ! -f "$dir/$name.json" ]; then
      resume=()
      [ -f "$dir/$name.ckpt.safetensors" ] && resume=(--resume "$dir/$name.ckpt.safetensors")
      start=$(date +%s)
      if ! nice -n 15 "$bin" train --perf-db "$file" --arch "$arch" --solver "$solver" --seed "$seed" \
          --members "${MEMBERS:-1}" --epochs "${EPOCHS:-150}" --patience "${PATIENCE:-10}" --time-limit "${TIME_LIMIT:-300}" \
          --other-gpu-perf-db "$pool" --leave-out-target "${resume[@]}" \
          --out "$dir" --checkpoint "$dir/$name.ckpt.safetensors" >>"$dir/$name.log" 2>&1; then
        echo "FAILED $cell seed $seed (see $dir/$name.log)"
        continue
      fi
      secs=$(( $(date +%s) - start ))
    fi
    line=$(python3 - "$dir/$name.json" "$weights/$name.json" "$seed" <<'EOF'
import json, os, sys
ours = json.load(open(sys.argv[1]))
seed = int(sys.argv[3])

def pick(v, prefix):
    for m in v["methods"]:
        if m.get("kind") is None and m["method"].startswith(prefix):
            return m
    return None

def pct(m, key="exact_pct"):
    return "-" if m is None or m.get(key) is None else f"{m[key]:.1f}"

v = ours["validation"]
t = ours["training"]
model = pick(v, "model, beam")
pool = "+".join(g["gpu"] for g in t["other_gpu_perf_dbs"])
shipped_exact = shipped_top16 = "-"
shipped = "none shipped"
if os.path.exists(sys.argv[2]):
    s = json.load(open(sys.argv[2]))
    st = s.get("training", {})
    sv = s.get("validation")
    sm = pick(sv, "model, beam") if sv else None
    if sm is None:
        shipped = "shipped, none held out"
    else:
        same = (st.get("seed") == seed and st.get("val_fraction") == t["val_fraction"]
                and not st.get("older_perf_dbs") and sm["problems"] == model["problems"])
        kind = f'{st.get("members", 1)} member(s)'
        if st.get("other_gpu_perf_dbs"):
            kind += ", GPU input, other GPUs' rows too"
        shipped = ("same split" if same else f'other split ({sm["problems"]} problems)') + f", {kind}"
        shipped_exact, shipped_top16 = pct(sm), pct(sm, "top16_pct")
print("\t".join([
    pool, str(model["problems"]), str(t["split"]["train"]), pct(model), pct(model, "top16_pct"),
    shipped_exact, shipped_top16, shipped,
    pct(pick(v, "nearest neighbour")), pct(pick(v, "other GPUs'")),
    pct(pick(v, "MIOpen static default")), f'{t["train_seconds"]:.0f}',
]))
EOF
)
    printf '%s\t%s\t%s\t%s\n' "$cell" "$seed" "$line" "$secs" | tee -a "$summary"
  done
done
