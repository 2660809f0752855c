//! The models in `weights/` for every tunable solver: over ~2,000 real perf-db problems per
//! (solver, arch) (all of a smaller database's), every answer of MIOpen's greedy walk and of the
//! default decoding's first four is a valid config of that solver (its own rules) or, where the
//! model finds none, exactly MIOpen's static default; and the GPU (lavapipe in CI) gives the
//! CPU's configs on a few hundred of them for the newest model of each solver (every model with
//! `TUNEINFER_ALL_MODELS=1`).

#[allow(unused_imports)]
use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tuneinfer::data::dataset::read_rows;
use tuneinfer::gpu::GpuPredictor;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::{self, Target, Tunable};
use tuneinfer::{DecodeMode, Predictor};

/// (solver, arch, perf database) of every shipped model of a new solver or arch.
const SHIPPED: &[(&str, &str, &str)] = &[
    ("ConvAsm1x1U", "gfx906_64", "history/gfx906_64.2019.cd.pdb.txt"),
    // The README's first command's model and gfx900's (one network each since issue 34; gfx900's
    // with gfx906's rows and the GPU as an input).
    ("ConvAsm1x1U", "gfx906", "gfx906_60.db"),
    ("ConvAsm1x1U", "gfx900", "gfx900_56.db"),
    ("ConvAsmBwdWrW1x1", "gfx906", "gfx906_60.db"),
    ("ConvAsmBwdWrW1x1", "gfx900", "gfx900_56.db"),
    ("ConvAsmBwdWrW3x3", "gfx906", "gfx906_60.db"),
    ("ConvAsmBwdWrW3x3", "gfx900", "gfx900_56.db"),
    ("ConvOclDirectFwd", "gfx906", "gfx906_60.db"),
    ("ConvOclDirectFwd", "gfx900", "gfx900_56.db"),
    ("ConvOclDirectFwd", "gfx1030", "gfx1030_36.db"),
    ("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", "gfx942", "gfx942130.db"),
    ("ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", "gfx942", "gfx942130.db"),
    ("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", "gfx942", "gfx942130.db"),
    // MIOpen 3.5.1's data-centre databases (issue 24).
    (
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
        "gfx90a68",
        "gfx90a68.db.txt.bz2",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
        "gfx942130",
        "gfx942130.db.txt.bz2",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    ("ConvAsm1x1U", "gfx90878", "gfx90878.db.txt.bz2"),
    (
        "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
        "gfx942130",
        "gfx942130.db.txt.bz2",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
        "gfx942130",
        "gfx942130.db.txt.bz2",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
        "gfx90a68",
        "gfx90a68.db.txt.bz2",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
        "gfx90a68",
        "gfx90a68.db.txt.bz2",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    ("ConvAsmBwdWrW1x1", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvOclDirectFwd", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvBinWinogradRxSf3x2", "gfx942130", "gfx942130.db.txt.bz2"),
    // MIOpen 3.5.1's CK grouped solvers on MI300X (issue 35 item 3): the 2-D ones (their
    // neighbour records stay, beside MIOpen's KTN on the other gfx942 GPUs), the 3-D ones (they
    // replaced the cells' records).
    ("ConvHipImplicitGemmGroupFwdXdlops", "gfx942130", "gfx942130.db.txt.bz2"),
    ("ConvHipImplicitGemmGroupBwdXdlops", "gfx942130", "gfx942130.db.txt.bz2"),
    ("ConvHipImplicitGemmGroupWrwXdlops", "gfx942130", "gfx942130.db.txt.bz2"),
    (
        "ConvHipImplicitGemm3DGroupFwdXdlops",
        "gfx942130",
        "gfx942130.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemm3DGroupBwdXdlops",
        "gfx942130",
        "gfx942130.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemm3DGroupWrwXdlops",
        "gfx942130",
        "gfx942130.db.txt.bz2",
    ),
    ("ConvAsmBwdWrW3x3", "gfx90878", "gfx90878.db.txt.bz2"),
    (
        "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    ("ConvBinWinogradRxSf2x3", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvBinWinogradRxSf3x2", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvAsm1x1U", "gfx90a68", "gfx90a68.db.txt.bz2"),
    ("ConvAsmBwdWrW1x1", "gfx90a68", "gfx90a68.db.txt.bz2"),
    ("ConvBinWinogradRxSf2x3", "gfx942130", "gfx942130.db.txt.bz2"),
    // Winograd RxS f3x2 on gfx1030 (issue 27).
    ("ConvBinWinogradRxSf3x2", "gfx1030", "gfx1030_36.db"),
    // One network with other GPUs' rows (the GPU an input) in place of a 5-member ensemble (issue 34).
    ("ConvBinWinogradRxSf3x2", "gfx906", "gfx906_60.db"),
    ("ConvBinWinogradRxSf2x3", "gfx906", "gfx906_60.db"),
    // The non-xdlops HIP implicit GEMM solvers (issue 27) where a model beats the neighbour.
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx900", "gfx900_56.db"),
    ("ConvHipImplicitGemmV4R4Fwd", "gfx900", "gfx900_56.db"),
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx906", "gfx906_60.db"),
    ("ConvHipImplicitGemmV4R1Fwd", "gfx906", "gfx906_60.db"),
    ("ConvHipImplicitGemmV4R1Fwd", "gfx1030", "gfx1030_36.db"),
    ("ConvHipImplicitGemmV4R1WrW", "gfx1030", "gfx1030_36.db"),
    // MI100's V4R1WrW, V4R1Fwd, V4R4WrW (issue 36: they replaced the cells' nearest-neighbour records).
    ("ConvHipImplicitGemmV4R1WrW", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvHipImplicitGemmV4R1Fwd", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvHipImplicitGemmV4R4WrW", "gfx90878", "gfx90878.db.txt.bz2"),
    // MI100's V4R4Fwd and BwdDataV1R1 networks (issue 45), trained on 2-D rows only (the
    // cells' records beside them answer 3-D problems).
    ("ConvHipImplicitGemmV4R4Fwd", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvHipImplicitGemmBwdDataV1R1", "gfx90878", "gfx90878.db.txt.bz2"),
    // The HIP xdlops implicit GEMM solvers (issue 45): MI100's six beat the neighbour + 5 and
    // MIOpen's default; MI210's three forward ones beat the default on FP16. Last of them (the
    // one CI runs on lavapipe): MI100's WrW Padded_Gemm, trained with MI210's rows too (the GPU an
    // input).
    ("ConvHipImplicitGemmWrwV4R4Xdlops", "gfx90878", "gfx90878.db.txt.bz2"),
    (
        "ConvHipImplicitGemmForwardV4R4Xdlops",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemmForwardV4R5Xdlops",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemmBwdDataV4R1Xdlops",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemmForwardV4R4Xdlops",
        "gfx90a68",
        "gfx90a68.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm",
        "gfx90a68",
        "gfx90a68.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemmForwardV4R5Xdlops",
        "gfx90a68",
        "gfx90a68.db.txt.bz2",
    ),
    (
        "ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm",
        "gfx90878",
        "gfx90878.db.txt.bz2",
    ),
    ("ConvOclDirectFwd1x1", "gfx900", "gfx900_56.db"),
    ("ConvOclDirectFwd1x1", "gfx906", "gfx906_60.db"),
    // MLIR implicit GEMM (issue 25): gfx906 from the sqlite database, the xdlops three from
    // the data-centre ones.
    ("ConvMlirIgemmFwd", "gfx906", "gfx906_60.db"),
    ("ConvMlirIgemmBwd", "gfx906", "gfx906_60.db"),
    ("ConvMlirIgemmWrW", "gfx906", "gfx906_60.db"),
    ("ConvMlirIgemmFwdXdlops", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvMlirIgemmBwdXdlops", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvMlirIgemmWrWXdlops", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvMlirIgemmFwdXdlops", "gfx90a68", "gfx90a68.db.txt.bz2"),
    ("ConvMlirIgemmBwdXdlops", "gfx90a68", "gfx90a68.db.txt.bz2"),
    ("ConvMlirIgemmWrWXdlops", "gfx90a68", "gfx90a68.db.txt.bz2"),
    // ConvAsm3x3U where a model beats the neighbour and the default (gfx906 and gfx900 lose to
    // the neighbour; gfx90a68's ties the default, so userdb would write nothing).
    ("ConvAsm3x3U", "gfx90878", "gfx90878.db.txt.bz2"),
    // ConvOclBwdWrW2<N> where a model beats the neighbour (MI100; gfx906's N = 2, 4, 8 on two
    // splits; gfx900 and gfx1030 lose to it).
    ("ConvOclBwdWrW2<2>", "gfx906", "history/gfx906_60.2019.cd.pdb.txt"),
    ("ConvOclBwdWrW2<4>", "gfx906", "history/gfx906_60.2019.cd.pdb.txt"),
    ("ConvOclBwdWrW2<8>", "gfx906", "history/gfx906_60.2019.cd.pdb.txt"),
    ("ConvOclBwdWrW2<1>", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvOclBwdWrW2<2>", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvOclBwdWrW2<4>", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvOclBwdWrW2<8>", "gfx90878", "gfx90878.db.txt.bz2"),
    ("ConvOclBwdWrW2<16>", "gfx90878", "gfx90878.db.txt.bz2"),
    // MI210: N = 2..16 beat the neighbour and the default (N = 1 does not beat the default).
    ("ConvOclBwdWrW2<2>", "gfx90a68", "gfx90a68.db.txt.bz2"),
    ("ConvOclBwdWrW2<4>", "gfx90a68", "gfx90a68.db.txt.bz2"),
    ("ConvOclBwdWrW2<8>", "gfx90a68", "gfx90a68.db.txt.bz2"),
    ("ConvOclBwdWrW2<16>", "gfx90a68", "gfx90a68.db.txt.bz2"),
    // Trained across GPUs with the GPU as an input (`train --other-gpu-perf-db`, issue 27):
    // gfx1030's few rows beside gfx900's, gfx906's, MI100's and MI210's. Last, so that CI's
    // lavapipe run checks a 19-step model (the newest of each family). gfx1030 holds 149-335
    // rows of these, so the problems are another GPU's (those the solver applies to on gfx1030).
    ("ConvHipImplicitGemmV4R4Fwd", "gfx1030", "gfx906_60.db"),
    ("ConvHipImplicitGemmV4R4WrW", "gfx900", "gfx900_56.db"),
    ("ConvBinWinogradRxSf2x3", "gfx1030", "gfx906_60.db"),
    ("ConvOclBwdWrW2<4>", "gfx900", "gfx900_56.db"),
    ("ConvOclBwdWrW2<1>", "gfx1030", "gfx900_56.db"),
    // One model across the data-centre GPUs (issue 34, item 3): MI300X's GTC Wrw model, trained
    // with MI100's and MI210's rows, serves them too; MI250X's GCD (110 CUs) through MI210's
    // figures, reading its own CU count. Winograd f2x3's pooled model serves MI300X alone.
    (
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
        "gfx90a6e",
        "gfx90a68.db.txt.bz2",
    ),
];

/// The models `gpu_gives_the_cpu_configs` runs on lavapipe: the newest of each solver family
/// (the last in [`SHIPPED`]; the GPU code a model runs is its solver's, the weights and
/// vocabulary differ), or every one with `TUNEINFER_ALL_MODELS=1` (about a minute of lavapipe per model;
/// `tools/gpu_vs_cpu.sh` compares every model on whole databases).
fn gpu_checked() -> Vec<&'static (&'static str, &'static str, &'static str)> {
    if let Some(only) = only_models() {
        return only;
    }
    if std::env::var_os("TUNEINFER_ALL_MODELS").is_some_and(|v| v == "1") {
        return SHIPPED.iter().collect();
    }
    // One GPU code per family: ConvOclBwdWrW2<1>..<16> differ only in applicability.
    // The CK grouped solvers (2-D and 3-D) share one GPU search (the catalogue table) and one
    // model shape.
    let family = |solver: &str| {
        if solver.starts_with("ConvHipImplicitGemm") && solver.contains("Group") && solver.ends_with("Xdlops") {
            return "CK grouped".to_string();
        }
        // The six HIP xdlops solvers share one GPU search (their table of valid configs) and
        // one model shape (the V4R4 features).
        if solver.starts_with("ConvHipImplicitGemm") && solver.contains("Xdlops") {
            return "HIP xdlops".to_string();
        }
        solver.split('<').next().unwrap_or(solver).to_string()
    };
    let mut out: Vec<&(&str, &str, &str)> = Vec::new();
    for entry in SHIPPED.iter().rev() {
        if !out.iter().any(|e| family(e.0) == family(entry.0)) {
            out.push(entry);
        }
    }
    out
}

/// `TUNEINFER_SHIPPED=arch:solver,...` (e.g. `gfx90a68:ConvOclDirectFwd`): only those models,
/// for both tests (`tools/shipped_check.sh` checks newly trained models this way).
fn only_models() -> Option<Vec<&'static (&'static str, &'static str, &'static str)>> {
    let list = std::env::var("TUNEINFER_SHIPPED").ok().filter(|v| !v.is_empty())?;
    let wanted: Vec<&str> = list.split(',').collect();
    let chosen: Vec<_> = SHIPPED
        .iter()
        .filter(|(solver, arch, _)| wanted.contains(&format!("{arch}:{solver}").as_str()))
        .collect();
    assert_eq!(
        chosen.len(),
        wanted.len(),
        "TUNEINFER_SHIPPED={list}: not every model is in SHIPPED"
    );
    Some(chosen)
}

/// Problems per model for the validity property (on the CPU: greedy and the default decoding's
/// first four answers) and for GPU == CPU (lavapipe: greedy and beam 4).
const VALIDITY_PROBLEMS: usize = 2_000;
const GPU_PROBLEMS: usize = 200;

/// (solver, arch, database) -> the problems.
type ProblemCache = Mutex<HashMap<(String, String, String), Arc<Vec<ConvProblem>>>>;

/// The problems of the solver's rows in `db` that it applies to on `arch`, read once per test
/// binary (both tests use them; a data-centre database takes seconds to decompress and parse).
fn applicable(solver: &dyn Tunable, arch: &str, db: &str) -> Arc<Vec<ConvProblem>> {
    static CACHE: OnceLock<ProblemCache> = OnceLock::new();
    let key = (solver.solver_name().to_string(), arch.to_string(), db.to_string());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap().get(&key) {
        return hit.clone();
    }
    let target = Target::new(arch);
    let rows = read_rows(&common::perfdb_dir().join(db), solver.solver_name()).unwrap_or_else(|e| panic!("{e}"));
    let found: Arc<Vec<ConvProblem>> = Arc::new(
        rows.rows
            .into_iter()
            .map(|r| r.problem)
            .filter(|p| solver.applicable(&target, p).is_ok())
            .collect(),
    );
    cache.lock().unwrap().insert(key, found.clone());
    found
}

/// ConvAsm3x3U's hard problems: the narrowest width with odd out channels, grouped B with H 1
/// and the W-130 VGPR boundary, W 1000 with odd out channels. (Kept apart from the shared list:
/// other solvers' shipped models apply to them too and were not checked on them.)
const ASM3X3U_HARD: [&str; 3] = [
    "4-5-4-3x3-3-5-4-1-1x1-1x1-1x1-0-NCHW-FP32-F",
    "8-1-130-3x3-6-1-130-1-1x1-1x1-1x1-0-NCHW-FP32-B_g2",
    "12-7-1000-3x3-7-7-1000-1-1x1-1x1-1x1-0-NCHW-FP32-F",
];

/// ConvOclBwdWrW2's hard problems: batch exactly N (16), dy width 6 (read_size's only value),
/// an LDS-bound 224-wide FP32 problem, grouped with 2 channels per group (tiles 1, per_tile <= 2),
/// the issue-1693 exception (5x10 stride 2, x 79x341), filter height 11 (rows 11 only), and a
/// 7x7 stride-2 stem with batch 1 (N = 1 only).
const WRW2_HARD: [&str; 7] = [
    "7-6-6-5x5-3-6-6-16-2x2-1x1-1x1-0-NCHW-FP16-W",
    "64-224-224-5x5-32-224-224-16-2x2-1x1-1x1-0-NCHW-FP32-W",
    "32-28-28-5x5-32-28-28-16-2x2-1x1-1x1-0-NCHW-FP32-W_g16",
    "32-38-166-5x10-32-79-341-16-0x0-2x2-1x1-0-NCHW-FP32-W",
    "5-20-20-11x11-3-30-30-16-0x0-1x1-1x1-0-NCHW-BF16-W",
    "64-112-112-7x7-3-224-224-1-3x3-2x2-1x1-0-NCHW-FP32-W",
    "3-13-9-5x3-17-13-9-16-2x1-1x1-1x1-0-NCHW-FP32-W",
];

/// About `want` of the solver's applicable problems in `db`, spread evenly, plus hand-made hard
/// ones (tiny and odd channel counts, N = 1).
fn problems(solver: &dyn Tunable, arch: &str, db: &str, want: usize, hard: bool) -> Vec<ConvProblem> {
    let target = Target::new(arch);
    let all = applicable(solver, arch, db);
    let every = (all.len() / want.max(1)).max(1);
    let mut out: Vec<ConvProblem> = all.iter().step_by(every).cloned().collect();
    let hard_keys: &[&str] = if hard {
        &[
            "1-1-1-1x1-1-1-1-1-0x0-1x1-1x1-0-NCHW-FP32-W",
            "4-2-2-1x1-4-2-2-1-0x0-1x1-1x1-0-NCHW-FP32-F",
            "512-32-32-1x1-6-32-32-4-0x0-1x1-1x1-0-NCHW-FP32-F",
            "3-32-32-1x1-3-32-32-1-0x0-1x1-1x1-0-NCHW-FP32-F",
            "3-7-7-1x1-5-7-7-1-0x0-1x1-1x1-0-NCHW-FP16-W",
            "17-13-13-1x1-3-13-13-1-0x0-1x1-1x1-0-NCHW-FP32-W",
            "64-14-14-1x1-33-28-28-1-0x0-2x2-1x1-0-NCHW-FP16-W",
            "2048-7-7-1x1-1023-7-7-255-0x0-1x1-1x1-0-NCHW-FP16-W",
            "4-1-1-3x3-4-1-1-1-1x1-1x1-1x1-0-NCHW-FP32-W",
            "8-7-7-3x3-3-7-7-2-1x1-1x1-1x1-0-NCHW-FP16-W",
            "16-13-13-3x3-20-13-13-1-1x1-1x1-1x1-0-NCHW-FP32-W",
            "64-511-9-3x3-4-511-9-3-1x1-1x1-1x1-0-NCHW-FP32-W",
            "3-7-7-3x3-5-7-7-1-1x1-1x1-1x1-0-NCHW-FP32-F",
            "1-5-5-5x5-1-5-5-1-2x2-1x1-1x1-0-NCHW-FP16-B",
            "17-9-9-3x3-3-9-9-1-1x1-1x1-1x1-0-NCHW-FP16-F",
            // NHWC, N = 1, odd and tiny channel counts, odd sizes, strides (GTC NHWC solvers).
            "1-1-1-1x1-1-1-1-1-0x0-1x1-1x1-0-NHWC-FP16-F",
            "3-17-17-5x5-9-7-7-1-0x0-2x2-1x1-0-NCHW-FP32-F",
            "5-9-9-3x3-7-9-9-1-1x1-1x1-1x1-0-NCHW-FP16-B",
            "7-5-5-3x3-3-11-11-1-0x0-2x2-1x1-0-NCHW-FP16-W",
            "1-1-1-1x1-1-1-1-1-0x0-1x1-1x1-0-NHWC-FP32-B",
            "2-3-3-3x3-1-3-3-1-1x1-1x1-1x1-0-NHWC-FP32-W",
            // 3-D (the 3-D CK solvers): N = 1 and odd channels, all ones, grouped with depth
            // stride 2, odd sizes NCDHW (MIOpen's 3-D key form).
            "3x3x17x17x5x3x3x3x7x1x1x1x1x1x1x1x1x1x1x0x1xNDHWCxFP32xF",
            "3x1x1x1x1x1x1x1x1x1x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP16xB",
            "3x32x9x9x4x3x3x3x32x2x1x1x1x2x2x2x1x1x1x0x8xNDHWCxBF16xW",
            "3x5x33x31x7x3x3x3x9x3x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP16xW",
        ]
    } else {
        &[]
    };
    let own: &[&str] = match solver.solver_name() {
        "ConvAsm3x3U" if hard => &ASM3X3U_HARD,
        name if hard && name.starts_with("ConvOclBwdWrW2<") => &WRW2_HARD,
        _ => &[],
    };
    for key in hard_keys.iter().chain(own) {
        let p = ConvProblem::from_perfdb_key(key)
            .or_else(|_| ConvProblem::from_db_key(key))
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        if solver.applicable(&target, &p).is_ok() {
            out.push(p);
        }
    }
    out
}

#[test]
fn every_answer_of_every_decoding_is_valid() {
    let models = only_models().unwrap_or_else(|| SHIPPED.iter().collect());
    for &&(name, arch, db) in &models {
        let solver = solvers::by_name(name).unwrap();
        let tunable = solvers::tunable(solver).unwrap();
        let target = Target::new(arch);
        let pred = Predictor::load(arch, name, &[common::weights_dir()]).unwrap_or_else(|e| panic!("{e}"));
        // Thousands per model (all of the smaller databases' rows), spread over the database.
        let problems = problems(tunable, arch, db, VALIDITY_PROBLEMS, true);
        // At least 400 (gfx906's ConvOclBwdWrW2<8> database holds 492).
        assert!(problems.len() >= 400, "{name} {arch}: only {} problems", problems.len());
        // MIOpen's greedy walk, and the default decoding (the beam `predict` and `userdb` use)
        // with its first four answers.
        let beam = match pred.default_mode() {
            DecodeMode::Beam { width, .. } => DecodeMode::Beam { width, top: 4 },
            other => other,
        };
        let modes = [DecodeMode::Miopen, beam];
        for mode in modes {
            let started = std::time::Instant::now();
            let answers = pred.predict_batch(&problems, mode);
            let mut from_model = 0;
            for (p, a) in problems.iter().zip(&answers) {
                let a = a.as_ref().unwrap_or_else(|e| panic!("{name} {arch} {p}: {e}"));
                assert!(!a.is_empty(), "{name} {arch} {p}: no answer");
                for x in a {
                    if x.source == tuneinfer::Source::Default {
                        // MIOpen's fallback is its static default, exactly (for the GTC solvers
                        // often outside the tuner's space: their own tests check it passes
                        // MIOpen's IsValid).
                        let d = tunable.format_params(&tunable.static_default(&target, p));
                        assert_eq!(
                            x.config, d,
                            "{name} {arch} {mode:?} {p}: the fallback is not the static default"
                        );
                        continue;
                    }
                    let c = tunable.parse_params(&x.config).unwrap_or_else(|e| panic!("{e}"));
                    assert!(
                        tunable.rules(&target, p).is_valid(&c),
                        "{name} {arch} {mode:?} {p}: {} is not valid",
                        x.config
                    );
                }
                from_model += usize::from(a[0].source == tuneinfer::Source::Model);
            }
            println!(
                "{name} {arch} {mode:?}: {} problems, {from_model} answered by the model (the rest: the default), all valid ({:.1} s)",
                problems.len(),
                started.elapsed().as_secs_f64()
            );
            // MIOpen's walk falls back to the default where "-1" ranks first; the beam rarely.
            // Problems the network refuses (3-D ones beside the 2-D V4R4 networks) are the
            // cell record's, not the model's.
            let for_network = problems
                .iter()
                .filter(|p| solver.check_network(&target, p).is_ok())
                .count();
            assert!(
                from_model * 100 >= for_network * 95,
                "{name} {arch} {mode:?}: the model answered only {from_model} of {for_network}"
            );
        }
    }
}

#[test]
fn gpu_gives_the_cpu_configs() {
    let Some(ctx) = common::gpu() else { return };
    for &(name, arch, db) in gpu_checked() {
        let tunable = solvers::tunable(solvers::by_name(name).unwrap()).unwrap();
        let dirs = vec![common::weights_dir()];
        let cpu = Predictor::load(arch, name, &dirs).unwrap_or_else(|e| panic!("{e}"));
        let gpu = GpuPredictor::load(arch, name, &dirs, ctx.clone()).unwrap_or_else(|e| panic!("{e}"));
        // A few hundred per model, spread over the database.
        let problems = problems(tunable, arch, db, GPU_PROBLEMS, true);
        assert!(problems.len() >= 200, "{name} {arch}: only {} problems", problems.len());
        for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
            let started = std::time::Instant::now();
            let want = cpu.predict_batch(&problems, mode);
            let got = gpu.predict_batch(&problems, mode);
            let (same, worst) =
                common::assert_same_predictions(&format!("{name} {arch} {mode:?}"), &problems, &want, &got);
            println!(
                "{name} {arch} {mode:?}: {same} of {} identical; worst score difference {worst:e} ({:.1} s)",
                problems.len(),
                started.elapsed().as_secs_f64()
            );
            assert_eq!(same, problems.len());
            assert!(worst <= 1e-4, "{name} {arch} {mode:?}: score difference {worst}");
        }
    }
}
