//! `greedy_step.wgsl`: one position of MIOpen's greedy walk.

use super::{dispatch, u32_of, Recorder, SearchRules, StepScores};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// `greedy_step.wgsl`'s marker for the "-1" value (ends a walk).
pub(crate) const END_VALUE: i32 = i32::MIN;
/// Its marker for values never accepted (not integers).
pub(crate) const NEVER_VALUE: i32 = i32::MIN + 1;

/// One position of MIOpen's greedy walk for every row (greedy_step.wgsl): updates each row's
/// record in `hyp` and writes the token it feeds next to `feed`; twin `search::greedy_miopen`.
pub(crate) fn greedy_step(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    search: SearchRules<'_>,
    step: StepScores<'_>,
    hyp: View<'_>,
    feed: View<'_>,
    rows: usize,
) -> Result<()> {
    let SearchRules {
        library: rules_library,
        rules,
        vocab_words,
        vocab,
        max_len,
    } = search;
    let StepScores { scores, logp } = step;
    let key = KernelKey::new(
        "greedy_step",
        &[
            ("V", u32_of("vocab", vocab)?),
            ("MAX_LEN", u32_of("config length", max_len)?),
            ("WG", GREEDY_WG),
        ],
    )
    .with_rules(rules_library);
    let kernel = ctx.kernel(&key)?;
    // One workgroup per row.
    dispatch(
        ctx,
        rec,
        &kernel,
        &[scores, logp, vocab_words, rules, hyp, feed],
        &[u32_of("rows", rows)?],
        rows as u64 * u64::from(GREEDY_WG),
    )
}

/// Threads of one `greedy_step.wgsl` workgroup (one row).
const GREEDY_WG: u32 = 32;
