#!/usr/bin/env bash
# MIOpen's TunaNet on MIOpen's find-dbs (issue 54): per find-db, over all its records and over the
# held-out fifth of the geometries (tuneinfer's split, seed 1), the share of problems TunaNet
# takes, top-1 (its pick is the fastest entry that runs), the geometric mean of the pick's time
# over the fastest where the record lists the pick, the unlisted share, and the same for the
# first listed solver in TunaNet's order (examples/tunanet_score.rs says how each is counted).
# Niced; about a minute after the build.
#
#   tools/tunanet_score.sh [FDB...]      default: the gfx908, gfx90a and gfx942 find-dbs of
#                                        ../shared/miopen/finddb, then (MIOpen runs gfx908's model
#                                        on every other device) gfx906, gfx1030 and gfx900's
#
# Environment: DATA (../shared/miopen), MODELS (DATA/models).
set -euo pipefail
data=${DATA:-../shared/miopen}
models=${MODELS:-$data/models}
if [ $# -eq 0 ]; then
  set -- "$data"/finddb/gfx90878.3.5.1.HIP.fdb.txt.bz2 "$data"/finddb/gfx90878.2024.HIP.fdb.txt.bz2 \
    "$data"/finddb/gfx90a68.3.5.1.HIP.fdb.txt.bz2 "$data"/finddb/gfx90a68.2024.HIP.fdb.txt.bz2 \
    "$data"/finddb/gfx942130.2024-11.HIP.fdb.txt.bz2 "$data"/finddb/gfx906_60.3.5.1.HIP.fdb.txt.bz2 \
    "$data"/finddb/gfx1030_36.3.5.1.HIP.fdb.txt.bz2 "$data"/finddb/gfx900_56.3.5.1.HIP.fdb.txt.bz2
fi
nice cargo build --release --example tunanet_score >&2
for f in "$@"; do
  nice target/release/examples/tunanet_score "$f" --models "$models"
  echo
done
