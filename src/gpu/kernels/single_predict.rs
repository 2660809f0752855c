//! `single_predict.wgsl`: a whole KTN prediction (encoder, every decoder step, MIOpen's greedy
//! walk) in one dispatch, one workgroup per problem (or per few; `gpu::single` is its host side).

use super::{dispatch, u32_of, Recorder};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// Threads of the one workgroup (every matrix-vector product is spread over all of them).
pub(crate) const SINGLE_WG: u32 = 256;

/// `single_predict.wgsl`'s ZMAX: most (row, unit) outputs of an LSTM layer one thread keeps.
pub(crate) const SINGLE_ZMAX: usize = 8;

/// The model sizes the kernel is compiled for (its override constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SingleShape {
    /// Encoder time steps and features per step.
    pub steps: usize,
    pub features: usize,
    /// Units of the encoder's dense layer (0: none).
    pub enc_dense: usize,
    /// LSTM layers of the encoder and of the decoder, and their units (all equal).
    pub layers: usize,
    pub units: usize,
    pub embed_dim: usize,
    pub vocab: usize,
}

impl SingleShape {
    /// Layer 0's input width in the encoder, padded to a multiple of 4.
    pub fn enc_input_width(&self) -> usize {
        let w = if self.enc_dense > 0 {
            self.enc_dense
        } else {
            self.features
        };
        w.div_ceil(4) * 4
    }
}

/// The buffers of one `single_predict` dispatch.
pub(crate) struct SingleViews<'a> {
    pub input: View<'a>,
    pub weights: View<'a>,
    pub vocab_words: View<'a>,
    pub rules: View<'a>,
    pub hyp: View<'a>,
}

/// The kernel's key for `rows` problems a workgroup and configs of `max_len` under `library`.
pub(crate) fn single_predict_key(
    shape: &SingleShape,
    library: &'static str,
    rows: usize,
    max_len: usize,
) -> Result<KernelKey> {
    let s = shape;
    let xw = s.enc_input_width();
    Ok(KernelKey::new(
        "single_predict",
        &[
            ("T", u32_of("encoder steps", s.steps)?),
            ("F", u32_of("features", s.features)?),
            ("ED", u32_of("encoder dense units", s.enc_dense)?),
            ("NL", u32_of("LSTM layers", s.layers)?),
            ("U", u32_of("units", s.units)?),
            ("E", u32_of("embedding width", s.embed_dim)?),
            ("V", u32_of("vocab", s.vocab)?),
            ("MAX_LEN", u32_of("config length", max_len)?),
            ("ROWS", u32_of("rows", rows)?),
            ("WG", SINGLE_WG),
            ("S_N", u32_of("state words", s.layers * rows * s.units)?),
            ("XW", u32_of("input width", xw)?),
            ("X_N", u32_of("input words", rows * xw)?),
            ("SV_N", u32_of("score words", rows * s.vocab)?),
            ("PL_N", u32_of("prefix words", rows * max_len)?),
        ],
    )
    .with_rules(library))
}

/// Records the one dispatch of `groups` workgroups (their problems' greedy walks, records in `views.hyp`).
pub(crate) fn single_predict(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    key: &KernelKey,
    views: SingleViews<'_>,
    groups: usize,
) -> Result<()> {
    let kernel = ctx.kernel(key)?;
    let SingleViews {
        input,
        weights,
        vocab_words,
        rules,
        hyp,
    } = views;
    dispatch(
        ctx,
        rec,
        &kernel,
        &[input, weights, vocab_words, rules, hyp],
        &[u32_of("workgroups", groups)?, 0, 0, 0],
        groups as u64 * u64::from(SINGLE_WG),
    )
}
