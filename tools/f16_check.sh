#!/bin/sh
# Would f16 weights change a prediction of any shipped model? Rounds every model in weights/ to
# IEEE halves (a temporary copy) and compares the configs of MIOpen's greedy walk and of the
# default decoding with the f32 model's on up to ~2,000 problems of its training database.
# Usage: tools/f16_check.sh   (takes minutes: the default decoding is a beam of 16 over 5 members)
set -e
cd "$(dirname "$0")/.."
exec cargo test --release --test gpu f16_weights:: -- --ignored --nocapture
