//! The MLIR implicit-GEMM solvers (`ConvMlirIgemm{Fwd,Bwd,WrW}` and their `Xdlops` twins):
//! every rule against hand-derived cases from `../shared/miopen/solvers/ConvMlirIgemm.md` and
//! `ConvMlirIgemmXdlops.md`, the counts of valid configs the write-ups give, the look-ahead
//! against a plain search, applicability, the static default (MIOpen's heuristic request), and
//! every tuned row of gfx906_60.db (non-xdlops) and of the gfx908 / gfx90a text databases
//! (xdlops), with the `-2` rows counted apart.

#[allow(unused_imports)]
use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use tuneinfer::data::dataset::build;
use tuneinfer::data::perfdb::{SolverRows, TunedRow};
use tuneinfer::data::textdb;
use tuneinfer::problem::ConvProblem;
use tuneinfer::search::{Constraint, Vocabulary};
use tuneinfer::solvers::mlir_igemm::{self, rules, xdlops, DataType, MlirSolver};
use tuneinfer::solvers::{self, IntRules, Target, Tunable};

fn cfg(s: &str) -> Vec<i64> {
    s.split(',').map(|f| f.trim().parse().unwrap()).collect()
}

/// A problem from MIOpen's dash key (in = x for F, dy for B/W).
fn key(k: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

const F32: &str = "64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F";

fn non_x() -> rules::Rules {
    rules::Rules
}

fn xr(t: DataType) -> xdlops::Rules {
    xdlops::Rules::new(t)
}

// ---------------------------------------------------------------------------------------------
// Non-xdlops rules (ConvMlirIgemm.md section 5)

#[test]
fn non_xdlops_each_rule_hand_derived() {
    let r = non_x();
    let ok = |s: &str| r.prefix_valid(&cfg(s));
    // The most frequent gfx906 row (section 2).
    assert!(r.is_valid(&cfg("256,32,32,16,2,2")));
    // 1. D/R1: bs in {64, 128, 256}.
    assert!(ok("64") && ok("128") && ok("256"));
    assert!(!ok("32") && !ok("96") && !ok("512") && !ok("-2"));
    // 2./3. D: M, N in {32, 64, 128}.
    assert!(ok("64,32") && ok("64,128") && !ok("64,16") && !ok("64,256"));
    assert!(ok("64,32,64") && !ok("64,32,16") && !ok("64,32,256"));
    // 4. D: K in {4, 8, 16}; R2: K*M >= bs and K*N >= bs.
    assert!(!ok("64,32,32,2") && !ok("64,32,32,32"));
    assert!(ok("64,32,32,4"), "4*32 = 128 >= 64");
    assert!(ok("128,32,32,4"), "4*32 = 128 >= 128");
    assert!(!ok("256,32,32,4"), "4*32 = 128 < 256");
    assert!(!ok("256,64,32,4"), "the N side: 4*32 < 256");
    assert!(!ok("256,32,64,4"), "the M side: 4*32 < 256");
    assert!(ok("256,64,64,4") && ok("256,32,32,8"));
    // 5. D/R3: mt in {2, 4}; R4: M % (mt * 4 * mCuwaves) == 0 (mCuwaves 2, 4, 4).
    assert!(!ok("64,32,32,4,1") && !ok("64,32,32,4,8"));
    assert!(ok("64,32,32,4,4"), "32 % (4*4*2) == 0");
    assert!(!ok("128,32,32,4,4"), "32 % (4*4*4) != 0");
    assert!(ok("128,64,32,4,4") && ok("128,32,32,4,2"));
    assert!(!ok("256,32,64,8,4") && ok("256,64,32,8,4"));
    // 6. D/R3: nt in {2, 4}; R4': N % (nt * 4 * nCuwaves) == 0 (nCuwaves 2, 2, 4).
    assert!(!ok("64,32,32,4,2,1") && !ok("64,32,32,4,2,8"));
    assert!(ok("128,64,32,8,2,4"), "128: nCuwaves 2, 32 % (4*4*2) == 0");
    assert!(!ok("256,64,32,8,2,4"), "256: nCuwaves 4, 32 % (4*4*4) != 0");
    assert!(ok("256,64,64,8,2,4"));
    // R5 (LDS): (K*M + K*N) * 4 bytes for mt = nt; never binds inside the domain.
    assert_eq!(rules::lds_bytes(&cfg("256,128,128,16,4,4")), (16 * 128 + 16 * 128) * 4);
    assert_eq!(rules::lds_bytes(&cfg("64,32,32,4,2,2")), (4 * 32 + 4 * 32) * 4);
    // Longer than 6: never valid.
    assert!(!ok("256,32,32,16,2,2,0"));
    // Block structures (deriveGeneralGemmBlockStructure).
    assert_eq!(rules::cuwaves(64), Some((2, 2)));
    assert_eq!(rules::cuwaves(128), Some((4, 2)));
    assert_eq!(rules::cuwaves(256), Some((4, 4)));
    assert_eq!(rules::cuwaves(512), None);
}

#[test]
fn non_xdlops_264_of_324_valid_hand_counted() {
    let all = rules::valid_configs();
    assert_eq!(all.len(), 264, "ConvMlirIgemm.md section 5");
    let domain: usize = rules::DOMAIN.iter().map(|d| d.len()).product();
    assert_eq!(domain, 324);
    // By hand: bs 64 keeps all 3*3*3*2*2 = 108; bs 128 keeps every (M, N, K) (R2 holds) with
    // mt 4 only for M >= 64: 5 (M, mt) pairs * 3 N * 3 K * 2 nt = 90; bs 256: (M, N, K) with
    // K*min(M,N) >= 256 is 4 (K 4) + 9 + 9, each with f(M)*f(N) thread pairs, f(32) = 1,
    // f(64) = f(128) = 2: 4*4 + 25 + 25 = 66.
    let by_bs = |bs| all.iter().filter(|c| c[0] == bs).count();
    assert_eq!((by_bs(64), by_bs(128), by_bs(256)), (108, 90, 66));
    // Every config is valid with every data type's rules (the rules ignore it) and the same
    // for every problem.
    for s in [&mlir_igemm::FWD, &mlir_igemm::BWD, &mlir_igemm::WRW] {
        for t in [DataType::Fp32, DataType::Fp16, DataType::Int8] {
            let r = s.rules_for(t);
            assert!(all.iter().all(|c| r.is_valid(c)));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Xdlops rules (ConvMlirIgemmXdlops.md section 5)

#[test]
fn xdlops_each_rule_hand_derived() {
    let (f32r, f16r, i8r) = (xr(DataType::Fp32), xr(DataType::Fp16), xr(DataType::Int8));
    let ok = |r: &xdlops::Rules, s: &str| r.prefix_valid(&cfg(s));
    // The most frequent gfx908 row (section 2): waves (16,16), K 8 % 4 == 0, bs 64*2*2 = 256,
    // copy 8*4*32 = 1024 >= 256, LDS (32+32)*8*4*4 = 8192.
    assert!(f32r.is_valid(&cfg("32,32,8,16,16,4,1,1")));
    for r in [&f32r, &f16r, &i8r] {
        // 1. D: M per block a power of two in 16..256.
        assert!(ok(r, "16") && ok(r, "256") && !ok(r, "8") && !ok(r, "512") && !ok(r, "48") && !ok(r, "-2"));
        // 2. D: N per block a power of two in 4..256.
        assert!(ok(r, "16,4") && ok(r, "16,256") && !ok(r, "16,2") && !ok(r, "16,512") && !ok(r, "16,24"));
        // 3. D: K in {1, 2, 4, 8} (INT8 up to 32).
        assert!(ok(r, "16,16,1") && ok(r, "16,16,8") && !ok(r, "16,16,3") && !ok(r, "16,16,64"));
        // 4. D: M per wave a power of two in 4..128; X1: M % MW == 0.
        assert!(ok(r, "64,64,4,64") && !ok(r, "32,64,4,64") && !ok(r, "64,64,4,2") && !ok(r, "256,64,4,256"));
        // 7. X9: forceUnroll = 1; 8. bCopyMore = 1 (what MIOpen's search writes).
        assert!(!ok(r, "32,32,8,16,16,4,0") && !ok(r, "32,32,8,16,16,4,1,0"));
        assert!(!ok(r, "32,32,8,16,16,4,1,1,1"), "longer than 8");
    }
    assert!(
        ok(&i8r, "16,16,16") && ok(&i8r, "16,16,32"),
        "INT8's K domain runs to 32"
    );
    assert!(!ok(&f16r, "16,16,16") && !ok(&f32r, "16,16,32"));
    // 5. X2/X5: a wave tile with an instruction.
    for (mw, nw) in xdlops::WAVES_FP {
        // One wave along N; along M as many as make the tile 16 (4 for (4,64): bs 256).
        let (m, n) = (mw.max(16), nw);
        let ok_fp = ok(&f16r, &format!("{m},{n},4,{mw},{nw}"));
        assert!(ok_fp, "({mw},{nw}) is in the FP wave table");
    }
    assert!(
        !ok(&f16r, "256,256,4,128,128"),
        "(128,128): in the table, but no instruction"
    );
    assert!(!ok(&f16r, "64,32,4,32,16"), "(32,16): not in the table");
    assert!(!ok(&f16r, "64,64,4,16,32"), "(16,32): not in the table");
    // INT8: only (32,32) and (16,16).
    assert!(ok(&i8r, "64,64,4,32,32") && ok(&i8r, "32,32,4,16,16"));
    assert!(!ok(&i8r, "128,128,4,64,64") && ok(&f16r, "128,128,4,64,64"));
    assert!(!ok(&i8r, "16,64,4,4,64") && ok(&f16r, "16,64,4,4,64"));
    // K even for (32,32), a multiple of 4 for (16,16).
    assert!(!ok(&f32r, "64,64,1,32,32") && ok(&f32r, "64,64,2,32,32"));
    assert!(!ok(&f32r, "32,32,2,16,16") && ok(&f32r, "32,32,4,16,16"));
    assert!(
        ok(&f32r, "128,128,1,64,64"),
        "K = 1 is fine for (64,64) in the tuned rocMLIR"
    );
    // X3: N % NW == 0.
    assert!(!ok(&f16r, "64,32,4,64,64") && ok(&f16r, "64,64,4,64,64"));
    // X4: 64 <= bs = 64 * (M/MW) * (N/NW) <= 256.
    assert!(!ok(&f16r, "256,128,4,32,32"), "8 * 4 waves");
    assert!(ok(&f16r, "128,128,4,64,64") && ok(&f16r, "256,64,4,64,64"));
    assert!(!ok(&f16r, "256,128,4,64,64"), "4 * 2 waves = 512");
    // 6. D: KPack in {4, 8}; O1: FP32 only 4.
    assert!(ok(&f16r, "64,64,4,64,64,8") && !ok(&f32r, "64,64,4,64,64,8") && ok(&f32r, "64,64,4,64,64,4"));
    assert!(!ok(&f16r, "64,64,4,64,64,2") && !ok(&f16r, "64,64,4,64,64,1") && !ok(&f16r, "64,64,4,64,64,16"));
    // X7: K*KP*M >= bs and K*KP*N >= bs. (16,64) tile with (4,64) waves: bs 64*4 = 256;
    // K 1: 1*4*16 = 64 < 256; K 4: 4*4*16 = 256.
    assert!(!ok(&f32r, "16,64,1,4,64,4") && ok(&f32r, "16,64,4,4,64,4"));
    // The N side: (64,16) waves, 128 x 16 tile: bs 128; K 1: 1*4*16 = 64 < 128; K 2: 128.
    assert!(!ok(&f16r, "128,16,1,64,16,4") && ok(&f16r, "128,16,2,64,16,4"));
    // X8: (M + N) * K * KP * 4 <= 65536. 256,128 with (128,64) waves: bs 256.
    assert!(ok(&f16r, "256,128,8,128,64,4"), "384 * 32 * 4 = 49152");
    assert!(ok(&f16r, "256,128,4,128,64,8"), "384 * 32 * 4 = 49152");
    assert!(!ok(&f16r, "256,128,8,128,64,8"), "384 * 64 * 4 = 98304");
    assert!(ok(&i8r, "64,64,16,32,32,8"), "128 * 128 * 4 = 65536");
    assert!(!ok(&i8r, "64,64,32,32,32,8"), "128 * 256 * 4 = 131072");
}

#[test]
fn xdlops_valid_config_counts_match_the_write_up() {
    // Section 5: within the search domain (bCopyMore 1), 190 FP32, 380 FP16, 97 INT8.
    assert_eq!(xr(DataType::Fp32).valid_configs().len(), 190);
    assert_eq!(xr(DataType::Fp16).valid_configs().len(), 380);
    assert_eq!(xr(DataType::Int8).valid_configs().len(), 97);
    // FP32's are FP16's with KPack 4 (O1 is the only difference between them).
    let f16: BTreeSet<Vec<i64>> = xr(DataType::Fp16).valid_configs().iter().map(|c| c.to_vec()).collect();
    let f32: BTreeSet<Vec<i64>> = xr(DataType::Fp32).valid_configs().iter().map(|c| c.to_vec()).collect();
    assert!(f32.iter().all(|c| c[5] == 4 && f16.contains(c)));
    assert_eq!(f16.iter().filter(|c| c[5] == 4).count(), 190);
    // The domain products of section 2: 2*7*5*6*4*2*4 = 13,440 (INT8 20,160) with both flags
    // free; every valid config has both flags 1.
    assert!(f16.iter().all(|c| c[6] == 1 && c[7] == 1));
}

// ---------------------------------------------------------------------------------------------
// Look-ahead

#[test]
fn look_ahead_equals_plain_search() {
    let full: Vec<i64> = vec![0, 1, 2, 4, 8, 16, 32, 64, 128, 256];
    // Domains missing a value some positions need: dead prefixes appear.
    let domains: Vec<Vec<i64>> = vec![
        full.clone(),
        full.iter().copied().filter(|&v| v != 2).collect(),
        full.iter().copied().filter(|&v| v != 4).collect(),
        full.iter().copied().filter(|&v| v != 16).collect(),
        full.iter().copied().filter(|&v| v != 1).collect(),
        vec![1, 4, 8, 16, 32, 64],
    ];
    let rule_sets: Vec<(&str, Box<dyn IntRules>)> = vec![
        ("non-xdlops", Box::new(non_x())),
        ("xdlops FP32", Box::new(xr(DataType::Fp32))),
        ("xdlops FP16", Box::new(xr(DataType::Fp16))),
        ("xdlops INT8", Box::new(xr(DataType::Int8))),
    ];
    let mut kinds = (0, 0);
    for (name, r) in &rule_sets {
        for domain in &domains {
            for p in common::valid_prefixes(r.as_ref(), domain, 5) {
                let want = common::plain_completable(r.as_ref(), &mut p.clone(), domain);
                assert_eq!(r.completable(&p, domain), want, "{name} {p:?} over {domain:?}");
                if want {
                    kinds.0 += 1;
                } else {
                    kinds.1 += 1;
                }
            }
            // Invalid prefixes are never completable.
            assert!(!r.completable(&[3], domain) && !r.completable(&[-2], domain));
        }
    }
    // Both kinds occur: e.g. xdlops `16,4` is prefix-valid but N 4 < every N per wave.
    assert!(kinds.0 > 1000 && kinds.1 > 100, "{kinds:?}");
    assert!(xr(DataType::Fp16).prefix_valid(&[16, 4]) && !xr(DataType::Fp16).completable(&[16, 4], &full));
    // Non-xdlops with 2 missing: bs 256 with M 32 needs mt 2.
    assert!(non_x().prefix_valid(&[256, 32]) && !non_x().completable(&[256, 32], &domains[1]));
    assert!(non_x().completable(&[256, 64], &domains[1]));
}

#[test]
fn the_search_constraint_is_the_table_of_valid_configs() {
    // A vocabulary holding every value of the domain (and the end token and -2): the table has
    // exactly the valid configs, none of them the heuristic request.
    let values: Vec<String> = ["-1", "-2", "0", "1", "2", "4", "8", "16", "32", "64", "128", "256"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let vocab = Vocabulary::from_token_values(&values);
    let t = tuneinfer::solvers::tunable::table_constraint(&non_x(), &vocab, &|c| format!("{c:?}")).unwrap();
    assert_eq!(t.table.rows(), 264);
    for (dtype, n) in [(DataType::Fp32, 190), (DataType::Fp16, 380), (DataType::Int8, 97)] {
        let t = tuneinfer::solvers::tunable::table_constraint(&xr(dtype), &vocab, &|c| format!("{c:?}")).unwrap();
        assert_eq!(t.table.rows(), n, "{dtype:?}");
        let id = |v: &str| vocab.values.iter().position(|x| x == v).unwrap() as u32;
        assert!(!t.accepts(&[], id("-2")) && !t.accepts(&[], id("-1")));
        assert!(t.accepts(&[], id("16")) && !t.accepts(&[], id("8")));
        assert!(!t.accepts(&[id("16")], id("4")), "16,4 cannot be completed");
    }
    // The solvers say the GPU checks them with the table.
    for s in mlir_igemm::solvers() {
        let solver = solvers::by_name(s.name).unwrap();
        assert_eq!(solver.gpu_search(), solvers::GpuSearch::Table, "{}", s.name);
    }
}

// ---------------------------------------------------------------------------------------------
// Applicability, default, registration

#[test]
fn applicability_per_arch_direction_and_type() {
    let err =
        |s: &MlirSolver, arch: &str, k: &str| s.applicable(&Target::new(arch), &key(k)).err().map(|e| e.to_string());
    let f = F32;
    let b = "64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-B";
    let w = "64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP16-W";
    // Non-xdlops: gfx906, gfx103x, gfx803 (64 CUs); not gfx900, not the xdlops GPUs.
    assert_eq!(err(&mlir_igemm::FWD, "gfx906", f), None);
    assert_eq!(err(&mlir_igemm::FWD, "gfx906_60", f), None);
    assert_eq!(err(&mlir_igemm::FWD, "gfx1030", f), None);
    assert_eq!(err(&mlir_igemm::FWD, "gfx803", f), None);
    let gfx803_36 = Target {
        compute_units: Some(36),
        ..Target::new("gfx803")
    };
    assert!(mlir_igemm::FWD.applicable(&gfx803_36, &key(f)).is_err());
    assert!(err(&mlir_igemm::FWD, "gfx900", f).is_some());
    let e = err(&mlir_igemm::FWD, "gfx908", f).unwrap();
    assert!(e.contains("ConvMlirIgemmFwdXdlops"), "{e}");
    assert!(err(&mlir_igemm::FWD, "gfx90a", f).is_some() && err(&mlir_igemm::FWD, "gfx942", f).is_some());
    // Xdlops: gfx908, gfx90a, gfx94x.
    for arch in ["gfx908", "gfx90a", "gfx90a68", "gfx942"] {
        assert_eq!(err(&mlir_igemm::FWD_XDLOPS, arch, f), None, "{arch}");
        assert_eq!(err(&mlir_igemm::BWD_XDLOPS, arch, b), None, "{arch}");
        assert_eq!(err(&mlir_igemm::WRW_XDLOPS, arch, w), None, "{arch}");
    }
    for arch in ["gfx906", "gfx900", "gfx1030", "gfx803"] {
        assert!(err(&mlir_igemm::FWD_XDLOPS, arch, f).is_some(), "{arch}");
    }
    // Direction.
    assert!(err(&mlir_igemm::BWD, "gfx906", f).unwrap().contains("backward-data"));
    assert!(err(&mlir_igemm::WRW_XDLOPS, "gfx908", b).is_some());
    assert_eq!(err(&mlir_igemm::BWD, "gfx906", b), None);
    assert_eq!(err(&mlir_igemm::WRW, "gfx906", w), None);
    // Data type: FP32, FP16; not BF16.
    let bf = "64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-BF16-F";
    assert!(err(&mlir_igemm::FWD, "gfx906", bf).unwrap().contains("BF16"));
    assert!(err(&mlir_igemm::FWD_XDLOPS, "gfx90a", bf).is_some());
    // NHWC, groups, depthwise, strides, dilations: all taken (rocMLIR pads the GEMM).
    for k in [
        "64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NHWC-FP16-F",
        "64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F",
        "7-17-13-5x3-9-9-6-3-2x1-2x2-1x2-0-NCHW-FP32-F",
    ] {
        assert_eq!(err(&mlir_igemm::FWD, "gfx906", k), None, "{k}");
    }
    let mut depthwise = key(F32);
    depthwise.k = 64;
    depthwise.groups = 64;
    assert!(mlir_igemm::FWD.applicable(&Target::new("gfx906"), &depthwise).is_ok());
    // Tensors of 2 GiB or more: taken (the tuning-era rocMLIR tuned them; x here is
    // 4 * 1024 * 512 * 512 * 4 bytes = 4 GiB, like tuned rows of gfx906_60.db).
    let big = "1024-512-512-1x1-16-512-512-4-0x0-1x1-1x1-0-NCHW-FP32-F";
    assert_eq!(err(&mlir_igemm::FWD, "gfx906", big), None);
}

#[test]
fn static_default_is_the_heuristic_request_and_means_no_entry() {
    let t906 = Target::new("gfx906");
    let t908 = Target::new("gfx908");
    let p = key(F32);
    for s in [&mlir_igemm::FWD, &mlir_igemm::BWD, &mlir_igemm::WRW] {
        let d = s.static_default(&t906, &p);
        assert_eq!(s.format_params(&d), "-2,-2,-2,-2,-2,-2");
        assert!(s.is_default_request(&d) && !s.rules(&t906, &p).is_valid(&d));
        assert!(!s.is_default_request(&cfg("256,32,32,16,2,2")));
        assert!(
            !s.is_default_request(&cfg("-2,-2,-2,-2,-2,0")),
            "partial: not the request"
        );
    }
    for s in [
        &mlir_igemm::FWD_XDLOPS,
        &mlir_igemm::BWD_XDLOPS,
        &mlir_igemm::WRW_XDLOPS,
    ] {
        let d = s.static_default(&t908, &p);
        assert_eq!(s.format_params(&d), "-2,-2,-2,-2,-2,-2,0,0");
        assert!(s.is_default_request(&d) && !s.rules(&t908, &p).is_valid(&d));
        assert!(!s.is_default_request(&cfg("-2,-2,-2,-2,-2,-2,1,1")));
        // The engine's fallback prints it as MIOpen writes it.
        let solver = solvers::by_name(s.name).unwrap();
        let values = solver.fallback(&t908, &p).unwrap();
        assert_eq!(solver.format_config(&values), "-2,-2,-2,-2,-2,-2,0,0");
    }
}

#[test]
fn the_six_solvers_are_registered_and_parse_their_params() {
    for s in mlir_igemm::solvers() {
        let solver = solvers::by_name(s.name).unwrap_or_else(|e| panic!("{e}"));
        let t = solver.tunable().expect("tunable");
        assert_eq!(t.param_names().len(), if s.xdlops { 8 } else { 6 });
    }
    let x = &mlir_igemm::FWD_XDLOPS;
    assert_eq!(
        x.parse_params("32,32,8,16,16,4,1,1").unwrap(),
        cfg("32,32,8,16,16,4,1,1")
    );
    assert!(
        x.parse_params("32,32,8,16,16,4").is_err(),
        "6 fields for an xdlops solver"
    );
    assert!(mlir_igemm::FWD.parse_params("256,32,32,16,2,2,1,1").is_err());
}

#[test]
fn gemm_view_hand_derived() {
    use mlir_igemm::Gemm;
    // F: M = K/G, N = N*Ho*Wo, K = C/G*Y*X.
    let f = key(F32);
    assert_eq!(
        Gemm::of(&f),
        Gemm {
            m: 128,
            n: 32 * 56 * 56,
            k: 64 * 9
        }
    );
    // W: M = K/G, N = C/G*Y*X, K = N*Ho*Wo.
    let w = key("64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-W");
    // A W key's in is dy (64 channels = K), out is x (128 = C).
    assert_eq!((w.c, w.k), (128, 64));
    assert_eq!(
        Gemm::of(&w),
        Gemm {
            m: 64,
            n: 128 * 9,
            k: 32 * 56 * 56
        }
    );
    // B, stride 2, 3x3: yTilda = 2, yDot = ceil(3/2) = 2: M = C, N = N*ceil(Hi/2)*ceil(Wi/2),
    // K = K*2*2. dy 28x28 (key in), dx 56x56 (key out; x of the forward problem).
    let b = key("128-28-28-3x3-64-56-56-8-1x1-2x2-1x1-0-NCHW-FP32-B");
    assert_eq!((b.c, b.k, b.in_h), (64, 128, 56));
    assert_eq!(
        Gemm::of(&b),
        Gemm {
            m: 64,
            n: 8 * 28 * 28,
            k: 128 * 4
        }
    );
}

// ---------------------------------------------------------------------------------------------
// The dataset counts the -2 rows apart

#[test]
fn the_dataset_counts_heuristic_requests_apart() {
    let p = key(F32);
    let row = |id: i64, params: &str| TunedRow {
        config_id: id,
        problem: p.clone(),
        params: params.into(),
    };
    let mut p2 = p.clone();
    p2.n = 64;
    let rows = SolverRows {
        rows: vec![
            row(1, "-2,-2,-2,-2,-2,-2,0,0"),
            row(2, "-2,-2,-2,-2,-2,-2,1,0"),
            row(3, "32,32,8,16,16,4,1,1"),
            TunedRow {
                config_id: 4,
                problem: p2,
                params: "-2,-2,-2,-2,-2,-2,0,0".into(),
            },
            row(5, "32,32,8,16,16,4,0,1"),
        ],
        rejected: Vec::new(),
    };
    let ds = build(&rows, &mlir_igemm::FWD_XDLOPS, &Target::new("gfx90a"));
    let r = &ds.report;
    assert_eq!(r.rows, 5);
    assert_eq!(r.default_requests, 2, "rows 1 and 4");
    assert_eq!(
        r.rule_violations, 2,
        "row 2 (a partial request) and row 5 (forceUnroll 0)"
    );
    assert_eq!((r.used, ds.samples.len()), (1, 1));
    assert_eq!(ds.samples[0].config, cfg("32,32,8,16,16,4,1,1"));
    assert!(r.summary().contains("2 default requests"), "{}", r.summary());
}

// ---------------------------------------------------------------------------------------------
// Every tuned row

/// The INT8 rows of a text database (the problem parsers take FP32/FP16/BF16 only): params of
/// `solver` in lines whose key has data type INT8.
fn int8_params_text(text: &str, solver: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((k, entries)) = line.split_once('=') else {
            continue;
        };
        if !k.split('x').any(|f| f == "INT8") {
            continue;
        }
        for e in entries.split(';') {
            if let Some((name, params)) = e.split_once(':') {
                if name == solver {
                    out.push(params.to_string());
                    break;
                }
            }
        }
    }
    out
}

/// The distinct reasons `s` does not apply to rows' problems (empty when it applies to all).
fn not_applicable_reasons(s: &MlirSolver, target: &Target, rows: &SolverRows) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for row in &rows.rows {
        if let Err(e) = s.applicable(target, &row.problem) {
            *out.entry(format!("{e} ({})", row.problem)).or_insert(0) += 1;
            if out.len() > 5 {
                break;
            }
        }
    }
    out
}

#[test]
fn every_gfx906_tuned_row_passes_the_rules() {
    let (db, arch) = common::perf_database("gfx906_60.db");
    assert_eq!(arch, "gfx906");
    let target = Target::new("gfx906_60");
    // ConvMlirIgemm.md section 8: rows per solver, no -2 row.
    let expected = [
        (&mlir_igemm::FWD, 21_953, 38),
        (&mlir_igemm::BWD, 21_825, 0),
        (&mlir_igemm::WRW, 21_541, 0),
    ];
    let mut used_by_type: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (s, rows_want, int8_want) in expected {
        let rows = tuneinfer::data::dataset::read_rows(&db, s.name).unwrap_or_else(|e| panic!("{e}"));
        let ds = build(&rows, s, &target);
        let r = &ds.report;
        println!("{}: {}", s.name, r.summary());
        assert_eq!(not_applicable_reasons(s, &target, &rows), BTreeMap::new());
        assert_eq!(r.rows, rows_want, "{}", s.name);
        // The only problems tuneinfer cannot read are the INT8 ones.
        assert_eq!(r.malformed_problem, int8_want, "{}", s.name);
        assert!(
            rows.rejected.iter().all(|(_, why)| why.contains("INT8")),
            "{:?}",
            &rows.rejected[..1]
        );
        assert_eq!(
            (
                r.malformed_params,
                r.not_applicable,
                r.rule_violations,
                r.default_requests
            ),
            (0, 0, 0, 0),
            "{}",
            s.name
        );
        for row in &rows.rows {
            let c = s.parse_params(&row.params).unwrap();
            used_by_type
                .entry(row.problem.precision.as_str())
                .or_default()
                .insert(s.format_params(&c));
        }
    }
    // INT8 rows straight from the database, checked with the INT8 rules.
    let conn = tuneinfer::data::perfdb::open(&db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT p.params FROM perf_db p JOIN config c ON p.config = c.id \
             WHERE c.data_type = 'INT8' AND p.solver LIKE 'ConvMlirIgemm%'",
        )
        .unwrap();
    let int8: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(int8.len(), 38);
    let r8 = mlir_igemm::FWD.rules_for(DataType::Int8);
    for p in &int8 {
        assert!(r8.is_valid(&cfg(p)), "INT8 {p}");
        used_by_type.entry("INT8").or_default().insert(p.clone());
    }
    // Section 5: the tuned rows use 226 of the 264 (FP32 213, FP16 171, INT8 34).
    let counts: Vec<(&str, usize)> = used_by_type.iter().map(|(t, s)| (*t, s.len())).collect();
    assert_eq!(counts, vec![("FP16", 171), ("FP32", 213), ("INT8", 34)]);
    let all: BTreeSet<&String> = used_by_type.values().flatten().collect();
    assert_eq!(all.len(), 226);
}

#[test]
fn every_xdlops_tuned_row_passes_the_rules_or_is_a_counted_request() {
    // ConvMlirIgemmXdlops.md sections 3 and 8: rows and -2 rows per (solver, arch).
    let expected: [(&str, &MlirSolver, usize, usize); 6] = [
        ("gfx90878", &mlir_igemm::FWD_XDLOPS, 23_340, 397),
        ("gfx90878", &mlir_igemm::BWD_XDLOPS, 22_391, 944),
        ("gfx90878", &mlir_igemm::WRW_XDLOPS, 22_601, 1_857),
        ("gfx90a68", &mlir_igemm::FWD_XDLOPS, 24_320, 13_423),
        ("gfx90a68", &mlir_igemm::BWD_XDLOPS, 23_372, 2_988),
        ("gfx90a68", &mlir_igemm::WRW_XDLOPS, 23_582, 10_614),
    ];
    let mut used_by_type: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let (mut total, mut requests, mut checked) = (0, 0, 0);
    for db in ["gfx90878", "gfx90a68"] {
        let path = common::perfdb_dir().join(format!("{db}.db.txt.bz2"));
        let text = textdb::read_text(&path).unwrap_or_else(|e| panic!("{e}"));
        let target = Target::new(db);
        for (_, s, rows_want, req_want) in expected.iter().filter(|e| e.0 == db) {
            let rows = textdb::solver_rows_from_text(&text, s.name);
            let int8 = int8_params_text(&text, s.name);
            let ds = build(&rows, *s, &target);
            let r = &ds.report;
            println!("{db} {}: {}", s.name, r.summary());
            assert_eq!(not_applicable_reasons(s, &target, &rows), BTreeMap::new());
            assert_eq!(r.rows, *rows_want, "{db} {}", s.name);
            assert_eq!(
                r.malformed_problem,
                int8.len(),
                "{db} {}: only INT8 keys are unreadable",
                s.name
            );
            assert_eq!(
                (r.malformed_params, r.not_applicable, r.rule_violations),
                (0, 0, 0),
                "{db} {}",
                s.name
            );
            // No INT8 row is a request; the -2 rows are the write-up's.
            assert_eq!(r.default_requests, *req_want, "{db} {}", s.name);
            let r8 = s.rules_for(DataType::Int8);
            for p in &int8 {
                assert!(r8.is_valid(&cfg(p)), "{db} {} INT8 {p}", s.name);
                used_by_type.entry("INT8").or_default().insert(p.clone());
            }
            if s.direction != tuneinfer::problem::Direction::Forward {
                assert!(int8.is_empty());
            } else {
                assert_eq!(int8.len(), 38, "{db}: 38 INT8 forward rows");
            }
            for row in &rows.rows {
                let c = s.parse_params(&row.params).unwrap();
                if !s.is_default_request(&c) {
                    used_by_type
                        .entry(row.problem.precision.as_str())
                        .or_default()
                        .insert(s.format_params(&c));
                    checked += 1;
                }
            }
            total += r.rows;
            requests += r.default_requests;
            checked += int8.len();
        }
    }
    assert_eq!((total, requests, checked), (139_606, 30_223, 109_383));
    // Section 5: the tuned rows use 184 of the FP32, 356 of the FP16 and 36 of the INT8 configs.
    let counts: Vec<(&str, usize)> = used_by_type.iter().map(|(t, s)| (*t, s.len())).collect();
    assert_eq!(counts, vec![("FP16", 356), ("FP32", 184), ("INT8", 36)]);
}

#[test]
fn the_engine_constraint_is_a_gpu_table_equal_to_rules_with_look_ahead() {
    use tuneinfer::format::metadata::KtnMetadata;
    // A vocabulary like a trained model's: the end token, the domain's values and a few that no
    // config takes (-2, 3, 512).
    let values: Vec<String> = [
        "-1", "-2", "0", "1", "2", "3", "4", "8", "16", "32", "64", "128", "256", "512",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let vocab = Vocabulary::from_token_values(&values);
    let domain: Vec<i64> = values
        .iter()
        .filter_map(|v| v.parse().ok())
        .filter(|&v| v != -1)
        .collect();
    let ints: Vec<i64> = vocab.values.iter().map(|v| v.parse().unwrap()).collect();
    // Two data types, each twice with another geometry: the table is built once per (solver,
    // data type, vocabulary) and shared, never across data types.
    let cases = [
        ("64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP16-F", 380),
        ("64-56-56-3x3-128-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F", 190),
        ("3-224-224-7x7-64-112-112-8-3x3-2x2-1x1-0-NCHW-FP16-F", 380),
        ("3-224-224-7x7-64-112-112-8-3x3-2x2-1x1-0-NCHW-FP32-F", 190),
    ];
    for ((k, xdlops_count), s) in cases
        .iter()
        .flat_map(|c| mlir_igemm::solvers().into_iter().map(move |s| (c, s)))
    {
        let fp16 = key(k);
        let n = s.param_names().len();
        let meta = KtnMetadata {
            predict_type: 0,
            num_tuning_params: [("fwd", n), ("bwd", n), ("wrw", n)]
                .into_iter()
                .map(|(d, k)| (d.to_string(), k))
                .collect(),
            token_values: values.clone(),
        };
        let target = Target::new(if s.xdlops { "gfx90a" } else { "gfx906" });
        let mut p = fp16.clone();
        p.direction = s.direction;
        let solver = solvers::by_name(s.name).unwrap();
        let c = solver.constraint(&target, &p, &vocab, &meta).unwrap();
        assert!(c.gpu_table().is_some(), "{}: the GPU gets a table", s.name);
        let rules = s.rules(&target, &p);
        // Walk every accepted path: the table accepts a value exactly when the rules accept it
        // and the prefix can still be completed (the look-ahead).
        let mut stack: Vec<Vec<u32>> = vec![Vec::new()];
        let mut complete = 0;
        while let Some(chosen) = stack.pop() {
            let prefix: Vec<i64> = chosen.iter().map(|&v| ints[v as usize]).collect();
            if chosen.len() == n {
                complete += 1;
                assert!(rules.is_valid(&prefix), "{} {prefix:?}", s.name);
                assert_eq!(
                    c.config_text(&chosen).as_deref(),
                    Some(s.format_params(&prefix).as_str())
                );
                continue;
            }
            for v in 0..vocab.values.len() as u32 {
                let mut q = prefix.clone();
                if ints[v as usize] == -1 {
                    assert!(!c.accepts(&chosen, v));
                    continue;
                }
                q.push(ints[v as usize]);
                let want = rules.prefix_valid(&q) && rules.completable(&q, &domain);
                assert_eq!(c.accepts(&chosen, v), want, "{} {q:?}", s.name);
                if want {
                    let mut next = chosen.clone();
                    next.push(v);
                    stack.push(next);
                }
            }
        }
        let want = if s.xdlops { *xdlops_count } else { 264 };
        assert_eq!(complete, want, "{} {k}: every valid config, once", s.name);
    }
}
