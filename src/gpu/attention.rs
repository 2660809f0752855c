//! tuneinfer's own attention seq2seq model ([`AttentionModel`]) on the GPU: the weights of every
//! ensemble member on the device, the encoder, and the decoder step behind the [`StepDecoder`]
//! trait so the host's searches (MIOpen's greedy walk, the constrained beam) run the model on
//! the GPU, exactly as `GpuStepDecoder` does for KTN models.
//!
//! The states are the CPU model's: layer m of [`States`] is member m's decoder (h, c), side
//! buffer m its encoder outputs `[rows, steps, hidden]`. Per step and member the GPU runs
//! `embedding_gather` -> `lstm_step` -> `attention` (scores, softmax, context, combine + tanh)
//! -> `dense` (output layer) [-> `log_softmax` with several members]; the host averages the
//! members' log-probabilities in the CPU's order, so the scores are the CPU model's.

use std::sync::Mutex;

use super::buffers::{self, View};
use super::context::GpuContext;
use super::kernels::{self, Recorder, Rows};
use crate::error::{Error, Result};
use crate::seq2seq::attention::{idx, AttentionConfig, AttentionModel};
use crate::seq2seq::{DecoderScratch, States, StepDecoder};

/// One ensemble member's weights on the device.
pub(crate) struct GpuAttentionMember {
    /// Encoder LSTM: `[1 + steps, 4h] kernel | [h, 4h] recurrent | [4h] bias` (lstm_step.wgsl).
    pub encoder: wgpu::Buffer,
    /// `[vocab, embed]`, f32 (as for KTN models).
    pub embedding: wgpu::Buffer,
    /// Decoder LSTM: `[embed, 4h] | [h, 4h] | [4h]`.
    pub decoder: wgpu::Buffer,
    /// `[2h, h] kernel | [h] bias` (attention.wgsl).
    pub combine: wgpu::Buffer,
    pub output_kernel: wgpu::Buffer,
    pub output_bias: wgpu::Buffer,
}

/// An attention model's members on the device.
pub(crate) struct GpuAttention {
    pub config: AttentionConfig,
    pub members: Vec<GpuAttentionMember>,
    /// Bytes of weights on the device.
    pub weight_bytes: u64,
    /// Weights stored as f16 (arithmetic stays f32).
    pub half: bool,
}

impl GpuAttention {
    pub fn upload(ctx: &GpuContext, model: &AttentionModel, half: bool) -> Result<GpuAttention> {
        let config = model.config();
        if config.steps == 0 || config.steps > kernels::ATTENTION_MAX_STEPS {
            return Err(Error::Gpu(format!(
                "{}: {} encoder steps (the attention kernel takes 1 to {})",
                model.source,
                config.steps,
                kernels::ATTENTION_MAX_STEPS
            )));
        }
        let mut members = Vec::with_capacity(model.members.len());
        let mut weight_bytes = 0u64;
        let bytes_per_weight = if half { 2 } else { 4 };
        for (k, p) in model.members.iter().enumerate() {
            let joined = |parts: &[usize]| -> Vec<f32> { parts.iter().flat_map(|&i| p.get(i)).copied().collect() };
            let label = |what: &str| format!("attention member {k} {what}");
            let encoder = joined(&[idx::ENC_W, idx::ENC_U, idx::ENC_B]);
            let decoder = joined(&[idx::DEC_W, idx::DEC_U, idx::DEC_B]);
            let combine = joined(&[idx::COMB_W, idx::COMB_B]);
            weight_bytes += bytes_per_weight
                * (encoder.len() + decoder.len() + combine.len() + p.get(idx::OUT_W).len() + p.get(idx::OUT_B).len())
                    as u64
                + 4 * p.get(idx::EMB).len() as u64;
            members.push(GpuAttentionMember {
                encoder: buffers::upload_weights(ctx, &label("encoder"), &encoder, half)?,
                embedding: buffers::upload_f32(ctx, &label("embedding"), p.get(idx::EMB))?,
                decoder: buffers::upload_weights(ctx, &label("decoder"), &decoder, half)?,
                combine: buffers::upload_weights(ctx, &label("combine"), &combine, half)?,
                output_kernel: buffers::upload_weights(ctx, &label("output"), p.get(idx::OUT_W), half)?,
                output_bias: buffers::upload_weights(ctx, &label("output bias"), p.get(idx::OUT_B), half)?,
            });
        }
        Ok(GpuAttention {
            config,
            members,
            weight_bytes,
            half,
        })
    }

    /// Device bytes one decoded row (a problem, or a beam slot) needs per step: tokens, both
    /// state copies, encoder outputs, embedding, attention weights, context, combine output,
    /// scores and log-probabilities of every member.
    pub fn bytes_per_row(&self) -> u64 {
        let c = self.config;
        let per_member = 2 * 2 * c.hidden + c.steps * c.hidden + c.embed + c.steps + 2 * c.hidden + 2 * c.vocab;
        4 * (1 + self.members.len() * per_member) as u64
    }

    /// Device bytes one problem needs: its encoder input and `width` decoded rows.
    pub fn bytes_per_problem(&self, width: usize) -> u64 {
        let c = self.config;
        4 * (c.steps * c.enc_input()) as u64 + width.max(1) as u64 * self.bytes_per_row()
    }

    /// Largest single buffer one row contributes to (bytes): the encoder outputs.
    pub fn largest_row_bytes(&self) -> u64 {
        let c = self.config;
        4 * (c.steps * c.hidden).max(c.steps * c.enc_input()).max(c.vocab) as u64
    }
}

/// Encodes `rows` problems (`inputs`: `[rows, steps, 1 + steps]`) with every member on the GPU
/// and reads back the decoder's initial states: what [`AttentionModel::run_encoder`] returns.
pub(crate) fn encode_to_states(ctx: &GpuContext, m: &GpuAttention, inputs: &[f32], rows: usize) -> Result<States> {
    let c = m.config;
    let (h, steps, fin) = (c.hidden, c.steps, c.enc_input());
    let k = m.members.len();
    let mut states = States::zeros_with_extra(&vec![h; k], &vec![steps * h; k], rows);
    if rows == 0 {
        return Ok(states);
    }
    if inputs.len() != rows * steps * fin {
        return Err(Error::Shape {
            what: "attention encoder input".into(),
            expected: format!("{rows} x {steps} x {fin} values"),
            got: format!("{}", inputs.len()),
        });
    }
    let input = buffers::upload_f32(ctx, "encoder input", inputs)?;
    let mut rec = Recorder::new(ctx, "attention encoder");
    let mut outputs = Vec::with_capacity(k);
    for member in &m.members {
        let a = buffers::zeroed(ctx, "encoder state", 4 * (2 * rows * h) as u64)?;
        let b = buffers::zeroed(ctx, "encoder state", 4 * (2 * rows * h) as u64)?;
        let seq = buffers::zeroed(ctx, "encoder outputs", 4 * (rows * steps * h) as u64)?;
        for t in 0..steps {
            let (prev, next) = if t % 2 == 0 { (&a, &b) } else { (&b, &a) };
            kernels::lstm_step(
                ctx,
                &mut rec,
                (&input).into(),
                Rows {
                    stride: steps * fin,
                    offset: t * fin,
                },
                (&member.encoder).into(),
                prev.into(),
                next.into(),
                Some((
                    (&seq).into(),
                    Rows {
                        stride: steps * h,
                        offset: t * h,
                    },
                )),
                rows,
                fin,
                h,
                m.half,
            )?;
        }
        let last = if steps.is_multiple_of(2) { a } else { b };
        outputs.push((last, seq));
    }
    ctx.submit_and_wait("attention encoder", rec.finish())?;
    for (i, (state, seq)) in outputs.iter().enumerate() {
        let hc = buffers::read_f32(ctx, "encoder states", state, 0, 2 * rows * h)?;
        states.h[i].copy_from_slice(&hc[..rows * h]);
        states.c[i].copy_from_slice(&hc[rows * h..]);
        states.extra[i] = buffers::read_f32(ctx, "encoder outputs", seq, 0, rows * steps * h)?;
    }
    Ok(states)
}

/// The attention model's decoder step on the GPU for the host's search. A GPU failure turns the
/// step's scores into NaN (which the search never takes) and is kept for
/// [`GpuAttentionDecoder::take_error`].
pub(crate) struct GpuAttentionDecoder<'a> {
    pub ctx: &'a GpuContext,
    pub model: &'a GpuAttention,
    error: Mutex<Option<String>>,
}

/// One member's work buffers of a step.
struct MemberStep {
    next: wgpu::Buffer,
    scores: wgpu::Buffer,
}

impl<'a> GpuAttentionDecoder<'a> {
    pub fn new(ctx: &'a GpuContext, model: &'a GpuAttention) -> GpuAttentionDecoder<'a> {
        GpuAttentionDecoder {
            ctx,
            model,
            error: Mutex::new(None),
        }
    }

    /// The first GPU error of any step, if one happened.
    pub fn take_error(&self) -> Option<Error> {
        self.error.lock().ok().and_then(|mut e| e.take()).map(Error::Gpu)
    }

    fn try_step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>) -> Result<()> {
        let (ctx, m) = (self.ctx, self.model);
        let c = m.config;
        let (h, e, v, steps) = (c.hidden, c.embed, c.vocab, c.steps);
        let rows = states.batch;
        let k = m.members.len();
        scores.clear();
        scores.resize(rows * v, 0.0);
        if rows == 0 {
            return Ok(());
        }
        if tokens.len() != rows || states.h.len() != k || states.extra.len() != k {
            return Err(Error::Gpu(format!(
                "attention decoder step: {} tokens, {} state layers, {} encoder buffers for {rows} rows of {k} members",
                tokens.len(),
                states.h.len(),
                states.extra.len()
            )));
        }
        let feed = buffers::upload_u32(ctx, "tokens", tokens)?;
        let embedded = buffers::zeroed(ctx, "embedded", 4 * (rows * e) as u64)?;
        let weights = buffers::zeroed(ctx, "attention weights", 4 * (rows * steps) as u64)?;
        let context = buffers::zeroed(ctx, "context", 4 * (rows * h) as u64)?;
        let combined = buffers::zeroed(ctx, "combined", 4 * (rows * h) as u64)?;
        let raw = buffers::zeroed(ctx, "scores", 4 * (rows * v) as u64)?;
        let mut rec = Recorder::new(ctx, "attention decoder step");
        let mut work = Vec::with_capacity(k);
        for (i, member) in m.members.iter().enumerate() {
            let hc: Vec<f32> = states.h[i].iter().chain(&states.c[i]).copied().collect();
            let prev = buffers::upload_f32(ctx, "decoder state", &hc)?;
            let next = buffers::zeroed(ctx, "decoder state", 4 * (2 * rows * h) as u64)?;
            let enc = buffers::upload_f32(ctx, "encoder outputs", &states.extra[i])?;
            // With one member the scores are the raw output; with several, log-probabilities.
            let out = if k == 1 {
                raw.clone()
            } else {
                buffers::zeroed(ctx, "log-probabilities", 4 * (rows * v) as u64)?
            };
            kernels::embedding_gather(
                ctx,
                &mut rec,
                (&feed).into(),
                (&member.embedding).into(),
                (&embedded).into(),
                rows,
                v,
                e,
            )?;
            kernels::lstm_step(
                ctx,
                &mut rec,
                (&embedded).into(),
                Rows { stride: e, offset: 0 },
                (&member.decoder).into(),
                (&prev).into(),
                (&next).into(),
                None,
                rows,
                e,
                h,
                m.half,
            )?;
            kernels::attention(
                ctx,
                &mut rec,
                (&next).into(),
                Rows { stride: h, offset: 0 },
                (&enc).into(),
                (&member.combine).into(),
                (&weights).into(),
                (&context).into(),
                (&combined).into(),
                rows,
                steps,
                h,
                m.half,
            )?;
            kernels::dense(
                ctx,
                &mut rec,
                (&combined).into(),
                Rows { stride: h, offset: 0 },
                (&member.output_kernel).into(),
                Some(View::from(&member.output_bias)),
                (&raw).into(),
                rows,
                h,
                v,
                false,
                m.half,
            )?;
            if k > 1 {
                kernels::log_softmax(ctx, &mut rec, (&raw).into(), (&out).into(), rows, v)?;
            }
            work.push(MemberStep { next, scores: out });
        }
        ctx.submit_and_wait("attention decoder step", rec.finish())?;
        let share = 1.0 / k as f32;
        for (i, w) in work.iter().enumerate() {
            let hc = buffers::read_f32(ctx, "decoder states", &w.next, 0, 2 * rows * h)?;
            states.h[i].copy_from_slice(&hc[..rows * h]);
            states.c[i].copy_from_slice(&hc[rows * h..]);
            let member_scores = buffers::read_f32(ctx, "scores", &w.scores, 0, rows * v)?;
            if k == 1 {
                *scores = member_scores;
            } else {
                // The CPU model's mean, in its order.
                for (s, l) in scores.iter_mut().zip(&member_scores) {
                    *s += share * l;
                }
            }
        }
        Ok(())
    }
}

impl StepDecoder for GpuAttentionDecoder<'_> {
    fn vocab_size(&self) -> usize {
        self.model.config.vocab
    }

    fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, _scratch: &mut DecoderScratch) {
        if let Err(e) = self.try_step(tokens, states, scores) {
            if let Ok(mut slot) = self.error.lock() {
                slot.get_or_insert(e.to_string());
            }
            scores.clear();
            scores.resize(states.batch * self.model.config.vocab, f32::NAN);
        }
    }
}
