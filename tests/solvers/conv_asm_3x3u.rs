//! ConvAsm3x3U: rules hand-derived from `../shared/miopen/solvers/ConvAsm3x3U.md` (section 4,
//! MIOpen's `conv_asm_3x3u.cpp:83-139`), the default (section 5), applicability (section 3),
//! and every tuned row of every shared database with the write-up's counts (section 6: 10,173
//! rows, 0 failing, 16 not applicable in history/gfx900_56.2019).

#[allow(unused_imports)]
use crate::common;

use std::collections::{BTreeMap, HashMap, HashSet};
use tuneinfer::data::dataset::read_rows;
use tuneinfer::problem::{ConvProblem, Direction};
use tuneinfer::solvers::conv_asm_3x3u::*;
use tuneinfer::solvers::{self, IntRules, OwnModelsOnly, Target, Tunable};

fn key(k: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

fn cfg(s: &str) -> Vec<i64> {
    s.split(',').map(|f| f.trim().parse().unwrap()).collect()
}

/// A forward FP32 3x3 pad-1 stride-1 problem, C = K = 64, N = 16, H x W, groups 1.
fn hw(h: u64, w: u64) -> ConvProblem {
    key(&format!("64-{h}-{w}-3x3-64-{h}-{w}-16-1x1-1x1-1x1-0-NCHW-FP32-F"))
}

/// The valid (filters_per_wave, output_lines_per_wave) pairs (limit_wave_cnt 0).
fn pairs(r: &Rules) -> Vec<(i64, i64)> {
    let mut v = Vec::new();
    for f in 1..=8 {
        for o in 1..=8 {
            if r.is_valid(&[0, f, o]) {
                v.push((f, o));
            }
        }
    }
    v
}

#[test]
fn each_rule_hand_derived() {
    // W 28: chunks 1, lanes 28, gl 1, even; Kg 64 a power of two; H 28 != olpw (<= 8):
    // n = 1 + 0 + 1*(olpw+2) * 2 + 2 + fpw*olpw <= 1 + 20 + 2 + 64 = 87: all 640 valid.
    let r = Rules::new(&hw(28, 28));
    assert_eq!((r.gl, r.uneven, r.kg_pow2, r.fpw_ok), (1, false, true, 0xff));
    assert_eq!(r.vgprs(2, 2), 1 + 4 + 4 + 2 + 4);
    assert_eq!(pairs(&r).len(), 64);
    // 1. limit_wave_cnt 0..9 only.
    assert!(r.prefix_valid(&[0]) && r.prefix_valid(&[9]) && !r.prefix_valid(&[10]) && !r.prefix_valid(&[-1]));
    // 2. filters_per_wave 1..8; 3. output_lines_per_wave 1..8.
    assert!(r.prefix_valid(&[0, 1]) && r.prefix_valid(&[0, 8]) && !r.prefix_valid(&[0, 0]) && !r.prefix_valid(&[0, 9]));
    assert!(r.is_valid(&cfg("9,8,8")) && !r.is_valid(&cfg("0,1,0")) && !r.is_valid(&cfg("0,1,9")));
    assert!(!r.prefix_valid(&cfg("0,1,1,0")), "longer than the config");

    // 3. The VGPR count at its boundary. W 129: chunks 3, lanes 43, gl 3, 129 % 43 == 0 (even);
    // H 100, olpw 8, fpw 8: n = 1 + 0 + 3*10 + 3*10 + 2 + 3*8*8 = 255 < 256: valid.
    let w129 = Rules::new(&hw(100, 129));
    assert_eq!((w129.gl, w129.uneven), (3, false));
    assert_eq!(w129.vgprs(8, 8), 255);
    assert!(w129.is_valid(&cfg("0,8,8")));
    assert_eq!(pairs(&w129).len(), 64);
    // W 130: chunks 3, lanes 44, gl 3, 130 % 44 = 42 (uneven, +1): n = 256: invalid.
    let w130 = Rules::new(&hw(100, 130));
    assert_eq!((w130.gl, w130.uneven), (3, true));
    assert_eq!(w130.vgprs(8, 8), 256);
    assert!(!w130.is_valid(&cfg("0,8,8")) && w130.is_valid(&cfg("0,7,8")) && w130.is_valid(&cfg("0,8,7")));
    // H == olpw: no zero-line padding (-1) and il = olpw (-2 lines each of linesA, linesB):
    // H 8, olpw 8: n = 0 + 1 + 3*8 + 3*8 + 2 + 192 = 243.
    let h8 = Rules::new(&hw(8, 130));
    assert_eq!(h8.vgprs(8, 8), 243);
    assert!(h8.is_valid(&cfg("0,8,8")));
    // W 1000: chunks 16, lanes 63, gl 16, 1000 % 63 = 55 (uneven). H 1000:
    // olpw 1: n = 1 + 1 + 16*3*2 + 2 + 16 fpw = 100 + 16 fpw: every fpw (fpw 8: 228);
    // olpw 2: 132 + 32 fpw < 256 -> fpw <= 3; olpw 3: 164 + 48 fpw -> fpw 1; olpw 4: 260 at fpw 1.
    let w1000 = Rules::new(&hw(1000, 1000));
    assert_eq!((w1000.gl, w1000.uneven), (16, true));
    assert_eq!(
        (
            w1000.vgprs(8, 1),
            w1000.vgprs(3, 2),
            w1000.vgprs(4, 2),
            w1000.vgprs(1, 3),
            w1000.vgprs(2, 3)
        ),
        (228, 228, 260, 212, 260)
    );
    assert_eq!(w1000.vgprs(1, 4), 260);
    let mut want: Vec<(i64, i64)> = (1..=8).map(|f| (f, 1)).collect();
    want.extend([(1, 2), (2, 2), (3, 2), (1, 3)]);
    want.sort_unstable();
    assert_eq!(pairs(&w1000), want);
    // The default 0,2,2 stays valid there (n = 196).
    assert!(w1000.is_valid(&static_default(&hw(1000, 1000))));
    // linesA, linesB: with Kg not a power of two they are at least 4 and 3. W 28 (gl 1), H 2,
    // olpw 2 (il 2, 2 lines): Kg 48: 0 + 0 + 4 + 3 + 2 + 2 fpw; Kg 64: 0 + 0 + 2 + 2 + 2 + 2 fpw.
    let k48 = Rules::new(&key("64-2-28-3x3-48-2-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"));
    let k64 = Rules::new(&key("64-2-28-3x3-64-2-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"));
    assert!(!k48.kg_pow2 && k64.kg_pow2);
    assert_eq!((k48.vgprs(1, 2), k64.vgprs(1, 2)), (11, 8));
    // olpw 1 with H 2: padding on, il 3: Kg 48 -> 1 + 0 + 4 + 3 + 2 + 1 = 11 (linesB 3 = 3).
    assert_eq!(k48.vgprs(1, 1), 11);

    // 2. Grouped (G 2, out_channels K 6, Kg 3): fpw must divide 6 and 6/fpw be even:
    // 1 (6), 3 (2); not 2 (3 odd), 6 (1 odd), nor 4, 5, 7, 8 (do not divide 6).
    let g2 = Rules::new(&key("8-28-28-3x3-6-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g2"));
    assert_eq!(g2.fpw_ok, 0b101);
    assert!(g2.prefix_valid(&[0, 1]) && g2.prefix_valid(&[0, 3]) && !g2.prefix_valid(&[0, 2]));
    assert!(!g2.prefix_valid(&[0, 6]) && !g2.prefix_valid(&[0, 4]));
    assert!(!g2.kg_pow2, "Kg 3");
    assert!(g2.completable(&[0], &[1, 2, 3]) && !g2.completable(&[0, 2], &[1, 2, 3, 4, 5, 6, 7, 8]));
    // G 4, K 32 (Kg 8): 1, 2, 4, 8 divide 32 into 32, 16, 8, 4, all multiples of 4.
    let g4 = Rules::new(&key("32-28-28-3x3-32-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g4"));
    assert_eq!(g4.fpw_ok, 0b1000_1011);
    // G 1: no divisibility (K 6 takes fpw 4).
    assert!(Rules::new(&key("8-28-28-3x3-6-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F")).is_valid(&cfg("0,4,2")));
    // B: out_channels is the db key's out_channels (dx's channels): the same rule for the
    // B key with in 8 (dy), out 6 (dx).
    let b = Rules::new(&key("8-28-28-3x3-6-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B_g2"));
    assert_eq!(b, g2);
}

#[test]
fn static_default_hand_derived() {
    // Section 5: 0, 2, 2; filters_per_wave 1 when out_channels % (2 G) != 0.
    assert_eq!(static_default(&hw(28, 28)), [0, 2, 2]);
    let odd = key("64-28-28-3x3-63-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert_eq!(static_default(&odd), [0, 1, 2]);
    let g2k6 = key("8-28-28-3x3-6-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g2");
    assert_eq!(static_default(&g2k6), [0, 1, 2], "6 % 4 != 0");
    let g2k8 = key("8-28-28-3x3-8-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g2");
    assert_eq!(static_default(&g2k8), [0, 2, 2]);
    // B: out_channels = the key's out_channels (dx's): 63 -> 1; the F key with channels swapped
    // (out 64) -> 2.
    let b = key("64-28-28-3x3-63-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B");
    assert_eq!(static_default(&b), [0, 1, 2]);
    let b = key("63-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B");
    assert_eq!(static_default(&b), [0, 2, 2]);
    for p in [odd, g2k6, g2k8, hw(1000, 1000), hw(1, 4)] {
        assert!(Rules::new(&p).is_valid(&static_default(&p)), "{p}");
    }
}

#[test]
fn applicability_registration_and_params() {
    let s = ConvAsm3x3USolver;
    let f = hw(28, 28);
    for arch in [
        "gfx803",
        "gfx900",
        "gfx906",
        "gfx908",
        "gfx90a",
        "gfx906_60",
        "gfx90a68",
    ] {
        assert!(s.applicable(&Target::new(arch), &f).is_ok(), "{arch}");
    }
    for arch in ["gfx1030", "gfx942", "gfx1100"] {
        assert!(s.applicable(&Target::new(arch), &f).is_err(), "{arch}");
    }
    let t = Target::new("gfx906");
    let ok = |k: &str| s.applicable(&t, &key(k)).is_ok();
    let why = |k: &str| s.applicable(&t, &key(k)).unwrap_err().to_string();
    assert!(ok("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B"));
    assert!(why("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-W").contains("direction"));
    assert!(why("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP16-F").contains("FP32"));
    assert!(!ok("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-BF16-F"));
    assert!(!ok("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NHWC-FP32-F"));
    assert!(!ok("64-28-28-1x1-64-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-F"), "1x1");
    assert!(!ok("64-28-28-5x5-64-28-28-16-2x2-1x1-1x1-0-NCHW-FP32-F"), "5x5");
    assert!(!ok("64-28-28-3x3-64-26-26-16-0x0-1x1-1x1-0-NCHW-FP32-F"), "pad 0");
    assert!(!ok("64-28-28-3x3-64-14-14-16-1x1-2x2-1x1-0-NCHW-FP32-F"), "stride 2");
    assert!(!ok("64-28-28-3x3-64-26-26-16-1x1-1x1-2x2-0-NCHW-FP32-F"), "dilation 2");
    // (in_channels / G) % 4: F in = C; B in = the key's in_channels (dy's, K).
    assert!(why("6-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F").contains("% 4"));
    assert!(ok("64-28-28-3x3-6-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B"), "B: in = 64");
    assert!(!ok("6-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B"), "B: in = 6");
    assert!(
        ok("8-28-28-3x3-6-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g2")
            && !ok("12-28-28-3x3-6-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g2")
    );
    // 3 < W <= 1000 (W the in width).
    assert!(
        !ok("64-28-3-3x3-64-28-3-16-1x1-1x1-1x1-0-NCHW-FP32-F")
            && ok("64-28-4-3x3-64-28-4-16-1x1-1x1-1x1-0-NCHW-FP32-F")
    );
    assert!(ok("64-28-1000-3x3-64-28-1000-16-1x1-1x1-1x1-0-NCHW-FP32-F"));
    assert!(why("64-28-1001-3x3-64-28-1001-16-1x1-1x1-1x1-0-NCHW-FP32-F").contains("W <= 1000"));
    assert!(ok("64-1-28-3x3-64-1-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"), "H 1");
    // Size limits. 4*H*W <= 2^30: H 268435, W 1000 -> 1,073,740,000 (ok); H 268436 ->
    // 1,073,744,000 (over).
    assert!(ok("4-268435-1000-3x3-4-268435-1000-1-1x1-1x1-1x1-0-NCHW-FP32-F"));
    assert!(why("4-268436-1000-3x3-4-268436-1000-1-1x1-1x1-1x1-0-NCHW-FP32-F").contains("4*H*W"));
    // N*in_channels <= 2^32: N 65536, C 65536 (ok), N 65537 (over); K 4.
    assert!(ok("65536-4-4-3x3-4-4-4-65536-1x1-1x1-1x1-0-NCHW-FP32-F"));
    assert!(why("65536-4-4-3x3-4-4-4-65537-1x1-1x1-1x1-0-NCHW-FP32-F").contains("N*in_channels"));
    assert!(why("4-4-4-3x3-65536-4-4-65537-1x1-1x1-1x1-0-NCHW-FP32-F").contains("N*out_channels"));
    // Buffers <= 256 TiB: 4 * 1000 * 1000 * N * C: N 1024, C 65536 -> 2.68e14 <= 2^48 = 2.81e14;
    // N 2048 -> 5.4e14 (over).
    assert!(ok("65536-1000-1000-3x3-4-1000-1000-1024-1x1-1x1-1x1-0-NCHW-FP32-F"));
    assert!(why("65536-1000-1000-3x3-4-1000-1000-2048-1x1-1x1-1x1-0-NCHW-FP32-F").contains("input buffer"));
    assert!(why("4-1000-1000-3x3-65536-1000-1000-2048-1x1-1x1-1x1-0-NCHW-FP32-F").contains("output buffer"));
    // Weights 4 * C * K * 9 <= 2^32: C = K = 8192 -> 2.25 GiB (ok); K 16384 -> 4.5 GiB (over).
    assert!(ok("8192-8-8-3x3-8192-8-8-1-1x1-1x1-1x1-0-NCHW-FP32-F"));
    assert!(why("8192-8-8-3x3-16384-8-8-1-1x1-1x1-1x1-0-NCHW-FP32-F").contains("4*in_channels*out_channels*9"));

    let solver = solvers::by_name(NAME).unwrap();
    assert_eq!(solver.gpu_search(), solvers::GpuSearch::Table);
    let tun = solver.tunable().unwrap();
    assert_eq!(tun.parse_params("0,2,2").unwrap(), cfg("0,2,2"));
    assert!(tun.parse_params("0,2").is_err() && tun.parse_params("0,2,2,2").is_err());
    assert_eq!(tun.format_params(&cfg("9,8,7")), "9,8,7");
    assert_eq!(tun.feature_names().len(), tuneinfer::solvers::NUM_FEATURES);
}

/// Equal table keys mean equal rules (the shared table is right), and problems that differ
/// only where the rules do not read (batch, in_channels, direction, H above 8) share one key.
#[test]
fn table_keys_are_the_rules() {
    let s = ConvAsm3x3USolver;
    let t = Target::new("gfx906");
    let k = |p: &ConvProblem| s.table_key(&t, p).unwrap();
    let a = key("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F");
    let same = [
        key("128-28-28-3x3-64-28-28-1-1x1-1x1-1x1-0-NCHW-FP32-F"),
        key("64-9-28-3x3-64-9-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        // W 27 and 28: gl 1, even (lanes = W).
        key("64-28-27-3x3-64-28-27-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        key("32-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B"),
        key("64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
    ];
    for p in &same {
        assert_eq!(k(p), k(&a), "{p}");
    }
    let differ = [
        key("64-8-28-3x3-64-8-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        key("64-28-65-3x3-64-28-65-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        key("64-28-28-3x3-48-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        key("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g2"),
    ];
    for p in &differ {
        assert_ne!(k(p), k(&a), "{p}");
    }
    // Over a sweep of widths, heights, channel counts and groups: equal keys, equal configs.
    let mut by_key: HashMap<u64, Vec<Vec<i64>>> = HashMap::new();
    for w in (4..=1000).step_by(7) {
        for h in [1, 2, 5, 8, 9, 40] {
            for (c, g) in [(64, 1), (48, 1), (24, 2), (96, 4), (30, 3)] {
                let p = key(&format!(
                    "{}-{h}-{w}-3x3-{c}-{h}-{w}-2-1x1-1x1-1x1-0-NCHW-FP32-F_g{g}",
                    4 * g
                ));
                let r = Rules::new(&p);
                let valid: Vec<Vec<i64>> = (0..=9)
                    .flat_map(|l| (1..=8).flat_map(move |f| (1..=8).map(move |o| vec![l, f, o])))
                    .filter(|c| r.is_valid(c))
                    .collect();
                let prev = by_key.entry(k(&p)).or_insert_with(|| valid.clone());
                assert_eq!(*prev, valid, "{p}");
            }
        }
    }
}

/// (database, rows, failing, not applicable) of section 6.
const EXPECTED: [(&str, usize, usize, usize); 9] = [
    ("gfx906_60.db", 595, 0, 0),
    ("gfx900_56.db", 578, 0, 0),
    ("gfx1030_36.db", 0, 0, 0),
    ("gfx942130.db", 0, 0, 0),
    ("history/gfx906_60.2019.cd.pdb.txt", 539, 0, 0),
    ("history/gfx900_56.2019.cd.pdb.txt", 566, 0, 16),
    ("history/gfx906_64.2019.cd.pdb.txt", 538, 0, 0),
    ("gfx90878.db.txt.bz2", 3_677, 0, 0),
    ("gfx90a68.db.txt.bz2", 3_680, 0, 0),
];

#[test]
fn every_tuned_row_passes_as_the_write_up_counts() {
    let s = ConvAsm3x3USolver;
    let mut total = (0, 0, 0);
    let mut equal_default: BTreeMap<String, usize> = BTreeMap::new();
    let mut rows_per_arch: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut params: HashSet<String> = HashSet::new();
    let mut values = [[0usize; 10]; 3];
    let mut problems: Vec<ConvProblem> = Vec::new();
    let mut seen: HashSet<ConvProblem> = HashSet::new();
    for (name, rows_want, fail_want, na_want) in EXPECTED {
        let (db, arch) = common::perf_database(name);
        let target = Target::new(&arch);
        let rows = read_rows(&db, NAME).unwrap_or_else(|e| panic!("{e}"));
        assert!(rows.rejected.is_empty(), "{name}");
        let (mut fails, mut na) = (0, 0);
        for row in &rows.rows {
            let p = &row.problem;
            let c = s.parse_params(&row.params).unwrap();
            params.insert(row.params.clone());
            for (i, &v) in c.iter().enumerate() {
                values[i][v as usize] += 1;
            }
            if seen.insert(p.clone()) {
                problems.push(p.clone());
            }
            let e = rows_per_arch.entry(arch.clone()).or_default();
            e.0 += 1;
            e.1 += usize::from(p.groups > 1);
            if s.applicable(&target, p).is_err() {
                na += 1;
                // The channel-swap defect of that file: applicable with the channels swapped.
                assert!(
                    name.contains("gfx900_56.2019") && p.direction == Direction::BackwardData,
                    "{name} {p}"
                );
                let mut swapped = p.clone();
                std::mem::swap(&mut swapped.c, &mut swapped.k);
                assert!(s.applicable(&target, &swapped).is_ok(), "{name} {p} swapped");
                continue;
            }
            let r = Rules::new(p);
            let d = static_default(p);
            assert!(r.is_valid(&d), "{name} {p}: default");
            if c == d {
                *equal_default.entry(arch.clone()).or_default() += 1;
            }
            if !r.is_valid(&c) {
                fails += 1;
            }
        }
        println!("{name}: {} rows, {fails} failing, {na} not applicable", rows.rows.len());
        assert_eq!((rows.rows.len(), fails, na), (rows_want, fail_want, na_want), "{name}");
        total.0 += rows.rows.len();
        total.1 += fails;
        total.2 += na;
    }
    assert_eq!(total, (10_173, 0, 16));
    println!("rows equal to the default: {equal_default:?}; rows (grouped) per arch: {rows_per_arch:?}");
    let eq: BTreeMap<&str, usize> = equal_default.iter().map(|(a, n)| (a.as_str(), *n)).collect();
    assert_eq!(
        eq,
        BTreeMap::from([("gfx900", 3), ("gfx908", 2_654), ("gfx90a", 3_371)])
    );
    assert_eq!(eq.values().sum::<usize>(), 6_028);
    let per_arch: BTreeMap<&str, (usize, usize)> = rows_per_arch.iter().map(|(a, n)| (a.as_str(), *n)).collect();
    assert_eq!(
        per_arch,
        BTreeMap::from([
            ("gfx900", (1_144, 438)),
            ("gfx906", (1_672, 565)),
            ("gfx908", (3_677, 326)),
            ("gfx90a", (3_680, 326)),
        ])
    );
    assert_eq!(params.len(), 465);
    assert_eq!(values[0], [6767, 87, 262, 364, 457, 444, 486, 398, 438, 470]);
    assert_eq!(&values[1][1..=8], &[210, 6291, 334, 1153, 214, 253, 178, 1540]);
    assert_eq!(&values[2][1..=8], &[393, 6733, 378, 557, 310, 126, 1366, 310]);
    // Tightness over the distinct row problems: 240 to 640 of the 640 configs accepted; the
    // configs failing rule 2 and those (passing it) failing the VGPR rule.
    let (mut fail2, mut fail3) = (0, 0);
    let accepted: Vec<usize> = problems
        .iter()
        .map(|p| {
            let r = Rules::new(p);
            let all = (0..=9).flat_map(|l| (1..=8).flat_map(move |f| (1..=8).map(move |o| [l, f, o])));
            let mut n = 0;
            for c in all {
                if !r.prefix_valid(&c[..2]) {
                    fail2 += 1;
                } else if !r.is_valid(&c) {
                    fail3 += 1;
                } else {
                    n += 1;
                }
            }
            n
        })
        .collect();
    println!("sweep: {fail2} configs fail rule 2, {fail3} (passing it) the VGPR rule");
    assert_eq!((fail2, fail3), (108_160, 34_900));
    println!(
        "{} distinct row problems, {}..{} configs accepted",
        problems.len(),
        accepted.iter().min().unwrap(),
        accepted.iter().max().unwrap()
    );
    assert_eq!(problems.len(), 3_743);
    assert_eq!((accepted.iter().min(), accepted.iter().max()), (Some(&240), Some(&640)));
}
