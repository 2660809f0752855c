//! `tuneinfer predict` and `tuneinfer batch`.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use super::{wants_help, Args, Spec};
use crate::engine::{DeviceChoice, Precision};
use crate::engines::{Engines, LoadOptions, SolverAnswer, SolverChoice};
use crate::error::{Error, Result};
use crate::predict::{DecodeMode, Prediction, Source};
use crate::problem::{parse_line, ConvProblem, InputLine};

/// The options of `predict` and `batch` after `--arch` and `--solver`, whose lines are made
/// from the solver and model lists ([`super::words::arch_solver_help`]).
const COMMON_OPTIONS: &str = "  --models DIR       a directory of models searched first, before the default ones
                     (it adds to them, never hides them): tuneinfer's
                     {arch}_{solver}.safetensors + .json or MIOpen's
                     {arch}_{model}_*.ktn.model (e.g. ../shared/miopen/models for gfx908);
                     default search order: $TUNEINFER_MODELS, the project's weights/,
                     ./weights, $MIOPEN_SYSTEM_DB_PATH, $ROCM_PATH/share/miopen/db,
                     /opt/rocm/share/miopen/db; the first directory with a model wins
  --decode auto      the default: MIOpen's own answer (its greedy walk) for MIOpen's models,
                     the best of a constrained beam of 6 for tuneinfer's
  --decode miopen    MIOpen's greedy walk; on failure the solver's static default
  --beam K           constrained beam search of width K, ranked answers
  --top N            with --beam: print the best N <= K configs (default: K)
  --cu N             compute units of the GPU, for models whose features or rules use them
                     (ConvHipImplicitGemmGroupFwdXdlops on gfx90a; default: 104, an MI210;
                     ConvBinWinogradRxS*: n_groups <= min(512, CUs, doubled on gfx1*);
                     default: the --arch database name's, else gfx942 304, gfx906 60, ...)
  --catalogue DIR    composable_kernel instance lists ({fwd,bwd,wrw}_{f32,f16}.tsv) for the
                     ConvHipImplicitGemmGroup*Xdlops solvers; default: $TUNEINFER_CK, else
                     the lists built into tuneinfer
  --miopen-version V the MIOpen the answers are for (3.3.0, 3.5.1, or a user db suffix such as
                     HIP.3_3_0_2d1fd997a): composable_kernel kernel ids in its form, and an
                     answer it would not accept said as such (docs/userdb.md); default: the
                     installed MIOpen's, else MIOpen 3.5's form
  --device D         auto (a hardware GPU if there is one, else the CPU; default), gpu
                     (any Vulkan adapter, lavapipe included; an error if none) or cpu
  --precision P      f32 (default, the reference) or f16 (GPU weights stored as f16;
                     needs an adapter with shader f16)
  --system-db FILE|none
                     MIOpen's system perf database: a (problem, solver) it has tuned is
                     answered with the tuned value itself, source perf-db, not predicted.
                     Default: the one MIOpen reads for --arch (and --cu): {basename}.db.txt or
                     .db in $MIOPEN_SYSTEM_DB_PATH, else in the ROCm install's share/miopen/db
                     ($LD_LIBRARY_PATH's libMIOpen.so, $ROCM_PATH, /opt/rocm); else the same
                     arch's of the closest CU count; none: predict all
  --method M         which predictor answers what the system perf db has not tuned: best
                     (default: per problem, the one of model, nearest neighbour and MIOpen's
                     default that matched the tuned best most often on the model's held-out
                     problems of its class or kind, e.g. MIOpen's default for ConvAsm1x1U at
                     stride 2 on MI100/MI210), model, neighbour (the config of the nearest
                     tuned problem of the same direction and precision that is valid here,
                     from the system perf db's rows), or default (MIOpen's static default);
                     the source column says which answered (model|neighbour|default|perf-db)";

const PREDICT_HELP: &str = "\
Usage: tuneinfer predict [OPTIONS] PROBLEM

Predicts the tuning parameters of one problem. PROBLEM is a MIOpen perf-db key, e.g.
  2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F
or MIOpen's 24-field text key, e.g.
  2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xW
or MIOpenDriver arguments (the rest of the command line), e.g.
  convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -F 1
(-F is MIOpenDriver's: 1 forward, 2 backward data, 4 backward weights, sums of them, 0 all
three; no -F: forward only), or a line of a MIOpen log (MIOPEN_ENABLE_LOGGING_CMD=1), e.g.
  MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 128 -c 3 ... -F 1 -t 1
Grouped NHWC problems: a key ending in '-NHWC-FP16-F_g16', or '-g 16 --in_layout NHWC'.

Prints the config (e.g. 2,8,4,16,1,4,1,4); with --beam, one line per config:
rank, config, score (sum of log-probabilities). A static default, and a value tuned in
MIOpen's system perf db, are marked on stderr. When the answer is for several problems (-F 0)
or solvers (--solver all), each line is problem key, solver, rank, config, score, source
(model|neighbour|default|perf-db), tab-separated.

Options:";

const BATCH_HELP: &str = "\
Usage: tuneinfer batch [OPTIONS]

Predicts for the problems of each input line (any form 'predict' takes: perf-db keys,
24-field keys, MIOpenDriver lines, whole MIOpen logs; '#' comments and blank lines skipped;
log lines that are not convolutions skipped and counted) and writes a TSV: problem, solver,
rank, config, score, source (model|neighbour|default|perf-db: the value tuned in MIOpen's
system perf db, see --system-db; --method chooses among the others). The problem column is the line as given, or the
problem's perf-db key when a line holds several (-F 0). A problem repeated in the input is
predicted and written once. Input is read, predicted and written in chunks, so memory stays
flat whatever its size. Bad lines are reported on stderr with their line number (the first
20; then a count) and skipped; the exit code is then 1.

Options:
  --input FILE|-     problems to read (default: - = stdin)
  --output FILE|-    where to write the TSV (default: - = stdout); a file is replaced only
                     once everything is written
  --threads N        worker threads (default: all cores)
  --onnx FILE        an ONNX network instead of --input: its convolution problems (as
                     'tuneinfer problems --onnx FILE' prints them; see 'problems --help')
  --batch N          the network's batch size (needed when the model's is symbolic)
  --training         also the backward data and backward weights problems
  --onnx-precision P fp32, fp16 or bf16 (default: the model's tensor types)
  --layout L         NCHW (default) or NHWC (channels-last)";

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
    "system-db",
    "method",
    "miopen-version",
];

pub(super) struct Common {
    pub engines: Engines,
    /// None: each engine's own default decoding (`--decode auto`).
    pub mode: Option<DecodeMode>,
    /// True when `--beam` asked for ranked answers (else one config per problem).
    pub ranked: bool,
}

/// The options of `predict` and `batch`, every one checked; the model is not loaded yet.
pub(super) struct Settings<'a> {
    /// The GPU as MIOpen names its databases (`--arch`, with `--cu`'s count when it names none).
    pub arch: String,
    pub solver: SolverChoice<'a>,
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
    let mode = crate::request::Decode::from_words(args.value("decode"), args.value("beam"), args.value("top"))?.mode()?;
    let compute_units = crate::request::CU.parse(args.value("cu"))?.map(|n| n as u32);
    let threads = crate::request::THREADS.parse(args.value("threads"))?.map(|n| n as usize);
    let dirs = crate::models::model_dirs(args.value("models").map(Path::new))?;
    let arch = match args.value("arch") {
        Some(a) => a,
        None => {
            super::words::announce_default("arch", super::DEFAULT_ARCH, "--arch names the GPU");
            super::DEFAULT_ARCH
        }
    };
    super::words::check_arch(arch, &dirs)?;
    let arch = gpu_name(arch, compute_units)?;
    let solver = match args.value("solver") {
        Some(s) => s,
        None => {
            super::words::announce_default("solver", crate::request::DEFAULT_SOLVER, "--solver all: every solver with a model");
            crate::request::DEFAULT_SOLVER
        }
    };
    Ok(Settings {
        arch,
        solver: SolverChoice::parse(solver),
        dirs,
        mode,
        compute_units,
        device: DeviceChoice::parse(args.value("device").unwrap_or("auto"))?,
        precision: Precision::parse(args.value("precision").unwrap_or("f32"))?,
        catalogue: args.value("catalogue").map(PathBuf::from),
        threads,
    })
}

/// The GPU `--arch` names, with `--cu`'s compute units when it names none (`--arch gfx90a
/// --cu 110` is `gfx90a6e`, as MIOpen names its databases); a count in both that differs is an
/// error.
pub(super) fn gpu_name(arch: &str, compute_units: Option<u32>) -> Result<String> {
    let gpu = crate::userdb::naming::parse_arch(arch)?;
    match (gpu.compute_units, compute_units) {
        (Some(n), Some(given)) if n != given => Err(Error::Usage(format!(
            "--arch {} names {n} compute units but --cu says {given}",
            crate::error::quote_short(arch)
        ))),
        (None, Some(cu)) => Ok(crate::userdb::db_basename(&gpu.db_id, cu)),
        _ => Ok(arch.to_string()),
    }
}

/// Loads the models the settings name (every option was checked first: a GPU start can take
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
    let configure = configure(compute_units, catalogue, threads);
    let engines = Engines::load(
        solver,
        &LoadOptions {
            arch: &arch,
            dirs: &dirs,
            device,
            precision,
            configure: &configure,
        },
    )?;
    if let Some(note) = &engines.note {
        eprintln!("{note}");
    }
    if let Some(note) = engines.served_note(&arch) {
        eprintln!("{note}");
    }
    let ranked = matches!(mode, Some(DecodeMode::Beam { .. }));
    Ok(Common { engines, mode, ranked })
}

/// What every engine's host predictor gets from the options: compute units, the catalogue
/// directory, worker threads.
pub(super) fn configure(
    compute_units: Option<u32>,
    catalogue: Option<PathBuf>,
    threads: Option<usize>,
) -> impl Fn(crate::predict::Predictor) -> crate::predict::Predictor {
    move |p| {
        let p = p
            .with_compute_units(compute_units)
            .with_catalogue_dir(catalogue.clone());
        match threads {
            Some(n) => p.with_threads(n),
            None => p,
        }
    }
}

pub(super) fn predict(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{PREDICT_HELP}\n{}\n{COMMON_OPTIONS}", super::words::arch_solver_help());
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: VALUED,
            flags: &[],
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
    let problems = match parse_line(&text)? {
        InputLine::Problems(p) => p,
        InputLine::Blank => return Err(Error::Usage("predict needs a PROBLEM; see --help".into())),
        InputLine::Skipped(what) => {
            return Err(Error::problem(
                text.as_str(),
                format!("{what}, not a convolution problem"),
            ))
        }
    };
    let method = crate::method::Method::parse(args.value("method"))?;
    let miopen = miopen_version(&args)?;
    let mut system = system_db(&args)?;
    let c = common(settings)?;
    let answering = crate::method::Answering::new(method, &c.engines.engines, system.db.take())?.for_miopen(miopen);
    ck_version_note(&c.engines, miopen);
    let (answers, whys) = answering.answer(&c.engines.engines, &problems, c.mode);
    for note in c.engines.take_notes() {
        eprintln!("{note}");
    }
    let names = c.engines.solver_names();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let write_err = |e: std::io::Error| Error::io("<stdout>", e);
    // One problem and one solver: the config alone (ranked lines with --beam), as before.
    if problems.len() == 1 && names.len() == 1 {
        let answer = answers.into_iter().next().and_then(|a| a.into_iter().next());
        let tuned = answer.as_ref().is_some_and(|(_, tuned)| *tuned);
        let predictions = match answer.map(|(a, _)| a) {
            Some(SolverAnswer::Predicted(p)) => p,
            Some(SolverAnswer::NotApplicable(reason)) => {
                return Err(Error::NotApplicable {
                    solver: names[0].to_string(),
                    reason,
                })
            }
            Some(SolverAnswer::Failed(e)) => return Err(e),
            None => return Err(Error::Internal("no prediction".into())),
        };
        let shown = if c.ranked { predictions.len() } else { 1 };
        for (rank, p) in predictions.iter().enumerate().take(shown) {
            if c.ranked {
                writeln!(out, "{}\t{}\t{}", rank + 1, p.config, score_text(p)).map_err(write_err)?;
            } else {
                writeln!(out, "{}", p.config).map_err(write_err)?;
            }
            let chosen = whys.first().and_then(|w| w.first()).and_then(Option::as_ref);
            if tuned {
                perf_db_note(answering.system_path());
            } else if let (Some(why), 0) = (chosen, rank) {
                let who = match p.source {
                    Source::Neighbour => "the nearest tuned neighbour's config",
                    Source::Default => "MIOpen's static default",
                    Source::Model => "the model's answer",
                    Source::PerfDb => "the value tuned in MIOpen's system perf db",
                };
                eprintln!("note: {}: {who} (source {}): {why}", names[0], p.source.as_str());
            } else if p.source == Source::Default {
                default_note(names[0], c.mode.unwrap_or_else(|| c.engines.engines[0].default_mode()));
            }
        }
        if let Some(engine) = c.engines.engines.first() {
            let host = engine.host();
            if let Some(note) = host.solver.problem_note(&host.target, &problems[0]) {
                eprintln!("note: {note}");
            }
        }
        return Ok(0);
    }
    // Several problems or solvers: one TSV row per answer, naming both. A solver that does not
    // apply to a problem (a direction of -F 0 it does not serve) is left out; an error only
    // when nothing applies at all.
    let mut failures = Vec::new();
    let mut reasons = Vec::new();
    let mut rows = 0usize;
    let mut tuned_rows = 0usize;
    for (problem, answers) in problems.iter().zip(answers) {
        let key = problem.to_perfdb_key();
        for (solver, (answer, tuned)) in names.iter().zip(answers) {
            match answer {
                SolverAnswer::Predicted(predictions) => {
                    let shown = if c.ranked { predictions.len() } else { 1 };
                    for (rank, p) in predictions.iter().enumerate().take(shown) {
                        writeln!(out, "{}", row(&key, solver, rank, p, tuned)).map_err(write_err)?;
                        rows += 1;
                        tuned_rows += usize::from(tuned);
                    }
                }
                SolverAnswer::NotApplicable(reason) => reasons.push(format!("{key}: {solver}: {reason}")),
                SolverAnswer::Failed(e) => failures.push(format!("{key}: {solver}: {e}")),
            }
        }
    }
    out.flush().map_err(write_err)?;
    drop(out);
    if rows == 0 && failures.is_empty() {
        return Err(Error::NotApplicable {
            solver: names.join(", "),
            reason: reasons.join("; "),
        });
    }
    if tuned_rows > 0 {
        perf_db_note(answering.system_path());
    }
    for f in &failures {
        eprintln!("error: {f}");
    }
    Ok(if failures.is_empty() { 0 } else { 1 })
}

/// The system perf database of `predict` and `batch`: `--system-db FILE|none`, else the one
/// MIOpen reads for `--arch` (its basename from the arch's database name, or the arch with
/// `--cu` or its usual compute units), found as MIOpen's default text build finds it (the exact
/// file name, in any of its forms).
pub(super) fn system_db(args: &Args) -> Result<crate::userdb::system::Resolved> {
    let arch = args.value("arch").unwrap_or(super::DEFAULT_ARCH);
    let cu = match args.value("cu") {
        Some(_) => crate::request::CU.parse(args.value("cu"))?.map(|n| n as u32),
        None => None,
    };
    crate::method::system_db(arch, cu, args.value("system-db"))
}

/// `--miopen-version` (a version or a user db suffix), else the installed MIOpen's version.
pub(super) fn miopen_version(args: &Args) -> Result<Option<crate::solvers::ck::versions::MiopenVersion>> {
    use crate::solvers::ck::versions::MiopenVersion;
    match args.value("miopen-version") {
        Some(text) => MiopenVersion::parse(text).map(Some).ok_or_else(|| {
            Error::Usage(format!(
                "--miopen-version: '{}' is no MIOpen version (e.g. 3.3.0, or HIP.3_3_0_2d1fd997a)",
                crate::error::quote_short(text)
            ))
        }),
        None => Ok(crate::userdb::naming::installed_version()),
    }
}

/// Which MIOpen the composable_kernel answers are for, when a CK solver is among the engines.
fn ck_version_note(engines: &Engines, version: Option<crate::solvers::ck::versions::MiopenVersion>) {
    let ck = engines
        .engines
        .iter()
        .any(|e| crate::solvers::ck::rules351::CkSolver::from_name(e.host().solver.name()).is_some());
    if ck {
        match version {
            Some(v) => eprintln!("note: composable_kernel kernel ids in the form MIOpen {v} reads"),
            None => eprintln!(
                "note: composable_kernel kernel ids in MIOpen 3.5's form (--miopen-version V: another MIOpen's)"
            ),
        }
    }
}

fn perf_db_note(system: Option<&Path>) {
    if let Some(path) = system {
        eprintln!(
            "note: tuned in MIOpen's system perf db {} (source perf-db): the tuned value itself, not a prediction",
            path.display()
        );
    }
}

fn default_note(solver: &str, mode: DecodeMode) {
    match mode {
        DecodeMode::Miopen => {
            eprintln!("note: MIOpen's walk found no valid config; this is {solver}'s default (MIOpen's fallback)")
        }
        DecodeMode::Beam { .. } => eprintln!("note: no valid config found; this is {solver}'s static default"),
    }
}

/// One TSV row: problem, solver, rank, config, score, source (`perf-db` for a value tuned in
/// the system perf db).
fn row(problem: &str, solver: &str, rank: usize, p: &Prediction, tuned: bool) -> String {
    format!(
        "{problem}\t{solver}\t{}\t{}\t{}\t{}",
        rank + 1,
        p.config,
        score_text(p),
        if tuned { "perf-db" } else { p.source.as_str() }
    )
}

fn score_text(p: &Prediction) -> String {
    p.score.map(|s| format!("{s:.6}")).unwrap_or_default()
}

/// Problems read, predicted and written per chunk of `batch` (and `userdb`).
pub(super) const CHUNK: usize = 4096;

/// Bad input lines: the first [`SHOWN_BAD_LINES`] are reported on stderr, each with its line
/// number and a short quote; the rest are counted and summarised.
pub(super) struct BadLines<'a> {
    file: &'a str,
    pub count: usize,
    first: Option<usize>,
}

/// How many bad lines are reported one by one.
pub(super) const SHOWN_BAD_LINES: usize = 20;

impl<'a> BadLines<'a> {
    pub fn new(file: &'a str) -> BadLines<'a> {
        BadLines {
            file,
            count: 0,
            first: None,
        }
    }

    pub fn report(&mut self, line: usize, e: Error) {
        self.count += 1;
        self.first.get_or_insert(line);
        if self.count <= SHOWN_BAD_LINES {
            let e = Error::AtLine {
                file: self.file.to_string(),
                line,
                error: Box::new(e),
            };
            eprintln!("{e}");
        } else if self.count == SHOWN_BAD_LINES + 1 {
            eprintln!("{}: more bad lines; counting the rest without showing them", self.file);
        }
    }

    /// The closing summary line, if there were bad lines.
    pub fn summary(&self) -> Option<String> {
        self.first.map(|first| {
            format!(
                "{}: {} bad line(s) skipped (first at line {first}{})",
                self.file,
                self.count,
                if self.count > SHOWN_BAD_LINES {
                    format!("; {} not shown", self.count - SHOWN_BAD_LINES)
                } else {
                    String::new()
                }
            )
        })
    }
}

/// Reads an input a line at a time: bytes that are not UTF-8 become U+FFFD (so such a line fails
/// on its own, named by number), a leading byte-order mark is dropped, and a line longer than
/// [`MAX_LINE`] bytes is cut there (it cannot be a problem; it fails as one).
pub(super) struct LineReader {
    reader: Box<dyn BufRead>,
    name: String,
    pub line_no: usize,
    buf: Vec<u8>,
    /// Bytes read so far, and the input's size when it is a file (for progress).
    pub bytes_read: u64,
    pub total_bytes: Option<u64>,
}

/// Longest line kept whole, in bytes.
pub(super) const MAX_LINE: usize = 64 * 1024;

impl LineReader {
    pub fn open(name: &str) -> Result<LineReader> {
        let mut total_bytes = None;
        let reader: Box<dyn BufRead> = if name == "-" {
            Box::new(std::io::BufReader::new(std::io::stdin()))
        } else {
            let f = std::fs::File::open(name).map_err(|e| Error::io(name, e))?;
            let meta = f.metadata().ok();
            if meta.as_ref().is_some_and(|m| m.is_dir()) {
                return Err(Error::io(name, std::io::Error::other("is a directory")));
            }
            total_bytes = meta.filter(|m| m.is_file()).map(|m| m.len());
            Box::new(std::io::BufReader::with_capacity(1 << 16, f))
        };
        Ok(LineReader {
            reader,
            name: if name == "-" { "<stdin>".into() } else { name.into() },
            line_no: 0,
            buf: Vec::new(),
            bytes_read: 0,
            total_bytes,
        })
    }

    /// Lines held in memory (an ONNX network's problems), named `name` in messages.
    pub fn from_text(name: &str, text: String) -> LineReader {
        let total_bytes = Some(text.len() as u64);
        LineReader {
            reader: Box::new(std::io::Cursor::new(text.into_bytes())),
            name: name.into(),
            line_no: 0,
            buf: Vec::new(),
            bytes_read: 0,
            total_bytes,
        }
    }

    /// The next line (without its end), or None at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<String>> {
        self.buf.clear();
        let mut total = 0usize;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.name, e)),
            };
            if available.is_empty() {
                if total == 0 {
                    return Ok(None);
                }
                break;
            }
            let (used, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&available[..used.min(room)]);
            total += used;
            self.bytes_read += used as u64;
            self.reader.consume(used);
            if done {
                break;
            }
        }
        self.line_no += 1;
        while self.buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
            self.buf.pop();
        }
        let mut text = String::from_utf8_lossy(&self.buf).into_owned();
        if self.line_no == 1 {
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                text = rest.to_string();
            }
        }
        Ok(Some(text))
    }
}

/// What the problem lines of an input held.
#[derive(Debug, Default)]
pub(super) struct InputCounts {
    pub lines: usize,
    pub problems: usize,
    pub repeated: usize,
    pub skipped_log_lines: usize,
}

/// A chunk of distinct problems read from an input: (line number, label, problem, whether the
/// line named several problems (-F 0)).
pub(super) type Chunk = Vec<(usize, String, ConvProblem, bool)>;

/// Reads up to [`CHUNK`] new distinct problems; `seen` holds a hash of every problem so far.
/// Returns false at the end of the input.
pub(super) fn read_chunk(
    reader: &mut LineReader,
    seen: &mut HashSet<u64>,
    counts: &mut InputCounts,
    bad: &mut BadLines<'_>,
    chunk: &mut Chunk,
) -> Result<bool> {
    use std::hash::{Hash, Hasher};
    chunk.clear();
    while chunk.len() < CHUNK {
        let Some(text) = reader.next_line()? else {
            return Ok(false);
        };
        counts.lines += 1;
        let line_no = reader.line_no;
        match parse_line(&text) {
            Ok(InputLine::Blank) => {}
            Ok(InputLine::Skipped(_)) => counts.skipped_log_lines += 1,
            Ok(InputLine::Problems(problems)) => {
                let several = problems.len() > 1;
                for p in problems {
                    counts.problems += 1;
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    p.hash(&mut h);
                    if !seen.insert(h.finish()) {
                        counts.repeated += 1;
                        continue;
                    }
                    // Tabs would break the TSV's columns: the problem column gets spaces instead.
                    let label = if several {
                        p.to_perfdb_key()
                    } else {
                        text.trim().replace('\t', " ")
                    };
                    chunk.push((line_no, label, p, several));
                }
            }
            Err(e) => bad.report(line_no, e),
        }
    }
    Ok(true)
}

/// Progress on stderr for long runs, when stderr is a terminal: every few seconds.
pub(super) struct Progress {
    start: std::time::Instant,
    last: std::time::Instant,
    enabled: bool,
    what: &'static str,
}

impl Progress {
    pub fn new(what: &'static str) -> Progress {
        use std::io::IsTerminal;
        let now = std::time::Instant::now();
        Progress {
            start: now,
            last: now,
            enabled: std::io::stderr().is_terminal(),
            what,
        }
    }

    pub fn tick(&mut self, reader: &LineReader, predicted: usize) {
        // Runs over a few seconds: a line a second on a terminal; nothing when stderr is not one.
        if !self.enabled || self.start.elapsed().as_secs_f64() < 3.0 || self.last.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        self.last = std::time::Instant::now();
        let secs = self.start.elapsed().as_secs_f64();
        // Time left from the share of the file read so far (a file only; stdin has no size).
        let left = match reader.total_bytes {
            Some(total) if total > 0 && reader.bytes_read > 0 => {
                let done = reader.bytes_read as f64 / total as f64;
                format!(
                    ", {:.0}% of the input, about {:.0} s left",
                    100.0 * done,
                    secs * (1.0 - done) / done
                )
            }
            _ => String::new(),
        };
        eprintln!(
            "{}: {} lines read, {predicted} problems predicted, {:.0} problems/s{left}",
            self.what,
            reader.line_no,
            predicted as f64 / secs.max(1e-9)
        );
    }
}

pub(super) fn batch(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{BATCH_HELP}\n{}\n{COMMON_OPTIONS}", super::words::arch_solver_help());
        return Ok(0);
    }
    // `batch`'s options: `predict`'s, and the network of `--onnx`.
    static BATCH_VALUED: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let valued = BATCH_VALUED.get_or_init(|| [VALUED, super::onnx::INPUT_VALUED].concat());
    let args = Args::parse(
        words,
        &Spec {
            valued: valued.as_slice(),
            flags: super::onnx::INPUT_FLAGS,
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!(
            "batch takes no positional argument ('{}'); use --input FILE",
            crate::error::quote_short(extra)
        )));
    }
    super::onnx::check_input_options(&args)?;
    let network = super::onnx::input_lines(&args)?;
    let input_name = match &network {
        Some((path, _)) => path.as_str(),
        None => args.value("input").unwrap_or("-"),
    };
    let output_name = args.value("output").unwrap_or("-");
    let settings = settings(&args)?;
    let all = settings.solver == SolverChoice::All;
    let mut reader = match &network {
        Some((path, lines)) => LineReader::from_text(path, lines.clone()),
        None => LineReader::open(input_name)?,
    };
    // The output is checked (its directory, its permissions) before any prediction.
    let mut sink = if output_name == "-" {
        Sink::Stdout(std::io::BufWriter::new(std::io::stdout()))
    } else {
        Sink::File(crate::format::AtomicFile::create(Path::new(output_name))?)
    };
    let out_name = if output_name == "-" { "<stdout>" } else { output_name };
    let write_err = |e: std::io::Error| Error::io(out_name, e);
    let method = crate::method::Method::parse(args.value("method"))?;
    let miopen = miopen_version(&args)?;
    let mut system = system_db(&args)?;
    let c = common(settings)?;
    let answering = crate::method::Answering::new(method, &c.engines.engines, system.db.take())?.for_miopen(miopen);
    ck_version_note(&c.engines, miopen);
    let names = c.engines.solver_names();
    sink.write_all(b"problem\tsolver\trank\tconfig\tscore\tsource\n")
        .map_err(write_err)?;
    let mut bad = BadLines::new(if input_name == "-" { "<stdin>" } else { input_name });
    let mut counts = InputCounts::default();
    let mut seen = HashSet::new();
    let mut chunk = Chunk::new();
    let mut predicted = 0usize;
    let mut tuned_answers = 0usize;
    let mut no_solver = 0usize;
    let mut progress = Progress::new("batch");
    loop {
        let more = read_chunk(&mut reader, &mut seen, &mut counts, &mut bad, &mut chunk)?;
        if !chunk.is_empty() {
            let problems: Vec<ConvProblem> = chunk.iter().map(|(_, _, p, _)| p.clone()).collect();
            let (answers, _) = answering.answer(&c.engines.engines, &problems, c.mode);
            let mut text = String::new();
            for ((line_no, label, _, several), answers) in chunk.iter().zip(answers) {
                let mut any = false;
                for (solver, (answer, tuned)) in names.iter().zip(answers) {
                    match answer {
                        SolverAnswer::Predicted(predictions) => {
                            any = true;
                            tuned_answers += usize::from(tuned);
                            for (rank, p) in predictions.iter().enumerate() {
                                text.push_str(&row(label, solver, rank, p, tuned));
                                text.push('\n');
                            }
                        }
                        SolverAnswer::NotApplicable(reason) if !all && !several => bad.report(
                            *line_no,
                            Error::NotApplicable {
                                solver: solver.to_string(),
                                reason,
                            },
                        ),
                        SolverAnswer::NotApplicable(_) => {}
                        SolverAnswer::Failed(e) => bad.report(*line_no, e),
                    }
                }
                if any {
                    predicted += 1;
                } else if all || *several {
                    no_solver += 1;
                }
            }
            sink.write_all(text.as_bytes()).map_err(write_err)?;
            for note in c.engines.take_notes() {
                eprintln!("{note}");
            }
            progress.tick(&reader, predicted);
        }
        if !more {
            break;
        }
    }
    sink.finish().map_err(|e| match e {
        Error::Io { source, .. } => write_err(source),
        other => other,
    })?;
    let mut notes = Vec::new();
    match answering.system_path() {
        Some(path) => notes.push(format!(
            "{tuned_answers} answer(s) are the values tuned in MIOpen's system perf db {} (source perf-db)",
            path.display()
        )),
        None => notes.push(system.summary.clone()),
    }
    if counts.repeated > 0 {
        notes.push(format!("{} repeated problem(s) predicted once", counts.repeated));
    }
    if counts.skipped_log_lines > 0 {
        notes.push(format!(
            "{} log line(s) that are not convolutions skipped",
            counts.skipped_log_lines
        ));
    }
    if no_solver > 0 {
        notes.push(format!(
            "{no_solver} problem(s) that no solver applies to (directions of -F 0 lines included) left out"
        ));
    }
    if !notes.is_empty() {
        eprintln!("note: {}", notes.join("; "));
    }
    if let Some(summary) = bad.summary() {
        eprintln!("{summary}; {predicted} predicted");
        return Ok(1);
    }
    Ok(0)
}

/// Where `batch` writes: standard output, or a file replaced once everything is written.
pub(super) enum Sink {
    Stdout(std::io::BufWriter<std::io::Stdout>),
    File(crate::format::AtomicFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Stdout(w) => w.write(buf),
            Sink::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Stdout(w) => w.flush(),
            Sink::File(f) => f.flush(),
        }
    }
}

impl Sink {
    /// Flushes standard output, or commits the file.
    pub fn finish(self) -> Result<()> {
        match self {
            Sink::Stdout(mut w) => w.flush().map_err(|e| Error::io("<stdout>", e)),
            Sink::File(f) => f.commit(),
        }
    }
}
