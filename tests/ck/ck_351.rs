//! Issue 35 item 2: MIOpen 3.5.1's CK kernel ids, catalogue and rules
//! (`src/solvers/ck/{instance,rules,index}.rs`).
//!
//! The first tests need no data: goldens derived by hand from CK's and MIOpen's source (each
//! cites the line it comes from; CK `develop` bcf7f811, `include/ck/tensor_operation/gpu/device/impl/`).
//! The others read `../shared/miopen` (or `$TUNEINFER_MIOPEN_DATA`) and say loudly when it is
//! absent (failing under `TUNEINFER_CI=1`, as `tests/common` does).

use std::path::PathBuf;

use tuneinfer::data::textdb::read_text;
use tuneinfer::problem::{ConvProblem, Direction};
use tuneinfer::solvers::ck::index::{corpus_report, load_index, CkIndex};
use tuneinfer::solvers::ck::instance::{parse_kernel_id, parse_type_string, ConvSpec, DeviceOp};
use tuneinfer::solvers::ck::rules::{
    check_kernel, parse_db_key, prefetch_stages, supports, CkProblem, CkSolver, CkType, Reject, CkVersion,
};

/// A 2-D problem from a 24-field key (forward convention for F keys).
fn problem(key: &str) -> CkProblem {
    let (p, t) = parse_db_key(key).unwrap();
    CkProblem::new(&p, t).unwrap()
}

/// Key of a 2-D forward NHWC FP16 problem: C, H=W, filter, K, N, pad, stride, G.
#[allow(clippy::too_many_arguments)]
fn fwd_key(c: u64, hw: u64, fil: u64, k: u64, n: u64, pad: u64, stride: u64, g: u64) -> String {
    format!("2x{c}x{hw}x{hw}x1x{fil}x{fil}x1x{k}x{n}x{pad}x{pad}x0x{stride}x{stride}x0x1x1x0x0x{g}xNHWCxFP16xF")
}

fn check(solver: CkSolver, id: &str, p: &CkProblem) -> Result<(), Reject> {
    let k = parse_kernel_id(id).unwrap();
    check_kernel(solver, &k.instance, k.split_k, p, "gfx942", CkVersion::Miopen351)
}

// A real fwd instance (gfx942130 rows): vectors A 8, B 8, CDE 8.
const FWD: &str =
    "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<128, 128, 128, 32, Default, 32, 32, 4, 2, 8, 8, 8, 1, 1, 1>";

#[test]
fn fwd_rejects_c_not_divisible_by_the_a_vector() {
    // device_grouped_conv_fwd_multiple_abd_xdl_cshuffle.hpp:1178-1203: ABlockTransferSrcVectorDim 2
    // needs C % ABlockTransferSrcScalarPerVector == 0 (per group: MIOpen CKArgs C = C1 / G).
    // C = 12: 12 % 8 = 4.
    let p = problem(&fwd_key(12, 14, 3, 64, 8, 1, 1, 1));
    assert_eq!(
        check(CkSolver::Fwd2d, FWD, &p),
        Err(Reject::Vector("C % ABlockTransferSrcScalarPerVector"))
    );
    // C = 16 passes; with 2 groups C1 = 32 is 16 per group, also fine; 3 groups of 48 = 16 too.
    assert_eq!(
        check(CkSolver::Fwd2d, FWD, &problem(&fwd_key(16, 14, 3, 64, 8, 1, 1, 1))),
        Ok(())
    );
    assert_eq!(
        check(CkSolver::Fwd2d, FWD, &problem(&fwd_key(48, 14, 3, 192, 8, 1, 1, 3))),
        Ok(())
    );
    // 2 groups of C1 = 24: 12 per group -> rejected although 24 % 8 == 0.
    assert!(check(CkSolver::Fwd2d, FWD, &problem(&fwd_key(24, 14, 3, 64, 8, 1, 1, 2))).is_err());
    // :1311: K % CDEBlockTransferScalarPerVector_NPerBlock (K = 20: 20 % 8 = 4).
    assert_eq!(
        check(CkSolver::Fwd2d, FWD, &problem(&fwd_key(16, 14, 3, 20, 8, 1, 1, 1))),
        Err(Reject::Vector("K % CDEBlockTransferScalarPerVector_NPerBlock"))
    );
}

#[test]
fn specialisations_follow_filter_stride_and_pads() {
    // fwd :1106-1139: Filter1x1Stride1Pad0 = 1x1, stride 1, pads 0; Filter1x1Pad0 any stride.
    let s1 = FWD.replace("Default", "Filter1x1Stride1Pad0");
    let p0 = FWD.replace("Default", "Filter1x1Pad0");
    let one_by_one = problem(&fwd_key(64, 14, 1, 64, 8, 0, 1, 1));
    let strided = problem(&fwd_key(64, 14, 1, 64, 8, 0, 2, 1));
    let three = problem(&fwd_key(64, 14, 3, 64, 8, 1, 1, 1));
    assert_eq!(check(CkSolver::Fwd2d, &s1, &one_by_one), Ok(()));
    assert_eq!(
        check(CkSolver::Fwd2d, &s1, &strided),
        Err(Reject::Spec(ConvSpec::Filter1x1Stride1Pad0))
    );
    assert_eq!(check(CkSolver::Fwd2d, &p0, &strided), Ok(()));
    assert_eq!(
        check(CkSolver::Fwd2d, &p0, &three),
        Err(Reject::Spec(ConvSpec::Filter1x1Pad0))
    );
    // A 3-D key: the depth counts too (filter depth 3 breaks 1x1x1).
    let deep = problem("3x64x14x14x4x1x1x3x64x8x0x0x1x1x1x1x1x1x1x0x1xNDHWCxFP16xF");
    assert_eq!(
        check(CkSolver::Fwd3d, &s1, &deep),
        Err(Reject::Spec(ConvSpec::Filter1x1Stride1Pad0))
    );
    let flat = problem("3x64x14x14x4x1x1x1x64x8x0x0x0x1x1x1x1x1x1x0x1xNDHWCxFP16xF");
    assert_eq!(check(CkSolver::Fwd3d, &s1, &flat), Ok(()));
}

#[test]
fn merged_groups_need_c_one_and_g_divisible() {
    // fwd :1161-1176: NumGroupsToMerge > 1 needs C == 1 and G % NumGroupsToMerge == 0; A is then
    // read along G (:1190-1197), so G % ABlockTransferSrcScalarPerVector too.
    let merged =
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<256, 64, 64, 32, Default, 32, 32, 2, 2, 8, 1, 8, 1, 1, 8>";
    // Depthwise: C1 = K1 = G = 64 -> C = 1, K = 1: K % 8 fails the E rule.
    let dw = problem(&fwd_key(64, 14, 3, 64, 8, 1, 1, 64));
    assert_eq!(
        check(CkSolver::Fwd2d, merged, &dw),
        Err(Reject::Vector("K % CDEBlockTransferScalarPerVector_NPerBlock"))
    );
    // C = 1, K = 8, G = 64: passes; G = 60 (60 % 8 != 0) fails the merge rule.
    assert_eq!(
        check(CkSolver::Fwd2d, merged, &problem(&fwd_key(64, 14, 3, 512, 8, 1, 1, 64))),
        Ok(())
    );
    assert_eq!(
        check(CkSolver::Fwd2d, merged, &problem(&fwd_key(60, 14, 3, 480, 8, 1, 1, 60))),
        Err(Reject::MergedGroups)
    );
}

#[test]
fn pipeline_prefetch_stages() {
    // blockwise_gemm_pipeline_xdlops_v2.hpp:143-150 by hand: WgpPerCU = max(1, 4*64/BlockSize),
    // ceil((32768 / WgpPerCU) / ((MPerBlock + NPerBlock) * sizeof * KPerBlock)), clamped to 2..8.
    // 256, 128x128x32, fp16: 32768 / (256*2*32 = 16384) = 2.
    assert_eq!(prefetch_stages(CkVersion::Miopen351, 2, 256, 128, 128, 32, 2), 2);
    // 64, 16x16x16, fp32: WgpPerCU 4, 8192 / (32*4*16 = 2048) = 4.
    assert_eq!(prefetch_stages(CkVersion::Miopen351, 2, 64, 16, 16, 16, 4), 4);
    // 64, 16x16x8, int8: 8192 / (32*1*8 = 256) = 32 -> 8.
    assert_eq!(prefetch_stages(CkVersion::Miopen351, 2, 64, 16, 16, 8, 1), 8);
    // v3 (:145) 2, v5 (:147) 3; v4: 4 at bcf7f811 (:145), 3 in the CK MIOpen 3.5.1 runs (its
    // explicit-GEMM ids print `BlkGemmPipelineVersion: v4, BlkGemmPipelinePrefetchStages: 3`).
    assert_eq!(prefetch_stages(CkVersion::Develop2025, 3, 256, 128, 128, 32, 2), 2);
    assert_eq!(prefetch_stages(CkVersion::Develop2025, 5, 256, 128, 128, 32, 2), 3);
    assert_eq!(prefetch_stages(CkVersion::Develop2025, 4, 256, 128, 128, 32, 2), 4);
    assert_eq!(prefetch_stages(CkVersion::Miopen351, 4, 256, 128, 128, 32, 2), 3);

    // Fwd V3 (device_grouped_conv_fwd_multiple_abd_xdl_cshuffle_v3.hpp:1236-1245): a 1x1
    // specialisation's GemmK is C; KPerBlock 64, v3 (2 stages): C = 128 gives 2 loops (rejected),
    // C = 192 gives 3 (accepted).
    let v3 = "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<256, 128, 128, 64, Filter1x1Pad0, 32, 32, 2, 2, 8, 8, 8, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v3>";
    assert_eq!(
        check(CkSolver::Fwd2d, v3, &problem(&fwd_key(128, 14, 1, 64, 8, 0, 1, 1))),
        Err(Reject::Pipeline)
    );
    assert_eq!(
        check(CkSolver::Fwd2d, v3, &problem(&fwd_key(192, 14, 1, 64, 8, 0, 1, 1))),
        Ok(())
    );
    // Default: GemmK = Y*X*C = 9*64 = 576 -> 9 loops.
    let v3d = v3.replace("Filter1x1Pad0", "Default");
    assert_eq!(
        check(CkSolver::Fwd2d, &v3d, &problem(&fwd_key(64, 14, 3, 64, 8, 1, 1, 1))),
        Ok(())
    );
}

#[test]
fn bwd_data_vectors_and_1x1_k_tile() {
    // device_grouped_conv_bwd_data_multiple_d_xdl_cshuffle_v1.hpp:792 A (dy) along K, :806 B (w)
    // along C. Forward convention: C = x's channels, K = y's. A bwd key's in_channels is dy's.
    let id = "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 64, 128, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 1, 2, 8, 8, 1, 1>+2";
    let bwd = |k: u64, c: u64| problem(&format!("2x{k}x13x13x1x1x1x1x{c}x16x0x0x0x1x1x0x1x1x0x0x1xNHWCxFP16xB"));
    assert_eq!(check(CkSolver::Bwd2d, id, &bwd(1024, 512)), Ok(()));
    assert_eq!(
        check(CkSolver::Bwd2d, id, &bwd(1020, 512)),
        Err(Reject::Vector("K % ABlockTransferSrcScalarPerVector"))
    );
    assert_eq!(
        check(CkSolver::Bwd2d, id, &bwd(1024, 516)),
        Err(Reject::Vector("C % BBlockTransferSrcScalarPerVector"))
    );
    // transform_conv_bwd_data_to_gemm_v1.hpp:616-632 + gridwise_gemm_multiple_d_xdl_cshuffle.hpp:363:
    // K = 1000, AK1 = 8: ceil(1000/8)*8 = 1000, 1000 % KPerBlock 32 = 8 -> rejected by the
    // reachable CK; MIOpen 3.5.1 tuned exactly this (gfx942130.db.txt.bz2 line 1, BF16).
    let k = parse_kernel_id(id).unwrap();
    let p = bwd(1000, 512);
    assert_eq!(
        check_kernel(
            CkSolver::Bwd2d,
            &k.instance,
            k.split_k,
            &p,
            "gfx942",
            CkVersion::Develop2025
        ),
        Err(Reject::BwdDataKTile)
    );
    assert_eq!(check(CkSolver::Bwd2d, id, &p), Ok(()));
}

#[test]
fn two_stage_reads_b_along_x_times_c_for_one_group() {
    // device_grouped_conv_bwd_weight_two_stage_xdl_cshuffle.hpp:1564-1583: B may be read along
    // X*C when G == 1 and the W pads are 0. This instance (a gfx942130 row) has BSrcScalarPerVector 7,
    // ASrcScalarPerVector 4, C store vector 1, v5 pipeline (3 stages).
    let id = "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle<64, 64, 112, 32, Default, 8, 4, 7, 4, 4, 7, 4, 1, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v5, 1>+1";
    // ResNet's stem as wrw: C = 3, K = 64, 7x7, stride 2, N = 32, dy 112x112 (the key holds dy).
    let wrw = |pad: u64| {
        problem(&format!(
            "2x64x112x112x1x7x7x1x3x32x{pad}x{pad}x0x2x2x0x1x1x0x0x1xNHWCxFP16xW"
        ))
    };
    // Pads 0: C*X = 21, 21 % 7 = 0 -> accepted although C % 7 != 0.
    assert_eq!(check(CkSolver::Wrw2d, id, &wrw(0)), Ok(()));
    // Pads 3: no X*C access, C = 3 % 7 != 0.
    assert!(matches!(check(CkSolver::Wrw2d, id, &wrw(3)), Err(Reject::Vector(_))));
    // Pipeline (:1485-1491): GemmK = N*Ho*Wo = 32*112*112 = 401408; split-k 128 -> ceil(401408 /
    // (32*128)) = 98 loops > 3: still fine.
    assert_eq!(check(CkSolver::Wrw2d, &id.replace("+1", "+128"), &wrw(0)), Ok(()));
}

#[test]
fn explicit_gemm_rules() {
    // device_grouped_conv_bwd_weight_explicit_xdl.hpp IsSupportedArgument: 1x1 stride 1 pad 0,
    // then the batched GEMM (M = K, N = C, GemmK = N*Ho*Wo): with GemmSpecialization Default,
    // gridwise_gemm_xdl_cshuffle_v3.hpp:1011 CheckValidity wants M % MPerBlock (A column-major),
    // N % NPerBlock (B row-major) and GemmK % (KBatch*KPerBlock).
    let id = "DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<Default, CRR> BlkSize: 128, BlkTile: 128x16x64, WaveTile: 16x16, WaveMap: 4x1, VmemReadVec: 8x2, BlkGemmPipelineScheduler: Interwave, BlkGemmPipelineVersion: v2, BlkGemmPipelinePrefetchStages: 2>";
    // W key: in_channels = dy's = K; out_channels = x's = C. N*Ho*Wo = 16*14*14 = 3136 = 49*64.
    let wrw = |k: u64, c: u64, fil: u64, pad: u64| {
        problem(&format!(
            "2x{k}x14x14x1x{fil}x{fil}x1x{c}x16x{pad}x{pad}x0x1x1x0x1x1x0x0x1xNHWCxFP16xW"
        ))
    };
    assert_eq!(check(CkSolver::Wrw2d, &format!("{id}+1"), &wrw(256, 64, 1, 0)), Ok(()));
    assert_eq!(
        check(CkSolver::Wrw2d, &format!("{id}+1"), &wrw(192, 64, 1, 0)),
        Err(Reject::GemmTile("M (= K) % MPerBlock"))
    );
    assert_eq!(
        check(CkSolver::Wrw2d, &format!("{id}+1"), &wrw(256, 64, 3, 1)),
        Err(Reject::Spec(ConvSpec::Filter1x1Stride1Pad0))
    );
    // 3136 % (2*64) = 64 -> split-k 2 is rejected, 1 is fine.
    assert_eq!(
        check(CkSolver::Wrw2d, &format!("{id}+2"), &wrw(256, 64, 1, 0)),
        Err(Reject::GemmTile("GemmK (= N*Ho*Wo) % (split_k * KPerBlock)"))
    );
}

#[test]
fn applicability_and_split_k_suffixes() {
    let wrw_id = "DeviceGroupedConvBwdWeight_Xdl_CShuffle<128, 128, 128, 4, Default, 8, 4, 2, 8, 4, 8, 4, 1, 1, 8>";
    let wrw = problem("2x64x14x14x1x3x3x1x64x16x1x1x0x1x1x0x1x1x0x0x1xNCHWxBF16xW");
    let k = parse_kernel_id(&format!("{wrw_id}+4")).unwrap();
    // conv_hip_implicit_gemm_grouped_wrw_xdlops.cpp:637: BF16 wrw only on gfx942 and gfx95x.
    assert_eq!(
        check_kernel(
            CkSolver::Wrw2d,
            &k.instance,
            k.split_k,
            &wrw,
            "gfx942",
            CkVersion::Miopen351
        ),
        Ok(())
    );
    assert!(matches!(
        check_kernel(
            CkSolver::Wrw2d,
            &k.instance,
            k.split_k,
            &wrw,
            "gfx90a",
            CkVersion::Miopen351
        ),
        Err(Reject::Applicability(_))
    ));
    // The 2-D wrw id carries +split_k (grouped_wrw:226), a power of two up to 128.
    assert!(matches!(check(CkSolver::Wrw2d, wrw_id, &wrw), Err(Reject::SplitK(_))));
    assert!(matches!(
        check(CkSolver::Wrw2d, &format!("{wrw_id}+3"), &wrw),
        Err(Reject::SplitK(_))
    ));
    assert!(matches!(
        check(CkSolver::Wrw2d, &format!("{wrw_id}+256"), &wrw),
        Err(Reject::SplitK(_))
    ));
    // The 2-D fwd id has none; a 3-D solver refuses a 2-D problem; a bwd op is not a fwd one.
    let fwd = problem(&fwd_key(16, 14, 3, 64, 8, 1, 1, 1));
    assert!(matches!(
        check(CkSolver::Fwd2d, &format!("{FWD}+1"), &fwd),
        Err(Reject::SplitK(_))
    ));
    assert!(matches!(
        check(CkSolver::Fwd3d, FWD, &fwd),
        Err(Reject::Applicability(_))
    ));
    assert_eq!(
        check(CkSolver::Fwd2d, &format!("{wrw_id}+1"), &fwd),
        Err(Reject::WrongDirection)
    );
    // A wrw problem under the fwd solver: MIOpen's IsApplicable (`IsDirectionForward`).
    assert_eq!(
        check(CkSolver::Fwd2d, FWD, &wrw),
        Err(Reject::Applicability("the solver tunes another direction"))
    );
    let k = parse_kernel_id(&format!("{wrw_id}+1")).unwrap();
    assert_eq!(
        supports(&k.instance, &fwd, None, CkVersion::Miopen351),
        Err(Reject::WrongDirection)
    );
}

#[test]
fn bad_ids_error_without_panicking() {
    let good = "DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<MNKPadding, CRR> BlkSize: 256, BlkTile: 128x128x64, WaveTile: 32x32, WaveMap: 2x2, VmemReadVec: 8x8, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v3, BlkGemmPipelinePrefetchStages: 2>+8";
    assert!(parse_kernel_id(good).is_ok());
    // Every prefix of a valid id is an error (none ends in '>' with its fields complete), never a panic.
    for (i, _) in good.char_indices().filter(|&(i, _)| i > 0 && i < good.len() - 2) {
        assert!(parse_kernel_id(&good[..i]).is_err(), "{}", &good[..i]);
    }
    for bad in [
        "",
        "+1",
        "<>",
        "ConvHipImplicitGemmGroupFwdXdlops",
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<128, 128, 128, 32, Default, 32, 32, 4, 2, 8, 8, 8, 1, 1, 1>+0",
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<128, -128, 128, 32, Default, 32, 32, 4, 2, 8, 8, 8, 1, 1, 1>",
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<128, 128, 128, 32, Default, 32, 32, 4, 2, 8, 8, 8, 1, 1, 1, 1>",
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<128, 128, 128, 32, Default, 32, 32, 4, 2, 8, 8, 8, 1, 1, BlkGemmPipelineScheduler: Sideways, BlkGemmPipelineVersion: v2>",
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<128, 128, 128, 32, Default, 32, 32, 4, 2, 8, 8, 8, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v9>",
        "DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<KPadding, CRR> BlkSize: 256>",
        "DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceGemm<Default, CRR> BlkSize: 256>",
        "DeviceGroupedConvFwdMultipleABD_Wmma<1, 2>",
    ] {
        let err = parse_kernel_id(bad).expect_err(bad).to_string();
        assert!(err.contains("CK kernel id"), "{bad}: {err}");
    }
    // The error names the unknown operation.
    let e = parse_kernel_id("DeviceGroupedConvFwdMultipleABD_Wmma<1, 2>")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown CK device operation"), "{e}");
}

/// `../shared/miopen` or `$TUNEINFER_MIOPEN_DATA`; None (said loudly) when absent.
fn data_dir() -> Option<PathBuf> {
    let dir = tuneinfer::solvers::ck::index::default_data_dir();
    if dir.join("perfdb/gfx942130.db.txt.bz2").is_file() && dir.join("ck").is_dir() {
        return Some(dir);
    }
    let message = format!(
        "SKIPPED: MIOpen 3.5.1 data not found at {} (perfdb/*.db.txt.bz2 and ck/, kept beside the \
         checkout as ../shared/miopen); point $TUNEINFER_MIOPEN_DATA at a copy to run this test",
        dir.display()
    );
    if std::env::var("TUNEINFER_CI").ok().as_deref() == Some("1") {
        panic!("TUNEINFER_CI=1 and the data is missing: {message}");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{message}");
    None
}

fn index() -> Option<std::sync::Arc<CkIndex>> {
    Some(load_index(&data_dir()?, &read_text).unwrap())
}

#[test]
fn real_rows_parse_and_pass() {
    let Some(index) = index() else { return };
    // Rows as they stand in gfx942130.db.txt.bz2 (`bzcat | sed -n Np`): line 1 (2-D bwd BF16 NCHW),
    // 9816 (2-D fwd FP16 V3 v4, 4 K loops), 133398 (3-D fwd, D = 1), 128014 (3-D bwd).
    let samples = [
        (1, CkSolver::Bwd2d, "2x1000x13x13x1x1x1x1x512x16x0x0x0x1x1x0x1x1x0x0x1xNCHWxBF16xB", "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 64, 128, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 1, 2, 8, 8, 1, 1>+2"),
        (9816, CkSolver::Fwd2d, "2x128x14x14x1x1x1x1x416x32x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP16xF", "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<256, 128, 128, 32, Filter1x1Pad0, 32, 32, 2, 2, 8, 8, 8, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v4>"),
        (133398, CkSolver::Fwd3d, "3x128x14x14x1x1x1x1x288x128x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP16xF", "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<256, 128, 128, 32, Filter1x1Pad0, 32, 32, 2, 2, 8, 8, 8, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v4>"),
        (128014, CkSolver::Bwd3d, "3x1000x13x13x1x1x1x1x512x1024x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP16xB", "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 128, 256, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 2, 4, 8, 4, 1, 1>"),
    ];
    for (line, solver, key, value) in samples {
        let row = index
            .rows
            .iter()
            .find(|r| r.db == 0 && r.line == line && r.solver == solver)
            .unwrap_or_else(|| panic!("line {line} {solver}"));
        assert_eq!(row.key, key);
        assert_eq!(index.value(row), value);
        let (p, t) = parse_db_key(key).unwrap();
        let ck = CkProblem::new(&p, t).unwrap();
        let id = parse_kernel_id(value).unwrap();
        let cat = index.catalogue(solver, t).unwrap();
        let entry = cat.find(&id.instance.type_string).expect("in the catalogue");
        assert_eq!(
            check_kernel(solver, &entry.instance, id.split_k, &ck, "gfx942", CkVersion::Miopen351),
            Ok(())
        );
        // The catalogue's supported ids for this problem hold the tuned one.
        assert!(cat
            .supported(&ck, "gfx942")
            .any(|(e, sk)| e.instance.type_string == id.instance.type_string && sk == id.split_k));
    }
    // A sample of every 97th row: all parse and pass (or are one of the counted-apart keys).
    let mut checked = 0;
    for row in index.rows.iter().step_by(97) {
        let Ok((p, t)) = parse_db_key(&row.key) else { continue };
        let ck = CkProblem::new(&p, t).unwrap();
        let id = parse_kernel_id(index.value(row)).unwrap();
        let inst = &index
            .catalogue(row.solver, t)
            .unwrap()
            .find(&id.instance.type_string)
            .unwrap()
            .instance;
        let arch = tuneinfer::solvers::ck::index::DATABASES[row.db].1;
        assert_eq!(
            check_kernel(row.solver, inst, id.split_k, &ck, arch, CkVersion::Miopen351),
            Ok(()),
            "{}",
            row.key
        );
        checked += 1;
    }
    assert!(checked > 1900, "{checked}");
}

#[test]
fn whole_corpus() {
    let Some(index) = index() else { return };
    let r = corpus_report(&index);
    // Entries per solver in gfx942130.db.txt.bz2, counted apart from this code:
    // `bzcat gfx942130.db.txt.bz2 | grep -o 'ConvHipImplicitGemm[A-Za-z0-9]*Group[A-Za-z]*Xdlops:' | sort | uniq -c`.
    let file = "gfx942130.db.txt.bz2";
    for (solver, n) in [
        (CkSolver::Fwd2d, 44146),
        (CkSolver::Bwd2d, 44443),
        (CkSolver::Wrw2d, 46337),
        (CkSolver::Fwd3d, 19445),
        (CkSolver::Bwd3d, 18658),
        (CkSolver::Wrw3d, 18588),
    ] {
        assert_eq!(r.rows.get(&(file, solver)).copied(), Some(n), "{solver}");
    }
    // gfx90a68: 85 3-D fwd and 79 3-D bwd; gfx90878: none.
    assert_eq!(r.rows.get(&("gfx90a68.db.txt.bz2", CkSolver::Fwd3d)).copied(), Some(85));
    assert_eq!(r.rows.get(&("gfx90a68.db.txt.bz2", CkSolver::Bwd3d)).copied(), Some(79));
    let total: u64 = r.rows.values().sum();
    let parsed: u64 = r.parsed.values().sum();
    let apart: u64 = r.unparsed.values().map(|v| v.0).sum();
    assert_eq!(parsed + apart, total);
    // Counted apart: only keys whose output would be empty (e.g. a 1x1 input, 3x3 filter, pad 0).
    for ((_, what), (_, example)) in &r.unparsed {
        assert_eq!(*what, "key", "{example}");
        assert!(example.contains("would be empty"), "{example}");
    }
    assert!(apart < 100, "{apart}");
    let rows: u64 = r.by_op.values().map(|c| c.rows).sum();
    let in_cat: u64 = r.by_op.values().map(|c| c.in_catalogue).sum();
    let pass: u64 = r.by_op.values().map(|c| c.pass).sum();
    assert_eq!(rows, parsed);
    assert_eq!(in_cat, parsed);
    assert_eq!(
        pass,
        parsed,
        "3.5.1 rules fail: {:?}",
        r.examples.keys().collect::<Vec<_>>()
    );
    // The reachable CK's rules fail only where 3.5.1's CK is newer (CkVersion::Miopen351 docs).
    for ((solver, op), c) in &r.by_op {
        for why in c.fail_reachable.keys() {
            let explained = match why {
                Reject::BwdDataKTile => *op == DeviceOp::BwdDataV1,
                Reject::Pipeline => *op == DeviceOp::FwdXdlV3,
                _ => false,
            };
            assert!(explained, "{solver} {op}: {why}");
        }
    }
    // All eight device ops occur.
    for op in DeviceOp::ALL {
        assert!(r.by_op.keys().any(|(_, o)| *o == op), "{op}");
    }
}

#[test]
fn catalogue_order_and_reachable_lists() {
    let Some(dir) = data_dir() else { return };
    let index = load_index(&dir, &read_text).unwrap();
    // The 2-D FP16 fwd catalogue starts with the 284 TSV instances in factory order (the
    // README's count), then the tuned-only ones sorted by type string.
    let cat = index.catalogue(CkSolver::Fwd2d, CkType::F16).unwrap();
    let tsv: Vec<usize> = cat.entries.iter().map_while(|e| e.tsv_index).collect();
    assert_eq!(tsv, (0..284).collect::<Vec<_>>());
    let rest: Vec<&str> = cat.entries[284..]
        .iter()
        .map(|e| e.instance.type_string.as_str())
        .collect();
    assert!(!rest.is_empty());
    assert!(rest.windows(2).all(|w| w[0] < w[1]));
    assert!(cat.entries[284..]
        .iter()
        .all(|e| e.tuned_rows > 0 && e.tsv_index.is_none()));
    // Every list parses (its loader checks what each type string prints against all_params,
    // the A vector reading along G exactly for the merged-groups instances), and each instance
    // is its type string's, but for the bwd-data CDE store vector, which only the list gives.
    use tuneinfer::problem::Precision;
    use tuneinfer::solvers::ck::catalogue::Catalogue;
    for (name, dir_, prec) in [
        ("fwd_f32.tsv", Direction::Forward, Precision::Fp32),
        ("fwd_f16.tsv", Direction::Forward, Precision::Fp16),
        ("bwd_f32.tsv", Direction::BackwardData, Precision::Fp32),
        ("bwd_f16.tsv", Direction::BackwardData, Precision::Fp16),
        ("wrw_f32.tsv", Direction::BackwardWeights, Precision::Fp32),
        ("wrw_f16.tsv", Direction::BackwardWeights, Precision::Fp16),
    ] {
        let tsv = Catalogue::load(&dir.join("ck").join(name), dir_, prec).unwrap();
        for i in &tsv.instances {
            let mut inst = parse_type_string(&i.type_string).unwrap();
            assert_eq!(inst.printed.e_vec.is_none(), inst.op == DeviceOp::BwdDataV1, "{name}");
            if inst.op == DeviceOp::BwdDataV1 {
                inst.printed.e_vec = i.printed.e_vec;
            }
            assert_eq!(&inst, i, "{name}");
        }
    }
    // Built twice, the same catalogues in the same order.
    let again = CkIndex::build(&dir, &read_text).unwrap();
    assert_eq!(again.catalogues, index.catalogues);
    // Each problem's supported ids are a strict subset of the catalogue for some rows: the rules
    // narrow (a C = 3 problem keeps no instance whose A vector is 2 or more).
    let p = problem(&fwd_key(3, 224, 7, 64, 32, 3, 2, 1));
    let kept: Vec<_> = cat.supported(&p, "gfx942").collect();
    assert!(!kept.is_empty() && kept.len() < cat.entries.len());
    assert!(kept
        .iter()
        .all(|(e, _)| e.instance.printed.a_vec == 1 || e.instance.printed.groups_to_merge > 1));
}

#[test]
fn int8_keys_and_3d_depth() {
    // INT8 has no tuneinfer Precision: its geometry reads through the FP16 form.
    let (p, t) = parse_db_key("2x64x56x56x1x3x3x1x64x32x1x1x0x1x1x0x1x1x0x0x1xNCHWxINT8xF").unwrap();
    assert_eq!(t, CkType::I8);
    assert_eq!((p.c, p.k, p.out_h), (64, 64, 56));
    assert!(parse_db_key("2x64x56x56x1x3x3x1x64x32x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP64xF").is_err());
    let p3 = problem("3x64x14x14x4x1x1x3x64x8x0x0x1x1x1x1x1x1x1x0x1xNDHWCxFP16xF");
    assert_eq!((p3.spatial_dims, p3.input[0], p3.filter[0], p3.pad[0]), (3, 4, 3, 1));
    let _ = ConvProblem::from_db_key("3x64x14x14x4x1x1x3x64x8x0x0x1x1x1x1x1x1x1x0x1xNDHWCxFP16xF").unwrap();
}
