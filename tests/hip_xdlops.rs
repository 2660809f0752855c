//! MIOpen's HIP xdlops implicit-GEMM solvers (`ConvHipImplicitGemmForwardV4R4Xdlops`,
//! `..._Padded_Gemm`, `ConvHipImplicitGemmForwardV4R5Xdlops`, `ConvHipImplicitGemmWrwV4R4Xdlops`,
//! `..._Padded_Gemm`, `ConvHipImplicitGemmBwdDataV4R1Xdlops`): (a) every tuned row of the MI100
//! (gfx90878) and MI210 (gfx90a68) text databases parses, prints back to the same text and passes
//! the rules on its problem; (b) MIOpen's default (`HeuristicInit`) passes the rules wherever the
//! solver applies to a problem of those databases; (c) hand-derived cases from MIOpen's source.

mod common;

use std::collections::BTreeMap;

use tuneinfer::data::perfdb::SolverRows;
use tuneinfer::data::textdb;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::hip_xdlops::rules::{check, heuristic_init, Prob, Rule};
use tuneinfer::solvers::hip_xdlops::{self, XKind, XdlopsSolver};
use tuneinfer::solvers::{self, IntRules, Target, Tunable};

fn key(k: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

fn rows_of(db: &str, solver: &str, texts: &mut BTreeMap<String, String>) -> SolverRows {
    let text = texts
        .entry(db.to_string())
        .or_insert_with(|| textdb::read_text(&common::perfdb_dir().join(db)).unwrap_or_else(|e| panic!("{e}")));
    textdb::solver_rows_from_text(text, solver)
}

/// (solver, database, rows, not applicable (with reason), rule failures).
const EXPECTED: [(&str, &str, usize, usize, usize); 11] = [
    ("ConvHipImplicitGemmForwardV4R4Xdlops", "gfx90878.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmForwardV4R4Xdlops", "gfx90a68.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm", "gfx90878.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm", "gfx90a68.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmForwardV4R5Xdlops", "gfx90878.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmForwardV4R5Xdlops", "gfx90a68.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmWrwV4R4Xdlops", "gfx90878.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmWrwV4R4Xdlops", "gfx90a68.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm", "gfx90878.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm", "gfx90a68.db.txt.bz2", 0, 0, 0),
    ("ConvHipImplicitGemmBwdDataV4R1Xdlops", "gfx90878.db.txt.bz2", 0, 0, 0),
];

fn solver(name: &str) -> &'static XdlopsSolver {
    hip_xdlops::solvers().into_iter().find(|s| s.name == name).unwrap()
}

#[test]
fn every_tuned_row_parses_round_trips_and_passes_the_rules() {
    let mut texts = BTreeMap::new();
    let mut mismatches = Vec::new();
    for (name, db, rows_want, na_want, fail_want) in EXPECTED {
        let s = solver(name);
        let target = Target::new(db.split('.').next().unwrap());
        let rows = rows_of(db, name, &mut texts);
        // Unreadable keys: only those whose output would be empty (MIOpen's key, not its row).
        assert!(
            rows.rejected.iter().all(|(_, why)| why.contains("would be empty")),
            "{db} {name}: {:?}",
            rows.rejected
        );
        let (mut na, mut fails) = (0, 0);
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut rule_fails: BTreeMap<String, (usize, String)> = BTreeMap::new();
        for row in &rows.rows {
            let c = s.parse_params(&row.params).unwrap_or_else(|e| panic!("{db} {name}: {e}"));
            assert_eq!(s.format_params(&c), row.params, "{db} {name}");
            if let Err(e) = s.applicable(&target, &row.problem) {
                na += 1;
                let why = e.to_string();
                let short = why.split(": ").skip(2).collect::<Vec<_>>().join(": ");
                *reasons.entry(short.chars().take(90).collect()).or_default() += 1;
                continue;
            }
            let prob = s.prob(&target, &row.problem);
            if let Err(r) = check(s.kind, &prob, &c) {
                fails += 1;
                let e = rule_fails.entry(format!("{r:?}")).or_insert((0, String::new()));
                e.0 += 1;
                if e.1.is_empty() {
                    e.1 = format!("{} {}", row.problem.to_db_key(), row.params);
                }
            } else {
                assert!(s.rules(&target, &row.problem).is_valid(&c));
            }
        }
        println!(
            "{db} {name}: {} rows ({} keys unreadable), {na} not applicable, {fails} rule failures",
            rows.rows.len(),
            rows.rejected.len()
        );
        for (why, n) in &reasons {
            println!("   {n} n/a: {why}");
        }
        for (r, (n, ex)) in &rule_fails {
            println!("   {n} fail {r}: e.g. {ex}");
        }
        if (rows.rows.len(), na, fails) != (rows_want, na_want, fail_want) {
            mismatches.push(format!(
                "{db} {name}: {:?} != {:?}",
                (rows.rows.len(), na, fails),
                (rows_want, na_want, fail_want)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}
