//! ConvAsmBwdWrW3x3: MIOpen's assembly kernel for 3x3 backward-weights convolutions.
//!
//! Everything here follows `../shared/miopen/solvers/ConvAsmBwdWrW3x3.md` (transcribed from
//! ROCm/MIOpen commit 2d1fd997a, `src/solver/conv/conv_asm_dir_BwdWrW3x3.cpp` and
//! `src/include/miopen/conv/solvers.hpp:2187-2254`); the section numbers below are the doc's.
//!
//! Direction convention (doc section 3): for this W-only solver MIOpen's "in" is dy and "out"
//! is x. So the doc's K = `GetInChannels()` = dy's channels (db `in_channels`) and C =
//! `GetOutChannels()` = x's channels (db `out_channels`); H, W = `GetOutHeight/Width()` = **x**'s
//! size (the kernel's `img_h`/`img_w`; db `out_h`/`out_w` of a text key). In [`ConvProblem`] C is
//! always x's channels and K y's (= dy's), and `in_h`/`in_w` are x's size, so the rules' C, K, H,
//! W are `p.c`, `p.k`, `p.in_h`, `p.in_w`. (For a sqlite row with stride 2 the x size is not
//! stored: [`ConvProblem::from_perfdb_columns`] takes the smallest x that gives the dy size; the
//! solver applies with stride 2 only on gfx8, and no tuned row is from gfx8.)
//!
//! The rules depend on the target: the FP16 instruction estimate of rule 5 doubles where the
//! device has no dot2 instructions (every arch but gfx906 and gfx908), so [`Rules::new`] and
//! [`static_default`] take the [`Target`].
//!
//! Nothing here panics: problem sizes are clamped to [`MAX_FIELD_VALUE`] (MIOpen's `int`; a
//! parsed problem never exceeds it) and widened to `i128`, config values may be any `i64`, and a
//! division by zero (a zero stride, group count or `chunk_size - pad_w`, where MIOpen asserts)
//! makes the config invalid.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision, MAX_FIELD_VALUE};
use crate::solvers::tunable::{bit_values, domain_bits, log2_feature, product_below, twos_feature};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// Solver name as MIOpen spells it.
pub const NAME: &str = "ConvAsmBwdWrW3x3";

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 6;

/// Parameter names in perf-db order (`Visit` order, doc section 2).
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "limit_wave_cnt",
    "reverse_inout",
    "chunk_size",
    "k_per_wave",
    "pipe_lines_depth",
    "n_per_group",
];

const LIMIT_WAVE_CNT: usize = 0;
const REVERSE_INOUT: usize = 1;
const CHUNK_SIZE: usize = 2;
const K_PER_WAVE: usize = 3;
const PIPE_LINES_DEPTH: usize = 4;
const N_PER_GROUP: usize = 5;

/// The arches where MIOpen applies the solver: the deprecated-solver allow-list
/// (`src/solver.cpp:716-731`: gfx803, gfx900, gfx906, gfx908, gfx90a, gfx103*) intersected with
/// "the device name starts with gfx8 or gfx9" (`:417-419`).
pub const ARCHES: [&str; 5] = crate::solvers::tunable::DEPRECATED_GFX8_GFX9_ARCHES;

fn not_applicable(reason: impl Into<String>) -> Error {
    Error::NotApplicable {
        solver: NAME.into(),
        reason: reason.into(),
    }
}

/// A problem size as MIOpen's `int` sees it, widened (clamped to [`MAX_FIELD_VALUE`]).
fn size(v: u64) -> i128 {
    i128::from(v.min(MAX_FIELD_VALUE))
}

/// `b` divides `a` (false for `b == 0`, where MIOpen would divide by zero).
fn divides(a: i128, b: i128) -> bool {
    b != 0 && a % b == 0
}

/// Ok when MIOpen's `IsApplicable` (doc section 3, `:391-486`) holds for the problem on the
/// target: an arch of [`ARCHES`]; on gfx9 stride 1x1 only (WORKAROUND_ISSUE_532); on gfx90a not
/// FP32 (WORKAROUND_SWDEV_330460); backward weights; NCHW; pad 1x1; stride at most 2; filter 3x3;
/// dilation 1; no bias; FP32 or FP16, FP16 not on gfx8 and only with even N; 0 < W <= 512; C or K
/// (stride 1) or C (stride 2) divisible by 4*G; H, N, C, K < 2^16; C*H*W, K*H*W, 9C, 9K < 2^22;
/// N*C*H*W, N*K*H*W, 9*C*K < 2^29 (H, W: x's size). Also rejected: zero sizes or groups. Not
/// modelled (a problem does not carry them): XNACK, fp16-alt on gfx90a, environment switches,
/// packed/int-sized tensors, ROCm metadata version.
pub fn check_applicable(target: &Target, p: &ConvProblem) -> Result<()> {
    crate::solvers::two_d_only(NAME, p)?;
    let arch = target.arch.to_ascii_lowercase();
    if !ARCHES.contains(&arch.as_str()) {
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
    let gfx9 = arch.starts_with("gfx9");
    if gfx9 && (p.stride_h > 1 || p.stride_w > 1) {
        return Err(not_applicable(format!(
            "stride {}x{} on {}: {NAME} supports only stride 1x1 on gfx9 (MIOpen's WORKAROUND_ISSUE_532)",
            p.stride_h, p.stride_w, target.arch
        )));
    }
    if arch == "gfx90a" && p.precision == Precision::Fp32 {
        return Err(not_applicable(format!(
            "FP32 on gfx90a: {NAME} is off for FP32 on gfx90a (MIOpen's WORKAROUND_SWDEV_330460)"
        )));
    }
    if p.pad_h != 1 || p.pad_w != 1 {
        return Err(not_applicable(format!(
            "pad {}x{}: {NAME} supports only pad 1x1",
            p.pad_h, p.pad_w
        )));
    }
    if p.stride_h > 2 || p.stride_w > 2 || p.stride_h == 0 || p.stride_w == 0 {
        return Err(not_applicable(format!(
            "stride {}x{}: {NAME} needs strides of 1 or 2",
            p.stride_h, p.stride_w
        )));
    }
    if p.filter_h != 3 || p.filter_w != 3 {
        return Err(not_applicable(format!(
            "filter {}x{}: {NAME} supports only 3x3 filters",
            p.filter_h, p.filter_w
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
    match p.precision {
        Precision::Fp32 => {}
        Precision::Fp16 if arch.starts_with("gfx8") => {
            return Err(not_applicable(format!(
                "FP16 on {}: {NAME} supports FP16 only on gfx9",
                target.arch
            )))
        }
        Precision::Fp16 if !p.n.is_multiple_of(2) => {
            return Err(not_applicable(format!(
                "FP16 with N={}: {NAME} needs an even batch for FP16",
                p.n
            )))
        }
        Precision::Fp16 => {}
        Precision::Bf16 => {
            return Err(not_applicable(format!("BF16: {NAME} supports only FP32 and FP16")));
        }
    }
    let (h, w) = (p.in_h, p.in_w); // x's size (doc: GetOutHeight/Width)
    if p.n == 0 || p.c == 0 || p.k == 0 || h == 0 || w == 0 || p.groups == 0 {
        return Err(not_applicable(format!(
            "zero size (N={} C={} K={} x {}x{} groups {}): every size must be positive",
            p.n, p.c, p.k, h, w, p.groups
        )));
    }
    if w > 512 {
        return Err(not_applicable(format!("x width {w}: {NAME} needs W <= 512")));
    }
    let (n, c, k, g) = (p.n as u128, p.c as u128, p.k as u128, p.groups as u128);
    let four_g = 4 * g;
    let stride1 = p.stride_h == 1 && p.stride_w == 1;
    let channels_ok = if stride1 {
        c % four_g == 0 || k % four_g == 0
    } else {
        c % four_g == 0
    };
    if !channels_ok {
        let need = if stride1 { "C or K" } else { "C (stride 2)" };
        return Err(not_applicable(format!(
            "C={c} K={k} groups {g}: {NAME} needs {need} divisible by 4*groups = {four_g}"
        )));
    }
    let hw = h as u128 * w as u128;
    let below = product_below;
    if !(below(&[h as u128], 16) && below(&[n], 16) && below(&[c], 16) && below(&[k], 16)) {
        return Err(not_applicable(format!(
            "H={h} N={n} C={c} K={k}: {NAME} needs H, N, C and K below 65536"
        )));
    }
    if !(below(&[c, hw], 22) && below(&[k, hw], 22) && below(&[c, 9], 22) && below(&[k, 9], 22)) {
        return Err(not_applicable(format!(
            "C*H*W, K*H*W, C*9 or K*9: {NAME} needs each below 2^22"
        )));
    }
    if !(below(&[n, c, hw], 29) && below(&[n, k, hw], 29) && below(&[c, k, 9], 29)) {
        return Err(not_applicable(format!(
            "N*C*H*W, N*K*H*W or C*K*9: {NAME} needs each below 2^29"
        )));
    }
    Ok(())
}

/// The per-problem rule context (doc section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// x's channels (MIOpen's `GetOutChannels()`).
    c: i128,
    /// dy's channels (MIOpen's `GetInChannels()`).
    k: i128,
    /// Group count.
    g: i128,
    n: i128,
    /// x's height and width (MIOpen's `GetOutHeight/Width()`).
    h: i128,
    w: i128,
    /// Filter height R and width S.
    fil_h: i128,
    fil_w: i128,
    pad_w: i128,
    stride_h: i128,
    stride_w: i128,
    /// elements_in_dword: 2 for FP16, else 1.
    e: i128,
    /// FP16 on a device without dot2 (not gfx906, gfx908): the v_instr estimate doubles.
    dot2_emulate: bool,
}

/// What rule 5 computes of (reverse_inout, chunk_size, k_per_wave, pipe_lines_depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cost {
    accums_cnt: i128,
    vgprs: i128,
    total: i128,
}

impl Rules {
    pub fn new(target: &Target, p: &ConvProblem) -> Rules {
        let e = if p.precision == Precision::Fp16 { 2 } else { 1 };
        let dot2 = target.arch.eq_ignore_ascii_case("gfx906") || target.arch.eq_ignore_ascii_case("gfx908");
        Rules {
            c: size(p.c),
            k: size(p.k),
            g: size(p.groups),
            n: size(p.n),
            h: size(p.in_h),
            w: size(p.in_w),
            fil_h: size(p.filter_h),
            fil_w: size(p.filter_w),
            pad_w: size(p.pad_w),
            stride_h: size(p.stride_h),
            stride_w: size(p.stride_w),
            e,
            dot2_emulate: !dot2 && e == 2,
        }
    }

    /// c_per_wave = 64 / chunk_size (`solvers.hpp:2219-2223`; chunk_size in {8, 16} here).
    fn cpw(chunk: i128) -> i128 {
        64 / chunk
    }

    /// Rule 5's arithmetic (`:199-264`), C++ `int` truncating division; None where MIOpen would
    /// divide by zero. `chunk` is 8 or 16 and `pld` >= 1 (checked before).
    fn cost(&self, rio: i128, chunk: i128, kpw: i128, pld: i128) -> Option<Cost> {
        let (e, cpw) = (self.e, Self::cpw(chunk));
        let accums_cnt = (self.fil_w * self.fil_h * cpw * kpw * chunk) / 64;
        let out_w_vec = (self.w + e - 1) / e;
        let mut gprs_per_line_in = (out_w_vec + chunk - 1) / chunk;
        if chunk != 16 {
            gprs_per_line_in = (out_w_vec + chunk - self.pad_w - 1).checked_div(chunk - self.pad_w)?;
        }
        gprs_per_line_in += gprs_per_line_in.checked_rem(self.stride_w)?;
        let gprs_per_line_out = if gprs_per_line_in > 1 {
            gprs_per_line_in / self.stride_w
        } else {
            1
        };
        let vgprs_for_lines_in = (pld + self.fil_h - 1) * e * gprs_per_line_in;
        let lines_out = (pld + self.stride_h - 1).checked_div(self.stride_h)?;
        let vgprs_for_lines_out = lines_out * e * gprs_per_line_out;
        let vgprs_for_division =
            (if vgprs_for_lines_in >= 4 { 0 } else { 4 }) + (if vgprs_for_lines_out >= 3 { 0 } else { 3 });
        let k_group_size = (self.k / if rio != 0 { cpw } else { kpw }).checked_div(self.g)?;
        let pow2 = k_group_size & (k_group_size - 1) == 0;
        let vgprs = accums_cnt
            + vgprs_for_lines_in
            + vgprs_for_lines_out
            + if pow2 { 0 } else { vgprs_for_division }
            + 6
            + (e - 1);
        let unroll_factor = pld * (pld + 2);
        let steps = (self.h - 1 - pld).max(0);
        let loops = pld + unroll_factor + steps % unroll_factor + 1;
        let m_instr = 3 + (gprs_per_line_in + 3) / 4;
        let v_instr =
            (kpw * self.fil_h * gprs_per_line_out * self.fil_w * 4 * if self.dot2_emulate { 2 } else { 1 }) / 3 * e;
        let exch_instr = if e == 2 { 3 * m_instr } else { 0 };
        let total = loops * (m_instr + v_instr + exch_instr) * e;
        Some(Cost {
            accums_cnt,
            vgprs,
            total,
        })
    }

    /// Checks 1..=prefix.len() of the doc's numbered rules hold (false when longer than 6).
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        let len = prefix.len();
        if len > NUM_PARAMS {
            return false;
        }
        let v = |i: usize| i128::from(prefix[i]);
        let (c, k, g) = (self.c, self.k, self.g);
        // 1. limit_wave_cnt in 0..9.
        if len > LIMIT_WAVE_CNT && !(0..=9).contains(&v(LIMIT_WAVE_CNT)) {
            return false;
        }
        // 2. reverse_inout in {0,1}; if reverse_inout == 1: stride_h == 1 and stride_w == 1.
        if len > REVERSE_INOUT {
            let rio = v(REVERSE_INOUT);
            if !matches!(rio, 0 | 1) || (rio == 1 && !(self.stride_h == 1 && self.stride_w == 1)) {
                return false;
            }
        }
        // 3. chunk_size in {8,16};
        //    (a) (rio == 0 ? C : K) % (cpw*G) == 0;
        //    (b) C % cpw == 0 or K % cpw == 0;
        //    (c) (rio != 0 ? K : C) % cpw == 0.
        if len > CHUNK_SIZE {
            let (rio, chunk) = (v(REVERSE_INOUT), v(CHUNK_SIZE));
            if !matches!(chunk, 8 | 16) {
                return false;
            }
            let cpw = Self::cpw(chunk);
            if !divides(if rio == 0 { c } else { k }, cpw * g)
                || !(divides(c, cpw) || divides(k, cpw))
                || !divides(if rio != 0 { k } else { c }, cpw)
            {
                return false;
            }
        }
        // 4. k_per_wave in {1,2,4,8};
        //    (a) (rio == 0 ? K : C) % (k_per_wave*G) == 0;
        //    (b) chunk_size*k_per_wave <= 64;
        //    (c) (rio != 0 ? C : K) % k_per_wave == 0.
        if len > K_PER_WAVE {
            let (rio, chunk, kpw) = (v(REVERSE_INOUT), v(CHUNK_SIZE), v(K_PER_WAVE));
            if !matches!(kpw, 1 | 2 | 4 | 8)
                || !divides(if rio == 0 { k } else { c }, kpw * g)
                || chunk * kpw > 64
                || !divides(if rio != 0 { c } else { k }, kpw)
            {
                return false;
            }
        }
        // 5. pipe_lines_depth in 1..16; pipe_lines_depth <= min(H, 16); vgprs <= 256;
        //    total < 32000.
        if len > PIPE_LINES_DEPTH {
            let pld = v(PIPE_LINES_DEPTH);
            if !(1..=16).contains(&pld) || pld > self.h.min(16) {
                return false;
            }
            match self.cost(v(REVERSE_INOUT), v(CHUNK_SIZE), v(K_PER_WAVE), pld) {
                Some(cost) if cost.vgprs <= 256 && cost.total < 32000 => {}
                _ => return false,
            }
        }
        // 6. n_per_group in 1..8; n_per_group <= N; if n_per_group > 4: vgprs <= 128;
        //    if limit_wave_cnt != 0: limit_wave_cnt*4 >= n_per_group;
        //    LDS = (n_per_group - 1)*64*4*accums_cnt <= 65536.
        if len > N_PER_GROUP {
            let (lwc, npg) = (v(LIMIT_WAVE_CNT), v(N_PER_GROUP));
            if !(1..=8).contains(&npg) || npg > self.n {
                return false;
            }
            let Some(cost) = self.cost(v(REVERSE_INOUT), v(CHUNK_SIZE), v(K_PER_WAVE), v(PIPE_LINES_DEPTH)) else {
                return false;
            };
            if (npg > 4 && cost.vgprs > 128)
                || (lwc != 0 && lwc * 4 < npg)
                || (npg - 1) * 64 * 4 * cost.accums_cnt > 65536
            {
                return false;
            }
        }
        true
    }

    /// Is the full config of 6 valid?
    pub fn is_valid(&self, config: &[i64]) -> bool {
        config.len() == NUM_PARAMS && self.prefix_valid(config)
    }

    /// The per-problem words `shaders/conv_asm_bwd_wrw_3x3_rules.wgsl` reads (a
    /// [`crate::solvers::RuleWords::Table`]): `[C, K, G, N, H, W, fil_h, fil_w, pad_w, stride_h,
    /// stride_w, e, dot2_emulate]` (sizes are clamped to `i32::MAX`).
    pub fn gpu_words(&self) -> [i32; GPU_WORDS] {
        let w = |v: i128| i32::try_from(v).unwrap_or(i32::MAX);
        [
            w(self.c),
            w(self.k),
            w(self.g),
            w(self.n),
            w(self.h),
            w(self.w),
            w(self.fil_h),
            w(self.fil_w),
            w(self.pad_w),
            w(self.stride_h),
            w(self.stride_w),
            w(self.e),
            i32::from(self.dot2_emulate),
        ]
    }

    /// Is there some completion of the valid prefix, each later value drawn from `domain`, that
    /// is a fully valid config? The answer of the plain depth-first search
    /// ([`Rules::completable_by_search`]) by a bounded check (the CPU twin of the WGSL library's
    /// `solver_completable`): every rule accepts only values of a small set (1: 0..9, 2: {0,1},
    /// 3: {8,16}, 4: {1,2,4,8}, 5: 1..16, 6: 1..8), so only the domain's values in 0..16 matter.
    /// limit_wave_cnt and n_per_group are read by rules 1 and 6 only, where limit_wave_cnt 0 is
    /// the easiest (then the largest: `lwc * 4 >= npg`) and the smallest n_per_group the easiest
    /// (each check of rule 6 that holds for an n_per_group holds for a smaller one): a free one
    /// takes that value. The other free positions take every domain value their rule allows,
    /// pruned after k_per_wave: at most 2 x 2 x 4 x 16 full checks.
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
        if len == 0 {
            buf[LIMIT_WAVE_CNT] = if in_dom & 1 != 0 {
                0
            } else {
                match in_dom & 0x3fe {
                    0 => return false,
                    m => i64::from(31 - m.leading_zeros()),
                }
            };
        }
        match in_dom & 0x1fe {
            0 => return false,
            m => buf[N_PER_GROUP] = i64::from(m.trailing_zeros()),
        }
        // A position of the prefix keeps its (valid, so small) value.
        let mask = |pos: usize, set: u32| if len > pos { 1u32 << buf[pos] } else { in_dom & set };
        let (m1, m2, m3, m4) = (
            mask(REVERSE_INOUT, 0x3),
            mask(CHUNK_SIZE, 0x10100),
            mask(K_PER_WAVE, 0x116),
            mask(PIPE_LINES_DEPTH, 0x1fffe),
        );
        for rio in bit_values(m1) {
            buf[REVERSE_INOUT] = rio;
            for chunk in bit_values(m2) {
                buf[CHUNK_SIZE] = chunk;
                for kpw in bit_values(m3) {
                    buf[K_PER_WAVE] = kpw;
                    if !self.prefix_valid(&buf[..=K_PER_WAVE]) {
                        continue;
                    }
                    for pld in bit_values(m4) {
                        buf[PIPE_LINES_DEPTH] = pld;
                        if self.prefix_valid(&buf) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// The plain look-ahead: a depth-first search over `domain` for a complete valid config
    /// (the reference [`Rules::completable`] is checked against).
    pub fn completable_by_search(&self, prefix: &[i64], domain: &[i64]) -> bool {
        fn dfs(r: &Rules, buf: &mut Vec<i64>, domain: &[i64]) -> bool {
            if buf.len() == NUM_PARAMS {
                return true;
            }
            for &x in domain {
                buf.push(x);
                let found = r.prefix_valid(buf) && dfs(r, buf, domain);
                buf.pop();
                if found {
                    return true;
                }
            }
            false
        }
        self.prefix_valid(prefix) && prefix.len() <= NUM_PARAMS && dfs(self, &mut prefix.to_vec(), domain)
    }
}

/// Words per problem of [`Rules::gpu_words`].
pub const GPU_WORDS: usize = 13;

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

/// MIOpen's default (`HeuristicInit`, doc section 5, `:271-371`): chunk_size by W (16 when
/// neither C nor K is a multiple of 64/8), reverse_inout for stride 1 with C % 4 != 0 or W < 8,
/// k_per_wave and n_per_group by C*K/G, pipe_lines_depth by H and W; when that is invalid
/// `0,rio,16,1,2,1` (rio = 1 when 4*G does not divide C), then pipe_lines_depth 1.
pub fn static_default(target: &Target, p: &ConvProblem) -> [i64; NUM_PARAMS] {
    let rules = Rules::new(target, p);
    let Rules { c, k, g, n, h, w, .. } = rules;
    // 2. chunk_size = W < 48 ? 8 : 16; 16 when neither C nor K is a multiple of 64/chunk_size.
    let mut chunk = if w < 48 { 8 } else { 16 };
    if !divides(c, 64 / chunk) && !divides(k, 64 / chunk) {
        chunk = 16;
    }
    // 3. reverse_inout = 1 if stride is 1x1 and (C % 4 != 0 or W < 8).
    let stride1 = rules.stride_h == 1 && rules.stride_w == 1;
    let rio = i128::from(stride1 && (c % 4 != 0 || w < 8));
    // 4. c_k = C*K/G (C*K where G is 0: MIOpen would divide by zero).
    let c_k = (c * k).checked_div(g).unwrap_or(c * k);
    // k_per_wave = 1 if c_k < 256; 2 if c_k < 16384; else (chunk_size == 8 ? 2 : 4).
    let mut kpw: i128 = if c_k < 256 {
        1
    } else if c_k < 16384 || chunk == 8 {
        2
    } else {
        4
    };
    while kpw > 1 && !divides(if rio != 0 { c } else { k }, kpw) {
        kpw /= 2;
    }
    // 5. n_per_group by c_k, at most N, at most 4 when W >= 256.
    let mut npg: i128 = if c_k <= 512 {
        8
    } else if c_k <= 4096 {
        4
    } else if c_k <= 8192 {
        2
    } else {
        1
    };
    npg = npg.min(n);
    if w >= 256 && npg > 4 {
        npg = 4;
    }
    // 6. pipe_lines_depth = H <= 1 ? 1 : 2; H when H < 8 and W < 64.
    let mut pld: i128 = if h <= 1 { 1 } else { 2 };
    if h < 8 && w < 64 {
        pld = h;
    }
    // Every value is small (npg <= 8, pld < 8): the casts are exact.
    let config = [0, rio, chunk, kpw, pld, npg].map(|x| x as i64);
    if rules.is_valid(&config) {
        return config;
    }
    // 7. The conservative re-init.
    let rio = i64::from(!divides(c, 4 * g));
    let mut config = [0, rio, 16, 1, 2, 1];
    if !rules.is_valid(&config) {
        config[PIPE_LINES_DEPTH] = 1;
    }
    config
}

/// Names of tuneinfer's model features (see [`own_features`]).
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 C",
    "log2 K",
    "log2 H_x",
    "log2 W_x",
    "log2 N",
    "log2 N*H*W",
    "stride 2",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "log2 groups",
    "twos C",
    "twos K",
    "twos W_x",
];

/// tuneinfer's model features: log2 of C (x channels), K (dy channels), x's H and W (the
/// kernel's image size), N and N*H*W; stride 2 as 0/1; the precision; log2 of the group count
/// (the channel rules divide by it); and the power-of-two divisibility ("twos" = trailing zero
/// bits, at most 12) of C, K (rules 3, 4) and W (the line split of rule 5).
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
    let (h, w) = (p.in_h, p.in_w);
    let hw = h.saturating_mul(w);
    [
        l(p.c),
        l(p.k),
        l(h),
        l(w),
        l(p.n),
        l(p.n.saturating_mul(hw)),
        if p.stride_h > 1 || p.stride_w > 1 { 1.0 } else { 0.0 },
        crate::solvers::tunable::precision_feature(p.precision),
        l(p.groups),
        twos(p.c),
        twos(p.k),
        twos(w),
    ]
}

/// The engine's view of ConvAsmBwdWrW3x3. MIOpen ships no model of it; tuneinfer's own models
/// are `{arch}_ConvAsmBwdWrW3x3.safetensors` + `.json`.
pub struct ConvAsmBwdWrW3x3Solver;

impl OwnModelsOnly for ConvAsmBwdWrW3x3Solver {
    fn wgsl_rules(&self) -> Option<&'static str> {
        Some("conv_asm_bwd_wrw_3x3_rules")
    }

    /// The library's i32 arithmetic is exact for the problems the solver applies to (the
    /// bounds of [`check_applicable`]); others get no words (the host runs their search).
    fn wgsl_rule_words(&self, target: &Target, problem: &ConvProblem) -> Option<crate::solvers::RuleWords> {
        check_applicable(target, problem).ok()?;
        Some(crate::solvers::RuleWords::Table(
            Rules::new(target, problem).gpu_words().to_vec(),
        ))
    }
}

impl Tunable for ConvAsmBwdWrW3x3Solver {
    fn solver_name(&self) -> &'static str {
        NAME
    }

    fn param_names(&self) -> &'static [&'static str] {
        &PARAM_NAMES
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        check_applicable(target, problem)
    }

    fn rules(&self, target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(Rules::new(target, problem))
    }

    fn static_default(&self, target: &Target, problem: &ConvProblem) -> Vec<i64> {
        static_default(target, problem).to_vec()
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        (&[Direction::BackwardWeights], 3)
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }
}
