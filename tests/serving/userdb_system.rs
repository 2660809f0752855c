//! MIOpen's system perf database by default: `userdb` never writes a (problem, solver) the
//! system database has tuned (a user entry would hide the tuned value), and `predict`/`batch`
//! answer it with the tuned value itself (`source perf-db`), in every form MIOpen ships the
//! database (sqlite `.db`, text `.db.txt`, bzip2 `.db.txt.bz2`), found where MIOpen finds it.
//!
//! Goldens from outside the code under test: the tuned rows are read from MIOpen's own
//! `gfx906_60.db` (../shared/miopen) with plain SQL here, their 24-field keys built by hand
//! (the `config` columns in MIOpen's `Visit` order joined by `x`, `SerializeKey`); the places
//! and names follow MIOpen's `src/db_path.cpp.in` (`GetSystemDbPath`: `$MIOPEN_SYSTEM_DB_PATH`,
//! else `{install}/share/miopen/db`) and `execution_context.hpp` (`GetPerfDbPathFile`: the exact
//! `{basename}.db.txt` / `.db`, else the perf db of the closest CU count of the db id, in any form).

#[allow(unused_imports)]
use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::CONFIG_INT_COLUMNS as INT_COLUMNS;

const SOLVER: &str = "ConvAsm1x1U";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-sysdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn system_sqlite() -> PathBuf {
    common::perfdb_dir().join("gfx906_60.db")
}

/// Every (24-field key, params) of `solver` in a sqlite perf database, in row order, by plain SQL.
fn rows_of(db: &Path, solver: &str) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let select: Vec<String> = INT_COLUMNS.iter().map(|c| format!("c.{c}")).collect();
    let mut st = conn
        .prepare(&format!(
            "SELECT {}, c.layout, c.data_type, c.direction, p.params FROM perf_db p JOIN config c ON c.id = p.config \
             WHERE p.solver = ?1 ORDER BY p.id",
            select.join(", ")
        ))
        .unwrap();
    let rows = st
        .query_map([solver], |r| {
            let mut fields: Vec<String> = (0..21).map(|i| r.get::<_, i64>(i).unwrap().to_string()).collect();
            for i in 21..24 {
                fields.push(r.get::<_, String>(i)?);
            }
            Ok((fields.join("x"), r.get::<_, String>(24)?))
        })
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// A sample of tuned (key, params) of ConvAsm1x1U (FP32 forward NCHW, one in `step`), and
/// problems that differ from some of them by the batch size only and are not tuned.
fn sample() -> (Vec<(String, String)>, Vec<String>) {
    let all = rows_of(&system_sqlite(), SOLVER);
    let keys: HashSet<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
    // Rows of problems tuneinfer's solver takes (MIOpen's tuning covered some it no longer
    // applies to: those are neither predicted nor counted).
    let solver = tuneinfer::solvers::by_name(SOLVER).unwrap();
    let target = tuneinfer::solvers::Target::new("gfx906_60");
    let fwd: Vec<&(String, String)> = all
        .iter()
        .filter(|(k, _)| k.ends_with("xNCHWxFP32xF"))
        .filter(|(k, _)| {
            solver
                .check(&target, &tuneinfer::problem::ConvProblem::from_db_key(k).unwrap())
                .is_ok()
        })
        .collect();
    assert!(fwd.len() > 100, "{} rows", fwd.len());
    let tuned: Vec<(String, String)> = fwd
        .iter()
        .step_by(fwd.len() / 24)
        .take(24)
        .map(|r| (*r).clone())
        .collect();
    let mut untuned = Vec::new();
    for (key, _) in &tuned {
        let mut fields: Vec<&str> = key.split('x').collect();
        for n in ["3", "5", "7", "11", "13"] {
            fields[9] = n;
            let k = fields.join("x");
            if !keys.contains(k.as_str())
                && solver
                    .check(&target, &tuneinfer::problem::ConvProblem::from_db_key(&k).unwrap())
                    .is_ok()
            {
                untuned.push(k);
                break;
            }
        }
    }
    assert!(untuned.len() >= 20);
    (tuned, untuned)
}

fn text_db(tuned: &[(String, String)]) -> String {
    tuned.iter().map(|(k, p)| format!("{k}={SOLVER}:{p}\n")).collect()
}

fn bzip2_of(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap()
}

/// The three forms of the system database, each alone in a directory named by MIOpen's file
/// name: (form, directory, file).
fn system_dirs(root: &Path, tuned: &[(String, String)]) -> Vec<(&'static str, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let dir = root.join("sys-sqlite");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gfx906_60.db");
    std::os::unix::fs::symlink(system_sqlite(), &file).unwrap();
    out.push(("sqlite", dir, file));
    let dir = root.join("sys-text");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gfx906_60.db.txt");
    std::fs::write(&file, text_db(tuned)).unwrap();
    out.push(("text", dir, file));
    let dir = root.join("sys-bz2");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gfx906_60.db.txt.bz2");
    std::fs::write(&file, bzip2_of(&text_db(tuned))).unwrap();
    out.push(("bzip2 text", dir, file));
    out
}

fn run(args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
    cmd.args(args)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_USER_DB_PATH")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH")
        .env_remove("LD_LIBRARY_PATH")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The (key, solver) -> params of a text user database, read by hand (`KEY=ID:VALUES;...`).
fn read_text_udb(path: &Path) -> HashMap<(String, String), String> {
    let mut out = HashMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let (key, items) = line.split_once('=').unwrap();
        for item in items.split(';') {
            let (solver, params) = item.split_once(':').unwrap();
            out.entry((key.to_string(), solver.to_string()))
                .or_insert(params.to_string());
        }
    }
    out
}

/// The same of a sqlite user database, by plain SQL.
fn read_sqlite_udb(path: &Path) -> HashMap<(String, String), String> {
    let mut out = HashMap::new();
    for solver in [SOLVER] {
        for (k, p) in rows_of(path, solver) {
            out.insert((k, solver.to_string()), p);
        }
    }
    out
}

/// The number in the `system-db` column of the solver's summary row.
fn system_column(stdout: &str) -> usize {
    let header = stdout.lines().find(|l| l.starts_with("solver")).expect("no table");
    let col = header.split_whitespace().position(|w| w == "system-db").unwrap();
    let row = stdout.lines().find(|l| l.starts_with(SOLVER)).expect("no solver row");
    row.split_whitespace().nth(col).unwrap().parse().unwrap()
}

const VERSION: &str = "HIP.3_2_0_36bb7fd4a";

fn userdb_args<'a>(out: &'a str, format: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "userdb",
        "--arch",
        "gfx906_60",
        "--device",
        "cpu",
        "--solver",
        SOLVER,
        "--out",
        out,
        "--format",
        format,
    ];
    if format == "text" {
        args.extend(["--miopen-version", VERSION]);
    }
    args
}

fn udb_path(out: &Path, format: &str) -> PathBuf {
    match format {
        "text" => out.join(format!("gfx906_60.{VERSION}.udb.txt")),
        _ => out.join("gfx906_60_1.1.0.udb"),
    }
}

fn read_udb(out: &Path, format: &str) -> HashMap<(String, String), String> {
    match format {
        "text" => read_text_udb(&udb_path(out, format)),
        _ => read_sqlite_udb(&udb_path(out, format)),
    }
}

#[test]
fn userdb_leaves_what_the_system_db_tuned_in_every_form() {
    let root = temp_dir("userdb");
    let (tuned, untuned) = sample();
    let input: String = tuned
        .iter()
        .map(|(k, _)| k.clone())
        .chain(untuned.iter().cloned())
        .map(|k| k + "\n")
        .collect();
    for (i, (form, dir, file)) in system_dirs(&root, &tuned).into_iter().enumerate() {
        // Both user formats: text for some system forms, sqlite for others.
        let format = if i % 2 == 0 { "text" } else { "sqlite" };
        let out = root.join(format!("udb-{i}"));
        let out_s = out.to_str().unwrap();
        // No --system-db: found in $MIOPEN_SYSTEM_DB_PATH as MIOpen finds it.
        let o = run(
            &userdb_args(out_s, format),
            &[("MIOPEN_SYSTEM_DB_PATH", dir.to_str().unwrap())],
            &input,
        );
        let stdout = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{form}: {stdout}{}", text(&o.stderr));
        assert!(
            stdout.contains(&format!("system perf db: {} ({form},", file.display())),
            "{form}: the summary does not name the system db:\n{stdout}"
        );
        let written = read_udb(&out, format);
        for (key, params) in &tuned {
            assert!(
                !written.contains_key(&(key.clone(), SOLVER.to_string())),
                "{form}: {key} {SOLVER} is tuned in the system db ({params}) but was written to the user db"
            );
        }
        assert_eq!(system_column(&stdout), tuned.len(), "{form}:\n{stdout}");
        let new = untuned
            .iter()
            .filter(|k| written.contains_key(&((*k).clone(), SOLVER.to_string())))
            .count();
        assert!(
            new >= untuned.len() / 2,
            "{form}: only {new} untuned problems written\n{stdout}"
        );
        // --system-db FILE names the same file: the same result in a new directory.
        let out2 = root.join(format!("udb-{i}-named"));
        let mut args = userdb_args(out2.to_str().unwrap(), format);
        args.extend(["--system-db", file.to_str().unwrap()]);
        let o = run(&args, &[], &input);
        assert_eq!(o.status.code(), Some(0), "{form}: {}", text(&o.stderr));
        assert_eq!(read_udb(&out2, format), written, "{form}: --system-db FILE");
        // --system-db none: the tuned problems are predicted and written too (the check above
        // can fail).
        let out3 = root.join(format!("udb-{i}-none"));
        let mut args = userdb_args(out3.to_str().unwrap(), format);
        args.extend(["--system-db", "none"]);
        let o = run(&args, &[("MIOPEN_SYSTEM_DB_PATH", dir.to_str().unwrap())], &input);
        let stdout = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{form}: {}", text(&o.stderr));
        assert!(stdout.contains("system perf db: none (--system-db none)"), "{stdout}");
        assert_eq!(system_column(&stdout), 0);
        let all = read_udb(&out3, format);
        let hidden = tuned
            .iter()
            .filter(|(k, _)| all.contains_key(&(k.clone(), SOLVER.to_string())))
            .count();
        assert!(
            hidden >= tuned.len() / 2,
            "{form}: only {hidden} tuned problems predicted with --system-db none"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn predict_and_batch_answer_the_tuned_value_itself() {
    let root = temp_dir("predict");
    let (tuned, untuned) = sample();
    let input: String = tuned
        .iter()
        .map(|(k, _)| k.clone())
        .chain(untuned.iter().cloned())
        .map(|k| k + "\n")
        .collect();
    let params: HashMap<&str, &str> = tuned.iter().map(|(k, p)| (k.as_str(), p.as_str())).collect();
    for (form, dir, _) in system_dirs(&root, &tuned) {
        let env = [("MIOPEN_SYSTEM_DB_PATH", dir.to_str().unwrap())];
        let o = run(
            &["batch", "--arch", "gfx906_60", "--device", "cpu", "--solver", SOLVER],
            &env,
            &input,
        );
        assert_eq!(o.status.code(), Some(0), "{form}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        let mut seen = 0;
        for line in out.lines().skip(1) {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 6, "{line}");
            match params.get(cols[0]) {
                Some(p) => {
                    assert_eq!((cols[3], cols[5]), (*p, "perf-db"), "{form}: {line}");
                    seen += 1;
                }
                None => assert_ne!(cols[5], "perf-db", "{form}: {line}"),
            }
        }
        assert_eq!(seen, tuned.len(), "{form}:\n{out}");
        // predict: the tuned value alone on stdout, marked on stderr.
        let (key, p) = &tuned[3];
        let o = run(
            &["predict", "--arch", "gfx906", "--cu", "60", "--device", "cpu", key],
            &env,
            "",
        );
        assert_eq!(o.status.code(), Some(0), "{form}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout).trim(), p.as_str(), "{form}");
        assert!(text(&o.stderr).contains("perf-db"), "{form}: {}", text(&o.stderr));
        // --solver all: rows name the source.
        let o = run(
            &[
                "predict",
                "--arch",
                "gfx906_60",
                "--device",
                "cpu",
                "--solver",
                "all",
                key,
            ],
            &env,
            "",
        );
        let out = text(&o.stdout);
        assert!(
            out.lines()
                .any(|l| l.split('\t').collect::<Vec<_>>()[1..] == [SOLVER, "1", p, "", "perf-db"]),
            "{form}:\n{out}"
        );
        // --system-db none: a prediction, not the lookup.
        let o = run(
            &[
                "predict",
                "--arch",
                "gfx906_60",
                "--device",
                "cpu",
                "--system-db",
                "none",
                "--solver",
                "all",
                key,
            ],
            &env,
            "",
        );
        assert!(!text(&o.stdout).contains("perf-db"), "{}", text(&o.stdout));
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_system_db_is_found_where_miopen_finds_it() {
    let root = temp_dir("places");
    let (tuned, _) = sample();
    let input: String = tuned.iter().map(|(k, _)| k.clone() + "\n").collect();
    let out = root.join("udb");
    let out_s = out.to_str().unwrap();
    let dry = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = userdb_args(out_s, "text");
        args.push("--dry-run");
        args.extend(extra);
        let o = run(&args, env, &input);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    // An install: {root}/share/miopen/db, by $ROCM_PATH ...
    let rocm = root.join("rocm");
    let db_dir = rocm.join("share/miopen/db");
    std::fs::create_dir_all(&db_dir).unwrap();
    std::fs::write(db_dir.join("gfx906_60.db.txt"), text_db(&tuned)).unwrap();
    let stdout = dry(&[], &[("ROCM_PATH", rocm.to_str().unwrap())]);
    assert!(
        stdout.contains(&format!(
            "system perf db: {}",
            db_dir.join("gfx906_60.db.txt").display()
        )),
        "{stdout}"
    );
    assert_eq!(system_column(&stdout), tuned.len());
    // ... by the libMIOpen.so a program loads ($LD_LIBRARY_PATH first) ...
    let other = root.join("other-rocm");
    std::fs::create_dir_all(other.join("lib")).unwrap();
    std::fs::write(other.join("lib/libMIOpen.so.1.0.60200"), b"").unwrap();
    let other_db = other.join("share/miopen/db");
    std::fs::create_dir_all(&other_db).unwrap();
    std::fs::write(other_db.join("gfx906_60.db.txt.bz2"), bzip2_of(&text_db(&tuned[..5]))).unwrap();
    let stdout = dry(
        &[],
        &[
            ("ROCM_PATH", rocm.to_str().unwrap()),
            ("LD_LIBRARY_PATH", other.join("lib").to_str().unwrap()),
        ],
    );
    assert!(
        stdout.contains(&format!(
            "system perf db: {}",
            other_db.join("gfx906_60.db.txt.bz2").display()
        )),
        "{stdout}"
    );
    assert_eq!(system_column(&stdout), 5);
    // ... and $MIOPEN_SYSTEM_DB_PATH before any install.
    let sys = root.join("sys");
    std::fs::create_dir_all(&sys).unwrap();
    std::os::unix::fs::symlink(system_sqlite(), sys.join("gfx906_60.db")).unwrap();
    let stdout = dry(
        &[],
        &[
            ("ROCM_PATH", rocm.to_str().unwrap()),
            ("MIOPEN_SYSTEM_DB_PATH", sys.to_str().unwrap()),
        ],
    );
    assert!(
        stdout.contains(&format!("system perf db: {}", sys.join("gfx906_60.db").display())),
        "{stdout}"
    );
    // None there: said so, and everything is predicted.
    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let stdout = dry(&[], &[("MIOPEN_SYSTEM_DB_PATH", empty.to_str().unwrap())]);
    assert!(stdout.contains("system perf db: none found for gfx906_60"), "{stdout}");
    assert_eq!(system_column(&stdout), 0);
    // MIOpen's sqlite build takes the *.db of the closest CU count when the exact one is
    // missing (gfx906_64 -> gfx906_60.db); tuneinfer takes it for the text format too (MIOpen's
    // text build's search never matches, so a GPU with no database of its own would get none).
    let sq = |format: &str| {
        let mut args = vec![
            "userdb",
            "--arch",
            "gfx906_64",
            "--device",
            "cpu",
            "--solver",
            SOLVER,
            "--out",
            out_s,
        ];
        args.extend(["--format", format, "--dry-run"]);
        if format == "text" {
            args.extend(["--miopen-version", VERSION]);
        }
        let o = run(&args, &[("MIOPEN_SYSTEM_DB_PATH", sys.to_str().unwrap())], &input);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let stdout = sq("sqlite");
    assert!(
        stdout.contains(&format!("system perf db: {}", sys.join("gfx906_60.db").display())),
        "{stdout}"
    );
    assert!(stdout.contains("closest compute-unit count"), "{stdout}");
    let stdout = sq("text");
    assert!(
        stdout.contains(&format!("system perf db: {}", sys.join("gfx906_60.db").display())),
        "{stdout}"
    );
    assert!(stdout.contains("closest compute-unit count"), "{stdout}");
    // A named file that cannot be read is an error, not a silent "none".
    let mut args = userdb_args(out_s, "text");
    args.extend(["--system-db", "/nonexistent/gfx906_60.db"]);
    let o = run(&args, &[], &input);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("/nonexistent/gfx906_60.db"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out.exists(), "a failed run wrote {out:?}");
    let _ = std::fs::remove_dir_all(&root);
}
