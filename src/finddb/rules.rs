//! Which find-db solvers MIOpen runs: the dynamic ones (what `DYNAMIC_HYBRID`'s Find times), the
//! ones refused unless a debug switch is set, and tuneinfer's own applicability rules.

use crate::problem::{ConvProblem, Direction, Precision};
use crate::solvers::{self, Target};

/// MIOpen's `IsDynamic()` (`src/include/miopen/conv/solvers.hpp`, ROCm/MIOpen 2d1fd997a and
/// 3.5.1): true for the solvers below, false (the `SolverBase` default) for every other one
/// (MLIR, the HIP implicit GEMMs but the CK grouped ones, `ConvAsm1x1U`, `ConvAsm3x3U`,
/// `ConvOclDirectFwd*`, `ConvOclBwdWrW*`, `ConvAsmBwdWrW*`, FFT, `ConvCkIgemmFwdV6r1DlopsNchw`).
/// `ConvMPBidirectWinograd_xdlops` is dynamic only when `ConvHipImplicitGemmForwardV4R4Xdlops`
/// is, which it is not. The Winograd templates print as `ConvBinWinogradRxSf2x3`,
/// `ConvWinograd3x3MultipassWrW<3-2>`, `ConvMPBidirectWinograd<2-3>`, `ConvWinoFuryRxS<2-3>`.
pub fn is_dynamic(solver: &str) -> bool {
    const PREFIXES: [&str; 16] = [
        "ConvAsmImplicitGemmV4R1Dynamic",
        "ConvAsmImplicitGemmGTCDynamic",
        "ConvBinWinograd3x3U",
        "ConvBinWinogradRxS",
        "ConvBinWinoRxS",
        "ConvWinograd3x3MultipassWrW",
        "ConvWinoFuryRxS",
        "ConvWinoRageRxS",
        "ConvDirectNaiveConv",
        "Gemm",
        "ConvHipImplicitGemmFwdXdlops",
        "ConvHipImplicitGemmBwdXdlops",
        "ConvHipImplicitGemmGroup",
        "ConvHipImplicitGemm3DGroup",
        "ConvHipImplicitGemmF16F8F16",
        "ConvMPBidirectWinograd<",
    ];
    PREFIXES.iter().any(|p| solver.starts_with(p))
}

/// Why MIOpen refuses a solver here unless a debug switch is set, or None where it does not
/// (`../shared/miopen/finddb/README.md` cites the lines): `ConvCkIgemmFwdV6r1DlopsNchw`,
/// `ConvHipImplicitGemmBwdDataV4R1`, `ConvHipImplicitGemmBwdDataV1R1Xdlops` always;
/// `ConvHipImplicitGemmBwdDataV4R1Xdlops` on FP32, and BF16 on gfx90a;
/// `ConvHipImplicitGemmBwdDataV1R1` on BF16; `ConvOclDirectFwd1x1` and `ConvOclBwdWrW1x1` on
/// gfx10 and gfx11; `ConvAsmBwdWrW3x3` on gfx90a FP32; and, under the default fp16-alt setting
/// on gfx90a, `ConvAsm1x1U` FP16 backward data (`conv_asm_1x1u.cpp:561`) and `ConvAsmBwdWrW1x1`
/// FP16 backward weights (`conv_asm_dir_BwdWrW1x1.cpp:509`).
pub fn debug_switch_refusal(solver: &str, arch: &str, problem: &ConvProblem) -> Option<&'static str> {
    let ty = problem.precision;
    let dir = problem.direction;
    let gfx90a = arch.starts_with("gfx90a");
    match solver {
        "ConvCkIgemmFwdV6r1DlopsNchw" | "ConvHipImplicitGemmBwdDataV4R1" | "ConvHipImplicitGemmBwdDataV1R1Xdlops" => {
            Some("off unless its MIOPEN_DEBUG_ switch is set")
        }
        "ConvHipImplicitGemmBwdDataV4R1Xdlops" if ty == Precision::Fp32 || (ty == Precision::Bf16 && gfx90a) => {
            Some("off on FP32 (and BF16 on gfx90a) unless its MIOPEN_DEBUG_ switch is set")
        }
        "ConvHipImplicitGemmBwdDataV1R1" if ty == Precision::Bf16 => Some("off on BF16 unless its debug switch is set"),
        "ConvOclDirectFwd1x1" | "ConvOclBwdWrW1x1" if arch.starts_with("gfx10") || arch.starts_with("gfx11") => {
            Some("off on gfx10 and gfx11 unless its debug switch is set")
        }
        "ConvAsmBwdWrW3x3" if gfx90a && ty == Precision::Fp32 => {
            Some("off on gfx90a FP32 unless its debug switch is set")
        }
        "ConvAsm1x1U" if gfx90a && ty == Precision::Fp16 && dir == Direction::BackwardData => {
            Some("off on gfx90a FP16 backward data under MIOpen's default fp16-alt setting")
        }
        "ConvAsmBwdWrW1x1" if gfx90a && ty == Precision::Fp16 && dir == Direction::BackwardWeights => {
            Some("off on gfx90a FP16 backward weights under MIOpen's default fp16-alt setting")
        }
        _ => None,
    }
}

/// Whether MIOpen runs `solver` on `problem` as far as tuneinfer can tell: not refused by a
/// debug switch, and applicable by tuneinfer's rules where tuneinfer implements the solver
/// (`solvers::by_name` + `Solver::check`; a refusal for any other reason than the problem, such
/// as a missing catalogue, does not count against it).
pub fn runs(solver: &str, target: &Target, problem: &ConvProblem) -> bool {
    if debug_switch_refusal(solver, &target.arch, problem).is_some() {
        return false;
    }
    if applies_by_name(solver, problem) == Some(false) {
        return false;
    }
    let name = canonical(solver);
    match solvers::by_name(name) {
        Ok(s) => !matches!(
            s.check(target, problem),
            Err(crate::Error::NotApplicable { .. }) | Err(crate::Error::InvalidProblem { .. })
        ),
        Err(_) => true,
    }
}

/// What a solver's name says of its applicability: `Some(false)` for a direction the name
/// excludes (`Wrw`/`WrW`, else `Fwd`, else `Bwd`; `fft` and the OpenCL direct forward kernels
/// run forward and backward data) and for MIOpen's
/// GEMM solvers outside their geometry (`src/solver/conv/gemm*.cpp`, 2d1fd997a: 1x1 pad 0
/// stride 1; 1x1 pad 0 stride 2, 2-D; the rest), None where the name says nothing.
pub fn applies_by_name(solver: &str, p: &ConvProblem) -> Option<bool> {
    let d = p.direction;
    // Checked against every solver of ../shared's find-dbs and the directions it is listed in.
    let by_direction = if solver.contains("Wrw") || solver.contains("WrW") {
        Some(d == Direction::BackwardWeights)
    } else if matches!(
        solver,
        "fft" | "ConvOclDirectFwd" | "ConvOclDirectFwd1x1" | "ConvOclDirectFwdFused"
    ) {
        // MIOpen's OpenCL direct forward kernels run backward data too.
        Some(d != Direction::BackwardWeights)
    } else if solver.contains("Fwd") {
        Some(d == Direction::Forward)
    } else if solver.contains("Bwd") {
        Some(d == Direction::BackwardData)
    } else {
        None
    };
    if by_direction == Some(false) {
        return Some(false);
    }
    if solver.starts_with("Gemm") {
        let one = p.filter_h == 1 && p.filter_w == 1 && p.pad_h == 0 && p.pad_w == 0;
        let one = one && p.depth.is_none_or(|d| d.filter_d == 1 && d.pad_d == 0);
        let s1 = one && p.stride_h == 1 && p.stride_w == 1 && p.depth.is_none_or(|d| d.stride_d == 1);
        let s2 = one && p.stride_h == 2 && p.stride_w == 2 && p.depth.is_none();
        let fits = match solver {
            "GemmFwd1x1_0_1" | "GemmBwd1x1_stride1" | "GemmWrw1x1_stride1" => s1,
            "GemmFwd1x1_0_2" | "GemmBwd1x1_stride2" => s2,
            "GemmFwdRest" | "GemmBwdRest" => !s1 && !s2,
            "GemmWrwUniversal" => !s1,
            _ => return None,
        };
        if !fits {
            return Some(false);
        }
    }
    None
}

/// The name tuneinfer's solver table uses for a find-db solver name (the same but for the
/// `ConvOclBwdWrW2<N>` template, which tuneinfer spells the same way too).
fn canonical(solver: &str) -> &str {
    solver
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_split_follows_is_dynamic() {
        // Hand-read from solvers.hpp (2d1fd997a): `IsDynamic() const override { return true; }`.
        for s in [
            "ConvBinWinogradRxSf2x3g1",
            "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
            "GemmFwdRest",
            "ConvDirectNaiveConvWrw",
            "ConvHipImplicitGemmGroupFwdXdlops",
            "ConvHipImplicitGemm3DGroupBwdXdlops",
            "ConvWinograd3x3MultipassWrW<3-2>",
            "ConvBinWinograd3x3U",
            "ConvAsmImplicitGemmV4R1DynamicFwd_1x1",
        ] {
            assert!(is_dynamic(s), "{s}");
        }
        for s in [
            "ConvAsm1x1U",
            "ConvMlirIgemmFwdXdlops",
            "ConvOclDirectFwd",
            "ConvOclBwdWrW53",
            "ConvHipImplicitGemmV4R1Fwd",
            "ConvHipImplicitGemmForwardV4R4Xdlops",
            "ConvCkIgemmFwdV6r1DlopsNchw",
            "fft",
            "ConvAsmBwdWrW1x1",
            "ConvOclBwdWrW2<1>",
            "ConvHipImplicitGemmBwdDataV1R1",
        ] {
            assert!(!is_dynamic(s), "{s}");
        }
    }

    #[test]
    fn debug_switched_solvers_are_refused_where_the_readme_says() {
        let p = |key: &str| ConvProblem::from_perfdb_key(key).unwrap();
        let fp16_b = p("64-56-56-1x1-64-56-56-16-0x0-1x1-1x1-0-NCHW-FP16-B");
        assert!(debug_switch_refusal("ConvAsm1x1U", "gfx90a", &fp16_b).is_some());
        assert!(debug_switch_refusal("ConvAsm1x1U", "gfx908", &fp16_b).is_none());
        let fp32_b = p("64-56-56-1x1-64-56-56-16-0x0-1x1-1x1-0-NCHW-FP32-B");
        assert!(debug_switch_refusal("ConvHipImplicitGemmBwdDataV4R1Xdlops", "gfx908", &fp32_b).is_some());
        assert!(debug_switch_refusal("ConvHipImplicitGemmBwdDataV4R1Xdlops", "gfx908", &fp16_b).is_none());
        assert!(debug_switch_refusal("ConvOclDirectFwd1x1", "gfx1030", &fp32_b).is_some());
        assert!(debug_switch_refusal("ConvOclDirectFwd1x1", "gfx906", &fp32_b).is_none());
        assert!(debug_switch_refusal("ConvCkIgemmFwdV6r1DlopsNchw", "gfx906", &fp32_b).is_some());
    }
}
