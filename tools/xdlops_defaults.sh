#!/usr/bin/env bash
# The whole-corpus version of tests/solvers/hip_xdlops.rs's default check: on every problem of the MI100
# (gfx90878) and MI210 (gfx90a68) text databases where one of the six HIP xdlops solvers applies,
# tuneinfer's HeuristicInit (a depth-first walk in the odometer's order) gives the config MIOpen's
# loop as written gives (tried config by config, up to 127,008 each), and it passes the rules.
# The test compares every 31st problem; this compares every one (a few minutes).
#   tools/xdlops_defaults.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TUNEINFER_XDLOPS_EVERY=1 cargo test --release --test solvers hip_xdlops:: the_default_passes_the_rules -- --nocapture 2>&1 \
  | grep -E "applies to|panicked|test result"
