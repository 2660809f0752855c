//! MIOpen's composable_kernel (CK) grouped-convolution solvers with KTN models:
//! `ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops` on gfx90a and gfx942. MIOpen's 2024 KTN models
//! take FP32 and FP16 NHWC problems over the 2024 instance lists ([`Solver::check_network`]);
//! the solvers apply as MIOpen 3.5.1 applies them ([`Solver::check`]: NCHW and BF16 too, over
//! the 3.5.1 catalogue, [`tunable`]), and what the KTN does not take is served as a cell
//! without a network (the nearest tuned neighbour or MIOpen 3.5.1's default).
//!
//! The model does not predict numbers that are checked by formulas: it spells a CK kernel
//! instance, token by token. MIOpen keeps the instances the problem supports (CK's
//! `IsSupportedArgument`, see [`catalogue`]), and at each decoder position keeps only those
//! whose template argument at the mapped index equals the value. The answer is the first
//! remaining instance in factory order, printed as MIOpen's kernel id. Which template index a
//! decoder position reads is per (solver, arch); see [`Plan`]. Sources: `../shared/miopen/README.md`,
//! `../shared/miopen/ck/README.md`, MIOpen 2d1fd997a `conv_hip_implicit_gemm_grouped_*_xdlops.cpp`
//! (`ModelApplyToken`, `InitHeuristicKernelIDs`, `GetFeatures`) and `ai_heuristics.cpp`.

pub mod catalogue;
pub mod constraint;
pub mod features;
pub mod index;
pub mod instance;
pub mod rules;
pub mod tunable;
pub mod versions;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::format::metadata::KtnMetadata;
use crate::problem::{ConvProblem, Direction, Layout, Precision};
use crate::search::{Constraint, Vocabulary};

/// The WGSL rules library of catalogue solvers (`shaders/catalogue_rules.wgsl`).
pub const CATALOGUE_RULES: &str = "catalogue_rules";
use crate::solvers::{Solver, Target, Tunable};

use catalogue::Catalogue;
use instance::CkInstance;
use rules::{supports, CkProblem, CkVersion};
use constraint::{CandidateTable, CatalogueConstraint, Lengths, MiopenFirst, NO_VALUE};

/// GPU architectures MIOpen ships these models for.
pub const ARCHES: [&str; 2] = ["gfx90a", "gfx942"];

/// What a decoder position holds for one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// The kernel type (`predict_type` 1 models, position 0).
    Type,
    /// The instance's template token at this index.
    Token(usize),
    /// The split-k value of a wrw kernel id `instance+split_k`.
    SplitK,
}

/// How the kernel id is completed after the instance name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Suffix {
    None,
    /// `+1` (wrw, split-k 1).
    PlusOne,
    /// `+{split_k}` from the decoded split-k value.
    SplitK,
}

/// Everything that differs between (solver, arch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Plan {
    /// `{model}` of the `{arch}_{model}_*.ktn.model` files.
    pub model: &'static str,
    /// `predict_type` 0 models: the kernel type MIOpen filters on (by substring).
    pub fixed_type: Option<&'static str>,
    pub suffix: Suffix,
    arch: Arch,
    direction: Direction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Arch {
    Gfx90a,
    Gfx942,
}

impl Plan {
    /// The plan for `direction` on `arch`, or a NotApplicable error naming the supported arches.
    pub fn new(solver: &str, direction: Direction, arch: &str) -> Result<Plan> {
        let arch = match arch {
            "gfx90a" => Arch::Gfx90a,
            "gfx942" => Arch::Gfx942,
            other => {
                return Err(Error::NotApplicable {
                    solver: solver.to_string(),
                    reason: format!(
                        "MIOpen has no model for arch '{other}' (supported: {})",
                        ARCHES.join(", ")
                    ),
                })
            }
        };
        let (model, fixed_type, suffix) = match (direction, arch) {
            (Direction::Forward, Arch::Gfx90a) => (
                "ConvHipIgemmGroupFwdXdlops",
                Some("DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle"),
                Suffix::None,
            ),
            (Direction::Forward, Arch::Gfx942) => ("ConvHipIgemmGroupFwdXdlops", None, Suffix::None),
            (Direction::BackwardData, _) => (
                "ConvHipIgemmGroupXdlops",
                Some("DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1"),
                Suffix::None,
            ),
            (Direction::BackwardWeights, Arch::Gfx90a) => (
                "ConvHipIgemmGroupXdlops",
                Some("DeviceGroupedConvBwdWeight_Xdl_CShuffle"),
                Suffix::PlusOne,
            ),
            (Direction::BackwardWeights, Arch::Gfx942) => ("ConvHipIgemmGroupWrwXdlops", None, Suffix::SplitK),
        };
        Ok(Plan {
            model,
            fixed_type,
            suffix,
            arch,
            direction,
        })
    }

    /// Which template index (or other cell) decoder position `pos` reads for `inst`
    /// (MIOpen's `ModelApplyToken` index arithmetic).
    pub fn cell(&self, pos: usize, n_tokens: usize) -> Cell {
        match (self.direction, self.arch) {
            // MPerXDL and NPerXDL (indices 5, 6) are skipped.
            (Direction::Forward, Arch::Gfx90a) => Cell::Token(if pos >= 5 { pos + 2 } else { pos }),
            (Direction::Forward, Arch::Gfx942) => match pos {
                0 => Cell::Type,
                p => Cell::Token(p - 1),
            },
            // Index 13 (CShuffleMXdlPerWavePerShuffle) is skipped.
            (Direction::BackwardData, _) | (Direction::BackwardWeights, Arch::Gfx90a) => {
                Cell::Token(if pos == 13 { 14 } else { pos })
            }
            (Direction::BackwardWeights, Arch::Gfx942) => {
                if pos == 0 {
                    return Cell::Type;
                }
                let mut idx = pos - 1;
                if idx >= 12 {
                    idx += 2;
                }
                if (idx == 15 && n_tokens == 15) || idx == 18 {
                    Cell::SplitK
                } else {
                    Cell::Token(idx)
                }
            }
        }
    }

    /// The direction key of `num_tuning_params` for `predict_type` 0 models.
    fn direction_key(&self) -> &'static str {
        match self.direction {
            Direction::Forward => "fwd",
            Direction::BackwardData => "bwd",
            Direction::BackwardWeights => "wrw",
        }
    }

    /// MIOpen's kernel id for `inst` with split-k `split_k`.
    pub fn kernel_id(&self, inst: &CkInstance, split_k: u64) -> String {
        match self.suffix {
            Suffix::None => inst.type_string.clone(),
            Suffix::PlusOne => format!("{}+1", inst.type_string),
            Suffix::SplitK => format!("{}+{split_k}", inst.type_string),
        }
    }
}

/// One of the three grouped-convolution solvers.
#[derive(Debug)]
pub struct CkGroupSolver {
    pub name: &'static str,
    pub direction: Direction,
}

pub static FWD: CkGroupSolver = CkGroupSolver {
    name: "ConvHipImplicitGemmGroupFwdXdlops",
    direction: Direction::Forward,
};
pub static BWD: CkGroupSolver = CkGroupSolver {
    name: "ConvHipImplicitGemmGroupBwdXdlops",
    direction: Direction::BackwardData,
};
pub static WRW: CkGroupSolver = CkGroupSolver {
    name: "ConvHipImplicitGemmGroupWrwXdlops",
    direction: Direction::BackwardWeights,
};

/// The catalogue directory of a target (None: the built-in lists).
fn catalogue_dir(target: &Target) -> Option<PathBuf> {
    catalogue::default_dir(target.catalogue_dir.as_deref())
}

impl CkGroupSolver {
    fn plan(&self, target: &Target) -> Result<Plan> {
        Plan::new(self.name, self.direction, &target.arch)
    }

    /// The solver as MIOpen 3.5.1 has it, over its catalogue ([`tunable`]): its
    /// applicability, rules, default and features (NCHW, BF16 and the instances the 2024 lists
    /// lack included).
    pub fn ck_tunable(&self) -> &'static tunable::CkTunable {
        match self.direction {
            Direction::Forward => &tunable::FWD_2D,
            Direction::BackwardData => &tunable::BWD_2D,
            Direction::BackwardWeights => &tunable::WRW_2D,
        }
    }

    /// The refusals of MIOpen's 2024 KTN models (NHWC, FP32/FP16, the 2024 instance lists), with
    /// MIOpen 3.5.1's applicability left to [`Solver::check`]: what [`Solver::check_network`]
    /// checks.
    pub fn check_ktn(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        let (_, dims, catalogue) = self.prepare(target, problem)?;
        if catalogue.supported(&dims).next().is_none() {
            return Err(self.not_applicable(format!(
                "no composable_kernel instance of {} supports this problem",
                catalogue.path.display()
            )));
        }
        Ok(())
    }

    fn not_applicable(&self, reason: String) -> Error {
        Error::NotApplicable {
            solver: self.name.to_string(),
            reason,
        }
    }

    /// Checks the problem and returns its CK view and catalogue.
    fn prepare(&self, target: &Target, problem: &ConvProblem) -> Result<(Plan, CkProblem, std::sync::Arc<Catalogue>)> {
        crate::solvers::two_d_only(self.name(), problem)?;
        let plan = self.plan(target)?;
        if problem.direction != self.direction {
            return Err(self.not_applicable(format!(
                "it tunes direction {} only, the problem is direction {}",
                self.direction, problem.direction
            )));
        }
        if !matches!(problem.precision, Precision::Fp32 | Precision::Fp16) {
            return Err(self.not_applicable(format!(
                "data type {} has no model (FP32 and FP16 only)",
                problem.precision
            )));
        }
        if problem.layout != Layout::Nhwc {
            return Err(self.not_applicable(format!(
                "layout {} is not supported (the instance lists are NHWGC: use NHWC)",
                problem.layout
            )));
        }
        let dims = CkProblem::new(problem, problem.precision.into())?;
        let catalogue = catalogue::load_cached(catalogue_dir(target).as_deref(), self.direction, problem.precision)?;
        Ok((plan, dims, catalogue))
    }

    /// The candidate table and constraint of one problem.
    pub fn build_constraint(
        &self,
        target: &Target,
        problem: &ConvProblem,
        vocab: &Vocabulary,
        metadata: &KtnMetadata,
    ) -> Result<CatalogueConstraint> {
        let (plan, dims, catalogue) = self.prepare(target, problem)?;
        Ok(PlanIndex::cached(&plan, &catalogue, vocab, metadata)?.constraint(&dims))
    }
}

/// One way of writing an instance as a value sequence (before split-k expansion).
#[derive(Debug, Clone)]
struct RowTemplate {
    instance: u32,
    cells: Vec<u32>,
    split_pos: Option<usize>,
    /// Answer id (split rows: the id for the first entry of `split_values`).
    answer: u32,
}

/// Everything about (plan, catalogue, model vocabulary) that does not depend on the problem:
/// built once, then each problem only runs the support rules and copies rows.
#[derive(Debug)]
pub struct PlanIndex {
    plan: Plan,
    catalogue: Arc<Catalogue>,
    vocab_values: Vec<String>,
    predict_type: u32,
    num_tuning_params: Vec<(String, usize)>,
    width: usize,
    lengths: Lengths,
    rows: Vec<RowTemplate>,
    /// Kernel ids every row can name.
    answers: Arc<Vec<String>>,
    /// (split-k, value id) of the split-k values the vocabulary has.
    split_values: Vec<(u64, u32)>,
    /// MIOpen's first-position substring filter (fwd gfx942): for each value id that is not a
    /// kernel type, the instances whose name contains it.
    substring: Option<Vec<Vec<u32>>>,
}

impl PlanIndex {
    /// Builds the index: one row template per (instance, kernel type it can be named by), in
    /// factory order.
    pub fn new(plan: Plan, catalogue: Arc<Catalogue>, vocab: &Vocabulary, metadata: &KtnMetadata) -> Result<PlanIndex> {
        let meta_err = |detail: String| Error::format(format!("{} metadata", plan.model), detail);
        let ids: HashMap<&str, u32> = vocab
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| (v.as_str(), i as u32))
            .collect();
        let value_id = |text: &str| -> u32 { ids.get(text).copied().unwrap_or(NO_VALUE) };
        // (type value id, type text, sequence length) for predict_type 1; one pseudo-type otherwise.
        let (types, lengths): (Vec<(u32, String, usize)>, Lengths) = match (plan.fixed_type, metadata.predict_type) {
            (Some(fixed), 0) => {
                let n = *metadata
                    .num_tuning_params
                    .get(plan.direction_key())
                    .ok_or_else(|| meta_err(format!("num_tuning_params has no '{}'", plan.direction_key())))?;
                (vec![(NO_VALUE, fixed.to_string(), n)], Lengths::Fixed(n))
            }
            (None, 1) => {
                let types = metadata
                    .num_tuning_params
                    .iter()
                    .map(|(t, &n)| (value_id(t), t.clone(), n))
                    .filter(|(id, _, _)| *id != NO_VALUE)
                    .collect();
                let by = vocab
                    .values
                    .iter()
                    .map(|v| metadata.num_tuning_params.get(v).copied().unwrap_or(0))
                    .collect();
                (types, Lengths::ByFirstValue(by))
            }
            (_, p) => {
                return Err(meta_err(format!(
                    "predict_type {p} does not fit this solver on this arch (expected {})",
                    if plan.fixed_type.is_some() { 0 } else { 1 }
                )))
            }
        };
        let width = types.iter().map(|t| t.2).max().unwrap_or(0);
        if width == 0 || width > 64 {
            return Err(meta_err(format!("sequence length {width} is out of range")));
        }
        let split_values: Vec<(u64, u32)> = rules::SPLIT_K_VALUES
            .iter()
            .map(|&sk| (sk, value_id(&sk.to_string())))
            .filter(|&(_, id)| id != NO_VALUE)
            .collect();
        let mut rows = Vec::new();
        let mut answers: Vec<String> = Vec::new();
        for (n, inst) in catalogue.instances.iter().enumerate() {
            let tokens = catalogue::kernel_tokens(&inst.type_string).unwrap_or_default();
            for (type_id, type_text, len) in &types {
                if !inst.type_string.contains(type_text.as_str()) {
                    continue;
                }
                let mut split_pos = None;
                let cells = (0..*len)
                    .map(|pos| match plan.cell(pos, tokens.len()) {
                        Cell::Type => *type_id,
                        Cell::Token(i) => tokens.get(i).map_or(NO_VALUE, |t| value_id(t)),
                        Cell::SplitK => {
                            split_pos = Some(pos);
                            NO_VALUE
                        }
                    })
                    .collect();
                let answer = answers.len() as u32;
                match split_pos {
                    None => answers.push(plan.kernel_id(inst, 1)),
                    Some(_) => answers.extend(split_values.iter().map(|&(sk, _)| plan.kernel_id(inst, sk))),
                }
                rows.push(RowTemplate {
                    instance: n as u32,
                    cells,
                    split_pos,
                    answer,
                });
            }
        }
        let substring = match (plan.fixed_type, plan.direction) {
            (None, Direction::Forward) => Some(
                vocab
                    .values
                    .iter()
                    .map(|v| {
                        if v == "-1" || metadata.num_tuning_params.contains_key(v) {
                            return Vec::new();
                        }
                        (0..catalogue.instances.len() as u32)
                            .filter(|&i| catalogue.instances[i as usize].type_string.contains(v.as_str()))
                            .collect()
                    })
                    .collect(),
            ),
            _ => None,
        };
        Ok(PlanIndex {
            plan,
            catalogue,
            vocab_values: vocab.values.clone(),
            predict_type: metadata.predict_type,
            num_tuning_params: metadata
                .num_tuning_params
                .iter()
                .map(|(k, &v)| (k.clone(), v))
                .collect(),
            width,
            lengths,
            rows,
            answers: Arc::new(answers),
            split_values,
            substring,
        })
    }

    /// True when this index was built for these inputs.
    fn is_for(&self, plan: &Plan, catalogue: &Arc<Catalogue>, vocab: &Vocabulary, metadata: &KtnMetadata) -> bool {
        self.plan == *plan
            && Arc::ptr_eq(&self.catalogue, catalogue)
            && self.vocab_values == vocab.values
            && self.predict_type == metadata.predict_type
            && self.num_tuning_params.len() == metadata.num_tuning_params.len()
            && self
                .num_tuning_params
                .iter()
                .zip(&metadata.num_tuning_params)
                .all(|(a, b)| a.0 == *b.0 && a.1 == *b.1)
    }

    /// The index for these inputs, built once per process.
    pub fn cached(
        plan: &Plan,
        catalogue: &Arc<Catalogue>,
        vocab: &Vocabulary,
        metadata: &KtnMetadata,
    ) -> Result<Arc<PlanIndex>> {
        static CACHE: OnceLock<Mutex<Vec<Arc<PlanIndex>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
        if let Ok(list) = cache.lock() {
            if let Some(found) = list.iter().find(|i| i.is_for(plan, catalogue, vocab, metadata)) {
                return Ok(found.clone());
            }
        }
        let index = Arc::new(PlanIndex::new(*plan, catalogue.clone(), vocab, metadata)?);
        if let Ok(mut list) = cache.lock() {
            list.push(index.clone());
        }
        Ok(index)
    }

    /// The candidate table and constraint of one problem: the rows of the instances that
    /// support it (wrw gfx942: one row per split-k value MIOpen accepts).
    pub fn constraint(&self, p: &CkProblem) -> CatalogueConstraint {
        let instances = &self.catalogue.instances;
        let supported: Vec<bool> = instances
            .iter()
            .map(|i| supports(i, p, None, CkVersion::Miopen2024).is_ok())
            .collect();
        let mut table = CandidateTable::new(self.width);
        table.answers = self.answers.clone();
        let mut cells: Vec<u32> = Vec::with_capacity(self.width);
        for row in &self.rows {
            if !supported[row.instance as usize] {
                continue;
            }
            match row.split_pos {
                None => table.push(&row.cells, row.answer, None),
                Some(pos) => {
                    let inst = &instances[row.instance as usize];
                    cells.clear();
                    cells.extend_from_slice(&row.cells);
                    for (j, &(sk, id)) in self.split_values.iter().enumerate() {
                        if supports(inst, p, Some(sk), CkVersion::Miopen2024).is_ok() {
                            cells[pos] = id;
                            table.push(&cells, row.answer + j as u32, Some(pos));
                        }
                    }
                }
            }
        }
        let miopen_first = match (self.plan.fixed_type, self.plan.direction) {
            (Some(_), _) => None,
            (None, Direction::BackwardWeights) => Some(MiopenFirst::Any),
            (None, _) => Some(MiopenFirst::Substring(
                self.substring
                    .iter()
                    .flatten()
                    .map(|list| {
                        list.iter()
                            .find(|&&i| supported[i as usize])
                            .map(|&i| instances[i as usize].type_string.clone())
                    })
                    .collect(),
            )),
        };
        CatalogueConstraint::new(table, self.lengths.clone(), miopen_first)
    }
}

impl Solver for CkGroupSolver {
    fn name(&self) -> &'static str {
        self.name
    }

    fn model_name(&self, arch: &str) -> Result<&'static str> {
        Ok(Plan::new(self.name, self.direction, arch)?.model)
    }

    /// MIOpen 3.5.1's applicability ([`tunable::CkTunable::check_applicable`]: NHWC and NCHW,
    /// FP32/FP16/BF16, some instance of its catalogue supporting the problem): what a cell
    /// without a network checks.
    fn check(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.ck_tunable().check_applicable(target, problem)
    }

    /// MIOpen's KTN models' own refusals ([`CkGroupSolver::check_ktn`]), with the messages they
    /// always had: a network's answers and refusals are those of MIOpen's 2024 models.
    fn check_network(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check_ktn(target, problem)
    }

    fn encoder_input(&self, target: &Target, problem: &ConvProblem) -> Result<Vec<f32>> {
        let plan = self.plan(target)?;
        Ok(match (self.direction, plan.arch) {
            (Direction::Forward, Arch::Gfx90a) => features::fwd_gfx90a(
                problem,
                target.compute_units.unwrap_or(features::DEFAULT_GFX90A_COMPUTE_UNITS),
            ),
            (Direction::Forward, Arch::Gfx942) => features::fwd_gfx942(problem),
            (Direction::BackwardData, _) => features::group_xdlops(problem, 0.0),
            (Direction::BackwardWeights, Arch::Gfx90a) => features::group_xdlops(problem, 1.0),
            (Direction::BackwardWeights, Arch::Gfx942) => features::wrw_gfx942(problem),
        })
    }

    fn constraint(
        &self,
        target: &Target,
        problem: &ConvProblem,
        vocab: &Vocabulary,
        metadata: &KtnMetadata,
    ) -> Result<Box<dyn Constraint + Send + Sync>> {
        Ok(Box::new(self.build_constraint(target, problem, vocab, metadata)?))
    }

    /// MIOpen's `Init`: the first supported instance (any operation), split-k 1. The single
    /// value is the kernel id. Over the 2024 instance lists where they apply (NHWC, FP32/FP16,
    /// an instance supporting the problem: the KTN's fallback as it always was), else over MIOpen
    /// 3.5.1's catalogue ([`Tunable::static_default`] of [`CkGroupSolver::ck_tunable`]) where
    /// 3.5.1 applies the solver.
    fn fallback(&self, target: &Target, problem: &ConvProblem) -> Result<Vec<String>> {
        if let Err(e) = self.check_ktn(target, problem) {
            let t = self.ck_tunable();
            if t.check_applicable(target, problem).is_err() {
                return Err(e);
            }
            let config = t.static_default(target, problem);
            if config.is_empty() {
                return Err(e);
            }
            return Ok(vec![t.format_params(&config)]);
        }
        let (plan, dims, catalogue) = self.prepare(target, problem)?;
        let first = catalogue.supported(&dims).next().ok_or_else(|| {
            self.not_applicable(format!(
                "no composable_kernel instance of {} supports this problem",
                catalogue.path.display()
            ))
        })?;
        let id = match plan.suffix {
            Suffix::None => first.type_string.clone(),
            Suffix::PlusOne | Suffix::SplitK => format!("{}+1", first.type_string),
        };
        Ok(vec![id])
    }

    /// The catalogue constraint runs on the GPU as a table check (each constraint's
    /// [`Constraint::gpu_table`]).
    fn gpu_search(&self) -> crate::solvers::GpuSearch {
        crate::solvers::GpuSearch::Table
    }

    /// A catalogue solver's answer is a kernel id; model answers are named by the constraint
    /// ([`Constraint::config_text`]), a fallback's single value is the kernel id itself.
    fn format_config(&self, values: &[String]) -> String {
        values.join(",")
    }

    /// NCHW: MIOpen runs the NHWGC kernel between transposes ([`tunable::CkTunable`]'s note).
    fn problem_note(&self, target: &Target, problem: &ConvProblem) -> Option<String> {
        crate::solvers::OwnModelsOnly::problem_note(self.ck_tunable(), target, problem)
    }

    /// MIOpen 3.5.1's side of the solver ([`CkGroupSolver::ck_tunable`]): its rules, default and
    /// features, what `eval --no-model`, the nearest tuned neighbour and `userdb`'s checks read.
    fn tunable(&self) -> Option<&dyn crate::solvers::Tunable> {
        Some(self.ck_tunable())
    }

    /// tuneinfer's own models decode `[instance, split_k]` over MIOpen 3.5.1's catalogue, as the
    /// 3-D solvers' do.
    fn own_model_solver(&self) -> Option<&'static dyn Solver> {
        Some(self.ck_tunable())
    }

    /// A kernel id in the form MIOpen `version` reads ([`versions::written_form`]).
    fn written_form(
        &self,
        problem: &ConvProblem,
        config: &str,
        version: Option<crate::solvers::MiopenVersion>,
    ) -> std::result::Result<String, String> {
        crate::solvers::OwnModelsOnly::written_form(self.ck_tunable(), problem, config, version)
    }
}
