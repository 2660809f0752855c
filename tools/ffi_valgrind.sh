#!/usr/bin/env bash
# The C ABI under valgrind: builds libtuneinfer.so, compiles examples/c/predict.c and
# tests/ffi/checks.c against it, and runs them under memcheck with --leak-check=full
# --error-exitcode=1 (no invalid reads or writes, no uses of uninitialised memory, no
# definitely or possibly lost blocks). The checks program covers the error paths (NULL, freed
# and made-up handles, double frees of results, bad problems, partial batches) and four threads
# sharing one predictor. CPU device: the Vulkan driver stack is not ours to check.
#
#   tools/ffi_valgrind.sh        # exit 0 when every run is clean
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-target}"
DATA="${TUNEINFER_MIOPEN_DATA:-../shared/miopen}"
cargo build --release --lib
LIB="$(cd "$TARGET/release" && pwd)"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
for src in examples/c/predict.c tests/ffi/checks.c; do
    cc -std=c99 -Wall -Wextra -Werror -pedantic -O1 -g -Iinclude "$src" -L"$LIB" -ltuneinfer -lpthread \
        -Wl,-rpath,"$LIB" -o "$OUT/$(basename "$src" .c)"
done
printf '%s\n' 2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F '# comment' \
    'convfp16 -n 64 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -F 2' \
    1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F 'conv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1' \
    >"$OUT/problems.txt"

VG=(valgrind --quiet --leak-check=full --show-leak-kinds=definite,possible --errors-for-leak-kinds=definite,possible
    --error-exitcode=1)
failed=0
run() {
    local want="$1"
    shift
    echo "== $*"
    local status=0
    "${VG[@]}" "$@" >"$OUT/stdout" 2>"$OUT/stderr" || status=$?
    cat "$OUT/stdout"
    grep -v '^note: ' "$OUT/stderr" || true
    if [ "$status" != "$want" ]; then
        echo "!! exit status $status (expected $want)"
        failed=1
    fi
}
run 0 "$OUT/predict" --device cpu 2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F
run 0 "$OUT/predict" --device cpu --arch gfx900 --beam 4 --top 2 288-56-56-1x1-192-56-56-512-0x0-1x1-1x1-0-NCHW-FP32-B
run 0 "$OUT/predict" --device cpu --arch gfx908 --models "$DATA/models" conv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 1
run 5 "$OUT/predict" --device cpu 2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-X
run 6 "$OUT/predict" --device cpu --solver NoSuchSolver 2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F
run 1 "$OUT/predict" --device cpu --arch gfx908 --models "$DATA/models" --beam 4 --top 2 --input "$OUT/problems.txt"
run 0 "$OUT/checks" "$DATA/models"
if [ "$failed" = 0 ]; then
    echo "valgrind: all runs clean"
else
    echo "valgrind: FAILED (see above)"
fi
exit "$failed"
