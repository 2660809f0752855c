//! Finding and loading the model of one (arch, solver): the one search order that the CPU
//! [`Predictor`](crate::predict::Predictor) and the GPU predictor use, and the one vocabulary
//! check that they and `eval` use.
//!
//! In each model directory, in order: tuneinfer's own attention model
//! `{arch}_{solver}.safetensors` + `.json`, then MIOpen's KTN model
//! `{arch}_{model}_{encoder,decoder,metadata}.ktn.model` (`{model}` is the solver's
//! [`Solver::model_name`]). The first directory holding either kind (or any of its files) wins,
//! and its model must load: a damaged or incomplete model is reported, naming the file, never
//! skipped in favour of a later directory (that would silently predict with a different model).

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::format::bundle;
use crate::format::metadata::KtnMetadata;
use crate::problem::ConvProblem;
use crate::search::{DecoderScratch, StepDecoder, Vocabulary};
use crate::seq2seq::weights::{self, WeightsFiles};
use crate::seq2seq::{AttentionModel, KtnModel, ModelFiles, Seq2SeqModel, States};
use crate::solvers::{Solver, Target};

/// A model found and loaded for one (arch, solver), its vocabulary checked against the solver.
pub enum LoadedModel {
    /// tuneinfer's own seq2seq-with-attention model (`{arch}_{solver}.safetensors` + `.json`).
    Attention(Box<AttentionModel>),
    /// MIOpen's KernelTuningNet model (`{arch}_{model}_*.ktn.model`).
    Ktn(Box<KtnModel>),
    /// A cell served without a network (`{arch}_{solver}.neighbour.json`).
    NoNetwork(Box<NoNetwork>),
}

/// Where the model of one (arch, solver) is, found by [`locate`] (nothing loaded yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// tuneinfer's own model: its files and the arch it was saved for (`gfx906_60`, or the
    /// plain arch when its training database was that very one).
    Attention(WeightsFiles, String),
    /// MIOpen's KTN model.
    Ktn(ModelFiles),
    /// No network: a cell whose validated best predictor is the nearest tuned neighbour (or
    /// MIOpen's default), its figures in `{arch}_{solver}.neighbour.json` ([`NEIGHBOUR_SUFFIX`]);
    /// the file and the name it was saved for.
    Neighbour(PathBuf, String),
}

/// The file-name ending of a cell served without a network: `{arch}_{solver}.neighbour.json`
/// (written by `eval --no-model --record`): the validation figures of the nearest tuned
/// neighbour and MIOpen's default on the cell's held-out problems, in a model JSON's
/// `metrics.methods` form.
pub const NEIGHBOUR_SUFFIX: &str = ".neighbour.json";

/// The record file of a cell served without a network in `dir`.
pub fn neighbour_record_path(dir: &std::path::Path, arch: &str, solver: &str) -> PathBuf {
    dir.join(format!(
        "{arch}_{}{NEIGHBOUR_SUFFIX}",
        weights::file_solver_name(solver)
    ))
}

/// A cell's record ([`Located::Neighbour`]): what `--method` and `userdb` read.
#[derive(Debug, Clone)]
pub struct NeighbourRecord {
    pub arch: String,
    pub solver: String,
    /// How the split was made (`perf_db`, `seed`, `val_fraction`, ...).
    pub training: serde_json::Value,
    /// `{"methods": [...]}`: the validation rows of [`crate::eval::EvalTable::to_json`].
    pub metrics: serde_json::Value,
}

/// The format tag of a [`NeighbourRecord`] file.
pub const NEIGHBOUR_FORMAT: &str = "tuneinfer-neighbour-cell-1";

impl NeighbourRecord {
    /// Reads a record, checking its format tag and that it names `solver` (when given).
    pub fn read(path: &std::path::Path, solver: Option<&str>) -> Result<NeighbourRecord> {
        let text = crate::format::read_text(path)?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| Error::format(path.display().to_string(), e.to_string()))?;
        let field = |name: &str| -> Result<String> {
            v.get(name)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| Error::format(path.display().to_string(), format!("no string field '{name}'")))
        };
        let format = field("format")?;
        if format != NEIGHBOUR_FORMAT {
            return Err(Error::format(
                path.display().to_string(),
                format!(
                    "format '{}', expected '{NEIGHBOUR_FORMAT}'",
                    crate::error::quote_short(&format)
                ),
            ));
        }
        let record = NeighbourRecord {
            arch: field("arch")?,
            solver: field("solver")?,
            training: v.get("training").cloned().unwrap_or(serde_json::Value::Null),
            metrics: v.get("metrics").cloned().unwrap_or(serde_json::Value::Null),
        };
        if let Some(s) = solver.filter(|s| *s != record.solver) {
            return Err(Error::format(
                path.display().to_string(),
                format!("a record of {}, not of {s}", record.solver),
            ));
        }
        Ok(record)
    }

    /// The record as its file holds it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "format": NEIGHBOUR_FORMAT,
            "arch": self.arch,
            "solver": self.solver,
            "training": self.training,
            "metrics": self.metrics,
        })
    }
}

/// What a cell without a network answers: MIOpen's static default (`--method` puts the nearest
/// tuned neighbour first where its record says so and the rows are at hand).
#[derive(Debug, Clone)]
pub struct NoNetwork {
    pub record: NeighbourRecord,
    pub file: PathBuf,
    vocab: Vocabulary,
    metadata: KtnMetadata,
}

impl NoNetwork {
    pub fn new(record: NeighbourRecord, file: PathBuf) -> NoNetwork {
        NoNetwork {
            record,
            file,
            vocab: Vocabulary::from_token_values(&[]),
            metadata: KtnMetadata {
                predict_type: 0,
                num_tuning_params: Default::default(),
                token_values: Vec::new(),
            },
        }
    }

    fn no_network(&self) -> Error {
        Error::Internal(format!(
            "{}: a cell without a network has nothing to encode or decode",
            self.file.display()
        ))
    }
}

/// The decoder of a cell without a network: no tokens, never stepped (the predictor checks
/// [`Seq2SeqModel::has_network`] first).
struct NoDecoder;

impl StepDecoder for NoDecoder {
    fn vocab_size(&self) -> usize {
        0
    }
    fn step(&self, _tokens: &[u32], _states: &mut States, scores: &mut Vec<f32>, _scratch: &mut DecoderScratch) {
        scores.clear();
    }
}

impl Seq2SeqModel for NoNetwork {
    fn encoder_input(&self, _solver: &dyn Solver, _target: &Target, _problem: &ConvProblem) -> Result<Vec<f32>> {
        Err(self.no_network())
    }
    fn encode(&self, _inputs: &[f32], _batch: usize) -> Result<States> {
        Err(self.no_network())
    }
    fn decoder(&self) -> &dyn StepDecoder {
        &NoDecoder
    }
    fn vocab(&self) -> &Vocabulary {
        &self.vocab
    }
    fn metadata(&self) -> &KtnMetadata {
        &self.metadata
    }
    fn describe(&self) -> String {
        format!(
            "{} (no network: nearest tuned neighbour or MIOpen's default)",
            self.file.display()
        )
    }
    fn has_network(&self) -> bool {
        false
    }
}

impl Located {
    /// The file that names the model (the `.safetensors`, or the KTN encoder).
    pub fn main_file(&self) -> &std::path::Path {
        match self {
            Located::Attention(files, _) => &files.tensors,
            Located::Ktn(files) => &files.encoder,
            Located::Neighbour(file, _) => file,
        }
    }
}

/// How the model serving a (GPU, solver) was chosen ([`resolve`]), in MIOpen's spirit: a GPU
/// with no model of its own is served as MIOpen serves it a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServedBy {
    /// tuneinfer's model trained for this very GPU (its database name; or the arch's model when
    /// the plain arch is asked, or when it was trained on that very database).
    Exact,
    /// MIOpen's KTN model of the arch (MIOpen's models are per arch, any CU count).
    Miopen,
    /// tuneinfer's model with the GPU as an input, trained for another GPU of the same arch: it
    /// reads this GPU's compute units (`model_cu`: those of the GPU it was validated on).
    GpuInput { model_cu: u32 },
    /// The same arch's model of the closest compute-unit count (MIOpen's rule for its system
    /// perf databases, `GetPerfDbPathFile`): `model_cu` its count, `cu` the one it stands in for.
    ClosestCu { model_cu: u32, cu: u32 },
    /// tuneinfer's model trained for a GPU of another arch with the rows of other GPUs (the GPU
    /// an input), validated on the held-out problems of `member`, a GPU of this arch in its
    /// training pool: this very GPU (`own`: the model is this GPU's as much as its target's),
    /// else the one of the closest CU count. Its figures for this GPU are `member`'s
    /// (`validation_by_gpu`).
    Pool { member: String, own: bool },
}

/// The model serving one (GPU, solver) and why ([`resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub located: Located,
    pub served_by: ServedBy,
    /// Beside a network: the cell's record ([`Located::Neighbour`]'s file and the name it was
    /// saved for), which serves the problems the solver applies to and its network refuses
    /// ([`Solver::check`] passes, [`Solver::check_network`] does not: the CK grouped solvers'
    /// NCHW and BF16 problems beside MIOpen's 2024 KTN models). None without one, and for a cell
    /// without a network (its record is `located`).
    pub cell: Option<(PathBuf, String)>,
}

impl Resolved {
    /// The model's name: `gfx90a68_ConvAsm1x1U` (tuneinfer's, its file stem) or
    /// `gfx90a_ConvHipIgemmGroupFwdXdlops (MIOpen KTN)`.
    pub fn model_name(&self) -> String {
        let stem = |p: &std::path::Path| p.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
        match &self.located {
            Located::Attention(files, _) => stem(&files.tensors),
            Located::Ktn(files) => {
                let s = stem(&files.encoder);
                format!("{} (MIOpen KTN)", s.strip_suffix("_encoder.ktn").unwrap_or(&s))
            }
            Located::Neighbour(file, _) => {
                let name = file.file_name().and_then(|s| s.to_str()).unwrap_or("?");
                format!(
                    "{} (no network: nearest tuned neighbour)",
                    name.strip_suffix(NEIGHBOUR_SUFFIX).unwrap_or(name)
                )
            }
        }
    }

    /// Why this model: "" for a model of the GPU itself, else a short reason.
    pub fn why(&self) -> String {
        match self.served_by {
            ServedBy::Exact => "its own".into(),
            ServedBy::Miopen => "MIOpen's model of the arch".into(),
            ServedBy::GpuInput { model_cu } => {
                format!("the GPU an input: trained for {model_cu} CUs, reads this GPU's")
            }
            ServedBy::ClosestCu { model_cu, cu } => {
                format!("closest CU count: {model_cu} for {cu}, as MIOpen picks its databases")
            }
            ServedBy::Pool { ref member, own: true } => {
                format!("one model across GPUs: trained and validated with {member}'s rows, the GPU an input")
            }
            ServedBy::Pool { ref member, own: false } => {
                format!("one model across GPUs, the GPU an input: validated on {member}, reads this GPU's")
            }
        }
    }

    /// The GPU whose recorded figures describe this model on the GPU asked: the pool GPU it
    /// stands in for ([`ServedBy::Pool`]), else None (the model's own `validation`).
    pub fn figures_gpu(&self) -> Option<&str> {
        match &self.served_by {
            ServedBy::Pool { member, .. } => Some(member),
            _ => None,
        }
    }

    /// `model (why)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.model_name(), self.why())
    }

    /// True when the GPU has a model of its own for the solver (exact, MIOpen's per-arch one, or
    /// a model across GPUs trained and validated with this GPU's rows).
    pub fn is_own(&self) -> bool {
        matches!(
            self.served_by,
            ServedBy::Exact | ServedBy::Miopen | ServedBy::Pool { own: true, .. }
        )
    }
}

/// A GPU as a model search reads it: the plain arch (lower case), its compute units when named,
/// and its canonical database name (`gfx90a6e`; the plain arch without CUs). The db id's
/// features (`_xnack`) and a raw device name's (`:sramecc+:xnack-`) select no other model: the
/// plain arch's models serve them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuName {
    pub arch: String,
    pub compute_units: Option<u32>,
    pub db_name: String,
}

impl GpuName {
    pub fn parse(text: &str) -> GpuName {
        let name = text.split(':').next().unwrap_or(text);
        let (arch, _, compute_units) = crate::solvers::split_db_name_features(name);
        let arch = arch.to_ascii_lowercase();
        let db_name = match compute_units {
            Some(cu) => crate::solvers::db_basename(&arch, cu),
            None => arch.clone(),
        };
        GpuName {
            arch,
            compute_units,
            db_name,
        }
    }
}

/// Finds the model of `solver` on `arch` in `dirs` without loading it ([`resolve`] without the
/// reason).
pub fn locate(arch: &str, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<Located> {
    resolve(arch, solver, dirs).map(|r| r.located)
}

/// Finds the model serving `solver` on the GPU `arch` (a MIOpen database name such as
/// `gfx90a6e`, `gfx942_xnacke4`, `gfx1030_40`, a plain arch, or a raw device name) in `dirs`,
/// without loading it. In this order, each stage over every directory in order:
/// 1. tuneinfer's model of that very GPU: `{db name}_{solver}`, or the arch's `{arch}_{solver}`
///    when the plain arch is asked or it was trained on that very database ([`ServedBy::Exact`]);
///    else one model across GPUs trained and validated with this very GPU's rows (the plain
///    arch: its usual GPU's; [`ServedBy::Pool`], `own`);
/// 2. MIOpen's KTN model of the arch ([`ServedBy::Miopen`]);
/// 3. tuneinfer's model with the GPU as an input whose training pool covers this arch (it reads
///    this GPU's compute units), the closest CU count among them: a model of the same arch
///    ([`ServedBy::GpuInput`]), or one trained for another arch with this arch's rows and
///    validated on them (`validation_by_gpu`: [`ServedBy::Pool`]);
/// 4. the same arch's model of the closest compute-unit count, as MIOpen picks its databases
///    (`GetPerfDbPathFile`); a plain arch counts as its usual GPU's CUs ([`ServedBy::ClosestCu`]);
/// 5. no network: the cell's record (`{db name}_{solver}.neighbour.json`, else the arch's),
///    whose validated best predictor is the nearest tuned neighbour ([`Located::Neighbour`]).
///
/// A model of another arch is taken only for the GPUs of its pool it was validated on (stage 3):
/// one whose pool holds this arch's rows without figures for them is not. Errors: [`Error::NoModelForArch`] when MIOpen's rules
/// give the solver no model on the arch; a model found that is incomplete or whose metadata does
/// not read (naming the file: a damaged model is never skipped); [`Error::ModelNotFound`] when
/// no stage finds one.
///
/// A network found in stages 1-4 carries the cell's record too, when stage 5 finds one
/// ([`Resolved::cell`]): the problems its network refuses and the solver applies to fall through
/// to it, one by one.
pub fn resolve(arch: &str, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<Resolved> {
    let mut resolved = resolve_first(arch, solver, dirs)?;
    if !matches!(resolved.located, Located::Neighbour(..)) {
        resolved.cell = cell_record(&GpuName::parse(arch), solver, dirs)?.map(|(file, saved_for, _)| (file, saved_for));
    }
    Ok(resolved)
}

/// The compute units a model search stands a GPU in for: its own, else its arch's usual GPU's.
fn wanted_cu(gpu: &GpuName) -> Option<u32> {
    gpu.compute_units
        .or_else(|| crate::solvers::conv_bin_winograd_rxs::default_compute_units(&gpu.arch))
}

/// Stage 5 of [`resolve`]: the cell's record of this GPU, else of the arch's closest CU count
/// (file, the name it was saved for, how it serves).
fn cell_record(gpu: &GpuName, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<Option<(PathBuf, String, ServedBy)>> {
    let wanted_cu = wanted_cu(gpu);
    let mut records = Vec::new();
    for dir in dirs {
        records.extend(same_arch_records(dir, &gpu.arch, solver.name())?);
    }
    let exact = records
        .iter()
        .find(|(_, saved_for, _)| saved_for.eq_ignore_ascii_case(&gpu.db_name));
    let nearest = || {
        let mut best: Option<&(PathBuf, String, u32)> = None;
        for r in &records {
            let d = |r: &(PathBuf, String, u32)| wanted_cu.map_or(0, |cu| r.2.abs_diff(cu));
            if best.is_none_or(|b| d(r) < d(b)) {
                best = Some(r);
            }
        }
        best
    };
    Ok(exact.or_else(nearest).map(|(file, saved_for, model_cu)| {
        let cu = wanted_cu.unwrap_or(*model_cu);
        let served_by = if *model_cu == cu {
            ServedBy::Exact
        } else {
            ServedBy::ClosestCu {
                model_cu: *model_cu,
                cu,
            }
        };
        (file.clone(), saved_for.clone(), served_by)
    }))
}

/// [`resolve`] without the cell's record beside a network.
fn resolve_first(arch: &str, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<Resolved> {
    let gpu = GpuName::parse(arch);
    let base = gpu.arch.as_str();
    let model_name = match solver.model_name(base) {
        Ok(name) => name,
        Err(Error::NotApplicable { reason, .. }) => {
            return Err(Error::NoModelForArch {
                arch: arch.to_string(),
                solver: solver.name().to_string(),
                reason,
            })
        }
        Err(e) => return Err(e),
    };
    let found = |located, served_by| {
        Ok(Resolved {
            located,
            served_by,
            cell: None,
        })
    };
    // 1. The GPU's own model.
    for dir in dirs {
        // A model with a file missing is here too: loading it names the missing file.
        let ours = WeightsFiles::in_dir(dir, &gpu.db_name, solver.name());
        if bundle::exists(&ours.tensors) || bundle::exists(&ours.metadata) {
            return found(Located::Attention(ours, gpu.db_name.clone()), ServedBy::Exact);
        }
        if gpu.compute_units.is_some() {
            let arch_wide = WeightsFiles::in_dir(dir, base, solver.name());
            if bundle::is_file(&arch_wide.metadata) && trained_on(&arch_wide, &gpu.db_name) {
                return found(Located::Attention(arch_wide, base.to_string()), ServedBy::Exact);
            }
        }
    }
    // ... or one model across GPUs trained and validated with this very GPU's rows (the plain
    // arch's: its usual GPU's).
    let wanted_cu = wanted_cu(&gpu);
    let mut pooled = Vec::new();
    for dir in dirs {
        pooled.extend(pooled_models(dir, base, solver.name())?);
    }
    // The plain arch asked, and `cu` its usual GPU's count.
    let usual_gpu = |cu: u32| gpu.compute_units.is_none() && wanted_cu == Some(cu);
    let pool_own = |c: &Candidate| {
        c.member
            .as_deref()
            .is_some_and(|m| m.eq_ignore_ascii_case(&gpu.db_name))
            || usual_gpu(c.compute_units)
    };
    if let Some(c) = pooled.iter().find(|c| pool_own(c)) {
        return found(
            Located::Attention(c.files.clone(), c.saved_for.clone()),
            ServedBy::Pool {
                member: c.member.clone().unwrap_or_default(),
                own: true,
            },
        );
    }
    // 2. MIOpen's model of the arch.
    for dir in dirs {
        if let Some(files) = ktn_files_in(dir, base, model_name)? {
            return found(Located::Ktn(files), ServedBy::Miopen);
        }
    }
    // 3 and 4: the arch's models of other CU counts, and models across GPUs validated on another
    // GPU of the arch.
    let mut candidates = Vec::new();
    for dir in dirs {
        candidates.extend(same_arch_models(dir, base, solver.name())?);
    }
    let distance = |c: &Candidate| wanted_cu.map_or(0, |cu| c.compute_units.abs_diff(cu));
    let closest = |pool: Vec<&Candidate>| -> Option<Candidate> {
        // The first of the smallest distance (directory order, then name order).
        let mut best: Option<&Candidate> = None;
        for c in pool {
            if best.is_none_or(|b| distance(c) < distance(b)) {
                best = Some(c);
            }
        }
        best.cloned()
    };
    let gpu_input: Vec<&Candidate> = candidates.iter().filter(|c| c.gpu_input).chain(pooled.iter()).collect();
    if let Some(c) = closest(gpu_input) {
        let served_by = match c.member {
            // Not this very GPU (that is stage 1's).
            Some(member) => ServedBy::Pool { member, own: false },
            None if usual_gpu(c.compute_units) => ServedBy::Exact,
            None => ServedBy::GpuInput {
                model_cu: c.compute_units,
            },
        };
        return found(Located::Attention(c.files, c.saved_for), served_by);
    }
    if let Some(c) = closest(candidates.iter().collect()) {
        let cu = wanted_cu.unwrap_or(c.compute_units);
        if gpu.compute_units.is_none() && c.compute_units == cu {
            // The plain arch asked: its usual GPU's model is the arch's (`gfx942` is `gfx942130`).
            return found(Located::Attention(c.files, c.saved_for), ServedBy::Exact);
        }
        return found(
            Located::Attention(c.files, c.saved_for),
            ServedBy::ClosestCu {
                model_cu: c.compute_units,
                cu,
            },
        );
    }
    // 5. No network: the cell's record of this GPU, else of the arch's closest CU count.
    if let Some((file, saved_for, served_by)) = cell_record(&gpu, solver, dirs)? {
        return found(Located::Neighbour(file, saved_for), served_by);
    }
    Err(Error::ModelNotFound {
        looked_for: vec![
            weights_pattern(&gpu.db_name, solver.name()),
            crate::error::ktn_pattern(base, model_name),
            format!(
                "{base}*_{} (any CU count of {base})",
                crate::seq2seq::weights::file_solver_name(solver.name())
            ),
        ],
        searched: dirs.to_vec(),
    })
}

/// One of tuneinfer's models of an arch in a directory, a candidate for another CU count.
#[derive(Debug, Clone)]
struct Candidate {
    files: WeightsFiles,
    /// The name it was saved for (`gfx90a68`, or the plain arch).
    saved_for: String,
    /// The CUs of the GPU it was trained for: in its name, else its training database's name,
    /// else the GPU input's.
    compute_units: u32,
    /// It reads the GPU as an input.
    gpu_input: bool,
    /// A model of another arch: the GPU of this arch in its pool it was validated on (whose CUs
    /// `compute_units` are).
    member: Option<String>,
}

/// The files `{name}{suffix}` in `dir` whose name is a database name without features (`gfx90a68`,
/// or a plain arch), sorted: (name, its arch, the CU count the name holds).
fn db_named_files(dir: &std::path::Path, suffix: &str) -> Vec<(String, String, Option<u32>)> {
    let Some(entries) = bundle::file_names(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries.into_iter().filter(|n| n.ends_with(suffix)).collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| {
            let prefix = &name[..name.len() - suffix.len()];
            let (name_arch, features, cu_in_name) = crate::solvers::split_db_name_features(prefix);
            // `gfx906_ConvOclBwdWrW2_4` must not read as arch `gfx906_ConvOclBwdWrW2` (the
            // suffix match is exact; the prefix is a database name or it is skipped).
            let ok = features.is_empty() && (cu_in_name.is_some() || prefix.len() == name_arch.len());
            ok.then(|| (prefix.to_string(), name_arch.to_ascii_lowercase(), cu_in_name))
        })
        .collect()
}

/// The GPU names (`gfx90a68`, or the plain arch) of the files `{name}{suffix}` in `dir` whose
/// name is a database name of `arch` without features, sorted, with the CU count the name holds.
fn same_arch_names(dir: &std::path::Path, arch: &str, suffix: &str) -> Vec<(String, Option<u32>)> {
    db_named_files(dir, suffix)
        .into_iter()
        .filter(|(_, name_arch, _)| name_arch.eq_ignore_ascii_case(arch))
        .map(|(prefix, _, cu)| (prefix, cu))
        .collect()
}

/// The CU count of the database a model or record was trained on (`training.perf_db`).
fn trained_cu(training: &serde_json::Value) -> Option<u32> {
    training["perf_db"]
        .as_str()
        .and_then(|f| f.split('.').next())
        .and_then(|stem| crate::solvers::split_db_name(stem).1)
}

/// The records of cells served without a network of `solver` on `arch` (any CU count) in `dir`:
/// (file, the GPU name it was saved for, its CU count: in the name, else its database's). A
/// record that does not read is an error naming it; one whose CU count is unknown is left out.
fn same_arch_records(dir: &std::path::Path, arch: &str, solver: &str) -> Result<Vec<(PathBuf, String, u32)>> {
    let suffix = format!("_{}{NEIGHBOUR_SUFFIX}", weights::file_solver_name(solver));
    let mut out = Vec::new();
    for (prefix, cu_in_name) in same_arch_names(dir, arch, &suffix) {
        let file = dir.join(format!("{prefix}{suffix}"));
        let record = NeighbourRecord::read(&file, Some(solver))?;
        if let Some(cu) = cu_in_name.or_else(|| trained_cu(&record.training)) {
            out.push((file, prefix, cu));
        }
    }
    Ok(out)
}

/// tuneinfer's models of `solver` for `arch` (any CU count) in `dir`, by file name. A model
/// whose metadata does not read is an error naming it (never skipped); one whose CU count is
/// unknown is left out.
fn same_arch_models(dir: &std::path::Path, arch: &str, solver: &str) -> Result<Vec<Candidate>> {
    let suffix = format!("_{}.json", crate::seq2seq::weights::file_solver_name(solver));
    let mut out = Vec::new();
    for (prefix, cu_in_name) in same_arch_names(dir, arch, &suffix) {
        let prefix = prefix.as_str();
        let files = WeightsFiles::in_dir(dir, prefix, solver);
        let (info, _) = weights::read_info(&files.metadata)?;
        let gpu_input = info.transform.gpu.is_some();
        let compute_units = cu_in_name
            .or_else(|| trained_cu(&info.training))
            .or_else(|| info.transform.gpu.as_ref().map(|g| g.compute_units));
        if let Some(compute_units) = compute_units {
            out.push(Candidate {
                files,
                saved_for: prefix.to_string(),
                compute_units,
                gpu_input,
                member: None,
            });
        }
    }
    Ok(out)
}

/// tuneinfer's models of `solver` in `dir` trained for another arch than `arch` and validated on
/// GPUs of `arch` in their training pool ([`WeightsInfo::pool_metrics`]): one candidate per such
/// GPU, with its CU count. A model whose metadata does not read is an error naming it.
fn pooled_models(dir: &std::path::Path, arch: &str, solver: &str) -> Result<Vec<Candidate>> {
    let suffix = format!("_{}.json", crate::seq2seq::weights::file_solver_name(solver));
    let prefixes = db_named_files(dir, &suffix)
        .into_iter()
        .filter(|(_, name_arch, _)| {
            crate::solvers::KNOWN_ARCHES.contains(&name_arch.as_str()) && !name_arch.eq_ignore_ascii_case(arch)
        })
        .map(|(prefix, _, _)| prefix);
    let mut out = Vec::new();
    for prefix in prefixes {
        let files = WeightsFiles::in_dir(dir, &prefix, solver);
        let (info, _) = weights::read_info(&files.metadata)?;
        if info.transform.gpu.is_none() {
            continue;
        }
        for member in info.validated_gpus() {
            match crate::solvers::split_db_name(&member) {
                (a, Some(cu)) if a.eq_ignore_ascii_case(arch) => out.push(Candidate {
                    files: files.clone(),
                    saved_for: prefix.clone(),
                    compute_units: cu,
                    gpu_input: true,
                    member: Some(member.clone()),
                }),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// Finds and loads the model of `solver` on `arch` in `dirs` ([`locate`], then the load).
/// Errors: those of [`locate`]; the model found does not load, is incomplete or its vocabulary
/// does not suit the solver (naming the file).
pub fn find_and_load(arch: &str, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<LoadedModel> {
    find_and_load_resolved(arch, solver, dirs).map(|(m, _)| m)
}

/// [`find_and_load`], with how the model was chosen.
pub fn find_and_load_resolved(arch: &str, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<(LoadedModel, Resolved)> {
    let resolved = resolve(arch, solver, dirs)?;
    let model = load_resolved(&resolved, solver)?;
    Ok((model, resolved))
}

/// The solver that serves tuneinfer's own models of `solver`: its [`Solver::own_model_solver`]
/// where it has one, else `solver` itself.
pub fn own_models_solver(solver: &dyn Solver) -> &dyn Solver {
    solver.own_model_solver().map_or(solver, |s| s)
}

/// The solver the model `located` names is served through: tuneinfer's own models through
/// [`own_models_solver`], every other model through the solver itself.
pub fn serving_solver<'a>(solver: &'a dyn Solver, located: &Located) -> &'a dyn Solver {
    match located {
        Located::Attention(..) => own_models_solver(solver),
        Located::Ktn(_) | Located::Neighbour(..) => solver,
    }
}

/// Loads the model [`resolve`] found (errors as [`find_and_load`]'s after the search), through
/// the solver that serves it ([`serving_solver`]).
pub fn load_resolved(resolved: &Resolved, solver: &dyn Solver) -> Result<LoadedModel> {
    let solver = serving_solver(solver, &resolved.located);
    Ok(match &resolved.located {
        Located::Attention(files, saved_for) => {
            LoadedModel::Attention(Box::new(load_weights(files, saved_for, solver)?))
        }
        Located::Ktn(files) => LoadedModel::Ktn(Box::new(load_ktn(files, solver)?)),
        Located::Neighbour(file, _) => LoadedModel::NoNetwork(Box::new(NoNetwork::new(
            NeighbourRecord::read(file, Some(solver.name()))?,
            file.clone(),
        ))),
    })
}

/// The directories searched for models, in order: `--models DIR` (searched first; it adds to
/// the search, never replaces it), `$TUNEINFER_MODELS`, the models built into tuneinfer (the
/// binary's; the library's with the feature `bundled`: [`crate::format::bundle`]), the project's
/// `weights/` (the crate's, then the current directory's), then MIOpen's models where MIOpen reads them
/// (`src/db_path.cpp.in`, `GetSystemDbPath`: `$MIOPEN_SYSTEM_DB_PATH`, else the install's
/// `share/miopen/db`: under `$ROCM_PATH`, then `/opt/rocm`). A directory is listed once
/// (the same directory by two names, e.g. `./weights` inside the checkout, too).
pub fn search_dirs(flag: Option<&std::path::Path>) -> Vec<PathBuf> {
    let env_dir = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut dirs: Vec<PathBuf> = Vec::new();
    dirs.extend(flag.map(|f| f.to_path_buf()));
    dirs.extend(env_dir("TUNEINFER_MODELS"));
    dirs.extend(bundle::dir());
    dirs.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights"));
    dirs.push(PathBuf::from("weights"));
    dirs.extend(env_dir("MIOPEN_SYSTEM_DB_PATH"));
    dirs.extend(env_dir("ROCM_PATH").map(|r| r.join("share/miopen/db")));
    dirs.push(PathBuf::from("/opt/rocm/share/miopen/db"));
    dedup_dirs(dirs)
}

/// [`search_dirs`] for a command line's `--models DIR`, which must be a directory (a
/// mistyped one is an error, not a silent fall-back to the other directories).
pub fn model_dirs(flag: Option<&std::path::Path>) -> Result<Vec<PathBuf>> {
    if let Some(dir) = flag {
        if !dir.is_dir() {
            return Err(Error::ModelNotFound {
                looked_for: vec!["models (--models names no directory)".into()],
                searched: vec![dir.to_path_buf()],
            });
        }
    }
    Ok(search_dirs(flag))
}

/// `dirs` with each directory once, in order: two names of one directory (a relative and an
/// absolute path, a link) count as one.
pub fn dedup_dirs(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for d in dirs {
        let key = d.canonicalize().unwrap_or_else(|_| d.clone());
        if !seen.contains(&key) {
            seen.push(key);
            out.push(d);
        }
    }
    out
}

/// Was our model in `files` trained on the database named `db_name` (its metadata's
/// `training.perf_db` is `{db_name}.db` or `{db_name}.*`)? False when the file cannot be read.
fn trained_on(files: &WeightsFiles, db_name: &str) -> bool {
    weights::read_info(&files.metadata).is_ok_and(|(info, _)| {
        info.training["perf_db"]
            .as_str()
            .and_then(|f| f.split('.').next())
            .is_some_and(|stem| stem.eq_ignore_ascii_case(db_name))
    })
}

/// The file names of tuneinfer's own model of (arch, solver), as [`Error::ModelNotFound`] lists them.
pub(crate) fn weights_pattern(arch: &str, solver: &str) -> String {
    format!("{arch}_{}.safetensors + .json", weights::file_solver_name(solver))
}

/// MIOpen's KTN model files of `model_name` on `arch` in `dir`: None when none of the three is
/// there, an error naming the first missing one when only some are.
fn ktn_files_in(dir: &std::path::Path, arch: &str, model_name: &str) -> Result<Option<ModelFiles>> {
    let file = |part: &str| dir.join(format!("{arch}_{model_name}_{part}.ktn.model"));
    let files = ModelFiles {
        encoder: file("encoder"),
        decoder: file("decoder"),
        metadata: file("metadata"),
    };
    let parts = [&files.encoder, &files.decoder, &files.metadata];
    match parts.iter().find(|p| !p.exists()) {
        None => Ok(Some(files)),
        Some(_) if parts.iter().all(|p| !p.exists()) => Ok(None),
        Some(missing) => Err(Error::format(
            missing.display().to_string(),
            "missing, while the model's other files are in the same directory (an incomplete model is not skipped)",
        )),
    }
}

/// Loads tuneinfer's own model from `files` (checked to be for `arch` and `solver`) and checks
/// its vocabulary against the solver.
pub fn load_weights(files: &WeightsFiles, arch: &str, solver: &dyn Solver) -> Result<AttentionModel> {
    let (mut model, _) = AttentionModel::load(files, arch, solver.name())?;
    solver.read_vocabulary(&mut model.vocab, &files.metadata.display().to_string())?;
    Ok(model)
}

/// Loads MIOpen's KTN model from `files` and checks its vocabulary against the solver.
pub fn load_ktn(files: &ModelFiles, solver: &dyn Solver) -> Result<KtnModel> {
    let model = KtnModel::load(files)?;
    solver.check_vocabulary(&model.vocab, &files.metadata.display().to_string())?;
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq2seq::attention::{AttentionConfig, AttentionParams, FeatureTransform, GpuInput};
    use crate::seq2seq::weights::WeightsInfo;
    use crate::solvers;

    const CK_FWD: &str = "ConvHipImplicitGemmGroupFwdXdlops";

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tuneinfer-models-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Saves a tiny untrained attention model of (arch, solver) into `dir`.
    fn save_tiny(dir: &std::path::Path, arch: &str, solver: &str) {
        save_tiny_from(dir, arch, solver, "gfx906_60.db");
    }

    /// [`save_tiny`] with the training database named in its metadata.
    fn save_tiny_from(dir: &std::path::Path, arch: &str, solver: &str, perf_db: &str) {
        save_tiny_with(dir, arch, solver, perf_db, None);
    }

    /// [`save_tiny_from`], with the GPU as an input when `gpu` is given.
    fn save_tiny_with(dir: &std::path::Path, arch: &str, solver: &str, perf_db: &str, gpu: Option<GpuInput>) {
        save_tiny_pooled(dir, arch, solver, perf_db, gpu, serde_json::Value::Null);
    }

    /// [`save_tiny_with`], with figures on other GPUs of its pool (`validation_by_gpu`).
    fn save_tiny_pooled(
        dir: &std::path::Path,
        arch: &str,
        solver: &str,
        perf_db: &str,
        gpu: Option<GpuInput>,
        pool_metrics: serde_json::Value,
    ) {
        let steps = FeatureTransform::steps_with(gpu.as_ref());
        let config = AttentionConfig {
            steps,
            hidden: 4,
            embed: 3,
            vocab: 4,
            seq_len: 2,
            encoder: Default::default(),
        };
        let info = WeightsInfo {
            arch: arch.into(),
            solver: solver.into(),
            config,
            members: 1,
            token_values: ["-1", "1", "2", "4"].iter().map(|s| s.to_string()).collect(),
            transform: FeatureTransform {
                mean: vec![0.0; steps],
                std: vec![1.0; steps],
                gpu,
            },
            training: serde_json::json!({ "perf_db": perf_db }),
            metrics: serde_json::json!({}),
            pool_metrics,
        };
        weights::save(dir, &[AttentionParams::init(config, 1)], &info).unwrap();
    }

    fn served(arch: &str, solver: &str, dirs: &[PathBuf]) -> (String, ServedBy) {
        let solver = solvers::by_name(solver).unwrap();
        let (_, r) = find_and_load_resolved(arch, solver, dirs).unwrap();
        (r.model_name(), r.served_by)
    }

    #[test]
    fn a_gpu_is_served_by_its_own_model_then_the_gpu_input_then_the_closest_cu_count() {
        let dir = temp_dir("cu");
        let dirs = std::slice::from_ref(&dir);
        // The arch's model, trained on gfx906_60.db: the model of gfx906 and of gfx906_60 ...
        save_tiny_from(&dir, "gfx906", "ConvAsm1x1U", "gfx906_60.db");
        assert_eq!(
            served("gfx906", "ConvAsm1x1U", dirs),
            ("gfx906_ConvAsm1x1U".into(), ServedBy::Exact)
        );
        assert_eq!(
            served("gfx906_60", "ConvAsm1x1U", dirs),
            ("gfx906_ConvAsm1x1U".into(), ServedBy::Exact)
        );
        // ... and, with no model of its own, of gfx906_64: the closest CU count, said so.
        assert_eq!(
            served("gfx906_64", "ConvAsm1x1U", dirs),
            (
                "gfx906_ConvAsm1x1U".into(),
                ServedBy::ClosestCu { model_cu: 60, cu: 64 }
            )
        );
        // A model of its own for gfx906_64 is found by that name, and is the closest for 63.
        save_tiny_from(&dir, "gfx906_64", "ConvAsm1x1U", "gfx906_64.2019.cd.pdb.txt");
        assert_eq!(
            served("gfx906_64", "ConvAsm1x1U", dirs),
            ("gfx906_64_ConvAsm1x1U".into(), ServedBy::Exact)
        );
        assert_eq!(
            served("gfx906_63", "ConvAsm1x1U", dirs),
            (
                "gfx906_64_ConvAsm1x1U".into(),
                ServedBy::ClosestCu { model_cu: 64, cu: 63 }
            )
        );
        // MI210's model (104 CUs = 0x68) serves MI250X's GCD (110 = 0x6e), also with xnack on and
        // as a raw device name.
        save_tiny_from(&dir, "gfx90a68", "ConvAsm1x1U", "gfx90a68.db.txt.bz2");
        let mi250x = (
            "gfx90a68_ConvAsm1x1U".to_string(),
            ServedBy::ClosestCu { model_cu: 104, cu: 110 },
        );
        assert_eq!(served("gfx90a6e", "ConvAsm1x1U", dirs), mi250x);
        assert_eq!(served("gfx90a_xnack6e", "ConvAsm1x1U", dirs), mi250x);
        // A plain arch is its usual GPU: gfx90a is 104 CUs, so MI210's model is its own.
        assert_eq!(
            served("gfx90a", "ConvAsm1x1U", dirs),
            ("gfx90a68_ConvAsm1x1U".into(), ServedBy::Exact)
        );
        // A model with the GPU as an input comes before the closest CU count of another model.
        save_tiny_from(&dir, "gfx1030_32", "ConvAsm1x1U", "gfx1030_32.db");
        save_tiny_with(
            &dir,
            "gfx1030",
            "ConvAsm1x1U",
            "gfx1030_36.db",
            Some(GpuInput {
                arch: "gfx1030".into(),
                compute_units: 36,
            }),
        );
        assert_eq!(
            served("gfx1030_40", "ConvAsm1x1U", dirs),
            ("gfx1030_ConvAsm1x1U".into(), ServedBy::GpuInput { model_cu: 36 })
        );
        // Another arch's model never serves: gfx908 has none here, nor has gfx1100.
        for arch in ["gfx90878", "gfx1100_48"] {
            let solver = solvers::by_name("ConvAsm1x1U").unwrap();
            let e = find_and_load(arch, solver, dirs).err().expect("no model");
            assert!(matches!(e, Error::ModelNotFound { .. }), "{arch}: {e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_model_across_gpus_serves_the_gpus_of_its_pool_it_was_validated_on() {
        let dir = temp_dir("pool");
        let dirs = std::slice::from_ref(&dir);
        const GTC: &str = "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC";
        let mi300x = Some(GpuInput {
            arch: "gfx942".into(),
            compute_units: 304,
        });
        // MI300X's model trained with MI100's and MI210's rows, validated on both.
        let figures = serde_json::json!({"methods": []});
        save_tiny_pooled(
            &dir,
            "gfx942130",
            GTC,
            "gfx942130.db.txt.bz2",
            mi300x.clone(),
            serde_json::json!({"gfx90878": figures, "gfx90a68": figures}),
        );
        let pool = |member: &str, own: bool| {
            (
                "gfx942130_".to_string() + GTC,
                ServedBy::Pool {
                    member: member.into(),
                    own,
                },
            )
        };
        assert_eq!(served("gfx90a68", GTC, dirs), pool("gfx90a68", true));
        assert_eq!(served("gfx90878", GTC, dirs), pool("gfx90878", true));
        // The plain arch is its usual GPU (gfx90a: 104 CUs); MI250X's GCD (110) the closest.
        assert_eq!(served("gfx90a", GTC, dirs), pool("gfx90a68", true));
        assert_eq!(served("gfx90a_xnack6e", GTC, dirs), pool("gfx90a68", false));
        // On its own arch it is the arch's model: the plain arch asks for its usual 304 CUs.
        assert_eq!(
            served("gfx942", GTC, dirs),
            ("gfx942130_".to_string() + GTC, ServedBy::Exact)
        );
        assert_eq!(
            served("gfx942130", GTC, dirs),
            ("gfx942130_".to_string() + GTC, ServedBy::Exact)
        );
        assert_eq!(
            served("gfx942e4", GTC, dirs),
            ("gfx942130_".to_string() + GTC, ServedBy::GpuInput { model_cu: 304 })
        );
        // A GPU's own model comes first.
        save_tiny_from(&dir, "gfx90878", GTC, "gfx90878.db.txt.bz2");
        assert_eq!(
            served("gfx90878", GTC, dirs),
            ("gfx90878_".to_string() + GTC, ServedBy::Exact)
        );
        // An arch with no figures of the pooled model is not served by it.
        let solver = solvers::by_name("ConvBinWinogradRxSf2x3").unwrap();
        save_tiny_pooled(
            &dir,
            "gfx942130",
            "ConvBinWinogradRxSf2x3",
            "gfx942130.db.txt.bz2",
            mi300x,
            serde_json::json!({"gfx90878": figures}),
        );
        for arch in ["gfx90a68", "gfx1030_36"] {
            let e = find_and_load(arch, solver, dirs).err().expect("no model");
            assert!(matches!(e, Error::ModelNotFound { .. }), "{arch}: {e}");
        }
        let r = resolve("gfx908", solver, dirs).unwrap();
        assert_eq!(r.figures_gpu(), Some("gfx90878"));
        assert!(r.is_own() && r.why().contains("gfx90878"), "{}", r.why());
        let r = resolve("gfx90880", solver, dirs).unwrap();
        assert!(!r.is_own() && r.why().contains("validated on gfx90878"), "{}", r.why());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_model_of_another_cu_count_is_reported_not_skipped() {
        let dir = temp_dir("cu-damaged");
        let dirs = std::slice::from_ref(&dir);
        save_tiny_from(&dir, "gfx90a68", "ConvAsm1x1U", "gfx90a68.db.txt.bz2");
        std::fs::write(dir.join("gfx90a68_ConvAsm1x1U.json"), b"{").unwrap();
        let solver = solvers::by_name("ConvAsm1x1U").unwrap();
        let e = find_and_load("gfx90a6e", solver, dirs).err().expect("damaged");
        assert!(e.to_string().contains("gfx90a68_ConvAsm1x1U.json"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_arch_without_a_miopen_model_is_model_not_found_even_with_weights_of_ours() {
        // The CK solvers' rules exist for MIOpen's arches only: weights of ours for another arch
        // could load but never predict, so the arch is refused before any file is read.
        let dir = temp_dir("no-arch");
        save_tiny(&dir, "gfx906", CK_FWD);
        let solver = solvers::by_name(CK_FWD).unwrap();
        let e = find_and_load("gfx906", solver, std::slice::from_ref(&dir))
            .err()
            .expect("MIOpen has no gfx906 model of a CK solver");
        assert!(matches!(e, Error::NoModelForArch { .. }), "{e}");
        assert_eq!(e.exit_code(), 6);
        let text = e.to_string();
        assert!(text.contains("gfx906") && text.contains("gfx90a, gfx942"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_incomplete_model_is_reported_not_skipped() {
        let (first, second) = (temp_dir("half-first"), temp_dir("half-second"));
        let solver = solvers::by_name("ConvAsm1x1U").unwrap();
        save_tiny(&second, "gfx906", "ConvAsm1x1U");
        let dirs = [first.clone(), second.clone()];
        // Our weights without their tensors file: the missing file is named.
        save_tiny(&first, "gfx906", "ConvAsm1x1U");
        std::fs::remove_file(first.join("gfx906_ConvAsm1x1U.safetensors")).unwrap();
        let e = find_and_load("gfx906", solver, &dirs).err().expect("half a model");
        assert!(e.to_string().contains("gfx906_ConvAsm1x1U.safetensors"), "{e}");
        // MIOpen's model with one of its three files: the first missing one is named, also when
        // a later directory holds a model of another CU count (MIOpen's comes first).
        std::fs::remove_file(first.join("gfx906_ConvAsm1x1U.json")).unwrap();
        std::fs::write(first.join("gfx906_ConvAsm1x1U_decoder.ktn.model"), b"{}").unwrap();
        for f in ["gfx906_ConvAsm1x1U.json", "gfx906_ConvAsm1x1U.safetensors"] {
            std::fs::rename(second.join(f), second.join(f.replacen("gfx906", "gfx906_64", 1))).unwrap();
        }
        let e = find_and_load("gfx906", solver, &dirs)
            .err()
            .expect("a third of a model");
        assert!(e.to_string().contains("gfx906_ConvAsm1x1U_encoder.ktn.model"), "{e}");
        assert_eq!(e.exit_code(), 4);
        let _ = std::fs::remove_dir_all(&first);
        let _ = std::fs::remove_dir_all(&second);
    }

    #[test]
    fn the_first_directory_with_a_model_wins_and_must_load() {
        let (first, second) = (temp_dir("first"), temp_dir("second"));
        let solver = solvers::by_name("ConvAsm1x1U").unwrap();
        let dirs = [first.clone(), second.clone()];
        let e = find_and_load("gfx906", solver, &dirs).err().expect("nothing there");
        assert!(matches!(e, Error::ModelNotFound { .. }), "{e}");
        save_tiny(&second, "gfx906", "ConvAsm1x1U");
        assert!(matches!(
            find_and_load("gfx906", solver, &dirs),
            Ok(LoadedModel::Attention(_))
        ));
        // A damaged model in the first directory is reported, naming its file, not skipped.
        std::fs::write(first.join("gfx906_ConvAsm1x1U.safetensors"), b"damaged").unwrap();
        std::fs::write(first.join("gfx906_ConvAsm1x1U.json"), b"{").unwrap();
        let e = find_and_load("gfx906", solver, &dirs)
            .err()
            .expect("the damage is reported");
        assert!(e.to_string().contains("gfx906_ConvAsm1x1U.json"), "{e}");
        let _ = std::fs::remove_dir_all(&first);
        let _ = std::fs::remove_dir_all(&second);
    }
}
