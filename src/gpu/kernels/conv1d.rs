//! `conv1d.wgsl`: the hybrid encoder's convolution over the encoder steps.

use super::{dispatch, u32_of, Recorder, WG};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// A hybrid encoder's convolution: `weights` = kernel `[3, fin, channels]` then bias
/// `[channels]`, f32, over `steps` encoder steps.
#[derive(Clone, Copy)]
pub(crate) struct Conv1dLayer<'a> {
    pub weights: View<'a>,
    pub steps: usize,
    pub fin: usize,
    pub channels: usize,
}

/// `out[r, t, :] = tanh(conv(x[r])[t, :])` for `rows` problems (conv1d.wgsl); twin
/// `seq2seq::conv_encoder::conv1d_same_tanh`.
pub(crate) fn conv1d(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    layer: Conv1dLayer<'_>,
    x: View<'_>,
    out: View<'_>,
    rows: usize,
) -> Result<()> {
    let Conv1dLayer {
        weights,
        steps,
        fin,
        channels,
    } = layer;
    let key = KernelKey::new(
        "conv1d",
        &[
            ("CH", u32_of("channels", channels)?),
            ("FIN", u32_of("input width", fin)?),
            ("STEPS", u32_of("steps", steps)?),
            ("WG", WG),
        ],
    );
    let kernel = ctx.kernel(&key)?;
    dispatch(
        ctx,
        rec,
        &kernel,
        &[x, weights, out],
        &[u32_of("rows", rows)?],
        (rows * steps * channels) as u64,
    )
}
