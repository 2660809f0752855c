//! ConvOclDirectFwd1x1: MIOpen's OpenCL direct 1x1 convolution for forward and backward data.
//!
//! Everything here follows `../shared/miopen/solvers/ConvOclDirectFwd1x1.md` (ROCm/MIOpen
//! 2d1fd997a, `conv_ocl_dir2Dfwd1x1.cpp`, `conv_ocl_dir2Dfwd_exhaustive_search.cpp`); the section
//! numbers below are the doc's. **MIOpen checks nothing** for this solver
//! (`IsValidPerformanceConfig` returns true): the rules are what its search (the 1x1 branch) or
//! its default can produce, so a config is valid when it is the default or passes rules 1-9.
//!
//! Direction convention: MIOpen's Cin is C for F and K for B, Cout K for F and C for B; its in
//! size is x's for F and dy's for B, its out size y's for F and dx's for B. For a B row with
//! stride > 1 the dx size is not stored in the sqlite databases ([`ConvProblem`] holds one
//! candidate); only rule 6's parity and the default read it.

use crate::error::{Error, Result};
use crate::problem::{conv_out_size, ConvProblem, Direction, Layout, Precision};
use crate::solvers::tunable::{int_size as size, log2_feature, miopen_in_out as in_out, twos_feature};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

/// Solver name as MIOpen spells it.
pub const NAME: &str = "ConvOclDirectFwd1x1";

/// Number of tuning parameters.
pub const NUM_PARAMS: usize = 9;

/// Parameter names in perf-db (`LegacyPerformanceConfig::Visit`) order.
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

/// The arches where MIOpen applies it: the deprecated-solver list without gfx10*/gfx11*
/// (WORKAROUND_SWDEV_271887).
pub const ARCHES: [&str; 5] = crate::solvers::tunable::DEPRECATED_GFX8_GFX9_ARCHES;

fn not_applicable(reason: impl Into<String>) -> Error {
    Error::NotApplicable {
        solver: NAME.into(),
        reason: reason.into(),
    }
}

/// Section 3: an arch of [`ARCHES`], F or B, NCHW, filter 1x1, dilation 1, groups 1, pad 0
/// (any stride). Not modelled: environment switches, packed/int-sized tensors, cast tensors.
pub fn check_applicable(target: &Target, p: &ConvProblem) -> Result<()> {
    crate::solvers::two_d_only(NAME, p)?;
    if !ARCHES.iter().any(|a| target.arch.eq_ignore_ascii_case(a)) {
        return Err(not_applicable(format!(
            "arch {}: MIOpen applies {NAME} only on {} (not on gfx10*/gfx11*: WORKAROUND_SWDEV_271887)",
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
    if p.filter_h != 1 || p.filter_w != 1 {
        return Err(not_applicable(format!(
            "filter {}x{}: {NAME} is for 1x1 filters",
            p.filter_h, p.filter_w
        )));
    }
    if p.dilation_h != 1 || p.dilation_w != 1 || p.groups != 1 || p.pad_h != 0 || p.pad_w != 0 {
        return Err(not_applicable(format!(
            "{p}: {NAME} needs dilation 1x1, groups 1 and pad 0x0"
        )));
    }
    if [p.n, p.c, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.stride_h, p.stride_w].contains(&0) {
        return Err(not_applicable(format!("zero size or stride in {p}")));
    }
    Ok(())
}

/// The dx sizes (height, width) a backward-data problem stands for. A sqlite perf database
/// does not store dx's size; a row's problem takes the smallest dx that gives its dy size
/// ([`ConvProblem::as_stored_in_sqlite`]), and MIOpen's record of it serves every dx with that
/// dy size. So a B problem whose dx is the smallest along an axis (with stride > 1) also stands
/// for the next larger dx there, of the other parity (rule 6 and the default read only dx's
/// parity); a larger dx (a text key's) stands for itself. Forward: y's size alone (MIOpen's
/// out size).
pub fn dx_candidates(p: &ConvProblem) -> Vec<(i64, i64)> {
    let axis = |x: u64, y: u64, pad: u64, fil: u64, stride: u64, dil: u64| -> Vec<i64> {
        let gives_y = |v: u64| v >= 1 && conv_out_size(v, pad, fil, stride, dil) == Some(y);
        let mut v = vec![size(x)];
        let smallest = x <= 1 || !gives_y(x - 1);
        if !p.direction.is_forward() && stride > 1 && smallest && gives_y(x.saturating_add(1)) {
            v.push(size(x.saturating_add(1)));
        }
        v
    };
    if p.direction.is_forward() {
        return vec![(size(p.out_h), size(p.out_w))];
    }
    let hs = axis(p.in_h, p.out_h, p.pad_h, p.filter_h, p.stride_h, p.dilation_h);
    let ws = axis(p.in_w, p.out_w, p.pad_w, p.filter_w, p.stride_w, p.dilation_w);
    hs.iter().flat_map(|&h| ws.iter().map(move |&w| (h, w))).collect()
}

/// The fields MIOpen's `GetSolution` (2d1fd997a `conv_ocl_dir2Dfwd1x1.cpp:101-440`; MIOpen
/// 3.5.1 the same, 12 lines earlier) builds the kernel from, in the config's 9 positions with
/// the fields it never reads as 0. Version 1 ([`version1`], `:110-150`): `out_pix_tile0` as is
/// (CHEAT_SHADER_COMPILER), `n_out_pix_tiles` = min(it, Cout) halved while Cout % it != 0 and
/// it exceeds 16, `n_in_data_tiles` kept when 0 < it < Cin and it % 8 == 0, else Cin. Version 0
/// (`:270-401`): `grp_tile0` (the work-group size), the read unit (`out_pix_tile0` clamped to the
/// out width, for B halved until it divides it, then halved until it divides the in width; in
/// position 5), `n_in_data_tiles` and `n_out_pix_tiles` clamped to Cin / Cout and halved until
/// they divide them, `n_stacks` as is. None where MIOpen would divide by zero.
pub fn launched(p: &ConvProblem, c: &[i64]) -> Option<[i64; NUM_PARAMS]> {
    if c.len() != NUM_PARAMS || c[6] <= 0 || c[7] <= 0 {
        return None;
    }
    let (cin, cout, _, in_w, _, out_w) = in_out(p);
    let mut out = [0i64; NUM_PARAMS];
    if version1(p) {
        let mut nopt = c[6].min(cout);
        while cout % nopt != 0 && nopt > 16 {
            nopt /= 2;
        }
        let nidt = if c[7] < cin && c[7] % 8 == 0 { c[7] } else { cin };
        out[5] = c[5];
        out[6] = nopt;
        out[7] = nidt;
        return Some(out);
    }
    if c[5] <= 0 {
        return None;
    }
    let mut opt0 = c[5].min(out_w);
    if !p.direction.is_forward() {
        while opt0 > 1 && out_w % opt0 != 0 {
            opt0 /= 2;
        }
    }
    let mut read_unit = opt0;
    while read_unit > 1 && in_w % read_unit != 0 {
        read_unit /= 2;
    }
    let halve_to_divide = |v: i64, of: i64| {
        let mut v = v.min(of);
        while v > 1 && of % v != 0 {
            v /= 2;
        }
        v
    };
    if read_unit <= 0 || cin <= 0 || cout <= 0 {
        return None;
    }
    out[1] = c[1];
    out[5] = read_unit;
    out[6] = halve_to_divide(c[6], cout);
    out[7] = halve_to_divide(c[7], cin);
    out[8] = c[8];
    Some(out)
}

/// Kernel version 1 (section 2): FP32, F, Cin % 16 == 0 and Cout % 16 == 0.
pub fn version1(p: &ConvProblem) -> bool {
    let (cin, cout, ..) = in_out(p);
    p.precision == Precision::Fp32 && p.direction.is_forward() && cin % 16 == 0 && cout % 16 == 0
}

/// Rule 6's count c of version-0 out_pix_tile0 values (the first c of 1, 2, 4) for one dx
/// width (`out_w`: MIOpen's out width, y's for F and dx's for B).
pub fn out_pix_tile0_count(p: &ConvProblem, out_w: i64) -> usize {
    let (_, _, in_h, in_w, _, _) = in_out(p);
    let odd = |v: i64| v % 2 == 1;
    if p.stride_w == 1 {
        let i_sz = in_w * in_h;
        if odd(i_sz) {
            1
        } else if i_sz % 4 == 2 {
            2
        } else {
            3
        }
    } else if odd(out_w) || (!p.direction.is_forward() && odd(in_w)) {
        1
    } else {
        2
    }
}

/// The per-problem rule context (section 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Kernel version 1 (FP32, F, Cin % 16 == 0, Cout % 16 == 0), else version 0.
    pub v1: bool,
    pub cin: i64,
    pub cout: i64,
    /// Rule 6's count c of out_pix_tile0 values (version 0): the largest over
    /// [`dx_candidates`] (the values of a smaller count are a prefix of a larger one's).
    pub c: usize,
    /// The static default of each of [`dx_candidates`] (always valid), distinct; the first is
    /// the problem's own ([`static_default`]).
    pub defaults: Vec<[i64; NUM_PARAMS]>,
}

impl Rules {
    pub fn new(p: &ConvProblem) -> Rules {
        Rules::for_sizes(p, &dx_candidates(p))
    }

    /// The rules for the problem's own out size only (no other dx candidate).
    pub fn new_exact(p: &ConvProblem) -> Rules {
        Rules::for_sizes(p, &dx_candidates(p)[..1])
    }

    /// The rules accepting what any of these out sizes (MIOpen's: y's for F, dx's for B) accepts.
    pub fn for_sizes(p: &ConvProblem, candidates: &[(i64, i64)]) -> Rules {
        let (cin, cout, ..) = in_out(p);
        let c = candidates
            .iter()
            .map(|&(_, w)| out_pix_tile0_count(p, w))
            .max()
            .unwrap_or(1);
        let mut defaults: Vec<[i64; NUM_PARAMS]> = Vec::with_capacity(candidates.len());
        for &(h, w) in candidates {
            let d = default_for(p, h, w);
            if !defaults.contains(&d) {
                defaults.push(d);
            }
        }
        Rules {
            v1: version1(p),
            cin,
            cout,
            c,
            defaults,
        }
    }

    /// Rules 1-9 (the search's values) for a prefix.
    pub fn search_prefix_valid(&self, prefix: &[i64]) -> bool {
        let len = prefix.len();
        if len > NUM_PARAMS {
            return false;
        }
        let v1 = self.v1;
        prefix.iter().enumerate().all(|(i, &x)| match i {
            // 1., 3., 4. grp_tile1, in_tile1, in_tile0 == 1.
            0 | 2 | 3 => x == 1,
            // 2. v1: grp_tile0 == 64; v0: {64,128,256}.
            1 => x == 64 || (!v1 && (x == 128 || x == 256)),
            // 5. out_pix_tile1: v1 1, v0 0.
            4 => x == i64::from(v1),
            // 6. out_pix_tile0: v1 {0,1,4}; v0 the first c of (1,2,4).
            5 => {
                if v1 {
                    matches!(x, 0 | 1 | 4)
                } else {
                    [1, 2, 4][..self.c].contains(&x)
                }
            }
            // 7. n_out_pix_tiles: v1 {16,32,64}; v0 {4,8,16} + 32 (Cout % 32) + 64 (Cout % 64),
            //    not 32 with out_pix_tile0 >= 4, not 64 with out_pix_tile0 >= 2.
            6 => {
                if v1 {
                    matches!(x, 16 | 32 | 64)
                } else {
                    let opt0 = prefix[5];
                    match x {
                        4 | 8 | 16 => true,
                        32 => self.cout % 32 == 0 && opt0 < 4,
                        64 => self.cout % 64 == 0 && opt0 < 2,
                        _ => false,
                    }
                }
            }
            // 8. n_in_data_tiles: v1 {64,128,256,2048}; v0 {4} + 8 (Cin % 8).
            7 => {
                if v1 {
                    matches!(x, 64 | 128 | 256 | 2048)
                } else {
                    x == 4 || (x == 8 && self.cin % 8 == 0)
                }
            }
            // 9. n_stacks == 0.
            _ => x == 0,
        })
    }

    /// Valid: a prefix of the default (section 4: always accepted) or of a search config.
    pub fn prefix_valid(&self, prefix: &[i64]) -> bool {
        prefix.len() <= NUM_PARAMS
            && (self.defaults.iter().any(|d| d.starts_with(prefix)) || self.search_prefix_valid(prefix))
    }
}

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        NUM_PARAMS
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        Rules::prefix_valid(self, prefix)
    }

    /// The default branch, or the search branch by a depth-first search (each position takes
    /// at most 4 values, and every later position has one whatever the earlier ones are, so
    /// it ends at the first branch that reaches the end).
    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        for d in &self.defaults {
            if d.starts_with(prefix) && d[prefix.len()..].iter().all(|v| domain.contains(v)) {
                return true;
            }
        }
        fn dfs(r: &Rules, buf: &mut Vec<i64>, domain: &[i64]) -> bool {
            if buf.len() == NUM_PARAMS {
                return true;
            }
            for &x in domain {
                buf.push(x);
                let ok = r.search_prefix_valid(buf) && dfs(r, buf, domain);
                buf.pop();
                if ok {
                    return true;
                }
            }
            false
        }
        self.search_prefix_valid(prefix) && dfs(self, &mut prefix.to_vec(), domain)
    }
}

/// MIOpen's default (section 5): the ConvOclDirectFwd start, then the version's overrides.
pub fn static_default(p: &ConvProblem) -> [i64; NUM_PARAMS] {
    let (_, _, _, _, out_h, out_w) = in_out(p);
    default_for(p, out_h, out_w)
}

/// [`static_default`] with MIOpen's out size (y's for F, dx's for B) `out_h` x `out_w`.
fn default_for(p: &ConvProblem, out_h: i64, out_w: i64) -> [i64; NUM_PARAMS] {
    let (_, _, in_h, in_w, _, _) = in_out(p);
    let fwd = p.direction.is_forward();
    let v1 = version1(p);
    let tile = |s: i64| {
        if s <= 8 {
            8
        } else if s <= 16 {
            16
        } else {
            32
        }
    };
    let (sh, sw) = (size(p.stride_h), size(p.stride_w));
    let (in_tile0, in_tile1) = (tile(in_w), tile(in_h));
    let opt0 = sw.max(if in_tile0 == 8 { 1 } else { 2 });
    let opt1 = sh.max(if in_tile1 == 8 { 1 } else { 2 });
    let grp0 = (in_tile0 / opt0).max(8);
    let grp1 = (in_tile1 / opt1).max(8);
    let (it1, it0) = (grp1 * opt1, grp0 * opt0);
    if v1 {
        [grp1, grp0, it1, it0, 1, 0, 32, 128, 1]
    } else {
        let odd = |v: i64| v % 2 == 1;
        let mut o0 = if odd(out_h * out_w) { 1 } else { 2 };
        if p.pad_w > 0 || sw > 1 {
            o0 = if odd(out_w) || (!fwd && odd(in_w)) { 1 } else { 2 };
        }
        [grp1, 64, it1, it0, 0, o0, 16, 4, 1]
    }
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
    "kernel version 1",
    "twos Cin",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "twos Cout",
];

/// tuneinfer's model features: ConvOclDirectFwd's conventions (log2 of MIOpen's Cin, Cout, in
/// H and W, N, N*H*W; B; stride > 1), the kernel version, the power-of-two divisibility of Cin
/// and Cout (rules 7 and 8) and the precision.
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
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
        f32::from(u8::from(p.stride_h > 1 || p.stride_w > 1)),
        f32::from(u8::from(r.v1)),
        twos(u(cin)),
        crate::solvers::tunable::precision_feature(p.precision),
        twos(u(cout)),
    ]
}

/// The engine's view of ConvOclDirectFwd1x1 (tuneinfer's own models only).
pub struct ConvOclDirectFwd1x1Solver;

impl OwnModelsOnly for ConvOclDirectFwd1x1Solver {
    /// At most 91 valid configs per problem: their table is the constraint (on the GPU,
    /// `shaders/catalogue_rules.wgsl`).
    fn table_constraint(&self) -> bool {
        true
    }
}

impl Tunable for ConvOclDirectFwd1x1Solver {
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

    /// What the kernel is built and launched with ([`launched`]): MIOpen checks nothing and
    /// reads only some fields, so configs that differ elsewhere count as one.
    fn canonical(&self, _target: &Target, problem: &ConvProblem, config: &[i64]) -> Vec<i64> {
        launched(problem, config).map_or_else(|| config.to_vec(), |c| c.to_vec())
    }

    fn static_default(&self, _target: &Target, problem: &ConvProblem) -> Vec<i64> {
        static_default(problem).to_vec()
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
}
