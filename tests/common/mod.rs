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

/// `Some(value)`, or `None` after printing "skipped: no GPU adapter" where the machine has no
/// Vulkan adapter; under `TUNEINFER_CI=1` (CI installs lavapipe) a missing adapter fails instead,
/// so GPU tests cannot skip silently there.
pub fn adapter_or_skip<T, E: std::fmt::Display>(opened: Result<T, E>) -> Option<T> {
    match opened {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(
                std::env::var("TUNEINFER_CI").ok().as_deref() != Some("1"),
                "TUNEINFER_CI=1 but no GPU adapter: {e}"
            );
            println!("skipped: no GPU adapter ({e})");
            None
        }
    }
}

/// The process-wide GPU context (see [`adapter_or_skip`]).
#[cfg(feature = "gpu")]
pub fn gpu() -> Option<std::sync::Arc<tuneinfer::gpu::GpuContext>> {
    adapter_or_skip(tuneinfer::gpu::GpuContext::shared())
}

/// A GPU context of the test's own (faults and profiling are per context; see [`adapter_or_skip`]).
#[cfg(feature = "gpu")]
pub fn fresh_gpu() -> Option<tuneinfer::gpu::GpuContext> {
    adapter_or_skip(tuneinfer::gpu::GpuContext::open(true))
}
