//! ConvAsm3x3U: MIOpen's assembly 3x3 direct convolution (`conv3x3.s`) for forward and
//! backward data.
//!
//! Everything here follows `../shared/miopen/solvers/ConvAsm3x3U.md` (ROCm/MIOpen 2d1fd997a,
//! `src/solver/conv/conv_asm_3x3u.cpp`, `src/include/miopen/conv/solvers.hpp:90-139`); the
//! section numbers below are the doc's. `IsValidPerformanceConfig` is `IsValidValue() &&
//! IsValid()`: the value ranges (rules 1-3) plus the grouped-output rule (2) and the VGPR count
//! (3). At most 640 configs: the search's constraint is their table (on the GPU,
//! `shaders/catalogue_rules.wgsl`), shared between problems whose rules read the same values
//! ([`Rules::table_key`]).
//!
//! Direction convention (section 3): MIOpen's "in" is x for F and dy for B, its "out" y for F
//! and dx for B. In [`ConvProblem`] C is always x's channels and K y's, `in_h`/`in_w` x's size,
//! `out_h`/`out_w` y's. So MIOpen's in_channels are C for F and K for B, out_channels K for F
//! and C for B; its in size is x's for F and dy's for B (with a 3x3 filter, pad 1 and stride 1
//! all four sizes are equal).
//!
//! Nothing here panics: sizes are clamped to [`MAX_FIELD_VALUE`] (MIOpen's `int`) and widened,
//! and where MIOpen would divide by zero (a zero group count or width) no config is valid.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision};
use crate::solvers::tunable::log2_feature;
use crate::solvers::tunable::{int_size as size, miopen_in_out as in_out};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// Solver name as MIOpen spells it.
pub const NAME: &str = "ConvAsm3x3U";

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 3;

/// Parameter names in perf-db (`PerformanceConfigConvAsm3x3U::Visit`) order.
pub const PARAM_NAMES: [&str; NUM_PARAMS] = ["limit_wave_cnt", "filters_per_wave", "output_lines_per_wave"];

/// The arches where MIOpen applies it: the deprecated-solver allow-list intersected with "the
/// device name starts with gfx8 or gfx90" (`:202-204`); not gfx103*.
pub const ARCHES: [&str; 5] = crate::solvers::tunable::DEPRECATED_GFX8_GFX9_ARCHES;

/// MIOpen's VGPR budget (`available_vgprs`, `:137`): a config needs fewer.
pub const AVAILABLE_VGPRS: i64 = 256;

fn not_applicable(reason: impl Into<String>) -> Error {
    Error::NotApplicable {
        solver: NAME.into(),
        reason: reason.into(),
    }
}

/// Section 3 (`IsApplicable`, `:174-247`): an arch of [`ARCHES`]; F or B; NCHW; FP32; filter
/// 3x3, pad 1x1, stride 1x1, dilation 1x1; in_channels > 0 and (in_channels/G) % 4 == 0;
/// 3 < W <= 1000 (MIOpen's in width); the size limits with 4-byte elements (4*H*W <= 1 GiB,
/// 4*out_h*out_w <= 4 GiB, N*in_channels and N*out_channels <= 2^32, each buffer <= 256 TiB,
/// 4*in_channels*out_channels*9 <= 4 GiB). Also rejected: zero sizes or groups. Not modelled (a
/// problem does not carry them): environment switches, XNACK, code-object version, packed or
/// int-sized tensors, cast tensors.
pub fn check_applicable(target: &Target, p: &ConvProblem) -> Result<()> {
    crate::solvers::two_d_only(NAME, p)?;
    if !ARCHES.iter().any(|a| target.arch.eq_ignore_ascii_case(a)) {
        return Err(not_applicable(format!(
            "arch {}: MIOpen applies {NAME} only on {} (device names gfx8* and gfx90*)",
            target.arch,
            ARCHES.join(", ")
        )));
    }
    if p.direction == Direction::BackwardWeights {
        return Err(not_applicable(format!(
            "direction W: {NAME} is a forward and backward-data (F, B) solver"
        )));
    }
    if p.layout != Layout::Nchw {
        return Err(not_applicable(format!("layout NHWC: {NAME} supports only NCHW")));
    }
    if p.precision != Precision::Fp32 {
        return Err(not_applicable(format!(
            "{}: {NAME} supports only FP32",
            p.precision.as_str()
        )));
    }
    if p.filter_h != 3 || p.filter_w != 3 {
        return Err(not_applicable(format!(
            "filter {}x{}: {NAME} is for 3x3 filters",
            p.filter_h, p.filter_w
        )));
    }
    if p.pad_h != 1 || p.pad_w != 1 || p.stride_h != 1 || p.stride_w != 1 || p.dilation_h != 1 || p.dilation_w != 1 {
        return Err(not_applicable(format!(
            "pad {}x{}, stride {}x{}, dilation {}x{}: {NAME} needs pad 1x1, stride 1x1 and dilation 1x1",
            p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w
        )));
    }
    let (cin, cout, h, w, out_h, out_w) = in_out(p);
    if [p.n, p.c, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.groups].contains(&0) {
        return Err(not_applicable(format!("zero size or group count in {p}")));
    }
    let g = size(p.groups);
    if (cin / g) % 4 != 0 {
        return Err(not_applicable(format!(
            "in channels {cin} with {g} groups: {NAME} needs (in channels / groups) % 4 == 0"
        )));
    }
    if w <= 3 || w > 1000 {
        return Err(not_applicable(format!("in width {w}: {NAME} needs 3 < W <= 1000")));
    }
    const GIB: u128 = 1 << 30;
    const TIB: u128 = 1 << 40;
    let u = |v: i64| v as u128;
    let in_img = 4 * u(h) * u(w);
    let out_img = 4 * u(out_h) * u(out_w);
    let (in_features, out_features) = (u(size(p.n)) * u(cin), u(size(p.n)) * u(cout));
    let limits = [
        (in_img <= GIB, "4*H*W <= 1 GiB"),
        (out_img <= 4 * GIB, "4*out_h*out_w <= 4 GiB"),
        (in_features <= 1 << 32, "N*in_channels <= 2^32"),
        (out_features <= 1 << 32, "N*out_channels <= 2^32"),
        (in_img * in_features <= 256 * TIB, "an input buffer of at most 256 TiB"),
        (
            out_img * out_features <= 256 * TIB,
            "an output buffer of at most 256 TiB",
        ),
        (
            4 * u(cin) * u(cout) * 9 <= 4 * GIB,
            "4*in_channels*out_channels*9 <= 4 GiB",
        ),
    ];
    if let Some((_, what)) = limits.iter().find(|(ok, _)| !ok) {
        return Err(not_applicable(format!("{p}: {NAME} needs {what}")));
    }
    Ok(())
}

/// The per-problem rule context (section 4): exactly what rules 2 and 3 read of the problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Bit `f - 1` set when filters_per_wave `f` (1..8) passes rule 2: every `f` with G == 1;
    /// with G > 1 those with out_channels % f == 0 and (out_channels/f) % G == 0. None with a
    /// zero group count.
    pub fpw_ok: u8,
    /// Kg = out_channels/G is a power of two (MIOpen's `Kg & (Kg - 1) == 0`, so 0 counts).
    pub kg_pow2: bool,
    /// MIOpen's in height, capped at 9 (rule 3 compares it with output_lines_per_wave <= 8).
    pub h: i64,
    /// GPRs per input line, ceil(W / ceil(W / ceil(W / 64))); 0 for W == 0 (MIOpen: no config
    /// valid).
    pub gl: i64,
    /// W % active_lanes != 0 (the uneven line read mode).
    pub uneven: bool,
}

impl Rules {
    pub fn new(p: &ConvProblem) -> Rules {
        let (_, cout, h, w, _, _) = in_out(p);
        let g = size(p.groups);
        let fpw_ok = if g == 0 {
            0
        } else if g == 1 {
            0xff
        } else {
            (1..=8i64)
                .filter(|&f| cout % f == 0 && (cout / f) % g == 0)
                .fold(0u8, |m, f| m | 1 << (f - 1))
        };
        let kg = if g == 0 { 0 } else { cout / g };
        let (gl, uneven) = if w <= 0 {
            (0, false)
        } else {
            let chunks = (w + 63) / 64;
            let lanes = (w + chunks - 1) / chunks;
            ((w + lanes - 1) / lanes, w % lanes != 0)
        };
        Rules {
            fpw_ok,
            kg_pow2: kg & (kg - 1) == 0,
            h: h.min(9),
            gl,
            uneven,
        }
    }

    /// Rule 3's VGPR count n of (filters_per_wave, output_lines_per_wave).
    pub fn vgprs(&self, fpw: i64, olpw: i64) -> i64 {
        let gl = self.gl;
        let il = if self.h == olpw { olpw } else { olpw + 2 };
        let lines = gl * il;
        let lines_a = if self.kg_pow2 || lines >= 4 { lines } else { 4 };
        let lines_b = if self.kg_pow2 || lines >= 3 { lines } else { 3 };
        i64::from(self.h != olpw) + i64::from(self.uneven) + lines_a + lines_b + 2 + gl * fpw * olpw
    }

    /// Rules 1-3 for a prefix.
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        if prefix.len() > NUM_PARAMS || self.gl == 0 {
            return false;
        }
        prefix.iter().enumerate().all(|(i, &x)| match i {
            // 1. limit_wave_cnt in 0..9.
            0 => (0..=9).contains(&x),
            // 2. filters_per_wave in 1..8; grouped: divides out_channels into a multiple of G.
            1 => (1..=8).contains(&x) && self.fpw_ok & (1 << (x - 1)) != 0,
            // 3. output_lines_per_wave in 1..8, fewer than 256 VGPRs.
            _ => (1..=8).contains(&x) && self.vgprs(prefix[1], x) < AVAILABLE_VGPRS,
        })
    }

    /// A key equal for rules that accept the same configs: every field packed (`gl` takes
    /// the high bits; it is at most `MAX_FIELD_VALUE`).
    pub fn table_key(&self) -> u64 {
        u64::from(self.fpw_ok)
            | u64::from(self.kg_pow2) << 8
            | (self.h as u64) << 9
            | u64::from(self.uneven) << 13
            | (self.gl as u64) << 14
    }
}

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        Rules::prefix_valid(self, prefix)
    }
}

/// MIOpen's default (section 5, `HeuristicInit`): 0, 2, 2, with filters_per_wave 1 when
/// out_channels % (2*G) != 0.
pub fn static_default(p: &ConvProblem) -> [i64; NUM_PARAMS] {
    let (_, cout, ..) = in_out(p);
    let two_g = 2 * size(p.groups);
    let fpw = if two_g != 0 && cout % two_g == 0 { 2 } else { 1 };
    [0, fpw, 2]
}

/// Names of tuneinfer's model features (see [`own_features`]).
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 Cin",
    "log2 Cout",
    "log2 H_in",
    "log2 W_in",
    "log2 N",
    "log2 N*H_in*W_in",
    "backward data",
    "log2 groups",
    "Kg power of two",
    "H_in (at most 9)",
    "W_in 64-lane chunks",
    "precision (0 fp32, 1 fp16, 2 bf16)",
];

/// tuneinfer's model features: log2 of MIOpen's in and out channels, in H and W, N and N*H*W
/// (the sizes the nearest neighbour reads); B; then what the rules read: log2 of the group
/// count (rule 2), Kg a power of two, H capped at 9 (H == output_lines_per_wave) and the
/// number of 64-wide chunks of a line (rule 3's GPRs per line); and the precision.
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let l = log2_feature;
    let (cin, cout, h, w, _, _) = in_out(p);
    let u = |v: i64| v.max(0) as u64;
    let r = Rules::new(p);
    [
        l(u(cin)),
        l(u(cout)),
        l(u(h)),
        l(u(w)),
        l(p.n),
        l(p.n.saturating_mul(u(h)).saturating_mul(u(w))),
        f32::from(u8::from(p.direction == Direction::BackwardData)),
        l(p.groups),
        f32::from(u8::from(r.kg_pow2)),
        r.h as f32,
        u(w).div_ceil(64) as f32,
        crate::solvers::tunable::precision_feature(p.precision),
    ]
}

/// The engine's view of ConvAsm3x3U (tuneinfer's own models only).
pub struct ConvAsm3x3USolver;

impl OwnModelsOnly for ConvAsm3x3USolver {
    /// At most 640 valid configs per problem: their table is the constraint (on the GPU,
    /// `shaders/catalogue_rules.wgsl`).
    fn table_constraint(&self) -> bool {
        true
    }

    /// The rules read only G, out_channels, H and W, through [`Rules`]' few fields: the table
    /// is shared by every problem with equal ones.
    fn table_key(&self, _target: &Target, problem: &ConvProblem) -> Option<u64> {
        Some(Rules::new(problem).table_key())
    }
}

impl Tunable for ConvAsm3x3USolver {
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
        (&[Direction::Forward, Direction::BackwardData], 3)
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }
}
