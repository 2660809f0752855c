//! ConvAsm1x1U at stride 2 (issue 36): MIOpen applies the solver to 1x1 stride-2 convolutions
//! (a subsampling kernel before a forward problem, an upsampling one after a backward-data one:
//! `conv_asm_1x1u.cpp`, `UseSubsample`/`UseUpsample`, `IsApplicable`'s `stride_w <= 2`), and its
//! databases tune them. Every tuned stride-2 row of every shared database is applicable and its
//! tuned config passes the rules; tuneinfer's own models answer them with valid configs; MIOpen's
//! KTN model does not (MIOpen applies it at stride 1 only).

mod common;

use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::{check_applicable, parse_config, Rules};
use tuneinfer::{DecodeMode, Predictor};

/// Every shared database's ConvAsm1x1U rows at stride 2: (database, problem, tuned config).
fn stride2_rows() -> Vec<(String, ConvProblem, String)> {
    let mut out = Vec::new();
    for db in common::all_perfdbs() {
        let rows = tuneinfer::data::dataset::read_rows(&db, "ConvAsm1x1U").unwrap_or_else(|e| panic!("{e}"));
        let name = db.file_name().unwrap().to_string_lossy().into_owned();
        for r in rows.rows {
            if r.problem.stride_h == 2 || r.problem.stride_w == 2 {
                out.push((name.clone(), r.problem, r.params));
            }
        }
    }
    out
}

#[test]
fn every_tuned_stride_2_row_is_applicable_and_its_config_valid() {
    let rows = stride2_rows();
    // MI100's and MI210's 3.5.1 databases tune hundreds of them (issue 36: 10% of their rows).
    let on = |db: &str| rows.iter().filter(|(d, _, _)| d.starts_with(db)).count();
    assert!(on("gfx90878") >= 100 && on("gfx90a68") >= 100, "{} rows", rows.len());
    let mut failures = Vec::new();
    let mut older_format = 0;
    for (db, p, params) in &rows {
        if let Err(e) = check_applicable(p) {
            failures.push(format!("{db} {}: {e}", p.to_perfdb_key()));
            continue;
        }
        // The 2019 files write 6 parameters (an older kernel's): not this solver's config.
        let Ok(cfg) = parse_config(params) else {
            assert!(db.contains("2019"), "{db}: {params}");
            older_format += 1;
            continue;
        };
        if !Rules::new(p).is_valid(&cfg) {
            failures.push(format!("{db} {}: {params} breaks a rule", p.to_perfdb_key()));
        }
    }
    // The 2019 gfx900 file (an older MIOpen) tuned 5 backward-data problems with 4x4 outputs
    // whose configs today's rules reject (chunks_per_wave above the chunks of the image): counted
    // apart, as the other solvers' write-ups count the 2019 files' outliers.
    let (old, failures): (Vec<String>, Vec<String>) = failures.into_iter().partition(|f| f.contains("2019"));
    assert!(old.len() <= 5, "{old:?}");
    assert!(older_format < rows.len() / 2, "{older_format} of {}", rows.len());
    assert!(
        failures.is_empty(),
        "{} of {} stride-2 rows: {:?}",
        failures.len(),
        rows.len(),
        &failures[..failures.len().min(10)]
    );
}

#[test]
fn own_models_answer_stride_2_with_valid_configs_and_miopens_model_refuses() {
    let rows = stride2_rows();
    for (arch, db) in [
        ("gfx90878", "gfx90878"),
        ("gfx90a68", "gfx90a68"),
        ("gfx906", "gfx906_60"),
        ("gfx900", "gfx900_56"),
    ] {
        let problems: Vec<ConvProblem> = rows
            .iter()
            .filter(|(d, _, _)| d.starts_with(db))
            .map(|(_, p, _)| p.clone())
            .step_by(3)
            .collect();
        if problems.is_empty() {
            continue;
        }
        let pred = Predictor::load(
            arch,
            "ConvAsm1x1U",
            &[std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights")],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
            for (p, r) in problems.iter().zip(pred.predict_batch(&problems, mode)) {
                let answers = r.unwrap_or_else(|e| panic!("{arch} {}: {e}", p.to_perfdb_key()));
                assert!(!answers.is_empty());
                for a in answers {
                    let cfg = parse_config(&a.config).unwrap();
                    assert!(
                        Rules::new(p).is_valid(&cfg),
                        "{arch} {}: {}",
                        p.to_perfdb_key(),
                        a.config
                    );
                }
            }
        }
    }
    // MIOpen's gfx908 KTN model: not applicable, saying why.
    let ktn = Predictor::load("gfx908", "ConvAsm1x1U", &[common::models_dir()]).unwrap();
    let p = rows
        .iter()
        .find(|(d, _, _)| d.starts_with("gfx90878"))
        .map(|(_, p, _)| p.clone())
        .unwrap();
    let e = ktn.predict_batch(&[p], DecodeMode::Miopen).remove(0).unwrap_err();
    assert!(e.to_string().contains("applies only to stride 1"), "{e}");
}

#[test]
fn userdb_leaves_stride_2_to_miopens_default_where_it_won_on_the_held_out_problems() {
    // MI210's recorded figures (weights/gfx90a68_ConvAsm1x1U.json, `eval --record`): on the 357
    // held-out stride-2 problems MIOpen's static default is the tuned best more often than the
    // model, so userdb writes the stride-1 problem and leaves the stride-2 one to MIOpen.
    let dir = std::env::temp_dir().join(format!("tuneinfer-s2-udb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("net.txt");
    std::fs::write(
        &input,
        "2048-14-14-1x1-512-7-7-64-0x0-2x2-1x1-0-NCHW-FP32-F\n2048-7-7-1x1-512-7-7-64-0x0-1x1-1x1-0-NCHW-FP32-F\n",
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args([
            "userdb",
            "--arch",
            "gfx90a68",
            "--solver",
            "ConvAsm1x1U",
            "--device",
            "cpu",
        ])
        .args([
            "--system-db",
            "none",
            "--dry-run",
            "--miopen-version",
            "HIP.3_5_1_",
            "--input",
        ])
        .arg(&input)
        .arg("--out")
        .arg(dir.join("udb"))
        .env_remove("TUNEINFER_MODELS")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("would write 1 entries"), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("left to MIOpen's static default"))
        .expect("the kinds line");
    assert!(
        line.contains("1 problem(s)") && line.contains("stride 2: MIOpen's default ("),
        "{line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
