//! The engine users hold: a loaded model on the CPU or the GPU, chosen by a [`DeviceChoice`],
//! the same answers either way (`auto` falls back to the CPU, and a GPU failure in `auto` mode
//! is retried there, with a note the caller takes: the library prints nothing). Above both
//! `cpu`/`predict` (the reference path) and `gpu`; built without the `gpu` feature, every GPU
//! request fails with [`NOT_COMPILED`].

use std::path::PathBuf;

use crate::error::{Error, Result};
#[cfg(feature = "gpu")]
use crate::gpu::{GpuContext, GpuPredictor};
use crate::predict::{DecodeMode, Prediction, Predictor};
use crate::problem::ConvProblem;

/// Which device computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceChoice {
    /// A hardware GPU when there is one, else the CPU (with a note on stderr).
    Auto,
    /// The GPU (a software Vulkan adapter such as lavapipe counts); an error when there is none.
    Gpu,
    Cpu,
}

impl DeviceChoice {
    pub fn parse(text: &str) -> Result<DeviceChoice> {
        match text {
            "auto" => Ok(DeviceChoice::Auto),
            "gpu" => Ok(DeviceChoice::Gpu),
            "cpu" => Ok(DeviceChoice::Cpu),
            other => Err(Error::Usage(format!(
                "--device: expected auto, gpu or cpu, got '{other}'"
            ))),
        }
    }
}

pub use crate::gpu::Precision;

/// The message of every GPU request in a build without the `gpu` feature.
pub const NOT_COMPILED: &str = "not compiled with GPU support (rebuild with the default 'gpu' feature)";

/// A loaded model on the CPU or the GPU.
pub enum Engine {
    Cpu(Predictor),
    #[cfg(feature = "gpu")]
    Gpu {
        gpu: Box<GpuPredictor>,
        /// In `auto` mode a GPU failure is retried on the CPU.
        fallback: bool,
        /// What a user should be told (a GPU failure retried on the CPU): [`Engine::take_notes`].
        notes: Notes,
    },
}

/// Notes an engine collects while it predicts (the library prints nothing).
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub struct Notes(std::sync::Mutex<Vec<String>>);

#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
impl Notes {
    fn push(&self, note: String) {
        if let Ok(mut n) = self.0.lock() {
            if !n.contains(&note) {
                n.push(note);
            }
        }
    }

    fn take(&self) -> Vec<String> {
        self.0.lock().map(|mut n| std::mem::take(&mut *n)).unwrap_or_default()
    }
}

impl Engine {
    /// Loads the model of (`arch`, `solver`) for `device`. `auto` without a hardware GPU (or
    /// when opening it fails) loads on the CPU ([`Engine::load_noting`] says so).
    pub fn load(
        arch: &str,
        solver: &str,
        model_dirs: &[PathBuf],
        device: DeviceChoice,
        precision: Precision,
    ) -> Result<Engine> {
        Engine::load_noting(arch, solver, model_dirs, device, precision).map(|(engine, _)| engine)
    }

    /// [`Engine::load`], plus the note to show a user when `auto` fell back to the CPU (given
    /// only when the model loaded: a failed load is its error alone).
    pub fn load_noting(
        arch: &str,
        solver: &str,
        model_dirs: &[PathBuf],
        device: DeviceChoice,
        precision: Precision,
    ) -> Result<(Engine, Option<String>)> {
        let no_note = |engine: Engine| (engine, None);
        // A cell served without a network has nothing to compute: the CPU answers it, whatever
        // the device (no GPU is opened for it, and no note).
        let solver_ref = crate::solvers::by_name(solver)?;
        let resolved = match crate::models::resolve(arch, solver_ref, model_dirs).ok() {
            Some(r) if matches!(r.located, crate::models::Located::Neighbour(..)) => {
                return Ok(no_note(Engine::Cpu(Predictor::from_resolved(arch, solver_ref, r)?)));
            }
            other => other,
        };
        // The CPU loads what was found (a failed search is searched again for its error).
        let cpu = |resolved: Option<crate::models::Resolved>| match resolved {
            Some(r) => Predictor::from_resolved(arch, solver_ref, r),
            None => Predictor::load(arch, solver, model_dirs),
        };
        match device {
            DeviceChoice::Cpu => {
                if precision == Precision::F16 {
                    return Err(Error::Usage(
                        "--precision f16 is for the GPU; the CPU computes in f32".into(),
                    ));
                }
                Ok(no_note(Engine::Cpu(cpu(resolved)?)))
            }
            DeviceChoice::Gpu => Engine::load_gpu(arch, solver, model_dirs, true, false, precision).map(no_note),
            DeviceChoice::Auto => match Engine::load_gpu(arch, solver, model_dirs, false, true, precision) {
                Ok(engine) => Ok(no_note(engine)),
                Err(e @ (Error::NoGpu(_) | Error::Gpu(_))) => {
                    let engine = Engine::Cpu(cpu(resolved)?);
                    Ok((engine, Some(format!("note: {e}; computing on the CPU"))))
                }
                Err(e) => Err(e),
            },
        }
    }

    #[cfg(feature = "gpu")]
    fn load_gpu(
        arch: &str,
        solver: &str,
        dirs: &[PathBuf],
        allow_software: bool,
        fallback: bool,
        precision: Precision,
    ) -> Result<Engine> {
        let ctx = if allow_software {
            GpuContext::shared()?
        } else {
            std::sync::Arc::new(GpuContext::open(false)?)
        };
        let gpu = GpuPredictor::load_with(arch, solver, dirs, ctx, precision)?;
        Ok(Engine::gpu(gpu, fallback))
    }

    #[cfg(not(feature = "gpu"))]
    fn load_gpu(
        _arch: &str,
        _solver: &str,
        _dirs: &[PathBuf],
        _software: bool,
        _fallback: bool,
        _precision: Precision,
    ) -> Result<Engine> {
        Err(Error::NoGpu(NOT_COMPILED.into()))
    }

    /// A GPU engine; with `fallback`, a GPU failure is retried on the CPU (and noted).
    #[cfg(feature = "gpu")]
    pub fn gpu(gpu: GpuPredictor, fallback: bool) -> Engine {
        Engine::Gpu {
            gpu: Box::new(gpu),
            fallback,
            notes: Notes::default(),
        }
    }

    /// The notes collected since the last call (e.g. "GPU error ...; computing on the CPU").
    pub fn take_notes(&self) -> Vec<String> {
        match self {
            Engine::Cpu(_) => Vec::new(),
            #[cfg(feature = "gpu")]
            Engine::Gpu { notes, .. } => notes.take(),
        }
    }

    /// The CPU predictor (for the solver, target and model).
    pub fn host(&self) -> &Predictor {
        match self {
            Engine::Cpu(p) => p,
            #[cfg(feature = "gpu")]
            Engine::Gpu { gpu, .. } => gpu.host(),
        }
    }

    /// The model's most accurate single-answer decoding ([`Predictor::default_mode`]).
    pub fn default_mode(&self) -> DecodeMode {
        self.host().default_mode()
    }

    /// "cpu" or the adapter's one-line description.
    pub fn device_name(&self) -> String {
        match self {
            Engine::Cpu(_) => "cpu".into(),
            #[cfg(feature = "gpu")]
            Engine::Gpu { gpu, .. } => gpu.context().adapter().one_line(),
        }
    }

    /// Applies `f` to the predictor that prepares problems (target options such as compute
    /// units or the catalogue directory), whichever device computes.
    pub fn with_target(self, f: impl FnOnce(Predictor) -> Predictor) -> Engine {
        match self {
            Engine::Cpu(p) => Engine::Cpu(f(p)),
            #[cfg(feature = "gpu")]
            Engine::Gpu { gpu, fallback, notes } => Engine::Gpu {
                gpu: Box::new(gpu.map_host(f)),
                fallback,
                notes,
            },
        }
    }

    /// Limits the host's worker threads: the CPU path, and on the GPU the host side (preparing
    /// problems, parsing read-backs, answers).
    pub fn with_threads(self, threads: usize) -> Engine {
        self.with_target(|p| p.with_threads(threads))
    }

    pub fn predict_one(&self, problem: &ConvProblem, mode: DecodeMode) -> Result<Vec<Prediction>> {
        self.predict_batch(std::slice::from_ref(problem), mode)
            .pop()
            .unwrap_or_else(|| Err(Error::Internal("no result".into())))
    }

    /// One result per problem, in order; the same answers on every device.
    pub fn predict_batch(&self, problems: &[ConvProblem], mode: DecodeMode) -> Vec<Result<Vec<Prediction>>> {
        match self {
            Engine::Cpu(p) => p.predict_batch(problems, mode),
            #[cfg(feature = "gpu")]
            Engine::Gpu { gpu, fallback, notes } => {
                let mut results = gpu.predict_batch(problems, mode);
                if *fallback && results.iter().any(|r| matches!(r, Err(Error::Gpu(_)))) {
                    if let Some(Err(e)) = results.iter().find(|r| matches!(r, Err(Error::Gpu(_)))) {
                        notes.push(format!("note: {e}; computing on the CPU"));
                    }
                    let redo: Vec<usize> = (0..results.len())
                        .filter(|&i| matches!(results[i], Err(Error::Gpu(_))))
                        .collect();
                    let again: Vec<ConvProblem> = redo.iter().map(|&i| problems[i].clone()).collect();
                    for (i, r) in redo.into_iter().zip(gpu.host().predict_batch(&again, mode)) {
                        results[i] = r;
                    }
                }
                results
            }
        }
    }
}
