#![no_main]
//! `tuneinfer::fuzzing::onnx_model` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::onnx_model(data) {
        panic!("invariant broken: {violation}");
    }
});
