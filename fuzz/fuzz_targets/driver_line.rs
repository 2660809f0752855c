#![no_main]
//! `tuneinfer::fuzzing::driver_line` under libFuzzer: a panic or a broken invariant is a crash.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = tuneinfer::fuzzing::driver_line(data) {
        panic!("invariant broken: {violation}");
    }
});
