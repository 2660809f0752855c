//! The GPU engine: the seq2seq models in hand-written WGSL (`shaders/`) run through wgpu on
//! Vulkan, with MIOpen's greedy walk kept in GPU buffers for the whole search.
//!
//! - `context`: adapter selection, device, limits, and GPU failures as [`Error`]s.
//! - `registry`: every shader compiled in, pipelines cached by a readable [`KernelKey`].
//! - `buffers`, `kernels`: buffer helpers and one launch function per kernel.
//! - `model`, `decode`, `predictor`: weights on the device, GPU decoding, [`GpuPredictor`].
//! - `attention`: tuneinfer's own attention models (`weights/`) on the device.
//! - `driver`: the resident greedy walk and beam over any `ResidentModel`; `host_steps`: the
//!   host's searches over the same models.
//! - `profile`: per-kernel GPU times (timestamp queries) and host phases for `tuneinfer bench
//!   --profile`; `probe`: its round-trip floors.
//!
//! [`crate::engine::Engine`] is what the CLI and embedders use: CPU or GPU chosen by a
//! [`crate::engine::DeviceChoice`], the same answers either way.


/// Arithmetic and weight storage precision of the GPU path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    F32,
    F16,
}

impl Precision {
    pub fn parse(text: &str) -> crate::error::Result<Precision> {
        match text {
            "f32" => Ok(Precision::F32),
            "f16" => Ok(Precision::F16),
            other => Err(crate::error::Error::Usage(format!("--precision: expected f32 or f16, got '{other}'"))),
        }
    }
}

#[cfg(feature = "gpu")]
mod attention;
#[cfg(feature = "gpu")]
mod buffers;
#[cfg(feature = "gpu")]
mod context;
#[cfg(feature = "gpu")]
mod decode;
#[cfg(feature = "gpu")]
mod driver;
#[cfg(feature = "gpu")]
mod fused;
#[cfg(feature = "gpu")]
mod harness;
#[cfg(feature = "gpu")]
mod host_steps;
#[cfg(feature = "gpu")]
pub mod kernels;
#[cfg(feature = "gpu")]
mod model;
#[cfg(feature = "gpu")]
mod parallel;
#[cfg(feature = "gpu")]
mod predictor;
#[cfg(feature = "gpu")]
pub mod probe;
#[cfg(feature = "gpu")]
pub mod profile;
#[cfg(feature = "gpu")]
pub mod registry;
#[cfg(feature = "gpu")]
mod single;
#[cfg(feature = "gpu")]
mod verify;

#[cfg(feature = "gpu")]
pub use context::{list_adapters, AdapterSummary, GpuContext};
#[doc(hidden)]
#[cfg(feature = "gpu")]
pub use fused::{FusedPathPredictor, GreedyPath, DEFAULT_BLOCK as FUSED_DEFAULT_BLOCK, MAX_BLOCK as FUSED_MAX_BLOCK};
#[cfg(feature = "gpu")]
pub use predictor::{beam_vocab_words, catalogue_vocab_words, pack_rule_words, vocab_words, GpuPredictor};
#[doc(hidden)]
#[cfg(feature = "gpu")]
pub use single::{SinglePathPredictor, ITERATION_BUDGET, MAX_SINGLE_ROWS};
#[cfg(feature = "gpu")]
pub use verify::{verify_ktn_on_gpu, GpuVerifyReport};
