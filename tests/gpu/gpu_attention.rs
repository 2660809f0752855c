//! tuneinfer's own attention models (`weights/`, gfx906 and gfx900 ConvAsm1x1U: one network
//! each, gfx900's with the GPU as an input; ensembles are `tests/gpu/gpu_hybrid.rs`'s) on the GPU:
//! exactly the CPU path's configs, MIOpen's greedy walk and a beam of 4, on a few hundred
//! ConvAsm1x1U problems from `../shared/miopen/perfdb`.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::engine::{DeviceChoice, Engine, Precision};
use tuneinfer::gpu::GpuPredictor;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::NAME;
use tuneinfer::{DecodeMode, Predictor};

#[test]
fn gpu_attention_configs_equal_cpu_configs_on_perfdb_problems() {
    let Some(ctx) = common::gpu() else { return };
    let dirs = vec![common::weights_dir()];
    let problems = common::perfdb_problems("ConvAsm1x1U", 150);
    assert!(problems.len() >= 200, "only {} problems", problems.len());
    for arch in ["gfx906", "gfx900"] {
        let cpu = Predictor::load(arch, NAME, &dirs).expect("cpu model");
        let gpu = GpuPredictor::load(arch, NAME, &dirs, ctx.clone()).expect("gpu model");
        assert!(
            cpu.model.describe().contains("attention seq2seq"),
            "{}",
            cpu.model.describe()
        );
        for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
            let want = cpu.predict_batch(&problems, mode);
            let got = gpu.predict_batch(&problems, mode);
            let (same, worst_score) =
                common::assert_same_predictions(&format!("{arch} {mode:?}"), &problems, &want, &got);
            println!(
                "{arch} {mode:?}: {same} of {} problems decoded, identical configs; worst score difference {worst_score:e}",
                problems.len()
            );
            assert!(same >= 100, "{arch} {mode:?}: only {same} problems decoded");
            // Scores are sums of 8 log-probabilities; the GPU may fuse the attention's
            // multiply-adds where the CPU rounds twice.
            assert!(worst_score <= 1e-4, "{arch} {mode:?}: score difference {worst_score}");
        }
        // Both searches ran resident on the GPU, with the attention kernel.
        let kernels = gpu.context().compiled_kernels().join(" ");
        for k in [
            "attention{STEPS=12,UNITS=128",
            "greedy_step+conv_asm_1x1u_rules",
            "beam_step+conv_asm_1x1u_rules",
        ] {
            assert!(kernels.contains(k), "{k} not in {kernels}");
        }
    }
}

#[test]
fn gpu_attention_steps_under_the_host_beam_equal_cpu() {
    // A beam wider than beam_step.wgsl takes (60 x 37 candidates > 2048) runs the host's search
    // over GPU decoder steps (host_steps::HostSteps over the model's ResidentModel step).
    let Some(ctx) = common::gpu() else { return };
    let dirs = vec![common::weights_dir()];
    let problems: Vec<ConvProblem> = common::perfdb_problems("ConvAsm1x1U", 150)
        .into_iter()
        .step_by(25)
        .collect();
    let cpu = Predictor::load("gfx906", NAME, &dirs).expect("cpu model");
    let gpu = GpuPredictor::load("gfx906", NAME, &dirs, ctx).expect("gpu model");
    let mode = DecodeMode::Beam { width: 60, top: 3 };
    let want = cpu.predict_batch(&problems, mode);
    let got = gpu.predict_batch(&problems, mode);
    let mut decoded = 0;
    for ((p, w), g) in problems.iter().zip(&want).zip(&got) {
        match (w, g) {
            (Ok(w), Ok(g)) => {
                let wc: Vec<&str> = w.iter().map(|x| x.config.as_str()).collect();
                let gc: Vec<&str> = g.iter().map(|x| x.config.as_str()).collect();
                assert_eq!(wc, gc, "{}", p.to_perfdb_key());
                decoded += 1;
            }
            (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string()),
            _ => panic!("{}: cpu {w:?} vs gpu {g:?}", p.to_perfdb_key()),
        }
    }
    println!("width 60: {decoded} of {} problems, identical configs", problems.len());
    assert!(decoded >= 8, "only {decoded} decoded");
}

#[test]
fn device_gpu_loads_the_shipped_weights() {
    let Some(_ctx) = common::gpu() else { return };
    let dirs = vec![common::weights_dir()];
    let engine = Engine::load("gfx906", NAME, &dirs, DeviceChoice::Gpu, Precision::F32).expect("gpu engine");
    assert!(matches!(engine, Engine::Gpu { .. }), "not on the GPU");
    let problem = ConvProblem::parse("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F").expect("problem");
    let want = Predictor::load("gfx906", NAME, &dirs)
        .expect("cpu")
        .predict_one(&problem, DecodeMode::Miopen)
        .expect("cpu prediction");
    let got = engine
        .predict_one(&problem, DecodeMode::Miopen)
        .expect("gpu prediction");
    assert_eq!(want[0].config, got[0].config);
    // --threads reaches the GPU engine's host side too (it was only applied on the CPU).
    let engine = engine.with_threads(3);
    assert!(matches!(engine, Engine::Gpu { .. }));
    assert_eq!(engine.host().threads(), 3);
    let again = engine
        .predict_one(&problem, DecodeMode::Miopen)
        .expect("gpu prediction");
    assert_eq!(again[0].config, want[0].config);
}

#[test]
fn f16_weights_change_few_attention_predictions() {
    let Some(ctx) = common::gpu() else { return };
    if !ctx.adapter().shader_f16 {
        println!("skipped: adapter has no shader f16");
        return;
    }
    let dirs = vec![common::weights_dir()];
    let cpu = Predictor::load("gfx906", NAME, &dirs).expect("cpu model");
    let f16_gpu = GpuPredictor::load_with("gfx906", NAME, &dirs, ctx, Precision::F16).expect("f16 model");
    let problems = common::perfdb_problems("ConvAsm1x1U", 150);
    let mode = DecodeMode::Miopen;
    let (a, b) = (
        cpu.predict_batch(&problems, mode),
        f16_gpu.predict_batch(&problems, mode),
    );
    let (mut decoded, mut changed) = (0, 0);
    for (x, y) in a.iter().zip(&b) {
        if let (Ok(x), Ok(y)) = (x, y) {
            decoded += 1;
            changed += usize::from(x[0].config != y[0].config);
        }
    }
    println!("f16 weights change {changed} of {decoded} predictions");
    assert!(decoded >= 100);
    assert!(changed * 20 <= decoded, "f16 changed {changed} of {decoded}");
}
