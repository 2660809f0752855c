//! `tuneinfer find`: the solvers MIOpen would run on a problem, fastest first, from a find-db.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::finddb::{self, Method, Ranker};
use crate::problem::{ConvProblem, InputLine};

const HELP: &str = "\
Usage: tuneinfer find --arch GPU [--find-db FILE|DIR] [--method knn|nearest] [--top N] PROBLEM...
       tuneinfer find --arch GPU [--find-db FILE|DIR] --input FILE [--output OUT.tsv]
       tuneinfer find --arch GPU --method tunanet [--models DIR] PROBLEM...

Prints, for each problem, the solvers MIOpen would run on GPU, fastest first, as a TSV with the
columns problem, rank, solver, time_ms, source:
  source finddb  the find-db's own record of the problem: MIOpen's measured times (MIOpen's
                 default find mode runs the first entry whose solver applies)
  source knn     predicted by the ranking from the closest records of the same direction, type
                 and layout; time_ms is the predicted kernel time
  source nearest the closest record's solvers and times (the plain nearest-neighbour baseline)
  source tunanet MIOpen's TunaNet order (immediate mode's fallback): the dynamic solvers that
                 apply, time_ms 10 * rank as MIOpen reports them (not a time)

--arch GPU     a MIOpen database name with the compute units (gfx90878, gfx90a68, gfx906_60,
               gfx1030_36, gfx942130): it names the system find-db {GPU}.HIP.fdb.txt
--find-db F    the find-db to rank from: a file (text or .bz2), or a directory holding a file
               named {GPU}.*fdb.txt[.bz2]; default: MIOpen's system find-db
               ($MIOPEN_SYSTEM_DB_PATH, else $ROCM_PATH or /opt/rocm share/miopen/db)
--method M     knn (default), nearest, or tunanet (MIOpen's TunaNet: gfx942 and gfx90a have
               their own model, every other GPU runs gfx908's, as in MIOpen)
--models DIR   where TunaNet's {arch}.tn.model files are (default: $TUNEINFER_MODELS, weights/,
               then MIOpen's system db directory)
--top N        the first N solvers of each problem (default: all)
--input FILE   problems one per line (perf-db keys, MIOpenDriver lines, MIOpen log lines;
               '-' reads standard input); --output OUT.tsv writes the TSV there

PROBLEM is a perf-db key (64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F) or a
MIOpenDriver line (conv -n 16 -c 64 ... -F 1). Exit codes: 0 every problem ranked, 1 some
problem had no ranking (no record of its class, or TunaNet does not take it) or did not parse,
2 usage, 3 file I/O, 6 no TunaNet model found, 7 a find-db that does not read.";

pub(super) fn find(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: &["arch", "find-db", "method", "top", "input", "output", "models"],
            flags: &[],
        },
    )?;
    let arch = args
        .value("arch")
        .ok_or_else(|| Error::Usage("find needs --arch GPU (a database name such as gfx90a68; see --help)".into()))?;
    let gpu = crate::userdb::naming::parse_arch(arch)?;
    let Some(cu) = gpu.compute_units else {
        return Err(Error::Usage(format!(
            "--arch {}: name the GPU with its compute units as MIOpen's databases do (gfx90878, \
             gfx90a68, gfx906_60, gfx942130), which names its find-db",
            crate::error::quote_short(arch)
        )));
    };
    let basename = crate::userdb::db_basename(&gpu.db_id, cu);
    let method = Method::parse(args.value("method").unwrap_or("knn"))?;
    let top = args.positive("top", usize::MAX, usize::MAX)?;
    let problems: Vec<(String, Result<ConvProblem>)> = match args.value("input") {
        Some(input) => {
            if !args.rest.is_empty() {
                return Err(Error::Usage(
                    "give problems either as arguments or with --input, not both".into(),
                ));
            }
            read_problems(input)?
        }
        None => {
            if args.value("output").is_some() {
                return Err(Error::Usage("--output goes with --input".into()));
            }
            if args.rest.is_empty() {
                return Err(Error::Usage("find needs a PROBLEM or --input FILE (see --help)".into()));
            }
            problem_words(&args.rest)
        }
    };
    let answer = match method {
        Method::TunaNet => {
            let dirs = crate::models::search_dirs(args.value("models").map(Path::new));
            let net = crate::tunanet::TunaNet::load_in(&gpu.arch, &dirs)?;
            Answer::TunaNet(Box::new(net), crate::solvers::Target::new(&gpu.arch))
        }
        Method::Knn | Method::Nearest => {
            let db_path = find_db_path(args.value("find-db").map(Path::new), &basename)?;
            let records = finddb::read_find_db(&db_path)?;
            Answer::Ranker(
                Box::new(Ranker::new(&gpu.arch, records, finddb::Params::default())),
                db_path,
            )
        }
    };

    let mut out: Box<dyn Write> = match args.value("output") {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|e| Error::io(path, e))?,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    let out_name = args.value("output").unwrap_or("<stdout>").to_string();
    let io = |e: std::io::Error| Error::io(&out_name, e);
    writeln!(out, "problem\trank\tsolver\ttime_ms\tsource").map_err(io)?;
    let mut failed = 0usize;
    for (text, problem) in &problems {
        let problem = match problem {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                failed += 1;
                continue;
            }
        };
        let rows: Vec<(String, f64, &str)> = match &answer {
            Answer::Ranker(ranker, db_path) => {
                let ranked = match method {
                    Method::Nearest if !ranker.has_record(problem) => ranker.nearest_order(problem),
                    _ => ranker.rank(problem)?,
                };
                if ranked.is_empty() {
                    eprintln!(
                        "error: {text}: no solver ranked: {} holds no record of its direction, type and layout",
                        db_path.display()
                    );
                    failed += 1;
                    continue;
                }
                ranked
                    .into_iter()
                    .map(|r| (r.solver, r.time_ms, r.source.as_str()))
                    .collect()
            }
            Answer::TunaNet(net, target) => {
                let mut applies = |s: &str| finddb::rules::runs(s, target, problem);
                match net.fallback(problem, &mut applies) {
                    Ok(order) if !order.is_empty() => order
                        .into_iter()
                        .map(|s| (s.solver, f64::from(s.time_ms), "tunanet"))
                        .collect(),
                    Ok(_) => {
                        eprintln!("error: {text}: TunaNet keeps no dynamic solver that applies (MIOpen uses its WTI estimates)");
                        failed += 1;
                        continue;
                    }
                    Err(e) => {
                        eprintln!("error: {text}: {e}");
                        failed += 1;
                        continue;
                    }
                }
            }
        };
        for (i, (solver, time_ms, source)) in rows.iter().take(top).enumerate() {
            writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}",
                finddb::key_of(problem),
                i + 1,
                solver,
                finddb::record::format_time(*time_ms as f32),
                source
            )
            .map_err(io)?;
        }
    }
    out.flush().map_err(io)?;
    Ok(if failed > 0 { 1 } else { 0 })
}

/// Where `find`'s answers come from.
enum Answer {
    /// The k-NN ranking (or the nearest-neighbour baseline) over this find-db.
    Ranker(Box<Ranker>, PathBuf),
    /// MIOpen's TunaNet fallback, with tuneinfer's applicability.
    TunaNet(Box<crate::tunanet::TunaNet>, crate::solvers::Target),
}

/// The positional words as problems: one MIOpenDriver line when the first word is `conv...`
/// (or a path to MIOpenDriver), else one key per word.
fn problem_words(words: &[String]) -> Vec<(String, Result<ConvProblem>)> {
    let driver = words[0].starts_with("conv") || words[0].ends_with("MIOpenDriver");
    if driver {
        let line = words.join(" ");
        let p = ConvProblem::parse(&line);
        return vec![(line, p)];
    }
    words.iter().map(|w| (w.clone(), ConvProblem::parse(w))).collect()
}

/// The problems of an input file, one or more a line (a driver line with `-F 0` names three).
fn read_problems(input: &str) -> Result<Vec<(String, Result<ConvProblem>)>> {
    let reader: Box<dyn BufRead> = if input == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(input).map_err(|e| Error::io(input, e))?,
        ))
    };
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| Error::io(input, e))?;
        let at = |e: Error| Error::AtLine {
            file: input.to_string(),
            line: i + 1,
            error: Box::new(e),
        };
        match crate::problem::parse_line(&line) {
            Ok(InputLine::Problems(ps)) => out.extend(ps.into_iter().map(|p| (line.clone(), Ok(p)))),
            Ok(_) => {}
            Err(e) => out.push((line.clone(), Err(at(e)))),
        }
    }
    Ok(out)
}

/// The find-db to read: the given file, the `{basename}.*fdb.txt[.bz2]` file of a given
/// directory, or MIOpen's system find-db.
pub(super) fn find_db_path(given: Option<&Path>, basename: &str) -> Result<PathBuf> {
    match given {
        Some(p) if p.is_dir() => {
            let mut names: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| Error::io(p, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with(&format!("{basename}."))
                            && (n.ends_with(".fdb.txt") || n.ends_with(".fdb.txt.bz2"))
                    })
                })
                .collect();
            names.sort();
            // MIOpen 3.5.1's file before another vintage's where both are there.
            names.sort_by_key(|n| !n.to_string_lossy().contains(".3.5.1."));
            names.into_iter().next().ok_or_else(|| {
                Error::Usage(format!(
                    "--find-db {}: no {basename}.*fdb.txt[.bz2] file there",
                    p.display()
                ))
            })
        }
        Some(p) => {
            if p.is_file() {
                Ok(p.to_path_buf())
            } else {
                Err(Error::io(
                    p,
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such find-db file"),
                ))
            }
        }
        None => finddb::system_find_db(None, basename).ok_or_else(|| {
            Error::Usage(format!(
                "no system find-db {basename}.HIP.fdb.txt found ($MIOPEN_SYSTEM_DB_PATH, $ROCM_PATH or \
                 /opt/rocm share/miopen/db); give one with --find-db FILE"
            ))
        }),
    }
}
