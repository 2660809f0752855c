//! The non-xdlops HIP implicit-GEMM solvers with a model: a tiny model trained here (no model of
//! them is shipped yet) answers only configs the rules accept on a few hundred tuned problems
//! (V4R1 type: ConvHipImplicitGemmV4R1Fwd on gfx906; V4R4 type: ConvHipImplicitGemmV4R4WrW on
//! gfx908), and the GPU, which checks the solvers' table of valid configs with
//! `shaders/catalogue_rules.wgsl`, gives exactly the CPU's configs (MIOpen's greedy walk and
//! beam 4). Without a GPU adapter the GPU comparison is skipped, loudly (CI: lavapipe).
#![cfg(feature = "gpu")]

mod common;

use std::path::PathBuf;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::gpu::GpuPredictor;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::{self, Target};
use tuneinfer::train::{self, TrainOptions};
use tuneinfer::{DecodeMode, Predictor, Source};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tuneinfer-test-hip-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Trains a tiny model of `solver` on `db` (600 rows, 2 epochs) into a fresh directory.
fn tiny_model(db: &str, arch: &str, solver: &str) -> PathBuf {
    let dir = temp_dir(solver);
    let mut o = TrainOptions::new(&common::perfdb_dir().join(db), arch, solver, &dir);
    o.max_rows = Some(600);
    o.hidden = 16;
    o.embed = 8;
    o.batch = 16;
    o.epochs = 2;
    o.threads = 1;
    o.verbose = false;
    train::train(&o, None).unwrap_or_else(|e| panic!("{solver}: {e}"));
    dir
}

/// Every `step`-th distinct applicable problem of the solver's tuned rows in `db`.
fn problems(db: &str, arch: &str, solver: &str, step: usize) -> Vec<ConvProblem> {
    let s = solvers::by_name(solver).unwrap();
    let t = s.tunable().unwrap();
    let rows = read_rows(&common::perfdb_dir().join(db), solver).unwrap();
    let ds = build(&rows, t, &Target::new(arch));
    ds.samples.iter().step_by(step).map(|s| s.problem.clone()).collect()
}

#[test]
fn trained_models_answer_valid_configs_and_the_gpu_gives_the_cpu_configs() {
    for (db, arch, solver, step) in [
        ("gfx906_60.db", "gfx906", "ConvHipImplicitGemmV4R1Fwd", 9),
        ("gfx90878.db.txt.bz2", "gfx908", "ConvHipImplicitGemmV4R4WrW", 25),
    ] {
        let dir = tiny_model(db, arch, solver);
        let problems = problems(db, arch, solver, step);
        assert!(problems.len() >= 300, "{solver}: {} problems", problems.len());
        let cpu = Predictor::load(arch, solver, std::slice::from_ref(&dir)).unwrap_or_else(|e| panic!("{e}"));
        let tunable = solvers::tunable(cpu.solver).unwrap();
        let modes = [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }];
        let mut wants = Vec::new();
        for mode in modes {
            let want = cpu.predict_batch(&problems, mode);
            let mut from_model = 0;
            for (p, a) in problems.iter().zip(&want) {
                let a = a.as_ref().unwrap_or_else(|e| panic!("{solver} {p}: {e}"));
                for x in a {
                    let c = tunable.parse_params(&x.config).unwrap();
                    // The model's answers and the static default alike are valid configs.
                    assert!(
                        tunable.rules(&cpu.target, p).is_valid(&c),
                        "{solver} {mode:?} {p}: {} ({:?}) is not valid",
                        x.config,
                        x.source
                    );
                    from_model += usize::from(x.source != Source::Default);
                }
            }
            println!(
                "{solver} {mode:?}: {from_model} model answers on {} problems",
                problems.len()
            );
            assert!(from_model > 0, "{solver} {mode:?}: no model answer");
            wants.push(want);
        }
        let Some(ctx) = common::gpu() else {
            println!("skipped: no GPU adapter: {solver}'s GPU == CPU comparison did not run");
            continue;
        };
        let gpu = GpuPredictor::load(arch, solver, std::slice::from_ref(&dir), ctx).unwrap_or_else(|e| panic!("{e}"));
        for (mode, want) in modes.into_iter().zip(&wants) {
            let got = gpu.predict_batch(&problems, mode);
            let (same, worst) = common::assert_same_predictions(&format!("{solver} {mode:?}"), &problems, want, &got);
            println!("{solver} {mode:?}: {same} problems identical, worst score difference {worst:e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
