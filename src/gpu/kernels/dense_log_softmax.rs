//! `dense_log_softmax.wgsl`: the output layer and its log-softmax in one dispatch.

use super::{dispatch, u32_of, DenseLayer, Recorder, RowsOf, WG};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

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
    let kernel = ctx.kernel(&key)?;
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
