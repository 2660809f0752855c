//! tuneinfer's own attention seq2seq model ([`AttentionModel`], `weights/`) on the GPU: the
//! weights of every ensemble member on the device, and two ways to decode, as for KTN models:
//!
//! - [`ResidentModel`] for the driver's resident greedy walk and beam (`driver.rs`): every
//!   member's encoder, and per step every member's decoder and the ensemble mean, so the search
//!   (`greedy_step` / `beam_step` with the solver's WGSL rules) stays in device buffers. A beam's
//!   rows read their problem's encoder outputs in place (`attention.wgsl`'s `enc_div`) and their
//!   parent's (h, c) in place (`lstm_step`'s gather).
//! - the same `ResidentModel` for the host's searches (`host_steps.rs`: solvers without a rules
//!   library, beams wider than `beam_step` takes). The states are the CPU model's: layer m of
//!   [`States`] is member m's decoder (h, c), side buffer m its encoder outputs `[rows, steps,
//!   hidden]`, uploaded per step (the host's beam reorders them with the rows).
//!
//! Per step and member: `embedding_gather` -> `lstm_step` -> `attention` (scores, softmax,
//! context, combine + tanh) -> `dense` (output layer); with several members each one's
//! `log_softmax` is averaged in member order (`ensemble_mean` on the device, the same sum on the
//! host), which is what `AttentionModel`'s step returns.

use super::buffers::{self, Pool};
use super::context::GpuContext;
use super::driver::{self, DecoderStep, ResidentModel};
use super::kernels::{
    self, AttentionLayer, AttentionOut, Conv1dLayer, DenseLayer, DenseOut, Embedding, EncoderOutputs, LstmInput,
    LstmLayer, LstmState, Recorder, Rows, RowsOf,
};
use crate::error::{Error, Result};
use crate::seq2seq::attention::{idx, AttentionConfig, AttentionModel};
use crate::seq2seq::States;

/// One ensemble member's weights on the device.
pub(crate) struct GpuAttentionMember {
    /// Encoder LSTM: `[1 + steps (hybrid: conv channels), 4h] kernel | [h, 4h] recurrent | [4h] bias`
    /// (lstm_step.wgsl).
    pub encoder: wgpu::Buffer,
    /// `[vocab, embed]`, f32 (as for KTN models).
    pub embedding: wgpu::Buffer,
    /// Decoder LSTM: `[embed, 4h] | [h, 4h] | [4h]`.
    pub decoder: wgpu::Buffer,
    /// `[2h, h] kernel | [h] bias` (attention.wgsl).
    pub combine: wgpu::Buffer,
    pub output_kernel: wgpu::Buffer,
    pub output_bias: wgpu::Buffer,
    /// The hybrid encoder's convolution: `[3, 1 + steps, channels] kernel | [channels] bias`,
    /// f32 (conv1d.wgsl); None for the plain LSTM encoder.
    pub conv: Option<wgpu::Buffer>,
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
    /// Member `member`'s encoder LSTM as `lstm_step` reads it.
    fn encoder_layer<'a>(&self, member: &'a GpuAttentionMember) -> LstmLayer<'a> {
        LstmLayer {
            weights: (&member.encoder).into(),
            in_dim: self.config.lstm_input(),
            units: self.config.hidden,
            half: self.half,
        }
    }

    /// Records member `member`'s hybrid-encoder convolution of `problems` encoder inputs into
    /// `out` (`[problems, steps, channels]`) and returns what the encoder LSTM reads: `out`, or
    /// the inputs themselves for the plain encoder.
    fn record_conv<'b>(
        &self,
        ctx: &GpuContext,
        rec: &mut Recorder<'_>,
        member: &GpuAttentionMember,
        input: &'b wgpu::Buffer,
        out: Option<&'b wgpu::Buffer>,
        problems: usize,
    ) -> Result<&'b wgpu::Buffer> {
        let c = self.config;
        match (&member.conv, c.encoder.conv_channels(), out) {
            (Some(weights), Some(channels), Some(out)) => {
                let layer = Conv1dLayer {
                    weights: weights.into(),
                    steps: c.steps,
                    fin: c.enc_input(),
                    channels,
                };
                kernels::conv1d(ctx, rec, layer, input.into(), out.into(), problems)?;
                Ok(out)
            }
            (None, None, _) => Ok(input),
            _ => Err(Error::Gpu(
                "hybrid encoder: convolution weights or output missing".into(),
            )),
        }
    }

    /// Bytes of the hybrid encoder's convolution output for `problems` problems (0: plain).
    fn conv_bytes(&self, problems: usize) -> u64 {
        let c = self.config;
        4 * (problems * c.steps * c.encoder.conv_channels().unwrap_or(0)) as u64
    }

    /// Member `member`'s token embedding as `embedding_gather` reads it.
    fn embedding<'a>(&self, member: &'a GpuAttentionMember) -> Embedding<'a> {
        Embedding {
            table: (&member.embedding).into(),
            vocab: self.config.vocab,
            dim: self.config.embed,
        }
    }

    /// Member `member`'s decoder LSTM as `lstm_step` reads it.
    fn decoder_layer<'a>(&self, member: &'a GpuAttentionMember) -> LstmLayer<'a> {
        LstmLayer {
            weights: (&member.decoder).into(),
            in_dim: self.config.embed,
            units: self.config.hidden,
            half: self.half,
        }
    }

    /// Member `member`'s attention combination as `attention` reads it.
    fn combine_layer<'a>(&self, member: &'a GpuAttentionMember) -> AttentionLayer<'a> {
        AttentionLayer {
            combine: (&member.combine).into(),
            units: self.config.hidden,
            half: self.half,
        }
    }

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
            let conv = match config.encoder.conv_channels() {
                Some(_) => {
                    let w = joined(&[idx::CONV_W, idx::CONV_B]);
                    weight_bytes += 4 * w.len() as u64;
                    Some(buffers::upload_f32(ctx, &label("convolution"), &w)?)
                }
                None => None,
            };
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
                conv,
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
        // What the driver takes per beam row (records, parents, feed).
        let search = driver::beam_row_words(c.seq_len);
        4 * (search + self.members.len() * per_member) as u64
    }

    /// Device bytes one problem needs: its encoder input and `width` decoded rows.
    pub fn bytes_per_problem(&self, width: usize) -> u64 {
        let c = self.config;
        4 * (c.steps * c.enc_input()) as u64 + self.conv_bytes(1) + width.max(1) as u64 * self.bytes_per_row()
    }

    /// Largest single buffer one row contributes to (bytes): the encoder outputs.
    /// The work of steps of `rows` rows reading the encoder outputs `enc` (one per member).
    fn step_work(
        &self,
        ctx: &GpuContext,
        pool: &mut Pool,
        enc: Vec<wgpu::Buffer>,
        rows: usize,
    ) -> Result<AttentionWork> {
        let c = self.config;
        let mut f32s = |label: &'static str, n: usize| pool.take(ctx, label, 4 * n as u64);
        Ok(AttentionWork {
            enc,
            embedded: f32s("embedded", rows * c.embed)?,
            weights: f32s("attention weights", rows * c.steps)?,
            context: f32s("context", rows * c.hidden)?,
            combined: f32s("combined", rows * c.hidden)?,
            raw: f32s("raw scores", rows * c.vocab)?,
            member_logp: f32s("member log-probabilities", rows * c.vocab)?,
        })
    }

    pub fn largest_row_bytes(&self) -> u64 {
        let c = self.config;
        let conv = c.steps * c.encoder.conv_channels().unwrap_or(0);
        4 * (c.steps * c.hidden).max(c.steps * c.enc_input()).max(conv).max(c.vocab) as u64
    }
}

/// What a resident decode's steps read besides the states: every member's encoder outputs
/// (`[problems, steps, hidden]`) and the steps' work buffers.
pub(crate) struct AttentionWork {
    enc: Vec<wgpu::Buffer>,
    embedded: wgpu::Buffer,
    weights: wgpu::Buffer,
    context: wgpu::Buffer,
    combined: wgpu::Buffer,
    raw: wgpu::Buffer,
    member_logp: wgpu::Buffer,
}

impl ResidentModel for GpuAttention {
    type Work = AttentionWork;

    fn vocab(&self) -> usize {
        self.config.vocab
    }

    /// One state layer per member: its decoder's (h, c).
    fn state_units(&self) -> Vec<usize> {
        vec![self.config.hidden; self.members.len()]
    }

    /// Member m's encoder outputs `[steps, hidden]` per row.
    fn extra_widths(&self) -> Vec<usize> {
        vec![self.config.steps * self.config.hidden; self.members.len()]
    }

    fn encoder_extras<'w>(&self, work: &'w AttentionWork) -> Vec<&'w wgpu::Buffer> {
        work.enc.iter().collect()
    }

    /// Each member's encoder outputs of every row uploaded, and the step's work buffers.
    fn host_step_work(&self, ctx: &GpuContext, pool: &mut Pool, states: &States) -> Result<AttentionWork> {
        let enc = states
            .extra
            .iter()
            .map(|e| pool.upload(ctx, "encoder outputs", bytemuck::cast_slice(e)))
            .collect::<Result<_>>()?;
        self.step_work(ctx, pool, enc, states.batch)
    }

    /// Every member's encoder for `problems` problems: its final state starts the decoder and
    /// its outputs stay per problem (a beam's rows read their problem's in place).
    fn record_encoder(
        &self,
        ctx: &GpuContext,
        pool: &mut Pool,
        rec: &mut Recorder<'_>,
        input: &wgpu::Buffer,
        problems: usize,
        rows: usize,
    ) -> Result<(Vec<wgpu::Buffer>, AttentionWork)> {
        let c = self.config;
        let (h, steps, lin) = (c.hidden, c.steps, c.lstm_input());
        let mut finals = Vec::with_capacity(self.members.len());
        let mut enc = Vec::with_capacity(self.members.len());
        let conv_out = match c.encoder.conv_channels() {
            Some(_) => Some(pool.take(ctx, "convolution output", self.conv_bytes(problems))?),
            None => None,
        };
        for member in &self.members {
            let a = pool.take(ctx, "encoder state", 4 * (2 * problems * h) as u64)?;
            let b = pool.take(ctx, "encoder state", 4 * (2 * problems * h) as u64)?;
            let seq = pool.take(ctx, "encoder outputs", 4 * (problems * steps * h) as u64)?;
            rec.encoder().clear_buffer(&a, 0, None);
            let lstm_in = self.record_conv(ctx, rec, member, input, conv_out.as_ref(), problems)?;
            for t in 0..steps {
                let (prev, next) = if t % 2 == 0 { (&a, &b) } else { (&b, &a) };
                let layer = self.encoder_layer(member);
                let step_input = LstmInput::Rows {
                    x: lstm_in.into(),
                    rows: Rows {
                        stride: steps * lin,
                        offset: t * lin,
                    },
                };
                let state = LstmState {
                    seq: Some(RowsOf {
                        view: (&seq).into(),
                        rows: Rows {
                            stride: steps * h,
                            offset: t * h,
                        },
                    }),
                    ..LstmState::new(prev.into(), next.into())
                };
                kernels::lstm_step(ctx, rec, layer, step_input, state, problems)?;
            }
            finals.push(if steps.is_multiple_of(2) { a } else { b });
            enc.push(seq);
        }
        Ok((finals, self.step_work(ctx, pool, enc, rows)?))
    }

    /// One decoder step of every member, then the step's scores (the raw output with one
    /// member, the mean log-probabilities with several) and their log-softmax, as
    /// `AttentionModel`'s step and the host's searches compute them.
    fn record_step(
        &self,
        ctx: &GpuContext,
        rec: &mut Recorder<'_>,
        w: &AttentionWork,
        s: DecoderStep<'_>,
    ) -> Result<()> {
        let c = self.config;
        let (h, e, v, steps) = (c.hidden, c.embed, c.vocab, c.steps);
        let (k, rows) = (self.members.len(), s.rows);
        if k > 1 {
            rec.encoder().clear_buffer(s.scores, 0, None);
        }
        for (i, member) in self.members.iter().enumerate() {
            let embedding = self.embedding(member);
            kernels::embedding_gather(ctx, rec, embedding, s.feed.into(), (&w.embedded).into(), rows)?;
            let layer = self.decoder_layer(member);
            let input = LstmInput::Rows {
                x: (&w.embedded).into(),
                rows: Rows::packed(e),
            };
            let state = LstmState {
                gather: s.gather,
                ..LstmState::new((&s.cur[i]).into(), (&s.next[i]).into())
            };
            kernels::lstm_step(ctx, rec, layer, input, state, rows)?;
            let combine = self.combine_layer(member);
            let encoded = EncoderOutputs {
                view: (&w.enc[i]).into(),
                steps,
                rows_per_block: s.rows_per_problem,
            };
            let written = AttentionOut {
                weights: (&w.weights).into(),
                context: (&w.context).into(),
                out: (&w.combined).into(),
            };
            kernels::attention(
                ctx,
                rec,
                combine,
                RowsOf::packed((&s.next[i]).into(), h),
                encoded,
                written,
                rows,
            )?;
            let raw = if k == 1 { s.scores } else { &w.raw };
            let output = DenseLayer {
                kernel: (&member.output_kernel).into(),
                bias: Some((&member.output_bias).into()),
                in_dim: h,
                units: v,
                half: self.half,
            };
            let a = RowsOf::packed((&w.combined).into(), h);
            kernels::dense(ctx, rec, output, a, DenseOut::Write(raw.into()), rows)?;
            if k > 1 {
                kernels::log_softmax(ctx, rec, raw.into(), (&w.member_logp).into(), rows, v)?;
                kernels::ensemble_mean(
                    ctx,
                    rec,
                    (&w.member_logp).into(),
                    s.scores.into(),
                    rows * v,
                    1.0 / k as f32,
                )?;
            }
        }
        kernels::log_softmax(ctx, rec, s.scores.into(), s.logp.into(), rows, v)
    }
}
