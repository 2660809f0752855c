//! `ConvMlirIgemm{Fwd,Bwd,WrW}` (non-xdlops: gfx906, gfx803 with 64 CUs, gfx103x) and
//! `ConvMlirIgemm{Fwd,Bwd,WrW}Xdlops` (gfx908, gfx90a, gfx94x): MIOpen's MLIR implicit-GEMM
//! solvers, whose kernels rocMLIR generates.
//!
//! Everything here follows `../shared/miopen/solvers/ConvMlirIgemm.md` and
//! `ConvMlirIgemmXdlops.md` (ROCm/MIOpen 2d1fd997a and the 3.5.1 fork; rocMLIR of the ROCm 5.5
//! period, which produced every tuned row of MIOpen's databases). MIOpen checks nothing itself:
//! rocMLIR decides which configs are valid, and its rules depend on the parameters (and, for
//! xdlops, the data type) only, never on the problem: rocMLIR pads the GEMM.
//!
//! - non-xdlops: 6 integers (BlockSize, M/N/K per block, M/N per thread; [`rules`]), 264 of the
//!   324 configs MIOpen's tuning searches are valid.
//! - xdlops: 6 integers and 2 flags (M/N/K per block, M/N per wave, KPack, forceUnroll,
//!   bCopyMore; [`xdlops`]), 190 valid configs for FP32, 380 for FP16, 97 for INT8.
//!
//! **The static default is MIOpen's "heuristic init request"** (`-2,-2,-2,-2,-2,-2`, xdlops
//! `-2,-2,-2,-2,-2,-2,0,0`): `GetDefaultPerformanceConfig` returns it and MIOpen then lets
//! rocMLIR choose. It is what the tuner stores when rocMLIR rejected every searched config in
//! that tuning run (3,198 rows on gfx908, 27,025 on gfx90a, none on gfx906), so such a row carries
//! no tuned parameters: the dataset counts it apart ([`Tunable::is_default_request`]) and never
//! trains on it, the rules reject it (no model can predict it) and an answer that is the default
//! means "write no entry" (MIOpen behaves the same without one).
//!
//! INT8: MIOpen applies these solvers to INT8 forward problems (38 tuned rows per arch), and the
//! rules here take the INT8 data type ([`DataType::Int8`]); tuneinfer's problems carry FP32, FP16
//! and BF16 only, so no INT8 problem reaches the solvers yet (the perf-db readers count such rows
//! as malformed problems).

pub mod rules;
pub mod xdlops;

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision};
use crate::solvers::tunable::{log2_feature, twos_feature};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// The data types the rules distinguish (rocMLIR's input type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Fp32,
    Fp16,
    Int8,
}

impl DataType {
    /// The rules' data type of a problem's precision (None for BF16: rocMLIR's `RockEnabled`
    /// refuses bf16 input coming through MIOpen).
    pub fn of(p: Precision) -> Option<DataType> {
        match p {
            Precision::Fp32 => Some(DataType::Fp32),
            Precision::Fp16 => Some(DataType::Fp16),
            Precision::Bf16 => None,
        }
    }

    /// MIOpen's spelling (`FP32`, `FP16`, `INT8`).
    pub fn as_str(self) -> &'static str {
        match self {
            DataType::Fp32 => "FP32",
            DataType::Fp16 => "FP16",
            DataType::Int8 => "INT8",
        }
    }

    /// From MIOpen's spelling (`FP32`, `FP16`, `INT8`); None otherwise.
    pub fn from_name(s: &str) -> Option<DataType> {
        match s {
            "FP32" => Some(DataType::Fp32),
            "FP16" => Some(DataType::Fp16),
            "INT8" => Some(DataType::Int8),
            _ => None,
        }
    }
}

/// MIOpen's heuristic init request of the non-xdlops solvers (all fields -2).
pub const HEURISTIC_REQUEST: [i64; rules::NUM_PARAMS] = [-2; rules::NUM_PARAMS];

/// MIOpen's heuristic init request of the xdlops solvers (6 fields -2, the flags false).
pub const HEURISTIC_REQUEST_XDLOPS: [i64; xdlops::NUM_PARAMS] = [-2, -2, -2, -2, -2, -2, 0, 0];

/// One of the six solvers.
pub struct MlirSolver {
    pub name: &'static str,
    pub direction: Direction,
    pub xdlops: bool,
}

pub static FWD: MlirSolver = MlirSolver {
    name: "ConvMlirIgemmFwd",
    direction: Direction::Forward,
    xdlops: false,
};
pub static BWD: MlirSolver = MlirSolver {
    name: "ConvMlirIgemmBwd",
    direction: Direction::BackwardData,
    xdlops: false,
};
pub static WRW: MlirSolver = MlirSolver {
    name: "ConvMlirIgemmWrW",
    direction: Direction::BackwardWeights,
    xdlops: false,
};
pub static FWD_XDLOPS: MlirSolver = MlirSolver {
    name: "ConvMlirIgemmFwdXdlops",
    direction: Direction::Forward,
    xdlops: true,
};
pub static BWD_XDLOPS: MlirSolver = MlirSolver {
    name: "ConvMlirIgemmBwdXdlops",
    direction: Direction::BackwardData,
    xdlops: true,
};
pub static WRW_XDLOPS: MlirSolver = MlirSolver {
    name: "ConvMlirIgemmWrWXdlops",
    direction: Direction::BackwardWeights,
    xdlops: true,
};

/// The six solvers: the non-xdlops three, then the xdlops three.
pub fn solvers() -> [&'static MlirSolver; 6] {
    [&FWD, &BWD, &WRW, &FWD_XDLOPS, &BWD_XDLOPS, &WRW_XDLOPS]
}

/// Devices where MIOpen applies the non-xdlops solvers: `IsComposableKernelSupportedHardware`
/// minus `IsXdlopsSupport` minus gfx900 (ConvMlirIgemm.md section 4): gfx803 with 64 CUs, gfx906
/// and gfx103x. A gfx803 target without a CU count is taken as the 64-CU part.
pub fn non_xdlops_arch(target: &Target) -> bool {
    let a = target.arch.to_ascii_lowercase();
    a == "gfx906" || a.starts_with("gfx103") || (a == "gfx803" && target.compute_units.is_none_or(|cu| cu == 64))
}

/// Devices where MIOpen applies the xdlops solvers: `IsXdlopsSupport` (gfx908, gfx90a, gfx94x at
/// 2d1fd997a; MIOpen 3.5.1 narrows the MLIR hardware list to gfx942).
pub fn xdlops_arch(target: &Target) -> bool {
    let a = target.arch.to_ascii_lowercase();
    a == "gfx908" || a == "gfx90a" || a.starts_with("gfx94")
}

/// The GEMM rocMLIR builds for a problem (per group; `GemmSize::fromConvolution`, ConvMlirIgemm.md
/// section 4). Backward data is split into kernels by the stride; this is the largest one
/// (the gemm N of every kernel is at most N * ceil(Hi/yTilda) * ceil(Wi/xTilda)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gemm {
    pub m: u64,
    pub n: u64,
    pub k: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Gemm {
    pub fn of(p: &ConvProblem) -> Gemm {
        let g = p.groups.max(1);
        let (cg, kg) = (p.c / g, p.k / g);
        let yx = p.filter_h.saturating_mul(p.filter_w);
        let out_px = p.n.saturating_mul(p.out_h).saturating_mul(p.out_w);
        match p.direction {
            Direction::Forward => Gemm {
                m: kg,
                n: out_px,
                k: cg.saturating_mul(yx),
            },
            Direction::BackwardWeights => Gemm {
                m: kg,
                n: cg.saturating_mul(yx),
                k: out_px,
            },
            Direction::BackwardData => {
                let tilda = |s: u64, d: u64| (s / gcd(s, d).max(1)).max(1);
                let (yt, xt) = (tilda(p.stride_h, p.dilation_h), tilda(p.stride_w, p.dilation_w));
                let (ydot, xdot) = (p.filter_h.div_ceil(yt), p.filter_w.div_ceil(xt));
                Gemm {
                    m: cg,
                    n: p.n
                        .saturating_mul(p.in_h.div_ceil(yt))
                        .saturating_mul(p.in_w.div_ceil(xt)),
                    k: kg.saturating_mul(ydot).saturating_mul(xdot),
                }
            }
        }
    }
}

/// Names of tuneinfer's model features (see [`own_features`]).
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 GEMM M",
    "log2 GEMM N",
    "log2 GEMM K",
    "log2 C/G",
    "log2 K/G",
    "log2 Ho*Wo",
    "twos GEMM M",
    "twos GEMM N",
    "twos GEMM K",
    "log2 G",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "layout (0 NCHW, 1 NHWC)",
];

/// tuneinfer's model features: log2 of rocMLIR's GEMM sizes ([`Gemm::of`]), of the channels per
/// group and of y's pixels; the power-of-two divisibility of the GEMM sizes (rocMLIR pads to the
/// tiles, so how far a size is from a multiple of a tile is what the timing sees); log2 of the
/// group count; the precision and the layout.
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
    let gm = Gemm::of(p);
    let g = p.groups.max(1);
    [
        l(gm.m),
        l(gm.n),
        l(gm.k),
        l(p.c / g),
        l(p.k / g),
        l(p.out_h.saturating_mul(p.out_w)),
        twos(gm.m),
        twos(gm.n),
        twos(gm.k),
        l(g),
        crate::solvers::tunable::precision_feature(p.precision),
        if p.layout == Layout::Nhwc { 1.0 } else { 0.0 },
    ]
}

/// Rules that accept no config (a data type the solvers do not take).
struct NoConfig(usize);

impl IntRules for NoConfig {
    fn config_len(&self) -> usize {
        self.0
    }
    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        prefix.is_empty()
    }
    fn completable(&self, _prefix: &[i64], _domain: &[i64]) -> bool {
        false
    }
}

impl MlirSolver {
    fn not_applicable(&self, reason: impl Into<String>) -> Error {
        Error::NotApplicable {
            solver: self.name.into(),
            reason: reason.into(),
        }
    }

    /// The solver's rules for a data type (the non-xdlops rules ignore it).
    pub fn rules_for(&self, dtype: DataType) -> Box<dyn IntRules> {
        if self.xdlops {
            Box::new(xdlops::Rules::new(dtype))
        } else {
            Box::new(rules::Rules)
        }
    }

    /// The heuristic init request (the static default) of this solver.
    pub fn heuristic_request(&self) -> &'static [i64] {
        if self.xdlops {
            &HEURISTIC_REQUEST_XDLOPS
        } else {
            &HEURISTIC_REQUEST
        }
    }

    /// MIOpen's `IsApplicable` as far as a problem carries it (ConvMlirIgemm.md section 4,
    /// ConvMlirIgemmXdlops.md section 4): the arch (see [`non_xdlops_arch`], [`xdlops_arch`]),
    /// the direction, the data type (FP32 or FP16 here; INT8 where a problem could carry it; not
    /// BF16: rocMLIR's `RockEnabled`), NCHW or NHWC (both taken), 2-D (every problem here); any
    /// group count, stride, dilation and padding (rocMLIR pads the GEMM). Not applied: the
    /// "each tensor below 2 GiB" check of a stored `Conv2dGenerator::isApplicable` (a version
    /// older than the tuning, which also allowed xdlops on gfx908 only): the tuning-era rocMLIR
    /// took such problems (277 of gfx906's forward rows and 330 of gfx908's xdlops forward rows
    /// have a tensor of 2 GiB or more). Not modelled (a problem does not carry them): the MLIR build,
    /// environment switches, the deterministic attribute, packed tensors.
    pub fn check_applicable(&self, target: &Target, p: &ConvProblem) -> Result<()> {
        crate::solvers::two_d_only(self.name, p)?;
        let name = self.name;
        if self.xdlops && !xdlops_arch(target) {
            return Err(self.not_applicable(format!(
                "arch {}: MIOpen applies {name} on xdlops GPUs only (gfx908, gfx90a, gfx94x)",
                target.arch
            )));
        }
        if !self.xdlops && !non_xdlops_arch(target) {
            let why = if xdlops_arch(target) {
                format!("MIOpen uses {name}Xdlops there ({name} is \"guaranteed slower\" on xdlops GPUs)")
            } else {
                format!("MIOpen applies {name} on gfx906, gfx103x and gfx803 with 64 CUs only")
            };
            return Err(self.not_applicable(format!("arch {}: {why}", target.arch)));
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
        if DataType::of(p.precision).is_none() {
            return Err(self.not_applicable(format!(
                "data type {}: rocMLIR does not take it through MIOpen (FP32, FP16 and INT8 only)",
                p.precision
            )));
        }
        Ok(())
    }
}

impl OwnModelsOnly for MlirSolver {
    /// The valid configs are few (at most 380) and the same for every problem of a data type:
    /// the search's constraint is their table over the model's values (on the GPU,
    /// `shaders/catalogue_rules.wgsl`).
    fn table_constraint(&self) -> bool {
        true
    }

    /// The valid configs depend on the data type only (non-xdlops: on nothing), so the table is
    /// built once per data type and vocabulary.
    fn table_key(&self, _target: &Target, problem: &ConvProblem) -> Option<u64> {
        Some(match (DataType::of(problem.precision), self.xdlops) {
            (None, _) => 0,
            (Some(_), false) => 1,
            (Some(t), true) => 2 + t as u64,
        })
    }
}

impl Tunable for MlirSolver {
    fn solver_name(&self) -> &'static str {
        self.name
    }

    fn param_names(&self) -> &'static [&'static str] {
        if self.xdlops {
            &xdlops::PARAM_NAMES
        } else {
            &rules::PARAM_NAMES
        }
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_applicable(target, problem)
    }

    fn rules(&self, _target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        match DataType::of(problem.precision) {
            Some(t) => self.rules_for(t),
            None => Box::new(NoConfig(self.param_names().len())),
        }
    }

    /// The heuristic init request: MIOpen lets rocMLIR choose (as with no perf-db entry).
    fn static_default(&self, _target: &Target, _problem: &ConvProblem) -> Vec<i64> {
        self.heuristic_request().to_vec()
    }

    fn is_default_request(&self, config: &[i64]) -> bool {
        config == self.heuristic_request()
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        match self.direction {
            Direction::Forward => (&[Direction::Forward], 3),
            Direction::BackwardData => (&[Direction::BackwardData], 3),
            Direction::BackwardWeights => (&[Direction::BackwardWeights], 3),
        }
    }
}
