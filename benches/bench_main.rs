//! CPU benchmarks of the engine (criterion). Names are prefixed `cpu_`.
//!
//! Run: `cargo bench --bench bench_main`. Reads MIOpen's gfx908 ConvAsm1x1U model and problems
//! from `../shared/miopen` (or `$TUNEINFER_MIOPEN_DATA`), and the project's gfx906 model from
//! `weights/`.

use std::path::PathBuf;
use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tuneinfer::data::perfdb::solver_rows;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::check_applicable;
use tuneinfer::testutil::Lcg;
use tuneinfer::{cpu, DecodeMode, Predictor};

fn miopen_dir() -> PathBuf {
    std::env::var_os("TUNEINFER_MIOPEN_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen"))
}

fn predictor(threads: usize) -> Predictor {
    Predictor::load("gfx908", "ConvAsm1x1U", &[miopen_dir().join("models")])
        .expect("gfx908 ConvAsm1x1U model in ../shared/miopen/models")
        .with_threads(threads)
}

/// The first `n` applicable ConvAsm1x1U problems of gfx906's perf database.
fn problems(n: usize) -> Vec<ConvProblem> {
    let rows = solver_rows(&miopen_dir().join("perfdb/gfx906_60.db"), "ConvAsm1x1U").expect("perf db");
    let all: Vec<ConvProblem> = rows
        .rows
        .into_iter()
        .map(|r| r.problem)
        .filter(|p| check_applicable(p).is_ok())
        .collect();
    all.iter().cycle().take(n).cloned().collect()
}

fn bench_matmul(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_matmul");
    let mut rng = Lcg::new(1);
    for &(m, k, n) in &[(1, 128, 512), (1, 256, 512), (64, 256, 512), (512, 128, 512)] {
        let a = rng.vec(m * k, 1.0);
        let b = rng.vec(k * n, 1.0);
        let mut out = vec![0.0; m * n];
        group.throughput(Throughput::Elements((2 * m * k * n) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(format!("{m}x{k}x{n}")), &(), |bench, _| {
            bench.iter(|| cpu::matmul_acc(black_box(&a), black_box(&b), &mut out, m, k, n))
        });
    }
    group.finish();
}

fn bench_single(c: &mut Criterion) {
    let pred = predictor(1);
    let p = ConvProblem::parse("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F").expect("key");
    let mut group = c.benchmark_group("cpu_single");
    group.bench_function("gfx908_miopen_1core", |b| {
        b.iter(|| pred.predict_one(black_box(&p), DecodeMode::Miopen))
    });
    group.bench_function("gfx908_beam4_1core", |b| {
        b.iter(|| pred.predict_one(black_box(&p), DecodeMode::Beam { width: 4, top: 4 }))
    });
    // tuneinfer's own gfx906 model (the project's weights/): its default decoding (the best of
    // a beam of 6) beside a beam of 16 and MIOpen's greedy walk over the same model.
    let ours = Predictor::load(
        "gfx906",
        "ConvAsm1x1U",
        &[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights")],
    )
    .expect("gfx906 model in weights/")
    .with_threads(1);
    let auto = ours.default_mode();
    group.bench_function("gfx906_ours_auto_1core", |b| {
        b.iter(|| ours.predict_one(black_box(&p), auto))
    });
    // The default's width before it was measured down to 6 (README, Benchmarks).
    group.bench_function("gfx906_ours_beam16_1core", |b| {
        b.iter(|| ours.predict_one(black_box(&p), DecodeMode::Beam { width: 16, top: 1 }))
    });
    group.bench_function("gfx906_ours_miopen_1core", |b| {
        b.iter(|| ours.predict_one(black_box(&p), DecodeMode::Miopen))
    });
    group.finish();
}

/// Batch sizes of `cpu_batch`: `$TUNEINFER_BENCH_SIZES` (comma-separated), by default 1, 100,
/// 10,000 and 100,000 problems.
fn batch_sizes() -> Vec<usize> {
    std::env::var("TUNEINFER_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 100, 10_000, 100_000])
}

/// MIOpen's gfx908 model, greedy, on batches of every size with one and two threads: the
/// per-prediction cost (criterion's throughput) should not grow with the batch.
fn bench_batch(c: &mut Criterion) {
    let sizes = batch_sizes();
    let all = problems(sizes.iter().copied().max().unwrap_or(1));
    let mut group = c.benchmark_group("cpu_batch");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    for &n in &sizes {
        let batch = &all[..n];
        group.throughput(Throughput::Elements(n as u64));
        // About 10 s of measurement for the big batches, 3 s for the small ones.
        group.measurement_time(Duration::from_secs(if n >= 10_000 { 10 } else { 3 }));
        for threads in [1, 2] {
            let pred = predictor(threads);
            group.bench_with_input(
                BenchmarkId::new(format!("gfx908_miopen_{threads}threads"), n),
                batch,
                |b, p| b.iter(|| pred.predict_batch(black_box(p), DecodeMode::Miopen)),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench_matmul, bench_single, bench_batch);
criterion_main!(benches);
