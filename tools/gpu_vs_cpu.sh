#!/usr/bin/env bash
# The whole-corpus GPU == CPU comparison: every applicable problem of every shared perf database
# for MIOpen's gfx908 ConvAsm1x1U model and each shipped model of ours, in MIOpen's greedy walk,
# beam 4 and beam 16; a mismatch fails naming the problem. Minutes on lavapipe.
#   tools/gpu_vs_cpu.sh [SOLVER [MODES]]   (only that solver's models; MODES e.g. miopen,4,16)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then export TUNEINFER_CORPUS_SOLVER="$1"; fi
if [ $# -gt 1 ]; then export TUNEINFER_CORPUS_MODES="$2"; fi
cargo test --release --test corpus_gpu_cpu -- --ignored --nocapture 2>&1 | grep -E "problems identical|panicked|skipped|test result"
