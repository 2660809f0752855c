//! MIOpen 3.5.1's 3-D CK grouped solvers, `ConvHipImplicitGemm3DGroup{Fwd,Bwd,Wrw}Xdlops`, as
//! tunable solvers (issue 35 items 2 and 4): kernel ids read and written back through the
//! catalogue, MI300X's tuned rows as samples, the nearest tuned neighbour's answers, MIOpen's
//! default and the refusals. Goldens are MIOpen's own data (rows of
//! `../shared/miopen/perfdb/gfx942130.db.txt.bz2`, quoted with their line numbers) and MIOpen
//! 3.5.1's source (`conv_hip_implicit_gemm_3d_grouped_fwd_xdlops.cpp`).

#[allow(unused_imports)]
use crate::common;

use std::path::PathBuf;
use std::sync::OnceLock;

use tuneinfer::data::{dataset, textdb};
use tuneinfer::neighbour::{valid_neighbour_configs, Neighbours, Variant};
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::ck::index::{default_data_dir, load_index};
use tuneinfer::solvers::ck::instance::parse_kernel_id;
use tuneinfer::solvers::ck::rules::{check_kernel, CkProblem, CkSolver, CkType, CkVersion};
use tuneinfer::solvers::{self, Target, Tunable};
use tuneinfer::Error;

const SOLVERS: [&str; 3] = [
    "ConvHipImplicitGemm3DGroupFwdXdlops",
    "ConvHipImplicitGemm3DGroupBwdXdlops",
    "ConvHipImplicitGemm3DGroupWrwXdlops",
];

fn tunable(name: &str) -> &'static dyn Tunable {
    solvers::by_name(name).unwrap().tunable().expect("a tunable solver")
}

fn mi300x() -> Target {
    Target::new("gfx942130")
}

/// The decompressed text of MIOpen 3.5.1's MI300X database, read once.
fn gfx942130() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| textdb::read_text(&common::perfdb_dir().join("gfx942130.db.txt.bz2")).unwrap())
}

// gfx942130.db.txt.bz2 line 132074 (3-D fwd, NDHWC FP16, N 2, C = K = 128, 3x3x3 filter).
const FWD_KEY: &str = "3x128x146x130x35x3x3x3x128x2x0x0x0x1x1x1x1x1x1x0x1xNDHWCxFP16xF";
const FWD_ID: &str =
    "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<256, 256, 128, 32, Default, 32, 32, 4, 2, 8, 8, 8, 1, 1, 1>";
// Line 132076: the same geometry with K = 3, N = 1.
const FWD_FAR_KEY: &str = "3x128x146x130x35x3x3x3x3x1x0x0x0x1x1x1x1x1x1x0x1xNDHWCxFP16xF";
const FWD_FAR_ID: &str =
    "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<64, 64, 32, 32, Default, 32, 32, 2, 1, 8, 8, 1, 1, 1, 1>";
// The first line of the database with a 3-D row: its bwd and wrw entries (wrw ends in +split_k).
const BWD_KEY: &str = "3x1000x13x13x1x1x1x1x512x1024x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP16xB";
const BWD_ID: &str = "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 128, 256, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 2, 4, 8, 4, 1, 1>";
const WRW_KEY: &str = "3x1000x13x13x1x1x1x1x512x1024x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP16xW";
const WRW_ID: &str = "DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<MNKPadding, CRR> BlkSize: 256, BlkTile: 256x256x32, WaveTile: 32x32, WaveMap: 4x4, VmemReadVec: 8x8, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v4, BlkGemmPipelinePrefetchStages: 3>+32";

#[test]
fn tuned_kernel_ids_round_trip_and_pass_the_rules() {
    common::miopen_dir();
    // The goldens are rows of the database, as quoted.
    for (key, solver, id) in [
        (FWD_KEY, SOLVERS[0], FWD_ID),
        (FWD_FAR_KEY, SOLVERS[0], FWD_FAR_ID),
        (BWD_KEY, SOLVERS[1], BWD_ID),
        (WRW_KEY, SOLVERS[2], WRW_ID),
    ] {
        let line = format!("{key}=");
        let row = gfx942130().lines().find(|l| l.starts_with(&line)).unwrap();
        assert!(row.contains(&format!("{solver}:{id}")), "{row}");
        let t = tunable(solver);
        let config = t.parse_params(id).unwrap();
        assert_eq!(config.len(), 2);
        assert_eq!(t.format_params(&config), id, "{solver}");
        let p = ConvProblem::from_db_key(key).unwrap();
        t.applicable(&mi300x(), &p).unwrap();
        assert!(t.rules(&mi300x(), &p).is_valid(&config), "{key} {id}");
    }
    // The split: 3-D wrw's ids end in +split_k (MIOpen's powers of two), fwd's and bwd's have none.
    let wrw = tunable(SOLVERS[2]);
    let c = wrw.parse_params(WRW_ID).unwrap();
    assert_eq!(c[1], 32);
    let (ts, _) = WRW_ID.rsplit_once('+').unwrap();
    for bad in [ts.to_string(), format!("{ts}+3"), format!("{ts}+256")] {
        assert!(wrw.parse_params(&bad).is_err(), "{bad}");
    }
    let fwd = tunable(SOLVERS[0]);
    assert_eq!(fwd.parse_params(FWD_ID).unwrap()[1], 1);
    assert!(fwd.parse_params(&format!("{FWD_ID}+1")).is_err());
    // An instance no catalogue holds (a tile no row names) is an error, never an answer.
    let unknown = FWD_ID.replace("<256, 256, 128, 32,", "<256, 256, 128, 48,");
    let e = fwd.parse_params(&unknown).unwrap_err().to_string();
    assert!(e.contains("not in MIOpen 3.5.1's"), "{e}");
    // Another direction's instance is not this solver's.
    assert!(fwd.parse_params(BWD_ID).is_err());
}

#[test]
fn mi300x_3d_rows_become_samples() {
    common::miopen_dir();
    for name in SOLVERS {
        let rows = textdb::solver_rows_from_text(gfx942130(), name);
        let ds = dataset::build(&rows, tunable(name), &mi300x());
        let r = &ds.report;
        let kept = r.used + r.duplicates + r.conflicting_duplicates;
        // docs/ck.md: about 19,000 rows each; only keys with an empty output are malformed.
        assert!(r.rows > 18_000, "{name}: {}", r.summary());
        assert!(r.malformed_problem <= 30, "{name}: {}", r.summary());
        assert_eq!(
            (r.malformed_params, r.not_applicable, r.rule_violations),
            (0, 0, 0),
            "{name}: {}\n{:?}",
            r.summary(),
            r.reasons()
        );
        assert_eq!(kept + r.malformed_problem, r.rows, "{name}: {}", r.summary());
    }
}

/// A perf db of two 3-D fwd rows of MIOpen's gfx942130 database: FWD_KEY's tuned kernel moved to
/// batch 3 (FWD_KEY itself is not in it) and FWD_FAR_KEY's row. FWD_KEY's nearest row is the
/// batch-3 one, whose kernel MIOpen tuned for FWD_KEY itself (so it is valid for it).
fn two_row_db(dir: &std::path::Path) -> PathBuf {
    let db = dir.join("gfx942130.db.txt");
    let moved = FWD_KEY.replace("x128x2x0x0x0", "x128x3x0x0x0");
    assert_ne!(moved, FWD_KEY);
    std::fs::write(
        &db,
        format!(
            "{moved}=ConvHipImplicitGemm3DGroupFwdXdlops:{FWD_ID}\n{FWD_FAR_KEY}=ConvHipImplicitGemm3DGroupFwdXdlops:{FWD_FAR_ID}\n"
        ),
    )
    .unwrap();
    db
}

#[test]
fn the_nearest_tuned_neighbour_of_a_two_row_db_answers_the_tuned_kernel() {
    common::miopen_dir();
    let dir = common::scratch_dir("ck-tunable-two-rows");
    let db = two_row_db(&dir);
    let solver = tunable(SOLVERS[0]);
    let n = Neighbours::load(&db, solver, &mi300x()).unwrap().unwrap();
    assert_eq!(n.len(), 2);
    let q = ConvProblem::from_db_key(FWD_KEY).unwrap();
    let answer = n.answer(&mi300x(), &q).unwrap();
    assert_eq!(solver.format_params(&answer), FWD_ID);
    // MIOpen 3.5.1's default for this problem (FP16, C = 128 > 8, one group, K = 128 >= 64):
    // `Init`'s named kernel (fwd:414-420), which the problem supports.
    let default = solver.static_default(&mi300x(), &q);
    assert_eq!(
        solver.format_params(&default),
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<256, 128, 128, 64, Default, 32, 32, 2, 2, 8, 8, 8, 1, 1, \
         BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v3>"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every neighbour answer over MI300X's 3-D problems (every 4th row a query, the others the
/// reference) is a kernel id MIOpen 3.5.1 accepts: written out, read back by the kernel id
/// parser, found in the catalogue of the problem's data type, and supported by CK's rules.
#[test]
fn every_neighbour_answer_is_a_kernel_id_miopen_accepts() {
    common::miopen_dir();
    let index = load_index(&default_data_dir(), &textdb::read_text).unwrap();
    let target = mi300x();
    let mut answered = 0;
    for name in SOLVERS {
        let solver = tunable(name);
        let ck = CkSolver::from_name(name).unwrap();
        let rows = textdb::solver_rows_from_text(gfx942130(), name);
        let samples = dataset::build(&rows, solver, &target).samples;
        let (queries, reference): (Vec<_>, Vec<_>) = samples.into_iter().enumerate().partition(|(i, _)| i % 4 == 0);
        let reference: Vec<_> = reference.into_iter().map(|(_, s)| s).collect();
        for (_, q) in queries.iter().step_by(3) {
            let configs = valid_neighbour_configs(Variant::Solver, solver, &target, &reference, &q.problem, 1);
            let Some(config) = configs.first() else { continue };
            let id = solver.format_params(config);
            let kid = parse_kernel_id(&id).unwrap_or_else(|e| panic!("{name}: {id}: {e}"));
            let dtype = CkType::from(q.problem.precision);
            let entry = index
                .catalogue(ck, dtype)
                .and_then(|c| c.find(&kid.instance.type_string))
                .unwrap_or_else(|| panic!("{name}: {id} not in the {dtype:?} catalogue"));
            let p = CkProblem::new(&q.problem, dtype).unwrap();
            let checked = check_kernel(ck, &entry.instance, kid.split_k, &p, "gfx942", CkVersion::Miopen351);
            assert!(checked.is_ok(), "{name} {}: {id}: {checked:?}", q.problem.to_db_key());
            answered += 1;
        }
    }
    assert!(answered >= 1_000, "{answered}");
}

fn refusal(name: &str, arch: &str, key: &str) -> String {
    let p = ConvProblem::from_db_key(key).unwrap();
    match solvers::by_name(name).unwrap().check(&Target::new(arch), &p) {
        Err(Error::NotApplicable { reason, .. }) => reason,
        other => panic!("{name} on {arch}: {key}: {other:?}"),
    }
}

#[test]
fn refusals_say_why() {
    common::miopen_dir();
    // A 2-D problem (a key of gfx942130's 2-D rows).
    let two_d = "2x1000x13x13x1x1x1x1x512x16x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP16xF";
    let why = refusal(SOLVERS[0], "gfx942130", two_d);
    assert!(
        why.contains("a 2-D problem") && why.contains("3-D problems only"),
        "{why}"
    );
    // Another direction.
    let why = refusal(SOLVERS[0], "gfx942130", BWD_KEY);
    assert!(why.contains("direction"), "{why}");
    // Not a CK arch, and gfx908 (MIOpen's whitelist, no tuned CK rows).
    for arch in ["gfx1030", "gfx908", "gfx906_60"] {
        let why = refusal(SOLVERS[0], arch, FWD_KEY);
        assert!(why.contains(&format!("arch {}", Target::new(arch).arch)), "{why}");
    }
    // wrw BF16: gfx942 and gfx95x only (3d_grouped_wrw:559-561).
    let bf16 = WRW_KEY.replace("FP16", "BF16");
    let why = refusal(SOLVERS[2], "gfx90a68", &bf16);
    assert!(why.contains("BF16"), "{why}");
    assert!(solvers::by_name(SOLVERS[2])
        .unwrap()
        .check(&mi300x(), &ConvProblem::from_db_key(&bf16).unwrap())
        .is_ok());
    // The 2-D solvers still refuse 3-D problems, as before.
    for name in [
        "ConvHipImplicitGemmGroupFwdXdlops",
        "ConvHipImplicitGemmGroupBwdXdlops",
        "ConvHipImplicitGemmGroupWrwXdlops",
    ] {
        let key = match name {
            "ConvHipImplicitGemmGroupFwdXdlops" => FWD_KEY,
            "ConvHipImplicitGemmGroupBwdXdlops" => BWD_KEY,
            _ => WRW_KEY,
        };
        let why = refusal(name, "gfx942130", key);
        assert!(
            why.contains("a 3-D problem") && why.contains("2-D problems only"),
            "{why}"
        );
    }
}

/// `predict --method neighbour` on a MIOpenDriver `--spatial_dim 3` line of FWD_KEY's problem
/// (NDHWC: C 128, D 35, H 146, W 130, 3x3x3 filter, K 128, N 2) on MI300X: the nearest tuned
/// neighbour of the system perf db given, MIOpen's tuned kernel id.
#[test]
fn predict_answers_a_3d_driver_line_with_the_neighbours_kernel_id() {
    common::miopen_dir();
    let dir = common::scratch_dir("ck-tunable-predict");
    let db = two_row_db(&dir);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args([
            "predict",
            "--arch",
            "gfx942130",
            "--solver",
            "ConvHipImplicitGemm3DGroupFwdXdlops",
            "--method",
            "neighbour",
            "--models",
            &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("weights")
                .display()
                .to_string(),
            "--system-db",
            db.to_str().unwrap(),
            "convfp16",
            "--spatial_dim",
            "3",
            "-n",
            "2",
            "-c",
            "128",
            "-!",
            "35",
            "-H",
            "146",
            "-W",
            "130",
            "-k",
            "128",
            "-@",
            "3",
            "-y",
            "3",
            "-x",
            "3",
            "-p",
            "0",
            "-q",
            "0",
            "-$",
            "0",
            "-u",
            "1",
            "-v",
            "1",
            "-#",
            "1",
            "-l",
            "1",
            "-j",
            "1",
            "-^",
            "1",
            "--in_layout",
            "NDHWC",
            "--out_layout",
            "NDHWC",
            "--fil_layout",
            "NDHWC",
            "-F",
            "1",
        ])
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), FWD_ID, "{stderr}");
    assert!(stderr.contains("source neighbour"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `userdb` on a MIOpen log's 3-D line (NCDHW, all three directions) on MI300X writes one CK
/// entry per direction, each a kernel id MIOpen 3.5.1 accepts for its key (read back through
/// the kernel id parser, the catalogue of its type and CK's rules).
#[test]
fn userdb_writes_3d_ck_entries_miopen_accepts() {
    common::miopen_dir();
    let dir = common::scratch_dir("ck-tunable-userdb");
    let log = dir.join("log.txt");
    std::fs::write(
        &log,
        "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 --spatial_dim 3 -n 6 -c 128 -! 35 \
         -H 146 -W 130 -k 128 -@ 3 -y 3 -x 3 -p 1 -q 1 -$ 1 -u 1 -v 1 -# 1 -l 1 -j 1 -^ 1 --in_layout NCDHW -F 0 -t 1\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args([
            "userdb",
            "--arch",
            "gfx942130",
            "--solver",
            "all",
            "--input",
            log.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--miopen-version",
            "HIP.3_5_1_",
            "--models",
            &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("weights")
                .display()
                .to_string(),
            "--system-db",
            common::perfdb_dir().join("gfx942130.db.txt.bz2").to_str().unwrap(),
        ])
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let written = std::fs::read_to_string(dir.join("gfx942130.HIP.3_5_1_.udb.txt")).unwrap();
    let index = load_index(&default_data_dir(), &textdb::read_text).unwrap();
    let mut ck = 0;
    for line in written.lines() {
        let (key, entries) = line.split_once('=').unwrap();
        assert!(
            key.starts_with("3x128x146x130x35x3x3x3x128x6x") && key.contains("NCDHWxFP16"),
            "{key}"
        );
        let p = ConvProblem::from_db_key(key).unwrap();
        for entry in entries.split(';') {
            let (solver, id) = entry.split_once(':').unwrap();
            let Some(s) = CkSolver::from_name(solver) else { continue };
            let kid = parse_kernel_id(id).unwrap();
            let inst = index
                .catalogue(s, CkType::F16)
                .and_then(|c| c.find(&kid.instance.type_string))
                .unwrap_or_else(|| panic!("{id}"));
            let checked = check_kernel(
                s,
                &inst.instance,
                kid.split_k,
                &CkProblem::new(&p, CkType::F16).unwrap(),
                "gfx942",
                CkVersion::Miopen351,
            );
            assert!(checked.is_ok(), "{key} {entry}: {checked:?}");
            ck += 1;
        }
    }
    assert_eq!(ck, 3, "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The features of FWD_KEY by hand: C/G = K/G = 128; y is 33x144x128 (35-3+1, 146-3+1,
/// 130-3+1), so the GEMM's M = 2 * 33 * 144 * 128 = 1,216,512 (log2 20.2143); one group; a
/// 3x3x3 filter (27, log2 4.7549); stride 1, no pad; N 2; x 35x146x130; FP16. The neighbour
/// measures distance over the first seven.
#[test]
fn features_by_hand() {
    common::miopen_dir();
    let t = tunable(SOLVERS[0]);
    let f = t.features(&ConvProblem::from_db_key(FWD_KEY).unwrap());
    let want = [
        7.0, 7.0, 20.2143, 0.0, 4.7549, 0.0, 0.0, 1.0, 5.1293, 7.1898, 7.0224, 1.0,
    ];
    for (i, (got, want)) in f.iter().zip(want).enumerate() {
        assert!(
            (got - want).abs() < 1e-3,
            "feature {i} ({}): {got} vs {want}",
            t.feature_names()[i]
        );
    }
    assert_eq!(t.size_features(), 7);
    // Backward data's M counts dx's pixels. The same key as B gives dy's sizes (MIOpen keys a
    // problem by its direction's input), so dx = x is 37x148x132 (35+3-1, ...): M = 2 * 37 * 148
    // * 132 = 1,445,664 (log2 20.4633), x's depth log2 37 = 5.2095.
    let b = tunable(SOLVERS[1])
        .features(&ConvProblem::from_db_key(&format!("{}xB", FWD_KEY.strip_suffix("xF").unwrap())).unwrap());
    assert!((b[2] - 20.4633).abs() < 1e-3 && (b[8] - 5.2095).abs() < 1e-3, "{b:?}");
}
