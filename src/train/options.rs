//! What `tuneinfer train` can set, with the documented defaults.

use std::path::{Path, PathBuf};

use crate::seq2seq::attention::EncoderKind;

/// Everything `tuneinfer train` can set; [`TrainOptions::new`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    pub perf_db: PathBuf,
    /// Older databases whose rows are used after `perf_db`'s, newest first (a problem several
    /// tuned keeps the newest parameters). Empty by default.
    pub older_perf_dbs: Vec<PathBuf>,
    /// Other GPUs' databases (each named as MIOpen names it, `gfx900_56.db`, so that its GPU is
    /// known): their rows train the model too, with the GPU as an input (the model's encoder
    /// reads `solvers::gpu_features` after the solver's features). Their rows of the held-out
    /// geometries are left out. Empty by default (a model of one GPU, no GPU input).
    pub other_gpu_perf_dbs: Vec<PathBuf>,
    /// Leave the target GPU out (`--leave-out-target`): none of its rows is trained on or used
    /// for early stopping (the other GPUs' are); its rows of the held-out geometries are still
    /// the validation set, and its training-side rows only the nearest neighbour's reference,
    /// so the model is measured as it would do on a GPU nobody tuned. Needs
    /// `other_gpu_perf_dbs`. Off by default.
    pub leave_out_target: bool,
    pub arch: String,
    pub solver: String,
    /// Where the model files go.
    pub out_dir: PathBuf,
    /// Checkpoint file (written after every epoch).
    pub checkpoint: PathBuf,
    /// LSTM units (128).
    pub hidden: usize,
    /// Token embedding width (32).
    pub embed: usize,
    /// The encoder: the plain LSTM (default) or the hybrid one, a width-3 convolution over the
    /// steps (with its channels) feeding the LSTM (`seq2seq::conv_encoder`).
    pub encoder: EncoderKind,
    /// Samples per mini-batch (32).
    pub batch: usize,
    /// Maximum epochs (50).
    pub epochs: usize,
    /// Adam learning rate (0.002).
    pub lr: f32,
    /// Global gradient-norm clip (5).
    pub clip: f32,
    /// Dropout rate on the attention output during training (0.2).
    pub dropout: f32,
    /// Decay of the exponential moving average of the weights (0.999); the average is what
    /// early stopping judges and what is shipped. 0 turns it off (the raw weights are used).
    pub ema: f32,
    /// Decoupled weight decay (0.05): after each Adam step every weight shrinks by
    /// `lr * weight_decay` of itself (AdamW). 0 turns it off.
    pub weight_decay: f32,
    /// Epochs without early-stop-loss improvement before the learning rate halves (3).
    pub lr_patience: usize,
    /// Epochs without improvement before stopping (10).
    pub patience: usize,
    /// Seed of the splits, and of initialisation and shuffling unless `init_seed` is set (1).
    pub seed: u64,
    /// Seed of initialisation and shuffling alone (None: `seed`): other networks on the same
    /// split, to measure how much a result owes to the initialisation.
    pub init_seed: Option<u64>,
    /// Fraction of geometries held out for validation (0.2).
    pub val_fraction: f64,
    /// Fraction of the remaining geometries used for early stopping (0.1).
    pub early_stop_fraction: f64,
    /// Worker threads (= gradient shards) per mini-batch (2).
    pub threads: usize,
    /// Use only the first N usable rows (smoke tests).
    pub max_rows: Option<usize>,
    /// Train on N of the training-side rows, spread evenly over them (learning curves: the
    /// validation and early-stop geometries stay those of the whole database).
    pub max_train_rows: Option<usize>,
    /// Stop starting new epochs after this many seconds.
    pub time_limit_s: Option<f64>,
    /// Continue from this checkpoint.
    pub resume: Option<PathBuf>,
    /// Networks trained (with seeds seed, seed+7919, ...) and averaged (1).
    pub members: usize,
    /// Beam width of the final validation evaluation (16).
    pub eval_beam: usize,
    /// Print progress lines.
    pub verbose: bool,
}

impl TrainOptions {
    pub fn new(perf_db: &Path, arch: &str, solver: &str, out_dir: &Path) -> TrainOptions {
        TrainOptions {
            perf_db: perf_db.to_path_buf(),
            older_perf_dbs: Vec::new(),
            other_gpu_perf_dbs: Vec::new(),
            leave_out_target: false,
            arch: arch.to_string(),
            solver: solver.to_string(),
            out_dir: out_dir.to_path_buf(),
            checkpoint: out_dir.join(format!(
                "{arch}_{}.checkpoint.safetensors",
                crate::seq2seq::weights::file_solver_name(solver)
            )),
            hidden: 128,
            embed: 32,
            encoder: EncoderKind::Lstm,
            batch: 32,
            epochs: 50,
            lr: 0.002,
            clip: 5.0,
            dropout: 0.2,
            ema: 0.999,
            weight_decay: 0.05,
            lr_patience: 3,
            patience: 10,
            seed: 1,
            init_seed: None,
            val_fraction: 0.2,
            early_stop_fraction: 0.1,
            threads: 2,
            max_rows: None,
            max_train_rows: None,
            time_limit_s: None,
            resume: None,
            members: 1,
            eval_beam: 16,
            verbose: true,
        }
    }
}
