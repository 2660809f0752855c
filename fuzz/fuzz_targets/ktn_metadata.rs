#![no_main]
//! `tuneinfer::fuzzing::ktn_metadata` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::ktn_metadata(data) {
        panic!("invariant broken: {violation}");
    }
});
