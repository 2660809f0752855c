//! Decoding on the GPU.
//!
//! `greedy_resident`: MIOpen's greedy walk with everything in device buffers — encoder, every
//! decoder step, log-softmax, the solver's rule check and the hypotheses (tokens, values,
//! scores, states). All steps go into one command buffer; the host reads back only the final
//! hypotheses. `beam_resident`: the constrained beam search the same way. A config's length may
//! depend on its first value (the rules library's `solver_config_len`; catalogue solvers), so
//! hypotheses finish at different steps; the beam keeps each problem's finished ones in a list
//! after the live slots.
//!
//! `GpuStepDecoder`: the decoder step on the GPU behind the [`StepDecoder`] trait, so the host's
//! search (for solvers without a WGSL rules library, or configs and beams wider than the
//! kernels take) runs the model on the GPU with one upload and one read-back per step.

use std::sync::Mutex;

use super::buffers::{self, Pool};
use super::context::GpuContext;
use super::kernels::{
    self, BeamRecords, BeamShape, BindCache, DenseOut, Gather, LstmInput, LstmState, Recorder, Rows, RowsOf,
    SearchRules, StepScores,
};
use super::model::GpuKtn;
use super::parallel;
use crate::error::{Error, Result};
use crate::search::Hypothesis;
use crate::seq2seq::{DecoderScratch, States, StepDecoder};

/// Largest width x vocabulary `beam_step.wgsl` takes (its bit set of value prefixes).
pub(crate) const MAX_BEAM_CANDIDATES: usize = 2048;
/// Widest beam `beam_step.wgsl` takes (its `MAX_WIDTH`).
pub(crate) const MAX_BEAM_WIDTH: usize = 64;

/// Whether `beam_step.wgsl` takes a beam of `width` over `vocab` tokens on this device: at most
/// [`MAX_BEAM_WIDTH`] slots, [`MAX_BEAM_CANDIDATES`] candidates, and sort keys that fit the
/// device's workgroup memory.
pub(crate) fn beam_step_fits(ctx: &GpuContext, width: usize, vocab: usize) -> bool {
    let bytes = kernels::beam_workgroup_bytes(kernels::beam_sort_entries(width, vocab));
    width <= MAX_BEAM_WIDTH
        && width * vocab <= MAX_BEAM_CANDIDATES
        && bytes <= u64::from(ctx.limits.max_compute_workgroup_storage_size)
}

/// Largest look-ahead domain of the WGSL rules libraries (`SOLVER_DOMAIN_MAX`).
pub(crate) const MAX_DOMAIN: usize = 64;

/// Words of one row's hypothesis record in `greedy_step.wgsl` for configs of `max_len`.
pub(crate) fn hyp_words(max_len: usize) -> usize {
    2 * max_len + 4
}

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
        beam_start_words(max_len)
    } else {
        hyp_words(max_len)
    };
    records + 1 + 2 * m.output.units + states
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

/// What the greedy walk needs besides the model.
pub(crate) struct GreedyJob<'a> {
    /// `[rows, T, F]` encoder inputs.
    pub inputs: &'a [f32],
    /// The solver's rule words per row.
    pub rules: &'a [[i32; 8]],
    /// Data the rules library reads by offset, uploaded after the rule words (catalogue tables).
    pub tables: &'a [i32],
    /// `greedy_step.wgsl`'s vocabulary words: value id per token, then each value as i32.
    pub vocab_words: &'a [i32],
    pub rules_library: &'static str,
    /// Host threads for parsing the read-back (the predictor's `--threads`).
    pub threads: usize,
    /// Longest config length (positions to decode).
    pub max_len: usize,
}

/// MIOpen's greedy walk for `job.rules.len()` problems, resident on the GPU. Per problem: the
/// hypothesis, or None where the walk fails.
pub(crate) fn greedy_resident(
    ctx: &GpuContext,
    pool: &mut Pool,
    cache: &mut BindCache,
    m: &GpuKtn,
    job: &GreedyJob<'_>,
) -> Result<Vec<Option<Hypothesis>>> {
    let rows = job.rules.len();
    if rows == 0 {
        return Ok(Vec::new());
    }
    let v = m.output.units;
    let input = pool.upload(ctx, "encoder input", bytemuck::cast_slice(job.inputs))?;
    let rules: Vec<i32> = job.rules.iter().flatten().chain(job.tables).copied().collect();
    let rules = pool.upload(ctx, "rules", bytemuck::cast_slice(&rules))?;
    let vocab_words = pool.upload(ctx, "vocabulary", bytemuck::cast_slice(job.vocab_words))?;
    let words = hyp_words(job.max_len);
    let hyp = pool.take(ctx, "hypotheses", 4 * (rows * words) as u64)?;
    let feed = pool.take(ctx, "feed", 4 * rows as u64)?;
    let scores = pool.take(ctx, "scores", 4 * (rows * v) as u64)?;
    let logp = pool.take(ctx, "log-probabilities", 4 * (rows * v) as u64)?;
    let mut rec = Recorder::with_cache(ctx, "greedy", cache);
    // Every walk starts running, empty, with score 0, fed token 0.
    rec.encoder().clear_buffer(&hyp, 0, None);
    rec.encoder().clear_buffer(&feed, 0, None);
    let mut cur = record_encoder(ctx, pool, &mut rec, m, &input, rows)?;
    let mut next: Vec<wgpu::Buffer> = m
        .dec_lstms
        .iter()
        .map(|l| pool.take(ctx, "decoder state", 4 * (2 * rows * l.units) as u64))
        .collect::<Result<_>>()?;
    let search = SearchRules {
        library: job.rules_library,
        rules: (&rules).into(),
        vocab_words: (&vocab_words).into(),
        vocab: v,
        max_len: job.max_len,
    };
    let step_scores = StepScores {
        scores: (&scores).into(),
        logp: (&logp).into(),
    };
    for _ in 0..job.max_len {
        let states = DecoderStates {
            cur: &cur,
            next: &next,
            gather: None,
        };
        let out = DecoderScores {
            scores: &scores,
            logp: Some(&logp),
        };
        record_decoder_step(ctx, &mut rec, m, &feed, states, out, rows)?;
        kernels::greedy_step(ctx, &mut rec, search, step_scores, (&hyp).into(), (&feed).into(), rows)?;
        std::mem::swap(&mut cur, &mut next);
    }
    let bytes = 4 * (rows * words) as u64;
    let staging = pool.take_read_back(ctx, "hypotheses read-back", bytes)?;
    rec.copy_out(&hyp, 0, &staging, bytes);
    let read = buffers::submit_and_read(ctx, "greedy decoding", rec.finish(), &[(&staging, bytes)])?;
    greedy_records(&buffers::words_u32(&read[0]), job.max_len, job.threads)
}

/// Each row's greedy walk: its hypothesis when the walk finished (status 1), else `None`.
pub(crate) fn greedy_records(out: &[u32], l: usize, threads: usize) -> Result<Vec<Option<Hypothesis>>> {
    let records: Vec<&[u32]> = out.chunks_exact(hyp_words(l)).collect();
    let parts = parallel::map_parts(&records, threads.max(1), |_, part| {
        part.iter()
            .map(|h| {
                let (len, status, score) = (h[2 * l] as usize, h[2 * l + 1], f32::from_bits(h[2 * l + 2]));
                (status == 1 && len <= l).then(|| Hypothesis {
                    tokens: h[..len].to_vec(),
                    values: h[l..l + len].to_vec(),
                    score,
                })
            })
            .collect::<Vec<_>>()
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// What the resident beam search needs besides the model.
pub(crate) struct BeamJob<'a> {
    /// `[problems, T, F]` encoder inputs.
    pub inputs: &'a [f32],
    pub rules: &'a [[i32; 8]],
    /// Data the rules library reads by offset, uploaded after the rule words (catalogue tables).
    pub tables: &'a [i32],
    /// `vocab_words` (tokens | values | domain length | domain).
    pub vocab_words: &'a [i32],
    /// Number of distinct values and of domain entries in `vocab_words`.
    pub values: usize,
    pub domain_len: usize,
    pub rules_library: &'static str,
    pub max_len: usize,
    pub width: usize,
    pub top: usize,
    /// Host threads for parsing the read-back (the predictor's `--threads`).
    pub threads: usize,
}

/// The constrained beam search for every problem, resident on the GPU: per problem, up to
/// `top` finished hypotheses, best first (as `search::beam_search` orders them).
pub(crate) fn beam_resident(
    ctx: &GpuContext,
    pool: &mut Pool,
    cache: &mut BindCache,
    m: &GpuKtn,
    job: &BeamJob<'_>,
) -> Result<Vec<Vec<Hypothesis>>> {
    let problems = job.rules.len();
    if problems == 0 {
        return Ok(Vec::new());
    }
    let (w, v, l) = (job.width.max(1), m.output.units, job.max_len);
    let rows = problems * w;
    let words = hyp_words(l);
    let input = pool.upload(ctx, "encoder input", bytemuck::cast_slice(job.inputs))?;
    let rules: Vec<i32> = job.rules.iter().flatten().chain(job.tables).copied().collect();
    let rules = pool.upload(ctx, "rules", bytemuck::cast_slice(&rules))?;
    let vocab_words = pool.upload(ctx, "vocabulary", bytemuck::cast_slice(job.vocab_words))?;
    let mut rec = Recorder::with_cache(ctx, "beam", cache);
    let BeamStart {
        mut hyp_a,
        mut hyp_b,
        parents,
    } = beam_start(ctx, pool, &mut rec, rows, w, l)?;
    let feed = pool.take(ctx, "feed", 4 * rows as u64)?;
    let scores = pool.take(ctx, "scores", 4 * (rows * v) as u64)?;
    let logp = pool.take(ctx, "log-probabilities", 4 * (rows * v) as u64)?;
    rec.encoder().clear_buffer(&feed, 0, None);
    // The decoder's LSTMs read each row's state from its parent row (the beam's reorder, and
    // at the first step the problem's encoder state) in place.
    // Step i writes states[i % 2] and reads the previous step's (at step 0 the encoder's).
    let encoded = record_encoder(ctx, pool, &mut rec, m, &input, problems)?;
    let mut states: [Vec<wgpu::Buffer>; 2] = [Vec::new(), Vec::new()];
    for lstm in &m.dec_lstms {
        let bytes = 4 * (2 * rows * lstm.units) as u64;
        states[0].push(pool.take(ctx, "beam state", bytes)?);
        states[1].push(pool.take(ctx, "beam state", bytes)?);
    }
    let search = SearchRules {
        library: job.rules_library,
        rules: (&rules).into(),
        vocab_words: (&vocab_words).into(),
        vocab: v,
        max_len: l,
    };
    let step_scores = StepScores {
        scores: (&scores).into(),
        logp: (&logp).into(),
    };
    for step in 0..l {
        let (cur, cur_rows) = if step == 0 {
            (&encoded, problems)
        } else {
            (&states[(step - 1) % 2], rows)
        };
        let next = &states[step % 2];
        let states = DecoderStates {
            cur,
            next,
            gather: Some(Gather {
                parents: (&parents).into(),
                prev_rows: cur_rows,
            }),
        };
        let out = DecoderScores {
            scores: &scores,
            logp: Some(&logp),
        };
        record_decoder_step(ctx, &mut rec, m, &feed, states, out, rows)?;
        let records = BeamRecords {
            hyp_in: (&hyp_a).into(),
            hyp_out: (&hyp_b).into(),
            parents: (&parents).into(),
            feed: (&feed).into(),
        };
        let shape = BeamShape {
            problems,
            width: w,
            values: job.values,
            domain_len: job.domain_len,
        };
        kernels::beam_step(ctx, &mut rec, search, step_scores, records, shape)?;
        std::mem::swap(&mut hyp_a, &mut hyp_b);
    }
    // The finished lists, already in search::beam_search's final order.
    let bytes = 4 * (rows * words) as u64;
    let staging = pool.take_read_back(ctx, "hypotheses read-back", bytes)?;
    rec.copy_out(&hyp_a, bytes, &staging, bytes);
    let read = buffers::submit_and_read(ctx, "beam search", rec.finish(), &[(&staging, bytes)])?;
    finished_lists(&buffers::words_u32(&read[0]), w, l, job.top, job.threads)
}

/// The buffers a resident beam search starts from, for both model kinds: two hypothesis
/// buffers (live slots, then each problem's finished list) and the parent row of each slot.
pub(crate) struct BeamStart {
    pub hyp_a: wgpu::Buffer,
    pub hyp_b: wgpu::Buffer,
    pub parents: wgpu::Buffer,
}

/// Device words per beam row that [`beam_start`] takes: three record buffers of live slots
/// and finished lists (the pooled initial one is kept for the next search of the same size),
/// the parent and the pooled initial parent.
pub(crate) fn beam_start_words(max_len: usize) -> usize {
    3 * 2 * hyp_words(max_len) + 2
}

/// Takes a beam's buffers from the pool and records the copies that start the search: in
/// `hyp_a`, slot 0 of each problem live with an empty prefix and everything else dead; row r's
/// parent is problem r / w's encoder state. Those initial records and parents are pooled
/// constants, built and uploaded once per (size, width, length).
pub(crate) fn beam_start(
    ctx: &GpuContext,
    pool: &mut Pool,
    rec: &mut Recorder<'_>,
    rows: usize,
    w: usize,
    l: usize,
) -> Result<BeamStart> {
    let hyp_bytes = 4 * (2 * rows * hyp_words(l)) as u64;
    let initial_hypotheses = pool.constant(
        ctx,
        "initial hypotheses",
        ((w as u64) << 32) | l as u64,
        hyp_bytes,
        || bytemuck::cast_slice(&initial_hypotheses(rows, w, l)).to_vec(),
    )?;
    let parent_bytes = 4 * rows as u64;
    let initial_parents = pool.constant(ctx, "initial parents", w as u64, parent_bytes, || {
        let first: Vec<u32> = (0..rows).map(|r| (r / w) as u32).collect();
        bytemuck::cast_slice(&first).to_vec()
    })?;
    let start = BeamStart {
        hyp_a: pool.take(ctx, "hypotheses", hyp_bytes)?,
        hyp_b: pool.take(ctx, "hypotheses", hyp_bytes)?,
        parents: pool.take(ctx, "parents", parent_bytes)?,
    };
    rec.encoder()
        .copy_buffer_to_buffer(&initial_hypotheses, 0, &start.hyp_a, 0, hyp_bytes);
    rec.encoder()
        .copy_buffer_to_buffer(&initial_parents, 0, &start.parents, 0, parent_bytes);
    Ok(start)
}

/// The hypothesis records `beam_step` starts from: `rows` live slots (slot 0 of each problem
/// live with an empty prefix, the others dead), then every problem's `w` finished records (dead).
pub(crate) fn initial_hypotheses(rows: usize, w: usize, l: usize) -> Vec<u32> {
    let words = hyp_words(l);
    let mut init = vec![0u32; 2 * rows * words];
    for (r, h) in init.chunks_exact_mut(words).enumerate() {
        h[2 * l + 1] = if r < rows && r % w == 0 { 0 } else { 2 };
    }
    init
}

/// Each problem's finished list (`w` records, already in search::beam_search's final order) as
/// its first `top` hypotheses.
pub(crate) fn finished_lists(
    out: &[u32],
    w: usize,
    l: usize,
    top: usize,
    threads: usize,
) -> Result<Vec<Vec<Hypothesis>>> {
    let words = hyp_words(l);
    let lists: Vec<&[u32]> = out.chunks_exact(words * w).collect();
    let parts = parallel::map_parts(&lists, threads.max(1), |_, part| {
        part.iter()
            .map(|list| {
                list.chunks_exact(words)
                    .take_while(|h| h[2 * l + 1] == 1)
                    .filter(|h| (1..=l).contains(&(h[2 * l] as usize)))
                    .take(top)
                    .map(|h| {
                        let len = h[2 * l] as usize;
                        Hypothesis {
                            tokens: h[..len].to_vec(),
                            values: h[l..l + len].to_vec(),
                            score: f32::from_bits(h[2 * l + 2]),
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// Encodes `rows` problems on the GPU and reads the decoder's initial states back.
pub(crate) fn encode_to_states(ctx: &GpuContext, m: &GpuKtn, inputs: &[f32], rows: usize) -> Result<States> {
    let units: Vec<usize> = m.enc_lstms.iter().map(|l| l.units).collect();
    let mut states = States::zeros(&units, rows);
    if rows == 0 {
        return Ok(states);
    }
    let mut pool = Pool::default();
    let input = pool.upload(ctx, "encoder input", bytemuck::cast_slice(inputs))?;
    let mut rec = Recorder::new(ctx, "encoder");
    let finals = record_encoder(ctx, &mut pool, &mut rec, m, &input, rows)?;
    let mut staged = Vec::new();
    for (buf, &u) in finals.iter().zip(&units) {
        let bytes = 4 * (2 * rows * u) as u64;
        let staging = pool.take_read_back(ctx, "encoder states read-back", bytes)?;
        rec.copy_out(buf, 0, &staging, bytes);
        staged.push((staging, bytes));
    }
    let reads: Vec<(&wgpu::Buffer, u64)> = staged.iter().map(|(b, n)| (b, *n)).collect();
    let read = buffers::submit_and_read(ctx, "encoder", rec.finish(), &reads)?;
    for (l, bytes) in read.iter().enumerate() {
        let u = units[l];
        let hc = buffers::words_f32(bytes);
        states.h[l].copy_from_slice(&hc[..rows * u]);
        states.c[l].copy_from_slice(&hc[rows * u..]);
    }
    Ok(states)
}

/// The decoder step on the GPU for the host's search. A GPU failure turns the step's scores
/// into NaN (which the search never takes) and is kept for [`GpuStepDecoder::take_error`].
pub(crate) struct GpuStepDecoder<'a> {
    pub ctx: &'a GpuContext,
    pub model: &'a GpuKtn,
    error: StepError,
}

impl<'a> GpuStepDecoder<'a> {
    pub fn new(ctx: &'a GpuContext, model: &'a GpuKtn) -> GpuStepDecoder<'a> {
        GpuStepDecoder {
            ctx,
            model,
            error: StepError::default(),
        }
    }

    /// The first GPU error of any step, if one happened.
    pub fn take_error(&self) -> Option<Error> {
        self.error.take()
    }

    fn try_step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>) -> Result<()> {
        let (ctx, m) = (self.ctx, self.model);
        let rows = states.batch;
        let v = m.output.units;
        scores.resize(rows * v, 0.0);
        if rows == 0 {
            return Ok(());
        }
        let feed = buffers::upload_u32(ctx, "tokens", tokens)?;
        let mut cur = Vec::new();
        let mut next = Vec::new();
        for (l, lstm) in m.dec_lstms.iter().enumerate() {
            let hc: Vec<f32> = states.h[l].iter().chain(&states.c[l]).copied().collect();
            cur.push(buffers::upload_f32(ctx, "decoder state", &hc)?);
            next.push(buffers::zeroed(
                ctx,
                "decoder state",
                4 * (2 * rows * lstm.units) as u64,
            )?);
        }
        let score_buf = buffers::zeroed(ctx, "scores", 4 * (rows * v) as u64)?;
        let mut rec = Recorder::new(ctx, "decoder step");
        let layers = DecoderStates {
            cur: &cur,
            next: &next,
            gather: None,
        };
        let out = DecoderScores {
            scores: &score_buf,
            logp: None,
        };
        record_decoder_step(ctx, &mut rec, m, &feed, layers, out, rows)?;
        // Every layer's new state and the scores come back in one read-back.
        let mut staged = Vec::new();
        for (buf, lstm) in next.iter().zip(&m.dec_lstms) {
            let bytes = 4 * (2 * rows * lstm.units) as u64;
            let staging = buffers::read_back_buffer(ctx, "decoder states read-back", bytes)?;
            rec.copy_out(buf, 0, &staging, bytes);
            staged.push((staging, bytes));
        }
        let bytes = 4 * (rows * v) as u64;
        let staging = buffers::read_back_buffer(ctx, "scores read-back", bytes)?;
        rec.copy_out(&score_buf, 0, &staging, bytes);
        staged.push((staging, bytes));
        let reads: Vec<(&wgpu::Buffer, u64)> = staged.iter().map(|(b, n)| (b, *n)).collect();
        let mut read = buffers::submit_and_read(ctx, "decoder step", rec.finish(), &reads)?;
        *scores = buffers::words_f32(&read.pop().unwrap_or_default());
        for (l, lstm) in m.dec_lstms.iter().enumerate() {
            let u = lstm.units;
            let hc = buffers::words_f32(&read[l]);
            states.h[l].copy_from_slice(&hc[..rows * u]);
            states.c[l].copy_from_slice(&hc[rows * u..]);
        }
        Ok(())
    }
}

impl StepDecoder for GpuStepDecoder<'_> {
    fn vocab_size(&self) -> usize {
        self.model.output.units
    }

    fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, _scratch: &mut DecoderScratch) {
        if let Err(e) = self.try_step(tokens, states, scores) {
            self.error.fail(e, scores, states.batch * self.model.output.units);
        }
    }
}

/// The first failure of a GPU decoder's steps: the `StepDecoder` interface has no error channel,
/// so a failed step keeps its error here for the caller to report after the search, and hands
/// the search NaN scores, which no candidate survives.
#[derive(Debug, Default)]
pub(crate) struct StepError(Mutex<Option<String>>);

impl StepError {
    pub(crate) fn fail(&self, e: Error, scores: &mut Vec<f32>, len: usize) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(e.to_string());
        }
        scores.clear();
        scores.resize(len, f32::NAN);
    }

    pub(crate) fn take(&self) -> Option<Error> {
        self.0.lock().ok().and_then(|mut e| e.take()).map(Error::Gpu)
    }
}
