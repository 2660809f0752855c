#!/bin/sh
# Regenerates src/onnx/proto.rs from tools/onnx_proto/onnx.proto (ONNX's schema, Apache-2.0,
# github.com/onnx/onnx onnx/onnx.proto at f7546912). Needs protoc: apt-get install protobuf-compiler.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
cargo run --release --manifest-path "$root/tools/onnx_proto/Cargo.toml" -- "$root/src/onnx/proto.rs"
