//! What the C ABI and the Python package share: loading a predictor from plain options and
//! checking a decode request the way the CLI checks `--decode`, `--beam` and `--top`.

use std::path::{Path, PathBuf};

use crate::engine::{DeviceChoice, Engine, Precision};
use crate::error::{Error, Result};
use crate::predict::{DecodeMode, MAX_BEAM_WIDTH};

/// The CLI's defaults for `--arch` and `--solver` (the same values as `src/cli/`; the C and
/// Python tests compare answers with the CLI's on the README's examples, which use them).
pub const DEFAULT_ARCH: &str = "gfx906";
pub const DEFAULT_SOLVER: &str = "ConvAsm1x1U";

/// What `Engine::load` needs, with the CLI's defaults for what is `None`.
#[derive(Debug, Default, Clone)]
pub struct LoadOptions<'a> {
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
pub fn load(opts: &LoadOptions<'_>) -> Result<Engine> {
    load_noting(opts).map(|(engine, _)| engine)
}

/// [`load`], plus the note `tuneinfer predict` prints on stderr after loading (device `auto`
/// computing on the CPU), if any.
pub fn load_noting(opts: &LoadOptions<'_>) -> Result<(Engine, Option<String>)> {
    let device = DeviceChoice::parse(opts.device.unwrap_or("auto"))?;
    let precision = Precision::parse(opts.precision.unwrap_or("f32"))?;
    if let Some(cu) = opts.compute_units {
        if !(1..=65_536).contains(&cu) {
            return Err(Error::Usage(format!("compute units: expected 1..=65536, got {cu}")));
        }
    }
    if let Some(t) = opts.threads {
        if !(1..=1024).contains(&t) {
            return Err(Error::Usage(format!("threads: expected 1..=1024, got {t}")));
        }
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
pub fn answering(opts: &LoadOptions<'_>, engine: &Engine) -> Result<crate::method::Answering> {
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
    /// The mode to run on `engine` (checked as the CLI checks `--beam` and `--top`), and
    /// whether the answers are ranked (a beam was asked for).
    pub fn resolve(self, engine: &Engine) -> Result<(DecodeMode, bool)> {
        match self {
            Decode::Default => Ok((engine.default_mode(), false)),
            Decode::Greedy => Ok((DecodeMode::Miopen, false)),
            Decode::Beam { width, top } => {
                if !(1..=MAX_BEAM_WIDTH).contains(&width) {
                    return Err(Error::Usage(format!(
                        "beam width: expected 1..={MAX_BEAM_WIDTH}, got {width}"
                    )));
                }
                let top = top.unwrap_or(width);
                if top == 0 {
                    return Err(Error::Usage("top: expected a positive integer, got 0".into()));
                }
                if top > width {
                    return Err(Error::Usage(format!("top {top} is larger than beam width {width}")));
                }
                Ok((DecodeMode::Beam { width, top }, true))
            }
        }
    }
}
