//! The `tuneinfer` command line: `predict`, `batch`, `verify`, `train`, `eval`.

mod args;
mod bench;
mod eval;
mod info;
mod predict;
mod train;
mod verify;

use crate::error::Error;

pub use args::{Args, Spec};

/// The architecture of the built-in model (`weights/`), the default of every command's `--arch`.
const DEFAULT_ARCH: &str = "gfx906";

const USAGE: &str = "\
tuneinfer: predicts MIOpen convolution kernel tuning parameters with seq2seq models

Usage: tuneinfer <COMMAND> [OPTIONS]

Commands:
  predict   predict the tuning parameters of one convolution problem
  batch     predict for many problems (one per line) and write a TSV
  verify    run model files' embedded test vectors and report the largest errors
  info      show the GPU adapters (limits, features) and the models found
  bench     predictions per second on the CPU and the GPU, side by side
  train     train an attention predictor from a MIOpen perf database
  eval      compare a model with baselines on the held-out validation problems

Run 'tuneinfer <COMMAND> --help' for a command's options.
Exit codes: 0 success, 1 some inputs failed, 2 usage, 3 file I/O, 4 model format,
5 invalid/unsupported problem, 6 unknown solver or model not found, 7 database, 8 verify mismatch,
9 GPU unavailable or failed.";

/// Runs the CLI on `argv` (without the program name) and returns the process exit code.
pub fn run(argv: &[String]) -> i32 {
    let Some(command) = argv.first() else {
        eprintln!("{USAGE}");
        return 2;
    };
    let rest = &argv[1..];
    let result = match command.as_str() {
        "predict" => predict::predict(rest),
        "batch" => predict::batch(rest),
        "verify" => verify::verify(rest),
        "info" => info::info(rest),
        "bench" => bench::bench(rest),
        "train" => train::train(rest),
        "eval" => eval::eval(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(0)
        }
        "-V" | "--version" => {
            println!("tuneinfer {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        other => Err(Error::Usage(format!("unknown command '{other}' (try --help)"))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// True when the words ask for help (`-h` / `--help` before any positional word).
pub(crate) fn wants_help(words: &[String]) -> bool {
    words
        .iter()
        .take_while(|w| w.starts_with('-'))
        .any(|w| w == "-h" || w == "--help")
        || words.first().is_some_and(|w| w == "-h" || w == "--help")
}
