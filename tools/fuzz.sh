#!/usr/bin/env bash
# Fuzzes one parser of outside input for SECONDS: tools/fuzz.sh TARGET SECONDS [JOBS]
# TARGET is a harness of src/fuzzing.rs (`tools/fuzz.sh list` names them). With cargo-fuzz
# installed (`cargo install cargo-fuzz`; stable Rust works through RUSTC_BOOTSTRAP=1) this runs
# libFuzzer with coverage feedback and AddressSanitizer over fuzz/corpus/TARGET, seeded from
# ../shared/miopen and weights/; crashes land in fuzz/artifacts/TARGET. Without it, the fallback
# loops the same harness over random mutations of the same seeds in a plain release test
# binary (tests/frontends/fuzz_parsers.rs, `fuzz_loop`): no coverage feedback, no sanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${1:?usage: tools/fuzz.sh TARGET SECONDS [JOBS] (tools/fuzz.sh list)}
targets=$(sed -n 's/^    ("\([a-z_]*\)", .*/\1/p' src/fuzzing.rs)
if [ "$target" = list ]; then echo "$targets"; exit 0; fi
echo "$targets" | grep -qx "$target" || { echo "unknown target '$target'; one of:" $targets >&2; exit 2; }
seconds=${2:?usage: tools/fuzz.sh TARGET SECONDS}
jobs=${3:-1}
data=${TUNEINFER_MIOPEN_DATA:-$root/../shared/miopen}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}

seed_corpus() {
    local dir=fuzz/corpus/$target
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir")" ] && return 0
    case $target in
        problem_line|perfdb_key|db_key|driver_line|text_perfdb|userdb_text)
            for f in "$data"/perfdb/history/*.txt; do
                head -n 2000 "$f" | awk -v d="$dir" -v t="$target" -v b="$(basename "$f")" 'NR % 50 == 1 {
                    line = $0; if (t != "text_perfdb" && t != "userdb_text") { sub(/=.*/, "", line) }
                    print line > (d "/" b "-" NR); close(d "/" b "-" NR) }'
            done
            echo "conv -n 128 -c 64 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 1 -F 0" > "$dir/driver"
            echo "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 256 -c 2016 -H 7 -W 7 -k 192 -y 1 -x 1 -g 16 -F 2" > "$dir/log"
            echo "2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xW=ConvAsm1x1U:1,2" > "$dir/dbkey" ;;
        frugally_model) cp "$data"/models/*_encoder.ktn.model "$data"/models/*_decoder.ktn.model "$dir"/ ;;
        ktn_metadata) cp "$data"/models/*metadata*.model "$dir"/ ;;
        safetensors) cp weights/gfx900_ConvAsm1x1U.safetensors "$dir"/ ;;
        weights_info) cp weights/*.json "$dir"/ ;;
        sqlite_perfdb) cp "$data"/perfdb/gfx1030_36.db "$dir"/ ;;
        ck_catalogue) for f in "$data"/ck/*.tsv; do head -n 20 "$f" > "$dir/$(basename "$f")"; done ;;
        onnx_model) TUNEINFER_ONNX_SEED="$root/$dir/seed.onnx" cargo test --release --no-default-features \
                --test frontends -- --ignored --exact onnx::write_fuzz_seed ;;
        gtc_catalogue) for f in "$data"/solvers/gtc_*_nhwc.tsv; do head -n 20 "$f" > "$dir/$(basename "$f")"; done ;;
    esac
}

if command -v cargo-fuzz >/dev/null 2>&1; then
    seed_corpus
    cd fuzz
    # cargo-fuzz passes nightly-only flags (-Zsanitizer); RUSTC_BOOTSTRAP lets stable accept them.
    parallel=()
    [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
    RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "corpus/$target" -- \
        -max_total_time="$seconds" "${parallel[@]}" -rss_limit_mb=4096 -max_len=1048576 -timeout=10 \
        -print_final_stats=1 2>&1 | tee "$root/fuzz/last-$target.log"
else
    echo "cargo-fuzz not installed: running the plain mutation loop (no coverage feedback)" >&2
    TUNEINFER_FUZZ_TARGET=$target TUNEINFER_FUZZ_SECONDS=$seconds \
        cargo test --release --test frontends -- --ignored --exact fuzz_parsers::fuzz_loop --nocapture
fi
