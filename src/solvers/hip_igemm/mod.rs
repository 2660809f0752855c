//! MIOpen's non-xdlops HIP implicit-GEMM solvers (composable_kernel's static kernels):
//! `ConvHipImplicitGemmV4R1Fwd`, `ConvHipImplicitGemmV4R1WrW` (the 16-integer V4R1 config,
//! [`v4r1`]) and `ConvHipImplicitGemmV4R4Fwd`, `ConvHipImplicitGemmV4R4WrW`,
//! `ConvHipImplicitGemmBwdDataV1R1` (the 6-integer V4R4 config, [`v4r4`]).
//!
//! Everything here follows `../shared/miopen/solvers/ConvHipImplicitGemmV4R1Fwd.md` and
//! `ConvHipImplicitGemmNonXdlops.md` (ROCm/MIOpen 2d1fd997a); section names below are theirs.
//!
//! Direction convention: [`ConvProblem`] keeps C = x's channels, K = y's (dy's), `in_*` = x's
//! size and `out_*` = y's (dy's) for every direction, so MIOpen's forward quantities are read
//! straight from it: N = `n`, C = `c`, K = `k`, Hi, Wi = `in_h`, `in_w`, Ho, Wo = `out_h`,
//! `out_w`, Y, X = `filter_h`, `filter_w`. For B/W rows with stride > 1 the x size is not in the
//! databases; only never-deciding vector lengths read it (V4R4) and no V4R1 rule does.
//!
//! 3-D problems (NCDHW, issue 45 item 3): V4R4Fwd, V4R4WrW and BwdDataV1R1 (FP32) take them as
//! MIOpen does, their GEMMs counting the depth ([`Gemm::of`], [`depth_of`]); V4R1Fwd and V4R1WrW
//! refuse them. The networks of the three refuse them too ([`HipIgemmEngine`]); the problem
//! classes `2-D` and `3-D` let `eval` and `--method best` score and serve the two apart.
//!
//! The valid configs of a problem are few (V4R4: at most 36; V4R1: a few hundred of the
//! 3,359,232 of `IsValidValue`), so the search's constraint is their table over a model's values
//! (on the GPU `shaders/catalogue_rules.wgsl`), shared between problems with the same
//! [`v4r4::Rules::table_key`] / [`v4r1::Rules::table_key`].

pub mod v4r1;
pub mod v4r4;

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision, MAX_FIELD_VALUE};
use crate::solvers::tunable::{log2_feature, product_below, twos_feature};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// Which solver (and so which config type and GEMM).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    V4R1Fwd = 0,
    V4R1WrW = 1,
    V4R4Fwd = 2,
    V4R4WrW = 3,
    BwdDataV1R1 = 4,
}

impl Kind {
    /// The 16-integer V4R1 config type (else the 6-integer V4R4 one).
    pub fn is_v4r1(self) -> bool {
        matches!(self, Kind::V4R1Fwd | Kind::V4R1WrW)
    }
}

/// One of the five solvers.
pub struct HipIgemmSolver {
    pub name: &'static str,
    pub direction: Direction,
    pub kind: Kind,
}

pub static V4R1_FWD: HipIgemmSolver = HipIgemmSolver {
    name: "ConvHipImplicitGemmV4R1Fwd",
    direction: Direction::Forward,
    kind: Kind::V4R1Fwd,
};
pub static V4R1_WRW: HipIgemmSolver = HipIgemmSolver {
    name: "ConvHipImplicitGemmV4R1WrW",
    direction: Direction::BackwardWeights,
    kind: Kind::V4R1WrW,
};
pub static V4R4_FWD: HipIgemmSolver = HipIgemmSolver {
    name: "ConvHipImplicitGemmV4R4Fwd",
    direction: Direction::Forward,
    kind: Kind::V4R4Fwd,
};
pub static V4R4_WRW: HipIgemmSolver = HipIgemmSolver {
    name: "ConvHipImplicitGemmV4R4WrW",
    direction: Direction::BackwardWeights,
    kind: Kind::V4R4WrW,
};
pub static BWD_V1R1: HipIgemmSolver = HipIgemmSolver {
    name: "ConvHipImplicitGemmBwdDataV1R1",
    direction: Direction::BackwardData,
    kind: Kind::BwdDataV1R1,
};

/// The five solvers.
pub fn solvers() -> [&'static HipIgemmSolver; 5] {
    [&V4R1_FWD, &V4R1_WRW, &V4R4_FWD, &V4R4_WRW, &BWD_V1R1]
}

/// gcd with gcd(0, y) = y (`implicitgemm_util.hpp:587-618`).
pub fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A problem size widened (clamped to MIOpen's `int`).
fn size(v: u64) -> i128 {
    i128::from(v.min(MAX_FIELD_VALUE))
}

/// The arches where MIOpen applies the five: the deprecated-solver allow-list (`solver.cpp:716-732`:
/// gfx803, gfx900, gfx906, gfx908, gfx90a, gfx103*) intersected with
/// `IsComposableKernelSupportedHardware` (`implicitgemm_util.hpp:574-584`: gfx803 with exactly 64
/// CUs, gfx900, gfx906, gfx908, gfx90a, gfx94*, gfx103*). A gfx803 target without a CU count is
/// taken as the 64-CU part.
pub fn arch_allowed(target: &Target) -> bool {
    let a = target.arch.to_ascii_lowercase();
    matches!(a.as_str(), "gfx900" | "gfx906" | "gfx908" | "gfx90a")
        || a.starts_with("gfx103")
        || (a == "gfx803" && target.compute_units.is_none_or(|cu| cu == 64))
}

/// EPACK (`GetEPackLength(..., false)`): 2 for FP16/BF16, 1 for FP32.
pub fn epack(p: Precision) -> u64 {
    if p == Precision::Fp32 {
        1
    } else {
        2
    }
}

/// The GEMM of a V4R4-type solver (section C), groups 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Gemm {
    pub m: i128,
    pub n: i128,
    pub k: i128,
}

/// The depth of a problem along MIOpen's axis D, forward convention like H and W: (x's depth
/// Di, y's depth Do, filter depth Z, pad, stride, dilation). A 2-D problem is depth 1, filter 1,
/// pad 0, stride 1, dilation 1, which makes every 3-D formula below its 2-D one (MIOpen's
/// 2-D branches are the 3-D ones with these values).
pub fn depth_of(p: &ConvProblem) -> (i128, i128, i128, i128, i128, i128) {
    match p.depth {
        None => (1, 1, 1, 0, 1, 1),
        Some(d) => (
            size(d.in_d),
            size(d.out_d),
            size(d.filter_d),
            size(d.pad_d),
            size(d.stride_d),
            size(d.dilation_d),
        ),
    }
}

impl Gemm {
    /// `CalculateGemmSize` of MIOpen 2d1fd997a (the same in 3.5.1): V4R4Fwd (K, N*Do*Ho*Wo,
    /// C*Z*Y*X) (`conv_hip_implicit_gemm_fwd_v4r4.cpp:558-576`); V4R4WrW (K, C*Z*Y*X,
    /// N*Do*Ho*Wo) (`conv_hip_implicit_gemm_wrw_v4r4.cpp:561-579`); BwdDataV1R1 (C*Z*Y*X,
    /// N*Do*Ho*Wo, K/EPACK) (`conv_hip_implicit_gemm_bwd_v1r1.cpp:592-611`). Do and Z only for a
    /// 3-D problem (`problem.Is3d() ? ... : 1`); a 2-D problem's are 1. (The V4R1 kinds get the
    /// forward one; they do not use it.)
    pub fn of(kind: Kind, p: &ConvProblem) -> Gemm {
        let (n, c, k) = (size(p.n), size(p.c), size(p.k));
        let (_, d_out, z, _, _, _) = depth_of(p);
        let yx = z * size(p.filter_h) * size(p.filter_w);
        let out_px = n * d_out * size(p.out_h) * size(p.out_w);
        match kind {
            Kind::V4R4WrW => Gemm {
                m: k,
                n: c * yx,
                k: out_px,
            },
            Kind::BwdDataV1R1 => Gemm {
                m: c * yx,
                n: out_px,
                k: k / epack(p.precision) as i128,
            },
            _ => Gemm {
                m: k,
                n: out_px,
                k: c * yx,
            },
        }
    }
}

/// (adjusted stride, adjusted dilation, right pad) along one axis (section C: stride' = stride
/// where the output size is > 1, dil' = dil where the filter size is > 1, rp = max(0, 1 +
/// (X-1)*dil' + (Wo-1)*stride' - (pad + Wi))).
fn axis(input: i128, output: i128, filter: i128, pad: i128, stride: i128, dil: i128) -> (i128, i128, i128) {
    let s = if output > 1 { stride } else { 1 };
    let d = if filter > 1 { dil } else { 1 };
    let rp = (1 + (filter - 1) * d + (output - 1) * s - (pad + input)).max(0);
    (s, d, rp)
}

/// The B copy's vector bound of a V4R4-type problem (section E, 4.4/4.5): V4R4Fwd and V4R4WrW:
/// Di*Hi*Wi for a 1x1(x1) filter with unit adjusted strides and no pads, else (WrW) Wo with unit
/// stride', no W pads and dil' 1, else gcd(pad_w, Wi, rp_w, dil_w') with stride_w' 1, else 0
/// (vB = 1); BwdDataV1R1: Ho*Wo, without the depth in 3-D too. The 3-D branches
/// (`conv_hip_implicit_gemm_fwd_v4r4.cpp:254-279`, `conv_hip_implicit_gemm_wrw_v4r4.cpp:251-281`)
/// add Z == 1, stride_d' == 1 and both D pads 0 to the first case and the factor Di; the later
/// cases read only W. BwdDataV1R1's B copy reads `ho * wo` in both (`bwd_v1r1.cpp:264-267`).
/// A 2-D problem is depth 1 ([`depth_of`]): the same branches.
pub fn b_vector_bound(kind: Kind, p: &ConvProblem) -> i128 {
    let (hi, wi, ho, wo) = (size(p.in_h), size(p.in_w), size(p.out_h), size(p.out_w));
    if kind == Kind::BwdDataV1R1 {
        return ho * wo;
    }
    let (y, x) = (size(p.filter_h), size(p.filter_w));
    let (di, d_out, z, pd, stride_d, dil_d) = depth_of(p);
    let (sd, _, rpd) = axis(di, d_out, z, pd, stride_d, dil_d);
    let (sh, _, rph) = axis(hi, ho, y, size(p.pad_h), size(p.stride_h), size(p.dilation_h));
    let (sw, dw, rpw) = axis(wi, wo, x, size(p.pad_w), size(p.stride_w), size(p.dilation_w));
    let (ph, pw) = (size(p.pad_h), size(p.pad_w));
    if z == 1
        && y == 1
        && x == 1
        && sd == 1
        && sh == 1
        && sw == 1
        && pd == 0
        && ph == 0
        && pw == 0
        && rpd == 0
        && rph == 0
        && rpw == 0
    {
        return di * hi * wi;
    }
    if kind == Kind::V4R4WrW && sw == 1 && pw == 0 && rpw == 0 && dw == 1 {
        return wo;
    }
    if sw == 1 {
        return gcd(gcd(gcd(pw, wi), rpw), dw);
    }
    0
}

/// The V4R1 kernel dimensions (`implicitgemm_util.hpp:94-152`): forward K = K (not divided by
/// G), C = C/G, N = N, Ho*Wo = y's, Y*X = the filter's; backward weights K = K (dy's channels),
/// C = N (the batch), N = C/G (x's channels per group), Ho*Wo = the filter's, Y*X = dy's size.
pub fn kernel_dims(kind: Kind, p: &ConvProblem) -> v4r1::KernelDims {
    let g = size(p.groups);
    let filter = size(p.filter_h) * size(p.filter_w);
    let y_px = size(p.out_h) * size(p.out_w);
    let half = p.precision != Precision::Fp32;
    if kind == Kind::V4R1WrW {
        v4r1::KernelDims {
            k: size(p.k),
            c: size(p.n),
            n: size(p.c).checked_div(g).unwrap_or(0),
            ho_wo: filter,
            y_x: y_px,
            g,
            half,
        }
    } else {
        v4r1::KernelDims {
            k: size(p.k),
            c: size(p.c).checked_div(g).unwrap_or(0),
            n: size(p.n),
            ho_wo: y_px,
            y_x: filter,
            g,
            half,
        }
    }
}

/// The rules of one solver for one problem.
pub enum HipRules {
    V4R1(v4r1::Rules),
    V4R4(v4r4::Rules),
}

impl HipRules {
    pub fn of(kind: Kind, p: &ConvProblem) -> HipRules {
        if kind.is_v4r1() {
            HipRules::V4R1(v4r1::Rules::new(kernel_dims(kind, p)))
        } else {
            HipRules::V4R4(v4r4::Rules::new(kind, Gemm::of(kind, p), b_vector_bound(kind, p)))
        }
    }

    pub fn default_config(&self) -> Vec<i64> {
        match self {
            HipRules::V4R1(r) => r.default_config().to_vec(),
            HipRules::V4R4(r) => r.default_config().to_vec(),
        }
    }

    pub fn table_key(&self) -> u64 {
        match self {
            HipRules::V4R1(r) => r.table_key(),
            HipRules::V4R4(r) => r.table_key(),
        }
    }

    pub fn valid_configs(&self) -> Vec<Vec<i64>> {
        match self {
            HipRules::V4R1(r) => r.valid_configs().iter().map(|c| c.to_vec()).collect(),
            HipRules::V4R4(r) => r.valid_configs().iter().map(|c| c.to_vec()).collect(),
        }
    }
}

impl IntRules for HipRules {
    fn config_len(&self) -> usize {
        match self {
            HipRules::V4R1(r) => r.config_len(),
            HipRules::V4R4(r) => r.config_len(),
        }
    }
    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        match self {
            HipRules::V4R1(r) => r.prefix_valid(prefix),
            HipRules::V4R4(r) => r.prefix_valid(prefix),
        }
    }
    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        match self {
            HipRules::V4R1(r) => r.completable(prefix, domain),
            HipRules::V4R4(r) => r.completable(prefix, domain),
        }
    }
}

/// Is every tensor (x, w, y) below 2^31 bytes (`IsIndexRangeLargeEnough`,
/// `implicitgemm_util.hpp:254-261`: `GetInSize()` etc., the tensors' bytes, depth included)?
fn tensors_fit(p: &ConvProblem) -> bool {
    let b = u128::from(p.precision.bytes());
    let u = |v: u64| u128::from(v);
    let cg = u(p.c) / u(p.groups.max(1));
    let (di, d_out, z) = p.depth.map_or((1, 1, 1), |d| (d.in_d, d.out_d, d.filter_d));
    product_below(&[u(p.n), u(p.c), u(di), u(p.in_h), u(p.in_w), b], 31)
        && product_below(&[u(p.k), cg, u(z), u(p.filter_h), u(p.filter_w), b], 31)
        && product_below(&[u(p.n), u(p.k), u(d_out), u(p.out_h), u(p.out_w), b], 31)
}

impl HipIgemmSolver {
    fn not_applicable(&self, reason: impl Into<String>) -> Error {
        Error::NotApplicable {
            solver: self.name.into(),
            reason: reason.into(),
        }
    }

    /// The rules of this solver for a problem.
    pub fn hip_rules(&self, p: &ConvProblem) -> HipRules {
        HipRules::of(self.kind, p)
    }

    /// MIOpen's `IsApplicable` as far as a problem carries it (V4R1Fwd: ConvHipImplicitGemmV4R1Fwd.md
    /// section 3; the others: ConvHipImplicitGemmNonXdlops.md sections D and G). Not modelled (a
    /// problem does not carry them): environment switches, `deterministic`, `use_hip_kernels`,
    /// packed tensors, cast tensors.
    ///
    /// 3-D problems (MIOpen 2d1fd997a, the same in 3.5.1): V4R4Fwd and V4R4WrW take 2-D and 3-D
    /// (`if(!problem.Is2d() && !problem.Is3d())`, `conv_hip_implicit_gemm_fwd_v4r4.cpp:599`,
    /// `conv_hip_implicit_gemm_wrw_v4r4.cpp:602`), BwdDataV1R1 3-D in FP32 only
    /// (`if(!problem.Is2d() && !(problem.Is3d() && problem.IsFp32()))`, `bwd_v1r1.cpp:656`), each
    /// in the default layout (NCDHW: `IsLayoutDefault`) with the GEMM of [`Gemm::of`]; V4R1Fwd and
    /// V4R1WrW 2-D only (`if(!problem.Is2d())`, `conv_hip_implicit_gemm_fwd_v4r1.cpp:61, :111`).
    /// MIOpen 3.5.1 adds `GfxHasMissingFp32Intrinsics` (gfx942, gfx95x), which [`arch_allowed`]
    /// refuses before.
    pub fn check_applicable(&self, target: &Target, p: &ConvProblem) -> Result<()> {
        let name = self.name;
        if let Some(d) = p.depth {
            if self.kind.is_v4r1() {
                return Err(self.not_applicable(format!(
                    "a 3-D problem ({}, depth {}, filter depth {}): MIOpen applies {name} to 2-D problems only \
                     (`if(!problem.Is2d())`)",
                    p.layout_name(),
                    d.in_d,
                    d.filter_d
                )));
            }
            if self.kind == Kind::BwdDataV1R1 && p.precision != Precision::Fp32 {
                return Err(self.not_applicable(format!(
                    "a 3-D {} problem: MIOpen applies {name} to 3-D problems in FP32 only \
                     (`!(problem.Is3d() && problem.IsFp32())`)",
                    p.precision
                )));
            }
        }
        if !arch_allowed(target) {
            return Err(self.not_applicable(format!(
                "arch {}: MIOpen applies {name} only on gfx803 (64 CUs), gfx900, gfx906, gfx908, gfx90a and gfx103x \
                 (the deprecated-solver list and composable_kernel's hardware)",
                target.arch
            )));
        }
        if p.direction != self.direction {
            return Err(self.not_applicable(format!(
                "direction {}: {name} is the {} solver",
                p.direction,
                match self.direction {
                    Direction::Forward => "forward (F)",
                    Direction::BackwardData => "backward-data (B)",
                    Direction::BackwardWeights => "backward-weights (W)",
                }
            )));
        }
        if p.layout != Layout::Nchw {
            return Err(self.not_applicable(format!(
                "layout {}: {name} supports only NCHW (NCDHW in 3-D)",
                p.layout_name()
            )));
        }
        let depth_sizes = p.depth.map_or([1; 4], |d| [d.in_d, d.out_d, d.filter_d, d.stride_d]);
        if [
            p.n, p.c, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.filter_h, p.filter_w, p.stride_h, p.stride_w, p.groups,
        ]
        .iter()
        .chain(&depth_sizes)
        .any(|&v| v == 0)
        {
            return Err(self.not_applicable(format!(
                "zero size, filter, stride or group count in {p}: every one must be positive"
            )));
        }
        match self.kind {
            Kind::V4R4Fwd | Kind::V4R4WrW if p.precision != Precision::Fp32 => {
                return Err(self.not_applicable(format!("data type {}: {name} takes FP32 only", p.precision)));
            }
            Kind::BwdDataV1R1 if p.precision == Precision::Fp16 => {
                return Err(self.not_applicable(format!("data type FP16: {name} takes FP32 (and BF16) only")));
            }
            Kind::BwdDataV1R1 if p.precision == Precision::Bf16 => {
                return Err(self.not_applicable(format!(
                    "data type BF16: {name} takes it only with MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_V1R1 \
                     explicitly enabled (WORKAROUND_ISSUE_309); by default FP32 only"
                )));
            }
            Kind::V4R1WrW if p.precision == Precision::Fp16 && target.arch.eq_ignore_ascii_case("gfx90a") => {
                return Err(self.not_applicable(format!(
                    "FP16 on gfx90a: {name} is off where the fp16-alt attribute is on (the default for W)"
                )));
            }
            _ => {}
        }
        if !self.kind.is_v4r1() && p.groups != 1 {
            return Err(self.not_applicable(format!("group count {}: {name} needs groups 1", p.groups)));
        }
        if !tensors_fit(p) {
            return Err(self.not_applicable(format!(
                "{p}: a tensor of 2 GiB or more ({name} indexes with 32-bit offsets)"
            )));
        }
        let ep = epack(p.precision);
        let g = p.groups;
        let (fy, fx) = (p.filter_h, p.filter_w);
        let e_multiple = if p.precision == Precision::Fp32 { 8 } else { 16 };
        // Each check: (holds, what it says).
        let checks: Vec<(bool, String)> = match self.kind {
            Kind::V4R1Fwd => {
                let (n, k, c) = (p.n, p.k / g, p.c / g);
                let nhw = n.saturating_mul(p.out_h).saturating_mul(p.out_w);
                vec![
                    (c % ep == 0, format!("C/G = {c} is not a multiple of EPACK {ep}")),
                    (n % 8 == 0, format!("N = {n} is not a multiple of 8")),
                    (nhw % 32 == 0, format!("N*Ho*Wo = {nhw} is not a multiple of 32")),
                    (
                        u128::from(nhw) * u128::from(k) % 1024 == 0,
                        format!("N*Ho*Wo*K/G = {nhw}*{k} is not a multiple of 1024"),
                    ),
                    (
                        c.saturating_mul(fy).saturating_mul(fx) % e_multiple == 0,
                        format!("C/G*Y*X = {c}*{fy}*{fx} is not a multiple of {e_multiple}"),
                    ),
                    (k % 16 == 0, format!("K/G = {k} is not a multiple of 16")),
                ]
            }
            Kind::V4R1WrW => {
                let (n_eqv, k_eqv, c_eqv) = (p.c / g, p.k / g, p.n);
                let nyx = n_eqv.saturating_mul(fy).saturating_mul(fx);
                let chw = c_eqv.saturating_mul(p.out_h).saturating_mul(p.out_w);
                vec![
                    (c_eqv % ep == 0, format!("N = {c_eqv} is not a multiple of EPACK {ep}")),
                    (n_eqv % 8 == 0, format!("C/G = {n_eqv} is not a multiple of 8")),
                    (nyx % 64 == 0, format!("C/G*Y*X = {nyx} is not a multiple of 64")),
                    (
                        chw % e_multiple == 0,
                        format!("N*Ho*Wo = {chw} is not a multiple of {e_multiple}"),
                    ),
                    (k_eqv % 16 == 0, format!("K/G = {k_eqv} is not a multiple of 16")),
                    (
                        u128::from(nyx) * u128::from(k_eqv) % 1024 == 0,
                        format!("C/G*Y*X*K/G = {nyx}*{k_eqv} is not a multiple of 1024"),
                    ),
                ]
            }
            _ => {
                let gm = Gemm::of(self.kind, p);
                let mut v = vec![
                    (gm.m % 32 == 0, format!("GEMM M = {} is not a multiple of 32", gm.m)),
                    (gm.n % 32 == 0, format!("GEMM N = {} is not a multiple of 32", gm.n)),
                    (gm.k % 4 == 0, format!("GEMM K = {} is not a multiple of 4", gm.k)),
                ];
                if self.kind == Kind::BwdDataV1R1 {
                    v.push((
                        p.k.is_multiple_of(ep),
                        format!("K = {} is not a multiple of EPACK {ep}", p.k),
                    ));
                }
                v
            }
        };
        if let Some((_, why)) = checks.into_iter().find(|(ok, _)| !ok) {
            return Err(self.not_applicable(format!("{p}: {why}")));
        }
        Ok(())
    }
}

/// The problem class of 3-D problems of the V4R4-type solvers ([`Tunable::problem_class`]).
pub const CLASS_3D: &str = "3-D";

/// The problem class of 2-D problems of the V4R4-type solvers ([`Tunable::problem_class`]).
pub const CLASS_2D: &str = "2-D";

/// Names of tuneinfer's model features of the V4R4-type solvers (see [`features`]).
pub const V4R4_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 GEMM M",
    "log2 GEMM N",
    "log2 GEMM K",
    "log2 C",
    "log2 K",
    "log2 Do*Ho*Wo",
    "twos GEMM M",
    "twos GEMM N",
    "twos GEMM K",
    "log2 N",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "log2 Z*Y*X",
];

/// Names of tuneinfer's model features of the V4R1-type solvers (see [`features`]).
pub const V4R1_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 kernel K",
    "log2 kernel C",
    "log2 kernel N",
    "log2 kernel Ho*Wo",
    "log2 E",
    "log2 kernel Y*X",
    "twos kernel K",
    "twos E",
    "twos kernel N*Ho*Wo",
    "log2 G",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "twos kernel N",
];

/// tuneinfer's model features. V4R4 type: log2 of the solver's GEMM sizes, of C, K and y's
/// pixels; the GEMM sizes' power-of-two divisibility (what the tiles must divide); log2 N; the
/// precision; log2 of the filter's size. A 3-D problem's GEMM sizes, pixels and filter size
/// count its depth (y's pixels Do*Ho*Wo, the filter Z*Y*X, as MIOpen's GEMM does); a 2-D
/// problem's depth is 1, so its features are the ones the models were trained on before 3-D
/// problems were read, and a 3-D problem of depth 1 has its 2-D twin's. V4R1 type: log2 of the kernel dimensions (K, C, N,
/// Ho*Wo, E, Y*X of [`kernel_dims`]: for W the batch is C and the filter is Ho*Wo), the
/// divisibility of K, E and N*Ho*Wo (rules 2, 3 and 6), log2 G, the precision and N's
/// divisibility.
pub fn features(kind: Kind, p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
    let u = |v: i128| u64::try_from(v.max(0)).unwrap_or(u64::MAX);
    let prec = crate::solvers::tunable::precision_feature(p.precision);
    if kind.is_v4r1() {
        let d = kernel_dims(kind, p);
        [
            l(u(d.k)),
            l(u(d.c)),
            l(u(d.n)),
            l(u(d.ho_wo)),
            l(u(d.e())),
            l(u(d.y_x)),
            twos(u(d.k)),
            twos(u(d.e())),
            twos(u(d.n * d.ho_wo)),
            l(u(d.g)),
            prec,
            twos(u(d.n)),
        ]
    } else {
        let g = Gemm::of(kind, p);
        let (_, d_out, z, _, _, _) = depth_of(p);
        [
            l(u(g.m)),
            l(u(g.n)),
            l(u(g.k)),
            l(p.c),
            l(p.k),
            l(u(d_out * size(p.out_h) * size(p.out_w))),
            twos(u(g.m)),
            twos(u(g.n)),
            twos(u(g.k)),
            l(p.n),
            prec,
            l(u(z * size(p.filter_h) * size(p.filter_w))),
        ]
    }
}

impl OwnModelsOnly for HipIgemmSolver {
    /// At most a few hundred valid configs per problem: the table of them is the constraint (on
    /// the GPU, `shaders/catalogue_rules.wgsl`).
    fn table_constraint(&self) -> bool {
        true
    }

    /// Problems with equal rule decisions share the table.
    fn table_key(&self, _target: &Target, problem: &ConvProblem) -> Option<u64> {
        Some(self.hip_rules(problem).table_key())
    }
}

impl Tunable for HipIgemmSolver {
    fn solver_name(&self) -> &'static str {
        self.name
    }

    fn param_names(&self) -> &'static [&'static str] {
        if self.kind.is_v4r1() {
            &v4r1::PARAM_NAMES
        } else {
            &v4r4::PARAM_NAMES
        }
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_applicable(target, problem)
    }

    fn rules(&self, _target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(self.hip_rules(problem))
    }

    /// `HeuristicInit`: the first valid config of the solver's default list, else its last.
    fn static_default(&self, _target: &Target, problem: &ConvProblem) -> Vec<i64> {
        self.hip_rules(problem).default_config()
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        if self.kind.is_v4r1() {
            V4R1_FEATURE_NAMES
        } else {
            V4R4_FEATURE_NAMES
        }
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        features(self.kind, problem)
    }

    /// V4R4Fwd, V4R4WrW, BwdDataV1R1: 3-D problems and 2-D ones. MIOpen runs another kernel on
    /// 3-D problems (`..._ncdhw_kczyx_nkdhw`), and its databases' 3-D rows are tuned apart (on
    /// MI100 and MI210 nearly all of them MIOpen's default), so `eval` reports the two classes
    /// apart and `--method best` answers each with the predictor that did best on it. (Every
    /// problem of the three is of one kind, their direction in FP32, so the classes lose no
    /// kind's figures.) The V4R1 solvers: none (2-D only).
    fn problem_class(&self, problem: &ConvProblem) -> Option<&'static str> {
        if self.kind.is_v4r1() {
            None
        } else if problem.is_3d() {
            Some(CLASS_3D)
        } else {
            Some(CLASS_2D)
        }
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        match self.direction {
            Direction::Forward => (&[Direction::Forward], 3),
            Direction::BackwardData => (&[Direction::BackwardData], 3),
            Direction::BackwardWeights => (&[Direction::BackwardWeights], 3),
        }
    }
}

/// The engine view ([`crate::solvers::Solver`]) of V4R4Fwd, V4R4WrW and BwdDataV1R1, as the
/// registry lists them: the solver's own ([`OwnModelsOnly`]'s) but for
/// [`crate::solvers::Solver::check_network`], which refuses 3-D problems. tuneinfer's networks
/// of the three were trained on 2-D problems, and a 3-D problem of depth 1 (nearly all of
/// MIOpen's 3-D rows) has exactly its 2-D twin's features, while MIOpen's tuned value of the 3-D
/// problem is another one: on MI100's held-out 3-D problems (V4R4WrW, 915) the network's first
/// answer was the tuned value on 10.5%, MIOpen's default on 98.9%. The cell's record beside the
/// network (`{gpu}_{solver}.neighbour.json`) answers them (its 3-D figures choose the nearest
/// tuned neighbour or MIOpen's default); without one the refusal is the answer.
pub struct HipIgemmEngine(pub &'static HipIgemmSolver);

pub static V4R4_FWD_ENGINE: HipIgemmEngine = HipIgemmEngine(&V4R4_FWD);
pub static V4R4_WRW_ENGINE: HipIgemmEngine = HipIgemmEngine(&V4R4_WRW);
pub static BWD_V1R1_ENGINE: HipIgemmEngine = HipIgemmEngine(&BWD_V1R1);

impl crate::solvers::Solver for HipIgemmEngine {
    fn name(&self) -> &'static str {
        self.0.name
    }

    fn model_name(&self, arch: &str) -> Result<&'static str> {
        crate::solvers::Solver::model_name(self.0, arch)
    }

    fn check(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        crate::solvers::Solver::check(self.0, target, problem)
    }

    /// [`crate::solvers::Solver::check`], and a 2-D problem (see [`HipIgemmEngine`]).
    fn check_network(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check(target, problem)?;
        match problem.depth {
            None => Ok(()),
            Some(d) => Err(self.0.not_applicable(format!(
                "a 3-D problem ({}, depth {}): tuneinfer's networks of {} are trained on 2-D problems and see a \
                 3-D problem of depth 1 as its 2-D twin, whose tuned value differs (MIOpen's default is the tuned \
                 value of nearly every 3-D problem); the cell's record beside the network answers 3-D problems \
                 (the nearest tuned neighbour or MIOpen's default, by its 3-D figures)",
                problem.layout_name(),
                d.in_d,
                self.0.name
            ))),
        }
    }

    fn encoder_input(&self, target: &Target, problem: &ConvProblem) -> Result<Vec<f32>> {
        crate::solvers::Solver::encoder_input(self.0, target, problem)
    }

    fn constraint(
        &self,
        target: &Target,
        problem: &ConvProblem,
        vocab: &crate::search::Vocabulary,
        metadata: &crate::format::metadata::KtnMetadata,
    ) -> Result<Box<dyn crate::search::Constraint + Send + Sync>> {
        crate::solvers::Solver::constraint(self.0, target, problem, vocab, metadata)
    }

    fn fallback(&self, target: &Target, problem: &ConvProblem) -> Result<Vec<String>> {
        crate::solvers::Solver::fallback(self.0, target, problem)
    }

    fn format_config(&self, values: &[String]) -> String {
        crate::solvers::Solver::format_config(self.0, values)
    }

    fn check_vocabulary(&self, vocab: &crate::search::Vocabulary, source: &str) -> Result<()> {
        crate::solvers::Solver::check_vocabulary(self.0, vocab, source)
    }

    fn read_vocabulary(&self, vocab: &mut crate::search::Vocabulary, source: &str) -> Result<()> {
        crate::solvers::Solver::read_vocabulary(self.0, vocab, source)
    }

    fn gpu_search(&self) -> crate::solvers::GpuSearch {
        crate::solvers::Solver::gpu_search(self.0)
    }

    fn wgsl_rule_words(&self, target: &Target, problem: &ConvProblem) -> Option<crate::solvers::RuleWords> {
        crate::solvers::Solver::wgsl_rule_words(self.0, target, problem)
    }

    fn problem_note(&self, target: &Target, problem: &ConvProblem) -> Option<String> {
        crate::solvers::Solver::problem_note(self.0, target, problem)
    }

    fn tunable(&self) -> Option<&dyn Tunable> {
        Some(self.0)
    }
}
