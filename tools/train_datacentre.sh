#!/usr/bin/env bash
# Trains tuneinfer's models for the data-centre GPUs (issue 24) from MIOpen 3.5.1's text perf
# databases, one (arch, solver) cell after another, niced, in priority order (the share of
# find-db wins each solver has on that GPU). Each cell holds out 20% of the geometries for
# `tuneinfer eval` (the default --val-fraction), so the shipped files are the evaluated ones.
#
#   tools/train_datacentre.sh OUT_DIR [CELL...]     CELL = dbname:solver, e.g. gfx90a68:ConvAsmBwdWrW1x1
#
# Without CELLs it trains the whole queue below. Logs go to OUT_DIR/{arch}_{solver}.log.
# Environment: MEMBERS (default 1), EPOCHS (40), PATIENCE (6), MEMBER_LIMIT_S (420, per member),
# TUNEINFER (the binary, default target/release/tuneinfer), DATA (../shared/miopen/perfdb).
set -euo pipefail
out=${1:?usage: tools/train_datacentre.sh OUT_DIR [dbname:solver ...]}
shift
bin=${TUNEINFER:-target/release/tuneinfer}
data=${DATA:-../shared/miopen/perfdb}
members=${MEMBERS:-1}
epochs=${EPOCHS:-40}
patience=${PATIENCE:-6}
limit=${MEMBER_LIMIT_S:-420}
mkdir -p "$out"

GTC=ConvAsmImplicitGemmGTCDynamic
queue=(
  gfx90a68:${GTC}WrwXdlopsNHWC gfx90a68:${GTC}BwdXdlopsNHWC gfx90a68:${GTC}FwdXdlopsNHWC
  gfx90878:${GTC}WrwXdlopsNHWC gfx90878:ConvAsmBwdWrW1x1 gfx90878:${GTC}BwdXdlopsNHWC
  gfx90878:ConvOclDirectFwd gfx90878:${GTC}FwdXdlopsNHWC gfx90878:ConvAsm1x1U
  gfx942130:${GTC}WrwXdlopsNHWC gfx942130:${GTC}BwdXdlopsNHWC gfx942130:${GTC}FwdXdlopsNHWC
  gfx942130:ConvBinWinogradRxSf3x2 gfx942130:ConvBinWinogradRxSf2x3
  gfx90a68:ConvOclDirectFwd gfx90878:ConvBinWinogradRxSf3x2 gfx90a68:ConvBinWinogradRxSf3x2
  gfx90a68:ConvAsmBwdWrW1x1 gfx90a68:ConvAsm1x1U gfx90878:ConvBinWinogradRxSf2x3
  gfx90a68:ConvBinWinogradRxSf2x3 gfx90878:ConvAsmBwdWrW3x3 gfx90a68:ConvAsmBwdWrW3x3
  gfx942130:ConvAsmBwdWrW1x1 gfx942130:ConvAsm1x1U gfx942130:ConvOclDirectFwd gfx942130:ConvAsmBwdWrW3x3
)
[ $# -gt 0 ] && queue=("$@")

for cell in "${queue[@]}"; do
  db=${cell%%:*}
  solver=${cell#*:}
  name=${db}_${solver}
  if [ -f "$out/$name.json" ]; then echo "skip $name (done)"; continue; fi
  echo "$(date +%T) train $name"
  start=$(date +%s)
  if nice -n 10 "$bin" train --perf-db "$data/$db.db.txt.bz2" --arch "$db" --solver "$solver" \
      --members "$members" --epochs "$epochs" --patience "$patience" --time-limit "$limit" \
      --out "$out" --checkpoint "$out/$name.ckpt.safetensors" >"$out/$name.log" 2>&1; then
    echo "$(date +%T) done $name in $(( $(date +%s) - start )) s"
  else
    echo "$(date +%T) FAILED $name (see $out/$name.log)"
  fi
done
