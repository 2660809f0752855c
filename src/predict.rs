//! The engine's front door: load a solver's model once, then predict tuning parameters for a
//! slice of problems. problem -> features -> encoder -> decoder steps -> constrained search ->
//! parameters, batched and spread over the machine's cores.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::models::{self, LoadedModel};
use crate::problem::ConvProblem;
use crate::search::{beam_search, greedy_miopen, Constraint, Hypothesis};
use crate::seq2seq::Seq2SeqModel;
use crate::solvers::{self, Solver, Target};

/// The widest beam a search accepts (wider ones only cost memory: a position has few values,
/// and equal value prefixes are merged).
pub const MAX_BEAM_WIDTH: usize = 1024;

/// How to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeMode {
    /// MIOpen's greedy walk; on failure the solver's static default.
    Miopen,
    /// Constrained beam search of `width`, returning the best `top` configs.
    Beam { width: usize, top: usize },
}

/// Problems decoded together on the CPU: big enough to fill the matrix products, small enough
/// that a block's states, scores and scratch stay in the caches (see README, Benchmarks).
pub const BLOCK: usize = 64;

/// Beam width of [`Predictor::default_mode`] for tuneinfer's own models: 6 gives the first
/// answer of a beam of 16 as often on every shipped model's held-out problems (0.0 points lost on
/// each; width 4 loses 0.4 and 1.3 on two of them; `tools/beam_widths.py`, README, Benchmarks)
/// at under half its cost.
pub const DEFAULT_BEAM_WIDTH: usize = 6;

impl DecodeMode {
    /// A usage error for a beam wider than [`MAX_BEAM_WIDTH`].
    pub fn check(self) -> Result<()> {
        match self {
            DecodeMode::Beam { width, .. } if width > MAX_BEAM_WIDTH => Err(Error::Usage(format!(
                "beam width {width} is above the limit of {MAX_BEAM_WIDTH}"
            ))),
            _ => Ok(()),
        }
    }
}

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Model,
    /// The solver's static default (the model failed or found nothing valid, or it was chosen:
    /// `--method default`, or `best` where it won on the held-out problems).
    Default,
    /// The config of the nearest tuned neighbour ([`crate::neighbour`]).
    Neighbour,
    /// The value MIOpen's system perf db has tuned for the (problem, solver): not a prediction.
    PerfDb,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Model => "model",
            Source::Default => "default",
            Source::Neighbour => "neighbour",
            Source::PerfDb => "perf-db",
        }
    }
}

/// One predicted configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The config as MIOpen prints it.
    pub config: String,
    /// The value of each parameter.
    pub values: Vec<String>,
    /// Token ids the decoder chose (empty for a default).
    pub tokens: Vec<u32>,
    /// Sum of log-softmax of the chosen tokens (None for a default).
    pub score: Option<f32>,
    pub source: Source,
}

/// A batch made ready for decoding by [`Predictor::prepare`].
pub(crate) struct Prepared {
    /// Encoder inputs of the decoded problems, concatenated.
    pub inputs: Vec<f32>,
    pub constraints: Vec<Box<dyn Constraint + Send + Sync>>,
    /// Batch index of each decoded problem.
    pub decoded: Vec<usize>,
    /// One entry per problem: its error, or None while it waits for decoding.
    pub results: Vec<Option<Result<Vec<Prediction>>>>,
}

/// A loaded model for one (target, solver).
pub struct Predictor {
    pub target: Target,
    pub solver: &'static dyn Solver,
    pub model: Box<dyn Seq2SeqModel>,
    /// Which model serves the target and why, when it was found by [`Predictor::load`]
    /// (see [`models::resolve`]).
    pub served: Option<Box<models::Resolved>>,
    threads: usize,
}

impl Predictor {
    /// Finds and loads the model of `solver` on `arch` in `model_dirs` (the order and checks of
    /// [`models::find_and_load`]: the first directory holding a model wins, and that model must
    /// load).
    pub fn load(arch: &str, solver: &str, model_dirs: &[PathBuf]) -> Result<Predictor> {
        let solver = solvers::by_name(solver)?;
        Predictor::from_resolved(arch, solver, models::resolve(arch, solver, model_dirs)?)
    }

    /// Loads the model that [`models::resolve`] found for `solver` on `arch`.
    pub fn from_resolved(arch: &str, solver: &'static dyn Solver, served: models::Resolved) -> Result<Predictor> {
        let solver = models::serving_solver(solver, &served.located);
        let model: Box<dyn Seq2SeqModel> = match models::load_resolved(&served, solver)? {
            LoadedModel::Attention(m) => m,
            LoadedModel::Ktn(m) => m,
            LoadedModel::NoNetwork(m) => m,
        };
        Ok(Predictor::new(Target::new(arch), solver, model).with_served(Some(served)))
    }

    pub fn new(target: Target, solver: &'static dyn Solver, model: Box<dyn Seq2SeqModel>) -> Predictor {
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        Predictor {
            target,
            solver,
            model,
            served: None,
            threads,
        }
    }

    /// Records which model serves the target and why.
    pub fn with_served(mut self, served: Option<models::Resolved>) -> Predictor {
        self.served = served.map(Box::new);
        self
    }

    /// The decoding that gives this model's best single answer: MIOpen's greedy walk for
    /// MIOpen's models (their answers as MIOpen gives them), the best of a constrained beam of
    /// [`DEFAULT_BEAM_WIDTH`] for tuneinfer's own (more often the tuned best than the greedy
    /// answer on held-out problems: README, Training and evaluation).
    pub fn default_mode(&self) -> DecodeMode {
        if self.model.is_miopen_model() {
            DecodeMode::Miopen
        } else {
            DecodeMode::Beam {
                width: DEFAULT_BEAM_WIDTH,
                top: 1,
            }
        }
    }

    /// True when the cell's record is beside the network ([`models::Resolved::cell`]): the
    /// problems the network refuses and the solver applies to fall through to it.
    pub fn has_cell(&self) -> bool {
        self.model.has_network() && self.served.as_ref().is_some_and(|r| r.cell.is_some())
    }

    /// True when the cell's record beside the network answers `problem`, not the network: the
    /// solver applies to it ([`Solver::check`]) and the network does not
    /// ([`Solver::check_network`]).
    pub fn answered_by_cell(&self, problem: &ConvProblem) -> bool {
        self.has_cell()
            && self.solver.check_network(&self.target, problem).is_err()
            && self.solver.check(&self.target, problem).is_ok()
    }

    /// Worker threads used for batches.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Limits the worker threads used for batches (at least 1).
    pub fn with_threads(mut self, threads: usize) -> Predictor {
        self.threads = threads.max(1);
        self
    }

    /// Sets the compute-unit count for solvers whose features or rules use it; None keeps the
    /// target's own (a database name's, e.g. 64 for `gfx906_64`, else the solver's default).
    pub fn with_compute_units(mut self, compute_units: Option<u32>) -> Predictor {
        if compute_units.is_some() {
            self.target.compute_units = compute_units;
        }
        self
    }

    /// Sets where catalogue solvers read their kernel-instance lists.
    /// XNACK on or off for the rules (MIOpen's assembly solvers refuse XNACK on), whatever
    /// name the model was found by (`userdb` loads `gfx942e4`'s models for `gfx942_xnacke4`).
    pub fn with_xnack(mut self, xnack: bool) -> Predictor {
        self.target.xnack = xnack;
        self
    }

    pub fn with_catalogue_dir(mut self, dir: Option<PathBuf>) -> Predictor {
        self.target.catalogue_dir = dir;
        self
    }

    /// Predicts one problem.
    pub fn predict_one(&self, problem: &ConvProblem, mode: DecodeMode) -> Result<Vec<Prediction>> {
        self.predict_chunk(std::slice::from_ref(problem), mode)
            .pop()
            .unwrap_or_else(|| Err(Error::Internal("no result".into())))
    }

    /// Predicts a batch; one result per problem, in order. Problems the model does not apply to
    /// get their error; the others are decoded in blocks of [`BLOCK`] problems (so a block's
    /// states and scratch stay in cache whatever the batch size), the blocks shared out to the
    /// worker threads as each finishes its last.
    pub fn predict_batch(&self, problems: &[ConvProblem], mode: DecodeMode) -> Vec<Result<Vec<Prediction>>> {
        let blocks = problems.len().div_ceil(BLOCK);
        let threads = self.threads.min(blocks).max(1);
        if threads == 1 {
            return problems
                .chunks(BLOCK)
                .flat_map(|block| self.predict_chunk(block, mode))
                .collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut done: Vec<(usize, Vec<Result<Vec<Prediction>>>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if b >= blocks {
                                return mine;
                            }
                            let block = &problems[b * BLOCK..((b + 1) * BLOCK).min(problems.len())];
                            mine.push((b, self.predict_chunk(block, mode)));
                        }
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
        });
        done.sort_by_key(|(b, _)| *b);
        let mut results: Vec<Result<Vec<Prediction>>> = Vec::with_capacity(problems.len());
        let mut expected = 0;
        for (b, part) in done {
            // A block lost to a panicked worker: its problems get an internal error.
            while expected < b {
                let lost = ((expected + 1) * BLOCK).min(problems.len()) - expected * BLOCK;
                results.extend((0..lost).map(|_| Err(Error::Internal("a worker thread panicked".into()))));
                expected += 1;
            }
            results.extend(part);
            expected = b + 1;
        }
        while results.len() < problems.len() {
            results.push(Err(Error::Internal("a worker thread panicked".into())));
        }
        results
    }

    /// Checks every problem and builds the encoder inputs and constraints of those the model
    /// applies to; the others get their error.
    pub(crate) fn prepare(&self, problems: &[ConvProblem]) -> Prepared {
        let (target, solver, model) = (&self.target, self.solver, self.model.as_ref());
        let mut prepared = Prepared {
            inputs: Vec::new(),
            constraints: Vec::new(),
            decoded: Vec::new(),
            results: Vec::with_capacity(problems.len()),
        };
        for (i, p) in problems.iter().enumerate() {
            let ready = match solver.check_network(target, p) {
                // The network refuses a problem the solver applies to: the cell's record beside
                // it serves it, as a cell without a network (MIOpen's default here; `--method`
                // and `userdb` put the neighbour first where the record chose it).
                Err(_) if self.has_cell() && solver.check(target, p).is_ok() => {
                    prepared.results.push(Some(self.fallback_answer(p)));
                    continue;
                }
                checked => checked,
            }
            .and_then(|_| {
                let input = model.encoder_input(solver, target, p)?;
                let constraint = solver.constraint(target, p, model.vocab(), model.metadata())?;
                Ok((input, constraint))
            });
            match ready {
                Ok((input, constraint)) => {
                    prepared.inputs.extend_from_slice(&input);
                    prepared.constraints.push(constraint);
                    prepared.decoded.push(i);
                    prepared.results.push(None);
                }
                Err(e) => prepared.results.push(Some(Err(e))),
            }
        }
        prepared
    }

    fn predict_chunk(&self, problems: &[ConvProblem], mode: DecodeMode) -> Vec<Result<Vec<Prediction>>> {
        if let Err(e) = mode.check() {
            let message = e.to_string();
            return problems.iter().map(|_| Err(Error::Usage(message.clone()))).collect();
        }
        let model = self.model.as_ref();
        if !model.has_network() {
            // A cell without a network: MIOpen's static default for every problem the solver
            // applies to (`--method` puts the nearest tuned neighbour first where it is better).
            return problems
                .iter()
                .map(|p| {
                    self.solver.check(&self.target, p)?;
                    self.fallback_answer(p)
                })
                .collect();
        }
        let Prepared {
            inputs,
            constraints,
            decoded,
            mut results,
        } = self.prepare(problems);
        if !decoded.is_empty() {
            match model.encode(&inputs, decoded.len()) {
                Err(e) => {
                    let msg = e.to_string();
                    for &i in &decoded {
                        results[i] = Some(Err(Error::Shape {
                            what: "encoder input".into(),
                            expected: "a valid batch".into(),
                            got: msg.clone(),
                        }));
                    }
                }
                Ok(states) => {
                    let refs: Vec<&dyn Constraint> =
                        constraints.iter().map(|c| c.as_ref() as &dyn Constraint).collect();
                    let found: Vec<Vec<Hypothesis>> = match mode {
                        DecodeMode::Miopen => greedy_miopen(model.decoder(), model.vocab(), states, &refs)
                            .into_iter()
                            .map(|h| h.into_iter().collect())
                            .collect(),
                        DecodeMode::Beam { width, top } => beam_search(
                            model.decoder(),
                            model.vocab(),
                            states,
                            &refs,
                            width,
                            top.clamp(1, width.max(1)),
                        ),
                    };
                    for ((&i, hyps), constraint) in decoded.iter().zip(found).zip(&refs) {
                        results[i] = Some(self.answers(&problems[i], hyps, *constraint));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::Internal("problem left undecoded".into()))))
            .collect()
    }

    /// The answer when nothing was decoded: MIOpen's static default (source `default`).
    fn fallback_answer(&self, problem: &ConvProblem) -> Result<Vec<Prediction>> {
        let values = self.solver.fallback(&self.target, problem)?;
        Ok(vec![Prediction {
            config: self.solver.format_config(&values),
            values,
            tokens: Vec::new(),
            score: None,
            source: Source::Default,
        }])
    }

    pub(crate) fn answers(
        &self,
        problem: &ConvProblem,
        hyps: Vec<Hypothesis>,
        constraint: &dyn Constraint,
    ) -> Result<Vec<Prediction>> {
        if hyps.is_empty() {
            return self.fallback_answer(problem);
        }
        let vocab = self.model.vocab();
        let mut predictions: Vec<Prediction> = Vec::with_capacity(hyps.len());
        for h in hyps {
            let values: Vec<String> = h.values.iter().map(|&v| vocab.values[v as usize].clone()).collect();
            let config = constraint
                .config_text(&h.values)
                .unwrap_or_else(|| self.solver.format_config(&values));
            // Different value sequences can name the same config (catalogue solvers); keep the best.
            if predictions.iter().any(|p| p.config == config) {
                continue;
            }
            predictions.push(Prediction {
                config,
                values,
                tokens: h.tokens,
                score: Some(h.score),
                source: Source::Model,
            });
        }
        Ok(predictions)
    }
}
