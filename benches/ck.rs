//! composable_kernel solvers: how much of a prediction the catalogue constraint costs.
//!
//! `cpu_ck_constraint_build`: support rules + candidate table for a batch of problems;
//! `cpu_ck_accepts_all_values`: every vocabulary value tried at every position of each
//! problem's answer (more than any search asks); `cpu_ck_predict_*`: whole predictions;
//! `gpu_ck_predict_*`: the same on the GPU (search resident, the table checked by
//! `catalogue_rules.wgsl`; skipped without an adapter).
//! Run: `cargo bench --bench ck`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use tuneinfer::predict::{DecodeMode, Predictor};
use tuneinfer::problem::ConvProblem;
use tuneinfer::search::Constraint;
use tuneinfer::solvers::ck::FWD;
use tuneinfer::testutil::Lcg;

const BATCH: usize = 256;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen")
}

fn problems() -> Vec<ConvProblem> {
    let mut rng = Lcg::new(7);
    let mut out = Vec::new();
    while out.len() < BATCH {
        let g = [1, 2, 4, 8, 16, 32][rng.below(6) as usize];
        let c = g * [1, 3, 4, 8, 16, 32, 64][rng.below(7) as usize];
        let k = g * [1, 4, 8, 16, 32, 64, 128][rng.below(7) as usize];
        let hw = 4 + rng.below(60);
        let fil = [1, 3, 5][rng.below(3) as usize];
        let line = format!(
            "convfp16 -n {} -c {c} -H {hw} -W {hw} -k {k} -y {fil} -x {fil} -p {} -q {} -g {g} --in_layout NHWC",
            1 << rng.below(8),
            fil / 2,
            fil / 2
        );
        if let Ok(p) = ConvProblem::parse(&line) {
            out.push(p);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let predictor = Predictor::load("gfx942", FWD.name, &[data().join("models")])
        .expect("gfx942 forward model")
        .with_catalogue_dir(Some(data().join("ck")))
        .with_threads(1);
    let problems = problems();
    let (target, model) = (&predictor.target, predictor.model.as_ref());
    let build = || -> Vec<_> {
        problems
            .iter()
            .map(|p| {
                FWD.build_constraint(target, p, model.vocab(), model.metadata())
                    .expect("constraint")
            })
            .collect()
    };
    let mut group = c.benchmark_group("ck");
    group
        .sample_size(10)
        .measurement_time(std::time::Duration::from_secs(3));
    group.bench_function("cpu_ck_constraint_build_256", |b| b.iter(build));
    let constraints = build();
    let answers: Vec<Vec<u32>> = predictor
        .predict_batch(&problems, DecodeMode::Miopen)
        .into_iter()
        .map(|r| {
            let values = r.expect("prediction").remove(0).values;
            values
                .iter()
                .map(|v| model.vocab().values.iter().position(|x| x == v).unwrap_or(0) as u32)
                .collect()
        })
        .collect();
    group.bench_function("cpu_ck_accepts_all_values_256", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for (con, seq) in constraints.iter().zip(&answers) {
                for pos in 0..seq.len() {
                    for v in 0..model.vocab().values.len() as u32 {
                        n += usize::from(con.accepts_miopen(&seq[..pos], v));
                    }
                }
            }
            n
        })
    });
    group.bench_function("cpu_ck_predict_miopen_256", |b| {
        b.iter(|| predictor.predict_batch(&problems, DecodeMode::Miopen))
    });
    group.bench_function("cpu_ck_predict_beam4_256", |b| {
        b.iter(|| predictor.predict_batch(&problems, DecodeMode::Beam { width: 4, top: 4 }))
    });
    #[cfg(feature = "gpu")]
    match tuneinfer::gpu::GpuContext::shared() {
        Ok(ctx) => {
            let gpu = tuneinfer::gpu::GpuPredictor::load("gfx942", FWD.name, &[data().join("models")], ctx)
                .expect("gfx942 forward model on the GPU")
                .map_host(|h| h.with_catalogue_dir(Some(data().join("ck"))));
            group.bench_function("gpu_ck_predict_miopen_256", |b| {
                b.iter(|| gpu.predict_batch(&problems, DecodeMode::Miopen))
            });
            group.bench_function("gpu_ck_predict_beam4_256", |b| {
                b.iter(|| gpu.predict_batch(&problems, DecodeMode::Beam { width: 4, top: 4 }))
            });
        }
        Err(e) => eprintln!("skipped GPU benchmarks: no GPU adapter ({e})"),
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
