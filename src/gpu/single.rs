//! The single-dispatch latency path: a whole prediction of a few problems (the KTN encoder,
//! every decoder step, the output layer, the log-softmax and MIOpen's greedy walk under the
//! solver's WGSL rules library) in one dispatch, one workgroup per problem (`single_predict.wgsl`),
//! instead of the ~40 dispatches the resident driver records (`driver::greedy_resident`).
//!
//! The kernel reads its weights from one buffer in its own layout ([`SingleModel`], uploaded
//! once per model from the host's [`KtnModel`]: the four gates of a unit side by side, so one
//! vec4 load feeds four gate sums). It sums in the multi-dispatch kernels' order, so its
//! answers are theirs and the CPU's, bit for bit.
//!
//! llvmpipe (lavapipe) ends every loop of an invocation once all of that invocation's loops
//! together have run 65,535 iterations, silently. A one-workgroup kernel runs the whole
//! prediction in each invocation, so [`loop_iterations`] counts them (an upper bound) and
//! [`single_fits`] refuses shapes past [`ITERATION_BUDGET`]; the rules libraries taken are
//! those whose checks are loop-free ([`RULES_LIBRARIES`]).

use std::sync::{Arc, Mutex};

use super::buffers::{self, Pool};
use super::context::GpuContext;
use super::driver::{self, GreedyJob};
use super::kernels::{self, BindCache, Recorder, SingleShape, SingleViews, SINGLE_WG, SINGLE_ZMAX};
use crate::error::{Error, Result};
use crate::format::frugally::{DenseWeights, LstmWeights};
use crate::predict::{DecodeMode, Prediction, Predictor};
use crate::problem::ConvProblem;
use crate::search::Hypothesis;
use crate::seq2seq::KtnModel;

/// Most loop iterations [`single_fits`] allows one invocation: under a quarter of llvmpipe's 65,535.
pub const ITERATION_BUDGET: u64 = 16_000;

/// Most problems one dispatch takes (the path is for latency; larger batches belong to the
/// resident driver, which spreads rows over workgroups).
pub const MAX_SINGLE_ROWS: usize = 8;

/// The rules libraries the kernel composes with, and the loop iterations one of their prefix
/// checks (`solver_prefix_valid`, `solver_config_len`) may run: only loop-free ones so far.
pub const RULES_LIBRARIES: &[(&str, u64)] = &[("conv_asm_1x1u_rules", 0)];

/// A KTN model's weights in `single_predict.wgsl`'s layout (one buffer of vec4s).
pub(crate) struct SingleModel {
    pub weights: wgpu::Buffer,
    pub shape: SingleShape,
}

impl SingleModel {
    /// Packs and uploads `m`'s weights; an error names what the kernel does not take (the
    /// caller then keeps the multi-dispatch path).
    pub fn upload(ctx: &GpuContext, m: &KtnModel) -> Result<SingleModel> {
        let (packed, shape) = pack_weights(m)?;
        let weights = buffers::upload(ctx, "single-dispatch weights", bytemuck::cast_slice(&packed))?;
        Ok(SingleModel { weights, shape })
    }
}

fn unsupported(what: String) -> Error {
    Error::Gpu(format!("single-dispatch path: {what}"))
}

/// `m`'s weights in the kernel's layout (see `shaders/single_predict.wgsl`) and its shape.
pub(crate) fn pack_weights(m: &KtnModel) -> Result<(Vec<[f32; 4]>, SingleShape)> {
    let (e, d) = (&m.encoder, &m.decoder);
    let layers = e.lstms.len();
    let units = e.lstms.first().map_or(0, |l| l.units);
    if layers == 0 || d.lstms.len() != layers {
        return Err(unsupported(format!(
            "{layers} encoder and {} decoder LSTM layers",
            d.lstms.len()
        )));
    }
    if units == 0 || !units.is_multiple_of(4) || e.lstms.iter().chain(&d.lstms).any(|l| l.units != units) {
        return Err(unsupported(
            "LSTM layers of different units, or units not a multiple of 4".into(),
        ));
    }
    let shape = SingleShape {
        steps: e.steps,
        features: e.features,
        enc_dense: e.dense.as_ref().map_or(0, |dn| dn.units),
        layers,
        units,
        embed_dim: d.embedding.output_dim,
        vocab: d.embedding.input_dim,
    };
    if d.output.input_dim != units || d.output.units != shape.vocab {
        return Err(unsupported(
            "output layer does not map the last state to the vocabulary".into(),
        ));
    }
    let mut out: Vec<[f32; 4]> = Vec::new();
    if let Some(dn) = &e.dense {
        if dn.input_dim != e.features {
            return Err(unsupported("encoder dense layer does not read the features".into()));
        }
        pack_dense(&mut out, dn);
    }
    let enc_in = if shape.enc_dense > 0 {
        shape.enc_dense
    } else {
        shape.features
    };
    for (i, l) in e.lstms.iter().enumerate() {
        let want = if i == 0 { enc_in } else { units };
        if l.input_dim != want {
            return Err(unsupported(format!(
                "encoder LSTM {i} reads {} values, not {want}",
                l.input_dim
            )));
        }
        pack_lstm(&mut out, l);
    }
    let (v, ed) = (shape.vocab, shape.embed_dim);
    let e4 = ed.div_ceil(4);
    for t in 0..v {
        for k4 in 0..e4 {
            out.push(std::array::from_fn(|i| {
                let k = 4 * k4 + i;
                if k < ed {
                    d.embedding.table[t * ed + k]
                } else {
                    0.0
                }
            }));
        }
    }
    for (i, l) in d.lstms.iter().enumerate() {
        let want = if i == 0 { ed } else { units };
        if l.input_dim != want {
            return Err(unsupported(format!(
                "decoder LSTM {i} reads {} values, not {want}",
                l.input_dim
            )));
        }
        pack_lstm(&mut out, l);
    }
    pack_dense(&mut out, &d.output);
    Ok((out, shape))
}

/// `[K4, N]` vec4s of 4 consecutive k of column n (zero padded), then the bias (0s without).
fn pack_dense(out: &mut Vec<[f32; 4]>, dn: &DenseWeights) {
    let (kd, n) = (dn.input_dim, dn.units);
    for k4 in 0..kd.div_ceil(4) {
        for j in 0..n {
            out.push(std::array::from_fn(|i| {
                let k = 4 * k4 + i;
                if k < kd {
                    dn.kernel[k * n + j]
                } else {
                    0.0
                }
            }));
        }
    }
    let bias = |j: usize| dn.bias.as_ref().map_or(0.0, |b| b[j]);
    for j4 in 0..n.div_ceil(4) {
        out.push(std::array::from_fn(
            |i| if 4 * j4 + i < n { bias(4 * j4 + i) } else { 0.0 },
        ));
    }
}

/// `[4 IN4 + U, U]` vec4s of the gates (i, f, g, o) of (k, unit) in `[W; U]` (W's rows zero
/// padded to a multiple of 4), then `[U]` bias vec4s.
fn pack_lstm(out: &mut Vec<[f32; 4]>, l: &LstmWeights) {
    let (kd, u) = (l.input_dim, l.units);
    let g = 4 * u;
    for k in 0..kd.div_ceil(4) * 4 {
        for j in 0..u {
            out.push(std::array::from_fn(|gate| {
                if k < kd {
                    l.kernel[k * g + gate * u + j]
                } else {
                    0.0
                }
            }));
        }
    }
    for k in 0..u {
        for j in 0..u {
            out.push(std::array::from_fn(|gate| l.recurrent[k * g + gate * u + j]));
        }
    }
    for j in 0..u {
        out.push(std::array::from_fn(|gate| l.bias[gate * u + j]));
    }
}

/// Workgroup memory of one dispatch of `rows` problems (bytes).
pub(crate) fn workgroup_bytes(shape: &SingleShape, rows: usize, max_len: usize) -> u64 {
    let s = shape;
    let words = 2 * s.layers * rows * s.units // h, c
        + rows * s.enc_input_width()
        + 4 * rows * s.vocab // scores, log-softmax, keys, stops
        + 3 * rows * max_len // the prefix's tokens, value ids, values
        + 4 * rows // len, status, score, feed
        + 1;
    4 * words as u64
}

/// An upper bound of the loop iterations one invocation of `single_predict.wgsl` runs for
/// `rows` problems and configs of `max_len` (every loop counted as its iterations plus one,
/// its exit test), with prefix checks of `check_iterations` loop iterations each and
/// `solver_max_len` the library's `SOLVER_MAX_LEN`. For gfx908 ConvAsm1x1U (T 8, F 8, dense 32,
/// 2 LSTM layers of 128 units, E 8, V 38, 8 positions, loop-free checks): 4,114 for one problem
/// (encoder 8 x ~110, decoder 8 x ~390: 34 + 64 vec4 k steps of the two layers, 32 of the output
/// layer, 117 of the log-softmax, ~40 of the walk, the candidates' rule and prefix copies), 5,885
/// for 4, 9,905 for 8 (llvmpipe's cap: 65,535).
pub(crate) fn loop_iterations(
    shape: &SingleShape,
    rows: usize,
    max_len: usize,
    solver_max_len: usize,
    check_iterations: u64,
) -> u64 {
    let s = shape;
    let wg = SINGLE_WG as usize;
    // A thread's share of n items spread over the workgroup.
    let share = |n: usize| n.div_ceil(wg) as u64;
    // `for (o = tid; o < n; o += WG) { inner }`.
    let spread = |n: usize, inner: u64| share(n) * (inner + 1) + 1;
    let (u4, e4) = ((s.units / 4) as u64, s.embed_dim.div_ceil(4) as u64);
    let f4 = s.features.div_ceil(4) as u64;
    let xw = s.enc_input_width();
    let in0 = (xw / 4) as u64;
    let ru = rows * s.units;
    // lstm_layer: the gate sums (two k loops), then the cells.
    let lstm = |in4: u64| spread(ru, (in4 + 1) + (u4 + 1)) + spread(ru, 0);
    let enc_input = if s.enc_dense > 0 {
        spread(rows * s.enc_dense, f4 + 1)
    } else {
        spread(rows * xw, 0)
    };
    let upper = (s.layers as u64 - 1) * (lstm(u4) + 1) + 1;
    let encoder = s.steps as u64 * (1 + enc_input + lstm(in0) + upper) + 1;
    let v = s.vocab as u64;
    let output = spread(rows * s.vocab, u4 + 1) + 3 * (v + 1);
    // rule_of (8 words), prefix_of (zeroing, copying), the check itself.
    let rule = 9;
    let prefix = (solver_max_len as u64 + 1) + (max_len.min(solver_max_len) as u64 + 1);
    let candidates = spread(rows * s.vocab, rule + prefix + check_iterations);
    let update = (v + 1) + 2 * (rule + prefix + check_iterations) + (rows as u64 + 1);
    let decoder = max_len as u64 * (1 + lstm(e4) + upper + output + candidates + update) + 1;
    let setup = spread(s.layers * ru, 0) + spread(rows * xw, 0) + spread(rows * max_len, 0);
    let records = spread(rows * (2 * max_len + 4), 0);
    setup + encoder + decoder + records
}

/// Whether one dispatch takes `rows` problems of configs of `max_len` under `library` on this
/// device: an error says why not (too many rows, too much workgroup memory, a library whose
/// loops are not counted, or more loop iterations than [`ITERATION_BUDGET`]).
pub(crate) fn single_fits(
    ctx: &GpuContext,
    shape: &SingleShape,
    library: &str,
    rows: usize,
    max_len: usize,
) -> Result<()> {
    if rows == 0 || rows > MAX_SINGLE_ROWS {
        return Err(unsupported(format!("{rows} problems (1 to {MAX_SINGLE_ROWS})")));
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
    if limits.max_compute_invocations_per_workgroup < SINGLE_WG || limits.max_compute_workgroup_size_x < SINGLE_WG {
        return Err(unsupported(format!(
            "the device takes fewer than {SINGLE_WG} threads a workgroup"
        )));
    }
    if (rows * shape.units).div_ceil(SINGLE_WG as usize) > SINGLE_ZMAX {
        return Err(unsupported(format!(
            "{rows} rows of {} units (a thread keeps {SINGLE_ZMAX} gate sums)",
            shape.units
        )));
    }
    let bytes = workgroup_bytes(shape, rows, max_len);
    if bytes > u64::from(limits.max_compute_workgroup_storage_size) {
        return Err(unsupported(format!(
            "{bytes} bytes of workgroup memory (the device has {})",
            limits.max_compute_workgroup_storage_size
        )));
    }
    if limits.max_storage_buffers_per_shader_stage < 5 {
        return Err(unsupported("fewer than 5 storage buffers a shader".into()));
    }
    let iterations = loop_iterations(shape, rows, max_len, solver_max, check);
    if iterations > ITERATION_BUDGET {
        return Err(unsupported(format!(
            "{iterations} loop iterations an invocation (budget {ITERATION_BUDGET})"
        )));
    }
    Ok(())
}

/// MIOpen's greedy walk for `job.rules.len()` problems (at most [`MAX_SINGLE_ROWS`]) in one
/// dispatch: per problem, the hypothesis or None where the walk fails, as
/// `driver::greedy_resident` returns them.
pub(crate) fn greedy_single(
    ctx: &GpuContext,
    pool: &mut Pool,
    cache: &mut BindCache,
    m: &SingleModel,
    job: &GreedyJob<'_>,
) -> Result<Vec<Option<Hypothesis>>> {
    let rows = job.rules.len();
    if rows == 0 {
        return Ok(Vec::new());
    }
    let s = &m.shape;
    if rows > MAX_SINGLE_ROWS {
        return Err(unsupported(format!("{rows} problems (1 to {MAX_SINGLE_ROWS})")));
    }
    // One problem a workgroup: the problems spread over the device's cores.
    single_fits(ctx, s, job.rules_library, 1, job.max_len)?;
    if job.inputs.len() != rows * s.steps * s.features {
        return Err(Error::Gpu(format!(
            "single-dispatch path: {} encoder inputs for {rows} problems of {}x{}",
            job.inputs.len(),
            s.steps,
            s.features
        )));
    }
    let words: Vec<i32> = job.rules.iter().flatten().chain(job.tables).copied().collect();
    let input = pool.upload(ctx, "encoder input", bytemuck::cast_slice(job.inputs))?;
    let rules = pool.upload(ctx, "rules", bytemuck::cast_slice(&words))?;
    let vocab = pool.upload(ctx, "vocabulary", bytemuck::cast_slice(job.vocab_words))?;
    let bytes = 4 * (rows * driver::hyp_words(job.max_len)) as u64;
    let hyp = pool.take(ctx, "hypotheses", bytes)?;
    let key = kernels::single_predict_key(s, job.rules_library, 1, job.max_len)?;
    let mut rec = Recorder::with_cache(ctx, "single-dispatch greedy", cache);
    let views = SingleViews {
        input: (&input).into(),
        weights: (&m.weights).into(),
        vocab_words: (&vocab).into(),
        rules: (&rules).into(),
        hyp: (&hyp).into(),
    };
    kernels::single_predict(ctx, &mut rec, &key, views, rows)?;
    let staging = pool.take_read_back(ctx, "hypotheses read-back", bytes)?;
    rec.copy_out(&hyp, 0, &staging, bytes);
    let read = buffers::submit_and_read(ctx, "single-dispatch greedy", rec.finish(), &[(&staging, bytes)])?;
    driver::greedy_records(&buffers::words_u32(&read[0]), job.max_len, job.threads)
}

/// A test and benchmark entry point (not an API): a KTN model's predictions through the
/// single-dispatch path, with the host's preparation and answers as `GpuPredictor` does them.
/// `GpuPredictor` takes the path for small batches once wired in.
#[doc(hidden)]
pub struct SinglePathPredictor {
    ctx: Arc<GpuContext>,
    model: SingleModel,
    host: Predictor,
    pool: Mutex<(Pool, BindCache)>,
}

impl SinglePathPredictor {
    /// Loads the KTN model of `solver` on `arch` from `model_dirs` onto `ctx`.
    pub fn load(
        arch: &str,
        solver: &str,
        model_dirs: &[std::path::PathBuf],
        ctx: Arc<GpuContext>,
    ) -> Result<SinglePathPredictor> {
        let (solver, target, model) = super::harness::load_ktn("single-dispatch path", arch, solver, model_dirs)?;
        let single = SingleModel::upload(&ctx, &model)?;
        Ok(SinglePathPredictor {
            ctx,
            model: single,
            host: Predictor::new(target, solver, model),
            pool: Mutex::new((Pool::default(), BindCache::default())),
        })
    }

    /// The loop iterations one invocation runs for `rows` problems of this model's solver.
    pub fn loop_iterations(&self, rows: usize) -> Result<u64> {
        let library = self.library()?;
        let check = RULES_LIBRARIES
            .iter()
            .find(|(name, _)| *name == library)
            .map_or(0, |&(_, n)| n);
        let solver_max = super::registry::rules_max_len(library).unwrap_or(0);
        Ok(loop_iterations(&self.model.shape, rows, solver_max, solver_max, check))
    }

    fn library(&self) -> Result<&'static str> {
        super::harness::rules_library("single-dispatch path", &self.host)
    }

    /// Predicts `problems` (at most [`MAX_SINGLE_ROWS`] decoded) with MIOpen's greedy walk, one
    /// result per problem as `GpuPredictor::predict_batch` gives them; an error when the path
    /// does not take the batch or the mode.
    pub fn predict_batch(&self, problems: &[ConvProblem], mode: DecodeMode) -> Result<Vec<Result<Vec<Prediction>>>> {
        super::harness::greedy_batch(
            "single-dispatch path",
            &self.host,
            &self.pool,
            problems,
            mode,
            |pool, cache, job| greedy_single(&self.ctx, pool, cache, &self.model, job),
        )
    }
}
