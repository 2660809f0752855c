//! The host's searches over a model on the device, written once over [`ResidentModel`]:
//! [`encode_to_states`] runs the encoder and reads the decoder's initial states back (as the CPU
//! model's `States`), and [`HostSteps`] is the model's decoder step behind the host's
//! [`StepDecoder`] trait, one upload and one read-back per step. This is the path of solvers
//! without a WGSL rules library (`GpuSearch::Host`) and of configs or beams wider than the
//! resident kernels take.
//!
//! Both use a buffer pool and a bind-group cache of their own, so a search's steps after the
//! first (the same or fewer rows) create no device buffers.

use std::sync::Mutex;

use super::buffers::{self, Pool};
use super::context::GpuContext;
use super::driver::{DecoderStep, ResidentModel, StepError};
use super::kernels::{BindCache, Recorder};
use crate::error::{Error, Result};
use crate::seq2seq::{DecoderScratch, States, StepDecoder};

/// Encodes `rows` problems (`inputs`: their encoder inputs, concatenated) on the GPU and reads
/// back the decoder's initial states: each state layer's (h, c) and each of the model's
/// per-problem side buffers ([`ResidentModel::encoder_extras`]).
pub(crate) fn encode_to_states<M: ResidentModel>(
    ctx: &GpuContext,
    m: &M,
    inputs: &[f32],
    rows: usize,
) -> Result<States> {
    let units = m.state_units();
    if rows == 0 {
        return Ok(States::zeros_with_extra(&units, &m.extra_widths(), 0));
    }
    let mut pool = Pool::default();
    let input = pool.upload(ctx, "encoder input", bytemuck::cast_slice(inputs))?;
    let mut rec = Recorder::new(ctx, "encoder");
    let (finals, work) = m.record_encoder(ctx, &mut pool, &mut rec, &input, rows, rows)?;
    let widths = m.extra_widths();
    let extras = m.encoder_extras(&work);
    if extras.len() != widths.len() {
        return Err(Error::Internal(format!(
            "the encoder left {} side buffers for {} widths",
            extras.len(),
            widths.len()
        )));
    }
    let mut states = States::zeros_with_extra(&units, &widths, rows);
    let sides: Vec<(&wgpu::Buffer, usize)> = extras.iter().zip(&widths).map(|(&b, &w)| (b, rows * w)).collect();
    let read = read_states_and(ctx, &mut pool, rec, "encoder", &finals, &sides, &mut states)?;
    for (e, bytes) in read.iter().enumerate() {
        states.extra[e] = buffers::words_f32(bytes);
    }
    Ok(states)
}

/// Copies each state layer's `[h | c]` (`layers`, one buffer per layer of `states`) and the
/// `more` buffers (with their word counts) out, submits the recording, puts the layers into
/// `states` and returns the bytes of the `more` buffers.
fn read_states_and(
    ctx: &GpuContext,
    pool: &mut Pool,
    mut rec: Recorder<'_>,
    what: &str,
    layers: &[wgpu::Buffer],
    more: &[(&wgpu::Buffer, usize)],
    states: &mut States,
) -> Result<Vec<Vec<u8>>> {
    let rows = states.batch;
    let mut staged = Vec::with_capacity(layers.len() + more.len());
    let sources = layers
        .iter()
        .zip(&states.units)
        .map(|(b, &u)| (b, 2 * rows * u))
        .chain(more.iter().copied());
    for (buf, words) in sources {
        let bytes = 4 * words as u64;
        let staging = pool.take_read_back(ctx, "read-back", bytes)?;
        rec.copy_out(buf, 0, &staging, bytes);
        staged.push((staging, bytes));
    }
    let reads: Vec<(&wgpu::Buffer, u64)> = staged.iter().map(|(b, n)| (b, *n)).collect();
    let mut read = buffers::submit_and_read(ctx, what, rec.finish(), &reads)?;
    let rest = read.split_off(layers.len().min(read.len()));
    for (l, bytes) in read.iter().enumerate() {
        let u = states.units[l];
        let hc = buffers::words_f32(bytes);
        if hc.len() != 2 * rows * u {
            return Err(Error::Internal(format!(
                "{what}: read {} state words of {}",
                hc.len(),
                2 * rows * u
            )));
        }
        states.h[l].copy_from_slice(&hc[..rows * u]);
        states.c[l].copy_from_slice(&hc[rows * u..]);
    }
    Ok(rest)
}

/// A model's decoder step on the GPU for the host's search. A GPU failure turns the step's
/// scores into NaN (which the search never takes) and is kept for [`HostSteps::take_error`].
pub(crate) struct HostSteps<'a, M> {
    ctx: &'a GpuContext,
    model: &'a M,
    /// The steps' buffers and bind groups (one step at a time).
    pool: Mutex<(Pool, BindCache)>,
    error: StepError,
}

impl<'a, M: ResidentModel> HostSteps<'a, M> {
    pub fn new(ctx: &'a GpuContext, model: &'a M) -> HostSteps<'a, M> {
        HostSteps {
            ctx,
            model,
            pool: Mutex::new((Pool::default(), BindCache::default())),
            error: StepError::default(),
        }
    }

    /// The first GPU error of any step, if one happened.
    pub fn take_error(&self) -> Option<Error> {
        self.error.take()
    }

    fn try_step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>) -> Result<()> {
        let m = self.model;
        let rows = states.batch;
        let v = m.vocab();
        let units = m.state_units();
        scores.clear();
        scores.resize(rows * v, 0.0);
        if rows == 0 {
            return Ok(());
        }
        if tokens.len() != rows || states.h.len() != units.len() || states.extra.len() != m.extra_widths().len() {
            return Err(Error::Internal(format!(
                "decoder step on the GPU: {} tokens, {} state layers, {} side buffers for {rows} rows of a model \
                 with {} layers and {} side buffers",
                tokens.len(),
                states.h.len(),
                states.extra.len(),
                units.len(),
                m.extra_widths().len()
            )));
        }
        let mut guard = self
            .pool
            .lock()
            .map_err(|_| Error::Internal("decoder step pool poisoned by an earlier panic".into()))?;
        let (pool, cache) = &mut *guard;
        let out = self.record_and_read(pool, cache, tokens, states, scores);
        match &out {
            Ok(()) => {
                if pool.recycle() {
                    cache.clear();
                }
            }
            Err(_) => {
                pool.clear();
                cache.clear();
            }
        }
        out
    }

    fn record_and_read(
        &self,
        pool: &mut Pool,
        cache: &mut BindCache,
        tokens: &[u32],
        states: &mut States,
        scores: &mut Vec<f32>,
    ) -> Result<()> {
        let (ctx, m) = (self.ctx, self.model);
        let rows = states.batch;
        let v = m.vocab();
        let units = m.state_units();
        let feed = pool.upload(ctx, "tokens", bytemuck::cast_slice(tokens))?;
        let mut cur = Vec::with_capacity(units.len());
        let mut next = Vec::with_capacity(units.len());
        for (l, &u) in units.iter().enumerate() {
            let hc: Vec<f32> = states.h[l].iter().chain(&states.c[l]).copied().collect();
            cur.push(pool.upload(ctx, "decoder state", bytemuck::cast_slice(&hc))?);
            next.push(pool.take(ctx, "next decoder state", 4 * (2 * rows * u) as u64)?);
        }
        let score_buf = pool.take(ctx, "scores", 4 * (rows * v) as u64)?;
        let logp = pool.take(ctx, "log-probabilities", 4 * (rows * v) as u64)?;
        let work = m.host_step_work(ctx, pool, states)?;
        let mut rec = Recorder::with_cache(ctx, "decoder step", cache);
        let step = DecoderStep {
            feed: &feed,
            cur: &cur,
            next: &next,
            gather: None,
            scores: &score_buf,
            logp: &logp,
            rows,
            // Each row carries its own side buffers (the host's beam reorders them).
            rows_per_problem: 1,
        };
        m.record_step(ctx, &mut rec, &work, step)?;
        // Every layer's new state and the scores come back in one read-back.
        let read = read_states_and(ctx, pool, rec, "decoder step", &next, &[(&score_buf, rows * v)], states)?;
        *scores = read.first().map(|b| buffers::words_f32(b)).unwrap_or_default();
        Ok(())
    }
}

impl<M: ResidentModel + Sync> StepDecoder for HostSteps<'_, M> {
    fn vocab_size(&self) -> usize {
        self.model.vocab()
    }

    fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, _scratch: &mut DecoderScratch) {
        if let Err(e) = self.try_step(tokens, states, scores) {
            self.error.fail(e, scores, states.batch * self.model.vocab());
        }
    }
}
