//! Cells served without a network (issue 36, item 4): a (solver, GPU) with tuned rows but no
//! model that beat the nearest tuned neighbour ships `{gpu}_{solver}.neighbour.json`, the
//! validation figures of the neighbour and of MIOpen's default (`eval --no-model --record`).
//! `predict` and `userdb` answer such a cell with the nearest tuned neighbour of MIOpen's system
//! perf db where that was the better of the two, else MIOpen's default (never written).

#[allow(unused_imports)]
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tuneinfer::models::{self, Located, NeighbourRecord, NEIGHBOUR_SUFFIX};
use tuneinfer::solvers;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(args)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH")
        .output()
        .expect("tuneinfer runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exact % of a record's row over all problems whose method starts with `prefix`.
fn overall(record: &NeighbourRecord, prefix: &str) -> f64 {
    record.metrics["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["kind"].is_null() && m["method"].as_str().unwrap().starts_with(prefix))
        .and_then(|m| m["exact_pct"].as_f64())
        .unwrap_or_else(|| panic!("{} {}: no '{prefix}' row", record.arch, record.solver))
}

#[test]
fn every_shipped_cell_serves_its_gpu_and_records_both_predictors_on_its_held_out_problems() {
    let dir = common::weights_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(NEIGHBOUR_SUFFIX)))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{} cells", files.len());
    let mut neighbour_cells = 0;
    for file in &files {
        let record = NeighbourRecord::read(file, None).unwrap();
        let solver = solvers::by_name(&record.solver).unwrap();
        // The record is what serves its GPU (no model of any kind shadows it: a dead file), or
        // it stands beside MIOpen's KTN model of the arch, answering the problems the KTN refuses
        // (the 2-D CK solvers on MI300X, whose GPU tuneinfer's own model serves).
        let resolved = models::resolve(&record.arch, solver, std::slice::from_ref(&dir)).unwrap();
        // Or it stands beside tuneinfer's own network, answering the problems the network
        // refuses (3-D problems beside the 2-D V4R4 networks).
        let beside_own = resolved.cell.as_ref().is_some_and(|(f, _)| f == file);
        if resolved.located != Located::Neighbour(file.clone(), record.arch.clone()) && !beside_own {
            let (plain, _) = solvers::split_db_name(&record.arch);
            let beside = models::resolve(plain, solver, &[common::models_dir(), dir.clone()]).unwrap();
            assert!(
                matches!(beside.located, Located::Ktn(_)) && beside.cell.as_ref().is_some_and(|(f, _)| f == file),
                "{}: shadowed by {:?}, and not beside MIOpen's {plain} model",
                file.display(),
                resolved.located
            );
        }
        // Both predictors were measured on the same held-out problems: the neighbour and
        // MIOpen's default over all of them (the record's choice, per kind, is whichever won).
        let (nn, default) = (
            overall(&record, "nearest neighbour"),
            overall(&record, "MIOpen static default"),
        );
        assert!(
            (0.0..=100.0).contains(&nn) && (0.0..=100.0).contains(&default),
            "{}",
            file.display()
        );
        if nn > default {
            neighbour_cells += 1;
        }
        assert!(
            record.training["perf_db"].as_str().is_some() && record.training["seed"].as_u64().is_some(),
            "{}: the split is not recorded",
            file.display()
        );
    }
    // Most cells are there for their neighbour; the others record MIOpen's default as the best.
    assert!(neighbour_cells >= 20, "{neighbour_cells} cells where the neighbour won");
}

/// A perf db of two V4R1Fwd rows of MIOpen's gfx900_56 database (their configs as tuned there),
/// one moved to batch 64: the problem tuned at batch 128 is not in it, and its nearest row is
/// the batch-64 one, whose config MIOpen tuned for that very problem (so it is valid for it).
fn two_row_db(dir: &Path) -> PathBuf {
    let db = dir.join("gfx900_56.db.txt");
    std::fs::write(
        &db,
        "832-7-7-1x1-128-7-7-64-0x0-1x1-1x1-0-NCHW-FP32-F=ConvHipImplicitGemmV4R1Fwd:16,32,4,2,4,2,2,4,2,4,4,1,16,1,4,16\n\
         64-73-73-1x1-80-73-73-128-0x0-1x1-1x1-0-NCHW-FP32-F=ConvHipImplicitGemmV4R1Fwd:16,16,4,2,2,4,2,4,2,4,4,1,16,1,4,16\n",
    )
    .unwrap();
    db
}

const QUERY: &str = "832-7-7-1x1-128-7-7-128-0x0-1x1-1x1-0-NCHW-FP32-F";
/// gfx900_56.db's tuned config of QUERY (config id 326).
const TUNED: &str = "16,32,4,2,4,2,2,4,2,4,4,1,16,1,4,16";

#[test]
fn a_cell_without_a_network_answers_with_the_nearest_tuned_neighbour_of_the_system_db() {
    let dir = common::scratch_dir("cells-predict");
    let db = two_row_db(&dir);
    let o = run(&[
        "predict",
        "--arch",
        "gfx900_56",
        "--solver",
        "all",
        "--device",
        "cpu",
        "--system-db",
        db.to_str().unwrap(),
        QUERY,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let row: Vec<&str> = out
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|r| r[1] == "ConvHipImplicitGemmV4R1Fwd")
        .unwrap_or_else(|| panic!("no V4R1Fwd answer: {out}"));
    assert_eq!((row[3], row[5]), (TUNED, "neighbour"), "{out}");

    // With no system perf db: MIOpen's static default, and the note says what to give.
    let o = run(&[
        "predict",
        "--arch",
        "gfx900_56",
        "--solver",
        "ConvHipImplicitGemmV4R1Fwd",
        "--device",
        "auto",
        "--system-db",
        "none",
        QUERY,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_ne!(text(&o.stdout).trim(), TUNED);
    assert!(
        err.contains("source default") && err.contains("--system-db FILE"),
        "{err}"
    );
    // No GPU is opened for a cell with nothing to compute (no "computing on the CPU" note).
    assert!(!err.contains("computing on the CPU"), "{err}");
}

#[test]
fn userdb_writes_the_neighbours_config_of_a_cell_without_a_network() {
    let dir = common::scratch_dir("cells-userdb");
    let db = two_row_db(&dir);
    let input = dir.join("log.txt");
    std::fs::write(&input, format!("{QUERY}\n")).unwrap();
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let o = run(&[
        "userdb",
        "--arch",
        "gfx900_56",
        "--solver",
        "ConvHipImplicitGemmV4R1Fwd",
        "--device",
        "cpu",
        "--system-db",
        db.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--miopen-version",
        "HIP.3_2_0_",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("no network; 1 entries from the nearest tuned neighbour"),
        "{out}"
    );
    let written: String = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        written.contains(&format!("ConvHipImplicitGemmV4R1Fwd:{TUNED}")),
        "{written}"
    );

    // Without the rows: nothing is written for the cell (MIOpen's default is MIOpen's own).
    let o = run(&[
        "userdb",
        "--arch",
        "gfx900_56",
        "--solver",
        "ConvHipImplicitGemmV4R1Fwd",
        "--device",
        "cpu",
        "--system-db",
        "none",
        "--input",
        input.to_str().unwrap(),
        "--out",
        dir.join("out2").to_str().unwrap(),
        "--miopen-version",
        "HIP.3_2_0_",
        "--dry-run",
    ]);
    let out = text(&o.stdout);
    assert!(out.contains("no network; 0 entries"), "{out}{}", text(&o.stderr));
}

#[test]
fn eval_no_model_records_a_cell_that_then_serves_it() {
    let db = common::perfdb_dir().join("gfx1030_36.db");
    let dir = common::scratch_dir("cells-record");
    let o = run(&[
        "eval",
        "--no-model",
        "--perf-db",
        db.to_str().unwrap(),
        "--arch",
        "gfx1030_36",
        "--solver",
        "ConvOclBwdWrW2<8>",
        "--record",
        "--models",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    assert!(
        table.contains("nearest neighbour") && !table.contains("model, beam"),
        "{table}"
    );
    let file = dir.join("gfx1030_36_ConvOclBwdWrW2_8.neighbour.json");
    let record = NeighbourRecord::read(&file, Some("ConvOclBwdWrW2<8>")).unwrap();
    assert_eq!(record.training["seed"].as_u64(), Some(1));
    // Another CU count of the arch is served by it, as MIOpen picks its databases.
    let resolved = models::resolve(
        "gfx1030_40",
        solvers::by_name("ConvOclBwdWrW2<8>").unwrap(),
        std::slice::from_ref(&dir),
    )
    .unwrap();
    assert_eq!(resolved.served_by, models::ServedBy::ClosestCu { model_cu: 36, cu: 40 });
    // --record without a directory, and a model's options, are usage errors.
    let o = run(&[
        "eval",
        "--no-model",
        "--perf-db",
        db.to_str().unwrap(),
        "--arch",
        "gfx1030_36",
        "--solver",
        "ConvOclBwdWrW2<8>",
        "--record",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--models DIR"), "{}", text(&o.stderr));
    let o = run(&[
        "eval",
        "--perf-db",
        db.to_str().unwrap(),
        "--arch",
        "gfx1030_36",
        "--solver",
        "ConvOclDirectFwd",
        "--seed",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn a_cell_whose_validated_best_is_miopens_default_answers_it_even_with_the_rows_at_hand() {
    // MI210's ConvOclDirectFwd: MIOpen's default matched the tuned best on 95.9% of the held-out
    // problems, the neighbour on 88.1% (its record): `best` answers the default, says so, and
    // `--method neighbour` still gives the neighbour.
    let db = common::perfdb_dir().join("gfx90a68.db.txt.bz2");
    let problem = "64-57-57-3x3-64-57-57-13-1x1-1x1-1x1-0-NCHW-FP32-F";
    let predict = |method: &str| {
        run(&[
            "predict",
            "--arch",
            "gfx90a68",
            "--solver",
            "ConvOclDirectFwd",
            "--device",
            "cpu",
            "--method",
            method,
            "--system-db",
            db.to_str().unwrap(),
            problem,
        ])
    };
    let o = predict("best");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("MIOpen's static default (source default)"), "{err}");
    let default = text(&o.stdout);
    let o = predict("neighbour");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("(source neighbour)"), "{}", text(&o.stderr));
    assert!(!default.trim().is_empty());
}
