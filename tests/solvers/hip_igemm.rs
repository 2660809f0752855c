//! The non-xdlops HIP implicit-GEMM solvers (`ConvHipImplicitGemm{V4R1Fwd,V4R1WrW,V4R4Fwd,
//! V4R4WrW,BwdDataV1R1}`): every numbered rule against hand-derived cases from
//! `../shared/miopen/solvers/ConvHipImplicitGemmNonXdlops.md` (V4R4 type, section E) and
//! `ConvHipImplicitGemmV4R1Fwd.md` (V4R1 type, section 4), the write-ups' counts (36 structural
//! V4R4 tuples, the 3,359,232-config V4R1 domain), the look-ahead against a plain search, the
//! table constraint, applicability, the `HeuristicInit` defaults, and every tuned row of every
//! shared database with the write-ups' counts.

#[allow(unused_imports)]
use crate::common;

use std::collections::BTreeMap;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::data::perfdb::SolverRows;
use tuneinfer::data::textdb;
use tuneinfer::problem::ConvProblem;
use tuneinfer::search::Vocabulary;
use tuneinfer::solvers::hip_igemm::{self, v4r1, v4r4, Gemm, HipIgemmSolver, Kind};
use tuneinfer::solvers::{self, IntRules, Target, Tunable};

fn cfg(s: &str) -> Vec<i64> {
    s.split(',').map(|f| f.trim().parse().unwrap()).collect()
}

fn key(k: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

/// A V4R4 rule context with these GEMM sizes (copy vector bound 4).
fn r4(kind: Kind, m: i128, n: i128, k: i128) -> v4r4::Rules {
    v4r4::Rules::new(kind, Gemm { m, n, k }, 4)
}

fn dims(k: i128, c: i128, n: i128, ho_wo: i128, y_x: i128, g: i128, half: bool) -> v4r1::KernelDims {
    v4r1::KernelDims {
        k,
        c,
        n,
        ho_wo,
        y_x,
        g,
        half,
    }
}

// ---------------------------------------------------------------------------------------------
// V4R4 type (ConvHipImplicitGemmNonXdlops.md section E)

#[test]
fn v4r4_each_rule_hand_derived() {
    for kind in [Kind::V4R4Fwd, Kind::V4R4WrW, Kind::BwdDataV1R1] {
        let r = r4(kind, 128, 128, 16);
        let ok = |s: &str| r.prefix_valid(&cfg(s));
        // The write-up's example.
        assert!(r.is_valid(&cfg("256,128,128,8,4,4")), "{kind:?}");
        // 1. BlockSize in {64,128,256}.
        assert!(ok("64") && ok("128") && ok("256") && !ok("32") && !ok("512") && !ok("96"));
        // 2. GemmMPerBlock in {32,64,128}; look-ahead: {32,64} for 64, {64,128} for 128, 256.
        assert!(ok("64,32") && ok("64,64") && !ok("64,128") && !ok("64,16"));
        assert!(!ok("128,32") && ok("128,64") && ok("128,128") && !ok("256,32") && ok("256,128"));
        // gemm_m % GemmMPerBlock: m = 96 takes only 32.
        let m96 = r4(kind, 96, 128, 16);
        assert!(m96.prefix_valid(&[64, 32]) && !m96.prefix_valid(&[64, 64]));
        // 3. GemmNPerBlock: look-ahead {32,64} for 64 and 128, {64,128} for 256.
        assert!(ok("64,32,32") && ok("64,32,64") && !ok("64,32,128"));
        assert!(ok("128,64,32") && ok("128,64,64") && !ok("128,64,128"));
        assert!(!ok("256,64,32") && ok("256,64,64") && ok("256,64,128"));
        let n96 = r4(kind, 128, 96, 16);
        assert!(n96.prefix_valid(&[64, 32, 32]) && !n96.prefix_valid(&[64, 32, 64]));
        // 4. GemmKPerBlock in {4,8,16}; gemm_k % it.
        assert!(ok("64,32,32,4") && ok("64,32,32,16") && !ok("64,32,32,2") && !ok("64,32,32,32"));
        let k8 = r4(kind, 128, 128, 8);
        assert!(k8.prefix_valid(&[64, 32, 32, 8]) && !k8.prefix_valid(&[64, 32, 32, 16]));
        // 5. GemmMPerThread: M/mt == 16 for 64, 32 for 128 and 256.
        assert!(ok("64,32,32,4,2") && !ok("64,32,32,4,4") && ok("64,64,32,4,4") && !ok("64,64,32,4,2"));
        assert!(ok("128,64,32,4,2") && !ok("128,64,32,4,4") && ok("128,128,32,4,4"));
        assert!(!ok("64,32,32,4,1") && !ok("64,32,32,4,8"));
        // 6. GemmNPerThread: N/nt == 16 for 64 and 128, 32 for 256.
        assert!(ok("64,32,32,4,2,2") && !ok("64,32,32,4,2,4") && ok("64,32,64,4,2,4"));
        assert!(ok("128,64,64,4,2,4") && !ok("128,64,64,4,2,2"));
        assert!(ok("256,64,64,4,2,2") && !ok("256,64,64,4,2,4") && ok("256,64,128,4,2,4"));
        assert!(!ok("256,64,128,4,2,2"));
        assert!(!ok("256,128,128,8,4,4,1"), "longer than 6");
    }
    // 4.3: a = K*M/BS and b = K*N/BS must be > 0 (BwdDataV1R1 with BlockSize 256, M 32, K 4:
    // 4*32/256 = 0); 4.4/4.5 cluster lengths: block / slice > 0.
    let b = r4(Kind::BwdDataV1R1, 128, 128, 16);
    assert!(!b.copies_ok(256, 32, 64, 4), "a = 0");
    assert!(!b.copies_ok(256, 64, 32, 4), "b = 0");
    assert!(b.copies_ok(256, 64, 64, 4), "a = b = 1");
    // Fwd 64,32,32,4: a = 2, vA = gcd(4, 4, 2) = 2: slice (2, 1), clusters (2, 32).
    assert!(r4(Kind::V4R4Fwd, 128, 128, 16).copies_ok(64, 32, 32, 4));
    // LDS: 2*(K*M + K*N)*4; the domain's largest is 32,768 (section E, rule 6).
    assert_eq!(v4r4::lds_bytes(&cfg("256,128,128,16,4,4")), 32_768);
    assert_eq!(v4r4::lds_bytes(&cfg("64,32,32,4,2,2")), 2 * (4 * 32 + 4 * 32) * 4);
}

/// The write-up's net effect: valid iff one of the 36 structural tuples and the GEMM
/// divisibility (so 4.3-4.5 and the LDS bound never decide).
fn structural(c: &[i64]) -> bool {
    let (bs, m, n, mt, nt) = (c[0], c[1], c[2], c[4], c[5]);
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
    ms.contains(&(m, mt)) && ns.contains(&(n, nt))
}

#[test]
fn v4r4_valid_configs_are_the_36_structural_tuples_with_divisibility() {
    let domain: Vec<Vec<i64>> = v4r4::DOMAIN.iter().map(|d| d.to_vec()).collect();
    let mut all = vec![Vec::new()];
    for d in &domain {
        all = all
            .into_iter()
            .flat_map(|p: Vec<i64>| {
                d.iter().map(move |&v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    assert_eq!(all.len(), 324);
    for kind in [Kind::V4R4Fwd, Kind::V4R4WrW, Kind::BwdDataV1R1] {
        for (m, n, k) in [
            (128, 128, 16),
            (32, 32, 4),
            (64, 96, 8),
            (96, 64, 12),
            (256, 512, 48),
            (32, 128, 4),
        ] {
            for bound in [0, 1, 2, 4, 6] {
                let r = v4r4::Rules::new(kind, Gemm { m, n, k }, bound);
                for c in &all {
                    let want = structural(c) && m % c[1] as i128 == 0 && n % c[2] as i128 == 0 && k % c[3] as i128 == 0;
                    assert_eq!(r.is_valid(c), want, "{kind:?} {m} {n} {k} {bound} {c:?}");
                }
            }
        }
        assert_eq!(r4(kind, 128, 128, 16).valid_configs().len(), 36);
    }
    // 128-28-28-3x3-128 FP32 (section H): 36 of 324 for each of the three.
    for s in [&hip_igemm::V4R4_FWD, &hip_igemm::V4R4_WRW, &hip_igemm::BWD_V1R1] {
        let dir = s.direction.as_char();
        let p = key(&format!("128-28-28-3x3-128-28-28-32-1x1-1x1-1x1-0-NCHW-FP32-{dir}"));
        assert_eq!(s.hip_rules(&p).valid_configs().len(), 36, "{}", s.name);
    }
}

#[test]
fn v4r4_default_is_the_first_valid_of_the_list() {
    // Everything divisible: the first entry.
    assert_eq!(
        r4(Kind::V4R4Fwd, 128, 128, 16).default_config(),
        [256, 128, 128, 16, 4, 4]
    );
    // K 8: the second.
    assert_eq!(
        r4(Kind::V4R4Fwd, 128, 128, 8).default_config(),
        [256, 128, 128, 8, 4, 4]
    );
    // M 64: 128,64,128,*,4,4 is never valid (BlockSize 128 needs M/mt == 32 and N/nt == 16:
    // 64/4 and 128/4 break both), so the first with M 64 is 64,64,64,16,4,4.
    assert_eq!(r4(Kind::V4R4WrW, 64, 128, 16).default_config(), [64, 64, 64, 16, 4, 4]);
    for d in &v4r4::DEFAULTS[6..9] {
        assert!(!structural(d) && !r4(Kind::V4R4Fwd, 128, 128, 16).is_valid(d), "{d:?}");
    }
    // N 32: the first with N 32 is 64,64,32,16,4,2.
    assert_eq!(
        r4(Kind::BwdDataV1R1, 128, 32, 16).default_config(),
        [64, 64, 32, 16, 4, 2]
    );
    // M = N = 96, K = 12: only the last one.
    assert_eq!(r4(Kind::V4R4Fwd, 96, 96, 12).default_config(), [64, 32, 32, 4, 2, 2]);
    // Nothing valid (K 2): MIOpen keeps the last one.
    assert_eq!(r4(Kind::V4R4Fwd, 96, 96, 2).default_config(), [64, 32, 32, 4, 2, 2]);
    assert_eq!(v4r4::DEFAULTS.len(), 21);
}

// ---------------------------------------------------------------------------------------------
// V4R1 type (ConvHipImplicitGemmV4R1Fwd.md section 4)

/// 64-56-56-3x3-128 F, batch 32: K 128, C 64, N 32, Ho*Wo 3136, Y*X 9 (E = 576).
fn base() -> v4r1::Rules {
    v4r1::Rules::new(dims(128, 64, 32, 3136, 9, 1, false))
}

const D1: &str = "16,128,8,2,4,4,4,4,4,4,8,2,16,1,2,128";

/// `D1` with position `i` (0-based) set to `v`, cut after it.
fn d1_with(i: usize, v: i64) -> Vec<i64> {
    let mut c = cfg(D1);
    c[i] = v;
    c.truncate(i + 1);
    c
}

#[test]
fn v4r1_each_rule_hand_derived() {
    let r = base();
    // D1 by hand: B = (32/8)*3136 = 12544 % 16 == 0; 128 == 2*4*4*4; 4*4 == 16; block 256;
    // 256 == 8*2*16*1 == 128*2.
    assert!(r.is_valid(&cfg(D1)));
    let bad = |i: usize, v: i64| !r.prefix_valid(&d1_with(i, v));
    let good = |i: usize, v: i64| r.prefix_valid(&d1_with(i, v));
    // 1. BPerBlock in {8,16}.
    assert!(good(0, 8) && good(0, 16) && bad(0, 32) && bad(0, 4));
    // 2. KPerBlock in {16..128}; K % KPerBlock; (K / KPerBlock) % G.
    assert!(good(1, 16) && good(1, 128) && bad(1, 8) && bad(1, 256) && bad(1, 48));
    let k96 = v4r1::Rules::new(dims(96, 64, 32, 3136, 9, 1, false));
    assert!(k96.prefix_valid(&[16, 32]) && !k96.prefix_valid(&[16, 64]));
    let g2 = v4r1::Rules::new(dims(128, 64, 32, 3136, 9, 2, false));
    assert!(!g2.prefix_valid(&[16, 128]), "128/128 = 1, 1 % 2 != 0");
    assert!(g2.prefix_valid(&[16, 64]), "128/64 = 2");
    // 3. EPerBlock in {4,8,16}; E % EPerBlock (E = 12 with C 12, 1x1).
    assert!(good(2, 4) && good(2, 16) && bad(2, 2) && bad(2, 32));
    let e12 = v4r1::Rules::new(dims(128, 12, 32, 3136, 1, 1, false));
    assert!(e12.prefix_valid(&[16, 128, 4]) && !e12.prefix_valid(&[16, 128, 8]));
    // FP16: E = (C/2)*Y*X = 6 with C 12: EPerBlock 4 fails.
    let e6 = v4r1::Rules::new(dims(128, 12, 32, 3136, 1, 1, true));
    assert!(!e6.prefix_valid(&[16, 128, 4]));
    // 4. GemmNRepeat == 2.
    assert!(good(3, 2) && bad(3, 1) && bad(3, 4));
    // 5. GemmMPerThreadSubC in {2,4}.
    assert!(good(4, 2) && good(4, 4) && bad(4, 1) && bad(4, 8));
    // 6. GemmNPerThreadSubC in {2,4}; N % (2*it); B % BPerBlock; FP16/BF16 equal to MSub.
    assert!(good(5, 2) && good(5, 4) && bad(5, 1));
    let n36 = v4r1::Rules::new(dims(128, 64, 36, 3136, 9, 1, false));
    assert!(n36.prefix_valid(&cfg("16,128,8,2,4,2")), "36 % 4 == 0");
    assert!(!n36.prefix_valid(&cfg("16,128,8,2,4,4")), "36 % 8 != 0");
    // Ho*Wo 9, N 32: NSub 4 gives B = 4*9 = 36 (not a multiple of 8 or 16); NSub 2 gives 72
    // (a multiple of 8, not of 16).
    let hw9 = v4r1::Rules::new(dims(128, 64, 32, 9, 9, 1, false));
    assert!(!hw9.prefix_valid(&cfg("8,128,8,2,4,4")) && !hw9.prefix_valid(&cfg("16,128,8,2,4,4")));
    assert!(hw9.prefix_valid(&cfg("8,128,8,2,4,2")) && !hw9.prefix_valid(&cfg("16,128,8,2,4,2")));
    let half = v4r1::Rules::new(dims(128, 64, 32, 3136, 9, 1, true));
    assert!(r.prefix_valid(&cfg("16,128,8,2,4,2")) && !half.prefix_valid(&cfg("16,128,8,2,4,2")));
    assert!(half.prefix_valid(&cfg("16,128,8,2,2,2")));
    // 7., 8. Level-0 clusters in {1,2,4}.
    assert!(good(6, 1) && good(6, 4) && bad(6, 3) && bad(6, 8));
    assert!(good(7, 1) && good(7, 2) && bad(7, 8) && bad(7, 0));
    // 9. KPerBlock == 2*MSub*ML0*ML1: 128 with 4,4 needs ML1 4.
    assert!(good(8, 4) && bad(8, 2) && bad(8, 1) && bad(8, 8));
    assert!(r.prefix_valid(&cfg("16,64,8,2,4,4,2,4,4")), "64 == 2*4*2*4");
    assert!(!r.prefix_valid(&cfg("16,64,8,2,4,4,4,4,4")), "64 / 64 = 1");
    // 10. NL0*NL1 == BPerBlock; 64 <= block_size <= 512.
    assert!(good(9, 4) && bad(9, 2) && bad(9, 1));
    assert!(r.prefix_valid(&cfg("8,128,8,2,4,4,4,4,4,2")), "4*2 == 8: block 128");
    // BPerBlock 8, KPerBlock 16 = 2*2*1*4, NL 2*4: block 1*2*4*4 = 32 < 64.
    assert!(!r.prefix_valid(&cfg("8,16,8,2,2,2,1,2,4,4")));
    assert!(!r.prefix_valid(&cfg("8,16,8,2,2,2,1,4,4,2")), "block 1*4*4*2 = 32 too");
    assert!(
        r.prefix_valid(&cfg("8,16,8,2,2,2,1,4,4")),
        "rule 9 holds: 16 == 2*2*1*4"
    );
    // ML0 1 with KPerBlock 16 forces ML1 4 and NL0*NL1 8: every block is 32, a dead prefix.
    assert!(!r.completable(&cfg("8,16,8,2,2,2,1"), &[1, 2, 4, 8, 16, 32, 64, 128]));
    assert!(!r.prefix_valid(&cfg("8,16,8,2,2,2,2,2,2,4")), "block 2*2*2*4 = 32");
    // BPerBlock 8, KPerBlock 32 = 2*2*2*4: block 2*2*4*4 = 64.
    assert!(r.prefix_valid(&cfg("8,32,8,2,2,2,2,2,4,4")));
    // 11. InBlockCopyClusterLengths_E == EPerBlock.
    assert!(good(10, 8) && bad(10, 4) && bad(10, 16));
    // 12. InBlockCopyClusterLengths_N1 in {1,2}.
    assert!(good(11, 1) && good(11, 2) && bad(11, 4));
    // 13. InBlockCopyClusterLengths_B == BPerBlock.
    assert!(good(12, 16) && bad(12, 8));
    // 14. _N2 in {1,2,4}, NSub % _N2, block == _E*_N1*_B*_N2 (256 == 8*2*16*1).
    assert!(good(13, 1) && bad(13, 2) && bad(13, 4));
    assert!(
        r.prefix_valid(&cfg("16,128,8,2,4,4,4,4,4,4,8,1,16,2")),
        "8*1*16*2 = 256"
    );
    assert!(
        !r.prefix_valid(&cfg("16,128,8,2,4,2,4,4,4,4,8,1,16,4")),
        "NSub 2 % 4 != 0"
    );
    // 15. WeiBlockCopyClusterLengths_E in {1,2,4}, EPerBlock % it.
    assert!(good(14, 1) && good(14, 2) && good(14, 4) && bad(14, 8));
    // 16. _K in {16..128}, KPerBlock % _K, block == _K*_E.
    assert!(good(15, 128) && bad(15, 64) && bad(15, 256));
    assert!(r.is_valid(&cfg("16,128,8,2,4,4,4,4,4,4,8,2,16,1,4,64")), "64*4 = 256");
    // KPerBlock 64 (ML0 2): block 2*4*4*4 = 128 = 64*2 but not 128*1 (64 % 128 != 0).
    assert!(r.is_valid(&cfg("16,64,8,2,4,4,2,4,4,4,8,1,16,1,2,64")));
    assert!(!r.is_valid(&cfg("16,64,8,2,4,4,2,4,4,4,8,1,16,1,1,128")));
    assert!(
        !r.prefix_valid(&cfg("16,128,8,2,4,4,4,4,4,4,8,2,16,1,2,128,1")),
        "longer than 16"
    );
    // LDS = (B + K)*E*EPACK*sizeof*2 + 2*align: D1 FP32 (16+128)*8*1*4*2 + 2*4 = 9224; the
    // domain's largest, 18,440 (FP32, E 16, MSub 4).
    assert_eq!(v4r1::lds_bytes(&cfg(D1), false), Some(9224));
    assert_eq!(
        v4r1::lds_bytes(&cfg("16,128,16,2,4,4,4,4,4,4,16,1,16,1,2,128"), false),
        Some(18_440)
    );
    // FP16: align = max(RWV(16/16), EPACK) = 2: (16+128)*16*2*2*2 + 4.
    assert_eq!(
        v4r1::lds_bytes(&cfg("16,128,16,2,4,4,4,4,4,4,16,1,16,1,2,128"), true),
        Some(18_436)
    );
}

#[test]
fn v4r1_domain_and_tightness_match_the_write_up() {
    let domain: usize = v4r1::DOMAIN.iter().map(|d| d.len()).product();
    assert_eq!(domain, 3_359_232);
    // 128-28-28-3x3-128 FP32, batch 128 (section 6 / section H): 291 valid configs.
    for (s, k) in [
        (
            &hip_igemm::V4R1_FWD,
            "128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F",
        ),
        (
            &hip_igemm::V4R1_WRW,
            "128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-W",
        ),
    ] {
        let n = s.hip_rules(&key(k)).valid_configs().len();
        assert_eq!(n, 291, "{}", s.name);
    }
}

#[test]
fn v4r1_default_is_the_first_valid_step() {
    assert_eq!(base().default_config().to_vec(), cfg(D1));
    // K 64: D1, D2 need KPerBlock 128; D3 (8,64,...): B = (32/8)*3136 % 8 == 0, E 576 % 8.
    let k64 = v4r1::Rules::new(dims(64, 64, 32, 3136, 9, 1, false));
    assert_eq!(k64.default_config(), v4r1::DEFAULTS[2]);
    // K 32: D4 (16,32,4,...).
    let k32 = v4r1::Rules::new(dims(32, 64, 32, 3136, 9, 1, false));
    assert_eq!(k32.default_config(), v4r1::DEFAULTS[3]);
    // K 16: D5 (16,16,4,2,2,2,...).
    let k16 = v4r1::Rules::new(dims(16, 64, 32, 3136, 9, 1, false));
    assert_eq!(k16.default_config(), v4r1::DEFAULTS[4]);
    // Nothing valid (K 8): D6 is kept.
    let k8 = v4r1::Rules::new(dims(8, 64, 32, 3136, 9, 1, false));
    assert_eq!(k8.default_config(), v4r1::DEFAULTS[5]);
    assert!(!k8.is_valid(&v4r1::DEFAULTS[5]));
}

// ---------------------------------------------------------------------------------------------
// Look-ahead and the table constraint

#[test]
fn look_ahead_equals_plain_search() {
    let full: Vec<i64> = vec![1, 2, 4, 8, 16, 32, 64, 128, 256];
    let domains: Vec<Vec<i64>> = vec![
        full.clone(),
        full.iter().copied().filter(|&v| v != 2).collect(),
        full.iter().copied().filter(|&v| v != 4).collect(),
        full.iter().copied().filter(|&v| v != 1).collect(),
        full.iter().copied().filter(|&v| v != 128).collect(),
    ];
    let problems = [
        "64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F",
        "128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-W",
        "64-14-14-1x1-96-14-14-16-0x0-1x1-1x1-0-NCHW-FP16-F",
    ];
    let (mut yes, mut no) = (0, 0);
    for s in hip_igemm::solvers() {
        for k in problems {
            let mut p = key(k);
            p.direction = s.direction;
            let r = s.hip_rules(&p);
            for domain in &domains {
                // Valid prefixes up to 9 values, every 5th of each length.
                let depth = 9.min(r.config_len());
                let prefixes = common::valid_prefixes(&r, domain, depth);
                let mut checked = 0;
                for len in 1..=depth {
                    for q in prefixes.iter().filter(|q| q.len() == len).step_by(5) {
                        let want = common::plain_completable(&r, &mut q.clone(), domain);
                        assert_eq!(r.completable(q, domain), want, "{} {k} {q:?} {domain:?}", s.name);
                        if want {
                            yes += 1
                        } else {
                            no += 1
                        }
                        checked += 1;
                    }
                }
                assert!(checked > 0);
            }
        }
    }
    assert!(yes > 100 && no > 10, "{yes} completable, {no} dead");
}

#[test]
fn the_search_constraint_is_the_table_of_valid_configs() {
    use tuneinfer::format::metadata::KtnMetadata;
    let values: Vec<String> = ["-1", "1", "2", "3", "4", "8", "16", "32", "64", "128", "256"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let vocab = Vocabulary::from_token_values(&values);
    let ints: Vec<i64> = vocab.values.iter().map(|v| v.parse().unwrap()).collect();
    let domain: Vec<i64> = ints.iter().copied().filter(|&v| v != -1).collect();
    for s in hip_igemm::solvers() {
        let solver = solvers::by_name(s.name).unwrap();
        assert_eq!(solver.gpu_search(), solvers::GpuSearch::Table, "{}", s.name);
        let n = s.param_names().len();
        let meta = KtnMetadata {
            predict_type: 0,
            num_tuning_params: [("fwd", n), ("bwd", n), ("wrw", n)]
                .into_iter()
                .map(|(d, k)| (d.to_string(), k))
                .collect(),
            token_values: values.clone(),
        };
        let mut p = key("128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F");
        p.direction = s.direction;
        let target = Target::new("gfx906");
        let c = solver.constraint(&target, &p, &vocab, &meta).unwrap();
        assert!(c.gpu_table().is_some(), "{}", s.name);
        let rules = s.rules(&target, &p);
        let mut stack: Vec<Vec<u32>> = vec![Vec::new()];
        let mut complete = 0;
        while let Some(chosen) = stack.pop() {
            let prefix: Vec<i64> = chosen.iter().map(|&v| ints[v as usize]).collect();
            if chosen.len() == n {
                complete += 1;
                assert!(rules.is_valid(&prefix));
                assert_eq!(
                    c.config_text(&chosen).as_deref(),
                    Some(s.format_params(&prefix).as_str())
                );
                continue;
            }
            for v in 0..vocab.values.len() as u32 {
                let mut q = prefix.clone();
                q.push(ints[v as usize]);
                let want = ints[v as usize] != -1 && rules.prefix_valid(&q) && rules.completable(&q, &domain);
                assert_eq!(c.accepts(&chosen, v), want, "{} {q:?}", s.name);
                if want {
                    let mut next = chosen.clone();
                    next.push(v);
                    stack.push(next);
                }
            }
        }
        assert_eq!(complete, if s.kind.is_v4r1() { 291 } else { 36 }, "{}", s.name);
    }
}

// ---------------------------------------------------------------------------------------------
// Applicability, default, registration

#[test]
fn applicability_per_arch_direction_type_and_sizes() {
    let err = |s: &HipIgemmSolver, arch: &str, k: &str| {
        s.applicable(&Target::new(arch), &key(k)).err().map(|e| e.to_string())
    };
    let f = "128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F";
    let b = "128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-B";
    let w = "128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-W";
    let dir_key = |s: &HipIgemmSolver| match s.direction {
        tuneinfer::problem::Direction::Forward => f,
        tuneinfer::problem::Direction::BackwardData => b,
        tuneinfer::problem::Direction::BackwardWeights => w,
    };
    for s in hip_igemm::solvers() {
        let k = dir_key(s);
        // Arches: the deprecated list intersected with composable_kernel's hardware.
        for arch in [
            "gfx900",
            "gfx906",
            "gfx906_60",
            "gfx908",
            "gfx90a",
            "gfx1030",
            "gfx1031",
            "gfx803",
        ] {
            assert_eq!(err(s, arch, k), None, "{} {arch}", s.name);
        }
        for arch in ["gfx942", "gfx1100", "gfx940", "gfx1101"] {
            assert!(err(s, arch, k).unwrap().contains("arch"), "{} {arch}", s.name);
        }
        let gfx803_36 = Target {
            compute_units: Some(36),
            ..Target::new("gfx803")
        };
        assert!(s.applicable(&gfx803_36, &key(k)).is_err());
        // Direction.
        for other in [f, b, w] {
            if other != k {
                assert!(err(s, "gfx906", other).unwrap().contains("direction"), "{}", s.name);
            }
        }
        // NCHW only.
        assert!(err(s, "gfx906", &k.replace("NCHW", "NHWC")).unwrap().contains("NCHW"));
    }
    // Data types: V4R4Fwd/WrW FP32 only; BwdDataV1R1 FP32 (BF16 only behind an env switch);
    // V4R1 FP32, FP16, BF16 (V4R1WrW not FP16 on gfx90a).
    for t in ["FP16", "BF16"] {
        assert!(err(&hip_igemm::V4R4_FWD, "gfx906", &f.replace("FP32", t)).is_some());
        assert!(err(&hip_igemm::V4R4_WRW, "gfx906", &w.replace("FP32", t)).is_some());
        assert!(err(&hip_igemm::BWD_V1R1, "gfx906", &b.replace("FP32", t))
            .unwrap()
            .contains(t));
        assert_eq!(err(&hip_igemm::V4R1_FWD, "gfx906", &f.replace("FP32", t)), None);
        assert_eq!(err(&hip_igemm::V4R1_WRW, "gfx906", &w.replace("FP32", t)), None);
    }
    assert!(err(&hip_igemm::V4R1_WRW, "gfx90a", &w.replace("FP32", "FP16"))
        .unwrap()
        .contains("gfx90a"));
    assert_eq!(err(&hip_igemm::V4R1_WRW, "gfx90a", &w.replace("FP32", "BF16")), None);
    assert_eq!(err(&hip_igemm::V4R1_FWD, "gfx90a", &f.replace("FP32", "FP16")), None);
    // V4R4 GEMM divisibility (section D): Fwd gemm_m = K 96 % 32 == 0; K 48 is not.
    assert_eq!(
        err(
            &hip_igemm::V4R4_FWD,
            "gfx906",
            "128-28-28-3x3-96-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F"
        ),
        None
    );
    assert!(err(
        &hip_igemm::V4R4_FWD,
        "gfx906",
        "128-28-28-3x3-48-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F"
    )
    .unwrap()
    .contains("GEMM M"));
    // Fwd gemm_n = N*Ho*Wo = 1*7*7 = 49; gemm_k = C*Y*X = 3*1*1 = 3.
    assert!(err(
        &hip_igemm::V4R4_FWD,
        "gfx906",
        "128-7-7-1x1-128-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F"
    )
    .unwrap()
    .contains("GEMM N"));
    assert!(err(
        &hip_igemm::V4R4_FWD,
        "gfx906",
        "3-32-32-1x1-128-32-32-32-0x0-1x1-1x1-0-NCHW-FP32-F"
    )
    .unwrap()
    .contains("GEMM K"));
    // WrW: gemm_k = N*Ho*Wo (dy), gemm_n = C*Y*X: C 8*9 = 72 is not a multiple of 32.
    assert!(err(
        &hip_igemm::V4R4_WRW,
        "gfx906",
        "128-28-28-3x3-8-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-W"
    )
    .unwrap()
    .contains("GEMM N"));
    // BwdData: gemm_m = C*Y*X, gemm_k = K: K (key in) 6 is not a multiple of 4.
    assert!(err(
        &hip_igemm::BWD_V1R1,
        "gfx906",
        "6-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-B"
    )
    .unwrap()
    .contains("GEMM K"));
    // Groups: V4R4 needs 1.
    let mut grouped = key(f);
    grouped.groups = 2;
    assert!(hip_igemm::V4R4_FWD
        .applicable(&Target::new("gfx906"), &grouped)
        .is_err());
    // V4R1Fwd (section 3): N % 8, (N*Ho*Wo) % 32, (N*Ho*Wo*K) % 1024, (C*Y*X) % 8, K % 16.
    assert!(err(
        &hip_igemm::V4R1_FWD,
        "gfx906",
        "128-28-28-3x3-128-28-28-4-1x1-1x1-1x1-0-NCHW-FP32-F"
    )
    .unwrap()
    .contains("N = 4"));
    assert!(err(
        &hip_igemm::V4R1_FWD,
        "gfx906",
        "128-28-28-3x3-24-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F"
    )
    .unwrap()
    .contains("K/G = 24"));
    // C*Y*X = 3*9 = 27 % 8.
    assert!(err(
        &hip_igemm::V4R1_FWD,
        "gfx906",
        "3-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F"
    )
    .is_some());
    // FP16: C*Y*X % 16: C 8, 1x1 = 8 fails; EPACK: C odd.
    assert!(err(
        &hip_igemm::V4R1_FWD,
        "gfx906",
        "8-28-28-1x1-128-28-28-128-0x0-1x1-1x1-0-NCHW-FP16-F"
    )
    .is_some());
    assert_eq!(
        err(
            &hip_igemm::V4R1_FWD,
            "gfx906",
            "8-28-28-1x1-128-28-28-128-0x0-1x1-1x1-0-NCHW-FP32-F"
        ),
        None
    );
    // V4R1WrW (section G): C/G (x's, key out) % 8; (C*Y*X) % 64; K/G (dy's, key in) % 16.
    assert!(err(
        &hip_igemm::V4R1_WRW,
        "gfx906",
        "128-28-28-3x3-4-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-W"
    )
    .is_some());
    assert!(err(
        &hip_igemm::V4R1_WRW,
        "gfx906",
        "128-28-28-1x1-8-28-28-128-0x0-1x1-1x1-0-NCHW-FP32-W"
    )
    .unwrap()
    .contains("64"));
    assert!(err(
        &hip_igemm::V4R1_WRW,
        "gfx906",
        "24-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-W"
    )
    .unwrap()
    .contains("K/G = 24"));
    // A tensor of 2 GiB or more: x = 256*256*256*64*4 bytes = 4 GiB.
    assert!(err(
        &hip_igemm::V4R4_FWD,
        "gfx906",
        "256-256-256-1x1-256-256-256-64-0x0-1x1-1x1-0-NCHW-FP32-F"
    )
    .unwrap()
    .contains("GiB"));
}

#[test]
fn the_five_are_registered_parse_and_default_valid_where_applicable() {
    for s in hip_igemm::solvers() {
        let solver = solvers::by_name(s.name).unwrap_or_else(|e| panic!("{e}"));
        let t = solver.tunable().expect("tunable");
        assert_eq!(t.param_names().len(), if s.kind.is_v4r1() { 16 } else { 6 });
        assert_eq!(t.feature_names().len(), 12);
    }
    let x = &hip_igemm::V4R1_WRW;
    assert_eq!(x.parse_params(D1).unwrap(), cfg(D1));
    assert!(x.parse_params("256,128,128,8,4,4").is_err());
    assert!(hip_igemm::V4R4_FWD.parse_params(D1).is_err());
    assert_eq!(
        hip_igemm::V4R4_FWD.format_params(&cfg("256,128,128,8,4,4")),
        "256,128,128,8,4,4"
    );
    let p = key("64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F");
    let solver = solvers::by_name("ConvHipImplicitGemmV4R1Fwd").unwrap();
    let values = solver.fallback(&Target::new("gfx906"), &p).unwrap();
    assert_eq!(solver.format_config(&values), D1);
}

// ---------------------------------------------------------------------------------------------
// Every tuned row

/// (solver, database, rows, unreadable rows, not applicable) per section H of
/// ConvHipImplicitGemmNonXdlops.md and section 6 of ConvHipImplicitGemmV4R1Fwd.md. Unreadable:
/// 8 keys per text database of V4R1Fwd and of V4R4Fwd whose output would be empty (in_h 1 with
/// a 3x3 or 7x7 filter, no pad). The write-ups' 3-D rows (24,286: gfx1030_36's 11 of each of
/// V4R4Fwd, V4R4WrW and BwdDataV1R1, the text databases' NCDHW rows) are applicable and pass
/// since issue 45 (item 3); `tests/solvers/hip_igemm_3d.rs` checks them apart.
/// The V4R1Fwd rows of the gfx90878 / gfx90a68 text databases are not in its write-up (it
/// checked the sqlite ones); all of them pass the rules too.
const EXPECTED: [(&str, &str, usize, usize, usize); 25] = [
    ("ConvHipImplicitGemmV4R1Fwd", "gfx906_60.db", 2_919, 0, 7),
    ("ConvHipImplicitGemmV4R1Fwd", "gfx900_56.db", 221, 0, 0),
    ("ConvHipImplicitGemmV4R1Fwd", "gfx1030_36.db", 1_092, 0, 4),
    ("ConvHipImplicitGemmV4R1Fwd", "gfx90878.db.txt.bz2", 12_353, 8, 0),
    ("ConvHipImplicitGemmV4R1Fwd", "gfx90a68.db.txt.bz2", 12_541, 8, 0),
    ("ConvHipImplicitGemmV4R1WrW", "gfx906_60.db", 701, 0, 0),
    ("ConvHipImplicitGemmV4R1WrW", "gfx900_56.db", 210, 0, 0),
    ("ConvHipImplicitGemmV4R1WrW", "gfx1030_36.db", 1_072, 0, 8),
    ("ConvHipImplicitGemmV4R1WrW", "gfx90878.db.txt.bz2", 13_109, 0, 0),
    ("ConvHipImplicitGemmV4R1WrW", "gfx90a68.db.txt.bz2", 9_589, 0, 0),
    ("ConvHipImplicitGemmV4R4Fwd", "gfx906_60.db", 599, 0, 0),
    ("ConvHipImplicitGemmV4R4Fwd", "gfx900_56.db", 620, 0, 1),
    ("ConvHipImplicitGemmV4R4Fwd", "gfx1030_36.db", 335, 0, 0),
    ("ConvHipImplicitGemmV4R4Fwd", "gfx90878.db.txt.bz2", 10_908, 8, 0),
    ("ConvHipImplicitGemmV4R4Fwd", "gfx90a68.db.txt.bz2", 10_968, 8, 0),
    ("ConvHipImplicitGemmV4R4WrW", "gfx906_60.db", 632, 0, 0),
    ("ConvHipImplicitGemmV4R4WrW", "gfx900_56.db", 1_327, 0, 3),
    ("ConvHipImplicitGemmV4R4WrW", "gfx1030_36.db", 396, 0, 1),
    ("ConvHipImplicitGemmV4R4WrW", "gfx90878.db.txt.bz2", 12_981, 0, 0),
    ("ConvHipImplicitGemmV4R4WrW", "gfx90a68.db.txt.bz2", 12_976, 0, 0),
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx906_60.db", 2_346, 0, 15),
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx900_56.db", 3_439, 0, 689),
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx1030_36.db", 424, 0, 1),
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx90878.db.txt.bz2", 10_970, 0, 0),
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx90a68.db.txt.bz2", 11_034, 0, 0),
];

fn rows_of(db: &str, solver: &str, texts: &mut BTreeMap<String, String>) -> SolverRows {
    let path = common::perfdb_dir().join(db);
    if db.ends_with(".bz2") {
        let text = texts
            .entry(db.to_string())
            .or_insert_with(|| textdb::read_text(&path).unwrap_or_else(|e| panic!("{e}")));
        textdb::solver_rows_from_text(text, solver)
    } else {
        read_rows(&path, solver).unwrap_or_else(|e| panic!("{e}"))
    }
}

#[test]
fn every_tuned_row_passes_the_rules_and_the_default_is_valid() {
    let mut texts = BTreeMap::new();
    let (mut total, mut checked) = (0, 0);
    let mut mismatches = Vec::new();
    for (name, db, rows_want, empty_want, na_want) in EXPECTED {
        let s = hip_igemm::solvers().into_iter().find(|s| s.name == name).unwrap();
        let target = Target::new(db.split('.').next().unwrap());
        let rows = rows_of(db, name, &mut texts);
        let ds = build(&rows, s, &target);
        let r = &ds.report;
        println!("{db} {name}: {}", r.summary());
        for (why, n) in &r.not_applicable_reasons {
            println!("  {n} not applicable: {why}");
        }
        if (r.rows, r.malformed_problem, r.not_applicable) != (rows_want, empty_want, na_want) {
            mismatches.push(format!(
                "{db} {name}: {:?} != {:?}",
                (r.rows, r.malformed_problem, r.not_applicable),
                (rows_want, empty_want, na_want)
            ));
        }
        // Unreadable: keys whose output would be empty.
        assert!(
            r.malformed_reasons.keys().all(|k| k.contains("would be empty")),
            "{:?}",
            r.malformed_reasons
        );
        assert_eq!((r.malformed_params, r.rule_violations), (0, 0), "{db} {name}");
        // The static default is valid on every applicable row problem.
        for row in &rows.rows {
            if s.applicable(&target, &row.problem).is_ok() {
                let d = s.static_default(&target, &row.problem);
                assert!(s.rules(&target, &row.problem).is_valid(&d), "{name} {}", row.problem);
                checked += 1;
            }
        }
        total += r.rows;
    }
    println!("{total} rows, the default checked on {checked} applicable ones");
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    // The other shared databases hold none of the five.
    for db in [
        "gfx942130.db",
        "history/gfx906_60.2019.cd.pdb.txt",
        "history/gfx900_56.2019.cd.pdb.txt",
        "history/gfx906_64.2019.cd.pdb.txt",
    ] {
        for s in hip_igemm::solvers() {
            let rows = read_rows(&common::perfdb_dir().join(db), s.name).unwrap();
            assert_eq!(rows.rows.len() + rows.rejected.len(), 0, "{db} {}", s.name);
        }
    }
    let text = textdb::read_text(&common::perfdb_dir().join("gfx942130.db.txt.bz2")).unwrap();
    for s in hip_igemm::solvers() {
        let rows = textdb::solver_rows_from_text(&text, s.name);
        assert_eq!(rows.rows.len() + rows.rejected.len(), 0, "gfx942130 text {}", s.name);
    }
}
