//! MIOpen's HIP xdlops implicit-GEMM solvers (composable_kernel's static xdlops kernels, NCHW):
//! `ConvHipImplicitGemmForwardV4R4Xdlops`, `ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm`,
//! `ConvHipImplicitGemmForwardV4R5Xdlops`, `ConvHipImplicitGemmWrwV4R4Xdlops`,
//! `ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm` and `ConvHipImplicitGemmBwdDataV4R1Xdlops`.
//! The configs, rules and `HeuristicInit` are in [`rules`]; this file has the applicability
//! (`IsApplicable`) and the [`Tunable`] side. Sources: ROCm/MIOpen 2d1fd997a (MIOpen 3.3) and
//! MIOpen 3.5.1 (stulebaevLuxoft/MIOpen 8c96f1c5d); file names drop `src/solver/conv/` and the
//! `conv_hip_implicit_gemm_` prefix.
//!
//! Where MIOpen applies them: the deprecated-solver allow-list (`ThisSolverIsDeprecatedStatic`,
//! `src/solver.cpp:716-732` in 2d1fd997a, `:733-747` in 3.5.1: gfx803, gfx900, gfx906, gfx908,
//! gfx90a, gfx103x) intersected with `IsXdlopsSupport` (util:206-218: gfx908, gfx90a, gfx94x;
//! 3.5.1: gfx908, gfx90a, gfx942, gfx950 by exact name): gfx908 and gfx90a, in both versions.
//! 3.5.1 adds a BF16 refusal on gfx942/gfx95x (`GfxHasMissingBf16Intrinsics`), which the
//! deprecation gate already excludes; the rules are otherwise the same text.

pub mod rules;

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision};
use crate::solvers::tunable::product_below;
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};
use rules::{Prob, Rules};

/// Which solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XKind {
    FwdV4R4,
    FwdV4R4Padded,
    FwdV4R5,
    WrwV4R4,
    WrwV4R4Padded,
    BwdV4R1,
}

/// One of the six solvers.
pub struct XdlopsSolver {
    pub name: &'static str,
    pub direction: Direction,
    pub kind: XKind,
    /// The environment switch that turns it off (`MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_*`).
    pub env: &'static str,
}

pub static FWD_V4R4: XdlopsSolver = XdlopsSolver {
    name: "ConvHipImplicitGemmForwardV4R4Xdlops",
    direction: Direction::Forward,
    kind: XKind::FwdV4R4,
    env: "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R4_XDLOPS",
};
pub static FWD_V4R4_PADDED: XdlopsSolver = XdlopsSolver {
    name: "ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm",
    direction: Direction::Forward,
    kind: XKind::FwdV4R4Padded,
    env: "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R4_PADDED_GEMM_XDLOPS",
};
pub static FWD_V4R5: XdlopsSolver = XdlopsSolver {
    name: "ConvHipImplicitGemmForwardV4R5Xdlops",
    direction: Direction::Forward,
    kind: XKind::FwdV4R5,
    env: "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R5_XDLOPS",
};
pub static WRW_V4R4: XdlopsSolver = XdlopsSolver {
    name: "ConvHipImplicitGemmWrwV4R4Xdlops",
    direction: Direction::BackwardWeights,
    kind: XKind::WrwV4R4,
    env: "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_WRW_V4R4_XDLOPS",
};
pub static WRW_V4R4_PADDED: XdlopsSolver = XdlopsSolver {
    name: "ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm",
    direction: Direction::BackwardWeights,
    kind: XKind::WrwV4R4Padded,
    env: "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_WRW_V4R4_PADDED_GEMM_XDLOPS",
};
pub static BWD_V4R1: XdlopsSolver = XdlopsSolver {
    name: "ConvHipImplicitGemmBwdDataV4R1Xdlops",
    direction: Direction::BackwardData,
    kind: XKind::BwdV4R1,
    env: "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_V4R1_XDLOPS",
};

/// The six solvers.
pub fn solvers() -> [&'static XdlopsSolver; 6] {
    [
        &FWD_V4R4,
        &FWD_V4R4_PADDED,
        &FWD_V4R5,
        &WRW_V4R4,
        &WRW_V4R4_PADDED,
        &BWD_V4R1,
    ]
}

/// Compute units MIOpen reads (`GetMaxComputeUnits`) when a target names none: MI100's 120 on
/// gfx908, MI210's 104 on gfx90a.
pub fn compute_units(target: &Target) -> u32 {
    target
        .compute_units
        .unwrap_or(if target.arch.eq_ignore_ascii_case("gfx90a") {
            104
        } else {
            120
        })
}

/// gfx908 or gfx90a: the deprecated-solver allow-list intersected with `IsXdlopsSupport` (see
/// the module's documentation).
pub fn arch_allowed(target: &Target) -> bool {
    let a = target.arch.to_ascii_lowercase();
    a == "gfx908" || a == "gfx90a"
}

/// `IsValidGridGemmXdlops` (util:325-336).
pub fn valid_grid_gemm(m: i64, n: i64, k: i64) -> bool {
    if m % 16 != 0 && n % 64 != 0 {
        return false;
    }
    (m * n) % 256 == 0 && (k * m) % 64 == 0 && (k * n) % 64 == 0 && n % 16 == 0 && m % 4 == 0 && k % 4 == 0
}

/// Is every tensor (x, w, y) below 2 GiB (`IsIndexRangeLargeEnough`, util:254-261)?
fn tensors_fit(p: &ConvProblem) -> bool {
    let b = u128::from(p.precision.bytes());
    let u = |v: u64| u128::from(v);
    let cg = u(p.c) / u(p.groups.max(1));
    product_below(&[u(p.n), u(p.c), u(p.in_h), u(p.in_w), b], 31)
        && product_below(&[u(p.k), cg, u(p.filter_h), u(p.filter_w), b], 31)
        && product_below(&[u(p.n), u(p.k), u(p.out_h), u(p.out_w), b], 31)
}

impl XdlopsSolver {
    fn not_applicable(&self, reason: impl Into<String>) -> Error {
        Error::NotApplicable {
            solver: self.name.into(),
            reason: reason.into(),
        }
    }

    /// The rule context of a problem on a target.
    pub fn prob(&self, target: &Target, p: &ConvProblem) -> Prob {
        Prob::new(p, compute_units(target))
    }

    /// The rules of this solver on a problem.
    pub fn xdlops_rules(&self, target: &Target, p: &ConvProblem) -> Rules {
        Rules::new(self.kind, self.prob(target, p))
    }

    /// MIOpen's `HeuristicInit` (`GetDefaultPerformanceConfig`), as config values.
    pub fn default_config(&self, target: &Target, p: &ConvProblem) -> Vec<i64> {
        let prob = self.prob(target, p);
        self.kind.values(&rules::heuristic_init(self.kind, &prob))
    }

    /// MIOpen's `IsApplicable` as far as a problem carries it (fwd_v4r4_xdlops.cpp:972-1039,
    /// fwd_v4r4_xdlops_padded_gemm.cpp:1031-1104, fwd_v4r5_xdlops.cpp:1003-1075,
    /// wrw_v4r4_xdlops.cpp:1043-1108, wrw_v4r4_xdlops_padded_gemm.cpp:1106-1187,
    /// bwd_v4r1_xdlops.cpp:812-874). Not modelled (a problem does not carry them): the `env`
    /// switches, `deterministic`, `use_hip_kernels`, packed and cast tensors, and the fp16-alt
    /// attribute other than its default (off for Fwd, on for BwdData/WrW).
    pub fn check_applicable(&self, target: &Target, p: &ConvProblem) -> Result<()> {
        crate::solvers::two_d_only(self.name, p)?;
        let name = self.name;
        if !arch_allowed(target) {
            return Err(self.not_applicable(format!(
                "arch {}: MIOpen applies {name} only on gfx908 and gfx90a (its deprecated-solver list, \
                 solver.cpp:716-732, intersected with the xdlops GPUs, implicitgemm_util.hpp:206-218)",
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
                "layout {}: {name} supports only NCHW (IsLayoutDefault)",
                p.layout.as_str()
            )));
        }
        if [
            p.n, p.c, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.filter_h, p.filter_w, p.stride_h, p.stride_w, p.groups,
        ]
        .contains(&0)
        {
            return Err(self.not_applicable(format!(
                "zero size, filter, stride or group count in {p}: every one must be positive"
            )));
        }
        let gfx90a = target.arch.eq_ignore_ascii_case("gfx90a");
        if gfx90a && p.precision == Precision::Fp16 && self.direction != Direction::Forward {
            return Err(self.not_applicable(format!(
                "FP16 on gfx90a: {name} is off where the fp16-alt attribute is on (IsGfx90aFp16altRequired, \
                 the default for backward directions)"
            )));
        }
        if self.kind == XKind::BwdV4R1 {
            if p.precision == Precision::Fp32 {
                return Err(self.not_applicable(format!(
                    "data type FP32: {name} takes it only with {} explicitly enabled (WORKAROUND_ISSUE_1206, \
                     bwd_v4r1_xdlops.cpp:816-821)",
                    self.env
                )));
            }
            if p.precision == Precision::Bf16 && gfx90a {
                return Err(self.not_applicable(format!(
                    "BF16 on gfx90a: {name} takes it only with {} explicitly enabled (WORKAROUND_SWDEV_329642, \
                     bwd_v4r1_xdlops.cpp:823-828)",
                    self.env
                )));
            }
        }
        if self.kind == XKind::FwdV4R5 && p.filter_h == 1 && p.filter_w == 1 {
            return Err(self.not_applicable(format!(
                "a 1x1 filter: {name} refuses it (fwd_v4r5_xdlops.cpp:1036-1040)"
            )));
        }
        if !tensors_fit(p) {
            return Err(self.not_applicable(format!(
                "{p}: a tensor of 2 GiB or more ({name} indexes with 32-bit offsets)"
            )));
        }
        let prob = self.prob(target, p);
        let why = |s: String| Err(self.not_applicable(format!("{p}: {s}")));
        match self.kind {
            XKind::FwdV4R4 | XKind::FwdV4R4Padded | XKind::FwdV4R5 => {
                let (m, n, k) = (
                    prob.k / prob.g,
                    prob.n * prob.ho * prob.wo,
                    prob.c / prob.g * prob.y * prob.x,
                );
                let (m, n, k) = if self.kind == XKind::FwdV4R4Padded {
                    // CalculateGemmSize(problem, 16, 64, 4): nothing to pad, not applicable.
                    let up = |v: i64, f: i64| (v + f - 1) / f * f;
                    if m % 16 == 0 && n % 64 == 0 && k % 4 == 0 {
                        return why(format!(
                            "GEMM {m}x{n}x{k} needs no padding to (16, 64, 4): {name} leaves it to the unpadded solver"
                        ));
                    }
                    (up(m, 16), up(n, 64), up(k, 4))
                } else {
                    (m, n, k)
                };
                if !valid_grid_gemm(m, n, k) {
                    return why(format!("GEMM {m}x{n}x{k} is no xdlops GEMM (IsValidGridGemmXdlops)"));
                }
                let d = rules::heuristic_init(self.kind, &prob);
                if let Err(r) = rules::check(self.kind, &prob, &self.kind.values(&d)) {
                    return why(format!("no valid config: HeuristicInit finds none ({r:?})"));
                }
            }
            XKind::WrwV4R4 | XKind::WrwV4R4Padded => {
                let padded = self.kind == XKind::WrwV4R4Padded;
                let d = rules::heuristic_init(self.kind, &prob);
                if let Err(r) = rules::check(self.kind, &prob, &self.kind.values(&d)) {
                    return why(format!("no valid config: HeuristicInit finds none ({r:?})"));
                }
                let Some((m, n, k, _, mp, np, kp)) = rules::wrw_gemm(&prob, &d, padded) else {
                    return why("no valid config".into());
                };
                if padded && mp == 0 && np == 0 && kp == 0 {
                    return why(format!(
                        "GEMM {m}x{n}x{k} needs no padding: {name} leaves it to the unpadded solver"
                    ));
                }
                if !valid_grid_gemm(m, n, k) {
                    return why(format!("GEMM {m}x{n}x{k} is no xdlops GEMM (IsValidGridGemmXdlops)"));
                }
            }
            XKind::BwdV4R1 => {
                // IsApplicableXdlops (util:338-389): K/G a multiple of EPACK (4 fp16, 2 bf16),
                // then the (C/G*Y*X, N*Ho*Wo, K/G/EPACK) GEMM.
                let epack = if p.precision == Precision::Fp16 { 4 } else { 2 };
                let kg = prob.k / prob.g;
                if kg % epack != 0 {
                    return why(format!("K/G = {kg} is not a multiple of EPACK {epack}"));
                }
                let (m, n, k) = (
                    prob.c / prob.g * prob.y * prob.x,
                    prob.n * prob.ho * prob.wo,
                    kg / epack,
                );
                if !valid_grid_gemm(m, n, k) {
                    return why(format!("GEMM {m}x{n}x{k} is no xdlops GEMM (IsApplicableXdlops)"));
                }
                for (m, n, k) in rules::bwd_gemms(&prob) {
                    if !valid_grid_gemm(m, n, k) {
                        return why(format!("GEMM {m}x{n}x{k} is no xdlops GEMM (IsValidGridGemmXdlops)"));
                    }
                }
            }
        }
        Ok(())
    }
}

impl OwnModelsOnly for XdlopsSolver {
    /// The valid configs of a problem are a few hundred to a few thousand: their table is the
    /// constraint (on the GPU, `shaders/catalogue_rules.wgsl`), built per problem.
    fn table_constraint(&self) -> bool {
        true
    }
}

impl Tunable for XdlopsSolver {
    fn solver_name(&self) -> &'static str {
        self.name
    }

    fn param_names(&self) -> &'static [&'static str] {
        self.kind.names()
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_applicable(target, problem)
    }

    fn rules(&self, target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(self.xdlops_rules(target, problem))
    }

    /// `HeuristicInit` ([`rules::heuristic_init`]).
    fn static_default(&self, target: &Target, problem: &ConvProblem) -> Vec<i64> {
        self.default_config(target, problem)
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        crate::solvers::hip_igemm::V4R4_FEATURE_NAMES
    }

    /// The V4R4-type features of the non-xdlops solvers of the same direction
    /// ([`crate::solvers::hip_igemm::features`]): log2 of the GEMM sizes, C, K, y's pixels, the
    /// GEMM sizes' divisibility, N, the precision and the filter size.
    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        use crate::solvers::hip_igemm::Kind;
        let kind = match self.direction {
            Direction::Forward => Kind::V4R4Fwd,
            Direction::BackwardWeights => Kind::V4R4WrW,
            Direction::BackwardData => Kind::BwdDataV1R1,
        };
        crate::solvers::hip_igemm::features(kind, problem)
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        match self.direction {
            Direction::Forward => (&[Direction::Forward], 3),
            Direction::BackwardData => (&[Direction::BackwardData], 3),
            Direction::BackwardWeights => (&[Direction::BackwardWeights], 3),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rules::{check, gcd, heuristic_init, lcm, Prob, Rule};
    use super::*;

    fn fwd(key: &str) -> ConvProblem {
        ConvProblem::from_db_key(key).unwrap()
    }

    #[test]
    fn gcd_and_lcm_as_miopen() {
        assert_eq!(gcd(0, 4), 4);
        assert_eq!(gcd(4, 0), 4);
        assert_eq!(gcd(12, 8), 4);
        assert_eq!(lcm(3, 4), 12);
        assert_eq!(lcm(0, 4), 0);
    }

    #[test]
    fn a_hand_checked_forward_config() {
        // N 64, C 256 -> K 256, 14x14, 3x3 pad 1: GEMM M = 256, N = 64*196 = 12544, K = 2304.
        let p = fwd("2x256x14x14x1x3x3x1x256x64x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP32xF");
        let prob = Prob::new(&p, 120);
        // 128x128 block of 64x64 waves (4 waves, 256 threads), KPerBlock 4, KPack 4.
        assert_eq!(check(XKind::FwdV4R4, &prob, &[128, 128, 4, 64, 64, 4, 0, 1, 1]), Ok(()));
        // R2: FP32 with KPerBlock 1 and KPack 8 (WORKAROUND_SWDEV_251757).
        assert_eq!(
            check(XKind::FwdV4R4, &prob, &[128, 128, 1, 64, 64, 8, 0, 1, 1]),
            Err(Rule::BlockwiseGemm)
        );
        // R2: a 128x128 wave GEMM is not in the list.
        assert_eq!(
            check(XKind::FwdV4R4, &prob, &[256, 256, 4, 128, 128, 4, 0, 1, 1]),
            Err(Rule::BlockwiseGemm)
        );
        // R1: KPack 3 is no power of two.
        assert_eq!(
            check(XKind::FwdV4R4, &prob, &[128, 128, 4, 64, 64, 3, 0, 1, 1]),
            Err(Rule::Value)
        );
        // R3: N per block 256 does not divide N = 12544 (49 * 256 = 12544: it does); M per block
        // 256 with M = 256 fine; K per block 8 with KPack 8 on K = 2304: 288 % 8 = 0 fine. A
        // K per block 4 with KPack 4 on C = 250 (K = 2250, 2250 % 4 != 0): R3.
        let p250 = fwd("2x250x14x14x1x3x3x1x256x64x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP32xF");
        assert_eq!(
            check(
                XKind::FwdV4R4,
                &Prob::new(&p250, 120),
                &[128, 128, 4, 64, 64, 4, 0, 1, 1]
            ),
            Err(Rule::GemmSize)
        );
        // R6: a 256x128 block of 128x64 waves (256 threads), KPerBlock 8, KPack 8, FP32: the
        // copies fit (A: 64 values a thread, vectors of 4 along KPack; B: 32, the 3x3 pad-1
        // input allows vectors of 1), LDS (8*8*(256+128))*4 = 98,304 bytes > 65,536.
        assert_eq!(
            check(XKind::FwdV4R4, &prob, &[256, 128, 8, 128, 64, 8, 0, 1, 1]),
            Err(Rule::Lds)
        );
        let d = heuristic_init(XKind::FwdV4R4, &prob);
        assert!(
            check(XKind::FwdV4R4, &prob, &XKind::FwdV4R4.values(&d)).is_ok(),
            "{d:?}"
        );
    }
}
