//! Scores MIOpen's TunaNet on a MIOpen find-db: how often its pick is the fastest entry that runs,
//! and how much slower it is where it is not.
//!
//!     cargo run --release --example tunanet_score -- FDB [--models DIR] [--device NAME]
//!
//! `--by-class` adds the rows of each (direction, data type) over all records.
//!
//! FDB is one of `../shared/miopen/finddb/*.fdb.txt.bz2` (see its README); the device is the
//! file name's db id (`gfx90a68` -> gfx90a), or `--device`. TunaNet is MIOpen's model for that
//! device (`tunanet::model_arch`: gfx908's for every device but gfx90a and gfx942) from `DIR`
//! (default `../shared/miopen/models`). Prints one markdown row for all records and one for the
//! held-out fifth of the geometries (tuneinfer's split: `data::dataset::split_by_geometry`,
//! fraction 0.2, seed 1, as `train`'s validation side).
//!
//! Per record whose problem TunaNet takes (`TunaNet::supports`):
//! - "fastest": the fastest entry whose solver runs on a default MIOpen install (the record's
//!   solvers minus those MIOpen refuses without a debug switch, finddb/README.md).
//! - "pick": MIOpen's TunaNet fallback (`TunaNet::fallback`) with the applicability this tool can
//!   know: a solver listed in the record applies; a solver of TunaNet's maps refuses a direction
//!   its name excludes (Fwd/Bwd/Wrw; fft forward and backward data) and MIOpen's GEMM solvers
//!   split each direction by geometry (`src/solver/conv/gemm*.cpp` 2d1fd997a: 1x1 pad 0 stride 1,
//!   1x1 pad 0 stride 2 (2-D), the rest); tuneinfer's own applicability rules decide the solvers
//!   it implements (Winograd RxS, GTC NHWC, CK grouped); any other unlisted solver is taken to
//!   apply. A pick the record does not list is "unlisted" (it may apply and lose within its
//!   algorithm, or not apply at all: the record cannot tell).
//! - "first listed": the first solver in TunaNet's order that the record lists and that runs: the
//!   pick if every unlisted solver ranked above it did not apply (an upper bound for TunaNet).
//!
//! Figures: top-1 (pick's time equals the fastest), the geometric mean of pick time / fastest
//! over listed picks, the unlisted share.

use std::collections::HashSet;
use std::path::PathBuf;

use tuneinfer::data::dataset::{split_by_geometry, Sample};
use tuneinfer::problem::{Direction, Precision};
use tuneinfer::solvers::{self, Target};
use tuneinfer::tunanet::{self, TunaNet};
use tuneinfer::ConvProblem;

struct Record {
    problem: ConvProblem,
    /// (solver, time ms) of the entries whose solver runs by default.
    entries: Vec<(String, f64)>,
}

/// MIOpen refuses these solvers unless a debug switch is set (finddb/README.md, with MIOpen's
/// lines), so their find-db entries never run by default.
fn runs(solver: &str, arch: &str, p: &ConvProblem) -> bool {
    let gfx90a = arch == "gfx90a";
    let gfx10_11 = arch.starts_with("gfx10") || arch.starts_with("gfx11");
    match solver {
        "ConvCkIgemmFwdV6r1DlopsNchw" | "ConvHipImplicitGemmBwdDataV4R1" | "ConvHipImplicitGemmBwdDataV1R1Xdlops" => false,
        "ConvHipImplicitGemmBwdDataV4R1Xdlops" => {
            !(p.precision == Precision::Fp32 || (gfx90a && p.precision == Precision::Bf16))
        }
        "ConvHipImplicitGemmBwdDataV1R1" => p.precision != Precision::Bf16,
        "ConvOclDirectFwd1x1" | "ConvOclBwdWrW1x1" => !gfx10_11,
        "ConvAsmBwdWrW3x3" => !(gfx90a && p.precision == Precision::Fp32),
        // gfx90a's default fp16-alt setting (conv_asm_1x1u.cpp:561, conv_asm_dir_BwdWrW1x1.cpp:509).
        "ConvAsm1x1U" => !(gfx90a && p.precision == Precision::Fp16 && p.direction == Direction::BackwardData),
        "ConvAsmBwdWrW1x1" => !(gfx90a && p.precision == Precision::Fp16),
        _ => true,
    }
}

/// What this tool knows of a TunaNet solver's applicability beyond the record: Some(false) when
/// MIOpen's rules say it does not apply, Some(true) when they say it does, None when unknown.
fn known_applicable(solver: &str, target: &Target, p: &ConvProblem) -> Option<bool> {
    let d = p.direction;
    let by_name = if solver == "fft" {
        Some(d != Direction::BackwardWeights)
    } else if solver.contains("Fwd") {
        Some(d == Direction::Forward)
    } else if solver.contains("Bwd") {
        Some(d == Direction::BackwardData)
    } else if solver.contains("Wrw") || solver.contains("WrW") {
        Some(d == Direction::BackwardWeights)
    } else {
        None
    };
    if by_name == Some(false) {
        return Some(false);
    }
    if solver.starts_with("Gemm") {
        let one = p.filter_h == 1 && p.filter_w == 1 && p.pad_h == 0 && p.pad_w == 0;
        let s1 = one && p.stride_h == 1 && p.stride_w == 1;
        let s2 = one && p.stride_h == 2 && p.stride_w == 2 && p.depth.is_none();
        let fits = match solver {
            "GemmFwd1x1_0_1" | "GemmBwd1x1_stride1" | "GemmWrw1x1_stride1" => s1,
            "GemmFwd1x1_0_2" | "GemmBwd1x1_stride2" => s2,
            "GemmFwdRest" | "GemmBwdRest" => !s1 && !s2,
            "GemmWrwUniversal" => !s1,
            _ => return None,
        };
        return if fits { None } else { Some(false) };
    }
    if let Ok(s) = solvers::by_name(solver) {
        return Some(s.check(target, p).is_ok());
    }
    None
}

fn parse(text: &str, arch: &str) -> (Vec<Record>, usize) {
    let mut out = Vec::new();
    let mut unparsed = 0;
    for line in text.lines() {
        let Some((key, rest)) = line.trim().split_once('=') else {
            continue;
        };
        let Ok(problem) = ConvProblem::from_perfdb_key(key) else {
            unparsed += 1;
            continue;
        };
        let mut entries = Vec::new();
        for e in rest.split(';') {
            let Some((head, tail)) = e.split_once(':') else { continue };
            let fields: Vec<&str> = tail.split(',').collect();
            // 3.5.1's `ALGO:SOLVER,TIME,...` or 2024's `SOLVER:TIME,WORKSPACE,ALGO`.
            let (solver, time) = if head.starts_with("miopen") {
                (fields.first().copied(), fields.get(1))
            } else {
                (Some(head), fields.first())
            };
            if let (Some(s), Some(Ok(t))) = (solver, time.map(|t| t.parse::<f64>())) {
                if runs(s, arch, &problem) && t > 0.0 {
                    entries.push((s.to_string(), t));
                }
            }
        }
        if !entries.is_empty() {
            out.push(Record { problem, entries });
        }
    }
    (out, unparsed)
}

/// One pick against one reference time.
#[derive(Default, Clone)]
struct Score {
    /// Problems counted.
    n: usize,
    /// Picks whose time equals the reference.
    top1: usize,
    /// Picks the record lists, and the sum of ln(pick time / reference) over them.
    listed: usize,
    log_sum: f64,
    /// Picks the record does not list, and problems with no pick.
    unlisted: usize,
    none: usize,
}

impl Score {
    fn add(&mut self, pick: Option<f64>, picked: bool, reference: f64) {
        self.n += 1;
        match (picked, pick) {
            (false, _) => self.none += 1,
            (true, None) => self.unlisted += 1,
            (true, Some(t)) => {
                self.listed += 1;
                self.log_sum += (t / reference).ln();
                if t <= reference {
                    self.top1 += 1;
                }
            }
        }
    }

    fn cells(&self) -> String {
        let pct = |a: usize| if self.n == 0 { f64::NAN } else { 100.0 * a as f64 / self.n as f64 };
        let gm = if self.listed == 0 { f64::NAN } else { (self.log_sum / self.listed as f64).exp() };
        format!("{:.1}% | {gm:.3}x | {:.1}%", pct(self.top1), pct(self.unlisted + self.none))
    }
}

#[derive(Default)]
struct Figures {
    records: usize,
    taken: usize,
    /// [pick, first listed] x [fastest entry that runs, fastest entry of TunaNet's solvers].
    scores: [[Score; 2]; 2],
}

impl Figures {
    fn rows(&self, name: &str) -> Vec<String> {
        let taken = format!(
            "{} ({:.1}%)",
            self.taken,
            if self.records == 0 { f64::NAN } else { 100.0 * self.taken as f64 / self.records as f64 }
        );
        let refs = ["fastest entry", "fastest of TunaNet's solvers"];
        let mut out = Vec::new();
        for (r, reference) in refs.iter().enumerate() {
            out.push(format!(
                "| {name} | {} | {taken} | {reference} ({}) | {} | {} |",
                self.records,
                self.scores[0][r].n,
                self.scores[0][r].cells(),
                self.scores[1][r].cells()
            ));
        }
        out
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut fdb = None;
    let mut models = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen/models");
    let mut device = None;
    let mut by_class = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--models" => models = PathBuf::from(it.next().expect("--models DIR")),
            "--device" => device = it.next().cloned(),
            "--by-class" => by_class = true,
            _ => fdb = Some(PathBuf::from(a)),
        }
    }
    let Some(fdb) = fdb else {
        eprintln!("usage: tunanet_score FDB [--models DIR] [--device NAME] [--by-class]");
        std::process::exit(2);
    };
    let file_name = fdb.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
    let db_id = device.unwrap_or_else(|| file_name.split('.').next().unwrap_or("").to_string());
    let target = Target::new(&db_id);
    let started = std::time::Instant::now();
    let net = match TunaNet::load_in(&db_id, &[models]) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let loaded = started.elapsed();
    let text = match tuneinfer::format::read_text_or_bzip2(&fdb) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let (records, unparsed) = parse(&text, &target.arch);
    let samples: Vec<Sample> = records
        .iter()
        .enumerate()
        .map(|(i, r)| Sample {
            source_id: i as i64,
            problem: r.problem.clone(),
            config: Vec::new(),
        })
        .collect();
    let (_, held) = split_by_geometry(&samples, 0.2, 1);
    let held: HashSet<i64> = held.iter().map(|s| s.source_id).collect();

    let problems: Vec<ConvProblem> = records.iter().map(|r| r.problem.clone()).collect();
    let started = std::time::Instant::now();
    let ranked = net.rank_many(&problems);
    let ranking = started.elapsed();
    let in_map: HashSet<&str> = net.solvers().iter().map(String::as_str).collect();
    let mut all = Figures::default();
    let mut val = Figures::default();
    let mut classes: std::collections::BTreeMap<String, Figures> = Default::default();
    for (i, (r, order)) in records.iter().zip(ranked).enumerate() {
        let class = format!("{} {}", r.problem.direction, r.problem.precision);
        let mut figs: Vec<&mut Figures> = if held.contains(&(i as i64)) {
            vec![&mut all, &mut val]
        } else {
            vec![&mut all]
        };
        if by_class {
            figs.push(classes.entry(class).or_default());
        }
        let fastest = r.entries.iter().map(|e| e.1).fold(f64::INFINITY, f64::min);
        let fastest_in_map = r
            .entries
            .iter()
            .filter(|e| in_map.contains(e.0.as_str()) && tunanet::is_dynamic(&e.0))
            .map(|e| e.1)
            .fold(f64::INFINITY, f64::min);
        let time_of = |s: &str| r.entries.iter().find(|e| e.0 == s).map(|e| e.1);
        let outcome = order.ok().map(|order| {
            let mut applicable = |s: &str| {
                time_of(s).is_some() || known_applicable(s, &target, &r.problem).unwrap_or(true)
            };
            let pick = net
                .fallback(&r.problem, &mut applicable)
                .ok()
                .and_then(|v| v.into_iter().next())
                .map(|s| s.solver);
            let first = order
                .iter()
                .map(|(s, _)| s.as_str())
                .find(|s| tunanet::is_dynamic(s) && time_of(s).is_some())
                .map(str::to_string);
            (pick, first)
        });
        for f in figs {
            f.records += 1;
            let Some((pick, first)) = &outcome else { continue };
            f.taken += 1;
            for (k, choice) in [pick, first].into_iter().enumerate() {
                let t = choice.as_deref().and_then(time_of);
                f.scores[k][0].add(t, choice.is_some(), fastest);
                if fastest_in_map.is_finite() {
                    f.scores[k][1].add(t, choice.is_some(), fastest_in_map);
                }
            }
        }
    }
    println!(
        "{file_name}: TunaNet {} model ({:?}); {} records read, {unparsed} keys unparsed",
        net.variant().model_arch(),
        net.variant(),
        records.len()
    );
    eprintln!(
        "TunaNet loaded in {:.1} ms; {} problems ranked in {:.1} ms ({:.2} us each, one thread)",
        loaded.as_secs_f64() * 1e3,
        problems.len(),
        ranking.as_secs_f64() * 1e3,
        ranking.as_secs_f64() * 1e6 / problems.len().max(1) as f64
    );
    println!(
        "| subset | records | TunaNet takes | against (problems) | top-1 | geomean pick / reference (listed picks) | unlisted or none | first-listed top-1 | first-listed geomean | first-listed none |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for row in all.rows("all").into_iter().chain(val.rows("held-out fifth (seed 1)")) {
        println!("{row}");
    }
    for (class, f) in &classes {
        for row in f.rows(class) {
            println!("{row}");
        }
    }
}
