//! The find-db ranking's held-out figures per GPU (docs/finddb.md): the k-NN ranking, what MIOpen
//! runs with tuneinfer's user find-db, the plain nearest neighbour, MIOpen's dynamic-only choice
//! and MIOpen's TunaNet on a fifth of the geometries held out (seed 1). Run by
//! tools/finddb_figures.sh:
//!
//!     cargo run --release --example finddb_figures -- [FINDDB_DIR] [LIMIT] [--validation] [--models DIR] [--by-class]
//!
//! FINDDB_DIR defaults to ../shared/miopen/finddb, the TunaNet models to ../shared/miopen/models
//! (a GPU whose model does not load gets no TunaNet rows). LIMIT caps the held-out problems per
//! GPU (evenly spaced). `--validation` scores the validation split inside the training side
//! instead (for choosing settings: the held-out fifth is never used for that). Exploration:
//! FINDDB_K, FINDDB_TAU, FINDDB_ABSENT, FINDDB_LOST, FINDDB_STRUCTURE, FINDDB_BATCH, FINDDB_WIN change the ranking's settings.

use std::path::PathBuf;

use tuneinfer::finddb::{self, eval};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |args: &mut Vec<String>, name: &str| {
        let had = args.iter().any(|a| a == name);
        args.retain(|a| a != name);
        had
    };
    let validation = flag(&mut args, "--validation");
    let by_class = flag(&mut args, "--by-class");
    let mut models = PathBuf::from("../shared/miopen/models");
    if let Some(i) = args.iter().position(|a| a == "--models") {
        if let Some(dir) = args.get(i + 1) {
            models = PathBuf::from(dir);
        }
        args.drain(i..(i + 2).min(args.len()));
    }
    let dir = PathBuf::from(args.first().map(String::as_str).unwrap_or("../shared/miopen/finddb"));
    let limit = args.get(1).and_then(|s| s.parse::<usize>().ok());
    let files = [
        ("MI100", "gfx908", "gfx90878.3.5.1.HIP.fdb.txt.bz2"),
        ("MI210", "gfx90a", "gfx90a68.3.5.1.HIP.fdb.txt.bz2"),
        ("gfx906", "gfx906", "gfx906_60.3.5.1.HIP.fdb.txt.bz2"),
        ("gfx1030", "gfx1030", "gfx1030_36.3.5.1.HIP.fdb.txt.bz2"),
        ("MI300X", "gfx942", "gfx942130.2024-11.HIP.fdb.txt.bz2"),
        ("Vega 56/64", "gfx900", "gfx900_56.3.5.1.HIP.fdb.txt.bz2"),
    ];
    let mut params = finddb::Params::default();
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok());
    if let Some(v) = env("FINDDB_ABSENT") {
        params.absent = v;
    }
    if let Some(v) = env("FINDDB_LOST") {
        params.lost = v;
    }
    if let Some(v) = env("FINDDB_K") {
        params.k = v.max(1.0) as usize;
    }
    if let Some(v) = env("FINDDB_TAU") {
        params.tau = v;
    }
    if let Some(v) = env("FINDDB_STRUCTURE") {
        params.structure = v;
    }
    if let Some(v) = env("FINDDB_BATCH") {
        params.batch = v;
    }
    if let Some(v) = env("FINDDB_WIN") {
        params.win = v;
    }
    let policy = finddb::Policy::default();
    eprintln!("{params:?} {policy:?}");
    let split = if validation {
        "validation split (inside the training side)"
    } else {
        "held-out fifth (seed 1)"
    };
    println!(
        "Split: {split}{}.",
        limit.map_or(String::new(), |l| format!(", at most {l} problems per GPU"))
    );
    println!();
    println!("| GPU | find-db | problems | method | top-1 | geomean pick/fastest (listed) | unlisted |");
    println!("|---|---|---|---|---|---|---|");
    let mut classes = Vec::new();
    let mut worse = Vec::new();
    for (gpu, arch, file) in files {
        let records = match finddb::read_find_db(&dir.join(file)) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{file}: {e}");
                std::process::exit(3);
            }
        };
        let net = match tuneinfer::tunanet::TunaNet::load_in(arch, std::slice::from_ref(&models)) {
            Ok(n) => Some(n),
            Err(e) => {
                eprintln!("{gpu}: no TunaNet rows: {e}");
                None
            }
        };
        let t = std::time::Instant::now();
        let report = eval::evaluate(arch, records, params, policy, limit, validation, net.as_ref());
        eprintln!("{gpu}: {:.1} s", t.elapsed().as_secs_f64());
        let model = net.as_ref().map_or("", |n| n.variant().model_arch());
        let rows: [(&str, String); 7] = [
            ("knn", "tuneinfer ranking (k-NN)".into()),
            ("tuneinfer", "MIOpen with tuneinfer's user find-db".into()),
            ("nearest", "plain nearest neighbour".into()),
            ("dynamic", "dynamic-only (MIOpen's Find, no record)".into()),
            (
                "knn/tunanet",
                format!("tuneinfer ranking, on TunaNet's problems ({model} model)"),
            ),
            ("tunanet", format!("TunaNet ({model} model)")),
            ("dynamic/tunanet", "dynamic-only, on TunaNet's problems".into()),
        ];
        for (key, label) in rows {
            let Some(f) = report.overall.get(key) else { continue };
            println!(
                "| {gpu} | `{file}` | {} | {label} | {:.2}% | {:.3}x | {:.2}% |",
                f.problems,
                100.0 * f.top1_share(),
                f.geomean(),
                100.0 * f.unlisted_share()
            );
        }
        for (&(dir, ty), m) in &report.by_class {
            let (Some(k), Some(t), Some(n), Some(d)) =
                (m.get("knn"), m.get("tuneinfer"), m.get("nearest"), m.get("dynamic"))
            else {
                continue;
            };
            let paired = report.paired_geomean((dir, ty));
            if paired.is_some_and(|(g, _)| g > 1.0) {
                worse.push(format!("(\"{arch}\", '{dir}', \"{ty}\")"));
            }
            let f = |x: &[&eval::Figures], v: &dyn Fn(&eval::Figures) -> String| {
                x.iter().map(|f| v(f)).collect::<Vec<_>>().join(" / ")
            };
            let all = [k, t, n, d];
            classes.push(format!(
                "| {gpu} | {dir} {ty} | {} | {} | {} | {} | {} |",
                k.problems,
                f(&all, &|f| format!("{:.1}%", 100.0 * f.top1_share())),
                f(&all, &|f| format!("{:.3}x", f.geomean())),
                f(&all, &|f| format!("{:.1}%", 100.0 * f.unlisted_share())),
                paired.map_or("-".into(), |(g, n)| format!("{g:.3}x ({n})"))
            ));
        }
    }
    if by_class {
        println!();
        println!("By class (k-NN / MIOpen with tuneinfer's user find-db / nearest neighbour / dynamic-only); paired: what runs with the user find-db over the dynamic-only choice where the record lists both (problems):");
        println!();
        println!("| GPU | class | problems | top-1 | geomean | unlisted | paired |");
        println!("|---|---|---|---|---|---|---|");
        for c in classes {
            println!("{c}");
        }
        println!();
        println!(
            "Classes where the user find-db's paired geomean is above 1 (slower than MIOpen's Find): {}",
            if worse.is_empty() {
                "none".to_string()
            } else {
                worse.join(", ")
            }
        );
    }
}
