//! Issue 35 item 2: the whole-corpus check of MIOpen 3.5.1's tuned CK grouped-convolution rows
//! (`tools/ck_rows.sh` runs this). Prints markdown: rows per (database, solver), parsed, the
//! instance in the catalogue (and on the reachable 2024 list), the rules' passes and failures
//! per (solver, device op) with reasons and example rows, and the catalogue sizes.
//!
//!   cargo run --release --example ck_rows [-- DATA_DIR]   (DATA_DIR: ../shared/miopen)

use std::path::PathBuf;

use tuneinfer::solvers::ck::index::{corpus_report, default_data_dir, load_index, narrowing};

fn main() {
    let dir = std::env::args_os().nth(1).map_or_else(default_data_dir, PathBuf::from);
    let index = match load_index(&dir, &tuneinfer::data::textdb::read_text) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("ck_rows: {e}");
            std::process::exit(2);
        }
    };
    let r = corpus_report(&index);
    for m in &r.missing {
        println!("(database not found: {})\n", m.display());
    }
    println!("### Rows per database and solver\n");
    println!("| database | solver | rows | of them a repeated solver in the line |\n|---|---|---:|---:|");
    for ((db, s), n) in &r.rows {
        println!(
            "| {db} | {s} | {n} | {} |",
            r.repeated.get(&(*db, *s)).copied().unwrap_or(0)
        );
    }
    println!("\n### Per solver: parsed, counted apart\n");
    println!("| solver | rows | parsed | counted apart |\n|---|---:|---:|---|");
    let mut per_solver: std::collections::BTreeMap<_, u64> = Default::default();
    for ((_, s), n) in &r.rows {
        *per_solver.entry(*s).or_insert(0) += n;
    }
    for (s, n) in &per_solver {
        let apart: Vec<String> = r
            .unparsed
            .iter()
            .filter(|((us, _), _)| us == s)
            .map(|((_, what), (k, ex))| format!("{k} ({what}: e.g. {ex})"))
            .collect();
        println!(
            "| {s} | {n} | {} | {} |",
            r.parsed.get(s).copied().unwrap_or(0),
            if apart.is_empty() {
                "0".to_string()
            } else {
                apart.join("; ")
            }
        );
    }
    println!("\n### Per (solver, device op): catalogue and rules\n");
    println!("Rules: MIOpen 3.5.1's CK (`CkVersion::Miopen351`) and, for comparison, the reachable CK bcf7f811 as read (`CkVersion::Develop2025`).\n");
    println!("| solver | device op | rows | in catalogue | on the 2024 list | pass (3.5.1) | fail (3.5.1) | failures by reason (3.5.1) | passed, not fully checked | pass (reachable CK) | failures by reason (reachable CK) |");
    println!("|---|---|---:|---:|---:|---:|---:|---|---|---:|---|");
    let (mut tr, mut tc, mut tl, mut tp, mut tf, mut tpr) = (0, 0, 0, 0, 0, 0);
    for ((s, op), c) in &r.by_op {
        let fails: u64 = c.fail.values().sum();
        let reasons: Vec<String> = c.fail.iter().map(|(why, n)| format!("{n}: {why}")).collect();
        let unchecked: Vec<String> = c.unchecked.iter().map(|(why, n)| format!("{n}: {why}")).collect();
        let reasons_r: Vec<String> = c.fail_reachable.iter().map(|(why, n)| format!("{n}: {why}")).collect();
        println!(
            "| {s} | {op} | {} | {} | {} | {} | {fails} | {} | {} | {} | {} |",
            c.rows,
            c.in_catalogue,
            c.in_reachable_list,
            c.pass,
            reasons.join("; "),
            unchecked.join("; "),
            c.pass_reachable,
            reasons_r.join("; ")
        );
        tpr += c.pass_reachable;
        tr += c.rows;
        tc += c.in_catalogue;
        tl += c.in_reachable_list;
        tp += c.pass;
        tf += fails;
    }
    println!("| **all** | | {tr} | {tc} | {tl} | {tp} | {tf} | | | {tpr} | |");
    if !r.examples.is_empty() {
        println!("\n### Example failing rows\n");
        for ((s, op, why), rows) in &r.examples {
            println!("- {s} / {op} / {why}:");
            for (db, line, key, value) in rows {
                println!("  - `{db}:{line}` `{key}` = `{value}`");
            }
        }
    }
    println!("\n### How much the rules narrow the catalogue (every 20th row)\n");
    println!("| solver | rows sampled | kernel ids per row (catalogue x split-k) | supported per row | share |\n|---|---:|---:|---:|---:|");
    for (s, n) in narrowing(&index, 20) {
        let rows = n.rows.max(1) as f64;
        println!(
            "| {s} | {} | {:.1} | {:.1} | {:.1}% |",
            n.rows,
            n.ids as f64 / rows,
            n.supported as f64 / rows,
            100.0 * n.supported as f64 / (n.ids.max(1) as f64)
        );
    }
    println!("\n### Catalogue sizes (instances per solver and data type)\n");
    println!("| solver | type | instances | of them on the 2024 list |\n|---|---|---:|---:|");
    for ((s, t), (n, reach)) in &r.catalogue_sizes {
        println!("| {s} | {} | {n} | {reach} |", t.name());
    }
}
