//! `userdb` writes what `--method best` serves (issue 52; issue 24's "never worse than doing
//! nothing"): a real model copied into a temporary model directory with its recorded
//! `validation` figures edited (the JSON's `tensors_sha256` covers only the `.safetensors`),
//! losing, winning, mixed and per kind; where best serves MIOpen's static default nothing is
//! written and the summary names the figures that chose it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SOLVER: &str = "ConvOclDirectFwd";

/// Forward 3x3 problems ConvOclDirectFwd applies to on gfx906.
const PROBLEMS: &str = "\
conv -n 16 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1
conv -n 32 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1
conv -n 8 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1
";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-verdict-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A model directory holding the shipped gfx906 ConvOclDirectFwd model with its overall
/// "model, beam" and "MIOpen static default" exact figures (and every kind's) set to `model` and `default`
/// (`None`: the `validation` figures removed, as a model trained on every geometry).
fn model_dir(name: &str, figures: Option<(f64, f64)>) -> PathBuf {
    model_dir_with(name, SOLVER, figures, None)
}

/// [`model_dir`] for `solver`'s gfx906 model, with the row of the policy "MIOpen's default where
/// it is valid, else the model" added at `mix` when given.
fn model_dir_with(name: &str, solver: &str, figures: Option<(f64, f64)>, mix: Option<f64>) -> PathBuf {
    let dir = temp_dir(name);
    let weights = Path::new(env!("CARGO_MANIFEST_DIR")).join("weights");
    let stem = format!("gfx906_{solver}");
    std::fs::copy(
        weights.join(format!("{stem}.safetensors")),
        dir.join(format!("{stem}.safetensors")),
    )
    .unwrap();
    let text = std::fs::read_to_string(weights.join(format!("{stem}.json"))).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    match figures {
        None => json["validation"] = serde_json::Value::Null,
        Some((model, default)) => {
            let methods = json["validation"]["methods"].as_array_mut().unwrap();
            let mut set = 0;
            for row in methods.iter_mut().filter(|r| r["kind"].is_null()) {
                let method = row["method"].as_str().unwrap().to_string();
                if method.starts_with("model, beam") {
                    row["exact_pct"] = model.into();
                    set += 1;
                } else if method.starts_with("MIOpen static default") {
                    row["exact_pct"] = default.into();
                    set += 1;
                }
            }
            assert_eq!(set, 2, "the shipped model's JSON has both overall rows");
            // Every kind's rows the same as the overall ones, so no kind says otherwise.
            for row in methods.iter_mut().filter(|r| r["kind"].is_string()) {
                let method = row["method"].as_str().unwrap().to_string();
                if method.starts_with("beam ") {
                    row["exact_pct"] = model.into();
                } else if method.starts_with("static default") {
                    row["exact_pct"] = default.into();
                } else if method.starts_with("default/model") {
                    row["exact_pct"] = mix.unwrap_or(model).into();
                }
            }
            methods.retain(|r| !r["method"].as_str().unwrap().starts_with("default where valid"));
            if let Some(mix) = mix {
                methods.push(serde_json::json!({
                    "method": "default where valid, else model", "row": "default_where_valid", "kind": null, "exact_pct": mix, "problems": 100
                }));
            }
        }
    }
    std::fs::write(
        dir.join(format!("{stem}.json")),
        serde_json::to_string_pretty(&json).unwrap(),
    )
    .unwrap();
    dir
}

fn userdb(models: &Path, extra: &[&str]) -> (Output, String) {
    userdb_for(models, SOLVER, extra)
}

fn userdb_for(models: &Path, solver: &str, extra: &[&str]) -> (Output, String) {
    use std::io::Write;
    let out = temp_dir(&format!("out-{}", models.file_name().unwrap().to_string_lossy()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
    cmd.args([
        "userdb",
        "--arch",
        "gfx906_60",
        "--solver",
        solver,
        "--system-db",
        "none",
        "--dry-run",
    ])
    .arg("--models")
    .arg(models)
    .arg("--out")
    .arg(&out)
    .args(["--device", "cpu", "--miopen-version", "HIP.3_2_0_"])
    .args(extra)
    .env_remove("TUNEINFER_MODELS")
    .env_remove("MIOPEN_USER_DB_PATH")
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(PROBLEMS.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (output, stdout)
}

/// "would write N entries" of the dry run's summary.
fn would_write(stdout: &str) -> usize {
    let at = stdout
        .find("would write ")
        .unwrap_or_else(|| panic!("no dry-run line:\n{stdout}"));
    stdout[at + "would write ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The summary line of a solver best leaves to MIOpen's default on these problems.
const LEFT: &str = "problem(s) left to MIOpen's static default, as --method best serves them";

#[test]
fn a_model_that_loses_to_the_default_is_not_written_and_named_with_its_figures() {
    let dir = model_dir("losing", Some((3.1, 4.0)));
    let (_, stdout) = userdb(&dir, &[]);
    assert!(
        stdout.contains(&format!("{SOLVER} on gfx906_60: 3 {LEFT}")) && stdout.contains("all: MIOpen's default (4.0% vs the model's 3.1%)"),
        "{stdout}"
    );
    assert_eq!(would_write(&stdout), 0, "{stdout}");

    // --include-unproven writes the model anyway.
    let (_, stdout) = userdb(&dir, &["--include-unproven"]);
    assert_eq!(would_write(&stdout), 3, "{stdout}");
    assert!(!stdout.contains(LEFT), "{stdout}");

    // On a tie best keeps the model, so userdb writes it (issue 52: as best serves).
    let tie = model_dir("tie", Some((28.0, 28.0)));
    let (_, stdout) = userdb(&tie, &[]);
    assert_eq!(would_write(&stdout), 3, "{stdout}");
}

#[test]
fn a_model_that_beats_the_default_or_has_no_figures_is_written() {
    for (name, figures) in [("winning", Some((30.0, 4.0))), ("unrecorded", None)] {
        let dir = model_dir(name, figures);
        let (_, stdout) = userdb(&dir, &[]);
        assert_eq!(would_write(&stdout), 3, "{name}: {stdout}");
        assert!(!stdout.contains("not written:"), "{name}: {stdout}");
    }
}

#[test]
fn a_model_beaten_by_the_default_where_valid_is_written_only_where_the_default_is_not() {
    // ConvOclDirectFwd's static default is valid for every problem it applies to (MIOpen's
    // IsApplicable requires it; ../shared/miopen/solvers/ConvOclDirectFwd.md, section 6: valid
    // on all 22,113 tuned problems): the mix leaves all three to MIOpen.
    let dir = model_dir_with("mixed-ocl", SOLVER, Some((20.0, 25.0)), Some(30.0));
    let (_, stdout) = userdb(&dir, &[]);
    assert_eq!(would_write(&stdout), 0, "{stdout}");
    assert!(
        stdout.contains(&format!("{SOLVER} on gfx906_60: 3 {LEFT}"))
            && stdout.contains("all: MIOpen's default where valid, else the model (30.0% vs the model's 20.0%)"),
        "{stdout}"
    );
    // --include-unproven writes the model everywhere.
    let (_, stdout) = userdb(&dir, &["--include-unproven"]);
    assert_eq!(would_write(&stdout), 3, "{stdout}");

    // The MLIR solvers' static default is the heuristic request -2,-2,..., never a valid config
    // (../shared/miopen/solvers/ConvMlirIgemm.md): the mix writes the model's answer everywhere.
    let mlir = "ConvMlirIgemmFwd";
    let dir = model_dir_with("mixed-mlir", mlir, Some((20.0, 25.0)), Some(30.0));
    let (_, stdout) = userdb_for(&dir, mlir, &[]);
    assert_eq!(would_write(&stdout), 3, "{stdout}");
    assert!(!stdout.contains(LEFT), "{stdout}");

    // A mix no better than the model: the model everywhere, no mixed line.
    let dir = model_dir_with("mix-no-better", SOLVER, Some((30.0, 25.0)), Some(30.0));
    let (_, stdout) = userdb(&dir, &[]);
    assert_eq!(would_write(&stdout), 3, "{stdout}");
    assert!(!stdout.contains(LEFT), "{stdout}");
}

#[test]
fn help_says_how_the_models_written_are_chosen() {
    let output = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(["userdb", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--include-unproven"), "{help}");
    assert!(help.contains("static default"), "{help}");
    assert!(help.contains("KTN"), "{help}");
}

/// [`model_dir`] with winning overall figures and the `F FP32` kind's model and default rows
/// (the kind of [`PROBLEMS`]) set to `model` and `default` on `problems` held-out problems.
fn model_dir_with_kind(name: &str, model: f64, default: f64, problems: u64) -> PathBuf {
    model_dir_with_kind_overall(name, (30.0, 4.0), model, default, problems)
}

/// [`model_dir_with_kind`] with the overall figures (model, default) given.
fn model_dir_with_kind_overall(name: &str, overall: (f64, f64), model: f64, default: f64, problems: u64) -> PathBuf {
    let dir = model_dir(name, Some(overall));
    let path = dir.join(format!("gfx906_{SOLVER}.json"));
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let methods = json["validation"]["methods"].as_array_mut().unwrap();
    // Older models record the default per kind not at all: the row is added.
    methods.retain(|r| {
        !(r["kind"].as_str() == Some("F FP32") && r["method"].as_str().unwrap().starts_with("static default"))
    });
    methods.push(serde_json::json!({
        "method": format!("static default, F FP32 ({problems})"), "row": "default", "kind": "F FP32", "exact_pct": default, "problems": problems
    }));
    let mut set = 0;
    for row in methods.iter_mut() {
        if row["kind"].as_str() == Some("F FP32") && row["method"].as_str().unwrap().starts_with("beam ") {
            row["exact_pct"] = model.into();
            row["problems"] = problems.into();
            set += 1;
        }
    }
    assert_eq!(set, 1, "the shipped model's JSON has the F FP32 model row");
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    dir
}

#[test]
fn a_kind_where_the_default_beats_the_model_is_left_to_the_default() {
    // The model wins overall (30.0 vs 4.0) but loses F FP32, the three problems' kind, on 169
    // held-out problems: all three are left to MIOpen, and the summary names the kind.
    let dir = model_dir_with_kind("kind-loses", 10.0, 50.0, 169);
    let (_, stdout) = userdb(&dir, &[]);
    assert_eq!(would_write(&stdout), 0, "{stdout}");
    assert!(
        stdout.contains(&format!("{SOLVER} on gfx906_60: 3 {LEFT}"))
            && stdout.contains("F FP32: MIOpen's default (50.0% vs the model's 10.0%)"),
        "{stdout}"
    );
    // --include-unproven writes the model there too.
    let (_, stdout) = userdb(&dir, &["--include-unproven"]);
    assert_eq!(would_write(&stdout), 3, "{stdout}");
    // Too few problems of the kind to decide (below 20), or the model winning the kind: written.
    for (name, model, default, problems) in [("kind-few", 10.0, 50.0, 19), ("kind-wins", 50.0, 10.0, 169)] {
        let dir = model_dir_with_kind(name, model, default, problems);
        let (_, stdout) = userdb(&dir, &[]);
        assert_eq!(would_write(&stdout), 3, "{name}: {stdout}");
        assert!(!stdout.contains(LEFT), "{name}: {stdout}");
    }
}

#[test]
fn a_model_losing_overall_is_written_only_for_the_kinds_it_wins_beyond_noise() {
    // Over all held-out problems the model loses (30.0 vs the default's 40.0), but on F FP32,
    // the three problems' kind, it wins 50.0 vs 10.0 on 169 problems: far beyond two standard
    // errors (sqrt(0.5*0.5/169 + 0.1*0.9/169) = 4.5 points). Written for that kind only.
    let dir = model_dir_with_kind_overall("kind-rescued", (30.0, 40.0), 50.0, 10.0, 169);
    let (_, stdout) = userdb(&dir, &[]);
    assert_eq!(would_write(&stdout), 3, "{stdout}");
    assert!(!stdout.contains(LEFT), "{stdout}");
    // A lead inside the noise (42.0 vs 40.0 on 169: two standard errors are 10.7 points), or a
    // kind of too few problems (19), writes nothing: the overall verdict stands.
    for (name, model, default, problems) in [("kind-noise", 42.0, 40.0, 169), ("kind-tiny", 90.0, 10.0, 19)] {
        let dir = model_dir_with_kind_overall(name, (30.0, 40.0), model, default, problems);
        let (_, stdout) = userdb(&dir, &[]);
        assert_eq!(would_write(&stdout), 0, "{name}: {stdout}");
        assert!(
            stdout.contains(&format!("{SOLVER} on gfx906_60: 3 {LEFT}"))
                && stdout.contains("all: MIOpen's default (40.0% vs the model's 30.0%)"),
            "{name}: {stdout}"
        );
    }
}
