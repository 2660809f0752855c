//! The hybrid encoder on the GPU: `conv1d.wgsl` against its CPU twin
//! (`seq2seq::conv_encoder::conv1d_same_tanh`) on random, odd-sized, non-zero inputs with
//! sentinel words around the output (NaN never passes: every comparison is `err <= tol`), and a
//! hybrid model trained here on real perf-db rows giving the CPU's configs on the GPU for a few
//! hundred perf-db problems, MIOpen's greedy walk and a beam of 4, with one and two members.
//! Without any Vulkan adapter the GPU tests print "skipped: no GPU adapter" (lavapipe runs them).
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use std::path::PathBuf;

use tuneinfer::gpu::kernels::host;
use tuneinfer::gpu::GpuPredictor;
use tuneinfer::seq2seq::attention::EncoderKind;
use tuneinfer::seq2seq::conv_encoder::{conv1d_same_tanh, CONV_WIDTH};
use tuneinfer::testutil::Lcg;
use tuneinfer::train::{self, TrainOptions};
use tuneinfer::{DecodeMode, Predictor};

/// Non-zero values in [-scale, -scale/8] ∪ [scale/8, scale].
fn nonzero(rng: &mut Lcg, n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let v = rng.value(scale);
            if v.abs() < scale / 8.0 {
                v + scale / 8.0 * v.signum()
            } else {
                v
            }
        })
        .collect()
}

#[test]
fn conv1d_matches_its_cpu_twin_on_odd_sizes() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(77);
    // (rows, steps, fin, channels): odd sizes, one step (both paddings at once), and the real
    // model's 12 steps of 13 inputs into 32 channels.
    let shapes = [
        (1, 1, 1, 1),
        (3, 2, 3, 5),
        (17, 12, 13, 32),
        (63, 7, 9, 17),
        (65, 13, 14, 33),
        (129, 3, 1, 65),
        (4099, 12, 13, 32),
    ];
    for (rows, steps, fin, ch) in shapes {
        let x = nonzero(&mut rng, rows * steps * fin, 1.5);
        let w = nonzero(&mut rng, CONV_WIDTH * fin * ch, 0.6);
        let b = nonzero(&mut rng, ch, 0.3);
        let mut want = vec![0.0; rows * steps * ch];
        conv1d_same_tanh(&x, &w, &b, &mut want, rows, steps, fin, ch);
        assert!(want.iter().all(|v| v.is_finite()) && want.iter().any(|v| v.abs() > 0.1));
        let got = host::conv1d(&ctx, &x, &w, &b, rows, steps, fin, ch).expect("conv1d");
        assert!(
            got.sentinels_intact,
            "conv1d {rows}x{steps}x{fin}->{ch} wrote outside its output"
        );
        assert_eq!(got.values.len(), want.len());
        let mut worst = 0f64;
        for (i, (&g, &c)) in got.values.iter().zip(&want).enumerate() {
            let err = (g as f64 - c as f64).abs();
            assert!(
                err <= 2e-6,
                "conv1d {rows}x{steps}x{fin}->{ch} [{i}]: gpu {g} vs cpu {c}"
            );
            worst = worst.max(err);
        }
        println!("conv1d {rows}x{steps}x{fin}->{ch}: worst |gpu - cpu| {worst:e}");
    }
    // Wrong sizes are an error, not a launch.
    assert!(host::conv1d(&ctx, &[1.0; 6], &[1.0; 9], &[1.0; 1], 1, 2, 3, 2).is_err());
}

#[test]
fn nonzero_values_are_nonzero() {
    let mut rng = Lcg::new(3);
    let v = nonzero(&mut rng, 10_000, 1.0);
    assert!(
        v.iter().all(|x| x.abs() >= 0.125 - 1e-6 && x.abs() <= 1.0 + 1e-6),
        "{v:?}"
    );
}

/// A small hybrid ConvAsm1x1U model trained on 1,500 gfx906 rows, `members` networks.
fn train_hybrid(members: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-test-hybrid-{members}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = common::perfdb_dir().join("gfx906_60.db");
    let mut o = TrainOptions::new(&db, "gfx906", "ConvAsm1x1U", &dir);
    o.encoder = EncoderKind::Hybrid { channels: 11 };
    o.max_rows = Some(1500);
    o.hidden = 24;
    o.embed = 8;
    o.epochs = 3;
    o.lr = 0.01;
    o.members = members;
    o.verbose = false;
    train::train(&o, None).expect("train a hybrid model");
    dir
}

#[test]
fn hybrid_model_gpu_configs_equal_cpu_configs_on_perfdb_problems() {
    let Some(ctx) = common::gpu() else { return };
    let problems = common::perfdb_problems("ConvAsm1x1U", 150);
    assert!(problems.len() >= 200, "only {} problems", problems.len());
    for members in [1, 2] {
        let dirs = vec![train_hybrid(members)];
        let cpu = Predictor::load("gfx906", "ConvAsm1x1U", &dirs).expect("cpu model");
        assert!(
            cpu.model
                .describe()
                .contains("hybrid encoder (11 convolution channels)"),
            "{}",
            cpu.model.describe()
        );
        let gpu = GpuPredictor::load("gfx906", "ConvAsm1x1U", &dirs, ctx.clone()).expect("gpu model");
        for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
            let want = cpu.predict_batch(&problems, mode);
            let got = gpu.predict_batch(&problems, mode);
            let label = format!("hybrid, {members} member(s), {mode:?}");
            let (same, worst_score) = common::assert_same_predictions(&label, &problems, &want, &got);
            println!(
                "{label}: {same} of {} problems decoded, identical configs; worst score difference {worst_score:e}",
                problems.len()
            );
            assert!(same >= 100, "{label}: only {same} problems decoded");
            assert!(worst_score <= 1e-4, "{label}: score difference {worst_score}");
        }
        let kernels = gpu.context().compiled_kernels().join(" ");
        assert!(
            kernels.contains("conv1d{CH=11,FIN=13,STEPS=12"),
            "conv1d not in {kernels}"
        );
        // Two members: their step's scores averaged on the GPU.
        if members > 1 {
            assert!(kernels.contains("ensemble_mean{"), "ensemble_mean not in {kernels}");
        }
        let _ = std::fs::remove_dir_all(&dirs[0]);
    }
}
