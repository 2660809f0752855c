#![no_main]
//! `tuneinfer::fuzzing::gtc_catalogue` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::gtc_catalogue(data) {
        panic!("invariant broken: {violation}");
    }
});
