//! Held-out figures of the ranking and its baselines on a find-db: a fifth of the geometries
//! held out by tuneinfer's geometry split (`data::dataset::geometry_draw`, seed 1, as `train`
//! and `eval` split perf-db rows), the ranking built from the rest.
//!
//! For each held-out record, the entries that run are those no debug switch turns off
//! ([`super::rules::debug_switch_refusal`]); the fastest of them is the answer. A method's pick
//! is its first solver. Figures: top-1 (the pick is the fastest entry that runs), the geometric
//! mean of the pick's time over the fastest where the pick is listed, and the share of picks
//! not listed (no pick at all counts as not listed).

use std::collections::BTreeMap;

use super::rank::{Params, Ranker};
use super::record::Record;
use super::rules;
use crate::problem::ConvProblem;

/// The figures of one method.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    pub problems: usize,
    pub top1: usize,
    pub listed: usize,
    sum_log_ratio: f64,
}

impl Figures {
    fn add(&mut self, pick: Option<&str>, listed: &[(String, f64)], best: &(String, f64)) {
        self.problems += 1;
        let Some(pick) = pick else { return };
        if let Some((_, t)) = listed.iter().find(|(s, _)| s == pick) {
            self.listed += 1;
            self.sum_log_ratio += (t / best.1).ln();
            if pick == best.0 {
                self.top1 += 1;
            }
        }
    }

    pub fn top1_share(&self) -> f64 {
        self.top1 as f64 / self.problems.max(1) as f64
    }

    pub fn geomean(&self) -> f64 {
        (self.sum_log_ratio / self.listed.max(1) as f64).exp()
    }

    pub fn unlisted_share(&self) -> f64 {
        (self.problems - self.listed) as f64 / self.problems.max(1) as f64
    }
}

/// The figures of every method on one find-db, overall and by class.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub train_records: usize,
    /// Method name -> figures over every held-out problem.
    pub overall: BTreeMap<&'static str, Figures>,
    /// (direction, type) -> method -> figures.
    pub by_class: BTreeMap<(char, &'static str), BTreeMap<&'static str, Figures>>,
    /// (direction, type) -> (sum of ln(time of what runs with tuneinfer's user find-db / time of
    /// the dynamic-only choice), problems where the record lists both): the paired comparison
    /// that decides [`super::REFUSED_CLASSES`] on the validation split.
    pub paired: BTreeMap<(char, &'static str), (f64, usize)>,
}

impl Report {
    /// The paired geometric mean of what runs with tuneinfer's user find-db over the
    /// dynamic-only choice in a class (below 1: the user find-db is faster).
    pub fn paired_geomean(&self, class: (char, &'static str)) -> Option<(f64, usize)> {
        self.paired
            .get(&class)
            .filter(|p| p.1 > 0)
            .map(|&(s, n)| ((s / n as f64).exp(), n))
    }
}

/// The seed and fraction of the held-out split.
pub const SEED: u64 = 1;
pub const HELD_OUT: f64 = 0.2;

/// Whether a problem is in the held-out fifth.
pub fn held_out(p: &ConvProblem) -> bool {
    crate::data::dataset::geometry_draw(SEED, p) < HELD_OUT
}

/// Splits a find-db's records into (train, held-out) by geometry; records whose key does not
/// parse are dropped.
pub fn split(records: Vec<Record>) -> (Vec<Record>, Vec<(ConvProblem, Record)>) {
    split_with(records, SEED)
}

/// The validation split inside the training side (what decides [`super::REFUSED_CLASSES`]): a
/// fifth of the training geometries by the early-stopping seed, as `train` carves its own.
pub fn validation_split(records: Vec<Record>) -> (Vec<Record>, Vec<(ConvProblem, Record)>) {
    let (train, _) = split(records);
    split_with(train, crate::data::dataset::early_stop_seed(SEED))
}

fn split_with(records: Vec<Record>, seed: u64) -> (Vec<Record>, Vec<(ConvProblem, Record)>) {
    let mut train = Vec::new();
    let mut test = Vec::new();
    for r in records {
        let Ok(p) = ConvProblem::from_perfdb_key(&r.key) else {
            continue;
        };
        if crate::data::dataset::geometry_draw(seed, &p) < HELD_OUT {
            test.push((p, r));
        } else {
            train.push(r);
        }
    }
    (train, test)
}

/// Evaluates the k-NN ranking, the plain nearest neighbour, the dynamic-only choice and what
/// MIOpen runs with tuneinfer's user find-db (`tuneinfer`: the record's first solver where
/// [`super::record_pick`] writes a record, MIOpen's Find, i.e. the dynamic-only choice, elsewhere) on
/// `arch`'s find-db records: on the held-out fifth, or with `validation` on the validation
/// split inside the training side. `limit` caps the problems (evenly spaced) for quick runs.
///
/// With `tunanet` (MIOpen's model for the GPU), on the problems it takes
/// ([`crate::tunanet::TunaNet::supports`]): `tunanet`, MIOpen's fallback pick (a solver the record
/// lists applies, any other as [`rules::runs`] says), and `knn/tunanet`, `dynamic/tunanet`, the
/// k-NN and dynamic-only picks on those same problems.
pub fn evaluate(
    arch: &str,
    records: Vec<Record>,
    params: Params,
    policy: super::Policy,
    limit: Option<usize>,
    validation: bool,
    tunanet: Option<&crate::tunanet::TunaNet>,
) -> Report {
    let (train, mut test) = if validation {
        validation_split(records)
    } else {
        split(records)
    };
    if let Some(limit) = limit.filter(|&l| l > 0 && l < test.len()) {
        let step = test.len() / limit;
        test = test.into_iter().step_by(step.max(1)).take(limit).collect();
    }
    let mut report = Report {
        train_records: train.len(),
        ..Report::default()
    };
    let ranker = Ranker::new(arch, train, params);
    let arch = ranker.target().arch.clone();
    for (p, r) in &test {
        let listed: Vec<(String, f64)> = r
            .entries
            .iter()
            .filter(|e| rules::debug_switch_refusal(&e.solver, &arch, p).is_none())
            .map(|e| (e.solver.clone(), e.time_ms.max(1e-6)))
            .collect();
        let Some(best) = listed.iter().min_by(|a, b| a.1.total_cmp(&b.1)).cloned() else {
            continue;
        };
        let knn = ranker.predict(p);
        let nn = ranker.nearest_pick(p);
        let dynamic = listed
            .iter()
            .filter(|(s, _)| rules::is_dynamic(s))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(s, _)| s.clone());
        // What MIOpen runs with tuneinfer's user find-db: the record's first solver where
        // `plan_records` writes one, else MIOpen's Find over the dynamic solvers.
        let record = super::record_pick_with(&arch, p, &knn, policy);
        let written = match record {
            Some(r) => Some(r.solver.as_str()),
            None => dynamic.as_deref(),
        };
        let picks: [(&'static str, Option<&str>); 4] = [
            ("knn", knn.first().map(|r| r.solver.as_str())),
            ("tuneinfer", written),
            ("nearest", nn.as_deref()),
            ("dynamic", dynamic.as_deref()),
        ];
        let class = (p.direction.as_char(), p.precision.as_str());
        let time = |pick: Option<&str>| pick.and_then(|s| listed.iter().find(|(l, _)| l == s).map(|(_, t)| *t));
        if let (Some(a), Some(b)) = (time(written), time(dynamic.as_deref())) {
            let e = report.paired.entry(class).or_default();
            e.0 += (a / b).ln();
            e.1 += 1;
        }
        if let Some(net) = tunanet.filter(|net| net.supports(p).is_ok()) {
            let target = ranker.target();
            let mut applies = |s: &str| listed.iter().any(|(l, _)| l == s) || rules::runs(s, target, p);
            // MIOpen falls back to its WTI estimates where no solver of the map applies: no pick.
            let tn = net
                .fallback(p, &mut applies)
                .ok()
                .and_then(|v| v.into_iter().next())
                .map(|s| s.solver);
            let on_its_problems: [(&'static str, Option<&str>); 3] = [
                ("tunanet", tn.as_deref()),
                ("knn/tunanet", picks[0].1),
                ("dynamic/tunanet", picks[3].1),
            ];
            for (name, pick) in on_its_problems {
                report.overall.entry(name).or_default().add(pick, &listed, &best);
            }
        }
        for (name, pick) in picks {
            report.overall.entry(name).or_default().add(pick, &listed, &best);
            report
                .by_class
                .entry(class)
                .or_default()
                .entry(name)
                .or_default()
                .add(pick, &listed, &best);
        }
    }
    report
}
