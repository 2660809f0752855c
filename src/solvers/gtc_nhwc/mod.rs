//! `ConvAsmImplicitGemmGTCDynamic{Fwd,Bwd,Wrw}XdlopsNHWC`: MIOpen's dynamic assembly implicit-GEMM
//! solvers for xdlops GPUs (gfx908, gfx90a, gfx94x = MI300), NHWC kernels (NCHW problems get
//! transpose kernels around them).
//!
//! Everything here follows `../shared/miopen/solvers/GTC_NHWC_COMMON.md` and the three solver
//! write-ups beside it (ROCm/MIOpen 2d1fd997a). A params string is 37 fields: a kernel of a fixed
//! catalogue (fields 0-35, `catalogue.rs`) plus the per-problem GEMM-K split (field 17) and the
//! entry's index (field 36).
//!
//! **What the model decodes: the catalogue entry, then the split** (`[entry, gks]`). The entry is
//! the unit MIOpen validates (`IsValidValue` compares fields 0-35 with a catalogue entry), so a
//! decoded entry is a valid kernel by construction and its 36 fields never disagree with each
//! other; the tuned rows use 41-61 distinct entries per (direction, precision), a small
//! vocabulary that 1,000 rows per precision can learn, where decoding the 36 fields one by one
//! would spread the same rows over 30 positions whose combinations the rules then have to
//! rebuild. The split comes second because its domain depends on the entry (0 when the entry
//! cannot split, `1..=8` (fwd, bwd: log2 of the split count) or `1..=10` (wrw: an occupancy
//! factor) when it can).
//!
//! The search's constraint is a table: for each problem every valid (entry, split) pair over the
//! model's values (at most a few hundred), checked on the CPU by the catalogue constraint and on
//! the GPU by `shaders/catalogue_rules.wgsl` (both searches resident), like the composable_kernel
//! solvers'. The rules are the tuner's (`IsValid` with its spare-set rule): what a tuned row can
//! hold.

pub mod catalogue;
pub mod rules;

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Precision};
use crate::solvers::tunable::{log2_feature, twos_feature};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};
use catalogue::Catalogue;
use rules::Dims;

/// The two decoded parameters.
pub const PARAM_NAMES: [&str; 2] = ["catalogue_entry", "gemm_k_global_split"];

/// One of the three solvers.
pub struct GtcSolver {
    pub name: &'static str,
    pub direction: Direction,
}

pub static FWD: GtcSolver = GtcSolver {
    name: "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
    direction: Direction::Forward,
};
pub static BWD: GtcSolver = GtcSolver {
    name: "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
    direction: Direction::BackwardData,
};
pub static WRW: GtcSolver = GtcSolver {
    name: "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
    direction: Direction::BackwardWeights,
};

/// The devices MIOpen applies these solvers on: `gfx908`, `gfx90a` or a name starting `gfx94`.
pub fn arch_supported(arch: &str) -> bool {
    let a = arch.to_ascii_lowercase();
    a == "gfx908" || a == "gfx90a" || a.starts_with("gfx94")
}

/// The compute units of a target: the database name's or `--cu`, else the arch's MI-series
/// count (gfx942: 304 = MI300X, gfx90a: 104 = MI210, gfx908: 120 = MI100). Only wrw's default
/// reads it.
pub fn compute_units(target: &Target) -> u32 {
    target
        .compute_units
        .unwrap_or(match target.arch.to_ascii_lowercase().as_str() {
            "gfx90a" => 104,
            "gfx908" => 120,
            _ => 304,
        })
}

/// The feature names of tuneinfer's model of these solvers.
pub const OWN_FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 C_in",
    "log2 C_out",
    "log2 H_in",
    "log2 W_in",
    "log2 N",
    "log2 N*GEMM pixels",
    "filter height",
    "filter width",
    "stride",
    "pad",
    "precision (0 fp32, 1 fp16, 2 bf16)",
    "twos GEMM-K channels",
];

/// tuneinfer's model features: log2 of MIOpen's in and out channels (F: C, K; B, W: K, C) and of
/// its in tensor's H, W (F: x, B/W: dy), N, and N times the pixels of y (fwd's GEMM-M), dx
/// (bwd's GEMM-M) or dy (wrw's GEMM-K); the filter's height and width; the larger stride and pad (nearly every tuned
/// row is square); the precision; and the power-of-two divisibility of the channels the rules
/// divide by the tile's K (F6: C, B6: K, W4: C). Not features: the group count (the solvers apply
/// to groups of 1 only at this commit), the layout (the kernels always run NHWC: an NCHW problem
/// gets transposed, the same kernel choice; and only 7-19 tuned rows per solver are NHWC) and the
/// dilation (no tuned row has one).
pub fn own_features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let (l, twos) = (log2_feature, twos_feature);
    let (cin, cout, h, w) = if p.direction.is_forward() {
        (p.c, p.k, p.in_h, p.in_w)
    } else {
        (p.k, p.c, p.out_h, p.out_w)
    };
    // The pixels GEMM-M (fwd: y, bwd: dx) or GEMM-K (wrw: dy) runs over.
    let gemm_pixels = match p.direction {
        Direction::BackwardData => p.in_h.saturating_mul(p.in_w),
        _ => p.out_h.saturating_mul(p.out_w),
    };
    let gemm_k_channels = match p.direction {
        Direction::BackwardData => p.k,
        _ => p.c,
    };
    [
        l(cin),
        l(cout),
        l(h),
        l(w),
        l(p.n),
        l(p.n.saturating_mul(gemm_pixels)),
        p.filter_h.min(1 << 20) as f32,
        p.filter_w.min(1 << 20) as f32,
        p.stride_h.max(p.stride_w).min(1 << 20) as f32,
        p.pad_h.max(p.pad_w).min(1 << 20) as f32,
        crate::solvers::tunable::precision_feature(p.precision),
        twos(gemm_k_channels),
    ]
}

impl GtcSolver {
    fn not_applicable(&self, reason: impl Into<String>) -> Error {
        Error::NotApplicable {
            solver: self.name.into(),
            reason: reason.into(),
        }
    }

    fn catalogue(&self) -> Result<Arc<Catalogue>> {
        catalogue::load(self.direction)
    }

    /// MIOpen's `IsApplicable` (the write-ups' lists). Not modelled (a problem does
    /// not carry them): environment switches, the deterministic attribute, XNACK, the code
    /// object version, packed tensors.
    pub fn check_applicable(&self, target: &Target, p: &ConvProblem) -> Result<()> {
        crate::solvers::two_d_only(self.name, p)?;
        let name = self.name;
        if !arch_supported(&target.arch) {
            return Err(self.not_applicable(format!(
                "arch {}: MIOpen applies {name} on gfx908, gfx90a and gfx94x only",
                target.arch
            )));
        }
        if p.direction != self.direction {
            return Err(self.not_applicable(format!(
                "direction {}: {name} is the {} solver of the three GTC NHWC solvers",
                p.direction,
                catalogue::direction_word(self.direction)
            )));
        }
        if p.groups != 1 {
            return Err(self.not_applicable(format!(
                "group count {}: {name} applies to groups of 1 only at this MIOpen commit (WORKAROUND_ISSUE_1979)",
                p.groups
            )));
        }
        // BF16: gfx90a and gfx94x (COMMON "Device name"); MIOpen 3.5.1's databases hold tuned
        // BF16 rows of all three solvers there (gfx90a68, gfx942130).
        if p.precision == Precision::Bf16 && target.arch.eq_ignore_ascii_case("gfx908") {
            return Err(self.not_applicable(format!(
                "BF16 on gfx908: MIOpen applies {name} to BF16 on gfx90a and gfx94x only"
            )));
        }
        let d = Dims::new(p);
        if self.direction == Direction::Forward && d.c <= 4 && d.dilation_h > 1 {
            return Err(self.not_applicable(format!(
                "C = {} <= 4 with dilation {}: {name} excludes it (WORKAROUND_ISSUE_2624)",
                d.c, d.dilation_h
            )));
        }
        if self.direction == Direction::BackwardWeights && workaround_2867(p) {
            return Err(self.not_applicable(format!(
                "this 1-channel problem is excluded from {name} by MIOpen's WORKAROUND_ISSUE_2867"
            )));
        }
        rules::size_limits(&d).map_err(|why| self.not_applicable(format!("{why}: {name} does not apply")))?;
        // The catalogue is built in (src/solvers/gtc_nhwc/data/); were it unreadable, no config
        // could be named: said as the reason, never a config.
        self.catalogue()
            .map(|_| ())
            .map_err(|e| self.not_applicable(format!("its kernel catalogue does not read: {e}")))
    }
}

/// wrw's `WORKAROUND_ISSUE_2867` (wrw:868-889): three 1-channel problems (sizes of x).
fn workaround_2867(p: &ConvProblem) -> bool {
    let t = (
        p.c, p.k, p.in_h, p.in_w, p.filter_h, p.filter_w, p.pad_h, p.pad_w, p.stride_h, p.stride_w,
    );
    matches!(
        t,
        (1, 1, 1, 1, 3, 3, 2, 2, 2, 2) | (1, 1, 1, 5, 3, 6, 2, 1, 2, 1) | (1, 1, 1, 1, 2, 3, 1, 2, 1, 2)
    )
}

/// The valid (entry, split) pairs of one problem.
pub struct GtcRules {
    /// entry -> its valid splits, ascending.
    valid: HashMap<i64, Vec<i64>>,
}

impl GtcRules {
    pub fn new(direction: Direction, catalogue: Option<&Catalogue>, p: &ConvProblem) -> GtcRules {
        let mut valid = HashMap::new();
        if let Some(cat) = catalogue {
            let d = Dims::new(p);
            for e in cat.entries.iter().filter(|e| e.precision == p.precision) {
                let splits: Vec<i64> = rules::gks_domain(direction, e)
                    .filter(|&g| rules::is_valid(&d, e, g, true))
                    .collect();
                if !splits.is_empty() {
                    valid.insert(e.index as i64, splits);
                }
            }
        }
        GtcRules { valid }
    }

    /// Also accepts MIOpen's default `(entry, gks)` where `IsValid` without the spare set's rule
    /// (F10, B10, W5) accepts it: a config read from a perf db is not of the spare set (its
    /// `Deserialize` leaves `use_spare_set` false), and MIOpen's default for a unit convolution
    /// can be an `nxe != 0` entry (its pad fallback), which MIOpen runs and even stores as the
    /// tuned value (MI100 wrw FP16 `58-28-28-1x1-58-...`: index 0, `[3]`).
    pub fn with_default(mut self, cat: &Catalogue, p: &ConvProblem, entry: i64, gks: i64) -> GtcRules {
        let Some(e) = usize::try_from(entry).ok().and_then(|i| cat.entries.get(i)) else {
            return self;
        };
        if rules::is_valid(&Dims::new(p), e, gks, false) {
            let splits = self.valid.entry(entry).or_default();
            if let Err(at) = splits.binary_search(&gks) {
                splits.insert(at, gks);
            }
        }
        self
    }

    /// Number of valid (entry, split) pairs.
    pub fn pairs(&self) -> usize {
        self.valid.values().map(Vec::len).sum()
    }
}

impl IntRules for GtcRules {
    fn config_len(&self) -> usize {
        2
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        match prefix {
            [] => true,
            [e] => self.valid.contains_key(e),
            [e, g] => self.valid.get(e).is_some_and(|s| s.binary_search(g).is_ok()),
            _ => false,
        }
    }

    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        let has = |e: &i64| {
            self.valid
                .get(e)
                .is_some_and(|s| s.iter().any(|g| domain.binary_search(g).is_ok()))
        };
        match prefix {
            [] => domain.iter().any(has),
            [e] => has(e),
            [_, _] => self.prefix_valid(prefix),
            _ => false,
        }
    }
}

impl OwnModelsOnly for GtcSolver {
    fn table_constraint(&self) -> bool {
        true
    }

    fn problem_note(&self, _target: &Target, problem: &ConvProblem) -> Option<String> {
        (problem.layout == crate::problem::Layout::Nchw).then(|| {
            format!(
                "NCHW problem: MIOpen runs {}'s NHWC kernel between transpose kernels (it needs their workspace); \
                 the tuning parameters are the same",
                self.name
            )
        })
    }
}

impl Tunable for GtcSolver {
    fn solver_name(&self) -> &'static str {
        self.name
    }

    fn param_names(&self) -> &'static [&'static str] {
        &PARAM_NAMES
    }

    /// MIOpen's 37-field params string -> `[entry, split]` (see [`Catalogue::lookup`]).
    fn parse_params(&self, s: &str) -> Result<Vec<i64>> {
        let cat = self.catalogue()?;
        cat.lookup(s)
            .map(|(entry, gks)| vec![entry as i64, gks])
            .map_err(|why| Error::format(format!("{} config '{}'", self.name, crate::error::quote_short(s)), why))
    }

    /// `[entry, split]` as MIOpen's perf db stores a tuned value: the 37 fields, the split in
    /// field 17, the entry's index in field 36, no `[gks]` suffix.
    fn format_params(&self, config: &[i64]) -> String {
        let entry = match (config, self.catalogue()) {
            ([e, g], Ok(cat)) => usize::try_from(*e)
                .ok()
                .and_then(|e| cat.entries.get(e))
                .map(|x| x.params_text(*g)),
            _ => None,
        };
        entry.unwrap_or_else(|| format!("<{} entry {config:?}: no such catalogue entry>", self.name))
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_applicable(target, problem)
    }

    /// The tuner's configs ([`GtcRules::new`]) and MIOpen's default where its `IsValid` accepts
    /// it ([`GtcRules::with_default`]).
    fn rules(&self, target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        let cat = self.catalogue().ok();
        let rules = GtcRules::new(self.direction, cat.as_deref(), problem);
        let default = self.static_default(target, problem);
        Box::new(match (cat, default.as_slice()) {
            (Some(cat), &[entry, gks]) => rules.with_default(&cat, problem, entry, gks),
            _ => rules,
        })
    }

    /// MIOpen's `HeuristicInit` as `[entry, split]`; where the default rewrites `vector_store`
    /// or sets a split on an entry whose catalogue flag is 0, the catalogue's twin entry that
    /// MIOpen's `operator==` equates with the result ([`Catalogue::twin`]: MIOpen prints index 0
    /// in a default; a tuned value prints its entry's). Empty when the catalogue cannot be read.
    fn static_default(&self, target: &Target, problem: &ConvProblem) -> Vec<i64> {
        let Ok(cat) = self.catalogue() else {
            return Vec::new();
        };
        let d = Dims::new(problem);
        match rules::static_default(&d, &cat, i128::from(compute_units(target))) {
            Some((entry, gks, vs)) => {
                let e = &cat.entries[entry];
                let entry = if vs != e.vector_store || (gks != 0) != e.can_split {
                    cat.twin(e, vs, gks != 0).unwrap_or(entry)
                } else {
                    entry
                };
                vec![entry as i64, gks]
            }
            None => Vec::new(),
        }
    }

    /// wrw: the smallest split value (occupancy factor) of `1..=10` that launches the same
    /// number of GEMM-K splits as the config's ([`rules::wrw_launched_splits`]): MIOpen then runs
    /// the same kernel with the same grid and arguments, so the tuner's choice among them is
    /// timing noise. fwd and bwd pass the split to the kernel as is: the config itself.
    fn canonical(&self, target: &Target, problem: &ConvProblem, config: &[i64]) -> Vec<i64> {
        if self.direction != Direction::BackwardWeights {
            return config.to_vec();
        }
        let ([entry, gks], Ok(cat)) = (config, self.catalogue()) else {
            return config.to_vec();
        };
        let Some(e) = usize::try_from(*entry).ok().and_then(|i| cat.entries.get(i)) else {
            return config.to_vec();
        };
        if *gks < 1 || !e.can_split {
            return config.to_vec();
        }
        let d = Dims::new(problem);
        let cus = i128::from(compute_units(target));
        let want = rules::wrw_launched_splits(&d, e, *gks, cus);
        let first = (1..=rules::max_gks(self.direction))
            .find(|&g| rules::wrw_launched_splits(&d, e, g, cus) == want)
            .unwrap_or(*gks);
        vec![*entry, first.min(*gks)]
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        match self.direction {
            Direction::Forward => (&[Direction::Forward], 3),
            Direction::BackwardData => (&[Direction::BackwardData], 3),
            Direction::BackwardWeights => (&[Direction::BackwardWeights], 3),
        }
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        OWN_FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        own_features(problem)
    }
}
