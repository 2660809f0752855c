#!/usr/bin/env bash
# tests/serving/shipped_models.rs for chosen models only: every answer of MIOpen's greedy walk and of the
# default beam's first four valid on ~2,000 problems of the model's database, and GPU == CPU
# (lavapipe or a real GPU) on ~200, greedy and beam 4. The CI test run checks every model's
# validity but only the newest model of each solver on the GPU; run this for newly trained ones.
#   tools/shipped_check.sh arch:solver[,arch:solver...]     e.g. gfx90a68:ConvOclDirectFwd
set -euo pipefail
cd "$(dirname "$0")/.."
export TUNEINFER_SHIPPED=${1:?usage: tools/shipped_check.sh arch:solver[,arch:solver...]}
cargo test --release --test serving shipped_models:: -- --nocapture --test-threads 1 2>&1 \
  | grep -E "identical|all valid|skipped|panicked|test result"
