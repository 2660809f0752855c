//! The resident decode driver: MIOpen's greedy walk and the constrained beam search with
//! everything in device buffers, written once for every model kind on the device.
//!
//! A model implements [`ResidentModel`]: it describes its decoder state (one `[rows] h |
//! [rows] c` buffer per state layer), records its encoder and records one decoder step. The
//! driver owns the rest: the uploads (encoder inputs, the rule words followed by the rule
//! tables, the vocabulary words), the hypothesis records, the feed, the scores, the state
//! ping-pong, the search kernels (`greedy_step`, `beam_step`), one command buffer and one
//! read-back.
//!
//! A config's length may depend on its first value (the rules library's `solver_config_len`;
//! catalogue solvers), so hypotheses finish at different steps; the beam keeps each problem's
//! finished ones in a list after the live slots.

use std::sync::Mutex;

use super::buffers::{self, Pool};
use super::context::GpuContext;
use super::kernels::{self, BeamRecords, BeamShape, BindCache, Gather, Recorder, SearchRules, StepScores};
use super::parallel;
use crate::error::{Error, Result};
use crate::search::Hypothesis;

/// One decoder step as the driver asks a model to record it, for `rows` rows.
#[derive(Clone, Copy)]
pub(crate) struct DecoderStep<'a> {
    /// The token each row was fed (`[rows]` u32).
    pub feed: &'a wgpu::Buffer,
    /// Each state layer's `[h | c]` the step reads, and the one it writes.
    pub cur: &'a [wgpu::Buffer],
    pub next: &'a [wgpu::Buffer],
    /// With a gather, row r continues row `parents[r]` of `cur` (a beam's reorder, and at the
    /// first step the problem's encoder state); without, row r continues row r.
    pub gather: Option<Gather<'a>>,
    /// Where the step's scores go (`[rows, vocab]`: what the host's searches add up) and their
    /// row-wise log-softmax.
    pub scores: &'a wgpu::Buffer,
    pub logp: &'a wgpu::Buffer,
    pub rows: usize,
    /// Decoder rows per problem (the beam's width, 1 for the greedy walk): row r belongs to
    /// problem `r / rows_per_problem`.
    pub rows_per_problem: usize,
}

/// A model on the device as the resident searches drive it.
pub(crate) trait ResidentModel {
    /// What the encoder leaves for the decoder steps besides the states (e.g. an attention
    /// model's encoder outputs), and the steps' own work buffers.
    type Work;

    /// Tokens of the output vocabulary (scores per row).
    fn vocab(&self) -> usize;

    /// Units of each decoder state layer: a layer's state is one buffer of `[rows, units] h |
    /// [rows, units] c`.
    fn state_units(&self) -> Vec<usize>;

    /// Records the encoder for `problems` problems (`input`: their encoder inputs) and takes
    /// the work buffers of steps of `rows` rows; returns each state layer's initial `[h | c]`
    /// per problem (read by the first step, through the gather of a beam) and the work.
    fn record_encoder(
        &self,
        ctx: &GpuContext,
        pool: &mut Pool,
        rec: &mut Recorder<'_>,
        input: &wgpu::Buffer,
        problems: usize,
        rows: usize,
    ) -> Result<(Vec<wgpu::Buffer>, Self::Work)>;

    /// Widths per row of the side buffers the host's searches carry in `States::extra` (e.g. an
    /// attention model's encoder outputs); none by default.
    fn extra_widths(&self) -> Vec<usize> {
        Vec::new()
    }

    /// The buffers in `work` holding those side buffers per problem after the encoder, in
    /// [`extra_widths`](Self::extra_widths)' order.
    fn encoder_extras<'w>(&self, _work: &'w Self::Work) -> Vec<&'w wgpu::Buffer> {
        Vec::new()
    }

    /// The work of one step the host's search drives for `states.batch` rows, each row with
    /// its own side buffers (`states.extra`, uploaded here).
    fn host_step_work(&self, ctx: &GpuContext, pool: &mut Pool, states: &crate::seq2seq::States) -> Result<Self::Work>;

    /// Records one decoder step.
    fn record_step(
        &self,
        ctx: &GpuContext,
        rec: &mut Recorder<'_>,
        work: &Self::Work,
        step: DecoderStep<'_>,
    ) -> Result<()>;
}

/// Words of one row's hypothesis record in `greedy_step.wgsl` / `beam_step.wgsl` for configs
/// of `max_len`: tokens, values, len, status, score bits, spare.
pub(crate) fn hyp_words(max_len: usize) -> usize {
    2 * max_len + 4
}

/// What the greedy walk needs besides the model.
pub(crate) struct GreedyJob<'a> {
    /// `[rows, ...]` encoder inputs.
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

/// What the resident beam search needs besides the model.
pub(crate) struct BeamJob<'a> {
    /// `[problems, ...]` encoder inputs.
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

/// The buffers every resident search uploads: encoder inputs, the rule words followed by the
/// tables the library reads by offset, and the vocabulary words.
struct Uploads {
    input: wgpu::Buffer,
    rules: wgpu::Buffer,
    vocab_words: wgpu::Buffer,
}

impl Uploads {
    fn new(
        ctx: &GpuContext,
        pool: &mut Pool,
        inputs: &[f32],
        rules: &[[i32; 8]],
        tables: &[i32],
        vocab_words: &[i32],
    ) -> Result<Uploads> {
        let words: Vec<i32> = rules.iter().flatten().chain(tables).copied().collect();
        Ok(Uploads {
            input: pool.upload(ctx, "encoder input", bytemuck::cast_slice(inputs))?,
            rules: pool.upload(ctx, "rules", bytemuck::cast_slice(&words))?,
            vocab_words: pool.upload(ctx, "vocabulary", bytemuck::cast_slice(vocab_words))?,
        })
    }

    fn search<'a>(&'a self, library: &'static str, vocab: usize, max_len: usize) -> SearchRules<'a> {
        SearchRules {
            library,
            rules: (&self.rules).into(),
            vocab_words: (&self.vocab_words).into(),
            vocab,
            max_len,
        }
    }
}

/// The decoder's rows through the steps: each state layer's current and next `[h | c]`, the
/// feed and the step's scores.
struct Decoding<W> {
    work: W,
    cur: Vec<wgpu::Buffer>,
    next: Vec<wgpu::Buffer>,
    feed: wgpu::Buffer,
    scores: wgpu::Buffer,
    logp: wgpu::Buffer,
    problems: usize,
    rows: usize,
}

impl<W> Decoding<W> {
    /// Takes the step buffers and records the encoder (the feed starts at token 0).
    fn start<M: ResidentModel<Work = W>>(
        ctx: &GpuContext,
        pool: &mut Pool,
        rec: &mut Recorder<'_>,
        m: &M,
        input: &wgpu::Buffer,
        problems: usize,
        rows: usize,
    ) -> Result<Decoding<W>> {
        let v = m.vocab();
        let feed = pool.take(ctx, "feed", 4 * rows as u64)?;
        let scores = pool.take(ctx, "scores", 4 * (rows * v) as u64)?;
        let logp = pool.take(ctx, "log-probabilities", 4 * (rows * v) as u64)?;
        rec.encoder().clear_buffer(&feed, 0, None);
        let (cur, work) = m.record_encoder(ctx, pool, rec, input, problems, rows)?;
        let next = m
            .state_units()
            .iter()
            .map(|&u| pool.take(ctx, "decoder state", 4 * (2 * rows * u) as u64))
            .collect::<Result<_>>()?;
        Ok(Decoding {
            work,
            cur,
            next,
            feed,
            scores,
            logp,
            problems,
            rows,
        })
    }

    fn step_scores(&self) -> StepScores<'_> {
        StepScores {
            scores: (&self.scores).into(),
            logp: (&self.logp).into(),
        }
    }

    /// Records decoder step `step` (`parents`: a beam's parent row of each slot) and makes its
    /// states the next step's.
    fn record_step<M: ResidentModel<Work = W>>(
        &mut self,
        ctx: &GpuContext,
        pool: &mut Pool,
        rec: &mut Recorder<'_>,
        m: &M,
        step: usize,
        parents: Option<&wgpu::Buffer>,
    ) -> Result<()> {
        // The first step reads the encoder's per-problem states.
        let prev_rows = if step == 0 { self.problems } else { self.rows };
        let gather = parents.map(|p| Gather {
            parents: p.into(),
            prev_rows,
        });
        let s = DecoderStep {
            feed: &self.feed,
            cur: &self.cur,
            next: &self.next,
            gather,
            scores: &self.scores,
            logp: &self.logp,
            rows: self.rows,
            rows_per_problem: self.rows / self.problems.max(1),
        };
        m.record_step(ctx, rec, &self.work, s)?;
        std::mem::swap(&mut self.cur, &mut self.next);
        // The encoder's states hold one row per problem: a beam's later steps need rows.
        if step == 0 && self.rows != self.problems {
            self.next = m
                .state_units()
                .iter()
                .map(|&u| pool.take(ctx, "decoder state", 4 * (2 * self.rows * u) as u64))
                .collect::<Result<_>>()?;
        }
        Ok(())
    }
}

/// MIOpen's greedy walk for `job.rules.len()` problems, resident on the GPU, recorded and
/// submitted; per problem (after [`Pending::finish`]) the hypothesis, or none where the walk
/// fails. The pool's buffers stay in use until then.
pub(crate) fn greedy_resident<M: ResidentModel>(
    ctx: &GpuContext,
    pool: &mut Pool,
    cache: &mut BindCache,
    m: &M,
    job: &GreedyJob<'_>,
) -> Result<Pending> {
    let rows = job.rules.len();
    let up = Uploads::new(ctx, pool, job.inputs, job.rules, job.tables, job.vocab_words)?;
    let words = hyp_words(job.max_len);
    let hyp = pool.take(ctx, "hypotheses", 4 * (rows * words) as u64)?;
    let mut rec = Recorder::with_cache(ctx, "greedy", cache);
    // Every walk starts running, empty, with score 0, fed token 0.
    rec.encoder().clear_buffer(&hyp, 0, None);
    let mut d = Decoding::start(ctx, pool, &mut rec, m, &up.input, rows, rows)?;
    let search = up.search(job.rules_library, m.vocab(), job.max_len);
    for step in 0..job.max_len {
        d.record_step(ctx, pool, &mut rec, m, step, None)?;
        kernels::greedy_step(
            ctx,
            &mut rec,
            search,
            d.step_scores(),
            (&hyp).into(),
            (&d.feed).into(),
            rows,
        )?;
    }
    let bytes = 4 * (rows * words) as u64;
    let staging = pool.take_read_back(ctx, "hypotheses read-back", bytes)?;
    rec.copy_out(&hyp, 0, &staging, bytes);
    let submitted = buffers::submit_for_read(ctx, "greedy decoding", rec.finish(), &[(&staging, bytes)])?;
    Ok(Pending {
        submitted,
        parse: Parse::Greedy {
            max_len: job.max_len,
            threads: job.threads,
        },
    })
}

/// A resident search recorded and submitted, its hypotheses not read back yet: the host can
/// record and submit the next chunk (with another pool) before [`Pending::finish`] waits.
pub(crate) struct Pending {
    submitted: buffers::Submitted,
    parse: Parse,
}

/// How a search's read-back becomes hypotheses.
enum Parse {
    Greedy {
        max_len: usize,
        threads: usize,
    },
    Beam {
        width: usize,
        max_len: usize,
        top: usize,
        threads: usize,
    },
}

impl Pending {
    /// Waits for the search and returns each problem's hypotheses, best first (a greedy walk:
    /// its one hypothesis, or none where it failed).
    pub fn finish(self, ctx: &GpuContext) -> Result<Vec<Vec<Hypothesis>>> {
        let read = self.submitted.read(ctx)?;
        let words = buffers::words_u32(read.first().map_or(&[][..], Vec::as_slice));
        match self.parse {
            Parse::Greedy { max_len, threads } => Ok(greedy_records(&words, max_len, threads)?
                .into_iter()
                .map(|h| h.into_iter().collect())
                .collect()),
            Parse::Beam {
                width,
                max_len,
                top,
                threads,
            } => finished_lists(&words, width, max_len, top, threads),
        }
    }
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

/// The constrained beam search for every problem, resident on the GPU, recorded and submitted:
/// per problem (after [`Pending::finish`]), up to `top` finished hypotheses, best first (as
/// `search::beam_search` orders them). The pool's buffers stay in use until then.
pub(crate) fn beam_resident<M: ResidentModel>(
    ctx: &GpuContext,
    pool: &mut Pool,
    cache: &mut BindCache,
    m: &M,
    job: &BeamJob<'_>,
) -> Result<Pending> {
    let problems = job.rules.len();
    let (w, l) = (job.width.max(1), job.max_len);
    let rows = problems * w;
    let words = hyp_words(l);
    let up = Uploads::new(ctx, pool, job.inputs, job.rules, job.tables, job.vocab_words)?;
    let mut rec = Recorder::with_cache(ctx, "beam", cache);
    let BeamStart {
        mut hyp_a,
        mut hyp_b,
        parents,
    } = beam_start(ctx, pool, &mut rec, rows, w, l)?;
    // The decoder's steps read each row's state from its parent row (the beam's reorder, and
    // at the first step the problem's encoder state) in place.
    let mut d = Decoding::start(ctx, pool, &mut rec, m, &up.input, problems, rows)?;
    let search = up.search(job.rules_library, m.vocab(), l);
    let shape = BeamShape {
        problems,
        width: w,
        values: job.values,
        domain_len: job.domain_len,
    };
    for step in 0..l {
        d.record_step(ctx, pool, &mut rec, m, step, Some(&parents))?;
        let records = BeamRecords {
            hyp_in: (&hyp_a).into(),
            hyp_out: (&hyp_b).into(),
            parents: (&parents).into(),
            feed: (&d.feed).into(),
        };
        kernels::beam_step(ctx, &mut rec, search, d.step_scores(), records, shape)?;
        std::mem::swap(&mut hyp_a, &mut hyp_b);
    }
    // The finished lists, already in search::beam_search's final order.
    let bytes = 4 * (rows * words) as u64;
    let staging = pool.take_read_back(ctx, "hypotheses read-back", bytes)?;
    rec.copy_out(&hyp_a, bytes, &staging, bytes);
    let submitted = buffers::submit_for_read(ctx, "beam search", rec.finish(), &[(&staging, bytes)])?;
    Ok(Pending {
        submitted,
        parse: Parse::Beam {
            width: w,
            max_len: l,
            top: job.top,
            threads: job.threads,
        },
    })
}

/// The buffers a resident beam search starts from: two hypothesis buffers (live slots, then
/// each problem's finished list) and the parent row of each slot.
struct BeamStart {
    hyp_a: wgpu::Buffer,
    hyp_b: wgpu::Buffer,
    parents: wgpu::Buffer,
}

/// Device words per beam row that the driver takes besides the model's states and work: three
/// record buffers of live slots and finished lists (the pooled initial one is kept for the next
/// search of the same size), the parent, the pooled initial parent and the feed.
pub(crate) fn beam_row_words(max_len: usize) -> usize {
    3 * 2 * hyp_words(max_len) + 3
}

/// Takes a beam's buffers from the pool and records the copies that start the search: in
/// `hyp_a`, slot 0 of each problem live with an empty prefix and everything else dead (the
/// live slots, then the finished lists); row r's parent is problem r / w's encoder state.
/// Those initial records and parents are pooled constants, built and uploaded once per
/// (width, length) and reused by every search as large or smaller.
fn beam_start(
    ctx: &GpuContext,
    pool: &mut Pool,
    rec: &mut Recorder<'_>,
    rows: usize,
    w: usize,
    l: usize,
) -> Result<BeamStart> {
    let words = hyp_words(l);
    let half = 4 * (rows * words) as u64;
    let live = pool.constant(ctx, "initial live slots", ((w as u64) << 32) | l as u64, half, |n| {
        bytemuck::cast_slice(&initial_records(n as usize / (4 * words), w, l)).to_vec()
    })?;
    let dead = pool.constant(ctx, "initial finished lists", l as u64, half, |n| {
        bytemuck::cast_slice(&initial_records(n as usize / (4 * words), usize::MAX, l)).to_vec()
    })?;
    let parent_bytes = 4 * rows as u64;
    let initial_parents = pool.constant(ctx, "initial parents", w as u64, parent_bytes, |n| {
        let first: Vec<u32> = (0..n as usize / 4).map(|r| (r / w) as u32).collect();
        bytemuck::cast_slice(&first).to_vec()
    })?;
    let start = BeamStart {
        hyp_a: pool.take(ctx, "hypotheses", 2 * half)?,
        hyp_b: pool.take(ctx, "hypotheses", 2 * half)?,
        parents: pool.take(ctx, "parents", parent_bytes)?,
    };
    let enc = rec.encoder();
    enc.copy_buffer_to_buffer(&live, 0, &start.hyp_a, 0, half);
    enc.copy_buffer_to_buffer(&dead, 0, &start.hyp_a, half, half);
    enc.copy_buffer_to_buffer(&initial_parents, 0, &start.parents, 0, parent_bytes);
    Ok(start)
}

/// `records` hypothesis records as `beam_step` starts from them: record r live with an empty
/// prefix where r is a multiple of `w` (slot 0 of each problem), dead otherwise (`w =
/// usize::MAX`: all dead, the finished lists).
fn initial_records(records: usize, w: usize, l: usize) -> Vec<u32> {
    let words = hyp_words(l);
    let mut init = vec![0u32; records * words];
    for (r, h) in init.chunks_exact_mut(words).enumerate() {
        h[2 * l + 1] = if w != usize::MAX && r % w == 0 { 0 } else { 2 };
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

/// The first failure of a GPU decoder's steps under the host's search: the `StepDecoder`
/// interface has no error channel, so a failed step keeps its error here for the caller to
/// report after the search, and hands the search NaN scores, which no candidate survives.
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
