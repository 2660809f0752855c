//! composable_kernel support rules (`../shared/miopen/ck/README.md`, "IsSupportedArgument
//! rules"), each checked on hand-derived cases, plus the catalogue files' shape.

mod common;

use tuneinfer::problem::{ConvProblem, Direction, Precision};
use tuneinfer::solvers::ck::catalogue::{
    prefetch_stages, supports, supports_split_k, Catalogue, CkDims, Instance, OpKind, Params, Specialization,
};

fn params(spec: Specialization) -> Params {
    Params {
        spec,
        block_size: 256,
        m_per_block: 128,
        n_per_block: 128,
        k_per_block: 32,
        ak1: 8,
        a_vector_dim: 2,
        a_scalar_per_vector: 1,
        b_vector_dim: 2,
        b_scalar_per_vector: 1,
        e_scalar_per_vector: 1,
        groups_to_merge: 1,
        pipeline_version: None,
    }
}

fn inst(kind: OpKind, p: Params) -> Instance {
    Instance {
        factory_index: 0,
        type_string: "X<1>".into(),
        op: "X".into(),
        kind,
        tokens: vec!["1".into()],
        params: p,
    }
}

/// A forward problem: G, N, C and K per group, H=W, filter, pad, stride.
#[allow(clippy::too_many_arguments)]
fn dims(prec: &str, dir: u32, g: u64, c: u64, k: u64, hw: u64, fil: u64, pad: u64, stride: u64) -> CkDims {
    let line = format!(
        "{prec} -n 4 -c {} -H {hw} -W {hw} -k {} -y {fil} -x {fil} -p {pad} -q {pad} -u {stride} -v {stride} -g {g} -F {dir} --in_layout NHWC",
        c * g,
        k * g
    );
    CkDims::new(&ConvProblem::parse(&line).unwrap()).unwrap()
}

fn fwd(g: u64, c: u64, k: u64, fil: u64, pad: u64, stride: u64) -> CkDims {
    dims("conv", 1, g, c, k, 16, fil, pad, stride)
}

#[test]
fn forward_specialisations() {
    let ok = |spec, d: &CkDims| supports(&inst(OpKind::FwdXdl, params(spec)), d);
    use Specialization::*;
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
    let mut p = params(Specialization::Default);
    p.groups_to_merge = 8;
    let merged = inst(OpKind::FwdXdl, p.clone());
    assert!(supports(&merged, &fwd(16, 1, 4, 3, 1, 1)), "C 1, G 16 % 8");
    assert!(!supports(&merged, &fwd(12, 1, 4, 3, 1, 1)), "G 12 % 8 != 0");
    assert!(!supports(&merged, &fwd(16, 2, 4, 3, 1, 1)), "C 2");
    // A on vector dim 2: C % vecA.
    let mut a = params(Specialization::Default);
    a.a_scalar_per_vector = 4;
    assert!(supports(&inst(OpKind::FwdXdl, a.clone()), &fwd(1, 8, 8, 3, 1, 1)));
    assert!(!supports(&inst(OpKind::FwdXdl, a.clone()), &fwd(1, 6, 8, 3, 1, 1)));
    // A on vector dim 1 (merged groups): C 1 or NGM 1, and G % vecA.
    a.a_vector_dim = 1;
    a.groups_to_merge = 8;
    assert!(supports(&inst(OpKind::FwdXdl, a.clone()), &fwd(16, 1, 4, 3, 1, 1)));
    let mut wide = a.clone();
    wide.a_scalar_per_vector = 16;
    assert!(
        !supports(&inst(OpKind::FwdXdl, wide), &fwd(8, 1, 4, 3, 1, 1)),
        "G 8 % vecA 16"
    );
    a.groups_to_merge = 1;
    assert!(
        supports(&inst(OpKind::FwdXdl, a.clone()), &fwd(8, 3, 4, 3, 1, 1)),
        "NGM 1, G 8 % 4"
    );
    assert!(
        !supports(&inst(OpKind::FwdXdl, a.clone()), &fwd(6, 3, 4, 3, 1, 1)),
        "G 6 % 4"
    );
    assert!(
        !supports(&inst(OpKind::FwdXdlV3, a.clone()), &fwd(8, 3, 4, 3, 1, 1)),
        "V3: dim-2 path only"
    );
    // B: C % vecB; E: K % vecE.
    let mut b = params(Specialization::Default);
    b.b_scalar_per_vector = 4;
    assert!(supports(&inst(OpKind::FwdXdl, b.clone()), &fwd(1, 12, 8, 3, 1, 1)));
    assert!(!supports(&inst(OpKind::FwdXdl, b), &fwd(1, 10, 8, 3, 1, 1)));
    let mut e = params(Specialization::Default);
    e.e_scalar_per_vector = 8;
    assert!(supports(&inst(OpKind::FwdXdl, e.clone()), &fwd(1, 3, 16, 3, 1, 1)));
    assert!(!supports(&inst(OpKind::FwdXdl, e), &fwd(1, 3, 12, 3, 1, 1)));
}

#[test]
fn pipeline_prefetch_stages() {
    let mut p = params(Specialization::Default);
    assert_eq!(prefetch_stages(1, &p, 4), 0);
    assert_eq!(prefetch_stages(3, &p, 4), 2);
    assert_eq!(prefetch_stages(4, &p, 4), 4);
    assert_eq!(prefetch_stages(5, &p, 4), 3);
    // v2: ceil((32768 / max(1, 256/BlockSize)) / ((M+N) * bytes * KPerBlock)), clamped to 2..8.
    // 256 threads, 128+128, fp16, 32: 32768 / 16384 = 2.
    assert_eq!(prefetch_stages(2, &p, 2), 2);
    // 256 threads, 32+32, fp32, 32: 32768 / 8192 = 4.
    p.m_per_block = 32;
    p.n_per_block = 32;
    assert_eq!(prefetch_stages(2, &p, 4), 4);
    // 256 threads, 16+16, fp16, 16: 32768 / 1024 = 32 -> clamped to 8.
    p.m_per_block = 16;
    p.n_per_block = 16;
    p.k_per_block = 16;
    assert_eq!(prefetch_stages(2, &p, 2), 8);
    // 64 threads: 32768 / 4 = 8192; 64+64, fp32, 32 -> 8192/16384 rounds up to 1 -> 2.
    p.block_size = 64;
    p.m_per_block = 64;
    p.n_per_block = 64;
    p.k_per_block = 32;
    assert_eq!(prefetch_stages(2, &p, 4), 2);
}

#[test]
fn forward_v3_pipeline_depth() {
    let v3 = |ver: u32, spec| {
        let mut p = params(spec);
        p.pipeline_version = Some(ver);
        inst(OpKind::FwdXdlV3, p)
    };
    use Specialization::*;
    // Default: GemmK = Y*X*C; KPerBlock 32.
    assert!(
        supports(&v3(3, Default), &fwd(1, 16, 8, 3, 1, 1)),
        "ceil(144/32) = 5 > 2"
    );
    assert!(!supports(&v3(3, Default), &fwd(1, 8, 8, 1, 0, 1)), "ceil(8/32) = 1");
    assert!(supports(&v3(4, Default), &fwd(1, 16, 8, 3, 1, 1)), "5 > 4");
    assert!(!supports(&v3(4, Default), &fwd(1, 14, 8, 3, 1, 1)), "ceil(126/32) = 4");
    assert!(supports(&v3(5, Default), &fwd(1, 14, 8, 3, 1, 1)), "4 > 3");
    assert!(supports(&v3(1, Default), &fwd(1, 1, 8, 1, 0, 1)), "v1: no check");
    // 1x1 specialisations: GemmK = C.
    assert!(
        !supports(&v3(3, Filter1x1Pad0), &fwd(1, 64, 8, 1, 0, 1)),
        "ceil(64/32) = 2"
    );
    assert!(supports(&v3(3, Filter1x1Pad0), &fwd(1, 96, 8, 1, 0, 1)), "3 > 2");
    // v2 with 256 threads, 128+128, fp32, 32: 32768/32768 -> 1 -> clamped 2.
    assert!(!supports(&v3(2, Default), &fwd(1, 7, 8, 3, 1, 1)), "ceil(63/32) = 2");
    assert!(supports(&v3(2, Default), &fwd(1, 8, 8, 3, 1, 1)), "ceil(72/32) = 3");
}

#[test]
fn backward_data_rules() {
    let bwd = |k: u64, c: u64, fil: u64, pad: u64, stride: u64| dims("conv", 2, 2, c, k, 16, fil, pad, stride);
    let mut p = params(Specialization::Filter1x1Stride1Pad0);
    p.a_vector_dim = 2;
    p.b_vector_dim = 1;
    // AK1 8, KPerBlock 32: ceil(K/8)*8 % 32 == 0.
    let one = inst(OpKind::BwdData, p.clone());
    assert!(supports(&one, &bwd(32, 8, 1, 0, 1)));
    assert!(!supports(&one, &bwd(24, 8, 1, 0, 1)), "24 % 32");
    assert!(supports(&one, &bwd(60, 8, 1, 0, 1)), "ceil(60/8)*8 = 64");
    assert!(!supports(&one, &bwd(32, 8, 1, 0, 2)), "stride 2");
    p.spec = Specialization::Default;
    let def = inst(OpKind::BwdData, p.clone());
    assert!(supports(&def, &bwd(24, 8, 3, 1, 2)), "Default pads GemmK");
    // Vectors: K % vecA, C % vecB, C % vecCDE; A must be on dim 2 and B on dim 1.
    p.a_scalar_per_vector = 8;
    assert!(supports(&inst(OpKind::BwdData, p.clone()), &bwd(16, 3, 3, 1, 1)));
    assert!(!supports(&inst(OpKind::BwdData, p.clone()), &bwd(12, 3, 3, 1, 1)));
    p.a_scalar_per_vector = 1;
    p.b_scalar_per_vector = 4;
    assert!(supports(&inst(OpKind::BwdData, p.clone()), &bwd(3, 8, 3, 1, 1)));
    assert!(!supports(&inst(OpKind::BwdData, p.clone()), &bwd(3, 6, 3, 1, 1)));
    p.b_scalar_per_vector = 1;
    p.e_scalar_per_vector = 2;
    assert!(supports(&inst(OpKind::BwdData, p.clone()), &bwd(3, 4, 3, 1, 1)));
    assert!(
        !supports(&inst(OpKind::BwdData, p.clone()), &bwd(3, 5, 3, 1, 1)),
        "unprinted CDE vector"
    );
    p.e_scalar_per_vector = 1;
    p.b_vector_dim = 2;
    assert!(
        !supports(&inst(OpKind::BwdData, p), &bwd(3, 4, 3, 1, 1)),
        "B vector dim must be 1"
    );
}

#[test]
fn backward_weight_rules() {
    let wrw = |prec: &str, g: u64, c: u64, k: u64, hw: u64, fil: u64| dims(prec, 4, g, c, k, hw, fil, 0, 1);
    let mut p = params(Specialization::Filter1x1Stride1Pad0);
    let one = inst(OpKind::BwdWeight, p.clone());
    assert!(supports(&one, &wrw("conv", 1, 4, 4, 8, 1)));
    assert!(!supports(&one, &wrw("conv", 1, 4, 4, 8, 3)));
    p.spec = Specialization::Default;
    p.a_scalar_per_vector = 4; // K
    p.b_scalar_per_vector = 2; // C
    p.e_scalar_per_vector = 2; // C
    let x = inst(OpKind::BwdWeight, p.clone());
    assert!(supports(&x, &wrw("conv", 1, 6, 8, 8, 3)));
    assert!(!supports(&x, &wrw("conv", 1, 6, 6, 8, 3)), "K 6 % 4");
    assert!(!supports(&x, &wrw("conv", 1, 3, 8, 8, 3)), "C 3 % 2");
    p.a_vector_dim = 1;
    assert!(
        !supports(&inst(OpKind::BwdWeight, p.clone()), &wrw("conv", 1, 6, 8, 8, 3)),
        "A loads along dim 2"
    );
    // Split-k never matters for the one-stage kernel.
    for sk in [1, 2, 128] {
        assert!(supports_split_k(&x, &wrw("conv", 1, 6, 8, 8, 3), sk));
    }
}

#[test]
fn two_stage_rules() {
    let d = |g: u64, c: u64, k: u64, hw: u64| dims("convfp16", 4, g, c, k, hw, 1, 0, 1);
    let mut p = params(Specialization::Default);
    p.a_vector_dim = 1;
    p.b_vector_dim = 1;
    p.pipeline_version = Some(5); // 3 prefetch stages
    p.k_per_block = 32;
    let ts = |p: &Params| inst(OpKind::BwdWeightTwoStage, p.clone());
    // N=4: num_k_loop = ceil(4*Ho*Wo / 32) must be > 3.
    assert!(supports(&ts(&p), &d(1, 2, 2, 8)), "ceil(256/32) = 8");
    assert!(!supports(&ts(&p), &d(1, 2, 2, 4)), "ceil(64/32) = 2");
    assert!(supports(&ts(&p), &d(1, 2, 2, 5)), "ceil(100/32) = 4");
    // Vectors: unless C % vecB == 0 and K % vecA == 0, C and K must both be 1.
    p.a_scalar_per_vector = 4;
    p.b_scalar_per_vector = 4;
    assert!(supports(&ts(&p), &d(1, 4, 8, 8)));
    assert!(!supports(&ts(&p), &d(1, 6, 8, 8)));
    assert!(supports(&ts(&p), &d(4, 1, 1, 8)), "C = K = 1");
    // C % vecC.
    p.a_scalar_per_vector = 1;
    p.b_scalar_per_vector = 1;
    p.e_scalar_per_vector = 2;
    assert!(!supports(&ts(&p), &d(1, 3, 2, 8)));
    assert!(supports(&ts(&p), &d(1, 4, 2, 8)));
    // Merged groups: K*NGM <= MPerBlock, C*Y*X*NGM <= NPerBlock, C = K = 1, G % NGM.
    p.e_scalar_per_vector = 1;
    p.groups_to_merge = 4;
    p.m_per_block = 16;
    p.n_per_block = 4;
    assert!(supports(&ts(&p), &d(8, 1, 1, 8)));
    assert!(!supports(&ts(&p), &d(6, 1, 1, 8)), "G 6 % 4");
    assert!(!supports(&ts(&p), &d(8, 2, 1, 8)), "C 2");
    p.n_per_block = 2;
    assert!(!supports(&ts(&p), &d(8, 1, 1, 8)), "C*Y*X*NGM = 4 > 2");
    // Split-k: k_batch enters num_k_loop, and a workspace is set only for fp16 with odd C or K.
    p.groups_to_merge = 1;
    p.m_per_block = 128;
    p.n_per_block = 128;
    assert!(
        supports_split_k(&ts(&p), &d(1, 3, 2, 8), 2),
        "odd C: workspace, ceil(256/64) = 4 > 3"
    );
    assert!(!supports_split_k(&ts(&p), &d(1, 3, 2, 8), 4), "ceil(256/128) = 2");
    assert!(
        !supports_split_k(&ts(&p), &d(1, 4, 2, 8), 1),
        "even C and K: no workspace"
    );
    assert!(
        supports(&ts(&p), &d(1, 4, 2, 8)),
        "valid_kernels sets a dummy workspace"
    );
    p.b_vector_dim = 2;
    assert!(!supports(&ts(&p), &d(1, 4, 2, 8)), "A and B load along dimension 1");
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
        assert!(c.instances.iter().enumerate().all(|(i, x)| x.factory_index == i));
    }
    let f16 = Catalogue::load(
        &common::ck_dir().join("fwd_f16.tsv"),
        Direction::Forward,
        Precision::Fp16,
    )
    .unwrap();
    assert_eq!(f16.instances[64].kind, OpKind::FwdLargeTensor);
    assert_eq!(f16.instances[66].params.groups_to_merge, 8);
    assert_eq!(f16.instances[72].kind, OpKind::FwdXdlV3);
    assert_eq!(f16.instances[72].tokens[14], "BlkGemmPipelineScheduler:Intrawave");
    assert_eq!(f16.instances[72].params.pipeline_version, Some(4));
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
        let d = CkDims::new(&p).unwrap();
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

/// Where two rule sets disagree: (device op, split-k row?, the 2024 answer, why the other refuses
/// or "accepts") -> cells.
type Tally = std::collections::BTreeMap<(String, bool, bool, String), u64>;

#[test]
fn the_2024_rules_and_the_merged_rules_agree_on_every_instance_and_corpus_problem() {
    use tuneinfer::solvers::ck::catalogue351::tsv_instances;
    use tuneinfer::solvers::ck::rules351::{self, CkProblem, CkSolver, CkType, RuleSet};
    let corpus = differential_corpus();
    assert!(corpus.len() > 10_000, "{} geometries", corpus.len());
    let mut cells = 0u64;
    let mut against_crate_2024 = 0u64;
    let mut tallies: [Tally; 2] = Default::default();
    for (solver, dir) in [
        (CkSolver::Fwd2d, Direction::Forward),
        (CkSolver::Bwd2d, Direction::BackwardData),
        (CkSolver::Wrw2d, Direction::BackwardWeights),
    ] {
        for prec in [Precision::Fp32, Precision::Fp16] {
            let name = tuneinfer::solvers::ck::catalogue::file_name(dir, prec).unwrap();
            let oracle = oracle_2024::read(&common::ck_dir().join(&name));
            let crate_2024 = Catalogue::load(&common::ck_dir().join(&name), dir, prec).unwrap();
            let merged = tsv_instances(&common::miopen_dir(), solver, CkType::from(prec)).unwrap();
            assert_eq!(oracle.len(), merged.len());
            for p in corpus.iter().filter(|p| p.precision == prec) {
                let mut p = p.clone();
                p.direction = dir;
                let d = oracle_dims(&p);
                let old = CkDims::new(&p).unwrap();
                let ckp = CkProblem::new(&p, CkType::from(prec)).unwrap();
                for ((o, c), m) in oracle.iter().zip(&crate_2024.instances).zip(&merged) {
                    assert_eq!(o.type_string, m.type_string);
                    let splits: &[u64] = if dir == Direction::BackwardWeights {
                        &[0, 1, 2, 4, 8, 16, 32, 64, 128]
                    } else {
                        &[0]
                    };
                    for &sk in splits {
                        cells += 1;
                        let (want, have) = if sk == 0 {
                            (oracle_2024::supports(o, &d), supports(c, &old))
                        } else {
                            (oracle_2024::supports_split_k(o, &d, sk), supports_split_k(c, &old, sk))
                        };
                        against_crate_2024 += u64::from(want != have);
                        for (t, rules) in [RuleSet::ReachableCk, RuleSet::Miopen351].into_iter().enumerate() {
                            let got = rules351::supports(m, &ckp, sk.max(1), rules);
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
    for (t, name) in tallies.iter().zip(["CK bcf7f811 (RuleSet::ReachableCk)", "MIOpen 3.5.1 (RuleSet::Miopen351)"]) {
        eprintln!("2024 vs {name}:");
        for ((op, split, want, why), n) in t {
            eprintln!("  {op} split-k row {split}: 2024 {want}, other: {why}: {n}");
        }
    }
    eprintln!("{} geometries, {cells} cells", corpus.len());
    assert_eq!(against_crate_2024, 0, "the frozen 2024 rules are the crate's 2024 rules");
    // Where the 3.5.1 file's rules differ from MIOpen 2024's (all of them accept more): the
    // two-stage op's `X*C` vector path of CK bcf7f811 (1,390 cells) and MIOpen 3.5.1's workspace
    // for every split-k id; MIOpen 3.5.1 also drops the bwd-data 1x1 K tile rule and runs
    // pipeline v4 with 3 prefetch stages.
    let two_stage = "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle";
    let row = |op: &str, split: bool, n: u64| ((op.to_string(), split, false, "accepts".to_string()), n);
    let reachable: Tally = [row(two_stage, false, 1390), row(two_stage, true, 301_684)].into();
    let mut miopen351 = reachable.clone();
    miopen351.extend([
        row("DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1", false, 30_992),
        row("DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3", false, 8662),
    ]);
    assert_eq!(tallies, [reachable, miopen351]);
}
