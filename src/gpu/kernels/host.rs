//! Slice-in, slice-out versions of the kernels for tests and benchmarks. Each output comes back
//! with `sentinels_intact`: false when the kernel wrote outside its output.

use super::*;
use crate::error::{Error, Result};
use crate::gpu::buffers::{self, View};
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// A kernel's output read back from a sentinel-guarded buffer.
#[derive(Debug, Clone)]
pub struct Output {
    pub values: Vec<f32>,
    pub sentinels_intact: bool,
}

/// Reads a guarded output back (after its kernel finished).
fn read_output(ctx: &GpuContext, what: &str, out: &buffers::Guarded) -> Result<Output> {
    let (values, sentinels_intact) = out.read(ctx, what)?;
    Ok(Output {
        values,
        sentinels_intact,
    })
}

/// Submits the recorded kernel, waits, and reads the guarded output back.
fn submit_and_read(ctx: &GpuContext, what: &str, rec: Recorder, out: &buffers::Guarded) -> Result<Output> {
    ctx.submit_and_wait(what, rec.finish())?;
    read_output(ctx, what, out)
}

fn nan_filled(len: usize) -> Vec<f32> {
    vec![f32::NAN; len]
}

/// A dense layer's inputs on the host: `a` `[rows, k]`, `b` `[k, n]` and an optional
/// `bias` `[n]` (the arguments of the twin `cpu::dense`).
#[derive(Debug, Clone, Copy)]
pub struct DenseInputs<'a> {
    pub a: &'a [f32],
    pub b: &'a [f32],
    pub bias: Option<&'a [f32]>,
    pub rows: usize,
    pub k: usize,
    pub n: usize,
}

/// `[rows, n] = [init +] a · b [+ bias]`: with `init`, accumulates into it (twin
/// `cpu::matmul_acc`); otherwise twin `cpu::dense`.
pub fn dense(ctx: &GpuContext, d: &DenseInputs, init: Option<&[f32]>) -> Result<Output> {
    dense_with(ctx, d, init, false)
}

/// [`dense`] with `b` and `bias` stored as f16 on the device (`half`).
pub fn dense_with(ctx: &GpuContext, d: &DenseInputs, init: Option<&[f32]>, half: bool) -> Result<Output> {
    dense_on(ctx, d, init, half, TilePath::Auto)
}

/// [`dense_with`] on a chosen path of the kernel (tests run both on every shape).
pub fn dense_on(ctx: &GpuContext, d: &DenseInputs, init: Option<&[f32]>, half: bool, path: TilePath) -> Result<Output> {
    let DenseInputs { a, b, bias, rows, k, n } = *d;
    let a_buf = buffers::upload_f32(ctx, "a", a)?;
    let b_buf = buffers::upload_weights(ctx, "b", b, half)?;
    let bias_buf = bias
        .map(|v| buffers::upload_weights(ctx, "bias", v, half))
        .transpose()?;
    let out = buffers::Guarded::new(ctx, "out", init.unwrap_or(&nan_filled(rows * n)))?;
    let layer = DenseLayer {
        kernel: (&b_buf).into(),
        bias: bias_buf.as_ref().map(View::from),
        in_dim: k,
        units: n,
        half,
    };
    let a = RowsOf::packed((&a_buf).into(), k);
    let out_mode = if init.is_some() {
        DenseOut::Add(out.view())
    } else {
        DenseOut::Write(out.view())
    };
    let mut rec = Recorder::new(ctx, "dense");
    super::dense_on(ctx, &mut rec, layer, a, out_mode, rows, path)?;
    submit_and_read(ctx, "dense", rec, &out)
}

/// `(scores, logp)` of `[rows, n] = a · b [+ bias]` from dense_log_softmax.wgsl.
pub fn dense_log_softmax(ctx: &GpuContext, d: &DenseInputs, half: bool) -> Result<(Output, Output)> {
    let DenseInputs { a, b, bias, rows, k, n } = *d;
    let a_buf = buffers::upload_f32(ctx, "a", a)?;
    let b_buf = buffers::upload_weights(ctx, "b", b, half)?;
    let bias_buf = bias
        .map(|v| buffers::upload_weights(ctx, "bias", v, half))
        .transpose()?;
    let scores = buffers::Guarded::new(ctx, "scores", &nan_filled(rows * n))?;
    let logp = buffers::Guarded::new(ctx, "logp", &nan_filled(rows * n))?;
    let layer = DenseLayer {
        kernel: (&b_buf).into(),
        bias: bias_buf.as_ref().map(View::from),
        in_dim: k,
        units: n,
        half,
    };
    let a = RowsOf::packed((&a_buf).into(), k);
    let mut rec = Recorder::new(ctx, "dense_log_softmax");
    super::dense_log_softmax(ctx, &mut rec, layer, a, scores.view(), logp.view(), rows)?;
    ctx.submit_and_wait("dense_log_softmax", rec.finish())?;
    let read = |g| read_output(ctx, "dense_log_softmax", g);
    Ok((read(&scores)?, read(&logp)?))
}

/// `out[i, :] = table[ids[i], :]` with `table` of `vocab` rows of `dim`.
pub fn embedding_gather(ctx: &GpuContext, table: &[f32], ids: &[u32], vocab: usize, dim: usize) -> Result<Output> {
    let t = buffers::upload_f32(ctx, "table", table)?;
    let i = buffers::upload_u32(ctx, "ids", ids)?;
    let out = buffers::Guarded::new(ctx, "out", &nan_filled(ids.len() * dim))?;
    let mut rec = Recorder::new(ctx, "embedding_gather");
    let embedding = Embedding {
        table: (&t).into(),
        vocab,
        dim,
    };
    super::embedding_gather(ctx, &mut rec, embedding, (&i).into(), out.view(), ids.len())?;
    submit_and_read(ctx, "embedding_gather", rec, &out)
}

/// Everything one LSTM step reads, on the host: input `x` `[rows, in_dim]`, the layer's
/// `kernel` `[in_dim, 4 units]`, `recurrent` `[units, 4 units]` and `bias` `[4 units]`, and
/// the state it starts from, `h` and `c` (`[rows, units]` each).
#[derive(Debug, Clone, Copy)]
pub struct LstmStepInputs<'a> {
    pub x: &'a [f32],
    pub kernel: &'a [f32],
    pub recurrent: &'a [f32],
    pub bias: &'a [f32],
    pub h: &'a [f32],
    pub c: &'a [f32],
    pub rows: usize,
    pub in_dim: usize,
    pub units: usize,
}

/// One LSTM step: returns the new state as `[h (rows*units) | c (rows*units)]`.
pub fn lstm_step(ctx: &GpuContext, step: &LstmStepInputs) -> Result<Output> {
    lstm_step_with(ctx, step, false)
}

/// [`lstm_step`] with the weights stored as f16 on the device (`half`).
pub fn lstm_step_with(ctx: &GpuContext, step: &LstmStepInputs, half: bool) -> Result<Output> {
    lstm_step_on(ctx, step, half, TilePath::Auto)
}

/// [`lstm_step_with`] on a chosen path of the kernel (tests run both on every shape).
pub fn lstm_step_on(ctx: &GpuContext, step: &LstmStepInputs, half: bool, path: TilePath) -> Result<Output> {
    lstm_step_full(ctx, step, None, None, half, path)
}

/// [`lstm_step_on`] where row r continues row `parents[r]` of the state `step.h`, `step.c`
/// (`[prev_rows, units]` each; the beam's reorder read in place); `step.rows` is
/// `parents.len()`.
pub fn lstm_step_gathered_on(
    ctx: &GpuContext,
    step: &LstmStepInputs,
    parents: &[u32],
    path: TilePath,
) -> Result<Output> {
    if parents.len() != step.rows {
        return Err(Error::Gpu(format!(
            "lstm_step: {} parents for {} rows",
            parents.len(),
            step.rows
        )));
    }
    lstm_step_full(ctx, step, None, Some(parents), false, path)
}

/// [`lstm_step_on`] with, when `ids` is given, `step.x` an embedding table (`[vocab, in_dim]`)
/// and input row r its row `ids[r]` (the decoder's first layer).
pub fn lstm_step_embedded_on(
    ctx: &GpuContext,
    step: &LstmStepInputs,
    ids: Option<&[u32]>,
    half: bool,
    path: TilePath,
) -> Result<Output> {
    lstm_step_full(ctx, step, ids, None, half, path)
}

fn lstm_step_full(
    ctx: &GpuContext,
    step: &LstmStepInputs,
    ids: Option<&[u32]>,
    parents: Option<&[u32]>,
    half: bool,
    path: TilePath,
) -> Result<Output> {
    let LstmStepInputs {
        x,
        kernel,
        recurrent,
        bias,
        h,
        c,
        rows,
        in_dim,
        units,
    } = *step;
    let ids_buf = ids.map(|i| buffers::upload_u32(ctx, "ids", i)).transpose()?;
    let parents_buf = parents.map(|p| buffers::upload_u32(ctx, "parents", p)).transpose()?;
    let w: Vec<f32> = kernel.iter().chain(recurrent).chain(bias).copied().collect();
    let prev: Vec<f32> = h.iter().chain(c).copied().collect();
    let x_buf = buffers::upload_f32(ctx, "x", x)?;
    let w_buf = buffers::upload_weights(ctx, "weights", &w, half)?;
    let prev_buf = buffers::upload_f32(ctx, "state", &prev)?;
    let next = buffers::Guarded::new(ctx, "next", &nan_filled(2 * rows * units))?;
    let layer = LstmLayer {
        weights: (&w_buf).into(),
        in_dim,
        units,
        half,
    };
    let input = match &ids_buf {
        Some(ids) => LstmInput::Embedded {
            ids: ids.into(),
            table: (&x_buf).into(),
            vocab: x.len() / in_dim.max(1),
        },
        None => LstmInput::Rows {
            x: (&x_buf).into(),
            rows: Rows::packed(in_dim),
        },
    };
    let state = LstmState {
        gather: parents_buf.as_ref().map(|p| Gather {
            parents: p.into(),
            prev_rows: h.len() / units.max(1),
        }),
        ..LstmState::new((&prev_buf).into(), next.view())
    };
    let mut rec = Recorder::new(ctx, "lstm_step");
    super::lstm_step_on(ctx, &mut rec, layer, input, state, rows, path)?;
    submit_and_read(ctx, "lstm_step", rec, &next)
}

/// Device-resident inputs for timing `lstm_step` alone (benchmarks): [`LstmSteps::run`]
/// records `n` steps (the state ping-pongs between two buffers) in one submission and
/// waits, so upload and read-back stay out of the measurement.
pub struct LstmSteps {
    x: wgpu::Buffer,
    weights: wgpu::Buffer,
    states: [wgpu::Buffer; 2],
    rows: usize,
    in_dim: usize,
    units: usize,
    path: TilePath,
}

impl LstmSteps {
    /// The step's inputs on the device, to run on `path`.
    pub fn new(ctx: &GpuContext, step: &LstmStepInputs, path: TilePath) -> Result<LstmSteps> {
        let weights: Vec<f32> = step
            .kernel
            .iter()
            .chain(step.recurrent)
            .chain(step.bias)
            .copied()
            .collect();
        let state: Vec<f32> = step.h.iter().chain(step.c).copied().collect();
        Ok(LstmSteps {
            x: buffers::upload_f32(ctx, "x", step.x)?,
            weights: buffers::upload_f32(ctx, "weights", &weights)?,
            states: [
                buffers::upload_f32(ctx, "state", &state)?,
                buffers::upload_f32(ctx, "state", &state)?,
            ],
            rows: step.rows,
            in_dim: step.in_dim,
            units: step.units,
            path,
        })
    }

    /// `n` steps, one submission, waits for the GPU.
    pub fn run(&self, ctx: &GpuContext, n: usize) -> Result<()> {
        let mut rec = Recorder::new(ctx, "lstm_step x n");
        for i in 0..n {
            let layer = LstmLayer {
                weights: (&self.weights).into(),
                in_dim: self.in_dim,
                units: self.units,
                half: false,
            };
            let input = LstmInput::Rows {
                x: (&self.x).into(),
                rows: Rows::packed(self.in_dim),
            };
            let state = LstmState::new((&self.states[i % 2]).into(), (&self.states[(i + 1) % 2]).into());
            super::lstm_step_on(ctx, &mut rec, layer, input, state, self.rows, self.path)?;
        }
        ctx.submit_and_wait("lstm_step x n", rec.finish())
    }
}

/// Row-wise log-softmax of `[rows, width]`.
pub fn log_softmax(ctx: &GpuContext, x: &[f32], rows: usize, width: usize) -> Result<Output> {
    let x_buf = buffers::upload_f32(ctx, "x", x)?;
    let out = buffers::Guarded::new(ctx, "out", &nan_filled(rows * width))?;
    let mut rec = Recorder::new(ctx, "log_softmax");
    super::log_softmax(ctx, &mut rec, (&x_buf).into(), out.view(), rows, width)?;
    submit_and_read(ctx, "log_softmax", rec, &out)
}

/// The attention's inputs on the host: `h` `[rows, units]`, encoder outputs `enc`
/// `[rows, steps, units]`, the combine layer's `kernel` `[2 units, units]` and `bias`
/// `[units]`.
#[derive(Debug, Clone, Copy)]
pub struct AttentionInputs<'a> {
    pub h: &'a [f32],
    pub enc: &'a [f32],
    pub kernel: &'a [f32],
    pub bias: &'a [f32],
    pub rows: usize,
    pub steps: usize,
    pub units: usize,
}

/// Attention + combine (attention.wgsl), the combine weights stored as f16 with `half`.
/// Returns the attention weights `[rows, steps]`, the context and `o` (`[rows, units]` each).
pub fn attention(ctx: &GpuContext, inputs: &AttentionInputs, half: bool) -> Result<(Output, Output, Output)> {
    let AttentionInputs {
        h,
        enc,
        kernel,
        bias,
        rows,
        steps,
        units,
    } = *inputs;
    let combine: Vec<f32> = kernel.iter().chain(bias).copied().collect();
    let h_buf = buffers::upload_f32(ctx, "h", h)?;
    let enc_buf = buffers::upload_f32(ctx, "encoder outputs", enc)?;
    let comb_buf = buffers::upload_weights(ctx, "combine", &combine, half)?;
    let weights = buffers::Guarded::new(ctx, "weights", &nan_filled(rows * steps))?;
    let context = buffers::Guarded::new(ctx, "context", &nan_filled(rows * units))?;
    let out = buffers::Guarded::new(ctx, "out", &nan_filled(rows * units))?;
    let layer = AttentionLayer {
        combine: (&comb_buf).into(),
        units,
        half,
    };
    let encoded = EncoderOutputs {
        view: (&enc_buf).into(),
        steps,
        rows_per_block: 1,
    };
    let written = AttentionOut {
        weights: weights.view(),
        context: context.view(),
        out: out.view(),
    };
    let mut rec = Recorder::new(ctx, "attention");
    super::attention(
        ctx,
        &mut rec,
        layer,
        RowsOf::packed((&h_buf).into(), units),
        encoded,
        written,
        rows,
    )?;
    ctx.submit_and_wait("attention", rec.finish())?;
    let read = |g| read_output(ctx, "attention", g);
    Ok((read(&weights)?, read(&context)?, read(&out)?))
}

/// The hybrid encoder's convolution (conv1d.wgsl): `x` `[rows, steps, fin]`, `w`
/// `[3, fin, channels]`, `b` `[channels]`; returns `[rows, steps, channels]`; twin
/// `seq2seq::conv_encoder::conv1d_same_tanh`.
#[allow(clippy::too_many_arguments)]
pub fn conv1d(
    ctx: &GpuContext,
    x: &[f32],
    w: &[f32],
    b: &[f32],
    rows: usize,
    steps: usize,
    fin: usize,
    channels: usize,
) -> Result<Output> {
    if x.len() != rows * steps * fin || w.len() != 3 * fin * channels || b.len() != channels {
        return Err(Error::Gpu(format!(
            "conv1d: {} inputs, {} kernel and {} bias values for {rows} x {steps} x {fin} -> {channels}",
            x.len(),
            w.len(),
            b.len()
        )));
    }
    let x_buf = buffers::upload_f32(ctx, "x", x)?;
    let joined: Vec<f32> = w.iter().chain(b).copied().collect();
    let w_buf = buffers::upload_f32(ctx, "conv weights", &joined)?;
    let out = buffers::Guarded::new(ctx, "out", &nan_filled(rows * steps * channels))?;
    let layer = Conv1dLayer {
        weights: (&w_buf).into(),
        steps,
        fin,
        channels,
    };
    let mut rec = Recorder::new(ctx, "conv1d");
    super::conv1d(ctx, &mut rec, layer, (&x_buf).into(), out.view(), rows)?;
    submit_and_read(ctx, "conv1d", rec, &out)
}

/// `out = init + share * x` (ensemble_mean.wgsl).
pub fn ensemble_mean(ctx: &GpuContext, x: &[f32], init: &[f32], share: f32) -> Result<Output> {
    let x_buf = buffers::upload_f32(ctx, "x", x)?;
    let out = buffers::Guarded::new(ctx, "out", init)?;
    let mut rec = Recorder::new(ctx, "ensemble_mean");
    super::ensemble_mean(ctx, &mut rec, (&x_buf).into(), out.view(), x.len(), share)?;
    submit_and_read(ctx, "ensemble_mean", rec, &out)
}

/// `dst[r] = src[rows[r]]` for a state `[src_rows, units] h | [src_rows, units] c`.
pub fn reorder_rows(ctx: &GpuContext, src: &[f32], rows: &[u32], src_rows: usize, units: usize) -> Result<Output> {
    let s = buffers::upload_f32(ctx, "src", src)?;
    let r = buffers::upload_u32(ctx, "rows", rows)?;
    let out = buffers::Guarded::new(ctx, "dst", &nan_filled(2 * rows.len() * units))?;
    let mut rec = Recorder::new(ctx, "reorder_rows");
    let gather = Gather {
        parents: (&r).into(),
        prev_rows: src_rows,
    };
    super::reorder_rows(ctx, &mut rec, gather, (&s).into(), out.view(), rows.len(), units)?;
    submit_and_read(ctx, "reorder_rows", rec, &out)
}

/// Evaluates a solver's WGSL `solver_prefix_valid` and `solver_completable` (library
/// `rules_library`, e.g. "conv_asm_1x1u_rules") on each (rule words, prefix, length), with
/// `domain` the accepted values ascending. Returns (valid, completable) per case.
pub fn rules_check(
    ctx: &GpuContext,
    rules_library: &'static str,
    cases: &[([i32; 8], [i32; 8], u32)],
    domain: &[i32],
) -> Result<Vec<(bool, bool)>> {
    let rules: Vec<i32> = cases.iter().flat_map(|c| c.0).collect();
    let prefixes: Vec<i32> = cases.iter().flat_map(|c| c.1).collect();
    let lens: Vec<u32> = cases.iter().map(|c| c.2).collect();
    let r = buffers::upload_i32(ctx, "rules", &rules)?;
    let p = buffers::upload_i32(ctx, "prefixes", &prefixes)?;
    let l = buffers::upload_u32(ctx, "lens", &lens)?;
    let d = buffers::upload_i32(ctx, "domain", domain)?;
    let ok = buffers::zeroed(ctx, "ok", 4 * cases.len() as u64)?;
    let key = KernelKey::new("rules_check", &[("WG", WG)]).with_rules(rules_library);
    let kernel = ctx.kernel(&key)?;
    let mut rec = Recorder::new(ctx, "rules_check");
    dispatch(
        ctx,
        &mut rec,
        &kernel,
        &[(&r).into(), (&p).into(), (&l).into(), (&d).into(), (&ok).into()],
        &[u32_of("cases", cases.len())?, u32_of("domain", domain.len())?],
        cases.len() as u64,
    )?;
    ctx.submit_and_wait("rules_check", rec.finish())?;
    Ok(buffers::read_u32(ctx, "rules_check", &ok, 0, cases.len())?
        .iter()
        .map(|&w| (w & 1 != 0, w & 2 != 0))
        .collect())
}

/// Evaluates `solver_prefix_valid` and `solver_completable` of a rules library on prefixes
/// of any length: `rules` holds `n` rows of 8 rule words (followed by any data a library
/// such as "catalogue_rules" reads by offset), `prefixes` `n` rows of the library's
/// `SOLVER_MAX_LEN` values, `domain` the accepted values ascending (`[0]` for libraries that
/// read none). Returns (valid, completable) per case.
pub fn rules_check_words(
    ctx: &GpuContext,
    rules_library: &'static str,
    rules: &[i32],
    prefixes: &[i32],
    lens: &[u32],
    domain: &[i32],
) -> Result<Vec<(bool, bool)>> {
    let n = lens.len();
    let r = buffers::upload_i32(ctx, "rules", rules)?;
    let p = buffers::upload_i32(ctx, "prefixes", prefixes)?;
    let l = buffers::upload_u32(ctx, "lens", lens)?;
    let d = buffers::upload_i32(ctx, "domain", domain)?;
    let ok = buffers::zeroed(ctx, "ok", 4 * n as u64)?;
    let key = KernelKey::new("rules_check", &[("WG", WG)]).with_rules(rules_library);
    let kernel = ctx.kernel(&key)?;
    let mut rec = Recorder::new(ctx, "rules_check");
    dispatch(
        ctx,
        &mut rec,
        &kernel,
        &[(&r).into(), (&p).into(), (&l).into(), (&d).into(), (&ok).into()],
        &[u32_of("cases", n)?, u32_of("domain", domain.len())?],
        n as u64,
    )?;
    ctx.submit_and_wait("rules_check", rec.finish())?;
    Ok(buffers::read_u32(ctx, "rules_check", &ok, 0, n)?
        .iter()
        .map(|&w| (w & 1 != 0, w & 2 != 0))
        .collect())
}

/// One search position's inputs on the host: a decoder step's `scores` and `logp`
/// (`[rows, vocab]` each), the solver's WGSL `rules_library` (e.g. "conv_asm_1x1u_rules"),
/// the 8 `rules` words per row (greedy) or problem (beam), followed by `tables` (data the
/// library reads by offset; may be empty), `vocab_words` (as `vocab_words` /
/// `beam_vocab_words` build it), and the records `hyp` (`2 * max_len + 4` words each:
/// tokens, values, len, status, score bits, spare).
#[derive(Debug, Clone, Copy)]
pub struct SearchStepInputs<'a> {
    pub rules_library: &'static str,
    pub scores: &'a [f32],
    pub logp: &'a [f32],
    pub vocab_words: &'a [i32],
    pub rules: &'a [[i32; 8]],
    pub tables: &'a [i32],
    pub hyp: &'a [u32],
    pub vocab: usize,
    pub max_len: usize,
}

/// One position of MIOpen's greedy walk (greedy_step.wgsl) for `step.rules.len()` rows (one
/// record each in `step.hyp`); returns the updated records and the fed tokens.
pub fn greedy_step(ctx: &GpuContext, step: &SearchStepInputs) -> Result<(Vec<u32>, Vec<u32>)> {
    let SearchStepInputs {
        rules_library,
        scores,
        logp,
        vocab_words,
        rules,
        tables,
        hyp,
        vocab,
        max_len,
    } = *step;
    let rows = rules.len();
    let s = buffers::upload_f32(ctx, "scores", scores)?;
    let l = buffers::upload_f32(ctx, "logp", logp)?;
    let v = buffers::upload_i32(ctx, "vocabulary", vocab_words)?;
    let flat: Vec<i32> = rules.iter().flatten().chain(tables).copied().collect();
    let r = buffers::upload_i32(ctx, "rules", &flat)?;
    let h = buffers::upload_u32(ctx, "hypotheses", hyp)?;
    let f = buffers::zeroed(ctx, "feed", 4 * rows as u64)?;
    let mut rec = Recorder::new(ctx, "greedy_step");
    let search = SearchRules {
        library: rules_library,
        rules: (&r).into(),
        vocab_words: (&v).into(),
        vocab,
        max_len,
    };
    let step = StepScores {
        scores: (&s).into(),
        logp: (&l).into(),
    };
    super::greedy_step(ctx, &mut rec, search, step, (&h).into(), (&f).into(), rows)?;
    ctx.submit_and_wait("greedy_step", rec.finish())?;
    Ok((
        buffers::read_u32(ctx, "greedy_step", &h, 0, hyp.len())?,
        buffers::read_u32(ctx, "greedy_step", &f, 0, rows)?,
    ))
}

/// One position of the constrained beam search (beam_step.wgsl) for `step.rules.len()`
/// problems of `width` slots; `values` and `domain_len`: the counts `beam_vocab_words`
/// returns with `step.vocab_words`. `step.hyp` holds the live records, optionally followed
/// by every problem's finished list (empty lists otherwise). Returns the new records (live,
/// then finished lists), the parent row of each new slot, and the fed tokens.
pub fn beam_step(
    ctx: &GpuContext,
    step: &SearchStepInputs,
    width: usize,
    values: usize,
    domain_len: usize,
) -> Result<(Vec<u32>, Vec<u32>, Vec<u32>)> {
    let SearchStepInputs {
        rules_library,
        scores,
        logp,
        vocab_words,
        rules,
        tables,
        hyp,
        vocab,
        max_len,
    } = *step;
    let problems = rules.len();
    let rows = problems * width;
    let s = buffers::upload_f32(ctx, "scores", scores)?;
    let l = buffers::upload_f32(ctx, "logp", logp)?;
    let v = buffers::upload_i32(ctx, "vocabulary", vocab_words)?;
    let flat: Vec<i32> = rules.iter().flatten().chain(tables).copied().collect();
    let r = buffers::upload_i32(ctx, "rules", &flat)?;
    // The live records, then every problem's finished list (empty unless `hyp` has it).
    let words = 2 * max_len + 4;
    let mut padded = hyp.to_vec();
    if hyp.len() == rows * words {
        for _ in 0..rows {
            let mut dead = vec![0u32; words];
            dead[2 * max_len + 1] = 2;
            padded.extend_from_slice(&dead);
        }
    }
    let h_in = buffers::upload_u32(ctx, "hypotheses", &padded)?;
    let h_out = buffers::zeroed(ctx, "hypotheses", 4 * padded.len() as u64)?;
    let parents = buffers::zeroed(ctx, "parents", 4 * rows as u64)?;
    let feed = buffers::zeroed(ctx, "feed", 4 * rows as u64)?;
    let mut rec = Recorder::new(ctx, "beam_step");
    let search = SearchRules {
        library: rules_library,
        rules: (&r).into(),
        vocab_words: (&v).into(),
        vocab,
        max_len,
    };
    let step = StepScores {
        scores: (&s).into(),
        logp: (&l).into(),
    };
    let records = BeamRecords {
        hyp_in: (&h_in).into(),
        hyp_out: (&h_out).into(),
        parents: (&parents).into(),
        feed: (&feed).into(),
    };
    let shape = BeamShape {
        problems,
        width,
        values,
        domain_len,
    };
    super::beam_step(ctx, &mut rec, search, step, records, shape)?;
    ctx.submit_and_wait("beam_step", rec.finish())?;
    Ok((
        buffers::read_u32(ctx, "beam_step", &h_out, 0, padded.len())?,
        buffers::read_u32(ctx, "beam_step", &parents, 0, rows)?,
        buffers::read_u32(ctx, "beam_step", &feed, 0, rows)?,
    ))
}
