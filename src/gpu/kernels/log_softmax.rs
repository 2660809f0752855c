//! `log_softmax.wgsl`: row-wise log-softmax.

use super::{dispatch, u32_of, Recorder, WG};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

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
    let kernel = ctx.kernel(&key)?;
    dispatch(ctx, rec, &kernel, &[x, out], &[u32_of("rows", rows)?], rows as u64)
}
