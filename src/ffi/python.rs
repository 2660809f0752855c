//! The Python extension module `tuneinfer._native` (feature `python`, built by maturin;
//! `python/tuneinfer/__init__.py` re-exports it): the CLI's answers as plain Python objects.
//!
//! ```python
//! import tuneinfer
//! p = tuneinfer.Predictor("gfx908", "ConvAsm1x1U", models="../shared/miopen/models")
//! p.predict("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F", beam=4, top=2)
//! ```
//!
//! Failures raise `tuneinfer.TuneinferError` with the library's message and the CLI's exit
//! code as `.code`. The GIL is released while a model loads and while it predicts.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use crate::request::{self, Decode, Request};
use crate::engine::Engine;
use crate::error::Error;
use crate::predict::Prediction;
use crate::problem::ConvProblem;

create_exception!(
    tuneinfer,
    TuneinferError,
    PyException,
    "A tuneinfer failure: the library's message; `.code` is the CLI's exit code for it (2 usage, 3 I/O, 4 model format, 5 invalid or unsupported problem, 6 unknown solver or model not found, 9 GPU); `.index` is the problem's position in a batch (None otherwise)."
);

/// The exception of a library error (`index`: the problem's position in a batch).
fn error(py: Python<'_>, e: &Error, index: Option<usize>) -> PyErr {
    let err = TuneinferError::new_err(e.to_string());
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in practice; if it did,
    // the message alone still describes the failure.
    let _ = value.setattr("code", e.exit_code());
    let _ = value.setattr("index", index);
    err
}

/// One predicted configuration.
#[pyclass(frozen, module = "tuneinfer", name = "Prediction", eq)]
#[derive(Clone, PartialEq)]
pub struct PyPrediction {
    /// 1 for the best answer.
    #[pyo3(get)]
    rank: usize,
    /// The config as MIOpen prints it, e.g. "2,8,4,16,1,4,2,2".
    #[pyo3(get)]
    config: String,
    /// Sum of the log-probabilities of the chosen tokens; None for a static default.
    #[pyo3(get)]
    score: Option<f64>,
    /// "model", or "default" (the solver's static default).
    #[pyo3(get)]
    source: &'static str,
}

#[pymethods]
impl PyPrediction {
    fn __repr__(&self) -> String {
        let score = self.score.map(|s| format!("{s:.6}")).unwrap_or_else(|| "None".into());
        format!(
            "Prediction(rank={}, config='{}', score={score}, source='{}')",
            self.rank, self.config, self.source
        )
    }

    /// The prediction as a dict: rank, config, score, source.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("rank", self.rank)?;
        d.set_item("config", &self.config)?;
        d.set_item("score", self.score)?;
        d.set_item("source", self.source)?;
        Ok(d)
    }
}

fn to_python(list: Vec<Prediction>) -> Vec<PyPrediction> {
    list.into_iter()
        .enumerate()
        .map(|(i, p)| PyPrediction {
            rank: i + 1,
            config: p.config,
            score: p.score.map(f64::from),
            source: p.source.as_str(),
        })
        .collect()
}

/// A loaded model of (arch, solver) on the CPU or a GPU; safe to share between threads.
#[pyclass(frozen, module = "tuneinfer", name = "Predictor")]
pub struct PyPredictor {
    engine: Engine,
    note: Option<String>,
    /// The CLI's answering path (`--method`, `--system-db`).
    answering: crate::method::Answering,
}

/// The decode request of predict's keyword arguments, checked as the CLI checks
/// `--decode`, `--beam` and `--top`.
fn decode_of(beam: Option<usize>, top: Option<usize>, decode: Option<&str>) -> Result<Decode, Error> {
    match (decode, beam) {
        (Some(d), Some(_)) if d != "auto" => Err(Error::Usage(format!(
            "decode='{d}' and beam exclude each other: choose one"
        ))),
        (_, Some(width)) => Ok(Decode::Beam { width, top }),
        (_, None) if top.is_some() => Err(Error::Usage("top needs beam=K".into())),
        (None | Some("auto"), None) => Ok(Decode::Default),
        (Some("miopen"), None) => Ok(Decode::Greedy),
        (Some(other), None) => Err(Error::Usage(format!(
            "decode: unknown mode '{other}' (auto or miopen; or use beam=K)"
        ))),
    }
}

#[pymethods]
impl PyPredictor {
    /// Loads the model as `tuneinfer predict` does, with its defaults for what is None
    /// (`crate::request`): `models` a directory (None: the default
    /// search order), `device` "auto", "gpu" or "cpu", `precision` "f32" or "f16",
    /// `compute_units` (--cu), `catalogue` (--catalogue), `threads` (batch workers).
    #[new]
    #[pyo3(signature = (arch=None, solver=None, models=None, device=None, precision=None, compute_units=None, catalogue=None, threads=None, method=None, system_db=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        arch: Option<&str>,
        solver: Option<&str>,
        models: Option<std::path::PathBuf>,
        device: Option<&str>,
        precision: Option<&str>,
        compute_units: Option<u32>,
        catalogue: Option<std::path::PathBuf>,
        threads: Option<usize>,
        method: Option<&str>,
        system_db: Option<std::path::PathBuf>,
    ) -> PyResult<PyPredictor> {
        let system_db = system_db.map(|s| s.to_string_lossy().into_owned());
        let models = models.map(|m| m.to_string_lossy().into_owned());
        let catalogue = catalogue.map(|c| c.to_string_lossy().into_owned());
        let opts = Request {
            arch,
            solver,
            models: models.as_deref(),
            device,
            precision,
            catalogue: catalogue.as_deref(),
            compute_units,
            threads,
            method,
            system_db: system_db.as_deref(),
        };
        let (engine, note, answering) = py
            .detach(|| {
                let (engine, note) = request::load_noting(&opts)?;
                let answering = request::answering(&opts, &engine)?;
                Ok::<_, Error>((engine, note, answering))
            })
            .map_err(|e| error(py, &e, None))?;
        Ok(PyPredictor {
            engine,
            note,
            answering,
        })
    }

    /// What `tuneinfer predict` prints on stderr after loading (device "auto" computing on the
    /// CPU), or None.
    #[getter]
    fn note(&self) -> Option<String> {
        self.note.clone()
    }

    /// The solver's name as MIOpen spells it.
    #[getter]
    fn solver(&self) -> &'static str {
        self.engine.host().solver.name()
    }

    /// "cpu" or the GPU adapter's description.
    #[getter]
    fn device(&self) -> String {
        self.engine.device_name()
    }

    /// Predicts one problem (a perf-db key or a MIOpenDriver line): a list of Predictions,
    /// best first. Without `beam` the one answer of `decode` ("auto", the default, or
    /// "miopen"); with `beam=K` the best `top` (default K) of a constrained beam of K.
    #[pyo3(signature = (problem, beam=None, top=None, decode=None))]
    fn predict(
        &self,
        py: Python<'_>,
        problem: &str,
        beam: Option<usize>,
        top: Option<usize>,
        decode: Option<&str>,
    ) -> PyResult<Vec<PyPrediction>> {
        let run = || -> Result<Vec<Prediction>, Error> {
            let (mode, _) = decode_of(beam, top, decode)?.resolve(&self.engine)?;
            let problem = ConvProblem::parse(problem)?;
            py.detach(|| request::answer(&self.answering, &self.engine, &[problem], mode))
                .pop()
                .unwrap_or_else(|| Err(Error::Internal("no answer".into())))
        };
        run().map(to_python).map_err(|e| error(py, &e, None))
    }

    /// Predicts a list of problems, batched over the worker threads: one list of Predictions
    /// per problem, in order. `errors="raise"` (default) raises the first failure (its
    /// `.index` says which problem); `errors="return"` puts each failure's TuneinferError in
    /// its problem's place instead.
    #[pyo3(signature = (problems, beam=None, top=None, decode=None, errors="raise"))]
    fn predict_batch(
        &self,
        py: Python<'_>,
        problems: Vec<String>,
        beam: Option<usize>,
        top: Option<usize>,
        decode: Option<&str>,
        errors: &str,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let raise = match errors {
            "raise" => true,
            "return" => false,
            other => {
                let e = Error::Usage(format!("errors: expected 'raise' or 'return', got '{other}'"));
                return Err(error(py, &e, None));
            }
        };
        let (mode, _) = decode_of(beam, top, decode)
            .and_then(|d| d.resolve(&self.engine))
            .map_err(|e| error(py, &e, None))?;
        let parsed: Vec<Result<ConvProblem, Error>> = problems.iter().map(|t| ConvProblem::parse(t)).collect();
        let ok: Vec<ConvProblem> = parsed.iter().filter_map(|p| p.as_ref().ok().cloned()).collect();
        let mut predicted = py
            .detach(|| request::answer(&self.answering, &self.engine, &ok, mode))
            .into_iter();
        let mut out = Vec::with_capacity(problems.len());
        for (index, p) in parsed.into_iter().enumerate() {
            let result = p.and_then(|_| {
                predicted
                    .next()
                    .unwrap_or_else(|| Err(Error::Usage("internal: no result".into())))
            });
            match result {
                Ok(list) => out.push(to_python(list).into_pyobject(py)?.into_any().unbind()),
                Err(e) if raise => return Err(error(py, &e, Some(index))),
                Err(e) => out.push(error(py, &e, Some(index)).into_value(py).into_any()),
            }
        }
        Ok(out)
    }

    /// For `tools/ffi_overhead.py`: nanoseconds of one `ConvProblem::parse` +
    /// `Engine::predict_one` with the model's default decoding, timed inside Rust (the GIL
    /// released), so that Python's per-call overhead is the difference with `predict`.
    fn _rust_predict_ns(&self, py: Python<'_>, problem: &str) -> PyResult<u64> {
        let mode = self.engine.default_mode();
        py.detach(|| {
            let start = std::time::Instant::now();
            let p = ConvProblem::parse(problem)?;
            std::hint::black_box(self.engine.predict_one(&p, mode)?);
            Ok(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX))
        })
        .map_err(|e: Error| error(py, &e, None))
    }

    fn __repr__(&self) -> String {
        format!(
            "Predictor(solver='{}', device='{}')",
            self.engine.host().solver.name(),
            self.engine.device_name()
        )
    }
}

/// The distinct MIOpen convolution problems of an ONNX network as MIOpenDriver lines, as
/// `tuneinfer problems --onnx PATH` prints them (`crate::onnx`): `batch` the batch size (needed
/// when the model's is symbolic), `training` adds backward data and weights, `precision`
/// "fp32"|"fp16"|"bf16" (default: the model's types), `layout` "NCHW"|"NHWC". What the CLI says
/// on stderr (asymmetric padding rewritten, a batch replaced) comes as `UserWarning`s.
#[pyfunction]
#[pyo3(signature = (path, batch=None, training=false, precision=None, layout=None))]
fn problems_from_onnx(
    py: Python<'_>,
    path: std::path::PathBuf,
    batch: Option<u64>,
    training: bool,
    precision: Option<&str>,
    layout: Option<&str>,
) -> PyResult<Vec<String>> {
    let usage = |e: String| error(py, &Error::Usage(e), None);
    let precision = match precision.map(|p| p.to_ascii_lowercase()) {
        None => None,
        Some(p) => Some(match p.as_str() {
            "fp32" => crate::problem::Precision::Fp32,
            "fp16" => crate::problem::Precision::Fp16,
            "bf16" => crate::problem::Precision::Bf16,
            _ => return Err(usage(format!("precision '{p}': expected 'fp32', 'fp16' or 'bf16'"))),
        }),
    };
    let layout = match layout.map(|l| l.to_ascii_uppercase()) {
        None => crate::problem::Layout::Nchw,
        Some(l) if l == "NCHW" => crate::problem::Layout::Nchw,
        Some(l) if l == "NHWC" => crate::problem::Layout::Nhwc,
        Some(l) => return Err(usage(format!("layout '{l}': expected 'NCHW' or 'NHWC'"))),
    };
    if batch == Some(0) || batch.is_some_and(|b| b > crate::problem::MAX_FIELD_VALUE) {
        return Err(usage(format!(
            "batch {}: expected 1 to {}",
            batch.unwrap_or(0),
            crate::problem::MAX_FIELD_VALUE
        )));
    }
    let options = crate::onnx::Options {
        batch,
        training,
        precision,
        layout,
    };
    let network = py
        .detach(|| crate::onnx::problems_from_file(&path, &options))
        .map_err(|e| error(py, &e, None))?;
    if !network.notes.is_empty() {
        let warnings = py.import("warnings")?;
        for note in &network.notes {
            warnings.call_method1("warn", (note.as_str(),))?;
        }
    }
    Ok(network.problems.into_iter().map(|p| p.line).collect())
}

/// Runs the `tuneinfer` command line with `args` (without the program name), exactly as the
/// binary does (its output on this process's stdout and stderr); returns its exit code.
/// `tuneinfer.userdb(...)` builds the arguments.
#[pyfunction]
fn run_cli(py: Python<'_>, args: Vec<String>) -> i32 {
    py.detach(|| crate::cli::run(&args))
}

/// The compiled part of the `tuneinfer` package.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPredictor>()?;
    m.add_class::<PyPrediction>()?;
    m.add_function(wrap_pyfunction!(problems_from_onnx, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add("TuneinferError", m.py().get_type::<TuneinferError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ABI_VERSION", super::ABI_VERSION)?;
    Ok(())
}
