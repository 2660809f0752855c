//! ConvOclDirectFwd: MIOpen's OpenCL direct convolution for forward and backward data.
//!
//! Everything here follows `../shared/miopen/solvers/ConvOclDirectFwd.md` (transcribed from
//! ROCm/MIOpen commit 2d1fd997a, `src/solver/conv/conv_ocl_dir2Dfwd.cpp`,
//! `conv_ocl_dir2Dfwd_exhaustive_search.cpp` and `src/include/miopen/legacy_exhaustive_search.hpp`);
//! the section numbers below are the doc's.
//!
//! Direction convention (doc section 3): MIOpen's "in" is x for F and dy for B; "out" is y for F
//! and dx for B. So the doc's Cin = `GetInChannels()` (db `in_channels`) is C for F and K for B,
//! Cout = `GetOutChannels()` (db `out_channels`) is K for F and C for B, and
//! `GetInHeight/Width()` (db `in_h`/`in_w`) is x's size for F and dy's for B. In [`ConvProblem`]
//! C is always x's channels and K y's (= dy's), `in_h`/`in_w` x's size (= dx's) and
//! `out_h`/`out_w` y's (= dy's), so: Cin = F ? `p.c` : `p.k`, Cout = F ? `p.k` : `p.c`, in size
//! = F ? `p.in_*` : `p.out_*`. The rules read no output size (for a B row with stride 2 the dx
//! size is not stored in the sqlite db, and nothing here depends on it).
//!
//! The rules are MIOpen's `IsValidPerformanceConfig` ("V") plus the per-position value sets
//! that its search can write ("D", doc section 4). The stricter "S" rules (what this commit's
//! search loop would measure) are not enforced: MIOpen accepts any config passing D and V.
//!
//! Nothing here panics: problem sizes are clamped to [`MAX_FIELD_VALUE`] (MIOpen's `int`; a
//! parsed problem never exceeds it) and widened to `i128`, config values may be any `i64`, and a
//! division by zero (a zero stride or group count, where MIOpen asserts) makes a config invalid.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision, MAX_FIELD_VALUE};
use crate::solvers::tunable::{log2_feature, memoised_completable, twos_feature};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// Solver name as MIOpen spells it.
pub const NAME: &str = "ConvOclDirectFwd";

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 9;

/// Parameter names in perf-db order (`LegacyPerformanceConfig::Visit` order, doc section 2).
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "grp_tile1",
    "grp_tile0",
    "in_tile1",
    "in_tile0",
    "out_pix_tile1",
    "out_pix_tile0",
    "n_out_pix_tiles",
    "n_in_data_tiles",
    "n_stacks",
];

const GRP_TILE1: usize = 0;
const GRP_TILE0: usize = 1;
const IN_TILE1: usize = 2;
const IN_TILE0: usize = 3;
const OUT_PIX_TILE1: usize = 4;
const OUT_PIX_TILE0: usize = 5;
const N_OUT_PIX_TILES: usize = 6;
const N_IN_DATA_TILES: usize = 7;
const N_STACKS: usize = 8;

/// The arches where MIOpen applies the solver: the deprecated-solver allow-list
/// (`src/solver.cpp:716-731`); `gfx103*` stands for every arch whose name starts with `gfx103`.
pub const ARCHES: [&str; 6] = ["gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx103*"];

pub(crate) fn arch_allowed(arch: &str) -> bool {
    let arch = arch.to_ascii_lowercase();
    ARCHES.iter().any(|a| match a.strip_suffix('*') {
        Some(prefix) => arch.starts_with(prefix),
        None => arch == *a,
    })
}

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

/// MIOpen's in/out channels and in size for the problem's direction (module doc):
/// (Cin, Cout, in height, in width).
fn in_out(p: &ConvProblem) -> (u64, u64, u64, u64) {
    if p.direction.is_forward() {
        (p.c, p.k, p.in_h, p.in_w)
    } else {
        (p.k, p.c, p.out_h, p.out_w)
    }
}

/// Ok when MIOpen's `IsApplicable` (doc section 3, `:41-118`) holds for the problem on the
/// target: an arch of [`ARCHES`]; forward or backward data; NCHW; for B the backward pads
/// fx - pad_w - 1 and fy - pad_h - 1 not negative; with groups 1 a filter of 3x3, 5x5, 7x7, 9x9,
/// 11x11, 5x10 or 5x20 with stride 2 and pad 0, or FP16 4x4 with pad 0; equal strides of at most
/// 2; equal pads; dilation 1; not groups 1 with a 1x1 filter; not F FP16 with stride 2; and the
/// static default valid. Also rejected: zero sizes, strides or groups. Not modelled (a problem
/// does not carry them): environment switches, packed/int-sized tensors, cast tensors.
pub fn check_applicable(target: &Target, p: &ConvProblem) -> Result<()> {
    crate::solvers::two_d_only(NAME, p)?;
    if !arch_allowed(&target.arch) {
        return Err(not_applicable(format!(
            "arch {}: MIOpen applies {NAME} only on {}",
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
    if [
        p.n, p.c, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.filter_h, p.filter_w, p.stride_h, p.stride_w, p.groups,
    ]
    .contains(&0)
    {
        return Err(not_applicable(format!(
            "zero size, filter, stride or group count in {p}: every one must be positive"
        )));
    }
    let (fy, fx) = (p.filter_h, p.filter_w);
    if p.direction == Direction::BackwardData && (p.pad_w >= fx || p.pad_h >= fy) {
        return Err(not_applicable(format!(
            "pad {}x{} with filter {fy}x{fx}: {NAME} needs non-negative backward pads (filter - pad - 1)",
            p.pad_h, p.pad_w
        )));
    }
    let stride2 = p.stride_h == 2 && p.stride_w == 2;
    let pad0 = p.pad_h == 0 && p.pad_w == 0;
    if p.groups == 1 {
        let supported = (fy == fx && matches!(fy, 3 | 5 | 7 | 9 | 11))
            || (matches!(fx, 10 | 20) && fy == 5 && stride2 && pad0)
            || (p.precision == Precision::Fp16 && fy == 4 && fx == 4 && pad0);
        if !supported {
            return Err(not_applicable(format!(
                "filter {fy}x{fx} with groups 1: {NAME} supports 3x3, 5x5, 7x7, 9x9, 11x11, 5x10 and 5x20 \
                 (stride 2, pad 0) and FP16 4x4 (pad 0) filters"
            )));
        }
    }
    if p.stride_h != p.stride_w || p.stride_w > 2 {
        return Err(not_applicable(format!(
            "stride {}x{}: {NAME} needs equal strides of at most 2",
            p.stride_h, p.stride_w
        )));
    }
    if p.pad_h != p.pad_w {
        return Err(not_applicable(format!(
            "pad {}x{}: {NAME} needs equal pads",
            p.pad_h, p.pad_w
        )));
    }
    if p.dilation_h != 1 || p.dilation_w != 1 {
        return Err(not_applicable(format!(
            "dilation {}x{}: {NAME} supports only dilation 1",
            p.dilation_h, p.dilation_w
        )));
    }
    if p.groups == 1 && fy == 1 && fx == 1 {
        return Err(not_applicable(format!(
            "filter 1x1 with groups 1: {NAME} leaves these to ConvOclDirectFwd1x1"
        )));
    }
    if p.direction.is_forward() && p.precision == Precision::Fp16 && p.stride_w == 2 {
        return Err(not_applicable(format!(
            "forward FP16 with stride 2: {NAME} is off for these (MIOpen issue 1626)"
        )));
    }
    let default = static_default(p);
    if !Rules::new(p).is_valid(&default) {
        return Err(not_applicable(format!(
            "the static default {} is not a valid config for this problem (MIOpen requires it)",
            default.map(|v| v.to_string()).join(",")
        )));
    }
    Ok(())
}

/// The per-problem rule context (doc section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    fwd: bool,
    /// Cin / G and Cout / G (C++ `int` division; 0 when G is 0).
    cin_g: i128,
    cout_g: i128,
    n: i128,
    /// Filter height fy and width fx.
    fy: i128,
    fx: i128,
    /// Strides sh, sw.
    sh: i128,
    sw: i128,
    /// `GetTypeSize(GetInDataType())`: 4 for FP32, 2 for FP16 and BF16.
    type_size: i128,
}

/// `v` is one of 8, 16, 32, 64 (rules 1-4).
fn tile(v: i128) -> bool {
    matches!(v, 8 | 16 | 32 | 64)
}

/// `v` is one of 1, 2, 4 (rules 5, 6, 8).
fn one_two_four(v: i128) -> bool {
    matches!(v, 1 | 2 | 4)
}

impl Rules {
    pub fn new(p: &ConvProblem) -> Rules {
        let (cin, cout, _, _) = in_out(p);
        let g = size(p.groups);
        Rules {
            fwd: p.direction.is_forward(),
            cin_g: size(cin).checked_div(g).unwrap_or(0),
            cout_g: size(cout).checked_div(g).unwrap_or(0),
            n: size(p.n),
            fy: size(p.filter_h),
            fx: size(p.filter_w),
            sh: size(p.stride_h),
            sw: size(p.stride_w),
            type_size: if p.precision == Precision::Fp32 { 4 } else { 2 },
        }
    }

    /// B with stride > 1 ignores the stored out_pix_tile1 (and out_pix_tile0): opt1' (opt0')
    /// is the stride (`:141-147`).
    fn stride_tile1(&self) -> bool {
        !self.fwd && self.sh > 1
    }

    fn stride_tile0(&self) -> bool {
        !self.fwd && self.sw > 1
    }

    /// The index after which gt1' = max(8, in_tile1/opt1') is known (in_tile1, or out_pix_tile1).
    fn gt1_known_at(&self) -> usize {
        if self.stride_tile1() {
            IN_TILE1
        } else {
            OUT_PIX_TILE1
        }
    }

    fn gt0_known_at(&self) -> usize {
        if self.stride_tile0() {
            IN_TILE0
        } else {
            OUT_PIX_TILE0
        }
    }

    /// opt1', opt0' (the effective out_pix_tile values) of the prefix, where known.
    fn opt1(&self, c: &[i64]) -> i128 {
        if self.stride_tile1() {
            self.sh
        } else {
            i128::from(c[OUT_PIX_TILE1])
        }
    }

    fn opt0(&self, c: &[i64]) -> i128 {
        if self.stride_tile0() {
            self.sw
        } else {
            i128::from(c[OUT_PIX_TILE0])
        }
    }

    /// (gt1', gt0', it1', it0') (`:160-163`); None where an opt' value is 0 (V1 fails).
    fn tiles(&self, c: &[i64]) -> Option<(i128, i128, i128, i128)> {
        let (opt1, opt0) = (self.opt1(c), self.opt0(c));
        let gt1 = i128::from(c[IN_TILE1]).checked_div(opt1)?.max(8);
        let gt0 = i128::from(c[IN_TILE0]).checked_div(opt0)?.max(8);
        Some((gt1, gt0, gt1 * opt1, gt0 * opt0))
    }

    /// V5 (`:251-279`): the LDS use of a prefix of 8 values (n_stacks' = min(1, N) for every
    /// n_stacks in the domain, doc rule 9) is at most 65536 bytes. None for a zero stride (B) or
    /// opt' value.
    fn lds_fits(&self, c: &[i64]) -> Option<bool> {
        let (_, _, it1, it0) = self.tiles(c)?;
        let nopt = self.cout_g.min(i128::from(c[N_OUT_PIX_TILES]));
        let nidt = self.cin_g.min(i128::from(c[N_IN_DATA_TILES]));
        let n_stacks = self.n.min(1);
        let (in_lcl_w, in_lcl_h) = if self.fwd {
            ((it0 - 1) * self.sw + self.fx, (it1 - 1) * self.sh + self.fy)
        } else {
            (
                (it0 + self.fx - 1 + self.sw - 1).checked_div(self.sw)?,
                (it1 + self.fy - 1 + self.sh - 1).checked_div(self.sh)?,
            )
        };
        let lds = (in_lcl_w * in_lcl_h * nidt * n_stacks + nopt * nidt * self.fy * self.fx) * self.type_size;
        Some(lds <= 65536)
    }

    /// Checks 1..=prefix.len() of the doc's numbered rules hold (false when longer than 9). A V
    /// rule is checked at the first position that decides it (the doc's notes to rules 4 and 9).
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        let len = prefix.len();
        if len > NUM_PARAMS {
            return false;
        }
        let v = |i: usize| i128::from(prefix[i]);
        // 1. D: grp_tile1 in {8,16,32,64}.
        if len > GRP_TILE1 && !tile(v(GRP_TILE1)) {
            return false;
        }
        // 2. D: grp_tile0 in {8,16,32,64}.
        if len > GRP_TILE0 && !tile(v(GRP_TILE0)) {
            return false;
        }
        // 3. D: in_tile1 in {8,16,32,64}.
        if len > IN_TILE1 && !tile(v(IN_TILE1)) {
            return false;
        }
        // 4. D: in_tile0 in {8,16,32,64}. (For B with stride > 1, rules 6 V1/V2 below are
        //    already decidable here.)
        if len > IN_TILE0 && !tile(v(IN_TILE0)) {
            return false;
        }
        // 5. D: out_pix_tile1 in {1,2,4}; V1: opt1' != 0.
        if len > OUT_PIX_TILE1 && !one_two_four(v(OUT_PIX_TILE1)) {
            return false;
        }
        if len > self.gt1_known_at() && self.opt1(prefix) == 0 {
            return false;
        }
        // 6. D: out_pix_tile0 in {1,2,4}; V1: opt0' != 0; V2: alu_tiles_sz = gt0'*gt1' <= 256.
        if len > OUT_PIX_TILE0 && !one_two_four(v(OUT_PIX_TILE0)) {
            return false;
        }
        if len > self.gt0_known_at() && self.opt0(prefix) == 0 {
            return false;
        }
        if len > self.gt1_known_at().max(self.gt0_known_at()) {
            match self.tiles(prefix) {
                Some((gt1, gt0, _, _)) if gt0 * gt1 <= 256 => {}
                _ => return false,
            }
        }
        // 7. D: n_out_pix_tiles in {1,2,4,8}; V4: n_out_tiles_perstack = nopt' != 0.
        if len > N_OUT_PIX_TILES {
            let nopt = v(N_OUT_PIX_TILES);
            if !matches!(nopt, 1 | 2 | 4 | 8) || self.cout_g.min(nopt) == 0 {
                return false;
            }
        }
        // 8. D: n_in_data_tiles in {1,2,4}. (Rule 9's V5, the LDS limit, is decided here:
        //    n_stacks' = 1 for every n_stacks >= 1.)
        if len > N_IN_DATA_TILES && (!one_two_four(v(N_IN_DATA_TILES)) || self.lds_fits(prefix) != Some(true)) {
            return false;
        }
        // 9. D: n_stacks in {1,2}; V3: n_stacks' = min(n_stacks, 1, N) != 0;
        //    V5: (in_lcl_w*in_lcl_h*nidt'*n_stacks' + nopt'*nidt'*fy*fx) * sizeof <= 65536
        //    (checked at 8).
        if len > N_STACKS {
            let n_stacks = v(N_STACKS);
            if !matches!(n_stacks, 1 | 2) || n_stacks.min(1).min(self.n) == 0 {
                return false;
            }
        }
        true
    }

    /// Is the full config of 9 valid?
    pub fn is_valid(&self, config: &[i64]) -> bool {
        config.len() == NUM_PARAMS && self.prefix_valid(config)
    }

    /// What the rules after position `depth - 1` read of the first `depth` values: in_tile1,
    /// in_tile0, out_pix_tile1/0 (V2, V5), n_out_pix_tiles (V5) and n_in_data_tiles (V5, when
    /// n_stacks is the only one left). No rule reads the stored grp_tile values (MIOpen
    /// recomputes them), so prefixes differing there share the answer.
    fn state_key(c: &[i64], depth: usize) -> [i64; 6] {
        let at = |i: usize| if depth > i { c[i] } else { 0 };
        [
            at(IN_TILE1),
            at(IN_TILE0),
            at(OUT_PIX_TILE1),
            at(OUT_PIX_TILE0),
            at(N_OUT_PIX_TILES),
            at(N_IN_DATA_TILES),
        ]
    }

    /// The per-problem words `shaders/conv_ocl_direct_fwd_rules.wgsl` reads (a
    /// [`crate::solvers::RuleWords::Table`]): `[fwd, Cin/G, Cout/G, N, fy, fx, sh, sw, sizeof]`
    /// (sizes are clamped to `i32::MAX`).
    pub fn gpu_words(&self) -> [i32; GPU_WORDS] {
        let w = |v: i128| i32::try_from(v).unwrap_or(i32::MAX);
        [
            i32::from(self.fwd),
            w(self.cin_g),
            w(self.cout_g),
            w(self.n),
            w(self.fy),
            w(self.fx),
            w(self.sh),
            w(self.sw),
            w(self.type_size),
        ]
    }

    /// Is there some completion of the valid prefix, each later value drawn from `domain`, that
    /// is a fully valid config? The answer of the depth-first search
    /// ([`Rules::completable_by_search`]) by a bounded check (the CPU twin of the WGSL library's
    /// `solver_completable`). Every rule accepts only powers of two up to 64 (grp and in tiles
    /// {8,16,32,64}, out_pix_tile {1,2,4}, n_out_pix_tiles {1,2,4,8}, n_in_data_tiles {1,2,4},
    /// n_stacks {1,2}). No rule reads the grp tiles past their sets, nor n_stacks past V3 (equal
    /// for every n_stacks >= 1), and V5 grows with nopt' and nidt' (every term is a product of
    /// non-negative factors) while V4 holds for every n_out_pix_tiles or none: a free one of
    /// these positions takes its smallest domain value. The tiles (in_tile1, in_tile0,
    /// out_pix_tile1, out_pix_tile0) take every allowed domain value, pruned after in_tile0 and
    /// out_pix_tile1: at most 4 x 4 x 3 x 3 full checks.
    pub fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        let len = prefix.len();
        if len >= NUM_PARAMS {
            return len == NUM_PARAMS;
        }
        // Bit i: the domain holds 2^i (1..=64).
        let in_dom = domain
            .iter()
            .filter(|&&v| (1..=64).contains(&v) && v & (v - 1) == 0)
            .fold(0u32, |m, &v| m | 1 << v.trailing_zeros());
        const TILES: u32 = 0b111_1000;
        const ONE_TWO_FOUR: u32 = 0b111;
        let mut buf = [0i64; NUM_PARAMS];
        buf[..len].copy_from_slice(prefix);
        for (pos, set) in [
            (GRP_TILE1, TILES),
            (GRP_TILE0, TILES),
            (N_OUT_PIX_TILES, 0b1111),
            (N_IN_DATA_TILES, ONE_TWO_FOUR),
            (N_STACKS, 0b11),
        ] {
            if len <= pos {
                match in_dom & set {
                    0 => return false,
                    m => buf[pos] = 1 << m.trailing_zeros(),
                }
            }
        }
        // A position of the prefix keeps its (valid, so a power of two) value.
        let mask = |pos: usize, set: u32| {
            if len > pos {
                1u32 << buf[pos].trailing_zeros()
            } else {
                in_dom & set
            }
        };
        let (m2, m3, m4, m5) = (
            mask(IN_TILE1, TILES),
            mask(IN_TILE0, TILES),
            mask(OUT_PIX_TILE1, ONE_TWO_FOUR),
            mask(OUT_PIX_TILE0, ONE_TWO_FOUR),
        );
        for it1 in pow2_values(m2) {
            buf[IN_TILE1] = it1;
            for it0 in pow2_values(m3) {
                buf[IN_TILE0] = it0;
                if !self.prefix_valid(&buf[..=IN_TILE0]) {
                    continue;
                }
                for opt1 in pow2_values(m4) {
                    buf[OUT_PIX_TILE1] = opt1;
                    if !self.prefix_valid(&buf[..=OUT_PIX_TILE1]) {
                        continue;
                    }
                    for opt0 in pow2_values(m5) {
                        buf[OUT_PIX_TILE0] = opt0;
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
    /// answer); the reference [`Rules::completable`] is checked against.
    pub fn completable_by_search(&self, prefix: &[i64], domain: &[i64]) -> bool {
        memoised_completable(
            &|p| self.prefix_valid(p),
            prefix,
            NUM_PARAMS,
            domain,
            &Self::state_key,
            &|_, _| false,
        )
    }
}

/// Words per problem of [`Rules::gpu_words`].
pub const GPU_WORDS: usize = 9;

/// The powers of two whose exponents `m` sets, ascending.
fn pow2_values(mut m: u32) -> impl Iterator<Item = i64> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let v = 1i64 << m.trailing_zeros();
            m &= m - 1;
            v
        })
    })
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

/// MIOpen's default (`GetDefaultPerformanceConfig`, doc section 5, `:58-135`): in_tile0 = 8, 16
/// or 32 by the in width (x for F, dy for B: <= 8, <= 16, else), in_tile1 likewise by the in
/// height; out_pix_tile = max(stride, in_tile == 8 ? 1 : 2); grp_tile = max(8, in_tile /
/// out_pix_tile); in_tile = grp_tile * out_pix_tile; n_out_pix_tiles 8, n_in_data_tiles 2,
/// n_stacks 1. (MIOpen's groups-1 1x1 branch, `:86-131`, is for problems this solver does not
/// apply to, and is not reproduced.)
pub fn static_default(p: &ConvProblem) -> [i64; NUM_PARAMS] {
    let (_, _, in_h, in_w) = in_out(p);
    let in_tile = |s: u64| -> i64 {
        if s <= 8 {
            8
        } else if s <= 16 {
            16
        } else {
            32
        }
    };
    // Strides are clamped to MAX_FIELD_VALUE: every product below fits an i64.
    let stride = |s: u64| s.min(MAX_FIELD_VALUE) as i64;
    let (in_tile0, in_tile1) = (in_tile(in_w), in_tile(in_h));
    let opt0 = stride(p.stride_w).max(if in_tile0 == 8 { 1 } else { 2 });
    let opt1 = stride(p.stride_h).max(if in_tile1 == 8 { 1 } else { 2 });
    let grp0 = (in_tile0 / opt0).max(8);
    let grp1 = (in_tile1 / opt1).max(8);
    [grp1, grp0, grp1 * opt1, grp0 * opt0, opt1, opt0, 8, 2, 1]
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
    "stride 2",
    "filter width",
    "log2 groups",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "twos Cout/groups",
];

/// tuneinfer's model features: log2 of MIOpen's Cin and Cout (F: C, K; B: K, C), of its in
/// tensor's H and W (F: x, B: dy; the size the default's tiles follow), N and N*H*W; backward
/// data as 0/1; stride 2 as 0/1; the filter width (with groups 1 it names the filter: the
/// height equals it, or is 5 for widths 10 and 20); log2 of the group count; the precision; and
/// the power-of-two divisibility ("twos" = trailing zero bits, at most 12) of Cout per group
/// (what n_out_pix_tiles splits).
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
    let (cin, cout, h, w) = in_out(p);
    let hw = h.saturating_mul(w);
    [
        l(cin),
        l(cout),
        l(h),
        l(w),
        l(p.n),
        l(p.n.saturating_mul(hw)),
        if p.direction == Direction::BackwardData {
            1.0
        } else {
            0.0
        },
        if p.stride_h > 1 || p.stride_w > 1 { 1.0 } else { 0.0 },
        p.filter_w.min(1 << 20) as f32,
        l(p.groups),
        crate::solvers::tunable::precision_feature(p.precision),
        twos(cout / p.groups.max(1)),
    ]
}

/// The values MIOpen's `BaseGetSolution` builds the kernel from (2d1fd997a
/// `conv_ocl_dir2Dfwd.cpp:305-347`, the same in MIOpen 3.5.1), in the config's order: it
/// overwrites the stored `grp_tile1`/`grp_tile0` with `max(8, in_tile / opt')` and `in_tile`
/// with `grp' * opt'` (opt' = the stride for B with stride > 1, `:311-316`), clamps
/// `n_out_pix_tiles`/`n_in_data_tiles` to Cout/G and Cin/G (`:305-308`), and `n_stacks` to
/// `min(n_stacks, ceil(grp0'*grp1' / alu_tiles), N)` = `min(n_stacks, 1, N)` (alu_tiles =
/// grp0'*grp1'). LegacyPerformanceConfig has no `operator==`: two stored configs with the same
/// values here build the same kernel with the same grid. None where MIOpen would fail (a zero
/// tile).
pub fn launched(p: &ConvProblem, c: &[i64]) -> Option<[i64; NUM_PARAMS]> {
    if c.len() != NUM_PARAMS {
        return None;
    }
    let r = Rules::new(p);
    let (gt1, gt0, it1, it0) = r.tiles(c)?;
    let (opt1, opt0) = (r.opt1(c), r.opt0(c));
    let nopt = r.cout_g.min(i128::from(c[N_OUT_PIX_TILES]));
    let nidt = r.cin_g.min(i128::from(c[N_IN_DATA_TILES]));
    let n_stacks = i128::from(c[N_STACKS]).min(1).min(r.n);
    let v = |x: i128| i64::try_from(x).ok();
    Some([
        v(gt1)?,
        v(gt0)?,
        v(it1)?,
        v(it0)?,
        v(opt1)?,
        v(opt0)?,
        v(nopt)?,
        v(nidt)?,
        v(n_stacks)?,
    ])
}

/// The engine's view of ConvOclDirectFwd. MIOpen ships no model of it; tuneinfer's own models
/// are `{arch}_ConvOclDirectFwd.safetensors` + `.json`.
pub struct ConvOclDirectFwdSolver;

impl OwnModelsOnly for ConvOclDirectFwdSolver {
    fn wgsl_rules(&self) -> Option<&'static str> {
        Some("conv_ocl_direct_fwd_rules")
    }

    /// The library's arithmetic is exact for every problem (it saturates where i32 would not
    /// hold a product).
    fn wgsl_rule_words(&self, _target: &Target, problem: &ConvProblem) -> Option<crate::solvers::RuleWords> {
        Some(crate::solvers::RuleWords::Table(
            Rules::new(problem).gpu_words().to_vec(),
        ))
    }
}

impl Tunable for ConvOclDirectFwdSolver {
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

    /// What the kernel is built and launched with ([`launched`]): two configs MIOpen turns into
    /// the same kernel count as one.
    fn canonical(&self, _target: &Target, problem: &ConvProblem, config: &[i64]) -> Vec<i64> {
        launched(problem, config).map_or_else(|| config.to_vec(), |c| c.to_vec())
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
