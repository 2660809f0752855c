//! The nearest tuned neighbour and MIOpen 3.5.1's default (`Init`: the first supported instance,
//! split 1) on the held-out geometries of MIOpen 3.5.1's CK rows of one database, for the six CK
//! grouped solvers through the 3.5.1 catalogue, the 2-D ones too (which `eval --no-model` cannot
//! reach: their registered solvers are MIOpen's KTN ones). The split is `train`'s (seed 1, a
//! fifth of the geometries held out, a tenth for early stopping, both used as the reference).
//!
//! ```sh
//! cargo run --release --example ck_neighbour -- ../shared/miopen/perfdb/gfx942130.db.txt.bz2 gfx942130
//! ```

use std::path::Path;

use tuneinfer::data::{dataset, textdb};
use tuneinfer::solvers::ck::tunable::{BWD_2D, BWD_3D, FWD_2D, FWD_3D, WRW_2D, WRW_3D};
use tuneinfer::solvers::Tunable;

fn main() -> tuneinfer::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(db), Some(arch)) = (args.first(), args.get(1)) else {
        return Err(tuneinfer::Error::Usage("usage: ck_neighbour PERF_DB GPU".into()));
    };
    let only_2d = args.get(2).is_some_and(|a| a == "--2d");
    let text = textdb::read_text(Path::new(db))?;
    let target = tuneinfer::solvers::Target::new(arch);
    let all: [&dyn Tunable; 6] = [&FWD_2D, &BWD_2D, &WRW_2D, &FWD_3D, &BWD_3D, &WRW_3D];
    for solver in all.into_iter().take(if only_2d { 3 } else { 6 }) {
        let rows = textdb::solver_rows_from_text(&text, solver.solver_name());
        let ds = dataset::build(&rows, solver, &target);
        println!("{}: {}", solver.solver_name(), ds.report.summary());
        for line in ds.report.reasons().iter().take(6) {
            println!("  {line}");
        }
        if ds.samples.is_empty() {
            continue;
        }
        let [mut reference, early_stop, validation] = dataset::three_way_split(&ds.samples, 0.2, 0.1, 1);
        reference.extend(early_stop);
        let table = tuneinfer::eval::evaluate(arch, solver, None, None, &reference, &validation, 16);
        println!("{}", table.to_text());
    }
    Ok(())
}
