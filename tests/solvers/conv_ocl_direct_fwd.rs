//! ConvOclDirectFwd's rules, default and applicability against hand-derived cases from
//! `../shared/miopen/solvers/ConvOclDirectFwd.md` (MIOpen's `conv_ocl_dir2Dfwd.cpp` and
//! `conv_ocl_dir2Dfwd_exhaustive_search.cpp`), and against every tuned row of the shared perf
//! databases (sqlite and the 2019 text files).
//!
//! Notation in the comments (doc section 4): Cin/Cout = MIOpen's in/out channels (F: C, K;
//! B: K, C); opt' = the effective out_pix_tile (the stride for B with stride > 1); gt' =
//! max(8, in_tile/opt'); it' = gt'*opt'; nidt' = min(Cin/G, n_in_data_tiles); nopt' =
//! min(Cout/G, n_out_pix_tiles); in_lcl = F ? (it'-1)*s + f : (it' + f - 1 + s - 1)/s;
//! LDS = (in_lcl_w*in_lcl_h*nidt' + nopt'*nidt'*fy*fx) * sizeof (n_stacks' = 1).

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::problem::{ConvProblem, Direction, Precision};
use tuneinfer::solvers::conv_ocl_direct_fwd::*;
use tuneinfer::solvers::{IntRules, Target, Tunable};

fn problem(key: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(key).unwrap_or_else(|e| panic!("{key}: {e}"))
}

fn cfg(s: &str) -> Vec<i64> {
    s.split(',').map(|f| f.parse().unwrap()).collect()
}

fn rules(key: &str) -> Rules {
    Rules::new(&problem(key))
}

/// F, Cin 64, Cout 128, x 28x28, 3x3 pad 1, stride 1, N 16.
const F28: &str = "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F";
/// B, stride 2: dy 128 channels 14x14 (Cin), dx 64 channels 28x28 (Cout), 3x3 pad 1.
const B14S2: &str = "128-14-14-3x3-64-28-28-16-1x1-2x2-1x1-0-NCHW-FP32-B";

#[test]
fn the_key_maps_in_and_out_as_miopen_does() {
    // F: "in" is x (C channels), "out" is y.
    let p = problem(F28);
    assert_eq!((p.c, p.k), (64, 128));
    // B: "in" is dy (K channels, dy's size), "out" is dx (C channels, dx's size).
    let p = problem(B14S2);
    assert_eq!((p.k, p.c), (128, 64));
    assert_eq!((p.out_h, p.in_h), (14, 28), "dy 14x14, dx 28x28");
    // The features read MIOpen's in/out: Cin = dy channels, the in size = dy's.
    let f = own_features(&p);
    assert_eq!((f[0], f[1], f[2], f[6], f[7]), (7.0, 6.0, 14f32.log2(), 1.0, 1.0));
}

#[test]
fn each_numbered_rule_hand_derived() {
    let f28 = rules(F28);
    let ok = |r: &Rules, s: &str| r.prefix_valid(&cfg(s));
    // The doc's example for 28x28 is the default: gt' 16x16 = 256; in_lcl = 31 + 3 = 34;
    // nidt' 2, nopt' 8: LDS = (34*34*2 + 8*2*9)*4 = 9824.
    assert!(f28.is_valid(&cfg("16,16,32,32,2,2,8,2,1")));
    // 1. D: grp_tile1 in {8,16,32,64}.
    assert!(ok(&f28, "8") && ok(&f28, "64") && !ok(&f28, "4") && !ok(&f28, "12") && !ok(&f28, "128"));
    // 2. D: grp_tile0 in {8,16,32,64}.
    assert!(ok(&f28, "8,32") && !ok(&f28, "8,7") && !ok(&f28, "8,0"));
    // 3. D: in_tile1 in {8,16,32,64}.
    assert!(ok(&f28, "8,8,64") && !ok(&f28, "8,8,1") && !ok(&f28, "8,8,24"));
    // 4. D: in_tile0 in {8,16,32,64}.
    assert!(ok(&f28, "8,8,64,64") && !ok(&f28, "8,8,64,2"));
    // For B with stride 2, V2 is decided here: opt' = 2, in_tile 64/64 -> gt' 32*32 = 1024 > 256;
    // 32/32 -> 16*16 = 256 passes; 64/16 -> 32*8 = 256 passes.
    let b = rules(B14S2);
    assert!(!ok(&b, "8,8,64,64") && ok(&b, "8,8,32,32") && ok(&b, "8,8,64,16"));
    // 5. D: out_pix_tile1 in {1,2,4}; V1: opt1' != 0 (implied by the set).
    assert!(ok(&f28, "8,8,64,64,4") && !ok(&f28, "8,8,64,64,3") && !ok(&f28, "8,8,64,64,0"));
    // 6. D: out_pix_tile0 in {1,2,4}; V2: gt0'*gt1' <= 256.
    // 64/4 = 16 each: 256 passes; out_pix_tile0 2: 16*32 = 512 fails; 1,1: 64*64 fails.
    assert!(ok(&f28, "8,8,64,64,4,4") && !ok(&f28, "8,8,64,64,4,2") && !ok(&f28, "8,8,64,64,1,1"));
    assert!(!ok(&f28, "8,8,64,64,4,8"));
    // gt' is at least 8: 8/4 = 2 -> 8 (it' 32): 64 <= 256.
    assert!(ok(&f28, "8,8,8,8,4,4"));
    // B with stride 2 ignores the stored out_pix_tile for V2 (opt' = 2: 16*16), not for D.
    assert!(ok(&b, "8,8,32,32,1,1") && ok(&b, "8,8,32,32,4,4") && !ok(&b, "8,8,32,32,4,3"));
    // 7. D: n_out_pix_tiles in {1,2,4,8}; V4: nopt' != 0.
    assert!(ok(&f28, "8,8,64,64,4,4,8") && ok(&f28, "8,8,64,64,4,4,1"));
    assert!(!ok(&f28, "8,8,64,64,4,4,16") && !ok(&f28, "8,8,64,64,4,4,3") && !ok(&f28, "8,8,64,64,4,4,0"));
    // V4 fails only when Cout/G = 0, which no consistent problem has: K = 1 with groups 2.
    let mut odd = problem(F28);
    (odd.k, odd.groups) = (1, 2);
    assert!(!Rules::new(&odd).prefix_valid(&cfg("8,8,64,64,4,4,8")));
    // 8. D: n_in_data_tiles in {1,2,4}; V5 (decided here).
    // it' 64x64: in_lcl = 63 + 3 = 66. nidt 4: (66*66*4 + 8*4*9)*4 = (17424 + 288)*4 = 70848
    // > 65536 fails; nidt 2: (8712 + 144)*4 = 35424 passes.
    assert!(ok(&f28, "8,8,64,64,4,4,8,2") && !ok(&f28, "8,8,64,64,4,4,8,4") && !ok(&f28, "8,8,64,64,4,4,8,3"));
    // FP16 halves the bytes: 35424 passes.
    let f28h = rules("64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP16-F");
    assert!(ok(&f28h, "8,8,64,64,4,4,8,4"));
    // Cin = 3: nidt' = min(3, 4) = 3: (4356*3 + 8*3*9)*4 = 53136 passes.
    let c3 = rules("3-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert!(ok(&c3, "8,8,64,64,4,4,8,4"));
    // Cout = 2: nopt' = 2 does not save this one: (17424 + 2*4*9)*4 = 69984 fails.
    let k2 = rules("64-28-28-3x3-2-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert!(!ok(&k2, "8,8,64,64,4,4,8,4"));
    // F vs B in_lcl with 11x11, stride 2, it' 32 (in_tile 32, opt' 2, gt' 16):
    // F: in_lcl = 31*2 + 11 = 73: nidt 4: (73*73*4 + 8*4*121)*4 = (21316 + 3872)*4 = 100752
    // fails, nidt 1: (5329 + 968)*4 = 25188 passes;
    // B: in_lcl = (32 + 10 + 1)/2 = 21: nidt 4: (441*4 + 3872)*4 = 22544 passes.
    let f11 = rules("64-56-56-11x11-32-28-28-8-5x5-2x2-1x1-0-NCHW-FP32-F");
    let b11 = rules("32-28-28-11x11-64-56-56-8-5x5-2x2-1x1-0-NCHW-FP32-B");
    assert!(!ok(&f11, "8,8,32,32,2,2,8,4") && ok(&f11, "8,8,32,32,2,2,8,1"));
    assert!(ok(&b11, "8,8,32,32,2,2,8,4"));
    // B stride 1, 11x11 pad 5: in_lcl = it' + 10 (the same as F at stride 1): it' 64:
    // 74*74 = 5476; nidt 4: (21904 + 8*4*121)*4 = 103104 fails; nidt 2: (10952 + 1936)*4 = 51552.
    let b11s1 = rules("64-28-28-11x11-32-28-28-8-5x5-1x1-1x1-0-NCHW-FP32-B");
    assert!(!ok(&b11s1, "8,8,64,64,4,4,8,4") && ok(&b11s1, "8,8,64,64,4,4,8,2"));
    // 9. D: n_stacks in {1,2}; V3: min(n_stacks, 1, N) != 0.
    assert!(ok(&f28, "16,16,32,32,2,2,8,2,2") && ok(&f28, "16,16,32,32,2,2,8,2,1"));
    assert!(!ok(&f28, "16,16,32,32,2,2,8,2,3") && !ok(&f28, "16,16,32,32,2,2,8,2,0"));
    // V3 fails only for N = 0, which no parsed problem has.
    let mut n0 = problem(F28);
    n0.n = 0;
    assert!(!Rules::new(&n0).is_valid(&cfg("16,16,32,32,2,2,8,2,1")));
    // Longer than 9 is never valid; a short config is not a valid config.
    assert!(!f28.prefix_valid(&cfg("16,16,32,32,2,2,8,2,1,1")));
    assert!(!f28.is_valid(&cfg("16,16,32,32,2,2,8,2")));
    // The stored grp_tile values are never read: any in the set works.
    assert!(f28.is_valid(&cfg("64,8,32,32,2,2,8,2,1")));
}

#[test]
fn static_default_hand_derived() {
    let d = |k: &str| static_default(&problem(k)).to_vec();
    // x 28: in_tile 32, out_pix_tile max(1, 2) = 2, grp_tile 16 (the doc's example).
    assert_eq!(d(F28), cfg("16,16,32,32,2,2,8,2,1"));
    // x 7: in_tile 8, out_pix_tile 1, grp_tile 8.
    assert_eq!(
        d("64-7-7-3x3-128-7-7-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        cfg("8,8,8,8,1,1,8,2,1")
    );
    // x 14: in_tile 16, out_pix_tile 2, grp_tile 8.
    assert_eq!(
        d("64-14-14-3x3-128-14-14-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        cfg("8,8,16,16,2,2,8,2,1")
    );
    // x 7 high, 100 wide: in_tile1 8 (opt 1, grp 8), in_tile0 32 (opt 2, grp 16).
    assert_eq!(
        d("64-7-100-3x3-128-7-100-16-1x1-1x1-1x1-0-NCHW-FP32-F"),
        cfg("8,16,8,32,1,2,8,2,1")
    );
    // F stride 2, x 56: in_tile 32, opt max(2, 2) = 2, grp 16.
    assert_eq!(
        d("64-56-56-3x3-128-28-28-16-1x1-2x2-1x1-0-NCHW-FP32-F"),
        cfg("16,16,32,32,2,2,8,2,1")
    );
    // B reads dy's size (db in_h/in_w): dy 14 -> in_tile 16, opt max(2, 2) = 2, grp 8.
    assert_eq!(d(B14S2), cfg("8,8,16,16,2,2,8,2,1"));
    // B stride 2, dy 7: in_tile 8, opt max(2, 1) = 2, grp max(8, 4) = 8, in_tile 8*2 = 16.
    assert_eq!(
        d("128-7-7-3x3-64-14-14-16-1x1-2x2-1x1-0-NCHW-FP32-B"),
        cfg("8,8,16,16,2,2,8,2,1")
    );
    // B stride 1, dy 28 (dx 28): as F.
    assert_eq!(
        d("128-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP16-B"),
        cfg("16,16,32,32,2,2,8,2,1")
    );
    // B stride 2, dy 28, dx 56: from dy 28: in_tile 32, opt 2, grp 16.
    assert_eq!(
        d("128-28-28-3x3-64-56-56-16-1x1-2x2-1x1-0-NCHW-FP32-B"),
        cfg("16,16,32,32,2,2,8,2,1")
    );
}

#[test]
fn applicability_names_the_reason() {
    let t = Target::new("gfx906");
    let applies = |t: &Target, k: &str| check_applicable(t, &problem(k)).is_ok();
    let why = |t: &Target, k: &str| check_applicable(t, &problem(k)).unwrap_err().to_string();
    assert!(applies(&t, F28) && applies(&t, B14S2));
    for arch in ["gfx900", "gfx1030", "gfx1031", "gfx803", "gfx908", "gfx90a"] {
        assert!(applies(&Target::new(arch), F28), "{arch}");
    }
    for arch in ["gfx942", "gfx1100", "gfx90"] {
        let e = why(&Target::new(arch), F28);
        assert!(e.contains(arch) && e.contains("gfx103*"), "{e}");
    }
    let e = why(&t, "128-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("direction W"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NHWC-FP32-F");
    assert!(e.contains("NHWC"), "{e}");
    // Groups 1 filters: 3, 5, 7, 9, 11 square; 5x10 / 5x20 only with stride 2 and pad 0; FP16 4x4
    // with pad 0.
    let e = why(&t, "64-28-28-1x1-128-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("filter 1x1 with groups 1"), "{e}");
    let e = why(&t, "64-28-28-2x2-128-27-27-16-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("filter 2x2"), "{e}");
    assert!(applies(&t, "64-28-28-9x9-128-28-28-16-4x4-1x1-1x1-0-NCHW-FP32-F"));
    assert!(applies(&t, "64-28-28-5x10-128-12-10-16-0x0-2x2-1x1-0-NCHW-FP32-F"));
    let e = why(&t, "64-28-28-5x10-128-24-19-16-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("filter 5x10"), "{e}");
    assert!(applies(&t, "64-28-28-4x4-128-25-25-16-0x0-1x1-1x1-0-NCHW-FP16-F"));
    let e = why(&t, "64-28-28-4x4-128-25-25-16-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("filter 4x4"), "{e}");
    // Groups > 1 allow any filter, 1x1 included.
    assert!(applies(&t, "64-28-28-1x1-64-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-F_g32"));
    assert!(applies(&t, "64-28-28-2x2-64-27-27-16-0x0-1x1-1x1-0-NCHW-FP32-F_g2"));
    // B: backward pad = filter - pad - 1 must not be negative: 3x3 with pad 3 fails.
    let e = why(&t, "64-32-32-3x3-32-28-28-16-3x3-1x1-1x1-0-NCHW-FP32-B");
    assert!(e.contains("backward pads"), "{e}");
    // ... while F with the same pad applies.
    assert!(applies(&t, "32-28-28-3x3-64-32-32-16-3x3-1x1-1x1-0-NCHW-FP32-F"));
    // Strides: at most 2 (the 2019 AlexNet row has 4), equal.
    let e = why(&t, "96-55-55-11x11-3-227-227-64-0x0-4x4-1x1-0-NCHW-FP32-B");
    assert!(e.contains("stride 4x4"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-14-28-16-1x1-2x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("stride 2x1"), "{e}");
    // Pads equal.
    let e = why(&t, "64-28-28-3x3-32-28-30-16-1x2-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("pad 1x2"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-24-24-16-1x1-1x1-3x3-0-NCHW-FP32-F");
    assert!(e.contains("dilation 3x3"), "{e}");
    // Forward FP16 with stride 2 is off (issue 1626); backward FP16 with stride 2 and forward
    // BF16 with stride 2 apply.
    let e = why(&t, "64-56-56-3x3-128-28-28-16-1x1-2x2-1x1-0-NCHW-FP16-F");
    assert!(e.contains("1626"), "{e}");
    assert!(applies(&t, "128-14-14-3x3-64-28-28-16-1x1-2x2-1x1-0-NCHW-FP16-B"));
    assert!(applies(&t, "64-56-56-3x3-128-28-28-16-1x1-2x2-1x1-0-NCHW-BF16-F"));
    // The default must be valid: a grouped 31x31 filter on x 64 (default in_tile 32, gt' 16,
    // in_lcl 31 + 31 = 62, nidt' 2, nopt' 8): (62*62*2 + 8*2*961)*4 = 92256 > 65536.
    let e = why(&t, "64-64-64-31x31-64-34-34-2-0x0-1x1-1x1-0-NCHW-FP32-F_g2");
    assert!(e.contains("static default 16,16,32,32,2,2,8,2,1"), "{e}");
}

#[test]
fn nothing_panics_on_odd_problems_or_values() {
    let values = [i64::MIN, -8, -1, 0, 1, 2, 3, 4, 8, 16, 64, i64::MAX];
    for key in [F28, B14S2] {
        let mut p = problem(key);
        for (stride, groups, big) in [(0, 1, 1), (1, 0, 0), (3, 5, u64::MAX), (u64::MAX, 2, 7)] {
            (p.stride_h, p.stride_w, p.groups) = (stride, stride, groups);
            (p.n, p.c, p.k, p.in_h, p.in_w, p.out_h, p.out_w) = (big, big, big, big, big, big, big);
            (p.filter_h, p.filter_w) = (big, big);
            let _ = check_applicable(&Target::new("gfx906"), &p);
            let r = Rules::new(&p);
            let _ = static_default(&p);
            let _ = own_features(&p);
            for a in values {
                for b in values {
                    let _ = r.prefix_valid(&[8, 8, a, b, 1, 1, 8, 2, 1]);
                    let _ = r.prefix_valid(&[8, 8, 64, 64, a, b, 8, 4, 1]);
                    let _ = r.prefix_valid(&[8, 8, 64, 64, 4, 4, a, b, 1]);
                    let _ = r.prefix_valid(&[a, b]);
                }
            }
            let _ = r.completable(&[8], &values);
        }
    }
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
        F28,
        B14S2,
        "64-56-56-11x11-32-28-28-8-5x5-2x2-1x1-0-NCHW-FP32-F",
        "64-28-28-11x11-32-28-28-8-5x5-1x1-1x1-0-NCHW-FP32-B",
        "3-28-28-3x3-2-28-28-1-1x1-1x1-1x1-0-NCHW-FP16-F",
        "64-64-64-31x31-64-34-34-2-0x0-1x1-1x1-0-NCHW-FP32-F_g2",
    ];
    let domains: [&[i64]; 3] = [&[1, 2, 3, 4, 8, 16, 32, 64], &[2, 4, 8, 64], &[1, 8, 32]];
    let mut rng = tuneinfer::testutil::Lcg::new(11);
    let mut checked = (0, 0);
    for key in problems {
        let rules = rules(key);
        for dom in domains {
            for _ in 0..300 {
                let len = rng.below(9) as usize;
                let prefix: Vec<i64> = (0..len).map(|_| dom[rng.below(dom.len() as u64) as usize]).collect();
                let want = Plain(rules).completable(&prefix, dom);
                assert_eq!(rules.completable(&prefix, dom), want, "{key}: {prefix:?} over {dom:?}");
                if rules.prefix_valid(&prefix) {
                    checked.0 += 1;
                    checked.1 += usize::from(want);
                }
            }
        }
    }
    // Both kinds occur: valid prefixes that complete and valid ones that are dead.
    assert!(
        checked.0 > 100 && checked.1 > 20 && checked.1 < checked.0,
        "{checked:?}"
    );
}

/// Every perf database of the shared data, with the arch its rows are for.
fn databases() -> Vec<(std::path::PathBuf, String)> {
    common::PERF_DATABASES
        .iter()
        .map(|name| common::perf_database(name))
        .collect()
}

/// What the rows of one database come to (doc section 6, observed on the shared copies).
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    rows: usize,
    used: usize,
    /// Stride 4 (the 2019 AlexNet conv1 B row).
    not_applicable: usize,
    /// n_in_data_tiles = 3 (the doc's one D failure).
    rule_violations: usize,
    /// Degenerate problems tuneinfer's parser refuses (x 2x2 or dy 1x1 with a 3x3 pad-0 stride-2
    /// filter, a 0x0 or a -5 size): each passes the rules for its channels, filter and stride.
    malformed_problem: usize,
}

/// The rules of a row whose problem cannot be parsed: they read only the direction, channels,
/// batch, filter, stride, groups and precision (never a size), so a problem with the row's
/// values there (and any sizes) has the row's rules.
fn rules_of_fields(direction: &str, in_channels: u64, out_channels: u64, fields: [u64; 6], ty: &str) -> Rules {
    let [n, fil_h, fil_w, stride_h, stride_w, groups] = fields;
    let mut p = problem(F28);
    let fwd = direction == "F";
    p.direction = direction.parse::<Direction>().unwrap();
    (p.c, p.k) = if fwd {
        (in_channels, out_channels)
    } else {
        (out_channels, in_channels)
    };
    (p.n, p.filter_h, p.filter_w, p.stride_h, p.stride_w, p.groups) = (n, fil_h, fil_w, stride_h, stride_w, groups);
    p.precision = Precision::from_name(ty).unwrap();
    Rules::new(&p)
}

/// The rules and params of a rejected row: from the text line (its id is the line number) or
/// the sqlite columns (its id is `config.id`).
fn rejected_row(db: &std::path::Path, id: i64) -> (Rules, String) {
    if db.extension().is_some_and(|x| x == "db") {
        let conn = tuneinfer::data::perfdb::open(db).unwrap();
        conn.query_row(
            "SELECT c.direction, c.in_channels, c.out_channels, c.batchsize, c.fil_h, c.fil_w, c.conv_stride_h, \
             c.conv_stride_w, c.group_count, c.data_type, p.params FROM perf_db p JOIN config c ON p.config = c.id \
             WHERE p.solver = ?1 AND c.id = ?2",
            rusqlite::params![NAME, id],
            |r| {
                let u = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
                let fields = [u(3)?, u(4)?, u(5)?, u(6)?, u(7)?, u(8)?];
                let rules = rules_of_fields(&r.get::<_, String>(0)?, u(1)?, u(2)?, fields, &r.get::<_, String>(9)?);
                Ok((rules, r.get(10)?))
            },
        )
        .unwrap()
    } else {
        let text = std::fs::read_to_string(db).unwrap();
        let line = text.lines().nth(id as usize - 1).unwrap();
        let (key, entries) = line.split_once('=').unwrap();
        let params = entries
            .split(';')
            .find_map(|e| e.strip_prefix(&format!("{NAME}:")))
            .unwrap()
            .to_string();
        let f: Vec<&str> = key.split('-').collect();
        let num = |s: &str| s.parse::<u64>().unwrap();
        let pair = |s: &str| s.split_once('x').map(|(a, b)| (num(a), num(b))).unwrap();
        let ((fh, fw), (sh, sw)) = (pair(f[3]), pair(f[9]));
        let (dir, groups) = match f[14].split_once("_g") {
            Some((d, g)) => (d, num(g)),
            None => (f[14], 1),
        };
        let rules = rules_of_fields(dir, num(f[0]), num(f[4]), [num(f[7]), fh, fw, sh, sw, groups], f[13]);
        (rules, params)
    }
}

#[test]
fn every_tuned_row_is_applicable_and_valid_or_a_quirk_the_doc_explains() {
    let solver = ConvOclDirectFwdSolver;
    let counts = |rows, used, not_applicable, rule_violations, malformed_problem| Counts {
        rows,
        used,
        not_applicable,
        rule_violations,
        malformed_problem,
    };
    let expected = |name: &str| match name {
        "gfx906_60.db" => counts(3939, 3934, 0, 0, 5),
        "gfx900_56.db" => counts(4571, 4566, 0, 0, 5),
        "gfx1030_36.db" => counts(1057, 1056, 0, 0, 1),
        "gfx942130.db" => Counts::default(),
        "gfx906_60.2019.cd.pdb.txt" => counts(4117, 4107, 1, 0, 9),
        "gfx900_56.2019.cd.pdb.txt" => counts(4265, 4246, 0, 0, 19),
        "gfx906_64.2019.cd.pdb.txt" => counts(4164, 4153, 1, 1, 9),
        other => panic!("unexpected database {other}"),
    };
    let mut total = 0;
    for (db, arch) in databases() {
        let rows = read_rows(&db, NAME).unwrap_or_else(|e| panic!("{e}"));
        let target = Target::new(&arch);
        let name = db.file_name().unwrap().to_string_lossy().to_string();
        let ds = build(&rows, &solver, &target);
        let r = &ds.report;
        println!("{name}: {}", r.summary());
        assert_eq!(
            Counts {
                rows: r.rows,
                used: r.used,
                not_applicable: r.not_applicable,
                rule_violations: r.rule_violations,
                malformed_problem: r.malformed_problem,
            },
            expected(&name),
            "{name}"
        );
        assert_eq!(
            (r.malformed_params, r.duplicates, r.conflicting_duplicates),
            (0, 0, 0),
            "{name}"
        );
        // The rows tuneinfer cannot parse: degenerate sizes, yet valid params.
        for (id, why) in &rows.rejected {
            assert!(
                why.contains("would be empty") || why.contains("expected a positive integer, got"),
                "{name} {id}: {why}"
            );
            let (rules, params) = rejected_row(&db, *id);
            let config = solver.parse_params(&params).unwrap();
            assert!(rules.is_valid(&config), "{name} {id}: {params} ({why})");
        }
        for row in &rows.rows {
            let p = &row.problem;
            let what = format!("{name}: {} {}", p.to_perfdb_key(), row.params);
            let config = solver.parse_params(&row.params).unwrap();
            let rules = Rules::new(p);
            // The doc: the default is valid on every row problem (applicable or not).
            assert!(rules.is_valid(&static_default(p)), "{what}: default");
            if let Err(e) = check_applicable(&target, p) {
                // Only the stride-4 AlexNet conv1 row (both gfx906 2019 files).
                assert!(e.to_string().contains("stride 4x4"), "{what}: {e}");
                assert!(name.starts_with("gfx906") && name.ends_with(".txt"), "{what}");
                continue;
            }
            if !rules.is_valid(&config) {
                // Only n_in_data_tiles = 3 (rule 8's D); V holds: the LDS use grows with it and
                // the row is valid with 4.
                println!("  n_in_data_tiles 3: {what}");
                assert_eq!(config[7], 3, "{what}");
                assert_eq!((1..=NUM_PARAMS).find(|&l| !rules.prefix_valid(&config[..l])), Some(8));
                let mut four = config.clone();
                four[7] = 4;
                assert!(rules.is_valid(&four), "{what}");
            }
        }
        total += r.rows;
    }
    assert_eq!(total, 22113, "the doc's row count");
}
