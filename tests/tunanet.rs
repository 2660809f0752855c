//! MIOpen's TunaNet (`tuneinfer::tunanet`) against goldens from outside the code under test:
//! MIOpen's own unit test (`test/gtest/tuna_net.cpp`), the test vectors Keras embedded in the
//! gfx90a and gfx942 files, feature vectors written by hand from MIOpen's `ai_heuristics.cpp`,
//! and an independent numpy run (`tools/tunanet_check.py`) for the orders and scores.

mod common;

use std::path::PathBuf;

use tuneinfer::tunanet::{self, TunaNet, Variant};
use tuneinfer::{ConvProblem, Error};

fn load(arch: &str) -> TunaNet {
    TunaNet::load_in(arch, &[common::models_dir()]).expect("MIOpen's TunaNet loads")
}

fn problem(line: &str) -> ConvProblem {
    ConvProblem::from_driver_line(line).expect("a valid driver line")
}

#[test]
fn models_load_with_their_hashes_and_keras_test_vectors() {
    for (arch, variant, tests) in [
        ("gfx908", Variant::Gfx908, 0),
        ("gfx90a", Variant::Gfx90a, 1),
        ("gfx942", Variant::Gfx942, 1),
    ] {
        let t = load(arch);
        assert_eq!(t.variant(), variant, "{arch}");
        let net = t.net();
        // The file's sha256 over every layer's weights and name, recomputed from what was read:
        // no layer dropped or misread (ReLU and Add, which the KTN reader lacks, included).
        assert_eq!(net.stored_hash, net.computed_hash, "{arch}");
        assert_eq!(net.tests.len(), tests, "{arch}");
        // Loading verified them already (as frugally-deep does for MIOpen); the margin here.
        let worst = net.verify(arch).expect("Keras's outputs reproduced");
        assert!(worst < 2e-5, "{arch}: {worst}");
    }
    assert_eq!(load("gfx908").solvers().len(), 9);
    assert_eq!(load("gfx90a").solvers().len(), 23);
    assert_eq!(load("gfx942").solvers().len(), 21);
}

#[test]
fn miopen_picks_the_model_by_device_name() {
    // ai_heuristics.cpp:496-503: gfx942 and gfx90a have their own, every other device gfx908's.
    for (device, arch) in [
        ("gfx942", "gfx942"),
        ("gfx942130", "gfx942"),
        ("gfx90a68", "gfx90a"),
        ("gfx90a:sramecc+:xnack-", "gfx90a"),
        ("gfx908", "gfx908"),
        ("gfx90878", "gfx908"),
        ("gfx906_60", "gfx908"),
        ("gfx1030_36", "gfx908"),
        ("gfx940", "gfx908"),
    ] {
        assert_eq!(tunanet::model_arch(device), arch, "{device}");
    }
    assert_eq!(load("gfx906_60").variant(), Variant::Gfx908);
}

/// MIOpen's registry ids of the solvers in the three models' maps: the `++id` count at each one's
/// registration in `SolverRegistrar` (ROCm/MIOpen 2d1fd997a `src/solver.cpp:291-700`), which
/// the unit test below needs.
const SOLVER_IDS: [(&str, u64); 27] = [
    ("fft", 35),
    ("ConvWinograd3x3MultipassWrW<3-4>", 36),
    ("ConvBinWinogradRxSf3x2", 38),
    ("ConvWinograd3x3MultipassWrW<3-5>", 39),
    ("ConvWinograd3x3MultipassWrW<3-6>", 40),
    ("ConvWinograd3x3MultipassWrW<3-2>", 41),
    ("ConvWinograd3x3MultipassWrW<5-4>", 50),
    ("ConvBinWinogradRxSf2x3", 54),
    ("ConvBinWinogradRxSf2x3g1", 85),
    ("ConvDirectNaiveConvFwd", 86),
    ("ConvDirectNaiveConvBwd", 87),
    ("ConvDirectNaiveConvWrw", 88),
    ("GemmFwd1x1_0_1", 89),
    ("GemmFwd1x1_0_2", 91),
    ("GemmFwdRest", 92),
    ("GemmBwd1x1_stride2", 96),
    ("GemmBwd1x1_stride1", 97),
    ("GemmBwdRest", 98),
    ("GemmWrw1x1_stride1", 102),
    ("GemmWrwUniversal", 103),
    ("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", 108),
    ("ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", 109),
    ("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", 111),
    ("ConvCkIgemmFwdV6r1DlopsNchw", 115),
    ("ConvHipImplicitGemmGroupFwdXdlops", 138),
    ("ConvHipImplicitGemmGroupBwdXdlops", 156),
    ("ConvHipImplicitGemmGroupWrwXdlops", 157),
];

#[test]
fn miopen_unit_test_expectations() {
    // ROCm/MIOpen 2d1fd997a test/gtest/tuna_net.cpp (the same in 3.5.1): for each case
    // (G N C K img filter pad stride dilation, forward, NCHW) it takes PredictSolver's list of
    // solver ids in TunaNet's order and asserts that the position of the largest id
    // (`std::distance(begin, std::max_element(...))`, :133-135) is `expected`.
    let cases = [
        ("gfx908", "conv -n 5 -c 256 -k 64 -H 267 -W 300 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1", 4),
        ("gfx908", "convfp16 -n 16 -c 256 -k 512 -H 20 -W 84 -y 5 -x 5 -p 1 -q 1 -u 1 -v 1", 3),
        ("gfx908", "convbfp16 -n 32 -c 1024 -k 512 -H 15 -W 15 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1", 4),
        ("gfx90a", "conv -n 5 -c 3 -k 64 -H 1301 -W 1333 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2", 6),
        ("gfx90a", "convfp16 -n 24 -c 1024 -k 2048 -H 14 -W 14 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2", 4),
        ("gfx90a", "convbfp16 -n 2 -c 480 -k 192 -H 28 -W 28 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1", 6),
    ];
    for (arch, line, expected) in cases {
        let t = load(arch);
        let order = t.rank(&problem(line)).expect("TunaNet takes MIOpen's test problem");
        assert_eq!(order.len(), t.solvers().len());
        let ids: Vec<u64> = order
            .iter()
            .map(|(s, _)| SOLVER_IDS.iter().find(|(n, _)| n == s).map(|(_, id)| *id).expect("a known solver"))
            .collect();
        let max = ids.iter().max().copied().unwrap_or(0);
        let position = ids.iter().position(|&id| id == max).unwrap_or(usize::MAX);
        assert_eq!(position, expected, "{arch} {line}: order {order:?}");
    }
}

fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "{what}[{i}]: {g} vs {w}\n got {got:?}");
    }
}

#[test]
fn features_by_hand_from_miopens_rules() {
    // Written from ai_heuristics.cpp's ToFeatures, not from the code under test. All three are
    // backward or grouped problems, where MIOpen's "in" tensor is dy: `isFwd ? In : Out` turns
    // the values back to x's channels and size, then y's.
    //
    // gfx908 (:273-299), backward data, 3x3 pad 1, N 64, C = K = 128, 28x28, FP32: C, InDepth,
    // H, W, FilterDepth, Fy, Fx, K, OutDepth, Ho, Wo, N, 1 (PadD), padH, padW, 1 (StrideD), sH,
    // sW, dH, dW, Layout NCHW = 0, Precision FP32 = 0, Direction B = 0, G.
    let t = load("gfx908");
    let p = problem("conv -n 64 -c 128 -k 128 -H 28 -W 28 -y 3 -x 3 -p 1 -q 1 -F 2");
    let want = [
        128., 1., 28., 28., 1., 3., 3., 128., 1., 28., 28., 64., 1., 1., 1., 1., 1., 1., 1., 1., 0., 0., 0., 1.,
    ];
    assert_close(&t.raw_features(&p).unwrap(), &want, 0.0, "gfx908 raw");
    // gfx90a (:374-392), backward weights, 32 groups, FP16: C, H, W, K, Ho, Wo, Fy, Fx, padH,
    // padW, sH, sW, dH, dW, N, Precision FP16 = 1, Direction W = 1, G.
    let t = load("gfx90a");
    let p = problem("convfp16 -n 32 -c 256 -k 256 -H 14 -W 14 -y 3 -x 3 -p 1 -q 1 -g 32 -F 4");
    let want = [256., 14., 14., 256., 14., 14., 3., 3., 1., 1., 1., 1., 1., 1., 32., 1., 1., 32.];
    assert_close(&t.raw_features(&p).unwrap(), &want, 0.0, "gfx90a raw");
    // gfx942 (:467-485), backward data, 1x1 stride 2, BF16: its metadata codes BF16 = 0, B = 0.
    let t = load("gfx942");
    let p = problem("convbfp16 -n 8 -c 512 -k 1024 -H 28 -W 28 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -F 2");
    let want = [512., 28., 28., 1024., 14., 14., 1., 1., 0., 0., 2., 2., 1., 1., 8., 0., 0., 1.];
    assert_close(&t.raw_features(&p).unwrap(), &want, 0.0, "gfx942 raw");
    // Normalised with gfx942's *test* statistics (:489-490): tools/tunanet_check.py's numbers.
    let want = [
        0.524469, -0.774656, -0.788947, 1.837627, -1.086871, -1.101772, -0.648983, -0.644570, -0.592716,
        -0.592448, 1.303632, 1.303632, -0.015720, -0.015720, -0.089850, -0.981566, -1.225149, -0.037795,
    ];
    assert_close(&t.features(&p).unwrap(), &want, 2e-6, "gfx942 normalised");
    // gfx908 with the *overall* statistics (:303), MIOpen's FP32 unit-test problem.
    let t = load("gfx908");
    let p = problem("conv -n 5 -c 256 -k 64 -H 267 -W 300 -y 1 -x 1 -p 0 -q 0");
    let want = [
        -0.144103, -0.007880, 0.529817, 0.616795, -0.003929, -0.639433, -0.632526, -0.646856, -0.007691, 0.344672,
        0.416256, -0.150186, 0.011114, -0.562502, -0.562220, -0.005724, -0.736035, -0.736035, -0.018803,
        -0.018803, -0.011788, -0.245379, 1.222799, -0.044465,
    ];
    assert_close(&t.features(&p).unwrap(), &want, 2e-6, "gfx908 normalised");
}

#[test]
fn orders_and_scores_match_an_independent_numpy_run() {
    // Produced by `tools/tunanet_check.py` (numpy 2.4, float64 forward pass, features written
    // again in Python from ai_heuristics.cpp) on the models of ROCm/MIOpen 2d1fd997a. Each case:
    // the full order with the scores of its first four.
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, f32)]);
    let cases: [Case; 4] = [
        (
            "gfx908",
            "conv -n 64 -c 128 -k 128 -H 28 -W 28 -y 3 -x 3 -p 1 -q 1 -F 2",
            &[
                ("ConvBinWinogradRxSf2x3g1", 5.54310),
                ("ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", 2.10082),
                ("GemmBwdRest", 0.88298),
                ("GemmBwd1x1_stride1", 0.00798),
                ("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", -3.43612),
                ("GemmBwd1x1_stride2", -5.96954),
                ("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", -6.34647),
                ("GemmFwd1x1_0_1", -8.52909),
                ("GemmFwd1x1_0_2", -11.58603),
            ],
        ),
        (
            "gfx90a",
            "convfp16 -n 32 -c 256 -k 256 -H 14 -W 14 -y 3 -x 3 -p 1 -q 1 -g 32 -F 4",
            &[
                ("GemmWrwUniversal", 6.83156),
                ("ConvBinWinogradRxSf2x3", 4.53853),
                ("ConvBinWinogradRxSf3x2", 1.86901),
                ("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", 1.48331),
                ("GemmBwdRest", 1.01895),
                ("GemmFwdRest", 0.48964),
                ("ConvDirectNaiveConvWrw", 0.14510),
                ("ConvDirectNaiveConvFwd", 0.13695),
                ("ConvDirectNaiveConvBwd", -0.60510),
                ("ConvWinograd3x3MultipassWrW<3-4>", -1.10364),
                ("ConvWinograd3x3MultipassWrW<3-5>", -1.27737),
                ("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", -1.65175),
                ("ConvWinograd3x3MultipassWrW<5-4>", -2.09310),
                ("ConvWinograd3x3MultipassWrW<3-6>", -2.57010),
                ("GemmWrw1x1_stride1", -3.22488),
                ("ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", -4.20656),
                ("ConvBinWinogradRxSf2x3g1", -5.34901),
                ("ConvWinograd3x3MultipassWrW<3-2>", -5.51525),
                ("GemmFwd1x1_0_2", -6.24680),
                ("ConvCkIgemmFwdV6r1DlopsNchw", -7.76384),
                ("GemmBwd1x1_stride2", -9.36423),
                ("GemmBwd1x1_stride1", -11.98268),
                ("GemmFwd1x1_0_1", -12.12674),
            ],
        ),
        (
            "gfx942",
            "convfp16 -n 256 -c 64 -k 64 -H 56 -W 56 -y 3 -x 3 -p 1 -q 1",
            &[
                ("ConvBinWinogradRxSf2x3g1", 5.47170),
                ("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", 5.41823),
                ("ConvHipImplicitGemmGroupFwdXdlops", 5.18249),
                ("ConvBinWinogradRxSf3x2", 5.13192),
                ("GemmFwdRest", 2.74898),
                ("ConvDirectNaiveConvFwd", 2.17202),
                ("GemmFwd1x1_0_1", -3.78897),
                ("ConvBinWinogradRxSf2x3", -5.86689),
                ("fft", -7.65895),
                ("ConvHipImplicitGemmGroupWrwXdlops", -7.83258),
                ("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", -8.31546),
                ("ConvDirectNaiveConvWrw", -9.34847),
                ("GemmWrwUniversal", -12.32616),
                ("GemmWrw1x1_stride1", -12.95031),
                ("GemmFwd1x1_0_2", -14.23328),
                ("ConvHipImplicitGemmGroupBwdXdlops", -27.59088),
                ("GemmBwd1x1_stride2", -27.71909),
                ("GemmBwdRest", -28.17321),
                ("ConvDirectNaiveConvBwd", -28.93047),
                ("ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", -32.23124),
                ("GemmBwd1x1_stride1", -36.77743),
            ],
        ),
        (
            "gfx942",
            "convbfp16 -n 8 -c 512 -k 1024 -H 28 -W 28 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -F 2",
            &[
                ("GemmBwd1x1_stride2", 6.31949),
                ("ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", 6.22309),
                ("ConvHipImplicitGemmGroupBwdXdlops", 4.36010),
                ("ConvDirectNaiveConvBwd", 2.36871),
                ("GemmBwdRest", -2.38758),
                ("GemmBwd1x1_stride1", -4.67514),
                ("GemmWrwUniversal", -6.25144),
                ("ConvBinWinogradRxSf3x2", -6.34923),
                ("ConvBinWinogradRxSf2x3g1", -7.34093),
                ("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", -7.40967),
                ("ConvDirectNaiveConvWrw", -11.15995),
                ("GemmWrw1x1_stride1", -14.1563),
                ("ConvHipImplicitGemmGroupWrwXdlops", -14.23518),
                ("GemmFwd1x1_0_2", -15.87596),
                ("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", -16.28598),
                ("ConvHipImplicitGemmGroupFwdXdlops", -18.30994),
                ("ConvDirectNaiveConvFwd", -18.64693),
                ("ConvBinWinogradRxSf2x3", -22.6846),
                ("GemmFwdRest", -25.02445),
                ("GemmFwd1x1_0_1", -25.19127),
                ("fft", -29.52766),
            ],
        ),
    ];
    for (arch, line, want) in cases {
        let t = load(arch);
        let got = t.rank(&problem(line)).expect("taken");
        let names: Vec<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
        let want_names: Vec<&str> = want.iter().map(|(s, _)| *s).collect();
        assert_eq!(names, want_names, "{arch} {line}");
        for ((s, g), (_, w)) in got.iter().zip(want) {
            assert!((g - w).abs() < 2e-4, "{arch} {line} {s}: {g} vs numpy {w}");
        }
    }
}

#[test]
fn problems_tunanet_does_not_take_say_why() {
    let reason = |arch: &str, line: &str| match load(arch).rank(&problem(line)) {
        Err(Error::NotApplicable { solver, reason }) => {
            assert!(solver.contains("TunaNet"), "{solver}");
            reason
        }
        other => panic!("{arch} {line}: expected a refusal, got {other:?}"),
    };
    let base = "conv -n 16 -c 64 -k 64 -H 28 -W 28 -y 3 -x 3 -p 1 -q 1";
    // gfx908 (ai_heuristics.cpp:207-247).
    assert!(reason("gfx908", &format!("{base} -g 2")).contains("group count"));
    assert!(reason("gfx908", &format!("{base} -I NHWC -O NHWC -f NHWC")).contains("layout NHWC"));
    assert!(reason("gfx908", "conv -n 16 -c 64 -k 64 -H 28 -W 28 -y 3 -x 1 -p 1 -q 0").contains("square"));
    assert!(reason("gfx908", "conv -n 16 -c 64 -k 64 -H 28 -W 28 -y 3 -x 3 -p 1 -q 0").contains("padding"));
    assert!(reason("gfx908", &format!("{base} -u 2 -v 1")).contains("stride"));
    assert!(reason("gfx908", &format!("{base} -l 2 -j 2")).contains("dilation must be 1"));
    let three_d = "conv -n 4 -c 16 -k 16 -H 8 -W 8 -y 3 -x 3 -p 1 -q 1 --spatial_dim 3 --in_d 4 --fil_d 1";
    assert!(reason("gfx908", three_d).contains("not 2D"));
    // gfx90a and gfx942 (:317-346, :410-439): no bias, NCHW, equal strides and dilations.
    for arch in ["gfx90a", "gfx942"] {
        assert!(reason(arch, &format!("{base} -b 1")).contains("bias"));
        assert!(reason(arch, &format!("{base} -I NHWC -O NHWC -f NHWC")).contains("NCHW only"));
        assert!(reason(arch, &format!("{base} -u 1 -v 2")).contains("stride"));
        assert!(reason(arch, &format!("{base} -l 1 -j 2")).contains("dilation"));
        assert!(reason(arch, three_d).contains("not 2D"));
        // What gfx908 refuses, these take: groups, a non-square filter, unequal pads, dilation 2.
        for line in [
            format!("{base} -g 2"),
            "conv -n 16 -c 64 -k 64 -H 28 -W 28 -y 3 -x 1 -p 1 -q 0".to_string(),
            format!("{base} -l 2 -j 2"),
        ] {
            assert!(load(arch).rank(&problem(&line)).is_ok(), "{arch} {line}");
        }
    }
    // gfx908 takes a bias (it does not check it).
    assert!(load("gfx908").rank(&problem(&format!("{base} -b 1"))).is_ok());
}

#[test]
fn fallback_keeps_applicable_dynamic_solvers_with_miopens_times() {
    let t = load("gfx942");
    let p = problem("convfp16 -n 256 -c 64 -k 64 -H 56 -W 56 -y 3 -x 3 -p 1 -q 1");
    let order = t.rank(&p).unwrap();
    // Everything applies: only fft, not dynamic (convolutionocl.cpp:621), drops out.
    let all = t.fallback(&p, &mut |_| true).unwrap();
    assert_eq!(all.len(), order.len() - 1);
    assert!(all.iter().all(|s| s.solver != "fft"));
    for (k, s) in all.iter().enumerate() {
        assert_eq!(s.time_ms, 10.0 * (k + 1) as f32, "{s:?}");
    }
    // Only forward solvers that are not Winograd apply: the first kept is TunaNet's best of them.
    let mut asked = Vec::new();
    let some = t
        .fallback(&p, &mut |s| {
            asked.push(s.to_string());
            s.contains("Fwd") && !s.contains("Winograd")
        })
        .unwrap();
    assert_eq!(asked.len(), order.len(), "every solver asked once");
    assert_eq!(some[0].solver, "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC");
    assert_eq!(some[1].solver, "ConvHipImplicitGemmGroupFwdXdlops");
    assert_eq!(some[1].time_ms, 20.0);
    // Only fft applies: IsProblemSupported holds (a solver of the map applies) but nothing is
    // kept, so MIOpen goes on to its WTI fallback.
    assert!(t.fallback(&p, &mut |s| s == "fft").unwrap().is_empty());
    // Nothing applies: IsProblemSupported refuses (ai_heuristics.cpp:249-265).
    match t.fallback(&p, &mut |_| false) {
        Err(Error::NotApplicable { reason, .. }) => assert!(reason.contains("no solver"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // gfx90a's ConvCkIgemmFwdV6r1DlopsNchw is not dynamic either.
    let t = load("gfx90a");
    let p = problem("conv -n 5 -c 3 -k 64 -H 1301 -W 1333 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2");
    let kept = t.fallback(&p, &mut |_| true).unwrap();
    assert!(kept.iter().all(|s| s.solver != "ConvCkIgemmFwdV6r1DlopsNchw"));
    assert_eq!(kept.len(), t.solvers().len() - 1);
    assert!(!tunanet::is_dynamic("fft") && tunanet::is_dynamic("GemmFwdRest"));
}

#[test]
fn rank_many_answers_like_rank_one_at_a_time() {
    let t = load("gfx90a");
    let lines = [
        "conv -n 5 -c 3 -k 64 -H 1301 -W 1333 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2",
        "conv -n 16 -c 64 -k 64 -H 28 -W 28 -y 3 -x 3 -p 1 -q 1 -b 1",
        "convfp16 -n 32 -c 256 -k 256 -H 14 -W 14 -y 3 -x 3 -p 1 -q 1 -g 32 -F 4",
        "convbfp16 -n 2 -c 480 -k 192 -H 28 -W 28 -y 1 -x 1 -p 0 -q 0 -F 2",
    ];
    let problems: Vec<ConvProblem> = lines.iter().map(|l| problem(l)).collect();
    let many = t.rank_many(&problems);
    assert_eq!(many.len(), 4);
    for (p, m) in problems.iter().zip(&many) {
        match (t.rank(p), m) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.len(), b.len());
                for ((sa, va), (sb, vb)) in a.iter().zip(b) {
                    assert_eq!(sa, sb);
                    assert!((va - vb).abs() < 1e-5);
                }
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{a:?} vs {b:?}"),
        }
    }
    assert!(many[1].is_err(), "the bias problem is refused in the batch too");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-tunanet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn missing_and_damaged_files_are_errors() {
    let models = common::models_dir();
    // No model anywhere: ModelNotFound naming the files.
    let empty = temp_dir("empty");
    match TunaNet::load_in("gfx90a", std::slice::from_ref(&empty)) {
        Err(Error::ModelNotFound { looked_for, .. }) => assert!(looked_for[0].contains("gfx90a.tn.model")),
        other => panic!("{other:?}"),
    }
    // Half a model in the first directory: an error, not a fall-through to the next one.
    let half = temp_dir("half");
    std::fs::copy(models.join("gfx90a.tn.model"), half.join("gfx90a.tn.model")).unwrap();
    assert!(matches!(
        TunaNet::load_in("gfx90a", &[half.clone(), models.clone()]),
        Err(Error::Format { .. })
    ));
    // A metadata whose feature list is not what MIOpen's class builds.
    let meta = std::fs::read_to_string(models.join("gfx90a_metadata.tn.model")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&meta).unwrap();
    json["conv_params_used_as_features"].as_array_mut().unwrap().swap(1, 2);
    let swapped = json.to_string();
    let model = std::fs::read_to_string(models.join("gfx90a.tn.model")).unwrap();
    match TunaNet::parse(&model, &swapped, "gfx90a", "swapped") {
        Err(Error::Format { detail, .. }) => assert!(detail.contains("conv_params_used_as_features"), "{detail}"),
        other => panic!("{other:?}"),
    }
    // A layer class TunaNet does not use.
    let softmax = model.replacen("\"class_name\":\"ReLU\"", "\"class_name\":\"Softmax\"", 1);
    assert_ne!(softmax, model);
    assert!(matches!(
        TunaNet::parse(&softmax, &meta, "gfx90a", "softmax"),
        Err(Error::UnsupportedLayer { .. })
    ));
    // A changed weight: the embedded Keras test no longer holds. The 5th base64 character of a
    // bias holds the top 6 bits of its first float's last byte (sign and exponent): 'Q' makes
    // that float about 2 to 8 whatever it was (finite, so the reader takes it).
    let at = model.find("\"bias\":[\"").expect("a base64 bias") + "\"bias\":[\"".len() + 4;
    let mut damaged = model.clone();
    let new = if &model[at..at + 1] == "Q" { "R" } else { "Q" };
    damaged.replace_range(at..at + 1, new);
    assert!(matches!(
        TunaNet::parse(&damaged, &meta, "gfx90a", "damaged"),
        Err(Error::VerifyMismatch { .. })
    ));
    let _ = std::fs::remove_dir_all(empty);
    let _ = std::fs::remove_dir_all(half);
}

/// A two-solver TunaNet in MIOpen 3.5.1's gfx942 form (19 features, the layout's code at 15): one
/// Dense layer whose output 0 is "fluff" (skipped by the offset), solver A scores +layout code and
/// solver B 0.5 - layout code. Overall statistics that would wreck the answer if used (mean 1000);
/// test statistics mean 0, std 1.
fn synthetic_351() -> (String, String) {
    let (inputs, outputs) = (19, 3);
    let mut kernel = vec![0f32; inputs * outputs];
    kernel[15 * outputs + 1] = 1.0;
    kernel[15 * outputs + 2] = -1.0;
    let bias = [100.0f32, 0.0, 0.5];
    let model = serde_json::json!({
        "architecture": {"class_name": "Functional", "config": {"name": "t", "layers": [
            {"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [],
             "config": {"batch_input_shape": [null, inputs], "name": "input_1"}},
            {"class_name": "Dense", "name": "dense", "inbound_nodes": [[["input_1", 0, 0, {}]]],
             "config": {"name": "dense", "units": outputs, "activation": "linear", "use_bias": true}}
        ], "input_layers": [["input_1", 0, 0]], "output_layers": [["dense", 0, 0]]}},
        "trainable_params": {"dense": {"weights": kernel, "bias": bias}},
        "hash": ""
    });
    let names = [
        "Inp_0", "Inp_2", "Inp_3", "Out_0", "Out_2", "Out_3", "Fil_1", "Fil_2", "Pad_1", "Pad_2", "Str_1", "Str_2",
        "Dil_1", "Dil_2", "BatchSize", "Layout", "Precision", "Direction", "GroupSize",
    ];
    let table = |v: f64| serde_json::Value::Object(names.iter().map(|n| (n.to_string(), v.into())).collect());
    let meta = serde_json::json!({
        "num_inputs": inputs, "num_outputs": outputs, "num_solvers": 2,
        "conv_params_used_as_features": names,
        "encodings": {
            "Direction": {"B": 0, "W": 1, "F": 2},
            "Precision": {"BF16": 0, "FP32": 1, "FP16": 2},
            "Layout": {"NCHW": 0, "NHWC": 1},
            "solver": {"A": 0, "B": 1}
        },
        "stats": {
            "overall": {"features": {"mean": table(1000.0), "std": table(1.0)}},
            "test": {"features": {"mean": table(0.0), "std": table(1.0)}}
        }
    });
    (model.to_string(), meta.to_string())
}

#[test]
fn miopen_351_gfx942_form_takes_nhwc_with_the_layout_feature() {
    // MIOpen 3.5.1's Gfx942Model (its ai_heuristics.cpp:413, :465-489): NCHW or NHWC, the
    // layout's code before the precision's, test statistics.
    let (model, meta) = synthetic_351();
    let t = TunaNet::parse(&model, &meta, "gfx942", "synthetic").expect("the 3.5.1 form loads");
    assert_eq!(t.variant(), Variant::Gfx942V351);
    let nhwc = problem("convfp16 -n 8 -c 64 -k 32 -H 10 -W 12 -y 3 -x 3 -p 1 -q 1 -I NHWC -O NHWC -f NHWC");
    let want = [64., 10., 12., 32., 10., 12., 3., 3., 1., 1., 1., 1., 1., 1., 8., 1., 2., 2., 1.];
    assert_close(&t.raw_features(&nhwc).unwrap(), &want, 0.0, "3.5.1 raw");
    assert_close(&t.features(&nhwc).unwrap(), &want, 0.0, "3.5.1 normalised with the test stats");
    assert_eq!(t.rank(&nhwc).unwrap(), vec![("A".to_string(), 1.0), ("B".to_string(), -0.5)]);
    let nchw = problem("convfp16 -n 8 -c 64 -k 32 -H 10 -W 12 -y 3 -x 3 -p 1 -q 1");
    assert_eq!(t.rank(&nchw).unwrap(), vec![("B".to_string(), 0.5), ("A".to_string(), 0.0)]);
    // The same files read as the 2024 class: the feature list does not match, an error.
    assert!(matches!(TunaNet::parse(&model, &meta, "gfx90a", "synthetic"), Err(Error::Format { .. })));
}
