//! The device layer: finds a Vulkan adapter, opens a device and turns every failure of a GPU call
//! (no adapter, lost device, out of memory, shader compile or validation error, timeout) into a
//! one-line [`Error`] instead of a panic or a hang. No wgpu type leaves this crate.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::error::{Error, Result};

/// How long one wait for the GPU may take before the work is declared lost (a watchdog: a
/// healthy device finishes a 100,000-problem batch far sooner, lavapipe included).
const WAIT_LIMIT: Duration = Duration::from_secs(600);

/// Fewer rows than this take the SMALL path of `lstm_step.wgsl` and `dense.wgsl` (the default of
/// [`GpuContext::set_tiled_min_rows`]): below it the tiled path has too few workgroups to fill a
/// large GPU, and each of its threads does 8 to 16 times the SMALL path's work (latency). An
/// estimate for a ~130-SM GPU, not a measurement.
pub const TILED_MIN_ROWS: usize = 2048;

/// What `tuneinfer info` and messages say about an adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterSummary {
    pub name: String,
    /// e.g. "Vulkan".
    pub backend: String,
    /// "DiscreteGpu", "IntegratedGpu", "Cpu" (software, e.g. lavapipe), ...
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    /// True for software rasterisers (lavapipe, llvmpipe, SwiftShader).
    pub software: bool,
    /// Does the device take f16 arithmetic in shaders (`SHADER_F16`)?
    pub shader_f16: bool,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_storage_buffers_per_shader_stage: u32,
    pub max_compute_workgroup_size_x: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_workgroup_storage_size: u32,
    pub min_storage_buffer_offset_alignment: u32,
}

impl AdapterSummary {
    /// One line: name, type, backend and driver.
    pub fn one_line(&self) -> String {
        format!(
            "{} ({}, {}, driver {} {})",
            self.name, self.device_type, self.backend, self.driver, self.driver_info
        )
    }
}

/// An open GPU device with its queue and the pipeline cache.
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) limits: wgpu::Limits,
    pub(crate) registry: super::registry::Registry,
    /// A small buffer bound where a kernel's optional output is not used.
    pub(crate) unused: wgpu::Buffer,
    /// A small buffer bound where a kernel's optional input is not used (a buffer may not be
    /// bound both read-only and read-write in one dispatch).
    pub(crate) unused_input: wgpu::Buffer,
    summary: AdapterSummary,
    /// Set by the device-lost callback or the uncaptured-error handler; checked after each wait.
    fault: Arc<Mutex<Option<String>>>,
    /// Batches of at least this many rows take the tiled paths of `lstm_step` and `dense`.
    tiled_min_rows: std::sync::atomic::AtomicUsize,
    /// At most this many workgroups per dispatch dimension (below the device's limit only in tests
    /// of the two-dimensional dispatch split).
    groups_cap: std::sync::atomic::AtomicU32,
    /// Per-kernel GPU times and host phases while `bench --profile` measures (off otherwise).
    pub(crate) profiler: super::profile::Profiler,
    /// Buffers created through this context (see [`GpuContext::buffers_created`]).
    buffers_created: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext").field("adapter", &self.summary).finish()
    }
}

fn new_instance() -> wgpu::Instance {
    // Mesa's implicit device-select layer tries to reach a Wayland/X display and prints
    // "XDG_RUNTIME_DIR is invalid" on headless machines; tuneinfer never presents, so it is
    // turned off unless the user set NODEVICE_SELECT themselves. Done once, before any
    // Vulkan call, while the CLI is still single-threaded.
    static QUIET_LAYERS: std::sync::Once = std::sync::Once::new();
    QUIET_LAYERS.call_once(|| {
        if std::env::var_os("NODEVICE_SELECT").is_none() {
            std::env::set_var("NODEVICE_SELECT", "1");
        }
    });
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN;
    wgpu::Instance::new(desc)
}

fn summarize(adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    let limits = adapter.limits();
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        software: info.device_type == wgpu::DeviceType::Cpu,
        shader_f16: adapter.features().contains(wgpu::Features::SHADER_F16),
        max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
        max_buffer_size: limits.max_buffer_size,
        max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
        max_compute_workgroup_size_x: limits.max_compute_workgroup_size_x,
        max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
        max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
        min_storage_buffer_offset_alignment: limits.min_storage_buffer_offset_alignment,
    }
}

/// Adapter order: discrete GPUs first, software rasterisers last.
fn preference(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// Every Vulkan adapter on this machine (hardware first, then software), without opening any.
pub fn list_adapters() -> Vec<AdapterSummary> {
    let instance = new_instance();
    let mut adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    adapters.sort_by_key(|a| preference(a.get_info().device_type));
    adapters.iter().map(summarize).collect()
}

impl GpuContext {
    /// Opens the best Vulkan adapter (a hardware GPU before a software one). With
    /// `allow_software` false, software adapters (lavapipe) count as no GPU.
    pub fn open(allow_software: bool) -> Result<GpuContext> {
        let instance = new_instance();
        let mut adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
        adapters.sort_by_key(|a| preference(a.get_info().device_type));
        let adapter = adapters
            .into_iter()
            .find(|a| allow_software || a.get_info().device_type != wgpu::DeviceType::Cpu)
            .ok_or_else(|| {
                Error::NoGpu(if allow_software {
                    "no Vulkan adapter found (install a Vulkan driver, e.g. mesa-vulkan-drivers)".into()
                } else {
                    "no hardware Vulkan adapter found (only software ones, or none)".into()
                })
            })?;
        let summary = summarize(&adapter);
        let limits = adapter.limits();
        let mut features = wgpu::Features::empty();
        if summary.shader_f16 {
            features |= wgpu::Features::SHADER_F16;
        }
        // Timestamps for `bench --profile`, where the adapter has them (never required; unused
        // queries cost nothing).
        let timestamps = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        features |= adapter.features() & timestamps;
        if !features.contains(wgpu::Features::TIMESTAMP_QUERY) {
            features.remove(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("tuneinfer"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| Error::Gpu(format!("cannot open {}: {e}", summary.name)))?;
        let fault: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
        let lost = fault.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut f) = lost.lock() {
                f.get_or_insert(format!("device lost ({reason:?}) {message}").trim().to_string());
            }
        });
        let uncaptured = fault.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut f) = uncaptured.lock() {
                f.get_or_insert(one_line(&e.to_string()));
            }
        }));
        let unused = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("unused"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let unused_input = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("unused input"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        Ok(GpuContext {
            unused_input,
            device,
            queue,
            limits,
            registry: super::registry::Registry::default(),
            unused,
            summary,
            fault,
            tiled_min_rows: std::sync::atomic::AtomicUsize::new(TILED_MIN_ROWS),
            groups_cap: std::sync::atomic::AtomicU32::new(u32::MAX),
            profiler: super::profile::Profiler::default(),
            buffers_created: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The process-wide context on the best adapter, software included (opened once).
    pub fn shared() -> Result<Arc<GpuContext>> {
        static SHARED: OnceLock<std::result::Result<Arc<GpuContext>, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                GpuContext::open(true).map(Arc::new).map_err(|e| match e {
                    Error::NoGpu(msg) => msg,
                    other => other.to_string(),
                })
            })
            .clone()
            .map_err(Error::NoGpu)
    }

    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// The pipeline of `key` (compiled on first use, inside the error scopes).
    pub(crate) fn kernel(&self, key: &super::registry::KernelKey) -> Result<std::sync::Arc<super::registry::Kernel>> {
        self.registry.get(key, |k| {
            self.checked(&format!("compiling {k}"), || super::registry::compile(&self.device, k))?
        })
    }

    /// Runs `work` inside validation and out-of-memory error scopes; the first error caught
    /// (or a fault recorded earlier) becomes [`Error::Gpu`] naming `what`.
    pub(crate) fn checked<T>(&self, what: &str, work: impl FnOnce() -> T) -> Result<T> {
        self.check_fault(what)?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = work();
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        if v.is_some() || o.is_some() {
            // A lost device shows up as invalid objects: report the loss, not its symptoms.
            let _ = self.device.poll(wgpu::PollType::Poll);
            self.check_fault(what)?;
        }
        if let Some(e) = o {
            return Err(Error::Gpu(format!(
                "{what}: out of GPU memory ({})",
                one_line(&e.to_string())
            )));
        }
        if let Some(e) = v {
            return Err(Error::Gpu(format!("{what}: {}", one_line(&e.to_string()))));
        }
        self.check_fault(what)?;
        Ok(out)
    }

    fn check_fault(&self, what: &str) -> Result<()> {
        match self.fault.lock() {
            Ok(f) => match f.as_ref() {
                Some(msg) => Err(Error::Gpu(format!("{what}: {msg}"))),
                None => Ok(()),
            },
            Err(_) => Err(Error::Gpu(format!("{what}: device state poisoned"))),
        }
    }

    /// Submits `encoder` and waits (bounded) for the GPU to finish it.
    pub(crate) fn submit_and_wait(&self, what: &str, encoder: wgpu::CommandEncoder) -> Result<()> {
        let submit = self.phase(super::profile::SUBMIT);
        let index = self.checked(what, || self.queue.submit([encoder.finish()]))?;
        drop(submit);
        let _wait = self.phase(super::profile::WAIT);
        self.wait(what, Some(index))
    }

    pub(crate) fn wait(&self, what: &str, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: index,
                timeout: Some(WAIT_LIMIT),
            })
            .map_err(|e| Error::Gpu(format!("{what}: waiting for the GPU failed: {e}")))?;
        self.check_fault(what)
    }

    /// Destroys the device, as a driver reset would: every later call must fail with a clear
    /// error (tests of the fault paths use this).
    #[doc(hidden)]
    pub fn simulate_device_loss(&self) {
        self.device.destroy();
    }

    /// From how many rows `lstm_step` and `dense` use their tiled (throughput) paths instead of
    /// the SMALL (latency) ones; both give the same bits. Default
    /// [`TILED_MIN_ROWS`]; 0 tiles everything (tests, tuning).
    pub fn set_tiled_min_rows(&self, rows: usize) {
        self.tiled_min_rows.store(rows, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn tiled_min_rows(&self) -> usize {
        self.tiled_min_rows.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Workgroups one dispatch may have per dimension; larger dispatches use the y dimension.
    pub fn groups_per_dimension(&self) -> u32 {
        self.limits
            .max_compute_workgroups_per_dimension
            .min(self.groups_cap.load(std::sync::atomic::Ordering::Relaxed))
            .max(1)
    }

    /// Lowers [`groups_per_dimension`](Self::groups_per_dimension) so that small batches take
    /// the two-dimensional dispatch path that only huge batches reach on a real device (tests;
    /// batches are still sized for the device's limit, so a dispatch of more than `groups`²
    /// workgroups then fails with a clear error).
    #[doc(hidden)]
    pub fn cap_groups_per_dimension(&self, groups: u32) {
        self.groups_cap
            .store(groups.max(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// Does the device write timestamps (the `TIMESTAMP_QUERY` feature)? Profiling needs it.
    pub fn has_timestamps(&self) -> bool {
        self.profiler.has_timestamps(&self.device)
    }

    /// Makes this context behave as an adapter without timestamp queries (tests).
    #[doc(hidden)]
    pub fn simulate_no_timestamps(&self) {
        self.profiler.simulate_no_timestamps();
    }

    /// Starts profiling every later recording and host phase (an error naming the adapter
    /// when it cannot write timestamps).
    pub fn start_profile(&self) -> Result<()> {
        self.profiler.start(&self.device, &self.summary.name)
    }

    /// Stops profiling, waits for the device and reads every recorded timestamp back.
    pub fn finish_profile(&self) -> Result<super::profile::ProfileReport> {
        self.wait("profile", None)?;
        self.profiler.finish(&self.device, &self.queue)
    }

    /// Times host `phase` until the guard drops (nothing while profiling is off).
    pub(crate) fn phase(&self, phase: &'static str) -> super::profile::PhaseTimer {
        self.profiler.phase(phase)
    }

    /// How many device buffers the library created on this context so far: weights, work
    /// buffers, read-backs, parameter blocks (not the profiler's query buffers). A predictor's
    /// second batch of the same or a smaller size creates none (tests count them).
    pub fn buffers_created(&self) -> u64 {
        self.buffers_created.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn count_buffer(&self) {
        self.buffers_created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Readable keys of the pipelines compiled so far (e.g. `lstm_step{IN_DIM=8,UNITS=64,...}`).
    pub fn compiled_kernels(&self) -> Vec<String> {
        self.registry.keys()
    }

    /// Blocks until all submitted work is done (what benchmarks time).
    pub fn sync(&self) -> Result<()> {
        self.wait("sync", None)
    }
}

/// The first line of a (often multi-line) wgpu error text.
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.join(" | ")
}
