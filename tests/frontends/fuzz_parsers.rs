//! Seeded mutation tests: every fuzz harness of `tuneinfer::fuzzing` (the ones the cargo-fuzz
//! targets in `fuzz/` run for millions of inputs) over the real files of `../shared/miopen` and
//! `weights/`, and a few thousand deterministic mutations of them each: bit flips, byte
//! inserts and deletes, truncation at every offset class (the header, inside arrays, the last
//! byte), splices of two seeds, huge numbers and repeated tokens. Every input must leave the
//! parser with an answer or an error (no panic) and every invariant the harness checks holding.
//! A failure prints the input (escaped, cut) and writes it whole under
//! `target/fuzz-failures/`, from where a regression test takes it.

#[allow(unused_imports)]
use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use tuneinfer::fuzzing;

/// xorshift64*: the tests' own random numbers (deterministic, so a failure reproduces).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens the mutator inserts: numbers at and past every limit, separators and JSON syntax.
const TOKENS: &[&str] = &[
    "99999999999999999999",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775808",
    "4294967296",
    "2147483648",
    "1000000000",
    "1e309",
    "-1",
    "-0",
    "0",
    "NaN",
    "null",
    "true",
    "[]",
    "{}",
    "[[[[[[[[",
    "]]]]",
    "\"",
    "\\u0000",
    ",",
    ":",
    ";",
    "=",
    "-",
    "x",
    "\t",
    "\n",
    "\r\n",
    "_g",
    "-F 0",
    " -g 0",
    " --spatial_dim 3",
    " -_ 3",
    " -! 0",
    " -@ 2147483647",
    " -% 1",
    " -m trans",
    "NCDHW",
    "NDHWC",
    "NCHW",
    "conv",
    "MIOpen(HIP): ",
    "\u{feff}",
    "é",
];

/// One mutation of `seed` (`other` is a second seed for splices).
fn mutate(rng: &mut Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(3) {
        let len = v.len();
        match rng.below(10) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                v.insert(i, rng.next() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below(16.min(len - i));
                v.drain(i..i + n);
            }
            4 => {
                let cut = rng.below(len + 1);
                v.truncate(cut);
            }
            5 => {
                let i = rng.below(len + 1);
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(i..i, t.bytes());
            }
            6 if len > 0 => {
                // Replace a run of digits with a huge or zero number.
                let i = rng.below(len);
                let start = (0..=i).rev().take_while(|&j| v[j].is_ascii_digit()).last().unwrap_or(i);
                let end = (i..len)
                    .take_while(|&j| v[j].is_ascii_digit())
                    .last()
                    .map_or(i, |e| e + 1);
                let t = [
                    "0",
                    "99999999999999999999",
                    "18446744073709551616",
                    "4294967296",
                    "1000000000",
                ][rng.below(5)];
                v.splice(start..end.max(start), t.bytes());
            }
            7 if len > 0 => {
                // Repeat a token (a chunk of the input) many times.
                let i = rng.below(len);
                let n = 1 + rng.below(8.min(len - i));
                let chunk = v[i..i + n].to_vec();
                let times = [2, 10, 100, 1000][rng.below(4)];
                let at = i + n;
                v.splice(at..at, chunk.iter().copied().cycle().take(n * times));
            }
            8 => {
                // Splice: a prefix of this seed and a suffix of the other.
                let a = rng.below(len + 1);
                let b = rng.below(other.len() + 1);
                v.truncate(a);
                v.extend_from_slice(&other[b..]);
            }
            _ if len > 1 => {
                let (i, j) = (rng.below(len), rng.below(len));
                v.swap(i, j);
            }
            _ => v.push(b'0'),
        }
    }
    v
}

/// Truncation points of every offset class: each of the first 64 bytes (headers), the last
/// few, and about `spread` points spread evenly between (inside arrays and lines).
fn cut_points(len: usize, spread: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..len.min(64)).collect();
    cuts.extend(len.saturating_sub(3)..len);
    cuts.extend((0..spread).map(|k| k * len / spread.max(1)));
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// Runs `harness` on one input; a panic or a broken invariant is described with the input.
fn run_one(name: &str, harness: fuzzing::Harness, input: &[u8]) -> Option<String> {
    let why = match catch_unwind(AssertUnwindSafe(|| harness(input))) {
        Ok(Ok(())) => return None,
        Ok(Err(violation)) => format!("invariant broken: {violation}"),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            format!("panicked: {msg}")
        }
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/fuzz-failures")
        .join(name);
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!("{:016x}", fnv(input)));
    let _ = std::fs::write(&file, input);
    let shown: String = String::from_utf8_lossy(&input[..input.len().min(300)])
        .escape_debug()
        .collect();
    Some(format!(
        "{name}: {why}\n  input ({} bytes, saved as {}): \"{shown}\"",
        input.len(),
        file.display()
    ))
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// The harness over its seeds (each must pass as it is), every cut of each (up to
/// `cuts_per_seed` spread points), then `mutations` random mutations; fails listing the first
/// failures.
fn fuzz(name: &str, seeds: &[Vec<u8>], cuts_per_seed: usize, mutations: usize) {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let harness = fuzzing::HARNESSES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no harness {name}"))
        .1;
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    let mut runs = 0usize;
    for seed in seeds {
        runs += 1;
        failures.extend(run_one(name, harness, seed));
        for cut in cut_points(seed.len(), cuts_per_seed) {
            runs += 1;
            failures.extend(run_one(name, harness, &seed[..cut]));
        }
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ fnv(name.as_bytes()));
    for _ in 0..mutations {
        let seed = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, seed, other);
        runs += 1;
        failures.extend(run_one(name, harness, &input));
        if failures.len() >= 5 {
            break;
        }
    }
    eprintln!(
        "{name}: {runs} inputs in {:.1} s, {} failures",
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Lines `from..from+count` of a text file.
fn lines_of(path: &Path, from: usize, count: usize) -> Vec<String> {
    String::from_utf8_lossy(&read(path))
        .lines()
        .skip(from)
        .take(count)
        .map(String::from)
        .collect()
}

fn history(name: &str) -> PathBuf {
    common::perfdb_dir().join("history").join(name)
}

const HISTORY: [&str; 3] = [
    "gfx906_60.2019.cd.pdb.txt",
    "gfx900_56.2019.cd.pdb.txt",
    "gfx906_64.2019.cd.pdb.txt",
];

/// Problems of the shared sqlite databases (a few rows of several solvers each).
fn sqlite_problems() -> Vec<tuneinfer::ConvProblem> {
    let mut out = Vec::new();
    for db in ["gfx906_60.db", "gfx942130.db", "gfx1030_36.db"] {
        for solver in [
            "ConvAsm1x1U",
            "ConvOclDirectFwd",
            "ConvHipImplicitGemmGroupFwdXdlops",
            "ConvAsmBwdWrW1x1",
        ] {
            let rows = tuneinfer::data::perfdb::solver_rows(&common::perfdb_dir().join(db), solver).unwrap();
            out.extend(rows.rows.into_iter().step_by(97).take(8).map(|r| r.problem));
        }
    }
    assert!(out.len() > 20, "too few sqlite problems: {}", out.len());
    out
}

/// 3-D problems of the shared databases: the 3-D rows of gfx1030_36's sqlite database (NCDHW)
/// and every 2000th 3-D key of gfx942130's text one (NCDHW and NDHWC, MIOpen 3.5.1).
fn three_d_problems() -> Vec<tuneinfer::ConvProblem> {
    let mut out = Vec::new();
    for solver in [
        "ConvHipImplicitGemmV4R4Fwd",
        "ConvHipImplicitGemmV4R4WrW",
        "ConvHipImplicitGemmBwdDataV1R1",
    ] {
        let rows = tuneinfer::data::perfdb::solver_rows(&common::perfdb_dir().join("gfx1030_36.db"), solver).unwrap();
        out.extend(rows.rows.into_iter().map(|r| r.problem).filter(|p| p.is_3d()).take(4));
    }
    let text = tuneinfer::data::textdb::read_text(&common::perfdb_dir().join("gfx942130.db.txt.bz2")).unwrap();
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("3x"))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    out.extend(
        keys.iter()
            .step_by(2000)
            .filter_map(|k| tuneinfer::ConvProblem::from_db_key(k).ok()),
    );
    out.extend(
        keys.iter()
            .filter(|k| k.contains("NDHWC"))
            .step_by(100)
            .filter_map(|k| tuneinfer::ConvProblem::from_db_key(k).ok()),
    );
    assert!(
        out.iter().all(|p| p.is_3d()) && out.len() > 30,
        "3-D seeds: {}",
        out.len()
    );
    assert!(out.iter().any(|p| p.layout == tuneinfer::problem::Layout::Nhwc));
    out
}

/// Keys of the 2019 text databases (dash form).
fn history_keys() -> Vec<String> {
    HISTORY
        .iter()
        .flat_map(|h| lines_of(&history(h), 0, 4000).into_iter().step_by(200))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
        .collect()
}

/// MIOpen log lines in the forms MIOpen writes them (`MIOPEN_ENABLE_LOGGING_CMD=1`).
fn log_lines(driver: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, d) in driver.iter().take(6).enumerate() {
        out.push(match i % 3 {
            0 => format!("MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver {d}"),
            1 => format!("[1234 ]MIOpen(HIP)[ 0.125 ]: Command [LogCmdFindConvolution] ./bin/MIOpenDriver {d}"),
            _ => format!("2024-10-24 12:00:00 MIOpen(OpenCL): Command [LogCmdConvolution] MIOpenDriver {d}"),
        });
    }
    out.push("MIOpen(HIP): Info [GetPerfDbPath] something else".into());
    out
}

fn bytes_of(v: impl IntoIterator<Item = String>) -> Vec<Vec<u8>> {
    v.into_iter().map(String::into_bytes).collect()
}

#[test]
fn problem_parsers_survive_mutations() {
    let mut problems = sqlite_problems();
    let three_d = three_d_problems();
    problems.extend(three_d.iter().cloned());
    let mut dash = history_keys();
    dash.extend(three_d.iter().map(|p| p.to_perfdb_key()));
    let db: Vec<String> = problems.iter().map(|p| p.to_db_key()).collect();
    let driver: Vec<String> = problems.iter().map(|p| p.to_driver_line()).collect();
    for (d, k) in driver.iter().zip(&db) {
        assert!(tuneinfer::ConvProblem::from_driver_line(d).is_ok() && tuneinfer::ConvProblem::from_db_key(k).is_ok());
    }
    let parsed = dash
        .iter()
        .filter(|k| tuneinfer::ConvProblem::from_perfdb_key(k).is_ok())
        .count();
    assert!(
        parsed * 10 >= dash.len() * 9,
        "{parsed} of {} dash keys parse",
        dash.len()
    );
    let mut all: Vec<String> = dash.iter().chain(&db).chain(&driver).cloned().collect();
    all.extend(log_lines(&driver));
    all.extend(log_lines(&driver[driver.len() - three_d.len()..]));
    all.extend(
        driver
            .iter()
            .take(5)
            .map(|d| format!("./bin/MIOpenDriver {}", d.replace(" -F 1", " -F 0"))),
    );
    fuzz("problem_line", &bytes_of(all), 24, 40000);
    fuzz("perfdb_key", &bytes_of(dash), 16, 20000);
    fuzz("db_key", &bytes_of(db), 16, 20000);
    fuzz("driver_line", &bytes_of(driver), 16, 20000);
}

#[test]
fn frugally_models_survive_mutations() {
    // The smallest KTN encoder and decoder, and a TunaNet model (layers tuneinfer refuses).
    let models = common::models_dir();
    let seeds: Vec<Vec<u8>> = [
        "gfx90a_ConvHipIgemmGroupFwdXdlops_encoder.ktn.model",
        "gfx90a_ConvHipIgemmGroupFwdXdlops_decoder.ktn.model",
        "gfx908_metadata.tn.model",
    ]
    .iter()
    .map(|n| read(&models.join(n)))
    .collect();
    // The mutations start from files the parser reads (the KTN ones also build).
    for seed in &seeds[..2] {
        let model = tuneinfer::format::frugally::KerasModel::parse(std::str::from_utf8(seed).unwrap(), "seed").unwrap();
        assert!(
            tuneinfer::seq2seq::Encoder::from_keras(&model).is_ok()
                || tuneinfer::seq2seq::Decoder::from_keras(&model).is_ok()
        );
    }
    fuzz("frugally_model", &seeds, 60, 5000);
}

#[test]
fn ktn_metadata_survives_mutations() {
    let mut seeds = Vec::new();
    for entry in std::fs::read_dir(common::models_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with("_metadata.ktn.model") {
            seeds.push(read(&path));
        }
    }
    assert_eq!(seeds.len(), 6);
    for seed in &seeds {
        tuneinfer::format::metadata::KtnMetadata::parse(std::str::from_utf8(seed).unwrap(), "seed").unwrap();
    }
    fuzz("ktn_metadata", &seeds, 40, 20000);
}

#[test]
fn safetensors_survive_mutations() {
    use std::collections::BTreeMap;
    use tuneinfer::format::safetensors::{to_bytes, Tensor};
    // A small file of the same layout (written by the library's writer), and the real header
    // of a shipped model with its data cut short: mutations land in the header and sizes.
    let tensors = vec![
        Tensor {
            name: "enc.w".into(),
            shape: vec![2, 3],
            data: vec![1.0, -2.0, 0.5, 3.0, 4.0, 5.0],
        },
        Tensor {
            name: "dec.b".into(),
            shape: vec![3],
            data: vec![0.0, f32::MIN_POSITIVE, 7.0],
        },
        Tensor {
            name: "empty".into(),
            shape: vec![0, 4],
            data: vec![],
        },
    ];
    let mut meta = BTreeMap::new();
    meta.insert("format".to_string(), "tuneinfer-attention-seq2seq".to_string());
    meta.insert("version".to_string(), "1".to_string());
    let small = to_bytes(&tensors, &meta);
    let real = read(&common::weights_dir().join("gfx900_ConvAsm1x1U.safetensors"));
    let header_len = u64::from_le_bytes(real[..8].try_into().unwrap()) as usize;
    let real_header = real[..8 + header_len].to_vec();
    assert!(tuneinfer::format::safetensors::from_bytes(&small, "small").is_ok());
    assert!(tuneinfer::format::safetensors::from_bytes(&real, "real").is_ok());
    fuzz("safetensors", &[small, real_header], 60, 20000);
    // The whole real file: a few hundred (each reads 4 MB).
    fuzz("safetensors", &[real], 8, 250);
}

#[test]
fn weights_metadata_survives_mutations() {
    let seeds: Vec<Vec<u8>> = ["gfx900_ConvAsm1x1U.json", "gfx906_ConvOclDirectFwd.json"]
        .iter()
        .map(|n| read(&common::weights_dir().join(n)))
        .collect();
    for seed in &seeds {
        tuneinfer::seq2seq::weights::parse_info(std::str::from_utf8(seed).unwrap(), "seed").unwrap();
    }
    fuzz("weights_info", &seeds, 60, 10000);
}

#[test]
fn text_perf_dbs_survive_mutations() {
    let mut seeds = Vec::new();
    for h in HISTORY {
        for from in [0, 5000] {
            seeds.push(lines_of(&history(h), from, 40).join("\n").into_bytes());
        }
    }
    // The 24-field form MIOpen writes today, CRLF endings and a comment.
    let db: Vec<String> = sqlite_problems()
        .iter()
        .take(20)
        .map(|p| format!("{}=ConvAsm1x1U:4,8,4,16,1,4,1,8;ConvOclDirectFwd:1,2\r", p.to_db_key()))
        .collect();
    seeds.push(format!("# user db\n{}", db.join("\n")).into_bytes());
    fuzz("text_perfdb", &seeds, 40, 10000);
}

/// A small copy of a shared sqlite database: its schema, and `rows` rows of `config` and
/// `perf_db` (those of one solver), as the bytes of a database file.
fn small_sqlite(source: &str, solver: &str, rows: usize, path: &Path) -> Vec<u8> {
    let _ = std::fs::remove_file(path);
    let conn = rusqlite::Connection::open(path).unwrap();
    let src = common::perfdb_dir().join(source);
    conn.execute(
        "ATTACH DATABASE ?1 AS src",
        [format!("file:{}?immutable=1", src.display())],
    )
    .or_else(|_| conn.execute("ATTACH DATABASE ?1 AS src", [src.display().to_string()]))
    .unwrap();
    let schema: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT sql FROM src.sqlite_master WHERE type='table' AND name IN ('config','perf_db')")
            .unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect()
    };
    assert_eq!(schema.len(), 2, "{source}: schema");
    for sql in schema {
        conn.execute(&sql, []).unwrap();
    }
    conn.execute(
        &format!("INSERT INTO perf_db SELECT * FROM src.perf_db WHERE solver = ?1 LIMIT {rows}"),
        [solver],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO config SELECT * FROM src.config WHERE id IN (SELECT config FROM perf_db)",
        [],
    )
    .unwrap();
    conn.execute("DETACH DATABASE src", []).unwrap();
    conn.execute("VACUUM", []).unwrap();
    drop(conn);
    let bytes = read(path);
    let _ = std::fs::remove_file(path);
    bytes
}

#[test]
fn sqlite_perf_dbs_survive_mutations() {
    let dir = std::env::temp_dir().join(format!("tuneinfer-fuzz-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seeds = vec![
        small_sqlite("gfx906_60.db", "ConvAsm1x1U", 12, &dir.join("a.db")),
        small_sqlite(
            "gfx942130.db",
            "ConvHipImplicitGemmGroupFwdXdlops",
            8,
            &dir.join("b.db"),
        ),
    ];
    let _ = std::fs::remove_dir_all(&dir);
    // The seeds hold rows the harness reads.
    let path = std::env::temp_dir().join(format!("tuneinfer-fuzz-seed-check-{}.db", std::process::id()));
    std::fs::write(&path, &seeds[0]).unwrap();
    let rows = tuneinfer::data::perfdb::solver_rows(&path, "ConvAsm1x1U").unwrap();
    assert_eq!(rows.rows.len() + rows.rejected.len(), 12);
    let _ = std::fs::remove_file(&path);
    fuzz("sqlite_perfdb", &seeds, 40, 8000);
}

#[test]
fn ck_catalogues_survive_mutations() {
    let ck = common::ck_dir();
    let mut seeds = Vec::new();
    for name in ["fwd_f32.tsv", "bwd_f16.tsv", "wrw_f32.tsv", "wrw_f16.tsv"] {
        let text = String::from_utf8(read(&ck.join(name))).unwrap();
        seeds.push(text.lines().take(12).collect::<Vec<_>>().join("\n").into_bytes());
    }
    // Each seed is a catalogue of 11 instances for one of the (direction, type)s.
    use tuneinfer::problem::{Direction, Precision};
    use tuneinfer::solvers::ck::catalogue::Catalogue;
    for seed in &seeds {
        let text = std::str::from_utf8(seed).unwrap();
        let parsed = [Direction::Forward, Direction::BackwardData, Direction::BackwardWeights]
            .iter()
            .flat_map(|&d| [Precision::Fp32, Precision::Fp16].map(|p| Catalogue::parse(text, Path::new("seed"), d, p)))
            .filter_map(Result::ok)
            .collect::<Vec<_>>();
        assert_eq!(parsed.len(), 1);
        assert_eq!(parsed[0].instances.len(), 11);
    }
    fuzz("ck_catalogue", &seeds, 40, 15000);
    // One whole file.
    fuzz("ck_catalogue", &[read(&ck.join("bwd_f32.tsv"))], 20, 300);
}

#[test]
fn gtc_catalogues_survive_mutations() {
    let dir = common::miopen_dir().join("solvers");
    let seeds: Vec<Vec<u8>> = seeds_of("gtc_catalogue");
    // Each seed parses as its direction's catalogue of 15 entries (and as no other).
    use tuneinfer::problem::Direction;
    use tuneinfer::solvers::gtc_nhwc::catalogue::Catalogue;
    for seed in &seeds {
        let text = std::str::from_utf8(seed).unwrap();
        let parsed: Vec<_> = [Direction::Forward, Direction::BackwardData, Direction::BackwardWeights]
            .iter()
            .filter_map(|&d| Catalogue::parse(text, Path::new("seed"), d).ok())
            .collect();
        assert_eq!(parsed.len(), 1);
        assert_eq!(parsed[0].entries.len(), 15);
    }
    fuzz("gtc_catalogue", &seeds, 40, 6000);
    // One whole file.
    fuzz("gtc_catalogue", &[read(&dir.join("gtc_wrw_nhwc.tsv"))], 10, 100);
}

#[test]
fn user_perf_dbs_survive_mutations() {
    let mut seeds: Vec<Vec<u8>> = HISTORY
        .iter()
        .map(|h| lines_of(&history(h), 100, 12).join("\n").into_bytes())
        .collect();
    // The 24-field form, repeated keys and ids, CRLF, no final newline.
    let problems = sqlite_problems();
    let mut text = String::new();
    for (i, p) in problems.iter().take(8).enumerate() {
        text.push_str(&format!(
            "{}=ConvAsm1x1U:1,2;ConvAsm1x1U:3,4;ConvOclDirectFwd:{i}",
            p.to_db_key()
        ));
        text.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
    }
    text.push_str(&format!("{}=ConvAsmBwdWrW1x1:9", problems[0].to_db_key()));
    seeds.push(text.into_bytes());
    fuzz("userdb_text", &seeds, 40, 20000);
}

// ---- Regression tests: the exact inputs of findings ----

/// Found by `problem_parsers_survive_mutations` (24-field key, a backward-weights problem with
/// stride_w 10^9: the smallest x width giving dy width 7 is 6,000,000,001, past the 2^31-1 the
/// dash key and driver line allow, so its own key did not parse back). Fixed: such a key is
/// refused, naming the column.
#[test]
fn a_db_key_whose_x_size_is_past_the_field_range_is_refused() {
    let input = "2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x1000000000x0x1x1x0x0x1xNCHWxFP32xW";
    assert_eq!(fuzzing::problem_line(input.as_bytes()), Ok(()));
    assert_eq!(fuzzing::db_key(input.as_bytes()), Ok(()));
    let e = tuneinfer::problem::ConvProblem::from_db_key(input)
        .unwrap_err()
        .to_string();
    assert!(e.contains("field 'in_w'") && e.contains("out of range"), "{e}");
}

/// A catalogue's block sizes are outside input: an instance of a v2 pipeline with
/// MPerBlock = NPerBlock = 2^63 made CK's prefetch-stage arithmetic overflow (a panic in builds
/// with overflow checks: debug, cargo-fuzz). Fixed with saturating arithmetic.
#[test]
fn ck_block_sizes_past_u64_halves_do_not_overflow() {
    let text = String::from_utf8(read(&common::ck_dir().join("wrw_f16.tsv"))).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let at = lines
        .iter()
        .position(|l| l.contains("BlkGemmPipelineVer=v2"))
        .expect("a v2 instance");
    let huge = (1u64 << 63).to_string();
    lines[at] = lines[at]
        .split('\t')
        .map(|col| {
            col.split(';')
                .map(|kv| match kv.split_once('=') {
                    Some(("MPerBlock" | "NPerBlock", _)) => format!("{}={huge}", kv.split('=').next().unwrap()),
                    _ => kv.to_string(),
                })
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect::<Vec<_>>()
        .join("\t");
    assert!(lines[at].contains(&format!("MPerBlock={huge}")));
    let input: String = lines[..at + 1].join("\n");
    assert_eq!(fuzzing::ck_catalogue(input.as_bytes()), Ok(()));
}

/// The ONNX reader over a small network (2-D SAME, Resize, Concat, ConvTranspose with output
/// padding, a 1-D grouped convolution after a Reshape), and the same with its weights as graph
/// inputs without initializers and a stated `2*N` dimension: every cut and 20,000 mutations.
#[test]
fn onnx_models_never_panic() {
    fuzz("onnx_model", &fuzzing::onnx_seeds(), 400, 20000);
}

/// The seeds of one harness (those the tests above use).
fn seeds_of(name: &str) -> Vec<Vec<u8>> {
    let problems = sqlite_problems();
    let driver: Vec<String> = problems.iter().map(|p| p.to_driver_line()).collect();
    match name {
        "problem_line" | "perfdb_key" | "db_key" | "driver_line" => {
            let mut all = history_keys();
            all.extend(problems.iter().map(|p| p.to_db_key()));
            let three_d = three_d_problems();
            all.extend(
                three_d
                    .iter()
                    .flat_map(|p| [p.to_db_key(), p.to_perfdb_key(), p.to_driver_line()]),
            );
            all.extend(log_lines(&driver));
            all.extend(driver);
            bytes_of(all)
        }
        "frugally_model" => vec![read(
            &common::models_dir().join("gfx90a_ConvHipIgemmGroupFwdXdlops_encoder.ktn.model"),
        )],
        "ktn_metadata" => vec![read(
            &common::models_dir().join("gfx942_ConvHipIgemmGroupWrwXdlops_metadata.ktn.model"),
        )],
        "safetensors" => {
            let real = read(&common::weights_dir().join("gfx900_ConvAsm1x1U.safetensors"));
            let header_len = u64::from_le_bytes(real[..8].try_into().unwrap()) as usize;
            vec![real[..8 + header_len].to_vec()]
        }
        "weights_info" => vec![read(&common::weights_dir().join("gfx900_ConvAsm1x1U.json"))],
        "text_perfdb" | "userdb_text" => HISTORY
            .iter()
            .map(|h| lines_of(&history(h), 0, 30).join("\n").into_bytes())
            .collect(),
        "sqlite_perfdb" => {
            let dir = std::env::temp_dir().join(format!("tuneinfer-fuzz-loop-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let s = vec![small_sqlite("gfx906_60.db", "ConvAsm1x1U", 12, &dir.join("a.db"))];
            let _ = std::fs::remove_dir_all(&dir);
            s
        }
        "ck_catalogue" => ["fwd_f32.tsv", "wrw_f16.tsv"]
            .iter()
            .map(|n| {
                String::from_utf8(read(&common::ck_dir().join(n)))
                    .unwrap()
                    .lines()
                    .take(12)
                    .collect::<Vec<_>>()
                    .join("\n")
                    .into_bytes()
            })
            .collect(),
        "gtc_catalogue" => ["gtc_fwd_nhwc.tsv", "gtc_bwd_nhwc.tsv", "gtc_wrw_nhwc.tsv"]
            .iter()
            .map(|n| {
                String::from_utf8(read(&common::miopen_dir().join("solvers").join(n)))
                    .unwrap()
                    .lines()
                    .take(16)
                    .collect::<Vec<_>>()
                    .join("\n")
                    .into_bytes()
            })
            .collect(),
        "onnx_model" => fuzzing::onnx_seeds(),
        other => panic!("no harness {other}"),
    }
}

/// `tools/fuzz.sh`'s fallback where cargo-fuzz cannot run: mutations of the seeds of
/// `$TUNEINFER_FUZZ_TARGET` for `$TUNEINFER_FUZZ_SECONDS` (no coverage feedback), printing the
/// number of executions. Ignored by default.
#[test]
#[ignore]
fn fuzz_loop() {
    let name = std::env::var("TUNEINFER_FUZZ_TARGET").expect("TUNEINFER_FUZZ_TARGET");
    let seconds: f64 = std::env::var("TUNEINFER_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60.0);
    let harness = fuzzing::HARNESSES
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a harness name")
        .1;
    let seeds = seeds_of(&name);
    let mut rng = Rng(std::process::id() as u64 ^ 0x1234_5678);
    let started = std::time::Instant::now();
    let (mut runs, mut failures) = (0u64, Vec::new());
    while started.elapsed().as_secs_f64() < seconds && failures.len() < 10 {
        for _ in 0..64 {
            let seed = &seeds[rng.below(seeds.len())];
            let other = &seeds[rng.below(seeds.len())];
            let mut input = mutate(&mut rng, seed, other);
            // Stack mutations now and then, for inputs far from any seed.
            for _ in 0..rng.below(4) {
                input = mutate(&mut rng, &input, other);
            }
            runs += 1;
            failures.extend(run_one(&name, harness, &input));
        }
    }
    eprintln!(
        "fuzz_loop {name}: {runs} executions in {:.0} s, {} crashes",
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
