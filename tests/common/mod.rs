//! Shared test helpers: where the MIOpen data lives.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/miopen` relative to the crate (the data is never copied into the repo).
pub fn miopen_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TUNEINFER_MIOPEN_DATA") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen")
}

pub fn models_dir() -> PathBuf {
    miopen_dir().join("models")
}

pub fn perfdb_dir() -> PathBuf {
    miopen_dir().join("perfdb")
}

/// All `*.ktn.model` encoder/decoder files (not metadata), sorted.
pub fn ktn_model_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(models_dir())
        .expect("../shared/miopen/models must exist (see README)")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".ktn.model") && !name.contains("_metadata")
        })
        .collect();
    files.sort();
    files
}

/// The composable_kernel instance lists (`../shared/miopen/ck`).
pub fn ck_dir() -> PathBuf {
    miopen_dir().join("ck")
}
