//! Training tuneinfer's attention predictor from a perf database, from scratch: teacher-forced
//! cross-entropy, hand-written backward passes ([`ops`], [`model`]), Adam with global-norm
//! clipping, mini-batches split over threads with gradients summed in a fixed order (the result
//! depends only on the seed and the data), learning-rate halving on plateaus and early stopping
//! on an early-stop split carved out of the training side. The validation split (the reported
//! accuracy) is never seen during training or model selection.

pub mod adam;
mod checkpoint;
pub mod conv;
pub mod model;
pub mod ops;
mod options;
pub mod vocab;

use checkpoint::{load_checkpoint, save_checkpoint};
pub use options::TrainOptions;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

use crate::data::dataset::{self, Dataset, Sample};
use crate::error::{Error, Result};
use crate::format::safetensors::{self, Tensor};
use crate::seq2seq::attention::{AttentionConfig, AttentionParams, FeatureTransform, GpuInput};
use crate::seq2seq::weights::{self, params_from_tensors, params_to_tensors, WeightsFiles, WeightsInfo};
use crate::solvers::{Target, Tunable};
use crate::testutil::Lcg;
use adam::{scale_and_clip, Adam};
use model::{forward_backward, forward_backward_sharded, Dropout, Stats};
use vocab::TokenTable;

/// Samples turned into model inputs and target tokens.
#[derive(Debug, Clone, Default)]
pub struct Encoded {
    pub inputs: Vec<f32>,
    pub targets: Vec<u32>,
    pub rows: usize,
    /// Samples left out because a value was never seen in training.
    pub unseen: usize,
}

/// Appends the samples of one GPU to `e` (`target`: the GPU whose features a model with the GPU
/// as an input reads; the target's own rows and each other GPU's are encoded in turn).
pub fn encode_into(
    e: &mut Encoded,
    samples: &[Sample],
    solver: &dyn Tunable,
    target: &Target,
    transform: &FeatureTransform,
    tokens: &TokenTable,
) {
    for s in samples {
        match tokens.encode(&s.config) {
            Some(t) => {
                e.inputs
                    .extend(transform.encoder_input(&transform.raw_features(solver, target, &s.problem)));
                e.targets.extend(t);
                e.rows += 1;
            }
            None => e.unseen += 1,
        }
    }
}

/// Loss over a whole encoded set, split over `threads` (no gradients).
pub fn evaluate_loss(params: &AttentionParams, data: &Encoded, threads: usize) -> Stats {
    let c = params.config;
    let per_in = c.steps * c.enc_input();
    let chunk = data.rows.div_ceil(threads.max(1)).max(1);
    let results: Vec<Stats> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..data.rows)
            .step_by(chunk)
            .map(|a| {
                let b = (a + chunk).min(data.rows);
                scope.spawn(move || {
                    let mut s = Stats::default();
                    for lo in (a..b).step_by(256) {
                        let hi = (lo + 256).min(b);
                        s.add(forward_backward(
                            params,
                            &data.inputs[lo * per_in..hi * per_in],
                            &data.targets[lo * c.seq_len..hi * c.seq_len],
                            hi - lo,
                            None,
                            None,
                            None,
                        ));
                    }
                    s
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let mut total = Stats::default();
    for s in results {
        total.add(s);
    }
    total
}

/// The state that survives between epochs (and in checkpoints).
struct State {
    params: AttentionParams,
    /// Exponential moving average of `params` (equal to them when the average is off).
    average: AttentionParams,
    best: AttentionParams,
    adam: Adam,
    epoch: usize,
    lr: f32,
    best_loss: f64,
    best_epoch: usize,
    bad_epochs: usize,
    elapsed_s: f64,
    samples_seen: u64,
    history: Vec<Value>,
}

/// What a finished training run reports.
#[derive(Debug, Clone)]
pub struct TrainResult {
    pub files: WeightsFiles,
    pub report: dataset::DataReport,
    pub epochs: usize,
    pub best_epoch: usize,
    pub train_seconds: f64,
    pub samples_per_second: f64,
    /// Mean teacher-forced loss of the first and the last epoch.
    pub first_loss: f64,
    pub last_loss: f64,
    pub train_rows: usize,
    pub early_stop_rows: usize,
    pub validation_rows: usize,
    /// The metadata JSON's training section.
    pub training: Value,
}

/// The data side of a run: the three splits, the transform and the tokens.
pub struct Prepared {
    pub dataset: Dataset,
    pub train: Vec<Sample>,
    pub early_stop: Vec<Sample>,
    pub validation: Vec<Sample>,
    /// Other GPUs' rows (`TrainOptions::other_gpu_perf_dbs`), one entry per GPU; empty for a
    /// model of one GPU. Only training uses them: validation and the baselines are the target
    /// GPU's.
    pub other_gpus: Vec<OtherGpu>,
    /// Training and early-stop rows (the target's and the other GPUs') left out because the
    /// solver's network does not take their problems ([`crate::solvers::Solver::check_network`]:
    /// e.g. the HIP solvers' 3-D problems, whose depth-1 features equal their 2-D twins'; the
    /// cell's record answers them). Validation keeps them: `eval` scores their class apart.
    pub not_taken_by_network: usize,
}

/// Keeps the samples whose problem `solver`'s network takes on `target`; returns how many it
/// dropped.
fn keep_network_problems(samples: &mut Vec<Sample>, solver: &dyn crate::solvers::Solver, target: &Target) -> usize {
    let before = samples.len();
    samples.retain(|s| solver.check_network(target, &s.problem).is_ok());
    before - samples.len()
}

/// One other GPU's rows, split by the run's seed (its rows of held-out geometries dropped).
pub struct OtherGpu {
    /// The GPU as MIOpen names its databases (`gfx90878`), from the first file's name.
    pub name: String,
    /// The GPU (arch and compute units, from the database's name).
    pub target: Target,
    /// The database files read, newest first.
    pub files: Vec<PathBuf>,
    pub report: dataset::DataReport,
    /// sha256 of its used rows (as [`Dataset::data_hash`]).
    pub data_hash: String,
    pub train: Vec<Sample>,
    pub early_stop: Vec<Sample>,
}

impl Prepared {
    /// What a checkpoint must have been trained on to be resumed: the target's rows and, for a
    /// model across GPUs, each other GPU's (a resume with another pool is refused).
    pub fn run_data_hash(&self) -> String {
        if self.other_gpus.is_empty() {
            return self.dataset.data_hash.clone();
        }
        let mut h = crate::format::sha256::Sha256::new();
        h.update(self.dataset.data_hash.as_bytes());
        for g in &self.other_gpus {
            h.update(g.name.as_bytes());
            h.update(g.data_hash.as_bytes());
        }
        crate::format::sha256::hex(&h.finish())
    }
}

/// The GPU (arch, compute units) a perf database's file name names, as MIOpen names its
/// databases (`gfx900_56.db`, `gfx90878.db.txt.bz2`, `gfx906_60.2019.cd.pdb.txt`).
pub fn gpu_of_file(path: &Path) -> Result<(String, u32)> {
    match crate::solvers::split_db_name(&db_name(path)) {
        (arch, Some(cu)) if crate::solvers::KNOWN_ARCHES.contains(&arch) => Ok((arch.to_string(), cu)),
        _ => Err(Error::Usage(format!(
            "{}: the file name does not name a GPU and its compute units as MIOpen names its databases \
             (e.g. gfx900_56.db, gfx90878.db.txt.bz2); rename or link it so",
            path.display()
        ))),
    }
}

/// A database file's name up to its first dot (`gfx90878` of `gfx90878.db.txt.bz2`): the GPU as
/// MIOpen names its databases.
fn db_name(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    name.split('.').next().unwrap_or("").to_string()
}

/// The target GPU's compute units for a model with the GPU as an input: `--arch`'s
/// (`gfx1030_36`), else the database file name's.
fn target_gpu(opts: &TrainOptions) -> Result<GpuInput> {
    let t = Target::new(&opts.arch);
    let cu = match t.compute_units {
        Some(cu) => cu,
        None => match gpu_of_file(&opts.perf_db) {
            Ok((arch, cu)) if arch == t.arch => cu,
            _ => {
                return Err(Error::Usage(format!(
                    "--other-gpu-perf-db: the target GPU's compute units are needed (the GPU is an input): \
                     give --arch with them ({}_36 style) or name --perf-db as MIOpen does",
                    t.arch
                )))
            }
        },
    };
    Ok(GpuInput {
        arch: t.arch,
        compute_units: cu,
    })
}

/// Loads the other GPUs' databases (grouped by GPU, in the order given) and splits each with the
/// run's seed, dropping the held-out geometries.
fn prepare_other_gpus(opts: &TrainOptions) -> Result<Vec<OtherGpu>> {
    if opts.other_gpu_perf_dbs.is_empty() {
        return Ok(Vec::new());
    }
    let own = target_gpu(opts)?;
    let mut groups: Vec<((String, u32), Vec<PathBuf>)> = Vec::new();
    for p in &opts.other_gpu_perf_dbs {
        let gpu = gpu_of_file(p)?;
        if gpu.0 == own.arch && gpu.1 == own.compute_units {
            return Err(Error::Usage(format!(
                "--other-gpu-perf-db {}: that is the target GPU's own database; give it as --perf-db or --older-perf-db",
                p.display()
            )));
        }
        match groups.iter_mut().find(|(g, _)| *g == gpu) {
            Some((_, files)) => files.push(p.clone()),
            None => groups.push((gpu, vec![p.clone()])),
        }
    }
    let solver = crate::solvers::by_name(&opts.solver)?;
    let mut out = Vec::new();
    for ((arch, cu), files) in groups {
        let target = Target {
            arch,
            compute_units: Some(cu),
            catalogue_dir: None,
            xnack: false,
        };
        let mut ds = match dataset::load_sources(&files, &opts.solver, &target) {
            Ok(ds) => ds,
            // A GPU with no usable row of the solver adds nothing; any other failure is an error.
            Err(Error::Database { detail, .. }) if detail.starts_with("no ") && detail.contains("rows for solver") => {
                continue
            }
            Err(e) => return Err(e),
        };
        if let Some(n) = opts.max_rows {
            ds.samples.truncate(n);
        }
        let [mut train, mut early_stop, _held_out] =
            dataset::three_way_split(&ds.samples, opts.val_fraction, opts.early_stop_fraction, opts.seed);
        keep_network_problems(&mut train, solver, &target);
        keep_network_problems(&mut early_stop, solver, &target);
        out.push(OtherGpu {
            name: db_name(&files[0]),
            target,
            files,
            report: ds.report,
            data_hash: ds.data_hash,
            train,
            early_stop,
        });
    }
    Ok(out)
}

/// Loads the database and splits it as a run with these options does.
pub fn prepare(opts: &TrainOptions) -> Result<Prepared> {
    if opts.leave_out_target && opts.other_gpu_perf_dbs.is_empty() {
        return Err(Error::Usage(
            "--leave-out-target needs --other-gpu-perf-db FILE[,FILE...]: the other GPUs' rows are all it trains on"
                .into(),
        ));
    }
    let mut sources = vec![opts.perf_db.clone()];
    sources.extend(opts.older_perf_dbs.iter().cloned());
    let target = Target::new(&opts.arch);
    let mut ds = dataset::load_sources(&sources, &opts.solver, &target)?;
    if let Some(n) = opts.max_rows {
        ds.samples.truncate(n);
    }
    let [mut train, mut early_stop, validation] =
        dataset::three_way_split(&ds.samples, opts.val_fraction, opts.early_stop_fraction, opts.seed);
    let solver = crate::solvers::by_name(&opts.solver)?;
    let not_taken_by_network =
        keep_network_problems(&mut train, solver, &target) + keep_network_problems(&mut early_stop, solver, &target);
    if let Some(n) = opts.max_train_rows {
        train = evenly_spread(train, n);
    }
    let other_gpus = prepare_other_gpus(opts)?;
    // What is trained on and early-stopped on: the target's rows, or with the target left out
    // only the other GPUs'.
    let (trained, early_stopped) = if opts.leave_out_target {
        (
            other_gpus.iter().map(|g| g.train.len()).sum(),
            other_gpus.iter().map(|g| g.early_stop.len()).sum(),
        )
    } else {
        (train.len(), early_stop.len())
    };
    if trained == 0 || early_stopped == 0 {
        return Err(Error::Database {
            path: opts.perf_db.display().to_string(),
            detail: format!(
                "too few geometries to split: {trained} training and {early_stopped} early-stop samples{}",
                if opts.leave_out_target {
                    " from the other GPUs (--leave-out-target)"
                } else {
                    ""
                }
            ),
        });
    }
    Ok(Prepared {
        dataset: ds,
        train,
        early_stop,
        validation,
        other_gpus,
        not_taken_by_network,
    })
}

/// `n` of `rows` at evenly spaced positions (all of them when there are no more than `n`): a
/// subset that covers the database's key order (sizes, directions, precisions) the way the whole does.
pub fn evenly_spread<T>(rows: Vec<T>, n: usize) -> Vec<T> {
    let len = rows.len();
    if n >= len {
        return rows;
    }
    let mut next = 0usize;
    let mut taken = 0usize;
    rows.into_iter()
        .enumerate()
        .filter_map(|(i, r)| {
            // Position j of the subset is row j * len / n.
            (taken < n && i == next).then(|| {
                taken += 1;
                next = taken * len / n;
                r
            })
        })
        .collect()
}

fn log(opts: &TrainOptions, line: &str) {
    if opts.verbose {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    }
}

/// Computes validation metrics of freshly saved weights (see [`train`]).
pub type EvaluateFn = dyn Fn(&WeightsFiles, &Prepared) -> Result<Value>;

/// Trains a model and writes `{arch}_{solver}.safetensors` + `.json` into `opts.out_dir`.
/// `evaluate` (given the saved files and the prepared splits) fills the metadata's validation
/// metrics; pass `None` to skip.
pub fn train(opts: &TrainOptions, evaluate: Option<&EvaluateFn>) -> Result<TrainResult> {
    let usage = |m: String| Err(Error::Usage(m));
    if opts.hidden == 0 || opts.embed == 0 || opts.batch == 0 || opts.epochs == 0 || opts.threads == 0 {
        return usage("--hidden, --embed, --batch, --epochs and --threads must be positive".into());
    }
    if opts.hidden > weights::MAX_MODEL_SIZE || opts.embed > weights::MAX_MODEL_SIZE {
        return usage(format!(
            "--hidden and --embed must be at most {} (what a weights file may hold)",
            weights::MAX_MODEL_SIZE
        ));
    }
    if opts
        .encoder
        .conv_channels()
        .is_some_and(|ch| ch == 0 || ch > weights::MAX_MODEL_SIZE)
    {
        return usage(format!("--conv-channels must be in 1..={}", weights::MAX_MODEL_SIZE));
    }
    if !(1..=weights::MAX_MEMBERS).contains(&opts.members) {
        return usage(format!("--members must be in 1..={}", weights::MAX_MEMBERS));
    }
    if opts.eval_beam > crate::predict::MAX_BEAM_WIDTH {
        return usage(format!("--beam must be at most {}", crate::predict::MAX_BEAM_WIDTH));
    }
    let arch_ok = !opts.arch.is_empty()
        && opts.arch.len() <= 64
        && opts
            .arch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !arch_ok {
        return usage(format!(
            "--arch '{}': expected a GPU architecture name such as gfx906 (letters, digits, '_', '-')",
            opts.arch
        ));
    }
    if !(opts.lr > 0.0 && opts.clip > 0.0) {
        return usage("--lr and --clip must be positive".into());
    }
    if !(0.0..0.95).contains(&opts.dropout) {
        return usage("--dropout must be in [0, 0.95)".into());
    }
    if !(0.0..1.0).contains(&opts.ema) {
        return usage("--ema must be in [0, 1)".into());
    }
    if !(0.0..=1.0).contains(&opts.weight_decay) || opts.lr * opts.weight_decay >= 1.0 {
        return usage("--weight-decay must be in [0, 1] and below 1 / --lr".into());
    }
    if !(0.0..1.0).contains(&opts.val_fraction) || !(0.0..1.0).contains(&opts.early_stop_fraction) {
        return usage("--val-fraction and --early-stop-fraction must be in [0, 1)".into());
    }
    let solver = crate::solvers::by_name(&opts.solver)?;
    let tunable = crate::solvers::tunable(solver)?;
    let prep = prepare(opts)?;
    log(
        opts,
        &format!("data: {} ({})", opts.perf_db.display(), prep.dataset.report.summary()),
    );
    for reason in prep.dataset.report.reasons() {
        log(opts, &format!("  {reason}"));
    }
    let own_target = Target::new(&opts.arch);
    // The target's rows trained on (and early-stopped on): none when it is left out.
    let (own_train, own_early_stop): (&[Sample], &[Sample]) = if opts.leave_out_target {
        log(
            opts,
            &format!(
                "leave-out: none of {}'s rows is trained on ({} training-side and {} early-stop samples serve only \
                 as the nearest neighbour's reference); its {} validation samples are the evaluation",
                opts.arch,
                prep.train.len(),
                prep.early_stop.len(),
                prep.validation.len()
            ),
        );
        (&[], &[])
    } else {
        (&prep.train, &prep.early_stop)
    };
    let (transform, tokens) = if prep.other_gpus.is_empty() {
        let transform = FeatureTransform::fit(prep.train.iter().map(|s| tunable.features(&s.problem)), None);
        (
            transform,
            TokenTable::from_samples(&prep.train, tunable.param_names().len()),
        )
    } else {
        let gpu = target_gpu(opts)?;
        for g in &prep.other_gpus {
            log(
                opts,
                &format!(
                    "other GPU {} ({}): {} train, {} early-stop samples ({})",
                    g.name,
                    g.files
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    g.train.len(),
                    g.early_stop.len(),
                    g.report.summary()
                ),
            );
        }
        // The transform stands the target's own rows beside the others' with their GPU's
        // features; the tokens cover every GPU's tuned values.
        let raw_of = |target: &Target, samples: &[Sample]| {
            samples
                .iter()
                .map(|s| FeatureTransform::raw_features_with(Some(&gpu), tunable, target, &s.problem))
                .collect::<Vec<_>>()
        };
        let mut raw = raw_of(&own_target, own_train);
        let mut all_train: Vec<Sample> = own_train.to_vec();
        for g in &prep.other_gpus {
            raw.extend(raw_of(&g.target, &g.train));
            all_train.extend(g.train.iter().cloned());
        }
        let mut transform = FeatureTransform::fit(raw.iter(), Some(gpu));
        if opts.leave_out_target {
            unit_scale_constant_gpu_features(&mut transform);
        }
        (
            transform,
            TokenTable::from_samples(&all_train, tunable.param_names().len()),
        )
    };
    let seq_len = tunable.param_names().len();
    let config = AttentionConfig {
        steps: transform.steps(),
        hidden: opts.hidden,
        embed: opts.embed,
        vocab: tokens.len(),
        seq_len,
        encoder: opts.encoder,
    };
    let mut train_set = Encoded::default();
    let mut es_set = Encoded::default();
    encode_into(&mut train_set, own_train, tunable, &own_target, &transform, &tokens);
    encode_into(&mut es_set, own_early_stop, tunable, &own_target, &transform, &tokens);
    for g in &prep.other_gpus {
        encode_into(&mut train_set, &g.train, tunable, &g.target, &transform, &tokens);
        encode_into(&mut es_set, &g.early_stop, tunable, &g.target, &transform, &tokens);
    }
    log(
        opts,
        &format!(
            "split (seed {}): {} train, {} early-stop ({} with unseen values left out{}), {} validation samples; \
             {} tokens; model {}hidden {} embed {} ({} parameters)",
            opts.seed,
            train_set.rows,
            es_set.rows,
            es_set.unseen,
            match prep.not_taken_by_network {
                0 => String::new(),
                n => format!("; {n} train and early-stop rows the network does not take left out, e.g. 3-D"),
            },
            prep.validation.len(),
            config.vocab,
            match config.encoder.conv_channels() {
                Some(ch) => format!("hybrid encoder ({ch} convolution channels) "),
                None => String::new(),
            },
            config.hidden,
            config.embed,
            AttentionParams::zeros(config).len()
        ),
    );
    let members = opts.members.max(1);
    // A run that leaves the target out trains on other rows than one that does not: their
    // checkpoints do not resume each other.
    let run_hash = if opts.leave_out_target {
        let mut h = crate::format::sha256::Sha256::new();
        h.update(prep.run_data_hash().as_bytes());
        h.update(b"leave-out-target");
        crate::format::sha256::hex(&h.finish())
    } else {
        prep.run_data_hash()
    };
    let mut runs: Vec<MemberRun> = Vec::with_capacity(members);
    for k in 0..members {
        let label = if members > 1 {
            format!("member {}/{members} ", k + 1)
        } else {
            String::new()
        };
        let checkpoint = member_path(&opts.checkpoint, k);
        let resume = opts
            .resume
            .as_ref()
            .map(|r| member_path(r, k))
            .filter(|p| k == 0 || p.is_file());
        runs.push(train_member(
            opts,
            &label,
            member_seed(opts.init_seed.unwrap_or(opts.seed), k),
            &checkpoint,
            resume.as_deref(),
            config,
            &train_set,
            &es_set,
            &run_hash,
            &tokens,
            &transform,
        )?);
    }
    let state = &runs[0].state;
    let (first_loss, last_loss) = (runs[0].first_loss, runs[0].last_loss);
    let train_seconds: f64 = runs.iter().map(|r| r.state.elapsed_s).sum();
    let samples_seen: u64 = runs.iter().map(|r| r.state.samples_seen).sum();
    let samples_per_second = samples_seen as f64 / train_seconds.max(1e-9);
    let best: Vec<AttentionParams> = runs.iter().map(|r| r.state.best.clone()).collect();
    let training = json!({
        "perf_db": opts.perf_db.file_name().map(|n| n.to_string_lossy().to_string()),
        "older_perf_dbs": opts.older_perf_dbs.iter().map(|p| p.file_name().map(|n| n.to_string_lossy().to_string())).collect::<Vec<_>>(),
        "other_gpu_perf_dbs": prep.other_gpus.iter().map(|g| json!({
            "gpu": g.name,
            "files": g.files.iter().map(|p| p.file_name().map(|n| n.to_string_lossy().to_string())).collect::<Vec<_>>(),
            "used": g.report.used, "train": g.train.len(), "early_stop": g.early_stop.len(),
        })).collect::<Vec<_>>(),
        "leave_out_target": opts.leave_out_target,
        "used_per_source": prep.dataset.report.used_per_source,
        "source_conflicts": prep.dataset.report.source_conflicts,
        "data_sha256": prep.dataset.data_hash,
        "data_report": {
            "rows": prep.dataset.report.rows, "used": prep.dataset.report.used,
            "not_applicable": prep.dataset.report.not_applicable,
            "rule_violations": prep.dataset.report.rule_violations,
            "default_requests": prep.dataset.report.default_requests,
            "malformed_problem": prep.dataset.report.malformed_problem,
            "malformed_params": prep.dataset.report.malformed_params,
            "duplicates": prep.dataset.report.duplicates,
            "conflicting_duplicates": prep.dataset.report.conflicting_duplicates,
        },
        "seed": opts.seed, "init_seed": opts.init_seed, "val_fraction": opts.val_fraction, "early_stop_fraction": opts.early_stop_fraction,
        "max_rows": opts.max_rows,
        "max_train_rows": opts.max_train_rows,
        "not_taken_by_network": prep.not_taken_by_network,
        "split": {"train": train_set.rows, "early_stop": es_set.rows, "validation": prep.validation.len()},
        "options": {"hidden": opts.hidden, "embed": opts.embed, "batch": opts.batch, "epochs": opts.epochs,
                    "lr": opts.lr, "clip": opts.clip, "dropout": opts.dropout, "ema": opts.ema, "weight_decay": opts.weight_decay, "lr_patience": opts.lr_patience, "patience": opts.patience,
                    "threads": opts.threads, "encoder": opts.encoder.name(), "conv_channels": opts.encoder.conv_channels()},
        "token_positions": tokens.token_positions(),
        "members": members,
        "epochs_run": runs.iter().map(|r| r.state.epoch).collect::<Vec<_>>(),
        "best_epoch": runs.iter().map(|r| r.state.best_epoch).collect::<Vec<_>>(),
        "best_early_stop_loss": runs.iter().map(|r| r.state.best_loss).collect::<Vec<_>>(),
        "train_seconds": train_seconds, "samples_per_second": samples_per_second,
        "history": runs.iter().map(|r| Value::Array(r.state.history.clone())).collect::<Vec<_>>(),
        "tuneinfer_version": env!("CARGO_PKG_VERSION"),
    });
    let mut info = WeightsInfo {
        arch: opts.arch.clone(),
        solver: solver.name().to_string(),
        config,
        members,
        // As the solver stores its values ([`Tunable::value_text`]: e.g. a CK instance's type
        // string, not its index in this run's catalogue).
        token_values: tokens
            .token_values
            .iter()
            .zip(tokens.token_positions())
            .map(|(text, pos)| match (usize::try_from(pos), text.parse::<i64>()) {
                (Ok(pos), Ok(v)) => tunable.value_text(pos, v),
                _ => text.clone(),
            })
            .collect(),
        transform,
        training: training.clone(),
        metrics: Value::Null,
        pool_metrics: Value::Null,
    };
    let files = weights::save(&opts.out_dir, &best, &info)?;
    match evaluate {
        Some(_) if prep.validation.is_empty() => log(
            opts,
            "no validation geometries (--val-fraction 0 trains on all of them): the final evaluation is skipped",
        ),
        Some(eval) => {
            info.metrics = eval(&files, &prep)?;
            weights::save(&opts.out_dir, &best, &info)?;
        }
        None => {}
    }
    log(
        opts,
        &format!(
            "saved {} and {} (best epoch {} of {}, {:.0}s, {:.0} samples/s)",
            files.tensors.display(),
            files.metadata.display(),
            state.best_epoch,
            state.epoch,
            train_seconds,
            samples_per_second
        ),
    );
    Ok(TrainResult {
        files,
        report: prep.dataset.report.clone(),
        epochs: state.epoch,
        best_epoch: state.best_epoch,
        train_seconds,
        samples_per_second,
        first_loss,
        last_loss,
        train_rows: train_set.rows,
        early_stop_rows: es_set.rows,
        validation_rows: prep.validation.len(),
        training,
    })
}

/// What one member's training leaves: its state and the first/last epoch losses.
struct MemberRun {
    state: State,
    first_loss: f64,
    last_loss: f64,
}

/// Trains one network (ensemble member) with its own seed and checkpoint file.
#[allow(clippy::too_many_arguments)]
fn train_member(
    opts: &TrainOptions,
    member_label: &str,
    seed: u64,
    checkpoint: &Path,
    resume: Option<&Path>,
    config: AttentionConfig,
    train_set: &Encoded,
    es_set: &Encoded,
    data_hash: &str,
    tokens: &TokenTable,
    transform: &FeatureTransform,
) -> Result<MemberRun> {
    let mut state = match resume {
        Some(path) => {
            let s = load_checkpoint(path, config, data_hash, tokens, opts)?;
            log(
                opts,
                &format!("resumed from {} after epoch {}", path.display(), s.epoch),
            );
            s
        }
        None => {
            let params = AttentionParams::init(config, seed);
            State {
                best: params.clone(),
                average: params.clone(),
                adam: Adam::new(&params),
                params,
                epoch: 0,
                lr: opts.lr,
                best_loss: f64::INFINITY,
                best_epoch: 0,
                bad_epochs: 0,
                elapsed_s: 0.0,
                samples_seen: 0,
                history: Vec::new(),
            }
        }
    };
    let per_in = config.steps * config.enc_input();
    let start = Instant::now();
    let base_elapsed = state.elapsed_s;
    let mut first_loss = state
        .history
        .first()
        .and_then(|h| h["train_loss"].as_f64())
        .unwrap_or(f64::NAN);
    let mut last_loss = f64::NAN;
    let mut batch_inputs: Vec<f32> = Vec::new();
    let mut batch_targets: Vec<u32> = Vec::new();
    while state.epoch < opts.epochs && state.bad_epochs < opts.patience {
        let epoch_start = Instant::now();
        let mut order: Vec<usize> = (0..train_set.rows).collect();
        let mut rng = Lcg::new(seed.wrapping_mul(1_000_003).wrapping_add(state.epoch as u64));
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut epoch_stats = Stats::default();
        for chunk in order.chunks(opts.batch) {
            batch_inputs.clear();
            batch_targets.clear();
            for &r in chunk {
                batch_inputs.extend_from_slice(&train_set.inputs[r * per_in..(r + 1) * per_in]);
                batch_targets.extend_from_slice(&train_set.targets[r * config.seq_len..(r + 1) * config.seq_len]);
            }
            let mut grads = AttentionParams::zeros(config);
            let dropout = Dropout {
                rate: opts.dropout,
                seed: seed ^ state.adam.step.wrapping_mul(0x2545_F491_4F6C_DD1D),
                first_row: 0,
            };
            let s = forward_backward_sharded(
                &state.params,
                &batch_inputs,
                &batch_targets,
                chunk.len(),
                opts.threads,
                Some(dropout),
                &mut grads,
            );
            scale_and_clip(&mut grads, 1.0 / s.tokens.max(1) as f32, opts.clip);
            state.adam.update(&mut state.params, &grads, state.lr);
            decay_weights(&mut state.params, state.lr * opts.weight_decay);
            update_average(
                &mut state.average,
                &state.params,
                average_decay(opts.ema, state.adam.step),
            );
            epoch_stats.add(s);
            state.samples_seen += chunk.len() as u64;
        }
        let es = evaluate_loss(&state.average, es_set, opts.threads);
        state.epoch += 1;
        let train_loss = epoch_stats.mean_loss();
        if first_loss.is_nan() {
            first_loss = train_loss;
        }
        last_loss = train_loss;
        if !train_loss.is_finite() {
            return Err(Error::Usage(format!(
                "training diverged at epoch {} (loss {train_loss}); try a smaller --lr",
                state.epoch
            )));
        }
        let improved = es.mean_loss() < state.best_loss - 1e-4;
        if improved {
            state.best_loss = es.mean_loss();
            state.best = state.average.clone();
            state.best_epoch = state.epoch;
            state.bad_epochs = 0;
        } else {
            state.bad_epochs += 1;
            if state.bad_epochs % opts.lr_patience.max(1) == 0 {
                state.lr *= 0.5;
            }
        }
        let epoch_s = epoch_start.elapsed().as_secs_f64();
        let elapsed = base_elapsed + start.elapsed().as_secs_f64();
        state.elapsed_s = elapsed;
        state.history.push(json!({
            "epoch": state.epoch, "train_loss": train_loss, "train_token_acc": epoch_stats.token_accuracy(),
            "early_stop_loss": es.mean_loss(), "early_stop_token_acc": es.token_accuracy(), "lr": state.lr,
            "seconds": epoch_s,
        }));
        let left_epochs = (opts.epochs - state.epoch) as f64;
        let mut left_s = left_epochs * epoch_s;
        if let Some(limit) = opts.time_limit_s {
            left_s = left_s.min((limit - elapsed).max(0.0));
        }
        log(
            opts,
            &format!(
                "{member_label}epoch {:>3}/{}  loss {:.4}  token-acc {:.1}%  early-stop loss {:.4} token-acc {:.1}%{}  lr {:.2e}  \
                 {:.1}s/epoch  {:.0} samples/s  elapsed {:.0}s  left <= {:.0}s",
                state.epoch,
                opts.epochs,
                train_loss,
                100.0 * epoch_stats.token_accuracy(),
                es.mean_loss(),
                100.0 * es.token_accuracy(),
                if improved { " *" } else { "" },
                state.lr,
                epoch_s,
                train_set.rows as f64 / epoch_s.max(1e-9),
                elapsed,
                left_s
            ),
        );
        save_checkpoint(checkpoint, &state, data_hash, tokens, transform, opts)?;
        if opts.time_limit_s.is_some_and(|l| elapsed + epoch_s > l) {
            log(opts, "time limit reached: stopping");
            break;
        }
    }
    Ok(MemberRun {
        state,
        first_loss,
        last_loss,
    })
}

/// Gives the GPU features that the training rows never vary (their spread is `fit`'s floor,
/// 1e-3) unit scale. Training is unchanged (such a feature standardises to 0 either way); a GPU
/// that no training row has, the left-out target above all, then reads its own value on the
/// scale of the others (a family flag never set in training: 1 instead of 1,000, which swamps
/// the encoder; measured on MI210's GTC backward weights left out: 3.6% exact before, 21.2 after).
fn unit_scale_constant_gpu_features(transform: &mut FeatureTransform) {
    let floor = 1e-3;
    for std in transform.std.iter_mut().skip(crate::solvers::NUM_FEATURES) {
        if *std <= floor {
            *std = 1.0;
        }
    }
}

/// Decoupled weight decay: every weight times `1 - amount`.
pub fn decay_weights(params: &mut AttentionParams, amount: f32) {
    if amount == 0.0 {
        return;
    }
    for x in params.tensors.iter_mut().flatten() {
        *x *= 1.0 - amount;
    }
}

/// The moving average's decay at Adam step `step` (from 1): `ema`, but at most
/// `(1 + step) / (10 + step)`, so the first hundreds of steps are not dominated by the random
/// initial weights (a short run would otherwise save nearly untrained weights). 0 stays 0.
pub fn average_decay(ema: f32, step: u64) -> f32 {
    let warm = (1.0 + step as f64) / (10.0 + step as f64);
    ema.min(warm as f32)
}

/// `average = decay * average + (1 - decay) * params`, weight by weight; with decay 0 the
/// average is a copy of `params`.
pub fn update_average(average: &mut AttentionParams, params: &AttentionParams, decay: f32) {
    for (a, p) in average.tensors.iter_mut().zip(&params.tensors) {
        if decay == 0.0 {
            a.copy_from_slice(p);
            continue;
        }
        for (x, &y) in a.iter_mut().zip(p) {
            *x = decay * *x + (1.0 - decay) * y;
        }
    }
}

/// Member k's file: `path` itself for k = 0, else `path` with `.m{k}` before the extension.
pub fn member_path(path: &Path, k: usize) -> PathBuf {
    if k == 0 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.m{k}.{}", ext.to_string_lossy()),
        None => format!("{stem}.m{k}"),
    };
    path.with_file_name(name)
}

/// Seed of ensemble member k (member 0 uses the run's seed).
pub fn member_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_add(7919u64.wrapping_mul(k as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evenly_spread_takes_evenly_spaced_rows() {
        // Row j of the subset is j * len / n: 0, 10/3 = 3, 20/3 = 6.
        assert_eq!(evenly_spread((0..10).collect(), 3), vec![0, 3, 6]);
        assert_eq!(evenly_spread((0..7).collect(), 7), (0..7).collect::<Vec<_>>());
        assert_eq!(evenly_spread((0..4).collect(), 9), vec![0, 1, 2, 3]);
        assert_eq!(evenly_spread((0..5).collect(), 0), Vec::<i32>::new());
        assert_eq!(evenly_spread((0..100).collect(), 4), vec![0, 25, 50, 75]);
    }

    fn two_weights(a: f32, b: f32) -> AttentionParams {
        let config = AttentionConfig {
            steps: 1,
            hidden: 1,
            embed: 1,
            vocab: 1,
            seq_len: 1,
            encoder: Default::default(),
        };
        let mut p = AttentionParams::zeros(config);
        p.tensors = vec![vec![a, b]];
        p
    }

    #[test]
    fn moving_average_by_hand() {
        // 0.75 * 1 + 0.25 * 3 = 1.5; 0.75 * 2 + 0.25 * 6 = 3.
        let mut avg = two_weights(1.0, 2.0);
        update_average(&mut avg, &two_weights(3.0, 6.0), 0.75);
        assert_eq!(avg.tensors, vec![vec![1.5, 3.0]]);
        // Decay 0: the average is the weights themselves.
        update_average(&mut avg, &two_weights(-7.0, 0.5), 0.0);
        assert_eq!(avg.tensors, vec![vec![-7.0, 0.5]]);
    }

    #[test]
    fn the_average_warms_up_then_keeps_its_decay() {
        // (1 + 1) / (10 + 1) = 2/11 at the first step; (1 + 90) / (10 + 90) = 0.91 at step 90.
        assert!((average_decay(0.999, 1) - 2.0 / 11.0).abs() < 1e-7);
        assert!((average_decay(0.999, 90) - 0.91).abs() < 1e-6);
        assert_eq!(average_decay(0.999, 1_000_000), 0.999);
        assert_eq!(average_decay(0.0, 5), 0.0);
    }

    #[test]
    fn weight_decay_by_hand() {
        // 1 - 0.25 = 0.75 of each weight; amount 0 leaves them alone.
        let mut p = two_weights(4.0, -2.0);
        decay_weights(&mut p, 0.25);
        assert_eq!(p.tensors, vec![vec![3.0, -1.5]]);
        decay_weights(&mut p, 0.0);
        assert_eq!(p.tensors, vec![vec![3.0, -1.5]]);
    }
}
