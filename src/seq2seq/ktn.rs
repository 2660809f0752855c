//! A KernelTuningNet model: encoder + decoder + metadata, found by file name in a models
//! directory as `{arch}_{solver}_{encoder,decoder,metadata}.ktn.model`.

use std::path::PathBuf;

use super::{Decoder, Encoder, Seq2SeqModel, States, StepDecoder};
use crate::error::{Error, Result};
use crate::format::frugally::KerasModel;
use crate::format::metadata::KtnMetadata;
use crate::problem::ConvProblem;
use crate::search::Vocabulary;
use crate::solvers::{Solver, Target};

/// The three files of one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFiles {
    pub encoder: PathBuf,
    pub decoder: PathBuf,
    pub metadata: PathBuf,
}

/// Looks for `{arch}_{model_name}_*.ktn.model` in each directory, first match wins.
pub fn find_model_files(dirs: &[PathBuf], arch: &str, model_name: &str) -> Result<ModelFiles> {
    for dir in dirs {
        let file = |part: &str| dir.join(format!("{arch}_{model_name}_{part}.ktn.model"));
        let files = ModelFiles {
            encoder: file("encoder"),
            decoder: file("decoder"),
            metadata: file("metadata"),
        };
        if files.encoder.is_file() && files.decoder.is_file() && files.metadata.is_file() {
            return Ok(files);
        }
    }
    Err(Error::ModelNotFound {
        looked_for: vec![crate::error::ktn_pattern(arch, model_name)],
        searched: dirs.to_vec(),
    })
}

/// A loaded KTN model, ready to run.
#[derive(Debug, Clone)]
pub struct KtnModel {
    pub encoder: Encoder,
    pub decoder: Decoder,
    pub metadata: KtnMetadata,
    pub vocab: Vocabulary,
    pub files: ModelFiles,
}

impl KtnModel {
    /// Loads and cross-checks the three files.
    pub fn load(files: &ModelFiles) -> Result<KtnModel> {
        let encoder = Encoder::from_keras(&KerasModel::load(&files.encoder)?)?;
        let decoder = Decoder::from_keras(&KerasModel::load(&files.decoder)?)?;
        let metadata = KtnMetadata::load(&files.metadata)?;
        Self::assemble(encoder, decoder, metadata, files.clone())
    }

    /// Checks that encoder, decoder and metadata fit together.
    pub fn assemble(encoder: Encoder, decoder: Decoder, metadata: KtnMetadata, files: ModelFiles) -> Result<KtnModel> {
        if encoder.units() != decoder.units() {
            return Err(Error::Shape {
                what: format!("{} vs {}: LSTM units", files.encoder.display(), files.decoder.display()),
                expected: format!("{:?}", encoder.units()),
                got: format!("{:?}", decoder.units()),
            });
        }
        let v = decoder.vocab_size();
        if metadata.token_values.len() != v || decoder.embedding.input_dim != v {
            return Err(Error::Shape {
                what: format!("{}: vocabulary", files.metadata.display()),
                expected: format!("{v} tokens (decoder output) and embedding rows"),
                got: format!(
                    "{} metadata tokens, {} embedding rows",
                    metadata.token_values.len(),
                    decoder.embedding.input_dim
                ),
            });
        }
        let vocab = Vocabulary::from_token_values(&metadata.token_values);
        Ok(KtnModel {
            encoder,
            decoder,
            metadata,
            vocab,
            files,
        })
    }

    /// Loads `{arch}_{model_name}` from the first directory that has it.
    pub fn find_and_load(dirs: &[PathBuf], arch: &str, model_name: &str) -> Result<KtnModel> {
        Self::load(&find_model_files(dirs, arch, model_name)?)
    }
}

impl Seq2SeqModel for KtnModel {
    fn encoder_input(&self, solver: &dyn Solver, target: &Target, problem: &ConvProblem) -> Result<Vec<f32>> {
        solver.encoder_input(target, problem)
    }

    fn encode(&self, inputs: &[f32], batch: usize) -> Result<States> {
        self.encoder.run(inputs, batch)
    }

    fn decoder(&self) -> &dyn StepDecoder {
        &self.decoder
    }

    fn vocab(&self) -> &Vocabulary {
        &self.vocab
    }

    fn metadata(&self) -> &KtnMetadata {
        &self.metadata
    }

    fn is_miopen_model(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!(
            "KTN {} (encoder {}x{}, LSTM units {:?}, vocabulary {})",
            self.files.encoder.display(),
            self.encoder.steps,
            self.encoder.features,
            self.encoder.units(),
            self.vocab.len()
        )
    }
}
