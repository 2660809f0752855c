//! The CPU reference path: plain Rust f32 ops, batched over many sequences or hypotheses.
//! These are the ground truth the WGSL kernels are tested against, so they stay obvious;
//! the hot one (`matmul`) is register-blocked and uses AVX2/FMA when the processor has them.

pub mod activations;
pub mod attention;
pub mod lstm;
pub mod matmul;
pub mod ops;

pub use attention::attention;
pub use lstm::{lstm_cell, lstm_step, LstmParams};
pub use matmul::{matmul_acc, matmul_packed_acc, PackedMatrix};
pub use ops::{add_bias_rows, dense, embedding_gather, ensemble_add, log_softmax_rows};
