#!/usr/bin/env bash
# Trains tuneinfer's models for the data-centre GPUs (issue 24) from MIOpen 3.5.1's text perf
# databases, one (arch, solver) cell after another, niced, in priority order (the share of
# find-db wins each solver has on that GPU). Each cell holds out 20% of the geometries for
# `tuneinfer eval` (the default --val-fraction), so the shipped files are the evaluated ones.
#
#   tools/train_datacentre.sh OUT_DIR [CELL...]     CELL = dbname:solver[:arch], e.g. gfx90a68:ConvAsmBwdWrW1x1
#
# dbname names DATA/dbname.db.txt.bz2 or, where that is absent, the sqlite DATA/dbname.db; arch
# (default: dbname) is the --arch the model is trained and named for, e.g.
# gfx906_60:ConvMlirIgemmFwd:gfx906 writes OUT_DIR/gfx906_ConvMlirIgemmFwd.json.
#
# Without CELLs it trains the whole queue below. Logs go to OUT_DIR/{arch}_{solver}.log.
# Environment: OLDER (--older-perf-db FILE[,FILE...] for every cell), OTHER (--other-gpu-perf-db
# FILE[,FILE...]: other GPUs' rows, the GPU as an input), MEMBERS (default 1), EPOCHS (40), PATIENCE (6), MEMBER_LIMIT_S (420, per member),
# TUNEINFER (the binary, default target/release/tuneinfer), DATA (../shared/miopen/perfdb), NICE (0:
# build other things at nice 15 or more meanwhile, or they take half the cores from training).
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
  gfx90878:ConvMlirIgemmFwdXdlops gfx906_60:ConvMlirIgemmFwd:gfx906 gfx90878:ConvMlirIgemmBwdXdlops
  gfx90a68:ConvMlirIgemmFwdXdlops gfx906_60:ConvMlirIgemmBwd:gfx906 gfx90a68:ConvMlirIgemmBwdXdlops
  gfx906_60:ConvMlirIgemmWrW:gfx906 gfx90878:ConvMlirIgemmWrWXdlops gfx90a68:ConvMlirIgemmWrWXdlops
  gfx1030_36:ConvBinWinogradRxSf3x2:gfx1030
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
  IFS=: read -r db solver arch <<<"$cell"
  arch=${arch:-$db}
  # File names spell ConvOclBwdWrW2<4> as ConvOclBwdWrW2_4 (weights::file_solver_name).
  fsolver=${solver//</_}
  name=${arch}_${fsolver//>/}
  file="$data/$db.db.txt.bz2"
  [ -f "$file" ] || file="$data/$db.db"
  if [ -f "$out/$name.json" ]; then echo "skip $name (done)"; continue; fi
  echo "$(date +%T) train $name"
  start=$(date +%s)
  if nice -n "${NICE:-0}" "$bin" train --perf-db "$file" --arch "$arch" --solver "$solver" \
      --members "$members" --epochs "$epochs" --patience "$patience" --time-limit "$limit" \
      ${OLDER:+--older-perf-db "$OLDER"} ${OTHER:+--other-gpu-perf-db "$OTHER"} \
      --out "$out" --checkpoint "$out/$name.ckpt.safetensors" >"$out/$name.log" 2>&1; then
    echo "$(date +%T) done $name in $(( $(date +%s) - start )) s"
  else
    echo "$(date +%T) FAILED $name (see $out/$name.log)"
  fi
done
