//! The fused-step greedy path (`gpu::fused`, `shaders/fused_step.wgsl`: the encoder as the
//! multi-dispatch path records it, then one dispatch a decoder step — both LSTM layers, the
//! output layer, the log-softmax and MIOpen's walk for blocks of rows) against its CPU twin,
//! `Predictor` with `DecodeMode::Miopen`, on MIOpen's gfx908 ConvAsm1x1U model: every 4th hard
//! problem of the shared perf databases (K or C below 16, N = 1, odd sizes; all of them with
//! `TUNEINFER_ALL_HARD=1`, `tools/gpu_hard_all.sh`) plus every 40th of the rest, in blocks of 4, 8 and 16 rows, in batches that are and are not multiples of the
//! block; scores bit for bit those of the multi-dispatch resident walk. llvmpipe cuts an
//! invocation's loops past 65,535 iterations silently (wrong answers, no error), so identical
//! configs on these are what catches a cut; the counted bound stays far under the cap.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::gpu::{FusedPathPredictor, GreedyPath, FUSED_DEFAULT_BLOCK, FUSED_MAX_BLOCK, ITERATION_BUDGET};
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

fn load() -> Option<(Predictor, FusedPathPredictor)> {
    let ctx = common::gpu()?;
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).unwrap_or_else(|e| panic!("{e}"));
    let fused = FusedPathPredictor::load("gfx908", NAME, &dirs, ctx).unwrap_or_else(|e| panic!("{e}"));
    Some((cpu, fused))
}

/// The block sizes this device takes among 4, 8 and 16 (4 and 8 always on lavapipe).
fn blocks(fused: &FusedPathPredictor) -> Vec<usize> {
    let ok: Vec<usize> = [4, 8, FUSED_MAX_BLOCK]
        .into_iter()
        .filter(|&b| fused.fits(b).is_ok())
        .collect();
    assert!(ok.contains(&4) && ok.contains(&8), "blocks taken: {ok:?}");
    ok
}

/// The fused path's answers in batches of `batch` problems, blocks of `block` rows.
fn fused_answers(
    fused: &FusedPathPredictor,
    problems: &[ConvProblem],
    batch: usize,
    block: usize,
) -> Vec<Result<Vec<Prediction>>> {
    let mut out = Vec::with_capacity(problems.len());
    for part in problems.chunks(batch) {
        out.extend(
            fused
                .predict_batch(part, DecodeMode::Miopen, block)
                .unwrap_or_else(|e| panic!("batches of {batch}, blocks of {block}: {e}")),
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

/// Configs and score bits of each answer.
/// An answer as configs and score bits, or its error's text.
type Bits = std::result::Result<Vec<(String, Option<u32>)>, String>;

fn bits(results: &[Result<Vec<Prediction>>]) -> Vec<Bits> {
    results
        .iter()
        .map(|r| {
            r.as_ref()
                .map(|v| {
                    v.iter()
                        .map(|x| (x.config.clone(), x.score.map(f32::to_bits)))
                        .collect::<Vec<_>>()
                })
                .map_err(|e| e.to_string())
        })
        .collect()
}

#[test]
fn fused_step_gives_the_cpu_configs_on_the_hard_problems() {
    let Some((cpu, fused)) = load() else { return };
    let (hard_ones, sample) = problems();
    assert!(hard_ones.len() > 1000, "only {} hard problems", hard_ones.len());
    let hard_ones = common::hard_share(hard_ones, 4);
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
    // Every problem in one batch at the default block (the last block partial), the other
    // blocks on every 8th problem, odd batches (2 B + 1) on every 32nd; the whole grid is the
    // ignored test below.
    let default = fused.default_block().unwrap_or_else(|e| panic!("{e}"));
    for block in blocks(&fused) {
        let every = if block == default { 1 } else { 8 };
        if every == 1 {
            check_grid(&fused, &problems, &want, block, &[problems.len()], n_hard, from_model);
        } else {
            let part: Vec<ConvProblem> = problems.iter().step_by(every).cloned().collect();
            let want_part = cpu.predict_batch(&part, DecodeMode::Miopen);
            check_grid(&fused, &part, &want_part, block, &[part.len()], n_hard, from_model);
        }
        let part: Vec<ConvProblem> = problems.iter().step_by(32).cloned().collect();
        let want_part = cpu.predict_batch(&part, DecodeMode::Miopen);
        check_grid(&fused, &part, &want_part, block, &[2 * block + 1], n_hard, from_model);
    }
}

/// The fused path in blocks of `block`, batches of each of `batches`, against `want`.
fn check_grid(
    fused: &FusedPathPredictor,
    problems: &[ConvProblem],
    want: &[Result<Vec<Prediction>>],
    block: usize,
    batches: &[usize],
    n_hard: usize,
    from_model: usize,
) {
    for &batch in batches {
        let t = std::time::Instant::now();
        let got = fused_answers(fused, problems, batch, block);
        let label = format!(
            "gfx908 {NAME} fused step, {} problems, blocks of {block}, batches of {batch} (of {n_hard} hard, {from_model} by the model)",
            problems.len()
        );
        assert_same(&label, problems, want, &got);
        println!("  {:.1} s", t.elapsed().as_secs_f64());
    }
}

/// Every problem at every block in one batch and in odd batches (`cargo test --release --test
/// gpu_fused -- --ignored`; ~3 minutes on lavapipe).
#[test]
#[ignore]
fn fused_step_on_every_problem_at_every_block() {
    let Some((cpu, fused)) = load() else { return };
    let (hard_ones, sample) = problems();
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
    for block in blocks(&fused) {
        check_grid(
            &fused,
            &problems,
            &want,
            block,
            &[problems.len(), 2 * block + 1],
            n_hard,
            from_model,
        );
    }
}

#[test]
fn fused_step_at_batches_around_the_block() {
    let Some((cpu, fused)) = load() else { return };
    let (hard_ones, sample) = problems();
    // A slice of hard and ordinary problems; batches of 1, B - 1, B, B + 1 and an odd 37.
    let problems: Vec<ConvProblem> = hard_ones
        .iter()
        .step_by(23)
        .take(40)
        .chain(sample.iter().take(20))
        .cloned()
        .collect();
    let want = cpu.predict_batch(&problems, DecodeMode::Miopen);
    for block in blocks(&fused) {
        for batch in [1, block - 1, block, block + 1, 37] {
            let part = &problems[..problems.len().min(3 * batch + 1)];
            let got = fused_answers(&fused, part, batch, block);
            assert_same(
                &format!("blocks of {block}, batches of {batch}"),
                part,
                &want[..part.len()],
                &got,
            );
        }
    }
}

#[test]
fn fused_step_scores_are_the_multi_dispatch_bits() {
    let Some((cpu, fused)) = load() else { return };
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
    let (hard_ones, sample) = problems();
    let problems: Vec<ConvProblem> = keys
        .iter()
        .map(|k| ConvProblem::parse(k).unwrap_or_else(|e| panic!("{k}: {e}")))
        .chain(hard_ones.iter().step_by(11).take(150).cloned())
        .chain(sample.iter().step_by(3).take(40).cloned())
        .collect();
    let want = cpu.predict_batch(&problems, DecodeMode::Miopen);
    let multi = fused
        .predict_batch_on(&problems, DecodeMode::Miopen, GreedyPath::MultiDispatch)
        .unwrap_or_else(|e| panic!("multi-dispatch: {e}"));
    assert_same("multi-dispatch resident walk", &problems, &want, &multi);
    let scored = multi
        .iter()
        .filter(|r| r.as_ref().is_ok_and(|v| v.iter().any(|x| x.score.is_some())))
        .count();
    assert!(scored > 20, "only {scored} answers with a model score");
    for block in blocks(&fused) {
        let got = fused
            .predict_batch(&problems, DecodeMode::Miopen, block)
            .unwrap_or_else(|e| panic!("blocks of {block}: {e}"));
        for ((p, m), g) in problems.iter().zip(bits(&multi)).zip(bits(&got)) {
            assert_eq!(m, g, "{} in blocks of {block}", p.to_perfdb_key());
        }
    }
}

#[test]
fn fused_loop_iterations_stay_far_under_llvmpipes_cap() {
    let Some((_, fused)) = load() else { return };
    let mut last = 0;
    for block in (4..=FUSED_MAX_BLOCK).step_by(4) {
        let n = fused.loop_iterations(block).unwrap_or_else(|e| panic!("{e}"));
        println!("gfx908 {NAME}: blocks of {block}: at most {n} loop iterations an invocation a step");
        assert!(n > last, "more rows, no more iterations");
        assert!(
            n <= ITERATION_BUDGET && ITERATION_BUDGET <= 65_535 / 4,
            "{n} iterations"
        );
        last = n;
    }
    // Hand count for blocks of 16 (2 layers of 128 units, a thread takes (unit, 4 rows), 4 of
    // them a layer): layer 0 4 x (3 + 33 + 1) + loading h 17, layer 1 4 x (33 + 33 + 1) + 17,
    // output 5 x 34, log-softmax 78, candidates 5 x 28, update 93: 955.
    let sixteen = fused.loop_iterations(16).unwrap_or_else(|e| panic!("{e}"));
    assert!((800..1_200).contains(&sixteen), "{sixteen}");
    assert!(fused.loop_iterations(4).unwrap_or_else(|e| panic!("{e}")) < 600);
    assert!(fused.default_block().is_ok_and(|b| b <= FUSED_DEFAULT_BLOCK));
    let (one, many) = fused.dispatch_counts(8);
    assert_eq!((one, many), (25, 49), "dispatches of a decode");
}

#[test]
fn fused_step_refuses_what_it_does_not_take() {
    let Some((_, fused)) = load() else { return };
    let p = ConvProblem::parse("64-56-56-1x1-256-56-56-1-0x0-1x1-1x1-0-NCHW-FP32-F").unwrap_or_else(|e| panic!("{e}"));
    let one = std::slice::from_ref(&p);
    assert!(
        fused
            .predict_batch(one, DecodeMode::Beam { width: 4, top: 4 }, 8)
            .is_err(),
        "beam"
    );
    assert!(fused.predict_batch(one, DecodeMode::Miopen, 0).is_err(), "block 0");
    assert!(
        fused
            .predict_batch(one, DecodeMode::Miopen, FUSED_MAX_BLOCK + 1)
            .is_err(),
        "block past the gate sums a thread keeps"
    );
    // An empty batch decodes nothing.
    assert!(fused
        .predict_batch(&[], DecodeMode::Miopen, 8)
        .is_ok_and(|v| v.is_empty()));
}

/// Wall time of batches of 64 and 512 problems on the multi-dispatch resident walk and on the
/// fused step (blocks of 4, 8, 16), median of 7 each, alternating, in one run (`cargo test
/// --release --test gpu gpu_fused:: -- --ignored --nocapture`).
#[test]
#[ignore]
fn fused_step_throughput() {
    let Some((_, fused)) = load() else { return };
    let (hard_ones, sample) = problems();
    let all: Vec<ConvProblem> = hard_ones.into_iter().chain(sample).collect();
    let paths: Vec<GreedyPath> = std::iter::once(GreedyPath::MultiDispatch)
        .chain(blocks(&fused).into_iter().map(|block| GreedyPath::Fused { block }))
        .collect();
    let (f, m) = fused.dispatch_counts(8);
    println!("dispatches a decode: fused {f}, multi-dispatch {m}");
    for n in [64, 512] {
        let batch: Vec<ConvProblem> = all.iter().cycle().step_by(7).take(n).cloned().collect();
        let mut times = vec![Vec::new(); paths.len()];
        let mut answers = vec![Vec::new(); paths.len()];
        for round in 0..8 {
            for (i, &path) in paths.iter().enumerate() {
                let t = std::time::Instant::now();
                let got = fused
                    .predict_batch_on(&batch, DecodeMode::Miopen, path)
                    .unwrap_or_else(|e| panic!("{path:?}: {e}"));
                // Round 0 warms up (pipelines compiled, pools filled).
                if round > 0 {
                    times[i].push(t.elapsed().as_secs_f64() * 1e3);
                }
                answers[i] = common::config_lines(&got);
            }
        }
        for (i, path) in paths.iter().enumerate() {
            assert_eq!(answers[i], answers[0], "{path:?}");
            times[i].sort_by(f64::total_cmp);
            println!(
                "{n} problems, {path:?}: median {:.1} ms (of {})",
                times[i][times[i].len() / 2],
                times[i].len()
            );
        }
        // GPU time per kernel (timestamp queries), where the device writes them.
        let Some(ctx) = common::gpu() else { return };
        if !ctx.has_timestamps() {
            continue;
        }
        for &path in &paths {
            ctx.start_profile().unwrap_or_else(|e| panic!("{e}"));
            let _ = fused.predict_batch_on(&batch, DecodeMode::Miopen, path);
            let report = ctx.finish_profile().unwrap_or_else(|e| panic!("{e}"));
            let kernels: Vec<String> = report
                .by_kernel()
                .iter()
                .map(|k| format!("{} {} x {:.1} ms", k.kernel, k.dispatches, k.gpu_ns / 1e6))
                .collect();
            println!(
                "{n} problems, {path:?}: GPU {:.1} ms: {}",
                report.gpu_ns() / 1e6,
                kernels.join(", ")
            );
        }
    }
}
