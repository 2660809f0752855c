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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(method: &str, kind: Option<&str>, exact: f64, problems: u64) -> Value {
        json!({"method": method, "kind": kind, "exact_pct": exact, "problems": problems})
    }

    #[test]
    fn best_reads_the_class_then_the_kind_then_all_and_prefers_the_model_on_a_tie() {
        let metrics = json!({"methods": [
            row("model, beam 16", None, 86.2, 3531),
            row("beam 16, F FP32 (1246)", Some("F FP32"), 91.2, 1246),
            row("beam 16, stride 2 (357)", Some("stride 2"), 90.8, 357),
            row("beam 16, B FP16 (5)", Some("B FP16"), 10.0, 5),
            row("MIOpen static default", None, 81.9, 3531),
            row("static default, F FP32 (1246)", Some("F FP32"), 88.0, 1246),
            row("static default, stride 2 (357)", Some("stride 2"), 95.2, 357),
            row("static default, B FP16 (5)", Some("B FP16"), 90.0, 5),
            row("nearest neighbour (valid, k=16)", None, 83.6, 3531),
            row("nearest neighbour, F FP32 (1246)", Some("F FP32"), 91.2, 1246),
            row("nearest neighbour, stride 2 (357)", Some("stride 2"), 91.6, 357),
        ]});
        let r = Recorded::from_metrics(&metrics);
        let asm = &crate::solvers::conv_asm_1x1u::ConvAsm1x1USolver;
        let p = |key: &str| ConvProblem::from_perfdb_key(key).unwrap();
        // Stride 2: the class decides (the default, 95.2 over 91.6 and 90.8).
        let (label, f) = r
            .for_problem(asm, &p("64-14-14-1x1-64-7-7-8-0x0-2x2-1x1-0-NCHW-FP32-F"))
            .unwrap();
        assert_eq!((label.as_str(), f.best(true)), ("stride 2", Chosen::Default));
        // F FP32 at stride 1: the kind; the neighbour ties the model, which stays.
        let (label, f) = r
            .for_problem(asm, &p("64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F"))
            .unwrap();
        assert_eq!((label.as_str(), f.best(true)), ("F FP32", Chosen::Model));
        // B FP16 has 5 problems (fewer than MIN_KIND_PROBLEMS): all problems decide.
        let (label, f) = r
            .for_problem(asm, &p("64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP16-B"))
            .unwrap();
        assert_eq!((label.as_str(), f.best(true)), ("all", Chosen::Model));
        // Without the neighbour's rows at hand it is never chosen; with them it wins where ahead.
        let f = Figures {
            model: Some(40.0),
            neighbour: Some(45.0),
            neighbour_variant: Variant::Solver,
            default: 10.0,
            mix: Some(41.0),
            problems: 100,
            cell_choice: None,
        };
        assert_eq!(
            (f.best(true), f.best(false)),
            (Chosen::Neighbour, Chosen::DefaultWhereValid)
        );
        // MI100's GTC backward (its recorded figures): the mix beats both the model and the default.
        let gtc = Figures {
            model: Some(60.7),
            neighbour: Some(48.9),
            neighbour_variant: Variant::Solver,
            default: 72.6,
            mix: Some(85.4),
            problems: 4341,
            cell_choice: None,
        };
        assert_eq!(gtc.best(true), Chosen::DefaultWhereValid);
        assert!(!r.neighbour_can_win());
        assert!(Recorded::from_metrics(&json!({}))
            .for_problem(asm, &p("64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP16-B"))
            .is_none());
    }

    #[test]
    fn a_kind_leaves_the_cells_choice_only_beyond_noise() {
        // Over all problems the model leads (60 over the default's 50). In both kinds the
        // default leads the model by 5 points; the standard error of the difference of 0.60 and
        // 0.55 is 100 * sqrt((.60*.40 + .55*.45) / n): 3.49 on F FP16's 400 problems (5 is
        // within 2 of them: the model stays), 1.56 on F FP32's 2000 (5 > 3.12: the default).
        let metrics = json!({"methods": [
            row("model, beam 16", None, 60.0, 2400),
            row("beam 16, F FP16 (400)", Some("F FP16"), 55.0, 400),
            row("beam 16, F FP32 (2000)", Some("F FP32"), 55.0, 2000),
            row("MIOpen static default", None, 50.0, 2400),
            row("static default, F FP16 (400)", Some("F FP16"), 60.0, 400),
            row("static default, F FP32 (2000)", Some("F FP32"), 60.0, 2000),
        ]});
        let r = Recorded::from_metrics(&metrics);
        let asm = &crate::solvers::conv_asm_1x1u::ConvAsm1x1USolver;
        let p = |key: &str| ConvProblem::from_perfdb_key(key).unwrap();
        let (label, f) = r
            .for_problem(asm, &p("64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP16-F"))
            .unwrap();
        assert_eq!((label.as_str(), f.best(true)), ("F FP16", Chosen::Model));
        let (label, f) = r
            .for_problem(asm, &p("64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F"))
            .unwrap();
        assert_eq!((label.as_str(), f.best(true)), ("F FP32", Chosen::Default));
        assert_eq!(r.overall.unwrap().best(true), Chosen::Model);
    }

    #[test]
    fn the_cells_neighbour_is_the_variant_best_over_all_problems() {
        // The vote neighbour leads over all problems (48 > 45 > 40); in W FP32 the key neighbour
        // scores higher (70) but the cell keeps one variant: the vote's 66 decides there, and
        // beats the model's 50 and the default's 30.
        let metrics = json!({"methods": [
            row("model, beam 16", None, 44.0, 1000),
            row("beam 16, W FP32 (600)", Some("W FP32"), 50.0, 600),
            row("MIOpen static default", None, 20.0, 1000),
            row("static default, W FP32 (600)", Some("W FP32"), 30.0, 600),
            row("nearest neighbour (valid, k=16)", None, 40.0, 1000),
            row("nearest neighbour, W FP32 (600)", Some("W FP32"), 50.0, 600),
            row("nearest neighbour key (valid, k=16)", None, 45.0, 1000),
            row("nearest neighbour key, W FP32 (600)", Some("W FP32"), 70.0, 600),
            row("nearest neighbour vote (valid, k=16)", None, 48.0, 1000),
            row("nearest neighbour vote, W FP32 (600)", Some("W FP32"), 66.0, 600),
        ]});
        let r = Recorded::from_metrics(&metrics);
        let overall = r.overall.unwrap();
        assert_eq!(
            (overall.best(true), overall.neighbour_variant, overall.neighbour),
            (Chosen::Neighbour, Variant::Vote, Some(48.0))
        );
        let wrw = &r.kinds.iter().find(|(k, _)| k == "W FP32").unwrap().1;
        assert_eq!(
            (wrw.best(true), wrw.neighbour_variant, wrw.neighbour),
            (Chosen::Neighbour, Variant::Vote, Some(66.0))
        );
        // Without the neighbour's rows the model answers (44 over the default's 20).
        assert_eq!(overall.best(false), Chosen::Model);
    }
}
