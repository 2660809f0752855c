//! The V4R1 config type (16 integers, `PerformanceImplicitGemmV4R1`) of
//! `ConvHipImplicitGemmV4R1Fwd` and `ConvHipImplicitGemmV4R1WrW`
//! (`ConvHipImplicitGemmV4R1Fwd.md` sections 2, 4, 5; `ConvHipImplicitGemmNonXdlops.md` section
//! G; MIOpen 2d1fd997a `conv_hip_implicit_gemm_nonxdlops_common.cpp:179-518`). Both solvers
//! apply the same rules to their kernel dimensions ([`KernelDims`]).
//!
//! Rules are numbered like section 4 of the write-up and checked at the first position that
//! decides them; line numbers are `conv_hip_implicit_gemm_nonxdlops_common.cpp`'s. Nothing
//! here panics: sizes are widened to `i128`, and a division by zero makes a config invalid.

use crate::solvers::tunable::{completable_in, valid_configs_over};
use crate::solvers::IntRules;

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 16;

/// Parameter names in perf-db (`Visit`) order: InBlockCopyClusterLengths_N1 comes before _B.
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "BPerBlock",
    "KPerBlock",
    "EPerBlock",
    "GemmNRepeat",
    "GemmMPerThreadSubC",
    "GemmNPerThreadSubC",
    "GemmMLevel0Cluster",
    "GemmNLevel0Cluster",
    "GemmMLevel1Cluster",
    "GemmNLevel1Cluster",
    "InBlockCopyClusterLengths_E",
    "InBlockCopyClusterLengths_N1",
    "InBlockCopyClusterLengths_B",
    "InBlockCopyClusterLengths_N2",
    "WeiBlockCopyClusterLengths_E",
    "WeiBlockCopyClusterLengths_K",
];

/// `IsValidValue`'s domain of each position (:417-436).
pub const DOMAIN: [&[i64]; NUM_PARAMS] = [
    &[8, 16],
    &[16, 32, 64, 128],
    &[4, 8, 16],
    &[2],
    &[2, 4],
    &[2, 4],
    &[1, 2, 4],
    &[1, 2, 4],
    &[1, 2, 4],
    &[1, 2, 4],
    &[4, 8, 16],
    &[1, 2],
    &[8, 16],
    &[1, 2, 4],
    &[1, 2, 4],
    &[16, 32, 64, 128],
];

/// `HeuristicInit`'s steps D1-D6 (section 5), as full configs: the default is the first valid
/// one, else D6.
pub const DEFAULTS: [[i64; NUM_PARAMS]; 6] = [
    [16, 128, 8, 2, 4, 4, 4, 4, 4, 4, 8, 2, 16, 1, 2, 128],
    [8, 128, 8, 2, 4, 4, 4, 4, 4, 2, 8, 1, 8, 2, 2, 64],
    [8, 64, 8, 2, 4, 4, 4, 2, 2, 4, 8, 1, 8, 1, 4, 16],
    [16, 32, 4, 2, 4, 4, 1, 4, 4, 4, 4, 1, 16, 1, 4, 16],
    [16, 16, 4, 2, 2, 2, 2, 4, 2, 4, 4, 1, 16, 1, 4, 16],
    [8, 32, 4, 2, 2, 2, 2, 4, 4, 2, 4, 2, 8, 1, 4, 16],
];

const B_PER_BLOCK: usize = 0;
const K_PER_BLOCK: usize = 1;
const E_PER_BLOCK: usize = 2;
const N_REPEAT: usize = 3;
const M_SUB: usize = 4;
const N_SUB: usize = 5;
const ML0: usize = 6;
const NL0: usize = 7;
const ML1: usize = 8;
const NL1: usize = 9;
const IN_E: usize = 10;
const IN_N1: usize = 11;
const IN_B: usize = 12;
const IN_N2: usize = 13;
const WEI_E: usize = 14;
const WEI_K: usize = 15;

/// The kernel's dimensions (`implicitgemm_util.hpp:94-152`) as the rules read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelDims {
    /// K (output channels of the kernel, not divided by G).
    pub k: i128,
    /// C (per group).
    pub c: i128,
    /// N.
    pub n: i128,
    /// Ho * Wo.
    pub ho_wo: i128,
    /// Y * X.
    pub y_x: i128,
    /// Group count.
    pub g: i128,
    /// FP16 or BF16 (EPACK 2, 2-byte elements); else FP32.
    pub half: bool,
}

impl KernelDims {
    /// EPACK: 2 for FP16/BF16, 1 for FP32.
    pub fn epack(&self) -> i128 {
        if self.half {
            2
        } else {
            1
        }
    }

    /// E = (C / EPACK) * Y * X.
    pub fn e(&self) -> i128 {
        self.c / self.epack() * self.y_x
    }

    /// B = (N / (N1*N2)) * Ho * Wo (None for a zero divisor).
    pub fn b(&self, n1: i128, n2: i128) -> Option<i128> {
        Some(self.n.checked_div(n1 * n2)? * self.ho_wo)
    }
}

/// `GetReadWriteVectorSize` (`implicitgemm_util.hpp:221-224`).
fn rwv(v: i128) -> i128 {
    if v % 4 == 0 {
        4
    } else if v % 2 == 0 {
        2
    } else {
        1
    }
}

/// `ComputeLDSRequiredSize` of a full config (rule 16; `implicitgemm_util.hpp:403-431`), in
/// bytes; None for a zero divisor.
pub fn lds_bytes(c: &[i64], half: bool) -> Option<i128> {
    let v = |i: usize| i128::from(c[i]);
    let (epack, size) = if half { (2, 2) } else { (1, 4) };
    let in_b = rwv(v(B_PER_BLOCK).checked_div(v(IN_B))?);
    let align = if half {
        in_b.max(epack)
    } else {
        rwv(v(K_PER_BLOCK).checked_div(v(WEI_K))?)
            .max(in_b)
            .max(v(M_SUB))
            .max(v(N_SUB))
    };
    Some((v(B_PER_BLOCK) + v(K_PER_BLOCK)) * v(E_PER_BLOCK) * epack * size * 2 + 2 * align)
}

/// The per-problem rule context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub dims: KernelDims,
    /// [`Rules::valid_configs`], built at the first look-ahead.
    valid: std::sync::OnceLock<Vec<[i64; NUM_PARAMS]>>,
}

impl Rules {
    pub fn new(dims: KernelDims) -> Rules {
        Rules {
            dims,
            valid: std::sync::OnceLock::new(),
        }
    }

    /// The rules decided at position `i` (the values before it already valid).
    fn position_ok(&self, c: &[i64], i: usize) -> bool {
        let d = &self.dims;
        let v = |j: usize| i128::from(c[j]);
        if !DOMAIN[i].contains(&c[i]) {
            return false;
        }
        match i {
            // 1. BPerBlock in {8,16}.
            B_PER_BLOCK => true,
            // 2. KPerBlock in {16,...,128}; K % KPerBlock == 0 (:212); (K/KPerBlock) % G == 0
            //    (:215-217).
            K_PER_BLOCK => {
                let kpb = v(K_PER_BLOCK);
                d.k % kpb == 0 && (d.k / kpb).checked_rem(d.g) == Some(0)
            }
            // 3. EPerBlock in {4,8,16}; E % EPerBlock == 0 (:212).
            E_PER_BLOCK => d.e() % v(E_PER_BLOCK) == 0,
            // 4. GemmNRepeat == 2.
            N_REPEAT => true,
            // 5. GemmMPerThreadSubC in {2,4}.
            M_SUB => true,
            // 6. GemmNPerThreadSubC in {2,4}; N % (N1*N2) == 0 (:194); B % BPerBlock == 0
            //    (:212); FP16/BF16: GemmNPerThreadSubC == GemmMPerThreadSubC (:223-224).
            N_SUB => {
                let (n1, n2) = (v(N_REPEAT), v(N_SUB));
                d.n % (n1 * n2) == 0
                    && d.b(n1, n2).is_some_and(|b| b % v(B_PER_BLOCK) == 0)
                    && (!d.half || c[N_SUB] == c[M_SUB])
            }
            // 7., 8. GemmMLevel0Cluster, GemmNLevel0Cluster in {1,2,4}.
            ML0 | NL0 => true,
            // 9. GemmMLevel1Cluster in {1,2,4}; KPerBlock % (MSub*ML0*ML1) == 0 (:236-237);
            //    GemmMRepeat = KPerBlock / (MSub*ML0*ML1) == 2 (:258-262).
            ML1 => {
                let sub = v(M_SUB) * v(ML0) * v(ML1);
                v(K_PER_BLOCK) % sub == 0 && v(K_PER_BLOCK) / sub == 2
            }
            // 10. GemmNLevel1Cluster in {1,2,4}; (N1*N2*BPerBlock) % (NSub*NL0*NL1) == 0
            //     (:219-220); GemmNRepeat == (N1*N2*BPerBlock) / (NSub*NL0*NL1) (:239-241);
            //     64 <= block_size <= 512 (:243-249).
            NL1 => {
                let total = v(N_REPEAT) * v(N_SUB) * v(B_PER_BLOCK);
                let sub = v(N_SUB) * v(NL0) * v(NL1);
                let bs = block_size(c);
                total % sub == 0 && total / sub == v(N_REPEAT) && (64..=512).contains(&bs)
            }
            // 11. InBlockCopyClusterLengths_E in {4,8,16}; EPerBlock % it == 0 (:204);
            //     EPerBlock / it == 1 (:264, 281).
            IN_E => v(E_PER_BLOCK) % v(IN_E) == 0 && v(E_PER_BLOCK) / v(IN_E) == 1,
            // 12. InBlockCopyClusterLengths_N1 in {1,2}; N1 % it == 0 (:207).
            IN_N1 => v(N_REPEAT) % v(IN_N1) == 0,
            // 13. InBlockCopyClusterLengths_B in {8,16}; BPerBlock % it == 0 (:206);
            //     BPerBlock / it == 1 (:265, 281).
            IN_B => v(B_PER_BLOCK) % v(IN_B) == 0 && v(B_PER_BLOCK) / v(IN_B) == 1,
            // 14. InBlockCopyClusterLengths_N2 in {1,2,4}; N2 % it == 0 (:208); block_size ==
            //     _E*_N1*_B*_N2 (:251-253).
            IN_N2 => v(N_SUB) % v(IN_N2) == 0 && block_size(c) == v(IN_E) * v(IN_N1) * v(IN_B) * v(IN_N2),
            // 15. WeiBlockCopyClusterLengths_E in {1,2,4}; EPerBlock % it == 0 (:205).
            WEI_E => v(E_PER_BLOCK) % v(WEI_E) == 0,
            // 16. WeiBlockCopyClusterLengths_K in {16,...,128}; KPerBlock % it == 0 (:207);
            //     block_size == _K*_E (:255-256); LDS <= 65536 (:268-279).
            _ => {
                v(K_PER_BLOCK) % v(WEI_K) == 0
                    && block_size(c) == v(WEI_K) * v(WEI_E)
                    && lds_bytes(c, d.half).is_some_and(|l| l <= 65536)
            }
        }
    }

    /// Do all rules that the first `prefix.len()` values decide hold (section 4)?
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        prefix.len() <= NUM_PARAMS && (0..prefix.len()).all(|i| self.position_ok(prefix, i))
    }

    /// Every valid config (over `IsValidValue`'s domain), in domain order.
    pub fn valid_configs(&self) -> Vec<[i64; NUM_PARAMS]> {
        valid_configs_over(&DOMAIN, &|p| self.position_ok(p, p.len() - 1))
    }

    /// MIOpen's `HeuristicInit` (section 5): the first valid config of [`DEFAULTS`], else D6.
    pub fn default_config(&self) -> [i64; NUM_PARAMS] {
        DEFAULTS
            .iter()
            .find(|c| self.prefix_valid(&c[..]))
            .copied()
            .unwrap_or(DEFAULTS[DEFAULTS.len() - 1])
    }

    /// A key such that two problems with equal keys have the same valid configs: each decision
    /// the rules take of the problem (rule 2 for each KPerBlock, rule 3 for each EPerBlock,
    /// rule 6 for each (GemmNPerThreadSubC, BPerBlock)) and the data type's class.
    pub fn table_key(&self) -> u64 {
        let d = &self.dims;
        let mut key = 0u64;
        let mut bit = |on: bool| {
            key = key << 1 | u64::from(on);
        };
        for kpb in [16i128, 32, 64, 128] {
            bit(d.k % kpb == 0 && (d.k / kpb).checked_rem(d.g) == Some(0));
        }
        for epb in [4i128, 8, 16] {
            bit(d.e() % epb == 0);
        }
        for n2 in [2i128, 4] {
            bit(d.n % (2 * n2) == 0);
            for bpb in [8i128, 16] {
                bit(d.b(2, n2).is_some_and(|b| b % bpb == 0));
            }
        }
        bit(d.half);
        key
    }
}

/// block_size = GemmMLevel0Cluster * GemmNLevel0Cluster * GemmMLevel1Cluster * GemmNLevel1Cluster.
fn block_size(c: &[i64]) -> i128 {
    [ML0, NL0, ML1, NL1].iter().map(|&i| i128::from(c[i])).product()
}

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        Rules::prefix_valid(self, prefix)
    }

    /// Exact: is some valid config (a few hundred at most) an extension of the prefix with the
    /// later values in `domain`?
    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        completable_in(self.valid.get_or_init(|| self.valid_configs()), prefix, domain)
    }
}
