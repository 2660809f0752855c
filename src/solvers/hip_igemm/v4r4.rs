//! The V4R4 config type (6 integers) of `ConvHipImplicitGemmV4R4Fwd`,
//! `ConvHipImplicitGemmV4R4WrW` and `ConvHipImplicitGemmBwdDataV1R1`
//! (`ConvHipImplicitGemmNonXdlops.md` sections B, E and F; MIOpen 2d1fd997a
//! `conv_hip_implicit_gemm_fwd_v4r4.cpp`, `conv_hip_implicit_gemm_wrw_v4r4.cpp`,
//! `conv_hip_implicit_gemm_bwd_v1r1.cpp`). The three share the fields, domains, default list and
//! rules; only the GEMM sizes ([`super::Gemm`]) and the block-copy vector lengths differ.
//!
//! Rules are numbered like the write-up's section E and checked at the first position that
//! decides them. Nothing here panics: sizes are widened to `i128`, and a division by zero makes
//! a config invalid.

use super::{gcd, Gemm, Kind};
use crate::solvers::tunable::{completable_in, valid_configs_over};
use crate::solvers::IntRules;

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 6;

/// Parameter names in perf-db (`Visit`) order.
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "BlockSize",
    "GemmMPerBlock",
    "GemmNPerBlock",
    "GemmKPerBlock",
    "GemmMPerThread",
    "GemmNPerThread",
];

/// `IsValidValue`'s domain of each position (section B); the search enumerates their product.
pub const DOMAIN: [&[i64]; NUM_PARAMS] = [
    &[64, 128, 256],
    &[32, 64, 128],
    &[32, 64, 128],
    &[4, 8, 16],
    &[2, 4],
    &[2, 4],
];

/// `HeuristicInit`'s list (section F), in order: the default is the first valid one, else the
/// last.
pub const DEFAULTS: [[i64; NUM_PARAMS]; 21] = [
    [256, 128, 128, 16, 4, 4],
    [256, 128, 128, 8, 4, 4],
    [256, 128, 128, 4, 4, 4],
    [128, 128, 64, 16, 4, 4],
    [128, 128, 64, 8, 4, 4],
    [128, 128, 64, 4, 4, 4],
    [128, 64, 128, 16, 4, 4],
    [128, 64, 128, 8, 4, 4],
    [128, 64, 128, 4, 4, 4],
    [64, 64, 64, 16, 4, 4],
    [64, 64, 64, 8, 4, 4],
    [64, 64, 64, 4, 4, 4],
    [64, 64, 32, 16, 4, 2],
    [64, 64, 32, 8, 4, 2],
    [64, 64, 32, 4, 4, 2],
    [64, 32, 64, 16, 2, 4],
    [64, 32, 64, 8, 2, 4],
    [64, 32, 64, 4, 2, 4],
    [64, 32, 32, 16, 2, 2],
    [64, 32, 32, 8, 2, 2],
    [64, 32, 32, 4, 2, 2],
];

/// The block-GEMM clusters (ML0*ML1, NL0*NL1) of a block size (Fwd :123-148): (4,4,2,2) for 64,
/// (4,4,4,2) for 128, (4,4,4,4) for 256.
pub fn clusters(block_size: i64) -> Option<(i128, i128)> {
    match block_size {
        64 => Some((8, 8)),
        128 => Some((16, 8)),
        256 => Some((16, 16)),
        _ => None,
    }
}

/// The LDS bytes of a full config (section E, after rule 6): `2*(K*ceil(M, A) + K*ceil(N, A))*4`
/// with A = lcm(dstA, dstB, tM, tN); every one of those is 1, 2 or 4 and M, N are multiples of
/// 32 within the domain, so ceil(M, A) = M: `8*K*(M + N)`.
pub fn lds_bytes(c: &[i64]) -> i128 {
    let (m, n, k) = (i128::from(c[1]), i128::from(c[2]), i128::from(c[3]));
    let ceil4 = |v: i128| (v + 3) / 4 * 4;
    2 * (k * ceil4(m) + k * ceil4(n)) * 4
}

/// The per-problem rule context: the GEMM sizes and the block-copy vector inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub kind: Kind,
    pub gemm: Gemm,
    /// The B copy's vector bound `w` of V4R4Fwd / V4R4WrW (gcd(4, NPerBlock or KPerBlock, w,
    /// b); 0 means "vB = 1", MIOpen's strided case), or Ho*Wo for BwdDataV1R1.
    pub b_vector_bound: i128,
    /// [`Rules::valid_configs`], built at the first look-ahead.
    valid: std::sync::OnceLock<Vec<[i64; NUM_PARAMS]>>,
}

fn is_in(v: i64, set: &[i64]) -> bool {
    set.contains(&v)
}

/// Rules 5 / 6 for one side: `per_block % per_thread == 0` (:440) and
/// `(per_block / per_thread) / (L0*L1) == 2` (block GEMM :150-168, C++ integer division; the
/// code's extra divisibility test there can only fail together with this one).
fn per_thread_ok(per_block: i128, per_thread: i128, l: i128) -> bool {
    per_thread > 0 && l > 0 && per_block % per_thread == 0 && (per_block / per_thread) / l == 2
}

/// The look-ahead of rules 2 / 3: some per-thread value of {2,4} passes rule 5 / 6.
fn thread_fits(per_block: i128, l: i128) -> bool {
    DOMAIN[4].iter().any(|&t| per_thread_ok(per_block, i128::from(t), l))
}

impl Rules {
    pub fn new(kind: Kind, gemm: Gemm, b_vector_bound: i128) -> Rules {
        Rules {
            kind,
            gemm,
            b_vector_bound,
            valid: std::sync::OnceLock::new(),
        }
    }

    /// Rules 4.3-4.5 (section E): the per-thread copy sizes a, b > 0 and the copy cluster
    /// lengths > 0, with each solver's vector lengths.
    pub fn copies_ok(&self, bs: i128, m: i128, n: i128, k: i128) -> bool {
        let a = k * m / bs;
        let b = k * n / bs;
        // 4.3.
        if a <= 0 || b <= 0 {
            return false;
        }
        // A copy: (vector length, along K?) -> slice (k_slice, m_slice).
        let (a_k, a_m) = match self.kind {
            // V4R4Fwd: vector on GemmK, vA = gcd(4, KPerBlock, a).
            Kind::V4R4Fwd => {
                let v = gcd(gcd(4, k), a);
                (v, a / v)
            }
            // V4R4WrW: vA = 1 on GemmK.
            Kind::V4R4WrW => (1, a),
            // BwdDataV1R1: vector on GemmM, vA = gcd(4, MPerBlock, a).
            _ => {
                let v = gcd(gcd(4, m), a);
                (a / v, v)
            }
        };
        let (b_k, b_n) = match self.kind {
            Kind::V4R4Fwd => {
                let v = if self.b_vector_bound > 0 {
                    gcd(gcd(gcd(4, n), self.b_vector_bound), b)
                } else {
                    1
                };
                (b / v, v)
            }
            Kind::V4R4WrW => {
                let v = if self.b_vector_bound > 0 {
                    gcd(gcd(gcd(4, k), self.b_vector_bound), b)
                } else {
                    1
                };
                (v, b / v)
            }
            _ => {
                let v = gcd(gcd(gcd(4, n), self.b_vector_bound), b);
                (b / v, v)
            }
        };
        // 4.4 / 4.5: cluster lengths (block / slice) > 0.
        let cluster = |block: i128, slice: i128| slice > 0 && block / slice > 0;
        cluster(k, a_k) && cluster(m, a_m) && cluster(k, b_k) && cluster(n, b_n)
    }

    /// Do all rules that the first `prefix.len()` values decide hold (section E)?
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        let len = prefix.len();
        if len > NUM_PARAMS {
            return false;
        }
        let g = self.gemm;
        let v = |i: usize| i128::from(prefix[i]);
        // 1. BlockSize in {64,128,256}.
        let Some(&bs) = prefix.first() else {
            return true;
        };
        let Some((ml, nl)) = clusters(bs) else {
            return false;
        };
        // 2. GemmMPerBlock in {32,64,128}; gemm_m % it == 0; look-ahead (rule 5 with
        //    GemmMPerThread in {2,4}): M / (2*ML0*ML1) in {2,4}.
        if len > 1 {
            let m = v(1);
            if !is_in(prefix[1], DOMAIN[1]) || g.m % m != 0 || !thread_fits(m, ml) {
                return false;
            }
        }
        // 3. GemmNPerBlock in {32,64,128}; gemm_n % it == 0; look-ahead (rule 6).
        if len > 2 {
            let n = v(2);
            if !is_in(prefix[2], DOMAIN[2]) || g.n % n != 0 || !thread_fits(n, nl) {
                return false;
            }
        }
        // 4. GemmKPerBlock in {4,8,16}; gemm_k % it == 0; 4.3-4.5 the copies.
        if len > 3 {
            let k = v(3);
            if !is_in(prefix[3], DOMAIN[3]) || g.k % k != 0 || !self.copies_ok(i128::from(bs), v(1), v(2), k) {
                return false;
            }
        }
        // 5. GemmMPerThread in {2,4}; M % it == 0; (M/it) / (ML0*ML1) == 2.
        if len > 4 {
            let (m, t) = (v(1), v(4));
            if !is_in(prefix[4], DOMAIN[4]) || !per_thread_ok(m, t, ml) {
                return false;
            }
        }
        // 6. GemmNPerThread in {2,4}; N % it == 0; (N/it) / (NL0*NL1) == 2; LDS <= 65536.
        if len > 5 {
            let (n, t) = (v(2), v(5));
            if !is_in(prefix[5], DOMAIN[5]) || !per_thread_ok(n, t, nl) {
                return false;
            }
            if lds_bytes(prefix) > 65536 {
                return false;
            }
        }
        true
    }

    /// Every valid config (over `IsValidValue`'s domain), in domain order.
    pub fn valid_configs(&self) -> Vec<[i64; NUM_PARAMS]> {
        valid_configs_over(&DOMAIN, &|p| self.prefix_valid(p))
    }

    /// MIOpen's `HeuristicInit` (section F): the first valid config of [`DEFAULTS`], else the
    /// last one.
    pub fn default_config(&self) -> [i64; NUM_PARAMS] {
        DEFAULTS
            .iter()
            .find(|c| self.prefix_valid(&c[..]))
            .copied()
            .unwrap_or(DEFAULTS[DEFAULTS.len() - 1])
    }

    /// A key such that two problems with equal keys have the same valid configs: the GEMM sizes'
    /// divisibility by 32, 64, 128 (M, N) and 4, 8, 16 (K), and the copy vector lengths'
    /// inputs (never deciding, kept so the key is exact): gcd(4, bound).
    pub fn table_key(&self) -> u64 {
        let twos = |v: i128, cap: u32| {
            if v == 0 {
                cap
            } else {
                v.trailing_zeros().min(cap)
            }
        };
        let g = self.gemm;
        let vb = if self.b_vector_bound > 0 {
            gcd(4, self.b_vector_bound) as u64
        } else {
            0
        };
        u64::from(twos(g.m, 7))
            | u64::from(twos(g.n, 7)) << 3
            | u64::from(twos(g.k, 4)) << 6
            | vb << 9
            | (self.kind as u64) << 12
    }
}

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        Rules::prefix_valid(self, prefix)
    }

    /// Exact: is some valid config (they are at most 36) an extension of the prefix with the
    /// later values in `domain`?
    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        completable_in(self.valid.get_or_init(|| self.valid_configs()), prefix, domain)
    }
}
