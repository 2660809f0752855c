//! ConvBinWinogradRxSf2x3 / ConvBinWinogradRxSf3x2: the `n_groups` rule, applicability (A1-A10)
//! and MIOpen's default against hand-derived cases from `../shared/miopen/solvers/
//! WINOGRAD_RXS_COMMON.md` (MIOpen's `conv_winoRxS.cpp`), every tuned row of the shared perf
//! databases against the docs' verification tables, bad input, and every answer of the shipped
//! models.

#[allow(unused_imports)]
use crate::common;

use std::path::PathBuf;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_bin_winograd_rxs::*;
use tuneinfer::solvers::{self, Target, Tunable};
use tuneinfer::{DecodeMode, Predictor};

fn key(k: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

fn target(arch: &str, cu: Option<u32>) -> Target {
    let mut t = Target::new(arch);
    if cu.is_some() {
        t.compute_units = cu;
    }
    t
}

/// The reason `solver` refuses `k` on `arch`.
fn why(solver: &ConvBinWinogradRxS, arch: &str, k: &str) -> String {
    match solver.check_applicable(&target(arch, None), &key(k)) {
        Ok(()) => panic!("{} applies to {k} on {arch}", solver.name()),
        Err(e) => e.to_string(),
    }
}

fn applies(solver: &ConvBinWinogradRxS, arch: &str, k: &str) -> bool {
    solver.check_applicable(&target(arch, None), &key(k)).is_ok()
}

/// A 3x3 pad-1 stride-1 FP32 key of direction `dir` with `g` groups (MIOpen's in: 64 channels,
/// out: 64, 28x28, N 16).
fn k3(dir: char, g: u64) -> String {
    let suffix = if g == 1 { String::new() } else { format!("_g{g}") };
    format!("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-{dir}{suffix}")
}

#[test]
fn names_and_the_solver_list() {
    assert_eq!(F2X3.name(), "ConvBinWinogradRxSf2x3");
    assert_eq!(F3X2.name(), "ConvBinWinogradRxSf3x2");
    for name in [F2X3.name(), F3X2.name()] {
        let s = solvers::by_name(name).unwrap();
        let t = solvers::tunable(s).unwrap();
        assert_eq!(t.param_names(), &["n_groups"]);
        assert_eq!(t.parse_params("258").unwrap(), vec![258]);
        assert_eq!(t.format_params(&[258]), "258");
    }
}

#[test]
fn n_groups_is_one_to_min_512_hw_cus() {
    // HW CUs: the database name's or the arch's CUs; gfx1* doubles them (CUs per WGP).
    for (arch, cu, max) in [
        ("gfx942", None, 304),
        ("gfx942130", None, 304),
        ("gfx906", None, 60),
        ("gfx906_60", None, 60),
        ("gfx906_64", None, 64),
        ("gfx900_56", None, 56),
        ("gfx1030", None, 36 * 2),
        ("gfx1030_36", None, 72),
        ("gfx942", Some(120), 120),
        ("gfx1030", Some(20), 40),
        // Above 512 CUs the span's 512 caps it.
        ("gfx942", Some(600), 512),
        ("gfx1030", Some(300), 512),
    ] {
        let t = target(arch, cu);
        assert_eq!(max_n_groups(&t), max, "{arch} {cu:?}");
        let r = F3X2.rules(&t, &key(&k3('F', 1)));
        assert_eq!(r.config_len(), 1);
        assert!(r.is_valid(&[1]) && r.is_valid(&[max]), "{arch}");
        assert!(
            !r.is_valid(&[max + 1]) && !r.is_valid(&[0]) && !r.is_valid(&[-5]),
            "{arch}"
        );
        assert!(!r.prefix_valid(&[1, 1]) && !r.is_valid(&[]) && r.prefix_valid(&[]));
    }
    // No compute units: nothing is valid.
    let r = F2X3.rules(&target("gfx942", Some(0)), &key(&k3('W', 1)));
    assert!(!r.is_valid(&[1]));
    assert!(!r.completable(&[], &[1, 2, 3]));
}

#[test]
fn applicability_a1_f2x3_only_groups_or_wrw() {
    let e = why(&F2X3, "gfx942", &k3('F', 1));
    assert!(
        e.contains("group 1 direction F") && e.contains("WORKAROUND_ISSUE_1681"),
        "{e}"
    );
    let e = why(&F2X3, "gfx942", &k3('B', 1));
    assert!(e.contains("group 1 direction B"), "{e}");
    assert!(applies(&F2X3, "gfx942", &k3('W', 1)));
    for dir in ['F', 'B', 'W'] {
        assert!(applies(&F2X3, "gfx942", &k3(dir, 2)), "{dir}");
        assert!(applies(&F2X3, "gfx942", &k3(dir, 64)), "{dir} depthwise");
        // F(3,2) takes group 1 in every direction.
        assert!(applies(&F3X2, "gfx942", &k3(dir, 1)), "{dir}");
        assert!(applies(&F3X2, "gfx906", &k3(dir, 1)), "{dir}");
    }
}

#[test]
fn applicability_a2_a3_a4_a5_tensors_types_arches() {
    // A2: x's batch stride C*H*W = 2048*1024*1024 = 2^31 does not fit in int.
    let big = "2048-1024-1024-3x3-64-1024-1024-1-1x1-1x1-1x1-0-NCHW-FP32-F";
    let e = why(&F3X2, "gfx942", big);
    assert!(e.contains("x's batch stride 2147483648") && e.contains("int"), "{e}");
    // A3: BF16 is refused, FP16 and FP32 taken.
    let e = why(&F3X2, "gfx942", "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-BF16-F");
    assert!(e.contains("BF16") && e.contains("FP32 and FP16"), "{e}");
    // A4: gfx9, gfx10, gfx11 only.
    let e = why(&F3X2, "gfx803", &k3('F', 1));
    assert!(e.contains("arch gfx803") && e.contains("gfx9, gfx10 and gfx11"), "{e}");
    for arch in ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"] {
        assert!(applies(&F3X2, arch, &k3('F', 1)), "{arch}");
    }
    // An arch without a known CU count needs one (the rule reads it); 0 CUs is refused.
    let e = why(&F3X2, "gfx1010", &k3('F', 1));
    assert!(e.contains("compute-unit count") && e.contains("--cu"), "{e}");
    assert!(F3X2
        .check_applicable(&target("gfx1010", Some(20)), &key(&k3('F', 1)))
        .is_ok());
    let e = F3X2
        .check_applicable(&target("gfx942", Some(0)), &key(&k3('F', 1)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("0 compute units"), "{e}");
    // A5: FP16 on gfx906, gfx908, gfx90a, gfx94*, gfx1011, gfx1012, gfx103*, gfx11* only.
    let h = "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP16-F";
    let e = why(&F3X2, "gfx900", h);
    assert!(e.contains("FP16 on gfx900") && e.contains("gfx906, gfx908"), "{e}");
    for arch in ["gfx906", "gfx908", "gfx90a", "gfx940", "gfx942", "gfx1030", "gfx1100"] {
        assert!(applies(&F3X2, arch, h), "{arch}");
    }
    let t = |a| target(a, Some(20));
    assert!(F3X2.check_applicable(&t("gfx1011"), &key(h)).is_ok());
    assert!(F3X2.check_applicable(&t("gfx1010"), &key(h)).is_err());
    assert!(F3X2.check_applicable(&t("gfx909"), &key(h)).is_err());
}

#[test]
fn applicability_a6_stride_dilation_bias_layout() {
    // Stride 1 or 2, the same in H and W.
    let s = |st: &str, hw_out: u64| format!("64-28-28-3x3-64-{hw_out}-{hw_out}-16-1x1-{st}-1x1-0-NCHW-FP32-F");
    assert!(applies(&F3X2, "gfx942", &s("2x2", 14)));
    let e = why(&F3X2, "gfx942", &s("3x3", 10));
    assert!(e.contains("stride 3x3") && e.contains("1x1 or 2x2"), "{e}");
    let e = why(&F3X2, "gfx942", "64-28-28-3x3-64-28-14-16-1x1-1x2-1x1-0-NCHW-FP32-F");
    assert!(e.contains("stride 1x2"), "{e}");
    let e = why(&F3X2, "gfx942", "64-28-28-3x3-64-26-26-16-1x1-1x1-2x2-0-NCHW-FP32-F");
    assert!(e.contains("dilation 2x2"), "{e}");
    let e = why(&F3X2, "gfx942", "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-1-NCHW-FP32-F");
    assert!(e.contains("bias"), "{e}");
    // NHWC: the assembly kernels read NCHW only.
    let e = why(&F3X2, "gfx942", "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NHWC-FP32-F");
    assert!(e.contains("layout NHWC") && e.contains("only NCHW"), "{e}");
    let e = why(&F2X3, "gfx942", "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NHWC-FP16-W");
    assert!(e.contains("layout NHWC"), "{e}");
}

#[test]
fn applicability_a7_tiny_tensor_workaround() {
    // MIOpen's in (x for F, dy for B/W) at most 6x6, N <= 4 and at most 4 in channels: refused.
    let f = |c: u64, h: u64, w: u64, n: u64| format!("{c}-{h}-{w}-3x3-8-{h}-{w}-{n}-1x1-1x1-1x1-0-NCHW-FP32-F");
    let e = why(&F3X2, "gfx942", &f(4, 6, 6, 4));
    assert!(e.contains("tiny tensor") && e.contains("WORKAROUND_ISSUE_2492"), "{e}");
    assert!(why(&F3X2, "gfx942", &f(1, 1, 1, 1)).contains("tiny tensor"));
    // One size over the line is enough.
    assert!(applies(&F3X2, "gfx942", &f(5, 6, 6, 4)));
    assert!(applies(&F3X2, "gfx942", &f(4, 7, 6, 4)));
    assert!(applies(&F3X2, "gfx942", &f(4, 6, 7, 4)));
    assert!(applies(&F3X2, "gfx942", &f(4, 6, 6, 5)));
    // Groups are ignored: 4 channels in 2 groups still counts as 4.
    assert!(why(&F2X3, "gfx942", "4-6-6-3x3-8-6-6-4-1x1-1x1-1x1-0-NCHW-FP32-F_g2").contains("tiny"));
    // Backward data reads dy (MIOpen's in): dy 6x6 with 4 channels is tiny although dx is 11x11.
    let b = "4-6-6-3x3-8-11-11-4-1x1-2x2-1x1-0-NCHW-FP32-B";
    assert!(why(&F3X2, "gfx942", b).contains("tiny tensor (6x6 image, N=4, 4 input channels)"));
    // dx 6x6 with 4 channels but dy 8 channels: not tiny.
    assert!(applies(&F3X2, "gfx942", "8-6-6-3x3-4-6-6-4-1x1-1x1-1x1-0-NCHW-FP32-B"));
}

#[test]
fn applicability_a8_a9_direction_specific() {
    // A8: backward weights with stride 2 is refused; forward and backward data take it.
    let w2 = "64-14-14-3x3-64-28-28-16-1x1-2x2-1x1-0-NCHW-FP32-W";
    let e = why(&F3X2, "gfx942", w2);
    assert!(e.contains("stride 2x2 for backward weights"), "{e}");
    assert!(why(&F2X3, "gfx942", w2).contains("stride 2x2 for backward weights"));
    assert!(applies(
        &F3X2,
        "gfx942",
        "64-14-14-3x3-64-28-28-16-1x1-2x2-1x1-0-NCHW-FP32-B"
    ));
    assert!(applies(
        &F3X2,
        "gfx942",
        "64-28-28-3x3-64-14-14-16-1x1-2x2-1x1-0-NCHW-FP32-F"
    ));
    // A9: backward data needs filter - pad - 1 >= 0: 3x3 with pad 3 gives -1 in both dims.
    // (A B key's in is dy: x 28x28 with pad 3 gives dy 28 + 6 - 2 = 32.)
    let b = "64-32-32-3x3-64-28-28-16-3x3-1x1-1x1-0-NCHW-FP32-B";
    let e = why(&F3X2, "gfx942", b);
    assert!(
        e.contains("filter 3 and pad 3") && e.contains("filter - pad - 1"),
        "{e}"
    );
    // Pad 2 gives 0: taken; forward with pad 3 is not subject to A9.
    assert!(applies(
        &F3X2,
        "gfx942",
        "64-30-30-3x3-64-28-28-16-2x2-1x1-1x1-0-NCHW-FP32-B"
    ));
    assert!(applies(
        &F3X2,
        "gfx942",
        "64-28-28-3x3-64-32-32-16-3x3-1x1-1x1-0-NCHW-FP32-F"
    ));
    // Only one dimension broken: pad 3x1.
    let e = why(&F3X2, "gfx942", "64-32-28-3x3-64-28-28-16-3x1-1x1-1x1-0-NCHW-FP32-B");
    assert!(e.contains("in H"), "{e}");
}

#[test]
fn applicability_a10_v21_and_v30_shader_limits() {
    // Which kernel version: gfx900/gfx906 v21, except F(3,2) with stride 2; else v30.
    let s2 = key("64-28-28-3x3-64-14-14-16-1x1-2x2-1x1-0-NCHW-FP32-F");
    let s1 = key(&k3('F', 1));
    assert!(F2X3.v21_preferred("gfx906", &s2) && F2X3.v21_preferred("gfx900", &s1));
    assert!(!F3X2.v21_preferred("gfx906", &s2) && F3X2.v21_preferred("gfx906", &s1));
    assert!(!F2X3.v21_preferred("gfx942", &s1) && !F3X2.v21_preferred("gfx1030", &s1));
    // WrW passes the batch as C and dy's image as R x S (the doc's config 27115: N = 128, dy
    // 224x224): v21's C*R*S = 128*224*224 = 6,422,528 >= 2^22; v30's (C+1)*R*S = 6,472,704.
    let w = |n: u64| format!("64-224-224-3x3-3-224-224-{n}-1x1-1x1-1x1-0-NCHW-FP32-W");
    let e = why(&F2X3, "gfx906", &w(128));
    assert!(e.contains("v21") && e.contains("C*R*S = 6422528 (needs < 2^22)"), "{e}");
    assert!(e.contains("batch as C"), "{e}");
    let e = why(&F3X2, "gfx1030", &w(128));
    assert!(e.contains("v30") && e.contains("(C+1)*R*S = 6472704"), "{e}");
    // N = 83: v21 83*50176 = 4,164,608 < 4,194,304 passes; v30 84*50176 = 4,214,784 fails.
    assert!(applies(&F2X3, "gfx906", &w(83)) && applies(&F3X2, "gfx906", &w(83)));
    assert!(why(&F2X3, "gfx942", &w(83)).contains("(C+1)*R*S = 4214784"));
    assert!(applies(&F2X3, "gfx942", &w(82)), "83*50176 = 4,164,608");
    // Forward, x 363x363, K = 4096, N = 2: v21's OH*OW*K + OH*OW = 131769*4097 = 539,857,593
    // >= 2^29, and the large-tensor path needs N == 1 or tiles % 16 == 0 (182*182 = 33124, % 16
    // = 4); v30's (K+1)*OH*OW = 539,857,593 < 2^30 passes.
    let f = |n: u64| format!("64-363-363-3x3-4096-363-363-{n}-1x1-1x1-1x1-0-NCHW-FP32-F");
    let e = why(&F3X2, "gfx906", &f(2));
    assert!(e.contains("v21") && e.contains("539857593"), "{e}");
    assert!(applies(&F3X2, "gfx942", &f(2)));
    // N = 1 takes v21's large-tensor path (stride 1, o_N = 539,725,824 < 2^30).
    assert!(applies(&F3X2, "gfx906", &f(1)));
    // The 2^16 limits: K = 65536 channels.
    let e = why(&F3X2, "gfx942", "64-8-8-3x3-65536-8-8-1-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("K = 65536 (needs < 2^16)"), "{e}");
    // Per group: K = 65536 in 2 groups is 32768 per group, under the limit.
    assert!(applies(
        &F3X2,
        "gfx942",
        "64-8-8-3x3-65536-8-8-1-1x1-1x1-1x1-0-NCHW-FP32-F_g2"
    ));
    // v30's K*R*S < 2^28 with a big filter: K = 8192, 63x63 filter (8192*3969 = 32.5M < 2^28
    // passes); (C+1)*R*S = 65*3969 = 257,985 < 2^22 passes.
    assert!(applies(
        &F3X2,
        "gfx942",
        "64-64-64-63x63-8192-2-2-1-0x0-1x1-1x1-0-NCHW-FP32-F"
    ));
    // (C+1)*R*S: C = 1024 with a 63x63 filter: 1025*3969 = 4,068,225 < 2^22 passes,
    // C = 1060: 1061*3969 = 4,211,109 fails.
    assert!(applies(
        &F3X2,
        "gfx942",
        "1024-64-64-63x63-64-2-2-1-0x0-1x1-1x1-0-NCHW-FP32-F"
    ));
    let e = why(&F3X2, "gfx942", "1060-64-64-63x63-64-2-2-1-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("(C+1)*R*S = 4211109"), "{e}");
}

#[test]
fn the_default_is_the_cu_count_for_group_one() {
    for (arch, want) in [
        ("gfx942", 304),
        ("gfx942130", 304),
        ("gfx906", 60),
        ("gfx900", 56),
        ("gfx1030", 72),
    ] {
        let t = target(arch, None);
        assert_eq!(F2X3.static_default(&t, &key(&k3('W', 1))), want, "{arch}");
        assert_eq!(F3X2.static_default(&t, &key(&k3('F', 1))), want, "{arch}");
        assert_eq!(F3X2.static_default(&t, &key(&k3('B', 1))), want, "{arch}");
    }
    // Above 512 CUs MIOpen's default would be refused by its own IsValid: capped at 512.
    assert_eq!(
        F3X2.static_default(&target("gfx942", Some(1000)), &key(&k3('F', 1))),
        512
    );
}

#[test]
fn the_default_of_group_convolutions_hand_derived() {
    // GetBestNGroupParam with 4 CUs (the loop runs i = 1..3), hand-derived from the doc.
    let t4 = target("gfx942", Some(4));
    // F(3,2) forward, G = 2, C = K = 64 (32 per group), x 14x14, 3x3, pad 1, stride 1, N = 8.
    // Factors: r 2 (stride 1), s 4 (S = 3 > f_tile 2), c 2, k 32, w = h = 3, nwh 32.
    // g_s = 4, g_r = 4, g_c = 32, g_k = 32; OH = OW = 14 -> 15; g_nwh = RoundUp(15*15*8 = 1800,
    // 288) = 2016; g_nwh*g_k = 64512.
    // i = 1: RoundUp(64512, 9216) = 64512, mac = 64512*512 = 33,030,144, per CU ceil(2/4) = 1,
    //        33,030,144 * 1.003 = 33,129,234.
    // i = 2: RoundUp(64512, 18432) = 73728, mac = 37,748,736, per CU 1, /2 = 18,874,368 * 1.006
    //        = 18,987,614: best so far.
    // i = 3: RoundUp(64512, 27648) = 82944, mac = 42,467,328, per CU ceil(6/4) = 2,
    //        2 * mac / 3 = 28,311,552 * 1.009: not smaller. -> 2.
    let f = key("64-14-14-3x3-64-14-14-8-1x1-1x1-1x1-0-NCHW-FP32-F_g2");
    assert_eq!(F3X2.static_default(&t4, &f), 2);
    // The same with 8 groups (C/G = K/G = 8): g_c = 8, g_k = 32, g_c*g_s*g_r = 128.
    // i = 1: mac = 64512*128 = 8,257,536 (< 1e7: * 1.04), per CU ceil(8/4) = 2: 17,175,675.
    // i = 2: mac = 73728*128 = 9,437,184, per CU 4: 4*mac/2 * 1.08 = 20,384,317.
    // i = 3: mac = 82944*128 = 10,616,832, per CU 6: 6*mac/3 * 1.12 = 23,781,704. -> 1.
    let f8 = key("64-14-14-3x3-64-14-14-8-1x1-1x1-1x1-0-NCHW-FP32-F_g8");
    assert_eq!(F3X2.static_default(&t4, &f8), 1);
    // F(2,3) backward weights, G = 2: dy 64 channels 14x14, x 32 channels, N = 8. MIOpen passes
    // R, S = dy 14x14, C = N = 8, K = 64/2 = 32, OH, OW = the filter 3x3, N = x's 32/2 = 16.
    // Factors: r 3 (dilation 1 as R_stride), s 6 (S = 14 > 3), c 2, w = h = 2.
    // g_s = 18, g_r = 15, g_c = 8, g_k = 32; g_w = g_h = RoundUp(3, 2) = 4;
    // g_nwh = RoundUp(4*4*16 = 256, 128) = 256, * g_k = 8192; g_c*g_s*g_r = 2160.
    // i = 1: RoundUp(8192, 4096) = 8192, mac 17,694,720, per CU 1: * 1.003 = 17,747,804.
    // i = 2: RoundUp(8192, 8192), mac 17,694,720, /2 = 8,847,360 (mac/2 < 1e7: * 1.08)
    //        = 9,555,149: best.
    // i = 3: RoundUp(8192, 12288) = 12288, mac 26,542,080, per CU 2: 17,694,720 * 1.12. -> 2.
    let w = key("64-14-14-3x3-32-14-14-8-1x1-1x1-1x1-0-NCHW-FP32-W_g2");
    assert_eq!(F2X3.static_default(&t4, &w), 2);
    // The pads go in swapped (pad_w as pad_H, pad_h as pad_W): F(3,2) forward, G = 2,
    // C = K = 64, x 15x13, 3x3, pad 1x0 (h x w), stride 2, N = 16: OH = 8, OW = 6.
    // Factors: stride 2 -> r 4 (3 % 4 != 1), s 4, c 1, w = h = 6. g_s = g_r = 4, g_c = g_k = 32.
    // As written: pad_W = pad_h = 1 (odd: g_w stays 6 -> 6), pad_H = pad_w = 0 (even: g_h stays
    // 8 -> 12); g_nwh = RoundUp(6*12*16 = 1152, 1152) = 1152, * 32 = 36864; per mac unit 512:
    // i = 1: 36864*512 = 18,874,368 * 1.003 = 18,930,991; i = 2: RoundUp(36864, 73728) = 73728,
    // mac 37,748,736, /2 * 1.006 = 18,987,614 (not smaller); i = 3: per CU 2, larger. -> 1.
    // (Unswapped the tiles would be 12x12: g_nwh 2304, and i = 2 would win.)
    let s2 = key("64-15-13-3x3-64-8-6-16-1x0-2x2-1x1-0-NCHW-FP32-F_g2");
    assert_eq!((s2.out_h, s2.out_w), (8, 6));
    assert_eq!(F3X2.static_default(&t4, &s2), 1);
    // Pads 0x1 (h x w), x 15x13: OH = OW = 7; pad_W = pad_h = 0 (even, stride 2: g_w = 8 -> 12),
    // pad_H = pad_w = 1 (odd: g_h = 8 -> 12); g_nwh = 12*12*16 = 2304, * 32 = 73728:
    // i = 1: RoundUp(73728, 36864), mac 37,748,736 * 1.003; i = 2: /2 * 1.006 = 18,987,614: best;
    // i = 3: RoundUp(73728, 110592) = 110592, per CU 2: 37,748,736 * 1.009. -> 2.
    let s2b = key("64-15-13-3x3-64-7-7-16-0x1-2x2-1x1-0-NCHW-FP32-F_g2");
    assert_eq!(F3X2.static_default(&t4, &s2b), 2);
    // With one CU the loop is empty: 1.
    assert_eq!(F3X2.static_default(&target("gfx942", Some(1)), &f), 1);
    // The result stays below the CU count and valid.
    let t = target("gfx942", None);
    for g in [2, 4, 8, 16, 32, 64] {
        let p = key(&format!("64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g{g}"));
        let d = F3X2.static_default(&t, &p);
        assert!((1..304).contains(&d), "G {g}: {d}");
    }
}

#[test]
fn nothing_panics_on_odd_problems() {
    let mut p = key(&k3('W', 2));
    for (stride, groups, big) in [(0, 1, 1), (1, 0, 1), (3, 5, u64::MAX), (2, 1, 0), (1, 3, 1 << 40)] {
        p.stride_w = stride;
        p.stride_h = stride;
        p.dilation_h = stride;
        p.groups = groups;
        p.n = big;
        p.c = big;
        p.k = big.wrapping_add(1);
        p.in_w = big;
        p.out_h = big;
        p.filter_w = big;
        for solver in [&F2X3, &F3X2] {
            for arch in ["gfx906", "gfx942", "gfx1030", "gfx803", ""] {
                for cu in [None, Some(0), Some(1), Some(u32::MAX)] {
                    let t = target(arch, cu);
                    let _ = solver.check_applicable(&t, &p);
                    let _ = solver.static_default(&t, &p);
                    let _ = own_features(&p);
                    let r = solver.rules(&t, &p);
                    for v in [i64::MIN, -1, 0, 1, 512, 513, i64::MAX] {
                        let _ = r.is_valid(&[v]);
                    }
                }
            }
        }
    }
    // Zero groups or sizes are refused, not divided by.
    let mut z = key(&k3('F', 2));
    z.groups = 0;
    let e = F3X2
        .check_applicable(&target("gfx942", None), &z)
        .unwrap_err()
        .to_string();
    assert!(e.contains("zero size"), "{e}");
}

/// Every perf database of the shared data, with the arch its rows are for.
fn databases() -> Vec<(PathBuf, String)> {
    common::PERF_DATABASES
        .iter()
        .map(|name| common::perf_database(name))
        .collect()
}

/// What the rows of one (database, solver) come to.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    rows: usize,
    used: usize,
    /// A1: group-1 F/B F(2,3) rows (obsolete since WORKAROUND_ISSUE_1681 = 0).
    a1: usize,
    /// A10: backward-weights rows over the shader's size limit.
    a10: usize,
    /// Group-1 forward rows of F(2,3) with an empty output (2x2 input, 3x3 filter, no pad),
    /// refused as malformed when read (MIOpen's A1 would refuse them first).
    malformed_a1: usize,
}

#[test]
fn every_tuned_row_is_applicable_and_valid_or_counted_as_the_docs_say() {
    // The docs' verification tables (rows, A-rule failures); the 2019 text files have no
    // Winograd RxS rows.
    let expected = |solver: &str, db: &str| -> Counts {
        let c = |rows, a1, a10| Counts {
            rows,
            used: rows - a1 - a10,
            a1,
            a10,
            malformed_a1: 0,
        };
        match (solver, db) {
            ("ConvBinWinogradRxSf2x3", "gfx942130.db") => c(2982, 0, 0),
            ("ConvBinWinogradRxSf2x3", "gfx906_60.db") => c(9502, 0, 74),
            // The doc's 9,359 A1 rows: 9,352 refused by A1 + 7 malformed.
            ("ConvBinWinogradRxSf2x3", "gfx900_56.db") => Counts {
                malformed_a1: 7,
                a1: 9352,
                ..c(13617, 9359, 15)
            },
            ("ConvBinWinogradRxSf2x3", "gfx1030_36.db") => c(149, 0, 0),
            ("ConvBinWinogradRxSf3x2", "gfx942130.db") => c(7218, 0, 0),
            ("ConvBinWinogradRxSf3x2", "gfx906_60.db") => c(1825, 0, 0),
            ("ConvBinWinogradRxSf3x2", "gfx1030_36.db") => c(2134, 0, 3),
            _ => Counts::default(),
        }
    };
    let mut total = 0;
    for solver in [&F2X3, &F3X2] {
        for (db, arch) in databases() {
            let name = db.file_name().unwrap().to_string_lossy().to_string();
            let rows = read_rows(&db, solver.name()).unwrap_or_else(|e| panic!("{e}"));
            // Rows whose problem is degenerate (empty output) are refused when read: the doc
            // counts them among the A1 rows (group-1 forward, refused by A1 first).
            for (id, why) in &rows.rejected {
                assert!(
                    why.contains("direction: \"F\"") && why.contains("output height would be empty"),
                    "{name} {id}: {why}"
                );
            }
            // The database's own CU count (gfx942130: 304, gfx1030_36: 36 -> 72 HW CUs).
            let stem = name.split('.').next().unwrap();
            let t = Target::new(stem);
            assert_eq!(t.arch, arch);
            let ds = build(&rows, solver, &t);
            let r = &ds.report;
            println!("{} {name}: {}", solver.name(), r.summary());
            assert_eq!((r.malformed_params, r.rule_violations), (0, 0), "{name}");
            assert_eq!((r.duplicates, r.conflicting_duplicates), (0, 0), "{name}");
            let mut got = Counts {
                rows: r.rows,
                used: r.used,
                malformed_a1: r.malformed_problem,
                ..Counts::default()
            };
            let max = max_n_groups(&t);
            let mut wrw_a10 = (0, 0);
            for row in &rows.rows {
                let p = &row.problem;
                let what = format!("{name}: {} {}", p.to_perfdb_key(), row.params);
                let v = solver.parse_params(&row.params).unwrap();
                // V1, V2: every tuned value is in 1..=min(512, HW CUs), applicable or not.
                assert!((1..=max).contains(&v[0]), "{what}");
                match solver.check_applicable(&t, p) {
                    Ok(()) => {}
                    Err(e) => {
                        let e = e.to_string();
                        if e.contains("group 1 direction") {
                            assert!(solver.is_2x3() && p.groups == 1, "{what}");
                            got.a1 += 1;
                        } else if e.contains("size limit") {
                            assert_eq!(p.direction, tuneinfer::problem::Direction::BackwardWeights, "{what}");
                            assert_eq!(p.groups, 1, "{what}");
                            got.a10 += 1;
                            wrw_a10.0 += usize::from(e.contains(" C*R*S"));
                            wrw_a10.1 += usize::from(e.contains("(C+1)*R*S"));
                        } else {
                            panic!("{what}: {e}");
                        }
                    }
                }
                // Backward rows with stride 2: x's size is not stored (the smallest is taken);
                // the largest x (+1) gives the same verdict.
                if p.stride_h > 1 && !p.direction.is_forward() {
                    let mut q = p.clone();
                    q.in_h += p.stride_h - 1;
                    q.in_w += p.stride_w - 1;
                    assert_eq!(
                        solver.check_applicable(&t, p).is_ok(),
                        solver.check_applicable(&t, &q).is_ok(),
                        "{what}"
                    );
                }
            }
            // The A10 rows fail v21's C*R*S (gfx900, gfx906) or v30's (C+1)*R*S (gfx1030).
            if arch == "gfx1030" {
                assert_eq!(wrw_a10, (0, got.a10), "{name}");
            } else {
                assert_eq!(wrw_a10, (got.a10, 0), "{name}");
            }
            assert_eq!(got, expected(solver.name(), &name), "{} {name}", solver.name());
            total += r.rows;
        }
    }
    assert_eq!(total, 37_427, "the solvers README's row count");
}

#[test]
fn the_default_matches_the_tuned_value_as_often_as_the_docs_say() {
    // The docs' HeuristicInit replica vs tuned on gfx942130: F(2,3) 362 of 1,512 FP32 and 338
    // of 1,470 FP16 rows; F(3,2) 429 of 3,693 and 414 of 3,525.
    let db = common::perfdb_dir().join("gfx942130.db");
    let t = Target::new("gfx942130");
    for (solver, want) in [(&F2X3, [(362, 1512), (338, 1470)]), (&F3X2, [(429, 3693), (414, 3525)])] {
        let rows = read_rows(&db, solver.name()).unwrap_or_else(|e| panic!("{e}"));
        let mut got = [(0, 0); 2];
        for row in &rows.rows {
            let i = usize::from(row.problem.precision != tuneinfer::problem::Precision::Fp32);
            let v = solver.parse_params(&row.params).unwrap()[0];
            let d = solver.static_default(&t, &row.problem);
            assert!(solver.rules(&t, &row.problem).is_valid(&[d]));
            got[i].0 += usize::from(d == v);
            got[i].1 += 1;
        }
        assert_eq!(got, want, "{}", solver.name());
    }
}

#[test]
fn params_that_are_not_one_integer_in_the_domain_are_counted_never_used() {
    let dir = std::env::temp_dir().join(format!("tuneinfer-wino-db-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("gfx942130.bad.txt");
    let f = |n: u64| format!("64-28-28-3x3-64-28-28-{n}-1x1-1x1-1x1-0-NCHW-FP32-F");
    let lines = [
        format!("{}=ConvBinWinogradRxSf3x2:17", f(1)),
        format!("{}=ConvBinWinogradRxSf3x2:abc", f(2)),
        format!("{}=ConvBinWinogradRxSf3x2:1,2", f(3)),
        format!("{}=ConvBinWinogradRxSf3x2:", f(4)),
        format!("{}=ConvBinWinogradRxSf3x2:2.5", f(5)),
        // In the span but above gfx942's 304 CUs; 0 and 513 outside the span.
        format!("{}=ConvBinWinogradRxSf3x2:305", f(6)),
        format!("{}=ConvBinWinogradRxSf3x2:0", f(7)),
        format!("{}=ConvBinWinogradRxSf3x2:513", f(8)),
        // NHWC and BF16 rows: not applicable.
        format!("{}=ConvBinWinogradRxSf3x2:7", f(9).replace("NCHW", "NHWC")),
        format!("{}=ConvBinWinogradRxSf3x2:7", f(10).replace("FP32", "BF16")),
        format!("{}=ConvBinWinogradRxSf3x2: 304 ", f(11)),
    ];
    std::fs::write(&db, lines.join("\n")).unwrap();
    let rows = read_rows(&db, F3X2.name()).unwrap();
    let ds = build(&rows, &F3X2, &Target::new("gfx942130"));
    let r = &ds.report;
    assert_eq!(
        (r.rows, r.used, r.malformed_params, r.rule_violations, r.not_applicable),
        (11, 2, 4, 3, 2),
        "{}",
        r.summary()
    );
    let used: Vec<i64> = ds.samples.iter().map(|s| s.config[0]).collect();
    assert_eq!(used, vec![17, 304]);
    // The parse errors name the field.
    let e = F3X2.parse_params("abc").unwrap_err().to_string();
    assert!(e.contains("n_groups") && e.contains("'abc' is not an integer"), "{e}");
    let e = F3X2.parse_params("1,2").unwrap_err().to_string();
    assert!(e.contains("expected 1"), "{e}");
    // Training on it refuses nothing silently: the same counts.
    let ds = tuneinfer::data::dataset::load(&db, F3X2.name(), &Target::new("gfx942")).unwrap();
    assert_eq!(ds.report.used, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// (solver, arch, database) of every shipped model.
const SHIPPED: &[(&str, &str, &str)] = &[
    ("ConvBinWinogradRxSf2x3", "gfx942", "gfx942130.db"),
    ("ConvBinWinogradRxSf3x2", "gfx942", "gfx942130.db"),
    ("ConvBinWinogradRxSf2x3", "gfx906", "gfx906_60.db"),
    ("ConvBinWinogradRxSf3x2", "gfx906", "gfx906_60.db"),
];

/// Every `step`-th applicable problem of `solver`'s rows in every shared database (other arches'
/// problems too: the rule is the target's, the problems are any), plus hand-made ones.
fn problems(solver: &dyn Tunable, target: &Target, step: usize) -> Vec<ConvProblem> {
    let mut out = Vec::new();
    for db in ["gfx942130.db", "gfx906_60.db", "gfx900_56.db", "gfx1030_36.db"] {
        let rows = read_rows(&common::perfdb_dir().join(db), solver.solver_name()).unwrap_or_else(|e| panic!("{e}"));
        out.extend(rows.rows.into_iter().map(|r| r.problem));
    }
    for k in [
        k3('F', 1),
        k3('B', 1),
        k3('W', 1),
        k3('F', 64),
        k3('W', 2),
        "1-7-7-3x3-1-7-7-1-1x1-1x1-1x1-0-NCHW-FP16-W".to_string(),
        "3-224-224-3x3-64-224-224-256-1x1-1x1-1x1-0-NCHW-FP32-F".to_string(),
        "2048-7-7-5x5-2048-7-7-1-2x2-1x1-1x1-0-NCHW-FP16-B".to_string(),
        "64-28-28-3x3-64-14-14-1-1x1-2x2-1x1-0-NCHW-FP32-F_g32".to_string(),
        "64-83-83-1x1-64-83-83-64-0x0-1x1-1x1-0-NCHW-FP32-W_g4".to_string(),
    ] {
        out.push(key(&k));
    }
    out.retain(|p| solver.applicable(target, p).is_ok());
    out.into_iter().step_by(step).collect()
}

#[test]
fn every_answer_of_every_decoding_of_every_shipped_model_is_valid() {
    let _ = common::perfdb_dir();
    for &(name, arch, _) in SHIPPED {
        let tunable = solvers::tunable(solvers::by_name(name).unwrap()).unwrap();
        // The arch's CUs, and fewer (the rule caps the model's answers).
        for cu in [None, Some(20)] {
            let pred = Predictor::load(arch, name, &[common::weights_dir()])
                .unwrap_or_else(|e| panic!("{e}"))
                .with_compute_units(cu);
            let target = target(arch, cu);
            let step = if cu.is_some() { 7 } else { 2 };
            let problems = problems(tunable, &target, step);
            assert!(
                problems.len() >= 1000,
                "{name} {arch}: only {} problems",
                problems.len()
            );
            for mode in [
                DecodeMode::Miopen,
                DecodeMode::Beam { width: 4, top: 4 },
                pred.default_mode(),
            ] {
                let answers = pred.predict_batch(&problems, mode);
                let mut from_model = 0;
                for (p, a) in problems.iter().zip(&answers) {
                    let a = a.as_ref().unwrap_or_else(|e| panic!("{name} {arch} {p}: {e}"));
                    assert!(!a.is_empty(), "{name} {arch} {p}: no answer");
                    for x in a {
                        let c = tunable.parse_params(&x.config).unwrap_or_else(|e| panic!("{e}"));
                        assert!(
                            tunable.rules(&target, p).is_valid(&c),
                            "{name} {arch} {cu:?} {mode:?} {p}: {} is not valid",
                            x.config
                        );
                    }
                    from_model += usize::from(a[0].source == tuneinfer::Source::Model);
                }
                println!(
                    "{name} {arch} cu {cu:?} {mode:?}: {} problems, {from_model} answered by the model, all valid",
                    problems.len()
                );
                // MIOpen's walk falls back to the default where "-1" ranks first: with one
                // noisy parameter the top token's probability is low, so it does in up to 7% of
                // these problems; the beam (which skips "-1") rarely.
                let floor = if mode == DecodeMode::Miopen { 90 } else { 95 };
                assert!(
                    from_model * 100 >= problems.len() * floor,
                    "{name} {arch} {mode:?}: the model answered only {from_model} of {}",
                    problems.len()
                );
            }
        }
    }
}

#[cfg(feature = "gpu")]
#[test]
fn gpu_gives_the_cpu_configs() {
    let _ = common::perfdb_dir();
    let Some(ctx) = common::gpu() else { return };
    for &(name, arch, _) in SHIPPED {
        let tunable = solvers::tunable(solvers::by_name(name).unwrap()).unwrap();
        let dirs = vec![common::weights_dir()];
        let cpu = Predictor::load(arch, name, &dirs).unwrap_or_else(|e| panic!("{e}"));
        let gpu = tuneinfer::gpu::GpuPredictor::load(arch, name, &dirs, ctx.clone()).unwrap_or_else(|e| panic!("{e}"));
        let problems = problems(tunable, &Target::new(arch), 40);
        assert!(problems.len() >= 200, "{name} {arch}: only {} problems", problems.len());
        for mode in [
            DecodeMode::Miopen,
            DecodeMode::Beam { width: 4, top: 4 },
            cpu.default_mode(),
        ] {
            let want = cpu.predict_batch(&problems, mode);
            let got = gpu.predict_batch(&problems, mode);
            let (same, worst) =
                common::assert_same_predictions(&format!("{name} {arch} {mode:?}"), &problems, &want, &got);
            println!(
                "{name} {arch} {mode:?}: {same} of {} identical; worst score difference {worst:e}",
                problems.len()
            );
            assert_eq!(same, problems.len());
            assert!(worst <= 1e-4, "{name} {arch} {mode:?}: score difference {worst}");
        }
    }
}

/// Runs the CLI from the crate root (so `weights/` and `../shared/miopen` resolve).
fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("TUNEINFER_MODELS")
        .output()
        .expect("run tuneinfer");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn cli_predicts_with_the_arch_alone_and_refuses_bad_input() {
    let _ = common::perfdb_dir();
    let k = "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F";
    // gfx942130 has a model of its own (MIOpen 3.5.1's rows) beside gfx942's (the sqlite
    // database's), so the two answers may differ; both are n_groups within 304 CUs.
    for arch in ["gfx942", "gfx942130"] {
        let (rc, out, err) = cli(&[
            "predict",
            "--arch",
            arch,
            "--solver",
            "ConvBinWinogradRxSf3x2",
            "--device",
            "cpu",
            k,
        ]);
        assert_eq!(rc, 0, "{arch}: {err}");
        let v: i64 = out.trim().parse().unwrap_or_else(|_| panic!("{arch}: '{out}'"));
        assert!((1..=304).contains(&v), "{arch}: {v}");
    }
    // Fewer CUs: every ranked answer within them.
    let (rc, out, err) = cli(&[
        "predict",
        "--arch",
        "gfx942",
        "--solver",
        "ConvBinWinogradRxSf3x2",
        "--device",
        "cpu",
        "--cu",
        "8",
        "--beam",
        "8",
        k,
    ]);
    assert_eq!(rc, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8, "{out}");
    for l in lines {
        let v: i64 = l.split('\t').nth(1).unwrap().parse().unwrap();
        assert!((1..=8).contains(&v), "{l}");
    }
    // Refusals: exit 5 with the reason; usage errors: exit 2.
    let refuse = |arch: &str, solver: &str, problem: &str, want: &str| {
        let (rc, out, err) = cli(&[
            "predict", "--arch", arch, "--solver", solver, "--device", "cpu", problem,
        ]);
        assert_eq!(rc, 5, "{problem}: {out} {err}");
        assert!(err.contains(want), "{problem}: {err}");
    };
    refuse(
        "gfx942",
        "ConvBinWinogradRxSf3x2",
        &k.replace("NCHW", "NHWC"),
        "layout NHWC: ConvBinWinogradRxSf3x2 supports only NCHW",
    );
    refuse("gfx942", "ConvBinWinogradRxSf3x2", &k.replace("FP32", "BF16"), "BF16");
    refuse("gfx942", "ConvBinWinogradRxSf2x3", k, "group 1 direction F");
    refuse(
        "gfx906",
        "ConvBinWinogradRxSf2x3",
        "64-224-224-3x3-3-224-224-128-1x1-1x1-1x1-0-NCHW-FP32-W",
        "size limit of the v21 kernel on gfx906: C*R*S = 6422528",
    );
    for cu in ["0", "70000", "-3", "many"] {
        let (rc, _, err) = cli(&[
            "predict",
            "--arch",
            "gfx942",
            "--solver",
            "ConvBinWinogradRxSf3x2",
            "--cu",
            cu,
            k,
        ]);
        assert_eq!(rc, 2, "--cu {cu}: {err}");
        assert!(err.contains("--cu"), "--cu {cu}: {err}");
    }
}
