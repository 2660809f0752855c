//! MIOpen 3.5.1's six CK grouped solvers and CK's `IsSupportedArgument` of every device
//! operation they tune, on a problem as MIOpen hands it to CK.
//!
//! Sources (read, transcribed as rules, never copied):
//! * MIOpen 3.5.1 (`stulebaevLuxoft/MIOpen` c84b5d0), `src/solver/conv/conv_hip_implicit_gemm_{,3d_}grouped_{fwd,bwd,wrw}_xdlops.cpp`:
//!   `IsApplicable` (2-D: `grouped_fwd:505`, `grouped_bwd:573`, `grouped_wrw:608`; 3-D: `3d_grouped_fwd:571`,
//!   `3d_grouped_bwd:508`, `3d_grouped_wrw:529`): the direction, `Is2d`/`Is3d`, layout NHWC or the default
//!   NCHW (transposed around the NHWGC kernel, `grouped_fwd:559` `InitInvokerFactoryFwdNCHW`), data types
//!   FP16, FP32, INT8, BF16 (wrw BF16 only on gfx942 and gfx95x, `grouped_wrw:637`). `CKArgs`
//!   (`grouped_fwd:73`): C and K per group (`C = C1 / G`), NHWGC strides. The wrw solvers set CK's
//!   workspace pointer whenever CK asks for one (`grouped_wrw:169-171`, `IsSupportedBy`, and
//!   `:179-181`, `IsSupportedBySplitK`).
//! * CK `develop` bcf7f811 (2025-02-18, the newest reachable; `coconutruben/composable_kernel`),
//!   `include/ck/tensor_operation/gpu/device/impl/`, each operation's `IsSupportedArgument` (cited per rule).
//! * `DeviceGroupedConvBwdWeight_Explicit_Xdl` is newer than that CK: its `IsSupportedArgument` was
//!   read in a later single file of CK (`device_grouped_conv_bwd_weight_explicit_xdl.hpp`, found by
//!   the search index), with the batched GEMM's check from `gridwise_gemm_xdl_cshuffle_v3.hpp:1011`
//!   (`CheckValidity`) at bcf7f811.
//!
//! Not modelled (each named in `docs/ck.md`): the 2 GB descriptor limits and CK's N split
//! (`AreDescriptorsSmallerThan2GB`), the large-tensor op's runtime split validity, template
//! arguments the type string does not print (the bwd-data CDE store vector outside the 2024 lists,
//! the wrw `Xdl_CShuffleV3` pipeline version, the explicit GEMM's C store vector and `AK1`/`BK1`,
//! which its `MNKPadding` split-k check reads), and the bwd-data split-k (`k_batch`), which the
//! reachable CK does not have.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision};

use super::instance::{CkInstance, ConvSpec, DeviceOp, GemmSpec};

/// MIOpen 3.5.1's CK grouped-convolution solvers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CkSolver {
    Fwd2d,
    Bwd2d,
    Wrw2d,
    Fwd3d,
    Bwd3d,
    Wrw3d,
}

impl CkSolver {
    pub const ALL: [CkSolver; 6] = [
        CkSolver::Fwd2d,
        CkSolver::Bwd2d,
        CkSolver::Wrw2d,
        CkSolver::Fwd3d,
        CkSolver::Bwd3d,
        CkSolver::Wrw3d,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CkSolver::Fwd2d => "ConvHipImplicitGemmGroupFwdXdlops",
            CkSolver::Bwd2d => "ConvHipImplicitGemmGroupBwdXdlops",
            CkSolver::Wrw2d => "ConvHipImplicitGemmGroupWrwXdlops",
            CkSolver::Fwd3d => "ConvHipImplicitGemm3DGroupFwdXdlops",
            CkSolver::Bwd3d => "ConvHipImplicitGemm3DGroupBwdXdlops",
            CkSolver::Wrw3d => "ConvHipImplicitGemm3DGroupWrwXdlops",
        }
    }

    pub fn from_name(name: &str) -> Option<CkSolver> {
        CkSolver::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn direction(self) -> Direction {
        match self {
            CkSolver::Fwd2d | CkSolver::Fwd3d => Direction::Forward,
            CkSolver::Bwd2d | CkSolver::Bwd3d => Direction::BackwardData,
            CkSolver::Wrw2d | CkSolver::Wrw3d => Direction::BackwardWeights,
        }
    }

    /// 2 or 3.
    pub fn spatial_dims(self) -> u8 {
        match self {
            CkSolver::Fwd2d | CkSolver::Bwd2d | CkSolver::Wrw2d => 2,
            _ => 3,
        }
    }

    /// Whether MIOpen 3.5.1's kernel id carries `+split_k` (2-D bwd, 2-D wrw, 3-D wrw; e.g.
    /// `grouped_bwd:226`, `grouped_wrw:226`, `3d_grouped_wrw:330`).
    pub fn has_split_k(self) -> bool {
        matches!(self, CkSolver::Bwd2d | CkSolver::Wrw2d | CkSolver::Wrw3d)
    }

    /// Whether `op` computes this solver's direction.
    pub fn tunes(self, op: DeviceOp) -> bool {
        op.direction() == self.direction()
    }
}

impl std::fmt::Display for CkSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The data types MIOpen 3.5.1 runs these solvers for (tuneinfer's [`Precision`] plus INT8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CkType {
    F32,
    F16,
    Bf16,
    I8,
}

impl CkType {
    pub const ALL: [CkType; 4] = [CkType::F32, CkType::F16, CkType::Bf16, CkType::I8];

    pub fn bytes(self) -> u64 {
        match self {
            CkType::F32 => 4,
            CkType::F16 | CkType::Bf16 => 2,
            CkType::I8 => 1,
        }
    }

    /// MIOpen's key spelling.
    pub fn name(self) -> &'static str {
        match self {
            CkType::F32 => "FP32",
            CkType::F16 => "FP16",
            CkType::Bf16 => "BF16",
            CkType::I8 => "INT8",
        }
    }

    pub fn from_name(s: &str) -> Option<CkType> {
        CkType::ALL.into_iter().find(|t| t.name() == s)
    }
}

impl From<Precision> for CkType {
    fn from(p: Precision) -> CkType {
        match p {
            Precision::Fp32 => CkType::F32,
            Precision::Fp16 => CkType::F16,
            Precision::Bf16 => CkType::Bf16,
        }
    }
}

/// A problem as MIOpen's `CKArgs` hands it to CK: per-group channels, forward sizes whatever
/// the direction, depth 1 (and its stride 1, pad 0) for 2-D problems. Index 0 of the spatial
/// arrays is depth, 1 height, 2 width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CkProblem {
    pub spatial_dims: u8,
    pub direction: Direction,
    /// True for NCHW / NCDHW (MIOpen transposes around the NHWGC kernel).
    pub channels_first: bool,
    pub dtype: CkType,
    pub g: u64,
    pub n: u64,
    pub c: u64,
    pub k: u64,
    pub input: [u64; 3],
    pub output: [u64; 3],
    pub filter: [u64; 3],
    pub stride: [u64; 3],
    pub pad: [u64; 3],
}

impl CkProblem {
    /// The CK view of `problem` with data type `dtype` (INT8 has no [`Precision`]: see
    /// [`parse_db_key`]). Fails when the group count does not divide the channels.
    pub fn new(problem: &ConvProblem, dtype: CkType) -> Result<CkProblem> {
        let g = problem.groups;
        if g == 0 || !problem.c.is_multiple_of(g) || !problem.k.is_multiple_of(g) {
            return Err(Error::problem(
                problem.to_db_key(),
                format!(
                    "groups: {g} must divide both C={} and K={} (MIOpen CKArgs: C = C1 / G)",
                    problem.c, problem.k
                ),
            ));
        }
        let d = problem.depth.unwrap_or(crate::problem::Depth {
            in_d: 1,
            out_d: 1,
            filter_d: 1,
            pad_d: 0,
            stride_d: 1,
            dilation_d: 1,
        });
        Ok(CkProblem {
            spatial_dims: problem.spatial_dims(),
            direction: problem.direction,
            channels_first: problem.layout == Layout::Nchw,
            dtype,
            g,
            n: problem.n,
            c: problem.c / g,
            k: problem.k / g,
            input: [d.in_d, problem.in_h, problem.in_w],
            output: [d.out_d, problem.out_h, problem.out_w],
            filter: [d.filter_d, problem.filter_h, problem.filter_w],
            stride: [d.stride_d, problem.stride_h, problem.stride_w],
            pad: [d.pad_d, problem.pad_h, problem.pad_w],
        })
    }

    fn filter_1x1_pad0(&self) -> bool {
        self.filter.iter().all(|&f| f == 1) && self.pad.iter().all(|&p| p == 0)
    }

    fn filter_1x1_stride1_pad0(&self) -> bool {
        self.filter_1x1_pad0() && self.stride.iter().all(|&s| s == 1)
    }

    /// MIOpen's `CKWrwRequireWorkspace` (default alpha/beta): fp16 with an odd C or K per group.
    pub fn requires_workspace(&self) -> bool {
        self.dtype == CkType::F16 && (!self.c.is_multiple_of(2) || !self.k.is_multiple_of(2))
    }

    /// Output pixels of one image (`Do * Ho * Wo`).
    fn out_pixels(&self) -> u64 {
        self.output.iter().product()
    }
}

/// Parses a 24-field MIOpen 3.5.1 db key, INT8 included: tuneinfer's problem parser knows FP32,
/// FP16 and BF16, so an INT8 key's geometry is read through it with the type field as FP16 (the
/// type field is not used by the geometry), then the data type is set to INT8.
pub fn parse_db_key(key: &str) -> Result<(ConvProblem, CkType)> {
    let fields: Vec<&str> = key.split('x').collect();
    let ty = fields
        .len()
        .checked_sub(2)
        .and_then(|i| fields.get(i))
        .copied()
        .unwrap_or("");
    let dtype = CkType::from_name(ty).ok_or_else(|| {
        Error::problem(
            key,
            format!(
                "data type field '{}' is not FP32, FP16, BF16 or INT8",
                crate::error::quote_short(ty)
            ),
        )
    })?;
    let problem = if dtype == CkType::I8 {
        let n = fields.len();
        let mut as_fp16: Vec<&str> = fields;
        as_fp16[n - 2] = "FP16";
        ConvProblem::from_db_key(&as_fp16.join("x"))?
    } else {
        ConvProblem::from_db_key(key)?
    };
    Ok((problem, dtype))
}

/// Which MIOpen (with the composable_kernel it pins) the rules, the catalogue and the kernel
/// ids follow: one version, ordered oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CkVersion {
    /// MIOpen 3.3 and older: `ROCm/MIOpen` 2d1fd997a (late 2024) with the CK it pins
    /// (421588131): the 2024 instance lists (`../shared/miopen/ck`), MIOpen's KTN models.
    /// Against [`CkVersion::Develop2025`], the two-stage wrw op (`../shared/miopen/ck/README.md`
    /// Q3): merged groups need K*NGM <= MPerBlock and C*Y*X*NGM <= NPerBlock, the vector rule has
    /// no `X*C` path and lets C == K == 1 through without merged groups; and MIOpen sets CK's
    /// workspace for a split-k id only when `CKWrwRequireWorkspace`
    /// (`conv_hip_implicit_gemm_grouped_wrw_xdlops.cpp` `IsSupportedBySplitK`).
    Miopen2024,
    /// CK `develop` bcf7f811 (2025-02-18, the newest reachable) as read, rule for rule, under
    /// MIOpen 3.5.1's solvers: no MIOpen release runs it; the corpus report's comparison.
    Develop2025,
    /// MIOpen 3.5 and newer (3.5.1, `stulebaevLuxoft/MIOpen` c84b5d0) with the CK it pins
    /// (b7a806f2, not reachable): [`CkVersion::Develop2025`] less two rules that 3.5.1's own
    /// kernel ids and tuned rows show it changed:
    /// * pipeline v4's PrefetchStages is 3, not 4: 3.5.1's explicit-GEMM ids print
    ///   `BlkGemmPipelineVersion: v4, BlkGemmPipelinePrefetchStages: 3`, and 30 tuned fwd `_V3`
    ///   v4 rows run with exactly 4 K-loop iterations;
    /// * the bwd-data `Filter1x1Stride1Pad0` tile rule `ceil(K/AK1)*AK1 % KPerBlock == 0` is gone:
    ///   4,290 tuned rows (2-D and 3-D) break it (see `docs/ck.md`).
    Miopen351,
}

/// Why an instance does not support a problem: the rule that failed, named for the corpus table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reject {
    /// MIOpen's `IsApplicable`: direction, 2-D/3-D, layout or data type.
    Applicability(&'static str),
    /// The operation does not compute the solver's direction.
    WrongDirection,
    /// A kernel id's `+split_k` is present where the solver has none, missing where it has one,
    /// or not one of MIOpen's values (`NextCKSplitkValue<1, 128>`: powers of two 1..128).
    SplitK(&'static str),
    /// The convolution specialisation does not fit the filter, stride or pads.
    Spec(ConvSpec),
    /// `NumGroupsToMerge > 1` conditions.
    MergedGroups,
    /// A vector width does not divide the size it loads or stores along.
    Vector(&'static str),
    /// The blockwise GEMM pipeline needs more K-loop iterations than the problem has.
    Pipeline,
    /// The explicit GEMM's tile divisibility without padding (`GemmSpecialization::Default`).
    GemmTile(&'static str),
    /// The bwd-data 1x1 stride-1 GEMM's K tile: `ceil(K/AK1)*AK1 % KPerBlock` (K is not padded).
    BwdDataKTile,
    /// The two-stage op needs CK's workspace, which MIOpen 2024 sets for a split-k id only when
    /// `CKWrwRequireWorkspace` (fp16 with an odd C or K per group).
    Workspace,
}

impl std::fmt::Display for Reject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reject::Applicability(why) => write!(f, "MIOpen IsApplicable: {why}"),
            Reject::WrongDirection => f.write_str("device op of another direction"),
            Reject::SplitK(why) => write!(f, "split-k: {why}"),
            Reject::Spec(s) => write!(f, "specialisation {s:?} does not fit filter/stride/pad"),
            Reject::MergedGroups => f.write_str("NumGroupsToMerge > 1 needs C == 1 and G % NumGroupsToMerge == 0"),
            Reject::Vector(what) => write!(f, "vector width: {what}"),
            Reject::Pipeline => f.write_str("K-loop count <= the pipeline's PrefetchStages"),
            Reject::GemmTile(what) => write!(f, "explicit GEMM (Default, no padding): {what}"),
            Reject::BwdDataKTile => f.write_str("1x1 stride-1 bwd data: ceil(K/AK1)*AK1 % KPerBlock (K not padded)"),
            Reject::Workspace => f.write_str("no workspace (MIOpen 2024 sets one for a split-k id only when CK requires it)"),
        }
    }
}

/// MIOpen's split-k values (`NextCKSplitkValue<1, 128>`, `grouped_wrw:503`).
pub const SPLIT_K_VALUES: [u64; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// MIOpen 3.5.1's `IsApplicable` of `solver` (the parts that depend on the problem and arch;
/// `arch` is the GPU's name without features, e.g. `gfx942`).
pub fn applicable(solver: CkSolver, p: &CkProblem, arch: &str) -> std::result::Result<(), Reject> {
    if p.direction != solver.direction() {
        return Err(Reject::Applicability("the solver tunes another direction"));
    }
    if p.spatial_dims != solver.spatial_dims() {
        return Err(Reject::Applicability(if solver.spatial_dims() == 2 {
            "Is2d: the problem is 3-D"
        } else {
            "Is3d: the problem is 2-D"
        }));
    }
    // grouped_wrw:637 / 3d_grouped_wrw: BF16 only on gfx942 and gfx95x.
    if solver.direction() == Direction::BackwardWeights
        && p.dtype == CkType::Bf16
        && !(arch == "gfx942" || arch.starts_with("gfx95"))
    {
        return Err(Reject::Applicability("BF16 backward weights only on gfx942 and gfx95x"));
    }
    Ok(())
}

/// PrefetchStages of CK's blockwise GEMM pipelines, the same at 421588131 (2024) and bcf7f811
/// (`include/ck/tensor_operation/gpu/block/blockwise_gemm_pipeline_xdlops_v{1..5}.hpp`: v1 `:143` 1,
/// v2 `:145-150` the formula below with warpSize 64, v3 `:145` 2, v4 `:145` 4, v5 `:147` 3); v4 is
/// 3 in MIOpen 3.5.1's CK ([`CkVersion::Miopen351`]). The K-loop must exceed it for every
/// pipeline but v1, which no version checks (e.g. the fwd V3 op's `CheckValidity`,
/// `gridwise_gemm_xdl_cshuffle_v3.hpp`, "check gridwise gemm pipeline").
pub fn prefetch_stages(
    rules: CkVersion,
    version: u32,
    block_size: u64,
    m_per_block: u64,
    n_per_block: u64,
    k_per_block: u64,
    elem_bytes: u64,
) -> u64 {
    match version {
        2 => {
            let wgp_per_cu = (4 * 64 / block_size.max(1)).max(1);
            let per_k = m_per_block
                .saturating_add(n_per_block)
                .saturating_mul(elem_bytes)
                .saturating_mul(k_per_block)
                .max(1);
            (32768 / wgp_per_cu).div_ceil(per_k).clamp(2, 8)
        }
        3 => 2,
        4 if rules >= CkVersion::Miopen351 => 3,
        4 => 4,
        5 => 3,
        _ => 1,
    }
}

/// The specialisation check, common to every operation (e.g. fwd
/// `device_grouped_conv_fwd_multiple_abd_xdl_cshuffle.hpp:1106-1158`, bwd data
/// `..._bwd_data_multiple_d_xdl_cshuffle_v1.hpp:771-784`, wrw `..._bwd_weight_xdl_cshuffle.hpp:619-631`).
fn spec_ok(spec: ConvSpec, p: &CkProblem) -> std::result::Result<(), Reject> {
    let ok = match spec {
        ConvSpec::Filter1x1Stride1Pad0 => p.filter_1x1_stride1_pad0(),
        ConvSpec::Filter1x1Pad0 => p.filter_1x1_pad0(),
        // fwd `:1140-1158`: C == 1 and a 3x3 filter in every spatial dimension.
        ConvSpec::Filter3x3 => p.c == 1 && p.filter[3 - p.spatial_dims as usize..].iter().all(|&f| f == 3),
        ConvSpec::Default | ConvSpec::OddC => true,
    };
    if ok {
        Ok(())
    } else {
        Err(Reject::Spec(spec))
    }
}

fn divides(v: u64, n: u64, what: &'static str) -> std::result::Result<(), Reject> {
    if v > 0 && n.is_multiple_of(v) {
        Ok(())
    } else {
        Err(Reject::Vector(what))
    }
}

/// K-loop iterations of a GEMM of length `gemm_k` split `k_batch` ways in tiles of `k_per_block`.
fn k_loops(gemm_k: u64, k_batch: u64, k_per_block: u64) -> u64 {
    gemm_k.div_ceil(k_batch.max(1).saturating_mul(k_per_block).max(1))
}

/// CK's `IsSupportedArgument` of `inst` for `p` as MIOpen `rules` calls it, after its
/// `IsApplicable` ([`applicable`]): `split_k` None for the `valid_kernels` list (`IsSupportedBy`:
/// split-k 1, a workspace set), Some for a kernel id's `+split_k` (`IsSupportedBySplitK`).
pub fn supports(
    inst: &CkInstance,
    p: &CkProblem,
    split_k: Option<u64>,
    rules: CkVersion,
) -> std::result::Result<(), Reject> {
    let q = &inst.printed;
    let k_batch = split_k.unwrap_or(1);
    if inst.op.direction() != p.direction {
        return Err(Reject::WrongDirection);
    }
    spec_ok(q.spec, p)?;
    match inst.op {
        // `device_grouped_conv_fwd_multiple_abd_xdl_cshuffle.hpp:1084`, and the large-tensor op,
        // `..._fwd_multiple_d_xdl_large_tensor_cshuffle.hpp:640`: the same spec and vector rules
        // (`:730` A along C only, `:749` B, `:766` E) without merged groups; its runtime split
        // check (`:648`, `is_split_valid_`) is not modelled.
        DeviceOp::FwdXdl | DeviceOp::FwdLargeTensor => {
            let ngm = q.groups_to_merge;
            // `:1161-1176`.
            if ngm > 1 && !(p.c == 1 && p.g.is_multiple_of(ngm)) {
                return Err(Reject::MergedGroups);
            }
            // `:1178-1203`: A along C (ABlockTransferSrcVectorDim 2), else along G (dim 1, the
            // merged-groups instances: the CK lists give dim 1 exactly to those, e.g.
            // `device_grouped_conv_fwd_xdl_merged_groups_instance.hpp`).
            let a_dim_g = ngm > 1;
            if a_dim_g {
                divides(q.a_vec, p.g, "G % ABlockTransferSrcScalarPerVector (A along G)")?;
            } else {
                divides(q.a_vec, p.c, "C % ABlockTransferSrcScalarPerVector")?;
            }
            // `:1205-1222` B along C; `:1311` E (NHWGK) along K.
            divides(q.b_vec, p.c, "C % BBlockTransferSrcScalarPerVector")?;
            divides(
                q.e_vec.unwrap_or(1),
                p.k,
                "K % CDEBlockTransferScalarPerVector_NPerBlock",
            )?;
            Ok(())
        }
        // `device_grouped_conv_fwd_multiple_abd_xdl_cshuffle_v3.hpp:1087`.
        DeviceOp::FwdXdlV3 => {
            // `:1154`, `:1173`, `:1220`.
            divides(q.a_vec, p.c, "C % ABlockTransferSrcScalarPerVector")?;
            divides(q.b_vec, p.c, "C % BBlockTransferSrcScalarPerVector")?;
            divides(
                q.e_vec.unwrap_or(1),
                p.k,
                "K % CDEBlockTransferScalarPerVector_NPerBlock",
            )?;
            // `:1236-1245`: the GEMM's CheckValidity with KBatch 1; GemmK = C for the 1x1
            // specialisations, Z*Y*X*C otherwise (padded to KPerBlock).
            let gemm_k = match q.spec {
                ConvSpec::Filter1x1Pad0 | ConvSpec::Filter1x1Stride1Pad0 => p.c,
                _ => p.filter.iter().product::<u64>().saturating_mul(p.c),
            };
            let version = q.pipeline.unwrap_or(1);
            let stages = prefetch_stages(
                rules,
                version,
                q.block_size,
                q.m_per_block,
                q.n_per_block,
                q.k_per_block,
                p.dtype.bytes(),
            );
            if version != 1 && k_loops(gemm_k, 1, q.k_per_block) <= stages {
                return Err(Reject::Pipeline);
            }
            Ok(())
        }
        // `device_grouped_conv_bwd_data_multiple_d_xdl_cshuffle_v1.hpp:761`.
        DeviceOp::BwdDataV1 => {
            // `:792`: A (dy, NHWGK) along K; `:806`: B (w, GKYXC) along C.
            divides(q.a_vec, p.k, "K % ABlockTransferSrcScalarPerVector")?;
            divides(q.b_vec, p.c, "C % BBlockTransferSrcScalarPerVector")?;
            // `:847-854`: E (dx) stores along C; the vector is not printed (known for the
            // instances of the 2024 lists, see the catalogue).
            if let Some(e) = q.e_vec {
                divides(e, p.c, "C % CDEBlockTransferScalarPerVector_NPerBlock")?;
            }
            // The 1x1 stride-1 transform unmerges K into (ceil(K/AK1), AK1) without padding K
            // (`transform_conv_bwd_data_to_gemm_v1.hpp:616-632`), and the GEMM's CheckValidity
            // wants AK % KPerBlock == 0 (`gridwise_gemm_multiple_d_xdl_cshuffle.hpp:363`).
            if rules < CkVersion::Miopen351 && q.spec == ConvSpec::Filter1x1Stride1Pad0 {
                let ak1 = q.ak1.unwrap_or(1);
                if !(p.k.div_ceil(ak1) * ak1).is_multiple_of(q.k_per_block) {
                    return Err(Reject::BwdDataKTile);
                }
            }
            Ok(())
        }
        // `device_grouped_conv_bwd_weight_xdl_cshuffle.hpp:581`: `:633-639` A (dy) along K,
        // B (x) along C, `:642` C (dw) along C; the gridwise check passes (M, N, K padded).
        DeviceOp::WrwXdl => {
            divides(q.a_vec, p.k, "K % ABlockTransferSrcScalarPerVector")?;
            divides(q.b_vec, p.c, "C % BBlockTransferSrcScalarPerVector")?;
            divides(
                q.e_vec.unwrap_or(1),
                p.c,
                "C % CBlockTransferScalarPerVector_NWaveNPerXdl",
            )?;
            Ok(())
        }
        // `device_grouped_conv_bwd_weight_xdl_cshuffle_v3.hpp:1140`: `:1211-1216` vectors,
        // `:1219` C store. The pipeline check (`:1150-1156`) needs the unprinted version.
        DeviceOp::WrwXdlV3 => {
            divides(q.a_vec, p.k, "K % ABlockTransferSrcScalarPerVector")?;
            divides(q.b_vec, p.c, "C % BBlockTransferSrcScalarPerVector")?;
            divides(
                q.e_vec.unwrap_or(1),
                p.c,
                "C % CBlockTransferScalarPerVector_NWaveNPerXdl",
            )?;
            Ok(())
        }
        // `device_grouped_conv_bwd_weight_two_stage_xdl_cshuffle.hpp:1475`.
        DeviceOp::WrwTwoStage => {
            // `:1485-1491`: num_k_loop over GemmK = N*Do*Ho*Wo split k_batch ways.
            let version = q.pipeline.unwrap_or(1);
            let stages = prefetch_stages(
                rules,
                version,
                q.block_size,
                q.m_per_block,
                q.n_per_block,
                q.k_per_block,
                p.dtype.bytes(),
            );
            if version != 1 && k_loops(p.n.saturating_mul(p.out_pixels()), k_batch, q.k_per_block) <= stages {
                return Err(Reject::Pipeline);
            }
            // `:1496` workspace: MIOpen 3.5.1 always sets it (grouped_wrw:169-181), MIOpen 2024
            // for a split-k id only when CK requires it.
            if split_k.is_some() && rules == CkVersion::Miopen2024 && !p.requires_workspace() {
                return Err(Reject::Workspace);
            }
            // `:1546-1562` merged groups: the whole GEMM in one block, C == K == 1, G % NGM; at
            // 421588131 (2024) the GEMM's M and N are K and C*Y*X times NGM.
            let ngm = q.groups_to_merge;
            let newer = rules > CkVersion::Miopen2024;
            if ngm > 1 {
                let per_block = if newer { 1 } else { ngm };
                let gemm_m = p.k.saturating_mul(per_block);
                let gemm_n = p.c.saturating_mul(p.filter.iter().product::<u64>()).saturating_mul(per_block);
                if !(gemm_m <= q.m_per_block
                    && gemm_n <= q.n_per_block
                    && p.c == 1
                    && p.k == 1
                    && p.g.is_multiple_of(ngm))
                {
                    return Err(Reject::MergedGroups);
                }
            }
            // `:1564-1583`: B along C, or along X*C when G == 1 and the W pads are 0; A along K;
            // else C == K == 1 with merged groups (batch strides 1).
            // At 421588131 (2024): B along C only, and C == K == 1 with or without merged groups.
            let x = p.filter[2];
            let w_pad0 = p.pad[2] == 0;
            let xc_ok = newer && p.g == 1 && (p.c.saturating_mul(x)).is_multiple_of(q.b_vec) && w_pad0;
            let vec_ok = (p.c.is_multiple_of(q.b_vec) || xc_ok) && p.k.is_multiple_of(q.a_vec);
            if !(vec_ok || ((ngm > 1 || !newer) && p.c == 1 && p.k == 1)) {
                return Err(Reject::Vector(
                    "C (or X*C) % BSrcScalarPerVector, K % ASrcScalarPerVector",
                ));
            }
            // `:1586` vector dims 1 (these instances' compile-time choice), `:1592` C store.
            divides(
                q.e_vec.unwrap_or(1),
                p.c,
                "C % CBlockTransferScalarPerVector_NWaveNPerXdl",
            )?;
            Ok(())
        }
        // `device_grouped_conv_bwd_weight_explicit_xdl.hpp` `IsSupportedArgument`: NHWGC/NDHWGC,
        // 1x1 stride 1 pad 0 (the spec check above), then the batched GEMM with M = K, N = C,
        // GemmK = N*Do*Ho*Wo, batch G, A = dy, B = x, C = dw (its `Argument` constructor).
        DeviceOp::WrwExplicit => {
            let layouts = q.gemm_layouts.as_deref().unwrap_or("CRR").as_bytes();
            let (m, n, gemm_k) = (p.k, p.c, p.n.saturating_mul(p.out_pixels()));
            // `gridwise_gemm_xdl_cshuffle_v3.hpp:1011` CheckValidity.
            if q.gemm_spec == Some(GemmSpec::Default) {
                if layouts[0] != b'R' && !m.is_multiple_of(q.m_per_block) {
                    return Err(Reject::GemmTile("M (= K) % MPerBlock"));
                }
                if layouts[1] == b'R' && !n.is_multiple_of(q.n_per_block) {
                    return Err(Reject::GemmTile("N (= C) % NPerBlock"));
                }
                if !gemm_k.is_multiple_of(k_batch.max(1).saturating_mul(q.k_per_block)) {
                    return Err(Reject::GemmTile("GemmK (= N*Ho*Wo) % (split_k * KPerBlock)"));
                }
            }
            if layouts[0] == b'R' {
                divides(q.a_vec, gemm_k, "GemmK % A VmemReadVec")?;
            } else {
                divides(q.a_vec, m, "M (= K) % A VmemReadVec")?;
            }
            if layouts[1] == b'R' {
                divides(q.b_vec, n, "N (= C) % B VmemReadVec")?;
            } else {
                divides(q.b_vec, gemm_k, "GemmK % B VmemReadVec")?;
            }
            let version = q.pipeline.unwrap_or(1);
            let stages = q.prefetch_stages.unwrap_or(1);
            if version != 1 && k_loops(gemm_k, k_batch, q.k_per_block) <= stages {
                return Err(Reject::Pipeline);
            }
            Ok(())
        }
    }
}

/// Everything MIOpen 3.5.1 checks before it runs kernel id `inst` + `split_k` for `p` with
/// `solver` on `arch`: applicability, the split-k suffix, CK's `IsSupportedArgument`.
pub fn check_kernel(
    solver: CkSolver,
    inst: &CkInstance,
    split_k: Option<u64>,
    p: &CkProblem,
    arch: &str,
    rules: CkVersion,
) -> std::result::Result<(), Reject> {
    applicable(solver, p, arch)?;
    if !solver.tunes(inst.op) {
        return Err(Reject::WrongDirection);
    }
    let k_batch = match (solver.has_split_k(), split_k) {
        (true, Some(sk)) if SPLIT_K_VALUES.contains(&sk) => sk,
        (true, Some(_)) => return Err(Reject::SplitK("not a power of two in 1..128")),
        (true, None) => return Err(Reject::SplitK("missing (this solver's ids end in +split_k)")),
        (false, None) => 1,
        (false, Some(_)) => return Err(Reject::SplitK("present (this solver's ids have none)")),
    };
    // The bwd-data op has no k_batch in the reachable CK: its rules are checked at split-k 1.
    let split_k = (solver.has_split_k() && inst.op != DeviceOp::BwdDataV1).then_some(k_batch);
    supports(inst, p, split_k, rules)
}
