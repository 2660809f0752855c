#!/usr/bin/env bash
# Regenerates the run-time data tuneinfer ships (the GTC NHWC and composable_kernel catalogues in
# src/solvers/*/data/) from MIOpen's data beside the checkout (../shared/miopen, or
# $TUNEINFER_MIOPEN_DATA): see src/solvers/ck/data/NOTICE.md for what comes from where.
#   tools/gen_data.sh           write the files
#   tools/gen_data.sh --check   write nothing; exit 1 when a shipped file differs
set -euo pipefail
cd "$(dirname "$0")/.."
data="${TUNEINFER_MIOPEN_DATA:-$PWD/../shared/miopen}"
exec cargo run --release --quiet --example gen_data -- "$@" "$data"
