//! Training, weights, evaluation and loading end to end on small subsets of the real perf
//! databases (`../shared/miopen/perfdb`), plus the errors bad inputs get.

#[allow(unused_imports)]
use crate::common;

use std::path::{Path, PathBuf};
use tuneinfer::solvers::Target;

use tuneinfer::format::safetensors;
use tuneinfer::seq2seq::weights::{self, WeightsFiles};
use tuneinfer::train::{self, TrainOptions};
use tuneinfer::{ConvProblem, DecodeMode, Predictor};

fn gfx906_db() -> PathBuf {
    common::perfdb_dir().join("gfx906_60.db")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tuneinfer-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tiny_options(out: &Path, epochs: usize) -> TrainOptions {
    let mut o = TrainOptions::new(&gfx906_db(), "gfx906", "ConvAsm1x1U", out);
    o.max_rows = Some(600);
    o.hidden = 16;
    o.embed = 8;
    o.batch = 16;
    o.epochs = epochs;
    o.lr = 0.01;
    o.patience = 100;
    o.verbose = false;
    o
}

fn tensors(files: &WeightsFiles) -> Vec<safetensors::Tensor> {
    safetensors::read(&files.tensors).unwrap().0
}

#[test]
fn training_smoke_loss_falls_and_model_predicts() {
    let dir = temp_dir("smoke");
    let opts = tiny_options(&dir, 4);
    let r = train::train(&opts, None).unwrap();
    assert_eq!(r.epochs, 4);
    assert!(
        r.last_loss < r.first_loss * 0.8,
        "loss should fall: first epoch {}, last {}",
        r.first_loss,
        r.last_loss
    );
    assert!(r.samples_per_second > 0.0 && r.train_rows > 0 && r.validation_rows > 0);
    // What is saved (the moving average of the weights) has learned too: its early-stop loss is
    // well below a uniform guess over the vocabulary, ln(V) per token.
    let (_, info) = tuneinfer::seq2seq::weights::load(&r.files, "gfx906", "ConvAsm1x1U").unwrap();
    let vocab = info.config.vocab as f64;
    let saved_loss = r.training["best_early_stop_loss"][0].as_f64().unwrap();
    println!("saved early-stop loss {saved_loss:.3}, uniform {:.3}", vocab.ln());
    assert!(
        vocab > 2.0 && saved_loss < 0.6 * vocab.ln(),
        "saved {saved_loss}, uniform {}",
        vocab.ln()
    );
    // The files load through the normal model search, and predictions are valid configs.
    let p = Predictor::load("gfx906", "ConvAsm1x1U", std::slice::from_ref(&dir)).unwrap();
    let problem = ConvProblem::parse("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F").unwrap();
    let preds = p.predict_one(&problem, DecodeMode::Beam { width: 4, top: 4 }).unwrap();
    assert_eq!(preds.len(), 4);
    let rules = tuneinfer::solvers::conv_asm_1x1u::Rules::new(&problem);
    for pr in &preds {
        let c = tuneinfer::solvers::conv_asm_1x1u::parse_config(&pr.config).unwrap();
        assert!(rules.is_valid(&c), "{}", pr.config);
    }
    // Evaluation on the tiny split: every method scores every validation problem.
    let prep = train::prepare(&opts).unwrap();
    let table = tuneinfer::eval::evaluate_files(&r.files, "gfx906", "ConvAsm1x1U", &prep, 4, None).unwrap();
    assert!(table.methods.len() >= 4);
    for m in &table.methods {
        // Rows over all problems count every one; a kind's or class's (ConvAsm1x1U's stride 2)
        // a part of them.
        match m.kind {
            None => assert_eq!(m.problems, prep.validation.len(), "{}", m.name),
            Some(_) => assert!(m.problems <= prep.validation.len() && m.problems > 0, "{}", m.name),
        }
        // MIOpen's KTN model takes stride 1 only: the stride-2 problems it refuses have no answer.
        let ktn = m.name.starts_with("MIOpen KTN");
        assert!(
            m.valid_pct() > 99.9 || (ktn && m.valid_pct() > 50.0),
            "{}: valid {}",
            m.name,
            m.valid_pct()
        );
    }
    assert!(table.to_text().contains("nearest neighbour"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn training_is_deterministic_and_resume_continues_exactly() {
    let a = temp_dir("det-a");
    let b = temp_dir("det-b");
    let straight = train::train(&tiny_options(&a, 2), None).unwrap();
    // Same seed, same data: the same weights.
    let mut first = tiny_options(&b, 1);
    first.checkpoint = b.join("ckpt.safetensors");
    train::train(&first, None).unwrap();
    let mut resumed = tiny_options(&b, 2);
    resumed.checkpoint = b.join("ckpt2.safetensors");
    resumed.resume = Some(b.join("ckpt.safetensors"));
    let r = train::train(&resumed, None).unwrap();
    assert_eq!(r.epochs, 2);
    assert_eq!(tensors(&straight.files), tensors(&r.files));
    // A checkpoint of other sizes is refused with a reason.
    let mut other = tiny_options(&b, 3);
    other.hidden = 24;
    other.resume = Some(b.join("ckpt.safetensors"));
    let e = train::train(&other, None).unwrap_err().to_string();
    assert!(e.contains("differs from the requested one"), "{e}");
    // So is a resume with another weight average or decay.
    for (ema, decay) in [(0.5, 0.05), (0.999, 0.0)] {
        let mut other = tiny_options(&b, 3);
        (other.ema, other.weight_decay) = (ema, decay);
        other.resume = Some(b.join("ckpt.safetensors"));
        let e = train::train(&other, None).unwrap_err().to_string();
        assert!(e.contains("--ema 0.999 --weight-decay 0.05;"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn bad_inputs_get_clear_errors() {
    let dir = temp_dir("bad");
    let run = |db: &Path, solver: &str| {
        let mut o = tiny_options(&dir, 1);
        o.perf_db = db.to_path_buf();
        o.solver = solver.to_string();
        train::train(&o, None).unwrap_err().to_string()
    };
    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert!(run(&empty, "ConvAsm1x1U").contains("the file is empty"));
    let corrupt = dir.join("corrupt.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0xAB, 4000));
    std::fs::write(&corrupt, &bytes).unwrap();
    let e = run(&corrupt, "ConvAsm1x1U");
    assert!(e.contains("corrupt.db"), "{e}");
    assert!(run(&gfx906_db(), "NoSuchSolver").contains("unknown solver 'NoSuchSolver'"));
    let text = dir.join("other_solver.txt");
    std::fs::write(
        &text,
        "64-7-7-1x1-64-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F=ConvOclDirectFwd1x1:1,2\n",
    )
    .unwrap();
    assert!(run(&text, "ConvAsm1x1U").contains("no rows for solver ConvAsm1x1U"));
    let missing = run(&dir.join("missing.db"), "ConvAsm1x1U");
    assert!(missing.contains("missing.db"), "{missing}");
    // Weights of another arch under this arch's name.
    let r = train::train(&tiny_options(&dir, 1), None).unwrap();
    let renamed = WeightsFiles::in_dir(&dir, "gfx900", "ConvAsm1x1U");
    std::fs::copy(&r.files.tensors, &renamed.tensors).unwrap();
    std::fs::copy(&r.files.metadata, &renamed.metadata).unwrap();
    let e = Predictor::load("gfx900", "ConvAsm1x1U", std::slice::from_ref(&dir))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("for gfx906 ConvAsm1x1U, not gfx900"), "{e}");
    let e = weights::load(&renamed, "gfx900", "ConvAsm1x1U")
        .unwrap_err()
        .to_string();
    assert!(e.contains("gfx906"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_train_and_eval_report_usage_errors() {
    let code = |words: &[&str]| tuneinfer::cli::run(&words.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(code(&["train", "--arch", "gfx906"]), 2);
    assert_eq!(code(&["train", "--perf-db", "x.db"]), 2);
    assert_eq!(
        code(&["train", "--perf-db", "x.db", "--arch", "gfx906", "--hidden", "0"]),
        2
    );
    let db = gfx906_db().display().to_string();
    for (flag, bad) in [
        ("--ema", "1"),
        ("--ema", "1.5"),
        ("--dropout", "0.95"),
        ("--weight-decay", "2"),
        ("--members", "65"),
        ("--hidden", "100000"),
    ] {
        assert_eq!(
            code(&[
                "train",
                "--perf-db",
                &db,
                "--arch",
                "gfx906",
                flag,
                bad,
                "--no-eval",
                "--quiet"
            ]),
            2,
            "{flag} {bad}"
        );
    }
    // The arch names the output files: a path or an empty name is refused before any training.
    for arch in ["../evil", "", "gfx906/x"] {
        assert_eq!(
            code(&["train", "--perf-db", &db, "--arch", arch, "--no-eval", "--quiet"]),
            2,
            "--arch {arch:?}"
        );
    }
    // A KTN directory named on the command line must hold the model (it was silently skipped).
    // (A model with a held-out split: the shipped ones were trained on every geometry.)
    let dir = temp_dir("ktn-dir");
    train::train(&tiny_options(&dir, 1), None).unwrap();
    let models = dir.display().to_string();
    assert_eq!(
        code(&[
            "eval",
            "--perf-db",
            &db,
            "--models",
            &models,
            "--ktn-models",
            "/nonexistent/ktn"
        ]),
        6
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code(&["eval"]), 2);
    assert_eq!(code(&["eval", "--perf-db", "x.db", "--solver", "Nope"]), 6);
    assert_eq!(code(&["train", "--help"]), 0);
    assert_eq!(code(&["eval", "--help"]), 0);
}

#[test]
fn text_perf_db_trains_like_sqlite() {
    // A text perf-db written from the sqlite rows gives the same dataset.
    let rows = tuneinfer::data::perfdb::solver_rows(&gfx906_db(), "ConvAsm1x1U").unwrap();
    let dir = temp_dir("text");
    let path = dir.join("gfx906.txt");
    let mut text = String::new();
    for r in rows.rows.iter().take(300) {
        text.push_str(&format!(
            "{}=ConvAsm1x1U:{};ConvOclDirectFwd1x1:1\n",
            r.problem.to_perfdb_key(),
            r.params
        ));
    }
    std::fs::write(&path, text).unwrap();
    let from_text = tuneinfer::data::dataset::load(&path, "ConvAsm1x1U", &Target::new("gfx906")).unwrap();
    let mut from_sql = tuneinfer::data::dataset::build(
        &tuneinfer::data::perfdb::SolverRows {
            rows: rows.rows[..300].to_vec(),
            rejected: vec![],
        },
        &tuneinfer::solvers::conv_asm_1x1u::ConvAsm1x1USolver,
        &Target::new("gfx906"),
    );
    from_sql
        .samples
        .iter_mut()
        .zip(&from_text.samples)
        .for_each(|(a, b)| a.source_id = b.source_id);
    assert_eq!(from_text.samples, from_sql.samples);
    assert_eq!(from_text.data_hash, from_sql.data_hash);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ensemble_members_are_saved_loaded_and_averaged() {
    let dir = temp_dir("ensemble");
    let mut opts = tiny_options(&dir, 2);
    opts.members = 2;
    let r = train::train(&opts, None).unwrap();
    let (model, info) = tuneinfer::seq2seq::AttentionModel::load(&r.files, "gfx906", "ConvAsm1x1U").unwrap();
    assert_eq!((model.members.len(), info.members), (2, 2));
    assert_ne!(model.members[0], model.members[1], "members have their own seeds");
    // Member 0 is the single-network run with the same seed.
    let single_dir = temp_dir("ensemble-single");
    let single = train::train(&tiny_options(&single_dir, 2), None).unwrap();
    let (one, _) = tuneinfer::seq2seq::AttentionModel::load(&single.files, "gfx906", "ConvAsm1x1U").unwrap();
    assert_eq!(one.members[0], model.members[0]);
    assert!(dir.join("gfx906_ConvAsm1x1U.checkpoint.m1.safetensors").is_file());
    let p = Predictor::load("gfx906", "ConvAsm1x1U", std::slice::from_ref(&dir)).unwrap();
    let problem = ConvProblem::parse("512-28-28-1x1-128-28-28-64-0x0-1x1-1x1-0-NCHW-FP32-B").unwrap();
    let preds = p.predict_one(&problem, DecodeMode::Beam { width: 8, top: 8 }).unwrap();
    assert_eq!(preds.len(), 8);
    assert!(preds.windows(2).all(|w| w[0].score >= w[1].score));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&single_dir);
}

#[test]
fn a_model_trained_on_every_geometry_is_not_evaluated_on_them() {
    // --val-fraction 0 holds out nothing: training skips its final evaluation, and `eval` refuses
    // (it printed a table of 0.0% for 0 problems with exit 0).
    let dir = temp_dir("all-geometries");
    let code = |words: &[&str]| tuneinfer::cli::run(&words.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let db = gfx906_db().display().to_string();
    let out = dir.display().to_string();
    let train = [
        "train",
        "--perf-db",
        &db,
        "--arch",
        "gfx906",
        "--out",
        &out,
        "--max-rows",
        "300",
        "--epochs",
        "1",
        "--hidden",
        "8",
        "--embed",
        "4",
        "--val-fraction",
        "0",
        "--quiet",
    ];
    assert_eq!(code(&train), 0);
    let (info, _) = weights::read_info(&dir.join("gfx906_ConvAsm1x1U.json")).unwrap();
    assert!(
        info.metrics.is_null(),
        "no validation metrics without validation problems"
    );
    assert_eq!(info.training["split"]["validation"], 0);
    assert_eq!(
        code(&["eval", "--perf-db", &db, "--arch", "gfx906", "--models", &out]),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_decoding_of_our_models_is_the_beam_and_differs_from_the_greedy_walk() {
    let weights = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights");
    let ours = Predictor::load("gfx906", "ConvAsm1x1U", std::slice::from_ref(&weights)).unwrap();
    // A beam of 6: as often the tuned best as one of 16 on every validation split (README,
    // Benchmarks: tools/beam_widths.py).
    assert_eq!(ours.default_mode(), DecodeMode::Beam { width: 6, top: 1 });
    let ktn = Predictor::load("gfx908", "ConvAsm1x1U", &[common::models_dir()]).unwrap();
    assert_eq!(ktn.default_mode(), DecodeMode::Miopen);
    // The choice matters: on real problems the beam's best and the greedy walk disagree on some.
    let ds = tuneinfer::data::dataset::load(&gfx906_db(), "ConvAsm1x1U", &Target::new("gfx906")).unwrap();
    let problems: Vec<ConvProblem> = ds.samples.iter().take(300).map(|s| s.problem.clone()).collect();
    let configs = |mode| -> Vec<String> {
        ours.predict_batch(&problems, mode)
            .into_iter()
            .map(|r| r.unwrap()[0].config.clone())
            .collect()
    };
    let (beam, greedy) = (configs(ours.default_mode()), configs(DecodeMode::Miopen));
    let differ = beam.iter().zip(&greedy).filter(|(a, b)| a != b).count();
    assert!(differ > 0, "beam and greedy agree on all {} problems", problems.len());
}

#[test]
fn eval_names_a_damaged_miopen_model_it_leaves_out() {
    // Without --ktn-models, MIOpen's gfx908 model is optional, but one that is there and does not
    // load is said on stderr, not silently dropped from the comparison.
    let dir = temp_dir("eval-damaged-ktn");
    train::train(&tiny_options(&dir, 1), None).unwrap();
    let (dirs, encoder) = common::damaged_model_before_intact_one("eval-damaged-ktn-models");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(["eval", "--perf-db", gfx906_db().to_str().unwrap(), "--models"])
        .arg(&dir)
        .env("TUNEINFER_MODELS", &dirs[0])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("left out of the comparison") && stderr.contains(&encoder.display().to_string()),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("MIOpen KTN"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dirs[0]);
}

#[test]
fn other_gpus_rows_train_a_model_with_the_gpu_as_an_input() {
    let dir = temp_dir("other-gpu");
    let mut opts = tiny_options(&dir, 2);
    opts.max_rows = Some(300);
    opts.other_gpu_perf_dbs = vec![common::perfdb_dir().join("gfx900_56.db")];
    let prep = train::prepare(&opts).unwrap();
    assert_eq!(prep.other_gpus.len(), 1);
    let other = &prep.other_gpus[0];
    assert_eq!(
        (other.target.arch.as_str(), other.target.compute_units),
        ("gfx900", Some(56))
    );
    assert!(!other.train.is_empty());
    // No held-out geometry of the target is trained on, from any GPU.
    let held_out: std::collections::HashSet<String> = prep
        .validation
        .iter()
        .map(|s| tuneinfer::data::dataset::geometry_key(&s.problem))
        .collect();
    assert!(!held_out.is_empty());
    for s in other.train.iter().chain(&other.early_stop) {
        assert!(!held_out.contains(&tuneinfer::data::dataset::geometry_key(&s.problem)));
    }
    let r = train::train(&opts, None).unwrap();
    assert!(r.train_rows > prep.train.len(), "the other GPU's rows are trained on");
    assert_eq!(r.training["other_gpu_perf_dbs"][0]["gpu"], "gfx900_56");
    let (model, info) = tuneinfer::seq2seq::AttentionModel::load(&r.files, "gfx906", "ConvAsm1x1U").unwrap();
    let gpu = info.transform.gpu.clone().expect("the model reads the GPU");
    // The target's compute units come from the database's name (--arch gfx906 names none).
    assert_eq!((gpu.arch.as_str(), gpu.compute_units), ("gfx906", 60));
    assert_eq!(
        info.config.steps,
        tuneinfer::solvers::NUM_FEATURES + tuneinfer::solvers::NUM_GPU_FEATURES
    );
    // The GPU is an input: another GPU gives another encoder input, the model's own GPU (named
    // or not) the same one.
    use tuneinfer::seq2seq::Seq2SeqModel;
    let solver = tuneinfer::solvers::by_name("ConvAsm1x1U").unwrap();
    let problem = ConvProblem::parse("512-28-28-1x1-128-28-28-64-0x0-1x1-1x1-0-NCHW-FP32-F").unwrap();
    let input = |arch: &str| model.encoder_input(solver, &Target::new(arch), &problem).unwrap();
    assert_eq!(input("gfx906"), input("gfx906_60"));
    assert_ne!(input("gfx906"), input("gfx906_64"));
    assert_ne!(input("gfx906"), input("gfx900_56"));
    // Its checkpoint resumes only with the same GPUs' rows: another pool, or none, is refused.
    for pool in [
        vec![common::perfdb_dir().join("history/gfx906_64.2019.cd.pdb.txt")],
        vec![],
    ] {
        let mut other = opts.clone();
        other.other_gpu_perf_dbs = pool.clone();
        other.resume = Some(opts.checkpoint.clone());
        other.epochs = 3;
        let e = train::train(&other, None).err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("other data")),
            "{pool:?}: {e:?}"
        );
    }
    // It predicts valid configs through the normal model search.
    assert_predicts_valid_asm1x1u("gfx906", &dir, &problem);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The model `arch` finds in `dir` answers `problem` (beam 4) with valid ConvAsm1x1U configs only.
fn assert_predicts_valid_asm1x1u(arch: &str, dir: &Path, problem: &ConvProblem) {
    let p = Predictor::load(arch, "ConvAsm1x1U", &[dir.to_path_buf()]).unwrap();
    let preds = p.predict_one(problem, DecodeMode::Beam { width: 4, top: 4 }).unwrap();
    let rules = tuneinfer::solvers::conv_asm_1x1u::Rules::new(problem);
    assert!(!preds.is_empty());
    for pr in &preds {
        let c = tuneinfer::solvers::conv_asm_1x1u::parse_config(&pr.config).unwrap();
        assert!(rules.is_valid(&c), "{}", pr.config);
    }
}

#[test]
fn other_gpu_databases_must_name_their_gpu() {
    let dir = temp_dir("other-gpu-bad");
    let mut opts = tiny_options(&dir, 1);
    // A name that gives no GPU.
    let odd = dir.join("tuned.db");
    std::fs::copy(common::perfdb_dir().join("gfx900_56.db"), &odd).unwrap();
    opts.other_gpu_perf_dbs = vec![odd];
    let e = train::prepare(&opts).err().expect("refused").to_string();
    assert!(e.contains("tuned.db") && e.contains("gfx900_56.db"), "{e}");
    // The target's own database is not another GPU's.
    opts.other_gpu_perf_dbs = vec![gfx906_db()];
    let e = train::prepare(&opts).err().expect("refused").to_string();
    assert!(e.contains("--older-perf-db"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn leave_out_target_trains_on_no_row_of_the_target() {
    let dir = temp_dir("leave-out");
    let mut opts = tiny_options(&dir, 2);
    opts.max_rows = Some(300);
    opts.other_gpu_perf_dbs = vec![common::perfdb_dir().join("gfx900_56.db")];
    opts.leave_out_target = true;
    let prep = train::prepare(&opts).unwrap();
    assert!(!prep.train.is_empty() && !prep.early_stop.is_empty() && !prep.validation.is_empty());
    let other = &prep.other_gpus[0];
    let r = train::train(&opts, None).unwrap();
    // What is trained on is the other GPU's training side, row for row; early stopping judges
    // at most its early-stop side (rows whose values no training row has are left out).
    assert_eq!(r.train_rows, other.train.len());
    assert!(r.early_stop_rows > 0 && r.early_stop_rows <= other.early_stop.len());
    assert_eq!(r.validation_rows, prep.validation.len());
    assert_eq!(r.training["leave_out_target"], true);
    assert_eq!(r.training["split"]["train"], other.train.len());
    // The proof: a target database holding only its held-out rows (none of its training-side or
    // early-stop rows) gives the same model bit for bit, and the same validation problems.
    let only_held_out = dir.join("val").join("gfx906_60.db.txt");
    std::fs::create_dir_all(only_held_out.parent().unwrap()).unwrap();
    let text: String = prep
        .validation
        .iter()
        .map(|s| {
            let params: Vec<String> = s.config.iter().map(|v| v.to_string()).collect();
            format!("{}=ConvAsm1x1U:{}\n", s.problem.to_perfdb_key(), params.join(","))
        })
        .collect();
    std::fs::write(&only_held_out, text).unwrap();
    let mut bare = opts.clone();
    bare.perf_db = only_held_out;
    bare.out_dir = dir.join("bare");
    bare.checkpoint = bare.out_dir.join("ckpt.safetensors");
    let bare_prep = train::prepare(&bare).unwrap();
    assert!(bare_prep.train.is_empty() && bare_prep.early_stop.is_empty());
    let problems = |v: &[tuneinfer::data::dataset::Sample]| {
        v.iter()
            .map(|s| (s.problem.to_perfdb_key(), s.config.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(problems(&bare_prep.validation), problems(&prep.validation));
    let rb = train::train(&bare, None).unwrap();
    assert_eq!(tensors(&rb.files), tensors(&r.files), "a target row was trained on");
    let (a, _) = weights::read_info(&r.files.metadata).unwrap();
    let (b, _) = weights::read_info(&rb.files.metadata).unwrap();
    assert_eq!((&a.transform, &a.token_values), (&b.transform, &b.token_values));
    // One other GPU: every GPU feature is constant in training, so each keeps unit scale (the
    // target's family flag, never set in training, reads 1, not 1,000).
    let gpu_std = &a.transform.std[tuneinfer::solvers::NUM_FEATURES..];
    assert_eq!(gpu_std.len(), tuneinfer::solvers::NUM_GPU_FEATURES);
    assert!(gpu_std.iter().all(|&s| s == 1.0), "{gpu_std:?}");
    assert_ne!(r.training["data_sha256"], rb.training["data_sha256"]);
    // Without it, the target's rows are trained on (the same files give another model).
    let mut pooled = opts.clone();
    pooled.leave_out_target = false;
    pooled.out_dir = dir.join("pooled");
    pooled.checkpoint = pooled.out_dir.join("ckpt.safetensors");
    let rp = train::train(&pooled, None).unwrap();
    assert_eq!(rp.train_rows, prep.train.len() + other.train.len());
    // A checkpoint of one does not resume the other.
    let mut resume = opts.clone();
    resume.resume = Some(pooled.checkpoint.clone());
    resume.epochs = 3;
    let e = train::train(&resume, None).err().map(|e| e.to_string());
    assert!(e.as_deref().is_some_and(|e| e.contains("other data")), "{e:?}");
    // Without other GPUs there is nothing to train on: a usage error, before any data is read.
    let mut alone = opts.clone();
    alone.other_gpu_perf_dbs.clear();
    let e = train::prepare(&alone).err().expect("refused");
    assert!(matches!(e, tuneinfer::Error::Usage(_)), "{e}");
    assert!(e.to_string().contains("--other-gpu-perf-db"), "{e}");
    let code = tuneinfer::cli::run(
        &["train", "--perf-db", "x.db", "--arch", "gfx906", "--leave-out-target"].map(String::from),
    );
    assert_eq!(code, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_model_across_gpus_validated_on_a_gpu_of_its_pool_serves_that_gpu() {
    let dir = temp_dir("pool-serves");
    let mut opts = tiny_options(&dir, 2);
    opts.max_rows = Some(300);
    opts.other_gpu_perf_dbs = vec![common::perfdb_dir().join("gfx900_56.db")];
    let r = train::train(&opts, None).unwrap();
    let solver = tuneinfer::solvers::by_name("ConvAsm1x1U").unwrap();
    let dirs = std::slice::from_ref(&dir);
    // Not yet validated on gfx900: it serves gfx906 alone.
    assert!(tuneinfer::models::resolve("gfx900", solver, dirs).is_err());
    let eval = |arch: &str, db: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
            .args(["eval", "--model"])
            .arg(&r.files.metadata)
            .arg("--perf-db")
            .arg(common::perfdb_dir().join(db))
            .args(["--arch", arch, "--solver", "ConvAsm1x1U", "--beam", "2", "--record"])
            .output()
            .unwrap()
    };
    // A GPU outside its training pool is not recorded.
    let o = eval("gfx90878", "gfx90878.db.txt.bz2");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("gfx90878's rows"), "{err}");
    // Its pool's GPU: the figures on gfx900_56's held-out problems are recorded for it ...
    let o = eval("gfx900_56", "gfx900_56.db");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let (info, _) = weights::read_info(&r.files.metadata).unwrap();
    assert_eq!(info.validated_gpus(), vec!["gfx900_56".to_string()]);
    let problems = info.metrics_for(Some("gfx900_56"))["problems"].as_u64().unwrap();
    assert!(problems > 0);
    assert_ne!(info.metrics_for(Some("gfx900_56")), info.metrics_for(None));
    // ... and the model now serves gfx900 (any CU count), reading gfx900's features.
    for (arch, own) in [("gfx900", true), ("gfx900_56", true), ("gfx900_64", false)] {
        let resolved = tuneinfer::models::resolve(arch, solver, dirs).unwrap();
        assert_eq!(
            resolved.served_by,
            tuneinfer::models::ServedBy::Pool {
                member: "gfx900_56".into(),
                own
            },
            "{arch}"
        );
    }
    let problem = ConvProblem::parse("512-28-28-1x1-128-28-28-64-0x0-1x1-1x1-0-NCHW-FP32-F").unwrap();
    assert_predicts_valid_asm1x1u("gfx900", &dir, &problem);
    let _ = std::fs::remove_dir_all(&dir);
}
