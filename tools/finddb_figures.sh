#!/bin/sh
# The find-db ranking's held-out figures per GPU (the tables of docs/finddb.md).
# Usage: tools/finddb_figures.sh [FINDDB_DIR] [LIMIT]   (LIMIT: held-out problems per GPU, all by default)
set -e
cd "$(dirname "$0")/.."
exec nice cargo run --release --example finddb_figures -- "${1:-../shared/miopen/finddb}" ${2:-}
