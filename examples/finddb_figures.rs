//! The find-db ranking's held-out figures per GPU (docs/finddb.md): the k-NN ranking, the plain
//! nearest neighbour and MIOpen's dynamic-only choice on a fifth of the geometries held out
//! (seed 1). Run by tools/finddb_figures.sh:
//! `cargo run --release --example finddb_figures -- ../shared/miopen/finddb [LIMIT]`.

use std::path::PathBuf;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let validation = args.iter().any(|a| a == "--validation");
    args.retain(|a| a != "--validation");
    let dir = PathBuf::from(args.first().map(String::as_str).unwrap_or("../shared/miopen/finddb"));
    let limit = args.get(1).and_then(|s| s.parse::<usize>().ok());
    let files = [
        ("MI100", "gfx908", "gfx90878.3.5.1.HIP.fdb.txt.bz2"),
        ("MI210", "gfx90a", "gfx90a68.3.5.1.HIP.fdb.txt.bz2"),
        ("gfx906", "gfx906", "gfx906_60.3.5.1.HIP.fdb.txt.bz2"),
        ("gfx1030", "gfx1030", "gfx1030_36.3.5.1.HIP.fdb.txt.bz2"),
        ("MI300X", "gfx942", "gfx942130.2024-11.HIP.fdb.txt.bz2"),
        ("Vega (gfx900)", "gfx900", "gfx900_56.3.5.1.HIP.fdb.txt.bz2"),
    ];
    println!("| GPU (find-db) | held out | method | top-1 | geomean pick/fastest | unlisted |");
    println!("|---|---|---|---|---|---|");
    // Exploration: FINDDB_MARGIN and FINDDB_ALL_CLASSES=1 change the record policy.
    let mut policy = tuneinfer::finddb::Policy::default();
    if let Some(m) = std::env::var("FINDDB_MARGIN").ok().and_then(|m| m.parse().ok()) {
        policy.margin = m;
    }
    if std::env::var("FINDDB_ALL_CLASSES").is_ok_and(|v| v == "1") {
        policy.only_non_dynamic = false;
    }
    eprintln!("{policy:?}");
    let mut classes = Vec::new();
    let mut refused = Vec::new();
    for (gpu, arch, file) in files {
        let records = match tuneinfer::finddb::read_find_db(&dir.join(file)) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{file}: {e}");
                std::process::exit(3);
            }
        };
        let t = std::time::Instant::now();
        let report = tuneinfer::finddb::eval::evaluate(arch, records, Default::default(), policy, limit, validation);
        eprintln!("{gpu}: {:.1} s", t.elapsed().as_secs_f64());
        for (name, f) in &report.overall {
            println!(
                "| {gpu} (`{file}`) | {} | {name} | {:.1}% | {:.4}x | {:.1}% |",
                f.problems,
                100.0 * f.top1_share(),
                f.geomean(),
                100.0 * f.unlisted_share()
            );
        }
        for ((dir, ty), m) in &report.by_class {
            let (Some(k), Some(d)) = (m.get("knn"), m.get("dynamic")) else { continue };
            if k.geomean() >= d.geomean() {
                refused.push(format!("(\"{arch}\", '{dir}', \"{ty}\")"));
            }
            classes.push(format!(
                "| {gpu} | {dir} {ty} | {} | {:.1}% / {:.1}% | {:.4}x / {:.4}x | {:.1}% / {:.1}% |",
                k.problems,
                100.0 * k.top1_share(),
                100.0 * d.top1_share(),
                k.geomean(),
                d.geomean(),
                100.0 * k.unlisted_share(),
                100.0 * d.unlisted_share()
            ));
        }
    }
    println!();
    println!("By class (k-NN / dynamic-only):");
    println!();
    println!("| GPU | class | held out | top-1 | geomean | unlisted |");
    println!("|---|---|---|---|---|---|");
    for c in classes {
        println!("{c}");
    }
    println!();
    println!("Classes where the k-NN's geomean does not beat the dynamic-only choice{}:", if validation { " (validation split)" } else { "" });
    println!();
    println!("{}", refused.join(", "));
}
