#![no_main]
//! `tuneinfer::fuzzing::sqlite_perfdb` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::sqlite_perfdb(data) {
        panic!("invariant broken: {violation}");
    }
});
