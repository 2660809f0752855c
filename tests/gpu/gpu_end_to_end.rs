//! End to end on the GPU: the 12 embedded model tests, and exactly the CPU path's configs (MIOpen
//! greedy and beam) on a few hundred ConvAsm1x1U problems from `../shared/miopen/perfdb`.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use tuneinfer::engine::Precision;
use tuneinfer::gpu::{verify_ktn_on_gpu, GpuContext, GpuPredictor};
use tuneinfer::problem::ConvProblem;
use tuneinfer::seq2seq::find_model_files;
use tuneinfer::solvers::conv_asm_1x1u::NAME;
use tuneinfer::{DecodeMode, Predictor};

#[test]
fn embedded_model_tests_pass_on_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let dir = common::models_dir();
    let mut checked = 0;
    for (arch, solver) in [
        ("gfx908", "ConvAsm1x1U"),
        ("gfx90a", "ConvHipIgemmGroupFwdXdlops"),
        ("gfx90a", "ConvHipIgemmGroupXdlops"),
        ("gfx942", "ConvHipIgemmGroupFwdXdlops"),
        ("gfx942", "ConvHipIgemmGroupWrwXdlops"),
        ("gfx942", "ConvHipIgemmGroupXdlops"),
    ] {
        let files = find_model_files(std::slice::from_ref(&dir), arch, solver).expect("model files");
        for r in verify_ktn_on_gpu(&ctx, &files).expect("gpu verify") {
            println!(
                "{} {}: {} tests, max |gpu - keras| {:e}",
                r.kind, r.source, r.tests, r.max_abs_error
            );
            assert!(
                r.tests > 0 && r.max_abs_error <= 1e-4,
                "{}: {}",
                r.source,
                r.max_abs_error
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
}

#[test]
fn gpu_configs_equal_cpu_configs_on_perfdb_problems() {
    let Some(ctx) = common::gpu() else { return };
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).expect("cpu model");
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx).expect("gpu model");
    let problems = common::perfdb_problems("ConvAsm1x1U", 100);
    assert!(problems.len() >= 200, "only {} problems", problems.len());
    for mode in [
        DecodeMode::Miopen,
        DecodeMode::Beam { width: 4, top: 4 },
        DecodeMode::Beam { width: 1, top: 1 },
    ] {
        let want = cpu.predict_batch(&problems, mode);
        let got = gpu.predict_batch(&problems, mode);
        assert_eq!(want.len(), got.len());
        if matches!(mode, DecodeMode::Miopen | DecodeMode::Beam { width: 4, .. }) {
            // A second decode of the same batch reuses the pooled work buffers: same answers.
            let again = gpu.predict_batch(&problems, mode);
            assert_eq!(
                common::config_lines(&again),
                common::config_lines(&got),
                "{mode:?}: reused buffers changed answers"
            );
            // A third one also reuses the bind groups recorded by the second.
            let third = gpu.predict_batch(&problems, mode);
            assert_eq!(
                common::config_lines(&third),
                common::config_lines(&got),
                "{mode:?}: cached bind groups changed answers"
            );
        }
        let (same, worst_score) = common::assert_same_predictions(&format!("{mode:?}"), &problems, &want, &got);
        println!(
            "{mode:?}: {same} of {} problems decoded, identical configs; worst score difference {worst_score:e}",
            problems.len()
        );
        assert!(same >= 100, "{mode:?}: only {same} problems decoded");
        assert!(worst_score <= 1e-4, "{mode:?}: score difference {worst_score}");
    }
    // Both searches really ran resident on the GPU (not the host search with GPU steps).
    let kernels = gpu.context().compiled_kernels().join(" ");
    assert!(kernels.contains("greedy_step+conv_asm_1x1u_rules"), "{kernels}");
    assert!(kernels.contains("beam_step+conv_asm_1x1u_rules"), "{kernels}");
}

/// Wider beams than the other tests use: beam_step's sort spans grow with the candidates (width 8:
/// up to 304; width 40: 1520, the 2048-entry sort keys in workgroup memory).
#[test]
fn wide_gpu_beams_equal_cpu_beams() {
    let Some(ctx) = common::gpu() else { return };
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).expect("cpu model");
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx).expect("gpu model");
    let problems: Vec<ConvProblem> = common::perfdb_problems("ConvAsm1x1U", 30)
        .into_iter()
        .take(60)
        .collect();
    for (width, top) in [(8, 8), (40, 5)] {
        let mode = DecodeMode::Beam { width, top };
        let want = cpu.predict_batch(&problems, mode);
        let got = gpu.predict_batch(&problems, mode);
        let mut same = 0;
        for ((p, w), g) in problems.iter().zip(&want).zip(&got) {
            match (w, g) {
                (Ok(w), Ok(g)) => {
                    let wc: Vec<&str> = w.iter().map(|x| x.config.as_str()).collect();
                    let gc: Vec<&str> = g.iter().map(|x| x.config.as_str()).collect();
                    assert_eq!(wc, gc, "{mode:?} {}", p.to_perfdb_key());
                    same += 1;
                }
                (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string()),
                _ => panic!("{mode:?} {}: cpu {w:?} vs gpu {g:?}", p.to_perfdb_key()),
            }
        }
        println!(
            "{mode:?}: {same} of {} problems decoded, identical configs",
            problems.len()
        );
        assert!(2 * same >= problems.len(), "{mode:?}: only {same} problems decoded");
    }
    let kernels = gpu.context().compiled_kernels().join(" ");
    println!("{kernels}");
    assert!(kernels.contains("SORT=512,V=38,WG=32,WIDTH=8"), "{kernels}");
}

#[test]
fn tiled_kernels_give_the_cpu_configs() {
    // The batch tests above are below the tiled paths' row threshold: this context tiles every
    // lstm_step and dense dispatch (its own context, so the other tests keep the default).
    if common::gpu().is_none() {
        return;
    }
    let ctx = Arc::new(GpuContext::open(true).expect("second context"));
    ctx.set_tiled_min_rows(0);
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).expect("cpu model");
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone()).expect("gpu model");
    let problems = common::perfdb_problems("ConvAsm1x1U", 40);
    for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
        let want = cpu.predict_batch(&problems, mode);
        let got = gpu.predict_batch(&problems, mode);
        let mut same = 0;
        for ((p, w), g) in problems.iter().zip(&want).zip(&got) {
            match (w, g) {
                (Ok(w), Ok(g)) => {
                    let wc: Vec<&str> = w.iter().map(|x| x.config.as_str()).collect();
                    let gc: Vec<&str> = g.iter().map(|x| x.config.as_str()).collect();
                    assert_eq!(wc, gc, "{mode:?} {}", p.to_perfdb_key());
                    same += 1;
                }
                (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string()),
                _ => panic!("{mode:?} {}: cpu {w:?} vs gpu {g:?}", p.to_perfdb_key()),
            }
        }
        assert!(same >= 40, "{mode:?}: only {same} problems decoded");
    }
    let kernels = ctx.compiled_kernels().join(" ");
    assert!(kernels.contains("SMALL=0"), "{kernels}");
    assert!(!kernels.contains("SMALL=1"), "{kernels}");
}

#[test]
fn chunked_batches_give_the_same_answers_in_order() {
    // Chunks of 7 problems: preparing, decoding and answering of neighbouring chunks overlap.
    let Some(ctx) = common::gpu() else { return };
    let dirs = vec![common::models_dir()];
    let whole = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone()).expect("gpu model");
    let chunked = GpuPredictor::load("gfx908", NAME, &dirs, ctx)
        .expect("gpu model")
        .with_chunk_limit(7);
    assert_eq!(chunked.chunk_size(DecodeMode::Miopen), 7);
    let problems: Vec<ConvProblem> = common::perfdb_problems("ConvAsm1x1U", 30)
        .into_iter()
        .take(50)
        .collect();
    for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 2 }] {
        let want = common::config_lines(&whole.predict_batch(&problems, mode));
        let got = common::config_lines(&chunked.predict_batch(&problems, mode));
        assert_eq!(want.len(), problems.len());
        assert_eq!(want, got, "{mode:?}");
    }
}

#[test]
fn f16_weights_change_few_predictions() {
    let Some(ctx) = common::gpu() else { return };
    if !ctx.adapter().shader_f16 {
        println!("skipped: adapter has no shader f16");
        return;
    }
    let dirs = vec![common::models_dir()];
    let f32_gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone()).expect("f32 model");
    let f16_gpu = GpuPredictor::load_with("gfx908", NAME, &dirs, ctx, Precision::F16).expect("f16 model");
    let problems = common::perfdb_problems("ConvAsm1x1U", 100);
    for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 1 }] {
        let a = f32_gpu.predict_batch(&problems, mode);
        let b = f16_gpu.predict_batch(&problems, mode);
        let (mut decoded, mut changed) = (0, 0);
        for (x, y) in a.iter().zip(&b) {
            if let (Ok(x), Ok(y)) = (x, y) {
                decoded += 1;
                changed += usize::from(x[0].config != y[0].config);
            }
        }
        println!("{mode:?}: f16 weights change {changed} of {decoded} predictions");
        assert!(decoded >= 100);
        assert!(changed * 5 <= decoded, "{mode:?}: f16 changed {changed} of {decoded}");
    }
}

#[test]
fn a_small_beam_batch_after_a_smaller_one_decodes_every_problem_from_its_own_state() {
    // The pooled buffers of one decode serve the next: a batch of 1 then batches of 2-4 at widths
    // 1 and 2 (whose per-row constants round to the same buffer size) must still equal the CPU,
    // for MIOpen's model and for ours (both beams start from the same pooled constants).
    let Some(ctx) = common::gpu() else { return };
    let problems: Vec<ConvProblem> = common::perfdb_problems("ConvAsm1x1U", 30).into_iter().take(4).collect();
    assert_eq!(problems.len(), 4);
    let ours = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights");
    for (arch, dirs) in [("gfx908", vec![common::models_dir()]), ("gfx906", vec![ours])] {
        let cpu = Predictor::load(arch, NAME, &dirs).expect("cpu model");
        let gpu = GpuPredictor::load(arch, NAME, &dirs, ctx.clone()).expect("gpu model");
        for width in [1, 2] {
            let mode = DecodeMode::Beam { width, top: width };
            for n in [1, 2, 3, 4] {
                let want = common::config_lines(&cpu.predict_batch(&problems[..n], mode));
                let got = common::config_lines(&gpu.predict_batch(&problems[..n], mode));
                assert_eq!(got, want, "{arch} width {width}, {n} problems");
            }
        }
    }
}

#[test]
fn dispatches_split_over_two_dimensions_give_the_cpu_configs() {
    // A real device splits dispatches of more than 65,535 workgroups (e.g. greedy chunks of
    // 100,000 rows, one workgroup each) over x and y. Capping the groups per dimension at 7 sends
    // small batches down that path, for both kinds of model, on the tiled and SMALL kernels
    // (small enough that no dispatch needs more than 7 x 7 workgroups).
    let Some(ctx) = common::fresh_gpu().map(Arc::new) else {
        return;
    };
    ctx.cap_groups_per_dimension(7);
    let problems: Vec<ConvProblem> = common::perfdb_problems("ConvAsm1x1U", 30)
        .into_iter()
        .take(16)
        .collect();
    let ours = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights");
    for (arch, dirs) in [("gfx908", vec![common::models_dir()]), ("gfx906", vec![ours])] {
        let cpu = Predictor::load(arch, NAME, &dirs).expect("cpu model");
        let gpu = GpuPredictor::load(arch, NAME, &dirs, ctx.clone()).expect("gpu model");
        for tiled_min_rows in [0, usize::MAX] {
            ctx.set_tiled_min_rows(tiled_min_rows);
            // A beam of 3 over 8 problems: 24 rows, as many workgroups as 16 greedy rows need.
            for (mode, n) in [(DecodeMode::Miopen, 16), (DecodeMode::Beam { width: 3, top: 2 }, 8)] {
                let want = common::config_lines(&cpu.predict_batch(&problems[..n], mode));
                let got = common::config_lines(&gpu.predict_batch(&problems[..n], mode));
                assert_eq!(got, want, "{arch} {mode:?} tiled from {tiled_min_rows} rows");
            }
        }
    }
}

#[test]
fn a_damaged_model_in_an_earlier_directory_fails_on_the_gpu_as_on_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let (dirs, encoder) = common::damaged_model_before_intact_one("damaged-first-gpu");
    let cpu = Predictor::load("gfx908", NAME, &dirs)
        .err()
        .expect("cpu: the damage is reported");
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx)
        .err()
        .expect("gpu: the damage is reported");
    assert!(gpu.to_string().contains(&encoder.display().to_string()), "{gpu}");
    assert_eq!(gpu.to_string(), cpu.to_string());
    assert_eq!(gpu.exit_code(), cpu.exit_code());
    let _ = std::fs::remove_dir_all(&dirs[0]);
}
