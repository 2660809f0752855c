//! tuneinfer: predicts the tuning parameters of MIOpen convolution kernels.
//!
//! Data flows one way: problem -> features -> encoder -> decoder steps -> constrained beam ->
//! parameters.

pub mod error;
pub mod problem;
pub mod search;
pub mod solvers;

pub use error::{Error, Result};
pub mod cpu;
pub mod figures;
pub mod format;
pub mod fuzzing;
pub mod method;
pub mod models;
pub mod neighbour;
pub mod onnx;
pub mod predict;
pub mod seq2seq;
#[doc(hidden)]
pub mod testutil;
pub mod request;
pub mod written;

pub use predict::{DecodeMode, Prediction, Predictor, Source};
pub use problem::ConvProblem;
pub mod cli;
pub mod data;
pub mod engine;
pub mod engines;
pub mod finddb;
pub mod eval;
pub mod ffi;
pub mod gpu;
pub mod train;
pub mod userdb;
pub mod tunanet;
pub mod workload;
