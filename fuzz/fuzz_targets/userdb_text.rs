#![no_main]
//! `tuneinfer::fuzzing::userdb_text` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::userdb_text(data) {
        panic!("invariant broken: {violation}");
    }
});
