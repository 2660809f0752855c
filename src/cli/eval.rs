//! `tuneinfer eval`: the model beside the baselines on the model's own held-out validation
//! geometries.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::seq2seq::weights;
use crate::train::{self, TrainOptions};

const HELP: &str = "\
Usage: tuneinfer eval --perf-db FILE [--arch ARCH] [--solver NAME] [OPTIONS]
       tuneinfer eval --no-model --perf-db FILE --arch ARCH --solver NAME [--seed N] [--record --models DIR]

Evaluates a trained model on the validation geometries it was not trained on (the split is
rebuilt from the seed and fractions recorded in the model's metadata), beside MIOpen's static
default, the nearest neighbour from the training rows and, when its files are found, MIOpen's
gfx908 KTN model. Metrics: exact config match, per-parameter match and validity of the first
answer; top-k: is the tuned best among the first k answers? The model's beam is also scored by
problem kind (direction and precision, problem count in brackets).

Options:
  --perf-db FILE      the database the model was trained on (required); its held-out
                      geometries are the validation problems
  --older-perf-db FILE[,FILE...]
                      older databases the model was also trained on: their training-side
                      rows join the nearest neighbour's reference (validation stays
                      --perf-db's)
  --arch ARCH         [gfx906]
  --solver NAME       [ConvAsm1x1U] one of the solvers listed at the end
  --models DIR        where {arch}_{solver}.safetensors/.json live, searched first (then:
                      $TUNEINFER_MODELS, the project's weights/, ./weights, MIOpen's)
  --model FILE        evaluate this model (its .json) instead: e.g. a model trained across
                      GPUs (train --other-gpu-perf-db) on another GPU of its pool, --perf-db
                      that GPU's database and --arch its name (gfx90a68); with --record the
                      figures become its validation for that GPU (`validation_by_gpu`), which
                      lets it serve that GPU (docs/training.md)
  --ktn-models DIR    where MIOpen's gfx908_ConvAsm1x1U_*.ktn.model live
                      [$TUNEINFER_MODELS, ../shared/miopen/models]
  --second-run FILE   another tuning run of the same GPU (e.g. history/gfx942130.2024-12.db.txt.bz2)
                      as the noise ceiling: on the validation problems it tuned too, how often
                      the two runs' winners agree and each method's first answer against either
  --store-half DIR    first store the model with f16 tensors in DIR (half the size), then
                      evaluate that copy and record the table as its `validation`
  --record            write this table into the model's JSON as its `validation` (the
                      figures `userdb` decides by), e.g. after a new baseline row was added
  --beam K            beam width and answers per problem for top-k [16]
  --json              print JSON instead of the table

A cell with no model (docs/methods.md): --no-model evaluates only the nearest neighbour and
MIOpen's default on the split of --seed [1] (a fifth of the geometries held out, as `train`);
with --record it writes {arch}_{solver}.neighbour.json into --models DIR, which serves the cell
without a network: `predict` answers it with the nearest tuned neighbour where that was the
better of the two and MIOpen's system perf db is at hand.";

pub(super) fn eval(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}\n\nSolvers: {}", super::words::solver_names().join(", "));
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: &[
                "perf-db",
                "older-perf-db",
                "arch",
                "solver",
                "models",
                "ktn-models",
                "beam",
                "second-run",
                "store-half",
                "seed",
                "model",
            ],
            flags: &["json", "record", "no-model"],
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!(
            "eval takes no positional argument, got '{extra}'"
        )));
    }
    let perf_db = args
        .value("perf-db")
        .ok_or_else(|| Error::Usage("eval needs --perf-db FILE (see --help)".into()))?;
    let arch = args.value("arch").unwrap_or_else(|| {
        super::words::announce_default("arch", super::DEFAULT_ARCH, "--arch names the model's GPU");
        super::DEFAULT_ARCH
    });
    let solver = crate::solvers::by_name(args.value("solver").unwrap_or_else(|| {
        super::words::announce_default("solver", crate::request::DEFAULT_SOLVER, "--solver NAME picks another");
        crate::request::DEFAULT_SOLVER
    }))?;
    let beam = args.positive("beam", 16, crate::predict::MAX_BEAM_WIDTH)?;
    if args.flag("no-model") {
        return eval_no_model(&args, perf_db, arch, solver, beam);
    }
    if args.value("seed").is_some() {
        return Err(Error::Usage(
            "eval --seed is for --no-model: a model's split is the one its metadata records".into(),
        ));
    }
    let mut files = match args.value("model") {
        Some(file) => model_file(Path::new(file))?,
        None => {
            let dirs: Vec<PathBuf> = crate::models::model_dirs(args.value("models").map(Path::new))?;
            weights::find(&dirs, arch, solver.name()).ok_or_else(|| Error::ModelNotFound {
                looked_for: vec![crate::models::weights_pattern(arch, solver.name())],
                searched: dirs.clone(),
            })?
        }
    };
    // A model evaluated on another GPU than its own: one of its training pool (its figures for
    // that GPU), else only a look (nothing recorded).
    let pool_gpu = {
        let (info, _) = weights::read_info(&files.metadata)?;
        if !info.solver.eq_ignore_ascii_case(solver.name()) {
            return Err(Error::Usage(format!(
                "--model {}: a model of {}, not of --solver {}",
                files.metadata.display(),
                info.solver,
                solver.name()
            )));
        }
        let gpu = crate::models::GpuName::parse(arch).db_name;
        if gpu.eq_ignore_ascii_case(&info.arch) {
            None
        } else {
            if !info.trained_with(&gpu) && (args.flag("record") || args.value("store-half").is_some()) {
                return Err(Error::Usage(format!(
                    "--record: {} was not trained with {gpu}'s rows (train --other-gpu-perf-db); its figures on \
                     {gpu} are recorded only for a GPU of its training pool",
                    files.metadata.display()
                )));
            }
            if info.transform.gpu.is_none() {
                eprintln!(
                    "note: {} does not read the GPU as an input: it answers {gpu} as it answers {}",
                    files.metadata.display(),
                    info.arch
                );
            }
            Some(gpu)
        }
    };
    let half_dir = args.value("store-half").map(PathBuf::from);
    if let Some(dir) = &half_dir {
        files = weights::store_as(&files, dir, crate::format::safetensors::Dtype::F16)?;
    }
    let (info, _) = weights::read_info(&files.metadata)?;
    let t = &info.training;
    let mut opts = TrainOptions::new(Path::new(perf_db), arch, solver.name(), Path::new("."));
    opts.seed = t["seed"].as_u64().unwrap_or(opts.seed);
    opts.val_fraction = t["val_fraction"].as_f64().unwrap_or(opts.val_fraction);
    opts.early_stop_fraction = t["early_stop_fraction"].as_f64().unwrap_or(opts.early_stop_fraction);
    opts.max_rows = t["max_rows"].as_u64().map(|n| n as usize);
    opts.max_train_rows = t["max_train_rows"].as_u64().map(|n| n as usize);
    let mut prep = train::prepare(&opts)?;
    if let Some(older) = args.paths("older-perf-db")? {
        // The same seed holds out the same geometries of every source: the union's training
        // side never holds a validation geometry of --perf-db.
        let mut all = opts.clone();
        all.older_perf_dbs = older;
        let union = train::prepare(&all)?;
        prep.train = union.train;
        prep.early_stop = union.early_stop;
    }
    // A model trained on several sources is evaluated on one of them: the same seed holds out
    // the same geometries of every source, so nothing it validates on was trained on.
    let several_sources = t["older_perf_dbs"].as_array().is_some_and(|a| !a.is_empty());
    if pool_gpu.is_none() && !several_sources && t["data_sha256"].as_str() != Some(prep.dataset.data_hash.as_str()) {
        eprintln!(
            "note: {} is not the database this model was trained on; validation geometries are chosen by seed, \
             so some of them may have been trained on",
            perf_db
        );
    }
    let mut table = crate::eval::evaluate_files(
        &files,
        arch,
        solver.name(),
        &prep,
        beam,
        args.value("ktn-models").map(Path::new),
    )?;
    if let Some(second) = args.value("second-run") {
        let ds = crate::data::dataset::load_sources(
            &[PathBuf::from(second)],
            solver.name(),
            &crate::solvers::Target::new(arch),
        )?;
        let winners: std::collections::HashMap<_, _> = ds.samples.into_iter().map(|s| (s.problem, s.config)).collect();
        let tunable = crate::solvers::tunable(solver)?;
        table.compare_second_run(second, tunable, &prep.validation, &winners);
    }
    for note in &table.notes {
        eprintln!("{note}");
    }
    if let (Some(gpu), true) = (&pool_gpu, args.flag("record")) {
        weights::set_gpu_validation(&files, gpu, &table.to_json())?;
        eprintln!(
            "recorded these figures as the validation of {} on {gpu}",
            files.metadata.display()
        );
    } else if half_dir.is_some() || args.flag("record") {
        weights::set_validation(&files, &table.to_json())?;
        if half_dir.is_some() {
            eprintln!(
                "stored {} (f16) with these figures as its validation",
                files.tensors.display()
            );
        } else {
            eprintln!(
                "recorded these figures as the validation of {}",
                files.metadata.display()
            );
        }
    }
    print_table(&table, args.flag("json"))
}

/// The model files `--model FILE` names (its `.json` or `.safetensors`).
fn model_file(file: &Path) -> Result<weights::WeightsFiles> {
    let files = weights::WeightsFiles {
        metadata: file.with_extension("json"),
        tensors: file.with_extension("safetensors"),
    };
    if !files.metadata.is_file() {
        return Err(Error::Usage(format!(
            "--model {}: no model's metadata {} there (a model is NAME.json + NAME.safetensors)",
            file.display(),
            files.metadata.display()
        )));
    }
    Ok(files)
}

fn print_table(table: &crate::eval::EvalTable, json: bool) -> Result<i32> {
    let text = if json {
        format!("{}\n", table.to_json())
    } else {
        table.to_text()
    };
    // A closed pipe (`| head`) is not an error worth a panic.
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("<stdout>", e)),
        _ => Ok(0),
    }
}

/// `eval --no-model`: the nearest neighbour and MIOpen's default on the held-out geometries of
/// the split of `--seed`; with `--record`, the cell's record for serving it without a network.
fn eval_no_model(
    args: &Args,
    perf_db: &str,
    arch: &str,
    solver: &'static dyn crate::solvers::Solver,
    beam: usize,
) -> Result<i32> {
    for flag in ["older-perf-db", "ktn-models", "second-run", "store-half"] {
        if args.value(flag).is_some() {
            return Err(Error::Usage(format!("eval --no-model takes no --{flag}")));
        }
    }
    let record_dir = match (args.flag("record"), args.value("models")) {
        (true, None) => {
            return Err(Error::Usage(
                "eval --no-model --record writes {arch}_{solver}.neighbour.json into --models DIR: name one (e.g. --models weights)"
                    .into(),
            ))
        }
        (true, Some(dir)) if !Path::new(dir).is_dir() => {
            return Err(Error::Usage(format!("--models {dir}: not a directory")))
        }
        (record, dir) => dir.filter(|_| record).map(PathBuf::from),
    };
    let tunable = crate::solvers::tunable(solver)?;
    let mut opts = TrainOptions::new(Path::new(perf_db), arch, solver.name(), Path::new("."));
    if args.value("seed").is_some() {
        opts.seed = args.positive("seed", 1, u32::MAX as usize)? as u64;
    }
    let prep = train::prepare(&opts)?;
    if prep.validation.is_empty() {
        return Err(Error::Usage(format!(
            "{perf_db}: no held-out problem of {} on {arch} to evaluate on",
            solver.name()
        )));
    }
    let mut reference = prep.train.clone();
    reference.extend(prep.early_stop.iter().cloned());
    let table = crate::eval::evaluate(arch, tunable, None, None, &reference, &prep.validation, beam);
    if let Some(dir) = record_dir {
        let gpu = crate::models::GpuName::parse(arch);
        let file_name = Path::new(perf_db)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(perf_db)
            .to_string();
        let record = crate::models::NeighbourRecord {
            arch: gpu.db_name.clone(),
            solver: solver.name().to_string(),
            training: serde_json::json!({
                "perf_db": file_name,
                "data_sha256": prep.dataset.data_hash,
                "seed": opts.seed,
                "val_fraction": opts.val_fraction,
                "early_stop_fraction": opts.early_stop_fraction,
                "rows": prep.train.len() + prep.early_stop.len() + prep.validation.len(),
            }),
            metrics: table.to_json(),
        };
        let path = crate::models::neighbour_record_path(&dir, &gpu.db_name, solver.name());
        let text = serde_json::to_string_pretty(&record.to_json())
            .map_err(|e| Error::Internal(format!("record JSON: {e}")))?;
        std::fs::write(&path, text + "\n").map_err(|e| Error::io(&path, e))?;
        eprintln!("recorded the cell's figures in {}", path.display());
    }
    print_table(&table, args.flag("json"))
}
