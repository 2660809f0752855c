//! `tuneinfer train`: trains an attention predictor from a perf database.

use std::path::{Path, PathBuf};

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::seq2seq::weights::{MAX_MEMBERS, MAX_MODEL_SIZE};
use crate::train::{self, TrainOptions};

const HELP: &str = "\
Usage: tuneinfer train --perf-db FILE --arch ARCH [OPTIONS]

Trains tuneinfer's seq2seq-with-attention predictor for one (arch, solver) from a MIOpen perf
database (sqlite with tables config/perf_db, or the text format KEY=Solver:params;...), then
evaluates it on the held-out validation geometries. Writes {arch}_{solver}.safetensors and
{arch}_{solver}.json into --out, and a checkpoint after every epoch. Progress goes to stderr.

Options (defaults in brackets):
  --perf-db FILE             training data (required)
  --older-perf-db FILE[,FILE...]
                             older databases (e.g. MIOpen's 2019 text files) whose rows are
                             added after --perf-db's, newest first; a problem tuned in several
                             keeps the newest parameters (conflicts are counted)
  --other-gpu-perf-db FILE[,FILE...]
                             other GPUs' databases, named as MIOpen names them (gfx900_56.db,
                             gfx90878.db.txt.bz2: the name gives the GPU): their rows train
                             the model too, with the GPU as an input (log2 compute units and
                             the GPU family follow the solver's features); their rows of the
                             held-out geometries are left out; validation and the baselines
                             stay the target GPU's
  --leave-out-target         with --other-gpu-perf-db: train on the other GPUs' rows only, none
                             of the target's (not for early stopping either): its held-out
                             rows are the validation, its other rows only the nearest
                             neighbour's reference (a second neighbour searches the other
                             GPUs' rows), as for a GPU nobody tuned; the model's JSON records
                             it (training.leave_out_target)
  --arch ARCH                GPU architecture the data comes from, e.g. gfx906 (required)
  --solver NAME              [ConvAsm1x1U] one of the solvers listed at the end
  --out DIR                  where the model files go [weights]
  --checkpoint FILE          [OUT/{arch}_{solver}.checkpoint.safetensors]
  --resume FILE              continue from a checkpoint (same data and sizes)
  --hidden N                 LSTM units of encoder and decoder [128]
  --embed N                  token embedding width [32]
  --encoder lstm|hybrid      the encoder: lstm = an LSTM over the feature sequence; hybrid =
                             the paper's convolutional encoder, a width-3 'same' convolution
                             with tanh over the steps feeding that LSTM (the model's JSON
                             records it; loading picks it automatically) [lstm]
  --conv-channels N          the hybrid encoder's convolution channels [32]
  --batch N                  samples per mini-batch [32]
  --epochs N                 maximum epochs [50]
  --lr X                     Adam learning rate [0.002], halved after --lr-patience bad epochs
  --lr-patience N            [3]
  --patience N               stop after N epochs without early-stop improvement [10]
  --clip X                   global gradient-norm clip [5]
  --dropout X                dropout rate on the attention output while training [0.2]
  --ema X                    decay of the moving average of the weights that early stopping
                             judges and that is saved; 0 = off (the raw weights) [0.999]
  --weight-decay X           decoupled weight decay (AdamW): each step every weight shrinks
                             by lr * X of itself; 0 = off [0.05]
  --seed N                   split seed, and initialisation and shuffling seed [1]
  --init-seed N              initialisation and shuffling seed alone [--seed]: other networks
                             on the same split, to see what a result owes to the initialisation
  --members N                train N networks (seeds seed, seed+7919, ...) and ship their
                             average (an ensemble; checkpoints FILE, FILE.m1, ...) [1]
  --val-fraction X           geometries held out for validation [0.2]
  --early-stop-fraction X    of the rest, geometries used for early stopping [0.1]
  --threads N                threads per mini-batch (gradients summed in a fixed order) [2]
  --time-limit SECONDS       start no epoch that would end after this
  --max-rows N               use only the first N usable rows (smoke tests)
  --max-train-rows N         train on N of the training-side rows, spread evenly (learning
                             curves: validation stays the whole database's held-out part)
  --beam K                   beam width of the final validation evaluation [16]
  --no-eval                  skip the final validation evaluation
  --data-report              only read the database: print what happened to its rows (used,
                             not applicable and rule-violating, with the reasons) and the split
  --quiet                    no progress lines";

const VALUED: &[&str] = &[
    "perf-db",
    "older-perf-db",
    "other-gpu-perf-db",
    "arch",
    "solver",
    "out",
    "checkpoint",
    "resume",
    "hidden",
    "embed",
    "encoder",
    "conv-channels",
    "batch",
    "epochs",
    "lr",
    "lr-patience",
    "patience",
    "clip",
    "dropout",
    "ema",
    "weight-decay",
    "seed",
    "init-seed",
    "val-fraction",
    "early-stop-fraction",
    "threads",
    "time-limit",
    "max-rows",
    "max-train-rows",
    "beam",
    "members",
];

fn float(args: &Args, name: &str, default: f64) -> Result<f64> {
    match args.value(name) {
        None => Ok(default),
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| Error::Usage(format!("--{name}: expected a non-negative number, got '{v}'"))),
    }
}

/// A seed option's value (any non-negative integer), None when not given.
fn seed(args: &Args, name: &str) -> Result<Option<u64>> {
    args.value(name)
        .map(|v| {
            v.parse()
                .map_err(|_| Error::Usage(format!("--{name}: expected an integer, got '{v}'")))
        })
        .transpose()
}

/// Parses `train`'s options into [`TrainOptions`].
pub(super) fn options(args: &Args) -> Result<TrainOptions> {
    let perf_db = args
        .value("perf-db")
        .ok_or_else(|| Error::Usage("train needs --perf-db FILE (see --help)".into()))?;
    let arch = args
        .value("arch")
        .ok_or_else(|| Error::Usage("train needs --arch ARCH, the GPU the database comes from".into()))?;
    let solver = args.value("solver").unwrap_or(crate::request::DEFAULT_SOLVER);
    let out = PathBuf::from(args.value("out").unwrap_or("weights"));
    let mut o = TrainOptions::new(Path::new(perf_db), arch, solver, &out);
    if let Some(c) = args.value("checkpoint") {
        o.checkpoint = PathBuf::from(c);
    }
    o.resume = args.value("resume").map(PathBuf::from);
    o.older_perf_dbs = args.paths("older-perf-db")?.unwrap_or_default();
    o.other_gpu_perf_dbs = args.paths("other-gpu-perf-db")?.unwrap_or_default();
    // Refused without --other-gpu-perf-db by train::prepare, before any data is read.
    o.leave_out_target = args.flag("leave-out-target");
    o.hidden = args.positive("hidden", o.hidden, MAX_MODEL_SIZE)?;
    o.embed = args.positive("embed", o.embed, MAX_MODEL_SIZE)?;
    let channels = args.positive(
        "conv-channels",
        crate::seq2seq::conv_encoder::DEFAULT_CONV_CHANNELS,
        MAX_MODEL_SIZE,
    )?;
    if args.value("conv-channels").is_some() && args.value("encoder") != Some("hybrid") {
        return Err(Error::Usage("--conv-channels needs --encoder hybrid".into()));
    }
    o.encoder = crate::seq2seq::attention::EncoderKind::parse(args.value("encoder").unwrap_or("lstm"), channels)?;
    o.batch = args.positive("batch", o.batch, 65_536)?;
    o.epochs = args.positive("epochs", o.epochs, 1_000_000)?;
    o.lr = float(args, "lr", o.lr as f64)? as f32;
    o.lr_patience = args.positive("lr-patience", o.lr_patience, 1_000_000)?;
    o.patience = args.positive("patience", o.patience, 1_000_000)?;
    o.clip = float(args, "clip", o.clip as f64)? as f32;
    o.dropout = float(args, "dropout", o.dropout as f64)? as f32;
    o.ema = float(args, "ema", o.ema as f64)? as f32;
    o.weight_decay = float(args, "weight-decay", o.weight_decay as f64)? as f32;
    o.seed = seed(args, "seed")?.unwrap_or(o.seed);
    o.init_seed = seed(args, "init-seed")?;
    o.val_fraction = float(args, "val-fraction", o.val_fraction)?;
    o.early_stop_fraction = float(args, "early-stop-fraction", o.early_stop_fraction)?;
    o.threads = args.positive("threads", o.threads, 256)?;
    o.time_limit_s = args
        .value("time-limit")
        .map(|_| float(args, "time-limit", 0.0))
        .transpose()?;
    o.max_rows = args
        .value("max-rows")
        .map(|_| args.positive("max-rows", 1, usize::MAX))
        .transpose()?;
    o.max_train_rows = args
        .value("max-train-rows")
        .map(|_| args.positive("max-train-rows", 1, usize::MAX))
        .transpose()?;
    o.eval_beam = args.positive("beam", o.eval_beam, crate::predict::MAX_BEAM_WIDTH)?;
    o.members = args.positive("members", o.members, MAX_MEMBERS)?;
    o.verbose = !args.flag("quiet");
    Ok(o)
}

pub(super) fn train(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}\n\nSolvers: {}", super::words::solver_names().join(", "));
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: VALUED,
            flags: &["no-eval", "quiet", "data-report", "leave-out-target"],
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!(
            "train takes no positional argument, got '{extra}'"
        )));
    }
    let opts = options(&args)?;
    if args.flag("data-report") {
        let prep = train::prepare(&opts)?;
        say!(
            "{} {} in {}: {}",
            opts.arch,
            opts.solver,
            opts.perf_db.display(),
            prep.dataset.report.summary()
        );
        for reason in prep.dataset.report.reasons() {
            say!("  {reason}");
        }
        say!(
            "split (seed {}): {} train, {} early-stop, {} validation samples{}",
            opts.seed,
            prep.train.len(),
            prep.early_stop.len(),
            prep.validation.len(),
            if opts.leave_out_target {
                " (--leave-out-target: train and early-stop not trained on)"
            } else {
                ""
            }
        );
        for g in &prep.other_gpus {
            say!(
                "other GPU {}: {}; {} train, {} early-stop samples (its rows of the held-out geometries left out)",
                g.name,
                g.report.summary(),
                g.train.len(),
                g.early_stop.len()
            );
        }
        return Ok(0);
    }
    let beam = opts.eval_beam;
    let leave_out = opts.leave_out_target;
    let evaluate = move |files: &crate::seq2seq::weights::WeightsFiles, prep: &train::Prepared| {
        let (info, _) = crate::seq2seq::weights::read_info(&files.metadata)?;
        let mut table = crate::eval::evaluate_files(files, &info.arch, &info.solver, prep, beam, None)?;
        if leave_out {
            other_gpus_neighbour(&mut table, &info.arch, &info.solver, prep)?;
        }
        for note in &table.notes {
            eprintln!("{note}");
        }
        eprintln!("{}", table.to_text());
        Ok(table.to_json())
    };
    let result = if args.flag("no-eval") {
        train::train(&opts, None)?
    } else {
        train::train(&opts, Some(&evaluate))?
    };
    say!(
        "trained {} {}: {} epochs (best {}), {:.0} s, {:.0} samples/s -> {}",
        opts.arch,
        opts.solver,
        result.epochs,
        result.best_epoch,
        result.train_seconds,
        result.samples_per_second,
        result.files.tensors.display()
    );
    Ok(0)
}

/// For a model that never saw the target's rows (`--leave-out-target`), the baseline a GPU
/// nobody tuned has: the nearest neighbour over the other GPUs' rows (their training and
/// early-stop sides), its configs valid on the target, added to the table after the usual rows.
fn other_gpus_neighbour(
    table: &mut crate::eval::EvalTable,
    arch: &str,
    solver: &str,
    prep: &train::Prepared,
) -> Result<()> {
    let tunable = crate::solvers::tunable(crate::solvers::by_name(solver)?)?;
    let target = crate::solvers::Target::new(arch);
    let reference: Vec<crate::data::dataset::Sample> = prep
        .other_gpus
        .iter()
        .flat_map(|g| g.train.iter().chain(&g.early_stop).cloned())
        .collect();
    let answers: Vec<Vec<Vec<i64>>> = prep
        .validation
        .iter()
        .map(|s| {
            crate::eval::nearest_neighbours(crate::neighbour::Variant::Solver, tunable, &target, &reference, s, 16)
        })
        .collect();
    table.methods.push(crate::eval::MethodScores::score(
        OTHER_GPUS_NEIGHBOUR,
        tunable,
        &target,
        &prep.validation,
        &answers,
    ));
    Ok(())
}

/// The row [`other_gpus_neighbour`] adds (`tools/leave_one_out.sh` reads it by this name).
const OTHER_GPUS_NEIGHBOUR: &str = "other GPUs' NN (valid, k=16)";
