//! `tuneinfer predict` and `tuneinfer batch`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::gpu::{DeviceChoice, Engine, Precision};
use crate::predict::{DecodeMode, Prediction, Source};
use crate::problem::ConvProblem;
use crate::seq2seq::default_model_dirs;

const COMMON_OPTIONS: &str = "  --arch ARCH        GPU architecture of the model (default: gfx906; the project ships
                     gfx906 and gfx900 models of ConvAsm1x1U and ConvAsmBwdWrW1x1 in weights/)
  --solver NAME      MIOpen solver (default: ConvAsm1x1U; also ConvAsmBwdWrW1x1 (backward
                     weights, 1x1, NCHW), and ConvHipImplicitGemmGroupFwdXdlops,
                     ConvHipImplicitGemmGroupBwdXdlops, ConvHipImplicitGemmGroupWrwXdlops on
                     gfx90a/gfx942, NHWC, FP32/FP16)
  --models DIR       where the models live: tuneinfer's {arch}_{solver}.safetensors + .json
                     or MIOpen's {arch}_{model}_*.ktn.model (e.g. ../shared/miopen/models
                     for gfx908); default search order: $TUNEINFER_MODELS, the project's
                     weights/, ./weights, /opt/rocm/share/miopen/db
  --decode auto      the default: MIOpen's own answer (its greedy walk) for MIOpen's models,
                     the best of a constrained beam of 16 for tuneinfer's
  --decode miopen    MIOpen's greedy walk; on failure the solver's static default
  --beam K           constrained beam search of width K, ranked answers
  --top N            with --beam: print the best N <= K configs (default: K)
  --cu N             compute units of the GPU, for models whose features use them
                     (ConvHipImplicitGemmGroupFwdXdlops on gfx90a; default: 104, an MI210)
  --catalogue DIR    composable_kernel instance lists ({fwd,bwd,wrw}_{f32,f16}.tsv) for the
                     ConvHipImplicitGemmGroup*Xdlops solvers; default: $TUNEINFER_CK, else
                     ../shared/miopen/ck next to the crate
  --device D         auto (a hardware GPU if there is one, else the CPU; default), gpu
                     (any Vulkan adapter, lavapipe included; an error if none) or cpu
  --precision P      f32 (default, the reference) or f16 (GPU weights stored as f16;
                     needs an adapter with shader f16)";

const PREDICT_HELP: &str = "\
Usage: tuneinfer predict [OPTIONS] PROBLEM

Predicts the tuning parameters of one problem. PROBLEM is a MIOpen perf-db key, e.g.
  2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F
or MIOpenDriver arguments (the rest of the command line), e.g.
  convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -F 1
Grouped NHWC problems: a key ending in '-NHWC-FP16-F_g16', or '-g 16 --in_layout NHWC'.

Prints the config (e.g. 2,8,4,16,1,4,1,4); with --beam, one line per config:
rank, config, score (sum of log-probabilities). A static default is marked on stderr.

Options:";

const BATCH_HELP: &str = "\
Usage: tuneinfer batch [OPTIONS]

Predicts for one problem per input line (perf-db keys or MIOpenDriver lines; '#' comments and
blank lines skipped) and writes a TSV: problem, rank, config, score, source (model|default).
Bad lines are reported on stderr with their line number and skipped; the exit code is then 1.

Options:
  --input FILE|-     problems to read (default: - = stdin)
  --output FILE|-    where to write the TSV (default: - = stdout); a file is replaced only
                     once everything is written
  --threads N        worker threads (default: all cores)";

const VALUED: &[&str] = &[
    "arch",
    "solver",
    "models",
    "decode",
    "beam",
    "top",
    "input",
    "output",
    "threads",
    "cu",
    "catalogue",
    "device",
    "precision",
];

pub(super) struct Common {
    pub predictor: Engine,
    pub mode: DecodeMode,
    /// True when `--beam` asked for ranked answers (else one config per problem).
    pub ranked: bool,
}

/// The options of `predict` and `batch`, every one checked; the model is not loaded yet.
pub(super) struct Settings<'a> {
    arch: &'a str,
    solver: &'a str,
    dirs: Vec<PathBuf>,
    /// None: `--decode auto`, the loaded model's [`Predictor::default_mode`](crate::predict::Predictor::default_mode).
    mode: Option<DecodeMode>,
    compute_units: Option<u32>,
    device: DeviceChoice,
    precision: Precision,
    catalogue: Option<PathBuf>,
    threads: Option<usize>,
}

/// Checks every option (before the problem is looked at, so an option that swallowed the
/// problem, as in `--beam KEY`, is named as the error).
pub(super) fn settings(args: &Args) -> Result<Settings<'_>> {
    let mode = match (args.value("decode"), args.value("beam")) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "--decode and --beam exclude each other: choose one".into(),
            ))
        }
        (Some("miopen" | "auto") | None, None) if args.value("top").is_some() => {
            return Err(Error::Usage("--top needs --beam K".into()))
        }
        (Some("auto") | None, None) => None,
        (Some("miopen"), None) => Some(DecodeMode::Miopen),
        (Some(other), None) => {
            return Err(Error::Usage(format!(
                "--decode: unknown mode '{other}' (auto or miopen; or use --beam K)"
            )))
        }
        (None, Some(_)) => {
            let width = args.positive("beam", 1, crate::predict::MAX_BEAM_WIDTH)?;
            let top = args.positive("top", width, usize::MAX)?;
            if top > width {
                return Err(Error::Usage(format!("--top {top} is larger than --beam {width}")));
            }
            Some(DecodeMode::Beam { width, top })
        }
    };
    // Compute units of a GPU: a generous bound that still fits the rules' arithmetic.
    let compute_units = match args.value("cu") {
        None => None,
        Some(_) => Some(args.positive("cu", 1, 65_536)? as u32),
    };
    let threads = match args.value("threads") {
        None => None,
        Some(_) => Some(args.positive("threads", 1, 1024)?),
    };
    Ok(Settings {
        arch: args.value("arch").unwrap_or(super::DEFAULT_ARCH),
        solver: args.value("solver").unwrap_or("ConvAsm1x1U"),
        dirs: default_model_dirs(args.value("models").map(Path::new)),
        mode,
        compute_units,
        device: DeviceChoice::parse(args.value("device").unwrap_or("auto"))?,
        precision: Precision::parse(args.value("precision").unwrap_or("f32"))?,
        catalogue: args.value("catalogue").map(PathBuf::from),
        threads,
    })
}

/// Loads the model the settings name (every option was checked first: a GPU start can take
/// seconds).
pub(super) fn common(settings: Settings<'_>) -> Result<Common> {
    let Settings {
        arch,
        solver,
        dirs,
        mode,
        compute_units,
        device,
        precision,
        catalogue,
        threads,
    } = settings;
    let mut predictor = Engine::load(arch, solver, &dirs, device, precision)?
        .with_target(|p| p.with_compute_units(compute_units).with_catalogue_dir(catalogue));
    if let Some(n) = threads {
        predictor = predictor.with_threads(n);
    }
    let ranked = matches!(mode, Some(DecodeMode::Beam { .. }));
    let mode = mode.unwrap_or_else(|| predictor.default_mode());
    Ok(Common {
        predictor,
        mode,
        ranked,
    })
}

pub(super) fn predict(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{PREDICT_HELP}\n{COMMON_OPTIONS}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: VALUED,
            flags: &[],
            options_after_positionals: false,
        },
    )?;
    for unused in ["input", "output", "threads"] {
        if args.value(unused).is_some() {
            return Err(Error::Usage(format!("--{unused} is a batch option")));
        }
    }
    let settings = settings(&args)?;
    if args.rest.is_empty() {
        return Err(Error::Usage(
            "predict needs a PROBLEM (a perf-db key or MIOpenDriver arguments); see --help".into(),
        ));
    }
    let text = args.rest.join(" ");
    let problem = ConvProblem::parse(&text)?;
    let c = common(settings)?;
    let predictions = c.predictor.predict_one(&problem, c.mode)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let write_err = |e: std::io::Error| Error::io("<stdout>", e);
    let solver = c.predictor.host().solver.name();
    // Ranked answers (--beam) one line each, else the first answer's config alone.
    let shown = if c.ranked { predictions.len() } else { 1 };
    for (rank, p) in predictions.iter().enumerate().take(shown) {
        if c.ranked {
            writeln!(out, "{}\t{}\t{}", rank + 1, p.config, score_text(p)).map_err(write_err)?;
        } else {
            writeln!(out, "{}", p.config).map_err(write_err)?;
        }
        if p.source == Source::Default {
            match c.mode {
                DecodeMode::Miopen => eprintln!(
                    "note: MIOpen's walk found no valid config; this is {solver}'s default (MIOpen's fallback)"
                ),
                DecodeMode::Beam { .. } => eprintln!("note: no valid config found; this is {solver}'s static default"),
            }
        }
    }
    if predictions.is_empty() {
        return Err(Error::Usage("no prediction".into()));
    }
    Ok(0)
}

fn score_text(p: &Prediction) -> String {
    p.score.map(|s| format!("{s:.6}")).unwrap_or_default()
}

pub(super) fn batch(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{BATCH_HELP}\n{COMMON_OPTIONS}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: VALUED,
            flags: &[],
            options_after_positionals: false,
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!(
            "batch takes no positional argument ('{extra}'); use --input FILE"
        )));
    }
    let input_name = args.value("input").unwrap_or("-");
    let settings = settings(&args)?;
    let lines: Vec<String> = read_lines(input_name)?;
    let c = common(settings)?;
    // Parse every line first; keep (line number, text, problem).
    let mut failed = 0usize;
    let mut jobs: Vec<(usize, String, ConvProblem)> = Vec::new();
    for (line_no, text) in problem_lines(&lines) {
        match ConvProblem::parse(text) {
            // Tabs would break the TSV's columns: the problem column gets spaces instead.
            Ok(p) => jobs.push((line_no, text.replace('\t', " "), p)),
            Err(e) => {
                eprintln!("{input_name}:{line_no}: {e}");
                failed += 1;
            }
        }
    }
    let problems: Vec<ConvProblem> = jobs.iter().map(|(_, _, p)| p.clone()).collect();
    let results = c.predictor.predict_batch(&problems, c.mode);
    let mut tsv = String::from("problem\trank\tconfig\tscore\tsource\n");
    let mut predicted = 0usize;
    for ((line_no, text, _), result) in jobs.iter().zip(results) {
        match result {
            Ok(predictions) => {
                predicted += 1;
                for (rank, p) in predictions.iter().enumerate() {
                    tsv.push_str(&format!(
                        "{text}\t{}\t{}\t{}\t{}\n",
                        rank + 1,
                        p.config,
                        score_text(p),
                        p.source.as_str()
                    ));
                }
            }
            Err(e) => {
                eprintln!("{input_name}:{line_no}: {e}");
                failed += 1;
            }
        }
    }
    write_output(args.value("output").unwrap_or("-"), &tsv)?;
    if failed > 0 {
        eprintln!("{failed} line(s) failed; {predicted} predicted");
        return Ok(1);
    }
    Ok(0)
}

/// The problem lines of an input: (1-based line number, trimmed text); blank lines and `#`
/// comments are skipped.
pub(super) fn problem_lines(lines: &[String]) -> impl Iterator<Item = (usize, &str)> {
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, text)| !text.is_empty() && !text.starts_with('#'))
}

/// The input's lines. Bytes that are not UTF-8 become U+FFFD, so such a line fails on its own
/// (named by number) instead of the whole file; a leading byte-order mark is dropped.
pub(super) fn read_lines(name: &str) -> Result<Vec<String>> {
    let bytes = if name == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io("<stdin>", e))?;
        bytes
    } else {
        std::fs::read(name).map_err(|e| Error::io(name, e))?
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    Ok(text.lines().map(String::from).collect())
}

/// Writes `text` to stdout, or to a file through a temporary sibling renamed into place, so an
/// interrupted run never leaves a half-written file where a good one was.
pub(super) fn write_output(name: &str, text: &str) -> Result<()> {
    if name == "-" {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| Error::io("<stdout>", e));
    }
    crate::format::write_file_atomic(Path::new(name), text.as_bytes())
}
