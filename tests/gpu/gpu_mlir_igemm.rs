//! The MLIR implicit-GEMM solvers with a model: a tiny model trained here (independent of the
//! shipped ones) answers only configs the rules accept (never the heuristic request) on a few
//! hundred tuned problems, and the GPU, which checks the solvers' table of valid configs with
//! `shaders/catalogue_rules.wgsl`, gives exactly the CPU's configs (MIOpen's greedy walk and
//! beam 4). Without a GPU adapter the GPU comparison is skipped (CI: lavapipe).
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::gpu::GpuPredictor;
use tuneinfer::solvers;
use tuneinfer::{DecodeMode, Predictor, Source};

#[test]
fn trained_models_answer_valid_configs_and_the_gpu_gives_the_cpu_configs() {
    for (db, arch, solver, step) in [
        ("gfx906_60.db", "gfx906", "ConvMlirIgemmFwd", 70),
        ("gfx90a68.db.txt.bz2", "gfx90a", "ConvMlirIgemmBwdXdlops", 60),
    ] {
        let dir = common::tiny_model("mlir", db, arch, solver);
        let problems = common::tuned_problems(db, arch, solver, step);
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
                    if x.source == Source::Default {
                        assert!(tunable.is_default_request(&c), "{solver} {p}: {}", x.config);
                        continue;
                    }
                    from_model += 1;
                    assert!(!tunable.is_default_request(&c));
                    assert!(
                        tunable.rules(&cpu.target, p).is_valid(&c),
                        "{solver} {mode:?} {p}: {} is not valid",
                        x.config
                    );
                }
            }
            assert!(
                from_model >= problems.len(),
                "{solver} {mode:?}: {from_model} model answers"
            );
            wants.push(want);
        }
        let Some(ctx) = common::gpu() else { continue };
        let gpu = GpuPredictor::load(arch, solver, std::slice::from_ref(&dir), ctx).unwrap_or_else(|e| panic!("{e}"));
        for (mode, want) in modes.into_iter().zip(&wants) {
            let got = gpu.predict_batch(&problems, mode);
            let (same, worst) = common::assert_same_predictions(&format!("{solver} {mode:?}"), &problems, want, &got);
            println!("{solver} {mode:?}: {same} problems identical, worst score difference {worst:e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
