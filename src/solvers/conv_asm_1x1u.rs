//! ConvAsm1x1U: MIOpen's assembly kernel for 1x1 convolutions (forward and backward data).
//!
//! Everything here follows `../shared/miopen/README.md`, sections "Features: ConvAsm1x1U" and
//! "ConvAsm1x1U parameters and validity". MIOpen's `src/solver/conv/conv_asm_1x1u.cpp`
//! (ROCm/MIOpen commit 2d1fd997a6fc, `PerformanceConfigConvAsm1x1U::IsValidImpl`,
//! `StaticHeuristic`, `IsApplicable`, `IsModelApplicable`, `TransformFeatures`) was read to
//! confirm the rules; where the two differ, the README wins for validity and the difference is
//! noted next to the rule.
//!
//! Direction convention: for Forward the direction's input tensor is x (C channels,
//! `in_h` x `in_w`) and its output is y (K channels, `out_h` x `out_w`); for backward data the
//! input is dy (K channels, `out_h` x `out_w`) and the output is dx (C channels, `in_h` x `in_w`).
//!
//! Nothing in this module panics: problem sizes are widened to `i128` (or saturated where only
//! a comparison against a small bound follows) and config values may be any `i64`.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision};
use crate::search::{Constraint, Vocabulary};
use crate::solvers::tunable::check_integer_vocabulary;
use crate::solvers::tunable::{log2_feature, product_below, twos_feature};
use crate::solvers::{IntConstraint, IntRules, Target, Tunable, NUM_FEATURES};

/// Solver name as MIOpen spells it.
pub const NAME: &str = "ConvAsm1x1U";

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 8;

/// Parameter names in order (MIOpen's perf-db order).
pub const PARAM_NAMES: [&str; 8] = [
    "read_size",
    "k_mult",
    "chunks_per_wave",
    "chunk_size",
    "n_mult",
    "c_mult",
    "waves_c_in_group",
    "waves_k_in_group",
];

/// Elements of the data type in one 32-bit dword: 1 for fp32, 2 for fp16 (README's `e`).
/// bf16 is not applicable; it is given 2 (its size) so that nothing divides by zero.
fn elements_in_dword(p: &ConvProblem) -> i64 {
    match p.precision {
        Precision::Fp32 => 1,
        Precision::Fp16 | Precision::Bf16 => 2,
    }
}

/// (H, W) of the direction's input tensor: x for forward, dy for backward.
fn dir_in_hw(p: &ConvProblem) -> (u64, u64) {
    match p.direction {
        Direction::Forward => (p.in_h, p.in_w),
        Direction::BackwardData | Direction::BackwardWeights => (p.out_h, p.out_w),
    }
}

/// (H, W) of the direction's output tensor: y for forward, dx for backward.
fn dir_out_hw(p: &ConvProblem) -> (u64, u64) {
    match p.direction {
        Direction::Forward => (p.out_h, p.out_w),
        Direction::BackwardData | Direction::BackwardWeights => (p.in_h, p.in_w),
    }
}

/// (channels of the direction's input, channels of the direction's output).
fn dir_channels(p: &ConvProblem) -> (u64, u64) {
    match p.direction {
        Direction::Forward => (p.c, p.k),
        Direction::BackwardData | Direction::BackwardWeights => (p.k, p.c),
    }
}

/// (H, W) of the image the assembly kernel runs over (MIOpen's `AsmImgHeight`/`AsmImgWidth`):
/// the smaller tensor's, y for a forward problem (a stride-2 input is subsampled first) and dy
/// for backward data (upsampled after); with stride 1 both tensors have it.
pub fn asm_hw(p: &ConvProblem) -> (u64, u64) {
    (p.out_h, p.out_w)
}

/// MIOpen's condition for its KTN model on top of [`check_applicable`]
/// (`IsModelApplicable`, besides the gfx908 arch, which a problem does not carry): stride 1.
/// Elsewhere MIOpen uses its static default.
pub fn check_model_applicable(p: &ConvProblem) -> Result<()> {
    check_applicable(p)?;
    if p.stride_h != 1 {
        return Err(not_applicable(format!(
            "stride {}x{}: MIOpen's KTN model applies only to stride 1 (IsModelApplicable; MIOpen \
             uses its static default here; tuneinfer's own ConvAsm1x1U models answer stride 2)",
            p.stride_h, p.stride_w
        )));
    }
    Ok(())
}

/// MIOpen's 8 feature values for the gfx908 model (the diagonal of the 8x8 input):
/// `[prec, is_fwd, is_bwd, C, K, H, W, N]` with prec 2 for fp32 and 1 otherwise, C = forward x
/// channels, K = forward y channels, H, W = spatial size of the direction's input tensor
/// (x for forward, dy otherwise), N = batch. Raw values, no normalisation. Any non-forward
/// direction sets `is_bwd`, as MIOpen's `TransformFeatures` does.
pub fn features(p: &ConvProblem) -> [f32; 8] {
    let fwd = p.direction == Direction::Forward;
    let (h, w) = dir_in_hw(p);
    [
        if p.precision == Precision::Fp32 { 2.0 } else { 1.0 },
        if fwd { 1.0 } else { 0.0 },
        if fwd { 0.0 } else { 1.0 },
        p.c as f32,
        p.k as f32,
        h as f32,
        w as f32,
        p.n as f32,
    ]
}

/// The full 8x8 encoder input (row-major, zero except the diagonal; row t is time step t).
pub fn encoder_input(p: &ConvProblem) -> Vec<f32> {
    let f = features(p);
    let mut m = vec![0.0f32; 64];
    for (t, v) in f.iter().enumerate() {
        m[t * 8 + t] = *v;
    }
    m
}

fn not_applicable(reason: impl Into<String>) -> Error {
    Error::NotApplicable {
        solver: NAME.into(),
        reason: reason.into(),
    }
}

/// Ok when ConvAsm1x1U applies to the problem (MIOpen `IsApplicable`): forward or backward
/// data, fp32 or fp16, NCHW, groups 1, 1x1 filter, pad 0, dilation 1, no bias, stride 1 or 2
/// (the same both ways: MIOpen subsamples a forward stride-2 input and upsamples a backward one
/// around the stride-1 kernel), for fp16 even channel counts, at least 2 output pixels, at least
/// 4 output channels and (for backward data) output channels divisible by 4, and the kernel's
/// size limits (N, C, K < 2^16; 4*H*W*channels of each tensor < 2^24; C*H*W, K*H*W < 2^24 and
/// N*C*H*W, N*K*H*W, C*K < 2^29 over the kernel's image, see [`asm_hw`]). Also rejected: zero
/// sizes, and an output size other than a 1x1 pad-0 convolution's, `(in - 1) / stride + 1`.
/// MIOpen's KTN model takes stride 1 only (`IsModelApplicable`): [`check_model_applicable`].
pub fn check_applicable(p: &ConvProblem) -> Result<()> {
    crate::solvers::two_d_only(NAME, p)?;
    match p.direction {
        Direction::Forward | Direction::BackwardData => {}
        Direction::BackwardWeights => return Err(not_applicable("backward weights is not a ConvAsm1x1U direction")),
    }
    match p.precision {
        Precision::Fp32 | Precision::Fp16 => {}
        Precision::Bf16 => return Err(not_applicable("bf16: ConvAsm1x1U supports only fp32 and fp16")),
    }
    if p.layout != Layout::Nchw {
        return Err(not_applicable("layout NHWC: ConvAsm1x1U supports only NCHW"));
    }
    if p.groups != 1 {
        return Err(not_applicable(format!(
            "groups {}: ConvAsm1x1U supports only groups 1",
            p.groups
        )));
    }
    if p.filter_h != 1 || p.filter_w != 1 {
        return Err(not_applicable(format!(
            "filter {}x{}: ConvAsm1x1U supports only 1x1 filters",
            p.filter_h, p.filter_w
        )));
    }
    if p.pad_h != 0 || p.pad_w != 0 {
        return Err(not_applicable(format!(
            "pad {}x{}: ConvAsm1x1U supports only pad 0",
            p.pad_h, p.pad_w
        )));
    }
    if p.stride_h != p.stride_w || !(1..=2).contains(&p.stride_w) {
        return Err(not_applicable(format!(
            "stride {}x{}: ConvAsm1x1U supports strides 1x1 and 2x2 only",
            p.stride_h, p.stride_w
        )));
    }
    if p.dilation_h != 1 || p.dilation_w != 1 {
        return Err(not_applicable(format!(
            "dilation {}x{}: ConvAsm1x1U supports only dilation 1",
            p.dilation_h, p.dilation_w
        )));
    }
    if p.bias {
        return Err(not_applicable(
            "bias: ConvAsm1x1U supports only convolutions without bias",
        ));
    }
    if p.n == 0 || p.c == 0 || p.k == 0 || p.in_h == 0 || p.in_w == 0 {
        return Err(not_applicable(format!(
            "zero size (N={} C={} K={} H={} W={}): every size must be positive",
            p.n, p.c, p.k, p.in_h, p.in_w
        )));
    }
    let s = p.stride_w;
    if p.out_h != (p.in_h - 1) / s + 1 || p.out_w != (p.in_w - 1) / s + 1 {
        return Err(not_applicable(format!(
            "output {}x{} of input {}x{}: a 1x1 pad-0 convolution of stride {s} gives {}x{}",
            p.out_h,
            p.out_w,
            p.in_h,
            p.in_w,
            (p.in_h - 1) / s + 1,
            (p.in_w - 1) / s + 1
        )));
    }
    let e = elements_in_dword(p) as u128;
    let (c_in, k_out) = dir_channels(p);
    let (c_in, k_out) = (c_in as u128, k_out as u128);
    let hw2 = |(h, w): (u64, u64)| h as u128 * w as u128; // < 2^128
    let (hw_in, hw_out, hw) = (hw2(dir_in_hw(p)), hw2(dir_out_hw(p)), hw2(asm_hw(p)));
    if e == 2 {
        if !p.c.is_multiple_of(2) || !p.k.is_multiple_of(2) {
            return Err(not_applicable(format!(
                "fp16 needs even channel counts (C={}, K={})",
                p.c, p.k
            )));
        }
        if hw_out < 2 {
            return Err(not_applicable(
                "fp16 needs at least 2 output pixels per image (H*W >= 2)",
            ));
        }
        if k_out < 4 {
            return Err(not_applicable(format!(
                "fp16 needs at least 4 output channels (the direction's output has {k_out})"
            )));
        }
        if p.direction == Direction::BackwardData && k_out % 4 != 0 {
            return Err(not_applicable(format!(
                "fp16 backward data needs output channels divisible by 4 (C={})",
                p.c
            )));
        }
    }
    // MIOpen's size limits (`IsApplicable`); products that overflow u128 exceed them too.
    let (n, c, k) = (p.n as u128, p.c as u128, p.k as u128);
    let below = product_below;
    if !(below(&[n], 16) && below(&[c], 16) && below(&[k], 16)) {
        return Err(not_applicable(format!(
            "N={n} C={c} K={k}: ConvAsm1x1U needs N, C and K below 65536"
        )));
    }
    // 4 * H * W * channels of the input and output stacks (bytes as MIOpen counts them).
    if !(below(&[4, hw_in, c_in], 24) && below(&[4, hw_out, k_out], 24)) {
        return Err(not_applicable(format!(
            "{c_in} input / {k_out} output channels of {}x{}: ConvAsm1x1U needs \
             4*channels*H*W below 2^24 for both tensors",
            p.in_h, p.in_w
        )));
    }
    if !(below(&[c, hw], 24) && below(&[k, hw], 24)) {
        return Err(not_applicable("C*H*W or K*H*W: ConvAsm1x1U needs both below 2^24"));
    }
    if !(below(&[n, c, hw], 29) && below(&[n, k, hw], 29) && below(&[c, k], 29)) {
        return Err(not_applicable(
            "N*C*H*W, N*K*H*W or C*K: ConvAsm1x1U needs each below 2^29",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Validity rules
// ---------------------------------------------------------------------------------------------

/// `v` is a power of two in `lo..=hi` (`lo`, `hi` positive).
fn pow2_in(v: i128, lo: i128, hi: i128) -> bool {
    v >= lo && v <= hi && (v & (v - 1)) == 0
}

/// Integer ceil(a / b) for a >= 0, b > 0; `None` otherwise.
fn ceil_div(a: i128, b: i128) -> Option<i128> {
    if a < 0 || b <= 0 {
        return None;
    }
    Some(a / b + i128::from(a % b != 0))
}

/// Per-problem rule context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Elements per dword: 1 fp32, 2 fp16.
    e: i128,
    /// The direction is not forward (rule 2's "for backward").
    backward: bool,
    /// Channels of the direction's input tensor.
    c_in: i128,
    /// Channels of the direction's output tensor.
    k_out: i128,
    /// H*W of the direction's output tensor, saturated at `i128::MAX` (only compared with
    /// small bounds after a division by at most 64).
    hw_out: i128,
    /// HW_out % e, computed exactly (not from the saturated product).
    hw_out_mod_e: i128,
    /// Batch size.
    n: i128,
}

/// Index of each parameter in a config.
const READ_SIZE: usize = 0;
const K_MULT: usize = 1;
const CHUNKS_PER_WAVE: usize = 2;
const CHUNK_SIZE: usize = 3;
const N_MULT: usize = 4;
const C_MULT: usize = 5;
const WAVES_C: usize = 6;
const WAVES_K: usize = 7;

impl Rules {
    pub fn new(p: &ConvProblem) -> Rules {
        let e = i128::from(elements_in_dword(p));
        let (c_in, k_out) = dir_channels(p);
        let (h, w) = dir_out_hw(p);
        let hw = u128::from(h) * u128::from(w);
        let hw_out = i128::try_from(hw).unwrap_or(i128::MAX);
        let hw_out_mod_e = (i128::from(h) % e) * (i128::from(w) % e) % e;
        Rules {
            e,
            backward: p.direction != Direction::Forward,
            c_in: i128::from(c_in),
            k_out: i128::from(k_out),
            hw_out,
            hw_out_mod_e,
            n: i128::from(p.n),
        }
    }

    /// vgprs = 4 + 2*ceil(chunks_per_wave*n_mult*c_mult / e) + chunks_per_wave*n_mult*k_mult
    ///         + (HW_out % e != 0 ? 1 : 0) + 1.
    /// Only called once rules 2, 3, 5 and 6's range checks bounded the factors (<= 16*8*32).
    fn vgprs(&self, cpw: i128, n_mult: i128, c_mult: i128, k_mult: i128) -> i128 {
        let in_gprs = ceil_div(cpw * n_mult * c_mult, self.e).unwrap_or(i128::MAX / 4);
        4 + 2 * in_gprs + cpw * n_mult * k_mult + i128::from(self.hw_out_mod_e != 0) + 1
    }

    /// The rule context as the WGSL twin of [`Rules::prefix_valid`] reads it
    /// (`shaders/conv_asm_1x1u_rules.wgsl`): `[e, backward, c_in, k_out, hw_out, hw_out % e, n, 0]`,
    /// sizes saturated to `i32::MAX` (applicable problems are far below it).
    pub fn gpu_words(&self) -> [i32; 8] {
        let sat = |v: i128| i32::try_from(v.max(0)).unwrap_or(i32::MAX);
        [
            sat(self.e),
            i32::from(self.backward),
            sat(self.c_in),
            sat(self.k_out),
            sat(self.hw_out),
            sat(self.hw_out_mod_e),
            sat(self.n),
            0,
        ]
    }

    /// Checks 1..=prefix.len() of the README's list hold (false when prefix.len() > 8).
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        let len = prefix.len();
        if len > NUM_PARAMS {
            return false;
        }
        let v = |i: usize| i128::from(prefix[i]);
        let e = self.e;

        // 1. read_size in 1..4
        if len > READ_SIZE {
            let read_size = v(READ_SIZE);
            if !(1..=4).contains(&read_size) {
                return false;
            }
        }

        // 2. k_mult in {1,4,8,...,32}; k_mult % e == 0; for backward, K_out % k_mult == 0
        //    {1,4,8,...,32} is 1 or a multiple of 4 in 4..=32 (MIOpen `Is_1_4_8_12_to_32`:
        //    1, 4, 8, 12, 16, 20, 24, 28, 32).
        if len > K_MULT {
            let k_mult = v(K_MULT);
            if !(k_mult == 1 || (k_mult % 4 == 0 && (4..=32).contains(&k_mult))) {
                return false;
            }
            if k_mult % e != 0 {
                return false;
            }
            if self.backward && self.k_out % k_mult != 0 {
                return false;
            }
        }

        // 3. chunks_per_wave in 1..16; read_size*e <= chunks_per_wave; chunks_per_wave % e == 0
        if len > CHUNKS_PER_WAVE {
            let cpw = v(CHUNKS_PER_WAVE);
            if !(1..=16).contains(&cpw) {
                return false;
            }
            if v(READ_SIZE) * e > cpw {
                return false;
            }
            if cpw % e != 0 {
                return false;
            }
        }

        // 4. chunk_size power of two in 1..64; chunks_per_wave <= ceil(HW_out / chunk_size)
        if len > CHUNK_SIZE {
            let chunk_size = v(CHUNK_SIZE);
            if !pow2_in(chunk_size, 1, 64) {
                return false;
            }
            match ceil_div(self.hw_out, chunk_size) {
                Some(total_chunks) if v(CHUNKS_PER_WAVE) <= total_chunks => {}
                _ => return false,
            }
        }

        // 5. n_mult in 1..8; n_mult <= ceil(N / (64 / chunk_size))
        if len > N_MULT {
            let n_mult = v(N_MULT);
            if !(1..=8).contains(&n_mult) {
                return false;
            }
            let n_per_gpr = 64 / v(CHUNK_SIZE); // >= 1: chunk_size <= 64 by rule 4
            match ceil_div(self.n, n_per_gpr) {
                Some(total_n_blocks) if n_mult <= total_n_blocks => {}
                _ => return false,
            }
        }

        // 6. c_mult power of two in 1..32; c_mult % e == 0; vgprs < 256;
        //    25 + 2*k_mult*c_mult < 102 (sgprs), vgprs as in `Rules::vgprs`.
        if len > C_MULT {
            let c_mult = v(C_MULT);
            if !pow2_in(c_mult, 1, 32) {
                return false;
            }
            if c_mult % e != 0 {
                return false;
            }
            let vgprs = self.vgprs(v(CHUNKS_PER_WAVE), v(N_MULT), c_mult, v(K_MULT));
            if vgprs >= 256 {
                return false;
            }
            if 25 + 2 * v(K_MULT) * c_mult >= 102 {
                return false;
            }
        }

        // 7. waves_c_in_group in 1..8; waves_c_in_group <= C_in; with
        //    cpw = ceil(C_in / waves_c_in_group), both cpw and C_in - cpw*(waves_c_in_group-1)
        //    divisible by c_mult.
        //    The last-wave count may be negative (e.g. C_in=5, 4 waves: cpw=2, last=-1); the
        //    README asks only for divisibility, and MIOpen (int arithmetic, C++ `%`) agrees:
        //    -1 is divisible by c_mult 1 and not by 2.
        if len > WAVES_C {
            let waves_c = v(WAVES_C);
            if !(1..=8).contains(&waves_c) {
                return false;
            }
            if waves_c > self.c_in {
                return false;
            }
            let c_mult = v(C_MULT);
            let Some(c_per_wave) = ceil_div(self.c_in, waves_c) else {
                return false;
            };
            let c_per_last_wave = self.c_in - c_per_wave * (waves_c - 1);
            if c_per_wave % c_mult != 0 || c_per_last_wave % c_mult != 0 {
                return false;
            }
        }

        // 8. waves_k_in_group power of two in 1..8; k_mult*waves_k_in_group <= K_out;
        //    waves_c_in_group*waves_k_in_group <= 16; (256 / vgprs)*4 >= waves_c*waves_k
        if len > WAVES_K {
            let waves_k = v(WAVES_K);
            if !pow2_in(waves_k, 1, 8) {
                return false;
            }
            if v(K_MULT) * waves_k > self.k_out {
                return false;
            }
            let waves = v(WAVES_C) * waves_k;
            if waves > 16 {
                return false;
            }
            let vgprs = self.vgprs(v(CHUNKS_PER_WAVE), v(N_MULT), v(C_MULT), v(K_MULT));
            if (256 / vgprs) * 4 < waves {
                return false;
            }
        }

        true
    }

    /// Is the full config of 8 valid?
    pub fn is_valid(&self, config: &[i64]) -> bool {
        config.len() == NUM_PARAMS && self.prefix_valid(config)
    }

    /// Is there some completion of the valid prefix, with each later value drawn from `domain`,
    /// that is a fully valid config? False when the prefix itself is invalid.
    ///
    /// No search: position by position, the completion takes the value of `domain` that every
    /// later rule finds easiest among those the rules up to that position accept (the smallest;
    /// for chunk_size the largest), and the prefix is completable exactly when this completion
    /// reaches 8 values. At most `(8 - prefix.len()) * domain.len()` prefix checks.
    ///
    /// Why it is exact: a value `a` accepted at position j dominates another accepted `b` when
    /// every rule after j that holds with `b` also holds with `a` (the other values unchanged);
    /// then replacing `b` by `a` in any valid completion leaves it valid, so a completion exists
    /// iff one exists through the dominant value, and by induction iff the walk above succeeds.
    /// The rules after each position read it only monotonically (factors positive once a value
    /// passed its own range check):
    /// - read_size: rule 3 (`read_size*e <= chunks_per_wave`): smaller is easier.
    /// - k_mult: rule 6 (vgprs and `25 + 2*k_mult*c_mult`, both increasing in k_mult), rule 8
    ///   (`k_mult*waves_k <= K_out`; `256 / vgprs` non-increasing in vgprs): smaller.
    /// - chunks_per_wave: rule 4 (`chunks_per_wave <= ceil(HW_out / chunk_size)`), vgprs in 6
    ///   and 8: smaller.
    /// - chunk_size: only rule 5 (`n_mult <= ceil(N / (64 / chunk_size))`, non-decreasing in a
    ///   power-of-two chunk_size <= 64): larger is easier.
    /// - n_mult: vgprs in 6 and 8: smaller.
    /// - c_mult: rule 7 (divisibility by a power of two: a smaller power of two divides every
    ///   number a larger one divides, negative ones too), vgprs in 8: smaller.
    /// - waves_c_in_group: rule 8 (`waves_c*waves_k <= 16`, `<= (256 / vgprs)*4`): smaller.
    ///
    /// `tests/solvers/conv_asm_1x1u_rules.rs` checks the answer against an exhaustive search over the
    /// plain rules on every prefix of many problems.
    pub fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        let mut buf = [0i64; NUM_PARAMS];
        buf[..prefix.len()].copy_from_slice(prefix);
        for depth in prefix.len()..NUM_PARAMS {
            let Some(best) = self.easiest_value(&mut buf, depth, domain) else {
                return false;
            };
            buf[depth] = best;
        }
        true
    }

    /// Among the values of `domain` that the rules up to position `depth` accept after
    /// `buf[..depth]`, the one later rules find easiest (see [`Rules::completable`]): the
    /// largest chunk_size, the smallest of any other parameter. `None` when none is accepted.
    /// Leaves `buf[depth]` changed.
    fn easiest_value(&self, buf: &mut [i64; NUM_PARAMS], depth: usize, domain: &[i64]) -> Option<i64> {
        let mut best: Option<i64> = None;
        for &x in domain {
            buf[depth] = x;
            if self.prefix_valid(&buf[..=depth]) {
                best = Some(match best {
                    None => x,
                    Some(b) if depth == CHUNK_SIZE => b.max(x),
                    Some(b) => b.min(x),
                });
            }
        }
        best
    }
}

/// MIOpen's static default (`PerformanceConfigConvAsm1x1U::StaticHeuristic`), used when the
/// model does not apply or fails. With e = 1 (fp32) or 2 (fp16), each step changes some fields
/// of the previous attempt and is tried only when the previous one is invalid:
/// 1. `4, 16, 4*e, 16, 2, e, 1, 1`
/// 2. read_size 1, k_mult 4, chunk_size 1, n_mult 1      -> `1, 4, 4*e, 1, 1, e, 1, 1`
/// 3. k_mult (e == 1 ? 1 : 4), c_mult 2                  -> `1, k, 4*e, 1, 1, 2, 1, 1`
/// 4. chunks_per_wave 2, c_mult e                        -> `1, k, 2, 1, 1, e, 1, 1`
/// 5. chunks_per_wave e                                  -> `1, k, e, 1, 1, e, 1, 1`
///
/// If step 5 is invalid too, MIOpen logs "All attempts failed" (and asserts in debug builds)
/// and keeps step 5's config; so does this function.
pub fn static_default(p: &ConvProblem) -> [i64; 8] {
    let rules = Rules::new(p);
    let e = elements_in_dword(p);
    let mut c: [i64; 8] = [4, 16, 4 * e, 16, 2, e, 1, 1];
    if rules.is_valid(&c) {
        return c;
    }
    c[READ_SIZE] = 1;
    c[K_MULT] = 4;
    c[CHUNK_SIZE] = 1;
    c[N_MULT] = 1;
    if rules.is_valid(&c) {
        return c;
    }
    c[K_MULT] = if e == 1 { 1 } else { 4 };
    c[C_MULT] = 2;
    if rules.is_valid(&c) {
        return c;
    }
    c[CHUNKS_PER_WAVE] = 2;
    c[C_MULT] = e;
    if rules.is_valid(&c) {
        return c;
    }
    c[CHUNKS_PER_WAVE] = e;
    c
}

/// Formats a config as MIOpen's perf-db string, e.g. `4,8,4,16,1,4,1,8`.
pub fn format_config(c: &[i64]) -> String {
    c.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
}

/// Parses a perf-db string such as `4,8,4,16,1,4,1,8` (exactly 8 comma-separated integers;
/// spaces around a field are allowed). Errors name the bad field.
pub fn parse_config(s: &str) -> Result<[i64; 8]> {
    let what = format!("{NAME} config '{s}'");
    let fields: Vec<&str> = s.split(',').collect();
    if fields.len() != NUM_PARAMS {
        return Err(Error::format(
            what,
            format!(
                "expected {NUM_PARAMS} comma-separated values ({}), got {}",
                PARAM_NAMES.join(","),
                fields.len()
            ),
        ));
    }
    let mut out = [0i64; NUM_PARAMS];
    for (i, f) in fields.iter().enumerate() {
        out[i] = f.trim().parse::<i64>().map_err(|_| {
            Error::format(
                what.clone(),
                format!("field {} ({}): '{}' is not an integer", i + 1, PARAM_NAMES[i], f.trim()),
            )
        })?;
    }
    Ok(out)
}

/// The search's constraint for one problem and one vocabulary.
pub fn constraint(p: &ConvProblem, vocab: &Vocabulary) -> IntConstraint {
    IntConstraint::new(Box::new(Rules::new(p)), vocab)
}

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

/// The engine's view of ConvAsm1x1U (see [`crate::solvers::Solver`]).
pub struct ConvAsm1x1USolver;

impl crate::solvers::Solver for ConvAsm1x1USolver {
    fn name(&self) -> &'static str {
        NAME
    }

    /// MIOpen ships `gfx908_ConvAsm1x1U_*`; tuneinfer trains its own for other arches. The
    /// files present decide which arches work.
    fn model_name(&self, _arch: &str) -> Result<&'static str> {
        Ok(NAME)
    }

    fn check(&self, target: &crate::solvers::Target, problem: &ConvProblem) -> Result<()> {
        crate::solvers::refuse_xnack(target, NAME)?;
        check_applicable(problem)
    }

    fn encoder_input(&self, _target: &crate::solvers::Target, problem: &ConvProblem) -> Result<Vec<f32>> {
        // MIOpen's KTN model (the only one reading this input) takes stride 1 only.
        check_model_applicable(problem)?;
        Ok(encoder_input(problem))
    }

    fn constraint(
        &self,
        target: &Target,
        problem: &ConvProblem,
        vocab: &Vocabulary,
        metadata: &crate::format::metadata::KtnMetadata,
    ) -> Result<Box<dyn Constraint + Send + Sync>> {
        Ok(Box::new(IntConstraint::for_model(
            self, target, problem, vocab, metadata,
        )?))
    }

    fn fallback(&self, _target: &crate::solvers::Target, problem: &ConvProblem) -> Result<Vec<String>> {
        Ok(static_default(problem).iter().map(|v| v.to_string()).collect())
    }

    fn format_config(&self, values: &[String]) -> String {
        values.join(",")
    }

    fn check_vocabulary(&self, vocab: &Vocabulary, source: &str) -> Result<()> {
        check_integer_vocabulary(NAME, vocab, source)
    }

    fn tunable(&self) -> Option<&dyn Tunable> {
        Some(self)
    }

    fn gpu_search(&self) -> crate::solvers::GpuSearch {
        crate::solvers::GpuSearch::Rules("conv_asm_1x1u_rules")
    }

    fn wgsl_rule_words(
        &self,
        _target: &crate::solvers::Target,
        problem: &ConvProblem,
    ) -> Option<crate::solvers::RuleWords> {
        Some(crate::solvers::RuleWords::Fixed(Rules::new(problem).gpu_words()))
    }
}

impl Tunable for ConvAsm1x1USolver {
    fn solver_name(&self) -> &'static str {
        NAME
    }

    fn param_names(&self) -> &'static [&'static str] {
        &PARAM_NAMES
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        crate::solvers::refuse_xnack(target, NAME)?;
        check_applicable(problem)
    }

    fn rules(&self, _target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(Rules::new(problem))
    }

    fn static_default(&self, _target: &Target, problem: &ConvProblem) -> Vec<i64> {
        static_default(problem).to_vec()
    }

    fn miopen_model_arches(&self) -> &'static [&'static str] {
        &["gfx908"]
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        (&[Direction::Forward, Direction::BackwardData], 1)
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }

    fn problem_class(&self, problem: &ConvProblem) -> Option<&'static str> {
        (problem.stride_w == 2).then_some("stride 2")
    }
}

/// Names of tuneinfer's model features (see [`own_features`]).
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 C_in",
    "log2 K_out",
    "log2 H_in",
    "log2 W_in",
    "log2 N",
    "log2 N*H*W",
    "is_backward",
    "is_fp16",
    "twos C_in",
    "twos K_out",
    "twos H*W",
    "twos N",
];

/// tuneinfer's model features of a problem, in the direction convention (C_in, K_out; H, W of
/// the image the kernel runs over, [`asm_hw`]: the direction's input tensor's at stride 1, the
/// subsampled / not yet upsampled one at stride 2, so that a stride-2 problem reads as the
/// stride-1 problem the kernel runs): sizes as log2, direction and precision as 0/1, and the
/// power-of-two divisibility ("twos" = trailing zero bits, at most 12) of the sizes the rules
/// divide by.
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
    let (h, w) = asm_hw(p);
    let hw = h.saturating_mul(w);
    [
        l(p.in_channels()),
        l(p.out_channels()),
        l(h),
        l(w),
        l(p.n),
        l(p.n.saturating_mul(hw)),
        if p.direction == Direction::Forward { 0.0 } else { 1.0 },
        if p.precision == Precision::Fp32 { 0.0 } else { 1.0 },
        twos(p.in_channels()),
        twos(p.out_channels()),
        twos(hw),
        twos(p.n),
    ]
}
