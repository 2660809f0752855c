#!/usr/bin/env bash
# The lavapipe GPU == CPU tests of the greedy paths (single dispatch, fused step, batched look-
# ahead) on every hard problem of the shared perf databases (K or C below 16, N = 1, odd sizes)
# instead of the share `cargo test` takes (every 3rd or 4th): about 15 minutes of lavapipe.
#   tools/gpu_hard_all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TUNEINFER_ALL_HARD=1 cargo test --release --test gpu_single --test gpu_fused --test gpu_hard_classes -- --nocapture 2>&1 \
  | grep -E "identical|single dispatch|fused step|hard|panicked|skipped|test result"
