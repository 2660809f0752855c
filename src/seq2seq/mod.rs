//! The sequence-to-sequence model: an encoder over the problem features and a decoder that is
//! stepped one token at a time. Both are built from frugally-deep graphs (MIOpen's files) and
//! run batched on the CPU reference ops.

pub mod attention;
pub mod conv_encoder;
mod decoder;
mod encoder;
mod graph;
mod ktn;
mod model;
mod packed;
pub mod verify;
pub mod weights;

pub use crate::search::States;
pub use crate::search::{DecoderScratch, StepDecoder};
pub use attention::AttentionModel;
pub use decoder::Decoder;
pub use encoder::Encoder;
pub use ktn::{find_model_files, KtnModel, ModelFiles};
pub use model::Seq2SeqModel;
