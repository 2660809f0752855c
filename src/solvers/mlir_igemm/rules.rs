//! The non-xdlops rules (`ConvMlirIgemm{Fwd,Bwd,WrW}`): 6 integers, checked by rocMLIR of the
//! tuning era (ROCm 5.5), following `../shared/miopen/solvers/ConvMlirIgemm.md` section 5
//! (rule numbers below are the doc's positions; D = MIOpen's search domain, R = rocMLIR).
//!
//! The rules depend on the parameters only: not on the problem (rocMLIR pads the GEMM), not on
//! the data type, not on the arch. 264 of the 324 configs of MIOpen's search domain pass.
//!
//! Not transcribed (doc section 5, last paragraph): the layout-dependent copy split of
//! `computeCopyPerThread`, which can only fail for BlockSize 64 with a 128 tile side when
//! neither side vectorizes; 362 tuned rows use such configs, so it is left out (accepting them).

use std::sync::OnceLock;

use crate::solvers::tunable::{completable_in, valid_configs_over};
use crate::solvers::IntRules;

/// Number of parameters.
pub const NUM_PARAMS: usize = 6;

/// Parameter names in perf-db order (MIOpen's `Visit` order = rocMLIR's reading).
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "BlockSize",
    "GemmMPerBlock",
    "GemmNPerBlock",
    "GemmKPerBlock",
    "GemmMPerThread",
    "GemmNPerThread",
];

const BS: usize = 0;
const M: usize = 1;
const N: usize = 2;
const K: usize = 3;
const MT: usize = 4;
const NT: usize = 5;

/// MIOpen's search domain per position (`SetNextValue`, fwd.cpp:122-133).
pub const DOMAIN: [&[i64]; NUM_PARAMS] = [
    &[64, 128, 256],
    &[32, 64, 128],
    &[32, 64, 128],
    &[4, 8, 16],
    &[2, 4],
    &[2, 4],
];

/// rocMLIR's cuwaves per block (M, N) for a block size (`deriveGeneralGemmBlockStructure`:
/// 4 x 4 threads per cuwave; 2 x 2 cuwaves for 64, 4 x 2 for 128, 4 x 4 for 256; any other
/// block size fails).
pub fn cuwaves(bs: i64) -> Option<(i64, i64)> {
    match bs {
        64 => Some((2, 2)),
        128 => Some((4, 2)),
        256 => Some((4, 4)),
        _ => None,
    }
}

fn round_up(x: i128, a: i128) -> i128 {
    x.div_euclid(a) * a + if x.rem_euclid(a) == 0 { 0 } else { a }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The non-xdlops rules (problem-independent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules;

impl Rules {
    /// Do all rules the first `prefix.len()` values decide hold? (False when longer than 6.)
    pub fn prefix_valid(&self, p: &[i64]) -> bool {
        let len = p.len();
        if len > NUM_PARAMS {
            return false;
        }
        for (i, &v) in p.iter().enumerate() {
            if !DOMAIN[i].contains(&v) {
                return false;
            }
        }
        // 1. R1: the block size has a block structure (implied by D within the domain).
        if len > BS && cuwaves(p[BS]).is_none() {
            return false;
        }
        let v = |i: usize| i128::from(p[i]);
        // 4. R2 (copy per thread): every thread copies at least one element of each LDS tile.
        if len > K && (v(K) * v(M) < v(BS) || v(K) * v(N) < v(BS)) {
            return false;
        }
        let (mc, nc) = match (len > MT).then(|| cuwaves(p[BS])) {
            Some(Some(w)) => w,
            Some(None) => return false,
            None => return true,
        };
        // 5. R3: 2 <= mt <= 4; R4: M divisible by mt and by mt*4*mCuwaves.
        if len > MT {
            let mt = v(MT);
            if !(2..=4).contains(&mt) || v(M) % mt != 0 || v(M) % (mt * 4 * i128::from(mc)) != 0 {
                return false;
            }
        }
        // 6. R3: 2 <= nt <= 4; R4': N divisible by nt and by nt*4*nCuwaves; R5: LDS <= 64 KiB.
        if len > NT {
            let nt = v(NT);
            if !(2..=4).contains(&nt) || v(N) % nt != 0 || v(N) % (nt * 4 * i128::from(nc)) != 0 {
                return false;
            }
            if lds_bytes(p) > 65536 {
                return false;
            }
        }
        true
    }

    /// Is the full config valid?
    pub fn is_valid(&self, config: &[i64]) -> bool {
        config.len() == NUM_PARAMS && self.prefix_valid(config)
    }
}

/// R5 (`computeLDSBlockSizes`): with a = lcm(mt, nt), (ceil_a(K*ceil_a(M)) + ceil_a(K*ceil_a(N)))
/// * 4 bytes (4 whatever the data type). A full config.
pub fn lds_bytes(c: &[i64]) -> i128 {
    let v = |i: usize| i128::from(c[i]);
    let (mt, nt) = (v(MT), v(NT));
    let a = mt / gcd(mt, nt) * nt;
    let side = |d: i128| round_up(v(K) * round_up(d, a), a);
    (side(v(M)) + side(v(N))) * 4
}

/// Every valid config (within MIOpen's search domain), in MIOpen's odometer order reversed
/// (first field slowest): 264 configs.
pub fn valid_configs() -> &'static [[i64; NUM_PARAMS]] {
    static CONFIGS: OnceLock<Vec<[i64; NUM_PARAMS]>> = OnceLock::new();
    CONFIGS.get_or_init(|| valid_configs_over(&DOMAIN, &|p| Rules.prefix_valid(p)))
}

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        Rules::prefix_valid(self, prefix)
    }

    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        self.prefix_valid(prefix) && completable_in(valid_configs(), prefix, domain)
    }
}
