//! A model's recorded validation figures, typed (issue 52): what `train`/`eval --record` wrote
//! in its JSON (`validation.methods`: exact match of each predictor on the held-out problems,
//! over all of them and per kind or class), and the one decision made from them: which
//! predictor `--method best` serves a problem with ([`served_by`]). `eval`'s served row,
//! `predict`/`batch --method best`, the C ABI, Python and `userdb` ([`crate::written`]) all
//! call it.
//!
//! Rows are found by their id ([`RowId`], stored as `"row"` beside the label since issue 52);
//! files written before the ids are read by their labels.

use serde_json::Value;

use crate::neighbour::Variant;
use crate::problem::ConvProblem;
use crate::solvers::Tunable;

/// Fewest held-out problems of one kind (direction and precision) or class whose figures decide
/// for that kind or class.
pub const MIN_KIND_PROBLEMS: u64 = 20;

/// The label of the row of MIOpen's default where the solver's rules accept it, else the model
/// ([`crate::eval::default_where_valid`]).
pub const DEFAULT_WHERE_VALID: &str = "default where valid, else model";

/// Which predictor a recorded row scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowId {
    /// tuneinfer's model, the beam's first answer.
    Model,
    /// MIOpen's static default.
    Default,
    /// MIOpen's default where the rules accept it, else the model.
    DefaultWhereValid,
    Neighbour(Variant),
}

impl RowId {
    pub const ALL: [RowId; 6] = [
        RowId::Model,
        RowId::Default,
        RowId::DefaultWhereValid,
        RowId::Neighbour(Variant::Solver),
        RowId::Neighbour(Variant::Key),
        RowId::Neighbour(Variant::Vote),
    ];

    /// The id as stored (`"row"`).
    pub fn as_str(self) -> &'static str {
        match self {
            RowId::Model => "model",
            RowId::Default => "default",
            RowId::DefaultWhereValid => "default_where_valid",
            RowId::Neighbour(Variant::Solver) => "neighbour_solver",
            RowId::Neighbour(Variant::Key) => "neighbour_key",
            RowId::Neighbour(Variant::Vote) => "neighbour_vote",
        }
    }

    /// How the row's label started in files written before the ids: over all problems, or
    /// (`per_kind`) one kind's or class's row (`{label}, KIND (n)`).
    pub fn label_prefix(self, per_kind: bool) -> String {
        match (self, per_kind) {
            (RowId::Model, false) => "model, beam".into(),
            (RowId::Model, true) => "beam ".into(),
            (RowId::Default, false) => "MIOpen static default".into(),
            (RowId::Default, true) => "static default".into(),
            (RowId::DefaultWhereValid, false) => DEFAULT_WHERE_VALID.into(),
            (RowId::DefaultWhereValid, true) => "default/model".into(),
            (RowId::Neighbour(v), false) => format!("{} (", v.label()),
            (RowId::Neighbour(v), true) => format!("{}, ", v.label()),
        }
    }

    /// The id of a row labelled `label` (over all problems, or per kind), by the labels above.
    pub fn of_label(label: &str, per_kind: bool) -> Option<RowId> {
        RowId::ALL
            .into_iter()
            .find(|id| label.starts_with(&id.label_prefix(per_kind)))
    }
}

/// Exact-match figures of one kind of held-out problems (or all of them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// None for a cell served without a network ([`crate::models::Located::Neighbour`]).
    pub model: Option<f64>,
    pub neighbour: Option<f64>,
    /// Which neighbour [`Figures::neighbour`] is (the best recorded of [`Variant::ALL`]).
    pub neighbour_variant: Variant,
    pub default: f64,
    /// MIOpen's default where the rules accept it, else the model ([`crate::eval::default_where_valid`]).
    pub mix: Option<f64>,
    pub problems: u64,
    /// For a kind's or class's figures: what the cell's figures over all problems choose
    /// (without, with the neighbour's rows at hand), which stands unless this kind's choice
    /// leads it here by more than noise ([`Figures::best`]).
    pub cell_choice: Option<[Chosen; 2]>,
}

/// The predictor chosen for one problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen {
    Model,
    Neighbour,
    Default,
    /// MIOpen's default where the solver's rules accept it for the problem, else the model.
    DefaultWhereValid,
}

/// How many standard errors a kind's (or class's) own choice must lead the cell's choice by to
/// replace it there (issue 44 item 4: a per-kind choice only beyond noise).
pub const NOISE_Z: f64 = 2.0;

/// Exact % `a` leads exact % `b`, both over the same `n` problems, by more than [`NOISE_Z`]
/// standard errors of the difference of the two proportions.
pub fn leads_beyond_noise(a: f64, b: f64, n: u64) -> bool {
    let (pa, pb, n) = (a / 100.0, b / 100.0, n as f64);
    let se = 100.0 * ((pa * (1.0 - pa) + pb * (1.0 - pb)) / n).sqrt();
    a - b > NOISE_Z * se
}

impl Figures {
    /// What `best` answers with: over all problems the best of the predictors
    /// ([`Figures::argmax`]); in a kind or class the cell's choice, unless the kind's own best
    /// leads it there by more than [`NOISE_Z`] standard errors of the difference of two
    /// proportions over the kind's problems. Either way no kind is answered below what the
    /// cell's choice does there, so the served figure over all problems is at least the best
    /// single predictor's (MIOpen's default and the neighbour included).
    pub fn best(&self, have_neighbours: bool) -> Chosen {
        let mine = self.argmax(have_neighbours);
        let Some(cell) = self.cell_choice.map(|c| c[usize::from(have_neighbours)]) else {
            return mine;
        };
        let (Some(a), Some(b)) = (self.figure(mine), self.figure(cell)) else {
            return mine;
        };
        if mine == cell || self.problems == 0 {
            return mine;
        }
        if leads_beyond_noise(a, b, self.problems) {
            mine
        } else {
            cell
        }
    }

    /// The recorded exact % of `c` (None where not recorded).
    pub fn figure(&self, c: Chosen) -> Option<f64> {
        match c {
            Chosen::Model => self.model,
            Chosen::Neighbour => self.neighbour,
            Chosen::Default => Some(self.default),
            Chosen::DefaultWhereValid => self.mix,
        }
    }

    /// The best of the predictors on these figures (the model on a tie, then the neighbour); the
    /// neighbour only where its rows are at hand.
    pub fn argmax(&self, have_neighbours: bool) -> Chosen {
        // Without a network the default is what the cell answers unless the neighbour beats it.
        let mut chosen = match self.model {
            Some(m) => (Chosen::Model, m),
            None => (Chosen::Default, self.default),
        };
        if let Some(n) = self.neighbour.filter(|_| have_neighbours) {
            if n > chosen.1 {
                chosen = (Chosen::Neighbour, n);
            }
        }
        if self.default > chosen.1 {
            chosen = (Chosen::Default, self.default);
        }
        if let Some(mix) = self.mix.filter(|m| *m > chosen.1) {
            chosen = (Chosen::DefaultWhereValid, mix);
        }
        chosen.0
    }
}

/// The recorded figures of a model: over all held-out problems, and per kind or class.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recorded {
    pub overall: Option<Figures>,
    pub kinds: Vec<(String, Figures)>,
}

impl Recorded {
    /// Reads a model's `validation` rows (see [`crate::eval::EvalTable::to_json`]): by their
    /// [`RowId`] (`"row"`), or in files written before the ids, by their labels.
    pub fn from_metrics(metrics: &Value) -> Recorded {
        let Some(rows) = metrics.get("methods").and_then(Value::as_array) else {
            return Recorded::default();
        };
        let by_id = rows.iter().any(|r| r.get("row").and_then(Value::as_str).is_some());
        let find = |kind: Option<&str>, id: RowId| {
            rows.iter().find(|r| {
                r.get("kind").and_then(Value::as_str) == kind
                    && match by_id {
                        true => r.get("row").and_then(Value::as_str) == Some(id.as_str()),
                        false => r
                            .get("method")
                            .and_then(Value::as_str)
                            .is_some_and(|m| m.starts_with(&id.label_prefix(kind.is_some()))),
                    }
            })
        };
        let exact = |r: &Value| r.get("exact_pct").and_then(Value::as_f64);
        let neighbour_of = |kind: Option<&str>, v: Variant| find(kind, RowId::Neighbour(v)).and_then(exact);
        // The cell's neighbour: the variant best over all problems (the first on a tie); its
        // per-kind rows decide the kinds (one variant per cell: no choice among three on a
        // few problems).
        let cell_variant = {
            let mut best: Option<(f64, Variant)> = None;
            for v in Variant::ALL {
                if let Some(e) = neighbour_of(None, v) {
                    if best.is_none_or(|(b, _)| e > b) {
                        best = Some((e, v));
                    }
                }
            }
            best.map_or(Variant::Solver, |(_, v)| v)
        };
        // A model's rows, or (a cell without a network) the default's and the neighbour's.
        let figures = |kind: Option<&str>| -> Option<Figures> {
            let d = find(kind, RowId::Default)?;
            let m = find(kind, RowId::Model);
            let nn = neighbour_of(kind, cell_variant);
            Some(Figures {
                model: match m {
                    Some(m) => Some(exact(m)?),
                    None => None,
                },
                default: exact(d)?,
                neighbour: nn,
                neighbour_variant: cell_variant,
                mix: find(kind, RowId::DefaultWhereValid).and_then(exact),
                problems: m.unwrap_or(d).get("problems").and_then(Value::as_u64).unwrap_or(0),
                cell_choice: None,
            })
        };
        let overall = figures(None);
        let mut kinds: Vec<(String, Figures)> = Vec::new();
        for r in rows {
            let Some(kind) = r.get("kind").and_then(Value::as_str) else {
                continue;
            };
            if kinds.iter().any(|(k, _)| k == kind) {
                continue;
            }
            if let Some(mut f) = figures(Some(kind)) {
                f.cell_choice = overall.map(|o| [o.argmax(false), o.argmax(true)]);
                kinds.push((kind.to_string(), f));
            }
        }
        Recorded { overall, kinds }
    }

    /// The figures that decide for `problem`: its class's, else its kind's (each from
    /// [`MIN_KIND_PROBLEMS`] problems), else the overall ones; with the label.
    pub fn for_problem(&self, solver: &dyn Tunable, problem: &ConvProblem) -> Option<(String, Figures)> {
        let kind = format!("{} {}", problem.direction, problem.precision);
        let enough = |label: &str| {
            self.kinds
                .iter()
                .find(|(k, f)| k == label && f.problems >= MIN_KIND_PROBLEMS)
                .map(|(k, f)| (k.clone(), *f))
        };
        solver
            .problem_class(problem)
            .and_then(enough)
            .or_else(|| enough(&kind))
            .or_else(|| self.overall.map(|f| ("all".to_string(), f)))
    }

    /// Could the neighbour win anywhere?
    pub fn neighbour_can_win(&self) -> bool {
        self.overall
            .iter()
            .chain(self.kinds.iter().map(|(_, f)| f))
            .any(|f| f.best(true) == Chosen::Neighbour)
    }
}

/// What `--method best` answers one problem with, by a cell's recorded figures (`eval`'s
/// "served" row scores exactly this on the held-out problems).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    Model,
    Neighbour(Variant),
    Default,
    /// MIOpen's default where the rules accept it, else the model.
    DefaultWhereValid,
}

/// [`Served`] for `problem` by the figures `metrics` (an `eval` table's JSON, as recorded in a
/// model's `validation`), the neighbour's rows at hand or not; None where nothing is recorded.
pub fn served_by(
    metrics: &Value,
    solver: &dyn Tunable,
    problem: &ConvProblem,
    have_neighbours: bool,
) -> Option<Served> {
    let recorded = Recorded::from_metrics(metrics);
    let (_, f) = recorded.for_problem(solver, problem)?;
    Some(match f.best(have_neighbours) {
        Chosen::Model => Served::Model,
        Chosen::Neighbour => Served::Neighbour(f.neighbour_variant),
        Chosen::Default => Served::Default,
        Chosen::DefaultWhereValid => Served::DefaultWhereValid,
    })
}
