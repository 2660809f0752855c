#!/usr/bin/env bash
# Issue 36 item 3 ("no class left out"): for every tunable solver and every shared perf database,
# the tuned rows tuneinfer does not use, with the reader's reasons (`train --data-report`): rows
# the solver's applicability refuses, keys that do not parse, configs that break the rules. One
# block per (database, solver) with rows; a summary line per block on stdout.
#
#   tools/refusals.sh [OUT_FILE]      (default /tmp/refusals.txt; about 5 minutes on 2 cores)
#
# Environment: TUNEINFER (target/release/tuneinfer), DATA (../shared/miopen/perfdb).
set -euo pipefail
bin=${TUNEINFER:-target/release/tuneinfer}
data=${DATA:-../shared/miopen/perfdb}
out=${1:-/tmp/refusals.txt}
: >"$out"
solvers=$("$bin" train --help | sed -n '/^Solvers:/,$p' | sed 's/^Solvers://' | tr ',' '\n' | sed 's/^ *//;s/ *$//' | grep -v '^$')
for db in "$data"/*.db "$data"/*.db.txt.bz2 "$data"/history/*; do
  name=$(basename "$db")
  gpu=${name%%.*}
  while read -r solver; do
    report=$(nice "$bin" train --data-report --perf-db "$db" --arch "$gpu" --solver "$solver" 2>&1 || true)
    case "$report" in
      *" rows: "*) ;;
      *) continue ;;  # no rows of the solver there, or not a solver tuneinfer trains
    esac
    printf '%s\n' "$report" | grep -v '^split' >>"$out"
    printf '%s\n' "$report" | head -1
  done <<<"$solvers"
done
