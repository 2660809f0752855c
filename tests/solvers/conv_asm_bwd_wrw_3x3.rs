//! ConvAsmBwdWrW3x3's rules, default and applicability against hand-derived cases from
//! `../shared/miopen/solvers/ConvAsmBwdWrW3x3.md` (MIOpen's `conv_asm_dir_BwdWrW3x3.cpp`), and
//! against every tuned row of the shared perf databases (sqlite and the 2019 text files).
//!
//! Notation in the comments (doc section 4): e = 2 for FP16, else 1; cpw = 64/chunk_size;
//! gin/gout = gprs_per_line_in/out; vgprs = 9*kpw + (pld+2)*e*gin + ceil(pld/sh)*e*gout
//! (+ division gprs unless K/(rio ? cpw : kpw)/G is a power of two) + 6 + (e-1).

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_bwd_wrw_3x3::*;
use tuneinfer::solvers::{Target, Tunable};

/// A W key: dy has `c_dy` channels and size `hw_dy`, x has `c_x` channels and size `hw_x`.
fn wkey([c_dy, hw_dy]: [u64; 2], [c_x, hw_x]: [u64; 2], n: u64, stride: u64, ty: &str, groups: u64) -> ConvProblem {
    let g = if groups == 1 {
        String::new()
    } else {
        format!("_g{groups}")
    };
    ConvProblem::from_perfdb_key(&format!(
        "{c_dy}-{hw_dy}-{hw_dy}-3x3-{c_x}-{hw_x}-{hw_x}-{n}-1x1-{stride}x{stride}-1x1-0-NCHW-{ty}-W{g}"
    ))
    .unwrap()
}

/// A stride-1 W key (dy size = x size): K = `k` dy channels, C = `c` x channels.
fn key(k: u64, hw: u64, c: u64, n: u64, ty: &str) -> ConvProblem {
    wkey([k, hw], [c, hw], n, 1, ty, 1)
}

fn cfg(s: &str) -> Vec<i64> {
    s.split(',').map(|f| f.parse().unwrap()).collect()
}

fn gfx906() -> Target {
    Target::new("gfx906")
}

#[test]
fn the_key_maps_dy_and_x_as_miopen_does() {
    // A W key's "in" is dy (K channels, dy size), its "out" is x (C channels, x size).
    let p = wkey([128, 4], [192, 7], 32, 2, "FP32", 1);
    assert_eq!((p.k, p.c), (128, 192));
    assert_eq!((p.in_h, p.in_w), (7, 7), "x's size: the kernel's H, W");
    assert_eq!((p.out_h, p.out_w), (4, 4), "dy's size");
    // The features read x's size.
    let f = own_features(&p);
    assert_eq!((f[0], f[1], f[2]), (192f32.log2(), 7.0, 7f32.log2()));
}

#[test]
fn each_numbered_rule_hand_derived() {
    // C = 64, K = 128, x 28x28, N 16, stride 1.
    let fp32 = Rules::new(&gfx906(), &key(128, 28, 64, 16, "FP32"));
    let ok = |r: &Rules, s: &str| r.prefix_valid(&cfg(s));
    // A valid config: chunk 8 (cpw 8), kpw 4: 64 % 8, 128 % 4. gin = (28+8-1-1)/7 = 4,
    // gout 4; vgprs = 36 + 4*1*4 + 2*1*4 + 0 (K/kpw = 32 is a power of two) + 6 = 66 <= 256;
    // loops = 2 + 8 + (28-1-2) % 8 + 1 = 12, m = 3 + 7/4 = 4, v = 4*3*4*3*4/3 = 192,
    // total = 12*196 = 2352 < 32000; LDS (4-1)*256*36 = 27648.
    assert!(fp32.is_valid(&cfg("0,0,8,4,2,4")));
    // 1. limit_wave_cnt in 0..9.
    assert!(ok(&fp32, "0") && ok(&fp32, "9") && !ok(&fp32, "10") && !ok(&fp32, "-1"));
    // 2. reverse_inout in {0,1}; reverse_inout 1 needs stride 1x1.
    assert!(ok(&fp32, "0,1") && ok(&fp32, "0,0") && !ok(&fp32, "0,2"));
    // stride 2 (gfx8-only problem, the rules still apply): x 28 -> dy 14.
    let s2 = Rules::new(&Target::new("gfx803"), &wkey([128, 14], [64, 28], 16, 2, "FP32", 1));
    assert!(ok(&s2, "0,0") && !ok(&s2, "0,1"));
    // 3. chunk_size in {8,16}; (a) (rio ? K : C) % (cpw*G); (b) C or K % cpw; (c) (rio ? K : C) % cpw.
    assert!(ok(&fp32, "0,0,8") && ok(&fp32, "0,0,16") && !ok(&fp32, "0,0,4") && !ok(&fp32, "0,0,32"));
    // C = 4, K = 8: chunk 8 (cpw 8) needs 8 | C for rio 0 -> fails, rio 1 reads K = 8 -> passes.
    let c4 = Rules::new(&gfx906(), &key(8, 28, 4, 16, "FP32"));
    assert!(!ok(&c4, "0,0,8") && ok(&c4, "0,1,8") && ok(&c4, "0,0,16"));
    // C = 12, K = 20: chunk 16 (cpw 4) with rio 0 reads C: 12 % 4 = 0; rio 1 reads K: 20 % 4 = 0;
    // chunk 8 (cpw 8): 12 % 8 and 20 % 8 are both nonzero, (a) and (b) fail.
    let c12 = Rules::new(&gfx906(), &key(20, 28, 12, 16, "FP32"));
    assert!(ok(&c12, "0,0,16") && ok(&c12, "0,1,16") && !ok(&c12, "0,0,8") && !ok(&c12, "0,1,8"));
    // (a) with groups: G = 2, C = 8, K = 32. Chunk 8 with rio 0: C % (cpw*G) = 8 % 16 fails;
    // chunk 16: 8 % (4*2) = 0 passes; chunk 8 with rio 1 reads K: 32 % 16 = 0 passes.
    let g2 = Rules::new(&gfx906(), &wkey([32, 28], [8, 28], 16, 1, "FP32", 2));
    assert!(!ok(&g2, "0,0,8") && ok(&g2, "0,0,16") && ok(&g2, "0,1,8"));
    // 4. k_per_wave in {1,2,4,8}; (a) (rio ? C : K) % (kpw*G); (b) chunk*kpw <= 64; (c).
    assert!(ok(&fp32, "0,0,8,8") && !ok(&fp32, "0,0,8,3") && !ok(&fp32, "0,0,8,16"));
    // chunk 16 * kpw 8 = 128 > 64; 16*4 = 64 passes.
    assert!(!ok(&fp32, "0,0,16,8") && ok(&fp32, "0,0,16,4"));
    // C = 4, K = 8, rio 1 reads C = 4: kpw 8 fails, 4 passes; rio 0 reads K = 8: kpw 8 passes.
    assert!(!ok(&c4, "0,1,8,8") && ok(&c4, "0,1,8,4") && ok(&c4, "0,0,16,4"));
    // G = 2, rio 0 reads K = 32: kpw*G = 16 | 32 passes (chunk 16, kpw 8 breaks (b): use 4).
    assert!(ok(&g2, "0,0,16,4"));
    // G = 2, C = 8 with rio 1: kpw 4 * G 2 = 8 | 8 passes, kpw 8*2 = 16 fails (chunk 8: 64 ok).
    assert!(ok(&g2, "0,1,8,4") && !ok(&g2, "0,1,8,8"));
    // 5. pipe_lines_depth in 1..16, <= min(H, 16); vgprs <= 256; total < 32000.
    // kpw 1, pld 16: vgprs = 9 + 18*4 + 16*4 + 6 = 151; loops = 16 + 288 + (28-1-16) + 1 = 316,
    // v = 1*3*4*3*4/3 = 48, total = 316*52 = 16432 < 32000.
    assert!(ok(&fp32, "0,0,8,1,16") && !ok(&fp32, "0,0,8,1,17") && !ok(&fp32, "0,0,8,1,0"));
    // kpw 4, pld 16: total = 316*(4+192) = 61936 >= 32000.
    assert!(!ok(&fp32, "0,0,8,4,16"));
    // x 7x7: pld <= 7.
    let h7 = Rules::new(&gfx906(), &key(128, 7, 64, 16, "FP32"));
    assert!(ok(&h7, "0,0,8,1,7") && !ok(&h7, "0,0,8,1,8"));
    // kpw 8, pld 16: vgprs 72 + 18*4 + 16*4 + 6 = 214 <= 256 but the total is
    // 316*(4+384) = 122608 (v = 8*3*4*3*4/3 = 384).
    assert!(!ok(&fp32, "0,0,8,8,16"));
    // pld 2: vgprs 72 + 16 + 8 + 6 = 102, loops = 2 + 8 + 25 % 8 + 1 = 12, total 12*388 = 4656.
    assert!(ok(&fp32, "0,0,8,8,2"));
    // vgprs over 256: x 512 wide, chunk 16: gin = ceil(512/16) = 32, gout 32, kpw 4, pld 1:
    // 36 + 3*32 + 1*32 + 6 = 170 passes; pld 3: 36 + 5*32 + 3*32 + 6 = 298 > 256 fails.
    let w512 = Rules::new(&gfx906(), &key(64, 512, 64, 2, "FP32"));
    assert!(ok(&w512, "0,0,16,4,1") && !ok(&w512, "0,0,16,4,3"));
    // FP16 doubles the lines (e = 2): x 28, chunk 8: out_w_vec 14, gin = (14+6)/7 = 2, gout 2;
    // kpw 8, pld 2: loops 12, m = 3 + 5/4 = 4, v = 8*3*2*3*4/3*2 = 384, exch 12,
    // total = 12*(4+384+12)*2 = 9600 on gfx906 (dot2); on gfx900 v doubles to 768:
    // total = 12*784*2 = 18816; pld 3: loops = 3 + 15 + 24 % 15 + 1 = 28 -> 28*400*2 = 22400 on
    // gfx906 but 28*784*2 = 43904 >= 32000 on gfx900.
    let p16 = key(128, 28, 64, 16, "FP16");
    let (h906, h900) = (Rules::new(&gfx906(), &p16), Rules::new(&Target::new("gfx900"), &p16));
    assert!(ok(&h906, "0,0,8,8,2") && ok(&h900, "0,0,8,8,2"));
    assert!(ok(&h906, "0,0,8,8,3") && !ok(&h900, "0,0,8,8,3"));
    // 6. n_per_group in 1..8, <= N; > 4 needs vgprs <= 128; limit_wave_cnt*4 >= n_per_group;
    //    LDS (n_per_group-1)*256*accums_cnt <= 65536.
    assert!(ok(&fp32, "0,0,8,1,2,8") && !ok(&fp32, "0,0,8,1,2,9") && !ok(&fp32, "0,0,8,1,2,0"));
    // N = 2: n_per_group <= 2.
    let n2 = Rules::new(&gfx906(), &key(128, 28, 64, 2, "FP32"));
    assert!(ok(&n2, "0,0,8,1,2,2") && !ok(&n2, "0,0,8,1,2,3"));
    // n_per_group > 4 needs vgprs <= 128: 0,0,8,4,2 has 66 (LDS 4*256*36 = 36864) -> 5 passes;
    // x 512, chunk 16, kpw 4, pld 1 has 170 (above): with N = 8, 4 passes (LDS 3*256*36 = 27648)
    // and 5 fails.
    assert!(ok(&fp32, "0,0,8,4,2,5"));
    let w512n8 = Rules::new(&gfx906(), &key(64, 512, 64, 8, "FP32"));
    assert!(ok(&w512n8, "0,0,16,4,1,4") && !ok(&w512n8, "0,0,16,4,1,5"));
    // limit_wave_cnt 1: 4 >= n_per_group: 4 passes, 5 fails; limit 2 allows 8 (LDS with kpw 1:
    // 7*256*9 = 16128).
    assert!(ok(&fp32, "1,0,8,1,2,4") && !ok(&fp32, "1,0,8,1,2,5") && ok(&fp32, "2,0,8,1,2,8"));
    // LDS: kpw 4 (accums 36): n_per_group 8 uses 7*256*36 = 64512 <= 65536 passes; kpw 8
    // (accums 72): n_per_group 4 uses 3*256*72 = 55296 passes, 5 uses 73728 fails.
    assert!(ok(&fp32, "0,0,8,4,2,8") && ok(&fp32, "0,0,8,8,2,4") && !ok(&fp32, "0,0,8,8,2,5"));
    // Longer than 6 is never valid; a short config is not a valid config.
    assert!(!fp32.prefix_valid(&cfg("0,0,8,4,2,4,0")));
    assert!(!fp32.is_valid(&cfg("0,0,8,4,2")));
}

#[test]
fn static_default_hand_derived_from_heuristic_init() {
    let t = gfx906();
    let d = |p: &ConvProblem| static_default(&t, p).to_vec();
    // C = 64, K = 64, x 28: chunk 8 (W < 48), 64 % 8 = 0; rio 0 (C % 4 = 0, W >= 8);
    // c_k = 4096 -> kpw 2, n_per_group 4; pld 2 (H >= 8).
    assert_eq!(d(&key(64, 28, 64, 16, "FP32")), cfg("0,0,8,2,2,4"));
    // C = 256, K = 256, x 56: chunk 16 (W >= 48); c_k = 65536 -> kpw 4 (chunk 16), npg 1.
    assert_eq!(d(&key(256, 56, 256, 16, "FP32")), cfg("0,0,16,4,2,1"));
    // Same at x 14: chunk 8 -> kpw 2.
    assert_eq!(d(&key(256, 14, 256, 16, "FP32")), cfg("0,0,8,2,2,1"));
    // C = 3 (x channels), K = 64, x 224: chunk 16; rio 1 (C % 4 != 0); c_k = 192 -> kpw 1,
    // n_per_group 8 but W < 256, N = 32: 8; pld 2.
    assert_eq!(d(&key(64, 224, 3, 32, "FP16")), cfg("0,1,16,1,2,8"));
    // C = 16, K = 16, x 7, N 2: chunk 8; rio 1 (W < 8); c_k 256 -> kpw 2 (rio reads C = 16:
    // 16 % 2 = 0); n_per_group 8 -> min N = 2; pld = H = 7 (H < 8, W < 64).
    assert_eq!(d(&key(16, 7, 16, 2, "FP32")), cfg("0,1,8,2,7,2"));
    // W >= 256 caps n_per_group at 4: C = K = 8, x 256, N 16: chunk 16, c_k 64 -> kpw 1, npg 8->4.
    assert_eq!(d(&key(8, 256, 8, 16, "FP32")), cfg("0,0,16,1,2,4"));
    // C = 4, K = 6, x 28: chunk 8, but 4 % 8 and 6 % 8 != 0 -> chunk 16 (cpw 4); rio 0;
    // c_k 24 -> kpw 1, npg 8; pld 2: 4 % 4 = 0, valid.
    assert_eq!(d(&key(6, 28, 4, 16, "FP32")), cfg("0,0,16,1,2,8"));
    // The conservative re-init: C = 64, K = 128, x 512 wide, N 16, FP32 on gfx906.
    // Heuristic: chunk 16, rio 0, c_k 8192 -> kpw 2, n_per_group 2, pld 2:
    // gin = 32, gout 32: vgprs = 18 + 4*32 + 2*32 + 6 = 216; loops = 2 + 8 + 509 % 8 + 1 = 16,
    // m = 3 + 35/4 = 11, v = 2*3*32*3*4/3 = 768: total 16*779 = 12464: valid -> kept.
    assert_eq!(d(&key(128, 512, 64, 16, "FP32")), cfg("0,0,16,2,2,2"));
    // x 512 FP16 on gfx900: out_w_vec 256, chunk 16: gin 16, gout 16; kpw 2 (c_k 8192), pld 2:
    // vgprs = 18 + 4*2*16 + 2*2*16 + 6 + 1 = 217; loops 16, m = 3 + 19/4 = 7,
    // v = 2*3*16*3*4*2/3*2 = 1536, exch 21: total 16*1564*2 = 50048 >= 32000: invalid.
    // Re-init 0,0,16,1,2,1: v = 1*3*16*3*4*2/3*2 = 768, total 16*(7+768+21)*2 = 25472 < 32000:
    // valid (C = 64 divisible by 4 -> rio 0).
    let p = key(128, 512, 64, 16, "FP16");
    assert_eq!(static_default(&Target::new("gfx900"), &p).to_vec(), cfg("0,0,16,1,2,1"));
    // On gfx906 (dot2) the heuristic config is valid: v = 768, total 16*(7+768+21)*2 = 25472.
    assert_eq!(static_default(&t, &p).to_vec(), cfg("0,0,16,2,2,2"));
}

#[test]
fn applicability_names_the_reason() {
    let t = gfx906();
    assert!(check_applicable(&t, &key(128, 28, 64, 16, "FP32")).is_ok());
    let why = |t: &Target, k: &str| {
        check_applicable(t, &ConvProblem::from_perfdb_key(k).unwrap())
            .unwrap_err()
            .to_string()
    };
    let e = why(&t, "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("direction") && e.contains("backward-weights"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-B");
    assert!(e.contains("direction B"), "{e}");
    let e = why(&t, "64-28-28-1x1-128-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("pad 0x0"), "{e}");
    let e = why(&t, "64-26-26-5x5-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("filter 5x5"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NHWC-FP32-W");
    assert!(e.contains("NHWC"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-BF16-W");
    assert!(e.contains("BF16"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-28-28-15-1x1-1x1-1x1-0-NCHW-FP16-W");
    assert!(e.contains("even batch"), "{e}");
    let e = why(&t, "64-26-26-3x3-128-28-28-16-1x1-1x1-2x2-0-NCHW-FP32-W");
    assert!(e.contains("dilation"), "{e}");
    let e = why(&t, "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-1-NCHW-FP32-W");
    assert!(e.contains("bias"), "{e}");
    // Arch: not on gfx1030 (not gfx8/gfx9), not on gfx942 (not in the allow-list).
    for arch in ["gfx1030", "gfx942"] {
        let e = why(
            &Target::new(arch),
            "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-W",
        );
        assert!(e.contains(arch) && e.contains("gfx803, gfx900"), "{e}");
    }
    // Stride 2: only on gfx8 (WORKAROUND_ISSUE_532).
    let s2 = "64-14-14-3x3-128-28-28-16-1x1-2x2-1x1-0-NCHW-FP32-W";
    let e = why(&t, s2);
    assert!(e.contains("stride 2x2") && e.contains("gfx9"), "{e}");
    assert!(check_applicable(&Target::new("gfx803"), &ConvProblem::from_perfdb_key(s2).unwrap()).is_ok());
    // FP16 not on gfx8; FP32 not on gfx90a, FP16 is.
    let h = "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP16-W";
    assert!(why(&Target::new("gfx803"), h).contains("FP16"));
    assert!(check_applicable(&Target::new("gfx90a"), &ConvProblem::from_perfdb_key(h).unwrap()).is_ok());
    let e = why(
        &Target::new("gfx90a"),
        "64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-W",
    );
    assert!(e.contains("FP32 on gfx90a"), "{e}");
    // Channels: stride 1 needs C or K divisible by 4G: K = 6, C = 3 fails; K = 8, C = 3 passes.
    let e = why(&t, "6-28-28-3x3-3-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("divisible by 4*groups = 4"), "{e}");
    assert!(check_applicable(&t, &key(8, 28, 3, 16, "FP32")).is_ok());
    // Stride 2 (gfx8) needs C divisible: C = 3 fails even with K = 8.
    let e = why(
        &Target::new("gfx803"),
        "8-14-14-3x3-3-28-28-16-1x1-2x2-1x1-0-NCHW-FP32-W",
    );
    assert!(e.contains("C (stride 2)"), "{e}");
    // Groups 2: 4G = 8: C = 16 passes, C = 12 and K = 12 fail.
    assert!(check_applicable(&t, &wkey([16, 28], [16, 28], 16, 1, "FP32", 2)).is_ok());
    assert!(check_applicable(&t, &wkey([12, 28], [12, 28], 16, 1, "FP32", 2)).is_err());
    // Size limits: W <= 512; C < 2^16; C*H*W < 2^22 (C = 64, 256x256 x: 2^22 fails).
    let e = why(&t, "64-28-513-3x3-64-28-513-2-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("W <= 512"), "{e}");
    let e = why(&t, "64-8-8-3x3-65536-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("65536"), "{e}");
    let e = why(&t, "64-256-256-3x3-64-256-256-2-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("2^22"), "{e}");
    // C = K = 32 at 256x256: 2^21 each, applicable.
    assert!(check_applicable(&t, &key(32, 256, 32, 2, "FP32")).is_ok());
    // N*C*H*W < 2^29: C = 64, 128x128 x (2^20 per image), N = 512 = 2^9 -> 2^29 fails.
    let e = why(&t, "64-128-128-3x3-64-128-128-512-1x1-1x1-1x1-0-NCHW-FP32-W");
    assert!(e.contains("2^29"), "{e}");
}

#[test]
fn nothing_panics_on_odd_problems_or_values() {
    let mut p = key(128, 28, 64, 16, "FP16");
    let values = [i64::MIN, -1, 0, 1, 2, 3, 4, 8, 9, 16, 17, 64, i64::MAX];
    for (stride, groups, pad, big) in [(0, 1, 1, 1), (1, 0, 8, 1), (3, 5, 0, u64::MAX), (2, 1, 9, 0)] {
        p.stride_w = stride;
        p.stride_h = stride;
        p.groups = groups;
        p.pad_w = pad;
        p.n = big;
        p.c = big;
        p.k = big.wrapping_add(1);
        p.in_w = big;
        p.in_h = big;
        for arch in ["gfx906", "gfx900", "gfx1030", ""] {
            let t = Target::new(arch);
            let _ = check_applicable(&t, &p);
            let r = Rules::new(&t, &p);
            let _ = static_default(&t, &p);
            let _ = own_features(&p);
            for a in values {
                for b in values {
                    let _ = r.prefix_valid(&[0, 0, 8, a, b, 1]);
                    let _ = r.prefix_valid(&[a, b, 16, 1, 1, 8]);
                    let _ = r.prefix_valid(&[1, 0, a, b]);
                }
            }
            let _ = r.completable(&[0], &values);
        }
    }
}

/// The rules with the trait's plain depth-first look-ahead written out again (a reference that
/// does not share the trait's code).
fn plain_completable(rules: &Rules, prefix: &mut Vec<i64>, domain: &[i64]) -> bool {
    if !rules.prefix_valid(prefix) {
        return false;
    }
    if prefix.len() == NUM_PARAMS {
        return true;
    }
    domain.iter().any(|&x| {
        prefix.push(x);
        let found = plain_completable(rules, prefix, domain);
        prefix.pop();
        found
    })
}

#[test]
fn look_ahead_equals_plain_search() {
    let t900 = Target::new("gfx900");
    let problems = [
        (gfx906(), key(128, 28, 64, 16, "FP32")),
        (t900.clone(), key(128, 512, 64, 16, "FP16")),
        (gfx906(), key(8, 7, 4, 2, "FP32")),
        (t900, key(64, 224, 3, 32, "FP16")),
        (Target::new("gfx803"), wkey([128, 14], [64, 28], 16, 2, "FP32", 1)),
    ];
    let domains: [&[i64]; 3] = [
        &[0, 1, 2, 4, 8, 16],
        &[1, 3, 5, 7, 8, 16],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16],
    ];
    let mut rng = tuneinfer::testutil::Lcg::new(7);
    let mut checked = (0, 0);
    for (t, p) in &problems {
        let rules = Rules::new(t, p);
        for dom in domains {
            for _ in 0..300 {
                let len = rng.below(6) as usize;
                let prefix: Vec<i64> = (0..len).map(|_| dom[rng.below(dom.len() as u64) as usize]).collect();
                let want = plain_completable(&rules, &mut prefix.clone(), dom);
                assert_eq!(rules.completable(&prefix, dom), want, "{prefix:?} over {dom:?}");
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

/// The problem with the key's dy and x channel counts swapped (doc section 6's data quirk).
fn swapped(p: &ConvProblem) -> ConvProblem {
    let mut q = p.clone();
    std::mem::swap(&mut q.c, &mut q.k);
    q
}

/// The problem with x's size taken as stride times the key's x size (doc section 6: stale
/// stride-2 rows of an older tuning).
fn strided_x(p: &ConvProblem) -> ConvProblem {
    let mut q = p.clone();
    q.in_h *= p.stride_h;
    q.in_w *= p.stride_w;
    q
}

/// The first numbered rule (1-based) a config breaks, None when it is valid.
fn first_broken_rule(r: &Rules, config: &[i64]) -> Option<usize> {
    (1..=NUM_PARAMS).find(|&l| !r.prefix_valid(&config[..l]))
}

/// What the rows of one database come to (doc section 6, observed on the shared copies).
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    rows: usize,
    used: usize,
    /// All stride 2 on gfx9 (WORKAROUND_ISSUE_532).
    not_applicable: usize,
    /// All stride 1 with the key's channel counts swapped (first broken rule: 3).
    rule_violations: usize,
    /// Stride-2 rows (not applicable) that break rule 3 first: swapped channels as well.
    stride2_rule3: usize,
    /// Stride-2 rows that break rule 5 first (pipe_lines_depth > H): pass with x = stride * key's x.
    stride2_rule5: usize,
    /// Stride-2 rows that would fail the 4G channel condition even on gfx8 (swapped channels).
    stride2_channels: usize,
}

#[test]
fn every_tuned_row_is_applicable_and_valid_or_a_quirk_the_doc_explains() {
    let solver = ConvAsmBwdWrW3x3Solver;
    let counts = |rows, used, not_applicable, rule_violations, s3, s5, sc| Counts {
        rows,
        used,
        not_applicable,
        rule_violations,
        stride2_rule3: s3,
        stride2_rule5: s5,
        stride2_channels: sc,
    };
    let expected = |name: &str| match name {
        "gfx906_60.db" => counts(1504, 1504, 0, 0, 0, 0, 0),
        "gfx900_56.db" => counts(1854, 1492, 362, 0, 0, 0, 0),
        "gfx1030_36.db" | "gfx942130.db" => Counts::default(),
        "gfx906_60.2019.cd.pdb.txt" => counts(1710, 1367, 343, 0, 0, 0, 0),
        // Doc: 91 failing rows = 48 swapped-channel rows (43 stride 1, 5 stride 2) + 46 stale
        // stride-2 rows failing rule 5 (3 of them also swapped), all 46 + 5 stride 2: not applicable.
        "gfx900_56.2019.cd.pdb.txt" => counts(1761, 1350, 368, 43, 5, 43, 5),
        "gfx906_64.2019.cd.pdb.txt" => counts(1730, 1384, 346, 0, 0, 0, 0),
        other => panic!("unexpected database {other}"),
    };
    let mut total = 0;
    for (db, arch) in databases() {
        let rows = read_rows(&db, NAME).unwrap_or_else(|e| panic!("{e}"));
        let target = Target::new(&arch);
        let name = db.file_name().unwrap().to_string_lossy().to_string();
        assert!(rows.rejected.is_empty(), "{name}: {:?}", &rows.rejected[..1]);
        let ds = build(&rows, &solver, &target);
        let r = &ds.report;
        println!("{name}: {}", r.summary());
        let mut got = Counts {
            rows: r.rows,
            used: r.used,
            not_applicable: r.not_applicable,
            rule_violations: r.rule_violations,
            ..Counts::default()
        };
        assert_eq!((r.malformed_params, r.malformed_problem), (0, 0), "{name}");
        assert_eq!((r.duplicates, r.conflicting_duplicates), (0, 0), "{name}");
        let sqlite = db.extension().is_some_and(|x| x == "db");
        for row in &rows.rows {
            let config = solver.parse_params(&row.params).unwrap();
            let p = &row.problem;
            let what = format!("{name}: {} {}", p.to_perfdb_key(), row.params);
            let rules = Rules::new(&target, p);
            match check_applicable(&target, p) {
                Ok(()) => {
                    // Not valid: the swapped-channel quirk (stride 1), breaking rule 3.
                    if !rules.is_valid(&config) {
                        assert_eq!(first_broken_rule(&rules, &config), Some(3), "{what}");
                        assert!(Rules::new(&target, &swapped(p)).is_valid(&config), "{what}");
                    }
                }
                Err(e) => {
                    // Every not-applicable row is a stride-2 row on gfx9.
                    assert!(
                        arch.starts_with("gfx9") && e.to_string().contains("stride 2x2"),
                        "{what}: {e}"
                    );
                    let gfx8 = check_applicable(&Target::new("gfx803"), p);
                    if gfx8.as_ref().is_err_and(|e| e.to_string().contains("4*groups")) {
                        got.stride2_channels += 1;
                        assert!(check_applicable(&Target::new("gfx803"), &swapped(p)).is_ok(), "{what}");
                    }
                    if sqlite {
                        // x's size is not stored: both candidates give the same verdict (valid).
                        let mut q = p.clone();
                        q.in_h += 1;
                        q.in_w += 1;
                        assert!(rules.is_valid(&config), "{what}");
                        assert!(Rules::new(&target, &q).is_valid(&config), "{what}");
                    }
                    match first_broken_rule(&rules, &config) {
                        None => {}
                        Some(3) => {
                            got.stride2_rule3 += 1;
                            let q = swapped(p);
                            let q = if Rules::new(&target, &q).is_valid(&config) {
                                q
                            } else {
                                strided_x(&q)
                            };
                            assert!(Rules::new(&target, &q).is_valid(&config), "{what}");
                        }
                        Some(5) => {
                            got.stride2_rule5 += 1;
                            assert!(config[4] > p.in_h.min(16) as i64, "{what}: pipe_lines_depth > H");
                            assert!(Rules::new(&target, &strided_x(p)).is_valid(&config), "{what}");
                        }
                        Some(rule) => panic!("{what}: breaks rule {rule}"),
                    }
                }
            }
        }
        assert_eq!(got, expected(&name), "{name}");
        // The static default is valid for every applicable row's problem.
        for row in &rows.rows {
            if check_applicable(&target, &row.problem).is_ok() {
                let default = static_default(&target, &row.problem);
                assert!(
                    Rules::new(&target, &row.problem).is_valid(&default),
                    "default {default:?} for {}",
                    row.problem
                );
            }
        }
        total += r.rows;
    }
    assert_eq!(total, 8559, "the doc's row count");
}
