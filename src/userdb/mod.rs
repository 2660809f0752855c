//! MIOpen's user perf database: where MIOpen looks for it, and a merge that writes predicted
//! entries into it without ever losing what is there.
//!
//! MIOpen reads the user perf database before its system one (`src/include/miopen/
//! execution_context.hpp`, `GetUserPerfDbPath`): `{dir}/{basename}.{suffix}.udb.txt` for the
//! text format (MIOpen's default build, `MIOPEN_USE_SQLITE_PERFDB` off) or
//! `{dir}/{basename}_1.1.0.udb` for sqlite, where `dir` is `$MIOPEN_USER_DB_PATH` or
//! `~/.config/miopen`, the basename is the arch and CU count (`src/include/miopen/handle.hpp`,
//! `GetDbBasename`: `gfx906_60`, above 64 CUs the count in hex without `_`: `gfx942130`), and the
//! suffix is the backend and version MIOpen was built with (`HIP.3_2_0` in a development build,
//! `HIP.{major}_{minor}_{patch}_{tweak}` in a release).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::problem::ConvProblem;

pub mod lock;
pub mod naming;
pub mod replace;
pub mod sqlite;
pub mod system;
pub mod text;

pub use naming::{db_basename, default_dir, existing_suffixes, file_name, suffix_from_version};

/// The two file formats of a MIOpen perf database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{basename}.{suffix}.udb.txt`, lines `KEY=Solver:params;...`.
    Text,
    /// `{basename}_1.1.0.udb`, tables `config` and `perf_db`.
    Sqlite,
}

impl Format {
    pub fn parse(text: &str) -> Result<Format> {
        match text {
            "text" => Ok(Format::Text),
            "sqlite" => Ok(Format::Sqlite),
            other => Err(Error::Usage(format!(
                "--format: expected text or sqlite, got '{other}'"
            ))),
        }
    }
}

/// MIOpen's schema version of sqlite perf databases (`SQLitePerfDb::MIOPEN_PERFDB_SCHEMA_VER`).
pub const SQLITE_SCHEMA_VERSION: &str = "1.1.0";

/// One predicted entry: the problem's 24-field text key, the solver and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub problem: ConvProblem,
    pub solver: &'static str,
    pub params: String,
}

/// What a merge did with its entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeCounts {
    /// Entries written for a (key, solver) the file did not have.
    pub added: usize,
    /// Entries not written: the file already has that (key, solver) (kept unless `replace`).
    pub present: usize,
    /// Existing (key, solver) entries whose parameters were replaced (`replace` only).
    pub replaced: usize,
    /// Keys the file did not have.
    pub new_keys: usize,
    /// Per solver: (added, present, replaced).
    pub by_solver: std::collections::BTreeMap<&'static str, (usize, usize, usize)>,
}

/// One entry's fate in a merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Added,
    Present,
    Replaced,
}

impl MergeCounts {
    pub fn note(&mut self, solver: &'static str, outcome: Outcome) {
        let slot = self.by_solver.entry(solver).or_default();
        match outcome {
            Outcome::Added => {
                self.added += 1;
                slot.0 += 1;
            }
            Outcome::Present => {
                self.present += 1;
                slot.1 += 1;
            }
            Outcome::Replaced => {
                self.replaced += 1;
                slot.2 += 1;
            }
        }
    }
}

/// Where and how a merge writes.
#[derive(Debug, Clone)]
pub struct Target {
    pub path: PathBuf,
    pub format: Format,
    /// Replace the parameters of (key, solver) entries the file already has.
    pub replace: bool,
    /// How long to wait for MIOpen's lock on the file when another process holds it.
    pub lock_wait: std::time::Duration,
}

/// What [`merge`] did.
#[derive(Debug, Clone)]
pub struct Merged {
    pub counts: MergeCounts,
    /// Where the previous version was kept (None when there was no file, or nothing changed).
    pub backup: Option<PathBuf>,
    /// False for a dry run, or when nothing changed.
    pub written: bool,
}

/// The backup of the previous version of `path`: `{path}.bak`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".bak");
    PathBuf::from(name)
}

/// Merges `entries` into the user database `target` (see [`text::merge`] and
/// [`sqlite::merge`] for what is kept). A text database is replaced atomically (a temporary
/// file renamed over it, its permissions kept, the previous version kept as `{path}.bak`)
/// while MIOpen's lock on it is held, and its `.time` file is updated so that a running MIOpen
/// rereads it. A sqlite database is merged in place through SQLite, in one transaction
/// ([`sqlite::merge_in_place`]: never copied or renamed over, since MIOpen keeps it open in WAL
/// mode and takes no lock file for it), the previous version kept as `{path}.bak` by
/// `VACUUM INTO`. With `dry_run` nothing is written and the counts say what would be.
pub fn merge(target: &Target, entries: &[Entry], dry_run: bool) -> Result<Merged> {
    let path = &target.path;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() && !dry_run {
            crate::format::create_dir(dir)?;
        }
    }
    if let Ok(m) = std::fs::metadata(path) {
        if !m.is_file() {
            return Err(Error::io(
                path,
                std::io::Error::other("exists but is not a regular file; nothing was written"),
            ));
        }
    }
    match target.format {
        Format::Text => {
            // The file is read only once the lock is held: a process that wrote it meanwhile is seen.
            let _lock = if dry_run {
                None
            } else {
                Some(lock::MiopenLock::acquire_waiting(path, target.lock_wait)?)
            };
            let existed = path.exists();
            let content = match std::fs::read(path) {
                Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                    Error::format(
                        path.display().to_string(),
                        "is not UTF-8 text: not a MIOpen text perf database; nothing was written",
                    )
                })?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => return Err(Error::io(path, e)),
            };
            let (merged, counts) = text::merge(&content, entries, target.replace);
            let changed = merged != content;
            if dry_run || !changed {
                return Ok(Merged {
                    counts,
                    backup: None,
                    written: false,
                });
            }
            let backup = replace::replace_file(path, |tmp| replace::write_all_synced(tmp, merged.as_bytes()))?;
            update_time_file(path)?;
            Ok(Merged {
                counts,
                backup: backup.filter(|_| existed),
                written: true,
            })
        }
        Format::Sqlite => {
            let rows: Vec<_> = entries.iter().map(|e| (e.problem.to_perfdb_columns(), e)).collect();
            if dry_run {
                return Ok(Merged {
                    counts: sqlite::dry_run(path, &rows, target.replace)?,
                    backup: None,
                    written: false,
                });
            }
            let done = sqlite::merge_in_place(path, &rows, target.replace, target.lock_wait)?;
            Ok(Merged {
                counts: done.counts,
                backup: done.backup,
                written: done.written,
            })
        }
    }
}

/// Writes MIOpen's `{path}.time` (`src/ramdb.cpp`, `UpdateDbModificationTime`): the time now
/// on `std::chrono::steady_clock` (CLOCK_MONOTONIC) in nanoseconds; a running MIOpen rereads a
/// database whose `.time` is later than its last read.
pub fn update_time_file(path: &Path) -> Result<()> {
    let mut name = path.as_os_str().to_owned();
    name.push(".time");
    let time_file = PathBuf::from(name);
    crate::format::write_file_atomic(&time_file, monotonic_nanos().to_string().as_bytes())
}

#[cfg(unix)]
fn monotonic_nanos() -> i128 {
    // SAFETY: clock_gettime writes one timespec.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

#[cfg(not(unix))]
fn monotonic_nanos() -> i128 {
    0
}
