//! `ensemble_mean.wgsl`: an ensemble member's share of the mean.

use super::{dispatch, u32_of, Recorder, WG};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

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
    let kernel = ctx.kernel(&key)?;
    dispatch(
        ctx,
        rec,
        &kernel,
        &[x, out],
        &[u32_of("values", n)?, share.to_bits()],
        n as u64,
    )
}
