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

/// The distinct configs of the tuned rows nearest to `problem` (same direction and precision,
/// nearest first) that the solver's rules accept for it, at most `k`; empty when none is valid.
pub fn valid_neighbour_configs(
    solver: &dyn Tunable,
    target: &Target,
    reference: &[Sample],
    problem: &ConvProblem,
    k: usize,
) -> Vec<Vec<i64>> {
    let f = solver.features(problem);
    let sizes = solver.size_features();
    let rules = solver.rules(target, problem);
    let mut dist: Vec<(f32, usize)> = reference
        .iter()
        .enumerate()
        .filter(|(_, r)| r.problem.direction == problem.direction && r.problem.precision == problem.precision)
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
        .collect();
    dist.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<Vec<i64>> = Vec::with_capacity(k);
    for (_, i) in dist {
        let c = &reference[i].config;
        if !out.contains(c) && rules.is_valid(c) {
            out.push(c.clone());
            if out.len() == k {
                break;
            }
        }
    }
    out
}

/// [`valid_neighbour_configs`] as `eval` scores the neighbour: MIOpen's static default when no
/// neighbour's config is valid.
pub fn nearest_neighbours(
    solver: &dyn Tunable,
    target: &Target,
    reference: &[Sample],
    sample: &Sample,
    k: usize,
) -> Vec<Vec<i64>> {
    let mut out = valid_neighbour_configs(solver, target, reference, &sample.problem, k);
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
        }))
    }

    /// The rows, from `samples` (tests, tools).
    pub fn from_samples(solver: &'static dyn Tunable, rows: Vec<Sample>, source: PathBuf) -> Neighbours {
        Neighbours { solver, rows, source }
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
        valid_neighbour_configs(self.solver, target, &self.rows, problem, 1).pop()
    }
}
