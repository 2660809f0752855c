//! The model files' embedded test vectors (Keras's own outputs) run on the GPU.

use super::context::GpuContext;
use super::host_steps::{encode_to_states, HostSteps};
use super::model::GpuKtn;
use crate::error::{Error, Result};
use crate::format::frugally::{KerasModel, Tensor};
use crate::seq2seq::ModelFiles;
use crate::seq2seq::{DecoderScratch, KtnModel, StepDecoder};

/// Outcome of one file's tests on the GPU.
#[derive(Debug, Clone)]
pub struct GpuVerifyReport {
    pub source: String,
    /// `encoder` or `decoder`.
    pub kind: &'static str,
    pub tests: usize,
    /// Largest |gpu - keras| over every output (infinite for NaN or a size mismatch).
    pub max_abs_error: f32,
}

fn worst(got: &[f32], want: &Tensor) -> f32 {
    if got.len() != want.values.len() {
        return f32::INFINITY;
    }
    got.iter().zip(&want.values).fold(0f32, |w, (&a, &b)| {
        let e = (a - b).abs();
        if e.is_nan() {
            f32::INFINITY
        } else {
            w.max(e)
        }
    })
}

/// Runs the encoder's and the decoder's embedded tests of a KTN model on `ctx`.
pub fn verify_ktn_on_gpu(ctx: &GpuContext, files: &ModelFiles) -> Result<Vec<GpuVerifyReport>> {
    let model = KtnModel::load(files)?;
    let gpu = GpuKtn::upload(ctx, &model, false)?;
    let mut reports = Vec::new();
    let enc = KerasModel::load(&files.encoder)?;
    let mut max_abs_error = 0f32;
    for test in &enc.tests {
        let input = test
            .inputs
            .first()
            .ok_or_else(|| Error::format(&enc.source, "test without input"))?;
        let states = encode_to_states(ctx, &gpu, &input.values, 1)?;
        let got: Vec<Vec<f32>> = states.row(0);
        if got.len() != test.outputs.len() {
            max_abs_error = f32::INFINITY;
        }
        for (g, w) in got.iter().zip(&test.outputs) {
            max_abs_error = max_abs_error.max(worst(g, w));
        }
    }
    reports.push(GpuVerifyReport {
        source: enc.source.clone(),
        kind: "encoder",
        tests: enc.tests.len(),
        max_abs_error,
    });
    let dec = KerasModel::load(&files.decoder)?;
    let step = HostSteps::new(ctx, &gpu);
    let mut max_abs_error = 0f32;
    for test in &dec.tests {
        let token = test
            .inputs
            .first()
            .and_then(|t| t.values.first())
            .copied()
            .unwrap_or(0.0);
        let units: Vec<usize> = gpu.dec_lstms.iter().map(|l| l.units).collect();
        let mut states = crate::seq2seq::States::zeros(&units, 1);
        for (l, _) in units.iter().enumerate() {
            let (h, c) = (test.inputs.get(1 + 2 * l), test.inputs.get(2 + 2 * l));
            match (h, c) {
                (Some(h), Some(c)) if h.values.len() == units[l] && c.values.len() == units[l] => {
                    states.h[l].copy_from_slice(&h.values);
                    states.c[l].copy_from_slice(&c.values);
                }
                _ => {
                    return Err(Error::format(
                        &dec.source,
                        "decoder test states do not match the LSTM units",
                    ))
                }
            }
        }
        let mut scores = Vec::new();
        step.step(
            &[token as u32],
            &mut states,
            &mut scores,
            &mut DecoderScratch::default(),
        );
        if let Some(e) = step.take_error() {
            return Err(e);
        }
        let mut got = vec![scores];
        got.extend(states.row(0));
        if got.len() != test.outputs.len() {
            max_abs_error = f32::INFINITY;
        }
        for (g, w) in got.iter().zip(&test.outputs) {
            max_abs_error = max_abs_error.max(worst(g, w));
        }
    }
    reports.push(GpuVerifyReport {
        source: dec.source.clone(),
        kind: "decoder",
        tests: dec.tests.len(),
        max_abs_error,
    });
    Ok(reports)
}
