//! Shared test helpers: where the MIOpen data lives.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/miopen` relative to the crate (the data is never copied into the repo), or
/// `$TUNEINFER_MIOPEN_DATA`. Where it is missing, the test binary says so and ends, passing
/// ("skipped: MIOpen data not found at ..."), except under `TUNEINFER_CI=1`, where missing data
/// fails the test.
pub fn miopen_dir() -> PathBuf {
    let dir = match std::env::var_os("TUNEINFER_MIOPEN_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen"),
    };
    if !dir.join("models").is_dir() || !dir.join("perfdb").is_dir() {
        let message = format!(
            "skipped: MIOpen data not found at {} (MIOpen's models/ and perfdb/, kept beside the \
             checkout as ../shared/miopen, see README.md); point $TUNEINFER_MIOPEN_DATA at a copy \
             to run these tests",
            dir.display()
        );
        if std::env::var("TUNEINFER_CI").ok().as_deref() == Some("1") {
            panic!("TUNEINFER_CI=1 and the data is missing: {message}");
        }
        // Straight to the process's stderr (the test harness captures print macros), then end
        // the whole test binary: every test in it needs the data or is cheap to skip with them.
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "{message}");
        std::process::exit(0);
    }
    dir
}

pub fn models_dir() -> PathBuf {
    miopen_dir().join("models")
}

pub fn perfdb_dir() -> PathBuf {
    miopen_dir().join("perfdb")
}

/// All `*.ktn.model` encoder/decoder files (not metadata), sorted.
pub fn ktn_model_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(models_dir())
        .expect("../shared/miopen/models must exist (see README)")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".ktn.model") && !name.contains("_metadata")
        })
        .collect();
    files.sort();
    files
}

/// Copies MIOpen's gfx908 ConvAsm1x1U model (its three `.ktn.model` files) into `dir`, for
/// tests that damage or list a model of their own.
pub fn copy_gfx908_asm1x1u_model(dir: &std::path::Path) {
    for part in ["encoder", "decoder", "metadata"] {
        let name = format!("gfx908_ConvAsm1x1U_{part}.ktn.model");
        std::fs::copy(models_dir().join(&name), dir.join(&name)).expect("copy the gfx908 model");
    }
}

/// Model directories `[dir, models_dir()]` where `dir` (made empty under the temp directory,
/// named by `name`) holds a copy of MIOpen's gfx908 ConvAsm1x1U model whose encoder is not JSON
/// any more; returns the directories and that encoder file. The damaged model comes first, an
/// intact one second: loading must report the damage, not fall through to the intact copy.
pub fn damaged_model_before_intact_one(name: &str) -> (Vec<PathBuf>, PathBuf) {
    let dir = std::env::temp_dir().join(format!("tuneinfer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    copy_gfx908_asm1x1u_model(&dir);
    let encoder = dir.join("gfx908_ConvAsm1x1U_encoder.ktn.model");
    std::fs::write(&encoder, "{ this is not a KTN encoder").expect("damage the encoder");
    (vec![dir, models_dir()], encoder)
}

/// The composable_kernel instance lists (`../shared/miopen/ck`).
pub fn ck_dir() -> PathBuf {
    miopen_dir().join("ck")
}

/// `Some(value)`, or `None` after printing "skipped: no GPU adapter" where the machine has no
/// Vulkan adapter; under `TUNEINFER_CI=1` (CI installs lavapipe) a missing adapter fails instead,
/// so GPU tests cannot skip silently there.
pub fn adapter_or_skip<T, E: std::fmt::Display>(opened: Result<T, E>) -> Option<T> {
    match opened {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(
                std::env::var("TUNEINFER_CI").ok().as_deref() != Some("1"),
                "TUNEINFER_CI=1 but no GPU adapter: {e}"
            );
            println!("skipped: no GPU adapter ({e})");
            None
        }
    }
}

/// The process-wide GPU context (see [`adapter_or_skip`]).
#[cfg(feature = "gpu")]
pub fn gpu() -> Option<std::sync::Arc<tuneinfer::gpu::GpuContext>> {
    adapter_or_skip(tuneinfer::gpu::GpuContext::shared())
}

/// A GPU context of the test's own (faults and profiling are per context; see [`adapter_or_skip`]).
#[cfg(feature = "gpu")]
pub fn fresh_gpu() -> Option<tuneinfer::gpu::GpuContext> {
    adapter_or_skip(tuneinfer::gpu::GpuContext::open(true))
}

/// One line per problem: its answers' configs, or its error.
pub fn config_lines(results: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>]) -> Vec<String> {
    results
        .iter()
        .map(|x| match x {
            Ok(v) => v.iter().map(|p| p.config.clone()).collect::<Vec<_>>().join(" | "),
            Err(e) => format!("error: {e}"),
        })
        .collect()
}

/// Asserts that `got` (GPU) has `want`'s (CPU) configs and sources, and the same errors, problem
/// by problem; returns how many problems decoded and the largest score difference.
pub fn assert_same_predictions(
    label: &str,
    problems: &[tuneinfer::problem::ConvProblem],
    want: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
    got: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
) -> (usize, f32) {
    assert_eq!(want.len(), got.len(), "{label}");
    let (mut same, mut worst_score) = (0, 0f32);
    for ((p, w), g) in problems.iter().zip(want).zip(got) {
        match (w, g) {
            (Ok(w), Ok(g)) => {
                let wc: Vec<(&str, _)> = w.iter().map(|x| (x.config.as_str(), x.source)).collect();
                let gc: Vec<(&str, _)> = g.iter().map(|x| (x.config.as_str(), x.source)).collect();
                assert_eq!(wc, gc, "{label} {}", p.to_perfdb_key());
                for (a, b) in w.iter().zip(g) {
                    if let (Some(a), Some(b)) = (a.score, b.score) {
                        // f32::max would pass over a NaN: it never passes.
                        assert!(!a.is_nan() && !b.is_nan(), "{label} {}: NaN score", p.to_perfdb_key());
                        worst_score = worst_score.max((a - b).abs());
                    }
                }
                same += 1;
            }
            (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string()),
            _ => panic!("{label} {}: cpu {w:?} vs gpu {g:?}", p.to_perfdb_key()),
        }
    }
    (same, worst_score)
}

/// [`assert_same_predictions`], and scores within `tolerance`; prints the count.
#[allow(dead_code)]
pub fn assert_same_within(
    label: &str,
    problems: &[tuneinfer::problem::ConvProblem],
    want: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
    got: &[tuneinfer::Result<Vec<tuneinfer::Prediction>>],
    tolerance: f32,
) {
    let (same, worst) = assert_same_predictions(label, problems, want, got);
    assert!(worst <= tolerance, "{label}: score difference {worst:e}");
    println!(
        "{label}: {same} of {} problems identical, worst score difference {worst:e}",
        problems.len()
    );
}

/// The shared perf databases under `perfdb/`: the sqlite files, then MIOpen's 2019 text files.
pub const PERF_DATABASES: [&str; 7] = [
    "gfx906_60.db",
    "gfx900_56.db",
    "gfx1030_36.db",
    "gfx942130.db",
    "history/gfx906_60.2019.cd.pdb.txt",
    "history/gfx900_56.2019.cd.pdb.txt",
    "history/gfx906_64.2019.cd.pdb.txt",
];

/// A shared perf database (a name of [`PERF_DATABASES`]): its path and the arch its rows are for
/// (its file name starts with MIOpen's database name, e.g. `gfx906_60` -> gfx906).
pub fn perf_database(name: &str) -> (PathBuf, String) {
    let file = name.rsplit('/').next().unwrap_or(name);
    let stem = file.split('.').next().unwrap_or(file);
    let arch = tuneinfer::solvers::split_db_name(stem).0.to_string();
    (perfdb_dir().join(name), arch)
}

/// Up to `per_db` problems of `solver` from each sqlite perf-db, deduplicated, in file order.
pub fn perfdb_problems(solver: &str, per_db: usize) -> Vec<tuneinfer::problem::ConvProblem> {
    let mut problems: Vec<tuneinfer::problem::ConvProblem> = Vec::new();
    let mut dbs: Vec<_> = std::fs::read_dir(perfdb_dir())
        .expect("../shared/miopen/perfdb")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "db"))
        .collect();
    dbs.sort();
    for db in dbs {
        let rows = tuneinfer::data::perfdb::solver_rows(&db, solver).expect("perf-db rows");
        for r in rows.rows.into_iter().take(per_db) {
            if !problems.contains(&r.problem) {
                problems.push(r.problem);
            }
        }
    }
    problems
}

/// Every shared perf database, sqlite then the 2019 text files, each group in name order.
pub fn all_perfdbs() -> Vec<PathBuf> {
    let mut dbs: Vec<PathBuf> = Vec::new();
    for dir in [perfdb_dir(), perfdb_dir().join("history")] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("perfdb dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        dbs.extend(found);
    }
    dbs
}

/// Every distinct problem of `solver` in all shared databases that it applies to on `target`,
/// in the order first seen (the whole-corpus comparisons' problem set).
pub fn corpus(solver: &str, target: &tuneinfer::solvers::Target) -> Vec<tuneinfer::problem::ConvProblem> {
    let tunable = tuneinfer::solvers::tunable(tuneinfer::solvers::by_name(solver).expect("solver")).expect("tunable");
    let mut seen = std::collections::HashSet::new();
    let mut problems = Vec::new();
    for db in all_perfdbs() {
        let rows = tuneinfer::data::dataset::read_rows(&db, solver).unwrap_or_else(|e| panic!("{e}"));
        for r in rows.rows {
            if tunable.applicable(target, &r.problem).is_ok() && seen.insert(r.problem.clone()) {
                problems.push(r.problem);
            }
        }
    }
    problems
}

/// The models the whole-corpus checks run: MIOpen's gfx908 ConvAsm1x1U model, then every
/// shipped model of ours in `weights/` (solver order of `solvers::all()`), as (solver, arch,
/// model directories, ours?).
pub fn corpus_models() -> Vec<(String, String, Vec<PathBuf>, bool)> {
    let weights = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights");
    let mut runs = vec![(
        "ConvAsm1x1U".to_string(),
        "gfx908".to_string(),
        vec![models_dir()],
        false,
    )];
    for s in tuneinfer::solvers::all().into_iter().filter(|s| s.tunable().is_some()) {
        for arch in [
            "gfx906",
            "gfx906_64",
            "gfx900",
            "gfx1030",
            "gfx942",
            "gfx90878",
            "gfx90a68",
            "gfx942130",
        ] {
            let file_name = tuneinfer::seq2seq::weights::file_solver_name(s.name());
            let meta = weights.join(format!("{arch}_{file_name}.json"));
            if !meta.is_file() {
                continue;
            }
            runs.push((s.name().to_string(), arch.to_string(), vec![weights.clone()], true));
            // A model across GPUs also serves the GPUs of its pool it was validated on (those
            // without a model of their own), reading their GPU features.
            let (info, _) = tuneinfer::seq2seq::weights::read_info(&meta).unwrap();
            for member in info.validated_gpus() {
                if !weights.join(format!("{member}_{file_name}.json")).is_file() {
                    runs.push((s.name().to_string(), member, vec![weights.clone()], true));
                }
            }
        }
    }
    runs
}

/// Every applicable ConvAsm1x1U problem of the shared perf databases, each once, split into
/// those `hard` picks and every `every`-th of the others (the GPU tests' hard classes).
#[allow(dead_code)]
pub fn asm1x1u_hard_and_sample(
    hard: fn(&tuneinfer::problem::ConvProblem) -> bool,
    every: usize,
) -> (
    Vec<tuneinfer::problem::ConvProblem>,
    Vec<tuneinfer::problem::ConvProblem>,
) {
    // MIOpen's KTN model's problems (stride 1: `IsModelApplicable`), which these tests run.
    use tuneinfer::solvers::conv_asm_1x1u::{check_model_applicable as check_applicable, NAME};
    let mut seen = std::collections::HashSet::new();
    let mut all = Vec::new();
    for name in PERF_DATABASES {
        let (path, _) = perf_database(name);
        let rows = tuneinfer::data::dataset::read_rows(&path, NAME).unwrap_or_else(|e| panic!("{name}: {e}"));
        for r in rows.rows {
            if check_applicable(&r.problem).is_ok() && seen.insert(r.problem.clone()) {
                all.push(r.problem);
            }
        }
    }
    let (hard_ones, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(hard);
    (hard_ones, rest.into_iter().step_by(every.max(1)).collect())
}

/// The integer columns of MIOpen's sqlite `config` table in the order of its 24-field text key
/// (`ProblemDescription::Visit`, `src/include/miopen/conv/problem_description.hpp`; the three
/// text columns layout, data_type and direction follow), for tests that read or build MIOpen's
/// sqlite perf databases.
#[allow(dead_code)]
pub const CONFIG_INT_COLUMNS: [&str; 21] = [
    "spatial_dim",
    "in_channels",
    "in_h",
    "in_w",
    "in_d",
    "fil_h",
    "fil_w",
    "fil_d",
    "out_channels",
    "batchsize",
    "pad_h",
    "pad_w",
    "pad_d",
    "conv_stride_h",
    "conv_stride_w",
    "conv_stride_d",
    "dilation_h",
    "dilation_w",
    "dilation_d",
    "bias",
    "group_count",
];

/// Every `every`-th of a hard class, spread over it, for the lavapipe tests that check a GPU
/// path against the CPU problem by problem (each takes minutes on the whole class); with
/// `TUNEINFER_ALL_HARD=1` the whole class (`tools/gpu_hard_all.sh`).
pub fn hard_share(
    hard_ones: Vec<tuneinfer::problem::ConvProblem>,
    every: usize,
) -> Vec<tuneinfer::problem::ConvProblem> {
    if std::env::var_os("TUNEINFER_ALL_HARD").is_some_and(|v| v == "1") {
        return hard_ones;
    }
    hard_ones.into_iter().step_by(every.max(1)).collect()
}

/// Trains a tiny model of `solver` on the shared database `db` (600 rows, 2 epochs, hidden 16)
/// into a fresh temporary directory named after `tag` and the solver, and returns it: enough to
/// exercise a solver's search on the CPU and the GPU before (or without) a shipped model.
pub fn tiny_model(tag: &str, db: &str, arch: &str, solver: &str) -> PathBuf {
    tiny_model_pooled(tag, db, arch, solver, &[])
}

/// [`tiny_model`] trained with other GPUs' shared databases too (`--other-gpu-perf-db`: the GPU
/// is an input; each database's first 600 rows).
pub fn tiny_model_pooled(tag: &str, db: &str, arch: &str, solver: &str, other_dbs: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-test-{tag}-{solver}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut o = tuneinfer::train::TrainOptions::new(&perfdb_dir().join(db), arch, solver, &dir);
    o.max_rows = Some(600);
    o.hidden = 16;
    o.embed = 8;
    o.batch = 16;
    o.epochs = 2;
    o.threads = 1;
    o.verbose = false;
    o.other_gpu_perf_dbs = other_dbs.iter().map(|d| perfdb_dir().join(d)).collect();
    tuneinfer::train::train(&o, None).unwrap_or_else(|e| panic!("{solver}: {e}"));
    dir
}

/// A tiny model of `solver` ([`tiny_model`]) on every `step`-th tuned problem of `db`
/// ([`tuned_problems`], at least `min_problems`): every answer of MIOpen's greedy walk and of
/// beam 4 is a valid config (the model's and the static default's alike), some come from the
/// model, and the GPU gives the CPU's configs ("skipped: no GPU adapter" without one).
#[cfg(feature = "gpu")]
pub fn tiny_model_valid_and_gpu_same(tag: &str, db: &str, arch: &str, solver: &str, step: usize, min_problems: usize) {
    pooled_tiny_model_valid_and_gpu_same(tag, db, arch, solver, &[], step, min_problems)
}

/// [`tiny_model_valid_and_gpu_same`] of a [`tiny_model_pooled`] model.
#[cfg(feature = "gpu")]
pub fn pooled_tiny_model_valid_and_gpu_same(
    tag: &str,
    db: &str,
    arch: &str,
    solver: &str,
    other_dbs: &[&str],
    step: usize,
    min_problems: usize,
) {
    use tuneinfer::{DecodeMode, Predictor, Source};
    let dir = tiny_model_pooled(tag, db, arch, solver, other_dbs);
    // The problems the network takes (the tiny model has no cell record beside it to answer
    // the rest, e.g. 3-D problems beside the 2-D V4R4 networks).
    let target = tuneinfer::solvers::Target::new(arch);
    let engine = tuneinfer::solvers::by_name(solver).unwrap();
    let mut problems = tuned_problems(db, arch, solver, step);
    problems.retain(|p| engine.check_network(&target, p).is_ok());
    assert!(problems.len() >= min_problems, "{solver}: {} problems", problems.len());
    let cpu = Predictor::load(arch, solver, std::slice::from_ref(&dir)).unwrap_or_else(|e| panic!("{e}"));
    let tunable = tuneinfer::solvers::tunable(cpu.solver).unwrap();
    let modes = [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }];
    let mut wants = Vec::new();
    for mode in modes {
        let want = cpu.predict_batch(&problems, mode);
        let mut from_model = 0;
        for (p, a) in problems.iter().zip(&want) {
            let a = a.as_ref().unwrap_or_else(|e| panic!("{solver} {p}: {e}"));
            for x in a {
                let c = tunable.parse_params(&x.config).unwrap();
                assert!(
                    tunable.rules(&cpu.target, p).is_valid(&c),
                    "{solver} {mode:?} {p}: {} ({:?}) is not valid",
                    x.config,
                    x.source
                );
                from_model += usize::from(x.source != Source::Default);
            }
        }
        println!(
            "{solver} {mode:?}: {from_model} model answers on {} problems",
            problems.len()
        );
        assert!(from_model > 0, "{solver} {mode:?}: no model answer");
        wants.push(want);
    }
    if let Some(ctx) = gpu() {
        let gpu = tuneinfer::gpu::GpuPredictor::load(arch, solver, std::slice::from_ref(&dir), ctx)
            .unwrap_or_else(|e| panic!("{e}"));
        for (mode, want) in modes.into_iter().zip(&wants) {
            let got = gpu.predict_batch(&problems, mode);
            let (same, worst) = assert_same_predictions(&format!("{solver} {mode:?}"), &problems, want, &got);
            println!("{solver} {mode:?}: {same} problems identical, worst score difference {worst:e}");
        }
    } else {
        println!("skipped: no GPU adapter: {solver}'s GPU == CPU comparison did not run");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `step`-th distinct applicable problem of the solver's tuned rows in the shared `db`.
pub fn tuned_problems(db: &str, arch: &str, solver: &str, step: usize) -> Vec<tuneinfer::problem::ConvProblem> {
    let s = tuneinfer::solvers::by_name(solver).unwrap();
    let t = s.tunable().unwrap();
    let rows = tuneinfer::data::dataset::read_rows(&perfdb_dir().join(db), solver).unwrap();
    let ds = tuneinfer::data::dataset::build(&rows, t, &tuneinfer::solvers::Target::new(arch));
    ds.samples.iter().step_by(step).map(|s| s.problem.clone()).collect()
}

/// Plain depth-first search: can `prefix` be completed with values of `domain`?
pub fn plain_completable(r: &dyn tuneinfer::solvers::IntRules, prefix: &mut Vec<i64>, domain: &[i64]) -> bool {
    if !r.prefix_valid(prefix) {
        return false;
    }
    if prefix.len() == r.config_len() {
        return true;
    }
    for &v in domain {
        prefix.push(v);
        let found = plain_completable(r, prefix, domain);
        prefix.pop();
        if found {
            return true;
        }
    }
    false
}

/// Every prefix over `domain` that is prefix-valid, up to `depth` values: the empty one, then
/// by length, each length in the order of its shorter prefixes, then of `domain`.
pub fn valid_prefixes(r: &dyn tuneinfer::solvers::IntRules, domain: &[i64], depth: usize) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    let mut frontier = vec![Vec::new()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for p in &frontier {
            for &v in domain {
                let mut q: Vec<i64> = p.clone();
                q.push(v);
                if r.prefix_valid(&q) {
                    next.push(q);
                }
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

/// The project's shipped models (`weights/`).
pub fn weights_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights")
}

/// An empty scratch directory `tuneinfer-{tag}-{pid}` under the system's temporary directory
/// (emptied first when a former run left it).
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The name the test harness gives test `function` of the module at `module` (`module_path!()`):
/// the path without the binary's crate, for `--exact` when a test re-runs its own binary.
pub fn test_name(module: &str, function: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{function}"),
        None => function.to_string(),
    }
}
