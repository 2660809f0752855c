//! ConvOclBwdWrW2<N>: MIOpen's OpenCL backward-weights direct convolution, one solver per
//! N_BATCH_LOOPS N in {1, 2, 4, 8, 16}, each with its own perf-db name (`ConvOclBwdWrW2<4>`).
//!
//! Everything here follows `../shared/miopen/solvers/ConvOclBwdWrW2.md` (ROCm/MIOpen
//! 2d1fd997a, `src/solver/conv/conv_ocl_dir2D_bwdWrW_2.cpp`); the section and rule numbers are
//! the doc's. The five solvers share the parameters, the rules and the default; N enters only
//! the applicability (batch >= N) and the batch-block count of the workspace limit.
//!
//! Direction convention: MIOpen's backward-weights problem has "in" = dy (K channels, dy's
//! size) and "out" = x (C channels, x's size); [`ConvProblem`] stores the forward convolution,
//! so K is `p.k`, C is `p.c`, Wy (dy width) is `p.out_w` and Wx (x width) `p.in_w`. A sqlite
//! W row with stride > 1 does not store x's size; the problem holds one candidate, and only
//! the LDS rule reads Wx (the write-up: no tuned row's verdict depends on which).

use crate::error::{Error, Result};
use crate::problem::{conv_out_size, ConvProblem, Direction, Layout, Precision, MAX_FIELD_VALUE};
use crate::solvers::conv_ocl_direct_fwd::{arch_allowed, ARCHES};
use crate::solvers::tunable::log2_feature;
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// The family's name; each solver is `ConvOclBwdWrW2<N>`.
pub const FAMILY: &str = "ConvOclBwdWrW2";

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 5;

/// Parameter names in perf-db (`Visit`) order.
pub const PARAM_NAMES: [&str; NUM_PARAMS] = [
    "n_waves",
    "read_size",
    "n_out_channels_per_tile",
    "n_out_channels_tiles",
    "n_out_rows_in_lcl",
];

const N_WAVES: usize = 0;
const READ_SIZE: usize = 1;
const PER_TILE: usize = 2;
const TILES: usize = 3;
const ROWS: usize = 4;

/// MIOpen's LDS budget (64 KiB, `:405`).
pub const LDS_BYTES: u128 = 64 * 1024;

/// WORKAROUND_ISSUE_1185's workspace limit (6 GiB, `:413-425`).
pub const WORKSPACE_LIMIT: u128 = 6 << 30;

/// `Is_1_to_8`: the values of n_waves and the two channel fields.
pub const ONE_TO_EIGHT: [i64; 5] = [1, 2, 3, 4, 8];

/// The x sizes (height, width) a backward-weights problem stands for. A sqlite perf database
/// does not store x's size; a row's problem takes the smallest x that gives its dy size
/// ([`ConvProblem::as_stored_in_sqlite`]), and MIOpen's record serves every x with that dy size.
/// So along an axis where the problem's x is the smallest one (stride > 1), every x up to the
/// largest with the same dy size is a candidate; a larger x (a text key's) stands for itself.
/// The first candidate is the problem's own.
pub fn x_candidates(p: &ConvProblem) -> Vec<(u64, u64)> {
    let axis = |x: u64, y: u64, pad: u64, fil: u64, stride: u64, dil: u64| -> Vec<u64> {
        let gives_y = |v: u64| v >= 1 && conv_out_size(v, pad, fil, stride, dil) == Some(y);
        let mut v = vec![x];
        if stride > 1 && (x <= 1 || !gives_y(x - 1)) {
            let mut next = x.saturating_add(1);
            while v.len() < 64 && gives_y(next) {
                v.push(next);
                next = next.saturating_add(1);
            }
        }
        v
    };
    let hs = axis(p.in_h, p.out_h, p.pad_h, p.filter_h, p.stride_h, p.dilation_h);
    let ws = axis(p.in_w, p.out_w, p.pad_w, p.filter_w, p.stride_w, p.dilation_w);
    hs.iter().flat_map(|&h| ws.iter().map(move |&w| (h, w))).collect()
}

/// One `ConvOclBwdWrW2<N>` solver.
#[derive(Debug)]
pub struct ConvOclBwdWrW2Solver {
    /// N_BATCH_LOOPS.
    pub n_batch_loops: u64,
    name: &'static str,
}

pub static NB1: ConvOclBwdWrW2Solver = ConvOclBwdWrW2Solver {
    n_batch_loops: 1,
    name: "ConvOclBwdWrW2<1>",
};
pub static NB2: ConvOclBwdWrW2Solver = ConvOclBwdWrW2Solver {
    n_batch_loops: 2,
    name: "ConvOclBwdWrW2<2>",
};
pub static NB4: ConvOclBwdWrW2Solver = ConvOclBwdWrW2Solver {
    n_batch_loops: 4,
    name: "ConvOclBwdWrW2<4>",
};
pub static NB8: ConvOclBwdWrW2Solver = ConvOclBwdWrW2Solver {
    n_batch_loops: 8,
    name: "ConvOclBwdWrW2<8>",
};
pub static NB16: ConvOclBwdWrW2Solver = ConvOclBwdWrW2Solver {
    n_batch_loops: 16,
    name: "ConvOclBwdWrW2<16>",
};

/// The five solvers, N ascending.
pub static SOLVERS: [&ConvOclBwdWrW2Solver; 5] = [&NB1, &NB2, &NB4, &NB8, &NB16];

fn not_applicable(name: &str, reason: impl Into<String>) -> Error {
    Error::NotApplicable {
        solver: name.into(),
        reason: reason.into(),
    }
}

fn size(v: u64) -> u128 {
    u128::from(v.min(MAX_FIELD_VALUE))
}

fn ceil_div(a: u128, b: u128) -> u128 {
    a.div_ceil(b)
}

/// The per-problem rule context (section 4); every size as MIOpen reads it, in u128 so that no
/// product of the LDS rule overflows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Groups G.
    pub g: u128,
    /// K/G: dy's channels per group (MIOpen's `GetInChannels() / G`).
    pub kg: u128,
    pub fy: u128,
    pub fx: u128,
    pub stride_h: u128,
    pub stride_w: u128,
    pub pad_w: u128,
    /// dy width (MIOpen's in width).
    pub wy: u128,
    /// x width (MIOpen's out width).
    pub wx: u128,
    /// The x tensor's element size (4 FP32, 2 FP16/BF16).
    pub type_size: u128,
    pub fp32: bool,
    /// The parameter-independent part of `IsValid` for this N: the workspace limit (and a
    /// positive batch-block count).
    pub workspace_ok: bool,
}

impl Rules {
    /// The rules of `ConvOclBwdWrW2<n_batch_loops>` for the problem.
    pub fn new(p: &ConvProblem, n_batch_loops: u64) -> Rules {
        let g = size(p.groups).max(1);
        let type_size = u128::from(p.precision.bytes());
        // n_batch_blks = ceil(n / N) (`:237-241`); wei_bstride = (C/G)*fy*fx (`:252-253`).
        let blocks = ceil_div(size(p.n), u128::from(n_batch_loops.max(1)));
        // Saturating: every factor is at most 2^31, the product may pass u128's range.
        let workspace = [size(p.filter_h), size(p.filter_w), size(p.k), blocks, type_size]
            .into_iter()
            .fold(size(p.c) / g, u128::saturating_mul);
        Rules {
            g,
            kg: size(p.k) / g,
            fy: size(p.filter_h),
            fx: size(p.filter_w),
            stride_h: size(p.stride_h),
            stride_w: size(p.stride_w),
            pad_w: size(p.pad_w),
            wy: size(p.out_w),
            wx: size(p.in_w),
            type_size,
            fp32: p.precision == Precision::Fp32,
            workspace_ok: blocks >= 1 && (blocks <= 1 || workspace <= WORKSPACE_LIMIT),
        }
    }

    /// Rule 5's LDS bytes of a full config (`:312-411`); None where MIOpen rejects the config
    /// before the sum (a zero block count or scan loop).
    pub fn lds_bytes(&self, c: &[i64]) -> Option<u128> {
        let v = |i: usize| u128::try_from(c[i]).ok();
        let (n_waves, read_size, tiles, rows) = (v(N_WAVES)?, v(READ_SIZE)?, v(TILES)?, v(ROWS)?);
        if read_size == 0 || rows == 0 {
            return None;
        }
        let (fy, fx, pad_w, wx, wy) = (self.fy, self.fx, self.pad_w, self.wx, self.wy);
        let in_lcl_height = (rows - 1) * self.stride_h + fy;
        let padded = wx + 2 * pad_w;
        let effective = padded
            .max(pad_w + ceil_div(wx, read_size) * read_size)
            .max(fx + wy.saturating_sub(1) * self.stride_w);
        let right_buffer = effective - padded;
        let mut lcl_width = pad_w + wx + right_buffer;
        if self.fp32 {
            lcl_width = lcl_width / 2 * 2 + 1;
        }
        let in_lcl = lcl_width * in_lcl_height + pad_w + right_buffer;
        let wei_per_item = if fx <= 7 || fx % 2 == 1 { fx } else { fx / 2 };
        if wei_per_item == 0 {
            return None;
        }
        let wei_blk = fy * ceil_div(fx, wei_per_item);
        if wei_blk == 0 {
            return None;
        }
        let n_wei_blk = 64 * n_waves / wei_blk;
        if n_wei_blk == 0 {
            return None;
        }
        let scan_loop = ceil_div(wy, n_wei_blk);
        if scan_loop == 0 {
            return None;
        }
        let max_wei_blk = n_wei_blk.min(ceil_div(wy, scan_loop));
        let wei_lcl = wei_blk * wei_per_item * max_wei_blk * tiles;
        let out_ext = (scan_loop * max_wei_blk).max(ceil_div(wy, read_size) * read_size);
        let out_lcl = rows * out_ext * tiles;
        Some((in_lcl + out_lcl).max(wei_lcl) * self.type_size)
    }

    /// Do the rules that the first `prefix.len()` values decide hold (rules 1-5 of section 4,
    /// each at the first position that decides it; rule 3 with its look-ahead
    /// n_out_channels_per_tile <= K/G for every G)?
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        if prefix.len() > NUM_PARAMS || (!prefix.is_empty() && !self.workspace_ok) {
            return false;
        }
        let u = |x: i64| u128::try_from(x).unwrap_or(0);
        prefix.iter().enumerate().all(|(i, &x)| match i {
            // 1. n_waves in {1,2,3,4,8}.
            N_WAVES => ONE_TO_EIGHT.contains(&x),
            // 2. read_size in 6..12, <= dy width.
            READ_SIZE => (6..=12).contains(&x) && u(x) <= self.wy,
            // 3. n_out_channels_per_tile in {1,2,3,4,8}, <= K/G.
            PER_TILE => ONE_TO_EIGHT.contains(&x) && u(x) <= self.kg,
            // 4. n_out_channels_tiles in {1,2,3,4,8}; 1 with G > 1; tiles * per_tile <= K/G.
            TILES => ONE_TO_EIGHT.contains(&x) && (self.g == 1 || x == 1) && u(x) * u(prefix[PER_TILE]) <= self.kg,
            // 5. n_out_rows_in_lcl in 2..11, >= fy; the LDS fits.
            _ => (2..=11).contains(&x) && u(x) >= self.fy && self.lds_bytes(prefix).is_some_and(|b| b <= LDS_BYTES),
        })
    }

    /// Is there a completion of the valid prefix, each later value drawn from `domain`, that is
    /// fully valid? A bounded check equal to the depth-first search (tests/solvers/conv_ocl_bwd_wrw2.rs
    /// compares them): n_out_channels_per_tile enters only rules 3 and 4 (a smaller value only
    /// loosens them) and the LDS grows with n_out_channels_tiles (in_lcl does not read it,
    /// out_lcl and wei_lcl are proportional to it) and with n_out_rows_in_lcl (in_lcl_height
    /// and out_lcl grow with it, wei_lcl does not read it), so a free one of these three takes
    /// its smallest accepted domain value; n_waves and read_size take every domain value (at
    /// most 5 x 7 full checks).
    pub fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        let len = prefix.len();
        if len >= NUM_PARAMS {
            return len == NUM_PARAMS;
        }
        let mut sorted: Vec<i64> = domain.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut buf = [0i64; NUM_PARAMS];
        buf[..len].copy_from_slice(prefix);
        let free = |pos: usize| len <= pos;
        let waves: Vec<i64> = if free(N_WAVES) {
            sorted.iter().copied().filter(|v| ONE_TO_EIGHT.contains(v)).collect()
        } else {
            vec![buf[N_WAVES]]
        };
        let reads: Vec<i64> = if free(READ_SIZE) {
            sorted.iter().copied().filter(|v| (6..=12).contains(v)).collect()
        } else {
            vec![buf[READ_SIZE]]
        };
        for &w in &waves {
            buf[N_WAVES] = w;
            for &r in &reads {
                buf[READ_SIZE] = r;
                if !self.prefix_valid(&buf[..=READ_SIZE]) {
                    continue;
                }
                if self.smallest_completion(&mut buf, len, &sorted) {
                    return true;
                }
            }
        }
        false
    }

    /// With n_waves and read_size set in `buf` (a valid prefix of 2): each free one of the last
    /// three positions (from `len` on) takes its smallest value of `sorted` that its value rules
    /// accept (rules 3 and 4; rule 5's range and >= fy, the LDS checked last: it only grows with
    /// the value); is the result valid?
    fn smallest_completion(&self, buf: &mut [i64; NUM_PARAMS], len: usize, sorted: &[i64]) -> bool {
        for pos in PER_TILE..NUM_PARAMS {
            if len <= pos {
                let accepted = |buf: &mut [i64; NUM_PARAMS], v: i64| {
                    buf[pos] = v;
                    if pos == ROWS {
                        (2..=11).contains(&v) && u128::try_from(v).is_ok_and(|u| u >= self.fy)
                    } else {
                        self.prefix_valid(&buf[..=pos])
                    }
                };
                match sorted.iter().find(|&&v| accepted(buf, v)) {
                    Some(&v) => buf[pos] = v,
                    None => return false,
                }
            }
            if !self.prefix_valid(&buf[..=pos]) {
                return false;
            }
        }
        true
    }

    /// The look-ahead by plain search (what [`Rules::completable`] must equal).
    pub fn completable_by_search(&self, prefix: &[i64], domain: &[i64]) -> bool {
        crate::solvers::tunable::memoised_completable(
            &|p| self.prefix_valid(p),
            prefix,
            NUM_PARAMS,
            domain,
            &|p: &[i64], d: usize| p[..d].to_vec(),
            &|_, _| false,
        )
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
        Rules::completable(self, prefix, domain)
    }
}

/// MIOpen's default (`HeuristicInit`, section 5): `1,6,p,1,fy` with p = 4, 3, 2 or 1, the first
/// that divides K/G.
pub fn static_default(p: &ConvProblem) -> [i64; NUM_PARAMS] {
    let kg = p.k / p.groups.max(1);
    let per_tile = [4, 3, 2].into_iter().find(|&d| kg.is_multiple_of(d)).unwrap_or(1);
    [1, 6, per_tile as i64, 1, p.filter_h.min(MAX_FIELD_VALUE) as i64]
}

impl ConvOclBwdWrW2Solver {
    /// Section 3 (`IsApplicableBase` and `IsTunable`). Not modelled: environment switches,
    /// OpenCL availability, int-sized tensors, cast tensors, and the device query of
    /// `:258-269` (weights times batch blocks <= 85% of the device memory; no tuned problem
    /// comes near it on a GPU of 4 GiB or more).
    pub fn check_applicable(&self, target: &Target, p: &ConvProblem) -> Result<()> {
        crate::solvers::two_d_only(self.name, p)?;
        let name = self.name;
        let na = |reason: String| Err(not_applicable(name, reason));
        if !arch_allowed(&target.arch) {
            return na(format!(
                "arch {}: MIOpen applies {FAMILY} only on {}",
                target.arch,
                ARCHES.join(", ")
            ));
        }
        if p.direction != Direction::BackwardWeights {
            return na(format!(
                "direction {}: {FAMILY} is a backward-weights (W) solver",
                p.direction.as_char()
            ));
        }
        if p.layout != Layout::Nchw {
            return na(format!("layout NHWC: {FAMILY} supports only NCHW"));
        }
        if [
            p.n, p.c, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.filter_h, p.filter_w, p.stride_h, p.stride_w, p.groups,
        ]
        .contains(&0)
        {
            return na(format!("zero size, filter, stride or group count in {p}"));
        }
        if p.dilation_h != 1 || p.dilation_w != 1 {
            return na(format!(
                "dilation {}x{}: {FAMILY} needs dilation 1x1",
                p.dilation_h, p.dilation_w
            ));
        }
        let (fy, fx) = (p.filter_h, p.filter_w);
        if p.groups == 1 && ((fy == 3 && fx == 3) || (fy == 1 && fx == 1)) {
            return na(format!(
                "filter {fy}x{fx} with groups 1: MIOpen runs ConvOclBwdWrW2NonTunable there (the default, no perf-db entry)"
            ));
        }
        // fy - stride_h >= pad_h (`:500-501`), in MIOpen's int arithmetic.
        if i128::from(fy) - i128::from(p.stride_h) < i128::from(p.pad_h) {
            return na(format!(
                "filter height {fy} - stride {} < pad {}: {FAMILY} needs fy - stride_h >= pad_h",
                p.stride_h, p.pad_h
            ));
        }
        if p.n < self.n_batch_loops {
            return na(format!(
                "batch {} < {}: {name} needs a batch of at least {}",
                p.n, self.n_batch_loops, self.n_batch_loops
            ));
        }
        // Issue 1693 workaround (`:503-510`); "out" is x here.
        let exempt = p.stride_h == 2
            && p.stride_w == 2
            && fy == 5
            && (fx == 10 || fx == 20)
            && x_candidates(p).iter().any(|&x| matches!(x, (79, 341) | (161, 700)));
        if fx >= 8 && fx % 2 == 0 && !exempt {
            return na(format!(
                "filter width {fx}: MIOpen excludes even filter widths >= 8 (workaround of its issue 1693)"
            ));
        }
        let rules = Rules::new(p, self.n_batch_loops);
        if !rules.workspace_ok {
            return na(format!(
                "{p}: the workspace of {name} would exceed MIOpen's 6 GiB limit (WORKAROUND_ISSUE_1185)"
            ));
        }
        let d = static_default(p);
        if let Some(l) = (1..=NUM_PARAMS).find(|&l| !rules.prefix_valid(&d[..l])) {
            let why = match l - 1 {
                READ_SIZE => "read_size 6 > the dy width",
                PER_TILE | TILES => "the channel tiles exceed K/groups",
                ROWS => "n_out_rows_in_lcl = the filter height is above 11, or the LDS needs more than 64 KiB",
                _ => "its value rules",
            };
            return na(format!(
                "{p}: MIOpen's default {} breaks rule {l} ({why}), and {FAMILY} applies only where the default holds",
                d.map(|v| v.to_string()).join(",")
            ));
        }
        Ok(())
    }
}

/// Names of tuneinfer's model features (see [`own_features`]).
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 K/groups",
    "log2 C/groups",
    "log2 H_dy",
    "log2 W_dy",
    "log2 N",
    "log2 N*H_dy*W_dy",
    "filter height",
    "filter width",
    "stride width",
    "pad width",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "log2 groups",
];

/// tuneinfer's model features: log2 of dy's channels per group (what the two channel fields
/// split), x's channels per group, dy's height and width (what read_size scans), the batch and
/// the batch's dy pixels; the filter size, stride and pad width (the LDS rule's inputs), the
/// precision and log2 of the group count.
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let l = log2_feature;
    let g = p.groups.max(1);
    let small = |v: u64| v.min(1 << 20) as f32;
    [
        l(p.k / g),
        l(p.c / g),
        l(p.out_h),
        l(p.out_w),
        l(p.n),
        l(p.n.saturating_mul(p.out_h).saturating_mul(p.out_w)),
        small(p.filter_h),
        small(p.filter_w),
        small(p.stride_w),
        small(p.pad_w),
        crate::solvers::tunable::precision_feature(p.precision),
        l(g),
    ]
}

impl OwnModelsOnly for ConvOclBwdWrW2Solver {
    /// At most 5 x 7 x 5 x 5 x 10 = 8,750 configs per problem: their table over the model's
    /// values is the constraint (on the GPU, `shaders/catalogue_rules.wgsl`).
    fn table_constraint(&self) -> bool {
        true
    }
}

impl Tunable for ConvOclBwdWrW2Solver {
    fn solver_name(&self) -> &'static str {
        self.name
    }

    fn param_names(&self) -> &'static [&'static str] {
        &PARAM_NAMES
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_applicable(target, problem)
    }

    fn rules(&self, _target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(Rules::new(problem, self.n_batch_loops))
    }

    fn static_default(&self, _target: &Target, problem: &ConvProblem) -> Vec<i64> {
        static_default(problem).to_vec()
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        (&[Direction::BackwardWeights], 5)
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }
}
