//! The CPU reference fingerprint (slow: run by `tools/cpu_exact.sh`, not by `cargo test`): writes
//! every answer of the CPU path — config, source and the score's bits — for MIOpen's gfx908
//! ConvAsm1x1U model over every applicable problem of the shared perf databases (MIOpen's walk,
//! beam 4, beam 16) and for each shipped model of ours over an evenly spaced sample of up to
//! `$TUNEINFER_DUMP_SAMPLE` (default 1,500) of its problems (MIOpen's walk, beam 4, the best of
//! 6 and the best of 16), one line per problem, into `$TUNEINFER_DUMP`. Two revisions that
//! compute exactly the same thing write identical files.
#[allow(unused_imports)]
use crate::common;

use std::fmt::Write as _;
use std::path::PathBuf;

use tuneinfer::solvers::Target;
use tuneinfer::{DecodeMode, Predictor};

#[test]
#[ignore = "writes the CPU fingerprint; run tools/cpu_exact.sh"]
fn dump_cpu_answers() {
    let Some(out) = std::env::var_os("TUNEINFER_DUMP") else {
        panic!("set TUNEINFER_DUMP to the output file");
    };
    let sample: usize = std::env::var("TUNEINFER_DUMP_SAMPLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500);
    let mut text = String::new();
    for (solver, arch, dirs, ours) in common::corpus_models() {
        let mut problems = common::corpus(&solver, &Target::new(&arch));
        if ours && problems.len() > sample {
            let step = problems.len() as f64 / sample as f64;
            problems = (0..sample)
                .map(|i| problems[(i as f64 * step) as usize].clone())
                .collect();
        }
        let cpu = Predictor::load(&arch, &solver, &dirs).unwrap_or_else(|e| panic!("{e}"));
        // Explicit modes (not `default_mode`, which a revision may change): MIOpen's walk, beam
        // 4; for ours the best of 6 and of 16 (the default decoding's widths, now and before).
        let mut modes = vec![DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }];
        if ours {
            modes.push(DecodeMode::Beam { width: 6, top: 1 });
            modes.push(DecodeMode::Beam { width: 16, top: 1 });
        } else {
            modes.push(DecodeMode::Beam { width: 16, top: 16 });
        }
        for mode in modes {
            let t = std::time::Instant::now();
            let got = cpu.predict_batch(&problems, mode);
            for (p, r) in problems.iter().zip(&got) {
                let _ = write!(text, "{solver} {arch} {mode:?} {}:", p.to_perfdb_key());
                match r {
                    Ok(v) => {
                        for x in v {
                            let bits = x.score.map(f32::to_bits);
                            let _ = write!(text, " {} {:?} {bits:?};", x.config, x.source);
                        }
                    }
                    Err(e) => {
                        let _ = write!(text, " error {e}");
                    }
                }
                text.push('\n');
            }
            println!(
                "{solver} {arch} {mode:?}: {} problems, {:.1} s",
                problems.len(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    std::fs::write(&out, text).unwrap_or_else(|e| panic!("{}: {e}", PathBuf::from(&out).display()));
}
