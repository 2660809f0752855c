//! What the search and the predictor need of a model, whatever its architecture: MIOpen's KTN
//! (encoder + plain LSTM decoder) or tuneinfer's own (with attention).

use super::States;
use crate::error::Result;
use crate::format::metadata::KtnMetadata;
use crate::problem::ConvProblem;
use crate::search::StepDecoder;
use crate::search::Vocabulary;
use crate::solvers::{Solver, Target};

/// A complete sequence-to-sequence predictor model.
pub trait Seq2SeqModel: Send + Sync {
    /// The encoder input of a problem (MIOpen's features for KTN models).
    fn encoder_input(&self, solver: &dyn Solver, target: &Target, problem: &ConvProblem) -> Result<Vec<f32>>;
    /// Encodes a batch of inputs (concatenated) into the decoder's initial states.
    fn encode(&self, inputs: &[f32], batch: usize) -> Result<States>;
    fn decoder(&self) -> &dyn StepDecoder;
    fn vocab(&self) -> &Vocabulary;
    /// Sequence lengths and token values.
    fn metadata(&self) -> &KtnMetadata;
    /// A one-line description (files, sizes) for messages.
    fn describe(&self) -> String;
    /// True for MIOpen's own models, whose answers MIOpen's greedy walk defines; false (the
    /// default) for others, which answer with the constrained beam search by default.
    fn is_miopen_model(&self) -> bool {
        false
    }
    /// False for a cell served without a network ([`crate::models::NoNetwork`]): the predictor
    /// answers MIOpen's static default without encoding or decoding.
    fn has_network(&self) -> bool {
        true
    }
}
