//! The `tuneinfer` command line: `predict`, `batch`, `userdb`, `problems`, `verify`, `train`, `eval`.

/// `println!` that returns an I/O error (exit code 3) from the enclosing function instead of
/// panicking when standard output cannot be written (a closed pipe, a full disk).
macro_rules! say {
    () => {
        $crate::cli::write_stdout("")?
    };
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(&format!($($arg)*))?
    };
}

mod args;
mod bench;
mod eval;
mod find;
mod info;
mod interrupt;
mod onnx;
mod predict;
mod train;
mod userdb;
mod verify;
mod words;

use crate::error::Error;

pub use args::{Args, Spec};

use crate::request::DEFAULT_ARCH;

const USAGE: &str = "\
tuneinfer: predicts MIOpen convolution kernel tuning parameters with seq2seq models

Usage: tuneinfer <COMMAND> [OPTIONS]

Commands:
  predict   predict the tuning parameters of one convolution problem
  batch     predict for many problems (one per line) and write a TSV
  userdb    predict for a network's MIOpen log and write MIOpen's user perf database
  problems  print an ONNX network's convolution problems as MIOpenDriver lines (no GPU)
  verify    run model files' embedded test vectors and report the largest errors
  info      show the GPU adapters (limits, features) and the models found
  bench     predictions per second on the CPU and the GPU, side by side
  train     train an attention predictor from a MIOpen perf database
  eval      compare a model with baselines on the held-out validation problems
  find      rank the solvers MIOpen would run on a problem, fastest first (find-db)

Run 'tuneinfer <COMMAND> --help' for a command's options.
Exit codes: 0 success, 1 some inputs failed, 2 usage, 3 file I/O, 4 model format,
5 invalid/unsupported problem, 6 unknown solver or model not found, 7 database, 8 verify mismatch,
9 GPU unavailable or failed, 11 internal error (a bug; 10 is the C ABI's bad handle).";

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
        "userdb" => userdb::userdb(rest),
        "problems" => onnx::problems(rest),
        "train" => train::train(rest),
        "eval" => eval::eval(rest),
        "find" => find::find(rest),
        // `help COMMAND` is `COMMAND --help`.
        "help" if rest.len() == 1 && rest[0] != "help" => return run(&[rest[0].clone(), "--help".to_string()]),
        "-h" | "--help" | "help" => write_stdout(USAGE).map(|_| 0),
        "-V" | "--version" => write_stdout(&format!("tuneinfer {}", env!("CARGO_PKG_VERSION"))).map(|_| 0),
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

/// True when the words ask for help: `--help` anywhere, `-h` before any positional word.
pub(crate) fn wants_help(words: &[String]) -> bool {
    // `--help` anywhere (`predict --device cpu --help`); `-h` only among the leading options,
    // since MIOpenDriver arguments after the problem's `conv` word are short flags.
    words.iter().any(|w| w == "--help") || words.iter().take_while(|w| w.starts_with('-')).any(|w| w == "-h")
}

/// Writes one line to standard output; a failed write is an I/O error naming `<stdout>`.
pub(crate) fn write_stdout(line: &str) -> crate::error::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("<stdout>", e))
}
