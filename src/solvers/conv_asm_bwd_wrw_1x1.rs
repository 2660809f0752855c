//! ConvAsmBwdWrW1x1: MIOpen's assembly kernel for 1x1 backward-weights convolutions.
//!
//! Everything here follows `../shared/miopen/solvers/ConvAsmBwdWrW1x1.md` (transcribed from
//! ROCm/MIOpen commit 2d1fd997a, `src/solver/conv/conv_asm_dir_BwdWrW1x1.cpp` and
//! `src/include/miopen/conv/solvers.hpp:2281-2401`); the section numbers below are the doc's.
//!
//! Direction convention (doc section 3): for this W-only solver MIOpen's "in" is dy (K channels,
//! db `in_channels`, db `in_h`/`in_w` = dy size) and "out" is x (C channels, db `out_channels`).
//! In [`ConvProblem`] C is always x's channels and K y's (= dy's), so the rules' `C` is `p.c`.
//!
//! Nothing here panics: sizes are widened to `i128` and config values may be any `i64`.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision};
use crate::solvers::tunable::{
    bit_values, domain_bits, log2_feature, memoised_completable, product_below, twos_feature,
};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// Solver name as MIOpen spells it.
pub const NAME: &str = "ConvAsmBwdWrW1x1";

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 10;

/// Parameter names in perf-db order (`Visit` order, doc section 2).
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "chunk_size",
    "c_per_gpr",
    "c_mult",
    "k_per_gpr",
    "k_mult",
    "n_per_gpr",
    "n_part_cnt",
    "read_size",
    "short_store",
    "data_prefetch",
];

const CHUNK_SIZE: usize = 0;
const C_PER_GPR: usize = 1;
const C_MULT: usize = 2;
const K_PER_GPR: usize = 3;
const K_MULT: usize = 4;
const N_PER_GPR: usize = 5;
const N_PART_CNT: usize = 6;
const READ_SIZE: usize = 7;
const SHORT_STORE: usize = 8;
const DATA_PREFETCH: usize = 9;

/// The arches where MIOpen applies the solver: the deprecated-solver allow-list
/// (`src/solver.cpp:716-731`: gfx803, gfx900, gfx906, gfx908, gfx90a, gfx103*) intersected with
/// "the device name contains gfx8 or gfx9" (`conv_asm_dir_BwdWrW1x1.cpp:503-505`).
pub const ARCHES: [&str; 5] = crate::solvers::tunable::DEPRECATED_GFX8_GFX9_ARCHES;

fn not_applicable(reason: impl Into<String>) -> Error {
    Error::NotApplicable {
        solver: NAME.into(),
        reason: reason.into(),
    }
}

/// Ok when MIOpen's `IsApplicable` (doc section 3, `:475-547`) holds for the problem on the
/// target: an arch of [`ARCHES`]; backward weights; NCHW; groups 1; filter 1x1; pad 0;
/// stride_h == stride_w <= 2; dilation 1; no bias; fp32, fp16 or bf16; and the size limits
/// N, C, K < 2^16, C*H*W, K*H*W < 2^24, N*C*H*W, N*K*H*W, C*K < 2^29 with H, W the dy size.
/// Also rejected: zero sizes. Not modelled (a problem does not carry them): XNACK, the
/// fp16-alt case of gfx90a, environment switches.
pub fn check_applicable(target: &Target, p: &ConvProblem) -> Result<()> {
    crate::solvers::two_d_only(NAME, p)?;
    if !ARCHES.iter().any(|a| a.eq_ignore_ascii_case(&target.arch)) {
        return Err(not_applicable(format!(
            "arch {}: MIOpen applies {NAME} only on {}",
            target.arch,
            ARCHES.join(", ")
        )));
    }
    if p.direction != Direction::BackwardWeights {
        return Err(not_applicable(format!(
            "direction {}: {NAME} is a backward-weights (W) solver",
            p.direction
        )));
    }
    if p.layout != Layout::Nchw {
        return Err(not_applicable(format!("layout NHWC: {NAME} supports only NCHW")));
    }
    if p.groups != 1 {
        return Err(not_applicable(format!(
            "groups {}: {NAME} supports only groups 1",
            p.groups
        )));
    }
    if p.filter_h != 1 || p.filter_w != 1 {
        return Err(not_applicable(format!(
            "filter {}x{}: {NAME} supports only 1x1 filters",
            p.filter_h, p.filter_w
        )));
    }
    if p.pad_h != 0 || p.pad_w != 0 {
        return Err(not_applicable(format!(
            "pad {}x{}: {NAME} supports only pad 0",
            p.pad_h, p.pad_w
        )));
    }
    if p.stride_h != p.stride_w || p.stride_w > 2 {
        return Err(not_applicable(format!(
            "stride {}x{}: {NAME} needs equal strides of at most 2",
            p.stride_h, p.stride_w
        )));
    }
    if p.dilation_h != 1 || p.dilation_w != 1 {
        return Err(not_applicable(format!(
            "dilation {}x{}: {NAME} supports only dilation 1",
            p.dilation_h, p.dilation_w
        )));
    }
    if p.bias {
        return Err(not_applicable(format!(
            "bias: {NAME} supports only convolutions without bias"
        )));
    }
    let (h, w) = (p.out_h, p.out_w); // dy's size (doc: AsmImgHeight/Width)
    if p.n == 0 || p.c == 0 || p.k == 0 || h == 0 || w == 0 {
        return Err(not_applicable(format!(
            "zero size (N={} C={} K={} dy {}x{}): every size must be positive",
            p.n, p.c, p.k, h, w
        )));
    }
    let (n, c, k, hw) = (p.n as u128, p.c as u128, p.k as u128, h as u128 * w as u128);
    let below = product_below;
    if !(below(&[n], 16) && below(&[c], 16) && below(&[k], 16)) {
        return Err(not_applicable(format!(
            "N={n} C={c} K={k}: {NAME} needs N, C and K below 65536"
        )));
    }
    if !(below(&[c, hw], 24) && below(&[k, hw], 24)) {
        return Err(not_applicable(format!("C*H*W or K*H*W: {NAME} needs both below 2^24")));
    }
    if !(below(&[n, c, hw], 29) && below(&[n, k, hw], 29) && below(&[c, k], 29)) {
        return Err(not_applicable(format!(
            "N*C*H*W, N*K*H*W or C*K: {NAME} needs each below 2^29"
        )));
    }
    Ok(())
}

/// The per-problem rule context (doc section 4): only the data type and C enter validity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    fp32: bool,
    bf16: bool,
    /// x's channels (MIOpen's `GetOutChannels()`, db `out_channels`) are even.
    c_even: bool,
}

/// `v` is one of 1, 2, 4, 8, 16.
fn pow2_to_16(v: i128) -> bool {
    matches!(v, 1 | 2 | 4 | 8 | 16)
}

impl Rules {
    pub fn new(p: &ConvProblem) -> Rules {
        Rules {
            fp32: p.precision == Precision::Fp32,
            bf16: p.precision == Precision::Bf16,
            c_even: p.c.is_multiple_of(2),
        }
    }

    /// The per-problem words `shaders/conv_asm_bwd_wrw_1x1_rules.wgsl` reads:
    /// `[fp32, bf16, c_even, 0, 0, 0, 0, 0]`.
    pub fn gpu_words(&self) -> [i32; 8] {
        [
            i32::from(self.fp32),
            i32::from(self.bf16),
            i32::from(self.c_even),
            0,
            0,
            0,
            0,
            0,
        ]
    }

    /// Checks 1..=prefix.len() of the doc's numbered rules hold (false when longer than 10).
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        let len = prefix.len();
        if len > NUM_PARAMS {
            return false;
        }
        let v = |i: usize| i128::from(prefix[i]);
        // 1. chunk_size in {1,2,4,8,16}
        if len > CHUNK_SIZE && !pow2_to_16(v(CHUNK_SIZE)) {
            return false;
        }
        // 2. c_per_gpr in {1,2,4,8,16}; chunk_size*c_per_gpr >= 16 and
        //    (chunk_size == 1 or c_per_gpr*chunk_size <= 16)
        if len > C_PER_GPR {
            let (chunk, cpg) = (v(CHUNK_SIZE), v(C_PER_GPR));
            if !pow2_to_16(cpg) || chunk * cpg < 16 || (chunk != 1 && cpg * chunk > 16) {
                return false;
            }
        }
        // 3. c_mult in {1,2,4,8,16}
        if len > C_MULT && !pow2_to_16(v(C_MULT)) {
            return false;
        }
        // 4. k_per_gpr in {1,2,4,8,16}; k_per_gpr <= c_per_gpr
        if len > K_PER_GPR && (!pow2_to_16(v(K_PER_GPR)) || v(K_PER_GPR) > v(C_PER_GPR)) {
            return false;
        }
        // 5. k_mult in {1,2,4,8,16}
        if len > K_MULT && !pow2_to_16(v(K_MULT)) {
            return false;
        }
        // 6. n_per_gpr in {1,2,4}; hw_per_gpr = 64 / (c_per_gpr*n_per_gpr*chunk_size) in {1,2,4}
        //    and c_per_gpr*n_per_gpr*hw_per_gpr*chunk_size == 64
        if len > N_PER_GPR {
            let npg = v(N_PER_GPR);
            if !matches!(npg, 1 | 2 | 4) {
                return false;
            }
            let per = v(C_PER_GPR) * npg * v(CHUNK_SIZE);
            let hw_per_gpr = 64 / per; // per >= 16 by rule 2
            if !matches!(hw_per_gpr, 1 | 2 | 4) || per * hw_per_gpr != 64 {
                return false;
            }
        }
        // 7. n_part_cnt in 1..8; if > 1: (n_part_cnt-1) * 64 * 4 * acc_gprs <= 65536
        if len > N_PART_CNT {
            let npc = v(N_PART_CNT);
            if !(1..=8).contains(&npc) {
                return false;
            }
            if npc > 1 && (npc - 1) * 64 * 4 * self.acc_gprs(prefix) > 65536 {
                return false;
            }
        }
        // 8. read_size in 1..4
        if len > READ_SIZE && !(1..=4).contains(&v(READ_SIZE)) {
            return false;
        }
        // 9. short_store in {0,1}; fp32: short_store == 0; fp16/bf16 with short_store 0:
        //    c_mult % 2 == 0 and C % 2 == 0
        if len > SHORT_STORE {
            let ss = v(SHORT_STORE);
            if !matches!(ss, 0 | 1) {
                return false;
            }
            if self.fp32 && ss != 0 {
                return false;
            }
            if !self.fp32 && ss == 0 && (v(C_MULT) % 2 != 0 || !self.c_even) {
                return false;
            }
        }
        // 10. data_prefetch in 0..4; vgprs <= (n_part_cnt > 4 ? 128 : 256)
        if len > DATA_PREFETCH {
            let prefetch = v(DATA_PREFETCH);
            if !(0..=4).contains(&prefetch) {
                return false;
            }
            let limit = if v(N_PART_CNT) > 4 { 128 } else { 256 };
            if self.vgprs(prefix) > limit {
                return false;
            }
        }
        true
    }

    /// acc_gprs = c_mult * k_mult * k_per_gpr (`:342`; the first 5 values must be there).
    fn acc_gprs(&self, c: &[i64]) -> i128 {
        i128::from(c[C_MULT]) * i128::from(c[K_MULT]) * i128::from(c[K_PER_GPR])
    }

    /// vgprs = acc_gprs + 12 + (c_mult + k_mult)*read_size*(data_prefetch + 1) + bfp16_convert,
    /// bfp16_convert = (c_mult + k_mult)*read_size for bf16 (`:343-360`; a full config).
    fn vgprs(&self, c: &[i64]) -> i128 {
        let v = |i: usize| i128::from(c[i]);
        let loads = (v(C_MULT) + v(K_MULT)) * v(READ_SIZE);
        let bf16 = if self.bf16 { loads } else { 0 };
        self.acc_gprs(c) + 12 + loads * (v(DATA_PREFETCH) + 1) + bf16
    }

    /// Is the full config of 10 valid?
    pub fn is_valid(&self, config: &[i64]) -> bool {
        config.len() == NUM_PARAMS && self.prefix_valid(config)
    }

    /// What the rules after position `depth - 1` read of the first `depth` values: c_per_gpr
    /// (rules 2, 4, 6), chunk_size (6), c_mult (7, 9, 10), k_per_gpr and k_mult (7, 10 through
    /// acc_gprs), n_part_cnt (10) and read_size (10). short_store is read by no later rule.
    fn state_key(c: &[i64], depth: usize) -> [i64; 6] {
        let at = |i: usize| if depth > i { c[i] } else { 0 };
        [
            at(CHUNK_SIZE),
            at(C_PER_GPR),
            at(C_MULT),
            at(K_PER_GPR) * 64 + at(K_MULT),
            at(N_PART_CNT),
            at(READ_SIZE),
        ]
    }

    /// Is there some completion of the valid prefix, each later value drawn from `domain`, that
    /// is a fully valid config? Equal to the depth-first search ([`Rules::completable_by_search`])
    /// but bounded (the CPU twin of the WGSL library's `solver_completable`, which has no search
    /// within lavapipe's loop cap). Every rule accepts only values in 0..=16, so only the domain's
    /// values there matter. A free position whose later readers all get easier with a smaller
    /// value takes the domain's smallest value its own rule allows (a valid completion stays
    /// valid with it): k_per_gpr (rule 4 `k_per_gpr <= c_per_gpr`; rules 7 and 10 through
    /// acc_gprs), k_mult (7 and 10), n_per_gpr (rule 6 holds for each of 1, 2, 4 once rule 2
    /// made chunk_size * c_per_gpr 16; nothing later reads it), n_part_cnt (7: `(n_part_cnt-1) *
    /// acc_gprs`; 10: the limit 256, or 128 above 4), read_size and data_prefetch (10). The others
    /// take every domain value their rule allows: chunk_size and c_per_gpr (pruned by rule 2),
    /// c_mult (rule 9 wants it even, 7 and 10 small) and short_store (rule 9 only): at most
    /// 5 x 5 + 5 x 5 x 2 checks.
    pub fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        let len = prefix.len();
        if len >= NUM_PARAMS {
            return len == NUM_PARAMS;
        }
        // Bit v: the domain holds v (0..=16).
        let in_dom = domain_bits(domain, 16);
        let mut buf = [0i64; NUM_PARAMS];
        buf[..len].copy_from_slice(prefix);
        for (pos, set) in [
            (K_PER_GPR, POW2_TO_16),
            (K_MULT, POW2_TO_16),
            (N_PER_GPR, 0x16),
            (N_PART_CNT, 0x1fe),
            (READ_SIZE, 0x1e),
            (DATA_PREFETCH, 0x1f),
        ] {
            if len <= pos {
                match in_dom & set {
                    0 => return false,
                    m => buf[pos] = i64::from(m.trailing_zeros()),
                }
            }
        }
        // A position of the prefix keeps its (valid, so in 0..=16) value.
        let mask = |pos: usize, set: u32| if len > pos { 1u32 << buf[pos] } else { in_dom & set };
        let (m0, m1, m2, m8) = (
            mask(CHUNK_SIZE, POW2_TO_16),
            mask(C_PER_GPR, POW2_TO_16),
            mask(C_MULT, POW2_TO_16),
            mask(SHORT_STORE, 0x3),
        );
        for chunk in bit_values(m0) {
            buf[CHUNK_SIZE] = chunk;
            for cpg in bit_values(m1) {
                buf[C_PER_GPR] = cpg;
                if !self.prefix_valid(&buf[..=C_PER_GPR]) {
                    continue;
                }
                for c_mult in bit_values(m2) {
                    buf[C_MULT] = c_mult;
                    for ss in bit_values(m8) {
                        buf[SHORT_STORE] = ss;
                        if self.prefix_valid(&buf) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// The look-ahead by search: depth-first over `domain`, stopping at the first success, with
    /// a per-call memo of failed states (equal [`Rules::state_key`] at equal depth share the
    /// answer) and a prune: rule 10 with the smallest read_size (1), data_prefetch (0) and the
    /// larger register limit (n_part_cnt <= 4) is necessary for every completion, so a prefix
    /// that fixes acc_gprs and c_mult + k_mult above it is dead (the doc's "optional early
    /// pruning"). The memo and the prune only save work. [`Rules::completable`] equals it.
    pub fn completable_by_search(&self, prefix: &[i64], domain: &[i64]) -> bool {
        let dead = |buf: &[i64], depth: usize| {
            if depth <= K_MULT || depth > DATA_PREFETCH {
                return false;
            }
            let loads = i128::from(buf[C_MULT]) + i128::from(buf[K_MULT]);
            self.acc_gprs(buf) + 12 + loads * if self.bf16 { 2 } else { 1 } > 256
        };
        memoised_completable(
            &|p| self.prefix_valid(p),
            prefix,
            NUM_PARAMS,
            domain,
            &Self::state_key,
            &dead,
        )
    }
}

/// Bits 1, 2, 4, 8, 16: the values rules 1..5 accept.
const POW2_TO_16: u32 = 0x10116;

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        Rules::prefix_valid(self, prefix)
    }

    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        Rules::completable(self, prefix, domain)
    }
}

/// MIOpen's default (`HeuristicInit`, doc section 5): by c_k_256 = C*K/256, with
/// short_store 1 for fp16/bf16 (else 0) and data_prefetch 1; the fallback
/// `8,2,1,2,1,1,1,1,ss,0` when that is invalid (never, under the rules: the doc checks it).
pub fn static_default(p: &ConvProblem) -> [i64; NUM_PARAMS] {
    let ss = i64::from(p.precision != Precision::Fp32);
    let c_k_256 = (p.c as u128 * p.k as u128) / 256;
    let first: [i64; 8] = match c_k_256 {
        0..=1 => [16, 1, 1, 1, 1, 1, 1, 1],
        2..=7 => [16, 1, 2, 1, 2, 1, 1, 1],
        8..=31 => [8, 2, 2, 2, 2, 2, 2, 2],
        32..=127 => [8, 2, 4, 2, 4, 2, 2, 4],
        _ => [8, 2, 4, 2, 4, 4, 4, 4],
    };
    let mut c = [0i64; NUM_PARAMS];
    c[..8].copy_from_slice(&first);
    c[SHORT_STORE] = ss;
    c[DATA_PREFETCH] = 1;
    if Rules::new(p).is_valid(&c) {
        return c;
    }
    [8, 2, 1, 2, 1, 1, 1, 1, ss, 0]
}

/// Names of tuneinfer's model features (see [`own_features`]).
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 C",
    "log2 K",
    "log2 H_dy",
    "log2 W_dy",
    "log2 N",
    "log2 N*H*W",
    "stride 2",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "twos C",
    "twos K",
    "twos H*W",
    "twos N",
];

/// tuneinfer's model features: log2 of C (x channels), K (dy channels), dy's H and W, N and
/// N*H*W; stride 2 as 0/1; the precision; and the power-of-two divisibility ("twos" = trailing
/// zero bits, at most 12) of C, K, H*W and N.
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
    let (h, w) = (p.out_h, p.out_w);
    let hw = h.saturating_mul(w);
    [
        l(p.c),
        l(p.k),
        l(h),
        l(w),
        l(p.n),
        l(p.n.saturating_mul(hw)),
        if p.stride_h > 1 { 1.0 } else { 0.0 },
        crate::solvers::tunable::precision_feature(p.precision),
        twos(p.c),
        twos(p.k),
        twos(hw),
        twos(p.n),
    ]
}

/// The engine's view of ConvAsmBwdWrW1x1. MIOpen ships no model of it; tuneinfer's own models
/// are `{arch}_ConvAsmBwdWrW1x1.safetensors` + `.json`.
pub struct ConvAsmBwdWrW1x1Solver;

impl OwnModelsOnly for ConvAsmBwdWrW1x1Solver {
    fn wgsl_rules(&self) -> Option<&'static str> {
        Some("conv_asm_bwd_wrw_1x1_rules")
    }

    fn wgsl_rule_words(&self, _target: &Target, problem: &ConvProblem) -> Option<crate::solvers::RuleWords> {
        Some(crate::solvers::RuleWords::Fixed(Rules::new(problem).gpu_words()))
    }
}

impl Tunable for ConvAsmBwdWrW1x1Solver {
    fn solver_name(&self) -> &'static str {
        NAME
    }

    fn param_names(&self) -> &'static [&'static str] {
        &PARAM_NAMES
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        check_applicable(target, problem)
    }

    fn rules(&self, _target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(Rules::new(problem))
    }

    fn static_default(&self, _target: &Target, problem: &ConvProblem) -> Vec<i64> {
        static_default(problem).to_vec()
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        (&[Direction::BackwardWeights], 1)
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }
}
