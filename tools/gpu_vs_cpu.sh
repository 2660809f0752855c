#!/usr/bin/env bash
# The whole-corpus GPU == CPU comparison: every applicable problem of every shared perf database
# for MIOpen's gfx908 ConvAsm1x1U model and each shipped model of ours, in MIOpen's greedy walk,
# beam 4 and beam 16; prints per (model, mode) how many problems are identical and how many
# differ (naming the first few), and fails if any differ. Minutes on lavapipe.
#   tools/gpu_vs_cpu.sh [SOLVER [MODES [ARCHES]]]
#     SOLVER  only that solver's models, e.g. ConvAsm1x1U
#     MODES   e.g. miopen,4,16 (MIOpen's walk, beams of width 4 and 16; the default)
#     ARCHES  only these models' arches, e.g. gfx908 (MIOpen's model) or gfx906,gfx906_64
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then export TUNEINFER_CORPUS_SOLVER="$1"; fi
if [ $# -gt 1 ]; then export TUNEINFER_CORPUS_MODES="$2"; fi
if [ $# -gt 2 ]; then export TUNEINFER_CORPUS_ARCHES="$3"; fi
cargo test --release --test gpu corpus_gpu_cpu:: -- --ignored --nocapture 2>&1 \
  | grep -E "problems identical|differs:|near-tie order:|panicked|skipped|test result"
