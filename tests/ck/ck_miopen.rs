//! MIOpen's own expectations for the composable_kernel grouped-convolution solvers
//! (`../shared/miopen/README.md`, "Features and expectations: CK grouped-convolution solvers"):
//! the seven answers in `miopen` mode, the raw models' unconstrained greedy tokens, and the
//! feature layouts.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::predict::{DecodeMode, Predictor, Source};
use tuneinfer::problem::ConvProblem;
use tuneinfer::seq2seq::{DecoderScratch, KtnModel, Seq2SeqModel};
use tuneinfer::solvers::{self, Target};

struct Case {
    solver: &'static str,
    arch: &'static str,
    driver: &'static str,
    expected: &'static str,
    source: Source,
    /// Greedy token ids, unconstrained top-1.
    tokens: &'static [u32],
}

const CASES: [Case; 7] = [
    Case {
        solver: "ConvHipImplicitGemmGroupFwdXdlops",
        arch: "gfx90a",
        driver: "conv -n 128 -c 64 -H 209 -W 209 -k 128 -y 3 -x 3 -p 0 -q 0 -u 2 -v 2 -g 1 --in_layout NHWC",
        expected: "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<256, 128, 128, 16, Default, 32, 32, 2, 2, 4, 4, 4, 1, 1, 1>",
        source: Source::Model,
        tokens: &[2, 5, 9, 13, 14, 16, 20, 24, 27],
    },
    Case {
        solver: "ConvHipImplicitGemmGroupFwdXdlops",
        arch: "gfx942",
        driver: "convfp16 -n 256 -c 2016 -H 7 -W 7 -k 192 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -g 16 --in_layout NHWC",
        expected: "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<64, 64, 64, 32, Filter1x1Stride1Pad0, 32, 32, 2, 2, 1, 1, 1, 1, 1, 1>",
        source: Source::Model,
        tokens: &[1, 5, 6, 14, 18, 25, 26, 28, 31, 35, 42, 45, 48, 50, 52],
    },
    Case {
        solver: "ConvHipImplicitGemmGroupBwdXdlops",
        arch: "gfx942",
        driver: "conv -n 96 -c 64 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 64 -F 2 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<64, 64, 64, 32, 8, 8, Default, 32, 32, 2, 2, 1, 1, 1, 1>",
        source: Source::Model,
        tokens: &[2, 4, 9, 12, 15, 20, 24, 30, 34, 40, 43, 49, 52, 54],
    },
    Case {
        solver: "ConvHipImplicitGemmGroupBwdXdlops",
        arch: "gfx90a",
        driver: "convfp16 -n 4 -c 256 -H 59 -W 59 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 32 -F 2 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<128, 128, 32, 32, 8, 8, Default, 32, 32, 2, 1, 8, 8, 1, 1>",
        source: Source::Model,
        tokens: &[2, 4, 11, 12, 15, 20, 24, 30, 34, 39, 43, 49, 53, 54],
    },
    Case {
        solver: "ConvHipImplicitGemmGroupWrwXdlops",
        arch: "gfx942",
        driver: "conv -n 512 -c 3 -H 219 -W 219 -k 64 -y 11 -x 11 -p 2 -q 2 -u 4 -v 4 -g 1 -F 4 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdWeight_Xdl_CShuffle<64, 64, 64, 4, Default, 4, 2, 2, 1, 4, 1, 4, 1, 1, 1>+1",
        source: Source::Default,
        tokens: &[1, 4, 7, 11, 16, 18, 21, 22, 25, 29, 32, 38, 41, 46, 51],
    },
    Case {
        solver: "ConvHipImplicitGemmGroupWrwXdlops",
        arch: "gfx942",
        driver: "convfp16 -n 1024 -c 480 -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -g 32 -F 4 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle<64, 16, 16, 32, Default, 8, 1, 1, 1, 4, 1, 4, 1, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v2, 1>+1",
        source: Source::Default,
        tokens: &[2, 3, 10, 15, 17, 18, 20, 23, 25, 30, 32, 38, 42, 46, 56, 58, 63, 70],
    },
    Case {
        solver: "ConvHipImplicitGemmGroupWrwXdlops",
        arch: "gfx90a",
        driver: "convfp16 -n 16 -c 128 -H 27 -W 27 -k 256 -y 3 -x 3 -p 0 -q 0 -u 1 -v 2 -g 1 -F 4 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdWeight_Xdl_CShuffle<64, 64, 32, 4, Default, 8, 2, 1, 8, 4, 8, 2, 1, 1, 8>+1",
        source: Source::Model,
        tokens: &[3, 5, 11, 13, 16, 20, 26, 31, 37, 41, 46, 50, 52, 56],
    },
];

fn predictor(case: &Case) -> Predictor {
    Predictor::load(case.arch, case.solver, &[common::models_dir()])
        .expect("model loads")
        .with_catalogue_dir(Some(common::ck_dir()))
}

#[test]
fn miopen_mode_reproduces_the_seven_expected_answers() {
    for case in &CASES {
        let problem = ConvProblem::parse(case.driver).expect("problem parses");
        let got = predictor(case)
            .predict_one(&problem, DecodeMode::Miopen)
            .expect("prediction");
        assert_eq!(got.len(), 1, "{} {}", case.solver, case.arch);
        assert_eq!(
            got[0].config, case.expected,
            "{} {} {}",
            case.solver, case.arch, case.driver
        );
        assert_eq!(got[0].source, case.source, "{} {}", case.solver, case.arch);
    }
}

#[test]
fn perfdb_keys_give_the_same_answers_as_driver_lines() {
    for case in &CASES {
        let problem = ConvProblem::parse(case.driver).expect("problem parses");
        let key = problem.to_perfdb_key();
        assert!(key.contains("NHWC"), "{key}");
        let again = ConvProblem::parse(&key).expect("key parses");
        let got = predictor(case)
            .predict_one(&again, DecodeMode::Miopen)
            .expect("prediction");
        assert_eq!(got[0].config, case.expected, "{key}");
    }
}

/// The raw models: greedy top-1 with no constraint at all (ties: larger token id).
#[test]
fn unconstrained_greedy_tokens_match_the_readme() {
    for case in &CASES {
        let problem = ConvProblem::parse(case.driver).expect("problem parses");
        let solver = solvers::by_name(case.solver).expect("solver");
        let model = KtnModel::find_and_load(
            &[common::models_dir()],
            case.arch,
            solver.model_name(case.arch).unwrap(),
        )
        .expect("model loads");
        let target = Target::new(case.arch);
        let input = solver.encoder_input(&target, &problem).expect("features");
        let mut states = model.encode(&input, 1).expect("encode");
        let (mut scores, mut scratch) = (Vec::new(), DecoderScratch::default());
        let mut feed = 0u32;
        let mut tokens = Vec::new();
        for _ in 0..case.tokens.len() {
            model.decoder().step(&[feed], &mut states, &mut scores, &mut scratch);
            let mut best = 0usize;
            for (t, s) in scores.iter().enumerate() {
                if *s >= scores[best] {
                    best = t;
                }
            }
            tokens.push(best as u32);
            feed = best as u32;
        }
        assert_eq!(tokens, case.tokens, "{} {}", case.solver, case.arch);
    }
}

fn diag_of(m: &[f32], n: usize) -> Vec<f32> {
    assert_eq!(m.len(), n * n);
    for r in 0..n {
        for c in 0..n {
            if r != c {
                assert_eq!(m[r * n + c], 0.0, "off-diagonal ({r},{c})");
            }
        }
    }
    (0..n).map(|i| m[i * n + i]).collect()
}

#[test]
fn features_follow_the_readme_layouts() {
    let fwd = solvers::by_name("ConvHipImplicitGemmGroupFwdXdlops").unwrap();
    let bwd = solvers::by_name("ConvHipImplicitGemmGroupBwdXdlops").unwrap();
    let wrw = solvers::by_name("ConvHipImplicitGemmGroupWrwXdlops").unwrap();
    // G2 N8 C6 K4 10x12 -> y 3x2 filter, pad (1, 0), stride (2, 1), dilation (1, 2).
    let line = |dir: u32, ty: &str| {
        format!(
            "{ty} -n 8 -c 6 -H 10 -W 12 -k 4 -y 3 -x 2 -p 1 -q 0 -u 2 -v 1 -l 1 -j 2 -g 2 -F {dir} --in_layout NHWC"
        )
    };
    let f = ConvProblem::parse(&line(1, "conv")).unwrap();
    // Ho = (10 + 2 - 2 - 1)/2 + 1 = 5; Wo = (12 - 2 - 1)/1 + 1 = 10.
    let mut t90 = Target::new("gfx90a");
    assert_eq!(
        fwd.encoder_input(&t90, &f).unwrap(),
        vec![2., 6., 10., 12., 4., 5., 10., 3., 2., 1., 0., 2., 1., 1., 2., 8., 2., 104.]
    );
    t90.compute_units = Some(110);
    assert_eq!(fwd.encoder_input(&t90, &f).unwrap()[17], 110.0);
    let t942 = Target::new("gfx942");
    assert_eq!(
        diag_of(&fwd.encoder_input(&t942, &f).unwrap(), 17),
        vec![6., 10., 12., 4., 5., 10., 3., 2., 1., 0., 2., 1., 1., 2., 8., 2., 2.]
    );
    // Backward data, fp16: in = dy (K=4, 5x10), out = dx (C=6, 10x12).
    let b = ConvProblem::parse(&line(2, "convfp16")).unwrap();
    let expect_b = vec![
        0., 6., 10., 12., 4., 5., 10., 3., 2., 1., 0., 2., 1., 1., 2., 8., 1., 2.,
    ];
    assert_eq!(diag_of(&bwd.encoder_input(&t942, &b).unwrap(), 18), expect_b);
    assert_eq!(
        diag_of(&bwd.encoder_input(&Target::new("gfx90a"), &b).unwrap(), 18),
        expect_b
    );
    let w = ConvProblem::parse(&line(4, "convfp16")).unwrap();
    let mut expect_w = expect_b.clone();
    expect_w[0] = 1.0;
    assert_eq!(
        diag_of(&wrw.encoder_input(&Target::new("gfx90a"), &w).unwrap(), 18),
        expect_w
    );
    assert_eq!(
        diag_of(&wrw.encoder_input(&t942, &w).unwrap(), 17),
        expect_b[1..].to_vec()
    );
}

#[test]
fn model_names_per_arch() {
    let name = |s: &str, a: &str| solvers::by_name(s).unwrap().model_name(a).unwrap();
    assert_eq!(
        name("ConvHipImplicitGemmGroupFwdXdlops", "gfx90a"),
        "ConvHipIgemmGroupFwdXdlops"
    );
    assert_eq!(
        name("ConvHipImplicitGemmGroupFwdXdlops", "gfx942"),
        "ConvHipIgemmGroupFwdXdlops"
    );
    assert_eq!(
        name("ConvHipImplicitGemmGroupBwdXdlops", "gfx90a"),
        "ConvHipIgemmGroupXdlops"
    );
    assert_eq!(
        name("ConvHipImplicitGemmGroupBwdXdlops", "gfx942"),
        "ConvHipIgemmGroupXdlops"
    );
    assert_eq!(
        name("ConvHipImplicitGemmGroupWrwXdlops", "gfx90a"),
        "ConvHipIgemmGroupXdlops"
    );
    assert_eq!(
        name("ConvHipImplicitGemmGroupWrwXdlops", "gfx942"),
        "ConvHipIgemmGroupWrwXdlops"
    );
    assert!(solvers::by_name("ConvHipImplicitGemmGroupFwdXdlops")
        .unwrap()
        .model_name("gfx908")
        .is_err());
}
