//! `reorder_rows.wgsl`: a beam's reorder of LSTM states as a copy.

use super::{dispatch, u32_of, Gather, Recorder, WG};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

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
    let kernel = ctx.kernel(&key)?;
    let params = [u32_of("rows", dst_rows)?, u32_of("rows", src_rows)?];
    dispatch(ctx, rec, &kernel, &[rows, src, dst], &params, (dst_rows * units) as u64)
}
