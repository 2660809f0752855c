//! Runs a model file's embedded test vectors (what frugally-deep does at load) and reports the
//! largest error per output.

use super::{Decoder, DecoderScratch, Encoder, States};
use crate::error::{Error, Result};
use crate::format::frugally::{KerasModel, LayerKind, Tensor};

/// Largest absolute error of one output over all test vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputCheck {
    /// Output index and name (`layer:tensor`).
    pub output: String,
    pub max_abs_error: f32,
    /// Flat index of the worst element.
    pub worst_index: usize,
    pub got: f32,
    pub expected: f32,
}

/// The outcome of verifying one file.
#[derive(Debug, Clone)]
pub struct VerifyReport {
    pub source: String,
    /// `encoder` or `decoder`.
    pub kind: &'static str,
    pub tests: usize,
    pub outputs: Vec<OutputCheck>,
    pub hash_ok: bool,
}

impl VerifyReport {
    /// True when every output is within `tolerance` (NaN never passes).
    pub fn passes(&self, tolerance: f32) -> bool {
        self.tests > 0 && self.outputs.iter().all(|o| o.max_abs_error <= tolerance)
    }
}

/// Runs every embedded test of an encoder or decoder file through the engine.
pub fn verify_model(model: &KerasModel) -> Result<VerifyReport> {
    if model.tests.is_empty() {
        return Err(Error::VerifyMismatch {
            path: model.source.clone(),
            detail: "the file has no embedded test vectors".into(),
        });
    }
    let first_consumer_is_embedding = model.inputs.first().is_some_and(|input| {
        model.layers.iter().any(|l| {
            matches!(l.kind, LayerKind::Embedding(_)) && l.inbound.first().is_some_and(|r| r.layer == input.layer)
        })
    });
    let mut outputs: Vec<OutputCheck> = model
        .outputs
        .iter()
        .enumerate()
        .map(|(i, r)| OutputCheck {
            output: format!("{i} ({}:{})", r.layer, r.tensor_index),
            max_abs_error: -1.0,
            worst_index: 0,
            got: 0.0,
            expected: 0.0,
        })
        .collect();
    let kind = if first_consumer_is_embedding {
        "decoder"
    } else {
        "encoder"
    };
    for (t, test) in model.tests.iter().enumerate() {
        let got: Vec<Vec<f32>> = if first_consumer_is_embedding {
            run_decoder(&Decoder::from_keras(model)?, &test.inputs, &model.source, t)?
        } else {
            run_encoder(&Encoder::from_keras(model)?, &test.inputs, &model.source, t)?
        };
        if got.len() != test.outputs.len() || got.len() != outputs.len() {
            return Err(Error::VerifyMismatch {
                path: model.source.clone(),
                detail: format!(
                    "test {t}: {} expected outputs, engine gives {}",
                    test.outputs.len(),
                    got.len()
                ),
            });
        }
        for ((check, g), want) in outputs.iter_mut().zip(&got).zip(&test.outputs) {
            if g.len() != want.values.len() {
                return Err(Error::VerifyMismatch {
                    path: model.source.clone(),
                    detail: format!(
                        "test {t}: output {} has {} values, expected {}",
                        check.output,
                        g.len(),
                        want.values.len()
                    ),
                });
            }
            for (i, (&a, &b)) in g.iter().zip(&want.values).enumerate() {
                let err = (a - b).abs();
                // NaN compares false: treat it as an infinite error.
                let err = if err.is_nan() { f32::INFINITY } else { err };
                if err > check.max_abs_error {
                    check.max_abs_error = err;
                    check.worst_index = i;
                    check.got = a;
                    check.expected = b;
                }
            }
        }
    }
    Ok(VerifyReport {
        source: model.source.clone(),
        kind,
        tests: model.tests.len(),
        outputs,
        hash_ok: model.stored_hash == model.computed_hash,
    })
}

fn run_encoder(encoder: &Encoder, inputs: &[Tensor], source: &str, t: usize) -> Result<Vec<Vec<f32>>> {
    let input = inputs
        .first()
        .filter(|_| inputs.len() == 1)
        .ok_or_else(|| Error::VerifyMismatch {
            path: source.into(),
            detail: format!("test {t}: an encoder test has one input"),
        })?;
    let states = encoder.run(&input.values, 1)?;
    Ok(states.row(0))
}

fn run_decoder(decoder: &Decoder, inputs: &[Tensor], source: &str, t: usize) -> Result<Vec<Vec<f32>>> {
    let units = decoder.units();
    let mismatch = |d: String| Error::VerifyMismatch {
        path: source.into(),
        detail: format!("test {t}: {d}"),
    };
    if inputs.len() != 1 + 2 * units.len() {
        return Err(mismatch(format!(
            "{} inputs, decoder takes {}",
            inputs.len(),
            1 + 2 * units.len()
        )));
    }
    let token_value = inputs[0].values.first().copied().unwrap_or(f32::NAN);
    if !(token_value >= 0.0 && token_value.fract() == 0.0 && (token_value as usize) < decoder.embedding.input_dim) {
        return Err(mismatch(format!("token input {token_value} is not a vocabulary id")));
    }
    let mut states = States::zeros(&units, 1);
    for (l, &u) in units.iter().enumerate() {
        let (h, c) = (&inputs[1 + 2 * l].values, &inputs[2 + 2 * l].values);
        if h.len() != u || c.len() != u {
            return Err(mismatch(format!("state inputs of LSTM {l} must have {u} values")));
        }
        states.h[l].copy_from_slice(h);
        states.c[l].copy_from_slice(c);
    }
    let mut scores = Vec::new();
    decoder.step(
        &[token_value as u32],
        &mut states,
        &mut scores,
        &mut DecoderScratch::default(),
    );
    let mut out = vec![scores];
    out.extend(states.row(0));
    Ok(out)
}
