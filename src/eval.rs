//! Honest evaluation on held-out problems: the model (greedy and beam) beside MIOpen's static
//! default, the nearest neighbour from the training database and (when its files are found)
//! MIOpen's own KTN model of the solver (e.g. gfx908 for ConvAsm1x1U), all on the same
//! validation problems. Everything solver-specific comes from the solver's [`Tunable`] side.
//!
//! Metrics per method: exact config match, per-parameter match and validity of the first
//! answer, and top-k hits (is the tuned best among the first k answers?).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::data::dataset::Sample;
use crate::error::{Error, Result};
use crate::figures::RowId;
use crate::models;
pub use crate::neighbour::nearest_neighbours;
use crate::predict::{DecodeMode, Predictor};
use crate::seq2seq::find_model_files;
use crate::seq2seq::weights::WeightsFiles;
use crate::solvers::{Target, Tunable};
use crate::train::Prepared;

/// The k of the top-k columns.
pub const TOP_K: [usize; 4] = [1, 4, 8, 16];

/// Scores of one method.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodScores {
    pub name: String,
    /// The problem kind of a [`by_kind`] row (e.g. `F FP16`); None for a row over all problems.
    pub kind: Option<String>,
    /// Which predictor the row scores, for the rows [`crate::figures`] reads (stored as `"row"`).
    pub row: Option<crate::figures::RowId>,
    pub problems: usize,
    pub exact: usize,
    pub params_matched: usize,
    /// Parameters of the first answers' problems (the denominator of the per-parameter match).
    pub params_total: usize,
    pub valid: usize,
    /// Hits for each k of [`TOP_K`].
    pub top: [usize; 4],
    /// Most answers the method gave for one problem (top-k above it is not meaningful).
    pub max_answers: usize,
}

impl MethodScores {
    /// Scores ranked answers (`answers[i]` for `samples[i]`, best first; empty = no answer);
    /// validity by the solver's rules on `target`.
    pub fn score(
        name: &str,
        solver: &dyn Tunable,
        target: &Target,
        samples: &[Sample],
        answers: &[Vec<Vec<i64>>],
    ) -> MethodScores {
        let mut s = MethodScores {
            name: name.to_string(),
            kind: None,
            row: None,
            problems: samples.len(),
            exact: 0,
            params_matched: 0,
            params_total: 0,
            valid: 0,
            top: [0; 4],
            max_answers: 0,
        };
        for (sample, list) in samples.iter().zip(answers) {
            s.max_answers = s.max_answers.max(list.len());
            s.params_total += sample.config.len();
            // Configs MIOpen runs identically count as one (Tunable::canonical).
            let canon = |c: &[i64]| solver.canonical(target, &sample.problem, c);
            let want = canon(&sample.config);
            if let Some(first) = list.first() {
                let got = canon(first);
                s.exact += usize::from(got == want);
                s.params_matched += got.iter().zip(&want).filter(|(a, b)| a == b).count();
                s.valid += usize::from(solver.rules(target, &sample.problem).is_valid(first));
            }
            for (i, &k) in TOP_K.iter().enumerate() {
                s.top[i] += usize::from(list.iter().take(k).any(|c| canon(c) == want));
            }
        }
        s
    }

    fn pct(&self, n: usize, per: usize) -> f64 {
        100.0 * n as f64 / (self.problems * per).max(1) as f64
    }

    pub fn exact_pct(&self) -> f64 {
        self.pct(self.exact, 1)
    }

    pub fn param_pct(&self) -> f64 {
        100.0 * self.params_matched as f64 / self.params_total.max(1) as f64
    }

    pub fn valid_pct(&self) -> f64 {
        self.pct(self.valid, 1)
    }

    pub fn top_pct(&self, i: usize) -> f64 {
        self.pct(self.top[i], 1)
    }
}

/// One evaluation: every method on the same problems.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalTable {
    pub arch: String,
    pub solver: String,
    pub problems: usize,
    pub reference_rows: usize,
    pub methods: Vec<MethodScores>,
    /// What a user should be told about the comparison (a baseline left out, and why).
    pub notes: Vec<String>,
    /// Each method's first answer per validation problem (rows over all problems only), for
    /// [`EvalTable::compare_second_run`].
    pub first_answers: Vec<(String, Vec<Option<Vec<i64>>>)>,
    /// The comparison with a second tuning run of the same GPU, when one was given.
    pub second_run: Option<TwoRuns>,
}

/// A second tuning run of the same GPU as the noise ceiling: on the validation problems both
/// runs tuned, how often their winners agree, and each method's exact match against either run.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoRuns {
    /// The second run's database, as given.
    pub source: String,
    /// Validation problems the second run also tuned for this solver.
    pub shared: usize,
    /// Of those, how many have the same winner in both runs (MIOpen-equivalent configs count as one).
    pub agree: usize,
    pub rows: Vec<TwoRunRow>,
}

/// One method's first answer on the problems both runs tuned.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoRunRow {
    pub method: String,
    /// Equal to the first run's (the evaluated database's) winner.
    pub first: usize,
    /// Equal to the second run's winner.
    pub second: usize,
    /// Equal to either run's winner.
    pub either: usize,
}

impl EvalTable {
    /// A fixed-width table for people.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} {}: {} validation problems (held-out geometries), nearest neighbour over {} training rows\n",
            self.arch, self.solver, self.problems, self.reference_rows
        );
        out.push_str(&format!(
            "{:<34} {:>7} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
            "method", "exact%", "param%", "valid%", "top1%", "top4%", "top8%", "top16%"
        ));
        for m in &self.methods {
            let top = |i: usize| {
                if m.max_answers >= TOP_K[i] || i == 0 {
                    format!("{:.1}", m.top_pct(i))
                } else {
                    "-".to_string()
                }
            };
            // Rows of one kind are indented under the row over all problems.
            let name = if m.kind.is_some() {
                format!("  {}", m.name)
            } else {
                m.name.clone()
            };
            out.push_str(&format!(
                "{:<34} {:>7.1} {:>9.1} {:>7.1} {:>7} {:>7} {:>7} {:>7}\n",
                name,
                m.exact_pct(),
                m.param_pct(),
                m.valid_pct(),
                top(0),
                top(1),
                top(2),
                top(3)
            ));
        }
        if let Some(t) = &self.second_run {
            let pct = |n: usize| 100.0 * n as f64 / t.shared.max(1) as f64;
            out.push_str(&format!(
                "second tuning run {}: {} of the validation problems tuned again; the two runs' winners agree on {:.1}%\n",
                t.source,
                t.shared,
                pct(t.agree)
            ));
            out.push_str(&format!(
                "{:<34} {:>9} {:>9} {:>9}\n",
                "method (first answer)", "=run 1%", "=run 2%", "either%"
            ));
            for r in &t.rows {
                out.push_str(&format!(
                    "{:<34} {:>9.1} {:>9.1} {:>9.1}\n",
                    r.method,
                    pct(r.first),
                    pct(r.second),
                    pct(r.either)
                ));
            }
        }
        out
    }

    /// Compares every method's first answer with a second tuning run's winners (`second`: the
    /// tuned config per problem of that run) on the validation problems both runs tuned.
    pub fn compare_second_run(
        &mut self,
        source: &str,
        solver: &dyn Tunable,
        validation: &[Sample],
        second: &std::collections::HashMap<crate::problem::ConvProblem, Vec<i64>>,
    ) {
        let target = Target::new(&self.arch);
        let shared: Vec<usize> = (0..validation.len())
            .filter(|&i| second.contains_key(&validation[i].problem))
            .collect();
        let canon = |i: usize, c: &[i64]| solver.canonical(&target, &validation[i].problem, c);
        let winners: Vec<(Vec<i64>, Vec<i64>)> = shared
            .iter()
            .map(|&i| {
                (
                    canon(i, &validation[i].config),
                    canon(i, &second[&validation[i].problem]),
                )
            })
            .collect();
        let agree = winners.iter().filter(|(a, b)| a == b).count();
        let rows = self
            .first_answers
            .iter()
            .map(|(method, answers)| {
                let mut row = TwoRunRow {
                    method: method.clone(),
                    first: 0,
                    second: 0,
                    either: 0,
                };
                for (&i, (a, b)) in shared.iter().zip(&winners) {
                    if let Some(got) = answers.get(i).and_then(|x| x.as_ref()).map(|c| canon(i, c)) {
                        row.first += usize::from(&got == a);
                        row.second += usize::from(&got == b);
                        row.either += usize::from(&got == a || &got == b);
                    }
                }
                row
            })
            .collect();
        self.second_run = Some(TwoRuns {
            source: source.to_string(),
            shared: shared.len(),
            agree,
            rows,
        });
    }

    pub fn to_json(&self) -> Value {
        json!({
            "arch": self.arch,
            "solver": self.solver,
            "problems": self.problems,
            "reference_rows": self.reference_rows,
            "methods": self.methods.iter().map(|m| json!({
                "method": m.name,
                "row": m.row.map(crate::figures::RowId::as_str),
                "kind": m.kind,
                "problems": m.problems,
                "exact_pct": m.exact_pct(),
                "param_pct": m.param_pct(),
                "valid_pct": m.valid_pct(),
                "top1_pct": m.top_pct(0),
                "top4_pct": m.top_pct(1),
                "top8_pct": m.top_pct(2),
                "top16_pct": m.top_pct(3),
                "max_answers": m.max_answers,
            })).collect::<Vec<_>>(),
            "second_run": self.second_run.as_ref().map(|t| json!({
                "source": t.source,
                "shared_problems": t.shared,
                "runs_agree_pct": 100.0 * t.agree as f64 / t.shared.max(1) as f64,
                "methods": t.rows.iter().map(|r| json!({
                    "method": r.method,
                    "exact_vs_first_run_pct": 100.0 * r.first as f64 / t.shared.max(1) as f64,
                    "exact_vs_second_run_pct": 100.0 * r.second as f64 / t.shared.max(1) as f64,
                    "either_run_pct": 100.0 * r.either as f64 / t.shared.max(1) as f64,
                })).collect::<Vec<_>>(),
            })),
        })
    }
}

/// Ranked answers of a predictor for every sample (answers the solver cannot parse are dropped).
pub fn predictor_answers(
    p: &Predictor,
    solver: &dyn Tunable,
    samples: &[Sample],
    mode: DecodeMode,
) -> Vec<Vec<Vec<i64>>> {
    let problems: Vec<_> = samples.iter().map(|s| s.problem.clone()).collect();
    p.predict_batch(&problems, mode)
        .into_iter()
        .map(|r| {
            r.map(|preds| {
                preds
                    .iter()
                    .filter_map(|x| solver.parse_params(&x.config).ok())
                    .collect()
            })
            .unwrap_or_default()
        })
        .collect()
}

/// The scores of one method's answers split by problem kind (direction, then precision, in
/// MIOpen's spelling; only kinds present), each row named `{label}, {kind} ({problems})`; then
/// the solver's problem classes ([`Tunable::problem_class`], e.g. `stride 2`) the same way.
pub fn by_kind(
    label: &str,
    solver: &dyn Tunable,
    target: &Target,
    samples: &[Sample],
    answers: &[Vec<Vec<i64>>],
) -> Vec<MethodScores> {
    let mut kinds: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let kind = format!("{} {}", s.problem.direction, s.problem.precision);
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, rows)) => rows.push(i),
            None => kinds.push((kind, vec![i])),
        }
    }
    kinds.sort_by(|a, b| a.0.cmp(&b.0));
    let mut classes: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        if let Some(class) = solver.problem_class(&s.problem) {
            match classes.iter_mut().find(|(k, _)| k == class) {
                Some((_, rows)) => rows.push(i),
                None => classes.push((class.to_string(), vec![i])),
            }
        }
    }
    classes.sort_by(|a, b| a.0.cmp(&b.0));
    kinds
        .into_iter()
        .chain(classes)
        .map(|(kind, rows)| {
            let subset: Vec<Sample> = rows.iter().map(|&i| samples[i].clone()).collect();
            let subset_answers: Vec<Vec<Vec<i64>>> = rows.iter().map(|&i| answers[i].clone()).collect();
            let name = format!("{label}, {kind} ({})", rows.len());
            MethodScores {
                kind: Some(kind.clone()),
                ..MethodScores::score(&name, solver, target, &subset, &subset_answers)
            }
        })
        .collect()
}

pub use crate::figures::{DEFAULT_WHERE_VALID, MIN_KIND_PROBLEMS};

/// Per problem: MIOpen's static default (`defaults[i]`, the default method's answer list) where
/// the solver's rules accept it (it is in the space the tuner searched), else the model's ranked
/// answers. `userdb` writes a model this way when that beats both the model everywhere and the
/// default everywhere ([`Verdict::policy`]).
pub fn default_where_valid(
    solver: &dyn Tunable,
    target: &Target,
    samples: &[Sample],
    defaults: &[Vec<Vec<i64>>],
    model: &[Vec<Vec<i64>>],
) -> Vec<Vec<Vec<i64>>> {
    samples
        .iter()
        .zip(defaults.iter().zip(model))
        .map(|(s, (default, ranked))| {
            let valid = default
                .first()
                .is_some_and(|d| solver.rules(target, &s.problem).is_valid(d));
            if valid {
                default.clone()
            } else {
                ranked.clone()
            }
        })
        .collect()
}

/// The name of the hybrid rows: the model's first K answers re-ranked by the neighbours.
pub const HYBRID: &str = "hybrid: the model's answers re-ranked by the neighbours, top";

/// The K of the hybrid rows.
pub const HYBRID_TOP: [usize; 3] = [2, 4, 8];

/// A hybrid of the model and the nearest neighbour, per problem: of the model's first `k`
/// answers, the one that comes first among the neighbours' configs (nearest first) goes first;
/// where none of them is a neighbour's config, the model's order stands. The other answers
/// follow in the model's order.
pub fn reranked_by_neighbours(ranked: &[Vec<Vec<i64>>], neighbours: &[Vec<Vec<i64>>], k: usize) -> Vec<Vec<Vec<i64>>> {
    ranked
        .iter()
        .zip(neighbours)
        .map(|(answers, near)| {
            let pick = answers
                .iter()
                .take(k)
                .enumerate()
                .filter_map(|(r, a)| near.iter().position(|n| n == a).map(|q| (q, r)))
                .min()
                .map(|(_, r)| r);
            let mut out = answers.clone();
            if let Some(r) = pick {
                let first = out.remove(r);
                out.insert(0, first);
            }
            out
        })
        .collect()
}

/// MIOpen's KTN model of the solver that `eval` compares with: its arch and the predictor.
pub struct MiopenModel<'a> {
    pub arch: &'a str,
    pub predictor: &'a Predictor,
}

/// Gives the rows from `from` on the id `id`.
fn tag(methods: &mut [MethodScores], from: usize, id: RowId) {
    for m in &mut methods[from..] {
        m.row = Some(id);
    }
}

/// Runs every method. `model` is ours; `ktn` MIOpen's model of the solver when available.
pub fn evaluate(
    arch: &str,
    solver: &dyn Tunable,
    model: Option<&Predictor>,
    ktn: Option<MiopenModel>,
    reference: &[Sample],
    validation: &[Sample],
    beam: usize,
) -> EvalTable {
    let target = Target::new(arch);
    let mut first_answers: Vec<(String, Vec<Option<Vec<i64>>>)> = Vec::new();
    let mut score = |name: &str, answers: &[Vec<Vec<i64>>]| {
        first_answers.push((name.to_string(), answers.iter().map(|a| a.first().cloned()).collect()));
        MethodScores::score(name, solver, &target, validation, answers)
    };
    let mut methods = Vec::new();
    let mut model_ranked: Option<Vec<Vec<Vec<i64>>>> = None;
    let beam_mode = DecodeMode::Beam { width: beam, top: beam };
    if let Some(m) = model {
        let greedy = predictor_answers(m, solver, validation, DecodeMode::Beam { width: 1, top: 1 });
        methods.push(score("model, greedy (constrained)", &greedy));
        let ranked = predictor_answers(m, solver, validation, beam_mode);
        let from = methods.len();
        methods.push(score(&format!("model, beam {beam}"), &ranked));
        methods.extend(by_kind(&format!("beam {beam}"), solver, &target, validation, &ranked));
        tag(&mut methods, from, RowId::Model);
        model_ranked = Some(ranked);
    }
    let defaults: Vec<Vec<Vec<i64>>> = validation
        .iter()
        .map(|s| vec![solver.static_default(&target, &s.problem)])
        .collect();
    let from = methods.len();
    methods.push(score("MIOpen static default", &defaults));
    methods.extend(by_kind("static default", solver, &target, validation, &defaults));
    tag(&mut methods, from, RowId::Default);
    if let Some(ranked) = &model_ranked {
        // The policy `userdb` can choose for a model that loses to the default where the
        // default is in the tuned space: leave those problems to MIOpen, write the rest.
        let mixed = default_where_valid(solver, &target, validation, &defaults, ranked);
        let from = methods.len();
        methods.push(score(DEFAULT_WHERE_VALID, &mixed));
        methods.extend(by_kind("default/model", solver, &target, validation, &mixed));
        tag(&mut methods, from, RowId::DefaultWhereValid);
    }
    let mut nn: Vec<Vec<Vec<i64>>> = Vec::new();
    let mut nn_all: Vec<(crate::neighbour::Variant, Vec<Vec<Vec<i64>>>)> = Vec::new();
    for variant in crate::neighbour::Variant::ALL {
        let answers: Vec<Vec<Vec<i64>>> = validation
            .iter()
            .map(|s| nearest_neighbours(variant, solver, &target, reference, s, 16))
            .collect();
        let from = methods.len();
        methods.push(score(&format!("{} (valid, k=16)", variant.label()), &answers));
        methods.extend(by_kind(variant.label(), solver, &target, validation, &answers));
        tag(&mut methods, from, RowId::Neighbour(variant));
        if variant == crate::neighbour::Variant::Solver {
            nn = answers.clone();
        }
        nn_all.push((variant, answers));
    }
    if let Some(ranked) = &model_ranked {
        // Hybrids (issue 36): the model's first K answers re-ranked by the neighbours.
        for k in HYBRID_TOP {
            let hybrid = reranked_by_neighbours(ranked, &nn, k);
            methods.push(score(&format!("{HYBRID} {k}"), &hybrid));
        }
    }
    if let Some(k) = ktn {
        let greedy = predictor_answers(k.predictor, solver, validation, DecodeMode::Miopen);
        methods.push(score(&format!("MIOpen KTN {}, MIOpen greedy", k.arch), &greedy));
        let ranked = predictor_answers(k.predictor, solver, validation, beam_mode);
        methods.push(score(&format!("MIOpen KTN {}, beam {beam}", k.arch), &ranked));
    }
    let mut table = EvalTable {
        arch: arch.to_string(),
        solver: solver.solver_name().to_string(),
        problems: validation.len(),
        reference_rows: reference.len(),
        methods,
        notes: Vec::new(),
        first_answers,
        second_run: None,
    };
    // What `--method best` serves (with MIOpen's system perf db at hand, so the neighbour can
    // be chosen) by the figures above, scored on the same problems: issue 44's "never below
    // MIOpen's default or the neighbour", checked where it is decided.
    let figures = table.to_json();
    let mixed = model_ranked
        .as_ref()
        .map(|r| default_where_valid(solver, &target, validation, &defaults, r));
    let served: Vec<Vec<Vec<i64>>> = validation
        .iter()
        .enumerate()
        .map(|(i, s)| {
            use crate::figures::Served;
            let pick = |v: Option<&Vec<Vec<Vec<i64>>>>| v.map(|a| a[i].clone());
            match crate::figures::served_by(&figures, solver, &s.problem, true) {
                Some(Served::Model) | None => pick(model_ranked.as_ref()).unwrap_or_else(|| defaults[i].clone()),
                Some(Served::Neighbour(v)) => {
                    pick(nn_all.iter().find(|(w, _)| *w == v).map(|(_, a)| a)).unwrap_or_else(|| defaults[i].clone())
                }
                Some(Served::Default) => defaults[i].clone(),
                Some(Served::DefaultWhereValid) => pick(mixed.as_ref()).unwrap_or_else(|| defaults[i].clone()),
            }
        })
        .collect();
    let row = MethodScores::score(SERVED, solver, &target, validation, &served);
    table
        .first_answers
        .push((SERVED.to_string(), served.iter().map(|a| a.first().cloned()).collect()));
    table.methods.push(row);
    table
}

/// The name of `eval`'s row of what `--method best` serves (see [`evaluate`]).
pub const SERVED: &str = "served by --method best (system perf db at hand)";

/// Where MIOpen's KTN files are looked for when no directory is given: `$TUNEINFER_MODELS`
/// and the shared data directory next to the crate.
pub fn default_ktn_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(env) = std::env::var_os("TUNEINFER_MODELS") {
        dirs.push(PathBuf::from(env));
    }
    dirs.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen/models"));
    dirs
}

/// Loads our model of `solver` from `files` and MIOpen's KTN model of the solver (on the first
/// arch of [`Tunable::miopen_model_arches`]; from `ktn_dir`, an error when it is not there or
/// damaged; else from the default places when found there), then evaluates on the prepared
/// split (reference = training + early-stop rows).
pub fn evaluate_files(
    files: &WeightsFiles,
    arch: &str,
    solver: &str,
    prep: &Prepared,
    beam: usize,
    ktn_dir: Option<&Path>,
) -> Result<EvalTable> {
    if prep.validation.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no validation problems to evaluate it on (its split held out no geometry, e.g. it was trained \
             with --val-fraction 0); evaluate a model trained with a held-out split",
            files.metadata.display()
        )));
    }
    let solver = crate::solvers::by_name(solver)?;
    let tunable = crate::solvers::tunable(solver)?;
    // tuneinfer's model through the solver that serves tuneinfer's models (the 2-D CK solvers:
    // MIOpen 3.5.1's catalogue), MIOpen's KTN through the registered one.
    let own = models::own_models_solver(solver);
    // Loaded as the GPU it was saved for; evaluated as `arch` (a model across GPUs on another
    // GPU of its pool reads that GPU's features).
    let (info, _) = crate::seq2seq::weights::read_info(&files.metadata)?;
    let model = models::load_weights(files, &info.arch, own)?;
    let ours = Predictor::new(Target::new(arch), own, Box::new(model));
    let ktn_arch = tunable.miopen_model_arches().first().copied();
    // A directory the caller named must hold a loadable KTN model; the default places may not.
    let load_ktn = |ktn_arch: &str, dirs: &[PathBuf]| {
        let name = solver.model_name(ktn_arch)?;
        find_model_files(dirs, ktn_arch, name).and_then(|f| models::load_ktn(&f, solver))
    };
    let mut notes = Vec::new();
    let ktn = match (ktn_arch, ktn_dir) {
        (None, Some(d)) => {
            return Err(Error::Usage(format!(
                "--ktn-models {}: MIOpen ships no KTN model of {} to compare with",
                d.display(),
                solver.name()
            )))
        }
        (None, None) => None,
        (Some(a), Some(d)) => Some((a, load_ktn(a, &[d.to_path_buf()])?)),
        // Absent from the default places: no KTN rows. Present but unusable: said, not hidden.
        (Some(a), None) => match load_ktn(a, &default_ktn_dirs()) {
            Ok(m) => Some((a, m)),
            Err(Error::ModelNotFound { .. }) => None,
            Err(e) => {
                notes.push(format!("note: MIOpen's {a} model left out of the comparison: {e}"));
                None
            }
        },
    }
    .map(|(a, m)| (a, Predictor::new(Target::new(a), solver, Box::new(m))));
    let mut reference = prep.train.clone();
    reference.extend(prep.early_stop.iter().cloned());
    let mut table = evaluate(
        arch,
        tunable,
        Some(&ours),
        ktn.as_ref().map(|(a, p)| MiopenModel { arch: a, predictor: p }),
        &reference,
        &prep.validation,
        beam,
    );
    table.notes = notes;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::ConvProblem;

    use crate::solvers::conv_asm_1x1u::{ConvAsm1x1USolver as ASM, NAME, NUM_PARAMS};

    fn sample(key: &str, config: [i64; 8]) -> Sample {
        Sample {
            source_id: 0,
            problem: ConvProblem::from_perfdb_key(key).unwrap(),
            config: config.to_vec(),
        }
    }

    /// Ranked answers as the scorer takes them.
    fn lists(answers: Vec<Vec<[i64; 8]>>) -> Vec<Vec<Vec<i64>>> {
        answers
            .into_iter()
            .map(|l| l.into_iter().map(|c| c.to_vec()).collect())
            .collect()
    }

    fn gfx906() -> Target {
        Target::new("gfx906")
    }

    #[test]
    fn scores_hand_derived() {
        let a = sample(
            "64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 2, 1, 1, 2, 1, 1],
        );
        let b = sample(
            "64-14-14-1x1-64-14-14-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 1, 1, 1, 1, 1, 1],
        );
        let answers = vec![
            vec![[1, 4, 2, 1, 1, 2, 1, 1]],
            vec![
                [1, 4, 1, 1, 1, 2, 1, 2],
                [9, 9, 9, 9, 9, 9, 9, 9],
                [1, 4, 1, 1, 1, 1, 1, 1],
            ],
        ];
        let s = MethodScores::score("x", &ASM, &gfx906(), &[a, b], &lists(answers));
        assert_eq!((s.exact, s.params_matched, s.valid), (1, 8 + 6, 2));
        assert_eq!(s.top, [1, 2, 2, 2]);
        assert_eq!(s.max_answers, 3);
        assert!((s.param_pct() - 87.5).abs() < 1e-9);
    }

    #[test]
    fn second_run_comparison_hand_derived() {
        // Three validation problems; the second run tuned two of them: it agrees on `a`
        // and picked another winner for `b`. The method answers a's winner, b's second-run
        // winner, and c (not shared, not counted).
        let a = sample(
            "64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 2, 1, 1, 2, 1, 1],
        );
        let b = sample(
            "64-14-14-1x1-64-14-14-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 1, 1, 1, 1, 1, 1],
        );
        let c = sample(
            "64-28-28-1x1-64-28-28-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 1, 1, 1, 1, 1, 1],
        );
        let second: std::collections::HashMap<_, _> = [
            (a.problem.clone(), a.config.clone()),
            (b.problem.clone(), vec![1, 4, 1, 1, 1, 2, 1, 2]),
        ]
        .into_iter()
        .collect();
        let mut table = EvalTable {
            arch: "gfx906".into(),
            solver: NAME.into(),
            problems: 3,
            reference_rows: 0,
            methods: Vec::new(),
            notes: Vec::new(),
            first_answers: vec![(
                "m".into(),
                vec![
                    Some(a.config.clone()),
                    Some(vec![1, 4, 1, 1, 1, 2, 1, 2]),
                    Some(c.config.clone()),
                ],
            )],
            second_run: None,
        };
        table.compare_second_run("run2", &ASM, &[a, b, c], &second);
        let t = table.second_run.as_ref().unwrap();
        assert_eq!((t.shared, t.agree), (2, 1));
        assert_eq!(
            t.rows[0],
            TwoRunRow {
                method: "m".into(),
                first: 1,
                second: 2,
                either: 2
            }
        );
        assert!(table.to_text().contains("agree on 50.0%"));
    }

    /// A one-parameter solver for hand-derived mixes: a config is valid when it divides the
    /// problem's K; the static default is 3.
    struct DividesK;
    struct DividesKRules(i64);
    impl crate::solvers::IntRules for DividesKRules {
        fn config_len(&self) -> usize {
            1
        }
        fn prefix_valid(&self, prefix: &[i64]) -> bool {
            prefix.len() <= 1 && prefix.iter().all(|&v| v > 0 && self.0 % v == 0)
        }
    }
    impl Tunable for DividesK {
        fn solver_name(&self) -> &'static str {
            "DividesK"
        }
        fn param_names(&self) -> &'static [&'static str] {
            &["v"]
        }
        fn applicable(&self, _t: &Target, _p: &ConvProblem) -> Result<()> {
            Ok(())
        }
        fn rules(&self, _t: &Target, p: &ConvProblem) -> Box<dyn crate::solvers::IntRules> {
            Box::new(DividesKRules(p.k as i64))
        }
        fn static_default(&self, _t: &Target, _p: &ConvProblem) -> Vec<i64> {
            vec![3]
        }
        fn feature_names(&self) -> [&'static str; crate::solvers::NUM_FEATURES] {
            [""; crate::solvers::NUM_FEATURES]
        }
        fn features(&self, _p: &ConvProblem) -> [f32; crate::solvers::NUM_FEATURES] {
            [0.0; crate::solvers::NUM_FEATURES]
        }
        fn workload_kind(&self) -> (&'static [crate::problem::Direction], u64) {
            (&[crate::problem::Direction::Forward], 1)
        }
    }

    #[test]
    fn default_where_valid_takes_the_default_only_where_the_rules_accept_it() {
        let one = |key: &str, best: i64| Sample {
            source_id: 0,
            problem: ConvProblem::from_perfdb_key(key).unwrap(),
            config: vec![best],
        };
        // K = 6 (3 divides it: the default stands), K = 8 (it does not: the model's list).
        let samples = vec![
            one("16-7-7-1x1-6-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F", 2),
            one("16-7-7-1x1-8-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F", 4),
            one("16-7-7-1x1-12-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F", 3),
        ];
        assert_eq!(samples[0].problem.k, 6, "key order: C-H-W-FyxFx-K-...");
        let model = vec![vec![vec![2], vec![1]], vec![vec![4], vec![2]], vec![vec![4]]];
        let defaults: Vec<Vec<Vec<i64>>> = samples
            .iter()
            .map(|s| vec![DividesK.static_default(&gfx906(), &s.problem)])
            .collect();
        let mixed = default_where_valid(&DividesK, &gfx906(), &samples, &defaults, &model);
        assert_eq!(mixed, vec![vec![vec![3]], vec![vec![4], vec![2]], vec![vec![3]]]);
        // Exact: the model 2 of 3 (problems 1 and 2), the default 1 of 3 (problem 3), the mix
        // 2 of 3 (problems 2 and 3).
        let exact = |a: &[Vec<Vec<i64>>]| MethodScores::score("m", &DividesK, &gfx906(), &samples, a).exact;
        assert_eq!((exact(&model), exact(&mixed)), (2, 2));
    }

    #[test]
    fn scores_by_kind_hand_derived() {
        // Two forward fp32 problems (one exact hit), one backward fp16 (a top-2 hit only).
        let f1 = sample(
            "64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 2, 1, 1, 2, 1, 1],
        );
        let b1 = sample(
            "64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP16-B",
            [1, 4, 2, 2, 1, 2, 1, 1],
        );
        let f2 = sample(
            "64-14-14-1x1-64-14-14-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 1, 1, 1, 1, 1, 1],
        );
        let answers = vec![
            vec![[1, 4, 2, 1, 1, 2, 1, 1]],
            vec![[1, 4, 2, 4, 1, 2, 1, 1], [1, 4, 2, 2, 1, 2, 1, 1]],
            vec![[2, 4, 1, 1, 1, 1, 1, 1]],
        ];
        let rows = by_kind("beam 2", &ASM, &gfx906(), &[f1, b1, f2], &lists(answers));
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["beam 2, B FP16 (1)", "beam 2, F FP32 (2)"]);
        assert_eq!(rows[0].kind.as_deref(), Some("B FP16"));
        assert_eq!((rows[0].problems, rows[0].exact, rows[0].top[1]), (1, 0, 1));
        assert_eq!((rows[1].problems, rows[1].exact, rows[1].params_matched), (2, 1, 8 + 7));
    }

    #[test]
    fn a_solvers_problem_class_gets_rows_of_its_own_after_the_kinds() {
        // ConvAsm1x1U: 14x14 -> 7x7 at stride 2 is the class "stride 2" (and a F FP32 problem).
        let s1 = sample(
            "64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            [1, 4, 2, 1, 1, 2, 1, 1],
        );
        let s2 = sample(
            "64-14-14-1x1-64-7-7-8-0x0-2x2-1x1-0-NCHW-FP32-F",
            [1, 4, 1, 1, 1, 1, 1, 1],
        );
        let answers = vec![vec![[1, 4, 2, 1, 1, 2, 1, 1]], vec![[2, 4, 1, 1, 1, 1, 1, 1]]];
        let rows = by_kind("beam 1", &ASM, &gfx906(), &[s1, s2], &lists(answers));
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["beam 1, F FP32 (2)", "beam 1, stride 2 (1)"]);
        assert_eq!(rows[1].kind.as_deref(), Some("stride 2"));
        assert_eq!((rows[1].problems, rows[1].exact), (1, 0));
        assert_eq!((rows[0].problems, rows[0].exact), (2, 1));
    }

    #[test]
    fn the_hybrid_takes_the_models_answer_the_neighbours_rank_first_among_its_first_k() {
        let c = |v: i64| vec![v];
        // Model: 1, 2, 3; neighbours: 3, 2. Top 2: {1, 2}: 2 is the only neighbour config -> 2, 1, 3.
        let ranked = vec![vec![c(1), c(2), c(3)], vec![c(5), c(6)]];
        let near = vec![vec![c(3), c(2)], vec![c(7)]];
        let two = reranked_by_neighbours(&ranked, &near, 2);
        assert_eq!(two[0], vec![c(2), c(1), c(3)]);
        // Top 3: 3 is the neighbours' first -> 3, 1, 2.
        assert_eq!(reranked_by_neighbours(&ranked, &near, 3)[0], vec![c(3), c(1), c(2)]);
        // No neighbour config among the model's answers: the model's order.
        assert_eq!(two[1], vec![c(5), c(6)]);
    }

    #[test]
    fn nearest_neighbour_prefers_close_valid_same_kind_rows() {
        let q = sample("64-14-14-1x1-64-14-14-8-0x0-1x1-1x1-0-NCHW-FP32-F", [0; 8]);
        let reference = vec![
            sample(
                "64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F",
                [1, 4, 2, 1, 1, 2, 1, 1],
            ),
            sample(
                "64-14-14-1x1-64-14-14-8-0x0-1x1-1x1-0-NCHW-FP16-F",
                [1, 4, 2, 1, 1, 2, 1, 2],
            ),
            sample(
                "64-14-14-1x1-64-14-14-16-0x0-1x1-1x1-0-NCHW-FP32-F",
                [1, 4, 1, 1, 1, 1, 1, 1],
            ),
        ];
        let nn = nearest_neighbours(crate::neighbour::Variant::Solver, &ASM, &gfx906(), &reference, &q, 4);
        assert_eq!(nn, vec![vec![1, 4, 1, 1, 1, 1, 1, 1], vec![1, 4, 2, 1, 1, 2, 1, 1]]);
    }

    #[test]
    fn evaluate_files_refuses_a_model_whose_token_values_are_not_integers() {
        use crate::data::dataset::{DataReport, Dataset};
        use crate::seq2seq::attention::{AttentionConfig, AttentionParams, FeatureTransform, NUM_FEATURES};
        use crate::seq2seq::weights::{self, WeightsInfo};
        let dir = std::env::temp_dir().join(format!("tuneinfer-eval-vocab-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = AttentionConfig {
            steps: NUM_FEATURES,
            hidden: 4,
            embed: 3,
            vocab: 5,
            seq_len: NUM_PARAMS,
            encoder: Default::default(),
        };
        let info = WeightsInfo {
            arch: "gfx906".into(),
            solver: NAME.into(),
            config,
            members: 1,
            // ConvAsm1x1U's parameters are integers: "abc" can only be damage.
            token_values: ["-1", "1", "abc", "4", "8"].iter().map(|s| s.to_string()).collect(),
            transform: FeatureTransform {
                mean: vec![0.0; NUM_FEATURES],
                std: vec![1.0; NUM_FEATURES],
                gpu: None,
            },
            training: json!({}),
            metrics: json!({}),
            pool_metrics: Value::Null,
        };
        let files = weights::save(&dir, &[AttentionParams::init(config, 1)], &info).unwrap();
        let prep = Prepared {
            dataset: Dataset {
                samples: Vec::new(),
                report: DataReport::default(),
                data_hash: String::new(),
            },
            train: Vec::new(),
            early_stop: Vec::new(),
            // One problem: a split with none is refused before the model is loaded.
            validation: vec![sample(
                "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
                [2, 8, 4, 16, 1, 4, 1, 4],
            )],
            other_gpus: Vec::new(),
            not_taken_by_network: 0,
        };
        let e = evaluate_files(&files, "gfx906", NAME, &prep, 2, None)
            .expect_err("a non-integer token value must be refused");
        assert!(
            e.to_string().contains("'abc'") && e.to_string().contains(&files.metadata.display().to_string()),
            "{e}"
        );
        assert_eq!(e.exit_code(), 4);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
