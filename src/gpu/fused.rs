//! The fused-step greedy path for large batches: the KTN encoder as the multi-dispatch path
//! records it (`decode::record_encoder`), then ONE dispatch per decoder step
//! (`fused_step.wgsl`: every decoder LSTM layer, the output layer, the log-softmax and one
//! position of MIOpen's greedy walk under the solver's WGSL rules library, for blocks of rows a
//! workgroup), then one read-back of the hypothesis records in `greedy_step.wgsl`'s layout. The
//! resident driver (`driver::greedy_resident`) records four dispatches a step for a 2-layer
//! model (two `lstm_step`, `dense_log_softmax`, `greedy_step`); this path records one.
//!
//! The step reads the decoder weights in `single_predict.wgsl`'s vec4 layout
//! (`single::pack_weights`, uploaded once per model: [`FusedModel`]) and sums in the
//! multi-dispatch kernels' order, so its scores are theirs and the CPU's, bit for bit.
//!
//! llvmpipe (lavapipe) ends every loop of an invocation once all of that invocation's loops
//! together have run 65,535 iterations, silently. Each step is one dispatch, so the count is per
//! step: [`loop_iterations`] bounds it (955 for gfx908 ConvAsm1x1U in blocks of 16 rows) and
//! [`fused_fits`] refuses shapes past `single::ITERATION_BUDGET`.

use std::sync::{Arc, Mutex};

use super::buffers::{self, Pool};
use super::context::GpuContext;
use super::decode;
use super::driver::{self, GreedyJob};
use super::kernels::{self, BindCache, FusedViews, Recorder, SingleShape, FUSED_WG};
use super::model::GpuKtn;
use super::single::{self, ITERATION_BUDGET, RULES_LIBRARIES};
use crate::error::{Error, Result};
use crate::predict::{DecodeMode, Prediction, Predictor};
use crate::problem::ConvProblem;
use crate::search::Hypothesis;
use crate::seq2seq::KtnModel;

/// Rows a workgroup by default: 16, 8 or 4 where the device's workgroup memory does not take
/// 16 (blocks are multiples of 4: a thread sums 4 rows at a time).
pub const DEFAULT_BLOCK: usize = 16;

/// Most rows a workgroup.
pub const MAX_BLOCK: usize = 16;

fn unsupported(what: String) -> Error {
    Error::Gpu(format!("fused-step path: {what}"))
}

/// A KTN model's weights in the fused step's layout (`single::pack_weights`, one buffer of
/// vec4s; the encoder's part is read by nobody: the encoder runs on the `GpuKtn`'s buffers).
pub(crate) struct FusedModel {
    pub weights: wgpu::Buffer,
    pub shape: SingleShape,
    /// Where the embedding starts (vec4s); the decoder layers and the output layer follow.
    pub emb_off: usize,
}

impl FusedModel {
    /// Packs and uploads `m`'s weights; an error names what the kernel does not take.
    pub fn upload(ctx: &GpuContext, m: &KtnModel) -> Result<FusedModel> {
        let (packed, shape) = single::pack_weights(m)?;
        let emb_off = embedding_offset(&shape);
        let (u4, e4, v) = (shape.units / 4, shape.embed_dim.div_ceil(4), shape.vocab);
        let decoder = v * e4 + lstm_size(e4, shape.units) + (shape.layers - 1) * lstm_size(u4, shape.units);
        let total = emb_off + decoder + u4 * v + v.div_ceil(4);
        if total != packed.len() {
            return Err(Error::Internal(format!(
                "fused-step path: {} packed vec4s, the layout counts {total}",
                packed.len()
            )));
        }
        let weights = buffers::upload(ctx, "fused-step weights", bytemuck::cast_slice(&packed))?;
        Ok(FusedModel {
            weights,
            shape,
            emb_off,
        })
    }
}

/// vec4s of one packed LSTM layer of `in4` input vec4s (`single::pack_weights`).
fn lstm_size(in4: usize, units: usize) -> usize {
    (4 * in4 + units) * units + units
}

/// The embedding's offset in `single::pack_weights`' layout: after the encoder dense layer and
/// the encoder LSTM layers.
fn embedding_offset(s: &SingleShape) -> usize {
    let dense = if s.enc_dense > 0 {
        s.features.div_ceil(4) * s.enc_dense + s.enc_dense.div_ceil(4)
    } else {
        0
    };
    dense + lstm_size(s.enc_input_width() / 4, s.units) + (s.layers - 1) * lstm_size(s.units / 4, s.units)
}

/// Workgroup memory of one workgroup of `block` rows (bytes): a layer's old h and two layers'
/// new h, the scores and the stop flags, four words a row, the running count.
pub(crate) fn workgroup_bytes(shape: &SingleShape, block: usize) -> u64 {
    let words = 3 * block * shape.units + 2 * block * shape.vocab + 4 * block + 1;
    4 * words as u64
}

/// An upper bound of the loop iterations one invocation of `fused_step.wgsl` runs in one step
/// (one dispatch) for blocks of `block` rows and configs of `max_len` (every loop counted as its
/// iterations plus one, its exit test), with prefix checks of `check_iterations` loop
/// iterations each and `solver_max_len` the library's `SOLVER_MAX_LEN`. For gfx908 ConvAsm1x1U
/// (2 LSTM layers of 128 units, E 8, V 38, 8 positions, loop-free checks, 128 threads): 955
/// for blocks of 16 (layer 0: 4 (unit, 4 rows) items x (2 + 32 vec4 k steps) = 149 + loading
/// the old h 17, layer 1: 4 x 67 = 269 + 17, the output layer 5 x 34, the log-softmax 78, the
/// candidates 5 x 28, the update 93), 599 for 8, 421 for 4 (llvmpipe's cap: 65,535).
pub(crate) fn loop_iterations(
    shape: &SingleShape,
    block: usize,
    max_len: usize,
    solver_max_len: usize,
    check_iterations: u64,
) -> u64 {
    let s = shape;
    let wg = FUSED_WG as usize;
    // `for (o = tid; o < n; o += WG) { inner }`.
    let spread = |n: usize, inner: u64| n.div_ceil(wg) as u64 * (inner + 1) + 1;
    let (u4, e4) = ((s.units / 4) as u64, s.embed_dim.div_ceil(4) as u64);
    // lstm_layer: loading the old h, then per (unit, 4 rows) the x·W and h·U k loops.
    let lstm = |in4: u64| spread(block * s.units, 0) + spread(block.div_ceil(4) * s.units, (in4 + 1) + (u4 + 1));
    let layers = lstm(e4) + (s.layers as u64 - 1) * lstm(u4) + (s.layers as u64 + 1);
    let v = s.vocab as u64;
    let setup = block as u64 + 1;
    let output = spread(block * s.vocab, u4 + 1) + 2 * (v + 1);
    // rule_of (8 words), prefix_of (zeroing, copying), the check itself.
    let rule = 9;
    let prefix = (solver_max_len as u64 + 1) + (max_len.min(solver_max_len) as u64 + 1);
    let candidates = spread(block * s.vocab, rule + prefix + check_iterations);
    let update = (v + 1) + 2 * (rule + prefix + check_iterations);
    setup + layers + output + candidates + update
}

/// Whether the fused step takes blocks of `block` rows of configs of `max_len` under `library`
/// on this device: an error says why not.
pub(crate) fn fused_fits(
    ctx: &GpuContext,
    shape: &SingleShape,
    library: &str,
    block: usize,
    max_len: usize,
) -> Result<()> {
    if block == 0 || !block.is_multiple_of(4) || block > MAX_BLOCK {
        return Err(unsupported(format!(
            "blocks of {block} rows (a multiple of 4 up to {MAX_BLOCK})"
        )));
    }
    let check = RULES_LIBRARIES
        .iter()
        .find(|(name, _)| *name == library)
        .map(|&(_, n)| n)
        .ok_or_else(|| unsupported(format!("rules library {library} (loops not counted)")))?;
    let solver_max = super::registry::rules_max_len(library).unwrap_or(0);
    if max_len == 0 || max_len > solver_max {
        return Err(unsupported(format!("configs of {max_len} values under {library}")));
    }
    let limits = &ctx.limits;
    if limits.max_compute_invocations_per_workgroup < FUSED_WG || limits.max_compute_workgroup_size_x < FUSED_WG {
        return Err(unsupported(format!(
            "the device takes fewer than {FUSED_WG} threads a workgroup"
        )));
    }
    let bytes = workgroup_bytes(shape, block);
    if bytes > u64::from(limits.max_compute_workgroup_storage_size) {
        return Err(unsupported(format!(
            "{bytes} bytes of workgroup memory for blocks of {block} (the device has {})",
            limits.max_compute_workgroup_storage_size
        )));
    }
    if limits.max_storage_buffers_per_shader_stage < 5 {
        return Err(unsupported("fewer than 5 storage buffers a shader".into()));
    }
    let iterations = loop_iterations(shape, block, max_len, solver_max, check);
    if iterations > ITERATION_BUDGET {
        return Err(unsupported(format!(
            "{iterations} loop iterations an invocation (budget {ITERATION_BUDGET})"
        )));
    }
    Ok(())
}

/// The largest block this device takes for `shape` (at most [`DEFAULT_BLOCK`]), or the error
/// of the smallest.
pub(crate) fn block_for(ctx: &GpuContext, shape: &SingleShape, library: &str, max_len: usize) -> Result<usize> {
    let mut block = DEFAULT_BLOCK;
    loop {
        match fused_fits(ctx, shape, library, block, max_len) {
            Ok(()) => return Ok(block),
            Err(e) if block <= 4 => return Err(e),
            Err(_) => block /= 2,
        }
    }
}

/// Dispatches one fused greedy decode records: the encoder's (the dense layer, one `lstm_step`
/// per time step and layer) and one a position.
pub(crate) fn dispatches(m: &GpuKtn, max_len: usize) -> usize {
    usize::from(m.enc_dense.is_some()) + m.steps * m.enc_lstms.len() + max_len
}

/// MIOpen's greedy walk for `job.rules.len()` problems: the encoder on `m` as the
/// multi-dispatch path records it, then one fused dispatch a position over blocks of `block`
/// rows, one read-back; per problem the hypothesis, or None where the walk fails, as
/// `driver::greedy_resident(..)?.finish(ctx)` gives them.
pub(crate) fn greedy_fused(
    ctx: &GpuContext,
    pool: &mut Pool,
    cache: &mut BindCache,
    m: &GpuKtn,
    fused: &FusedModel,
    job: &GreedyJob<'_>,
    block: usize,
) -> Result<Vec<Option<Hypothesis>>> {
    let rows = job.rules.len();
    if rows == 0 {
        return Ok(Vec::new());
    }
    let s = &fused.shape;
    fused_fits(ctx, s, job.rules_library, block, job.max_len)?;
    if m.half {
        return Err(unsupported("takes f32 weights only".into()));
    }
    if job.inputs.len() != rows * s.steps * s.features {
        return Err(unsupported(format!(
            "{} encoder inputs for {rows} problems of {}x{}",
            job.inputs.len(),
            s.steps,
            s.features
        )));
    }
    let layer_bytes = 4 * (2 * rows * s.units) as u64;
    let state_bytes = s.layers as u64 * layer_bytes;
    if state_bytes > ctx.limits.max_storage_buffer_binding_size {
        return Err(unsupported(format!(
            "{state_bytes} bytes of decoder state in one binding (split the batch)"
        )));
    }
    let words: Vec<i32> = job.rules.iter().flatten().chain(job.tables).copied().collect();
    let input = pool.upload(ctx, "encoder input", bytemuck::cast_slice(job.inputs))?;
    let rules = pool.upload(ctx, "rules", bytemuck::cast_slice(&words))?;
    let vocab = pool.upload(ctx, "vocabulary", bytemuck::cast_slice(job.vocab_words))?;
    let hyp_bytes = 4 * (rows * driver::hyp_words(job.max_len)) as u64;
    let hyp = pool.take(ctx, "hypotheses", hyp_bytes)?;
    let state = pool.take(ctx, "fused decoder state", state_bytes)?;
    let key = kernels::fused_step_key(s, job.rules_library, block, job.max_len, fused.emb_off)?;
    let mut rec = Recorder::with_cache(ctx, "fused greedy", cache);
    // Every walk starts running, empty, with score 0 (fed token 0).
    rec.encoder().clear_buffer(&hyp, 0, None);
    let finals = decode::record_encoder(ctx, pool, &mut rec, m, &input, rows)?;
    if finals.len() != s.layers {
        return Err(Error::Internal(format!(
            "fused-step path: {} encoder states for {} decoder layers",
            finals.len(),
            s.layers
        )));
    }
    // The encoder's final [h | c] of each layer, one after another in one buffer.
    for (l, f) in finals.iter().enumerate() {
        rec.encoder()
            .copy_buffer_to_buffer(f, 0, &state, l as u64 * layer_bytes, layer_bytes);
    }
    for _ in 0..job.max_len {
        let views = FusedViews {
            weights: (&fused.weights).into(),
            vocab_words: (&vocab).into(),
            rules: (&rules).into(),
            state: (&state).into(),
            hyp: (&hyp).into(),
        };
        kernels::fused_step(ctx, &mut rec, &key, views, rows, block)?;
    }
    let staging = pool.take_read_back(ctx, "hypotheses read-back", hyp_bytes)?;
    rec.copy_out(&hyp, 0, &staging, hyp_bytes);
    let read = buffers::submit_and_read(ctx, "fused greedy", rec.finish(), &[(&staging, hyp_bytes)])?;
    driver::greedy_records(&buffers::words_u32(&read[0]), job.max_len, job.threads)
}

/// Which resident greedy decode [`FusedPathPredictor::predict_batch_on`] runs.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GreedyPath {
    /// The fused step, `block` rows a workgroup.
    Fused { block: usize },
    /// The existing multi-dispatch resident walk (`driver::greedy_resident`).
    MultiDispatch,
}

/// A test and benchmark entry point (not an API): a KTN model's greedy predictions through the
/// fused-step path (or, for comparison, the multi-dispatch resident walk on the same
/// preparation), with the host's preparation and answers as `GpuPredictor` does them. No
/// chunking: a batch must fit the device in one piece.
#[doc(hidden)]
pub struct FusedPathPredictor {
    ctx: Arc<GpuContext>,
    ktn: GpuKtn,
    fused: FusedModel,
    host: Predictor,
    pool: Mutex<(Pool, BindCache)>,
}

impl FusedPathPredictor {
    /// Loads the KTN model of `solver` on `arch` from `model_dirs` onto `ctx` (f32 weights).
    pub fn load(
        arch: &str,
        solver: &str,
        model_dirs: &[std::path::PathBuf],
        ctx: Arc<GpuContext>,
    ) -> Result<FusedPathPredictor> {
        let (solver, target, model) = super::harness::load_ktn("fused-step path", arch, solver, model_dirs)?;
        let fused = FusedModel::upload(&ctx, &model)?;
        let ktn = GpuKtn::upload(&ctx, &model, false)?;
        Ok(FusedPathPredictor {
            ctx,
            ktn,
            fused,
            host: Predictor::new(target, solver, model),
            pool: Mutex::new((Pool::default(), BindCache::default())),
        })
    }

    fn library(&self) -> Result<&'static str> {
        super::harness::rules_library("fused-step path", &self.host)
    }

    fn solver_max_len(&self) -> Result<usize> {
        let library = self.library()?;
        super::registry::rules_max_len(library).ok_or_else(|| unsupported(format!("{library} has no SOLVER_MAX_LEN")))
    }

    /// The loop iterations one invocation runs in one step for blocks of `block` rows of this
    /// model's solver (configs of the library's longest length).
    pub fn loop_iterations(&self, block: usize) -> Result<u64> {
        let library = self.library()?;
        let check = RULES_LIBRARIES
            .iter()
            .find(|(name, _)| *name == library)
            .map_or(0, |&(_, n)| n);
        let solver_max = self.solver_max_len()?;
        Ok(loop_iterations(&self.fused.shape, block, solver_max, solver_max, check))
    }

    /// Whether this device takes blocks of `block` rows (an error says why not).
    pub fn fits(&self, block: usize) -> Result<()> {
        fused_fits(
            &self.ctx,
            &self.fused.shape,
            self.library()?,
            block,
            self.solver_max_len()?,
        )
    }

    /// The largest block (at most [`DEFAULT_BLOCK`]) this device takes.
    pub fn default_block(&self) -> Result<usize> {
        block_for(&self.ctx, &self.fused.shape, self.library()?, self.solver_max_len()?)
    }

    /// Dispatches one decode of configs of `max_len` records on the fused path and on the
    /// multi-dispatch one.
    pub fn dispatch_counts(&self, max_len: usize) -> (usize, usize) {
        let fused = dispatches(&self.ktn, max_len);
        // Per position: one lstm_step per layer, dense_log_softmax (or dense + log_softmax from
        // the tiled threshold on), greedy_step.
        let multi = fused - max_len + max_len * (self.ktn.dec_lstms.len() + 2);
        (fused, multi)
    }

    /// Predicts `problems` with MIOpen's greedy walk through the fused path in blocks of
    /// `block` rows, one result per problem as `GpuPredictor::predict_batch` gives them.
    pub fn predict_batch(
        &self,
        problems: &[ConvProblem],
        mode: DecodeMode,
        block: usize,
    ) -> Result<Vec<Result<Vec<Prediction>>>> {
        self.predict_batch_on(problems, mode, GreedyPath::Fused { block })
    }

    /// Predicts `problems` through `path` (the fused one or the multi-dispatch one).
    pub fn predict_batch_on(
        &self,
        problems: &[ConvProblem],
        mode: DecodeMode,
        path: GreedyPath,
    ) -> Result<Vec<Result<Vec<Prediction>>>> {
        super::harness::greedy_batch(
            "fused-step path",
            &self.host,
            &self.pool,
            problems,
            mode,
            |pool, cache, job| match path {
                GreedyPath::Fused { block } => greedy_fused(&self.ctx, pool, cache, &self.ktn, &self.fused, job, block),
                GreedyPath::MultiDispatch => driver::greedy_resident(&self.ctx, pool, cache, &self.ktn, job)
                    .and_then(|p| p.finish(&self.ctx))
                    .map(|v| v.into_iter().map(|h| h.into_iter().next()).collect()),
            },
        )
    }
}
