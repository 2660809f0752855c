//! The xdlops rules (`ConvMlirIgemm{Fwd,Bwd,WrW}Xdlops`): 6 integers and 2 flags, as checked by
//! the rocMLIR that produced MIOpen's tuned rows (ROCm 5.5), following
//! `../shared/miopen/solvers/ConvMlirIgemmXdlops.md` section 5 (D = MIOpen's search domain,
//! X = rocMLIR rule, O = observed on every tuned row).
//!
//! Field meanings are rocMLIR's (`InitParamsXDL::visit`): field 1 is M per block and field 2 N
//! per block (MIOpen's member names are swapped; MIOpen never interprets them).
//!
//! The rules depend on the parameters and the data type only. Within MIOpen's search domain
//! (bCopyMore = 1, which the search always writes) they accept 190 configs for FP32, 380 for
//! FP16 and 97 for INT8.
//!
//! Version drift (doc section 5, "Version drift"): a later rocMLIR's instruction choice
//! (`MfmaInsnGroup`) would reject 25,493 of the 109,383 tuned rows (K = 1 with both wave sides
//! at least 32, or K < 4 with a side of 16). These are the rules of the tuned rocMLIR, so the tuned
//! rows pass; predictions are for MIOpen with the rocMLIR of ROCm 5.5 (the version MIOpen's
//! `requirements.txt` pins and its shipped perf databases were tuned with).

use std::sync::OnceLock;

use super::DataType;
use crate::solvers::tunable::{completable_in, valid_configs_over};
use crate::solvers::IntRules;

/// Number of parameters.
pub const NUM_PARAMS: usize = 8;

/// Parameter names in perf-db order, by rocMLIR's meaning (MIOpen's member name in brackets).
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "MPerBlock (GemmNPerBlock)",
    "NPerBlock (GemmMPerBlock)",
    "KPerBlock (GemmKPerBlock)",
    "MPerWave (GemmMPerWave)",
    "NPerWave (GemmNPerWave)",
    "KPack (GemmKPACKSize)",
    "forceUnroll (GemmAThreadCopyMoreGemmK)",
    "bCopyMore (GemmBThreadCopyMoreGemmKPack)",
];

const M: usize = 0;
const N: usize = 1;
const K: usize = 2;
const MW: usize = 3;
const NW: usize = 4;
const KP: usize = 5;
const U: usize = 6;
const B: usize = 7;

/// MIOpen's search domain per position (`SetNextValue`, fwd_xdlops.cpp:164-190), FP32/FP16.
/// bCopyMore: the search sets it to 1 before its first step, so every enumerated config has 1.
pub const DOMAIN: [&[i64]; NUM_PARAMS] = [
    &[16, 32, 64, 128, 256],
    &[4, 8, 16, 32, 64, 128, 256],
    &[1, 2, 4, 8],
    &[4, 8, 16, 32, 64, 128],
    &[16, 32, 64, 128],
    &[4, 8],
    &[0, 1],
    &[1],
];

/// INT8's K per block domain: `NextTwoPower<8,32>` started at 1 (the range assertion is compiled
/// out), so 1..32.
pub const INT8_K_DOMAIN: &[i64] = &[1, 2, 4, 8, 16, 32];

/// The (MPerWave, NPerWave) pairs with an MFMA instruction for FP32 and FP16
/// (`isValidBlockwiseGemmXDLOPS`'s wave table minus (128,128), which has no instruction,
/// `XdlopsCodeSelection::get`@941c728b).
pub const WAVES_FP: [(i64, i64); 11] = [
    (128, 64),
    (64, 128),
    (64, 64),
    (64, 32),
    (64, 16),
    (32, 64),
    (32, 32),
    (16, 64),
    (16, 16),
    (8, 64),
    (4, 64),
];

/// INT8's wave tiles (32x32x8 and 16x16x16 only).
pub const WAVES_INT8: [(i64, i64); 2] = [(32, 32), (16, 16)];

fn pow2_in(v: i64, lo: i64, hi: i64) -> bool {
    v >= lo && v <= hi && (v & (v - 1)) == 0
}

/// The xdlops rules for one data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub dtype: DataType,
}

impl Rules {
    pub fn new(dtype: DataType) -> Rules {
        Rules { dtype }
    }

    fn k_domain(&self) -> &'static [i64] {
        match self.dtype {
            DataType::Int8 => INT8_K_DOMAIN,
            _ => DOMAIN[K],
        }
    }

    fn waves(&self) -> &'static [(i64, i64)] {
        match self.dtype {
            DataType::Int8 => &WAVES_INT8,
            _ => &WAVES_FP,
        }
    }

    /// Block size = 64 * (M/MW) * (N/NW) (`obtainBlockSize`, wave size 64); needs the first 5.
    pub fn block_size(c: &[i64]) -> i128 {
        64 * i128::from(c[M] / c[MW]) * i128::from(c[N] / c[NW])
    }

    /// Do all rules the first `prefix.len()` values decide hold? (False when longer than 8.)
    pub fn prefix_valid(&self, p: &[i64]) -> bool {
        let len = p.len();
        if len > NUM_PARAMS {
            return false;
        }
        let v = |i: usize| i128::from(p[i]);
        // 1. D: M per block a power of two in 16..256.
        if len > M && !pow2_in(p[M], 16, 256) {
            return false;
        }
        // 2. D: N per block a power of two in 4..256.
        if len > N && !pow2_in(p[N], 4, 256) {
            return false;
        }
        // 3. D: K per block in {1, 2, 4, 8} (INT8: 1..32).
        if len > K && !self.k_domain().contains(&p[K]) {
            return false;
        }
        // 4. D: M per wave a power of two in 4..128; X1: M divisible by it.
        if len > MW && (!pow2_in(p[MW], 4, 128) || p[M] % p[MW] != 0) {
            return false;
        }
        // 5. D: N per wave a power of two in 16..128. X2/X5: a wave tile with an instruction for
        //    the type; K even for (32,32), a multiple of 4 for (16,16). X3: N divisible by N per
        //    wave. X4: 64 <= block size <= 256 (at most 4 waves).
        if len > NW {
            let (mw, nw) = (p[MW], p[NW]);
            if !pow2_in(nw, 16, 128) || !self.waves().contains(&(mw, nw)) {
                return false;
            }
            let k = p[K];
            if ((mw, nw) == (32, 32) && k % 2 != 0) || ((mw, nw) == (16, 16) && k % 4 != 0) {
                return false;
            }
            if p[N] % nw != 0 {
                return false;
            }
            let bs = Self::block_size(p);
            if !(64..=256).contains(&bs) {
                return false;
            }
        }
        // 6. D: KPack in {4, 8}; O1: FP32 only 4. X7 (copy per thread): K*KP*M >= bs and
        //    K*KP*N >= bs. X8 (LDS): (M + N) * K * KP * 4 bytes <= 65536. (X6, the instruction's
        //    k-coherence, adds nothing with KPack >= 4.)
        if len > KP {
            let kp = p[KP];
            if !matches!(kp, 4 | 8) || (self.dtype == DataType::Fp32 && kp != 4) {
                return false;
            }
            let bs = Self::block_size(p);
            let kk = v(K) * v(KP);
            if kk * v(M) < bs || kk * v(N) < bs {
                return false;
            }
            if (v(M) + v(N)) * kk * 4 > 65536 {
                return false;
            }
        }
        // 7. X9 ("sledgehammer hotfix"): forceUnroll = 1.
        if len > U && p[U] != 1 {
            return false;
        }
        // 8. D: bCopyMore = 1 (rocMLIR ignores it; MIOpen's search always writes 1).
        if len > B && p[B] != 1 {
            return false;
        }
        true
    }

    /// Is the full config valid?
    pub fn is_valid(&self, config: &[i64]) -> bool {
        config.len() == NUM_PARAMS && self.prefix_valid(config)
    }

    /// Every valid config of the data type (first field slowest): FP32 190, FP16 380, INT8 97.
    pub fn valid_configs(&self) -> &'static [[i64; NUM_PARAMS]] {
        static CONFIGS: [OnceLock<Vec<[i64; NUM_PARAMS]>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let slot = match self.dtype {
            DataType::Fp32 => 0,
            DataType::Fp16 => 1,
            DataType::Int8 => 2,
        };
        CONFIGS[slot].get_or_init(|| {
            let mut domain = DOMAIN;
            domain[K] = self.k_domain();
            valid_configs_over(&domain, &|p| self.prefix_valid(p))
        })
    }
}

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        Rules::prefix_valid(self, prefix)
    }

    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        self.prefix_valid(prefix) && completable_in(self.valid_configs(), prefix, domain)
    }
}
