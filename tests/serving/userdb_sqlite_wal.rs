//! A sqlite user database is merged in place through SQLite: a MIOpen process that has it open
//! in WAL mode with a write pending, or one that crashed and left its `-wal` behind, loses
//! nothing, and `pragma integrity_check` stays `ok`.
//!
//! The MIOpen process is a stand-in in a child process (this test binary run again): it opens
//! the database as MIOpen's `SQLitePerfDb` does for a user database (`src/sqlite_db.cpp`,
//! `src/include/miopen/sqlite_db.hpp`: `sqlite3_open_v2(READWRITE|CREATE)`, a 60 s busy
//! timeout, `PRAGMA journal_mode=WAL;`, the tables of `CreateQuery` when missing) and writes as
//! its `UpdateUnsafe` does (`INSERT OR IGNORE INTO config(...)`, then `INSERT OR REPLACE INTO
//! perf_db(config, solver, params) VALUES((SELECT id FROM config WHERE ...), ?, ?)`). Entries
//! are checked with plain SQL, their keys built by hand from the columns.

#[allow(unused_imports)]
use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use common::CONFIG_INT_COLUMNS as INT_COLUMNS;
use tuneinfer::problem::{parse_line, ConvProblem, InputLine};
use tuneinfer::userdb::{self, Entry, Format, Target};

const TEXT_COLUMNS: [&str; 3] = ["layout", "data_type", "direction"];

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-wal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The stand-in's values of a 24-field key: the text columns, then the integer ones.
fn key_values(key: &str) -> (Vec<String>, Vec<i64>) {
    let f: Vec<&str> = key.split('x').collect();
    assert_eq!(f.len(), 24, "{key}");
    (
        f[21..].iter().map(|s| s.to_string()).collect(),
        f[..21].iter().map(|s| s.parse().unwrap()).collect(),
    )
}

/// MIOpen's `CreateQuery` for `config` and its `perf_db` statements.
fn miopen_create(conn: &rusqlite::Connection) {
    let mut config = String::from("CREATE TABLE IF NOT EXISTS `config` (`id` INTEGER PRIMARY KEY ASC");
    for c in TEXT_COLUMNS {
        config.push_str(&format!(",`{c}` TEXT NOT NULL"));
    }
    for c in INT_COLUMNS {
        config.push_str(&format!(",`{c}` INT NOT NULL"));
    }
    config.push_str(&format!(
        ");CREATE UNIQUE INDEX IF NOT EXISTS `idx_config` ON config( {}, {} );",
        TEXT_COLUMNS.join(","),
        INT_COLUMNS.join(",")
    ));
    conn.execute_batch(&config).unwrap();
    conn.execute_batch(
        "CREATE TABLE  IF NOT EXISTS `perf_db` (`id` INTEGER PRIMARY KEY ASC,`solver` TEXT NOT NULL,\
         `config` INTEGER NOT NULL,`params` TEXT NOT NULL);CREATE UNIQUE INDEX IF NOT EXISTS `idx_perf_db` \
         ON perf_db(solver, config);",
    )
    .unwrap();
}

/// MIOpen's `UpdateUnsafe`.
fn miopen_store(conn: &rusqlite::Connection, key: &str, solver: &str, params: &str) {
    use rusqlite::types::Value;
    let (texts, ints) = key_values(key);
    let mut values: Vec<Value> = texts.into_iter().map(Value::Text).collect();
    values.extend(ints.into_iter().map(Value::Integer));
    let names: Vec<&str> = TEXT_COLUMNS.iter().chain(INT_COLUMNS.iter()).copied().collect();
    conn.execute(
        &format!(
            "INSERT OR IGNORE INTO config( {} ) VALUES( {} );",
            names.join(","),
            vec!["?"; names.len()].join(",")
        ),
        rusqlite::params_from_iter(values.iter()),
    )
    .unwrap();
    let clause: Vec<String> = names.iter().map(|n| format!("{n} = ?")).collect();
    values.push(Value::Text(solver.into()));
    values.push(Value::Text(params.into()));
    conn.execute(
        &format!(
            "INSERT OR REPLACE INTO perf_db(config, solver, params) VALUES((SELECT id FROM config WHERE ( {} ) ) , ? , ?);",
            clause.join(" AND ")
        ),
        rusqlite::params_from_iter(values.iter()),
    )
    .unwrap();
}

/// The stand-in: run by the tests below in a child process, it does what its standard input
/// says, a line at a time, answering `stand-in: ok` after each: `put KEY SOLVER PARAMS`, `begin`
/// (a write transaction left open), `commit`, `crash` (abort: no checkpoint, no cleanup); at
/// the end of its input it closes the database as MIOpen does at exit.
#[test]
fn miopen_stand_in() {
    let Some(path) = std::env::var_os("TUNEINFER_MIOPEN_STAND_IN") else {
        return;
    };
    let conn = rusqlite::Connection::open_with_flags(
        &path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE,
    )
    .unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(60)).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL;", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    miopen_create(&conn);
    let say = |what: &str| {
        println!("stand-in: {what}");
        std::io::stdout().flush().unwrap();
    };
    say("ready");
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["put", key, solver, params] => miopen_store(&conn, key, solver, params),
            ["begin"] => conn.execute_batch("BEGIN IMMEDIATE").unwrap(),
            ["commit"] => conn.execute_batch("COMMIT").unwrap(),
            ["crash"] => std::process::abort(),
            other => panic!("stand-in: unknown command {other:?}"),
        }
        say("ok");
    }
    drop(conn);
}

struct StandIn {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl StandIn {
    fn start(db: &Path) -> StandIn {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &common::test_name(module_path!(), "miopen_stand_in"), "--nocapture", "--test-threads", "1"])
            .env("TUNEINFER_MIOPEN_STAND_IN", db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut s = StandIn { child, input, output };
        s.expect("ready");
        s
    }

    fn expect(&mut self, what: &str) {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the stand-in ended before '{what}'"
            );
            // The harness may print `test miopen_stand_in ... ` before it on the same line.
            if let Some(at) = line.find("stand-in: ") {
                assert_eq!(line[at + "stand-in: ".len()..].trim(), what);
                return;
            }
        }
    }

    fn tell(&mut self, command: &str) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{command}").unwrap();
        input.flush().unwrap();
        if command != "crash" {
            self.expect("ok");
        }
    }

    fn finish(mut self) {
        drop(self.input.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the stand-in failed: {status}");
    }

    fn crash(mut self) {
        self.tell("crash");
        drop(self.input.take());
        let status = self.child.wait().unwrap();
        assert!(!status.success(), "the stand-in did not crash");
    }
}

/// `pragma integrity_check` and every (24-field key, solver, params), by plain SQL.
fn check(db: &Path) -> (String, Vec<(String, String, String)>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    let select: Vec<String> = INT_COLUMNS
        .iter()
        .chain(TEXT_COLUMNS.iter())
        .map(|c| format!("c.{c}"))
        .collect();
    let mut st = conn
        .prepare(&format!(
            "SELECT {}, p.solver, p.params FROM perf_db p JOIN config c ON c.id = p.config ORDER BY p.id",
            select.join(", ")
        ))
        .unwrap();
    let rows = st
        .query_map([], |r| {
            let mut fields: Vec<String> = (0..21).map(|i| r.get::<_, i64>(i).unwrap().to_string()).collect();
            for i in 21..24 {
                fields.push(r.get(i)?);
            }
            Ok((fields.join("x"), r.get(24)?, r.get(25)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    (integrity, rows)
}

fn problem(line: &str) -> ConvProblem {
    match parse_line(line) {
        Ok(InputLine::Problems(mut p)) if p.len() == 1 => p.remove(0),
        other => panic!("{line}: {other:?}"),
    }
}

/// A forward 1x1 problem with `c` input channels, and its hand-built 24-field key.
fn key_of(c: u32) -> (ConvProblem, String) {
    let p = problem(&format!(
        "conv -n 8 -c {c} -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 1"
    ));
    let key = format!("2x{c}x14x14x1x1x1x1x64x8x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP32xF");
    (p, key)
}

fn entries(cs: &[u32], params: &str) -> Vec<Entry> {
    cs.iter()
        .map(|&c| {
            let (problem, key) = key_of(c);
            Entry {
                key,
                problem,
                solver: "ConvAsm1x1U",
                params: params.into(),
            }
        })
        .collect()
}

fn target(path: &Path) -> Target {
    Target {
        path: path.to_path_buf(),
        format: Format::Sqlite,
        replace: false,
        lock_wait: std::time::Duration::from_secs(30),
    }
}

fn has(rows: &[(String, String, String)], c: u32, solver: &str, params: &str) -> bool {
    let (_, key) = key_of(c);
    rows.iter().any(|r| r.0 == key && r.1 == solver && r.2 == params)
}

fn side(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

#[test]
fn a_running_miopen_with_a_pending_write_loses_nothing() {
    let dir = temp_dir("held");
    let db = dir.join("gfx906_60_1.1.0.udb");
    // The database as tuneinfer first wrote it.
    userdb::merge(&target(&db), &entries(&[16, 24], "1,16,1,64,3,2,1,4"), false).unwrap();
    // MIOpen runs: writes one entry (committed, in its -wal), and has a second one pending.
    let mut miopen = StandIn::start(&db);
    let (_, a) = key_of(32);
    miopen.tell(&format!("put {a} ConvBinWinogradRxSf3x2 59"));
    miopen.tell("begin");
    let (_, b) = key_of(40);
    miopen.tell(&format!("put {b} ConvAsm1x1U 2,16,1,64,3,2,1,4"));
    assert!(side(&db, "-wal").exists(), "MIOpen's -wal is not there");
    // tuneinfer merges meanwhile: it waits for MIOpen's write, which is committed a little later.
    let merge = std::thread::spawn({
        let db = db.clone();
        move || userdb::merge(&target(&db), &entries(&[16, 48, 56], "1,8,1,64,3,2,1,4"), false)
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    miopen.tell("commit");
    let merged = merge.join().unwrap().unwrap();
    assert_eq!((merged.counts.added, merged.counts.present), (2, 1));
    assert!(merged.written);
    // MIOpen goes on writing after the merge, into the same database.
    let (_, c) = key_of(64);
    miopen.tell(&format!("put {c} ConvAsm1x1U 4,8,4,16,1,4,1,8"));
    let expect = |rows: &[(String, String, String)], when: &str| {
        for (c, solver, params) in [
            (16, "ConvAsm1x1U", "1,16,1,64,3,2,1,4"),
            (24, "ConvAsm1x1U", "1,16,1,64,3,2,1,4"),
            (32, "ConvBinWinogradRxSf3x2", "59"),
            (40, "ConvAsm1x1U", "2,16,1,64,3,2,1,4"),
            (48, "ConvAsm1x1U", "1,8,1,64,3,2,1,4"),
            (56, "ConvAsm1x1U", "1,8,1,64,3,2,1,4"),
            (64, "ConvAsm1x1U", "4,8,4,16,1,4,1,8"),
        ] {
            assert!(has(rows, c, solver, params), "{when}: c={c} {solver} lost: {rows:?}");
        }
        assert_eq!(rows.len(), 7, "{when}: {rows:?}");
    };
    // Read while MIOpen still has it open, then after it closed it.
    let (integrity, rows) = check(&db);
    assert_eq!(integrity, "ok");
    expect(&rows, "MIOpen running");
    miopen.finish();
    let (integrity, rows) = check(&db);
    assert_eq!(integrity, "ok");
    expect(&rows, "MIOpen closed");
    // The backup is a sound database with what was there before the merge.
    let backup = merged.backup.expect("no backup");
    assert_eq!(backup, userdb::backup_path(&db));
    let (integrity, rows) = check(&backup);
    assert_eq!(integrity, "ok");
    assert!(has(&rows, 16, "ConvAsm1x1U", "1,16,1,64,3,2,1,4") && has(&rows, 32, "ConvBinWinogradRxSf3x2", "59"));
    assert!(!has(&rows, 48, "ConvAsm1x1U", "1,8,1,64,3,2,1,4"));
    // No temporary file is left beside the database.
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crashed_miopen_with_its_wal_left_behind_loses_nothing() {
    let dir = temp_dir("crash");
    let db = dir.join("gfx906_60_1.1.0.udb");
    // MIOpen made the database, wrote two entries and crashed: they are only in its -wal.
    let mut miopen = StandIn::start(&db);
    let (_, a) = key_of(16);
    let (_, b) = key_of(24);
    miopen.tell(&format!("put {a} ConvAsm1x1U 1,16,1,64,3,2,1,4"));
    miopen.tell(&format!("put {b} ConvBinWinogradRxSf3x2 60"));
    miopen.crash();
    let wal = side(&db, "-wal");
    assert!(
        std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0) > 0,
        "the crash left no -wal: the case is not tested"
    );
    // `tuneinfer userdb --format sqlite`, a process of its own, merges into it.
    let no_system_db = dir.join("no-system-db");
    std::fs::create_dir_all(&no_system_db).unwrap();
    let input = "conv -n 8 -c 32 -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 1\n\
                 conv -n 8 -c 16 -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 1\n";
    let mut child = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args([
            "userdb",
            "--arch",
            "gfx906_60",
            "--device",
            "cpu",
            "--solver",
            "ConvAsm1x1U",
            "--format",
            "sqlite",
            "--out",
            dir.to_str().unwrap(),
        ])
        .env_remove("TUNEINFER_MODELS")
        // No system perf db (an empty directory), whatever is installed here.
        .env("MIOPEN_SYSTEM_DB_PATH", &no_system_db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (integrity, rows) = check(&db);
    assert_eq!(integrity, "ok");
    // MIOpen's entries are all there, the one of c=16 kept (not replaced), c=32 added.
    assert!(has(&rows, 16, "ConvAsm1x1U", "1,16,1,64,3,2,1,4"), "{rows:?}");
    assert!(has(&rows, 24, "ConvBinWinogradRxSf3x2", "60"), "{rows:?}");
    let (_, key32) = key_of(32);
    assert!(
        rows.iter().any(|r| r.0 == key32 && r.1 == "ConvAsm1x1U"),
        "{rows:?}\n{stdout}"
    );
    assert_eq!(rows.len(), 3, "{rows:?}");
    // The backup holds what MIOpen wrote before it crashed.
    let (integrity, rows) = check(&userdb::backup_path(&db));
    assert_eq!(integrity, "ok");
    assert!(has(&rows, 16, "ConvAsm1x1U", "1,16,1,64,3,2,1,4") && has(&rows, 24, "ConvBinWinogradRxSf3x2", "60"));
    // MIOpen opens it again and finds everything.
    let miopen = StandIn::start(&db);
    miopen.finish();
    let (integrity, rows) = check(&db);
    assert_eq!((integrity.as_str(), rows.len()), ("ok", 3));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_dry_run_sees_the_wal_and_writes_nothing() {
    let dir = temp_dir("dry");
    let db = dir.join("gfx906_60_1.1.0.udb");
    let mut miopen = StandIn::start(&db);
    let (_, a) = key_of(16);
    miopen.tell(&format!("put {a} ConvAsm1x1U 1,16,1,64,3,2,1,4"));
    miopen.crash();
    let before: Vec<(String, Vec<u8>)> = {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let merged = userdb::merge(&target(&db), &entries(&[16, 24], "1,8,1,64,3,2,1,4"), true).unwrap();
    // The entry only in the -wal is seen as present.
    assert_eq!((merged.counts.added, merged.counts.present), (1, 1));
    assert!(!merged.written);
    let mut after: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    after.sort();
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&after), names(&before));
    // The main file and its -wal are unchanged (the -shm index may be rebuilt by a reader).
    for ((n, b), (_, a)) in before.iter().zip(&after) {
        if !n.ends_with("-shm") {
            assert!(a == b, "{n} changed");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
