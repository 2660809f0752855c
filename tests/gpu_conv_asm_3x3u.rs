//! ConvAsm3x3U with a model: a tiny model trained here (independent of any shipped one) answers
//! only configs the rules accept on about 300 tuned gfx906 problems, and the GPU, which checks
//! the solver's table of valid configs (shared between problems of one table key) with
//! `shaders/catalogue_rules.wgsl`, gives exactly the CPU's configs (MIOpen's greedy walk and
//! beam 4). Without a GPU adapter the GPU comparison is skipped, loudly (CI: lavapipe).
#![cfg(feature = "gpu")]

mod common;

use tuneinfer::gpu::GpuPredictor;
use tuneinfer::solvers;
use tuneinfer::{DecodeMode, Predictor, Source};

#[test]
fn trained_model_answers_valid_configs_and_the_gpu_gives_the_cpu_configs() {
    let (db, arch, solver) = ("gfx906_60.db", "gfx906", "ConvAsm3x3U");
    let dir = common::tiny_model("asm3x3u", db, arch, solver);
    let problems = common::tuned_problems(db, arch, solver, 2);
    assert!(problems.len() >= 290, "{solver}: {} problems", problems.len());
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
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let gpu = GpuPredictor::load(arch, solver, std::slice::from_ref(&dir), ctx).unwrap_or_else(|e| panic!("{e}"));
    for (mode, want) in modes.into_iter().zip(&wants) {
        let got = gpu.predict_batch(&problems, mode);
        let (same, worst) = common::assert_same_predictions(&format!("{solver} {mode:?}"), &problems, want, &got);
        println!("{solver} {mode:?}: {same} problems identical, worst score difference {worst:e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
