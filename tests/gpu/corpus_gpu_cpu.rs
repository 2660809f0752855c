//! The whole-corpus GPU == CPU comparison (slow: run by `tools/gpu_vs_cpu.sh`, not by
//! `cargo test`): every applicable problem of every shared perf database (sqlite and the 2019
//! text files) for each tunable solver's shipped models, MIOpen's greedy walk, beam 4 and beam 16.
//! Every problem is compared (configs, sources, errors); the differing ones are counted and the
//! first few named, and the test fails at the end if any differ.
//! Environment: `TUNEINFER_CORPUS_SOLVER` (one solver), `TUNEINFER_CORPUS_MODES` (see [`modes`]),
//! `TUNEINFER_CORPUS_ARCHES` (comma-separated arches, e.g. `gfx908` for MIOpen's model only).
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::gpu::GpuPredictor;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::Target;
use tuneinfer::{DecodeMode, Predictor};

/// The decodings to compare: `$TUNEINFER_CORPUS_MODES` (e.g. `miopen,4,16`: MIOpen's walk and
/// beams of those widths), by default all three.
fn modes() -> Vec<DecodeMode> {
    let text = std::env::var("TUNEINFER_CORPUS_MODES").unwrap_or_else(|_| "miopen,4,16".into());
    text.split(',')
        .map(|m| match m.trim() {
            "miopen" => DecodeMode::Miopen,
            w => {
                let width: usize = w.parse().unwrap_or_else(|_| panic!("TUNEINFER_CORPUS_MODES: '{w}'"));
                DecodeMode::Beam { width, top: width }
            }
        })
        .collect()
}

/// A problem's answers as compared: each config with its source, or the error's text.
fn outcome(r: &tuneinfer::Result<Vec<tuneinfer::Prediction>>) -> Result<Vec<(String, tuneinfer::Source)>, String> {
    match r {
        Ok(v) => Ok(v.iter().map(|x| (x.config.clone(), x.source)).collect()),
        Err(e) => Err(e.to_string()),
    }
}

/// How far apart two answers' scores may be for their order to count as a near-tie: the
/// GPU sums in another order than the CPU, and its scores differ from the CPU's by up to ~3e-5
/// on the shipped models (2026-12-05, lavapipe), so two answers whose scores are that close
/// may come out in either order. 1e-4 is about 1/50,000 of a factor in probability.
const NEAR_TIE: f32 = 1e-4;

/// True where the GPU's list differs from the CPU's only in the order of near-tied answers:
/// the same sources; every config in both lists scored within [`NEAR_TIE`] on both; position
/// by position the scores within [`NEAR_TIE`] (so only answers that tie change places); a
/// config in one list only, if any, one that fell off the end on a near-tie with the other
/// list's last answer.
fn near_tie_order(w: &[tuneinfer::Prediction], g: &[tuneinfer::Prediction]) -> bool {
    if w.len() != g.len() || w.iter().zip(g).any(|(a, b)| a.source != b.source) {
        return false;
    }
    let close = |a: Option<f32>, b: Option<f32>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= NEAR_TIE,
        _ => false,
    };
    if !w
        .iter()
        .zip(g)
        .all(|(a, b)| a.config == b.config || close(a.score, b.score))
    {
        return false;
    }
    let (w_last, g_last) = (w.last().and_then(|x| x.score), g.last().and_then(|x| x.score));
    let ok = |x: &tuneinfer::Prediction, other: &[tuneinfer::Prediction], other_last: Option<f32>| match other
        .iter()
        .find(|y| y.config == x.config)
    {
        Some(y) => close(x.score, y.score),
        None => close(x.score, other_last),
    };
    w.iter().all(|x| ok(x, g, g_last)) && g.iter().all(|x| ok(x, w, w_last))
}

/// What [`compare`] counts.
#[derive(Default)]
struct Tally {
    same: usize,
    /// Lists that differ only in the order of near-tied answers ([`near_tie_order`]).
    near_tie: usize,
    /// ... of which the first answer differs.
    near_tie_first: usize,
    differ: usize,
    /// Worst score difference among the identical lists.
    worst: f32,
}

/// Compares problem by problem, printing the first few differing and near-tied problems.
fn compare(
    label: &str,
    problems: &[ConvProblem],
    want: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
    got: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
) -> Tally {
    assert_eq!(want.len(), got.len(), "{label}");
    let mut t = Tally::default();
    for ((p, w), g) in problems.iter().zip(want).zip(got) {
        let (ow, og) = (outcome(w), outcome(g));
        if ow == og {
            t.same += 1;
            if let (Ok(w), Ok(g)) = (w, g) {
                for (a, b) in w.iter().zip(g) {
                    if let (Some(a), Some(b)) = (a.score, b.score) {
                        t.worst = t.worst.max((a - b).abs());
                    }
                }
            }
        } else if let (Ok(wv), Ok(gv)) = (w, g) {
            if near_tie_order(wv, gv) {
                t.near_tie += 1;
                if wv.first().map(|x| &x.config) != gv.first().map(|x| &x.config) {
                    t.near_tie_first += 1;
                }
                if t.near_tie <= 10 {
                    println!("{label}: near-tie order: {}: cpu {ow:?} gpu {og:?}", p.to_perfdb_key());
                }
            } else {
                t.differ += 1;
                if t.differ <= 10 {
                    println!("{label}: differs: {}: cpu {ow:?} gpu {og:?}", p.to_perfdb_key());
                }
            }
        } else {
            t.differ += 1;
            if t.differ <= 10 {
                println!("{label}: differs: {}: cpu {ow:?} gpu {og:?}", p.to_perfdb_key());
            }
        }
    }
    t
}

#[test]
#[ignore = "whole corpus: minutes; run tools/gpu_vs_cpu.sh"]
fn whole_corpus_gpu_equals_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let only = std::env::var("TUNEINFER_CORPUS_SOLVER").ok();
    let arches: Option<Vec<String>> = std::env::var("TUNEINFER_CORPUS_ARCHES")
        .ok()
        .map(|a| a.split(',').map(|x| x.trim().to_string()).collect());
    let mut differing = 0;
    for (solver, arch, dirs, _) in common::corpus_models() {
        if only.as_deref().is_some_and(|o| o != solver) || arches.as_ref().is_some_and(|a| !a.contains(&arch)) {
            continue;
        }
        let problems = common::corpus(&solver, &Target::new(&arch));
        assert!(
            !problems.is_empty(),
            "{solver} {arch}: no problems in the shared databases"
        );
        let cpu = Predictor::load(&arch, &solver, &dirs).unwrap_or_else(|e| panic!("{e}"));
        let gpu = GpuPredictor::load(&arch, &solver, &dirs, ctx.clone()).unwrap_or_else(|e| panic!("{e}"));
        for mode in modes() {
            let t = std::time::Instant::now();
            let want = cpu.predict_batch(&problems, mode);
            let cpu_s = t.elapsed().as_secs_f64();
            let got = gpu.predict_batch(&problems, mode);
            let label = format!("{solver} {arch} {mode:?}");
            let c = compare(&label, &problems, &want, &got);
            println!(
                "{label}: {} of {} problems identical, {} differ only in the order of near-tied answers \
                 (scores within {NEAR_TIE:e}; the first answer in {}), {} differ (worst score difference {:e}), \
                 {:.0} s (cpu {cpu_s:.0} s)",
                c.same,
                problems.len(),
                c.near_tie,
                c.near_tie_first,
                c.differ,
                c.worst,
                t.elapsed().as_secs_f64()
            );
            differing += c.differ;
        }
    }
    assert_eq!(differing, 0, "problems where the GPU's answers differ from the CPU's");
}
