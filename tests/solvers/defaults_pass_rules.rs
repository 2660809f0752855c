//! Issue 44 item 2: the rules accept what MIOpen produces. For every tunable solver and every
//! problem it applies to in a shared database, MIOpen's default (what `--method default`
//! answers) passes tuneinfer's rules, as every tuned row does. The sqlite databases whole and
//! the class that broke it (MI100's GTC NHWC, whose default sets a split on an entry whose
//! catalogue flag is 0); `tools/refusals.sh` runs every database (docs/methods.md).

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::solvers::{self, Target};

fn check(db: &str, arch: &str, only: Option<&[&str]>) -> usize {
    let (path, _) = common::perf_database(db);
    let target = Target::new(arch);
    let mut problems = 0;
    let mut bad = Vec::new();
    for solver in solvers::all() {
        if only.is_some_and(|o| !o.contains(&solver.name())) {
            continue;
        }
        let Ok(tunable) = solvers::tunable(solver) else {
            continue;
        };
        let rows = read_rows(&path, solver.name()).unwrap_or_else(|e| panic!("{db}: {e}"));
        if rows.rows.is_empty() {
            continue;
        }
        let ds = build(&rows, tunable, &target);
        problems += ds.report.used;
        // The one tuned row the search cannot produce (MIOpen reads it without checking):
        // `16,16,16,16,1,1,2,3,1` for 256-55-55-1x1-64 FP32 F, a ConvOclDirectFwd-style config
        // (../shared/miopen/solvers/ConvOclDirectFwd1x1.md, "Failures").
        let known = usize::from(db == "gfx906_60.db" && solver.name() == "ConvOclDirectFwd1x1");
        if ds.report.default_rule_violations > 0 || ds.report.rule_violations != known {
            bad.push(format!(
                "{}: {}; rows at rule {:?}; defaults at rule {:?}",
                solver.name(),
                ds.report.summary(),
                ds.report.violations_at,
                ds.report.default_violations_at
            ));
        }
    }
    assert!(bad.is_empty(), "{db}:\n{}", bad.join("\n"));
    problems
}

#[test]
fn miopens_default_passes_the_rules_on_every_problem_of_the_sqlite_databases() {
    for (db, arch) in [
        ("gfx906_60.db", "gfx906_60"),
        ("gfx900_56.db", "gfx900_56"),
        ("gfx942130.db", "gfx942130"),
        ("gfx1030_36.db", "gfx1030_36"),
    ] {
        let n = check(db, arch, None);
        assert!(n > 5_000, "{db}: only {n} problems checked");
    }
}

#[test]
fn miopens_gtc_default_passes_the_rules_on_every_mi100_problem() {
    // Before issue 44: 7,882 / 5,308 / 19,459 problems (fwd / bwd / wrw) whose default broke
    // the rules, and `best` answered them with the model.
    let gtc = [
        "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
        "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
    ];
    let n = check("gfx90878.db.txt.bz2", "gfx90878", Some(&gtc));
    assert!(n > 40_000, "only {n} problems checked");
}
