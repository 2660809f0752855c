//! Writes `$OUT_DIR/bundled_models.rs`: the list of the models in `weights/` (every `.json` and
//! `.safetensors` file), each as `(file name, include_bytes!(...))`. The `tuneinfer` binary always
//! carries them (`src/main.rs`); the library does with the feature `bundled` (the Python wheel,
//! a self-contained `libtuneinfer`). See docs/data.md, "What an install carries".

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let weights = Path::new(&root).join("weights");
    println!("cargo:rerun-if-changed=weights");
    let mut names: Vec<String> = std::fs::read_dir(&weights)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| (n.ends_with(".json") || n.ends_with(".safetensors")) && !n.contains(".checkpoint"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("&[\n");
    // The path through `env!("CARGO_MANIFEST_DIR")`, not written out: two checkouts sharing a
    // target directory share this file (cargo hashes a path package by its path relative to
    // the workspace; tools/install_check.sh builds a copy into this checkout's target/).
    for n in &names {
        let _ = writeln!(
            out,
            "    ({n:?}, include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/weights/{n}\")) as &[u8]),"
        );
    }
    out.push_str("]\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("bundled_models.rs");
    std::fs::write(&dest, out).expect("OUT_DIR is writable");
}
