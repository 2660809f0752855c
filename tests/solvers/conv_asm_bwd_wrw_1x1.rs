//! ConvAsmBwdWrW1x1's rules, default and applicability against hand-derived cases from
//! `../shared/miopen/solvers/ConvAsmBwdWrW1x1.md` (MIOpen's `conv_asm_dir_BwdWrW1x1.cpp`), and
//! against every tuned row of the shared perf databases (sqlite and the 2019 text files).

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_bwd_wrw_1x1::*;
use tuneinfer::solvers::{IntRules, Target, Tunable};

fn key(c_dy: u64, hw: u64, c_x: u64, n: u64, ty: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(&format!(
        "{c_dy}-{hw}-{hw}-1x1-{c_x}-{hw}-{hw}-{n}-0x0-1x1-1x1-0-NCHW-{ty}-W"
    ))
    .unwrap()
}

fn cfg(s: &str) -> Vec<i64> {
    s.split(',').map(|f| f.parse().unwrap()).collect()
}

#[test]
fn the_key_maps_dy_and_x_channels_as_miopen_does() {
    // A W key's "in" is dy (K channels), its "out" is x (C channels): doc section 3.
    let p = key(64, 28, 128, 16, "FP32");
    assert_eq!((p.k, p.c), (64, 128));
}

#[test]
fn each_numbered_rule_hand_derived() {
    let fp32 = Rules::new(&key(64, 28, 128, 16, "FP32"));
    let fp16 = Rules::new(&key(64, 28, 128, 16, "FP16"));
    let fp16_odd_c = Rules::new(&key(64, 28, 127, 16, "FP16"));
    let bf16 = Rules::new(&key(64, 28, 128, 16, "BF16"));
    // A valid config: acc_gprs = 2*2*4 = 16, LDS 1*256*16 <= 65536, vgprs 16+12+4*4*2 = 60.
    assert!(fp32.is_valid(&cfg("4,4,2,4,2,1,2,4,0,1")));
    let ok = |r: &Rules, s: &str| r.prefix_valid(&cfg(s));
    // 1. chunk_size in {1,2,4,8,16}
    assert!(ok(&fp32, "16") && !ok(&fp32, "3") && !ok(&fp32, "32") && !ok(&fp32, "0"));
    // 2. chunk_size*c_per_gpr >= 16 and (chunk 1 or <= 16): the product is 16
    assert!(ok(&fp32, "1,16") && ok(&fp32, "16,1") && ok(&fp32, "4,4"));
    assert!(!ok(&fp32, "1,8") && !ok(&fp32, "4,8") && !ok(&fp32, "4,2") && !ok(&fp32, "1,32"));
    // 3. c_mult in {1,2,4,8,16}
    assert!(ok(&fp32, "4,4,16") && !ok(&fp32, "4,4,3"));
    // 4. k_per_gpr in the set and <= c_per_gpr
    assert!(ok(&fp32, "4,4,2,4") && !ok(&fp32, "4,4,2,8") && ok(&fp32, "1,16,2,16"));
    // 5. k_mult in {1,2,4,8,16}
    assert!(ok(&fp32, "4,4,2,4,16") && !ok(&fp32, "4,4,2,4,5"));
    // 6. n_per_gpr in {1,2,4} (hw_per_gpr = 4 / n_per_gpr follows)
    assert!(ok(&fp32, "4,4,2,4,2,4") && !ok(&fp32, "4,4,2,4,2,3") && !ok(&fp32, "4,4,2,4,2,8"));
    // 7. n_part_cnt in 1..8; (n_part_cnt-1)*64*4*acc_gprs <= 65536
    assert!(ok(&fp32, "4,4,2,4,2,1,8") && !ok(&fp32, "4,4,2,4,2,1,9") && !ok(&fp32, "4,4,2,4,2,1,0"));
    // acc = 16*4*4 = 256: n_part_cnt 2 uses exactly 65536 bytes, 3 is over.
    assert!(ok(&fp32, "4,4,16,4,4,1,2") && !ok(&fp32, "4,4,16,4,4,1,3"));
    // acc = 16*16*4 = 1024: only n_part_cnt 1.
    assert!(ok(&fp32, "4,4,16,4,16,1,1") && !ok(&fp32, "4,4,16,4,16,1,2"));
    // 8. read_size in 1..4
    assert!(ok(&fp32, "4,4,2,4,2,1,2,1") && !ok(&fp32, "4,4,2,4,2,1,2,5") && !ok(&fp32, "4,4,2,4,2,1,2,0"));
    // 9. short_store: fp32 only 0; fp16/bf16 with 0 need even c_mult and even C
    assert!(ok(&fp32, "4,4,2,4,2,1,2,4,0") && !ok(&fp32, "4,4,2,4,2,1,2,4,1"));
    assert!(ok(&fp16, "4,4,2,4,2,1,2,4,0") && ok(&fp16, "4,4,1,4,2,1,2,4,1"));
    assert!(!ok(&fp16, "4,4,1,4,2,1,2,4,0"), "odd c_mult");
    assert!(!ok(&fp16_odd_c, "4,4,2,4,2,1,2,4,0") && ok(&fp16_odd_c, "4,4,2,4,2,1,2,4,1"));
    assert!(!ok(&fp16, "4,4,2,4,2,1,2,4,2"));
    // 10. data_prefetch in 0..4; vgprs <= 256 (128 when n_part_cnt > 4).
    assert!(ok(&fp32, "4,4,2,4,2,1,2,4,0,4") && !ok(&fp32, "4,4,2,4,2,1,2,4,0,5"));
    // acc = 8*8*1 = 64, loads (8+8)*4 = 64: vgprs 64+12+64*2 = 204.
    assert!(ok(&fp32, "4,4,8,1,8,1,4,4,0,1") && !ok(&fp32, "4,4,8,1,8,1,5,4,0,1"));
    // bf16 adds loads again: 268 > 256.
    assert!(ok(&fp16, "4,4,8,1,8,1,4,4,1,1") && !ok(&bf16, "4,4,8,1,8,1,4,4,1,1"));
    // acc 64, loads 16*4: prefetch 2 gives 64+12+192 = 268 > 256, prefetch 1 204.
    assert!(!ok(&fp32, "4,4,8,1,8,1,1,4,0,2"));
    // vgprs exactly at the limit: acc 16*4*1 = 64, loads (16+4)*3 = 60, prefetch 2:
    // 64+12+60*3 = 256 <= 256; prefetch 3 gives 316; with n_part_cnt 5 the limit is 128.
    assert!(ok(&fp32, "4,4,16,1,4,1,1,3,0,2") && !ok(&fp32, "4,4,16,1,4,1,1,3,0,3"));
    assert!(ok(&fp32, "4,4,16,1,4,1,5,3,0") && !ok(&fp32, "4,4,16,1,4,1,5,3,0,2"));
    // Longer than 10 is never valid.
    assert!(!fp32.prefix_valid(&cfg("4,4,2,4,2,1,2,4,0,1,0")));
    assert!(!fp32.is_valid(&cfg("4,4,2,4,2,1,2,4,0")));
}

#[test]
fn static_default_hand_derived_from_heuristic_init() {
    let d = |c_dy, c_x, ty| static_default(&key(c_dy, 14, c_x, 8, ty)).to_vec();
    // c_k_256 = C*K/256
    assert_eq!(d(16, 16, "FP32"), cfg("16,1,1,1,1,1,1,1,0,1")); // 1
    assert_eq!(d(32, 32, "FP32"), cfg("16,1,2,1,2,1,1,1,0,1")); // 4
    assert_eq!(d(64, 64, "FP32"), cfg("8,2,2,2,2,2,2,2,0,1")); // 16
    assert_eq!(d(128, 128, "FP16"), cfg("8,2,4,2,4,2,2,4,1,1")); // 64
    assert_eq!(d(2048, 2048, "FP32"), cfg("8,2,4,2,4,4,4,4,0,1")); // 16384
    assert_eq!(d(64, 1, "FP16"), cfg("16,1,1,1,1,1,1,1,1,1")); // 0
}

#[test]
fn applicability_names_the_reason() {
    let t = Target::new("gfx906");
    let ok = key(64, 28, 128, 16, "FP32");
    assert!(check_applicable(&t, &ok).is_ok());
    let why = |t: &Target, k: &str| {
        check_applicable(t, &ConvProblem::from_perfdb_key(k).unwrap())
            .unwrap_err()
            .to_string()
    };
    let e = why(&t, "64-28-28-1x1-128-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("direction") && e.contains("backward-weights"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("filter 3x3"), "{e}");
    let e = why(&t, "64-28-28-1x1-128-28-28-16-0x0-1x1-1x1-0-NHWC-FP32-W");
    assert!(e.contains("NHWC"), "{e}");
    let e = why(
        &Target::new("gfx1030"),
        "64-28-28-1x1-128-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-W",
    );
    assert!(e.contains("gfx1030"), "{e}");
    let e = why(&t, "64-28-28-1x1-70000-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("65536"), "{e}");
    // Stride 2 applies (dy is the smaller tensor); stride 3 does not.
    assert!(check_applicable(
        &t,
        &ConvProblem::from_perfdb_key("64-14-14-1x1-128-28-28-16-0x0-2x2-1x1-0-NCHW-FP32-W").unwrap()
    )
    .is_ok());
}

/// The rules with the trait's plain depth-first look-ahead (no memo): the reference for the
/// memoised one.
struct Plain(Rules);

impl IntRules for Plain {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }
    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        self.0.prefix_valid(prefix)
    }
}

#[test]
fn memoised_look_ahead_equals_plain_search() {
    let problems = [
        key(64, 28, 128, 16, "FP32"),
        key(64, 28, 127, 16, "FP16"),
        key(3, 7, 5, 1, "BF16"),
    ];
    let domains: [&[i64]; 3] = [&[0, 1, 2, 3, 4, 8, 16], &[2, 4, 8, 16], &[1, 16]];
    let mut rng = tuneinfer::testutil::Lcg::new(5);
    let mut checked = (0, 0);
    for p in &problems {
        let rules = Rules::new(p);
        for dom in domains {
            for _ in 0..300 {
                let len = rng.below(10) as usize;
                let prefix: Vec<i64> = (0..len).map(|_| dom[rng.below(dom.len() as u64) as usize]).collect();
                let want = Plain(rules).completable(&prefix, dom);
                assert_eq!(rules.completable(&prefix, dom), want, "{prefix:?} over {dom:?}");
                if rules.prefix_valid(&prefix) {
                    checked.0 += 1;
                    checked.1 += usize::from(want);
                }
            }
        }
    }
    // Both kinds occur: valid prefixes that complete and valid ones that are dead.
    assert!(checked.0 > 50 && checked.1 > 10 && checked.1 < checked.0, "{checked:?}");
}

/// Every perf database of the shared data that holds this solver's rows, with its arch.
fn databases() -> Vec<(std::path::PathBuf, String)> {
    common::PERF_DATABASES
        .iter()
        .filter(|name| name.starts_with("gfx90") || name.starts_with("history/"))
        .map(|name| common::perf_database(name))
        .collect()
}

#[test]
fn every_tuned_row_parses_applies_and_passes_the_rules() {
    let solver = ConvAsmBwdWrW1x1Solver;
    let mut total = 0;
    for (db, arch) in databases() {
        let rows = read_rows(&db, NAME).unwrap_or_else(|e| panic!("{e}"));
        let target = Target::new(&arch);
        assert!(rows.rejected.is_empty(), "{}: {:?}", db.display(), &rows.rejected[..1]);
        // Rows of a legacy length (8 or 9 fields, doc section 6) are the only malformed ones.
        let legacy = rows
            .rows
            .iter()
            .filter(|r| solver.parse_params(&r.params).is_err())
            .inspect(|r| {
                let fields = r.params.split(',').count();
                assert!(fields == 8 || fields == 9, "{}: '{}'", db.display(), r.params);
            })
            .count();
        let ds = build(&rows, &solver, &target);
        let r = &ds.report;
        println!("{}: {}", db.display(), r.summary());
        assert!(r.rows > 1000, "{}: {} rows", db.display(), r.rows);
        assert_eq!(r.malformed_params, legacy);
        assert_eq!((r.not_applicable, r.rule_violations), (0, 0), "{}", db.display());
        if db.extension().is_some_and(|x| x == "db") {
            assert_eq!(legacy, 0, "the sqlite rows all have 10 fields");
        }
        for s in &ds.samples {
            let default = static_default(&s.problem);
            assert!(
                Rules::new(&s.problem).is_valid(&default),
                "default {default:?} for {}",
                s.problem
            );
        }
        total += r.rows;
    }
    assert!(total > 20_000, "{total} rows");
}
