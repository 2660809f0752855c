//! `dense.wgsl`: a dense layer, SMALL and tiled paths.

use super::{dispatch, u32_of, Recorder, RowsOf, TilePath, TILE_WG};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// Rows one thread of `dense.wgsl`'s SMALL path computes (its `SMALL_ROWS`).
const DENSE_SMALL_ROWS: usize = 4;
/// `dense.wgsl`'s tile: rows x columns per workgroup of [`TILE_WG`] threads.
const DENSE_TILE_ROWS: usize = 128;
const DENSE_TILE_COLS: usize = 64;

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
    let kernel = ctx.kernel(&key)?;
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
