//! `fused_step.wgsl`: one whole decoder step of a KTN model (every decoder LSTM layer, the
//! output layer, the log-softmax, one position of MIOpen's greedy walk) for blocks of rows in
//! one dispatch (`gpu::fused` is its host side).

use super::{dispatch, u32_of, Recorder, SingleShape};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// Threads of one workgroup (a thread takes (unit, 4 rows) at a time).
pub(crate) const FUSED_WG: u32 = 128;

/// The buffers of one `fused_step` dispatch.
pub(crate) struct FusedViews<'a> {
    pub weights: View<'a>,
    pub vocab_words: View<'a>,
    pub rules: View<'a>,
    pub state: View<'a>,
    pub hyp: View<'a>,
}

/// The kernel's key for blocks of `block` rows and configs of `max_len` under `library`; the
/// embedding starts at vec4 `emb_off` of the packed weights.
pub(crate) fn fused_step_key(
    shape: &SingleShape,
    library: &'static str,
    block: usize,
    max_len: usize,
    emb_off: usize,
) -> Result<KernelKey> {
    let s = shape;
    Ok(KernelKey::new(
        "fused_step",
        &[
            ("NL", u32_of("LSTM layers", s.layers)?),
            ("U", u32_of("units", s.units)?),
            ("E", u32_of("embedding width", s.embed_dim)?),
            ("V", u32_of("vocab", s.vocab)?),
            ("MAX_LEN", u32_of("config length", max_len)?),
            ("B", u32_of("block rows", block)?),
            ("WG", FUSED_WG),
            ("EMB_OFF", u32_of("embedding offset", emb_off)?),
            ("H_N", u32_of("state words", block * s.units)?),
            ("H2_N", u32_of("state words", 2 * block * s.units)?),
            ("SV_N", u32_of("score words", block * s.vocab)?),
        ],
    )
    .with_rules(library))
}

/// Records one decoder step of `rows` rows in blocks (records in `views.hyp`, states in
/// `views.state` updated in place).
pub(crate) fn fused_step(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    key: &KernelKey,
    views: FusedViews<'_>,
    rows: usize,
    block: usize,
) -> Result<()> {
    let kernel = ctx.kernel(key)?;
    let FusedViews {
        weights,
        vocab_words,
        rules,
        state,
        hyp,
    } = views;
    let groups = rows.div_ceil(block.max(1));
    dispatch(
        ctx,
        rec,
        &kernel,
        &[weights, vocab_words, rules, state, hyp],
        &[u32_of("rows", rows)?, 0, 0, 0],
        groups as u64 * u64::from(FUSED_WG),
    )
}
