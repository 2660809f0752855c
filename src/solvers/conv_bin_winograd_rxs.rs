//! ConvBinWinogradRxSf2x3 and ConvBinWinogradRxSf3x2: MIOpen's Winograd F(2,3) and F(3,2)
//! assembly kernels, one template (`ConvBinWinoRxS<Winodata, Winofilter>`) with one tunable
//! parameter, `n_groups` (how many groups of work-groups the kernel splits its tiles into).
//!
//! Everything here follows `../shared/miopen/solvers/WINOGRAD_RXS_COMMON.md`,
//! `ConvBinWinogradRxSf2x3.md` and `ConvBinWinogradRxSf3x2.md` (transcribed from ROCm/MIOpen
//! commit 2d1fd997a, `src/solver/conv/conv_winoRxS.cpp`); the rule names A1-A10 are the
//! common doc's. One generic implementation, [`ConvBinWinogradRxS`], and two statics, [`F2X3`]
//! and [`F3X2`].
//!
//! The parameter's rule depends on the target only: `1 <= n_groups <= min(512, HW CUs)`, where
//! HW CUs is MIOpen's `GetMaxHardwareComputeUnits()`: the device's compute units (the target's
//! [`Target::compute_units`], from `--cu` or a database name such as `gfx942130`, else the arch's
//! [`default_compute_units`]), doubled on `gfx1*` (two CUs per WGP: gfx1030_36 -> 72).
//!
//! Direction convention (common doc, "Problem fields"): MIOpen's "in" is x for F and dy for B/W,
//! "out" is y for F, dx for B and x for W; [`ConvProblem::in_channels`], [`ConvProblem::in_hw`]
//! and friends give exactly that view. For W, MIOpen's shader-limit check and `HeuristicInit`
//! pass the tensors in other roles (dy's image plays the filter, the batch plays C, the filter
//! plays the output); see [`shader_args`] and [`static_default`].
//!
//! Nothing here panics: sizes are clamped to [`MAX_FIELD_VALUE`] and widened, products that
//! MIOpen computes in C++ `int` are taken exactly (`u128`; MIOpen's would wrap only for products
//! of 2^31 and more, far beyond every limit they are compared with), `GetBestNGroupParam`'s
//! `size_t` arithmetic wraps as in C++, and a zero factor (a zero stride or dilation, where MIOpen
//! asserts) gives the default 1.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision, MAX_FIELD_VALUE};
use crate::solvers::tunable::log2_feature;
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 1;

/// Parameter names in perf-db order (`Visit`: `n_groups`, `solvers.hpp:1846`).
pub const PARAM_NAMES: [&str; NUM_PARAMS] = ["n_groups"];

/// MIOpen's `MAX_CU_LIMIT` (wino:88): `n_groups` is a `Span<int, 1, 512>`.
pub const MAX_CU_LIMIT: i64 = 512;

/// One instance of MIOpen's `ConvBinWinoRxS<Winodata, Winofilter>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvBinWinogradRxS {
    name: &'static str,
    /// Winodata: the output tile (2 for F(2,3), 3 for F(3,2)).
    o_tile: u64,
    /// Winofilter: the filter tile (3 for F(2,3), 2 for F(3,2)).
    f_tile: u64,
}

/// `ConvBinWinoRxS<2,3>`: group convolutions (any direction) and backward weights only.
pub static F2X3: ConvBinWinogradRxS = ConvBinWinogradRxS {
    name: "ConvBinWinogradRxSf2x3",
    o_tile: 2,
    f_tile: 3,
};

/// `ConvBinWinoRxS<3,2>`: every direction, group 1 or more.
pub static F3X2: ConvBinWinogradRxS = ConvBinWinogradRxS {
    name: "ConvBinWinogradRxSf3x2",
    o_tile: 3,
    f_tile: 2,
};

/// The device's compute units as MIOpen's `GetMaxComputeUnits()` reports them for the arches
/// whose databases are shared (gfx942: 304, gfx906: 60, gfx900: 56, gfx1030: 36 WGPs) and a
/// few more of MIOpen's arches (the usual part of each: gfx908 120, gfx90a 104, gfx940 228,
/// gfx941 304, gfx1100 48, gfx1101 30, gfx1102 16). None for any other name: give `--cu`.
pub fn default_compute_units(arch: &str) -> Option<u32> {
    Some(match arch.to_ascii_lowercase().as_str() {
        "gfx942" | "gfx941" => 304,
        "gfx940" => 228,
        "gfx90a" => 104,
        "gfx908" => 120,
        "gfx906" => 60,
        "gfx900" => 56,
        "gfx1030" => 36,
        "gfx1100" => 48,
        "gfx1101" => 30,
        "gfx1102" => 16,
        _ => return None,
    })
}

/// MIOpen's `GetMaxHardwareComputeUnits()` (handle.hpp:160-165): the target's compute units
/// (else the arch's default), doubled where the name starts with `gfx1`. None when neither is
/// known.
pub fn hardware_compute_units(target: &Target) -> Option<u64> {
    let cu = u64::from(target.compute_units.or_else(|| default_compute_units(&target.arch))?);
    Some(if target.arch.to_ascii_lowercase().starts_with("gfx1") {
        cu * 2
    } else {
        cu
    })
}

/// The largest valid `n_groups` on the target: `min(512, HW CUs)` (0 when the CU count is
/// unknown or zero: then no value is valid).
pub fn max_n_groups(target: &Target) -> i64 {
    hardware_compute_units(target).map_or(0, |cu| (cu.min(MAX_CU_LIMIT as u64)) as i64)
}

/// A problem size as MIOpen's `int` sees it, widened (clamped to [`MAX_FIELD_VALUE`]).
fn size(v: u64) -> u128 {
    u128::from(v.min(MAX_FIELD_VALUE))
}

/// `IsShaderConstraintsMet`'s arguments (R, S, C, K, H, W, OH, OW, N) (A10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShaderArgs {
    pub r: u128,
    pub s: u128,
    pub c: u128,
    pub k: u128,
    pub h: u128,
    pub w: u128,
    pub oh: u128,
    pub ow: u128,
    pub n: u128,
}

/// The arguments MIOpen passes to the shader-limit check (wino:732-756). F and B: the filter
/// (R, S), channels per group of MIOpen's in and out (C, K), in's and out's image (H, W, OH, OW)
/// and the batch. W: dy's image as R, S, the batch as C, dy's channels per group as K, x's image
/// as H, W, the filter as OH, OW and x's channels per group as N. (Zero groups count as 1: such a
/// problem is refused before.)
pub fn shader_args(p: &ConvProblem) -> ShaderArgs {
    let g = size(p.groups).max(1);
    let (in_c, out_c) = (size(p.in_channels()) / g, size(p.out_channels()) / g);
    let ((ih, iw), (oh, ow)) = (p.in_hw(), p.out_hw());
    let (ih, iw, oh, ow) = (size(ih), size(iw), size(oh), size(ow));
    let (fh, fw, n) = (size(p.filter_h), size(p.filter_w), size(p.n));
    if p.direction == Direction::BackwardWeights {
        ShaderArgs {
            r: ih,
            s: iw,
            c: n,
            k: in_c,
            h: oh,
            w: ow,
            oh: fh,
            ow: fw,
            n: out_c,
        }
    } else {
        ShaderArgs {
            r: fh,
            s: fw,
            c: in_c,
            k: out_c,
            h: ih,
            w: iw,
            oh,
            ow,
            n,
        }
    }
}

const P16: u128 = 1 << 16;

/// The `< 2^16` limits both shader versions share, or the first that fails.
fn common_limits(a: &ShaderArgs, p: &ConvProblem) -> std::result::Result<(), String> {
    let fields = [
        ("N", a.n),
        ("C", a.c),
        ("H", a.h),
        ("W", a.w),
        ("K", a.k),
        ("S", a.s),
        ("R", a.r),
        ("OH", a.oh),
        ("OW", a.ow),
        ("pad_w", size(p.pad_w)),
        ("pad_h", size(p.pad_h)),
    ];
    match fields.iter().find(|(_, v)| *v >= P16) {
        Some((name, v)) => Err(format!("{name} = {v} (needs < 2^16)")),
        None => Ok(()),
    }
}

/// `IsShaderConstraintsMetV21` (wino:216-258): Ok or the limit that fails.
pub fn shader_limits_v21(a: &ShaderArgs, p: &ConvProblem) -> std::result::Result<(), String> {
    common_limits(a, p)?;
    let crs = a.c * a.r * a.s;
    if crs >= 1 << 22 {
        return Err(format!("C*R*S = {crs} (needs < 2^22)"));
    }
    let krs = a.k * a.r * a.s;
    if krs >= 1 << 28 {
        return Err(format!("K*R*S = {krs} (needs < 2^28)"));
    }
    let o_k = a.oh * a.ow;
    let o_n = o_k * a.k;
    let d_c = a.h * a.w;
    let d_n = d_c * a.c;
    let num_tiles = a.oh.div_ceil(2) * a.ow.div_ceil(2);
    let stride_one = p.stride_h == 1 && p.stride_w == 1 && p.dilation_h == 1 && p.dilation_w == 1;
    let small = o_n + o_k < 1 << 29 && d_n + d_c < 1 << 29;
    let large_ok = stride_one && o_n < 1 << 30 && d_n < 1 << 30 && (a.n == 1 || num_tiles.is_multiple_of(16));
    if small || large_ok {
        Ok(())
    } else {
        Err(format!(
            "OH*OW*K + OH*OW = {} and H*W*C + H*W = {} (need < 2^29, or < 2^30 with stride 1 and N == 1 or \
             tiles % 16 == 0)",
            o_n + o_k,
            d_n + d_c
        ))
    }
}

/// `IsShaderConstraintsMetV30` (wino:260-290): Ok or the limit that fails.
pub fn shader_limits_v30(a: &ShaderArgs, p: &ConvProblem) -> std::result::Result<(), String> {
    common_limits(a, p)?;
    let checks = [
        ("H*W", a.h * a.w, 29),
        ("K*R*S", a.k * a.r * a.s, 28),
        ("(C+1)*H*W", (a.c + 1) * a.h * a.w, 30),
        ("(C+1)*R*S", (a.c + 1) * a.r * a.s, 22),
        ("(K+1)*OH*OW", (a.k + 1) * a.oh * a.ow, 30),
    ];
    match checks.iter().find(|(_, v, bits)| *v >= 1u128 << bits) {
        Some((what, v, bits)) => Err(format!("{what} = {v} (needs < 2^{bits})")),
        None => Ok(()),
    }
}

/// MIOpen's `GetBestNGroupParam` arguments (wino:119-136), in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NGroupArgs {
    pub r: u64,
    pub s: u64,
    pub r_stride: u64,
    pub s_stride: u64,
    pub c: u64,
    pub k: u64,
    pub oh: u64,
    pub ow: u64,
    pub pad_h: u64,
    pub pad_w: u64,
    pub n: u64,
    pub idilation_w: u64,
    pub idilation_h: u64,
    /// The hardware CU count (the loop's bound).
    pub n_groups: u64,
    pub g: u64,
    pub o_tile: u64,
    pub f_tile: u64,
}

/// `Ceil(v, m) * m` with C++ `size_t` arithmetic (None for m == 0, where MIOpen asserts).
fn round_up(v: u64, m: u64) -> Option<u64> {
    (m != 0).then(|| (v.wrapping_add(m - 1) / m).wrapping_mul(m))
}

/// MIOpen's `GetBestNGroupParam` (wino:119-190, common doc "Static default"): the `i` in
/// `1 .. n_groups - 1` with the smallest estimated time `ceil(i*G / n_groups) * mac(i) / i`,
/// scaled by `1 + 0.003 i` (large work per group) or `1 + 0.04 i`; the first smallest wins; 1
/// when the loop is empty. None where MIOpen would divide by zero (a zero factor or CU count).
/// Deviation: with more than 513 CUs the loop stops at 512 (see below).
pub fn best_n_groups(a: &NGroupArgs) -> Option<u64> {
    let mut r_factor = a.f_tile * 2;
    let mut s_factor = r_factor;
    let mut c_factor = 2;
    let k_factor: u64 = 32;
    let nwh_factor: u64 = 32;
    let w_factor = a.o_tile.wrapping_mul(a.idilation_w).wrapping_mul(a.s_stride);
    let h_factor = a.o_tile.wrapping_mul(a.idilation_h).wrapping_mul(a.r_stride);
    if a.s_stride == 1 && a.idilation_w == 1 && a.s <= a.f_tile {
        s_factor = a.f_tile;
    }
    if (a.r_stride == 1 && a.idilation_h == 1) || a.r.checked_rem(a.f_tile * 2) == Some(1) {
        r_factor = a.f_tile;
    }
    if a.s_stride == 2 || a.r_stride == 2 || a.idilation_w == 2 || a.idilation_h == 2 {
        c_factor = 1;
    }
    let g_s = round_up(a.s, s_factor)?;
    let g_r = round_up(a.r, r_factor)?;
    let g_c = round_up(a.c, c_factor)?;
    let g_k = round_up(a.k, k_factor)?;
    let mut g_w = a.ow;
    let mut g_h = a.oh;
    if a.pad_w.is_multiple_of(2) && (a.idilation_w > 1 || a.s_stride > 1) {
        g_w += 1;
    }
    if a.pad_h % 2 == 1 && (a.idilation_h > 1 || a.r_stride > 1) {
        g_h += 1;
    }
    let g_w = round_up(g_w, w_factor)?;
    let g_h = round_up(g_h, h_factor)?;
    let nwh_unit = nwh_factor.wrapping_mul(w_factor).wrapping_mul(h_factor);
    let g_nwh = round_up(g_w.wrapping_mul(g_h).wrapping_mul(a.n), nwh_unit)?;
    if a.n_groups == 0 {
        return None;
    }
    let mut best = 1;
    let mut min_param = 0f64;
    // MIOpen loops up to the CU count; past 512 every answer is capped to 512 anyway
    // ([`ConvBinWinogradRxS::static_default`]), so the loop stops there (a `--cu` in the
    // millions costs no more than 512 steps).
    for i in 1..a.n_groups.min(MAX_CU_LIMIT as u64 + 1) {
        let unit = nwh_unit.wrapping_mul(k_factor).wrapping_mul(i);
        let g_nwhk = round_up(g_nwh.wrapping_mul(g_k), unit)?;
        let mac = g_nwhk.wrapping_mul(g_c).wrapping_mul(g_s).wrapping_mul(g_r);
        let per_cu = i.wrapping_mul(a.g).div_ceil(a.n_groups);
        let mut perf = per_cu as f64 * mac as f64 / i as f64;
        if mac as f64 / i as f64 > 1.0e7 {
            perf *= 1.0 + i as f64 * 0.003;
        } else {
            perf *= 1.0 + i as f64 * 0.04;
        }
        if i == 1 {
            min_param = perf;
        }
        if min_param > perf {
            best = i;
            min_param = perf;
        }
    }
    Some(best)
}

/// The valid range of `n_groups` on a target: `1..=max` (`IsValid`, wino:394-402; the problem
/// is not consulted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// `min(512, HW CUs)`; 0: nothing is valid.
    pub max: i64,
}

impl Rules {
    pub fn new(target: &Target) -> Rules {
        Rules {
            max: max_n_groups(target),
        }
    }
}

/// One value whose rule reads nothing else: the trait's depth-first look-ahead is one pass over
/// the domain.
impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        match prefix {
            [] => true,
            [v] => (1..=self.max).contains(v),
            _ => false,
        }
    }
}

/// The arch names A5 allows FP16 on (prefixes, wino:681-684).
pub const FP16_ARCH_PREFIXES: [&str; 8] = [
    "gfx906", "gfx908", "gfx90a", "gfx94", "gfx1011", "gfx1012", "gfx103", "gfx11",
];

impl ConvBinWinogradRxS {
    /// MIOpen's solver name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// F(2,3) (`IS2X3`)?
    pub fn is_2x3(&self) -> bool {
        self.o_tile == 2
    }

    fn not_applicable(&self, reason: impl Into<String>) -> Error {
        Error::NotApplicable {
            solver: self.name.into(),
            reason: reason.into(),
        }
    }

    /// `IsWinogradV21Preferred` (wino:209-214): gfx900 and gfx906 run the v21 kernels, except
    /// F(3,2) with stride 2 (v21 has no such mode); every other arch runs v30.
    pub fn v21_preferred(&self, arch: &str, p: &ConvProblem) -> bool {
        let arch = arch.to_ascii_lowercase();
        (arch.starts_with("gfx900") || arch.starts_with("gfx906")) && (self.is_2x3() || p.stride_w != 2)
    }

    /// Ok when MIOpen's `IsApplicable` (wino:760-779 + `IsApplicableBase` wino:656-758) holds,
    /// in MIOpen's order: A1 (F(2,3) only: not group 1 unless W), A2 (tensor strides fit in
    /// `int`), A3 (FP32 or FP16), A4 (gfx9, gfx10, gfx11), a known CU count (ours: the rule needs
    /// it), A5 (the FP16 arch list), A6 (stride 1 or 2, equal in H and W; dilation 1; no bias;
    /// NCHW), A7 (the tiny-tensor workaround), A8 (W: stride 1), A9 (B: `filter - pad - 1` in
    /// `0..2^16`), A10 (the v21 or v30 shader limits). Also refused: zero sizes or groups. Not
    /// modelled (a problem does not carry them): packed tensors, casts, asm/code-object/XNACK
    /// switches, gfx90a fp16-alt, environment variables.
    pub fn check_applicable(&self, target: &Target, p: &ConvProblem) -> Result<()> {
        crate::solvers::two_d_only(self.name, p)?;
        let name = self.name;
        let arch = target.arch.to_ascii_lowercase();
        if p.n == 0 || p.c == 0 || p.k == 0 || p.in_h == 0 || p.in_w == 0 || p.groups == 0 || p.filter_h == 0 {
            return Err(self.not_applicable(format!(
                "zero size (N={} C={} K={} x {}x{} groups {}): every size must be positive",
                p.n, p.c, p.k, p.in_h, p.in_w, p.groups
            )));
        }
        // A1.
        if self.is_2x3() && p.groups == 1 && p.direction != Direction::BackwardWeights {
            return Err(self.not_applicable(format!(
                "group 1 direction {}: {name} takes only group convolutions or backward weights \
                 (MIOpen's WORKAROUND_ISSUE_1681 is 0; ConvBinWinogradRxSf2x3g1 serves these)",
                p.direction
            )));
        }
        // A2: every length and stride of the packed x, w and y tensors fits in int.
        let g = size(p.groups);
        let strides = [
            ("x", size(p.c) * size(p.in_h) * size(p.in_w)),
            ("w", size(p.c) / g * size(p.filter_h) * size(p.filter_w)),
            ("y", size(p.k) * size(p.out_h) * size(p.out_w)),
        ];
        if let Some((t, v)) = strides.iter().find(|(_, v)| *v > u128::from(MAX_FIELD_VALUE)) {
            return Err(self.not_applicable(format!(
                "{t}'s batch stride {v} does not fit in int: {name} needs every tensor dimension below 2^31"
            )));
        }
        // A3.
        if p.precision == Precision::Bf16 {
            return Err(self.not_applicable(format!("BF16: {name} supports only FP32 and FP16")));
        }
        // A4.
        if !(arch.starts_with("gfx9") || arch.starts_with("gfx10") || arch.starts_with("gfx11")) {
            return Err(self.not_applicable(format!(
                "arch {}: MIOpen applies {name} only on gfx9, gfx10 and gfx11",
                target.arch
            )));
        }
        match hardware_compute_units(target) {
            None => {
                return Err(self.not_applicable(format!(
                    "arch {}: its compute-unit count is not known (n_groups <= the CU count); give --cu",
                    target.arch
                )))
            }
            Some(0) => {
                return Err(self.not_applicable(format!(
                    "0 compute units on {}: n_groups must be at least 1 and at most the CU count",
                    target.arch
                )))
            }
            Some(_) => {}
        }
        // A5.
        if p.precision == Precision::Fp16 && !FP16_ARCH_PREFIXES.iter().any(|a| arch.starts_with(a)) {
            return Err(self.not_applicable(format!(
                "FP16 on {}: {name} supports FP16 only on {}",
                target.arch,
                FP16_ARCH_PREFIXES.join(", ")
            )));
        }
        // A6.
        if !(p.stride_w == 1 || p.stride_w == 2) || p.stride_h != p.stride_w {
            return Err(self.not_applicable(format!(
                "stride {}x{}: {name} needs stride 1x1 or 2x2",
                p.stride_h, p.stride_w
            )));
        }
        if p.dilation_h != 1 || p.dilation_w != 1 {
            return Err(self.not_applicable(format!(
                "dilation {}x{}: {name} supports only dilation 1",
                p.dilation_h, p.dilation_w
            )));
        }
        if p.bias {
            return Err(self.not_applicable(format!("bias: {name} supports only convolutions without bias")));
        }
        if p.layout != Layout::Nchw {
            return Err(self.not_applicable(format!(
                "layout NHWC: {name} supports only NCHW (its assembly kernels read NCHW tensors)"
            )));
        }
        // A7: WORKAROUND_ISSUE_2492_TINY_TENSOR (MIOpen's in: x for F, dy for B/W; groups ignored).
        let (ih, iw) = p.in_hw();
        if ih <= 6 && iw <= 6 && p.n <= 4 && p.in_channels() <= 4 {
            return Err(self.not_applicable(format!(
                "tiny tensor ({}x{} image, N={}, {} input channels): MIOpen's WORKAROUND_ISSUE_2492 refuses \
                 H, W <= 6 with N <= 4 and C <= 4",
                ih,
                iw,
                p.n,
                p.in_channels()
            )));
        }
        // A8.
        if p.direction == Direction::BackwardWeights && p.stride_w == 2 {
            return Err(self.not_applicable(format!(
                "stride 2x2 for backward weights: {name} supports backward weights with stride 1 only"
            )));
        }
        // A9: GetBackwardPad = filter - pad - 1 in 0..2^16.
        if p.direction == Direction::BackwardData {
            for (what, f, pad) in [("W", p.filter_w, p.pad_w), ("H", p.filter_h, p.pad_h)] {
                let ok = f
                    .checked_sub(1)
                    .and_then(|x| x.checked_sub(pad))
                    .is_some_and(|x| x < 1 << 16);
                if !ok {
                    return Err(self.not_applicable(format!(
                        "backward data with filter {f} and pad {pad} in {what}: {name} needs 0 <= filter - pad - 1 < 2^16"
                    )));
                }
            }
        }
        // A10.
        let a = shader_args(p);
        let v21 = self.v21_preferred(&arch, p);
        let limits = if v21 {
            shader_limits_v21(&a, p)
        } else {
            shader_limits_v30(&a, p)
        };
        limits.map_err(|why| {
            self.not_applicable(format!(
                "size limit of the {} kernel on {}: {why}{}",
                if v21 { "v21" } else { "v30" },
                target.arch,
                if p.direction == Direction::BackwardWeights {
                    " (for backward weights MIOpen passes the batch as C, dy's image as R x S, the filter as the output)"
                } else {
                    ""
                }
            ))
        })
    }

    /// MIOpen's default (`HeuristicInit`, wino:330-382): the HW CU count for group 1;
    /// [`best_n_groups`] otherwise, with F and B passing (filter, stride, C/G, K/G, out's image,
    /// pad_w as pad_H and pad_h as pad_W (swapped as written), N, dilation) and W passing (dy's
    /// image, dilation, N as C, dy's channels per group as K, the filter as the output, the same
    /// swapped pads, x's channels per group as N, stride as the input dilation). Deviation from
    /// MIOpen: the result is capped at `min(512, HW CUs)` (MIOpen's own `IsValid` refuses more;
    /// only a `--cu` above 512 reaches it), and 1 where the CU count is unknown or MIOpen would
    /// divide by zero.
    pub fn static_default(&self, target: &Target, p: &ConvProblem) -> i64 {
        let max = max_n_groups(target).max(1);
        let Some(hw_cu) = hardware_compute_units(target).filter(|&c| c > 0) else {
            return 1;
        };
        if p.groups == 1 {
            return max;
        }
        let c = |v: u64| v.min(MAX_FIELD_VALUE);
        let g = c(p.groups).max(1);
        let (in_g, out_g) = (c(p.in_channels()) / g, c(p.out_channels()) / g);
        let args = if p.direction == Direction::BackwardWeights {
            let (ih, iw) = p.in_hw();
            NGroupArgs {
                r: c(ih),
                s: c(iw),
                r_stride: c(p.dilation_h),
                s_stride: c(p.dilation_w),
                c: c(p.n),
                k: in_g,
                oh: c(p.filter_h),
                ow: c(p.filter_w),
                pad_h: c(p.pad_w),
                pad_w: c(p.pad_h),
                n: out_g,
                idilation_w: c(p.stride_h),
                idilation_h: c(p.stride_w),
                n_groups: hw_cu,
                g,
                o_tile: self.o_tile,
                f_tile: self.f_tile,
            }
        } else {
            let (oh, ow) = p.out_hw();
            NGroupArgs {
                r: c(p.filter_h),
                s: c(p.filter_w),
                r_stride: c(p.stride_h),
                s_stride: c(p.stride_w),
                c: in_g,
                k: out_g,
                oh: c(oh),
                ow: c(ow),
                pad_h: c(p.pad_w),
                pad_w: c(p.pad_h),
                n: c(p.n),
                idilation_w: c(p.dilation_h),
                idilation_h: c(p.dilation_w),
                n_groups: hw_cu,
                g,
                o_tile: self.o_tile,
                f_tile: self.f_tile,
            }
        };
        best_n_groups(&args).map_or(1, |v| (v.min(max as u64)) as i64)
    }
}

/// Names of tuneinfer's model features (see [`own_features`]).
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 N",
    "log2 C/G",
    "log2 K/G",
    "log2 H_x",
    "log2 W_x",
    "log2 groups",
    "direction (0 F, 1 B, 2 W)",
    "stride",
    "pad_h",
    "filter_h",
    "filter_w",
    "precision (0 fp32, 1 fp16, 2 bf16)",
];

/// tuneinfer's model features. The tuned `n_groups` splits the kernel's tiles over the GPU:
/// `GetBestNGroupParam` estimates it from the work per group (N, C/G, K/G and the image, as log2
/// sizes: the first six, with the group count, are what the nearest-neighbour baseline measures
/// distance over) and from how groups share the CUs (`ceil(i*G / CUs)`: log2 groups; the tuned
/// value is 1 in most group rows and spread over 1..CUs in group-1 rows). The direction picks
/// which tensors play which role (W swaps them), the stride picks the kernel (`_stride1` /
/// `_stride2` / `_dilation2`) and the tile granularity, the pad and the filter size set the
/// rounding of the tiles, and FP16 runs other kernels. The CU count is not a feature: a model is
/// trained per database (one CU count), and the rule caps the value.
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let l = log2_feature;
    let g = p.groups.max(1);
    [
        l(p.n),
        l(p.c / g),
        l(p.k / g),
        l(p.in_h),
        l(p.in_w),
        l(p.groups),
        match p.direction {
            Direction::Forward => 0.0,
            Direction::BackwardData => 1.0,
            Direction::BackwardWeights => 2.0,
        },
        p.stride_h.min(1 << 20) as f32,
        p.pad_h.min(1 << 20) as f32,
        p.filter_h.min(1 << 20) as f32,
        p.filter_w.min(1 << 20) as f32,
        crate::solvers::tunable::precision_feature(p.precision),
    ]
}

/// The valid values of one problem are `1..=min(512, CUs)` (at most 512): the search's
/// constraint is their table, checked on the GPU by `catalogue_rules.wgsl`, so both searches
/// stay resident there.
impl OwnModelsOnly for ConvBinWinogradRxS {
    fn table_constraint(&self) -> bool {
        true
    }
}

impl Tunable for ConvBinWinogradRxS {
    fn solver_name(&self) -> &'static str {
        self.name
    }

    fn param_names(&self) -> &'static [&'static str] {
        &PARAM_NAMES
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_applicable(target, problem)
    }

    fn rules(&self, target: &Target, _problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(Rules::new(target))
    }

    fn static_default(&self, target: &Target, problem: &ConvProblem) -> Vec<i64> {
        vec![ConvBinWinogradRxS::static_default(self, target, problem)]
    }

    /// F(2,3) applies to group 1 only for backward weights (what `bench` draws: group 1); F(3,2)
    /// to every direction. Both 3x3.
    fn workload_kind(&self) -> (&'static [Direction], u64) {
        if self.is_2x3() {
            (&[Direction::BackwardWeights], 3)
        } else {
            (
                &[Direction::Forward, Direction::BackwardData, Direction::BackwardWeights],
                3,
            )
        }
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> ConvProblem {
        ConvProblem::from_perfdb_key(k).unwrap()
    }

    #[test]
    fn hardware_compute_units_follow_miopen() {
        let hw = |a: &str| hardware_compute_units(&Target::new(a));
        assert_eq!(hw("gfx942"), Some(304));
        assert_eq!(hw("gfx942130"), Some(304));
        assert_eq!(hw("gfx906"), Some(60));
        assert_eq!(hw("gfx906_64"), Some(64));
        assert_eq!(hw("gfx900"), Some(56));
        // gfx1*: two CUs per WGP.
        assert_eq!(hw("gfx1030"), Some(72));
        assert_eq!(hw("gfx1030_36"), Some(72));
        assert_eq!(hw("gfx1030_20"), Some(40));
        assert_eq!(hw("gfx909"), None);
        let mut t = Target::new("gfx942");
        t.compute_units = Some(1000);
        assert_eq!((hardware_compute_units(&t), max_n_groups(&t)), (Some(1000), 512));
        t.compute_units = Some(0);
        assert_eq!(max_n_groups(&t), 0);
    }

    #[test]
    fn the_rule_is_one_to_min_512_cus() {
        let r = Rules::new(&Target::new("gfx906"));
        assert!(r.prefix_valid(&[]) && r.is_valid(&[1]) && r.is_valid(&[60]));
        assert!(!r.is_valid(&[0]) && !r.is_valid(&[61]) && !r.is_valid(&[-1]));
        assert!(!r.prefix_valid(&[1, 1]) && !r.is_valid(&[]));
        assert!(r.completable(&[], &[0, 61, 60]) && !r.completable(&[], &[0, 61]));
        assert!(Rules::new(&Target::new("gfx1030")).is_valid(&[72]));
        assert!(!Rules::new(&Target::new("gfx1030")).is_valid(&[73]));
    }

    #[test]
    fn round_up_is_cpp_ceil_times_factor() {
        assert_eq!(round_up(7, 3), Some(9));
        assert_eq!(round_up(9, 3), Some(9));
        assert_eq!(round_up(0, 3), Some(0));
        assert_eq!(round_up(5, 0), None);
        assert_eq!(round_up(u64::MAX, 2), Some(0), "wraps as size_t");
    }

    #[test]
    fn features_read_the_forward_view() {
        let p = key("64-28-28-3x3-128-28-28-16-1x1-1x1-1x1-0-NCHW-FP16-B_g4");
        // B key: in = dy (64 channels = K), out = dx (128 = C).
        let f = own_features(&p);
        assert_eq!((f[0], f[1], f[2]), (4.0, 5.0, 4.0));
        assert_eq!((f[5], f[6], f[11]), (2.0, 1.0, 1.0));
    }
}
