#!/bin/sh
# The find-db ranking's held-out figures per GPU (the tables of docs/finddb.md): the k-NN
# ranking, what MIOpen runs with tuneinfer's user find-db, the plain nearest neighbour, the
# dynamic-only choice and MIOpen's TunaNet, on the held-out fifth of ../shared/miopen/finddb.
# About a minute on 2 cores after the build.
# Usage: tools/finddb_figures.sh [FINDDB_DIR [LIMIT]] [--by-class] [--validation] [--models DIR]
#   LIMIT: held-out problems per GPU (evenly spaced), all by default; --validation: the
#   validation split inside the training side (for choosing settings), not the held-out fifth.
set -e
cd "$(dirname "$0")/.."
nice cargo build --release --example finddb_figures >&2
exec nice target/release/examples/finddb_figures "$@"
