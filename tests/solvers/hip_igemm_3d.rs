//! The 3-D class of the non-xdlops HIP implicit-GEMM solvers `ConvHipImplicitGemmV4R4Fwd`,
//! `ConvHipImplicitGemmV4R4WrW` and `ConvHipImplicitGemmBwdDataV1R1` (issue 45 item 3).
//!
//! MIOpen (2d1fd997a; the same text in 3.5.1) applies the three to 3-D problems
//! (`conv_hip_implicit_gemm_fwd_v4r4.cpp:599`, `conv_hip_implicit_gemm_wrw_v4r4.cpp:602`:
//! `if(!problem.Is2d() && !problem.Is3d())`; `conv_hip_implicit_gemm_bwd_v1r1.cpp:656`: 3-D in
//! FP32 only) with the GEMM of `CalculateGemmSize` counting the depth: V4R4Fwd (K, N*Do*Ho*Wo,
//! C*Z*Y*X), V4R4WrW (K, C*Z*Y*X, N*Do*Ho*Wo), BwdDataV1R1 (C*Z*Y*X, N*Do*Ho*Wo, K). The goldens
//! here come from outside the code under test: GEMM sizes worked out by hand and from the keys'
//! own fields with those formulas, the tuned rows of MIOpen's databases, the row counts of
//! `grep -c` over them, and `HeuristicInit`'s list as MIOpen's source writes it.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::data::textdb;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::hip_igemm::{self, Gemm, HipIgemmSolver, Kind};
use tuneinfer::solvers::{Target, Tunable};
use tuneinfer::Error;

fn db_key(k: &str) -> ConvProblem {
    ConvProblem::from_db_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

fn cfg(s: &str) -> Vec<i64> {
    s.split(',').map(|f| f.trim().parse().unwrap()).collect()
}

fn v4r4_solvers() -> [&'static HipIgemmSolver; 3] {
    [&hip_igemm::V4R4_FWD, &hip_igemm::V4R4_WRW, &hip_igemm::BWD_V1R1]
}

fn refusal(s: &HipIgemmSolver, arch: &str, p: &ConvProblem) -> Option<String> {
    match s.applicable(&Target::new(arch), p) {
        Ok(()) => None,
        Err(Error::NotApplicable { reason, .. }) => Some(reason),
        Err(e) => panic!("{}: {p}: {e}", s.name),
    }
}

// ---------------------------------------------------------------------------------------------
// The GEMM of a 3-D problem, by hand

/// N 2, C 64, K 64, D*H*W 8x28x28, filter 3x3x3, pads 1, strides 1: Do*Ho*Wo = 8*28*28 = 6272,
/// so N*Do*Ho*Wo = 12544 and C*Z*Y*X = 64*27 = 1728.
#[test]
fn gemm_sizes_count_the_depth() {
    let f = db_key("3x64x28x28x8x3x3x3x64x2x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xF");
    assert_eq!(
        Gemm::of(Kind::V4R4Fwd, &f),
        Gemm {
            m: 64,
            n: 12_544,
            k: 1_728
        }
    );
    // W and B keys name dy first: in_channels 64 = K, the spatial sizes are dy's (8x28x28).
    let w = db_key("3x64x28x28x8x3x3x3x64x2x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xW");
    assert_eq!(
        Gemm::of(Kind::V4R4WrW, &w),
        Gemm {
            m: 64,
            n: 1_728,
            k: 12_544
        }
    );
    let b = db_key("3x64x28x28x8x3x3x3x64x2x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xB");
    assert_eq!(
        Gemm::of(Kind::BwdDataV1R1, &b),
        Gemm {
            m: 1_728,
            n: 12_544,
            k: 64
        }
    );
    // Strided depth: D 16, Z 3, pad 0, stride 2: Do = (16 - 3)/2 + 1 = 7; H = W = 14, 1x1:
    // N*Do*Ho*Wo = 4*7*14*14 = 5488, C*Z*Y*X = 32*3 = 96.
    let s = db_key("3x32x14x14x16x1x1x3x64x4x0x0x0x1x1x2x1x1x1x0x1xNCDHWxFP32xF");
    assert_eq!(Gemm::of(Kind::V4R4Fwd, &s), Gemm { m: 64, n: 5_488, k: 96 });
    // MIOpen's first 3-D row of gfx90878 (F): K 128, N*Do*Ho*Wo = 512*1*7*7 = 25088, C 992.
    let first = db_key("3x992x7x7x1x1x1x1x128x512x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF");
    assert_eq!(
        Gemm::of(Kind::V4R4Fwd, &first),
        Gemm {
            m: 128,
            n: 25_088,
            k: 992
        }
    );
    // Its tuned value there, 256,128,128,16,4,4, is the first of HeuristicInit's list: 128 | 128,
    // 128 | 25088 (196), 16 | 992 (62).
    let d = hip_igemm::V4R4_FWD.static_default(&Target::new("gfx90878"), &first);
    assert_eq!(d, cfg("256,128,128,16,4,4"));
}

/// The depth decides applicability: N 1, C 32, K 32, 1x1x1 filter, D*H*W 4x4x2: GEMM N = 1*4*4*2
/// = 32 (applicable); its 2-D twin (H*W 4x2) has GEMM N = 8, not a multiple of 32.
#[test]
fn the_depth_decides_the_gemm_checks() {
    let three = db_key("3x32x4x2x4x1x1x1x32x1x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF");
    assert_eq!(refusal(&hip_igemm::V4R4_FWD, "gfx908", &three), None);
    let mut two = three.clone();
    two.depth = None;
    let why = refusal(&hip_igemm::V4R4_FWD, "gfx908", &two).unwrap();
    assert!(why.contains("GEMM N = 8"), "{why}");
    // C 3 with a 3x3x3 filter: GEMM K = C*Z*Y*X = 81, not a multiple of 4 (the 2-D 3x3 twin:
    // 27, refused too).
    let k81 = db_key("3x3x28x28x8x3x3x3x64x4x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xF");
    let why = refusal(&hip_igemm::V4R4_FWD, "gfx908", &k81).unwrap();
    assert!(why.contains("GEMM K = 81"), "{why}");
    // WrW: GEMM N = C*Z*Y*X = 4*3*1*1 = 12 with C 4 and Z 3: refused; C 32: 96, applicable.
    let w12 = db_key("3x64x14x14x4x1x1x3x4x8x0x0x1x1x1x1x1x1x1x0x1xNCDHWxFP32xW");
    assert!(refusal(&hip_igemm::V4R4_WRW, "gfx908", &w12)
        .unwrap()
        .contains("GEMM N = 12"));
    let w96 = db_key("3x64x14x14x4x1x1x3x32x8x0x0x1x1x1x1x1x1x1x0x1xNCDHWxFP32xW");
    assert_eq!(refusal(&hip_igemm::V4R4_WRW, "gfx908", &w96), None);
    assert_eq!(
        Gemm::of(Kind::V4R4WrW, &w96),
        Gemm {
            m: 64,
            n: 96,
            k: 8 * 4 * 14 * 14
        }
    );
}

/// The B copy's vector bound (`CalculateGemmBBlockCopyPerformanceParameters`, 3-D branch): a
/// 1x1x1 filter with unit strides and no pads reads Di*Hi*Wi; a depth stride of 2 (Do > 1) leaves
/// that branch: V4R4Fwd then gcd(pad_w 0, Wi, rp_w 0, dil_w 1) = 1 (stride_w 1), V4R4WrW Wo
/// (stride_w 1, no W pads, dil_w 1). BwdDataV1R1 reads Ho*Wo without the depth.
#[test]
fn b_copy_vector_bound_in_3d() {
    let unit = db_key("3x64x7x7x4x1x1x1x64x8x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF");
    assert_eq!(hip_igemm::b_vector_bound(Kind::V4R4Fwd, &unit), 4 * 7 * 7);
    let strided = db_key("3x64x7x7x4x1x1x1x64x8x0x0x0x1x1x2x1x1x1x0x1xNCDHWxFP32xF");
    assert_eq!(strided.depth.unwrap().out_d, 2);
    assert_eq!(hip_igemm::b_vector_bound(Kind::V4R4Fwd, &strided), 1);
    let mut w = strided.clone();
    w.direction = tuneinfer::problem::Direction::BackwardWeights;
    assert_eq!(hip_igemm::b_vector_bound(Kind::V4R4WrW, &w), 7);
    let mut b = unit.clone();
    b.direction = tuneinfer::problem::Direction::BackwardData;
    assert_eq!(hip_igemm::b_vector_bound(Kind::BwdDataV1R1, &b), 7 * 7);
    // Depth 1 with stride 2 is adjusted to stride 1 (Do = 1): still the first branch.
    let d1 = db_key("3x64x7x7x1x1x1x1x64x8x0x0x0x1x1x2x1x1x1x0x1xNCDHWxFP32xF");
    assert_eq!(hip_igemm::b_vector_bound(Kind::V4R4Fwd, &d1), 49);
}

/// What refuses a 3-D problem, each with its reason.
#[test]
fn refused_3d_problems_say_why() {
    let f = "3x64x28x28x8x3x3x3x64x2x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xF";
    let b = "3x64x28x28x8x3x3x3x64x2x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xB";
    // BwdDataV1R1: 3-D in FP32 only (`!(problem.Is3d() && problem.IsFp32())`); 2-D BF16 is off
    // for another reason (WORKAROUND_ISSUE_309).
    for t in ["BF16", "FP16"] {
        let why = refusal(&hip_igemm::BWD_V1R1, "gfx908", &db_key(&b.replace("FP32", t))).unwrap();
        assert!(why.contains("3-D problems in FP32 only"), "{why}");
    }
    assert_eq!(refusal(&hip_igemm::BWD_V1R1, "gfx908", &db_key(b)), None);
    // V4R4Fwd / WrW: FP32 only, 3-D as 2-D.
    assert!(
        refusal(&hip_igemm::V4R4_FWD, "gfx908", &db_key(&f.replace("FP32", "FP16")))
            .unwrap()
            .contains("FP32 only")
    );
    // NDHWC: not the default layout.
    let why = refusal(&hip_igemm::V4R4_FWD, "gfx908", &db_key(&f.replace("NCDHW", "NDHWC"))).unwrap();
    assert!(why.contains("NDHWC") && why.contains("NCDHW"), "{why}");
    // The V4R1 solvers stay 2-D (`if(!problem.Is2d())`).
    for s in [&hip_igemm::V4R1_FWD, &hip_igemm::V4R1_WRW] {
        let mut p = db_key(f);
        p.direction = s.direction;
        let why = refusal(s, "gfx908", &p).unwrap();
        assert!(
            why.contains("a 3-D problem") && why.contains("2-D problems only"),
            "{why}"
        );
    }
    // Not on gfx942 (the deprecated-solver list), 3-D as 2-D.
    assert!(refusal(&hip_igemm::V4R4_FWD, "gfx942", &db_key(f))
        .unwrap()
        .contains("arch"));
    // A tensor of 2 GiB or more, counting the depth: x = 16*256*64*64*64*4 bytes = 4 GiB; its
    // 2-D twin (64 MiB) fits.
    let big = db_key("3x256x64x64x64x1x1x1x256x16x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF");
    assert!(refusal(&hip_igemm::V4R4_FWD, "gfx908", &big).unwrap().contains("GiB"));
    let mut twin = big.clone();
    twin.depth = None;
    assert_eq!(refusal(&hip_igemm::V4R4_FWD, "gfx908", &twin), None);
}

/// A 3-D problem of depth 1 is its 2-D twin for the rules, the default and the model's features
/// (MIOpen's 3-D branches with D = Z = 1 are its 2-D ones); its class is `3-D`.
#[test]
fn depth_one_is_the_2d_twin_for_rules_default_and_features() {
    let target = Target::new("gfx908");
    for s in v4r4_solvers() {
        let dir = s.direction.as_char();
        for k in [
            "3x992x7x7x1x1x1x1x128x512x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32x",
            "3x64x28x28x1x3x3x1x64x32x1x1x0x1x1x1x1x1x1x0x1xNCDHWxFP32x",
            "3x256x14x14x1x3x3x1x128x16x1x1x0x2x2x1x1x1x1x0x1xNCDHWxFP32x",
        ] {
            let three = db_key(&format!("{k}{dir}"));
            let mut two = three.clone();
            two.depth = None;
            assert_eq!(Gemm::of(s.kind, &three), Gemm::of(s.kind, &two));
            assert_eq!(
                hip_igemm::b_vector_bound(s.kind, &three),
                hip_igemm::b_vector_bound(s.kind, &two)
            );
            let (r3, r2) = (s.hip_rules(&three), s.hip_rules(&two));
            assert_eq!(r3.valid_configs(), r2.valid_configs(), "{} {three}", s.name);
            assert_eq!(r3.table_key(), r2.table_key());
            assert_eq!(s.static_default(&target, &three), s.static_default(&target, &two));
            assert_eq!(s.features(&three), s.features(&two));
            assert_eq!(s.problem_class(&three), Some(hip_igemm::CLASS_3D));
            assert_eq!(s.problem_class(&two), Some(hip_igemm::CLASS_2D));
        }
    }
    // Depth > 1: the features read the GEMM (N*Do*Ho*Wo), Do*Ho*Wo and Z*Y*X.
    let p = db_key("3x64x28x28x8x3x3x3x64x2x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xF");
    let f = hip_igemm::V4R4_FWD.features(&p);
    assert_eq!(f[1], (12_544f64).log2() as f32);
    assert_eq!(f[5], (6_272f64).log2() as f32);
    assert_eq!(f[11], (27f64).log2() as f32);
}

// ---------------------------------------------------------------------------------------------
// Every tuned 3-D row

/// MIOpen's `HeuristicInit` list (`conv_hip_implicit_gemm_fwd_v4r4.cpp:483-523`; the same in
/// `..._wrw_v4r4.cpp` and `..._bwd_v1r1.cpp`), in order.
const HEURISTIC_LIST: [&str; 21] = [
    "256,128,128,16,4,4",
    "256,128,128,8,4,4",
    "256,128,128,4,4,4",
    "128,128,64,16,4,4",
    "128,128,64,8,4,4",
    "128,128,64,4,4,4",
    "128,64,128,16,4,4",
    "128,64,128,8,4,4",
    "128,64,128,4,4,4",
    "64,64,64,16,4,4",
    "64,64,64,8,4,4",
    "64,64,64,4,4,4",
    "64,64,32,16,4,2",
    "64,64,32,8,4,2",
    "64,64,32,4,4,2",
    "64,32,64,16,2,4",
    "64,32,64,8,2,4",
    "64,32,64,4,2,4",
    "64,32,32,16,2,2",
    "64,32,32,8,2,2",
    "64,32,32,4,2,2",
];

/// The write-up's characterisation of a valid V4R4 config (ConvHipImplicitGemmNonXdlops.md
/// section E, `tests/solvers/hip_igemm.rs`): one of the 36 structural tuples (the block GEMM's cluster
/// arithmetic) whose tiles divide the GEMM.
fn reference_valid(c: &[i64], (m, n, k): (i128, i128, i128)) -> bool {
    let (bs, mb, nb, kb, mt, nt) = (c[0], c[1], c[2], c[3], c[4], c[5]);
    let ms: &[(i64, i64)] = if bs == 64 {
        &[(32, 2), (64, 4)]
    } else {
        &[(64, 2), (128, 4)]
    };
    let ns: &[(i64, i64)] = if bs == 256 {
        &[(64, 2), (128, 4)]
    } else {
        &[(32, 2), (64, 4)]
    };
    ms.contains(&(mb, mt))
        && ns.contains(&(nb, nt))
        && m % i128::from(mb) == 0
        && n % i128::from(nb) == 0
        && k % i128::from(kb) == 0
}

/// MIOpen's default by the list and [`reference_valid`]: the first valid entry, else the last.
fn reference_default(gemm: (i128, i128, i128)) -> Vec<i64> {
    HEURISTIC_LIST
        .iter()
        .map(|s| cfg(s))
        .find(|c| reference_valid(c, gemm))
        .unwrap_or_else(|| cfg(HEURISTIC_LIST[20]))
}

/// The GEMM (M, N, K) of a 24-field text key, worked out from its fields with MIOpen's
/// `CalculateGemmSize` (the keys' direction convention: a B or W key names dy first).
fn key_gemm(key: &str) -> (i128, i128, i128) {
    let f: Vec<&str> = key.split('x').collect();
    let v = |i: usize| -> i128 { f[i].parse().unwrap() };
    let (in_c, in_h, in_w, in_d) = (v(1), v(2), v(3), v(4));
    let (fy, fx, fz, out_c, n) = (v(5), v(6), v(7), v(8), v(9));
    let (ph, pw, pd, sh, sw, sd, dh, dw, dd) = (v(10), v(11), v(12), v(13), v(14), v(15), v(16), v(17), v(18));
    let out = |i: i128, p: i128, fl: i128, s: i128, d: i128| (i + 2 * p - d * (fl - 1) - 1) / s + 1;
    let dir = f[23];
    // (C, K, Do, Ho, Wo) in the forward convention.
    let (c, k, d_o, ho, wo) = if dir == "F" {
        (
            in_c,
            out_c,
            out(in_d, pd, fz, sd, dd),
            out(in_h, ph, fy, sh, dh),
            out(in_w, pw, fx, sw, dw),
        )
    } else {
        (out_c, in_c, in_d, in_h, in_w)
    };
    let (px, filt) = (n * d_o * ho * wo, c * fz * fy * fx);
    match dir {
        "F" => (k, px, filt),
        "W" => (k, filt, px),
        _ => (filt, px, k),
    }
}

/// (database, solver, tuned 3-D rows: `bzcat FILE | grep NCDHW | grep -c 'SOLVER:'`, and for
/// gfx1030_36.db `select count(*) ... where spatial_dim = 3`).
const TUNED_3D: [(&str, &str, usize); 9] = [
    ("gfx90878.db.txt.bz2", "ConvHipImplicitGemmV4R4Fwd", 3_902),
    ("gfx90878.db.txt.bz2", "ConvHipImplicitGemmV4R4WrW", 4_461),
    ("gfx90878.db.txt.bz2", "ConvHipImplicitGemmBwdDataV1R1", 3_704),
    ("gfx90a68.db.txt.bz2", "ConvHipImplicitGemmV4R4Fwd", 3_962),
    ("gfx90a68.db.txt.bz2", "ConvHipImplicitGemmV4R4WrW", 4_456),
    ("gfx90a68.db.txt.bz2", "ConvHipImplicitGemmBwdDataV1R1", 3_768),
    ("gfx1030_36.db", "ConvHipImplicitGemmV4R4Fwd", 11),
    ("gfx1030_36.db", "ConvHipImplicitGemmV4R4WrW", 11),
    ("gfx1030_36.db", "ConvHipImplicitGemmBwdDataV1R1", 11),
];

/// Every tuned 3-D row of the shared databases that hold any (MIOpen 3.5.1's MI100 and MI210
/// text databases, gfx1030_36's sqlite one; gfx906_60, gfx900_56 and gfx942130 hold none) is
/// applicable and passes the rules; the GEMM tuneinfer computes is the one worked out from the
/// key's fields; MIOpen's default (the list walked with the write-up's characterisation) is
/// tuneinfer's and passes the rules on every one. Every row, about 25,000 (a few seconds).
#[test]
fn every_tuned_3d_row_passes_and_the_default_is_miopens() {
    let mut texts: std::collections::BTreeMap<&str, String> = Default::default();
    let mut depth_above_1 = 0;
    for (db, name, want) in TUNED_3D {
        let s = hip_igemm::solvers().into_iter().find(|s| s.name == name).unwrap();
        let target = Target::new(db.split('.').next().unwrap());
        let path = common::perfdb_dir().join(db);
        let rows = if db.ends_with(".bz2") {
            let text = texts
                .entry(db)
                .or_insert_with(|| textdb::read_text(&path).unwrap_or_else(|e| panic!("{e}")));
            // The keys as MIOpen wrote them: the GEMM of each, worked out from its own fields.
            let lines: Vec<&str> = text.lines().collect();
            let rows = textdb::solver_rows_from_text(text, name);
            for row in rows.rows.iter().filter(|r| r.problem.is_3d()) {
                let key = lines[row.config_id as usize - 1].split_once('=').unwrap().0;
                let (m, n, k) = key_gemm(key);
                assert_eq!(Gemm::of(s.kind, &row.problem), Gemm { m, n, k }, "{name} {key}");
                assert_eq!(
                    s.static_default(&target, &row.problem),
                    reference_default((m, n, k)),
                    "{name} {key}"
                );
            }
            rows
        } else {
            read_rows(&path, name).unwrap()
        };
        let mut three = rows.clone();
        three.rows.retain(|r| r.problem.is_3d());
        assert!(rows.rejected.iter().all(|(_, why)| why.contains("would be empty")));
        assert_eq!(three.rows.len(), want, "{db} {name}");
        let r = build(&three, s, &target).report;
        println!("{db} {name} 3-D: {}", r.summary());
        assert_eq!(
            (r.used, r.not_applicable, r.rule_violations, r.default_rule_violations),
            (want, 0, 0, 0),
            "{db} {name}: {:?} {:?}",
            r.not_applicable_reasons,
            r.violations_at
        );
        for row in &three.rows {
            s.applicable(&target, &row.problem).unwrap();
            let rules = s.rules(&target, &row.problem);
            assert!(
                rules.is_valid(&s.parse_params(&row.params).unwrap()),
                "{name} {}",
                row.problem
            );
            assert!(rules.is_valid(&s.static_default(&target, &row.problem)));
            depth_above_1 += usize::from(row.problem.depth.unwrap().in_d > 1);
        }
    }
    // Most are depth 1 (2-D problems in 3-D form); a few dozen are not.
    assert!(depth_above_1 > 20, "{depth_above_1}");
}

/// The other shared databases hold no 3-D row of the three.
#[test]
fn the_other_databases_hold_no_3d_row() {
    for db in ["gfx906_60.db", "gfx900_56.db", "gfx942130.db"] {
        for s in v4r4_solvers() {
            let rows = read_rows(&common::perfdb_dir().join(db), s.name).unwrap();
            assert!(rows.rows.iter().all(|r| !r.problem.is_3d()), "{db} {}", s.name);
        }
    }
}

/// MIOpen's default passes the rules on every 3-D problem where the solver applies, beyond the
/// tuned ones: a grid of 3-D problems (depths, filter depths, strides, pads, channels, batches).
#[test]
fn the_default_passes_wherever_the_solver_applies() {
    let target = Target::new("gfx908");
    let (mut applicable, mut total) = (0, 0);
    for s in v4r4_solvers() {
        let dir = s.direction.as_char();
        for (d, z, pd, sd) in [(1, 1, 0, 1), (4, 1, 0, 1), (8, 3, 1, 1), (16, 3, 0, 2), (7, 5, 2, 1)] {
            for (c, k) in [(32, 32), (64, 128), (96, 64), (256, 512), (3, 64)] {
                for (hw, f, p, st) in [(7, 1, 0, 1), (14, 3, 1, 1), (28, 3, 1, 2), (56, 1, 0, 2)] {
                    for n in [1, 2, 8, 32] {
                        let key = format!(
                            "3x{c}x{hw}x{hw}x{d}x{f}x{f}x{z}x{k}x{n}x{p}x{p}x{pd}x{st}x{st}x{sd}x1x1x1x0x1xNCDHWxFP32x{dir}"
                        );
                        let Ok(prob) = ConvProblem::from_db_key(&key) else {
                            continue;
                        };
                        total += 1;
                        if s.applicable(&target, &prob).is_err() {
                            continue;
                        }
                        applicable += 1;
                        let def = s.static_default(&target, &prob);
                        assert!(s.rules(&target, &prob).is_valid(&def), "{} {key} {def:?}", s.name);
                        assert_eq!(def, reference_default(key_gemm(&key)), "{} {key}", s.name);
                    }
                }
            }
        }
    }
    println!("default valid on {applicable} applicable of {total} 3-D problems");
    assert!(applicable > 300, "{applicable} of {total}");
}

// ---------------------------------------------------------------------------------------------
// The command line: predict and userdb on 3-D keys

/// `predict` answers a 3-D key of gfx90878's database (its tuned value: the system perf db has
/// it), and a 3-D problem it has not tuned (the batch grown) with a valid config.
#[test]
fn predict_answers_3d_keys() {
    let db = common::perfdb_dir().join("gfx90878.db.txt.bz2");
    let run = |key: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
            .args([
                "predict",
                "--arch",
                "gfx90878",
                "--solver",
                "ConvHipImplicitGemmV4R4Fwd",
            ])
            .args(["--device", "cpu", "--system-db", db.to_str().unwrap(), key])
            .env_remove("TUNEINFER_MODELS")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{key}: {stderr}");
        (String::from_utf8_lossy(&out.stdout).trim().to_string(), stderr)
    };
    let tuned = "3x992x7x7x1x1x1x1x128x512x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF";
    let (config, stderr) = run(tuned);
    assert_eq!(config, "256,128,128,16,4,4", "{stderr}");
    assert!(stderr.contains("perf-db"), "{stderr}");
    let untuned = "3x992x7x7x1x1x1x1x128x576x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF";
    let (config, stderr) = run(untuned);
    let p = db_key(untuned);
    let c = hip_igemm::V4R4_FWD.parse_params(&config).unwrap();
    assert!(
        hip_igemm::V4R4_FWD.rules(&Target::new("gfx90878"), &p).is_valid(&c),
        "{config} {stderr}"
    );
}

/// Runs `userdb --solver all` on MIOpen log lines of one 3-D problem (x 992x2x7x7, batch 576, 128
/// filters 1x1x1; all three directions) for `gpu` with its system perf db; the written file's
/// text (empty when nothing was written) and stderr.
fn userdb_3d(gpu: &str, db: &str) -> (String, String) {
    let dir = common::scratch_dir(&format!("hip-igemm-3d-userdb-{gpu}"));
    let log = dir.join("log.txt");
    let mut text = String::new();
    for f in [1, 2, 4] {
        text.push_str(&format!(
            "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv --spatial_dim 3 -n 576 -c 992 -! 2 \
             -H 7 -W 7 -k 128 -@ 1 -y 1 -x 1 -p 0 -q 0 -$ 0 -u 1 -v 1 -# 1 -l 1 -j 1 -^ 1 --in_layout NCDHW -F {f} -t 1\n"
        ));
    }
    std::fs::write(&log, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(["userdb", "--arch", gpu, "--solver", "all", "--input"])
        .arg(&log)
        .arg("--out")
        .arg(&dir)
        .args(["--miopen-version", "HIP.3_3_0_2d1fd997a", "--device", "cpu"])
        .arg("--system-db")
        .arg(common::perfdb_dir().join(db))
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let written = std::fs::read_to_string(dir.join(format!("{gpu}.HIP.3_3_0_2d1fd997a.udb.txt"))).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    (written, stderr)
}

/// `userdb` writes the 3-D entries under the key MIOpen's databases use for 3-D problems (the
/// 24-field key, `3x...xNCDHWxFP32xD`, as the tuned rows are keyed: a W or B key names dy
/// first), each config valid for its key. On gfx1030_36 (3 held-out 3-D problems per cell, too
/// few for a class of their own) the neighbour cells of V4R4WrW and BwdDataV1R1 write their
/// neighbour's config; its V4R4Fwd network refuses 3-D problems (no record beside it). On
/// MI100 the three leave 3-D problems to MIOpen's default (their 3-D figures: the default is
/// the tuned value on 98.9-99.7%), so nothing of theirs is written.
#[test]
fn userdb_writes_3d_keys_as_miopen_does() {
    let (written, stderr) = userdb_3d("gfx1030_36", "gfx1030_36.db");
    let mut found = Vec::new();
    for line in written.lines() {
        let (key, entries) = line.split_once('=').unwrap();
        for entry in entries.split(';') {
            let (name, params) = entry.split_once(':').unwrap();
            let Some(s) = v4r4_solvers().into_iter().find(|s| s.name == name) else {
                continue;
            };
            let want = match s.direction.as_char() {
                'F' => "3x992x7x7x2x1x1x1x128x576x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF".to_string(),
                // dy: 128 channels, 2x7x7; x: 992.
                d => format!("3x128x7x7x2x1x1x1x992x576x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32x{d}"),
            };
            assert_eq!(key, want, "{name}");
            let p = db_key(key);
            let c = s.parse_params(params).unwrap();
            assert!(s.rules(&Target::new("gfx1030_36"), &p).is_valid(&c), "{name} {params}");
            found.push(name.to_string());
        }
    }
    println!("{written}");
    found.sort();
    assert_eq!(
        found,
        ["ConvHipImplicitGemmBwdDataV1R1", "ConvHipImplicitGemmV4R4WrW"],
        "{written}\n{stderr}"
    );
    let (written, stderr) = userdb_3d("gfx90878", "gfx90878.db.txt.bz2");
    for s in v4r4_solvers() {
        assert!(!written.contains(s.name), "{written}\n{stderr}");
    }
}

/// Training leaves out the rows the network does not take: a HIP solver's 3-D problems, which a
/// network sees as their 2-D twins (`Solver::check_network`); validation keeps them (`eval`
/// scores the 3-D class apart, and the cell's record answers it). MI100's V4R4Fwd, whose
/// database holds both.
#[test]
fn training_leaves_out_the_3d_rows_its_network_does_not_take() {
    let db = common::perfdb_dir().join("gfx90878.db.txt.bz2");
    let out = std::env::temp_dir().join(format!("tuneinfer_train3d_{}", std::process::id()));
    let opts = tuneinfer::train::TrainOptions::new(&db, "gfx90878", "ConvHipImplicitGemmV4R4Fwd", &out);
    let prep = tuneinfer::train::prepare(&opts).unwrap();
    let three_d = |v: &[tuneinfer::data::dataset::Sample]| v.iter().filter(|s| s.problem.is_3d()).count();
    assert_eq!(three_d(&prep.train) + three_d(&prep.early_stop), 0);
    assert!(!prep.train.is_empty() && !prep.early_stop.is_empty());
    let all_3d = three_d(&prep.dataset.samples);
    let val_3d = three_d(&prep.validation);
    assert!(val_3d > 0, "the held-out 3-D problems stay in validation");
    assert_eq!(prep.not_taken_by_network, all_3d - val_3d);
    assert_eq!(
        prep.train.len() + prep.early_stop.len() + prep.validation.len() + prep.not_taken_by_network,
        prep.dataset.samples.len()
    );
}
