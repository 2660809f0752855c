//! `embedding_gather.wgsl`: rows of an embedding table.

use super::{dispatch, u32_of, Recorder, WG};
use crate::error::Result;
use crate::gpu::buffers::View;
use crate::gpu::context::GpuContext;
use crate::gpu::registry::KernelKey;

/// An embedding table: `table` `[vocab, dim]`.
#[derive(Clone, Copy)]
pub(crate) struct Embedding<'a> {
    pub table: View<'a>,
    pub vocab: usize,
    pub dim: usize,
}

/// `out[i, :] = table[ids[i], :]` for `rows` ids (embedding_gather.wgsl; an id outside the table
/// gives a NaN row); twin `cpu::embedding_gather`.
pub(crate) fn embedding_gather(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    embedding: Embedding<'_>,
    ids: View<'_>,
    out: View<'_>,
    rows: usize,
) -> Result<()> {
    let Embedding { table, vocab, dim } = embedding;
    let key = KernelKey::new(
        "embedding_gather",
        &[
            ("DIM", u32_of("dim", dim)?),
            ("VOCAB", u32_of("vocab", vocab)?),
            ("WG", WG),
        ],
    );
    let kernel = ctx.kernel(&key)?;
    dispatch(
        ctx,
        rec,
        &kernel,
        &[ids, table, out],
        &[u32_of("rows", rows)?],
        (rows * dim) as u64,
    )
}
