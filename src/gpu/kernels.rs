//! One launch function per kernel of `shaders/` (recording into a command encoder), and `host`
//! versions that take and return slices: what the GPU-vs-CPU tests and benchmarks call.

use super::buffers::{self, View};
use super::context::GpuContext;
use super::registry::{Kernel, KernelKey};
use crate::error::{Error, Result};

/// Workgroup size of every kernel (an override constant of each shader).
pub const WG: u32 = 64;

/// Rows one thread of `dense.wgsl`'s SMALL path computes (its `SMALL_ROWS`).
const DENSE_SMALL_ROWS: usize = 4;
/// `dense.wgsl`'s tile: rows x columns per workgroup of [`TILE_WG`] threads.
const DENSE_TILE_ROWS: usize = 128;
const DENSE_TILE_COLS: usize = 64;
/// Rows one thread of `lstm_step.wgsl`'s SMALL path computes (its `SMALL_ROWS`).
const LSTM_SMALL_ROWS: usize = 4;
/// `lstm_step.wgsl`'s tile: rows x units (x 4 gates) per workgroup of [`TILE_WG`] threads.
const LSTM_TILE_ROWS: usize = 128;
const LSTM_TILE_UNITS: usize = 32;
/// Workgroup size of `lstm_step.wgsl` and `dense.wgsl` (their tiled paths need 256).
const TILE_WG: u32 = 256;
/// Fewer rows than this take the SMALL path of `lstm_step.wgsl` and `dense.wgsl` (the default of
/// [`GpuContext::set_tiled_min_rows`]): below it the tiled path has too few workgroups to fill a
/// large GPU, and each of its threads does 8 to 16 times the SMALL path's work (latency). An
/// estimate for a ~130-SM GPU, not a measurement.
pub const TILED_MIN_ROWS: usize = 2048;

/// Which of the two paths of `lstm_step.wgsl` / `dense.wgsl` runs (same results, bit for bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TilePath {
    /// SMALL below [`GpuContext::tiled_min_rows`] rows, tiled from there.
    Auto,
    /// One thread per output column (unit) of 4 rows, straight from storage (latency).
    Small,
    /// Workgroup-memory tiles (throughput).
    Tiled,
}

impl TilePath {
    fn small(self, ctx: &GpuContext, rows: usize) -> bool {
        match self {
            TilePath::Auto => rows < ctx.tiled_min_rows(),
            TilePath::Small => true,
            TilePath::Tiled => false,
        }
    }
}

/// Records one dispatch of `kernel` over `threads` invocations (a 2-D grid when the count
/// exceeds the per-dimension limit).
pub(crate) fn dispatch(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    kernel: &Kernel,
    views: &[View<'_>],
    params: &[u32],
    threads: u64,
) -> Result<()> {
    if threads == 0 {
        return Ok(());
    }
    let groups = threads.div_ceil(u64::from(kernel.workgroup));
    let max = u64::from(ctx.groups_per_dimension());
    let x = groups.min(max);
    let y = groups.div_ceil(x);
    if y > max {
        return Err(Error::Gpu(format!(
            "{}: {threads} threads exceed one dispatch (split the batch)",
            kernel.key
        )));
    }
    let make = || {
        let uniform = buffers::uniform(ctx, params);
        let mut entries: Vec<wgpu::BindGroupEntry> = views
            .iter()
            .enumerate()
            .map(|(i, v)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: v.binding(),
            })
            .collect();
        entries.push(wgpu::BindGroupEntry {
            binding: views.len() as u32,
            resource: uniform.as_entire_binding(),
        });
        ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &kernel.layout,
            entries: &entries,
        })
    };
    let group = match rec.cache.as_deref_mut() {
        Some(cache) => {
            let key = BindKey {
                kernel: kernel.key.clone(),
                views: views.iter().map(|v| (v.buf.clone(), v.offset, v.size)).collect(),
                params: params.to_vec(),
            };
            cache.groups.entry(key).or_insert_with(make).clone()
        }
        None => make(),
    };
    let pass = rec.pass_for(&kernel.key);
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, &group, &[]);
    pass.dispatch_workgroups(x as u32, y as u32, 1);
    Ok(())
}

/// What a bind group is made of: the kernel, its buffers (with offset and size) and its
/// parameters.
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct BindKey {
    kernel: KernelKey,
    views: Vec<(wgpu::Buffer, u64, Option<u64>)>,
    params: Vec<u32>,
}

/// Bind groups (with their parameter buffers) of decodes that reuse the same pooled buffers, so
/// a repeated decode of the same size creates no wgpu objects at all.
#[derive(Default)]
pub(crate) struct BindCache {
    groups: std::collections::HashMap<BindKey, wgpu::BindGroup>,
}

impl BindCache {
    pub fn clear(&mut self) {
        self.groups.clear();
    }
}

/// A command encoder being recorded, with the bind-group cache of the decode (if any). Dispatches
/// go into one compute pass, kept open until a copy or clear needs the encoder (wgpu orders
/// dispatches within a pass by their buffer use, as between passes). While the context profiles
/// ([`GpuContext::start_profile`]), each dispatch gets a timestamped pass of its own instead.
pub(crate) struct Recorder<'a> {
    enc: wgpu::CommandEncoder,
    open: Option<wgpu::ComputePass<'static>>,
    cache: Option<&'a mut BindCache>,
    profile: Option<super::profile::RecProfile>,
}

impl<'a> Recorder<'a> {
    pub fn new(ctx: &GpuContext, label: &str) -> Recorder<'a> {
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        let profile = ctx.profiler.recording(ctx, &mut enc);
        Recorder {
            enc,
            open: None,
            cache: None,
            profile,
        }
    }

    pub fn with_cache(ctx: &GpuContext, label: &str, cache: &'a mut BindCache) -> Recorder<'a> {
        let mut r = Recorder::new(ctx, label);
        r.cache = Some(cache);
        r
    }

    /// The open compute pass (begun on first use).
    fn pass(&mut self) -> &mut wgpu::ComputePass<'static> {
        let enc = &mut self.enc;
        self.open.get_or_insert_with(|| {
            enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            })
            .forget_lifetime()
        })
    }

    /// The compute pass for the next dispatch (of `key`): the open one, or while profiling a
    /// new one that writes timestamps at its beginning and end.
    fn pass_for(&mut self, key: &KernelKey) -> &mut wgpu::ComputePass<'static> {
        let Some(profile) = self.profile.as_mut() else {
            return self.pass();
        };
        self.open = None;
        let pass = self
            .enc
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: Some(profile.next_pass(key)),
            })
            .forget_lifetime();
        self.open.insert(pass)
    }

    /// The encoder, for copies and clears (ends the open compute pass).
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.open = None;
        &mut self.enc
    }

    /// Records a copy of `bytes` of `src` at `offset` into the read-back buffer `dst` (from
    /// [`Pool::take_read_back`](super::buffers::Pool::take_read_back)).
    pub fn copy_out(&mut self, src: &wgpu::Buffer, offset: u64, dst: &wgpu::Buffer, bytes: u64) {
        self.encoder()
            .copy_buffer_to_buffer(src, offset, dst, 0, bytes.max(4).next_multiple_of(4));
    }

    pub fn finish(mut self) -> wgpu::CommandEncoder {
        self.open = None;
        if let Some(profile) = self.profile.take() {
            profile.finish(&mut self.enc);
        }
        self.enc
    }
}

fn u32_of(what: &str, v: usize) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::Gpu(format!("{what} = {v} does not fit the kernels' 32-bit indices")))
}

/// Row addressing of a kernel input: row r starts at `offset + r * stride` (in f32 words).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows {
    pub stride: usize,
    pub offset: usize,
}

impl Rows {
    /// Rows of `width` values stored one after another from the start.
    pub fn packed(width: usize) -> Rows {
        Rows {
            stride: width,
            offset: 0,
        }
    }
}

/// Rows of a kernel input: row r of `view` starts at `rows.offset + r * rows.stride`.
#[derive(Clone, Copy)]
pub(crate) struct RowsOf<'a> {
    pub view: View<'a>,
    pub rows: Rows,
}

impl<'a> RowsOf<'a> {
    /// Rows of `width` values stored one after another from the start of `view`.
    pub fn packed(view: View<'a>, width: usize) -> RowsOf<'a> {
        RowsOf {
            view,
            rows: Rows::packed(width),
        }
    }
}

/// A dense layer as `dense.wgsl` reads it: `kernel` `[in_dim, units]` and an optional `bias`
/// `[units]` (stored as f16 with `half`; arithmetic stays f32).
#[derive(Clone, Copy)]
pub(crate) struct DenseLayer<'a> {
    pub kernel: View<'a>,
    pub bias: Option<View<'a>>,
    pub in_dim: usize,
    pub units: usize,
    pub half: bool,
}

/// Where a dense layer's `[rows, units]` result goes.
#[derive(Clone, Copy)]
pub(crate) enum DenseOut<'a> {
    /// `out = a · kernel [+ bias]`.
    Write(View<'a>),
    /// `out += a · kernel [+ bias]`.
    Add(View<'a>),
}

/// `out = [out +] a · kernel [+ bias]` for `rows` rows of `a` (dense.wgsl); twin `cpu::dense` /
/// `cpu::matmul_acc`.
pub(crate) fn dense(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    layer: DenseLayer<'_>,
    a: RowsOf<'_>,
    out: DenseOut<'_>,
    rows: usize,
) -> Result<()> {
    dense_on(ctx, rec, layer, a, out, rows, TilePath::Auto)
}

/// [`dense`] on a chosen path of the kernel.
pub(crate) fn dense_on(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    layer: DenseLayer<'_>,
    a: RowsOf<'_>,
    out: DenseOut<'_>,
    rows: usize,
    path: TilePath,
) -> Result<()> {
    let DenseLayer {
        kernel: b,
        bias,
        in_dim: k,
        units: n,
        half,
    } = layer;
    let (out, accumulate) = match out {
        DenseOut::Write(out) => (out, false),
        DenseOut::Add(out) => (out, true),
    };
    let (a, a_rows) = (a.view, a.rows);
    let small = path.small(ctx, rows);
    let key = KernelKey::new(
        "dense",
        &[
            ("K_DIM", u32_of("K", k)?),
            ("N_DIM", u32_of("N", n)?),
            ("WG", TILE_WG),
            ("HAS_BIAS", u32::from(bias.is_some())),
            ("ACCUMULATE", u32::from(accumulate)),
            ("SMALL", u32::from(small)),
        ],
    )
    .with_half(half);
    let kernel = ctx.registry.get(ctx, &key)?;
    let bias = bias.unwrap_or(b);
    let params = [
        u32_of("rows", rows)?,
        u32_of("stride", a_rows.stride)?,
        u32_of("offset", a_rows.offset)?,
    ];
    let threads = if small {
        (rows.div_ceil(DENSE_SMALL_ROWS) * n) as u64
    } else {
        let tiles = rows.div_ceil(DENSE_TILE_ROWS) * n.div_ceil(DENSE_TILE_COLS);
        tiles as u64 * u64::from(TILE_WG)
    };
    dispatch(ctx, rec, &kernel, &[a, b, bias, out], &params, threads)
}

/// `scores = a · kernel [+ bias]` and `logp` its row-wise log-softmax in one dispatch, one
/// workgroup per row (dense_log_softmax.wgsl; for batches below the tiled paths' threshold);
/// twin `cpu::dense` + `cpu::log_softmax_rows`. Same bits as [`dense`] then [`log_softmax`].
pub(crate) fn dense_log_softmax(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    layer: DenseLayer<'_>,
    a: RowsOf<'_>,
    scores: View<'_>,
    logp: View<'_>,
    rows: usize,
) -> Result<()> {
    let DenseLayer {
        kernel: b,
        bias,
        in_dim: k,
        units: n,
        half,
    } = layer;
    let (a, a_rows) = (a.view, a.rows);
    let key = KernelKey::new(
        "dense_log_softmax",
        &[
            ("K_DIM", u32_of("K", k)?),
            ("N_DIM", u32_of("N", n)?),
            ("WG", WG),
            ("HAS_BIAS", u32::from(bias.is_some())),
        ],
    )
    .with_half(half);
    let kernel = ctx.registry.get(ctx, &key)?;
    let bias = bias.unwrap_or(b);
    let params = [
        u32_of("rows", rows)?,
        u32_of("stride", a_rows.stride)?,
        u32_of("offset", a_rows.offset)?,
    ];
    // One workgroup per row.
    dispatch(
        ctx,
        rec,
        &kernel,
        &[a, b, bias, scores, logp],
        &params,
        rows as u64 * u64::from(kernel.workgroup),
    )
}

/// An embedding table: `table` `[vocab, dim]`.
#[derive(Clone, Copy)]
pub(crate) struct Embedding<'a> {
    pub table: View<'a>,
    pub vocab: usize,
    pub dim: usize,
}

/// `out[i, :] = table[ids[i], :]` for `rows` ids (embedding_gather.wgsl; an id outside the table
/// gives a NaN row); twin `cpu::embedding_gather`.
pub(crate) fn embedding_gather(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    embedding: Embedding<'_>,
    ids: View<'_>,
    out: View<'_>,
    rows: usize,
) -> Result<()> {
    let Embedding { table, vocab, dim } = embedding;
    let key = KernelKey::new(
        "embedding_gather",
        &[
            ("DIM", u32_of("dim", dim)?),
            ("VOCAB", u32_of("vocab", vocab)?),
            ("WG", WG),
        ],
    );
    let kernel = ctx.registry.get(ctx, &key)?;
    dispatch(
        ctx,
        rec,
        &kernel,
        &[ids, table, out],
        &[u32_of("rows", rows)?],
        (rows * dim) as u64,
    )
}

/// One LSTM layer as a step reads it: `weights` = `[in_dim, 4 units] kernel | [units, 4 units]
/// recurrent | [4 units] bias` (stored as f16 with `half`; arithmetic stays f32).
#[derive(Clone, Copy)]
pub(crate) struct LstmLayer<'a> {
    pub weights: View<'a>,
    pub in_dim: usize,
    pub units: usize,
    pub half: bool,
}

/// Where an LSTM step reads its input rows (`in_dim` values each).
#[derive(Clone, Copy)]
pub(crate) enum LstmInput<'a> {
    /// Row r starts at `rows.offset + r * rows.stride` of `x`.
    Rows { x: View<'a>, rows: Rows },
    /// Row r is row `ids[r]` of the embedding `table` (`[vocab, in_dim]`; an id outside it
    /// gives a NaN row): the decoder's first layer without a separate `embedding_gather`.
    Embedded {
        ids: View<'a>,
        table: View<'a>,
        vocab: usize,
    },
}

/// The state an LSTM step reads and writes: `prev` = [h | c] in, `next` = [h | c] out.
#[derive(Clone, Copy)]
pub(crate) struct LstmState<'a> {
    pub prev: View<'a>,
    pub next: View<'a>,
    /// Row r continues row `parents[r]` of `prev` (the beam's reorder read in place); without,
    /// row r continues row r.
    pub gather: Option<Gather<'a>>,
    /// Where a copy of the new h goes too (an encoder's output sequence), if anywhere.
    pub seq: Option<RowsOf<'a>>,
}

impl<'a> LstmState<'a> {
    /// `prev` -> `next`, row for row, no sequence output.
    pub fn new(prev: View<'a>, next: View<'a>) -> LstmState<'a> {
        LstmState {
            prev,
            next,
            gather: None,
            seq: None,
        }
    }
}

/// Row r reads row `parents[r]` of a state of `prev_rows` rows.
#[derive(Clone, Copy)]
pub(crate) struct Gather<'a> {
    pub parents: View<'a>,
    pub prev_rows: usize,
}

/// One fused LSTM step for `rows` rows (lstm_step.wgsl): `input` and `state.prev` -> `state.next`
/// (and `state.seq`); twin `cpu::dense` + `cpu::matmul_acc` + `cpu::lstm_cell`, with
/// `cpu::embedding_gather` for [`LstmInput::Embedded`] and `States::gather_from` for
/// [`LstmState::gather`].
pub(crate) fn lstm_step(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    layer: LstmLayer<'_>,
    input: LstmInput<'_>,
    state: LstmState<'_>,
    rows: usize,
) -> Result<()> {
    lstm_step_on(ctx, rec, layer, input, state, rows, TilePath::Auto)
}

/// [`lstm_step`] on a chosen path of the kernel.
pub(crate) fn lstm_step_on(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    layer: LstmLayer<'_>,
    input: LstmInput<'_>,
    state: LstmState<'_>,
    rows: usize,
    path: TilePath,
) -> Result<()> {
    let LstmLayer {
        weights,
        in_dim,
        units,
        half,
    } = layer;
    // The kernel reads its input from `x` either way: the embedding table when embedded.
    let (x, x_rows, embed) = match input {
        LstmInput::Rows { x, rows } => (x, rows, None),
        LstmInput::Embedded { ids, table, vocab } => (table, Rows { stride: 0, offset: 0 }, Some((ids, vocab))),
    };
    let LstmState {
        prev,
        next,
        gather,
        seq,
    } = state;
    let small = path.small(ctx, rows);
    let key = KernelKey::new(
        "lstm_step",
        &[
            ("IN_DIM", u32_of("input", in_dim)?),
            ("UNITS", u32_of("units", units)?),
            ("WG", TILE_WG),
            ("WRITE_SEQ", u32::from(seq.is_some())),
            ("SMALL", u32::from(small)),
            ("EMBED_VOCAB", u32_of("vocabulary", embed.map_or(0, |(_, v)| v))?),
            ("GATHER", u32::from(gather.is_some())),
        ],
    )
    .with_half(half);
    if embed.is_some_and(|(_, v)| v == 0) {
        return Err(Error::Gpu("lstm_step: an embedding of 0 rows".into()));
    }
    let kernel = ctx.registry.get(ctx, &key)?;
    let ids = embed.map_or((&ctx.unused_input).into(), |(ids, _)| ids);
    let (parents, prev_rows) = gather.map_or(((&ctx.unused_input).into(), rows), |g| (g.parents, g.prev_rows));
    // Without a sequence output the slot still needs a buffer of its own.
    let (seq_view, seq_rows) = seq.map_or(((&ctx.unused).into(), Rows { stride: 0, offset: 0 }), |s| {
        (s.view, s.rows)
    });
    let params = [
        u32_of("rows", rows)?,
        u32_of("x stride", x_rows.stride)?,
        u32_of("x offset", x_rows.offset)?,
        u32_of("seq stride", seq_rows.stride)?,
        u32_of("seq offset", seq_rows.offset)?,
        u32_of("previous rows", prev_rows)?,
    ];
    let threads = if small {
        (rows.div_ceil(LSTM_SMALL_ROWS) * units) as u64
    } else {
        let tiles = rows.div_ceil(LSTM_TILE_ROWS) * units.div_ceil(LSTM_TILE_UNITS);
        tiles as u64 * u64::from(TILE_WG)
    };
    dispatch(
        ctx,
        rec,
        &kernel,
        &[x, weights, prev, next, seq_view, ids, parents],
        &params,
        threads,
    )
}

/// The attention's combine layer: `combine` = `[2 units, units] kernel | [units] bias` (stored
/// as f16 with `half`; arithmetic stays f32).
#[derive(Clone, Copy)]
pub(crate) struct AttentionLayer<'a> {
    pub combine: View<'a>,
    pub units: usize,
    pub half: bool,
}

/// Encoder outputs the attention reads: blocks of `[steps, units]`; decoder row r reads block
/// `r / rows_per_block` (a beam's rows share their problem's block; 0 counts as 1).
#[derive(Clone, Copy)]
pub(crate) struct EncoderOutputs<'a> {
    pub view: View<'a>,
    pub steps: usize,
    pub rows_per_block: usize,
}

/// What the attention writes per row: the attention `weights` `[rows, steps]`, the `context`
/// and the combined output `out` (`[rows, units]` each).
#[derive(Clone, Copy)]
pub(crate) struct AttentionOut<'a> {
    pub weights: View<'a>,
    pub context: View<'a>,
    pub out: View<'a>,
}

/// Dot-product attention + combine layer for every row (attention.wgsl): from `h` and `enc`
/// writes the attention weights, the context and `o = tanh([h, ctx] · Wc + bc)`. Twin
/// `cpu::attention` + `cpu::dense` + `cpu::activations::tanh`.
pub(crate) fn attention(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    layer: AttentionLayer<'_>,
    h: RowsOf<'_>,
    enc: EncoderOutputs<'_>,
    out: AttentionOut<'_>,
    rows: usize,
) -> Result<()> {
    let AttentionLayer { combine, units, half } = layer;
    let (h, h_rows) = (h.view, h.rows);
    let EncoderOutputs {
        view: enc,
        steps,
        rows_per_block: enc_div,
    } = enc;
    let AttentionOut { weights, context, out } = out;
    if steps == 0 || steps > ATTENTION_MAX_STEPS {
        return Err(Error::Gpu(format!(
            "attention: {steps} encoder steps (the kernel takes 1 to {ATTENTION_MAX_STEPS})"
        )));
    }
    let key = KernelKey::new(
        "attention",
        &[
            ("STEPS", u32_of("steps", steps)?),
            ("UNITS", u32_of("units", units)?),
            ("WG", WG),
        ],
    )
    .with_half(half);
    let kernel = ctx.registry.get(ctx, &key)?;
    let params = [
        u32_of("rows", rows)?,
        u32_of("h stride", h_rows.stride)?,
        u32_of("h offset", h_rows.offset)?,
        u32_of("encoder row divisor", enc_div.max(1))?,
    ];
    // One workgroup per ATTENTION_GROUP_ROWS rows.
    dispatch(
        ctx,
        rec,
        &kernel,
        &[h, enc, combine, weights, context, out],
        &params,
        rows.div_ceil(ATTENTION_GROUP_ROWS) as u64 * u64::from(kernel.workgroup),
    )
}

/// `out[i] += share * x[i]` for `n` values (ensemble_mean.wgsl); twin: the ensemble average of
/// `seq2seq::AttentionModel`'s step.
pub(crate) fn ensemble_mean(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    x: View<'_>,
    out: View<'_>,
    n: usize,
    share: f32,
) -> Result<()> {
    let key = KernelKey::new("ensemble_mean", &[("WG", WG)]);
    let kernel = ctx.registry.get(ctx, &key)?;
    dispatch(
        ctx,
        rec,
        &kernel,
        &[x, out],
        &[u32_of("values", n)?, share.to_bits()],
        n as u64,
    )
}

/// Most encoder steps `attention.wgsl` takes (its `MAX_STEPS`).
pub const ATTENTION_MAX_STEPS: usize = 64;
/// Rows one `attention.wgsl` workgroup computes (its `GROUP_ROWS`).
const ATTENTION_GROUP_ROWS: usize = 4;

/// Row-wise log-softmax (log_softmax.wgsl); twin `cpu::log_softmax_rows`.
pub(crate) fn log_softmax(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    x: View<'_>,
    out: View<'_>,
    rows: usize,
    width: usize,
) -> Result<()> {
    let key = KernelKey::new("log_softmax", &[("V", u32_of("width", width)?), ("WG", WG)]);
    let kernel = ctx.registry.get(ctx, &key)?;
    dispatch(ctx, rec, &kernel, &[x, out], &[u32_of("rows", rows)?], rows as u64)
}

/// What a search step checks candidates against: the solver's WGSL rules `library` (e.g.
/// "conv_asm_1x1u_rules"), each row's (or problem's) 8 `rules` words followed by any data the
/// library reads by offset, and `vocab_words` (as `vocab_words` builds it for the greedy walk,
/// `beam_vocab_words` for the beam); `vocab` tokens, configs of at most `max_len` values.
#[derive(Clone, Copy)]
pub(crate) struct SearchRules<'a> {
    pub library: &'static str,
    pub rules: View<'a>,
    pub vocab_words: View<'a>,
    pub vocab: usize,
    pub max_len: usize,
}

/// One decoder step's raw `scores` and their row-wise log-softmax `logp` (`[rows, vocab]` each).
#[derive(Clone, Copy)]
pub(crate) struct StepScores<'a> {
    pub scores: View<'a>,
    pub logp: View<'a>,
}

/// One position of MIOpen's greedy walk for every row (greedy_step.wgsl): updates each row's
/// record in `hyp` and writes the token it feeds next to `feed`; twin `search::greedy_miopen`.
pub(crate) fn greedy_step(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    search: SearchRules<'_>,
    step: StepScores<'_>,
    hyp: View<'_>,
    feed: View<'_>,
    rows: usize,
) -> Result<()> {
    let SearchRules {
        library: rules_library,
        rules,
        vocab_words,
        vocab,
        max_len,
    } = search;
    let StepScores { scores, logp } = step;
    let key = KernelKey::new(
        "greedy_step",
        &[
            ("V", u32_of("vocab", vocab)?),
            ("MAX_LEN", u32_of("config length", max_len)?),
            ("WG", GREEDY_WG),
        ],
    )
    .with_rules(rules_library);
    let kernel = ctx.registry.get(ctx, &key)?;
    // One workgroup per row.
    dispatch(
        ctx,
        rec,
        &kernel,
        &[scores, logp, vocab_words, rules, hyp, feed],
        &[u32_of("rows", rows)?],
        rows as u64 * u64::from(GREEDY_WG),
    )
}

/// Threads of one `greedy_step.wgsl` workgroup (one row).
const GREEDY_WG: u32 = 32;

/// The records a beam step reads and writes: `hyp_in` (live slots, then every problem's
/// finished list) -> `hyp_out`, and for each new slot its `parents` row and the `feed` token.
#[derive(Clone, Copy)]
pub(crate) struct BeamRecords<'a> {
    pub hyp_in: View<'a>,
    pub hyp_out: View<'a>,
    pub parents: View<'a>,
    pub feed: View<'a>,
}

/// Sizes of a beam search: `problems` x `width` slots; `values` distinct values and
/// `domain_len` domain entries in the search's `vocab_words`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BeamShape {
    pub problems: usize,
    pub width: usize,
    pub values: usize,
    pub domain_len: usize,
}

/// One position of the constrained beam search for every problem (beam_step.wgsl); twin
/// `search::beam_search`.
pub(crate) fn beam_step(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    search: SearchRules<'_>,
    step: StepScores<'_>,
    records: BeamRecords<'_>,
    shape: BeamShape,
) -> Result<()> {
    let SearchRules {
        library: rules_library,
        rules,
        vocab_words,
        vocab,
        max_len,
    } = search;
    let BeamShape {
        problems,
        width,
        values,
        domain_len,
    } = shape;
    let views = [
        step.scores,
        step.logp,
        vocab_words,
        rules,
        records.hyp_in,
        records.hyp_out,
        records.parents,
        records.feed,
    ];
    // The kernel's bit set of seen value prefixes has one bit per (slot, value id).
    if width.saturating_mul(values) > super::decode::MAX_BEAM_CANDIDATES {
        return Err(Error::Gpu(format!(
            "beam_step: width {width} x {values} values exceeds the kernel's {} prefix bits",
            super::decode::MAX_BEAM_CANDIDATES
        )));
    }
    let sort = beam_sort_entries(width, vocab);
    let needed = beam_workgroup_bytes(sort);
    if needed > u64::from(ctx.limits.max_compute_workgroup_storage_size) {
        return Err(Error::Gpu(format!(
            "beam_step: width {width} x vocabulary {vocab} needs {needed} bytes of workgroup memory, the device has {}",
            ctx.limits.max_compute_workgroup_storage_size
        )));
    }
    let key = KernelKey::new(
        "beam_step",
        &[
            ("V", u32_of("vocab", vocab)?),
            ("WIDTH", u32_of("width", width)?),
            ("MAX_LEN", u32_of("config length", max_len)?),
            ("WG", BEAM_WG),
            ("SORT", u32_of("beam candidates", sort)?),
        ],
    )
    .with_rules(rules_library);
    let kernel = ctx.registry.get(ctx, &key)?;
    let params = [
        u32_of("problems", problems)?,
        u32_of("values", values)?,
        u32_of("domain", domain_len)?,
    ];
    // One workgroup per problem.
    dispatch(ctx, rec, &kernel, &views, &params, problems as u64 * u64::from(BEAM_WG))
}

/// Threads of one `beam_step.wgsl` workgroup (one problem).
const BEAM_WG: u32 = 32;

/// `beam_step.wgsl`'s sort capacity: `width x vocab` candidates rounded up to a power of two.
pub(crate) fn beam_sort_entries(width: usize, vocab: usize) -> usize {
    (width.max(1) * vocab.max(1)).next_power_of_two().max(2)
}

/// Workgroup memory of `beam_step.wgsl` with `sort` entries: three u32 keys per entry, the
/// fixed arrays (seen bits, four per-slot arrays of 64, three finished-merge arrays of 128)
/// and six scalars.
pub(crate) fn beam_workgroup_bytes(sort: usize) -> u64 {
    4 * (3 * sort + 64 + 4 * 64 + 3 * 128 + 6) as u64
}

/// `dst[r] = src[parents[r]]` for `dst_rows` rows of both halves of an LSTM state
/// (`[prev_rows, units] h | [prev_rows, units] c` in, `[dst_rows, units] h | ... c` out;
/// reorder_rows.wgsl); twin `States::gather_from`.
pub(crate) fn reorder_rows(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    gather: Gather<'_>,
    src: View<'_>,
    dst: View<'_>,
    dst_rows: usize,
    units: usize,
) -> Result<()> {
    let Gather {
        parents: rows,
        prev_rows: src_rows,
    } = gather;
    let key = KernelKey::new("reorder_rows", &[("UNITS", u32_of("units", units)?), ("WG", WG)]);
    let kernel = ctx.registry.get(ctx, &key)?;
    let params = [u32_of("rows", dst_rows)?, u32_of("rows", src_rows)?];
    dispatch(ctx, rec, &kernel, &[rows, src, dst], &params, (dst_rows * units) as u64)
}

/// Slice-in, slice-out versions of the kernels for tests and benchmarks. Each output comes back
/// with `sentinels_intact`: false when the kernel wrote outside its output.
pub mod host {
    use super::*;

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
    pub fn dense_on(
        ctx: &GpuContext,
        d: &DenseInputs,
        init: Option<&[f32]>,
        half: bool,
        path: TilePath,
    ) -> Result<Output> {
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
        let kernel = ctx.registry.get(ctx, &key)?;
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
        let kernel = ctx.registry.get(ctx, &key)?;
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
}
