//! Over the real ConvAsm1x1U problems of MIOpen's perf databases (stride 1): every config either
//! mode returns passes the validity rules, and width-1 beam equals MIOpen's greedy walk wherever
//! the walk succeeds.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::perfdb::solver_rows;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::{check_applicable, parse_config, Rules};
use tuneinfer::{DecodeMode, Predictor, Source};

/// Every `step`-th applicable stride-1 problem of every perf database.
fn problems(step: usize) -> Vec<ConvProblem> {
    let mut out = Vec::new();
    let mut dbs: Vec<_> = std::fs::read_dir(common::perfdb_dir())
        .expect("perfdb dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "db"))
        .collect();
    dbs.sort();
    for db in dbs {
        let rows = solver_rows(&db, "ConvAsm1x1U").unwrap_or_else(|e| panic!("{e}"));
        out.extend(
            rows.rows
                .into_iter()
                .map(|r| r.problem)
                .filter(|p| p.stride_h == 1 && p.stride_w == 1 && check_applicable(p).is_ok()),
        );
    }
    out.into_iter().step_by(step).collect()
}

#[test]
fn every_answer_is_valid_and_width_one_equals_greedy() {
    let problems = problems(7);
    assert!(problems.len() >= 3000, "only {} problems", problems.len());
    let pred = Predictor::load("gfx908", "ConvAsm1x1U", &[common::models_dir()]).unwrap();
    let greedy = pred.predict_batch(&problems, DecodeMode::Miopen);
    let beam1 = pred.predict_batch(&problems, DecodeMode::Beam { width: 1, top: 1 });
    let beam4 = pred.predict_batch(&problems, DecodeMode::Beam { width: 4, top: 4 });
    let (mut greedy_ok, mut failures) = (0, 0);
    for (i, p) in problems.iter().enumerate() {
        let rules = Rules::new(p);
        let g = greedy[i].as_ref().unwrap_or_else(|e| panic!("{e}"));
        let b1 = beam1[i].as_ref().unwrap_or_else(|e| panic!("{e}"));
        let b4 = beam4[i].as_ref().unwrap_or_else(|e| panic!("{e}"));
        for answer in g.iter().chain(b1).chain(b4) {
            let cfg = parse_config(&answer.config).unwrap();
            assert!(
                rules.is_valid(&cfg),
                "{} for {}: {}",
                answer.config,
                p.to_perfdb_key(),
                answer.source.as_str()
            );
        }
        assert_eq!(
            b4.iter()
                .map(|a| &a.config)
                .collect::<std::collections::HashSet<_>>()
                .len(),
            b4.len()
        );
        if g[0].source == Source::Model {
            greedy_ok += 1;
            assert_eq!(g[0].config, b1[0].config, "width 1 != greedy for {}", p.to_perfdb_key());
            assert_eq!(g[0].tokens, b1[0].tokens);
        } else {
            failures += 1;
        }
    }
    println!(
        "{} problems: greedy succeeded on {greedy_ok}, fell back on {failures}",
        problems.len()
    );
    assert!(greedy_ok > problems.len() / 2);
}
