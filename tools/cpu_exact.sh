#!/usr/bin/env bash
# Is the CPU path still exactly the reference? Writes every CPU answer (config, source, the
# score's bits) of MIOpen's gfx908 model over the whole ConvAsm1x1U corpus and of each shipped
# model over a sample of its problems (tests/solvers/corpus_cpu_dump.rs), once for BASE (a git revision,
# built in a temporary worktree) and once for the working tree, and diffs the two files. Any
# difference fails. A few minutes per side (plus a build of BASE the first time; BASE's file is
# kept for the next run).
#   tools/cpu_exact.sh [BASE]     BASE defaults to HEAD (compare uncommitted changes)
#   TUNEINFER_DUMP_SAMPLE=N       problems per shipped model (default 1500)
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-HEAD}"
rev=$(git rev-parse --verify "$base^{commit}")
work="${TMPDIR:-/tmp}/tuneinfer-cpu-exact"
mkdir -p "$work"
tree="$work/tree-$rev"
if [ ! -d "$tree" ]; then
  git worktree add --detach "$tree" "$rev" >/dev/null
fi
# The dump test and its helpers as they are now, so that old revisions write the same format.
# (a test binary of its own there, whatever BASE's grouping of the tests).
sed 's/^use crate::common;/mod common;/' tests/solvers/corpus_cpu_dump.rs > "$tree/tests/corpus_cpu_dump.rs"
mkdir -p "$tree/tests/common" && cp tests/common/*.rs "$tree/tests/common/"
run() { # dir target out test-args...
  local dir=$1 target=$2 out=$3; shift 3
  (cd "$dir" && CARGO_TARGET_DIR="$target" TUNEINFER_MIOPEN_DATA="${TUNEINFER_MIOPEN_DATA:-$PWD/../shared/miopen}" \
    TUNEINFER_DUMP="$out" cargo test --release "$@" -- --ignored --nocapture 2>&1 \
    | grep -E "problems,|panicked|test result" | sed "s|^|  |")
}
data="${TUNEINFER_MIOPEN_DATA:-$(cd .. && pwd)/shared/miopen}"
export TUNEINFER_MIOPEN_DATA="$data"
base_dump="$work/base-$rev-$(md5sum < tests/solvers/corpus_cpu_dump.rs | cut -c1-8)-${TUNEINFER_DUMP_SAMPLE:-1500}.txt"
if [ -s "$base_dump" ]; then
  echo "base $rev: $base_dump (written before)"
else
  echo "base $rev:"
  run "$tree" "$work/target" "$base_dump.part" --test corpus_cpu_dump | tail -3
  mv "$base_dump.part" "$base_dump"
fi
echo "working tree:"
run "$PWD" "${CARGO_TARGET_DIR:-$PWD/target}" "$work/now.txt" --test solvers corpus_cpu_dump:: | tail -3
lines=$(wc -l < "$work/now.txt")
if cmp -s "$base_dump" "$work/now.txt"; then
  echo "identical: all $lines answer lines (configs, sources, score bits)"
else
  echo "DIFFERENT: $(diff "$base_dump" "$work/now.txt" | grep -c '^>') of $lines lines; first:"
  diff "$base_dump" "$work/now.txt" | head -6
  exit 1
fi
