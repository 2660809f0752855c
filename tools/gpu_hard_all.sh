#!/usr/bin/env bash
# The lavapipe GPU == CPU tests of the greedy paths (single dispatch, fused step, batched look-
# ahead) on every hard problem of the shared perf databases (K or C below 16, N = 1, odd sizes)
# instead of the share `cargo test` takes (every 3rd, 4th or 8th): most of an hour of lavapipe on this
# 2-core machine (gpu_single alone ran 23 minutes).
#   tools/gpu_hard_all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TUNEINFER_ALL_HARD=1 cargo test --release --test gpu gpu_single:: --test gpu gpu_fused:: --test gpu gpu_hard_classes:: -- --nocapture 2>&1 \
  | grep -E "identical|single dispatch|fused step|hard|panicked|skipped|test result"
