//! The solver ranking: k nearest neighbours over a find-db's records.
//!
//! A record lists, for each algorithm, the fastest solver MIOpen measured (a censored list: a
//! solver absent from a record lost within its algorithm or does not apply). For a problem, the
//! ranking takes the `K` records of the same class (direction, data type, layout, 2-D/3-D) closest
//! in weighted log-geometry, and scores every solver they list by the weighted mean, in log
//! space, of its time over each neighbour's fastest runnable entry. A neighbour that does not list
//! the solver counts its algorithm's winner there plus [`Params::lost`], or
//! [`Params::absent`] where it lists no entry of that algorithm. The score is lowered by
//! [`Params::win`] times the weighted share of the neighbours the solver wins. Weights fall off
//! as `exp(-(d - d_min) / tau)` with the squared distance `d`. The candidates are the solvers
//! the neighbours list that MIOpen would run on the problem ([`super::rules::runs`]). The
//! predicted time of a solver is the neighbours' fastest time, scaled by the problem's FLOPs over
//! theirs, times exp(mean log ratio), kept non-decreasing along the order (MIOpen sorts a
//! record's entries by time).
//! docs/finddb.md gives the held-out figures and why this and not a network.

use std::collections::HashMap;

use super::record::{Entry, Record};
use super::rules;
use crate::error::Result;
use crate::problem::{ConvProblem, Direction, Layout, Precision};
use crate::solvers::Target;

/// The k-NN's settings. K, tau and the absence penalty were chosen on MI100 by
/// tools/finddb_analysis.py (K 4-16, tau 0.3-3 and the penalty 0.3-1 all land within a point of
/// each other); `lost`, `structure` and `batch` on the validation split inside the training side
/// of every GPU (`examples/finddb_figures.rs --validation`; docs/finddb.md): each moves top-1 by
/// under a point.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub k: usize,
    pub tau: f64,
    /// The log ratio a neighbour counts for a solver whose algorithm it does not list at all
    /// (the solver most likely does not apply there).
    pub absent: f64,
    /// Added to the log ratio of the solver that won the algorithm, for a solver a neighbour
    /// does not list while it lists the solver's algorithm (the solver lost within it: it was at
    /// least that slow).
    pub lost: f64,
    /// The weight of the squared log-differences of the filter, stride, padding, dilation and
    /// group features in the k-NN's distance (the sizes weigh 1): these decide which solvers
    /// apply. The plain nearest-neighbour baseline weighs every feature 1.
    pub structure: f64,
    /// The weight of the batch size's squared log-difference.
    pub batch: f64,
    /// Subtracted from a solver's score times the weighted share of the neighbours it wins
    /// (favours the usual winner over a solver that is near the best everywhere).
    pub win: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            k: 8,
            tau: 1.0,
            absent: 0.3,
            lost: 0.1,
            structure: 3.0,
            batch: 0.3,
            win: 0.3,
        }
    }
}

/// Where a ranked solver's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The find-db's own record of this problem: MIOpen's measured time.
    Measured,
    /// Predicted from the nearest records.
    Neighbours,
    /// The closest record's order and times (the plain nearest-neighbour baseline).
    Nearest,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Measured => "finddb",
            Source::Neighbours => "knn",
            Source::Nearest => "nearest",
        }
    }
}

/// One solver of a ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub solver: String,
    /// Measured ([`Source::Measured`]) or predicted time in ms.
    pub time_ms: f64,
    /// Workspace bytes: measured, or the largest of the neighbours' scaled by the problem's
    /// tensor sizes over theirs (an over-estimate, so that MIOpen's workspace check errs on the
    /// side of skipping the entry).
    pub workspace: u64,
    pub algorithm: String,
    pub source: Source,
}

impl Ranked {
    /// The find-db entry of this solver.
    pub fn entry(&self) -> Entry {
        Entry {
            solver: self.solver.clone(),
            time_ms: self.time_ms,
            workspace: self.workspace,
            algorithm: self.algorithm.clone(),
        }
    }
}

/// A problem's class: the records a neighbour may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Class {
    pub direction: Direction,
    pub precision: Precision,
    pub layout: Layout,
    pub three_d: bool,
}

impl Class {
    pub fn of(p: &ConvProblem) -> Class {
        Class {
            direction: p.direction,
            precision: p.precision,
            layout: p.layout,
            three_d: p.is_3d(),
        }
    }
}

const FEATURES: usize = 21;

/// The indices of [`features`] that are not sizes: filter, stride, padding, dilation, groups
/// (and their depth counterparts).
const STRUCTURE: [usize; 12] = [7, 8, 9, 10, 11, 12, 13, 14, 15, 18, 19, 20];

/// The log2 geometry the distance is taken over.
pub fn features(p: &ConvProblem) -> [f64; FEATURES] {
    let d = p.depth;
    let v: [u64; FEATURES] = [
        p.c,
        p.k,
        p.n,
        p.in_h,
        p.in_w,
        p.out_h,
        p.out_w,
        p.filter_h,
        p.filter_w,
        p.stride_h,
        p.stride_w,
        p.pad_h + 1,
        p.pad_w + 1,
        p.dilation_h,
        p.dilation_w,
        p.groups,
        d.map_or(1, |d| d.in_d),
        d.map_or(1, |d| d.out_d),
        d.map_or(1, |d| d.filter_d),
        d.map_or(1, |d| d.stride_d),
        d.map_or(1, |d| d.pad_d + 1),
    ];
    v.map(|x| (x.max(1) as f64).log2())
}

/// log2 of the multiply-accumulates of the convolution.
fn log_flops(p: &ConvProblem) -> f64 {
    let depth = p.depth.map_or(1.0, |d| (d.out_d * d.filter_d) as f64);
    let macs = p.n as f64
        * p.c as f64
        * (p.k as f64 / p.groups.max(1) as f64)
        * p.out_h as f64
        * p.out_w as f64
        * p.filter_h as f64
        * p.filter_w as f64
        * depth;
    macs.max(1.0).log2()
}

/// Elements of x, w and y together.
fn tensor_elements(p: &ConvProblem) -> f64 {
    let (din, dout, dfil) = p.depth.map_or((1, 1, 1), |d| (d.in_d, d.out_d, d.filter_d));
    let x = p.n * p.c * p.in_h * p.in_w * din;
    let y = p.n * p.k * p.out_h * p.out_w * dout;
    let w = p.k * (p.c / p.groups.max(1)) * p.filter_h * p.filter_w * dfil;
    (x + y + w) as f64
}

struct Neighbour {
    log_flops: f64,
    elements: f64,
    /// (solver index, time ms, workspace), the entries MIOpen runs on this class.
    entries: Vec<(u32, f64, u64)>,
    best: f64,
}

/// A ranking model: the records of one GPU's find-db, by class.
pub struct Ranker {
    target: Target,
    params: Params,
    names: Vec<String>,
    algorithms: Vec<String>,
    classes: HashMap<Class, (Vec<[f64; FEATURES]>, Vec<Neighbour>)>,
    exact: HashMap<String, (Class, usize)>,
}

/// The records with their keys parsed, on every core (the keys are most of a find-db's
/// loading time).
fn parse_keys(records: Vec<Record>) -> Vec<(Record, Result<ConvProblem>)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 16);
    let chunk = records.len().div_ceil(threads).max(1);
    let mut records = records;
    let mut parts = Vec::new();
    while records.len() > chunk {
        let tail = records.split_off(records.len() - chunk);
        parts.push(tail);
    }
    parts.push(records);
    parts.reverse();
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| {
                scope.spawn(move || {
                    part.into_iter()
                        .map(|r| {
                            let p = ConvProblem::from_perfdb_key(&r.key);
                            (r, p)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The relative step that keeps the predicted times in the ranking's order.
const ORDER_STEP: f64 = 1e-4;

/// Times of 0 (a few records hold them) are floored so the log ratios stay finite.
const MIN_TIME_MS: f64 = 1e-6;

impl Ranker {
    /// The ranker of the GPU `arch` (`gfx90a`, or a database name such as `gfx90a68`) over these
    /// records; records whose key does not parse (mixed layouts, FP8 types) are skipped.
    pub fn new(arch: &str, records: impl IntoIterator<Item = Record>, params: Params) -> Ranker {
        let target = Target::new(arch);
        let mut ranker = Ranker {
            target,
            params,
            names: Vec::new(),
            algorithms: Vec::new(),
            classes: HashMap::new(),
            exact: HashMap::new(),
        };
        // One id per (solver, algorithm): a solver serves several directions (`ConvOclDirectFwd`
        // forward and backward data) under each direction's algorithm name.
        // Keyed `solver\0algorithm`, looked up through one reused buffer (no allocation per entry).
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut id_key = String::new();
        for (r, p) in parse_keys(records.into_iter().collect()) {
            let Ok(p) = p else {
                continue;
            };
            let mut entries = Vec::new();
            for e in &r.entries {
                if rules::debug_switch_refusal(&e.solver, &ranker.target.arch, &p).is_some() {
                    continue;
                }
                id_key.clear();
                id_key.push_str(&e.solver);
                id_key.push('\0');
                id_key.push_str(&e.algorithm);
                let id = match ids.get(id_key.as_str()) {
                    Some(&id) => id,
                    None => {
                        ranker.names.push(e.solver.clone());
                        ranker.algorithms.push(e.algorithm.clone());
                        let id = (ranker.names.len() - 1) as u32;
                        ids.insert(id_key.clone(), id);
                        id
                    }
                };
                entries.push((id, e.time_ms.max(MIN_TIME_MS), e.workspace));
            }
            if entries.is_empty() {
                continue;
            }
            let best = entries.iter().map(|e| e.1).fold(f64::INFINITY, f64::min);
            let class = Class::of(&p);
            let slot = ranker.classes.entry(class).or_default();
            // The file's key is MIOpen's serialisation of the problem ([`super::key_of`]).
            ranker.exact.insert(r.key, (class, slot.1.len()));
            slot.0.push(features(&p));
            slot.1.push(Neighbour {
                log_flops: log_flops(&p),
                elements: tensor_elements(&p),
                entries,
                best,
            });
        }
        ranker
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Records the ranker holds.
    pub fn len(&self) -> usize {
        self.classes.values().map(|c| c.1.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the ranker holds a record of exactly this problem (MIOpen's own record).
    pub fn has_record(&self, p: &ConvProblem) -> bool {
        self.exact.contains_key(&super::key_of(p))
    }

    /// The solvers MIOpen would run on `p`, fastest first: the find-db's own record where it has
    /// one (measured), else the k-NN's prediction. Empty when no record of the problem's class
    /// is known (MIOpen's Find then decides).
    pub fn rank(&self, p: &ConvProblem) -> Result<Vec<Ranked>> {
        if let Some((class, i)) = self.exact.get(&super::key_of(p)) {
            let nb = &self.classes[class].1[*i];
            let mut out: Vec<Ranked> = nb
                .entries
                .iter()
                .filter(|(id, _, _)| rules::runs(&self.names[*id as usize], &self.target, p))
                .map(|&(id, t, ws)| Ranked {
                    solver: self.names[id as usize].clone(),
                    time_ms: t,
                    workspace: ws,
                    algorithm: self.algorithms[id as usize].clone(),
                    source: Source::Measured,
                })
                .collect();
            out.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
            return Ok(out);
        }
        Ok(self.predict(p))
    }

    /// The k-NN's ranking of `p` (never the exact record).
    pub fn predict(&self, p: &ConvProblem) -> Vec<Ranked> {
        let Some((feats, nbs)) = self.classes.get(&Class::of(p)) else {
            return Vec::new();
        };
        let f = features(p);
        let mut weight = [1.0; FEATURES];
        for i in STRUCTURE {
            weight[i] = self.params.structure;
        }
        weight[2] = self.params.batch;
        let mut dist: Vec<(f64, usize)> = feats
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let d = g
                    .iter()
                    .zip(&f)
                    .zip(&weight)
                    .map(|((a, b), w)| w * (a - b) * (a - b))
                    .sum::<f64>();
                (d, i)
            })
            .collect();
        let k = self.params.k.min(dist.len());
        if k == 0 {
            return Vec::new();
        }
        dist.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
        dist.truncate(k);
        dist.sort_by(|a, b| a.0.total_cmp(&b.0));
        let d0 = dist[0].0;
        let lf = log_flops(p);
        let el = tensor_elements(p);
        let mut total_w = 0.0;
        let mut best_log = 0.0;
        // solver -> (weighted log ratio, weight of the neighbours it wins, workspace)
        let mut acc: HashMap<u32, (f64, f64, u64)> = HashMap::new();
        let mut weights = Vec::with_capacity(dist.len());
        for &(d, i) in &dist {
            let w = (-(d - d0) / self.params.tau).exp();
            let nb = &nbs[i];
            weights.push(w);
            total_w += w;
            best_log += w * (nb.best.ln() + (lf - nb.log_flops) * std::f64::consts::LN_2);
            let scale = (el / nb.elements).max(1.0);
            for &(id, t, ws) in &nb.entries {
                let a = acc.entry(id).or_insert((0.0, 0.0, 0));
                a.0 += w * (t / nb.best).ln();
                if t <= nb.best {
                    a.1 += w;
                }
                a.2 = a.2.max((ws as f64 * scale).ceil() as u64);
            }
        }
        // A neighbour that does not list a solver: it lost within its algorithm (at least as
        // slow as the algorithm's winner there), or the algorithm is not listed at all.
        for (&id, a) in acc.iter_mut() {
            let algorithm = &self.algorithms[id as usize];
            for (&(_, i), &w) in dist.iter().zip(&weights) {
                let nb = &nbs[i];
                if nb.entries.iter().any(|e| e.0 == id) {
                    continue;
                }
                let winner = nb
                    .entries
                    .iter()
                    .filter(|e| self.algorithms[e.0 as usize] == *algorithm)
                    .map(|e| e.1)
                    .fold(f64::INFINITY, f64::min);
                let ratio = if winner.is_finite() {
                    (winner / nb.best).ln() + self.params.lost
                } else {
                    self.params.absent
                };
                a.0 += w * ratio;
            }
        }
        let best_time = (best_log / total_w).exp();
        let mut out: Vec<(f64, Ranked)> = acc
            .into_iter()
            .filter(|(id, _)| rules::runs(&self.names[*id as usize], &self.target, p))
            .map(|(id, (sum, wins, ws))| {
                let score = (sum - self.params.win * wins) / total_w;
                (
                    score,
                    Ranked {
                        solver: self.names[id as usize].clone(),
                        time_ms: best_time * (sum / total_w).exp(),
                        workspace: ws,
                        algorithm: self.algorithms[id as usize].clone(),
                        source: Source::Neighbours,
                    },
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.solver.cmp(&b.1.solver)));
        // A solver listed under two algorithms in one class keeps its better place.
        let mut seen = std::collections::HashSet::new();
        let mut ranked: Vec<Ranked> = out
            .into_iter()
            .map(|(_, r)| r)
            .filter(|r| seen.insert(r.solver.clone()))
            .collect();
        // MIOpen sorts a record's entries by time: the times follow the order. A solver that the
        // `win` term put below a solver predicted faster gets that time plus 0.01%.
        for i in 1..ranked.len() {
            let floor = ranked[i - 1].time_ms * (1.0 + ORDER_STEP);
            if ranked[i].time_ms < floor {
                ranked[i].time_ms = floor;
            }
        }
        ranked
    }

    /// The plain nearest neighbour's order: the runnable entries of the closest record of the
    /// class, fastest first, with that record's times (a baseline).
    pub fn nearest_order(&self, p: &ConvProblem) -> Vec<Ranked> {
        let Some((feats, nbs)) = self.classes.get(&Class::of(p)) else {
            return Vec::new();
        };
        let f = features(p);
        let Some((i, _)) = feats
            .iter()
            .enumerate()
            .map(|(i, g)| (i, g.iter().zip(&f).map(|(a, b)| (a - b) * (a - b)).sum::<f64>()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
        else {
            return Vec::new();
        };
        let mut out: Vec<Ranked> = nbs[i]
            .entries
            .iter()
            .filter(|(id, _, _)| rules::runs(&self.names[*id as usize], &self.target, p))
            .map(|&(id, t, ws)| Ranked {
                solver: self.names[id as usize].clone(),
                time_ms: t,
                workspace: ws,
                algorithm: self.algorithms[id as usize].clone(),
                source: Source::Nearest,
            })
            .collect();
        out.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
        out
    }

    /// The plain nearest neighbour's pick (the first of [`Ranker::nearest_order`]).
    pub fn nearest_pick(&self, p: &ConvProblem) -> Option<String> {
        self.nearest_order(p).into_iter().next().map(|r| r.solver)
    }
}
