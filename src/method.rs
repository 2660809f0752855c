//! The one answering path (issue 43): what the command line, the Rust API, the C ABI and the
//! Python package all answer. A (problem, solver) MIOpen's system perf db has tuned is answered
//! with the tuned value ([`answers_with_perf_db`]); the others by `--method` (issue 36): which
//! predictor answers a (problem, solver)
//! that the system perf db has not tuned: tuneinfer's model, the nearest tuned neighbour
//! ([`crate::neighbour`], over the solver's rows of the system perf db), MIOpen's static default,
//! or `best` (the default): per problem, the one of the three that matched the tuned best most
//! often on the model's held-out problems of the problem's class (e.g. ConvAsm1x1U's `stride 2`),
//! else of its kind (direction and precision), else over all of them (figures recorded in the
//! model's JSON by `train`/`eval --record`; a class or kind counts from
//! [`MIN_KIND_PROBLEMS`] problems). Where a model records no figures (MIOpen's KTN
//! models, a model trained with nothing held out), `best` is the model. The answer's `source`
//! says which answered.

use std::path::Path;

use serde_json::Value;

use crate::engine::Engine;
use crate::engines::SolverAnswer;
use crate::error::{Error, Result};
use crate::figures::{Chosen, Recorded, MIN_KIND_PROBLEMS};
use crate::models::Located;
use crate::neighbour::{Neighbours, Variant};
use crate::predict::{DecodeMode, Prediction, Source};
use crate::problem::ConvProblem;
use crate::solvers::Tunable;

/// Per problem, one answer per engine and whether it is the system perf db's tuned value.
pub type Answers = Vec<Vec<(SolverAnswer, bool)>>;

/// `m` locked; a poisoned lock (a panic elsewhere while it was held) still gives the database.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What `--method` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Model,
    Neighbour,
    Default,
    Best,
}

impl Method {
    pub fn parse(text: Option<&str>) -> Result<Method> {
        Ok(match text {
            None | Some("best") => Method::Best,
            Some("model") => Method::Model,
            Some("neighbour" | "neighbor") => Method::Neighbour,
            Some("default") => Method::Default,
            Some(other) => {
                return Err(Error::Usage(format!(
                    "--method: unknown method '{}' (model, neighbour, default or best)",
                    crate::error::quote_short(other)
                )))
            }
        })
    }
}

/// How one engine's answers are chosen.
pub struct Plan {
    method: Method,
    /// The solver's integer side (None: not a tunable solver; its model answers).
    tunable: Option<&'static dyn Tunable>,
    recorded: Recorded,
    /// The figures of the cell's record beside a network ([`crate::models::Resolved::cell`]),
    /// which decide for the problems the network refuses (None: no record beside it).
    cell: Option<Recorded>,
    neighbours: Option<Neighbours>,
}

impl Plan {
    /// The figures that decide for `problem`: the cell's record's where it answers the problem
    /// instead of the network, else the model's (or a cell's without a network).
    fn recorded_for(&self, engine: &Engine, problem: &ConvProblem) -> Option<&Recorded> {
        if engine.host().answered_by_cell(problem) {
            self.cell.as_ref()
        } else {
            Some(&self.recorded)
        }
    }
}

/// The plans of every engine: `method`, the models' recorded figures, and the neighbours' rows
/// from `rows_db` (MIOpen's system perf db, or none) where a plan needs them. Errors: `--method
/// neighbour` without a database holding rows of any solver.
pub fn plans(method: Method, engines: &[Engine], rows_db: Option<&Path>) -> Result<Vec<Plan>> {
    plans_each(&vec![method; engines.len()], engines, rows_db)
}

/// [`plans`] with a method per engine (`userdb --include-unproven`: the model for networks,
/// `best` for the cells without one).
pub fn plans_each(methods: &[Method], engines: &[Engine], rows_db: Option<&Path>) -> Result<Vec<Plan>> {
    let mut out = Vec::new();
    for (engine, &method) in engines.iter().zip(methods) {
        out.push(plan_of(method, engine, rows_db)?);
    }
    let all_neighbour = !methods.is_empty() && methods.iter().all(|m| *m == Method::Neighbour);
    if all_neighbour && out.iter().all(|p| p.neighbours.is_none()) {
        return Err(Error::Usage(match rows_db {
            None => "--method neighbour needs tuned rows: MIOpen's system perf db of the GPU (none found; \
                     give --system-db FILE, e.g. ../shared/miopen/perfdb/gfx906_60.db)"
                .into(),
            Some(db) => format!(
                "--method neighbour: {} holds no usable row of {}",
                db.display(),
                engines
                    .iter()
                    .map(|e| e.host().solver.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }));
    }
    Ok(out)
}

/// The validation rows recorded with the model (or the cell's record) that `located` names, for
/// the GPU `figures_gpu` of a model across GPUs ([`crate::models::Resolved::figures_gpu`]; None:
/// the model's own): None for MIOpen's KTN models and for a file that does not read.
fn recorded_metrics(located: &Located, figures_gpu: Option<&str>) -> Option<Value> {
    match located {
        Located::Attention(files, _) => crate::seq2seq::weights::read_info(&files.metadata)
            .ok()
            .map(|(info, _)| info.metrics_for(figures_gpu).clone()),
        Located::Neighbour(file, _) => crate::models::NeighbourRecord::read(file, None).ok().map(|r| r.metrics),
        Located::Ktn(_) => None,
    }
}

/// The plan of one engine.
fn plan_of(method: Method, engine: &Engine, rows_db: Option<&Path>) -> Result<Plan> {
    let host = engine.host();
    let tunable = host
        .solver
        .tunable()
        .and_then(|_| crate::solvers::tunable(host.solver).ok());
    let recorded = host
        .served
        .as_ref()
        .and_then(|r| recorded_metrics(&r.located, r.figures_gpu()))
        .map(|m| Recorded::from_metrics(&m))
        .unwrap_or_default();
    let cell = host
        .served
        .as_ref()
        .filter(|_| host.has_cell())
        .and_then(|r| r.cell.clone())
        .and_then(|(file, saved_for)| recorded_metrics(&Located::Neighbour(file, saved_for), None))
        .map(|m| Recorded::from_metrics(&m));
    let wants_rows = match method {
        Method::Neighbour => true,
        Method::Best => recorded.neighbour_can_win() || cell.as_ref().is_some_and(Recorded::neighbour_can_win),
        Method::Model | Method::Default => false,
    };
    let neighbours = match (tunable, rows_db) {
        (Some(t), Some(db)) if wants_rows => Neighbours::load(db, t, &host.target)?,
        _ => None,
    };
    Ok(Plan {
        method,
        tunable,
        recorded,
        cell,
        neighbours,
    })
}

/// `userdb`'s plan of a cell served without a network ([`crate::models::Located::Neighbour`]),
/// or of the cell's record beside a network ([`crate::models::Resolved::cell`]): `best` over
/// the record's figures, with the neighbours' rows of `rows_db` (MIOpen's system perf db); None
/// for an engine with a network and no record beside it (`userdb` keeps its own policy for
/// models).
pub fn cell_plan(engine: &Engine, rows_db: Option<&Path>) -> Result<Option<Plan>> {
    let host = engine.host();
    if host.model.has_network() && !host.has_cell() {
        return Ok(None);
    }
    plan_of(Method::Best, engine, rows_db).map(Some)
}

/// What `best` answers a problem of a cell without a network (or one the cell's record beside a
/// network answers) when it is not MIOpen's default: the nearest tuned neighbour's config
/// (source `neighbour`), where the cell's figures for the problem's class or kind chose it and a
/// neighbour of the kind has a config valid for it. None for a problem the network answers.
pub fn cell_answer(plan: &Plan, engine: &Engine, problem: &ConvProblem) -> Option<Prediction> {
    let tunable = plan.tunable?;
    let host = engine.host();
    let recorded = match host.model.has_network() {
        true if host.answered_by_cell(problem) => plan.cell.as_ref()?,
        true => return None,
        false => &plan.recorded,
    };
    let (_, figures) = recorded.for_problem(tunable, problem)?;
    if figures.best(plan.neighbours.is_some()) != Chosen::Neighbour {
        return None;
    }
    let target = &engine.host().target;
    let config = plan
        .neighbours
        .as_ref()?
        .answer_by(figures.neighbour_variant, target, problem)?;
    Some(as_answer(tunable, &config, Source::Neighbour))
}

/// Where `--method best` does not take the model of `resolved` (its recorded figures, per class
/// or kind of at least [`MIN_KIND_PROBLEMS`] problems, and over all of them), e.g.
/// "stride 2: MIOpen's default (95.2% vs the model's 90.8%)"; the neighbour counted as at hand
/// where `have_neighbours` (a system perf db's rows). Empty for a model without recorded figures.
pub fn best_differs(resolved: &crate::models::Resolved, have_neighbours: bool) -> Vec<String> {
    let Some(metrics) = recorded_metrics(&resolved.located, resolved.figures_gpu()) else {
        return Vec::new();
    };
    let r = Recorded::from_metrics(&metrics);
    let all = r.overall.map(|f| ("all".to_string(), f));
    all.into_iter()
        .chain(r.kinds.iter().filter(|(_, f)| f.problems >= MIN_KIND_PROBLEMS).cloned())
        .filter_map(|(label, f)| {
            let (who, pct) = match f.best(have_neighbours) {
                Chosen::Model => return None,
                Chosen::Neighbour => (
                    format!("the {} (with a system perf db)", f.neighbour_variant.label()),
                    f.neighbour?,
                ),
                Chosen::Default => ("MIOpen's default".to_string(), f.default),
                Chosen::DefaultWhereValid => ("MIOpen's default where valid, else the model".to_string(), f.mix?),
            };
            Some(match f.model {
                Some(model) => format!("{label}: {who} ({pct:.1}% vs the model's {model:.1}%)"),
                None if who.starts_with("MIOpen's default") => {
                    format!("{label}: {who} ({pct:.1}%; no network)")
                }
                None => format!(
                    "{label}: {who} ({pct:.1}% vs MIOpen's default {:.1}%; no network)",
                    f.default
                ),
            })
        })
        .collect()
}

/// A config as an answer of `source`.
fn as_answer(tunable: &dyn Tunable, config: &[i64], source: Source) -> Prediction {
    let text = tunable.format_params(config);
    Prediction {
        values: text.split(',').map(str::to_string).collect(),
        config: text,
        tokens: Vec::new(),
        score: None,
        source,
    }
}

/// Applies the plans to the answers of [`answers_with_perf_db`] (tuned answers
/// and the solvers that do not apply are left as they are): the chosen predictor's answer first,
/// then the model's other answers. Returns, per problem and engine, why a predictor other than
/// the model answered (for `predict`'s note).
pub fn apply(
    plans: &[Plan],
    engines: &[Engine],
    problems: &[ConvProblem],
    answers: &mut [Vec<(SolverAnswer, bool)>],
) -> Vec<Vec<Option<String>>> {
    let mut why: Vec<Vec<Option<String>>> = problems.iter().map(|_| vec![None; plans.len()]).collect();
    for ((problem, slots), whys) in problems.iter().zip(answers.iter_mut()).zip(why.iter_mut()) {
        for (s, ((plan, engine), (answer, tuned))) in plans.iter().zip(engines).zip(slots.iter_mut()).enumerate() {
            let (SolverAnswer::Predicted(list), false) = (&mut *answer, *tuned) else {
                continue;
            };
            let Some(tunable) = plan.tunable else { continue };
            let target = &engine.host().target;
            // `--method neighbour`: the variant the figures of the problem rank first.
            let variant = plan
                .recorded_for(engine, problem)
                .and_then(|r| r.for_problem(tunable, problem))
                .map_or(Variant::Solver, |(_, f)| f.neighbour_variant);
            let (chosen, reason) = match plan.method {
                Method::Model => continue,
                Method::Default => (Chosen::Default, "--method default".to_string()),
                Method::Neighbour => (Chosen::Neighbour, "--method neighbour".to_string()),
                Method::Best => match plan
                    .recorded_for(engine, problem)
                    .and_then(|r| r.for_problem(tunable, problem))
                {
                    None => continue,
                    Some((label, f)) => {
                        // A problem the network refuses, answered by the cell's record beside it.
                        let lead = if engine.host().model.has_network() {
                            "the model does not take this problem, the cell's record answers it"
                        } else {
                            "no network for this cell"
                        };
                        let chosen = f.best(plan.neighbours.is_some());
                        let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}%"));
                        let reason = match f.model {
                            Some(model) => format!(
                                "on the model's held-out problems ({label}, {}): model {model:.1}%, nearest neighbour {}, MIOpen's default {:.1}%, the default where valid else the model {} exact",
                                f.problems,
                                pct(f.neighbour),
                                f.default,
                                pct(f.mix)
                            ),
                            // A cell without a network whose neighbour is better but not at hand.
                            None if chosen == Chosen::Default && f.best(true) == Chosen::Neighbour => format!(
                                "{lead}; on its held-out problems ({label}, {}) the nearest tuned neighbour matched the tuned best {}, MIOpen's default {:.1}%: give MIOpen's system perf db of the GPU (--system-db FILE) for the neighbour",
                                f.problems,
                                pct(f.neighbour),
                                f.default
                            ),
                            None => format!(
                                "{lead}; on its held-out problems ({label}, {}): nearest neighbour {}, MIOpen's default {:.1}% exact",
                                f.problems,
                                pct(f.neighbour),
                                f.default
                            ),
                        };
                        (chosen, reason)
                    }
                },
            };
            let default = tunable.static_default(target, problem);
            let first = match chosen {
                Chosen::Model => continue,
                Chosen::DefaultWhereValid if !tunable.rules(target, problem).is_valid(&default) => continue,
                Chosen::Default | Chosen::DefaultWhereValid => as_answer(tunable, &default, Source::Default),
                Chosen::Neighbour => match plan
                    .neighbours
                    .as_ref()
                    .and_then(|n| n.answer_by(variant, target, problem))
                {
                    Some(config) => as_answer(tunable, &config, Source::Neighbour),
                    // No neighbour of the kind has a valid config: MIOpen's default (eval's
                    // neighbour does the same), unless `best` keeps the model.
                    None if plan.method == Method::Neighbour => as_answer(tunable, &default, Source::Default),
                    None => continue,
                },
            };
            list.retain(|p| p.config != first.config);
            list.insert(0, first);
            whys[s] = Some(reason);
        }
    }
    why
}

/// For each problem, one answer per engine (as [`Engines::predict_batch`]) and whether it is the
/// value the system perf database has tuned: a (problem, solver) it has tuned, for a solver
/// that applies to the problem, is answered with that value and not predicted (an exact lookup
/// beats any prediction; MIOpen uses it).
pub fn answers_with_perf_db(
    engines: &[Engine],
    problems: &[ConvProblem],
    mode: Option<DecodeMode>,
    system: Option<&std::sync::Mutex<crate::userdb::system::SystemDb>>,
) -> Answers {
    let names: Vec<&'static str> = engines.iter().map(|e| e.host().solver.name()).collect();
    let mut out: Answers = problems.iter().map(|_| Vec::new()).collect();
    for (engine, name) in engines.iter().zip(&names) {
        let host = engine.host();
        // A lookup that fails (an unreadable row) is that answer's failure.
        let mut lookup_failed: Vec<Option<Error>> = problems.iter().map(|_| None).collect();
        let tuned: Vec<Option<String>> = problems
            .iter()
            .zip(&mut lookup_failed)
            // The lock is held for one lookup, not for the predictions (the C ABI's predictors
            // are shared between threads).
            .map(
                |(p, failed)| match system.map_or(Ok(None), |s| lock(s).tuned_for(p, name)) {
                    Ok(t) => t.filter(|_| host.solver.check(&host.target, p).is_ok()),
                    Err(e) => {
                        *failed = Some(e);
                        None
                    }
                },
            )
            .collect();
        let todo: Vec<ConvProblem> = problems
            .iter()
            .zip(tuned.iter().zip(&lookup_failed))
            .filter(|(_, (t, f))| t.is_none() && f.is_none())
            .map(|(p, _)| p.clone())
            .collect();
        let mode = mode.unwrap_or_else(|| engine.default_mode());
        let mut predicted = if todo.is_empty() {
            Vec::new()
        } else {
            engine.predict_batch(&todo, mode)
        }
        .into_iter();
        for ((slot, t), failed) in out.iter_mut().zip(&tuned).zip(lookup_failed) {
            if let Some(e) = failed {
                slot.push((SolverAnswer::Failed(e), false));
                continue;
            }
            slot.push(match t {
                Some(params) => (
                    SolverAnswer::Predicted(vec![Prediction {
                        config: params.clone(),
                        values: params.split(',').map(str::to_string).collect(),
                        tokens: Vec::new(),
                        score: None,
                        source: Source::PerfDb,
                    }]),
                    true,
                ),
                None => (
                    match predicted.next() {
                        Some(Ok(p)) => SolverAnswer::Predicted(p),
                        Some(Err(Error::NotApplicable { reason, .. } | Error::InvalidProblem { reason, .. })) => {
                            SolverAnswer::NotApplicable(reason)
                        }
                        Some(Err(e)) => SolverAnswer::Failed(e),
                        None => SolverAnswer::Failed(Error::Internal("an answer went missing".into())),
                    },
                    false,
                ),
            });
        }
    }
    out
}

/// How a CK answer the target MIOpen would not accept starts (then the version, `: ` and why).
pub const NOT_IN_VERSION: &str = "not in MIOpen ";

/// The CK answers of `answers` in the form MIOpen `version` reads; one it would not accept
/// becomes not applicable, saying why (the other answers of that solver are dropped with it).
fn for_version(
    (form, label): &(crate::solvers::ck::versions::CkIdForm, String),
    engines: &[Engine],
    problems: &[ConvProblem],
    answers: &mut Answers,
) {
    use crate::solvers::ck::rules351::CkSolver;
    use crate::solvers::ck::versions::written_id;
    let form = *form;
    for (problem, slots) in problems.iter().zip(answers.iter_mut()) {
        for (engine, (answer, _)) in engines.iter().zip(slots.iter_mut()) {
            let Some(solver) = CkSolver::from_name(engine.host().solver.name()) else {
                continue;
            };
            let SolverAnswer::Predicted(list) = answer else {
                continue;
            };
            let mut out = Vec::with_capacity(list.len());
            let mut refused = None;
            for p in list.iter() {
                match written_id(solver, problem.precision.into(), &p.config, form) {
                    Ok(id) => {
                        let mut p = p.clone();
                        p.config = id;
                        out.push(p);
                    }
                    Err(why) => {
                        refused.get_or_insert(why);
                    }
                }
            }
            *answer = match (out.is_empty(), refused) {
                (true, Some(why)) => SolverAnswer::NotApplicable(format!("{NOT_IN_VERSION}{label}: {why}")),
                _ => SolverAnswer::Predicted(out),
            };
        }
    }
}

/// MIOpen's system perf db for `arch` (a database name such as `gfx90a68`, or an arch with `cu`
/// compute units), as `--system-db` chooses it (`choice`: None = MIOpen's installed one, found as
/// MIOpen finds it; `none`; or a file): the CLI's `--arch`, `--cu` and `--system-db`.
pub fn system_db(arch: &str, cu: Option<u32>, choice: Option<&str>) -> Result<crate::userdb::system::Resolved> {
    use crate::userdb::system::{resolve, Choice, DbName, Resolved};
    let choice = Choice::parse(choice);
    let gpu = crate::userdb::naming::parse_arch(arch)?;
    let (base, cu_in_name) = (gpu.arch.as_str(), gpu.compute_units);
    let cu = match (cu_in_name, cu) {
        (Some(n), _) => Some(n),
        (None, Some(n)) => Some(n),
        (None, None) => crate::solvers::conv_bin_winograd_rxs::default_compute_units(base),
    };
    let Some(cu) = cu else {
        if let Choice::File(_) = choice {
            // A named file needs no name.
            return resolve(
                &choice,
                &DbName {
                    basename: base,
                    db_id: &gpu.db_id,
                    compute_units: 0,
                },
                false,
            );
        }
        return Ok(Resolved {
            db: None,
            summary: format!(
                "system perf db: not looked for: the compute units of {arch} are unknown (give --cu N, or --system-db FILE)"
            ),
        });
    };
    let basename = crate::userdb::db_basename(&gpu.db_id, cu);
    resolve(
        &choice,
        &DbName {
            basename: &basename,
            db_id: &gpu.db_id,
            compute_units: cu,
        },
        false,
    )
}

/// What answers a set of engines' problems as `tuneinfer predict` and `batch` do: the system
/// perf db's tuned values, then `method` over the rest. The CLI, [`crate::ffi`] (C and Python)
/// and Rust programs all answer through it.
pub struct Answering {
    plans: Vec<Plan>,
    /// The form of CK kernel ids the answers are for, and the MIOpen it names; None: as the
    /// models answer (MIOpen 3.5's form).
    miopen: Option<(crate::solvers::ck::versions::CkIdForm, String)>,
    /// Behind a lock: a sqlite connection is used by one thread at a time (the C ABI's
    /// predictors are shared between threads); held for one lookup at a time.
    system: Option<std::sync::Mutex<crate::userdb::system::SystemDb>>,
    system_path: Option<std::path::PathBuf>,
}

impl Answering {
    /// The plans of `engines` for `method`, with MIOpen's system perf db `system` (None: none).
    pub fn new(
        method: Method,
        engines: &[Engine],
        system: Option<crate::userdb::system::SystemDb>,
    ) -> Result<Answering> {
        Answering::new_each(&vec![method; engines.len()], engines, system)
    }

    /// [`Answering::new`] with a method per engine ([`plans_each`]).
    pub fn new_each(
        methods: &[Method],
        engines: &[Engine],
        system: Option<crate::userdb::system::SystemDb>,
    ) -> Result<Answering> {
        let plans = plans_each(methods, engines, system.as_ref().map(|d| d.path.as_path()))?;
        let system_path = system.as_ref().map(|d| d.path.clone());
        Ok(Answering {
            plans,
            miopen: None,
            system: system.map(std::sync::Mutex::new),
            system_path,
        })
    }

    /// Answers for the MIOpen `version`: composable_kernel kernel ids in its form, and an
    /// answer it would not accept turned into "not applicable" with the reason
    /// ([`crate::solvers::ck::versions`]). None: as the models answer.
    pub fn for_miopen(mut self, version: Option<crate::solvers::ck::versions::MiopenVersion>) -> Answering {
        use crate::solvers::ck::versions::CkIdForm;
        self.miopen = version.map(|v| (CkIdForm::of(Some(v)), v.to_string()));
        self
    }

    /// Answers with CK kernel ids in `form` (None: as the models answer); `userdb` writes for a
    /// MIOpen whose version may be unknown ([`crate::solvers::ck::versions::CkIdForm::Both`]).
    pub fn for_ck_form(mut self, form: Option<crate::solvers::ck::versions::CkIdForm>) -> Answering {
        use crate::solvers::ck::versions::CkIdForm;
        self.miopen = form.map(|f| {
            let label = match f {
                CkIdForm::Miopen2024 => "3.3",
                CkIdForm::Miopen351 => "3.5",
                CkIdForm::Both => "(version unknown)",
            };
            (f, label.to_string())
        });
        self
    }

    /// The system perf db the answers look tuned values up in.
    pub fn system_path(&self) -> Option<&Path> {
        self.system_path.as_deref()
    }

    /// Per problem, one answer per engine (in `engines`' order, the engines [`Answering::new`]
    /// was given) and whether it is the system perf db's tuned value; and per problem and
    /// engine, why a predictor other than the model answered.
    pub fn answer(
        &self,
        engines: &[Engine],
        problems: &[ConvProblem],
        mode: Option<DecodeMode>,
    ) -> (Answers, Vec<Vec<Option<String>>>) {
        let mut answers = answers_with_perf_db(engines, problems, mode, self.system.as_ref());
        let why = apply(&self.plans, engines, problems, &mut answers);
        if let Some(form) = &self.miopen {
            for_version(form, engines, problems, &mut answers);
        }
        (answers, why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_and_a_bad_one_names_the_choices() {
        assert_eq!(Method::parse(None).unwrap(), Method::Best);
        assert_eq!(Method::parse(Some("neighbor")).unwrap(), Method::Neighbour);
        let e = Method::parse(Some("oracle")).unwrap_err().to_string();
        assert!(e.contains("model, neighbour, default or best"), "{e}");
    }
}
