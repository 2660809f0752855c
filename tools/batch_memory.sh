#!/usr/bin/env bash
# Peak memory (RSS) and time of `tuneinfer batch` over 1x and 100x the 17,528 ConvAsm1x1U
# problems of the gfx906_60 and gfx900_56 perf databases (MIOpen's gfx908 model, greedy, CPU):
# streaming keeps memory flat whatever the input size. Needs /usr/bin/time (GNU time) and
# sqlite3. Usage: tools/batch_memory.sh [REPEATS (default 100)] [THREADS (default: all)]
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-100}
threads=${2:-$(nproc)}
data=${TUNEINFER_MIOPEN_DATA:-../shared/miopen}
bin=target/release/tuneinfer
[ -x "$bin" ] || cargo build --release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One driver line per tuned ConvAsm1x1U row (forward and backward data, x given explicitly).
for db in gfx906_60 gfx900_56; do
  sqlite3 "$data/perfdb/$db.db" "SELECT c.data_type, c.direction, c.in_channels, c.in_h, c.in_w, c.out_channels, c.batchsize
    FROM perf_db p JOIN config c ON c.id = p.config WHERE p.solver = 'ConvAsm1x1U'" |
  awk -F'|' '{ cmd = ($1 == "FP16") ? "convfp16" : ($1 == "BF16" ? "convbfp16" : "conv");
    if ($2 == "F") print cmd, "-n", $7, "-c", $3, "-H", $4, "-W", $5, "-k", $6, "-y 1 -x 1 -F 1";
    else print cmd, "-n", $7, "-c", $6, "-H", $4, "-W", $5, "-k", $3, "-y 1 -x 1 -F 2" }'
done > "$work/once.txt"
n=$(wc -l < "$work/once.txt")
# REPEATS exact copies (a long log repeats its problems: each is predicted once), and 10 copies
# made distinct (batch sizes shifted by the copy's number: every line predicted).
for _ in $(seq "$repeats"); do cat "$work/once.txt"; done > "$work/many.txt"
m=$(wc -l < "$work/many.txt")
for r in $(seq 0 9); do awk -v r="$r" '{ $3 = $3 + r; print }' "$work/once.txt"; done > "$work/distinct.txt"
d=$(wc -l < "$work/distinct.txt")
measure() {
  /usr/bin/time -f "%M %e" -o "$work/time" "$bin" batch --device cpu --arch gfx908 \
    --models "$data/models" --threads "$threads" --input "$1" --output "$work/out.tsv" 2>/dev/null || true
  read -r kb secs < <(tail -1 "$work/time")
  echo "$2 lines: peak RSS $((kb / 1024)) MiB, $secs s, $(($(wc -l < "$work/out.tsv") - 1)) rows"
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
measure "$work/once.txt" "$n"
measure "$work/many.txt" "$m (copies)"
measure "$work/distinct.txt" "$d (distinct)"
