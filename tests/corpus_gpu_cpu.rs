//! The whole-corpus GPU == CPU comparison (slow: run by `tools/gpu_vs_cpu.sh`, not by
//! `cargo test`): every applicable problem of every shared perf database (sqlite and the 2019
//! text files) for each tunable solver's shipped models, MIOpen's greedy walk, beam 4 and beam 16.
//! Every problem is compared (configs, sources, errors); the differing ones are counted and the
//! first few named, and the test fails at the end if any differ.
//! Environment: `TUNEINFER_CORPUS_SOLVER` (one solver), `TUNEINFER_CORPUS_MODES` (see [`modes`]),
//! `TUNEINFER_CORPUS_ARCHES` (comma-separated arches, e.g. `gfx908` for MIOpen's model only).
#![cfg(feature = "gpu")]

mod common;

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

/// Compares problem by problem; returns (identical, differing, worst score difference among the
/// identical ones) after printing the first few differing problems.
fn compare(
    label: &str,
    problems: &[ConvProblem],
    want: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
    got: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
) -> (usize, usize, f32) {
    assert_eq!(want.len(), got.len(), "{label}");
    let (mut same, mut differ, mut worst) = (0, 0, 0f32);
    for ((p, w), g) in problems.iter().zip(want).zip(got) {
        let (ow, og) = (outcome(w), outcome(g));
        if ow == og {
            same += 1;
            if let (Ok(w), Ok(g)) = (w, g) {
                for (a, b) in w.iter().zip(g) {
                    if let (Some(a), Some(b)) = (a.score, b.score) {
                        worst = worst.max((a - b).abs());
                    }
                }
            }
        } else {
            differ += 1;
            if differ <= 10 {
                println!("{label}: differs: {}: cpu {ow:?} gpu {og:?}", p.to_perfdb_key());
            }
        }
    }
    (same, differ, worst)
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
            let (same, differ, worst) = compare(&label, &problems, &want, &got);
            println!(
                "{label}: {same} of {} problems identical, {differ} differ (worst score difference {worst:e}), \
                 {:.0} s (cpu {cpu_s:.0} s)",
                problems.len(),
                t.elapsed().as_secs_f64()
            );
            differing += differ;
        }
    }
    assert_eq!(differing, 0, "problems where the GPU's answers differ from the CPU's");
}
