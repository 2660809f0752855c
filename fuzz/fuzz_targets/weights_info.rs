#![no_main]
//! `tuneinfer::fuzzing::weights_info` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::weights_info(data) {
        panic!("invariant broken: {violation}");
    }
});
