//! composable_kernel support rules (`../shared/miopen/ck/README.md`, "IsSupportedArgument
//! rules"), each checked on hand-derived cases as MIOpen 2024 has them
//! ([`CkVersion::Miopen2024`]), plus the catalogue files' shape, and the differential check of
//! the rules against MIOpen 2024's, frozen below, on every instance x corpus problem.
// The frozen 2024 rules keep the `%` form of their transcription.
#![allow(clippy::manual_is_multiple_of)]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::problem::{ConvProblem, Direction, Precision};
use tuneinfer::solvers::ck::catalogue::Catalogue;
use tuneinfer::solvers::ck::instance::{parse_type_string, CkInstance, ConvSpec, DeviceOp};
use tuneinfer::solvers::ck::rules::{prefetch_stages, supports, CkProblem, CkVersion};

/// An instance of `op` with `spec`: BlockSize 256, 128x128 tiles, KPerBlock 32, AK1 8, every
/// vector 1, no merged groups, pipeline v1.
fn inst(op: DeviceOp, spec: ConvSpec) -> CkInstance {
    let ts = match op {
        DeviceOp::FwdXdl => "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<256, 128, 128, 32, Default, 32, 32, 2, 2, 1, 1, 1, 1, 1, 1>",
        DeviceOp::FwdXdlV3 => "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<256, 128, 128, 32, Default, 32, 32, 2, 2, 1, 1, 1, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v1>",
        DeviceOp::BwdDataV1 => "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 128, 128, 32, 8, 8, Default, 32, 32, 2, 2, 1, 1, 1, 1>",
        DeviceOp::WrwXdl => "DeviceGroupedConvBwdWeight_Xdl_CShuffle<256, 128, 128, 32, Default, 8, 2, 2, 1, 1, 1, 1, 1, 1, 1>",
        DeviceOp::WrwTwoStage => "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle<256, 128, 128, 32, Default, 8, 2, 2, 1, 1, 1, 1, 1, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v1, 1>",
        other => panic!("{other}"),
    };
    let mut i = parse_type_string(ts).unwrap();
    i.printed.spec = spec;
    if op == DeviceOp::BwdDataV1 {
        i.printed.e_vec = Some(1);
    }
    i
}

/// MIOpen 2024's `valid_kernels` rule ([`supports`] without a split-k).
fn ok(i: &CkInstance, d: &CkProblem) -> bool {
    supports(i, d, None, CkVersion::Miopen2024).is_ok()
}

/// MIOpen 2024's `IsSupportedBySplitK`.
fn ok_split(i: &CkInstance, d: &CkProblem, split_k: u64) -> bool {
    supports(i, d, Some(split_k), CkVersion::Miopen2024).is_ok()
}

/// A problem: G, N, C and K per group, H=W, filter, pad, stride.
#[allow(clippy::too_many_arguments)]
fn dims(prec: &str, dir: u32, g: u64, c: u64, k: u64, hw: u64, fil: u64, pad: u64, stride: u64) -> CkProblem {
    let line = format!(
        "{prec} -n 4 -c {} -H {hw} -W {hw} -k {} -y {fil} -x {fil} -p {pad} -q {pad} -u {stride} -v {stride} -g {g} -F {dir} --in_layout NHWC",
        c * g,
        k * g
    );
    let p = ConvProblem::parse(&line).unwrap();
    CkProblem::new(&p, p.precision.into()).unwrap()
}

fn fwd(g: u64, c: u64, k: u64, fil: u64, pad: u64, stride: u64) -> CkProblem {
    dims("conv", 1, g, c, k, 16, fil, pad, stride)
}

#[test]
fn forward_specialisations() {
    let ok = |spec, d: &CkProblem| ok(&inst(DeviceOp::FwdXdl, spec), d);
    use ConvSpec::*;
    assert!(ok(Filter1x1Stride1Pad0, &fwd(1, 8, 8, 1, 0, 1)));
    assert!(!ok(Filter1x1Stride1Pad0, &fwd(1, 8, 8, 1, 0, 2)), "stride 2");
    assert!(!ok(Filter1x1Stride1Pad0, &fwd(1, 8, 8, 1, 1, 1)), "pad 1");
    assert!(!ok(Filter1x1Stride1Pad0, &fwd(1, 8, 8, 3, 0, 1)), "3x3");
    assert!(ok(Filter1x1Pad0, &fwd(1, 8, 8, 1, 0, 2)), "any stride");
    assert!(!ok(Filter1x1Pad0, &fwd(1, 8, 8, 1, 1, 1)), "pad 1");
    assert!(ok(Filter3x3, &fwd(4, 1, 8, 3, 1, 1)), "C per group 1, 3x3");
    assert!(!ok(Filter3x3, &fwd(4, 2, 8, 3, 1, 1)), "C per group 2");
    assert!(!ok(Filter3x3, &fwd(4, 1, 8, 1, 0, 1)), "1x1");
    for d in [fwd(1, 8, 8, 1, 0, 1), fwd(3, 5, 7, 3, 1, 2), fwd(1, 1, 1, 5, 2, 3)] {
        assert!(ok(Default, &d) && ok(OddC, &d), "Default and OddC have no check");
    }
}

#[test]
fn forward_merged_groups_and_vector_widths() {
    let mut merged = inst(DeviceOp::FwdXdl, ConvSpec::Default);
    merged.printed.groups_to_merge = 8;
    assert!(ok(&merged, &fwd(16, 1, 4, 3, 1, 1)), "C 1, G 16 % 8");
    assert!(!ok(&merged, &fwd(12, 1, 4, 3, 1, 1)), "G 12 % 8 != 0");
    assert!(!ok(&merged, &fwd(16, 2, 4, 3, 1, 1)), "C 2");
    // A along C (vector dim 2): C % vecA.
    let mut a = inst(DeviceOp::FwdXdl, ConvSpec::Default);
    a.printed.a_vec = 4;
    assert!(ok(&a, &fwd(1, 8, 8, 3, 1, 1)));
    assert!(!ok(&a, &fwd(1, 6, 8, 3, 1, 1)));
    // A along G (vector dim 1: the merged-groups instances): G % vecA.
    a.printed.groups_to_merge = 8;
    assert!(ok(&a, &fwd(16, 1, 4, 3, 1, 1)));
    let mut wide = a.clone();
    wide.printed.a_vec = 16;
    assert!(!ok(&wide, &fwd(8, 1, 4, 3, 1, 1)), "G 8 % vecA 16");
    // B: C % vecB; E: K % vecE.
    let mut b = inst(DeviceOp::FwdXdl, ConvSpec::Default);
    b.printed.b_vec = 4;
    assert!(ok(&b, &fwd(1, 12, 8, 3, 1, 1)));
    assert!(!ok(&b, &fwd(1, 10, 8, 3, 1, 1)));
    let mut e = inst(DeviceOp::FwdXdl, ConvSpec::Default);
    e.printed.e_vec = Some(8);
    assert!(ok(&e, &fwd(1, 3, 16, 3, 1, 1)));
    assert!(!ok(&e, &fwd(1, 3, 12, 3, 1, 1)));
}

#[test]
fn pipeline_prefetch_stages() {
    let v = CkVersion::Miopen2024;
    // v1: CK's PrefetchStages is 1, but no version checks it (the K loop need not exceed it).
    assert_eq!(prefetch_stages(v, 1, 256, 128, 128, 32, 4), 1);
    assert!(ok(&inst(DeviceOp::FwdXdlV3, ConvSpec::Default), &fwd(1, 1, 8, 1, 0, 1)));
    assert_eq!(prefetch_stages(v, 3, 256, 128, 128, 32, 4), 2);
    assert_eq!(prefetch_stages(v, 4, 256, 128, 128, 32, 4), 4);
    assert_eq!(prefetch_stages(CkVersion::Miopen351, 4, 256, 128, 128, 32, 4), 3);
    assert_eq!(prefetch_stages(v, 5, 256, 128, 128, 32, 4), 3);
    // v2: ceil((32768 / max(1, 256/BlockSize)) / ((M+N) * bytes * KPerBlock)), clamped to 2..8.
    // 256 threads, 128+128, fp16, 32: 32768 / 16384 = 2.
    assert_eq!(prefetch_stages(v, 2, 256, 128, 128, 32, 2), 2);
    // 256 threads, 32+32, fp32, 32: 32768 / 8192 = 4.
    assert_eq!(prefetch_stages(v, 2, 256, 32, 32, 32, 4), 4);
    // 256 threads, 16+16, fp16, 16: 32768 / 1024 = 32 -> clamped to 8.
    assert_eq!(prefetch_stages(v, 2, 256, 16, 16, 16, 2), 8);
    // 64 threads: 32768 / 4 = 8192; 64+64, fp32, 32 -> 8192/16384 rounds up to 1 -> 2.
    assert_eq!(prefetch_stages(v, 2, 64, 64, 64, 32, 4), 2);
}

#[test]
fn forward_v3_pipeline_depth() {
    let v3 = |ver: u32, spec| {
        let mut i = inst(DeviceOp::FwdXdlV3, spec);
        i.printed.pipeline = Some(ver);
        i
    };
    use ConvSpec::*;
    // Default: GemmK = Y*X*C; KPerBlock 32.
    assert!(ok(&v3(3, Default), &fwd(1, 16, 8, 3, 1, 1)), "ceil(144/32) = 5 > 2");
    assert!(!ok(&v3(3, Default), &fwd(1, 8, 8, 1, 0, 1)), "ceil(8/32) = 1");
    assert!(ok(&v3(4, Default), &fwd(1, 16, 8, 3, 1, 1)), "5 > 4");
    assert!(!ok(&v3(4, Default), &fwd(1, 14, 8, 3, 1, 1)), "ceil(126/32) = 4");
    assert!(ok(&v3(5, Default), &fwd(1, 14, 8, 3, 1, 1)), "4 > 3");
    assert!(ok(&v3(1, Default), &fwd(1, 1, 8, 1, 0, 1)), "v1: no check");
    // 1x1 specialisations: GemmK = C.
    assert!(!ok(&v3(3, Filter1x1Pad0), &fwd(1, 64, 8, 1, 0, 1)), "ceil(64/32) = 2");
    assert!(ok(&v3(3, Filter1x1Pad0), &fwd(1, 96, 8, 1, 0, 1)), "3 > 2");
    // v2 with 256 threads, 128+128, fp32, 32: 32768/32768 -> 1 -> clamped 2.
    assert!(!ok(&v3(2, Default), &fwd(1, 7, 8, 3, 1, 1)), "ceil(63/32) = 2");
    assert!(ok(&v3(2, Default), &fwd(1, 8, 8, 3, 1, 1)), "ceil(72/32) = 3");
}

#[test]
fn backward_data_rules() {
    let bwd = |k: u64, c: u64, fil: u64, pad: u64, stride: u64| dims("conv", 2, 2, c, k, 16, fil, pad, stride);
    // AK1 8, KPerBlock 32: ceil(K/8)*8 % 32 == 0 (MIOpen 2024; gone in 3.5.1's CK).
    let one = inst(DeviceOp::BwdDataV1, ConvSpec::Filter1x1Stride1Pad0);
    assert!(ok(&one, &bwd(32, 8, 1, 0, 1)));
    assert!(!ok(&one, &bwd(24, 8, 1, 0, 1)), "24 % 32");
    assert!(supports(&one, &bwd(24, 8, 1, 0, 1), None, CkVersion::Miopen351).is_ok());
    assert!(ok(&one, &bwd(60, 8, 1, 0, 1)), "ceil(60/8)*8 = 64");
    assert!(!ok(&one, &bwd(32, 8, 1, 0, 2)), "stride 2");
    let mut p = inst(DeviceOp::BwdDataV1, ConvSpec::Default);
    assert!(ok(&p, &bwd(24, 8, 3, 1, 2)), "Default pads GemmK");
    // Vectors: K % vecA, C % vecB, C % vecCDE.
    p.printed.a_vec = 8;
    assert!(ok(&p, &bwd(16, 3, 3, 1, 1)));
    assert!(!ok(&p, &bwd(12, 3, 3, 1, 1)));
    p.printed.a_vec = 1;
    p.printed.b_vec = 4;
    assert!(ok(&p, &bwd(3, 8, 3, 1, 1)));
    assert!(!ok(&p, &bwd(3, 6, 3, 1, 1)));
    p.printed.b_vec = 1;
    p.printed.e_vec = Some(2);
    assert!(ok(&p, &bwd(3, 4, 3, 1, 1)));
    assert!(!ok(&p, &bwd(3, 5, 3, 1, 1)), "unprinted CDE vector");
}

#[test]
fn backward_weight_rules() {
    let wrw = |prec: &str, g: u64, c: u64, k: u64, hw: u64, fil: u64| dims(prec, 4, g, c, k, hw, fil, 0, 1);
    let one = inst(DeviceOp::WrwXdl, ConvSpec::Filter1x1Stride1Pad0);
    assert!(ok(&one, &wrw("conv", 1, 4, 4, 8, 1)));
    assert!(!ok(&one, &wrw("conv", 1, 4, 4, 8, 3)));
    let mut x = inst(DeviceOp::WrwXdl, ConvSpec::Default);
    x.printed.a_vec = 4; // K
    x.printed.b_vec = 2; // C
    x.printed.e_vec = Some(2); // C
    assert!(ok(&x, &wrw("conv", 1, 6, 8, 8, 3)));
    assert!(!ok(&x, &wrw("conv", 1, 6, 6, 8, 3)), "K 6 % 4");
    assert!(!ok(&x, &wrw("conv", 1, 3, 8, 8, 3)), "C 3 % 2");
    // Split-k never matters for the one-stage kernel.
    for sk in [1, 2, 128] {
        assert!(ok_split(&x, &wrw("conv", 1, 6, 8, 8, 3), sk));
    }
}

#[test]
fn two_stage_rules() {
    let d = |g: u64, c: u64, k: u64, hw: u64| dims("convfp16", 4, g, c, k, hw, 1, 0, 1);
    let mut p = inst(DeviceOp::WrwTwoStage, ConvSpec::Default);
    p.printed.pipeline = Some(5); // 3 prefetch stages
    // N=4: num_k_loop = ceil(4*Ho*Wo / 32) must be > 3.
    assert!(ok(&p, &d(1, 2, 2, 8)), "ceil(256/32) = 8");
    assert!(!ok(&p, &d(1, 2, 2, 4)), "ceil(64/32) = 2");
    assert!(ok(&p, &d(1, 2, 2, 5)), "ceil(100/32) = 4");
    // Vectors: unless C % vecB == 0 and K % vecA == 0, C and K must both be 1 (MIOpen 2024's
    // CK: with or without merged groups; 3.5.1's: with merged groups only).
    p.printed.a_vec = 4;
    p.printed.b_vec = 4;
    assert!(ok(&p, &d(1, 4, 8, 8)));
    assert!(!ok(&p, &d(1, 6, 8, 8)));
    assert!(ok(&p, &d(4, 1, 1, 8)), "C = K = 1");
    assert!(supports(&p, &d(4, 1, 1, 8), None, CkVersion::Miopen351).is_err());
    // C % vecC.
    p.printed.a_vec = 1;
    p.printed.b_vec = 1;
    p.printed.e_vec = Some(2);
    assert!(!ok(&p, &d(1, 3, 2, 8)));
    assert!(ok(&p, &d(1, 4, 2, 8)));
    // Merged groups: K*NGM <= MPerBlock, C*Y*X*NGM <= NPerBlock, C = K = 1, G % NGM.
    p.printed.e_vec = Some(1);
    p.printed.groups_to_merge = 4;
    p.printed.m_per_block = 16;
    p.printed.n_per_block = 4;
    assert!(ok(&p, &d(8, 1, 1, 8)));
    assert!(!ok(&p, &d(6, 1, 1, 8)), "G 6 % 4");
    assert!(!ok(&p, &d(8, 2, 1, 8)), "C 2");
    p.printed.n_per_block = 2;
    assert!(!ok(&p, &d(8, 1, 1, 8)), "C*Y*X*NGM = 4 > 2");
    // Split-k: k_batch enters num_k_loop, and MIOpen 2024 sets a workspace only for fp16 with
    // odd C or K (3.5.1: always).
    p.printed.groups_to_merge = 1;
    p.printed.m_per_block = 128;
    p.printed.n_per_block = 128;
    assert!(ok_split(&p, &d(1, 3, 2, 8), 2), "odd C: workspace, ceil(256/64) = 4 > 3");
    assert!(!ok_split(&p, &d(1, 3, 2, 8), 4), "ceil(256/128) = 2");
    assert!(!ok_split(&p, &d(1, 4, 2, 8), 1), "even C and K: no workspace");
    assert!(supports(&p, &d(1, 4, 2, 8), Some(1), CkVersion::Miopen351).is_ok());
    assert!(ok(&p, &d(1, 4, 2, 8)), "valid_kernels sets a dummy workspace");
}

/// A list whose unprinted vector dimensions are not those the rules assume is refused.
#[test]
fn lists_with_other_vector_dimensions_are_refused() {
    let good = std::fs::read_to_string(common::ck_dir().join("wrw_f32.tsv")).unwrap();
    let bad = good.replacen("ABlockTransferSrcVectorDim=2", "ABlockTransferSrcVectorDim=1", 1);
    let e = Catalogue::parse(&bad, std::path::Path::new("wrw_f32.tsv"), Direction::BackwardWeights, Precision::Fp32)
        .unwrap_err();
    assert!(e.to_string().contains("wrw_f32.tsv:2") && e.to_string().contains("ABlockTransferSrcVectorDim"), "{e}");
}

#[test]
fn catalogue_files_have_the_readme_counts_and_order() {
    let counts = [
        (Direction::Forward, Precision::Fp32, 216),
        (Direction::Forward, Precision::Fp16, 284),
        (Direction::BackwardData, Precision::Fp32, 34),
        (Direction::BackwardData, Precision::Fp16, 34),
        (Direction::BackwardWeights, Precision::Fp32, 32),
        (Direction::BackwardWeights, Precision::Fp16, 48),
    ];
    for (dir, prec, n) in counts {
        let name = tuneinfer::solvers::ck::catalogue::file_name(dir, prec).unwrap();
        let c = Catalogue::load(&common::ck_dir().join(&name), dir, prec).unwrap();
        assert_eq!(c.instances.len(), n, "{name}");
    }
    let f16 = Catalogue::load(
        &common::ck_dir().join("fwd_f16.tsv"),
        Direction::Forward,
        Precision::Fp16,
    )
    .unwrap();
    assert_eq!(f16.instances[64].op, DeviceOp::FwdLargeTensor);
    assert_eq!(f16.instances[66].printed.groups_to_merge, 8);
    assert_eq!(f16.instances[72].op, DeviceOp::FwdXdlV3);
    assert_eq!(f16.instances[72].printed.scheduler.as_deref(), Some("Intrawave"));
    assert_eq!(f16.instances[72].printed.pipeline, Some(4));
}

/// MIOpen's two gfx942 wrw fallbacks follow from the rules alone: the first supported
/// instance of each list.
#[test]
fn first_supported_instances_of_the_readme_fallbacks() {
    let first = |line: &str, prec: Precision| {
        let p = ConvProblem::parse(line).unwrap();
        let c = Catalogue::load(
            &common::ck_dir().join(tuneinfer::solvers::ck::catalogue::file_name(p.direction, prec).unwrap()),
            p.direction,
            prec,
        )
        .unwrap();
        let d = CkProblem::new(&p, prec.into()).unwrap();
        let name = c.supported(&d).next().unwrap().type_string.clone();
        name
    };
    assert_eq!(
        first(
            "conv -n 512 -c 3 -H 219 -W 219 -k 64 -y 11 -x 11 -p 2 -q 2 -u 4 -v 4 -F 4 --in_layout NHWC",
            Precision::Fp32
        ),
        "DeviceGroupedConvBwdWeight_Xdl_CShuffle<64, 64, 64, 4, Default, 4, 2, 2, 1, 4, 1, 4, 1, 1, 1>"
    );
    // C 15 and K 2 per group: every one-stage fp16 instance needs C % vecB with vecB >= 2.
    assert_eq!(
        first("convfp16 -n 1024 -c 480 -H 14 -W 14 -k 64 -y 1 -x 1 -g 32 -F 4 --in_layout NHWC", Precision::Fp16),
        "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle<64, 16, 16, 32, Default, 8, 1, 1, 1, 4, 1, 4, 1, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v2, 1>"
    );
}

// ---------------------------------------------------------------------------------------------
// Differential check (issue 52): MIOpen 2024's rules, frozen here as they were before the two
// CK models were merged (`oracle_2024`, reading the lists' `all_params` itself), against the
// rules the crate answers with, on every instance of the six 2024 lists x every 2-D FP32/FP16
// geometry of MIOpen's gfx942130 and gfx90a68 text databases (each geometry taken in all three
// directions: the rules read no direction), split-k 1..128 for the backward-weights lists.

mod oracle_2024 {
    //! The 2024 rules (CK 421588131, MIOpen 2d1fd997a; `../shared/miopen/ck/README.md` "Q3"),
    //! exactly as `src/solvers/ck/catalogue.rs` had them at 36040f5.
    use std::collections::HashMap;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        FwdXdl,
        FwdXdlV3,
        FwdLargeTensor,
        BwdData,
        BwdWeight,
        BwdWeightTwoStage,
    }

    #[derive(Debug, Clone)]
    pub struct Inst {
        pub type_string: String,
        pub kind: Kind,
        pub spec: String,
        pub block_size: u64,
        pub m_per_block: u64,
        pub n_per_block: u64,
        pub k_per_block: u64,
        pub ak1: u64,
        pub a_dim: u64,
        pub a_vec: u64,
        pub b_dim: u64,
        pub b_vec: u64,
        pub e_vec: u64,
        pub ngm: u64,
        pub pipeline: u32,
    }

    /// The instances of a list file, in factory order.
    pub fn read(path: &std::path::Path) -> Vec<Inst> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let cols: Vec<&str> = line.split('\t').collect();
                let m: HashMap<&str, &str> = cols[24].split(';').filter_map(|kv| kv.split_once('=')).collect();
                let int = |keys: &[&str]| -> u64 { keys.iter().find_map(|k| m.get(k)).unwrap().parse().unwrap() };
                let kind = match cols[2] {
                    "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle" => Kind::FwdXdl,
                    "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3" => Kind::FwdXdlV3,
                    "DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor" => Kind::FwdLargeTensor,
                    "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1" => Kind::BwdData,
                    "DeviceGroupedConvBwdWeight_Xdl_CShuffle" => Kind::BwdWeight,
                    "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle" => Kind::BwdWeightTwoStage,
                    other => panic!("{other}"),
                };
                let spec = ["ConvForwardSpecialization", "ConvBackwardDataSpecialization", "ConvBackwardWeightSpecialization"]
                    .iter()
                    .find_map(|k| m.get(k))
                    .unwrap()
                    .to_string();
                Inst {
                    type_string: cols[1].to_string(),
                    kind,
                    spec,
                    block_size: int(&["BlockSize"]),
                    m_per_block: int(&["MPerBlock"]),
                    n_per_block: int(&["NPerBlock"]),
                    k_per_block: int(&["KPerBlock", "K0PerBlock"]),
                    ak1: int(&["AK1", "K1"]),
                    a_dim: int(&["ABlockTransferSrcVectorDim"]),
                    a_vec: int(&["ABlockTransferSrcScalarPerVector"]),
                    b_dim: int(&["BBlockTransferSrcVectorDim"]),
                    b_vec: int(&["BBlockTransferSrcScalarPerVector"]),
                    e_vec: int(&["CDEBlockTransferScalarPerVector_NPerBlock", "CBlockTransferScalarPerVector_NWaveNPerXdl"]),
                    ngm: m.get("NumGroupsToMerge").map_or(1, |v| v.parse().unwrap()),
                    pipeline: m.get("BlkGemmPipelineVer").map_or(1, |v| v[1..].parse().unwrap()),
                }
            })
            .collect()
    }

    /// `CkDims` as it was: per-group channels, the 2-D sizes, bytes per element.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Dims {
        pub g: u64,
        pub n: u64,
        pub c: u64,
        pub k: u64,
        pub ho: u64,
        pub wo: u64,
        pub y: u64,
        pub x: u64,
        pub stride: (u64, u64),
        pub pad: (u64, u64),
        pub bytes: u64,
    }

    fn prefetch_stages(i: &Inst, bytes: u64) -> u64 {
        match i.pipeline {
            2 => {
                let lds = 32768 / (256 / i.block_size).max(1);
                let per_k = (i.m_per_block + i.n_per_block) * bytes * i.k_per_block;
                lds.div_ceil(per_k.max(1)).clamp(2, 8)
            }
            3 => 2,
            4 => 4,
            5 => 3,
            _ => 0,
        }
    }

    fn spec_ok(i: &Inst, d: &Dims) -> bool {
        let p1 = d.y == 1 && d.x == 1 && d.pad == (0, 0);
        match i.spec.as_str() {
            "Filter1x1Stride1Pad0" => p1 && d.stride == (1, 1),
            "Filter1x1Pad0" => p1,
            "Filter3x3" => d.c == 1 && d.y == 3 && d.x == 3,
            _ => true,
        }
    }

    pub fn supports(i: &Inst, d: &Dims) -> bool {
        if !spec_ok(i, d) {
            return false;
        }
        match i.kind {
            Kind::FwdXdl | Kind::FwdLargeTensor | Kind::FwdXdlV3 => {
                if i.ngm > 1 && !(d.c == 1 && d.g % i.ngm == 0) {
                    return false;
                }
                let a_ok = (i.a_dim == 2 && d.c % i.a_vec == 0)
                    || (i.kind != Kind::FwdXdlV3 && i.a_dim == 1 && (d.c == 1 || i.ngm == 1) && d.g % i.a_vec == 0);
                if !(a_ok && i.b_dim == 2 && d.c % i.b_vec == 0 && d.k % i.e_vec == 0) {
                    return false;
                }
                if i.kind == Kind::FwdXdlV3 {
                    let gemm_k = if i.spec.starts_with("Filter1x1") { d.c } else { d.y * d.x * d.c };
                    return gemm_k.div_ceil(i.k_per_block) > prefetch_stages(i, d.bytes);
                }
                true
            }
            Kind::BwdData => {
                if i.spec == "Filter1x1Stride1Pad0" && (d.k.div_ceil(i.ak1) * i.ak1) % i.k_per_block != 0 {
                    return false;
                }
                i.a_dim == 2 && d.k % i.a_vec == 0 && i.b_dim == 1 && d.c % i.b_vec == 0 && d.c % i.e_vec == 0
            }
            Kind::BwdWeight => {
                i.a_dim == 2 && i.b_dim == 2 && d.k % i.a_vec == 0 && d.c % i.b_vec == 0 && d.c % i.e_vec == 0
            }
            Kind::BwdWeightTwoStage => two_stage(i, d, 1, true),
        }
    }

    fn two_stage(i: &Inst, d: &Dims, k_batch: u64, workspace: bool) -> bool {
        if (d.n * d.ho * d.wo).div_ceil(i.k_per_block * k_batch) <= prefetch_stages(i, d.bytes) || !workspace {
            return false;
        }
        if i.ngm > 1
            && !(d.k * i.ngm <= i.m_per_block
                && d.c * d.y * d.x * i.ngm <= i.n_per_block
                && d.c == 1
                && d.k == 1
                && d.g % i.ngm == 0)
        {
            return false;
        }
        let fit = d.c % i.b_vec == 0 && d.k % i.a_vec == 0;
        (fit || d.k == 1 && d.c == 1) && i.a_dim == 1 && i.b_dim == 1 && d.c % i.e_vec == 0
    }

    /// MIOpen 2024's `IsSupportedBySplitK`: a workspace only for fp16 with odd C or K.
    pub fn supports_split_k(i: &Inst, d: &Dims, split_k: u64) -> bool {
        match i.kind {
            Kind::BwdWeight => supports(i, d),
            Kind::BwdWeightTwoStage => {
                spec_ok(i, d) && two_stage(i, d, split_k, d.bytes == 2 && (d.c % 2 != 0 || d.k % 2 != 0))
            }
            _ => false,
        }
    }
}

/// Every distinct 2-D FP32/FP16 geometry of the gfx942130 and gfx90a68 text databases (any
/// solver's line), as (forward problem text key, precision).
fn differential_corpus() -> Vec<ConvProblem> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for db in ["gfx942130.db.txt.bz2", "gfx90a68.db.txt.bz2"] {
        let text = tuneinfer::data::textdb::read_text(&common::perfdb_dir().join(db)).unwrap();
        for line in text.lines() {
            let Some((key, _)) = line.split_once('=') else { continue };
            let Ok(p) = ConvProblem::from_db_key(key) else { continue };
            if p.is_3d() || p.precision == Precision::Bf16 || p.groups == 0 || p.c % p.groups != 0 || p.k % p.groups != 0 {
                continue;
            }
            let d = oracle_dims(&p);
            if seen.insert((d, p.precision)) {
                out.push(p);
            }
        }
    }
    out
}

fn oracle_dims(p: &ConvProblem) -> oracle_2024::Dims {
    oracle_2024::Dims {
        g: p.groups,
        n: p.n,
        c: p.c / p.groups,
        k: p.k / p.groups,
        ho: p.out_h,
        wo: p.out_w,
        y: p.filter_h,
        x: p.filter_w,
        stride: (p.stride_h, p.stride_w),
        pad: (p.pad_h, p.pad_w),
        bytes: p.precision.bytes(),
    }
}

/// Where a version's rules and MIOpen 2024's disagree: (device op, split-k row?, the 2024
/// answer, why the version refuses or "accepts") -> cells.
type Tally = std::collections::BTreeMap<(String, bool, bool, String), u64>;

/// The cells where the newer versions' rules differ from MIOpen 2024's on the corpus, and why
/// (`docs/ck.md`, "The rules and the three versions"): CK bcf7f811's two-stage op (merged groups
/// without the NGM factor, the `X*C` vector path, C == K == 1 only with merged groups) and
/// MIOpen 3.5.1's workspace for every split-k id; MIOpen 3.5.1's CK also drops the bwd-data 1x1
/// K tile rule and runs pipeline v4 with 3 prefetch stages. The newer versions only accept more.
const NEWER_VERSIONS_DIFFER: [(usize, &str, bool, bool, &str, u64); 6] = [
    (1, "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle", false, false, "accepts", 1390),
    (1, "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle", true, false, "accepts", 301_684),
    (2, "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle", false, false, "accepts", 1390),
    (2, "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle", true, false, "accepts", 301_684),
    (2, "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1", false, false, "accepts", 30_992),
    (2, "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3", false, false, "accepts", 8662),
];

#[test]
fn the_2024_rules_and_the_merged_rules_agree_on_every_instance_and_corpus_problem() {
    let corpus = differential_corpus();
    assert!(corpus.len() > 10_000, "{} geometries", corpus.len());
    let versions = [CkVersion::Miopen2024, CkVersion::Develop2025, CkVersion::Miopen351];
    let mut cells = 0u64;
    let mut tallies: [Tally; 3] = Default::default();
    for dir in [Direction::Forward, Direction::BackwardData, Direction::BackwardWeights] {
        for prec in [Precision::Fp32, Precision::Fp16] {
            let name = tuneinfer::solvers::ck::catalogue::file_name(dir, prec).unwrap();
            let oracle = oracle_2024::read(&common::ck_dir().join(&name));
            let merged = Catalogue::load(&common::ck_dir().join(&name), dir, prec).unwrap();
            assert_eq!(oracle.len(), merged.instances.len());
            let splits: &[u64] = if dir == Direction::BackwardWeights {
                &[0, 1, 2, 4, 8, 16, 32, 64, 128]
            } else {
                &[0]
            };
            for p in corpus.iter().filter(|p| p.precision == prec) {
                let mut p = p.clone();
                p.direction = dir;
                let d = oracle_dims(&p);
                let ckp = CkProblem::new(&p, prec.into()).unwrap();
                for (o, m) in oracle.iter().zip(&merged.instances) {
                    assert_eq!(o.type_string, m.type_string);
                    for &sk in splits {
                        cells += 1;
                        let want = if sk == 0 {
                            oracle_2024::supports(o, &d)
                        } else {
                            oracle_2024::supports_split_k(o, &d, sk)
                        };
                        for (t, &v) in versions.iter().enumerate() {
                            let got = supports(m, &ckp, (sk > 0).then_some(sk), v);
                            if got.is_ok() != want {
                                let why = got.err().map_or("accepts".to_string(), |r| r.to_string());
                                *tallies[t].entry((m.op.name().to_string(), sk > 0, want, why)).or_insert(0) += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    for (t, v) in tallies.iter().zip(versions) {
        for ((op, split, want, why), n) in t {
            eprintln!("2024 vs {v:?}: {op}, split-k row {split}: 2024 {want}, {v:?}: {why}: {n}");
        }
    }
    eprintln!("{} geometries, {cells} cells", corpus.len());
    assert!(cells > 10_000_000, "{cells}");
    assert!(tallies[0].is_empty(), "MIOpen 2024's rules changed: {:?}", tallies[0]);
    let expected: Vec<Tally> = (1..3)
        .map(|t| {
            NEWER_VERSIONS_DIFFER
                .iter()
                .filter(|e| e.0 == t)
                .map(|e| ((e.1.to_string(), e.2, e.3, e.4.to_string()), e.5))
                .collect()
        })
        .collect();
    assert_eq!(tallies[1..], expected[..]);
}

/// `Solver::written_form`, what answering and `userdb` call with no CK names: a CK kernel id in
/// the form each MIOpen reads (`src/solvers/ck/versions.rs`), any other solver's config as is.
#[test]
fn written_form_through_the_solver_trait() {
    use tuneinfer::solvers::{self, MiopenVersion};
    // On the bwd_f16 list of the CK MIOpen 3.3 pins.
    let ts = "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 128, 64, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 2, 1, 8, 8, 1, 1>";
    let p = ConvProblem::parse("convfp16 -n 8 -c 64 -H 14 -W 14 -k 64 -y 1 -x 1 -F 2 --in_layout NHWC").unwrap();
    let v = MiopenVersion::parse;
    let bwd = solvers::by_name("ConvHipImplicitGemmGroupBwdXdlops").unwrap();
    assert_eq!(bwd.written_form(&p, &format!("{ts}+1"), v("3.3.0")), Ok(ts.to_string()));
    assert_eq!(bwd.written_form(&p, ts, v("HIP.3_5_1_c84b5d0")), Ok(format!("{ts}+1")));
    assert_eq!(
        bwd.written_form(&p, ts, Some(MiopenVersion::NEWEST_KNOWN)),
        Ok(format!("{ts}+1"))
    );
    assert!(bwd.written_form(&p, ts, None).is_err(), "3.3 and 3.5 write it differently");
    assert!(bwd.written_form(&p, ts, v("3.4.0")).is_err(), "3.4: neither form is known");
    assert!(bwd.written_form(&p, &format!("{ts}+4"), v("3.3.0")).is_err(), "no split-k in 3.3");
    let fwd3 = solvers::by_name("ConvHipImplicitGemm3DGroupFwdXdlops").unwrap();
    assert!(fwd3.written_form(&p, "X<1>", v("3.3.0")).is_err(), "no 3-D list of MIOpen 3.3");
    let asm = solvers::by_name("ConvAsm1x1U").unwrap();
    assert_eq!(asm.written_form(&p, "1,8,2,64,2,4,1,8", v("3.3.0")), Ok("1,8,2,64,2,4,1,8".into()));
    assert_eq!(asm.written_form(&p, "1,8,2,64,2,4,1,8", None), Ok("1,8,2,64,2,4,1,8".into()));
}
