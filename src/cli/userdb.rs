//! `tuneinfer userdb`: from a network's MIOpen log (or any problem list) to a user perf
//! database that MIOpen reads before its system one.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::predict::{read_chunk, BadLines, Chunk, InputCounts, LineReader, Progress};
use super::{wants_help, Args, Spec};
use crate::engine::{DeviceChoice, Precision};
use crate::engines::{Engines, LoadOptions, SolverChoice};
use crate::error::{Error, Result};
use crate::problem::ConvProblem;
use crate::userdb::{self, Format};

const HELP: &str = "\
Usage: tuneinfer userdb --arch ARCH [OPTIONS]

Predicts tuning parameters for every problem of the input, with every solver that has a model
on ARCH and applies, and writes them into MIOpen's user perf database, which MIOpen reads
before its system database: MIOpen then uses them without tuning. The input is a MIOpen log
(run the network with MIOPEN_ENABLE_LOGGING_CMD=1 and keep stderr), or any lines 'batch'
reads; lines that are not convolutions are skipped and counted; a repeated problem is
predicted once. Nothing already in the database is lost or reordered.

Options:
  --arch ARCH          the GPU, as MIOpen names its databases: gfx906_60, gfx900_56,
                       gfx942130 (above 64 CUs the count in hex), gfx942_xnacke4 (xnack
                       on), or an arch (gfx942, gfx942:sramecc+:xnack+) with --cu
  --cu N               compute units (rocminfo's 'Compute Unit'), with a plain --arch
  --input FILE|-       the log or problem list (default: - = stdin)
  --onnx FILE          an ONNX network instead of --input: its convolution problems (as
                       'tuneinfer problems --onnx FILE' prints them; see 'problems --help'),
                       with --batch N (needed when the model's is symbolic), --training (also
                       backward data and weights), --onnx-precision fp32|fp16|bf16 (default:
                       the model's types), --layout NCHW|NHWC
  --solver NAME|all    the solvers to predict for (default: all)
  --format text|sqlite text (default; MIOpen's default build: {basename}.{version}.udb.txt)
                       or sqlite ({basename}_1.1.0.udb, MIOpen built with
                       MIOPEN_USE_SQLITE_PERFDB)
  --miopen-version S   the suffix of the text file's name, whole, as the MIOpen in use names
                       its user databases: HIP.3_2_0_36bb7fd4a-dirty, HIP.3_2_0_ (a bare
                       3.2.0 names no file a release MIOpen reads); default: taken from the
                       user databases MIOpen wrote in the directory ({basename}.*.udb.txt,
                       .ufdb.txt), else from the MIOpen under $ROCM_PATH or /opt/rocm
  --out DIR            the directory (default: MIOpen's: $MIOPEN_USER_DB_PATH, else
                       ~/.config/miopen, or the temp directory when that is on NFS, Lustre,
                       Ceph, SMB or AFS; with HOME unset or /, /tmp/.config/miopen)
  --replace            replace the parameters of (problem, solver) entries already in the
                       database (default: keep them)
  --system-db FILE|none
                       MIOpen's system perf database for this GPU (.db, .db.txt, or either
                       bzip2-compressed): a (problem, solver) it has tuned is not written (a
                       user entry would hide the tuned value). Default: the one MIOpen reads,
                       in $MIOPEN_SYSTEM_DB_PATH, else the ROCm install's share/miopen/db
                       ($LD_LIBRARY_PATH's libMIOpen.so, $ROCM_PATH, /opt/rocm): {basename}.db.txt
                       or {basename}.db (with --format sqlite: .db first, else the closest
                       CU count, as MIOpen's sqlite build); none: write every entry
  --dry-run            print what would be written, write nothing
  --find-db FILE|DIR   the find-db to rank solvers from for the user find-db (below); default:
                       MIOpen's system find-db ({basename}.HIP.fdb.txt in the system db
                       directory, as MIOpen finds it); none found: no user find-db, said
  --no-find-db         write no user find-db
  --include-unproven   also write the solvers whose model does not beat MIOpen's static
                       default on its held-out problems, and write every model everywhere
                       (see below)
  --lock-wait SECS     how long to wait for MIOpen's lock on the file while another process
                       (MIOpen, or another userdb) holds it (default: 10; 0: do not wait)
  --models DIR         a directory of models searched first (as predict)
  --device D           auto (default), gpu or cpu
  --precision P        f32 (default) or f16 (GPU)
  --threads N          worker threads (default: all cores)
  --catalogue DIR      composable_kernel instance lists (as predict)

Prints a summary: problems read, lines skipped, which system perf database was used (or that
none was found), and per solver the entries predicted, already present, tuned in the system
database (not written), not applicable. A text database is replaced atomically (the previous
version kept as FILE.bak, its permissions kept) while MIOpen's lock on it is held, so a running
MIOpen and other userdb runs lose nothing; it is refused (nothing written) when another process
keeps that lock past --lock-wait. A sqlite database is merged in place through SQLite in one
transaction (the previous version kept as FILE.bak), waiting up to --lock-wait for a MIOpen
process's write.

Only models that do better than doing nothing are written: a tuneinfer model whose metadata
JSON records validation figures (its 'validation': exact match of the beam's first answer and
of MIOpen's static default on the geometries held out of training) is used only when its exact
match is higher than the default's; otherwise it is written only for the kinds of problem
(direction and precision; at least 20 held-out problems) where it beats the default by more
than two standard errors, as --method best decides, and with no such kind its solver is
skipped and named in the summary with both figures. When the figures record that MIOpen's default where it is valid, else the
model, beats both the model alone and the default alone, the model is written only for the
problems whose default the solver's rules reject (the rest is left to MIOpen's default; the
summary says how many). Where the figures of one kind of problem (direction and precision,
e.g. F FP32; at least 20 held-out problems) show MIOpen's default beating what would be written,
that kind's problems are left to MIOpen too, named in the summary. A model without recorded figures (trained on every geometry,
'validation' null) and MIOpen's own KTN models are written.

The user find-db ({basename}.{version}.ufdb.txt, beside the user perf db) is written too, so
that MIOpen's default find mode (DYNAMIC_HYBRID) runs the best solver with no Find: for each
problem the system find-db has no record of, a record of the solvers tuneinfer ranks first
(`tuneinfer find`; time field: the predicted kernel time in ms, from the find-db's nearest
records), where the ranking puts a solver first that MIOpen's Find would not time (not
dynamic); elsewhere no record, so MIOpen's Find runs as without tuneinfer. A record already in
the user find-db (MIOpen measured it, or an earlier run wrote it) is never replaced; the file
is merged under MIOpen's lock, replaced atomically, the previous version kept as FILE.bak.";

const VALUED: &[&str] = &[
    "arch",
    "cu",
    "input",
    "solver",
    "format",
    "miopen-version",
    "out",
    "system-db",
    "models",
    "device",
    "precision",
    "threads",
    "catalogue",
    "lock-wait",
    "onnx",
    "batch",
    "onnx-precision",
    "layout",
    "find-db",
];
const FLAGS: &[&str] = &["replace", "dry-run", "include-unproven", "training", "no-find-db"];

pub(super) fn userdb(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}");
        return Ok(0);
    }
    super::interrupt::install();
    let args = Args::parse(
        words,
        &Spec {
            valued: VALUED,
            flags: FLAGS,
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!(
            "userdb takes no positional argument ('{}'); give the log with --input FILE",
            crate::error::quote_short(extra)
        )));
    }
    // --- Every option checked before any model is loaded or any line read.
    super::onnx::check_input_options(&args)?;
    let arch_text = args.value("arch").ok_or_else(|| {
        Error::Usage(
            "userdb needs --arch: the GPU as MIOpen names its databases (gfx906_60, gfx900_56, \
             gfx942130), or an arch with --cu N"
                .into(),
        )
    })?;
    super::words::check_arch(
        arch_text,
        &crate::models::model_dirs(args.value("models").map(Path::new))?,
    )?;
    let gpu = userdb::naming::parse_arch(arch_text)?;
    let (base, cu_in_name) = (gpu.arch.as_str(), gpu.compute_units);
    let cu = match (cu_in_name, args.value("cu")) {
        (Some(n), None) => n,
        (None, Some(_)) => crate::request::CU.parse(args.value("cu"))?.unwrap_or(1) as u32,
        (Some(n), Some(_)) => {
            let given = crate::request::CU.parse(args.value("cu"))?.unwrap_or(1) as u32;
            if given != n {
                return Err(Error::Usage(format!(
                    "--arch {arch_text} names {n} compute units but --cu says {given}"
                )));
            }
            n
        }
        (None, None) => {
            // An example in MIOpen's spelling for a usual GPU of the arch.
            let example = match base.to_ascii_lowercase().as_str() {
                "gfx942" | "gfx940" | "gfx941" => userdb::db_basename(&gpu.db_id, 304),
                "gfx90a" => userdb::db_basename(&gpu.db_id, 104),
                "gfx908" => userdb::db_basename(&gpu.db_id, 120),
                "gfx900" => userdb::db_basename(&gpu.db_id, 56),
                "gfx1030" => userdb::db_basename(&gpu.db_id, 36),
                _ => userdb::db_basename(&gpu.db_id, 60),
            };
            return Err(Error::Usage(format!(
                "--arch {arch_text}: name the compute units too (the file MIOpen reads depends \
                 on them): --arch {example}, or --cu N (rocminfo's 'Compute Unit')"
            )));
        }
    };
    let basename = userdb::db_basename(&gpu.db_id, cu);
    let model_arch = userdb::db_basename(base, cu);
    let format = Format::parse(args.value("format").unwrap_or("text"))?;
    let version = args.value("miopen-version");
    if format == Format::Sqlite && version.is_some() {
        return Err(Error::Usage(
            "--miopen-version names text databases; a sqlite user database is {basename}_1.1.0.udb".into(),
        ));
    }
    let dir = match args.value("out") {
        Some(d) => PathBuf::from(d),
        None => {
            let found = userdb::naming::user_db_dir(&userdb::naming::DirEnv::from_process());
            if let Some(note) = found.note {
                eprintln!("note: {note}");
            }
            found.path
        }
    };
    if dir.exists() && !dir.is_dir() {
        return Err(Error::io(&dir, std::io::Error::other("is not a directory")));
    }
    let suffix = match format {
        Format::Sqlite => String::new(),
        Format::Text => {
            let found = userdb::naming::resolve_suffix(version, &dir, &basename, &userdb::naming::rocm_roots())?;
            if let Some(note) = &found.note {
                eprintln!("note: {note}");
            }
            found.suffix
        }
    };
    let path = dir.join(userdb::file_name(&basename, format, &suffix));
    // The MIOpen the database is for decides the form of CK kernel ids (issue 47): the text
    // file's suffix, else (sqlite) the installed MIOpen's.
    let miopen_version = match format {
        Format::Text => crate::solvers::MiopenVersion::parse(&suffix),
        Format::Sqlite => userdb::naming::installed_version(),
    };
    let version_label = match miopen_version {
        Some(v) => format!("MIOpen {v}"),
        None => "MIOpen's version unknown: only forms every known MIOpen reads alike are written".to_string(),
    };
    let dry_run = args.flag("dry-run");
    let replace = args.flag("replace");
    let lock_wait = std::time::Duration::from_secs(match args.value("lock-wait") {
        None => 10,
        Some("0") => 0,
        Some(_) => args.positive("lock-wait", 10, 3600)? as u64,
    });
    let mut system = userdb::system::resolve(
        &userdb::system::Choice::parse(args.value("system-db")),
        &userdb::system::DbName {
            basename: &basename,
            db_id: &gpu.db_id,
            compute_units: cu,
        },
        format == Format::Sqlite,
    )?;
    let threads = crate::request::THREADS.parse(args.value("threads"))?.map(|n| n as usize);
    let device = DeviceChoice::parse(args.value("device").unwrap_or("auto"))?;
    let precision = Precision::parse(args.value("precision").unwrap_or("f32"))?;
    let catalogue = args.value("catalogue").map(PathBuf::from);
    let dirs = crate::models::model_dirs(args.value("models").map(Path::new))?;
    let network = super::onnx::input_lines(&args)?;
    let input_name = match &network {
        Some((path, _)) => path.as_str(),
        None => args.value("input").unwrap_or("-"),
    };
    let mut reader = match &network {
        Some((path, lines)) => LineReader::from_text(path, lines.clone()),
        None => LineReader::open(input_name)?,
    };
    let solver = SolverChoice::parse(args.value("solver").unwrap_or("all"));
    let find_db_choice = FindDbChoice::of(&args)?;

    // --- Models.
    let base_configure = super::predict::configure(None, catalogue, threads);
    // The models are looked up by the name without features (`gfx942e4`); XNACK stays on for
    // the rules where the GPU's db id has it (issue 47).
    let xnack = gpu.db_id.to_ascii_lowercase().ends_with("_xnack");
    let configure = move |p: crate::predict::Predictor| base_configure(p).with_xnack(xnack);
    let engines = Engines::load(
        solver,
        &LoadOptions {
            arch: &model_arch,
            dirs: &dirs,
            device,
            precision,
            configure: &configure,
        },
    )?;
    if let Some(note) = &engines.note {
        eprintln!("{note}");
    }
    if let Some(note) = engines.served_note(&model_arch) {
        eprintln!("{note}");
    }
    // What is written is what `--method best` serves, wherever it is not MIOpen's own
    // (crate::written): the model or the neighbour; never the default or a tuned value.
    let include_unproven = args.flag("include-unproven");
    let names = engines.solver_names();
    let rows_db = system.db.as_ref().map(|d| d.path.clone());
    let methods = crate::written::methods(&engines.engines, include_unproven);
    let mut planner = crate::written::Planner::new(&engines.engines, &methods, system.db.take(), miopen_version)?;

    // --- Read, predict, collect, a chunk at a time.
    let input_label = if input_name == "-" { "<stdin>" } else { input_name };
    let mut bad = BadLines::new(input_label);
    let mut counts = InputCounts::default();
    let mut seen = HashSet::new();
    let mut chunk = Chunk::new();
    let mut nchw = 0usize;
    let mut progress = Progress::new("userdb");
    let mut all_problems: Vec<ConvProblem> = Vec::new();
    loop {
        let more = read_chunk(&mut reader, &mut seen, &mut counts, &mut bad, &mut chunk)?;
        if !chunk.is_empty() {
            nchw += chunk
                .iter()
                .filter(|c| c.2.layout == crate::problem::Layout::Nchw)
                .count();
            let problems: Vec<ConvProblem> = chunk.iter().map(|c| c.2.clone()).collect();
            if find_db_choice.writes() {
                all_problems.extend(problems.iter().cloned());
            }
            for (i, e) in planner.add(&engines.engines, &problems) {
                bad.report(chunk[i].0, e);
            }
            for note in engines.take_notes() {
                eprintln!("{note}");
            }
            progress.tick(&reader, planner.entries.len());
        }
        if !more {
            break;
        }
    }
    let crate::written::Planner {
        counts: per_solver,
        entries,
        no_solver,
        ..
    } = planner;

    // --- Merge.
    let target = userdb::Target {
        path: path.clone(),
        format,
        replace,
        lock_wait,
    };
    let (merged, interrupted) = super::interrupt::while_writing(|| userdb::merge(&target, &entries, dry_run));
    let merged = merged?;
    // --- The user find-db (issue 54): MIOpen's default find mode then runs the ranking's
    // first solver where the system find-db has no record, with no Find.
    let find_db = find_db_choice.run(&FindDbRun {
        basename: &basename,
        arch: base,
        dir: &dir,
        text_suffix: (format == Format::Text).then_some(suffix.as_str()),
        miopen_version,
        problems: &all_problems,
        dry_run,
    });
    // Per solver: entries the file already had (kept), and of them replaced.
    let present: Vec<(usize, usize)> = names
        .iter()
        .map(|name| merged.counts.by_solver.get(name).map_or((0, 0), |&(_, p, r)| (p, r)))
        .collect();

    // --- Summary.
    say!(
        "input {input_label}: {} lines, {} problems, {} distinct ({} repeated, predicted once), {} log lines that are not convolutions skipped, {} bad lines",
        counts.lines,
        counts.problems,
        counts.problems - counts.repeated,
        counts.repeated,
        counts.skipped_log_lines,
        bad.count
    );
    say!(
        "database {} ({}, {basename})",
        path.display(),
        match format {
            Format::Text => "text",
            Format::Sqlite => "sqlite",
        }
    );
    say!("{}", system.summary);
    // The solver column as wide as its longest name.
    let w = names.iter().map(|n| n.len()).max().unwrap_or(0).max(20);
    say!(
        "{:<w$} {:>9} {:>7} {:>7} {:>8} {:>9} {:>7} {:>7} {:>8}  model (why this one)",
        "solver",
        "predicted",
        "written",
        "present",
        "replaced",
        "system-db",
        "default",
        "n/a",
        "no-valid"
    );
    for (((name, c), engine), (present, replaced)) in names.iter().zip(&per_solver).zip(&engines.engines).zip(&present)
    {
        let model = engine
            .host()
            .served
            .as_ref()
            .map_or_else(|| "-".to_string(), |r| r.describe());
        say!(
            "{:<w$} {:>9} {:>7} {:>7} {:>8} {:>9} {:>7} {:>7} {:>8}  {model}",
            name,
            c.predicted,
            c.predicted - present,
            present,
            replaced,
            c.system,
            c.left_default,
            c.not_applicable,
            c.no_valid
        );
    }
    if no_solver > 0 {
        say!("{no_solver} problem(s) no solver with a model on {model_arch} applies to: nothing written for them");
        if let Some(hint) = super::words::nhwc_hint(&names, nchw).filter(|_| !entries.is_empty()) {
            say!("{hint}");
        }
    }
    for (s, name) in names.iter().enumerate() {
        let host = engines.engines[s].host();
        if host.model.has_network() && !host.has_cell() {
            continue;
        }
        let c = &per_solver[s];
        let rows = rows_db.as_ref().map_or_else(
            || "none at hand: --system-db FILE".to_string(),
            |p| p.display().to_string(),
        );
        if engines.engines[s].host().model.has_network() {
            if c.by_cell > 0 {
                say!(
                    "{name} on {model_arch}: {} problem(s) its network does not take, answered by the cell's record beside it: {} entries from the nearest tuned neighbour ({rows}), {} left to MIOpen's static default",
                    c.by_cell,
                    c.neighbour,
                    c.by_cell_default
                );
            }
            continue;
        }
        if c.neighbour + c.no_valid + c.left_default == 0 {
            continue;
        }
        say!(
            "{name} on {model_arch}: no network; {} entries from the nearest tuned neighbour ({rows}), {} left to MIOpen's static default",
            c.neighbour,
            c.no_valid + c.left_default
        );
    }
    for (s, name) in names.iter().enumerate() {
        let c = &per_solver[s];
        let left = c.left_default - c.by_cell_default.min(c.left_default);
        if left == 0 || !engines.engines[s].host().model.has_network() {
            continue;
        }
        let why = engines.engines[s]
            .host()
            .served
            .as_ref()
            .map(|r| crate::method::best_differs(r, rows_db.is_some()))
            .unwrap_or_default();
        say!(
            "{name} on {model_arch}: {left} problem(s) left to MIOpen's static default, as --method best serves them{}{}",
            if why.is_empty() { String::new() } else { format!(" (held-out figures: {})", why.join("; ")) },
            if include_unproven { "" } else { " (--include-unproven writes the model)" }
        );
    }
    for (s, name) in names.iter().enumerate() {
        let (n, why) = &per_solver[s].not_in_version;
        if *n > 0 {
            say!(
                "{name}: {n} answer(s) not written: not in this MIOpen ({}; the first: {why})",
                version_label
            );
        }
    }
    let tuned: usize = per_solver.iter().map(|c| c.system).sum();
    if tuned > 0 {
        say!(
            "{tuned} (problem, solver) pair(s) tuned in the system perf db: not written (MIOpen uses the tuned values)"
        );
    }
    let new_entries = merged.counts.added + merged.counts.replaced;
    if dry_run {
        say!(
            "dry run: would write {new_entries} entries ({} new keys); nothing written",
            merged.counts.new_keys
        );
    } else if merged.written {
        say!(
            "wrote {} new and {} replaced entries ({} new keys){}",
            merged.counts.added,
            merged.counts.replaced,
            merged.counts.new_keys,
            merged
                .backup
                .as_ref()
                .map(|b| format!("; previous version kept as {}", b.display()))
                .unwrap_or_default()
        );
    } else if !entries.is_empty() {
        say!("nothing to write: the database already has every entry (--replace replaces their parameters)");
    }
    if entries.is_empty() {
        let distinct = counts.problems - counts.repeated;
        say!(
            "{}",
            super::words::nothing_applied(&super::words::NothingApplied {
                distinct,
                lines: counts.lines,
                bad: bad.count,
                nchw,
                arch: &model_arch,
                solvers: &names,
                left_default: per_solver.iter().map(|c| c.left_default).sum(),
                tuned: per_solver.iter().map(|c| c.system).sum(),
            })
        );
    }
    let find_db_failed = match find_db {
        Ok(Some(line)) => {
            say!("{line}");
            false
        }
        Ok(None) => false,
        Err(e) => {
            eprintln!("error: user find-db not written (the perf db above was): {e}");
            true
        }
    };
    if let Some(summary) = bad.summary() {
        eprintln!("{summary}");
    }
    if interrupted {
        eprintln!(
            "interrupted (Ctrl-C) while writing: the write was finished, the database and its .time are consistent"
        );
        return Ok(super::interrupt::EXIT_INTERRUPTED);
    }
    Ok(if bad.count > 0 || find_db_failed { 1 } else { 0 })
}

/// Whether and from what `userdb` writes the user find-db.
enum FindDbChoice {
    /// `--no-find-db`.
    Skip,
    /// Rank from MIOpen's system find-db where there is one (none: a note, nothing written).
    System,
    /// `--find-db FILE|DIR`: rank from this find-db (an error where it does not read).
    Given(PathBuf),
}

/// What the find-db step needs of the perf-db run.
struct FindDbRun<'a> {
    basename: &'a str,
    arch: &'a str,
    dir: &'a Path,
    /// The text user db's suffix, which names the user find-db too; None (sqlite): found as for
    /// a text db.
    text_suffix: Option<&'a str>,
    miopen_version: Option<crate::solvers::ck::versions::MiopenVersion>,
    problems: &'a [ConvProblem],
    dry_run: bool,
}

impl FindDbChoice {
    fn of(args: &super::Args) -> Result<FindDbChoice> {
        match (args.flag("no-find-db"), args.value("find-db")) {
            (true, Some(_)) => Err(Error::Usage("--find-db and --no-find-db contradict each other".into())),
            (true, None) => Ok(FindDbChoice::Skip),
            (false, None) => Ok(FindDbChoice::System),
            (false, Some(p)) => Ok(FindDbChoice::Given(PathBuf::from(p))),
        }
    }

    fn writes(&self) -> bool {
        !matches!(self, FindDbChoice::Skip)
    }

    /// Ranks the problems and adds their records to the user find-db: the summary line, None
    /// when skipped.
    fn run(&self, run: &FindDbRun<'_>) -> Result<Option<String>> {
        let source = match self {
            FindDbChoice::Skip => return Ok(None),
            FindDbChoice::Given(p) => Some(super::find::find_db_path(Some(p), run.basename)?),
            FindDbChoice::System => match crate::finddb::system_find_db(None, run.basename) {
                Some(p) => Some(p),
                None => {
                    return Ok(Some(format!(
                        "user find-db: none written, no system find-db {}.HIP.fdb.txt found to rank from ($MIOPEN_SYSTEM_DB_PATH, $ROCM_PATH or /opt/rocm share/miopen/db; --find-db FILE names one)",
                        run.basename
                    )))
                }
            },
        };
        let suffix = match run.text_suffix {
            Some(s) => s.to_string(),
            None => {
                crate::userdb::naming::resolve_suffix(None, run.dir, run.basename, &crate::userdb::naming::rocm_roots())?
                    .suffix
            }
        };
        let form = match run.miopen_version {
            Some(v) if (v.major, v.minor) >= (3, 5) => crate::finddb::Form::Miopen351,
            _ => crate::finddb::Form::Miopen2024,
        };
        let job = crate::finddb::UserFindDbJob {
            basename: run.basename,
            arch: run.arch,
            user_dir: run.dir,
            suffix: &suffix,
            find_db: source.as_deref(),
            form,
            max_entries: USER_FIND_DB_ENTRIES,
            dry_run: run.dry_run,
        };
        let o = crate::finddb::update_user_find_db(&job, run.problems)?;
        let w = &o.written;
        let verb = if run.dry_run { "would add" } else { "added" };
        Ok(Some(format!(
            "user find-db {}: {verb} {} record(s), kept {} already there; {} problem(s) in the system find-db (MIOpen's measured record stands), {} left to MIOpen's Find (the ranking puts a dynamic solver first), {} in a class where records do not beat Find on validation, {} with no record of their class (ranked from {}){}",
            o.path.display(),
            w.added,
            w.kept,
            o.plan_in_system,
            o.plan_find_is_better,
            o.plan_class_refused,
            o.plan_unranked,
            o.ranked_from.display(),
            w.backup
                .as_ref()
                .map(|b| format!("; previous version kept as {}", b.display()))
                .unwrap_or_default()
        )))
    }
}

/// Entries a user find-db record lists: the ranking's first ones (MIOpen runs the first that
/// applies and whose workspace fits).
const USER_FIND_DB_ENTRIES: usize = 4;
