//! The doors: the command line, the C ABI, ONNX networks, the layering of src/, fuzzed parsers, faults and concurrency.
//! One test binary per area (issue 52 item 6): each file of tests/frontends/ is a module.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod cli_words;
mod concurrency;
mod fault_injection;
mod ffi_c;
mod fuzz_parsers;
mod layering;
mod onnx;
mod tunanet;
