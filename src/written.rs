//! What a user perf database gets (issue 52): the answering path's answers ([`Answering`],
//! the one `predict`, `batch`, the C ABI and Python use), turned into entries. A (problem,
//! solver) gets an entry exactly where `--method best` serves something MIOpen would not run
//! by itself: the model's answer or the nearest tuned neighbour's. Where best serves MIOpen's
//! static default, or the system perf db's tuned value, nothing is written: MIOpen runs those
//! without an entry. One decision, so `userdb` and `batch --method best` cannot disagree.

use std::collections::HashSet;

use crate::engine::Engine;
use crate::engines::SolverAnswer;
use crate::error::{Error, Result};
use crate::method::{Answering, Method};
use crate::predict::Source;
use crate::problem::ConvProblem;
use crate::solvers::ck::versions::CkIdForm;
use crate::userdb::system::SystemDb;
use crate::userdb::Entry;

/// Per solver, what became of its (problem, solver) pairs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SolverCounts {
    /// Entries to write (the model's or the neighbour's answer).
    pub predicted: usize,
    /// Tuned in MIOpen's system perf db: not written (MIOpen uses the tuned value).
    pub system: usize,
    /// The solver does not apply to the problem.
    pub not_applicable: usize,
    /// Nothing valid to write: the model found no valid config (MIOpen's own fallback runs).
    pub no_valid: usize,
    /// The prediction failed for another reason (reported per input line).
    pub failed: usize,
    /// `--method best` serves MIOpen's static default here (the held-out figures of the
    /// problem's class, kind or of all problems choose it): left to MIOpen, nothing written.
    pub left_default: usize,
    /// Of the entries, the nearest tuned neighbour's config.
    pub neighbour: usize,
    /// Problems the network refuses that the cell's record beside it answers
    /// ([`crate::models::Resolved::cell`]).
    pub by_cell: usize,
    /// Of them, left to MIOpen's static default.
    pub by_cell_default: usize,
    /// CK kernel ids the target MIOpen would not accept: (count, the first reason).
    pub not_in_version: (usize, String),
}

/// The entries of a user perf db for a stream of problems, a chunk at a time.
pub struct Planner {
    answering: Answering,
    names: Vec<&'static str>,
    /// Per solver, its counts.
    pub counts: Vec<SolverCounts>,
    /// The entries to write, in input order.
    pub entries: Vec<Entry>,
    keys: HashSet<(String, &'static str)>,
    /// Problems no solver answered (none applies, or all failed).
    pub no_solver: usize,
}

/// The method each engine is planned with: `best` (what `--method best` serves), or with
/// `include_unproven` the model wherever it has a network (cells without one, and the problems
/// a network refuses that its cell's record answers, stay with `best`).
pub fn methods(engines: &[Engine], include_unproven: bool) -> Vec<Method> {
    engines
        .iter()
        .map(
            |e| match include_unproven && e.host().model.has_network() && !e.host().has_cell() {
                true => Method::Model,
                false => Method::Best,
            },
        )
        .collect()
}

impl Planner {
    /// A planner for `engines` with MIOpen's system perf db `system` (its tuned values are not
    /// written; its rows are the neighbours'), writing CK kernel ids in `form`.
    pub fn new(engines: &[Engine], methods: &[Method], system: Option<SystemDb>, form: CkIdForm) -> Result<Planner> {
        let answering = Answering::new_each(methods, engines, system)?.for_ck_form(Some(form));
        Ok(Planner {
            answering,
            names: engines.iter().map(|e| e.host().solver.name()).collect(),
            counts: vec![SolverCounts::default(); engines.len()],
            entries: Vec::new(),
            keys: HashSet::new(),
            no_solver: 0,
        })
    }

    /// Plans `problems` (one chunk; a repeated key keeps its first problem's entries). Returns
    /// the failures other than "does not apply", by the problem's index in `problems`.
    pub fn add(&mut self, engines: &[Engine], problems: &[ConvProblem]) -> Vec<(usize, Error)> {
        let (answers, why) = self.answering.answer(engines, problems, None);
        let mut failures = Vec::new();
        for (i, ((problem, slots), whys)) in problems.iter().zip(answers).zip(why).enumerate() {
            let key = problem.to_db_key();
            let mut answered = false;
            for (s, ((answer, tuned), why)) in slots.into_iter().zip(whys).enumerate() {
                let engine = &engines[s];
                let c = &mut self.counts[s];
                let by_cell = engine.host().answered_by_cell(problem);
                let list = match answer {
                    SolverAnswer::Predicted(list) => list,
                    SolverAnswer::NotApplicable(reason) => {
                        match reason.strip_prefix(crate::method::NOT_IN_VERSION) {
                            Some(rest) => {
                                if c.not_in_version.0 == 0 {
                                    // After "3.3: ", the reason itself.
                                    c.not_in_version.1 = rest.split_once(": ").map_or(rest, |(_, why)| why).to_string();
                                }
                                c.not_in_version.0 += 1;
                                answered = true;
                            }
                            None => c.not_applicable += 1,
                        }
                        continue;
                    }
                    SolverAnswer::Failed(e) => {
                        c.failed += 1;
                        failures.push((i, e));
                        continue;
                    }
                };
                answered = true;
                if tuned {
                    c.system += 1;
                    continue;
                }
                if by_cell {
                    c.by_cell += 1;
                }
                let Some(first) = list.into_iter().next() else {
                    c.no_valid += 1;
                    continue;
                };
                if first.source == Source::Default {
                    // MIOpen runs its default without an entry: chosen by best's figures (a
                    // reason given), or the model's own fallback (it found nothing valid).
                    if by_cell {
                        c.by_cell_default += 1;
                    }
                    match why {
                        Some(_) => c.left_default += 1,
                        None => c.no_valid += 1,
                    }
                    continue;
                }
                if !valid(engine, problem, &first.config) {
                    c.no_valid += 1;
                    continue;
                }
                if !self.keys.insert((key.clone(), self.names[s])) {
                    // Another problem with the same key (a backward problem whose x size the
                    // key does not hold): the first one's answer stands.
                    continue;
                }
                c.predicted += 1;
                if first.source == Source::Neighbour {
                    c.neighbour += 1;
                }
                self.entries.push(Entry {
                    key: key.clone(),
                    problem: problem.clone(),
                    solver: self.names[s],
                    params: first.config,
                });
            }
            if !answered {
                self.no_solver += 1;
            }
        }
        failures
    }
}

/// Does `config` pass the solver's validity rules for `problem`? A CK kernel id, written in the
/// target MIOpen's form, is checked in MIOpen 3.5.1's, the form of the rules.
fn valid(engine: &Engine, problem: &ConvProblem, config: &str) -> bool {
    let host = engine.host();
    let config = match crate::solvers::ck::rules351::CkSolver::from_name(host.solver.name()) {
        Some(ck) => crate::solvers::ck::versions::to_351_form(ck, config),
        None => config.to_string(),
    };
    let config = config.as_str();
    match host.solver.tunable() {
        Some(t) => t
            .parse_params(config)
            .is_ok_and(|values| t.rules(&host.target, problem).is_valid(&values)),
        None => true,
    }
}
