//! One request, whatever the door (issue 52 item 2): the options the command line, the C ABI
//! and the Python package share, with their defaults and bounds declared once here; loading a
//! predictor from them, and checking a decode request (`--decode`, `--beam`, `--top`). The CLI
//! reads its words into these; C and Python fill them from their arguments.

use std::path::{Path, PathBuf};

use crate::engine::{DeviceChoice, Engine, Precision};
use crate::error::{Error, Result};
use crate::predict::{DecodeMode, MAX_BEAM_WIDTH};

/// `--arch` when none is given (the README's first command).
pub const DEFAULT_ARCH: &str = "gfx906";
/// `--solver` when none is given (predict, batch, train, eval, bench, C and Python).
pub const DEFAULT_SOLVER: &str = "ConvAsm1x1U";
/// `--device` when none is given.
pub const DEFAULT_DEVICE: &str = "auto";
/// `--precision` when none is given.
pub const DEFAULT_PRECISION: &str = "f32";

/// An integer option's name and bounds.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
}

/// `--cu`: compute units of a GPU; a generous bound that still fits the rules' arithmetic.
pub const CU: Bound = Bound {
    name: "cu",
    min: 1,
    max: 65_536,
};
/// `--threads`: worker threads.
pub const THREADS: Bound = Bound {
    name: "threads",
    min: 1,
    max: 1024,
};
/// `--beam`: a constrained beam's width (wider would only exhaust memory).
pub const BEAM: Bound = Bound {
    name: "beam",
    min: 1,
    max: MAX_BEAM_WIDTH as u64,
};

impl Bound {
    /// `value` within the bounds, or a usage error naming the option.
    pub fn check(self, value: u64) -> Result<u64> {
        if (self.min..=self.max).contains(&value) {
            Ok(value)
        } else {
            Err(Error::Usage(format!(
                "--{}: expected an integer in {}..={}, got '{value}'",
                self.name, self.min, self.max
            )))
        }
    }

    /// The option's text as an integer within the bounds (None: absent).
    pub fn parse(self, text: Option<&str>) -> Result<Option<u64>> {
        let Some(text) = text else { return Ok(None) };
        match text.parse::<u64>() {
            Ok(v) => self.check(v).map(Some),
            Err(_) => Err(Error::Usage(format!(
                "--{}: expected an integer in {}..={}, got '{}'",
                self.name,
                self.min,
                self.max,
                crate::error::quote_short(text)
            ))),
        }
    }
}

/// What `Engine::load` needs, with the CLI's defaults for what is `None`.
#[derive(Debug, Default, Clone)]
pub struct Request<'a> {
    pub arch: Option<&'a str>,
    pub solver: Option<&'a str>,
    /// `--models DIR`: None searches the default order ($TUNEINFER_MODELS, weights/, ...).
    pub models: Option<&'a str>,
    /// "auto" (default), "gpu" or "cpu".
    pub device: Option<&'a str>,
    /// "f32" (default) or "f16".
    pub precision: Option<&'a str>,
    pub compute_units: Option<u32>,
    pub catalogue: Option<&'a str>,
    pub threads: Option<usize>,
    /// `--method`: None = "best", as the CLI.
    pub method: Option<&'a str>,
    /// `--system-db`: None = MIOpen's installed one (as the CLI finds it), "none", or a file.
    pub system_db: Option<&'a str>,
}

/// Loads the model the options name, exactly as `tuneinfer predict` does.
pub fn load(opts: &Request<'_>) -> Result<Engine> {
    load_noting(opts).map(|(engine, _)| engine)
}

/// [`load`], plus the note `tuneinfer predict` prints on stderr after loading (device `auto`
/// computing on the CPU), if any.
pub fn load_noting(opts: &Request<'_>) -> Result<(Engine, Option<String>)> {
    let device = DeviceChoice::parse(opts.device.unwrap_or(DEFAULT_DEVICE))?;
    let precision = Precision::parse(opts.precision.unwrap_or(DEFAULT_PRECISION))?;
    if let Some(cu) = opts.compute_units {
        CU.check(u64::from(cu))?;
    }
    if let Some(t) = opts.threads {
        THREADS.check(t as u64)?;
    }
    let dirs = crate::models::model_dirs(opts.models.map(Path::new))?;
    let catalogue = opts.catalogue.map(PathBuf::from);
    let compute_units = opts.compute_units;
    let (engine, note) = Engine::load_noting(
        opts.arch.unwrap_or(DEFAULT_ARCH),
        opts.solver.unwrap_or(DEFAULT_SOLVER),
        &dirs,
        device,
        precision,
    )?;
    let mut engine = engine.with_target(|p| p.with_compute_units(compute_units).with_catalogue_dir(catalogue));
    if let Some(n) = opts.threads {
        engine = engine.with_threads(n);
    }
    Ok((engine, note))
}

/// The CLI's answering path for `engine` with the options' `--method` and `--system-db`
/// (defaults the same as `tuneinfer predict`'s).
pub fn answering(opts: &Request<'_>, engine: &Engine) -> Result<crate::method::Answering> {
    let method = crate::method::Method::parse(opts.method)?;
    let system = crate::method::system_db(opts.arch.unwrap_or(DEFAULT_ARCH), opts.compute_units, opts.system_db)?;
    crate::method::Answering::new(method, std::slice::from_ref(engine), system.db)
}

/// The answers of `problems` as `tuneinfer predict` gives them (one solver): the tuned value, or
/// the chosen predictor's answer first; a solver that does not apply is
/// [`Error::NotApplicable`].
pub fn answer(
    answering: &crate::method::Answering,
    engine: &Engine,
    problems: &[crate::problem::ConvProblem],
    mode: DecodeMode,
) -> Vec<Result<Vec<crate::predict::Prediction>>> {
    if problems.is_empty() {
        return Vec::new();
    }
    let (answers, _) = answering.answer(std::slice::from_ref(engine), problems, Some(mode));
    answers
        .into_iter()
        .map(|mut per_engine| match per_engine.pop() {
            Some((crate::engines::SolverAnswer::Predicted(list), _)) => Ok(list),
            Some((crate::engines::SolverAnswer::NotApplicable(reason), _)) => Err(Error::NotApplicable {
                solver: engine.host().solver.name().to_string(),
                reason,
            }),
            Some((crate::engines::SolverAnswer::Failed(e), _)) => Err(e),
            None => Err(Error::Internal("no answer".into())),
        })
        .collect()
}

/// A decode request: the model's default (`--decode auto`), MIOpen's greedy walk
/// (`--decode miopen`) or a beam (`--beam width --top top`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decode {
    Default,
    Greedy,
    /// `top` None: all `width` answers (the CLI's default for `--top`).
    Beam {
        width: usize,
        top: Option<usize>,
    },
}

impl Decode {
    /// The command line's `--decode auto|miopen`, `--beam K` and `--top N` (texts as given).
    pub fn from_words(decode: Option<&str>, beam: Option<&str>, top: Option<&str>) -> Result<Decode> {
        match (decode, beam) {
            (Some(_), Some(_)) => Err(Error::Usage("--decode and --beam exclude each other: choose one".into())),
            (Some("miopen" | "auto") | None, None) if top.is_some() => Err(Error::Usage("--top needs --beam K".into())),
            (Some("auto") | None, None) => Ok(Decode::Default),
            (Some("miopen"), None) => Ok(Decode::Greedy),
            (Some(other), None) => Err(Error::Usage(format!(
                "--decode: unknown mode '{}' (auto or miopen; or use --beam K)",
                crate::error::quote_short(other)
            ))),
            (None, Some(_)) => {
                let width = BEAM.parse(beam)?.unwrap_or(1) as usize;
                let top = Bound {
                    name: "top",
                    min: 1,
                    max: width as u64,
                }
                .parse(top)?
                .map(|t| t as usize);
                let d = Decode::Beam { width, top };
                d.mode()?;
                Ok(d)
            }
        }
    }

    /// The mode asked for, checked (None: each model's default, `--decode auto`).
    pub fn mode(self) -> Result<Option<DecodeMode>> {
        match self {
            Decode::Default => Ok(None),
            Decode::Greedy => Ok(Some(DecodeMode::Miopen)),
            Decode::Beam { width, top } => {
                let width = BEAM.check(width as u64)? as usize;
                let top = Bound {
                    name: "top",
                    min: 1,
                    max: width as u64,
                }
                .check(top.unwrap_or(width) as u64)? as usize;
                Ok(Some(DecodeMode::Beam { width, top }))
            }
        }
    }

    /// The mode to run on `engine` (checked as the CLI checks `--beam` and `--top`), and
    /// whether the answers are ranked (a beam was asked for).
    pub fn resolve(self, engine: &Engine) -> Result<(DecodeMode, bool)> {
        let ranked = matches!(self, Decode::Beam { .. });
        Ok((self.mode()?.unwrap_or_else(|| engine.default_mode()), ranked))
    }
}
