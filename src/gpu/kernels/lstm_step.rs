//! `lstm_step.wgsl`: one fused LSTM step, SMALL and tiled paths.

use super::{dispatch, u32_of, Recorder, Rows, RowsOf, TilePath, TILE_WG};
use crate::error::{Error, Result};
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// Rows one thread of `lstm_step.wgsl`'s SMALL path computes (its `SMALL_ROWS`).
const LSTM_SMALL_ROWS: usize = 4;
/// `lstm_step.wgsl`'s tile: rows x units (x 4 gates) per workgroup of [`TILE_WG`] threads.
const LSTM_TILE_ROWS: usize = 128;
const LSTM_TILE_UNITS: usize = 32;

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
    let kernel = ctx.kernel(&key)?;
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
