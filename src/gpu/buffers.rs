//! Buffer helpers: upload, zeroed work buffers, small uniforms, read-back, and sentinel-guarded
//! output buffers for the kernel tests.

use super::context::GpuContext;
use crate::error::{Error, Result};

/// Smallest buffer created (bindings of zero bytes are not allowed).
const MIN_BYTES: u64 = 16;

/// Sentinel words on each side of a guarded output: 256 bytes, the largest storage offset
/// alignment wgpu allows, so the output can be bound at an aligned offset after them.
pub const GUARD_WORDS: usize = 64;
/// The sentinel: a NaN bit pattern no kernel writes.
pub const SENTINEL: u32 = 0x7fa5_a5a5;

const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// A part of a buffer bound to one slot.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    pub buf: &'a wgpu::Buffer,
    /// Bytes; a multiple of the storage offset alignment.
    pub offset: u64,
    /// Bytes; `None`: the rest of the buffer.
    pub size: Option<u64>,
}

impl<'a> From<&'a wgpu::Buffer> for View<'a> {
    fn from(buf: &'a wgpu::Buffer) -> View<'a> {
        View {
            buf,
            offset: 0,
            size: None,
        }
    }
}

impl<'a> View<'a> {
    pub fn binding(&self) -> wgpu::BindingResource<'a> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.buf,
            offset: self.offset,
            size: self.size.and_then(wgpu::BufferSize::new),
        })
    }
}

/// A storage buffer holding `data` (padded to at least 16 bytes).
pub(crate) fn upload(ctx: &GpuContext, label: &str, data: &[u8]) -> Result<wgpu::Buffer> {
    check_size(ctx, label, data.len() as u64)?;
    let mut padded;
    let contents = if (data.len() as u64) < MIN_BYTES || !data.len().is_multiple_of(4) {
        padded = data.to_vec();
        padded.resize((data.len().max(MIN_BYTES as usize)).next_multiple_of(4), 0);
        &padded[..]
    } else {
        data
    };
    // create_buffer + write_buffer rather than a buffer mapped at creation: on a lost device
    // the latter panics, this only reports an error.
    ctx.checked(&format!("uploading {label}"), || {
        ctx.count_buffer();
        let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: contents.len() as u64,
            usage: STORAGE,
            mapped_at_creation: false,
        });
        ctx.queue.write_buffer(&buf, 0, contents);
        buf
    })
}

pub(crate) fn upload_f32(ctx: &GpuContext, label: &str, data: &[f32]) -> Result<wgpu::Buffer> {
    upload(ctx, label, bytemuck::cast_slice(data))
}

/// Weights as f32, or rounded to f16 (`half`) for the kernels' f16 variants.
pub(crate) fn upload_weights(ctx: &GpuContext, label: &str, data: &[f32], half: bool) -> Result<wgpu::Buffer> {
    if half {
        let bits: Vec<u16> = data.iter().map(|&v| half::f16::from_f32(v).to_bits()).collect();
        upload(ctx, label, bytemuck::cast_slice(&bits))
    } else {
        upload_f32(ctx, label, data)
    }
}

pub(crate) fn upload_u32(ctx: &GpuContext, label: &str, data: &[u32]) -> Result<wgpu::Buffer> {
    upload(ctx, label, bytemuck::cast_slice(data))
}

pub(crate) fn upload_i32(ctx: &GpuContext, label: &str, data: &[i32]) -> Result<wgpu::Buffer> {
    upload(ctx, label, bytemuck::cast_slice(data))
}

/// Work buffers kept between decodes, by role and capacity: a buffer of a role is taken back
/// by any later request of that role it is large enough for (the smallest such one), so a
/// decode of the same or a smaller batch than the previous one allocates nothing; a larger
/// one allocates what does not fit and drops what it did not use. Contents are not cleared;
/// decoders clear what they read before writing, and kernels only touch the rows their
/// parameters name (none reads a binding's length), so a larger buffer serves as well.
#[derive(Default)]
pub(crate) struct Pool {
    free: std::collections::HashMap<PoolKey, Vec<wgpu::Buffer>>,
    used: Vec<(PoolKey, wgpu::Buffer)>,
    /// Buffers were allocated since the last `recycle` (the set of buffers changed).
    pub allocated: bool,
}

/// Role and kind of a pooled buffer.
type PoolKey = (&'static str, Kind);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// A work buffer (storage).
    Storage,
    /// Host-mappable, for results copied back.
    ReadBack,
    /// A storage buffer written once with contents identified by the tag, whose contents for
    /// a smaller size are a prefix of those for a larger one (so a larger buffer of the same
    /// tag holds the smaller one's contents at its start).
    Constant { tag: u64 },
}

impl Pool {
    /// A storage buffer of at least `bytes` for the role `label`.
    pub fn take(&mut self, ctx: &GpuContext, label: &'static str, bytes: u64) -> Result<wgpu::Buffer> {
        Ok(self.take_kind(ctx, label, bytes, Kind::Storage)?.0)
    }

    /// A host-mappable buffer of at least `bytes` that a recording copies results into
    /// ([`Recorder::copy_out`](super::kernels::Recorder::copy_out), then [`submit_and_read`]).
    pub fn take_read_back(&mut self, ctx: &GpuContext, label: &'static str, bytes: u64) -> Result<wgpu::Buffer> {
        Ok(self.take_kind(ctx, label, bytes, Kind::ReadBack)?.0)
    }

    /// A storage buffer whose first `bytes` hold `data(size)`, built and uploaded only when no
    /// pooled buffer of this role and `tag` is large enough: `tag` must identify the contents,
    /// and `data(n)` must be the first `n` bytes of `data(m)` for every `m > n` (e.g. a pattern
    /// over rows). `data` gets the size to fill (at least `bytes`). Kernels must not write to it
    /// (it is a copy source or read-only).
    pub fn constant(
        &mut self,
        ctx: &GpuContext,
        label: &'static str,
        tag: u64,
        bytes: u64,
        data: impl FnOnce(u64) -> Vec<u8>,
    ) -> Result<wgpu::Buffer> {
        let (buf, fresh) = self.take_kind(ctx, label, bytes, Kind::Constant { tag })?;
        if fresh {
            let mut data = data(buf.size());
            data.resize(buf.size() as usize, 0);
            ctx.checked(&format!("uploading {label}"), || ctx.queue.write_buffer(&buf, 0, &data))?;
        }
        Ok(buf)
    }

    /// A pooled buffer and whether it was just allocated.
    fn take_kind(
        &mut self,
        ctx: &GpuContext,
        label: &'static str,
        bytes: u64,
        kind: Kind,
    ) -> Result<(wgpu::Buffer, bool)> {
        let key = (label, kind);
        let size = bytes.max(MIN_BYTES).next_multiple_of(4);
        // The smallest free buffer of the role that is large enough; among equal sizes the
        // first one freed, so a repeated decode gets every buffer back in the same role.
        let found = self.free.get_mut(&key).and_then(|free| {
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, b)| b.size() >= size)
                .min_by_key(|(i, b)| (b.size(), *i))
                .map(|(i, _)| i)?;
            Some(free.remove(best))
        });
        let (buf, fresh) = match found {
            Some(b) => (b, false),
            None => {
                self.allocated = true;
                let b = match kind {
                    Kind::ReadBack => read_back_buffer(ctx, label, size)?,
                    Kind::Storage | Kind::Constant { .. } => zeroed(ctx, label, size)?,
                };
                (b, true)
            }
        };
        self.used.push((key, buf.clone()));
        Ok((buf, fresh))
    }

    /// A pooled buffer holding `data` (written by the queue before the next submission).
    pub fn upload(&mut self, ctx: &GpuContext, label: &'static str, data: &[u8]) -> Result<wgpu::Buffer> {
        let buf = self.take(ctx, label, data.len() as u64)?;
        // Most uploads are whole words: written as they are, without a padded copy.
        let padded;
        let words = if data.len().is_multiple_of(4) {
            data
        } else {
            padded = [data, &[0u8; 3][..4 - data.len() % 4]].concat();
            &padded[..]
        };
        if !words.is_empty() {
            ctx.checked(&format!("uploading {label}"), || ctx.queue.write_buffer(&buf, 0, words))?;
        }
        Ok(buf)
    }

    /// Keeps the buffers of the decode that just finished for the next one and frees the rest,
    /// so the pool holds one decode's worth (the largest of its requests per buffer).
    /// Returns true when the set of buffers changed (some were allocated or dropped).
    pub fn recycle(&mut self) -> bool {
        let changed = self.allocated || self.free.values().any(|v| !v.is_empty());
        self.allocated = false;
        self.free.clear();
        for (key, buf) in self.used.drain(..) {
            self.free.entry(key).or_default().push(buf);
        }
        changed
    }

    /// Drops every buffer (after a failure, or to give the memory back).
    pub fn clear(&mut self) {
        self.free.clear();
        self.used.clear();
        self.allocated = false;
    }
}

/// A zero-filled storage buffer of `bytes` (at least 16).
pub(crate) fn zeroed(ctx: &GpuContext, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
    check_size(ctx, label, bytes)?;
    ctx.checked(&format!("allocating {label}"), || {
        ctx.count_buffer();
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(MIN_BYTES).next_multiple_of(4),
            usage: STORAGE,
            mapped_at_creation: false,
        })
    })
}

fn check_size(ctx: &GpuContext, label: &str, bytes: u64) -> Result<()> {
    let limit = ctx
        .limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size);
    if bytes > limit {
        return Err(Error::Gpu(format!(
            "{label}: {bytes} bytes exceed the device's buffer limit of {limit} bytes (split the batch)"
        )));
    }
    Ok(())
}

/// A uniform buffer of 32-bit words (padded to 16 bytes).
pub(crate) fn uniform(ctx: &GpuContext, words: &[u32]) -> wgpu::Buffer {
    let mut w = words.to_vec();
    w.resize(words.len().next_multiple_of(4).max(4), 0);
    ctx.count_buffer();
    let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("params"),
        size: 4 * w.len() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ctx.queue.write_buffer(&buf, 0, bytemuck::cast_slice(&w));
    buf
}

/// A uniform buffer of `bytes` that recordings write many dispatches' parameter blocks into
/// ([`BindCache`](super::kernels::BindCache)).
pub(crate) fn uniform_page(ctx: &GpuContext, bytes: u64) -> Result<wgpu::Buffer> {
    ctx.checked("allocating a parameter page", || {
        ctx.count_buffer();
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("parameter page"),
            size: bytes,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    })
}

/// A host-mappable buffer of `bytes` (a multiple of 4) for results copied back.
pub(crate) fn read_back_buffer(ctx: &GpuContext, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
    ctx.checked(label, || {
        ctx.count_buffer();
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    })
}

/// Submits `encoder` (which copied results into the read-back buffers of `reads`, each with the
/// number of bytes wanted) and maps them all: one submission, one wait. Returns the bytes of each.
pub(crate) fn submit_and_read(
    ctx: &GpuContext,
    what: &str,
    encoder: wgpu::CommandEncoder,
    reads: &[(&wgpu::Buffer, u64)],
) -> Result<Vec<Vec<u8>>> {
    submit_for_read(ctx, what, encoder, reads)?.read(ctx)
}

/// Submits `encoder` and asks for its read-back buffers `reads` to be mapped, without waiting:
/// the host can record and submit more work before [`Submitted::read`] waits for this one.
pub(crate) fn submit_for_read(
    ctx: &GpuContext,
    what: &str,
    encoder: wgpu::CommandEncoder,
    reads: &[(&wgpu::Buffer, u64)],
) -> Result<Submitted> {
    let submit = ctx.phase(super::profile::SUBMIT);
    let index = ctx.checked(what, || ctx.queue.submit([encoder.finish()]))?;
    drop(submit);
    let (tx, rx) = std::sync::mpsc::channel();
    for (i, &(buf, bytes)) in reads.iter().enumerate() {
        let tx = tx.clone();
        buf.map_async(wgpu::MapMode::Read, ..bytes.max(4).next_multiple_of(4), move |r| {
            let _ = tx.send((i, r));
        });
    }
    Ok(Submitted {
        what: what.to_string(),
        index,
        rx,
        reads: reads.iter().map(|&(b, n)| (b.clone(), n)).collect(),
    })
}

/// A submission whose results are being mapped ([`submit_for_read`]).
pub(crate) struct Submitted {
    what: String,
    index: wgpu::SubmissionIndex,
    rx: std::sync::mpsc::Receiver<(usize, std::result::Result<(), wgpu::BufferAsyncError>)>,
    reads: Vec<(wgpu::Buffer, u64)>,
}

impl Submitted {
    /// Waits for the submission and returns the bytes of each read-back buffer.
    pub fn read(self, ctx: &GpuContext) -> Result<Vec<Vec<u8>>> {
        let Submitted { what, index, rx, reads } = self;
        let what = what.as_str();
        let wait = ctx.phase(super::profile::WAIT);
        ctx.wait(what, Some(index))?;
        // Map callbacks run inside a poll that sees the submission finish: usually the wait
        // above, but another thread's poll of the same device may have taken them and be
        // running them.
        let mut left = reads.len();
        let mut idle_polls = 0;
        while left > 0 {
            match rx.recv_timeout(std::time::Duration::from_millis(5)) {
                Ok((_, r)) => {
                    r.map_err(|e| Error::Gpu(format!("{what}: mapping the result failed: {e}")))?;
                    left -= 1;
                }
                // Every callback ran or was dropped: a mapping that never happened.
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::Gpu(format!("{what}: the result was never mapped")));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    idle_polls += 1;
                    if idle_polls > 12_000 {
                        return Err(Error::Gpu(format!("{what}: the result was never mapped (1 minute)")));
                    }
                    ctx.wait(what, None)?;
                }
            }
        }
        drop(wait);
        let _copy = ctx.phase(super::profile::COPY);
        let mut out = Vec::with_capacity(reads.len());
        for (buf, bytes) in &reads {
            let data = buf
                .get_mapped_range(..bytes.max(&4).next_multiple_of(4))
                .map_err(|e| Error::Gpu(format!("{what}: {e}")))?[..*bytes as usize]
                .to_vec();
            buf.unmap();
            out.push(data);
        }
        Ok(out)
    }
}

/// Words of bytes read back.
pub(crate) fn words_u32(bytes: &[u8]) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(&bytes[..bytes.len() / 4 * 4])
}

/// f32 values of bytes read back.
pub(crate) fn words_f32(bytes: &[u8]) -> Vec<f32> {
    bytemuck::pod_collect_to_vec(&bytes[..bytes.len() / 4 * 4])
}

/// Copies `bytes` from `buf` at `offset` back to the host (one submission, one wait).
pub(crate) fn read(ctx: &GpuContext, what: &str, buf: &wgpu::Buffer, offset: u64, bytes: u64) -> Result<Vec<u8>> {
    let size = bytes.max(4).next_multiple_of(4);
    let staging = read_back_buffer(ctx, "read-back", size)?;
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
    enc.copy_buffer_to_buffer(buf, offset, &staging, 0, size);
    let mut out = submit_and_read(ctx, what, enc, &[(&staging, bytes)])?;
    Ok(out.pop().unwrap_or_default())
}

pub(crate) fn read_u32(ctx: &GpuContext, what: &str, buf: &wgpu::Buffer, offset: u64, len: usize) -> Result<Vec<u32>> {
    Ok(words_u32(&read(ctx, what, buf, offset, 4 * len as u64)?))
}

/// An output buffer with [`GUARD_WORDS`] sentinels on each side of `init` (the words the
/// kernel sees), bound at the aligned offset after the leading sentinels.
pub(crate) struct Guarded {
    pub buf: wgpu::Buffer,
    pub len: usize,
}

impl Guarded {
    pub fn new(ctx: &GpuContext, label: &str, init: &[f32]) -> Result<Guarded> {
        let mut words = vec![SENTINEL; GUARD_WORDS];
        words.extend(init.iter().map(|v| v.to_bits()));
        words.extend_from_slice(&[SENTINEL; GUARD_WORDS]);
        Ok(Guarded {
            buf: upload_u32(ctx, label, &words)?,
            len: init.len(),
        })
    }

    pub fn view(&self) -> View<'_> {
        View {
            buf: &self.buf,
            offset: 4 * GUARD_WORDS as u64,
            size: Some((4 * self.len as u64).max(4)),
        }
    }

    /// The kernel's output and whether every sentinel survived.
    pub fn read(&self, ctx: &GpuContext, what: &str) -> Result<(Vec<f32>, bool)> {
        let words = read_u32(ctx, what, &self.buf, 0, self.len + 2 * GUARD_WORDS)?;
        let intact = words[..GUARD_WORDS]
            .iter()
            .chain(&words[GUARD_WORDS + self.len..])
            .all(|&w| w == SENTINEL);
        let values = words[GUARD_WORDS..GUARD_WORDS + self.len]
            .iter()
            .map(|&w| f32::from_bits(w))
            .collect();
        Ok((values, intact))
    }
}
