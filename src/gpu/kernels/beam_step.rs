//! `beam_step.wgsl`: one position of the constrained beam search.

use super::{dispatch, u32_of, Recorder, SearchRules, StepScores};
use crate::error::{Error, Result};
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// Largest width x vocabulary `beam_step.wgsl` takes (its bit set of value prefixes).
pub(crate) const MAX_BEAM_CANDIDATES: usize = 2048;
/// Widest beam `beam_step.wgsl` takes (its `MAX_WIDTH`).
pub(crate) const MAX_BEAM_WIDTH: usize = 64;
/// Largest look-ahead domain of the WGSL rules libraries (`SOLVER_DOMAIN_MAX`) that
/// `beam_step.wgsl` hands them.
pub(crate) const MAX_DOMAIN: usize = 64;

/// Whether `beam_step.wgsl` takes a beam of `width` over `vocab` tokens on this device: at most
/// [`MAX_BEAM_WIDTH`] slots, [`MAX_BEAM_CANDIDATES`] candidates, and sort keys that fit the
/// device's workgroup memory.
pub(crate) fn beam_step_fits(ctx: &GpuContext, width: usize, vocab: usize) -> bool {
    let bytes = beam_workgroup_bytes(beam_sort_entries(width, vocab));
    width <= MAX_BEAM_WIDTH
        && width * vocab <= MAX_BEAM_CANDIDATES
        && bytes <= u64::from(ctx.limits.max_compute_workgroup_storage_size)
}

/// The records a beam step reads and writes: `hyp_in` (live slots, then every problem's
/// finished list) -> `hyp_out`, and for each new slot its `parents` row and the `feed` token.
#[derive(Clone, Copy)]
pub(crate) struct BeamRecords<'a> {
    pub hyp_in: View<'a>,
    pub hyp_out: View<'a>,
    pub parents: View<'a>,
    pub feed: View<'a>,
}

/// Sizes of a beam search: `problems` x `width` slots; `values` distinct values and
/// `domain_len` domain entries in the search's `vocab_words`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BeamShape {
    pub problems: usize,
    pub width: usize,
    pub values: usize,
    pub domain_len: usize,
}

/// One position of the constrained beam search for every problem (beam_step.wgsl); twin
/// `search::beam_search`.
pub(crate) fn beam_step(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    search: SearchRules<'_>,
    step: StepScores<'_>,
    records: BeamRecords<'_>,
    shape: BeamShape,
) -> Result<()> {
    let SearchRules {
        library: rules_library,
        rules,
        vocab_words,
        vocab,
        max_len,
    } = search;
    let BeamShape {
        problems,
        width,
        values,
        domain_len,
    } = shape;
    let views = [
        step.scores,
        step.logp,
        vocab_words,
        rules,
        records.hyp_in,
        records.hyp_out,
        records.parents,
        records.feed,
    ];
    // The kernel's bit set of seen value prefixes has one bit per (slot, value id).
    if width.saturating_mul(values) > MAX_BEAM_CANDIDATES {
        return Err(Error::Gpu(format!(
            "beam_step: width {width} x {values} values exceeds the kernel's {} prefix bits",
            MAX_BEAM_CANDIDATES
        )));
    }
    let sort = beam_sort_entries(width, vocab);
    let needed = beam_workgroup_bytes(sort);
    if needed > u64::from(ctx.limits.max_compute_workgroup_storage_size) {
        return Err(Error::Gpu(format!(
            "beam_step: width {width} x vocabulary {vocab} needs {needed} bytes of workgroup memory, the device has {}",
            ctx.limits.max_compute_workgroup_storage_size
        )));
    }
    let key = KernelKey::new(
        "beam_step",
        &[
            ("V", u32_of("vocab", vocab)?),
            ("WIDTH", u32_of("width", width)?),
            ("MAX_LEN", u32_of("config length", max_len)?),
            ("WG", BEAM_WG),
            ("SORT", u32_of("beam candidates", sort)?),
        ],
    )
    .with_rules(rules_library);
    let kernel = ctx.kernel(&key)?;
    let params = [
        u32_of("problems", problems)?,
        u32_of("values", values)?,
        u32_of("domain", domain_len)?,
    ];
    // One workgroup per problem.
    dispatch(ctx, rec, &kernel, &views, &params, problems as u64 * u64::from(BEAM_WG))
}

/// Threads of one `beam_step.wgsl` workgroup (one problem).
const BEAM_WG: u32 = 32;

/// `beam_step.wgsl`'s sort capacity: `width x vocab` candidates rounded up to a power of two.
pub(crate) fn beam_sort_entries(width: usize, vocab: usize) -> usize {
    (width.max(1) * vocab.max(1)).next_power_of_two().max(2)
}

/// Workgroup memory of `beam_step.wgsl` with `sort` entries: three u32 keys per entry, the
/// fixed arrays (seen bits, four per-slot arrays of 64, three finished-merge arrays of 128)
/// and six scalars.
pub(crate) fn beam_workgroup_bytes(sort: usize) -> u64 {
    4 * (3 * sort + 64 + 4 * 64 + 3 * 128 + 6) as u64
}
