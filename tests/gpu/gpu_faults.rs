//! GPU faults give clear errors, never a panic or a hang: a lost device, a buffer larger than
//! the device allows, a shader that does not compile, a batch with the GPU gone.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use std::sync::Arc;

use tuneinfer::gpu::kernels::host;
use tuneinfer::gpu::registry::validate_wgsl;
use tuneinfer::gpu::GpuPredictor;
use tuneinfer::solvers::conv_asm_1x1u::NAME;
use tuneinfer::{DecodeMode, Error};

#[test]
fn lost_device_is_a_clear_error() {
    let Some(ctx) = common::fresh_gpu() else { return };
    assert!(host::log_softmax(&ctx, &[1.0, 2.0, 3.0], 1, 3).is_ok());
    ctx.simulate_device_loss();
    let e = host::log_softmax(&ctx, &[1.0, 2.0, 3.0], 1, 3).expect_err("a lost device cannot compute");
    assert!(matches!(e, Error::Gpu(_)), "{e}");
    println!("{e}");
    assert_eq!(e.exit_code(), 9);
}

#[test]
fn predictions_on_a_lost_device_fail_per_problem() {
    let Some(ctx) = common::fresh_gpu() else { return };
    let ctx = Arc::new(ctx);
    let gpu = GpuPredictor::load("gfx908", NAME, &[common::models_dir()], ctx.clone()).expect("model");
    let problems = tuneinfer::workload::asm1x1u_problems(3, 5);
    ctx.simulate_device_loss();
    for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 2 }] {
        let results = gpu.predict_batch(&problems, mode);
        assert_eq!(results.len(), 3);
        for r in results {
            let e = r.expect_err("no answer from a lost device");
            assert!(matches!(e, Error::Gpu(_)), "{e}");
        }
    }
}

#[test]
fn too_large_a_buffer_is_a_clear_error() {
    let Some(ctx) = common::fresh_gpu() else { return };
    // More rows than any storage binding holds: refused before anything is allocated.
    let limit = ctx
        .adapter()
        .max_storage_buffer_binding_size
        .min(ctx.adapter().max_buffer_size);
    let rows = (limit / 4 / 64 + 1) as usize;
    let a = vec![0.5f32; 64];
    let d = host::DenseInputs {
        a: &a[..1],
        b: &a,
        bias: None,
        rows: 1,
        k: 1,
        n: 64,
    };
    let e = host::dense(&ctx, &d, None).map(|_| ());
    assert!(e.is_ok());
    let big = vec![0.5f32; rows.min(1 << 20)];
    let e = host::log_softmax(&ctx, &big, rows, 64).expect_err("too large");
    assert!(matches!(e, Error::Gpu(_)), "{e}");
    println!("{e}");
}

#[test]
fn a_shader_compile_error_names_the_shader() {
    let e = validate_wgsl(
        "lstm_step{UNITS=7}",
        "@compute @workgroup_size(1) fn main() { let x: f32 = 1u; }",
    )
    .expect_err("type error");
    assert!(e.to_string().starts_with("GPU error: shader lstm_step{UNITS=7}"), "{e}");
    assert_eq!(e.to_string().lines().count(), 1, "one line: {e}");
}

#[test]
fn auto_falls_back_to_the_cpu_when_the_gpu_fails() {
    use tuneinfer::engine::Engine;
    let Some(ctx) = common::fresh_gpu() else { return };
    let ctx = Arc::new(ctx);
    let gpu = GpuPredictor::load("gfx908", NAME, &[common::models_dir()], ctx.clone()).expect("model");
    let cpu = tuneinfer::Predictor::load("gfx908", NAME, &[common::models_dir()]).expect("cpu model");
    let engine = Engine::gpu(gpu, true);
    let problems = tuneinfer::workload::asm1x1u_problems(5, 6);
    ctx.simulate_device_loss();
    let got = engine.predict_batch(&problems, DecodeMode::Miopen);
    let notes = engine.take_notes();
    assert!(
        notes.len() == 1 && notes[0].contains("computing on the CPU"),
        "{notes:?}"
    );
    let want = cpu.predict_batch(&problems, DecodeMode::Miopen);
    for (g, w) in got.iter().zip(&want) {
        let (g, w) = (g.as_ref().expect("answered on the CPU"), w.as_ref().expect("cpu"));
        assert_eq!(g[0].config, w[0].config);
    }
}
