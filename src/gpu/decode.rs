//! MIOpen's KTN models decoding on the GPU.
//!
//! [`GpuKtn`] is a [`ResidentModel`]: its encoder (optional dense layer, LSTM layers) and its
//! decoder step (LSTM layers, the first reading the embedding of the fed token itself, output
//! dense layer and log-softmax) for the driver's resident greedy walk and beam search
//! (`driver.rs`).
//!
//! The host's searches drive the same `ResidentModel` step through `host_steps.rs`.

use super::buffers::Pool;
use super::context::GpuContext;
use super::driver::{self, DecoderStep, ResidentModel};
use super::kernels::{self, DenseOut, Gather, LstmInput, LstmState, Recorder, Rows, RowsOf};
use super::model::GpuKtn;
use crate::error::{Error, Result};
use crate::seq2seq::States;

/// Encoder words per problem: input, dense output, sequences between LSTMs, both state copies.
fn encoder_words(m: &GpuKtn) -> usize {
    let t = m.steps;
    let dense = m.enc_dense.as_ref().map_or(0, |d| t * d.units);
    let n = m.enc_lstms.len();
    let seqs: usize = m.enc_lstms.iter().take(n.saturating_sub(1)).map(|l| t * l.units).sum();
    let states: usize = m.enc_lstms.iter().map(|l| 2 * 2 * l.units).sum();
    t * m.features + dense + seqs + states
}

/// Decoder words per beam row: hypothesis records, feed, scores, log-probabilities, both state
/// copies (and the second record and the parent for a beam).
fn decoder_row_words(m: &GpuKtn, max_len: usize, beam: bool) -> usize {
    let states: usize = m.dec_lstms.iter().map(|l| 2 * 2 * l.units).sum();
    let records = if beam {
        driver::beam_row_words(max_len)
    } else {
        driver::hyp_words(max_len) + 1
    };
    records + 2 * m.output.units + states
}

/// Device bytes one problem needs in `greedy_resident` (`width` 1) or `beam_resident`: every
/// work buffer, both state copies (weights not included).
pub(crate) fn bytes_per_problem(m: &GpuKtn, max_len: usize, width: Option<usize>) -> u64 {
    let rows = match width {
        None => decoder_row_words(m, max_len, false),
        Some(w) => w.max(1) * decoder_row_words(m, max_len, true),
    };
    4 * (encoder_words(m) + 8 + rows) as u64
}

/// Largest single buffer one problem contributes to (bytes), for the binding-size limit.
pub(crate) fn greedy_largest_row_bytes(m: &GpuKtn) -> u64 {
    let widest_state = m
        .enc_lstms
        .iter()
        .chain(&m.dec_lstms)
        .map(|l| 2 * l.units)
        .max()
        .unwrap_or(0);
    let w = (m.steps * m.widest_seq())
        .max(m.vocab)
        .max(widest_state)
        .max(m.embed_dim);
    4 * w as u64
}

/// Records the encoder for `rows` problems (`input`: `[rows, T, F]`); returns the final
/// `[h | c]` buffer of each LSTM layer.
pub(crate) fn record_encoder(
    ctx: &GpuContext,
    pool: &mut Pool,
    rec: &mut Recorder<'_>,
    m: &GpuKtn,
    input: &wgpu::Buffer,
    rows: usize,
) -> Result<Vec<wgpu::Buffer>> {
    let t = m.steps;
    let mut owned: Option<wgpu::Buffer> = None;
    let mut dim = m.features;
    if let Some(d) = &m.enc_dense {
        let out = pool.take(ctx, "encoder dense out", 4 * (rows * t * d.units) as u64)?;
        kernels::dense(
            ctx,
            rec,
            d.layer(m.half),
            RowsOf::packed(input.into(), d.in_dim),
            DenseOut::Write((&out).into()),
            rows * t,
        )?;
        owned = Some(out);
        dim = d.units;
    }
    let mut finals = Vec::new();
    for (l, lstm) in m.enc_lstms.iter().enumerate() {
        let u = lstm.units;
        let last = l + 1 == m.enc_lstms.len();
        let out_seq = if last {
            None
        } else {
            Some(pool.take(ctx, "encoder sequence", 4 * (rows * t * u) as u64)?)
        };
        let a = pool.take(ctx, "encoder state", 4 * (2 * rows * u) as u64)?;
        let b = pool.take(ctx, "encoder state", 4 * (2 * rows * u) as u64)?;
        // The initial state is zero.
        rec.encoder().clear_buffer(&a, 0, None);
        let seq_in: &wgpu::Buffer = owned.as_ref().unwrap_or(input);
        for step in 0..t {
            let (prev, next) = if step % 2 == 0 { (&a, &b) } else { (&b, &a) };
            let layer = lstm.layer(m.half);
            let input = LstmInput::Rows {
                x: seq_in.into(),
                rows: Rows {
                    stride: t * dim,
                    offset: step * dim,
                },
            };
            let state = LstmState {
                seq: out_seq.as_ref().map(|s| RowsOf {
                    view: s.into(),
                    rows: Rows {
                        stride: t * u,
                        offset: step * u,
                    },
                }),
                ..LstmState::new(prev.into(), next.into())
            };
            kernels::lstm_step(ctx, rec, layer, input, state, rows)?;
        }
        finals.push(if t.is_multiple_of(2) { a } else { b });
        if let Some(s) = out_seq {
            owned = Some(s);
        }
        dim = u;
    }
    Ok(finals)
}

/// The decoder's per-layer states a step reads (`cur`) and writes (`next`). With `gather`,
/// row r continues row `parents[r]` of `cur` (the beam's reorder read in place).
struct DecoderStates<'a> {
    cur: &'a [wgpu::Buffer],
    next: &'a [wgpu::Buffer],
    gather: Option<Gather<'a>>,
}

/// Where a decoder step's output goes: the raw `scores` and, if wanted, their row-wise
/// log-softmax `logp`.
struct DecoderScores<'a> {
    scores: &'a wgpu::Buffer,
    logp: Option<&'a wgpu::Buffer>,
}

/// Records one decoder step for `rows` rows: `feed` tokens -> states `cur` -> `next` -> raw
/// scores (and `logp`). The first LSTM layer reads the embedding of `feed` itself (no separate
/// gather).
fn record_decoder_step(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    m: &GpuKtn,
    feed: &wgpu::Buffer,
    states: DecoderStates<'_>,
    out: DecoderScores<'_>,
    rows: usize,
) -> Result<()> {
    let DecoderStates { cur, next, gather } = states;
    let DecoderScores { scores, logp } = out;
    for (l, lstm) in m.dec_lstms.iter().enumerate() {
        let layer = lstm.layer(m.half);
        let input = if l == 0 {
            LstmInput::Embedded {
                ids: feed.into(),
                table: (&m.embedding).into(),
                vocab: m.vocab,
            }
        } else {
            LstmInput::Rows {
                x: (&next[l - 1]).into(),
                rows: Rows::packed(lstm.in_dim),
            }
        };
        let state = LstmState {
            gather,
            ..LstmState::new((&cur[l]).into(), (&next[l]).into())
        };
        kernels::lstm_step(ctx, rec, layer, input, state, rows)?;
    }
    let last = next
        .last()
        .ok_or_else(|| Error::Gpu("decoder has no LSTM layer".into()))?;
    let o = &m.output;
    let last = RowsOf::packed(last.into(), o.in_dim);
    // Few rows: the output layer and the log-softmax in one dispatch (same bits).
    if let Some(logp) = logp.filter(|_| rows < ctx.tiled_min_rows()) {
        return kernels::dense_log_softmax(ctx, rec, o.layer(m.half), last, scores.into(), logp.into(), rows);
    }
    kernels::dense(ctx, rec, o.layer(m.half), last, DenseOut::Write(scores.into()), rows)?;
    match logp {
        Some(logp) => kernels::log_softmax(ctx, rec, scores.into(), logp.into(), rows, o.units),
        None => Ok(()),
    }
}

impl ResidentModel for GpuKtn {
    /// Nothing besides the states: the output layer writes the driver's scores.
    type Work = ();

    fn vocab(&self) -> usize {
        self.output.units
    }

    fn state_units(&self) -> Vec<usize> {
        self.dec_lstms.iter().map(|l| l.units).collect()
    }

    fn record_encoder(
        &self,
        ctx: &GpuContext,
        pool: &mut Pool,
        rec: &mut Recorder<'_>,
        input: &wgpu::Buffer,
        problems: usize,
        _rows: usize,
    ) -> Result<(Vec<wgpu::Buffer>, ())> {
        Ok((record_encoder(ctx, pool, rec, self, input, problems)?, ()))
    }

    fn host_step_work(&self, _ctx: &GpuContext, _pool: &mut Pool, _states: &States) -> Result<()> {
        Ok(())
    }

    fn record_step(&self, ctx: &GpuContext, rec: &mut Recorder<'_>, _work: &(), s: DecoderStep<'_>) -> Result<()> {
        let states = DecoderStates {
            cur: s.cur,
            next: s.next,
            gather: s.gather,
        };
        let out = DecoderScores {
            scores: s.scores,
            logp: Some(s.logp),
        };
        record_decoder_step(ctx, rec, self, s.feed, states, out, s.rows)
    }
}
