#!/usr/bin/env bash
# Issue 35 item 2: the whole-corpus check of MIOpen 3.5.1's tuned CK grouped-convolution rows
# (ConvHipImplicitGemm{,3D}Group{Fwd,Bwd,Wrw}Xdlops in ../shared/miopen/perfdb/{gfx942130,gfx90a68,gfx90878}.db.txt.bz2):
# rows per solver, parsed (or counted apart with the reason), instance in the catalogue and on the
# reachable 2024 list, CK's IsSupportedArgument per (solver, device op) with the failures' reasons
# (MIOpen 3.5.1's CK and the reachable CK bcf7f811), how much the rules narrow each catalogue, and
# the catalogue sizes. Markdown on stdout; docs/ck.md holds a run. About 5 s after the build.
#
#   tools/ck_rows.sh [DATA_DIR]     (DATA_DIR: $TUNEINFER_MIOPEN_DATA, else ../shared/miopen)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
nice -n 10 cargo build --release --quiet --example ck_rows
exec "$CARGO_TARGET_DIR/release/examples/ck_rows" "$@"
