//! MIOpen's sqlite perf database (`{basename}_1.1.0.udb` and the system `{basename}.db`):
//! tables `config` (one row per problem, 24 columns) and `perf_db(solver, config, params)`.
//!
//! The schema is written exactly as the system databases hold it (their `sqlite_master`), which
//! has the tables and unique indexes of MIOpen's own `SQLitePerfDb` (`src/sqlite_db.cpp`,
//! `SQLiteSerializable::CreateQuery`); a test compares them with every system database.

use std::path::Path;

use rusqlite::{params_from_iter, Connection, OptionalExtension};

use super::{Entry, MergeCounts, Outcome};
use crate::error::{Error, Result};
use crate::problem::{PerfDbConfigRow, DB_KEY_INT_COLUMNS};

/// The statements that create a perf database, as MIOpen's own `SQLitePerfDb` creates a user
/// database (`src/sqlite_db.cpp`; `SQLiteSerializable::CreateQuery` for `config`: the text
/// columns, then the integer ones, each `NOT NULL`, and a unique index over the text columns,
/// `", "`, the integer columns), in the form sqlite keeps in `sqlite_master` (without
/// `IF NOT EXISTS`). The system databases hold the same tables and indexes, some of them with
/// other spaces in these statements.
pub const SCHEMA: [&str; 4] = [
    "CREATE TABLE `config` (`id` INTEGER PRIMARY KEY ASC,`layout` TEXT NOT NULL,`data_type` TEXT NOT NULL,\
`direction` TEXT NOT NULL,`spatial_dim` INT NOT NULL,`in_channels` INT NOT NULL,`in_h` INT NOT NULL,\
`in_w` INT NOT NULL,`in_d` INT NOT NULL,`fil_h` INT NOT NULL,`fil_w` INT NOT NULL,`fil_d` INT NOT NULL,\
`out_channels` INT NOT NULL,`batchsize` INT NOT NULL,`pad_h` INT NOT NULL,`pad_w` INT NOT NULL,\
`pad_d` INT NOT NULL,`conv_stride_h` INT NOT NULL,`conv_stride_w` INT NOT NULL,`conv_stride_d` INT NOT NULL,\
`dilation_h` INT NOT NULL,`dilation_w` INT NOT NULL,`dilation_d` INT NOT NULL,`bias` INT NOT NULL,\
`group_count` INT NOT NULL)",
    "CREATE UNIQUE INDEX `idx_config` ON config( layout,data_type,direction, spatial_dim,in_channels,in_h,in_w,\
in_d,fil_h,fil_w,fil_d,out_channels,batchsize,pad_h,pad_w,pad_d,conv_stride_h,conv_stride_w,conv_stride_d,\
dilation_h,dilation_w,dilation_d,bias,group_count )",
    "CREATE TABLE `perf_db` (`id` INTEGER PRIMARY KEY ASC,`solver` TEXT NOT NULL,`config` INTEGER NOT NULL,\
`params` TEXT NOT NULL)",
    "CREATE UNIQUE INDEX `idx_perf_db` ON perf_db(solver, config)",
];

/// The columns of `config` after `id`, in table order: the three text columns, then the
/// integer ones in MIOpen's `Visit` order.
pub(super) fn config_columns() -> Vec<&'static str> {
    let mut columns = vec!["layout", "data_type", "direction"];
    columns.extend(DB_KEY_INT_COLUMNS);
    columns
}

pub(super) fn values(row: &PerfDbConfigRow) -> Vec<rusqlite::types::Value> {
    use rusqlite::types::Value;
    let mut v = vec![
        Value::Text(row.layout.clone()),
        Value::Text(row.data_type.clone()),
        Value::Text(row.direction.clone()),
    ];
    let ints = row.int_columns();
    // The integer columns in key order, which is also their table order.
    v.extend(ints.iter().map(|&i| Value::Integer(i)));
    v
}

/// The error of a sqlite call on the database at `path`; a busy database (another process
/// holds its write lock past the wait) says so and what to do.
fn db_error(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e: rusqlite::Error| {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) {
            return Error::io(
                path,
                std::io::Error::other(
                    "the database is locked by another process (a running MIOpen program, or another \
                     tuneinfer userdb) that did not finish its write in time; nothing was written: try \
                     again when it has finished, or wait longer with --lock-wait SECS",
                ),
            );
        }
        Error::Database {
            path: path.display().to_string(),
            detail: e.to_string(),
        }
    }
}

/// Merges `entries` into the database at `path` (created with [`SCHEMA`] when it does not
/// exist or is empty), in one transaction. For a scratch file: a live database is merged
/// with [`merge_in_place`].
pub fn merge(path: &Path, entries: &[(PerfDbConfigRow, &Entry)], replace: bool) -> Result<MergeCounts> {
    let db = db_error(path);
    let mut conn = Connection::open(path).map_err(&db)?;
    let counts = merge_conn(&mut conn, path, entries, replace, true)?;
    conn.close().map_err(|(_, e)| db(e))?;
    Ok(counts)
}

/// What [`merge_in_place`] did.
#[derive(Debug, Clone)]
pub struct InPlace {
    pub counts: MergeCounts,
    /// A transaction changed the database (false when it already had every entry).
    pub written: bool,
    /// Where the previous content was kept (`{path}.bak`), when the database existed and changed.
    pub backup: Option<std::path::PathBuf>,
}

/// Merges `entries` into the live database at `path` through SQLite, in place: one
/// `BEGIN IMMEDIATE` transaction, so that SQLite's own locking and journal (MIOpen keeps its
/// user databases in WAL mode) make a running MIOpen and other writers safe; the file is never
/// copied or renamed, so a process that has it open, or a `-wal` left by a crash, stays
/// consistent with it. Before the merge a consistent snapshot of the database (its `-wal`
/// included) is written with `VACUUM INTO` and, when the merge changed something, kept as
/// `{path}.bak`. `busy`: how long to wait for another process's write lock. A new database gets
/// MIOpen's schema and, as MIOpen's `SQLitePerfDb` sets on a user database, WAL mode.
pub fn merge_in_place(
    path: &Path,
    entries: &[(PerfDbConfigRow, &Entry)],
    replace: bool,
    busy: std::time::Duration,
) -> Result<InPlace> {
    let db = db_error(path);
    let existed = path.exists();
    if !existed && entries.is_empty() {
        return Ok(InPlace {
            counts: MergeCounts::default(),
            written: false,
            backup: None,
        });
    }
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
        | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(path, flags).map_err(&db)?;
    conn.busy_timeout(busy).map_err(&db)?;
    // A file that is not a database fails here, before anything is written.
    let has_tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE type='table'", [], |r| {
            r.get(0)
        })
        .map_err(&db)?;
    if has_tables == 0 {
        // Outside a transaction (a journal mode cannot change inside one); a no-op when another
        // process already uses the database.
        let _: std::result::Result<String, _> = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0));
    }
    let staging = if existed && has_tables > 0 {
        Some(snapshot(&conn, path)?)
    } else {
        None
    };
    let result = merge_conn(&mut conn, path, entries, replace, false);
    let counts = match result {
        Ok(c) => c,
        Err(e) => {
            if let Some(s) = &staging {
                let _ = std::fs::remove_file(s);
            }
            return Err(e);
        }
    };
    conn.close().map_err(|(_, e)| db(e))?;
    let written = counts.added + counts.replaced > 0 || !existed;
    let backup = match staging {
        Some(s) if written => {
            let backup = super::backup_path(path);
            // A stale journal beside an old backup would be applied to the new one.
            for ext in ["-wal", "-shm", "-journal"] {
                let mut name = backup.clone().into_os_string();
                name.push(ext);
                let _ = std::fs::remove_file(std::path::PathBuf::from(name));
            }
            if let Err(e) = std::fs::rename(&s, &backup) {
                let _ = std::fs::remove_file(&s);
                return Err(Error::io(&backup, e));
            }
            Some(backup)
        }
        Some(s) => {
            let _ = std::fs::remove_file(&s);
            None
        }
        None => None,
    };
    Ok(InPlace {
        counts,
        written,
        backup,
    })
}

/// A consistent copy of the database `conn` has open (its committed `-wal` content included),
/// written with `VACUUM INTO` to a new staging file beside `path`; returns the staging path.
fn snapshot(conn: &Connection, path: &Path) -> Result<std::path::PathBuf> {
    let mut name = super::backup_path(path).into_os_string();
    name.push(format!(".{}.tuneinfer-tmp", std::process::id()));
    let staging = std::path::PathBuf::from(name);
    let _ = std::fs::remove_file(&staging);
    let target = staging.to_str().ok_or_else(|| {
        Error::io(
            &staging,
            std::io::Error::other("is not a UTF-8 path: SQLite cannot be given it"),
        )
    })?;
    if let Err(e) = conn.execute("VACUUM INTO ?1", [target]) {
        let _ = std::fs::remove_file(&staging);
        return Err(db_error(path)(e));
    }
    Ok(staging)
}

/// What a merge into the database at `path` would do, computed on a snapshot in a scratch file
/// (the database itself only read).
pub fn dry_run(path: &Path, entries: &[(PerfDbConfigRow, &Entry)], replace: bool) -> Result<MergeCounts> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let scratch = std::env::temp_dir().join(format!(
        "tuneinfer-dry-run-{}-{}.udb",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&scratch);
    let result = (|| {
        if path.exists() {
            let db = db_error(path);
            // Read-only where SQLite can (a WAL database needs its -shm), else read-write: only
            // read either way.
            let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|c| {
                    c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
                    Ok(c)
                })
                .or_else(|_| Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE))
                .map_err(&db)?;
            let target = scratch
                .to_str()
                .ok_or_else(|| Error::io(&scratch, std::io::Error::other("not UTF-8")))?;
            conn.execute("VACUUM INTO ?1", [target]).map_err(&db)?;
        }
        merge(&scratch, entries, replace)
    })();
    let _ = std::fs::remove_file(&scratch);
    result
}

/// The merge itself, in one `BEGIN IMMEDIATE` transaction on `conn` (committed only when it
/// changed something, or `always_commit`).
fn merge_conn(
    conn: &mut Connection,
    path: &Path,
    entries: &[(PerfDbConfigRow, &Entry)],
    replace: bool,
    always_commit: bool,
) -> Result<MergeCounts> {
    let db = db_error(path);
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(&db)?;
    let tables: i64 = tx
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ('config','perf_db')",
            [],
            |r| r.get(0),
        )
        .map_err(&db)?;
    match tables {
        0 => {
            for statement in SCHEMA {
                tx.execute(statement, []).map_err(&db)?;
            }
        }
        2 => {}
        _ => {
            return Err(Error::Database {
                path: path.display().to_string(),
                detail: "has one of MIOpen's tables 'config' and 'perf_db' but not the other: not a perf database"
                    .into(),
            })
        }
    }
    let mut counts = MergeCounts::default();
    {
        let columns = config_columns();
        let where_clause: Vec<String> = columns.iter().map(|c| format!("{c} = ?")).collect();
        let mut find_config = tx
            .prepare(&format!("SELECT id FROM config WHERE {}", where_clause.join(" AND ")))
            .map_err(&db)?;
        let mut insert_config = tx
            .prepare(&format!(
                "INSERT INTO config ({}) VALUES ({})",
                columns.join(","),
                vec!["?"; columns.len()].join(",")
            ))
            .map_err(&db)?;
        let mut find_perf = tx
            .prepare("SELECT id, params FROM perf_db WHERE solver = ?1 AND config = ?2")
            .map_err(&db)?;
        let mut insert_perf = tx
            .prepare("INSERT INTO perf_db (solver, config, params) VALUES (?1, ?2, ?3)")
            .map_err(&db)?;
        let mut update_perf = tx
            .prepare("UPDATE perf_db SET params = ?1 WHERE id = ?2")
            .map_err(&db)?;
        // A (key, solver) given twice: the first one counts.
        let mut given: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
        for (row, entry) in entries {
            if !given.insert((entry.key.as_str(), entry.solver)) {
                counts.note(entry.solver, Outcome::Present);
                continue;
            }
            let v = values(row);
            let config: Option<i64> = find_config
                .query_row(params_from_iter(v.iter()), |r| r.get(0))
                .optional()
                .map_err(&db)?;
            let config = match config {
                Some(id) => id,
                None => {
                    insert_config.execute(params_from_iter(v.iter())).map_err(&db)?;
                    counts.new_keys += 1;
                    tx.last_insert_rowid()
                }
            };
            let existing: Option<(i64, String)> = find_perf
                .query_row(rusqlite::params![entry.solver, config], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .map_err(&db)?;
            match existing {
                None => {
                    insert_perf
                        .execute(rusqlite::params![entry.solver, config, entry.params])
                        .map_err(&db)?;
                    counts.note(entry.solver, Outcome::Added);
                }
                Some((_, params)) if params == entry.params || !replace => counts.note(entry.solver, Outcome::Present),
                Some((id, _)) => {
                    update_perf.execute(rusqlite::params![entry.params, id]).map_err(&db)?;
                    counts.note(entry.solver, Outcome::Replaced);
                }
            }
        }
    }
    if always_commit || tables == 0 || counts.added + counts.replaced > 0 {
        tx.commit().map_err(&db)?;
    } else {
        tx.rollback().map_err(&db)?;
    }
    Ok(counts)
}

/// Every (24-field key, solver, params) of a perf database, read-only.
pub fn read_entries(path: &Path) -> Result<Vec<(String, String, String)>> {
    let conn = crate::data::perfdb::open(path)?;
    let db = |e: rusqlite::Error| Error::Database {
        path: path.display().to_string(),
        detail: e.to_string(),
    };
    let mut statement = conn
        .prepare(&format!(
            "SELECT {}, p.solver, p.params FROM perf_db p JOIN config c ON c.id = p.config ORDER BY p.id",
            config_columns()
                .iter()
                .map(|c| format!("c.{c}"))
                .collect::<Vec<_>>()
                .join(",")
        ))
        .map_err(db)?;
    let rows = statement
        .query_map([], |r| {
            let text = |i: usize| r.get::<_, String>(i);
            let int = |i: usize| r.get::<_, i64>(i);
            let row = PerfDbConfigRow {
                layout: text(0)?,
                data_type: text(1)?,
                direction: text(2)?,
                spatial_dim: int(3)?,
                in_channels: int(4)?,
                in_h: int(5)?,
                in_w: int(6)?,
                in_d: int(7)?,
                fil_h: int(8)?,
                fil_w: int(9)?,
                fil_d: int(10)?,
                out_channels: int(11)?,
                batchsize: int(12)?,
                pad_h: int(13)?,
                pad_w: int(14)?,
                pad_d: int(15)?,
                conv_stride_h: int(16)?,
                conv_stride_w: int(17)?,
                conv_stride_d: int(18)?,
                dilation_h: int(19)?,
                dilation_w: int(20)?,
                dilation_d: int(21)?,
                bias: int(22)?,
                group_count: int(23)?,
            };
            Ok((row.to_db_key(), text(24)?, text(25)?))
        })
        .map_err(db)?;
    rows.collect::<std::result::Result<Vec<_>, _>>().map_err(db)
}
