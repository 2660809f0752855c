#!/usr/bin/env bash
# A relocatable archive of tuneinfer (issue 43): everything a user needs, nothing of this
# checkout or of ../shared. Built with the feature `bundled`, so the library carries the models
# of weights/ as the binary does; the kernel catalogues are built into both.
#
#   tools/dist.sh [--with-static] [OUT_DIR]      (default target/dist)
#
# OUT_DIR/tuneinfer-VERSION-ARCH/ and OUT_DIR/tuneinfer-VERSION-ARCH.tar.gz hold:
#   bin/tuneinfer                      the command line
#   lib/libtuneinfer.so                the C ABI (models inside; libtuneinfer.a too with
#                                      --with-static: 146 MB more)
#   include/tuneinfer.h                its header
#   share/doc/tuneinfer/               LICENSE, the catalogues' NOTICEs (MIOpen's and
#                                      composable_kernel's MIT notices), README.md
# Unpack anywhere: bin/tuneinfer runs from any directory; link C programs with
#   cc -Iinclude prog.c -Llib -ltuneinfer -Wl,-rpath,'$ORIGIN/../lib'
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
static=0
if [ "${1:-}" = "--with-static" ]; then
    static=1
    shift
fi
out="$(mkdir -p "${1:-$root/target/dist}" && cd "${1:-$root/target/dist}" && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
name="tuneinfer-$version-$(uname -m)"
echo "building $name (cargo build --release --features bundled) ..." >&2
(cd "$root" && cargo build --release --locked --quiet --features bundled --target-dir "$target")
dir="$out/$name"
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib" "$dir/include" "$dir/share/doc/tuneinfer"
cp "$target/release/tuneinfer" "$dir/bin/"
cp "$target/release/libtuneinfer.so" "$dir/lib/"
[ "$static" = 1 ] && cp "$target/release/libtuneinfer.a" "$dir/lib/"
cp "$root/include/tuneinfer.h" "$dir/include/"
cp "$root/LICENSE" "$root/README.md" "$dir/share/doc/tuneinfer/"
cp "$root/src/solvers/gtc_nhwc/data/NOTICE.md" "$dir/share/doc/tuneinfer/NOTICE-gtc-catalogues.md"
cp "$root/src/solvers/ck/data/NOTICE.md" "$dir/share/doc/tuneinfer/NOTICE-ck-catalogues.md"
tar -C "$out" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)); unpacked: $dir ($(du -sh "$dir" | cut -f1))" >&2
