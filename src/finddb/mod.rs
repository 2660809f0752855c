//! MIOpen's find-db: which solver MIOpen runs on a problem, and how fast each was.
//!
//! - [`record`]: one record line in both of MIOpen's item forms, read and written as MIOpen does;
//! - [`rules`]: the dynamic solvers, the ones off unless a debug switch is set, tuneinfer's
//!   applicability;
//! - [`rank`]: the solver ranking (k nearest neighbours over a find-db's records);
//! - [`eval`]: the held-out figures of the ranking and its baselines;
//! - this module: reading a find-db file, finding the system find-db as MIOpen does, planning
//!   and writing the records of a user find-db (`{db id}.{version}.ufdb.txt`).
//!
//! Nothing here prints.

pub mod eval;
pub mod rank;
pub mod record;
pub mod rules;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Layout};

pub use rank::{Params, Ranked, Ranker, Source};
pub use record::{Entry, Form, Record};

/// Which ranking answers (`tuneinfer find --method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// tuneinfer's k-NN ranking ([`Ranker::rank`]).
    Knn,
    /// The closest record's order (the plain nearest-neighbour baseline).
    Nearest,
    /// MIOpen's TunaNet (`../shared/miopen/models/*.tn.model`): not in this module; the
    /// `tunanet` module answers it where it is built in (wired by the CLI).
    TunaNet,
}

impl Method {
    pub fn parse(text: &str) -> Result<Method> {
        match text {
            "knn" | "rank" | "default" => Ok(Method::Knn),
            "nearest" | "nn" => Ok(Method::Nearest),
            "tunanet" => Ok(Method::TunaNet),
            other => Err(Error::Usage(format!(
                "unknown --method '{other}' (expected knn, nearest or tunanet)"
            ))),
        }
    }
}

/// The key of `p` in a find-db: MIOpen's `ProblemDescription::Serialize`, which repeats a layout
/// other than NCHW/NCDHW for the three tensors (`-NHWC-NHWC-NHWC-`).
pub fn key_of(p: &ConvProblem) -> String {
    let key = p.to_perfdb_key();
    if p.layout == Layout::Nhwc && !p.is_3d() {
        key.replacen("-NHWC-", "-NHWC-NHWC-NHWC-", 1)
    } else {
        key
    }
}

/// The records of a find-db file (text, or bzip2-compressed text as in `../shared`), in file
/// order. A line that is not `KEY=...` is an error naming the file and line.
pub fn read_find_db(path: &Path) -> Result<Vec<Record>> {
    let text = crate::data::textdb::read_text(path)?;
    parse_find_db(&text, &path.display().to_string())
}

/// The records of a find-db's text; `name` names it in errors.
pub fn parse_find_db(text: &str, name: &str) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match record::parse_line(line) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(e) => {
                return Err(Error::AtLine {
                    file: name.to_string(),
                    line: i + 1,
                    error: Box::new(e),
                })
            }
        }
    }
    Ok(out)
}

/// The system find-db of a GPU as MIOpen's file build finds it (`FindDbRecord_t::
/// GetInstalledPathFile`, `src/find_db.cpp`): `{dir}/{basename}.HIP.fdb.txt` in the system
/// database directory. MIOpen's inexact search compares `path::extension()` (`.txt`) with
/// `.fdb.txt` and so never matches: the exact name is the only one MIOpen reads. `dir` None: the
/// directory MIOpen reads ([`crate::userdb::system::installed_dir`]).
pub fn system_find_db(dir: Option<&Path>, basename: &str) -> Option<PathBuf> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => crate::userdb::system::installed_dir()?.0,
    };
    let path = dir.join(format!("{basename}.HIP.fdb.txt"));
    path.is_file().then_some(path)
}

/// The user find-db MIOpen reads beside the user perf db: `{dir}/{basename}.{suffix}.ufdb.txt`
/// (`FindDbRecord_t::GetUserPath`; `suffix` is the user-db suffix, `GetUserDbSuffix`).
pub fn user_find_db_path(dir: &Path, basename: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{basename}.{suffix}.ufdb.txt"))
}

/// What [`plan_records`] did with each problem.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The records to write, one per problem, in the problems' order (repeated problems once).
    pub records: Vec<Record>,
    /// Problems the system find-db has a record of (MIOpen's measured record stands).
    pub in_system: usize,
    /// Problems whose class the ranking does not beat MIOpen's Find on (no record: Find runs).
    pub class_refused: usize,
    /// Problems no record of the class is known for.
    pub unranked: usize,
    /// Problems whose ranking puts a dynamic solver first where MIOpen's Find does better on
    /// validation ([`record_pick`]): no record, Find times the dynamic solvers.
    pub find_is_better: usize,
}

/// The margin by which the ranking's first solver, where it is not dynamic, must beat its best
/// dynamic solver's predicted time for a record to be written where the class is not allowed.
pub const NON_DYNAMIC_MARGIN: f64 = 1.0;

/// The first solver MIOpen runs from the record [`plan_records`] writes for a problem with this
/// ranking, or None where no record is written and MIOpen's Find (over the dynamic solvers only,
/// `DYNAMIC_HYBRID`) decides. No record in a class where writing records does not beat the
/// dynamic-only choice on validation ([`class_allowed`]); elsewhere a record only where the
/// ranking puts a non-dynamic solver first, ahead of every dynamic one by
/// [`NON_DYNAMIC_MARGIN`]: Find never times a non-dynamic solver, and it orders the dynamic ones
/// by measuring them, which a prediction does not beat.
pub fn record_pick<'a>(arch: &str, p: &ConvProblem, ranked: &'a [Ranked]) -> Option<&'a Ranked> {
    record_pick_with(arch, p, ranked, Policy::default())
}

/// When a record is written ([`record_pick`]); the default is what `userdb` uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    pub only_non_dynamic: bool,
    pub margin: f64,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            only_non_dynamic: ONLY_NON_DYNAMIC_RECORDS,
            margin: NON_DYNAMIC_MARGIN,
        }
    }
}

/// [`record_pick`] under another policy (evaluation).
pub fn record_pick_with<'a>(arch: &str, p: &ConvProblem, ranked: &'a [Ranked], policy: Policy) -> Option<&'a Ranked> {
    if !class_allowed(arch, p) {
        return None;
    }
    let first = ranked.first()?;
    if !policy.only_non_dynamic {
        return Some(first);
    }
    if rules::is_dynamic(&first.solver) {
        return None;
    }
    let best_dynamic = ranked
        .iter()
        .find(|r| rules::is_dynamic(&r.solver))
        .map_or(f64::INFINITY, |r| r.time_ms);
    (first.time_ms * policy.margin <= best_dynamic).then_some(first)
}

/// Whether records are written only where a non-dynamic solver comes first (for every class).
pub const ONLY_NON_DYNAMIC_RECORDS: bool = true;

/// Classes (direction, data type) of a GPU where the ranking's held-out figures do not beat the
/// dynamic-only choice: `(arch prefix, direction char, type)` (docs/finddb.md; empty where it
/// wins everywhere measured).
pub const REFUSED_CLASSES: &[(&str, char, &str)] = &[];

/// Whether a record is written for a problem of this class on `arch`.
pub fn class_allowed(arch: &str, p: &ConvProblem) -> bool {
    !REFUSED_CLASSES
        .iter()
        .any(|(a, d, t)| arch.starts_with(a) && p.direction.as_char() == *d && p.precision.as_str() == *t)
}

/// The user find-db records for `problems`: each problem the system find-db (`system_keys`, the
/// keys of its records) lacks gets a record of the ranking's first `max_entries` solvers with
/// their predicted times, in MIOpen's form; none for a problem the system has, a class the
/// ranking loses on ([`class_allowed`]), or a problem nothing ranks.
pub fn plan_records(
    ranker: &Ranker,
    system_keys: &HashSet<String>,
    problems: &[ConvProblem],
    max_entries: usize,
) -> Plan {
    let mut plan = Plan::default();
    let mut seen = HashSet::new();
    for p in problems {
        let key = key_of(p);
        if !seen.insert(key.clone()) {
            continue;
        }
        if system_keys.contains(&key) {
            plan.in_system += 1;
            continue;
        }
        if !class_allowed(&ranker.target().arch, p) {
            plan.class_refused += 1;
            continue;
        }
        let ranked = ranker.predict(p);
        if ranked.is_empty() {
            plan.unranked += 1;
            continue;
        }
        if record_pick(&ranker.target().arch, p, &ranked).is_none() {
            plan.find_is_better += 1;
            continue;
        }
        plan.records.push(Record {
            key,
            entries: ranked.iter().take(max_entries.max(1)).map(Ranked::entry).collect(),
        });
    }
    plan
}

/// What [`write_user_find_db`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    /// Records added.
    pub added: usize,
    /// Records not written because the user find-db already has the problem (MIOpen measured it
    /// there, or an earlier run wrote it): the existing record is kept as it is.
    pub kept: usize,
    /// The previous file's backup (`{path}.bak`), where there was a previous file and it changed.
    pub backup: Option<PathBuf>,
}

/// Adds `records` to the user find-db at `path` as the perf db is merged: under MIOpen's lock,
/// every existing line kept byte for byte, a record only for a key the file lacks, the file
/// replaced atomically with the previous one kept as `.bak` (`crate::userdb::replace`). Nothing
/// is written when nothing is new; `dry_run` counts without writing.
pub fn write_user_find_db(path: &Path, records: &[Record], form: Form, dry_run: bool) -> Result<Written> {
    let _lock = if dry_run {
        None
    } else {
        Some(crate::userdb::lock::MiopenLock::acquire_waiting(
            path,
            std::time::Duration::from_secs(60),
        )?)
    };
    let existing = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| Error::Database {
            path: path.display().to_string(),
            detail: "the user find-db is not UTF-8 text".into(),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut keys: HashSet<String> = existing
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
        .collect();
    let mut out = existing.clone();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let mut written = Written::default();
    for r in records {
        if r.entries.is_empty() {
            continue;
        }
        if !keys.insert(r.key.clone()) {
            written.kept += 1;
            continue;
        }
        out.push_str(&record::serialize(&r.key, &r.entries, form));
        out.push('\n');
        written.added += 1;
    }
    if written.added == 0 || dry_run {
        return Ok(written);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    written.backup = crate::userdb::replace::replace_file(path, |tmp| {
        crate::userdb::replace::write_all_synced(tmp, out.as_bytes())
    })?;
    Ok(written)
}

/// One `userdb` run's user find-db: what [`update_user_find_db`] needs.
#[derive(Debug, Clone)]
pub struct UserFindDbJob<'a> {
    /// MIOpen's database name of the GPU (`gfx906_60`, `gfx90a68`): names both find-dbs.
    pub basename: &'a str,
    /// The plain arch (`gfx906`), for the rules.
    pub arch: &'a str,
    /// The user-db directory and suffix (the user perf db's: `{dir}/{basename}.{suffix}.ufdb.txt`).
    pub user_dir: &'a Path,
    pub suffix: &'a str,
    /// The find-db to rank from; None: MIOpen's system find-db ([`system_find_db`]).
    pub find_db: Option<&'a Path>,
    /// The target MIOpen version's form.
    pub form: Form,
    /// Entries a record lists (the ranking's first ones).
    pub max_entries: usize,
    pub dry_run: bool,
}

/// What [`update_user_find_db`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct UserFindDbOutcome {
    pub path: PathBuf,
    /// The find-db ranked from.
    pub ranked_from: PathBuf,
    pub plan_in_system: usize,
    pub plan_class_refused: usize,
    pub plan_unranked: usize,
    /// Problems whose ranking puts a dynamic solver first: left to MIOpen's Find.
    pub plan_find_is_better: usize,
    pub written: Written,
}

/// `userdb`'s user find-db step: ranks `problems` from the find-db (the system's unless one is
/// given), plans a record for each problem neither that find-db nor MIOpen's system find-db has
/// ([`plan_records`]), and adds them to the user find-db ([`write_user_find_db`]). An error
/// when no find-db is found (`userdb` reports it and goes on with the perf db).
pub fn update_user_find_db(job: &UserFindDbJob<'_>, problems: &[ConvProblem]) -> Result<UserFindDbOutcome> {
    let system = system_find_db(None, job.basename);
    let source = match (job.find_db, &system) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(p)) => p.clone(),
        (None, None) => {
            return Err(Error::Usage(format!(
                "no system find-db {}.HIP.fdb.txt found ($MIOPEN_SYSTEM_DB_PATH, $ROCM_PATH or /opt/rocm \
                 share/miopen/db) to rank from",
                job.basename
            )))
        }
    };
    let records = read_find_db(&source)?;
    let mut system_keys: HashSet<String> = records.iter().map(|r| r.key.clone()).collect();
    if let Some(sys) = system.as_ref().filter(|s| **s != source) {
        system_keys.extend(read_find_db(sys)?.into_iter().map(|r| r.key));
    }
    let ranker = Ranker::new(job.arch, records, Params::default());
    let plan = plan_records(&ranker, &system_keys, problems, job.max_entries);
    let path = user_find_db_path(job.user_dir, job.basename, job.suffix);
    let written = write_user_find_db(&path, &plan.records, job.form, job.dry_run)?;
    Ok(UserFindDbOutcome {
        path,
        ranked_from: source,
        plan_in_system: plan.in_system,
        plan_class_refused: plan.class_refused,
        plan_unranked: plan.unranked,
        plan_find_is_better: plan.find_is_better,
        written,
    })
}
