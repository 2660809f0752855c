#![no_main]
//! `tuneinfer::fuzzing::db_key` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::db_key(data) {
        panic!("invariant broken: {violation}");
    }
});
