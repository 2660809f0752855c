//! Is the per-prediction cost flat in the batch size, on the same problems? Every ConvAsm1x1U
//! problem of gfx906_60 that MIOpen's gfx908 model applies to, predicted (one thread, greedy)
//! as one batch, in batches of 100 and one at a time, two rounds.
//!
//! `cargo run --release --example batch_flat` (data from ../shared/miopen or
//! `$TUNEINFER_MIOPEN_DATA`).

use std::path::PathBuf;
use std::time::Instant;

use tuneinfer::data::perfdb::solver_rows;
use tuneinfer::solvers::conv_asm_1x1u::check_applicable;
use tuneinfer::{ConvProblem, DecodeMode, Predictor};

fn main() -> tuneinfer::Result<()> {
    let data = std::env::var_os("TUNEINFER_MIOPEN_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen"));
    let rows = solver_rows(&data.join("perfdb/gfx906_60.db"), "ConvAsm1x1U")?;
    let problems: Vec<ConvProblem> = rows
        .rows
        .into_iter()
        .map(|r| r.problem)
        .filter(|p| check_applicable(p).is_ok())
        .collect();
    let predictor = Predictor::load("gfx908", "ConvAsm1x1U", &[data.join("models")])?.with_threads(1);
    for round in 1..=2 {
        for chunk in [problems.len(), 100, 1] {
            let t = Instant::now();
            for c in problems.chunks(chunk) {
                std::hint::black_box(predictor.predict_batch(c, DecodeMode::Miopen));
            }
            let each = t.elapsed().as_secs_f64() * 1e6 / problems.len() as f64;
            println!(
                "round {round}: {} problems in batches of {chunk}: {each:.1} µs a prediction",
                problems.len()
            );
        }
    }
    Ok(())
}
