//! MIOpen's own ConvAsm1x1U expectations for the gfx908 KTN model (shared README table, from
//! MIOpen's test suite), reproduced in `miopen` mode, including the failing case and its fallback.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::static_default;
use tuneinfer::{DecodeMode, Predictor, Source};

fn predictor() -> Predictor {
    Predictor::load("gfx908", "ConvAsm1x1U", &[common::models_dir()]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn fp32_backward_data_matches_miopen() {
    // N=512 C=192 K=288 56x56, 1x1, pad 0, stride 1, backward data: in = dy (288 channels).
    let p = ConvProblem::parse("288-56-56-1x1-192-56-56-512-0x0-1x1-1x1-0-NCHW-FP32-B").unwrap();
    let got = predictor().predict_one(&p, DecodeMode::Miopen).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].config, "1,16,1,64,2,2,1,4");
    assert_eq!(got[0].tokens, vec![3, 5, 11, 18, 25, 27, 31, 34]);
    assert_eq!(got[0].source, Source::Model);
}

#[test]
fn fp16_forward_matches_miopen_from_key_and_driver_line() {
    let from_key = ConvProblem::parse("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F").unwrap();
    let from_driver =
        ConvProblem::parse("convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -F 1")
            .unwrap();
    assert_eq!(from_key, from_driver);
    let got = predictor().predict_one(&from_key, DecodeMode::Miopen).unwrap();
    assert_eq!(got[0].config, "2,8,4,16,1,4,1,4");
    assert_eq!(got[0].tokens, vec![2, 6, 10, 19, 23, 28, 31, 34]);
    assert_eq!(got[0].source, Source::Model);
}

#[test]
fn tiny_fp32_forward_fails_and_falls_back_to_the_static_default() {
    // MIOpen's test: N=1 C=4 K=4 2x2 -> the model reaches "-1" and MIOpen uses its default.
    let p = ConvProblem::parse("conv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -F 1").unwrap();
    let got = predictor().predict_one(&p, DecodeMode::Miopen).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].source, Source::Default);
    assert_eq!(got[0].score, None);
    let default: Vec<String> = static_default(&p).iter().map(|v| v.to_string()).collect();
    assert_eq!(got[0].config, default.join(","));
}

#[test]
fn beam_width_one_equals_greedy_on_the_documented_cases() {
    let pred = predictor();
    for key in [
        "288-56-56-1x1-192-56-56-512-0x0-1x1-1x1-0-NCHW-FP32-B",
        "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
    ] {
        let p = ConvProblem::parse(key).unwrap();
        let greedy = pred.predict_one(&p, DecodeMode::Miopen).unwrap();
        let beam = pred.predict_one(&p, DecodeMode::Beam { width: 1, top: 1 }).unwrap();
        assert_eq!(greedy[0].config, beam[0].config, "{key}");
        assert_eq!(greedy[0].tokens, beam[0].tokens, "{key}");
    }
}

#[test]
fn beam_returns_ranked_distinct_valid_configs_and_finds_one_where_greedy_fails() {
    let pred = predictor();
    let p = ConvProblem::parse("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F").unwrap();
    let top = pred.predict_one(&p, DecodeMode::Beam { width: 8, top: 5 }).unwrap();
    assert_eq!(top.len(), 5);
    assert_eq!(top[0].config, "2,8,4,16,1,4,1,4", "the greedy answer is the best here");
    for pair in top.windows(2) {
        assert!(pair[0].score >= pair[1].score, "ranked by score");
        assert_ne!(pair[0].config, pair[1].config);
    }
    let rules = tuneinfer::solvers::conv_asm_1x1u::Rules::new(&p);
    for t in &top {
        let cfg = tuneinfer::solvers::conv_asm_1x1u::parse_config(&t.config).unwrap();
        assert!(rules.is_valid(&cfg), "{}", t.config);
        // Scores are sums of 8 log-probabilities: negative, finite.
        assert!(t.score.unwrap() < 0.0 && t.score.unwrap().is_finite());
    }
    // Where MIOpen's walk fails, the beam's look-ahead still finds a valid model answer.
    let tiny = ConvProblem::parse("conv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 1").unwrap();
    let beam = pred.predict_one(&tiny, DecodeMode::Beam { width: 4, top: 1 }).unwrap();
    assert_eq!(beam[0].source, Source::Model);
    let cfg = tuneinfer::solvers::conv_asm_1x1u::parse_config(&beam[0].config).unwrap();
    assert!(tuneinfer::solvers::conv_asm_1x1u::Rules::new(&tiny).is_valid(&cfg));
}
