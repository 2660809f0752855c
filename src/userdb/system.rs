//! MIOpen's *system* perf database: where MIOpen finds it, and exact lookups in it.
//!
//! MIOpen reads a (problem, solver)'s tuned parameters from the user database first and from the
//! system one after (`MultiFileDb`: a user record is merged over the system one, solver by
//! solver), so a user entry hides a tuned value. `userdb` therefore never writes what the system
//! database has tuned, and `predict`/`batch` answer it with the tuned value itself.
//!
//! Where (MIOpen's `src/db_path.cpp.in`, `GetSystemDbPath`): the directory
//! `$MIOPEN_SYSTEM_DB_PATH` when set, else `share/miopen/db` of the install that holds the
//! loaded `libMIOpen.so` (`GetLibPath().parent_path() / "share/miopen/db"`; a program that is not
//! MIOpen finds that library as the dynamic loader does: `$LD_LIBRARY_PATH`, then `$ROCM_PATH`,
//! then `/opt/rocm`). Which file (`src/include/miopen/execution_context.hpp`,
//! `GetPerfDbPathFile`): `{basename}.db` in a build with `MIOPEN_USE_SQLITE_PERFDB`,
//! `{basename}.db.txt` in the default text build; when that file is missing, the sqlite build
//! takes the `*.db` whose name starts with the arch's db id and whose compute-unit count is the
//! closest (the text build's search compares the last extension, `.txt`, with `.db.txt`, so it
//! never matches). tuneinfer takes the closest count in every form, so that a GPU tuned by no one
//! (MI250X, `gfx90a6e`) is served by its arch's database (`gfx90a68`) as the sqlite build serves
//! it; the summary names the file. The bzip2 forms MIOpen keeps in its source tree (`.db.bz2`,
//! `.db.txt.bz2`)
//! are read too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::problem::ConvProblem;

/// What `--system-db` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// No option: MIOpen's installed system database, found as MIOpen finds it.
    Auto,
    /// `--system-db none`: none at all.
    Off,
    /// `--system-db FILE`.
    File(PathBuf),
}

impl Choice {
    /// The choice of a `--system-db` value (None: the option was not given).
    pub fn parse(value: Option<&str>) -> Choice {
        match value {
            None => Choice::Auto,
            Some("none") => Choice::Off,
            Some(file) => Choice::File(PathBuf::from(file)),
        }
    }
}

/// The file forms of a system perf database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Sqlite,
    Text,
    Bzip2Sqlite,
    Bzip2Text,
}

impl Form {
    pub fn as_str(self) -> &'static str {
        match self {
            Form::Sqlite => "sqlite",
            Form::Text => "text",
            Form::Bzip2Sqlite => "bzip2 sqlite",
            Form::Bzip2Text => "bzip2 text",
        }
    }
}

/// A system perf database. A sqlite one is looked up row by row, as MIOpen does (its unique
/// index over the problem's columns); a text one is read whole: for each 24-field key, its
/// (solver, params) in the order MIOpen reads them (the first entry of a solver counts).
#[derive(Debug)]
pub struct SystemDb {
    pub path: PathBuf,
    pub form: Form,
    backing: Backing,
}

#[derive(Debug)]
enum Backing {
    Sqlite {
        conn: rusqlite::Connection,
        /// The decompressed copy of a bzip2 database, removed when dropped.
        _scratch: Option<Scratch>,
    },
    Text(HashMap<String, Vec<(String, String)>>),
}

impl SystemDb {
    /// Opens a system database in any of its forms, told apart by content, not by name: sqlite
    /// (`SQLite format 3`), text (24-field keys, or the dash keys of the 2019 files, converted),
    /// either of them bzip2-compressed.
    pub fn open(path: &Path) -> Result<SystemDb> {
        let mut head = [0u8; 16];
        let n = {
            use std::io::Read;
            let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
            let mut n = 0;
            while n < head.len() {
                match f.read(&mut head[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(Error::io(path, e)),
                }
            }
            n
        };
        if !std::fs::metadata(path).map_err(|e| Error::io(path, e))?.is_file() {
            return Err(Error::io(path, std::io::Error::other("is not a regular file")));
        }
        const SQLITE: &[u8] = b"SQLite format 3\0";
        if head[..n].starts_with(SQLITE) {
            return Ok(SystemDb {
                path: path.to_path_buf(),
                form: Form::Sqlite,
                backing: Backing::Sqlite {
                    conn: crate::data::perfdb::open(path)?,
                    _scratch: None,
                },
            });
        }
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let (bytes, packed) = if crate::data::textdb::is_bzip2(&bytes) {
            (unbzip2(path, &bytes)?, true)
        } else {
            (bytes, false)
        };
        if bytes.starts_with(SQLITE) {
            // rusqlite opens files: the decompressed database goes to a scratch file.
            let scratch = Scratch::new(&bytes)?;
            let conn = crate::data::perfdb::open(&scratch.0).map_err(|e| rename_error(e, path))?;
            return Ok(SystemDb {
                path: path.to_path_buf(),
                form: Form::Bzip2Sqlite,
                backing: Backing::Sqlite {
                    conn,
                    _scratch: Some(scratch),
                },
            });
        }
        let text = String::from_utf8(bytes).map_err(|_| Error::Database {
            path: path.display().to_string(),
            detail: "not a MIOpen perf database: neither sqlite nor UTF-8 text (plain or bzip2)".into(),
        })?;
        let mut entries: HashMap<String, Vec<(String, String)>> = HashMap::new();
        // As MIOpen's text reader (and `text::read_entries`): the first line of a key counts,
        // and in it the first entry of a solver; a dash key names the problem of the 24-field
        // key it converts to.
        for raw in text.lines() {
            let Some((key, rest)) = raw.trim_end_matches('\r').split_once('=') else {
                continue;
            };
            let key = if key.contains('-') {
                match ConvProblem::from_perfdb_key(key) {
                    Ok(p) => p.to_db_key(),
                    Err(_) => continue,
                }
            } else {
                key.to_string()
            };
            if entries.contains_key(&key) {
                continue;
            }
            let mut items: Vec<(String, String)> = Vec::new();
            for (solver, params) in rest.split(';').filter_map(|item| item.split_once(':')) {
                if !items.iter().any(|(s, _)| s == solver) {
                    items.push((solver.to_string(), params.to_string()));
                }
            }
            entries.insert(key, items);
        }
        Ok(SystemDb {
            path: path.to_path_buf(),
            form: if packed { Form::Bzip2Text } else { Form::Text },
            backing: Backing::Text(entries),
        })
    }

    /// The parameters the database has tuned for `problem` and `solver`: in a sqlite database
    /// the row of the problem's `config` columns (MIOpen's `SQLitePerfDb::FindRecord`), in a
    /// text one the line of its 24-field key.
    pub fn tuned_for(&self, problem: &ConvProblem, solver: &str) -> Result<Option<String>> {
        match &self.backing {
            Backing::Text(entries) => Ok(entries
                .get(&problem.to_db_key())
                .and_then(|items| items.iter().find(|(s, _)| s == solver))
                .map(|(_, p)| p.clone())),
            Backing::Sqlite { conn, .. } => {
                let db = |e: rusqlite::Error| Error::Database {
                    path: self.path.display().to_string(),
                    detail: e.to_string(),
                };
                let columns = super::sqlite::config_columns();
                let clause: Vec<String> = columns.iter().map(|c| format!("c.{c} = ?")).collect();
                let mut statement = conn
                    .prepare_cached(&format!(
                        "SELECT p.params FROM perf_db p JOIN config c ON c.id = p.config WHERE {} AND p.solver = ? \
                         ORDER BY p.id LIMIT 1",
                        clause.join(" AND ")
                    ))
                    .map_err(db)?;
                let mut values = super::sqlite::values(&problem.to_perfdb_columns());
                values.push(rusqlite::types::Value::Text(solver.to_string()));
                use rusqlite::OptionalExtension;
                statement
                    .query_row(rusqlite::params_from_iter(values.iter()), |r| r.get::<_, String>(0))
                    .optional()
                    .map_err(db)
            }
        }
    }

    /// How many (problem, solver) entries it holds.
    pub fn entry_count(&self) -> Result<usize> {
        match &self.backing {
            Backing::Text(entries) => Ok(entries.values().map(Vec::len).sum()),
            Backing::Sqlite { conn, .. } => conn
                .query_row("SELECT count(*) FROM perf_db", [], |r| r.get::<_, i64>(0))
                .map(|n| n as usize)
                .map_err(|e| Error::Database {
                    path: self.path.display().to_string(),
                    detail: e.to_string(),
                }),
        }
    }
}

/// The system database chosen, and a line saying which (or that there is none) and why.
#[derive(Debug)]
pub struct Resolved {
    pub db: Option<SystemDb>,
    /// For a summary: `system perf db: ...`.
    pub summary: String,
}

/// What the GPU's databases are named by: `basename` (`gfx906_60`, `gfx942130`), the arch's
/// db id (`gfx906`; the prefix of the sqlite build's inexact search) and its compute units.
#[derive(Debug, Clone)]
pub struct DbName<'a> {
    pub basename: &'a str,
    pub db_id: &'a str,
    pub compute_units: u32,
}

/// The system database of `choice`: a named file (an error when it cannot be read), none, or
/// the installed one MIOpen reads for `name` (`sqlite_build`: as a MIOpen built with
/// `MIOPEN_USE_SQLITE_PERFDB`, which also takes the closest compute-unit count when the exact
/// file is missing). An installed database that exists but cannot be read is an error (going on
/// without it would hide its tuned values): `--system-db none` goes on without it.
pub fn resolve(choice: &Choice, name: &DbName<'_>, sqlite_build: bool) -> Result<Resolved> {
    let describe = |db: &SystemDb, how: &str| -> Result<String> {
        Ok(format!(
            "system perf db: {} ({}, {} tuned entries{how})",
            db.path.display(),
            db.form.as_str(),
            db.entry_count()?
        ))
    };
    match choice {
        Choice::Off => Ok(Resolved {
            db: None,
            summary: "system perf db: none (--system-db none): entries MIOpen has tuned are predicted and written too"
                .into(),
        }),
        Choice::File(path) => {
            let db = SystemDb::open(path)?;
            let summary = describe(&db, "; --system-db")?;
            Ok(Resolved { db: Some(db), summary })
        }
        Choice::Auto => {
            let Some((dir, from)) = installed_dir() else {
                return Ok(Resolved {
                    db: None,
                    summary: format!(
                        "system perf db: none found ($MIOPEN_SYSTEM_DB_PATH is not set and no MIOpen install \
                         in {}): nothing is left to it; give --system-db FILE if MIOpen's is elsewhere",
                        install_roots()
                            .iter()
                            .map(|(r, _)| r.join(DB_SUBDIR).display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            };
            match find_in_dir(&dir, name, sqlite_build) {
                Some((path, exact)) => {
                    let db = SystemDb::open(&path).map_err(|e| match e {
                        Error::Database { path, detail } => Error::Database {
                            path,
                            detail: format!(
                                "{detail} (MIOpen's system perf db, found in {from}; --system-db none goes on without it)"
                            ),
                        },
                        other => other,
                    })?;
                    let how = if exact {
                        format!("; found in {from}")
                    } else {
                        format!(
                            "; found in {from}: no {} perf db there; the closest compute-unit count of {}, as MIOpen 3.5.1 picks its perf db",
                            name.basename, name.db_id
                        )
                    };
                    let summary = describe(&db, &how)?;
                    Ok(Resolved { db: Some(db), summary })
                }
                None => Ok(Resolved {
                    db: None,
                    summary: format!(
                        "system perf db: none found for {} in {} ({from}): nothing is left to it; give --system-db FILE if MIOpen's is elsewhere",
                        name.basename,
                        dir.display()
                    ),
                }),
            }
        }
    }
}

/// Where system databases live below an install root.
const DB_SUBDIR: &str = "share/miopen/db";

/// The install roots a program finds `libMIOpen.so` in, with how each was found: each
/// `$LD_LIBRARY_PATH` directory holding it (its parent), `$ROCM_PATH`, `/opt/rocm`.
fn install_roots() -> Vec<(PathBuf, String)> {
    let mut roots = Vec::new();
    if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
        for dir in std::env::split_paths(&paths) {
            let has_lib = std::fs::read_dir(&dir).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("libMIOpen.so")))
            });
            if has_lib {
                // MIOpen takes the canonical path of the library (symlinks resolved).
                let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
                if let Some(root) = dir.parent() {
                    roots.push((
                        root.to_path_buf(),
                        format!("the install of {}/libMIOpen.so", dir.display()),
                    ));
                }
            }
        }
    }
    if let Some(rocm) = std::env::var_os("ROCM_PATH").filter(|p| !p.is_empty()) {
        roots.push((PathBuf::from(rocm), "$ROCM_PATH".into()));
    }
    roots.push((PathBuf::from("/opt/rocm"), "/opt/rocm".into()));
    roots
}

/// The directory MIOpen reads system databases from, and how it was found: `$MIOPEN_SYSTEM_DB_PATH`
/// when set (whether or not it exists, as MIOpen), else the first install root's
/// `share/miopen/db` that exists. None when there is no such directory.
pub fn installed_dir() -> Option<(PathBuf, String)> {
    if let Some(p) = std::env::var_os("MIOPEN_SYSTEM_DB_PATH").filter(|p| !p.is_empty()) {
        let dir = PathBuf::from(p);
        let from = format!("$MIOPEN_SYSTEM_DB_PATH={}", dir.display());
        return Some((dir, from));
    }
    install_roots().into_iter().find_map(|(root, how)| {
        let dir = root.join(DB_SUBDIR);
        dir.is_dir().then(|| {
            let from = format!("{} ({how})", dir.display());
            (dir, from)
        })
    })
}

/// The system database of `name` in `dir`: the exact file in any form (the build's own form
/// first), else the closest compute-unit count among the files of the same db id in any form
/// (MIOpen 3.5.1's `GetPerfDbPathFile` rule, which its sqlite build applies to `*.db`; tuneinfer
/// applies it to `.db.txt` and the bzip2 forms too, so a directory holding only `gfx90a68.db.txt`
/// serves `gfx90a6e`). The bool says whether the name was exact.
pub fn find_in_dir(dir: &Path, name: &DbName<'_>, sqlite_build: bool) -> Option<(PathBuf, bool)> {
    let forms: [&str; 4] = if sqlite_build {
        [".db", ".db.txt", ".db.bz2", ".db.txt.bz2"]
    } else {
        [".db.txt", ".db", ".db.txt.bz2", ".db.bz2"]
    };
    for ext in forms {
        let path = dir.join(format!("{}{ext}", name.basename));
        if path.is_file() {
            return Some((path, true));
        }
    }
    // GetPerfDbPathFile's inexact search: regular files whose stem (the name without the form's
    // extension) starts with the db id; the count after the first '_' (decimal) or else after
    // the db id (hex); the smallest distance to the device's count wins; on a tie, the build's
    // own form, then the first name.
    let mut best: Option<(u64, usize, PathBuf)> = None;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).collect();
    // MIOpen walks the directory in its own order; a sorted walk makes a tie deterministic.
    entries.sort();
    for path in entries {
        let Some(file_name) = path.file_name().and_then(|s| s.to_str()) else {
            continue;
        };
        // The longest form first: `x.db.txt.bz2` is not `x.db.txt` + `.bz2`'s stem `x.db.txt`.
        let mut by_length = forms;
        by_length.sort_by_key(|f| std::cmp::Reverse(f.len()));
        let Some((form, stem)) = by_length
            .iter()
            .find_map(|f| file_name.strip_suffix(f).map(|stem| (*f, stem)))
        else {
            continue;
        };
        // A stem with a dot is another file (`gfx90a68.HIP.fdb`, a user db): not a perf db.
        if stem.contains('.') || !stem.starts_with(name.db_id) || !path.is_file() {
            continue;
        }
        let count = match stem.find('_') {
            Some(pos) => stoi(&stem[pos + 1..], 10),
            None => stoi(&stem[name.db_id.len()..], 16),
        };
        let Some(count) = count else { continue };
        let distance = (count - i64::from(name.compute_units)).unsigned_abs();
        let rank = forms.iter().position(|f| *f == form).unwrap_or(forms.len());
        if best.as_ref().is_none_or(|(d, r, _)| (distance, rank) < (*d, *r)) {
            best = Some((distance, rank, path));
        }
    }
    best.map(|(_, _, p)| (p, false))
}

/// `std::stoi(text, nullptr, radix)`: leading white space, an optional sign, then the longest run
/// of digits (at least one); None where stoi throws.
fn stoi(text: &str, radix: u32) -> Option<i64> {
    let t = text.trim_start();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let t = if radix == 16 {
        t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t)
    } else {
        t
    };
    let digits: String = t.chars().take_while(|c| c.is_digit(radix)).collect();
    if digits.is_empty() {
        return None;
    }
    let v = i64::from_str_radix(&digits, radix).ok()?;
    if v > i64::from(i32::MAX) {
        return None;
    }
    Some(if negative { -v } else { v })
}

fn unbzip2(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    crate::format::bunzip2(bytes).map_err(|e| Error::Database {
        path: path.display().to_string(),
        detail: format!("not a readable bzip2 file: {e}"),
    })
}

/// Errors about the scratch copy name the compressed file the user gave.
fn rename_error(e: Error, path: &Path) -> Error {
    match e {
        Error::Database { detail, .. } => Error::Database {
            path: path.display().to_string(),
            detail,
        },
        other => other,
    }
}

/// A scratch file removed when dropped.
#[derive(Debug)]
struct Scratch(PathBuf);

impl Scratch {
    fn new(bytes: &[u8]) -> Result<Scratch> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "tuneinfer-sysdb-{}-{}.db",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let scratch = Scratch(path);
        super::replace::write_all_synced(&scratch.0, bytes).or_else(|_| {
            let _ = std::fs::remove_file(&scratch.0);
            std::fs::write(&scratch.0, bytes).map_err(|e| Error::io(&scratch.0, e))
        })?;
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_cu_count_of_the_same_db_id_in_any_form() {
        let dir = std::env::temp_dir().join(format!("tuneinfer-sysdb-find-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let find = |basename: &str, db_id: &str, compute_units: u32| {
            find_in_dir(
                &dir,
                &DbName {
                    basename,
                    db_id,
                    compute_units,
                },
                false,
            )
            .map(|(p, exact)| (p.file_name().unwrap().to_str().unwrap().to_string(), exact))
        };
        // Only MI210's text db: it serves MI250X (110 CUs), as the sqlite build's rule.
        std::fs::write(dir.join("gfx90a68.db.txt"), b"").unwrap();
        // Files that are not perf dbs of the id: a find db, a kernel db, a user db.
        for other in ["gfx90a6e.HIP.fdb.txt", "gfx90a6e.kdb", "gfx90a6e.HIP.3_5_1_.udb.txt"] {
            std::fs::write(dir.join(other), b"").unwrap();
        }
        assert_eq!(find("gfx90a6e", "gfx90a", 110), Some(("gfx90a68.db.txt".into(), false)));
        assert_eq!(find("gfx90a68", "gfx90a", 104), Some(("gfx90a68.db.txt".into(), true)));
        // Another db id is never served: xnack on (MIOpen's `gfx90a_xnack` prefix), another arch.
        assert_eq!(find("gfx90a_xnack6e", "gfx90a_xnack", 110), None);
        assert_eq!(find("gfx1100_48", "gfx1100", 48), None);
        // The closest count wins across forms (MI300X 304 = 0x130 and MI300A 228 = 0xe4 for
        // MI308X's 80), and on a tie the build's own form.
        std::fs::write(dir.join("gfx942130.db.txt.bz2"), b"").unwrap();
        std::fs::write(dir.join("gfx942e4.db"), b"").unwrap();
        assert_eq!(find("gfx94250", "gfx942", 80), Some(("gfx942e4.db".into(), false)));
        std::fs::write(dir.join("gfx942e4.db.txt"), b"").unwrap();
        assert_eq!(find("gfx94250", "gfx942", 80), Some(("gfx942e4.db.txt".into(), false)));
        assert_eq!(
            find("gfx94212c", "gfx942", 300),
            Some(("gfx942130.db.txt.bz2".into(), false))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stoi_reads_as_cpp_does() {
        assert_eq!(stoi("60", 10), Some(60));
        assert_eq!(stoi("60abc", 10), Some(60));
        assert_eq!(stoi("130", 16), Some(0x130));
        assert_eq!(stoi("6e", 16), Some(110));
        assert_eq!(stoi("", 10), None);
        assert_eq!(stoi("xnack", 10), None);
        assert_eq!(stoi(" -3", 10), Some(-3));
    }
}
