//! `tuneinfer userdb` and the user perf-db library: the key formats and file lines against
//! goldens derived by hand from MIOpen's serialisation code (`src/conv/problem_description.cpp`
//! `Serialize`, `problem_description.hpp` `Visit`, `src/db_record.cpp` `WriteContents`), the
//! sqlite schema against every system database, merge safety over random databases, faults,
//! MIOpen's lock, and the validity of every entry the command writes.

#[allow(unused_imports)]
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tuneinfer::problem::{parse_line, ConvProblem, InputLine};
use tuneinfer::userdb::{self, text, Entry, Format, Target};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-userdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
    cmd.args(args)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_USER_DB_PATH")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        // A command that fails on its options exits without reading its input.
        let _ = input.write_all(text.as_bytes());
    }
    drop(input);
    child.wait_with_output().expect("wait")
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn one(line: &str) -> ConvProblem {
    match parse_line(line) {
        Ok(InputLine::Problems(mut p)) if p.len() == 1 => p.remove(0),
        other => panic!("{line}: {other:?}"),
    }
}

/// Hand-derived: (MIOpenDriver line, MIOpen's dash key, MIOpen's 24-field key) for F, B, W.
/// Dash key: in-C, in-H, in-W, FyxFx, out-C, out-H, out-W, N, pads, strides, dilations, bias,
/// layout (once for NCHW, else in-weights-out), type, direction, then `_gG` when G != 1, with
/// "in" = x for F and dy for B/W (`Serialize`). 24-field key:
/// spatial_dim, in_channels, in_h, in_w, in_d (1), fil_h, fil_w, fil_d (1), out_channels,
/// batchsize, pad_h, pad_w, pad_d (0), stride h, w, d (0), dilation h, w, d (0), bias,
/// group_count, layout, data type, direction (`Visit` then `SerializeKey`'s `x` joins).
const GOLDEN_KEYS: [(&str, &str, &str); 4] = [
    (
        "conv -n 128 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -F 1",
        "3-32-32-3x3-64-32-32-128-1x1-1x1-1x1-0-NCHW-FP32-F",
        "2x3x32x32x1x3x3x1x64x128x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP32xF",
    ),
    (
        // Backward data: dy is 256 channels of 56x56, dx 64 channels.
        "convfp16 -n 16 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 2",
        "256-56-56-1x1-64-56-56-16-0x0-1x1-1x1-0-NCHW-FP16-B",
        "2x256x56x56x1x1x1x1x64x16x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP16xB",
    ),
    (
        // Backward weights, stride 2: x 1024x14x14 gives dy 2048x7x7; the 24-field key is the
        // example of ../shared/miopen/README.md.
        "conv -n 128 -c 1024 -H 14 -W 14 -k 2048 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -F 4",
        "2048-7-7-1x1-1024-14-14-128-0x0-2x2-1x1-0-NCHW-FP32-W",
        "2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xW",
    ),
    (
        // Grouped, NHWC, bias: the dash key's three layouts and `_g4` suffix; group_count 4 and
        // one layout in the 24 fields.
        "convfp16 -n 8 -c 64 -H 9 -W 11 -k 32 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 4 -b 1 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
        "64-9-11-3x3-32-9-11-8-1x1-1x1-1x1-1-NHWC-NHWC-NHWC-FP16-F_g4",
        "2x64x9x11x1x3x3x1x32x8x1x1x0x1x1x0x1x1x0x1x4xNHWCxFP16xF",
    ),
];

#[test]
fn keys_of_both_forms_match_hand_derived_goldens() {
    for (driver, dash, x24) in GOLDEN_KEYS {
        let p = one(driver);
        // MIOpen's Serialize writes a non-NCHW layout three times (in, weights, out); tuneinfer
        // writes it once and reads both.
        let dash_ours = dash.replace("NHWC-NHWC-NHWC", "NHWC");
        assert_eq!(p.to_perfdb_key(), dash_ours, "{driver}");
        assert_eq!(one(&dash_ours), p, "{dash_ours}");
        assert_eq!(p.to_db_key(), x24, "{driver}");
        assert_eq!(one(dash), p, "{dash}");
        // The 24-field key holds dy's size only (as MIOpen's sqlite rows): the smallest x that
        // gives it is taken (13 for the stride-2 case, whose x is 14).
        assert_eq!(one(x24), p.as_stored_in_sqlite(), "{x24}");
        assert_eq!(one(x24).to_db_key(), x24);
    }
}

#[test]
fn text_lines_match_hand_derived_goldens() {
    // `KEY=ID:VALUES;ID:VALUES` (DbRecord::WriteContents), one line per key.
    let (_, _, f_key) = GOLDEN_KEYS[0];
    let (_, _, w_key) = GOLDEN_KEYS[2];
    let entry = |line: &str, solver: &'static str, params: &str| Entry {
        key: one(line).to_db_key(),
        problem: one(line),
        solver,
        params: params.into(),
    };
    let entries = [
        entry(GOLDEN_KEYS[0].0, "ConvOclDirectFwd", "16,16,32,32,2,2,4,1,2"),
        entry(GOLDEN_KEYS[2].0, "ConvAsmBwdWrW1x1", "1,16,2,4,8,1,2,4,0,1"),
        entry(GOLDEN_KEYS[0].0, "ConvBinWinograd3x3U", "1"),
    ];
    let (out, counts) = text::merge("", &entries, false);
    let expected = format!(
        "{f_key}=ConvOclDirectFwd:16,16,32,32,2,2,4,1,2;ConvBinWinograd3x3U:1\n{w_key}=ConvAsmBwdWrW1x1:1,16,2,4,8,1,2,4,0,1\n"
    );
    assert_eq!(out, expected);
    assert_eq!((counts.added, counts.new_keys, counts.present), (3, 2, 0));
    // A new solver for a key already there goes onto that key's first line (MIOpen reads only
    // the first line of a key); the rest of the file is untouched.
    let existing = format!("# kept\r\n{f_key}=ConvDirectNaiveConvFwd:\r\n{f_key}=Ignored:1\nbroken line");
    let (out, counts) = text::merge(&existing, &entries[..1], false);
    assert_eq!(
        out,
        format!("# kept\r\n{f_key}=ConvDirectNaiveConvFwd:;ConvOclDirectFwd:16,16,32,32,2,2,4,1,2\r\n{f_key}=Ignored:1\nbroken line")
    );
    assert_eq!(counts.new_keys, 0);
}

#[test]
fn log_lines_in_every_form_miopen_writes_them() {
    // The example, MIOpen's `MIOPEN_LOG_DRIVER_COMMAND` format.
    let base = "./bin/MIOpenDriver conv -n 128 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1";
    let expected = one(GOLDEN_KEYS[0].0);
    for prefix in [
        "MIOpen(HIP): Command [LogCmdConvolution] ",
        "MIOpen(HIP): Command [LogCmdFindConvolution] ",
        "MIOpen(OpenCL): Command [LogCmdConvolution] ",
        "MIOpen: Command [LogCmdConvolution] ",
        // MIOPEN_ENABLE_LOGGING_MPMT: the thread id; MIOPEN_ENABLE_LOGGING_ELAPSED_TIME: setw(8).
        "41235 MIOpen(HIP)   0.125: Command [LogCmdConvolution] ",
        "2026-12-01 12:00:01.123 [rank 3] MIOpen(HIP): Command [LogCmdConvolution] ",
    ] {
        let line = format!("{prefix}{base}");
        assert_eq!(one(&line), expected, "{line}");
    }
    // Immediate mode adds `-S solver_id`; long flags as MIOpenDriver takes them.
    assert_eq!(
        one(&format!("MIOpen(HIP): Command [LogCmdConvolution] {base} -S 0")),
        expected
    );
    assert_eq!(
        one("conv --batchsize 128 --in_channels 3 --in_h 32 --in_w 32 --out_channels 64 --fil_h 3 --fil_w 3 --pad_h 1 --pad_w 1 --forw 1"),
        expected
    );
    // -F 0: the three directions MIOpenDriver runs (no -F: the forward problem, as always here).
    assert_eq!(one("conv -n 2 -c 8 -H 7 -W 7 -k 8 -y 1 -x 1").direction.as_char(), 'F');
    for line in [
        "conv -n 2 -c 8 -H 7 -W 7 -k 8 -y 1 -x 1 -F 0",
        "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 2 -c 8 -H 7 -W 7 -k 8 -y 1 -x 1 -F 0",
    ] {
        match parse_line(line) {
            Ok(InputLine::Problems(p)) => {
                let dirs: Vec<char> = p.iter().map(|p| p.direction.as_char()).collect();
                assert_eq!(dirs, ['F', 'B', 'W'], "{line}");
            }
            other => panic!("{line}: {other:?}"),
        }
    }
    match parse_line("conv -n 2 -c 8 -H 7 -W 7 -k 8 -y 1 -x 1 -F 6") {
        Ok(InputLine::Problems(p)) => assert_eq!(p.len(), 2),
        other => panic!("{other:?}"),
    }
    // Other log lines are skipped, never errors.
    for line in [
        "MIOpen(HIP): Info [get_device_name] Raw device name: gfx906:sramecc+:xnack-",
        "MIOpen(HIP): Command [LogCmdBNormFwdTraining] ./bin/MIOpenDriver bnorm -n 128 -c 64 -H 32 -W 32 -m 1 --forw 1",
        "MIOpen(HIP): Warning [ForwardBackwardDataGetWorkSpaceSize] ...",
    ] {
        assert!(matches!(parse_line(line), Ok(InputLine::Skipped(_))), "{line}");
    }
    // A transposed convolution is the one MIOpen runs for it (tests/solvers/transposed.rs).
    assert_eq!(one(&base.replace("-m conv", "-m trans")).direction.as_char(), 'B');
}

#[test]
fn basenames_and_file_names_as_miopen_builds_them() {
    // handle.hpp GetDbBasename: `_N` up to 64 CUs, hex without `_` above.
    assert_eq!(userdb::db_basename("gfx906", 60), "gfx906_60");
    assert_eq!(userdb::db_basename("gfx906", 64), "gfx906_64");
    assert_eq!(userdb::db_basename("gfx90a", 104), "gfx90a68");
    assert_eq!(userdb::db_basename("gfx942", 304), "gfx942130");
    // execution_context.hpp GetUserPerfDbPath; CMake's MIOPEN_USER_DB_SUFFIX.
    assert_eq!(
        userdb::file_name("gfx906_60", Format::Text, "HIP.3_2_0"),
        "gfx906_60.HIP.3_2_0.udb.txt"
    );
    assert_eq!(
        userdb::file_name("gfx942130", Format::Sqlite, ""),
        "gfx942130_1.1.0.udb"
    );
    // A release build's suffix has the tweak (tests/serving/userdb_names.rs has the rest).
    assert!(userdb::suffix_from_version("3.2.0", "gfx906_60").is_err());
    assert_eq!(
        userdb::suffix_from_version("HIP.3_2_0_f6d4a1c", "gfx906_60").unwrap(),
        "HIP.3_2_0_f6d4a1c"
    );
    assert!(userdb::suffix_from_version("../x", "gfx906_60").is_err());
}

fn sqlite_master(path: &Path) -> Vec<(String, String, String, String)> {
    let conn = rusqlite_open(path);
    let mut s = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap();
    s.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get::<_, Option<String>>(3)?.unwrap_or_default(),
        ))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

fn rusqlite_open(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        format!("file:{}?immutable=1", path.display()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap()
}

#[test]
fn the_sqlite_schema_is_the_system_databases_and_reads_back_exactly() {
    let dir = temp_dir("schema");
    let path = dir.join("gfx906_60_1.1.0.udb");
    let entries: Vec<Entry> = GOLDEN_KEYS
        .iter()
        .map(|(line, _, _)| Entry {
            key: one(line).to_db_key(),
            problem: one(line),
            solver: "ConvOclDirectFwd",
            params: "16,16,32,32,2,2,4,1,2".into(),
        })
        .collect();
    let target = Target {
        path: path.clone(),
        format: Format::Sqlite,
        replace: false,
        lock_wait: std::time::Duration::ZERO,
    };
    let merged = userdb::merge(&target, &entries, false).unwrap();
    assert_eq!(merged.counts.added, entries.len());
    // MIOpen's CreateQuery (sqlite_db.hpp), followed by hand: "CREATE TABLE IF NOT EXISTS
    // `config` (`id` INTEGER PRIMARY KEY ASC" then ",`name` TEXT NOT NULL" per text column and
    // ",`name` INT NOT NULL" per integer column (Visit order), ");"; the index "ON config( "
    // text columns joined by ",", then ", ", the integer columns, " );". sqlite keeps the
    // statement without "IF NOT EXISTS".
    let text_cols = ["layout", "data_type", "direction"];
    let int_cols = [
        "spatial_dim",
        "in_channels",
        "in_h",
        "in_w",
        "in_d",
        "fil_h",
        "fil_w",
        "fil_d",
        "out_channels",
        "batchsize",
        "pad_h",
        "pad_w",
        "pad_d",
        "conv_stride_h",
        "conv_stride_w",
        "conv_stride_d",
        "dilation_h",
        "dilation_w",
        "dilation_d",
        "bias",
        "group_count",
    ];
    let mut config_sql = String::from("CREATE TABLE `config` (`id` INTEGER PRIMARY KEY ASC");
    for c in text_cols {
        config_sql.push_str(&format!(",`{c}` TEXT NOT NULL"));
    }
    for c in int_cols {
        config_sql.push_str(&format!(",`{c}` INT NOT NULL"));
    }
    config_sql.push(')');
    let index_sql = format!(
        "CREATE UNIQUE INDEX `idx_config` ON config( {}, {} )",
        text_cols.join(","),
        int_cols.join(",")
    );
    let ours = sqlite_master(&path);
    let sql_of = |name: &str| {
        ours.iter()
            .find(|r| r.1 == name)
            .map(|r| r.3.clone())
            .unwrap_or_default()
    };
    assert_eq!(sql_of("config"), config_sql);
    assert_eq!(sql_of("idx_config"), index_sql);
    assert_eq!(
        sql_of("perf_db"),
        "CREATE TABLE `perf_db` (`id` INTEGER PRIMARY KEY ASC,`solver` TEXT NOT NULL,`config` INTEGER NOT NULL,`params` TEXT NOT NULL)"
    );
    assert_eq!(
        sql_of("idx_perf_db"),
        "CREATE UNIQUE INDEX `idx_perf_db` ON perf_db(solver, config)"
    );
    // The system databases: the same objects, columns and indexes (their statements differ
    // from each other in spaces only).
    let normal = |rows: Vec<(String, String, String, String)>| -> Vec<(String, String, String, String)> {
        rows.into_iter()
            .map(|(a, b, c, d)| (a, b, c, d.split_whitespace().collect::<String>()))
            .collect()
    };
    let columns = |p: &Path| -> Vec<String> {
        let conn = rusqlite_open(p);
        let mut out = Vec::new();
        for table in ["config", "perf_db"] {
            let mut s = conn.prepare(&format!("PRAGMA table_info({table})")).unwrap();
            let cols = s
                .query_map([], |r| {
                    Ok(format!(
                        "{table}.{}:{}:{}:{}",
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, i64>(5)?
                    ))
                })
                .unwrap();
            out.extend(cols.map(|c| c.unwrap()));
        }
        for index in ["idx_config", "idx_perf_db"] {
            let mut s = conn.prepare(&format!("PRAGMA index_info({index})")).unwrap();
            let cols = s
                .query_map([], |r| Ok(format!("{index}.{}", r.get::<_, String>(2)?)))
                .unwrap();
            out.extend(cols.map(|c| c.unwrap()));
        }
        out
    };
    let mut compared = 0;
    for db in common::PERF_DATABASES.iter().filter(|d| d.ends_with(".db")) {
        let system = common::perfdb_dir().join(db);
        if !system.exists() {
            continue;
        }
        assert_eq!(
            normal(ours.clone()),
            normal(sqlite_master(&system)),
            "schema differs from {db}"
        );
        assert_eq!(columns(&path), columns(&system), "columns differ from {db}");
        compared += 1;
    }
    assert_eq!(compared, 4, "system databases under {}", common::perfdb_dir().display());
    // Read back through the library's reader and tuneinfer's training reader.
    let back = userdb::sqlite::read_entries(&path).unwrap();
    let want: Vec<(String, String, String)> = entries
        .iter()
        .map(|e| (e.key.clone(), e.solver.to_string(), e.params.clone()))
        .collect();
    assert_eq!(back, want);
    let rows = tuneinfer::data::perfdb::solver_rows(&path, "ConvOclDirectFwd").unwrap();
    assert!(rows.rejected.is_empty(), "{:?}", rows.rejected);
    let problems: Vec<ConvProblem> = rows.rows.iter().map(|r| r.problem.clone()).collect();
    let expected: Vec<ConvProblem> = entries.iter().map(|e| e.problem.as_stored_in_sqlite()).collect();
    assert_eq!(problems, expected);
    // The text form reads back through the training reader too.
    let text_path = dir.join("gfx906_60.HIP.3_2_0.udb.txt");
    let t = Target {
        path: text_path.clone(),
        format: Format::Text,
        replace: false,
        lock_wait: std::time::Duration::ZERO,
    };
    userdb::merge(&t, &entries, false).unwrap();
    let rows = tuneinfer::data::textdb::solver_rows(&text_path, "ConvOclDirectFwd").unwrap();
    assert!(rows.rejected.is_empty(), "{:?}", rows.rejected);
    let problems: Vec<ConvProblem> = rows.rows.iter().map(|r| r.problem.clone()).collect();
    assert_eq!(problems, expected);
    assert!(rows.rows.iter().all(|r| r.params == "16,16,32,32,2,2,4,1,2"));
    // A second merge of the same entries adds nothing and keeps the file as it is.
    let before = std::fs::read(&path).unwrap();
    let again = userdb::merge(&target, &entries, false).unwrap();
    assert_eq!((again.counts.added, again.counts.present), (0, entries.len()));
    let _ = before;
    let _ = std::fs::remove_dir_all(&dir);
}

/// xorshift64*: the tests' own random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const SOLVERS: [&str; 4] = [
    "ConvAsm1x1U",
    "ConvAsmBwdWrW1x1",
    "ConvOclDirectFwd",
    "ConvBinWinogradRxSf2x3",
];

fn random_problem(rng: &mut Rng) -> ConvProblem {
    let c = 1 + rng.below(64);
    let k = 1 + rng.below(64);
    let hw = 1 + rng.below(20);
    let f = [1, 3][rng.below(2) as usize];
    let dir = [1, 2, 4][rng.below(3) as usize];
    one(&format!(
        "conv -n {} -c {c} -H {hw} -W {hw} -k {k} -y {f} -x {f} -p {} -q {} -F {dir}",
        1 + rng.below(8),
        f / 2,
        f / 2
    ))
}

fn random_entry(rng: &mut Rng, pool: &[ConvProblem]) -> Entry {
    let p = pool[rng.below(pool.len() as u64) as usize].clone();
    Entry {
        key: p.to_db_key(),
        problem: p,
        solver: SOLVERS[rng.below(SOLVERS.len() as u64) as usize],
        params: format!("{},{}", rng.below(9), rng.below(9)),
    }
}

/// A random text database: valid lines (repeated keys and ids too), comments, broken lines,
/// CRLF endings, maybe no final newline.
fn random_text_db(rng: &mut Rng, pool: &[ConvProblem]) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(12) {
        match rng.below(6) {
            0 => out.push_str("# a comment"),
            1 => out.push_str("garbage without an equals sign"),
            _ => {
                let e = random_entry(rng, pool);
                out.push_str(&format!("{}={}:{}", e.key, e.solver, e.params));
                for _ in 0..rng.below(3) {
                    let f = random_entry(rng, pool);
                    out.push_str(&format!(";{}:{}", f.solver, f.params));
                }
            }
        }
        out.push_str(if rng.below(4) == 0 { "\r\n" } else { "\n" });
    }
    if rng.below(3) == 0 && out.ends_with('\n') {
        out.pop();
    }
    out
}

#[test]
fn text_merges_never_lose_or_reorder_anything() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for case in 0..400 {
        let pool: Vec<ConvProblem> = (0..1 + rng.below(6)).map(|_| random_problem(&mut rng)).collect();
        let old = random_text_db(&mut rng, &pool);
        let new: Vec<Entry> = (0..rng.below(10)).map(|_| random_entry(&mut rng, &pool)).collect();
        let replace = rng.below(2) == 0;
        let (merged, counts) = text::merge(&old, &new, replace);
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = merged.split_inclusive('\n').collect();
        assert!(new_lines.len() >= old_lines.len(), "case {case}: lines lost");
        let old_read = text::read_entries(&old);
        let new_read = text::read_entries(&merged);
        for (i, (o, n)) in old_lines.iter().zip(&new_lines).enumerate() {
            let o_body = o.trim_end_matches(['\n', '\r']);
            let n_body = n.trim_end_matches(['\n', '\r']);
            if !replace {
                // Kept byte for byte, or extended at its end with new `;Solver:params` items.
                assert!(n_body.starts_with(o_body), "case {case} line {i}: {o:?} became {n:?}");
                assert!(
                    n_body == o_body || n_body[o_body.len()..].starts_with(';'),
                    "case {case} line {i}"
                );
            }
            // Line endings survive; a last line without one gets one only when lines follow.
            if o.ends_with('\n') {
                assert_eq!(&o[o_body.len()..], &n[n_body.len()..], "case {case} line {i} ending");
            }
        }
        // What MIOpen reads: every old (key, solver) still there, with its old values unless
        // replaced by an entry of the merge; every new entry readable.
        for (key, items) in &old_read {
            let now = &new_read[key];
            for (solver, values) in items {
                let found = now.iter().find(|(s, _)| s == solver).map(|(_, v)| v);
                let replaced_by = new
                    .iter()
                    .find(|e| &e.key == key && e.solver == solver)
                    .map(|e| &e.params);
                match (replace, replaced_by) {
                    (true, Some(p)) => assert_eq!(found, Some(p), "case {case}"),
                    _ => assert_eq!(found, Some(values), "case {case}: {key} {solver} lost"),
                }
            }
        }
        for e in &new {
            let items = new_read
                .get(&e.key)
                .unwrap_or_else(|| panic!("case {case}: {} not written", e.key));
            assert!(items.iter().any(|(s, _)| s == e.solver), "case {case}");
        }
        // Merging the result again changes nothing.
        let (again, again_counts) = text::merge(&merged, &new, replace);
        assert_eq!(again, merged, "case {case}: a second merge changed the file");
        assert_eq!(again_counts.added, 0);
        let _ = counts;
    }
}

#[test]
fn sqlite_merges_never_lose_anything() {
    let mut rng = Rng(0x0bad_cafe_f00d_1234);
    let dir = temp_dir("sqlite-merge");
    for case in 0..40 {
        let path = dir.join(format!("case{case}_1.1.0.udb"));
        let pool: Vec<ConvProblem> = (0..1 + rng.below(6)).map(|_| random_problem(&mut rng)).collect();
        let old: Vec<Entry> = (0..rng.below(8)).map(|_| random_entry(&mut rng, &pool)).collect();
        let target = Target {
            path: path.clone(),
            format: Format::Sqlite,
            replace: false,
            lock_wait: std::time::Duration::ZERO,
        };
        userdb::merge(&target, &old, false).unwrap();
        let before = if path.exists() {
            userdb::sqlite::read_entries(&path).unwrap()
        } else {
            Vec::new()
        };
        let new: Vec<Entry> = (0..rng.below(8)).map(|_| random_entry(&mut rng, &pool)).collect();
        let replace = rng.below(2) == 0;
        userdb::merge(
            &Target {
                replace,
                ..target.clone()
            },
            &new,
            false,
        )
        .unwrap();
        let after = userdb::sqlite::read_entries(&path).unwrap();
        // Old rows keep their order (ids) and, without replace, their values.
        for row in &before {
            let now = after.iter().find(|r| r.0 == row.0 && r.1 == row.1).expect("row lost");
            let replaced_by = new.iter().find(|e| e.key == row.0 && e.solver == row.1);
            if !(replace && replaced_by.is_some()) {
                assert_eq!(now, row, "case {case}");
            }
        }
        let positions: Vec<usize> = before
            .iter()
            .map(|r| after.iter().position(|a| a.0 == r.0 && a.1 == r.1).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "case {case}: reordered");
        for e in &new {
            assert!(
                after.iter().any(|r| r.0 == e.key && r.1 == e.solver),
                "case {case}: not written"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn entries_for(n: usize) -> Vec<Entry> {
    let mut rng = Rng(77);
    let pool: Vec<ConvProblem> = (0..n).map(|_| random_problem(&mut rng)).collect();
    (0..n).map(|_| random_entry(&mut rng, &pool)).collect()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_that_fails_half_way_leaves_the_old_file_and_no_temporary() {
    let dir = temp_dir("faults");
    let path = dir.join("gfx906_60.HIP.3_2_0.udb.txt");
    let old = "# the user's own\nkey=ConvAsm1x1U:1,2,3\n";
    std::fs::write(&path, old).unwrap();
    let before = files_in(&dir);
    // An injected error after every few bytes of the new content.
    let content = "x".repeat(10_000);
    for fail_at in [0usize, 1, 17, 4096, 9_999] {
        let r = userdb::replace::replace_file(&path, |tmp| {
            use std::io::Write;
            let mut f = std::fs::File::create(tmp).unwrap();
            f.write_all(&content.as_bytes()[..fail_at]).unwrap();
            Err(tuneinfer::error::Error::Io {
                path: tmp.to_path_buf(),
                source: std::io::Error::other("injected: disk full"),
            })
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), old, "fail at {fail_at}");
        assert_eq!(files_in(&dir), before, "fail at {fail_at}: a file was left behind");
    }
    // A real full disk: the new content written through /dev/full.
    let r = userdb::replace::replace_file(&path, |_tmp| {
        tuneinfer::userdb::replace::write_all_synced(Path::new("/dev/full"), content.as_bytes())
    });
    assert!(r.is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), old);
    assert_eq!(files_in(&dir), before);
    // A database that is a link to /dev/full is not a regular file: refused, nothing written.
    let link = dir.join("gfx906_60.HIP.9_9_9.udb.txt");
    std::os::unix::fs::symlink("/dev/full", &link).unwrap();
    let target = Target {
        path: link.clone(),
        format: Format::Text,
        replace: false,
        lock_wait: std::time::Duration::ZERO,
    };
    let e = userdb::merge(&target, &entries_for(3), false).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&link).unwrap();
    // A read-only directory (not for root, whom permissions do not stop).
    let is_root = unsafe { libc_geteuid() } == 0;
    if is_root {
        println!("note: running as root: the read-only directory case is not checked");
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let target = Target {
            path: path.clone(),
            format: Format::Text,
            replace: false,
            lock_wait: std::time::Duration::ZERO,
        };
        assert!(userdb::merge(&target, &entries_for(3), false).is_err());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), old);
        assert_eq!(files_in(&dir), before);
    }
    // A good write keeps the old version as .bak and the file's permissions.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let target = Target {
            path: path.clone(),
            format: Format::Text,
            replace: false,
            lock_wait: std::time::Duration::ZERO,
        };
        let merged = userdb::merge(&target, &entries_for(3), false).unwrap();
        assert_eq!(merged.backup.as_deref(), Some(userdb::backup_path(&path).as_path()));
        assert_eq!(std::fs::read_to_string(userdb::backup_path(&path)).unwrap(), old);
        let now = std::fs::read_to_string(&path).unwrap();
        assert!(now.starts_with(old));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // The .time file holds a CLOCK_MONOTONIC time in nanoseconds: at least the uptime.
        let time: u128 = std::fs::read_to_string(dir.join("gfx906_60.HIP.3_2_0.udb.txt.time"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let uptime: f64 = std::fs::read_to_string("/proc/uptime").map_or(0.0, |s| {
            s.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0.0)
        });
        assert!(
            time > 0 && (time as f64) < (uptime + 10.0) * 1e9,
            "{time} ns vs uptime {uptime} s"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

/// Run by `a_held_miopen_lock_refuses_the_write` in a child process: holds the lock of the file
/// named by `TUNEINFER_HOLD_LOCK` until its standard input closes.
#[test]
fn lock_holder_helper() {
    let Some(path) = std::env::var_os("TUNEINFER_HOLD_LOCK") else {
        return;
    };
    let _lock = userdb::lock::MiopenLock::acquire(Path::new(&path)).unwrap();
    println!("locked");
    use std::io::Read;
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}

#[test]
fn a_held_miopen_lock_refuses_the_write() {
    use std::io::BufRead;
    let dir = temp_dir("lock");
    let path = dir.join("gfx906_60.HIP.3_2_0.udb.txt");
    std::fs::write(&path, "old\n").unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &common::test_name(module_path!(), "lock_holder_helper"), "--nocapture", "--test-threads", "1"])
        .env("TUNEINFER_HOLD_LOCK", &path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 && !line.contains("locked") {
        line.clear();
    }
    assert!(line.contains("locked"), "the helper did not take the lock");
    assert!(userdb::lock::MiopenLock::is_held(&path));
    let target = Target {
        path: path.clone(),
        format: Format::Text,
        replace: false,
        lock_wait: std::time::Duration::ZERO,
    };
    let e = userdb::merge(&target, &entries_for(2), false).unwrap_err().to_string();
    assert!(e.contains("lock") && e.contains("miopen-lockfiles"), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
    // The command says so in one line, before predicting anything.
    let o = run(
        &[
            "userdb",
            "--arch",
            "gfx906_60",
            "--device",
            "cpu",
            "--out",
            dir.to_str().unwrap(),
            "--input",
            "-",
            "--miopen-version",
            "HIP.3_2_0",
            "--lock-wait",
            "1",
        ],
        Some("1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F\n"),
    );
    assert_eq!(o.status.code(), Some(3), "{}", text_of(&o.stderr));
    assert!(text_of(&o.stderr).contains("held by another process"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
    drop(child.stdin.take());
    child.wait().unwrap();
    assert!(!userdb::lock::MiopenLock::is_held(&path));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Driver lines of the problems of a system database, for a log-like input.
fn driver_lines(db: &str, solver: &str, count: usize) -> Vec<String> {
    let path = common::perfdb_dir().join(format!("{db}.db"));
    let rows = tuneinfer::data::perfdb::solver_rows(&path, solver).unwrap();
    rows.rows
        .iter()
        .step_by((rows.rows.len() / count).max(1))
        .take(count)
        .map(|r| r.problem.to_driver_line())
        .collect()
}

#[test]
fn userdb_writes_only_valid_entries_that_read_back_and_counts_the_rest() {
    let dir = temp_dir("cli");
    let mut log = String::from("MIOpen(HIP): Info [Something] not a command\n");
    for solver in [
        "ConvAsm1x1U",
        "ConvAsmBwdWrW1x1",
        "ConvOclDirectFwd",
        "ConvAsmBwdWrW3x3",
    ] {
        for line in driver_lines("gfx906_60", solver, 60) {
            log.push_str(&format!(
                "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver {line} -t 1\n"
            ));
            // Each problem twice, as Find and then the run log it.
            log.push_str(&format!(
                "MIOpen(HIP): Command [LogCmdFindConvolution] ./bin/MIOpenDriver {line} -t 1\n"
            ));
        }
    }
    // A problem no model applies to (7x7 filter, stride 3, BF16): counted, never written.
    log.push_str("convbfp16 -n 1 -c 5 -H 31 -W 31 -k 7 -y 7 -x 7 -u 3 -v 3 -F 1\n");
    let dir_s = dir.to_str().unwrap();
    let args = [
        "userdb",
        "--arch",
        "gfx906_60",
        "--device",
        "cpu",
        "--out",
        dir_s,
        "--miopen-version",
        "HIP.3_2_0",
    ];
    let dry = run(&[&args[..], &["--dry-run"]].concat(), Some(&log));
    assert_eq!(dry.status.code(), Some(0), "{}", text_of(&dry.stderr));
    assert!(
        text_of(&dry.stdout).contains("dry run: would write"),
        "{}",
        text_of(&dry.stdout)
    );
    assert!(files_in(&dir).is_empty(), "a dry run wrote {:?}", files_in(&dir));
    let o = run(&args, Some(&log));
    let stdout = text_of(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout, text_of(&o.stderr));
    assert!(stdout.contains("problem(s) no solver"), "{stdout}");
    let unsupported = one("convbfp16 -n 1 -c 5 -H 31 -W 31 -k 7 -y 7 -x 7 -u 3 -v 3 -F 1").to_db_key();
    assert!(!std::fs::read_to_string(dir.join("gfx906_60.HIP.3_2_0.udb.txt"))
        .unwrap()
        .contains(&unsupported));
    assert!(stdout.contains("(240 repeated"), "{stdout}");
    assert!(
        stdout.contains("1 log lines that are not convolutions skipped"),
        "{stdout}"
    );
    let path = dir.join("gfx906_60.HIP.3_2_0.udb.txt");
    let content = std::fs::read_to_string(&path).unwrap();
    let mut checked = 0;
    for line in content.lines() {
        let (key, items) = line.split_once('=').unwrap();
        let problem = ConvProblem::from_db_key(key).unwrap();
        for item in items.split(';') {
            let (solver, params) = item.split_once(':').unwrap();
            let s = tuneinfer::solvers::by_name(solver).unwrap();
            let t = s.tunable().expect("a tunable solver");
            let target = tuneinfer::solvers::Target::new("gfx906_60");
            let values = t.parse_params(params).unwrap();
            assert!(
                t.rules(&target, &problem).is_valid(&values),
                "{key} {solver}:{params} breaks the rules"
            );
            checked += 1;
        }
    }
    assert!(checked >= 150, "only {checked} entries written");
    // Again: everything is present, nothing changes.
    let o = run(&args, Some(&log));
    assert!(
        text_of(&o.stdout).contains("nothing to write"),
        "{}",
        text_of(&o.stdout)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
    // The version is taken from the one database there; the sqlite form reads back the same.
    let o = run(&args[..7], Some(&log));
    assert_eq!(o.status.code(), Some(0), "{}", text_of(&o.stderr));
    std::fs::write(dir.join("gfx906_60.HIP.3_1_0.udb.txt"), "").unwrap();
    let o = run(&args[..7], Some(&log));
    assert_eq!(o.status.code(), Some(2));
    let e = text_of(&o.stderr);
    assert!(e.contains("HIP.3_1_0") && e.contains("HIP.3_2_0"), "{e}");
    // A system database's tuned problems are skipped.
    let system = common::perfdb_dir().join("gfx906_60.db");
    let sq = [
        &args[..7],
        &["--format", "sqlite", "--system-db", system.to_str().unwrap()],
    ]
    .concat();
    let o = run(&sq, Some(&log));
    let out = text_of(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text_of(&o.stderr));
    let asm = out.lines().find(|l| l.starts_with("ConvAsm1x1U")).unwrap();
    let system_count: usize = asm.split_whitespace().nth(5).unwrap().parse().unwrap();
    assert!(system_count >= 55, "{asm}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_userdb_runs_into_one_file_lose_nothing() {
    let dir = temp_dir("concurrent");
    let dir_s = dir.to_str().unwrap().to_string();
    // Four runs at once, each with its own problems, into one file.
    let inputs: Vec<String> = (0..4)
        .map(|r| {
            (0..25)
                .map(|i| format!("conv -n {} -c {} -H 14 -W 14 -k 64 -y 1 -x 1 -F 1\n", 1 + r, 16 + 8 * i))
                .collect()
        })
        .collect();
    let children: Vec<_> = inputs
        .iter()
        .map(|input| {
            use std::io::Write;
            let mut child = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
                .args([
                    "userdb",
                    "--arch",
                    "gfx906_60",
                    "--device",
                    "cpu",
                    "--threads",
                    "1",
                    "--out",
                    &dir_s,
                    "--miopen-version",
                    "HIP.3_2_0",
                    "--lock-wait",
                    "120",
                ])
                .env_remove("TUNEINFER_MODELS")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
            child
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text_of(&o.stderr));
    }
    let content = std::fs::read_to_string(dir.join("gfx906_60.HIP.3_2_0.udb.txt")).unwrap();
    let read = text::read_entries(&content);
    for input in &inputs {
        for line in input.lines() {
            let key = one(line).to_db_key();
            assert!(
                read.get(&key)
                    .is_some_and(|items| items.iter().any(|(s, _)| s == "ConvAsm1x1U")),
                "{key} lost"
            );
        }
    }
    assert_eq!(read.len(), 100);
    let _ = std::fs::remove_dir_all(&dir);
}
