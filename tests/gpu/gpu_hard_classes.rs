//! MIOpen's gfx908 ConvAsm1x1U model on the GPU against the CPU where the look-ahead works
//! hardest: every 3rd applicable problem of the shared perf databases with K or C below 16 or N = 1
//! (every one with `TUNEINFER_ALL_HARD=1`, `tools/gpu_hard_all.sh`)
//! (issue #14: on lavapipe these came back as the static default at beam 4 and 16 while the
//! memoised WGSL look-ahead ran past llvmpipe's loop budget), plus every 40th of the rest, in
//! MIOpen's greedy walk, beam 4 and beam 16: identical configs and sources. And the WGSL
//! look-ahead itself against `Rules::completable` on every prefix of up to two values of the
//! gfx908 vocabulary on each hard problem.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::gpu::kernels::host;
use tuneinfer::gpu::GpuPredictor;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::{Rules, NAME};
use tuneinfer::{DecodeMode, Predictor};

/// MIOpen's gfx908 ConvAsm1x1U vocabulary's integer values (its metadata, "-1" left out).
const GFX908: &[i64] = &[1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64];

/// K or C below 16, or N = 1.
fn hard(p: &ConvProblem) -> bool {
    p.c < 16 || p.k < 16 || p.n == 1
}

/// (the hard problems, every 40th of the others) of the shared perf databases, each once.
fn problems() -> (Vec<ConvProblem>, Vec<ConvProblem>) {
    common::asm1x1u_hard_and_sample(hard, 40)
}

#[test]
fn gpu_gives_the_cpu_configs_on_the_hard_problems() {
    let Some(ctx) = common::gpu() else { return };
    let (hard_ones, sample) = problems();
    assert!(hard_ones.len() > 1000, "only {} hard problems", hard_ones.len());
    let hard_ones = common::hard_share(hard_ones, 3);
    let n_hard = hard_ones.len();
    let mut problems = hard_ones;
    problems.extend(sample);
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).unwrap_or_else(|e| panic!("{e}"));
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx).unwrap_or_else(|e| panic!("{e}"));
    let modes = [
        DecodeMode::Miopen,
        DecodeMode::Beam { width: 4, top: 4 },
        DecodeMode::Beam { width: 16, top: 16 },
    ];
    for mode in modes {
        let t = std::time::Instant::now();
        let want = cpu.predict_batch(&problems, mode);
        let got = gpu.predict_batch(&problems, mode);
        let label = format!("gfx908 {NAME} {mode:?}");
        let (same, worst) = common::assert_same_predictions(&label, &problems, &want, &got);
        let from_model = want
            .iter()
            .filter(|w| {
                w.as_ref()
                    .is_ok_and(|w| w.first().is_some_and(|x| x.source == tuneinfer::Source::Model))
            })
            .count();
        println!(
            "{label}: {same} of {} problems identical ({n_hard} hard; {from_model} answered by the model), \
             worst score difference {worst:e}, {:.1} s",
            problems.len(),
            t.elapsed().as_secs_f64()
        );
        assert_eq!(same, problems.len(), "{label}");
        assert!(worst <= 1e-4, "{label}: score difference {worst}");
    }
}

#[test]
fn wgsl_lookahead_matches_the_cpu_on_every_hard_problem() {
    let Some(ctx) = common::gpu() else { return };
    let (hard_ones, _) = problems();
    let mut cases: Vec<([i32; 8], [i32; 8], u32)> = Vec::new();
    let mut want: Vec<(bool, bool)> = Vec::new();
    for p in &hard_ones {
        let r = Rules::new(p);
        let mut prefixes: Vec<Vec<i64>> = vec![vec![]];
        for &a in GFX908 {
            prefixes.push(vec![a]);
            for &b in GFX908 {
                prefixes.push(vec![a, b]);
            }
        }
        for prefix in prefixes {
            let mut words = [0i32; 8];
            for (w, &v) in words.iter_mut().zip(&prefix) {
                *w = v as i32;
            }
            cases.push((r.gpu_words(), words, prefix.len() as u32));
            want.push((r.prefix_valid(&prefix), r.completable(&prefix, GFX908)));
        }
    }
    let domain: Vec<i32> = GFX908.iter().map(|&v| v as i32).collect();
    let got = host::rules_check(&ctx, "conv_asm_1x1u_rules", &cases, &domain).expect("rules_check");
    let mut dead_ends = 0;
    for ((case, w), g) in cases.iter().zip(&want).zip(&got) {
        assert_eq!(w, g, "rules {:?} prefix {:?} (length {})", case.0, case.1, case.2);
        dead_ends += usize::from(w.0 && !w.1);
    }
    println!(
        "{} cases on {} hard problems, {dead_ends} valid dead ends",
        cases.len(),
        hard_ones.len()
    );
    assert!(
        dead_ends > 1000,
        "the look-ahead's failures must be covered ({dead_ends})"
    );
}
