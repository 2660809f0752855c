#!/usr/bin/env bash
# Issue 43's check: what a user installs answers exactly as this checkout's command line does,
# from another directory, with no source tree and no ../shared. .ci/run calls it.
#
#   tools/install_check.sh [--no-default-features-too]
#
# From a copy of the checkout (its tracked and untracked-unignored files) it makes
#   1. `cargo install --path COPY` (the binary alone),
#   2. the relocatable archive of tools/dist.sh (binary + self-contained libtuneinfer + header),
# deletes the copy, then, from an empty directory with $TUNEINFER_MIOPEN_DATA pointing nowhere
# and no $TUNEINFER_MODELS, compares with the checkout's target/release/tuneinfer (run in the
# checkout with MIOpen's data beside it):
#   - `batch --solver all` over tools/install_check_problems.txt on every GPU tuneinfer serves,
#     for the installed binary, a copy of it alone in another folder, and the archive's binary;
#   - a C program (examples/c/predict.c) built against the archive's header and library, on
#     the same problems, with the CLI's `batch` for one solver per GPU.
# Builds share the checkout's target directory (only tuneinfer itself is compiled again).
# Exit status 0 when everything is identical; the first difference is printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
ref="$target/release/tuneinfer"
problems="$root/tools/install_check_problems.txt"
gpus="gfx900_56 gfx906_60 gfx906_64 gfx90878 gfx90a68 gfx90a6e gfx942130 gfx942e4 gfx1030_36"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS

(cd "$root" && cargo build --release --locked --quiet --bin tuneinfer)
mkdir -p "$work/copy" "$work/elsewhere" "$work/alone" "$work/no-data" "$work/ref"
# The checkout's binary, kept aside: tools/dist.sh below builds into the same target directory.
cp "$ref" "$work/ref/tuneinfer"
ref="$work/ref/tuneinfer"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work/copy")
echo "install check: cargo install --path <copy> ..." >&2
cargo install --quiet --locked --path "$work/copy" --root "$work/inst" --target-dir "$target"
if [ "${1:-}" = "--no-default-features-too" ]; then
    cargo install --quiet --locked --no-default-features --path "$work/copy" --root "$work/inst-cpu" --target-dir "$target"
fi
echo "install check: tools/dist.sh in <copy> ..." >&2
CARGO_TARGET_DIR="$target" "$work/copy/tools/dist.sh" "$work/dist" 2>/dev/null
rm -rf "$work/copy"
cp "$work/inst/bin/tuneinfer" "$work/alone/tuneinfer"
dist="$(ls -d "$work"/dist/tuneinfer-*/ | head -1)"
cc -std=c99 -Wall -I"$dist/include" "$root/examples/c/predict.c" -L"$dist/lib" -ltuneinfer \
    -Wl,-rpath,"$dist/lib" -o "$work/alone/predict_c"

installed=("$work/inst/bin/tuneinfer" "$work/alone/tuneinfer" "$dist/bin/tuneinfer")
[ -x "$work/inst-cpu/bin/tuneinfer" ] && installed+=("$work/inst-cpu/bin/tuneinfer")

run_installed() { # BINARY ARGS...: from an empty directory, MIOpen's data out of reach
    (cd "$work/elsewhere" && env -u TUNEINFER_MODELS -u TUNEINFER_CK -u MIOPEN_SYSTEM_DB_PATH -u ROCM_PATH \
        TUNEINFER_MIOPEN_DATA="$work/no-data" "$@")
}
compare() { # LABEL EXPECTED-FILE GOT-FILE
    if ! cmp -s "$2" "$3"; then
        echo "install check FAILED: $1 differs from the checkout's answers:" >&2
        diff "$2" "$3" | head -20 >&2
        exit 1
    fi
}
lines=0
for gpu in $gpus; do
    args=(batch --arch "$gpu" --solver all --system-db none --device cpu --input "$problems")
    (cd "$root" && "$ref" "${args[@]}" >"$work/expected" 2>/dev/null)
    lines=$((lines + $(wc -l <"$work/expected") - 1))
    for bin in "${installed[@]}"; do
        run_installed "$bin" "${args[@]}" >"$work/got" 2>/dev/null
        compare "$bin on $gpu" "$work/expected" "$work/got"
    done
    # The C ABI: one solver of the GPU (the first one the table names).
    solver="$(sed -n 2p "$work/expected" | cut -f2)"
    [ -n "$solver" ] || continue
    cargs=(--arch "$gpu" --solver "$solver" --device cpu --system-db none --input "$problems")
    (cd "$root" && "$ref" batch "${cargs[@]}" >"$work/expected_c" 2>/dev/null) || true
    run_installed "$work/alone/predict_c" "${cargs[@]}" >"$work/got_c" 2>/dev/null || true
    compare "the C ABI ($solver on $gpu)" "$work/expected_c" "$work/got_c"
done
echo "install check: $(echo $gpus | wc -w) GPUs, $lines answers, identical in ${#installed[@]} installs and the C ABI ($((SECONDS - start)) s)" >&2
