#!/usr/bin/env bash
# Every tuned row of MIOpen 3.5.1's data-centre perf databases for the solvers tuneinfer models:
# `tuneinfer train --data-report` per (database, solver) prints how many rows are used, not
# applicable and rule-violating, each with its reason (the solver's applicability message, or the
# parameter at which the rules reject the tuned value). Results: docs/datacentre.md.
#
#   tools/audit_datacentre.sh [DB...]     default: gfx90878 gfx90a68 gfx942130 history/gfx942130.2024-12
#
# Environment: TUNEINFER (default target/release/tuneinfer), DATA (../shared/miopen/perfdb).
set -uo pipefail
bin=${TUNEINFER:-target/release/tuneinfer}
data=${DATA:-../shared/miopen/perfdb}
dbs=("$@")
[ ${#dbs[@]} -eq 0 ] && dbs=(gfx90878 gfx90a68 gfx942130 history/gfx942130.2024-12)
GTC=ConvAsmImplicitGemmGTCDynamic
solvers=(ConvAsm1x1U ConvAsmBwdWrW1x1 ConvAsmBwdWrW3x3 ConvOclDirectFwd ${GTC}FwdXdlopsNHWC
  ${GTC}BwdXdlopsNHWC ${GTC}WrwXdlopsNHWC ConvBinWinogradRxSf3x2 ConvBinWinogradRxSf2x3)
for db in "${dbs[@]}"; do
  arch=$(basename "$db"); arch=${arch%%.*}
  for s in "${solvers[@]}"; do
    nice -n 10 "$bin" train --data-report --perf-db "$data/$db.db.txt.bz2" --arch "$arch" --solver "$s" 2>&1 \
      | sed "s|^error: |$arch $s: error: |"
  done
done
