//! The nearest tuned neighbour as a predictor (issue 36): for a problem, the tuned configs of
//! the closest tuned problems of the same kind (direction and precision), the first that the
//! solver's rules accept for this problem. `eval` scores it beside the model on the same held-out
//! problems (its reference rows: the training side of the split); at prediction time its rows are
//! the solver's tuned rows of MIOpen's system perf db for the GPU (found as MIOpen finds it, the
//! closest CU count's when the GPU has none: [`crate::userdb::system`]), or any perf db given.
//!
//! Distance: Euclidean over the solver's log2 size features ([`Tunable::size_features`] leading
//! [`Tunable::features`]); ties keep the rows' order.

use std::path::{Path, PathBuf};

use crate::data::dataset::Sample;
use crate::error::Result;
use crate::problem::ConvProblem;
use crate::solvers::{Target, Tunable};

/// The numbers of a problem's perf-db key as the neighbour measures them: log2(1 + x) of
/// N, C, K, H, W, Y, X, pads, strides, dilations and groups (and the depth fields of a 3-D
/// problem, 0 for 2-D).
pub fn key_features(p: &ConvProblem) -> [f32; 19] {
    let l = |v: u64| (1.0 + v as f64).log2() as f32;
    let d = p.depth.as_ref();
    [
        l(p.n),
        l(p.c),
        l(p.k),
        l(p.in_h),
        l(p.in_w),
        l(p.filter_h),
        l(p.filter_w),
        l(p.pad_h),
        l(p.pad_w),
        l(p.stride_h),
        l(p.stride_w),
        l(p.dilation_h),
        l(p.dilation_w),
        l(p.groups),
        d.map_or(0.0, |d| l(d.in_d)),
        d.map_or(0.0, |d| l(d.filter_d)),
        d.map_or(0.0, |d| l(d.pad_d)),
        d.map_or(0.0, |d| l(d.stride_d)),
        d.map_or(0.0, |d| l(d.dilation_d)),
    ]
}

/// How the neighbour measures and chooses (issue 44 item 3). `eval` scores all three on the same
/// held-out problems; a cell answers with the one its recorded figures rank first
/// ([`Variant::best_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// The solver's log2 size features ([`Tunable::size_features`]), the nearest row's config
    /// first (issue 36's neighbour).
    #[default]
    Solver,
    /// The key's numbers ([`key_features`]), rows of the problem's own layout before any other,
    /// the nearest row's config first.
    Key,
    /// [`Variant::Key`], the configs ranked by a vote of the nearest five valid rows (each row
    /// votes 1/(1 + distance) for its config), then nearest first.
    Vote,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Solver, Variant::Key, Variant::Vote];

    /// The label of `eval`'s rows: `{label} (valid, k=16)` over all problems, `{label}, KIND (n)`
    /// per kind. Issue 36's label stays the solver-feature neighbour's, so older records read.
    pub fn label(self) -> &'static str {
        match self {
            Variant::Solver => "nearest neighbour",
            Variant::Key => "nearest neighbour key",
            Variant::Vote => "nearest neighbour vote",
        }
    }

    /// In words, for notes.
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Solver => "the nearest tuned neighbour by the solver's size features",
            Variant::Key => "the nearest tuned neighbour by the key's sizes, same layout first",
            Variant::Vote => "a vote of the five nearest tuned neighbours by the key's sizes",
        }
    }
}

/// The distinct configs of the tuned rows nearest to `problem` (same direction and precision,
/// nearest first) that the solver's rules accept for it, at most `k`; empty when none is valid.
pub fn valid_neighbour_configs(
    variant: Variant,
    solver: &dyn Tunable,
    target: &Target,
    reference: &[Sample],
    problem: &ConvProblem,
    k: usize,
) -> Vec<Vec<i64>> {
    let rules = solver.rules(target, problem);
    let kind = |r: &&Sample| r.problem.direction == problem.direction && r.problem.precision == problem.precision;
    let mut dist: Vec<(f32, usize)> = match variant {
        Variant::Solver => {
            let f = solver.features(problem);
            let sizes = solver.size_features();
            reference
                .iter()
                .enumerate()
                .filter(|(_, r)| kind(r))
                .map(|(i, r)| {
                    let g = solver.features(&r.problem);
                    (
                        f.iter()
                            .zip(&g)
                            .take(sizes)
                            .map(|(a, b)| (a - b) * (a - b))
                            .sum::<f32>(),
                        i,
                    )
                })
                .collect()
        }
        Variant::Key | Variant::Vote => {
            let f = key_features(problem);
            reference
                .iter()
                .enumerate()
                .filter(|(_, r)| kind(r))
                .map(|(i, r)| {
                    let g = key_features(&r.problem);
                    let d: f32 = f.iter().zip(&g).map(|(a, b)| (a - b) * (a - b)).sum();
                    // Another layout only after every row of the problem's own.
                    let other = if r.problem.layout == problem.layout { 0.0 } else { 1e6 };
                    (d.sqrt() + other, i)
                })
                .collect()
        }
    };
    dist.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    // The valid configs, nearest first, each with its distance and how often near rows chose it.
    let mut out: Vec<(Vec<i64>, f32, f32)> = Vec::with_capacity(k);
    let mut rows_seen = 0usize;
    const VOTERS: usize = 5;
    for (d, i) in dist {
        let c = &reference[i].config;
        if let Some(e) = out.iter_mut().find(|e| &e.0 == c) {
            if rows_seen < VOTERS {
                e.2 += 1.0 / (1.0 + d);
                rows_seen += 1;
            }
            continue;
        }
        if rules.is_valid(c) {
            rows_seen += 1;
            out.push((c.clone(), d, if rows_seen <= VOTERS { 1.0 / (1.0 + d) } else { 0.0 }));
            if out.len() == k && (variant != Variant::Vote || rows_seen >= VOTERS) {
                break;
            }
        }
    }
    if variant == Variant::Vote {
        // Stable: ties keep the nearest first.
        out.sort_by(|a, b| b.2.total_cmp(&a.2));
    }
    out.truncate(k);
    out.into_iter().map(|e| e.0).collect()
}

/// [`valid_neighbour_configs`] as `eval` scores the neighbour: MIOpen's static default when no
/// neighbour's config is valid.
pub fn nearest_neighbours(
    variant: Variant,
    solver: &dyn Tunable,
    target: &Target,
    reference: &[Sample],
    sample: &Sample,
    k: usize,
) -> Vec<Vec<i64>> {
    let mut out = valid_neighbour_configs(variant, solver, target, reference, &sample.problem, k);
    if out.is_empty() {
        out.push(solver.static_default(target, &sample.problem));
    }
    out
}

/// A solver's tuned rows on one GPU, to answer problems by their nearest neighbour.
pub struct Neighbours {
    solver: &'static dyn Tunable,
    rows: Vec<Sample>,
    /// The database the rows come from.
    pub source: PathBuf,
    /// How it chooses (the cell's recorded best; [`Variant::Solver`] unless set).
    pub variant: Variant,
}

impl Neighbours {
    /// The tuned rows of `solver` (usable on `target`) in the perf db `path` (any form: sqlite,
    /// text, bzip2). None when the database holds no usable row of the solver.
    pub fn load(path: &Path, solver: &'static dyn Tunable, target: &Target) -> Result<Option<Neighbours>> {
        let rows = crate::data::dataset::read_rows(path, solver.solver_name())?;
        let ds = crate::data::dataset::build(&rows, solver, target);
        if ds.samples.is_empty() {
            return Ok(None);
        }
        Ok(Some(Neighbours {
            solver,
            rows: ds.samples,
            source: path.to_path_buf(),
            variant: Variant::default(),
        }))
    }

    /// The rows, from `samples` (tests, tools).
    pub fn from_samples(solver: &'static dyn Tunable, rows: Vec<Sample>, source: PathBuf) -> Neighbours {
        Neighbours {
            solver,
            rows,
            source,
            variant: Variant::default(),
        }
    }

    /// The same rows, answering by `variant`.
    pub fn with_variant(mut self, variant: Variant) -> Neighbours {
        self.variant = variant;
        self
    }

    /// How many tuned rows there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The nearest neighbour's config valid for `problem`, None when no row of its kind has one
    /// (or the solver does not apply: the caller checks applicability first).
    pub fn answer(&self, target: &Target, problem: &ConvProblem) -> Option<Vec<i64>> {
        self.answer_by(self.variant, target, problem)
    }

    /// [`Neighbours::answer`] by `variant`.
    pub fn answer_by(&self, variant: Variant, target: &Target, problem: &ConvProblem) -> Option<Vec<i64>> {
        valid_neighbour_configs(variant, self.solver, target, &self.rows, problem, 1).pop()
    }
}
