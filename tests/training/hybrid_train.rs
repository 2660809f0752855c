//! `tuneinfer train --encoder hybrid` end to end on the CPU (a small subset of a real perf
//! database): the option's errors, what the model files record, loading picking the encoder
//! from them, and a checkpoint refusing to resume with the other encoder.

#[allow(unused_imports)]
use crate::common;

use std::path::PathBuf;

use tuneinfer::seq2seq::attention::EncoderKind;
use tuneinfer::seq2seq::weights::{self, WeightsFiles};
use tuneinfer::train::{self, TrainOptions};
use tuneinfer::{ConvProblem, DecodeMode, Predictor};

fn code(words: &[&str]) -> i32 {
    tuneinfer::cli::run(&words.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tuneinfer-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn encoder_option_errors_are_usage_errors() {
    let db = common::perfdb_dir().join("gfx906_60.db").display().to_string();
    let base = ["train", "--perf-db", &db, "--arch", "gfx906", "--no-eval", "--quiet"];
    for bad in [
        &["--encoder", "conv"][..],
        &["--encoder", "hybrid", "--conv-channels", "0"],
        &["--encoder", "hybrid", "--conv-channels", "5000"],
        // Channels without the hybrid encoder would be silently ignored.
        &["--conv-channels", "8"],
        &["--encoder", "lstm", "--conv-channels", "8"],
    ] {
        let words: Vec<&str> = base.iter().chain(bad).copied().collect();
        assert_eq!(code(&words), 2, "{bad:?}");
    }
}

#[test]
fn hybrid_model_trains_saves_loads_and_predicts() {
    let dir = temp_dir("hybrid-cli");
    let db = common::perfdb_dir().join("gfx906_60.db").display().to_string();
    let out = dir.display().to_string();
    let ckpt = dir.join("c.safetensors").display().to_string();
    let train = |epochs: &str, extra: &[&str]| {
        let mut words = vec![
            "train",
            "--perf-db",
            &db,
            "--arch",
            "gfx906",
            "--max-rows",
            "500",
            "--hidden",
            "16",
            "--embed",
            "8",
            "--no-eval",
            "--quiet",
            "--out",
            &out,
            "--checkpoint",
            &ckpt,
        ];
        words.extend_from_slice(&["--epochs", epochs]);
        words.extend_from_slice(extra);
        code(&words)
    };
    assert_eq!(train("2", &["--encoder", "hybrid", "--conv-channels", "5"]), 0);
    let files = WeightsFiles::in_dir(&dir, "gfx906", "ConvAsm1x1U");
    let (members, info) = weights::load(&files, "gfx906", "ConvAsm1x1U").unwrap();
    assert_eq!(info.config.encoder, EncoderKind::Hybrid { channels: 5 });
    let conv = &members[0].tensors[tuneinfer::seq2seq::attention::idx::CONV_W];
    assert_eq!(conv.len(), 3 * 13 * 5);
    assert!(conv.iter().all(|v| v.is_finite()) && conv.iter().any(|&v| v != 0.0));
    let text = std::fs::read_to_string(&files.metadata).unwrap();
    assert!(text.contains("\"encoder\": \"hybrid\""), "{text}");
    // Loading needs no option: the model's JSON names its encoder.
    let p = Predictor::load("gfx906", "ConvAsm1x1U", std::slice::from_ref(&dir)).unwrap();
    assert!(
        p.model.describe().contains("hybrid encoder (5 convolution channels)"),
        "{}",
        p.model.describe()
    );
    let problem = ConvProblem::from_perfdb_key("512-28-28-1x1-128-28-28-16-0x0-1x1-1x1-0-NCHW-FP16-F").unwrap();
    let answers = p.predict_one(&problem, DecodeMode::Beam { width: 4, top: 4 }).unwrap();
    assert!(
        !answers.is_empty() && answers.iter().all(|a| a.config.split(',').count() == 8),
        "{answers:?}"
    );
    // The checkpoint knows its encoder: resuming with another one (or other channels) is refused
    // (a usage error naming it), and with the same one it continues.
    let mut o = TrainOptions::new(
        &common::perfdb_dir().join("gfx906_60.db"),
        "gfx906",
        "ConvAsm1x1U",
        &dir,
    );
    (o.max_rows, o.hidden, o.embed, o.epochs, o.verbose) = (Some(500), 16, 8, 3, false);
    o.checkpoint = dir.join("c2.safetensors");
    o.resume = Some(PathBuf::from(&ckpt));
    for other in [EncoderKind::Lstm, EncoderKind::Hybrid { channels: 6 }] {
        o.encoder = other;
        let e = train::train(&o, None).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(
            e.to_string()
                .contains("trained with --encoder hybrid --conv-channels 5"),
            "{e}"
        );
    }
    o.encoder = EncoderKind::Hybrid { channels: 5 };
    let r = train::train(&o, None).unwrap();
    assert_eq!(r.epochs, 3);
    let _ = std::fs::remove_dir_all(&dir);
}
