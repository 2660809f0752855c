//! CPU vs GPU benchmarks (criterion): every kernel, a single prediction (also on the GPU's
//! single-dispatch path), and batches at beam widths 1 (MIOpen's greedy walk) and 4. Names start with `cpu_` or `gpu_`; GPU times include
//! the device sync (each call waits for its results).
//!
//! Batch sizes: 100 by default (lavapipe, the software Vulkan of CI, is slow); set
//! `TUNEINFER_BENCH_SIZES=1000,10000,100000` on a real GPU. Models come from
//! `$TUNEINFER_MODELS` or `../shared/miopen/models`.

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use tuneinfer::cpu;
use tuneinfer::gpu::kernels::{host, TilePath};
use tuneinfer::gpu::{FusedPathPredictor, GpuContext, GpuPredictor, FUSED_DEFAULT_BLOCK};
use tuneinfer::testutil::Lcg;
use tuneinfer::workload::asm1x1u_problems;
use tuneinfer::{DecodeMode, Predictor};

fn model_dirs() -> Vec<PathBuf> {
    match std::env::var_os("TUNEINFER_MODELS") {
        Some(d) => vec![PathBuf::from(d)],
        None => vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen/models")],
    }
}

fn sizes() -> Vec<usize> {
    std::env::var("TUNEINFER_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100])
}

fn gpu() -> Option<Arc<GpuContext>> {
    match GpuContext::shared() {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("skipped GPU benchmarks: no GPU adapter ({e})");
            None
        }
    }
}

fn kernels(c: &mut Criterion) {
    let ctx = gpu();
    let mut rng = Lcg::new(1);
    let mut g = c.benchmark_group("kernels");
    g.sample_size(10);
    // gfx908 decoder shapes at 1,000 rows: LSTM 128 units (input 128), output dense 128 -> 38.
    let (rows, units, vocab) = (1000, 128, 38);
    let x = rng.vec(rows * units, 1.0);
    let w = rng.vec(units * 4 * units, 0.1);
    let u = rng.vec(units * 4 * units, 0.1);
    let b = rng.vec(4 * units, 0.1);
    let h = rng.vec(rows * units, 1.0);
    let cst = rng.vec(rows * units, 1.0);
    let out_w = rng.vec(units * vocab, 0.1);
    let scores = rng.vec(rows * vocab, 5.0);
    g.bench_function("cpu_lstm_step_1000x128", |bn| {
        let mut z = vec![0.0; rows * 4 * units];
        let (mut hh, mut cc) = (h.clone(), cst.clone());
        bn.iter(|| {
            cpu::dense(&x, &w, Some(&b), &mut z, rows, units, 4 * units);
            cpu::matmul_acc(&hh.clone(), &u, &mut z, rows, units, 4 * units);
            cpu::lstm_cell(&z, &mut cc, &mut hh, rows, units);
        })
    });
    g.bench_function("cpu_dense_1000x128x38", |bn| {
        let mut o = vec![0.0; rows * vocab];
        bn.iter(|| cpu::dense(&h, &out_w, None, &mut o, rows, units, vocab))
    });
    g.bench_function("cpu_log_softmax_1000x38", |bn| {
        let mut o = vec![0.0; rows * vocab];
        bn.iter(|| cpu::log_softmax_rows(&scores, &mut o, rows, vocab))
    });
    if let Some(ctx) = ctx {
        let step = host::LstmStepInputs {
            x: &x,
            kernel: &w,
            recurrent: &u,
            bias: &b,
            h: &h,
            c: &cst,
            rows,
            in_dim: units,
            units,
        };
        g.bench_function("gpu_lstm_step_1000x128", |bn| {
            bn.iter(|| host::lstm_step(&ctx, &step).map(|o| o.values.len()))
        });
        g.bench_function("gpu_dense_1000x128x38", |bn| {
            let d = host::DenseInputs {
                a: &h,
                b: &out_w,
                bias: None,
                rows,
                k: units,
                n: vocab,
            };
            bn.iter(|| host::dense(&ctx, &d, None).map(|o| o.values.len()))
        });
        g.bench_function("gpu_log_softmax_1000x38", |bn| {
            bn.iter(|| host::log_softmax(&ctx, &scores, rows, vocab).map(|o| o.values.len()))
        });
        // lstm_step alone (no upload or read-back), 10 steps per iteration, on both paths: where
        // the tiled path overtakes the SMALL one is `GpuContext::set_tiled_min_rows`'s value.
        // The largest sizes only where batches are large (a real GPU; lavapipe is slow).
        let big = sizes().iter().any(|&s| s >= 10_000);
        let lstm_rows: &[usize] = if big {
            &[1, 64, 1024, 4096, 16384, 65536]
        } else {
            &[1, 64, 1024]
        };
        for &n in lstm_rows {
            let x = rng.vec(n * units, 1.0);
            let state = rng.vec(2 * n * units, 1.0);
            let (h, c) = state.split_at(n * units);
            let step = host::LstmStepInputs {
                x: &x,
                h,
                c,
                rows: n,
                ..step
            };
            for (name, path) in [("small", TilePath::Small), ("tiled", TilePath::Tiled)] {
                let steps = match host::LstmSteps::new(&ctx, &step, path) {
                    Ok(steps) => steps,
                    Err(e) => {
                        eprintln!("skipped gpu_lstm_step_x10_{name}_{n}x128: {e}");
                        continue;
                    }
                };
                g.bench_function(format!("gpu_lstm_step_x10_{name}_{n}x128"), |bn| {
                    bn.iter(|| steps.run(&ctx, 10))
                });
            }
        }
    }
    g.finish();
}

fn predictions(c: &mut Criterion) {
    let dirs = model_dirs();
    let Ok(cpu_p) = Predictor::load("gfx908", "ConvAsm1x1U", &dirs) else {
        eprintln!("skipped prediction benchmarks: gfx908 ConvAsm1x1U model not found in {dirs:?}");
        return;
    };
    let gpu_p = gpu().and_then(|ctx| GpuPredictor::load("gfx908", "ConvAsm1x1U", &dirs, ctx).ok());
    let mut g = c.benchmark_group("predict");
    g.sample_size(10);
    let one = asm1x1u_problems(1, 7);
    g.bench_function("cpu_single", |bn| {
        bn.iter(|| cpu_p.predict_batch(&one, DecodeMode::Miopen).len())
    });
    if let Some(gp) = &gpu_p {
        g.bench_function("gpu_single", |bn| {
            bn.iter(|| gp.predict_batch(&one, DecodeMode::Miopen).len())
        });
    }
    // gpu_single takes the single-dispatch path (one workgroup: encoder, decoder steps, greedy
    // walk); this is the same prediction in the multi-dispatch resident path.
    let multi = gpu().and_then(|ctx| {
        GpuPredictor::load("gfx908", "ConvAsm1x1U", &dirs, ctx)
            .ok()
            .map(GpuPredictor::without_single_dispatch)
    });
    if let Some(mp) = &multi {
        g.bench_function("gpu_single_multi_dispatch", |bn| {
            bn.iter(|| mp.predict_batch(&one, DecodeMode::Miopen).len())
        });
    }
    // The fused-step greedy path (one dispatch a decoder step, blocks of rows a workgroup).
    let fused = gpu().and_then(|ctx| FusedPathPredictor::load("gfx908", "ConvAsm1x1U", &dirs, ctx).ok());
    let block = fused
        .as_ref()
        .and_then(|f| f.default_block().ok())
        .unwrap_or(FUSED_DEFAULT_BLOCK);
    for n in sizes() {
        let problems = asm1x1u_problems(n, 11);
        if let Some(fp) = &fused {
            g.bench_with_input(
                BenchmarkId::new("gpu_batch_fused", format!("{n}_w1")),
                &problems,
                |bn, p| bn.iter(|| fp.predict_batch(p, DecodeMode::Miopen, block).map_or(0, |r| r.len())),
            );
        }
        for width in [1usize, 4] {
            let mode = if width == 1 {
                DecodeMode::Miopen
            } else {
                DecodeMode::Beam { width, top: width }
            };
            let id = format!("{n}_w{width}");
            g.bench_with_input(BenchmarkId::new("cpu_batch", &id), &problems, |bn, p| {
                bn.iter(|| cpu_p.predict_batch(p, mode).len())
            });
            if let Some(gp) = &gpu_p {
                g.bench_with_input(BenchmarkId::new("gpu_batch", &id), &problems, |bn, p| {
                    bn.iter(|| gp.predict_batch(p, mode).len())
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, kernels, predictions);
criterion_main!(benches);
