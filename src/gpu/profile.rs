//! GPU profiling for `tuneinfer bench --profile`: per-dispatch GPU time from timestamp queries
//! and host-side phase times (the round-trip floors are `probe.rs`'s). This file knows wgpu and
//! kernel keys only: the context holds a [`Profiler`] and exposes it
//! ([`GpuContext::start_profile`](super::GpuContext::start_profile) and its neighbours).
//!
//! Off (the default) it costs one relaxed atomic load per command encoder and per timed phase:
//! no query sets, no extra passes, the same commands as without it. On, every dispatch gets a
//! compute pass of its own whose beginning and end write timestamps (the base
//! `TIMESTAMP_QUERY` feature suffices), so the GPU time of each kernel key can be summed.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::registry::KernelKey;
use crate::error::{Error, Result};

/// Queries per query set (two per dispatch); sets are added as a recording needs them.
const SET_QUERIES: u32 = 512;
/// Bytes one resolved query set takes in the resolve buffer (a multiple of the 256-byte
/// alignment that `resolve_query_set` requires).
const SET_BYTES: u64 = SET_QUERIES as u64 * 8;
/// Where the query sets start in the resolve buffer (after the encoder's span, if any).
const SETS_OFFSET: u64 = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;

/// Host phases a chunk of a batch goes through, as [`ProfileReport::phases`] names them.
pub const PREPARE: &str = "prepare (features, constraints)";
/// The whole decode on the calling thread; the next four phases happen inside it.
pub const DECODE: &str = "decode (host thread, all of it)";
pub const RECORD: &str = "record commands";
pub const SUBMIT: &str = "submit";
pub const WAIT: &str = "wait for the GPU";
pub const COPY: &str = "copy mapped results";
pub const ANSWERS: &str = "answers (finish)";

/// What the context keeps while profiling is on.
#[derive(Default)]
pub(crate) struct Profiler {
    on: AtomicBool,
    /// Set by `GpuContext::simulate_no_timestamps` (tests of the unsupported path).
    no_timestamps: AtomicBool,
    log: Arc<Mutex<Log>>,
}

#[derive(Default)]
struct Log {
    /// Recordings whose timestamps are still on the device.
    pending: Vec<Pending>,
    /// Host phase name -> (total time, count).
    phases: BTreeMap<&'static str, (Duration, u64)>,
}

/// One finished recording's timestamps, copied into `read_back` by its own command buffer.
struct Pending {
    read_back: wgpu::Buffer,
    bytes: u64,
    keys: Vec<KernelKey>,
    span: bool,
}

impl Profiler {
    pub fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Starts timing `phase` (host work); the time is added when the guard drops.
    pub fn phase(&self, phase: &'static str) -> PhaseTimer {
        PhaseTimer {
            log: self.on().then(|| (self.log.clone(), phase, Instant::now())),
        }
    }

    /// The profiling state of a new recording (None while profiling is off).
    pub fn recording(&self, device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder) -> Option<RecProfile> {
        if !self.on() {
            return None;
        }
        let span = device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
            .then(|| {
                let set = query_set(device, 2);
                encoder.write_timestamp(&set, 0);
                set
            });
        Some(RecProfile {
            device: device.clone(),
            log: self.log.clone(),
            sets: Vec::new(),
            keys: Vec::new(),
            span,
            started: Instant::now(),
        })
    }
}

/// Adds the time since its start to a host phase when dropped (nothing while profiling is off).
pub(crate) struct PhaseTimer {
    log: Option<(Arc<Mutex<Log>>, &'static str, Instant)>,
}

impl Drop for PhaseTimer {
    fn drop(&mut self) {
        if let Some((log, phase, start)) = self.log.take() {
            add_phase(&log, phase, start.elapsed());
        }
    }
}

fn add_phase(log: &Mutex<Log>, phase: &'static str, time: Duration) {
    if let Ok(mut l) = log.lock() {
        let e = l.phases.entry(phase).or_default();
        e.0 += time;
        e.1 += 1;
    }
}

fn query_set(device: &wgpu::Device, count: u32) -> wgpu::QuerySet {
    device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("profile timestamps"),
        ty: wgpu::QueryType::Timestamp,
        count,
    })
}

/// The timestamps of one recording (a [`Recorder`](super::kernels::Recorder)'s).
pub(crate) struct RecProfile {
    device: wgpu::Device,
    log: Arc<Mutex<Log>>,
    sets: Vec<wgpu::QuerySet>,
    /// The kernel of each timed dispatch, in order.
    keys: Vec<KernelKey>,
    /// Timestamps at the encoder's start and end (with `TIMESTAMP_QUERY_INSIDE_ENCODERS`).
    span: Option<wgpu::QuerySet>,
    started: Instant,
}

impl RecProfile {
    /// The timestamp writes of the pass that will hold the next dispatch (of `key`).
    pub fn next_pass(&mut self, key: &KernelKey) -> wgpu::ComputePassTimestampWrites<'_> {
        let slot = 2 * self.keys.len() as u32;
        let (set, index) = ((slot / SET_QUERIES) as usize, slot % SET_QUERIES);
        if set == self.sets.len() {
            self.sets.push(query_set(&self.device, SET_QUERIES));
        }
        self.keys.push(key.clone());
        wgpu::ComputePassTimestampWrites {
            query_set: &self.sets[set],
            beginning_of_pass_write_index: Some(index),
            end_of_pass_write_index: Some(index + 1),
        }
    }

    /// Records the resolve and copy of every timestamp at the end of `encoder` (no compute pass
    /// open) and hands the read-back buffer to the profiler.
    pub fn finish(self, encoder: &mut wgpu::CommandEncoder) {
        add_phase(&self.log, RECORD, self.started.elapsed());
        if self.keys.is_empty() && self.span.is_none() {
            return;
        }
        if let Some(span) = &self.span {
            encoder.write_timestamp(span, 1);
        }
        let used = 2 * self.keys.len() as u64;
        let bytes = SETS_OFFSET + self.sets.len() as u64 * SET_BYTES;
        let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("profile resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read_back = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("profile read-back"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if let Some(span) = &self.span {
            encoder.resolve_query_set(span, 0..2, &resolve, 0);
        }
        for (i, set) in self.sets.iter().enumerate() {
            let first = i as u64 * u64::from(SET_QUERIES);
            let n = used.saturating_sub(first).min(u64::from(SET_QUERIES)) as u32;
            if n > 0 {
                encoder.resolve_query_set(set, 0..n, &resolve, SETS_OFFSET + i as u64 * SET_BYTES);
            }
        }
        encoder.copy_buffer_to_buffer(&resolve, 0, &read_back, 0, bytes);
        if let Ok(mut l) = self.log.lock() {
            l.pending.push(Pending {
                read_back,
                bytes,
                keys: self.keys,
                span: self.span.is_some(),
            });
        }
    }
}

/// GPU time of one kernel key over a profiled run.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTime {
    /// The readable pipeline key, e.g. `lstm_step{EMBED_VOCAB=0,GATHER=0,...}`.
    pub key: String,
    /// The kernel (shader) name, e.g. `lstm_step`.
    pub kernel: &'static str,
    pub dispatches: u64,
    pub gpu_ns: f64,
}

/// What a profiled run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileReport {
    /// Per kernel key, most GPU time first.
    pub kernels: Vec<KernelTime>,
    /// Sum of every command encoder's first-to-last timestamp (None without
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS`): GPU time including copies, clears and gaps.
    pub encoder_span_ns: Option<f64>,
    pub encoders: u64,
    /// Host phases: (name, total seconds, count); phases on different threads overlap.
    pub phases: Vec<(&'static str, f64, u64)>,
}

impl ProfileReport {
    /// Total dispatch time.
    pub fn gpu_ns(&self) -> f64 {
        self.kernels.iter().map(|k| k.gpu_ns).sum()
    }

    /// Per kernel name (all keys of a shader together), most time first.
    pub fn by_kernel(&self) -> Vec<KernelTime> {
        let mut by: HashMap<&'static str, KernelTime> = HashMap::new();
        for k in &self.kernels {
            let e = by.entry(k.kernel).or_insert_with(|| KernelTime {
                key: k.kernel.to_string(),
                kernel: k.kernel,
                dispatches: 0,
                gpu_ns: 0.0,
            });
            e.dispatches += k.dispatches;
            e.gpu_ns += k.gpu_ns;
        }
        let mut v: Vec<KernelTime> = by.into_values().collect();
        v.sort_by(|a, b| b.gpu_ns.total_cmp(&a.gpu_ns).then(a.key.cmp(&b.key)));
        v
    }
}

impl Profiler {
    /// Does `device` write timestamps (the `TIMESTAMP_QUERY` feature, unless simulated away)?
    pub fn has_timestamps(&self, device: &wgpu::Device) -> bool {
        device.features().contains(wgpu::Features::TIMESTAMP_QUERY) && !self.no_timestamps.load(Ordering::Relaxed)
    }

    pub fn simulate_no_timestamps(&self) {
        self.no_timestamps.store(true, Ordering::Relaxed);
    }

    /// Starts profiling every later recording and host phase (an error naming `adapter` when
    /// `device` cannot write timestamps).
    pub fn start(&self, device: &wgpu::Device, adapter: &str) -> Result<()> {
        if !self.has_timestamps(device) {
            return Err(Error::Gpu(format!(
                "{adapter} does not support timestamp queries (TIMESTAMP_QUERY): no per-kernel times"
            )));
        }
        if let Ok(mut l) = self.log.lock() {
            *l = Log::default();
        }
        self.on.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Stops profiling and reads every recorded timestamp back; the caller has waited for the
    /// device to finish the profiled work.
    pub fn finish(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<ProfileReport> {
        self.on.store(false, Ordering::Relaxed);
        let log = match self.log.lock() {
            Ok(mut l) => std::mem::take(&mut *l),
            Err(_) => return Err(Error::Gpu("profile: state poisoned".into())),
        };
        let period = f64::from(queue.get_timestamp_period());
        let mut by_key: HashMap<KernelKey, (u64, f64)> = HashMap::new();
        let mut span_ns = 0.0;
        let mut any_span = false;
        let encoders = log.pending.len() as u64;
        for p in log.pending {
            let ticks = read_ticks(device, &p.read_back, p.bytes)?;
            let tick = |i: usize| ticks.get(i).copied().unwrap_or(0);
            if p.span {
                any_span = true;
                span_ns += tick(1).saturating_sub(tick(0)) as f64 * period;
            }
            let first = (SETS_OFFSET / 8) as usize;
            for (i, key) in p.keys.into_iter().enumerate() {
                let (b, e) = (tick(first + 2 * i), tick(first + 2 * i + 1));
                let entry = by_key.entry(key).or_default();
                entry.0 += 1;
                entry.1 += e.saturating_sub(b) as f64 * period;
            }
        }
        let mut kernels: Vec<KernelTime> = by_key
            .into_iter()
            .map(|(key, (dispatches, gpu_ns))| KernelTime {
                key: key.to_string(),
                kernel: key.kernel,
                dispatches,
                gpu_ns,
            })
            .collect();
        kernels.sort_by(|a, b| b.gpu_ns.total_cmp(&a.gpu_ns).then(a.key.cmp(&b.key)));
        Ok(ProfileReport {
            kernels,
            encoder_span_ns: any_span.then_some(span_ns),
            encoders,
            phases: log
                .phases
                .into_iter()
                .map(|(name, (t, n))| (name, t.as_secs_f64(), n))
                .collect(),
        })
    }
}

/// The 64-bit timestamps in a finished recording's read-back buffer.
fn read_ticks(device: &wgpu::Device, buf: &wgpu::Buffer, bytes: u64) -> Result<Vec<u64>> {
    let (tx, rx) = std::sync::mpsc::channel();
    buf.map_async(wgpu::MapMode::Read, ..bytes, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(Duration::from_secs(60)),
        })
        .map_err(|e| Error::Gpu(format!("profile read-back: waiting for the GPU failed: {e}")))?;
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(Error::Gpu(format!("profile read-back: mapping failed: {e}"))),
        Err(_) => return Err(Error::Gpu("profile read-back: the timestamps were never mapped".into())),
    }
    let ticks = {
        let data = buf
            .get_mapped_range(..bytes)
            .map_err(|e| Error::Gpu(format!("profile read-back: {e}")))?;
        data.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect()
    };
    buf.unmap();
    Ok(ticks)
}
