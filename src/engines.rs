//! Several solvers at once: every solver that has a model on an arch, each with its own
//! [`Engine`], for `predict --solver all` and `userdb`. Problems go to every engine; a solver
//! that does not apply to a problem says so, and is counted, not an error.

use std::path::PathBuf;

use crate::engine::{DeviceChoice, Engine, Precision};
use crate::error::{Error, Result};
use crate::predict::{DecodeMode, Prediction, Predictor};
use crate::problem::ConvProblem;

/// The solvers of a set: one name, or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverChoice<'a> {
    One(&'a str),
    All,
}

impl<'a> SolverChoice<'a> {
    pub fn parse(text: &'a str) -> SolverChoice<'a> {
        if text == "all" {
            SolverChoice::All
        } else {
            SolverChoice::One(text)
        }
    }
}

/// One answer set of one solver for one problem.
#[derive(Debug)]
pub enum SolverAnswer {
    /// The solver's model answered (its static default when it found nothing valid: see
    /// [`Prediction::source`]).
    Predicted(Vec<Prediction>),
    /// The solver does not apply to the problem (the reason).
    NotApplicable(String),
    /// Something else went wrong.
    Failed(Error),
}

/// The engines of a set, each with the decoding that gives its model's best single answer
/// unless a mode is forced.
pub struct Engines {
    pub engines: Vec<Engine>,
    /// Solvers left out: (name, why: no model on this arch, ...).
    pub unavailable: Vec<(&'static str, String)>,
    /// What a user should be told (`auto` computing on the CPU), once.
    pub note: Option<String>,
}

/// How every engine of a set is loaded.
pub struct LoadOptions<'a> {
    pub arch: &'a str,
    pub dirs: &'a [PathBuf],
    pub device: DeviceChoice,
    pub precision: Precision,
    /// Applied to each engine's host predictor (compute units, catalogue directory, threads).
    pub configure: &'a dyn Fn(Predictor) -> Predictor,
}

impl Engines {
    /// Loads `choice` on `options.arch`. For `All`, a solver with no model on the arch (none in
    /// the model directories, or none MIOpen's rules allow there) is left out and named in
    /// `unavailable`; a model that is found but does not load is an error; no solver at all
    /// with a model is [`Error::ModelNotFound`]-like usage error listing why each was left out.
    pub fn load(choice: SolverChoice<'_>, options: &LoadOptions<'_>) -> Result<Engines> {
        let mut note = None;
        let mut load = |solver: &str, device: DeviceChoice| -> Result<Engine> {
            let (engine, said) = Engine::load_noting(options.arch, solver, options.dirs, device, options.precision)?;
            if note.is_none() {
                note = said;
            }
            Ok(engine.with_target(|p| (options.configure)(p)))
        };
        match choice {
            SolverChoice::One(name) => {
                let engine = load(name, options.device)?;
                Ok(Engines {
                    engines: vec![engine],
                    unavailable: Vec::new(),
                    note,
                })
            }
            SolverChoice::All => {
                let mut engines = Vec::new();
                let mut unavailable = Vec::new();
                // After the first engine, `auto` keeps to the device it chose (one GPU start,
                // one note).
                let mut device = options.device;
                for solver in crate::solvers::all() {
                    match load(solver.name(), device) {
                        Ok(engine) => {
                            // (A cell without a network runs on the CPU whatever the device.)
                            if device == DeviceChoice::Auto
                                && engine.device_name() == "cpu"
                                && engine.host().model.has_network()
                            {
                                device = DeviceChoice::Cpu;
                            }
                            engines.push(engine);
                        }
                        Err(e @ (Error::ModelNotFound { .. } | Error::NoModelForArch { .. })) => {
                            unavailable.push((solver.name(), e.to_string()));
                        }
                        Err(e) => return Err(e),
                    }
                }
                if engines.is_empty() {
                    let why: Vec<String> = unavailable.iter().map(|(s, e)| format!("{s}: {e}")).collect();
                    return Err(Error::Usage(format!(
                        "no solver has a model for {} in the model directories ({})",
                        options.arch,
                        why.join("; ")
                    )));
                }
                Ok(Engines {
                    engines,
                    unavailable,
                    note,
                })
            }
        }
    }

    /// The notes every engine collected while predicting (see [`Engine::take_notes`]).
    pub fn take_notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = Vec::new();
        for n in self.engines.iter().flat_map(|e| e.take_notes()) {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        notes
    }

    /// Which models serve a GPU that has none of its own for some solvers, and why (see
    /// [`crate::models::resolve`]), in one line: None when every engine's model is the GPU's own
    /// (or MIOpen's model of its arch).
    pub fn served_note(&self, arch: &str) -> Option<String> {
        let mut groups: Vec<((String, String), Vec<&'static str>)> = Vec::new();
        for engine in &self.engines {
            let host = engine.host();
            let Some(served) = host.served.as_ref().filter(|s| !s.is_own()) else {
                continue;
            };
            let saved_for = match &served.located {
                crate::models::Located::Attention(_, saved_for) | crate::models::Located::Neighbour(_, saved_for) => {
                    saved_for.clone()
                }
                crate::models::Located::Ktn(_) => continue,
            };
            let key = (saved_for, served.why());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, solvers)) => solvers.push(host.solver.name()),
                None => groups.push((key, vec![host.solver.name()])),
            }
        }
        if groups.is_empty() {
            return None;
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|((saved_for, why), solvers)| {
                let s = if solvers.len() == 1 { "" } else { "s" };
                format!("{} by {saved_for}'s model{s} ({why})", solvers.join(", "))
            })
            .collect();
        Some(format!(
            "note: {} has no model of its own for these solvers; served: {} ('tuneinfer info --arch {}' lists every solver)",
            crate::error::quote_short(arch),
            parts.join("; "),
            crate::error::quote_short(arch)
        ))
    }

    /// The solver names, in order.
    pub fn solver_names(&self) -> Vec<&'static str> {
        self.engines.iter().map(|e| e.host().solver.name()).collect()
    }

    /// For each problem, one answer per engine (in [`Engines::solver_names`] order). `mode`
    /// None: each engine's [`Engine::default_mode`].
    pub fn predict_batch(&self, problems: &[ConvProblem], mode: Option<DecodeMode>) -> Vec<Vec<SolverAnswer>> {
        let mut answers: Vec<Vec<SolverAnswer>> = problems
            .iter()
            .map(|_| Vec::with_capacity(self.engines.len()))
            .collect();
        for engine in &self.engines {
            let mode = mode.unwrap_or_else(|| engine.default_mode());
            for (slot, result) in answers.iter_mut().zip(engine.predict_batch(problems, mode)) {
                slot.push(match result {
                    Ok(p) => SolverAnswer::Predicted(p),
                    Err(Error::NotApplicable { reason, .. }) => SolverAnswer::NotApplicable(reason),
                    Err(Error::InvalidProblem { reason, .. }) => SolverAnswer::NotApplicable(reason),
                    Err(e) => SolverAnswer::Failed(e),
                });
            }
        }
        answers
    }
}
