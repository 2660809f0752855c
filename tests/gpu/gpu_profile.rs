//! GPU profiling (`bench --profile`): the same answers with and without it, a time for every
//! kernel that ran, nothing recorded while it is off, and the round trips measured.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use std::sync::Arc;

use tuneinfer::gpu::probe::round_trips;
use tuneinfer::gpu::{GpuContext, GpuPredictor};
use tuneinfer::solvers::conv_asm_1x1u::NAME;
use tuneinfer::workload::asm1x1u_problems;
use tuneinfer::DecodeMode;

/// CI installs lavapipe, which has timestamp queries: there a missing profile is a failure.
fn in_ci() -> bool {
    std::env::var("TUNEINFER_CI").ok().as_deref() == Some("1")
}

/// A context of its own: profiling is per context, and other tests share the process-wide one.
fn gpu() -> Option<Arc<GpuContext>> {
    common::fresh_gpu().map(Arc::new)
}

#[test]
fn profiling_times_every_kernel_and_changes_no_answer() {
    let Some(ctx) = gpu() else { return };
    let dirs = vec![common::models_dir()];
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone()).expect("gpu model");
    let problems = asm1x1u_problems(37, 5);
    for (mode, step) in [
        (DecodeMode::Miopen, "greedy_step"),
        (DecodeMode::Beam { width: 3, top: 3 }, "beam_step"),
    ] {
        let plain = gpu.predict_batch(&problems, mode);
        // Off, nothing is recorded.
        let idle = ctx.finish_profile().expect("an empty profile");
        assert!(idle.kernels.is_empty() && idle.phases.is_empty() && idle.encoders == 0);
        if !ctx.has_timestamps() {
            let e = ctx.start_profile().expect_err("no timestamps, no profile");
            assert!(e.to_string().contains("timestamp"), "{e}");
            assert!(
                !in_ci(),
                "TUNEINFER_CI=1: lavapipe has timestamp queries, this adapter not: {e}"
            );
            println!("skipped: {e}");
            return;
        }
        ctx.start_profile().expect("profiling starts");
        let profiled = gpu.predict_batch(&problems, mode);
        let report = ctx.finish_profile().expect("profile read back");
        assert_eq!(plain.len(), profiled.len());
        for (a, b) in plain.iter().zip(&profiled) {
            let (a, b) = (a.as_ref().expect("plain answer"), b.as_ref().expect("profiled answer"));
            let configs = |p: &[tuneinfer::Prediction]| p.iter().map(|x| x.config.clone()).collect::<Vec<_>>();
            assert_eq!(configs(a), configs(b), "{mode:?}");
        }
        let kernels = report.by_kernel();
        for name in ["lstm_step", step] {
            let k = kernels.iter().find(|k| k.kernel == name);
            assert!(k.is_some_and(|k| k.dispatches > 0), "{name} not timed: {kernels:?}");
        }
        assert!(report.kernels.iter().all(|k| k.gpu_ns.is_finite() && k.gpu_ns >= 0.0));
        assert!(report.gpu_ns() > 0.0, "{report:?}");
        assert!(report.encoders >= 1);
        for phase in [
            "prepare (features, constraints)",
            "decode (host thread, all of it)",
            "wait for the GPU",
        ] {
            assert!(
                report.phases.iter().any(|p| p.0 == phase && p.2 >= 1),
                "{phase}: {report:?}"
            );
        }
        // Profiling stopped with the report.
        let again = ctx.finish_profile().expect("an empty profile");
        assert!(again.kernels.is_empty() && again.encoders == 0);
    }
}

#[test]
fn round_trips_are_measured() {
    let Some(ctx) = gpu() else { return };
    let trips = round_trips(&ctx, 3).expect("round trips");
    assert_eq!(trips.samples, 3);
    assert_eq!(trips.rows.len(), 8);
    for row in &trips.rows {
        assert!(row.total.is_finite() && row.total >= 0.0, "{row:?}");
        assert!(row.submit.is_none_or(|s| s.is_finite() && s <= row.total), "{row:?}");
    }
}

#[test]
fn bench_profile_prints_the_table_or_says_why_not() {
    let models = common::models_dir().display().to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args([
            "bench",
            "--problems",
            "12",
            "--devices",
            "cpu,gpu",
            "--profile",
            "--arch",
            "gfx908",
            "--models",
            &models,
        ])
        .env_remove("TUNEINFER_MODELS")
        .output()
        .expect("run tuneinfer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let header = stdout.lines().nth(1).unwrap_or("");
    assert!(header.contains("first s") && header.contains("repeat s"), "{stdout}");
    assert!(
        stdout.contains("--profile: per-kernel times are for the GPU only"),
        "{stdout}"
    );
    if gpu().is_none() {
        return;
    }
    assert!(
        stdout.contains("answers equal to the first device's: 12 of 12"),
        "{stdout}"
    );
    if stdout.contains("does not support timestamp queries") {
        assert!(!in_ci(), "TUNEINFER_CI=1: lavapipe has timestamp queries: {stdout}");
        println!("no timestamps on this adapter: {stdout}");
    } else {
        for needle in [
            "GPU time per kernel",
            "answers equal to the repeat's: 12 of 12",
            "lstm_step{",
            "greedy_step",
            "sum of dispatches",
            "wait for the GPU",
            "profile of predicting 1 problem",
        ] {
            assert!(stdout.contains(needle), "{needle:?} missing: {stdout}");
        }
    }
    for needle in [
        "round trips (median of 50)",
        "empty command buffer",
        "predict 1 problem (the whole path)",
    ] {
        assert!(stdout.contains(needle), "{needle:?} missing: {stdout}");
    }
}

#[test]
fn without_timestamps_profiling_says_so() {
    let Some(ctx) = gpu() else { return };
    ctx.simulate_no_timestamps();
    assert!(!ctx.has_timestamps());
    let e = ctx.start_profile().expect_err("no timestamps, no profile");
    assert!(e.to_string().contains("does not support timestamp queries"), "{e}");
    assert!(ctx.finish_profile().expect("an empty profile").kernels.is_empty());
}
