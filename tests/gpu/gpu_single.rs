//! The single-dispatch latency path (`gpu::single`, `shaders/single_predict.wgsl`: the encoder,
//! every decoder step and MIOpen's greedy walk in one dispatch of one workgroup) against its CPU
//! twin, `Predictor` with `DecodeMode::Miopen`, on MIOpen's gfx908 ConvAsm1x1U model: every
//! 8th hard problem of the shared perf databases (K or C below 16, N = 1, odd sizes; all of them
//! with `TUNEINFER_ALL_HARD=1`, `tools/gpu_hard_all.sh`) plus every 40th of the rest, one problem a dispatch and in dispatches of 4 and 8; the problems whose
//! walks are hardest by name. llvmpipe cuts an invocation's loops past 65,535 iterations
//! silently (wrong answers, no error), so identical configs on these are what catches a cut;
//! the counted bound stays under a quarter of the cap.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::gpu::{GpuPredictor, SinglePathPredictor, ITERATION_BUDGET, MAX_SINGLE_ROWS};
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::NAME;
use tuneinfer::{DecodeMode, Prediction, Predictor, Result};

/// K or C below 16, N = 1, or an odd spatial size or channel count.
fn hard(p: &ConvProblem) -> bool {
    p.c < 16 || p.k < 16 || p.n == 1 || p.in_h % 2 == 1 || p.in_w % 2 == 1 || p.c % 2 == 1 || p.k % 2 == 1
}

/// (the hard problems, every 40th of the others) of the shared perf databases, each once.
fn problems() -> (Vec<ConvProblem>, Vec<ConvProblem>) {
    common::asm1x1u_hard_and_sample(hard, 40)
}

fn load() -> Option<(Predictor, SinglePathPredictor)> {
    let ctx = common::gpu()?;
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).unwrap_or_else(|e| panic!("{e}"));
    let single = SinglePathPredictor::load("gfx908", NAME, &dirs, ctx).unwrap_or_else(|e| panic!("{e}"));
    Some((cpu, single))
}

/// The single path's answers in dispatches of `rows` problems.
fn single_answers(single: &SinglePathPredictor, problems: &[ConvProblem], rows: usize) -> Vec<Result<Vec<Prediction>>> {
    let mut out = Vec::with_capacity(problems.len());
    for part in problems.chunks(rows) {
        out.extend(
            single
                .predict_batch(part, DecodeMode::Miopen)
                .unwrap_or_else(|e| panic!("{rows} a dispatch: {e}")),
        );
    }
    out
}

/// Asserts `got` has `want`'s configs and sources, scores within 1e-4 and never NaN.
fn assert_same(
    label: &str,
    problems: &[ConvProblem],
    want: &[Result<Vec<Prediction>>],
    got: &[Result<Vec<Prediction>>],
) {
    common::assert_same_within(label, problems, want, got, 1e-4);
}

#[test]
fn single_dispatch_gives_the_cpu_configs_on_the_hard_problems() {
    let Some((cpu, single)) = load() else { return };
    let (hard_ones, sample) = problems();
    assert!(hard_ones.len() > 1000, "only {} hard problems", hard_ones.len());
    let hard_ones = common::hard_share(hard_ones, 8);
    let n_hard = hard_ones.len();
    let mut problems = hard_ones;
    problems.extend(sample);
    let want = cpu.predict_batch(&problems, DecodeMode::Miopen);
    let from_model = want
        .iter()
        .filter(|w| {
            w.as_ref()
                .is_ok_and(|w| w.first().is_some_and(|x| x.source == tuneinfer::Source::Model))
        })
        .count();
    // Both answers occur: the model's and the static default's (walks that fail).
    assert!(
        from_model > 0 && from_model < problems.len(),
        "{from_model} answered by the model"
    );
    for rows in [1, 4, MAX_SINGLE_ROWS] {
        let t = std::time::Instant::now();
        let got = single_answers(&single, &problems, rows);
        let label = format!("gfx908 {NAME} single dispatch of {rows} ({n_hard} hard, {from_model} by the model)");
        assert_same(&label, &problems, &want, &got);
        println!("  {:.1} s", t.elapsed().as_secs_f64());
    }
}

#[test]
fn single_dispatch_on_the_hardest_walks() {
    let Some((cpu, single)) = load() else { return };
    let keys = [
        "3-32-32-1x1-3-32-32-1-0x0-1x1-1x1-0-NCHW-FP32-F",
        "512-32-32-1x1-6-32-32-4-0x0-1x1-1x1-0-NCHW-FP32-F",
        "3-32-32-1x1-3-32-32-1-0x0-1x1-1x1-0-NCHW-FP32-B",
        "1-7-7-1x1-1-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F",
        "1-1-1-1x1-1-1-1-1-0x0-1x1-1x1-0-NCHW-FP32-F",
        "64-56-56-1x1-256-56-56-1-0x0-1x1-1x1-0-NCHW-FP32-F",
        "2048-7-7-1x1-512-7-7-1-0x0-1x1-1x1-0-NCHW-FP16-F",
        "5-33-33-1x1-7-33-33-3-0x0-1x1-1x1-0-NCHW-FP32-B",
    ];
    let problems: Vec<ConvProblem> = keys
        .iter()
        .map(|k| ConvProblem::parse(k).unwrap_or_else(|e| panic!("{k}: {e}")))
        .collect();
    let want = cpu.predict_batch(&problems, DecodeMode::Miopen);
    for rows in [1, 3, MAX_SINGLE_ROWS] {
        let got = single_answers(&single, &problems, rows);
        assert_same(&format!("hardest walks, {rows} a dispatch"), &problems, &want, &got);
    }
    // The multi-dispatch path sums in the same order: the same scores, bit for bit.
    if let Some(ctx) = common::gpu() {
        let dirs = vec![common::models_dir()];
        let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx).unwrap_or_else(|e| panic!("{e}"));
        let multi = gpu.predict_batch(&problems, DecodeMode::Miopen);
        let got = single_answers(&single, &problems, 1);
        for ((p, m), g) in problems.iter().zip(&multi).zip(&got) {
            let bits = |r: &Result<Vec<Prediction>>| {
                r.as_ref()
                    .map(|v| {
                        v.iter()
                            .map(|x| (x.config.clone(), x.score.map(f32::to_bits)))
                            .collect::<Vec<_>>()
                    })
                    .map_err(|e| e.to_string())
            };
            assert_eq!(
                bits(m),
                bits(g),
                "{} against the multi-dispatch path",
                p.to_perfdb_key()
            );
        }
    }
}

#[test]
fn loop_iterations_stay_well_under_llvmpipes_cap() {
    let Some((_, single)) = load() else { return };
    let mut last = 0;
    for rows in 1..=MAX_SINGLE_ROWS {
        let n = single.loop_iterations(rows).unwrap_or_else(|e| panic!("{e}"));
        println!("gfx908 {NAME}: {rows} problems a workgroup: at most {n} loop iterations an invocation");
        assert!(n >= last, "more rows, fewer iterations");
        assert!(
            n <= ITERATION_BUDGET && ITERATION_BUDGET <= 65_535 / 4,
            "{n} iterations"
        );
        last = n;
    }
    // Hand count for one problem (8 encoder steps x 2 layers of 128 units: 8 x (40 + 64 vec4 k
    // steps); 8 decoder steps x (34 + 64 + 32 output + 114 log-softmax + 38 walk + checks)).
    let one = single.loop_iterations(1).unwrap_or_else(|e| panic!("{e}"));
    assert!((3_000..5_000).contains(&one), "{one}");
}

#[test]
fn single_dispatch_refuses_what_it_does_not_take() {
    let Some((_, single)) = load() else { return };
    let p = ConvProblem::parse("64-56-56-1x1-256-56-56-1-0x0-1x1-1x1-0-NCHW-FP32-F").unwrap_or_else(|e| panic!("{e}"));
    let beam = single.predict_batch(std::slice::from_ref(&p), DecodeMode::Beam { width: 4, top: 4 });
    assert!(beam.is_err(), "beam");
    let many = vec![p; MAX_SINGLE_ROWS + 1];
    assert!(
        single.predict_batch(&many, DecodeMode::Miopen).is_err(),
        "too many rows"
    );
}

/// Wall time of one prediction on the existing path (`GpuPredictor::predict_one`) and on the
/// single-dispatch one, median of 50 each, alternating, in one run (`cargo test --release --test
/// gpu_single -- --ignored --nocapture`).
#[test]
#[ignore]
fn single_dispatch_latency() {
    let Some(ctx) = common::gpu() else { return };
    let dirs = vec![common::models_dir()];
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone()).unwrap_or_else(|e| panic!("{e}"));
    let single = SinglePathPredictor::load("gfx908", NAME, &dirs, ctx).unwrap_or_else(|e| panic!("{e}"));
    let keys = [
        "64-56-56-1x1-256-56-56-1-0x0-1x1-1x1-0-NCHW-FP32-F",
        "3-32-32-1x1-3-32-32-1-0x0-1x1-1x1-0-NCHW-FP32-F",
        "512-32-32-1x1-6-32-32-4-0x0-1x1-1x1-0-NCHW-FP32-F",
    ];
    for key in keys {
        let p = ConvProblem::parse(key).unwrap_or_else(|e| panic!("{e}"));
        let one = std::slice::from_ref(&p);
        // Warm: pipelines compiled, pools filled.
        for _ in 0..3 {
            gpu.predict_one(&p, DecodeMode::Miopen)
                .unwrap_or_else(|e| panic!("{e}"));
            single
                .predict_batch(one, DecodeMode::Miopen)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for _ in 0..50 {
            let t = std::time::Instant::now();
            let a = gpu
                .predict_one(&p, DecodeMode::Miopen)
                .unwrap_or_else(|e| panic!("{e}"));
            before.push(t.elapsed().as_secs_f64() * 1e3);
            let t = std::time::Instant::now();
            let b = single
                .predict_batch(one, DecodeMode::Miopen)
                .unwrap_or_else(|e| panic!("{e}"));
            after.push(t.elapsed().as_secs_f64() * 1e3);
            let b = b
                .into_iter()
                .next()
                .unwrap_or_else(|| panic!("no answer"))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a[0].config, b[0].config, "{key}");
        }
        before.sort_by(f64::total_cmp);
        after.sort_by(f64::total_cmp);
        println!(
            "{key}: predict_one {:.3} ms, single dispatch {:.3} ms (median of 50)",
            before[25], after[25]
        );
    }
    // Small batches: one workgroup runs on one core, the multi-dispatch path spreads rows.
    let batch: Vec<ConvProblem> = [
        "64-56-56-1x1-256-56-56-1-0x0-1x1-1x1-0-NCHW-FP32-F",
        "3-32-32-1x1-3-32-32-1-0x0-1x1-1x1-0-NCHW-FP32-F",
    ]
    .iter()
    .chain(&keys)
    .cycle()
    .take(MAX_SINGLE_ROWS)
    .map(|k| ConvProblem::parse(k).unwrap_or_else(|e| panic!("{e}")))
    .collect();
    for n in [2, 4, MAX_SINGLE_ROWS] {
        let part = &batch[..n];
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            let t = std::time::Instant::now();
            let a = gpu.predict_batch(part, DecodeMode::Miopen);
            before.push(t.elapsed().as_secs_f64() * 1e3);
            let t = std::time::Instant::now();
            let b = single
                .predict_batch(part, DecodeMode::Miopen)
                .unwrap_or_else(|e| panic!("{e}"));
            after.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(common::config_lines(&a), common::config_lines(&b));
        }
        before.sort_by(f64::total_cmp);
        after.sort_by(f64::total_cmp);
        println!(
            "{n} problems: predict_batch {:.3} ms, single dispatch {:.3} ms (median of 20)",
            before[10], after[10]
        );
    }
}

/// `GpuPredictor` takes the single-dispatch path for one greedy prediction (the kernel is
/// compiled on a fresh context) and gives the CPU's config; a batch of two does not.
#[test]
fn gpu_predictor_takes_the_single_dispatch_path_for_one_prediction() {
    let Some(ctx) = common::fresh_gpu() else { return };
    let ctx = std::sync::Arc::new(ctx);
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).expect("cpu model");
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone()).expect("gpu model");
    let (hard_ones, _) = problems();
    for p in hard_ones.iter().step_by(97).take(12) {
        let want = cpu.predict_one(p, DecodeMode::Miopen);
        let got = gpu.predict_one(p, DecodeMode::Miopen);
        assert_eq!(
            common::config_lines(&[got]),
            common::config_lines(&[want]),
            "{}",
            p.to_perfdb_key()
        );
    }
    let kernels = ctx.compiled_kernels().join(" ");
    assert!(kernels.contains("single_predict"), "{kernels}");
    assert!(
        !kernels.contains("greedy_step"),
        "one prediction took the multi-dispatch path: {kernels}"
    );
    let _ = gpu.predict_batch(&hard_ones[..2], DecodeMode::Miopen);
    let kernels = ctx.compiled_kernels().join(" ");
    assert!(
        kernels.contains("greedy_step"),
        "a batch of two took the single path: {kernels}"
    );
}
