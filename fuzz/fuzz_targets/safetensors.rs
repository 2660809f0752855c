#![no_main]
//! `tuneinfer::fuzzing::safetensors` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::safetensors(data) {
        panic!("invariant broken: {violation}");
    }
});
