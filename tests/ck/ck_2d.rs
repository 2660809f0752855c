//! MIOpen 3.5.1's 2-D CK grouped solvers, `ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops`, beyond
//! MIOpen's 2024 KTN models (issue 35 item 2): NCHW and BF16 problems answered with kernel ids
//! MIOpen 3.5.1 accepts (the nearest tuned neighbour of the cell's record, beside the KTN where
//! the KTN is found), the KTN's answers and refusals as they were, and MIOpen's refusals with
//! the reason. Goldens are MIOpen's own: rows of `../shared/miopen/perfdb/gfx942130.db.txt.bz2`
//! (quoted with their line numbers), the expectations of `../shared/miopen/README.md` for the
//! KTN models, and MIOpen 3.5.1's rules as `src/solvers/ck/rules.rs` cites them.

#[allow(unused_imports)]
use crate::common;

use std::path::PathBuf;

use tuneinfer::data::textdb;
use tuneinfer::models::Located;
use tuneinfer::predict::{DecodeMode, Predictor, Source};
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::ck::index::{default_data_dir, load_index};
use tuneinfer::solvers::ck::instance::parse_kernel_id;
use tuneinfer::solvers::ck::rules::{check_kernel, CkProblem, CkSolver, CkType, CkVersion};
use tuneinfer::solvers::{self, Target};
use tuneinfer::Error;

const FWD: &str = "ConvHipImplicitGemmGroupFwdXdlops";
const BWD: &str = "ConvHipImplicitGemmGroupBwdXdlops";
const WRW: &str = "ConvHipImplicitGemmGroupWrwXdlops";

/// gfx942130.db.txt.bz2 line 1493: 2-D fwd, NCHW FP16, C = K = 1024, 14x14, 3x3 filter, pad 1,
/// stride 2, N 16, one group; an `_V3` instance (not on the 2024 lists).
const FWD_NCHW_KEY: &str = "2x1024x14x14x1x3x3x1x1024x16x1x1x0x2x2x0x1x1x0x0x1xNCHWxFP16xF";
const FWD_NCHW_ID: &str = "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<128, 16, 64, 64, Default, 16, 16, 1, 2, 8, 8, 4, 1, 1, BlkGemmPipelineScheduler: Interwave, BlkGemmPipelineVersion: v2>";
/// Line 189: 2-D bwd data, NCHW BF16, C 1024, 12x12, K 512, N 128 (2-D bwd ids end in +split_k).
const BWD_BF16_KEY: &str = "2x1024x12x12x1x3x3x1x512x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxBF16xB";
const BWD_BF16_ID: &str =
    "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 128, 256, 32, 8, 8, Default, 32, 32, 2, 4, 8, 4, 1, 1>+1";
/// Line 190: the same geometry, backward weights.
const WRW_BF16_KEY: &str = "2x1024x12x12x1x3x3x1x512x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxBF16xW";
const WRW_BF16_ID: &str =
    "DeviceGroupedConvBwdWeight_Xdl_CShuffle<256, 256, 128, 4, Default, 8, 4, 2, 8, 4, 8, 2, 1, 1, 8>+4";

/// The decompressed text of MIOpen 3.5.1's MI300X database, read once.
fn gfx942130() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| textdb::read_text(&common::perfdb_dir().join("gfx942130.db.txt.bz2")).unwrap())
}

/// Is `id` a kernel id MIOpen 3.5.1 accepts for `key` on gfx942: it parses, its instance is in
/// the catalogue of the key's data type, CK's rules and MIOpen's applicability hold, and it has
/// `+split_k` exactly where the solver's ids have one (2-D bwd and wrw)?
fn accepted_by_351(solver: &str, key: &str, id: &str) -> std::result::Result<(), String> {
    let index = load_index(&default_data_dir(), &textdb::read_text).map_err(|e| e.to_string())?;
    let s = CkSolver::from_name(solver).ok_or("not a CK solver")?;
    let p = ConvProblem::from_db_key(key).map_err(|e| e.to_string())?;
    let dtype = CkType::from(p.precision);
    let kid = parse_kernel_id(id).map_err(|e| e.to_string())?;
    if kid.split_k.is_some() != (solver != FWD) {
        return Err(format!(
            "{id}: +split_k where the solver has none, or none where it has one"
        ));
    }
    let entry = index
        .catalogue(s, dtype)
        .and_then(|c| c.find(&kid.instance.type_string))
        .ok_or_else(|| format!("{id}: not in the {dtype:?} catalogue"))?;
    let ckp = CkProblem::new(&p, dtype).map_err(|e| e.to_string())?;
    check_kernel(s, &entry.instance, kid.split_k, &ckp, "gfx942", CkVersion::Miopen351).map_err(|e| format!("{e:?}"))
}

#[test]
fn the_goldens_are_rows_of_the_database_and_pass_the_351_rules() {
    common::miopen_dir();
    for (solver, key, id) in [
        (FWD, FWD_NCHW_KEY, FWD_NCHW_ID),
        (BWD, BWD_BF16_KEY, BWD_BF16_ID),
        (WRW, WRW_BF16_KEY, WRW_BF16_ID),
    ] {
        let row = gfx942130().lines().find(|l| l.starts_with(&format!("{key}="))).unwrap();
        assert!(row.contains(&format!("{solver}:{id}")), "{row}");
        accepted_by_351(solver, key, id).unwrap();
        // The solver applies (MIOpen 3.5.1) and its 2024 KTN does not take the problem.
        let s = solvers::by_name(solver).unwrap();
        let p = ConvProblem::from_db_key(key).unwrap();
        let mi300x = Target::new("gfx942130");
        assert!(s.check(&mi300x, &p).is_ok(), "{solver} {key}");
        let why = s.check_network(&mi300x, &p).unwrap_err().to_string();
        assert!(why.contains("layout NCHW") || why.contains("BF16"), "{why}");
        // The kernel id reads back through the solver's tunable side and prints as MIOpen's.
        let t = s
            .tunable()
            .expect("the 2-D CK solvers are tunable (MIOpen 3.5.1's catalogue)");
        assert_eq!(t.format_params(&t.parse_params(id).unwrap()), id);
    }
}

/// A perf db of one row: `key`'s tuned kernel moved to batch `n` (`key` itself is not in it), so
/// the nearest tuned neighbour of `key` is that row, whose kernel MIOpen tuned for `key`.
fn moved_row_db(dir: &std::path::Path, solver: &str, key: &str, id: &str, n: &str) -> PathBuf {
    let fields: Vec<&str> = key.split('x').collect();
    let mut moved: Vec<&str> = fields.clone();
    moved[9] = n;
    let moved = moved.join("x");
    assert_ne!(moved, key);
    let db = dir.join("gfx942130.db.txt");
    std::fs::write(&db, format!("{moved}={solver}:{id}\n")).unwrap();
    db
}

fn run(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(args)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH")
        .output()
        .unwrap()
}

/// Where MIOpen's KTN model is found (`--arch gfx942` with MIOpen's models) and refuses the
/// problem (NCHW, BF16), the cell's record beside it answers: the nearest tuned neighbour's
/// kernel id, MIOpen's tuned value for the problem. On `gfx942130` tuneinfer's own model serves
/// the solver (through MIOpen 3.5.1's catalogue): `--method neighbour` gives the same tuned
/// neighbour, `--method model` the model's kernel id, one MIOpen 3.5.1 accepts for the problem.
#[test]
fn nchw_and_bf16_problems_get_the_tuned_neighbours_kernel_id_with_and_without_the_ktn() {
    common::miopen_dir();
    let dir = common::scratch_dir("ck-2d-predict");
    let models = common::models_dir();
    let weights = common::weights_dir();
    for (solver, key, id, n) in [
        (FWD, FWD_NCHW_KEY, FWD_NCHW_ID, "15"),
        (BWD, BWD_BF16_KEY, BWD_BF16_ID, "120"),
        (WRW, WRW_BF16_KEY, WRW_BF16_ID, "120"),
    ] {
        let db = moved_row_db(&dir, solver, key, id, n);
        for (arch, models_dir, method) in [
            ("gfx942", &models, "best"),
            ("gfx942130", &weights, "neighbour"),
            ("gfx942130", &weights, "model"),
        ] {
            let out = run(&[
                "predict",
                "--arch",
                arch,
                "--solver",
                solver,
                "--device",
                "cpu",
                "--models",
                models_dir.to_str().unwrap(),
                "--system-db",
                db.to_str().unwrap(),
                "--method",
                method,
                key,
            ]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{solver} {arch}: {stderr}");
            let answer = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if method == "model" {
                accepted_by_351(solver, key, &answer).unwrap_or_else(|e| panic!("{solver} {key} {answer}: {e}"));
                assert!(!stderr.contains("source neighbour"), "{stderr}");
                continue;
            }
            assert_eq!(answer, id, "{solver} {arch}: {stderr}");
            assert!(stderr.contains("source neighbour"), "{stderr}");
            if arch == "gfx942" {
                assert!(stderr.contains("the model does not take this problem"), "{stderr}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

struct KtnCase {
    solver: &'static str,
    driver: &'static str,
    expected: &'static str,
    source: Source,
}

/// MIOpen's own expectations for the gfx942 KTN models (`../shared/miopen/README.md`, the CK
/// section; also `tests/ck/ck_miopen.rs`): unchanged with the cell's record beside the model.
const KTN_CASES: [KtnCase; 4] = [
    KtnCase {
        solver: FWD,
        driver: "convfp16 -n 256 -c 2016 -H 7 -W 7 -k 192 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -g 16 --in_layout NHWC",
        expected: "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<64, 64, 64, 32, Filter1x1Stride1Pad0, 32, 32, 2, 2, 1, 1, 1, 1, 1, 1>",
        source: Source::Model,
    },
    KtnCase {
        solver: BWD,
        driver: "conv -n 96 -c 64 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 64 -F 2 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<64, 64, 64, 32, 8, 8, Default, 32, 32, 2, 2, 1, 1, 1, 1>",
        source: Source::Model,
    },
    KtnCase {
        solver: WRW,
        driver: "conv -n 512 -c 3 -H 219 -W 219 -k 64 -y 11 -x 11 -p 2 -q 2 -u 4 -v 4 -g 1 -F 4 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdWeight_Xdl_CShuffle<64, 64, 64, 4, Default, 4, 2, 2, 1, 4, 1, 4, 1, 1, 1>+1",
        source: Source::Default,
    },
    KtnCase {
        solver: WRW,
        driver: "convfp16 -n 1024 -c 480 -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -g 32 -F 4 --in_layout NHWC",
        expected: "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle<64, 16, 16, 32, Default, 8, 1, 1, 1, 4, 1, 4, 1, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v2, 1>+1",
        source: Source::Default,
    },
];

#[test]
fn ktn_answers_are_unchanged_with_the_cells_record_beside_the_model() {
    common::miopen_dir();
    for case in &KTN_CASES {
        let p = predictor_with_cell(case.solver);
        let problem = ConvProblem::parse(case.driver).unwrap();
        assert!(!p.answered_by_cell(&problem), "{}", case.driver);
        let got = p.predict_one(&problem, DecodeMode::Miopen).unwrap();
        assert_eq!(
            (got[0].config.as_str(), got[0].source),
            (case.expected, case.source),
            "{}",
            case.driver
        );
    }
}

/// MIOpen's gfx942 KTN model of `solver` with the shipped gfx942130 record beside it.
fn predictor_with_cell(solver: &str) -> Predictor {
    let p = Predictor::load("gfx942", solver, &[common::models_dir(), common::weights_dir()])
        .unwrap()
        .with_catalogue_dir(Some(common::ck_dir()));
    let served = p.served.as_ref().unwrap();
    assert!(
        matches!(served.located, Located::Ktn(_)),
        "{solver}: {:?}",
        served.located
    );
    let (record, _) = served.cell.as_ref().expect("the record beside the KTN");
    assert!(
        record.ends_with(format!("gfx942130_{solver}.neighbour.json")),
        "{}",
        record.display()
    );
    p
}

#[test]
fn refusals_keep_the_ktn_messages_and_say_miopens_reasons() {
    common::miopen_dir();
    // MIOpen 3.5.1 refuses 2-D BF16 backward weights off gfx942/gfx95x (`grouped_wrw:637`).
    let wrw = solvers::by_name(WRW).unwrap();
    let bf16 = ConvProblem::from_db_key(WRW_BF16_KEY).unwrap();
    match wrw.check(&Target::new("gfx90a68"), &bf16) {
        Err(Error::NotApplicable { reason, .. }) => assert!(reason.contains("BF16"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(wrw.check(&Target::new("gfx942130"), &bf16).is_ok());
    // A 3-D problem: the 2-D solvers refuse it, with or without a network.
    let three_d = ConvProblem::from_db_key("3x128x146x130x35x3x3x3x128x2x0x0x0x1x1x1x1x1x1x0x1xNDHWCxFP16xF").unwrap();
    let fwd = solvers::by_name(FWD).unwrap();
    for e in [
        fwd.check(&Target::new("gfx942130"), &three_d).unwrap_err(),
        predictor_with_cell(FWD)
            .predict_one(&three_d, DecodeMode::Miopen)
            .unwrap_err(),
    ] {
        assert!(e.to_string().contains("2-D problems only"), "{e}");
    }
    // The KTN alone (MIOpen's models, no record beside it) refuses NCHW and BF16 as it always
    // did: the same messages.
    let ktn = Predictor::load("gfx942", FWD, &[common::models_dir()])
        .unwrap()
        .with_catalogue_dir(Some(common::ck_dir()));
    assert!(ktn.served.as_ref().unwrap().cell.is_none());
    let nchw = ConvProblem::from_db_key(FWD_NCHW_KEY).unwrap();
    let e = ktn.predict_one(&nchw, DecodeMode::Miopen).unwrap_err().to_string();
    assert!(e.contains("layout NCHW is not supported"), "{e}");
    let mut bf16_fwd = nchw.clone();
    bf16_fwd.layout = tuneinfer::problem::Layout::Nhwc;
    bf16_fwd.precision = tuneinfer::problem::Precision::Bf16;
    let e = ktn.predict_one(&bf16_fwd, DecodeMode::Miopen).unwrap_err().to_string();
    assert!(e.contains("data type BF16 has no model"), "{e}");
    // With the record beside it, both fall through to the cell (MIOpen 3.5.1's default here:
    // no rows at hand), a kernel id MIOpen 3.5.1 accepts.
    let with_cell = predictor_with_cell(FWD);
    for (p, key) in [(&nchw, FWD_NCHW_KEY.to_string()), (&bf16_fwd, bf16_fwd.to_db_key())] {
        let got = with_cell.predict_one(p, DecodeMode::Miopen).unwrap();
        assert_eq!(got[0].source, Source::Default);
        accepted_by_351(FWD, &key, &got[0].config).unwrap();
    }
}

/// `userdb` on a MIOpen log with 2-D NCHW FP16 and NCHW BF16 lines (`-F 0`: all three
/// directions), by MIOpen's KTN models (MI300A, `--models` MIOpen's models) and by tuneinfer's
/// (MI300X):
/// one CK entry per (problem, direction), each a kernel id MIOpen 3.5.1 accepts for its key, with
/// `+split_k` for bwd and wrw. The problems are not in the system db (pad 1 where its rows of the
/// geometry have pad 0), so they are predicted.
#[test]
fn userdb_writes_2d_nchw_and_bf16_ck_entries_miopen_accepts() {
    common::miopen_dir();
    let models = common::models_dir();
    let weights = common::weights_dir();
    // tuneinfer's own model serves MI300X (`gfx942130`); MIOpen's KTN serves MI300A
    // (`gfx942e4`: no model of that very GPU, and MIOpen's gfx942 model comes before the closest
    // CU count's) where MIOpen's models are found, with MI300X's record beside it.
    for (ktn, models_dir) in [(true, &models), (false, &weights)] {
        let arch = if ktn { "gfx942e4" } else { "gfx942130" };
        let dir = common::scratch_dir(&format!("ck-2d-userdb-{ktn}"));
        let log = dir.join("log.txt");
        std::fs::write(
            &log,
            "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 24 -c 1024 -H 12 -W 12 -k 512 \
             -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -g 1 -F 0\n\
             MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 -n 24 -c 1024 -H 12 -W 12 -k 512 \
             -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -g 1 -F 0\n",
        )
        .unwrap();
        let out = run(&[
            "userdb",
            "--arch",
            arch,
            "--solver",
            "all",
            "--device",
            "cpu",
            "--input",
            log.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--miopen-version",
            "HIP.3_5_1_",
            "--models",
            models_dir.to_str().unwrap(),
            "--system-db",
            common::perfdb_dir().join("gfx942130.db.txt.bz2").to_str().unwrap(),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{ktn}: {stderr}");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(".udb.txt"))
            .unwrap_or_else(|| panic!("{ktn}: no user db written: {stdout}{stderr}"));
        let written = std::fs::read_to_string(&file).unwrap();
        let mut ck = Vec::new();
        for line in written.lines() {
            let (key, entries) = line.split_once('=').unwrap();
            for entry in entries.split(';') {
                let (solver, id) = entry.split_once(':').unwrap();
                if ![FWD, BWD, WRW].contains(&solver) {
                    continue;
                }
                accepted_by_351(solver, key, id).unwrap_or_else(|e| panic!("{ktn} {key} {entry}: {e}"));
                ck.push((key.to_string(), solver.to_string()));
            }
        }
        // Two problems, three directions each: six CK entries, NCHW FP16 and BF16.
        assert_eq!(ck.len(), 6, "{ktn}: {written}\n{stdout}");
        assert_eq!(
            ck.iter().filter(|(k, _)| k.contains("NCHWxBF16")).count(),
            3,
            "{written}"
        );
        assert_eq!(
            ck.iter().filter(|(k, _)| k.contains("NCHWxFP16")).count(),
            3,
            "{written}"
        );
        if ktn {
            assert!(
                stdout.contains("2 problem(s) its network does not take, answered by the cell's record beside it"),
                "{stdout}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
