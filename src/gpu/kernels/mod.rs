//! One launch file per kernel of `shaders/` (recording into a command encoder, with the
//! kernel's constants), and `host`: versions that take and return slices, what the GPU-vs-CPU
//! tests and benchmarks call. This file: what every launch shares (the dispatch, the
//! [`Recorder`], bind-group caching, row addressing, the two paths of the tiled kernels, what
//! both search kernels read).

mod attention;
mod beam_step;
mod conv1d;
mod dense;
mod dense_log_softmax;
mod embedding_gather;
mod ensemble_mean;
mod fused_step;
mod greedy_step;
pub mod host;
mod log_softmax;
mod lstm_step;
mod reorder_rows;
mod single_predict;

pub use attention::ATTENTION_MAX_STEPS;
pub(crate) use attention::{attention, AttentionLayer, AttentionOut, EncoderOutputs};
pub(crate) use beam_step::{beam_step, beam_step_fits, BeamRecords, BeamShape, MAX_DOMAIN};
pub(crate) use conv1d::{conv1d, Conv1dLayer};
pub(crate) use dense::{dense, dense_on, DenseLayer, DenseOut};
pub(crate) use dense_log_softmax::dense_log_softmax;
pub(crate) use embedding_gather::{embedding_gather, Embedding};
pub(crate) use ensemble_mean::ensemble_mean;
pub(crate) use fused_step::{fused_step, fused_step_key, FusedViews, FUSED_WG};
pub(crate) use greedy_step::{greedy_step, END_VALUE, NEVER_VALUE};
pub(crate) use log_softmax::log_softmax;
pub(crate) use lstm_step::{lstm_step, lstm_step_on, Gather, LstmInput, LstmLayer, LstmState};
pub(crate) use reorder_rows::reorder_rows;
pub(crate) use single_predict::{single_predict, single_predict_key, SingleShape, SingleViews, SINGLE_WG, SINGLE_ZMAX};

use super::buffers::{self, View};
use super::context::GpuContext;
use super::registry::{Kernel, KernelKey};
use crate::error::{Error, Result};

/// Workgroup size of every kernel (an override constant of each shader).
pub const WG: u32 = 64;

/// Workgroup size of `lstm_step.wgsl` and `dense.wgsl` (their tiled paths need 256).
pub(crate) const TILE_WG: u32 = 256;

/// Which of the two paths of `lstm_step.wgsl` / `dense.wgsl` runs (same results, bit for bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TilePath {
    /// SMALL below [`GpuContext::tiled_min_rows`] rows, tiled from there.
    Auto,
    /// One thread per output column (unit) of 4 rows, straight from storage (latency).
    Small,
    /// Workgroup-memory tiles (throughput).
    Tiled,
}

impl TilePath {
    fn small(self, ctx: &GpuContext, rows: usize) -> bool {
        match self {
            TilePath::Auto => rows < ctx.tiled_min_rows(),
            TilePath::Small => true,
            TilePath::Tiled => false,
        }
    }
}

/// Records one dispatch of `kernel` over `threads` invocations (a 2-D grid when the count
/// exceeds the per-dimension limit).
pub(crate) fn dispatch(
    ctx: &GpuContext,
    rec: &mut Recorder<'_>,
    kernel: &Kernel,
    views: &[View<'_>],
    params: &[u32],
    threads: u64,
) -> Result<()> {
    if threads == 0 {
        return Ok(());
    }
    let groups = threads.div_ceil(u64::from(kernel.workgroup));
    let max = u64::from(ctx.groups_per_dimension());
    let x = groups.min(max);
    let y = groups.div_ceil(x);
    if y > max {
        return Err(Error::Gpu(format!(
            "{}: {threads} threads exceed one dispatch (split the batch)",
            kernel.key
        )));
    }
    let group = match rec.cache.as_deref_mut() {
        Some(cache) => {
            let (page, offset, size) = cache.stage(ctx, params)?;
            let key = BindKey {
                kernel: kernel.key.clone(),
                views: views.iter().map(|v| (v.buf.clone(), v.offset, v.size)).collect(),
                params: (page, offset, size),
            };
            if cache.groups.len() >= BIND_CACHE_LIMIT && !cache.groups.contains_key(&key) {
                cache.groups.clear();
            }
            let uniform = View {
                buf: &cache.pages[page],
                offset,
                size: Some(size),
            };
            cache
                .groups
                .entry(key)
                .or_insert_with(|| bind_group(ctx, kernel, views, uniform))
                .clone()
        }
        None => {
            let uniform = buffers::uniform(ctx, params);
            bind_group(ctx, kernel, views, (&uniform).into())
        }
    };
    let pass = rec.pass_for(&kernel.key);
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, &group, &[]);
    pass.dispatch_workgroups(x as u32, y as u32, 1);
    Ok(())
}

/// The bind group of one dispatch: `views` in order, then the parameter block `uniform`.
fn bind_group(ctx: &GpuContext, kernel: &Kernel, views: &[View<'_>], uniform: View<'_>) -> wgpu::BindGroup {
    let mut entries: Vec<wgpu::BindGroupEntry> = views
        .iter()
        .enumerate()
        .map(|(i, v)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: v.binding(),
        })
        .collect();
    entries.push(wgpu::BindGroupEntry {
        binding: views.len() as u32,
        resource: uniform.binding(),
    });
    ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &kernel.layout,
        entries: &entries,
    })
}

/// What a cached bind group is made of: the kernel, its buffers (with offset and size) and
/// where its parameter block lies (page, byte offset, bytes). The block's contents are written
/// by each recording, so a decode of another batch size over the same buffers reuses the group.
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct BindKey {
    kernel: KernelKey,
    views: Vec<(wgpu::Buffer, u64, Option<u64>)>,
    params: (usize, u64, u64),
}

/// Bind groups kept at most (a decode records a few hundred dispatches; past this the cache
/// starts again, so batches of ever new buffers cannot grow it without bound).
const BIND_CACHE_LIMIT: usize = 16_384;

/// Bytes of one parameter page (a uniform buffer holding many dispatches' parameter blocks).
const PARAM_PAGE: u64 = 64 * 1024;

/// Bind groups (with their parameter buffers) of decodes that reuse the same pooled buffers, so
/// a repeated decode of the same size creates no wgpu objects at all.
///
/// Every dispatch recorded with the cache gets its parameters at the next offset of a few
/// uniform pages the cache keeps ([`BindCache::stage`]); the recording writes the pages when it
/// finishes. A recording with the same sequence of kernels puts the same parameters block at
/// the same offset, so its bind groups are found again even when its batch size (its
/// parameters) differs, and no buffer is created at all.
#[derive(Default)]
pub(crate) struct BindCache {
    groups: std::collections::HashMap<BindKey, wgpu::BindGroup>,
    /// The parameter pages, and the bytes this recording staged for them.
    pages: Vec<wgpu::Buffer>,
    staged: Vec<u8>,
}

impl BindCache {
    /// Drops the bind groups (their buffers changed); the parameter pages stay.
    pub fn clear(&mut self) {
        self.groups.clear();
    }

    /// Starts a recording: its first dispatch's parameters go to the start of page 0.
    fn begin(&mut self) {
        self.staged.clear();
    }

    /// Stages `params` at the next aligned offset (creating a page when the staged ones are
    /// full); returns (page, offset in the page, bytes).
    fn stage(&mut self, ctx: &GpuContext, params: &[u32]) -> Result<(usize, u64, u64)> {
        let align = u64::from(ctx.limits.min_uniform_buffer_offset_alignment.max(16));
        let bytes = (4 * params.len() as u64).next_multiple_of(16).max(16);
        if bytes > PARAM_PAGE {
            return Err(Error::Internal(format!("a parameter block of {bytes} bytes")));
        }
        let mut at = (self.staged.len() as u64).next_multiple_of(align);
        if at % PARAM_PAGE + bytes > PARAM_PAGE {
            at = at.next_multiple_of(PARAM_PAGE);
        }
        let page = (at / PARAM_PAGE) as usize;
        while self.pages.len() <= page {
            self.pages.push(buffers::uniform_page(ctx, PARAM_PAGE)?);
        }
        self.staged.resize(at as usize, 0);
        self.staged.extend_from_slice(bytemuck::cast_slice(params));
        self.staged.resize((at + bytes) as usize, 0);
        Ok((page, at % PARAM_PAGE, bytes))
    }

    /// Writes the staged parameters into their pages (before the recording is submitted).
    fn write(&mut self, queue: &wgpu::Queue) {
        for (page, data) in self.pages.iter().zip(self.staged.chunks(PARAM_PAGE as usize)) {
            queue.write_buffer(page, 0, data);
        }
        self.staged.clear();
    }
}

/// A command encoder being recorded, with the bind-group cache of the decode (if any). Dispatches
/// go into one compute pass, kept open until a copy or clear needs the encoder (wgpu orders
/// dispatches within a pass by their buffer use, as between passes). While the context profiles
/// ([`GpuContext::start_profile`]), each dispatch gets a timestamped pass of its own instead.
pub(crate) struct Recorder<'a> {
    enc: wgpu::CommandEncoder,
    open: Option<wgpu::ComputePass<'static>>,
    cache: Option<&'a mut BindCache>,
    profile: Option<super::profile::RecProfile>,
    /// Writes the cache's parameter pages when the recording finishes.
    queue: wgpu::Queue,
}

impl<'a> Recorder<'a> {
    pub fn new(ctx: &GpuContext, label: &str) -> Recorder<'a> {
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        let profile = ctx.profiler.recording(&ctx.device, &mut enc);
        Recorder {
            enc,
            open: None,
            cache: None,
            profile,
            queue: ctx.queue.clone(),
        }
    }

    pub fn with_cache(ctx: &GpuContext, label: &str, cache: &'a mut BindCache) -> Recorder<'a> {
        let mut r = Recorder::new(ctx, label);
        cache.begin();
        r.cache = Some(cache);
        r
    }

    /// The open compute pass (begun on first use).
    fn pass(&mut self) -> &mut wgpu::ComputePass<'static> {
        let enc = &mut self.enc;
        self.open.get_or_insert_with(|| {
            enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            })
            .forget_lifetime()
        })
    }

    /// The compute pass for the next dispatch (of `key`): the open one, or while profiling a
    /// new one that writes timestamps at its beginning and end.
    fn pass_for(&mut self, key: &KernelKey) -> &mut wgpu::ComputePass<'static> {
        let Some(profile) = self.profile.as_mut() else {
            return self.pass();
        };
        self.open = None;
        let pass = self
            .enc
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: Some(profile.next_pass(key)),
            })
            .forget_lifetime();
        self.open.insert(pass)
    }

    /// The encoder, for copies and clears (ends the open compute pass).
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.open = None;
        &mut self.enc
    }

    /// Records a copy of `bytes` of `src` at `offset` into the read-back buffer `dst` (from
    /// [`Pool::take_read_back`](super::buffers::Pool::take_read_back)).
    pub fn copy_out(&mut self, src: &wgpu::Buffer, offset: u64, dst: &wgpu::Buffer, bytes: u64) {
        self.encoder()
            .copy_buffer_to_buffer(src, offset, dst, 0, bytes.max(4).next_multiple_of(4));
    }

    pub fn finish(mut self) -> wgpu::CommandEncoder {
        self.open = None;
        if let Some(cache) = self.cache.take() {
            cache.write(&self.queue);
        }
        if let Some(profile) = self.profile.take() {
            profile.finish(&mut self.enc);
        }
        self.enc
    }
}

pub(crate) fn u32_of(what: &str, v: usize) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::Gpu(format!("{what} = {v} does not fit the kernels' 32-bit indices")))
}

/// Row addressing of a kernel input: row r starts at `offset + r * stride` (in f32 words).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows {
    pub stride: usize,
    pub offset: usize,
}

impl Rows {
    /// Rows of `width` values stored one after another from the start.
    pub fn packed(width: usize) -> Rows {
        Rows {
            stride: width,
            offset: 0,
        }
    }
}

/// Rows of a kernel input: row r of `view` starts at `rows.offset + r * rows.stride`.
#[derive(Clone, Copy)]
pub(crate) struct RowsOf<'a> {
    pub view: View<'a>,
    pub rows: Rows,
}

impl<'a> RowsOf<'a> {
    /// Rows of `width` values stored one after another from the start of `view`.
    pub fn packed(view: View<'a>, width: usize) -> RowsOf<'a> {
        RowsOf {
            view,
            rows: Rows::packed(width),
        }
    }
}

/// What a search step checks candidates against: the solver's WGSL rules `library` (e.g.
/// "conv_asm_1x1u_rules"), each row's (or problem's) 8 `rules` words followed by any data the
/// library reads by offset, and `vocab_words` (as `vocab_words` builds it for the greedy walk,
/// `beam_vocab_words` for the beam); `vocab` tokens, configs of at most `max_len` values.
#[derive(Clone, Copy)]
pub(crate) struct SearchRules<'a> {
    pub library: &'static str,
    pub rules: View<'a>,
    pub vocab_words: View<'a>,
    pub vocab: usize,
    pub max_len: usize,
}

/// One decoder step's raw `scores` and their row-wise log-softmax `logp` (`[rows, vocab]` each).
#[derive(Clone, Copy)]
pub(crate) struct StepScores<'a> {
    pub scores: View<'a>,
    pub logp: View<'a>,
}
