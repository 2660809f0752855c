//! `--method` (issue 36): the nearest tuned neighbour and MIOpen's static default as predictors
//! beside the model, and `best`, which takes per problem the one that won on the model's
//! held-out problems of its class or kind. Every answer of every method is valid.

#[allow(unused_imports)]
use crate::common;

use std::process::{Command, Output};

use tuneinfer::neighbour::Neighbours;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::{self, Target};

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

const STRIDE2: &str = "2048-14-14-1x1-512-7-7-64-0x0-2x2-1x1-0-NCHW-FP16-F";

/// `predict` on MI210 with no system perf db, `extra` options before `problem`: (stdout,
/// stderr), the run checked.
fn predict_mi210(extra: &[&str], problem: &str) -> (String, String) {
    let mut args = vec![
        "predict",
        "--arch",
        "gfx90a68",
        "--device",
        "cpu",
        "--system-db",
        "none",
    ];
    args.extend(extra);
    args.push(problem);
    let o = run(&args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    (text(&o.stdout), err)
}

#[test]
fn best_answers_mi210s_stride_2_with_miopens_default_and_says_why() {
    // weights/gfx90a68_ConvAsm1x1U.json records, on its 357 held-out stride-2 problems, MIOpen's
    // static default ahead of the model and the neighbour: `best` (the default method) answers
    // the static default there, and the model elsewhere.
    let (out, err) = predict_mi210(&[], STRIDE2);
    let p = ConvProblem::from_perfdb_key(STRIDE2).unwrap();
    let default =
        tuneinfer::solvers::conv_asm_1x1u::format_config(&tuneinfer::solvers::conv_asm_1x1u::static_default(&p));
    assert_eq!(out.trim(), default);
    assert!(
        err.contains("MIOpen's static default (source default): on the model's held-out problems (stride 2, 357)"),
        "{err}"
    );
    // --method model: the model's own answer, no such note.
    let (_, err) = predict_mi210(&["--method", "model"], STRIDE2);
    assert!(!err.contains("source default"), "{err}");
    // `info --arch` says so under the model.
    let o = run(&["info", "--arch", "gfx90a68"]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(
        out.contains("--method best answers with: stride 2: MIOpen's default (95.2% vs the model's 90.8%)"),
        "{out}"
    );
    // A stride-1 problem of a kind where the model wins: the model answers under best.
    let (_, err) = predict_mi210(&["--beam", "2"], "2048-7-7-1x1-512-7-7-64-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(!err.contains("source default"), "{err}");
}

#[test]
fn neighbour_and_default_answer_every_solver_with_a_valid_config() {
    // gfx906 with the shared gfx906_60 database as the neighbours' rows; problems that are not
    // tuned there (batch 13, 57x57 images), all three directions, every solver with a model.
    let db = common::perfdb_dir().join("gfx906_60.db");
    let db = db.to_str().unwrap();
    let problem = [
        "conv", "-n", "13", "-c", "64", "-H", "57", "-W", "57", "-k", "64", "-y", "3", "-x", "3", "-p", "1", "-q", "1",
        "-F", "0",
    ];
    for (method, source) in [("neighbour", "neighbour"), ("default", "default")] {
        let mut args = vec![
            "predict",
            "--arch",
            "gfx906",
            "--device",
            "cpu",
            "--solver",
            "all",
            "--method",
            method,
            "--system-db",
            db,
        ];
        args.extend(problem);
        let o = run(&args);
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{method}: {}", text(&o.stderr));
        let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
        assert!(rows.len() >= 8, "{method}: {out}");
        for r in &rows {
            let (key, solver, config) = (r[0], r[1], r[3]);
            // Neighbour: its config, or MIOpen's default where no neighbour's config is valid.
            assert!(
                r[5] == source || (method == "neighbour" && r[5] == "default"),
                "{method}: {r:?}"
            );
            let s = solvers::by_name(solver).unwrap();
            let t = solvers::tunable(s).unwrap();
            let p = ConvProblem::from_perfdb_key(key).unwrap();
            let values = t.parse_params(config).unwrap();
            let valid = t.rules(&Target::new("gfx906"), &p).is_valid(&values);
            // MIOpen's static default of the MLIR solvers is a heuristic request (-2s), outside the rules.
            assert!(
                valid || (method == "default" && config.starts_with("-2")),
                "{method} {solver} {key}: {config}"
            );
        }
        assert!(rows.iter().any(|r| r[5] == source), "{method}: {out}");
    }
    // No rows at hand: --method neighbour says what to give.
    let o = run(&[
        "predict",
        "--arch",
        "gfx906",
        "--device",
        "cpu",
        "--method",
        "neighbour",
        "--system-db",
        "none",
        STRIDE2,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--method neighbour needs tuned rows"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["predict", "--method", "oracle", STRIDE2]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_neighbours_answer_is_valid_on_thousands_of_problems_of_another_gpu() {
    // Rows of gfx906_60 answer every applicable problem of gfx900_56's database (a GPU whose
    // problems they never saw): each answer passes the solver's rules for the problem.
    let target = Target::new("gfx906");
    let mut checked = 0usize;
    for solver in [
        "ConvAsm1x1U",
        "ConvOclDirectFwd",
        "ConvBinWinogradRxSf2x3",
        "ConvHipImplicitGemmV4R1Fwd",
    ] {
        let t = solvers::tunable(solvers::by_name(solver).unwrap()).unwrap();
        let rows = common::perfdb_dir().join("gfx906_60.db");
        let n = Neighbours::load(&rows, t, &target).unwrap().expect("rows");
        let problems = common::tuned_problems("gfx900_56.db", "gfx906", solver, 3);
        assert!(problems.len() >= 50, "{solver}: {}", problems.len());
        for p in &problems {
            if t.applicable(&target, p).is_err() {
                continue;
            }
            if let Some(c) = n.answer(&target, p) {
                assert!(
                    t.rules(&target, p).is_valid(&c),
                    "{solver} {}: {c:?}",
                    p.to_perfdb_key()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 2000, "{checked}");
}
