//! Issue 52 item 1: `userdb` writes exactly what `batch --method best` serves. On problems
//! MIOpen ran (its find-dbs' keys, a sample of each GPU's), every (problem, solver) pair that
//! best answers gets an entry holding best's first answer where best serves the model or the
//! nearest neighbour, and none where it serves MIOpen's static default; userdb writes nothing
//! else. Both doors run as a user runs them (the binary), `--system-db none`, on the CPU.
//! The whole find-dbs: `tools/userdb_vs_best.py` (docs/methods.md).

mod common;

use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::process::Command;

/// Every `every`-th key of the GPU's newest find-db, as MIOpen's 24-field perf-db keys (the
/// form userdb writes), the keys tuneinfer does not read (INT8, empty outputs) left out.
fn sample(gpu: &str, every: usize) -> Vec<String> {
    let dir = common::miopen_dir().join("finddb");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("{gpu}."))))
        .collect();
    files.sort();
    let file = files.last().unwrap_or_else(|| panic!("no find-db of {gpu} in {}", dir.display()));
    let reader = std::io::BufReader::new(bzip2::read::BzDecoder::new(std::fs::File::open(file).unwrap()));
    reader
        .lines()
        .map(|l| l.unwrap())
        .step_by(every)
        .filter_map(|l| {
            let key = l.split('=').next()?.to_string();
            tuneinfer::ConvProblem::parse(&key).ok().map(|p| p.to_db_key())
        })
        .collect()
}

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tuneinfer")).args(args).output().unwrap();
    // Exit 1: some lines were bad (reported on stderr); anything else is a failure.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn userdb_writes_exactly_what_best_serves_on_every_gpus_find_db_problems() {
    let mut compared = 0;
    let mut by_source: HashMap<String, usize> = HashMap::new();
    for (gpu, every) in [
        ("gfx900_56", 240),
        ("gfx906_60", 240),
        ("gfx1030_36", 240),
        ("gfx90878", 360),
        ("gfx90a68", 360),
        ("gfx942130", 360),
    ] {
        let dir = common::scratch_dir(&format!("agree-{gpu}"));
        let input = dir.join("problems.txt");
        std::fs::write(&input, sample(gpu, every).join("\n")).unwrap();
        let input = input.to_str().unwrap();
        let common_args = ["--arch", gpu, "--system-db", "none", "--device", "cpu", "--input", input];
        let mut batch_args = vec!["batch", "--method", "best", "--solver", "all"];
        batch_args.extend(common_args);
        let served = run(&batch_args);
        let out = dir.join("udb");
        let mut userdb_args = vec!["userdb", "--out", out.to_str().unwrap(), "--miopen-version", "HIP.3_5_1_0"];
        userdb_args.extend(common_args);
        run(&userdb_args);
        let mut written: HashMap<(String, String), String> = HashMap::new();
        for f in std::fs::read_dir(&out).unwrap().filter_map(|e| e.ok().map(|e| e.path())) {
            if !f.to_string_lossy().ends_with(".udb.txt") {
                continue;
            }
            for line in std::fs::read_to_string(&f).unwrap().lines() {
                let (key, entries) = line.split_once('=').unwrap();
                for e in entries.split(';').filter(|e| !e.is_empty()) {
                    let (solver, params) = e.split_once(':').unwrap();
                    written.insert((key.to_string(), solver.to_string()), params.to_string());
                }
            }
        }
        let mut pairs = 0;
        for line in served.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let [problem, solver, rank, config, _score, source] = f[..] else {
                panic!("batch row: {line}");
            };
            if rank != "1" {
                continue;
            }
            pairs += 1;
            *by_source.entry(source.to_string()).or_default() += 1;
            let want = matches!(source, "model" | "neighbour").then_some(config);
            let got = written.remove(&(problem.to_string(), solver.to_string()));
            assert_eq!(got.as_deref(), want, "{gpu} {problem} {solver}: best serves {source} {config}");
        }
        assert!(written.is_empty(), "{gpu}: userdb wrote entries best does not serve: {written:?}");
        assert!(pairs > 100, "{gpu}: only {pairs} pairs compared");
        compared += pairs;
    }
    // Both branches are exercised: entries written and pairs left to MIOpen's default.
    assert!(by_source.get("model").is_some_and(|&n| n > 100), "{by_source:?}");
    assert!(by_source.get("default").is_some_and(|&n| n > 10), "{by_source:?}");
    assert!(compared > 1000, "{compared}");
}
