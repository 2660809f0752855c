//! MIOpen 3.5.1's 3-D CK grouped solvers, `ConvHipImplicitGemm3DGroup{Fwd,Bwd,Wrw}Xdlops`, as
//! [`Tunable`] solvers (issue 35 item 2): tuneinfer's dataset, `eval --no-model` and the nearest
//! tuned neighbour serve them like any other tunable solver.
//!
//! **A config is two integers, `[instance, split_k]`**: the instance as one unit, then the
//! split (1 where the solver has none: 3-D fwd and bwd). The instance is an index into the
//! solver's instances over every data type ([`SolverInstances`]: the catalogues of
//! [`super::index`] for FP32, FP16, BF16 and INT8 in that order, deduplicated by type
//! string). One index per type string, whatever the data type, because a kernel id does not name
//! its data type (`parse_params` has no problem to read it from) and the same type string is on
//! several types' lists; the rules then accept an instance only when the problem's data type's
//! catalogue holds it. So a decoded or neighbour config is valid by construction when [`CkRules`]
//! accept it: in the catalogue of the problem's type, supported for the problem (CK's
//! `IsSupportedArgument` as MIOpen 3.5.1's CK has it, [`CkVersion::Miopen351`]), and the split one
//! of MIOpen's values where the solver has one.
//!
//! `format_params` prints MIOpen's kernel id (the type string, plus `+split_k` for 3-D wrw);
//! `parse_params` reads one back through the catalogue: an instance the catalogue does not hold
//! is an error, so such an id is never written.
//!
//! The catalogue is built into tuneinfer (`src/solvers/ck/data/`, [`CkIndex::builtin`]) and
//! parsed at first use, once per process; no file is read.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout};
use crate::solvers::tunable::{log2_feature, precision_feature, product_below};
use crate::solvers::{IntRules, OwnModelsOnly, Target, Tunable, NUM_FEATURES};

use super::index::{SolverCatalogue, Entry, CkIndex};
use super::instance::parse_kernel_id;
use super::rules::{applicable, check_kernel, CkProblem, CkSolver, CkType, CkVersion, SPLIT_K_VALUES};

/// The two decoded parameters.
pub const PARAM_NAMES: [&str; 2] = ["instance", "split_k"];

/// One of MIOpen 3.5.1's CK grouped solvers as a [`Tunable`].
pub struct CkTunable {
    pub solver: CkSolver,
}

pub static FWD_3D: CkTunable = CkTunable {
    solver: CkSolver::Fwd3d,
};
pub static BWD_3D: CkTunable = CkTunable {
    solver: CkSolver::Bwd3d,
};
pub static WRW_3D: CkTunable = CkTunable {
    solver: CkSolver::Wrw3d,
};

/// The 2-D solvers through the same catalogue: the [`Tunable`] side of the registered
/// `ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops` ([`super::CkGroupSolver::ck_tunable`], not
/// registered themselves). Their applicability (NHWC and NCHW, FP32/FP16/BF16) is the solvers'
/// `check`; MIOpen's 2024 KTN models, where found, answer the problems they take (NHWC,
/// FP32/FP16, the 2024 lists), the nearest tuned neighbour or MIOpen 3.5.1's default the others
/// (docs/ck.md).
pub static FWD_2D: CkTunable = CkTunable {
    solver: CkSolver::Fwd2d,
};
pub static BWD_2D: CkTunable = CkTunable {
    solver: CkSolver::Bwd2d,
};
pub static WRW_2D: CkTunable = CkTunable {
    solver: CkSolver::Wrw2d,
};

/// The arches tuneinfer serves these solvers on: MIOpen 3.5.1's CK whitelist
/// (`ck_utility_common.hpp` `is_ck_whitelist`: gfx908, gfx90a, gfx942, gfx950) less gfx908,
/// which has no tuned CK row to check the catalogue and rules against.
pub fn arch_served(arch: &str) -> bool {
    let a = arch.to_ascii_lowercase();
    a.starts_with("gfx90a") || a.starts_with("gfx942") || a.starts_with("gfx950")
}

/// A solver's instances over every data type (the module's doc says why one index serves all
/// types).
#[derive(Debug)]
pub struct SolverInstances {
    pub index: Arc<CkIndex>,
    pub solver: CkSolver,
    /// Index -> type string: FP32's catalogue first, then the type strings FP16's adds, BF16's,
    /// INT8's (each in its catalogue's order).
    pub type_strings: Vec<String>,
    by_type: HashMap<String, usize>,
}

impl SolverInstances {
    fn build(index: Arc<CkIndex>, solver: CkSolver) -> SolverInstances {
        let mut type_strings = Vec::new();
        let mut by_type = HashMap::new();
        for dtype in CkType::ALL {
            for e in index.catalogue(solver, dtype).map_or(&[][..], |c| &c.entries[..]) {
                if !by_type.contains_key(&e.instance.type_string) {
                    by_type.insert(e.instance.type_string.clone(), type_strings.len());
                    type_strings.push(e.instance.type_string.clone());
                }
            }
        }
        SolverInstances {
            index,
            solver,
            type_strings,
            by_type,
        }
    }

    /// The index of a type string.
    pub fn position(&self, type_string: &str) -> Option<usize> {
        self.by_type.get(type_string).copied()
    }

    /// The catalogue of a data type.
    pub fn catalogue(&self, dtype: CkType) -> Option<&SolverCatalogue> {
        self.index.catalogue(self.solver, dtype)
    }

    /// The entry of instance `i` in `dtype`'s catalogue (None when that catalogue lacks it).
    pub fn entry(&self, i: i64, dtype: CkType) -> Option<&Entry> {
        let ts = self.type_strings.get(usize::try_from(i).ok()?)?;
        self.catalogue(dtype)?.find(ts)
    }
}

/// The instances of `solver`, built once per process from the catalogues built into tuneinfer
/// ([`CkIndex::builtin`]).
pub fn solver_instances(solver: CkSolver) -> Result<Arc<SolverInstances>> {
    static CACHE: OnceLock<Mutex<BTreeMap<CkSolver, Arc<SolverInstances>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&solver) {
        return Ok(found.clone());
    }
    let index = CkIndex::builtin_cached()?;
    let built = Arc::new(SolverInstances::build(index, solver));
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(solver, built.clone());
    Ok(built)
}

/// The split-k values a config's second position takes: MIOpen's powers of two where the
/// solver's kernel id has `+split_k`, else 1.
pub fn split_values(solver: CkSolver) -> &'static [u64] {
    if solver.has_split_k() {
        &SPLIT_K_VALUES
    } else {
        &[1]
    }
}

/// The arch as the rules read it (`gfx942`, lowercase, no features).
fn arch_of(target: &Target) -> String {
    target.arch.to_ascii_lowercase()
}

/// The kernel ids of one problem that MIOpen 3.5.1 accepts, as `[instance, split_k]`.
pub struct CkRules {
    solver: CkSolver,
    instances: Option<Arc<SolverInstances>>,
    problem: Option<CkProblem>,
    arch: String,
}

impl CkRules {
    pub fn new(solver: CkSolver, target: &Target, problem: &ConvProblem) -> CkRules {
        CkRules {
            solver,
            instances: solver_instances(solver).ok(),
            problem: CkProblem::new(problem, problem.precision.into()).ok(),
            arch: arch_of(target),
        }
    }

    /// Is `[instance, split]` a kernel id MIOpen 3.5.1 runs for the problem?
    pub fn accepts(&self, instance: i64, split: i64) -> bool {
        let (Some(inst), Some(p)) = (&self.instances, &self.problem) else {
            return false;
        };
        let Some(entry) = inst.entry(instance, p.dtype) else {
            return false;
        };
        let split_k = match (self.solver.has_split_k(), u64::try_from(split)) {
            (true, Ok(s)) => Some(s),
            (false, Ok(1)) => None,
            _ => return false,
        };
        check_kernel(self.solver, &entry.instance, split_k, p, &self.arch, CkVersion::Miopen351).is_ok()
    }

    /// The instances of the problem's data type, in catalogue order, as indices.
    fn candidates(&self) -> Vec<i64> {
        let (Some(inst), Some(p)) = (&self.instances, &self.problem) else {
            return Vec::new();
        };
        inst.catalogue(p.dtype).map_or_else(Vec::new, |c| {
            c.entries
                .iter()
                .filter_map(|e| inst.position(&e.instance.type_string))
                .map(|i| i as i64)
                .collect()
        })
    }

    /// Every accepted config, in catalogue order then split order.
    pub fn valid_configs(&self) -> Vec<[i64; 2]> {
        let splits = split_values(self.solver);
        self.candidates()
            .into_iter()
            .flat_map(|i| splits.iter().map(move |&s| [i, s as i64]))
            .filter(|&[i, s]| self.accepts(i, s))
            .collect()
    }
}

impl IntRules for CkRules {
    fn config_len(&self) -> usize {
        2
    }

    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        match prefix {
            [] => true,
            [i] => split_values(self.solver).iter().any(|&s| self.accepts(*i, s as i64)),
            [i, s] => self.accepts(*i, *s),
            _ => false,
        }
    }

    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        let splits = |i: i64| {
            split_values(self.solver)
                .iter()
                .any(|&s| domain.contains(&(s as i64)) && self.accepts(i, s as i64))
        };
        match prefix {
            [] => self.candidates().into_iter().any(|i| domain.contains(&i) && splits(i)),
            [i] => splits(*i),
            [i, s] => self.accepts(*i, *s),
            _ => false,
        }
    }
}

/// The feature names of tuneinfer's model of these solvers.
pub const FEATURE_NAMES: [&str; NUM_FEATURES] = [
    "log2 C/G",
    "log2 K/G",
    "log2 GEMM M (N x output pixels; bwd data: N x input pixels)",
    "log2 G",
    "log2 dilated filter volume",
    "log2 stride volume",
    "log2 (1 + pad sum)",
    "log2 N",
    "log2 D_in",
    "log2 H_in",
    "log2 W_in",
    "precision (0 fp32, 1 fp16, 2 bf16)",
];

/// How many leading features are log2 sizes (the nearest neighbour's distance).
pub const SIZE_FEATURES: usize = 7;

/// tuneinfer's features of a CK problem, the GEMM's sizes first: log2 of the per-group channels
/// (C/G, K/G), of the GEMM's M (N times the pixels of y, or of dx for backward data: what CK's
/// implicit GEMM tiles by MPerBlock), of the group count, of the filter's volume with the
/// dilation ((f-1)*dilation+1 per dimension: the extent CK's specialisations and the pads see),
/// of the stride's volume and of 1 + the pads' sum (the seven the neighbour's distance reads);
/// then log2 of N and of x's depth, height and width (a 2-D problem: depth 1), and the precision.
/// Not a feature: the layout (NCDHW runs the same NDHWGC kernel between transposes).
///
/// On gfx942130's held-out split (seed 1) this distance gave the neighbour fwd 26.1, bwd 49.4,
/// wrw 40.3% exact, against 23.4, 47.3, 34.3 for the ten log2 sizes of x (C/G, K/G, N, G, D, H,
/// W, filter, stride, pads) and 26.7, 47.9, 40.5 for the first five alone (docs/ck.md).
pub fn features(p: &ConvProblem) -> [f32; NUM_FEATURES] {
    let g = p.groups.max(1);
    let d = p.depth.unwrap_or(crate::problem::Depth {
        in_d: 1,
        out_d: 1,
        filter_d: 1,
        pad_d: 0,
        stride_d: 1,
        dilation_d: 1,
    });
    let extent = |f: u64, dil: u64| f.saturating_sub(1).saturating_mul(dil.max(1)).saturating_add(1);
    let filter = extent(d.filter_d, d.dilation_d)
        .saturating_mul(extent(p.filter_h, p.dilation_h))
        .saturating_mul(extent(p.filter_w, p.dilation_w));
    let stride = d.stride_d.saturating_mul(p.stride_h).saturating_mul(p.stride_w);
    let pads = d.pad_d.saturating_add(p.pad_h).saturating_add(p.pad_w);
    let m = if p.direction == Direction::BackwardData {
        p.n.saturating_mul(d.in_d).saturating_mul(p.in_h).saturating_mul(p.in_w)
    } else {
        p.n.saturating_mul(d.out_d)
            .saturating_mul(p.out_h)
            .saturating_mul(p.out_w)
    };
    [
        log2_feature(p.c / g),
        log2_feature(p.k / g),
        log2_feature(m),
        log2_feature(g),
        log2_feature(filter),
        log2_feature(stride),
        log2_feature(pads.saturating_add(1)),
        log2_feature(p.n),
        log2_feature(d.in_d),
        log2_feature(p.in_h),
        log2_feature(p.in_w),
        precision_feature(p.precision),
    ]
}

/// MIOpen 3.5.1's 3-D fwd `Init` (`conv_hip_implicit_gemm_3d_grouped_fwd_xdlops.cpp:384-425`):
/// for FP16 and BF16 with C > 8 and one group, the kernel it names (by K < 64 or not) when the
/// problem supports it; None otherwise (the first supported instance then).
fn fwd_3d_preferred(p: &ConvProblem) -> Option<&'static str> {
    use crate::problem::Precision;
    if p.c <= 8 || p.groups != 1 {
        return None;
    }
    match (p.precision, p.k < 64) {
        (Precision::Bf16, true) => Some(
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<256, 64, 64, 64, Default, 32, 32, 1, 1, 8, 8, 8, 1, 1, \
             BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v3>",
        ),
        (Precision::Bf16, false) | (Precision::Fp16, false) => Some(
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<256, 128, 128, 64, Default, 32, 32, 2, 2, 8, 8, 8, 1, 1, \
             BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v3>",
        ),
        (Precision::Fp16, true) => Some(
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<64, 16, 16, 128, Default, 16, 16, 1, 1, 8, 8, 4, 1, 1, \
             BlkGemmPipelineScheduler: Interwave, BlkGemmPipelineVersion: v1>",
        ),
        (Precision::Fp32, _) => None,
    }
}

impl CkTunable {
    fn not_applicable(&self, reason: impl Into<String>) -> Error {
        Error::NotApplicable {
            solver: self.solver.name().into(),
            reason: reason.into(),
        }
    }

    fn instances(&self) -> Result<Arc<SolverInstances>> {
        solver_instances(self.solver)
    }

    /// MIOpen 3.5.1's `IsApplicable` (`conv_hip_implicit_gemm_3d_grouped_{fwd,bwd,wrw}_xdlops.cpp`):
    /// the direction, 3-D, NDHWC or NCDHW, the CK whitelist, every tensor's strides an `int`
    /// (`AllTensorsDimsFitIntoInt`), wrw BF16 on gfx942/gfx95x only, and some instance of the
    /// catalogue supporting the problem (`CheckCKApplicability`). Not modelled (a problem does
    /// not carry them): the environment switches, the deterministic attribute, mixed data types,
    /// non-packed NCDHW tensors, alpha/beta other than 1/0.
    pub fn check_applicable(&self, target: &Target, p: &ConvProblem) -> Result<()> {
        let name = self.solver.name();
        if self.solver.spatial_dims() == 2 {
            crate::solvers::two_d_only(name, p)?;
        }
        if p.direction != self.solver.direction() {
            return Err(self.not_applicable(format!(
                "direction {}: {name} tunes direction {} only",
                p.direction,
                self.solver.direction()
            )));
        }
        if self.solver.spatial_dims() == 3 && !p.is_3d() {
            return Err(self.not_applicable(format!(
                "a 2-D problem ({}): MIOpen 3.5.1 applies {name} to 3-D problems only (Is3d; a 2-D problem \
                 in 3-D form, depth 1, is one)",
                p.layout_name()
            )));
        }
        if !arch_served(&target.arch) {
            return Err(self.not_applicable(format!(
                "arch {}: tuneinfer serves {name} on gfx90a, gfx942 and gfx950 (MIOpen 3.5.1's CK whitelist \
                 also has gfx908, which has no tuned CK row to check the catalogue against)",
                target.arch
            )));
        }
        let dtype = CkType::from(p.precision);
        let ckp = CkProblem::new(p, dtype).map_err(|e| self.not_applicable(e.to_string()))?;
        let arch = arch_of(target);
        applicable(self.solver, &ckp, &arch).map_err(|why| self.not_applicable(why.to_string()))?;
        let d = p.depth.map_or((1, 1, 1), |d| (d.in_d, d.out_d, d.filter_d));
        // `TensorDescriptor::AllDimsFitIntoInt` (`tensor.cpp:878`): every length and every
        // stride an `int`; a packed tensor's largest stride is the product of all its lengths
        // but the outermost (N of x and y, K of w: [K, C/G, D, H, W]).
        let sizes: [&[u64]; 3] = [
            &[p.c, d.0, p.in_h, p.in_w],
            &[p.k, d.1, p.out_h, p.out_w],
            &[ckp.c, d.2, p.filter_h, p.filter_w],
        ];
        if sizes
            .iter()
            .any(|t| !product_below(&t.iter().map(|&v| u128::from(v)).collect::<Vec<_>>(), 31))
        {
            return Err(
                self.not_applicable("a tensor stride above 2^31 - 1 (MIOpen's AllTensorsDimsFitIntoInt)".to_string())
            );
        }
        let inst = self
            .instances()
            .map_err(|e| self.not_applicable(format!("its kernel catalogue does not read: {e}")))?;
        let Some(cat) = inst.catalogue(dtype) else {
            return Err(self.not_applicable(format!(
                "data type {}: no {name} instance is known for it",
                dtype.name()
            )));
        };
        if cat.supported(&ckp, &arch).next().is_none() {
            return Err(self.not_applicable(format!(
                "no instance of the {} catalogue ({} instances) supports the problem (CK's IsSupportedArgument; \
                 MIOpen's CheckCKApplicability)",
                dtype.name(),
                cat.entries.len()
            )));
        }
        Ok(())
    }
}

impl OwnModelsOnly for CkTunable {
    fn table_constraint(&self) -> bool {
        true
    }

    /// A kernel id in the form MIOpen `version` reads ([`super::versions::written_form`]).
    fn written_form(
        &self,
        problem: &ConvProblem,
        config: &str,
        version: Option<crate::solvers::MiopenVersion>,
    ) -> std::result::Result<String, String> {
        let version = version.and_then(CkVersion::of);
        super::versions::written_form(self.solver, problem.precision.into(), config, version)
    }

    fn problem_note(&self, _target: &Target, problem: &ConvProblem) -> Option<String> {
        (problem.layout == Layout::Nchw).then(|| {
            format!(
                "{} problem: MIOpen runs {}'s {} kernel between transpose kernels (it needs their workspace); \
                 the kernel id is the same",
                problem.layout_name(),
                self.solver.name(),
                if problem.is_3d() { "NDHWGC" } else { "NHWGC" }
            )
        })
    }
}

impl Tunable for CkTunable {
    fn solver_name(&self) -> &'static str {
        self.solver.name()
    }

    fn param_names(&self) -> &'static [&'static str] {
        &PARAM_NAMES
    }

    /// A kernel id -> `[instance, split_k]`: an error when it does not parse, when the solver's
    /// instances do not hold its type string, or when its `+split_k` is missing, extra or not one
    /// of MIOpen's values.
    fn parse_params(&self, s: &str) -> Result<Vec<i64>> {
        let name = self.solver.name();
        let what = || format!("{name} kernel id '{}'", crate::error::quote_short(s));
        let inst = self.instances()?;
        // The catalogue's type strings are exactly as MIOpen prints them: a tuned id is found by
        // its text (the type string, then the split) without parsing its arguments.
        let text = s.trim();
        let (head, tail) = match text.rsplit_once('+') {
            Some((head, tail)) if head.ends_with('>') => (head, Some(tail)),
            _ => (text, None),
        };
        if let Some(i) = inst.position(head) {
            let split = match (self.solver.has_split_k(), tail.map(str::parse::<u64>)) {
                (true, Some(Ok(sk))) if SPLIT_K_VALUES.contains(&sk) => Some(sk),
                (false, None) => Some(1),
                _ => None,
            };
            if let Some(split) = split {
                return Ok(vec![i as i64, split as i64]);
            }
        }
        let id = parse_kernel_id(s)?;
        let Some(i) = inst.position(&id.instance.type_string) else {
            return Err(Error::format(
                what(),
                format!("its instance is not in MIOpen 3.5.1's {name} catalogue"),
            ));
        };
        let split = match (self.solver.has_split_k(), id.split_k) {
            (true, Some(sk)) if SPLIT_K_VALUES.contains(&sk) => sk,
            (true, Some(sk)) => {
                return Err(Error::format(
                    what(),
                    format!("split-k {sk} is not a power of two in 1..128"),
                ))
            }
            (true, None) => return Err(Error::format(what(), "no +split_k (this solver's ids end in one)")),
            (false, None) => 1,
            (false, Some(_)) => return Err(Error::format(what(), "a +split_k (this solver's ids have none)")),
        };
        Ok(vec![i as i64, split as i64])
    }

    /// `[instance, split_k]` as MIOpen's perf db stores it: the type string, `+split_k` where the
    /// solver has one.
    fn format_params(&self, config: &[i64]) -> String {
        let ts = match (config, self.instances()) {
            ([i, _], Ok(inst)) => usize::try_from(*i).ok().and_then(|i| inst.type_strings.get(i).cloned()),
            _ => None,
        };
        match (ts, config) {
            (Some(ts), [_, s]) if self.solver.has_split_k() => format!("{ts}+{s}"),
            (Some(ts), _) => ts,
            _ => format!("<{} instance {config:?}: no such catalogue entry>", self.solver.name()),
        }
    }

    /// A model file stores an instance as its type string, not its index: the index is a
    /// position in a catalogue built from the data at hand (MIOpen's tuned rows add instances),
    /// which other data shifts.
    fn value_text(&self, position: usize, value: i64) -> String {
        let name = match (position, self.instances()) {
            (0, Ok(inst)) => usize::try_from(value)
                .ok()
                .and_then(|i| inst.type_strings.get(i).cloned()),
            _ => None,
        };
        name.unwrap_or_else(|| value.to_string())
    }

    /// A type string -> its index in this run's catalogue (None when the catalogue lacks it);
    /// an error for a text that is no CK instance.
    fn text_value(&self, text: &str) -> Result<Option<i64>> {
        let text = text.trim();
        if let Ok(v) = text.parse::<i64>() {
            return Ok(Some(v));
        }
        // Without MIOpen's data no instance is known: the model still loads, and the solver then
        // does not apply, saying why (its check reads the catalogue).
        if let Some(i) = self.instances().ok().and_then(|inst| inst.position(text)) {
            return Ok(Some(i as i64));
        }
        parse_kernel_id(text)?;
        Ok(None)
    }

    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_applicable(target, problem)
    }

    fn rules(&self, target: &Target, problem: &ConvProblem) -> Box<dyn IntRules> {
        Box::new(CkRules::new(self.solver, target, problem))
    }

    /// MIOpen ships KTN models of the 2-D solvers for gfx942 (and gfx90a): `eval` compares
    /// tuneinfer's MI300X models with gfx942's. None of the 3-D solvers.
    fn miopen_model_arches(&self) -> &'static [&'static str] {
        match self.solver {
            CkSolver::Fwd2d | CkSolver::Bwd2d | CkSolver::Wrw2d => &["gfx942"],
            _ => &[],
        }
    }

    /// MIOpen 3.5.1's `HeuristicInit` -> `Init`: the first instance of the problem's valid list
    /// (`FillValidKernelsIDs`: CK's factory order, kept by the instances that support the
    /// problem), split-k 1; 3-D fwd FP16/BF16 with C > 8 and one group first tries the kernel it
    /// names. The valid list here is the catalogue's: for the instances only tuned rows name
    /// (every 3-D instance: no reachable 3-D list), the order is tuneinfer's (by type string),
    /// not CK's factory order, so the "first" may differ from MIOpen's. Empty when no instance
    /// supports the problem or the catalogue cannot be read.
    fn static_default(&self, target: &Target, problem: &ConvProblem) -> Vec<i64> {
        let rules = CkRules::new(self.solver, target, problem);
        if self.solver == CkSolver::Fwd3d {
            if let (Some(ts), Some(inst)) = (fwd_3d_preferred(problem), &rules.instances) {
                if let Some(i) = inst.position(ts) {
                    if rules.accepts(i as i64, 1) {
                        return vec![i as i64, 1];
                    }
                }
            }
        }
        rules
            .candidates()
            .into_iter()
            .find(|&i| rules.accepts(i, 1))
            .map_or_else(Vec::new, |i| vec![i, 1])
    }

    fn feature_names(&self) -> [&'static str; NUM_FEATURES] {
        FEATURE_NAMES
    }

    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES] {
        features(problem)
    }

    fn size_features(&self) -> usize {
        SIZE_FEATURES
    }

    fn workload_kind(&self) -> (&'static [Direction], u64) {
        match self.solver.direction() {
            Direction::Forward => (&[Direction::Forward], 3),
            Direction::BackwardData => (&[Direction::BackwardData], 3),
            Direction::BackwardWeights => (&[Direction::BackwardWeights], 3),
        }
    }
}
