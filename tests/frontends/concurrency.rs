//! The library's `Predictor` and `Engine` shared by 8 threads give the same answers as one
//! thread does (issue 16, item 3), on the CPU and, where there is an adapter, on the GPU.

#[allow(unused_imports)]
use crate::common;

use std::sync::Arc;

use tuneinfer::engine::{DeviceChoice, Engine, Precision};
use tuneinfer::{DecodeMode, Predictor};

const THREADS: usize = 8;

/// Each thread predicts the problems in its own order (rotated and reversed), one call of a few
/// problems at a time; every answer must equal the lone thread's.
fn shared_by_threads<F>(problems: &[tuneinfer::problem::ConvProblem], predict: F) -> usize
where
    F: Fn(&[tuneinfer::problem::ConvProblem]) -> Vec<String> + Sync,
{
    let alone = predict(problems);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let predict = &predict;
                let alone = &alone;
                scope.spawn(move || {
                    let n = problems.len();
                    let order: Vec<usize> = (0..n).map(|i| (i * 7 + t * 13) % n).rev().collect();
                    let mut checked = 0;
                    for group in order.chunks(1 + t) {
                        let batch: Vec<_> = group.iter().map(|&i| problems[i].clone()).collect();
                        for (&i, got) in group.iter().zip(predict(&batch)) {
                            assert_eq!(got, alone[i], "thread {t}, problem {i}");
                            checked += 1;
                        }
                    }
                    checked
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a thread panicked")).sum()
    })
}

#[test]
fn one_predictor_shared_by_8_threads_answers_as_one_thread() {
    // 97 problems: not a multiple of any thread's group size.
    let problems = tuneinfer::workload::asm1x1u_problems(97, 11);
    let ktn = Predictor::load("gfx908", "ConvAsm1x1U", &[common::models_dir()]).expect("gfx908 model");
    let weights = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights");
    let ours = Predictor::load("gfx906", "ConvAsm1x1U", &[weights]).expect("our gfx906 model (weights/)");
    for (name, predictor, mode) in [
        ("gfx908 greedy", &ktn, DecodeMode::Miopen),
        ("gfx908 beam 4", &ktn, DecodeMode::Beam { width: 4, top: 4 }),
        ("gfx906 default", &ours, ours.default_mode()),
    ] {
        let checked = shared_by_threads(&problems, |batch| {
            common::config_lines(&predictor.predict_batch(batch, mode))
        });
        assert_eq!(checked, THREADS * problems.len(), "{name}");
    }
}

#[test]
fn one_gpu_engine_shared_by_8_threads_answers_as_one_thread() {
    if common::fresh_gpu().is_none() {
        return;
    }
    let problems = tuneinfer::workload::asm1x1u_problems(41, 12);
    let engine = Arc::new(
        Engine::load(
            "gfx908",
            "ConvAsm1x1U",
            &[common::models_dir()],
            DeviceChoice::Gpu,
            Precision::F32,
        )
        .expect("gpu engine"),
    );
    let cpu = Predictor::load("gfx908", "ConvAsm1x1U", &[common::models_dir()]).expect("cpu model");
    let mode = DecodeMode::Beam { width: 4, top: 4 };
    assert_eq!(
        common::config_lines(&engine.predict_batch(&problems, mode)),
        common::config_lines(&cpu.predict_batch(&problems, mode)),
        "GPU and CPU differ before any sharing"
    );
    let checked = shared_by_threads(&problems, |batch| {
        common::config_lines(&engine.predict_batch(batch, mode))
    });
    assert_eq!(checked, THREADS * problems.len());
}
