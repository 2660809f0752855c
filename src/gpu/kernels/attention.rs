//! `attention.wgsl`: dot-product attention and the combine layer.

use super::{dispatch, u32_of, Recorder, RowsOf, WG};
use crate::error::{Error, Result};
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// Most encoder steps `attention.wgsl` takes (its `MAX_STEPS`).
pub const ATTENTION_MAX_STEPS: usize = 64;
/// Rows one `attention.wgsl` workgroup computes (its `GROUP_ROWS`).
const ATTENTION_GROUP_ROWS: usize = 4;

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
    let kernel = ctx.kernel(&key)?;
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
