#![no_main]
//! `tuneinfer::fuzzing::text_perfdb` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::text_perfdb(data) {
        panic!("invariant broken: {violation}");
    }
});
