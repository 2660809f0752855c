//! The `tuneinfer` binary end to end: outputs, exit codes and one-line errors.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
    cmd.args(args).env_remove("TUNEINFER_MODELS");
    if let Some(input) = stdin {
        use std::io::Write;
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        // A command that fails on its options exits without reading its input.
        let _ = child.stdin.take().expect("stdin").write_all(input.as_bytes());
        return child.wait_with_output().expect("wait");
    }
    cmd.output().expect("run tuneinfer")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn models() -> String {
    common::models_dir().display().to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One line on stderr, starting with "error:", naming `needle` (besides "note:" lines, such as
/// `--device auto` saying it computes on the CPU).
fn assert_one_line_error(out: &Output, code: i32, needle: &str) {
    let all = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {all}");
    let err: Vec<&str> = all.lines().filter(|l| !l.starts_with("note: ")).collect();
    assert_eq!(err.len(), 1, "one line expected: {all}");
    assert!(
        err[0].starts_with("error: ") && err[0].contains(needle),
        "{all:?} should name {needle:?}"
    );
}

#[test]
fn help_for_every_command() {
    for args in [
        vec!["--help"],
        vec!["predict", "--help"],
        vec!["batch", "--help"],
        vec!["verify", "--help"],
    ] {
        let out = run(&args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(text(&out.stdout).contains("Usage"), "{args:?}");
    }
    let out = run(&[], None);
    assert_eq!(out.status.code(), Some(2));
    assert_one_line_error(&run(&["frobnicate"], None), 2, "frobnicate");
    // `help COMMAND` is the command's own help.
    let out = run(&["help", "batch"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).starts_with("Usage: tuneinfer batch"),
        "{}",
        text(&out.stdout)
    );
    // Commands without positional arguments name a stray one.
    assert_one_line_error(&run(&["info", "extra"], None), 2, "extra");
    assert_one_line_error(&run(&["bench", "--problems", "5", "extra"], None), 2, "extra");
}

#[test]
fn predict_prints_the_config_from_key_or_driver_arguments() {
    let m = models();
    let out = run(
        &[
            "predict",
            "--arch",
            "gfx908",
            "--models",
            &m,
            "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
        ],
        None,
    );
    assert_eq!(text(&out.stdout), "2,8,4,16,1,4,1,4\n");
    assert_eq!(out.status.code(), Some(0));
    let driver = "convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -F 1";
    let mut args = vec!["predict", "--arch", "gfx908", "--models", &m, "--solver", "ConvAsm1x1U"];
    args.extend(driver.split(' '));
    assert_eq!(text(&run(&args, None).stdout), "2,8,4,16,1,4,1,4\n");
}

#[test]
fn predict_beam_prints_ranked_lines_with_scores() {
    let m = models();
    let out = run(
        &[
            "predict",
            "--arch",
            "gfx908",
            "--models",
            &m,
            "--beam",
            "4",
            "--top",
            "3",
            "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    for (i, line) in lines.iter().enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 3, "{line}");
        assert_eq!(cols[0], (i + 1).to_string());
        assert!(cols[2].parse::<f32>().unwrap() < 0.0);
    }
    assert!(lines[0].contains("2,8,4,16,1,4,1,4"));
}

#[test]
fn predict_marks_the_static_default() {
    let out = run(
        &[
            "predict",
            "--arch",
            "gfx908",
            "--models",
            &models(),
            "conv",
            "-n",
            "1",
            "-c",
            "4",
            "-H",
            "2",
            "-W",
            "2",
            "-k",
            "4",
            "-y",
            "1",
            "-x",
            "1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("default (MIOpen's fallback)"));
    assert_eq!(text(&out.stdout).trim().split(',').count(), 8);
}

#[test]
fn predict_errors_are_one_line_with_distinct_exit_codes() {
    let m = models();
    assert_one_line_error(
        &run(
            &[
                "predict",
                "--arch",
                "gfx908",
                "--models",
                &m,
                "2048-7-7-1x1-512-7-7-abc-0x0-1x1-1x1-0-NCHW-FP16-F",
            ],
            None,
        ),
        5,
        "abc",
    );
    assert_one_line_error(
        &run(
            &["predict", "--arch", "gfx908", "--models", &m, "conv", "-n", "x"],
            None,
        ),
        5,
        "-n",
    );
    assert_one_line_error(
        &run(
            &[
                "predict", "--arch", "gfx908", "--models", &m, "conv", "-u", "2", "-v", "2", "-y", "1", "-x", "1",
            ],
            None,
        ),
        5,
        "stride",
    );
    assert_one_line_error(
        &run(
            &[
                "predict",
                "--arch",
                "gfx908",
                "--models",
                &m,
                "--solver",
                "NoSuchSolver",
                "conv",
            ],
            None,
        ),
        6,
        "NoSuchSolver",
    );
    assert_one_line_error(
        &run(&["predict", "--models", "/nonexistent/dir", "conv"], None),
        6,
        "/nonexistent/dir",
    );
    assert_one_line_error(
        &run(&["predict", "--models", &m, "--arch", "gfx000", "conv"], None),
        6,
        "gfx000",
    );
    assert_one_line_error(
        &run(
            &["predict", "--arch", "gfx908", "--models", &m, "--beam", "0", "conv"],
            None,
        ),
        2,
        "--beam",
    );
    assert_one_line_error(
        &run(
            &[
                "predict", "--arch", "gfx908", "--models", &m, "--beam", "2", "--top", "3", "conv",
            ],
            None,
        ),
        2,
        "--top",
    );
    assert_one_line_error(
        &run(&["predict", "--arch", "gfx908", "--models", &m], None),
        2,
        "PROBLEM",
    );
}

#[test]
fn batch_writes_a_tsv_and_reports_bad_lines_by_number() {
    let input = "# a comment\n\
                 2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F\n\
                 \n\
                 not-a-problem\n\
                 288-56-56-1x1-192-56-56-512-0x0-1x1-1x1-0-NCHW-FP32-B\n\
                 conv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1\n\
                 conv -n 8 -c 64 -H 14 -W 14 -k 64 -y 3 -x 3 -p 1 -q 1\n";
    let dir = temp_dir("batch");
    let out_path = dir.join("out.tsv");
    let out = run(
        &[
            "batch",
            "--arch",
            "gfx908",
            "--models",
            &models(),
            "--beam",
            "2",
            "--output",
            out_path.to_str().unwrap(),
        ],
        Some(input),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "some lines failed: {err}");
    assert!(err.contains("<stdin>:4:") || err.contains("-:4:"), "{err}");
    assert!(err.contains(":7:"), "{err}");
    let tsv = std::fs::read_to_string(&out_path).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines[0], "problem\tsolver\trank\tconfig\tscore\tsource");
    // 3 good problems x top 2 (beam 2), except where a default replaces the answer.
    assert_eq!(lines.len(), 1 + 3 * 2, "3 good problems x top 2: {tsv}");
    assert!(
        lines[1].starts_with("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F\tConvAsm1x1U\t1\t2,8,4,16,1,4,1,4\t")
    );
    assert!(lines.iter().skip(1).all(|l| l.split('\t').count() == 6));
    assert!(lines.iter().any(|l| l.starts_with("conv -n 1 -c 4")));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn batch_all_good_exits_zero_and_defaults_are_marked() {
    let input = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F\nconv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1\n";
    let out = run(&["batch", "--arch", "gfx908", "--models", &models()], Some(input));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.lines().nth(1).unwrap().ends_with("\tmodel"));
    assert!(stdout.lines().nth(2).unwrap().ends_with("\t\tdefault"), "{stdout}");
}

#[test]
fn verify_passes_the_shipped_models_and_catches_damage() {
    let files: Vec<String> = common::ktn_model_files()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut args = vec!["verify"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).matches("test(s): ok").count(), 12);
    assert_eq!(text(&out.stdout).matches("hash: ok").count(), 12);

    let dir = temp_dir("verify");
    let original = std::fs::read_to_string(common::models_dir().join("gfx908_ConvAsm1x1U_encoder.ktn.model")).unwrap();
    // Truncated file: a format error naming the file.
    let truncated = dir.join("truncated.ktn.model");
    std::fs::write(&truncated, &original[..original.len() / 2]).unwrap();
    assert_one_line_error(
        &run(&["verify", truncated.to_str().unwrap()], None),
        4,
        "truncated.ktn.model",
    );
    // A changed weight: the embedded test no longer matches and the hash differs.
    let mut value: serde_json::Value = serde_json::from_str(&original).unwrap();
    value["trainable_params"]["lstm"]["bias"] = serde_json::json!(vec![0.5f32; 512]);
    let damaged = dir.join("damaged.ktn.model");
    std::fs::write(&damaged, value.to_string()).unwrap();
    let out = run(&["verify", damaged.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(8));
    assert!(text(&out.stdout).contains("MISMATCH"));
    // Missing file.
    assert_one_line_error(
        &run(&["verify", "/nonexistent/x.ktn.model"], None),
        3,
        "/nonexistent/x.ktn.model",
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn builtin_default_model_needs_no_flags() {
    // The project's own gfx906 weights (weights/) are the default, from any working directory.
    let dir = temp_dir("default");
    let out = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(["predict", "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F"])
        .env_remove("TUNEINFER_MODELS")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let config = text(&out.stdout);
    let problem = tuneinfer::ConvProblem::parse("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F").unwrap();
    let values = tuneinfer::solvers::conv_asm_1x1u::parse_config(config.trim()).unwrap();
    assert!(
        tuneinfer::solvers::conv_asm_1x1u::Rules::new(&problem).is_valid(&values),
        "{config}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

const KEY: &str = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F";

#[test]
fn out_of_range_numbers_are_usage_errors_and_options_go_anywhere() {
    // Widths and counts that would only exhaust memory are refused up front, naming the flag.
    assert_one_line_error(
        &run(&["predict", "--device", "cpu", "--beam", "4294967295", KEY], None),
        2,
        "--beam",
    );
    assert_one_line_error(
        &run(
            &["predict", "--device", "cpu", "--beam", "18446744073709551615", KEY],
            None,
        ),
        2,
        "--beam",
    );
    assert_one_line_error(
        &run(&["bench", "--devices", "cpu", "--problems", "1000000000"], None),
        2,
        "--problems",
    );
    // Options are checked before the model is looked up (a usage error, not "not found").
    assert_one_line_error(
        &run(&["predict", "--models", "/nonexistent", "--threads", "0", KEY], None),
        2,
        "--threads",
    );
    // An option after the problem is read as an option (issue 52), its bound checked as anywhere.
    let late = run(&["predict", "--device", "cpu", KEY, "--beam", "4"], None);
    let early = run(&["predict", "--device", "cpu", "--beam", "4", KEY], None);
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    assert_eq!(text(&late.stdout), text(&early.stdout));
    assert_eq!(text(&late.stdout).lines().count(), 4);
    assert_one_line_error(
        &run(&["predict", "--device", "cpu", KEY, "--beam", "0"], None),
        2,
        "--beam",
    );
    // --help anywhere among the options prints the command's help.
    let out = run(&["predict", "--device", "cpu", "--help"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("Usage: tuneinfer predict"));
}

#[test]
fn bench_fails_when_nothing_was_measured() {
    // A device asked for by name that cannot load the model: its error and exit code.
    assert_one_line_error(
        &run(
            &["bench", "--devices", "cpu", "--solver", "Foo", "--problems", "3"],
            None,
        ),
        6,
        "Foo",
    );
    // A random workload for the 2-D CK solvers too (they are tunable: MIOpen 3.5.1's catalogue),
    // measured through MIOpen's gfx942 KTN model.
    let m = models();
    let ck = [
        "bench",
        "--devices",
        "cpu",
        "--arch",
        "gfx942",
        "--models",
        &m,
        "--solver",
        "ConvHipImplicitGemmGroupFwdXdlops",
    ];
    let out = run(&[&ck[..], &["--problems", "5"]].concat(), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("5 problems"), "{}", text(&out.stdout));
    // Problems the solver does not apply to (a backward-data problem for the forward solver):
    // every prediction fails, exit 1 (not a rate).
    let dir = temp_dir("bench-input");
    let nchw = dir.join("nchw.txt");
    std::fs::write(&nchw, "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NHWC-FP16-B\n").unwrap();
    let out = run(&[&ck[..], &["--input", nchw.to_str().unwrap()]].concat(), None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("every prediction failed"));
    // --input: an empty file is a usage error; a bad line is named by file and line.
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "# nothing\n\n").unwrap();
    assert_one_line_error(
        &run(&["bench", "--input", empty.to_str().unwrap()], None),
        2,
        "no problems",
    );
    // Standard input, with a byte-order mark, like batch.
    let out = run(
        &["bench", "--devices", "cpu", "--input", "-"],
        Some(&format!("\u{feff}{KEY}\n")),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("1 problems"), "{}", text(&out.stdout));
    let mixed = dir.join("mixed.txt");
    std::fs::write(&mixed, format!("{KEY}\nnot-a-key\n")).unwrap();
    assert_one_line_error(
        &run(&["bench", "--devices", "cpu", "--input", mixed.to_str().unwrap()], None),
        5,
        "mixed.txt:2",
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_binary_file_given_as_a_model_is_a_format_error() {
    let weights = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights/gfx906_ConvAsm1x1U.safetensors");
    assert_one_line_error(
        &run(&["verify", weights.to_str().unwrap()], None),
        4,
        "gfx906_ConvAsm1x1U.safetensors",
    );
}

#[test]
fn unwritable_standard_output_is_an_io_error_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("skipped: no /dev/full on this system");
        return;
    };
    let decoder = common::models_dir().join("gfx908_ConvAsm1x1U_decoder.ktn.model");
    for args in [
        vec!["--help"],
        vec!["info"],
        vec!["predict", "--help"],
        vec!["verify", decoder.to_str().unwrap()],
        vec!["predict", "--device", "cpu", KEY],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
            .args(&args)
            .env_remove("TUNEINFER_MODELS")
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("<stdout>"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn the_library_refuses_a_beam_wider_than_its_limit() {
    use tuneinfer::{ConvProblem, DecodeMode, Predictor};
    let limit = tuneinfer::predict::MAX_BEAM_WIDTH;
    let p = Predictor::load("gfx908", "ConvAsm1x1U", &[common::models_dir()]).unwrap();
    let problem = ConvProblem::parse(KEY).unwrap();
    let wide = DecodeMode::Beam {
        width: limit + 1,
        top: 1,
    };
    let e = p.predict_one(&problem, wide).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(p
        .predict_batch(&[problem.clone(), problem.clone()], wide)
        .iter()
        .all(|r| r.is_err()));
    // At the limit it still answers (a position has few values, so the beam stays small).
    let ok = p
        .predict_one(&problem, DecodeMode::Beam { width: limit, top: 2 })
        .unwrap();
    assert_eq!(ok.len(), 2);
}

#[test]
fn batch_input_with_a_byte_order_mark_and_tabs_keeps_the_tsv_intact() {
    let input = format!("\u{feff}{KEY}\nconv\t-n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1\n");
    let out = run(&["batch", "--device", "cpu"], Some(&input));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tsv = text(&out.stdout);
    let rows: Vec<&str> = tsv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{tsv}");
    for row in &rows {
        assert_eq!(row.split('\t').count(), 6, "{row:?}");
    }
    assert!(
        rows[0].starts_with(KEY) && rows[1].starts_with("conv -n 1 -c 4"),
        "{tsv}"
    );
}

#[test]
fn verify_names_the_file_of_an_unsupported_model() {
    // TunaNet (ReLU layers) is not a KTN model; the one-line error names the file and the layer.
    let tunanet = common::models_dir().join("gfx908.tn.model");
    let out = run(&["verify", tunanet.to_str().unwrap()], None);
    assert_one_line_error(&out, 4, "gfx908.tn.model");
    assert!(text(&out.stderr).contains("re_lu"), "{}", text(&out.stderr));
}

#[test]
fn info_says_when_a_listed_model_does_not_load() {
    let dir = temp_dir("info");
    common::copy_gfx908_asm1x1u_model(&dir);
    let listing = |dir: &PathBuf| text(&run(&["info", "--models", dir.to_str().unwrap()], None).stdout);
    let good = listing(&dir);
    assert!(good.contains("gfx908") && !good.contains("not loadable"), "{good}");
    let encoder = dir.join("gfx908_ConvAsm1x1U_encoder.ktn.model");
    let bytes = std::fs::read(&encoder).unwrap();
    std::fs::write(&encoder, &bytes[..bytes.len() / 2]).unwrap();
    let damaged = listing(&dir);
    assert!(damaged.contains("not loadable"), "{damaged}");
    // A model that parses but that its solver refuses (a non-integer ConvAsm1x1U value) is not
    // usable either: `info` checks it as `predict` does.
    common::copy_gfx908_asm1x1u_model(&dir);
    let meta = dir.join("gfx908_ConvAsm1x1U_metadata.ktn.model");
    let text_meta = std::fs::read_to_string(&meta).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text_meta).unwrap();
    json["decodings"]["tunings"]["5"] = serde_json::json!("abc");
    std::fs::write(&meta, json.to_string()).unwrap();
    let refused = listing(&dir);
    assert!(
        refused.contains("not loadable") && refused.contains("'abc'"),
        "{refused}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn batch_output_keeps_links_redirections_and_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("outputs");
    let input = dir.join("problems.txt");
    std::fs::write(&input, format!("{KEY}\n")).unwrap();
    let batch_to = |output: &str, stdout: std::process::Stdio| {
        Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
            .args([
                "batch",
                "--device",
                "cpu",
                "--input",
                input.to_str().unwrap(),
                "--output",
                output,
            ])
            .env_remove("TUNEINFER_MODELS")
            .stdout(stdout)
            .output()
            .unwrap()
    };
    // `--output /dev/stdout >> log`: appended to the log, not renamed over it.
    let log = dir.join("log.tsv");
    std::fs::write(&log, "previous\n").unwrap();
    let append = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let out = batch_to("/dev/stdout", append.into());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.starts_with("previous\nproblem\t") && logged.contains(KEY),
        "{logged}"
    );
    // A link to an existing file: the file is replaced, the link stays, no temporary is left.
    let target = dir.join("real.tsv");
    std::fs::write(&target, "old\n").unwrap();
    let link = dir.join("link.tsv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = batch_to(link.to_str().unwrap(), std::process::Stdio::null());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(
        written.starts_with("problem\tsolver\trank\tconfig") && written.contains(KEY),
        "{written}"
    );
    let leftovers: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp-write"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A link to a file that does not exist yet: the file is created, the link stays.
    let new_target = dir.join("new.tsv");
    let dangling = dir.join("dangling.tsv");
    std::os::unix::fs::symlink(&new_target, &dangling).unwrap();
    let out = batch_to(dangling.to_str().unwrap(), std::process::Stdio::null());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&new_target).unwrap().contains(KEY));
    // A replaced file keeps its permissions.
    let private = dir.join("private.tsv");
    std::fs::write(&private, "old\n").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = batch_to(private.to_str().unwrap(), std::process::Stdio::null());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(std::fs::read_to_string(&private).unwrap().contains(KEY));
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn a_non_utf8_argument_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .arg("predict")
        .arg(std::ffi::OsStr::from_bytes(b"\xff-key"))
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, "argument 2 is not UTF-8");
}

#[test]
fn a_solver_without_a_model_for_the_arch_is_model_not_found() {
    // MIOpen ships the composable_kernel solvers' models for gfx90a and gfx942 only; the default
    // arch is gfx906. That is a missing model (exit 6) naming the arch and the arches MIOpen
    // has, not "does not apply" (exit 5, which is about the problem).
    let m = models();
    let out = run(
        &[
            "predict",
            "--device",
            "cpu",
            "--models",
            &m,
            "--solver",
            "ConvHipImplicitGemmGroupFwdXdlops",
            "64-56-56-3x3-64-56-56-8-1x1-1x1-1x1-0-NHWC-FP32-F_g16",
        ],
        None,
    );
    assert_one_line_error(&out, 6, "gfx906");
    let err = text(&out.stderr);
    assert!(err.contains("gfx90a, gfx942"), "{err}");
}

#[test]
fn bench_refuses_f16_when_no_gpu_is_measured() {
    // f16 is a precision of the GPU's weights; timing the CPU's f32 under that label would be a
    // wrong measurement (as `predict --device cpu --precision f16` is a usage error).
    assert_one_line_error(
        &run(
            &["bench", "--devices", "cpu", "--precision", "f16", "--problems", "3"],
            None,
        ),
        2,
        "--precision f16",
    );
}

#[test]
fn a_problem_swallowed_by_beam_names_beam() {
    // `--beam KEY` reads the problem as the width: the error is about --beam, not a missing
    // problem.
    let out = run(&["predict", "--device", "cpu", "--beam", KEY], None);
    assert_one_line_error(&out, 2, "--beam");
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("got '{KEY}'")) && !err.contains("needs a PROBLEM"),
        "{err}"
    );
    // The same for batch (its problems come from --input).
    assert_one_line_error(
        &run(&["batch", "--device", "cpu", "--beam", "x"], Some("")),
        2,
        "got 'x'",
    );
}

#[test]
fn decode_auto_is_the_beam_for_our_models_and_miopens_walk_for_miopens() {
    // tuneinfer's own model: the default answer is the best of a constrained beam of 6 ...
    let problems = [
        "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
        "288-56-56-1x1-192-56-56-512-0x0-1x1-1x1-0-NCHW-FP32-B",
        "64-28-28-1x1-96-28-28-3-0x0-1x1-1x1-0-NCHW-FP32-F",
    ];
    for key in problems {
        let plain = run(&["predict", "--device", "cpu", key], None);
        let auto = run(&["predict", "--device", "cpu", "--decode", "auto", key], None);
        let beam = run(&["predict", "--device", "cpu", "--beam", "6", "--top", "1", key], None);
        assert!(
            plain.status.success() && beam.status.success(),
            "{}",
            text(&beam.stderr)
        );
        let beam_config = text(&beam.stdout).split('\t').nth(1).unwrap_or_default().to_string();
        assert_eq!(text(&plain.stdout).trim(), beam_config, "{key}");
        assert_eq!(text(&auto.stdout), text(&plain.stdout), "{key}");
    }
    // ... and MIOpen's model answers as MIOpen does (its documented expectation, README of
    // ../shared/miopen), with its fallback note where the walk fails.
    let m = models();
    let ktn = |extra: &[&str]| {
        let mut words = vec!["predict", "--device", "cpu", "--arch", "gfx908", "--models", &m];
        words.extend_from_slice(extra);
        run(&words, None)
    };
    let out = ktn(&[
        "convfp16", "-n", "256", "-c", "2048", "-H", "7", "-W", "7", "-k", "512", "-y", "1", "-x", "1", "-F", "1",
    ]);
    assert_eq!(text(&out.stdout).trim(), "2,8,4,16,1,4,1,4");
    let out = ktn(&[
        "conv", "-n", "1", "-c", "4", "-H", "2", "-W", "2", "-k", "4", "-y", "1", "-x", "1", "-F", "1",
    ]);
    assert!(
        text(&out.stderr).contains("MIOpen's walk found no valid config"),
        "{}",
        text(&out.stderr)
    );
    assert_one_line_error(
        &run(&["predict", "--decode", "best", problems[0]], None),
        2,
        "auto or miopen",
    );
}

/// What a new user tripped over (issue 13): each fixed, each checked here.
#[test]
fn binary_input_and_huge_arguments_are_quoted_short_and_summarised() {
    // A binary file: a few short lines on stderr, then a count, never the bytes themselves.
    let dir = temp_dir("binary");
    let file = dir.join("random.bin");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let bytes: Vec<u8> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    std::fs::write(&file, &bytes).unwrap();
    let out = run(&["batch", "--device", "cpu", "--input", file.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() <= 25, "{} lines on stderr", lines.len());
    assert!(lines.iter().all(|l| l.len() < 600), "a long line: {err}");
    assert!(!err.bytes().any(|b| b < 0x20 && b != b'\n'), "control bytes echoed");
    assert!(
        err.contains("bad line(s) skipped") && err.contains("not shown"),
        "{err}"
    );
    // A 100,000-character argument.
    let huge = "7".repeat(100_000);
    let out = run(&["predict", "--device", "cpu", &huge], None);
    assert_eq!(out.status.code(), Some(5));
    assert!(out.stderr.len() < 600, "{} bytes on stderr", out.stderr.len());
    assert!(text(&out.stderr).contains("100000 characters in all"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_missing_output_directory_fails_before_predicting_and_names_the_path_given() {
    let out = run(
        &["batch", "--device", "cpu", "--output", "/missing/dir/out.tsv"],
        Some(&format!("{KEY}\n")),
    );
    assert_one_line_error(&out, 3, "/missing/dir/out.tsv");
    let err = text(&out.stderr);
    assert!(
        err.contains("/missing/dir does not exist") && !err.contains("tmp-write"),
        "{err}"
    );
}

#[test]
fn option_errors_say_what_is_allowed_and_where() {
    let out = run(&["predict", "--device", "cpu", "--beam", "4", "--top", "0", KEY], None);
    assert_one_line_error(&out, 2, "--top: expected an integer in 1..=4, got '0'");
    // bench: the file and line first, then the problem.
    let dir = temp_dir("bench-input");
    let file = dir.join("problems.txt");
    std::fs::write(&file, format!("{KEY}\nnot-a-key\n")).unwrap();
    let out = run(&["bench", "--devices", "cpu", "--input", file.to_str().unwrap()], None);
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("error: {}:2: invalid problem 'not-a-key'", file.display())),
        "{err}"
    );
    // `--device auto` with no model: the error alone, no note before it.
    let out = run(&["predict", "--device", "auto", "--models", "/nonexistent", KEY], None);
    assert_eq!(out.status.code(), Some(6));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent (does not exist)"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn predict_takes_log_lines_24_field_keys_and_every_direction_and_solver() {
    let log = "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 128 -c 1024 -H 14 -W 14 -k 2048 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1";
    let key = "1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F";
    let x24 = "2x1024x14x14x1x1x1x1x2048x128x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP32xF";
    let by_key = run(&["predict", "--device", "cpu", key], None);
    assert_eq!(by_key.status.code(), Some(0), "{}", text(&by_key.stderr));
    for form in [log, x24] {
        let out = run(&["predict", "--device", "cpu", form], None);
        assert_eq!(text(&out.stdout), text(&by_key.stdout), "{form}");
    }
    // -F 0: a row per direction the solver serves (ConvAsm1x1U: F and B), naming each.
    let out = run(
        &[
            "predict", "--device", "cpu", "conv", "-n", "128", "-c", "1024", "-H", "14", "-W", "14", "-k", "2048",
            "-y", "1", "-x", "1", "-F", "0",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Vec<Vec<String>> = text(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(String::from).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0][0], key);
    assert_eq!(rows[0][3], text(&by_key.stdout).trim());
    assert!(rows[1][0].ends_with("-B") && rows.iter().all(|r| r[1] == "ConvAsm1x1U" && r.len() == 6));
    // --solver all on a backward-weights 1x1 problem: ConvAsmBwdWrW1x1 answers.
    let w = "2048-7-7-1x1-1024-14-14-128-0x0-2x2-1x1-0-NCHW-FP32-W";
    let out = run(&["predict", "--device", "cpu", "--solver", "all", w], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let one_solver = run(&["predict", "--device", "cpu", "--solver", "ConvAsmBwdWrW1x1", w], None);
    let row: Vec<String> = text(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .map(String::from)
        .collect();
    assert_eq!(row[1], "ConvAsmBwdWrW1x1");
    assert_eq!(row[3], text(&one_solver.stdout).trim());
}

#[test]
fn batch_streams_chunks_and_predicts_a_repeated_problem_once() {
    // More lines than one chunk (4096), the first problem repeated at the end.
    let mut input = String::new();
    let mut distinct = 0;
    'outer: for c in 1..=80u32 {
        for k in 1..=60u32 {
            input.push_str(&format!("conv -n 2 -c {c} -H 7 -W 7 -k {k} -y 1 -x 1 -F 1\n"));
            distinct += 1;
            if distinct == 4200 {
                break 'outer;
            }
        }
    }
    input.push_str("conv -n 2 -c 1 -H 7 -W 7 -k 1 -y 1 -x 1 -F 1\n");
    let out = run(
        &["batch", "--device", "cpu", "--arch", "gfx908", "--models", &models()],
        Some(&input),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tsv = text(&out.stdout);
    let rows: Vec<&str> = tsv.lines().skip(1).collect();
    assert_eq!(rows.len(), distinct, "one row per distinct problem");
    assert!(
        text(&out.stderr).contains("1 repeated problem(s) predicted once"),
        "{}",
        text(&out.stderr)
    );
    // Rows on both sides of the chunk boundary are what `predict` says for them.
    let m = models();
    for i in [0, 4095, 4096, distinct - 1] {
        let fields: Vec<&str> = rows[i].split('\t').collect();
        let words: Vec<&str> = fields[0].split_whitespace().collect();
        let args = [
            &["predict", "--device", "cpu", "--arch", "gfx908", "--models", &m][..],
            &words[..],
        ]
        .concat();
        let single = run(&args, None);
        assert_eq!(fields[3], text(&single.stdout).trim(), "row {i}: {}", rows[i]);
    }
}

#[test]
fn a_killed_runs_temporary_file_is_removed_by_the_next_write() {
    let dir = temp_dir("stale");
    let out = dir.join("out.tsv");
    // A run killed between writing and renaming left its temporary file; pid 4194303 is above
    // any pid in use here (the kernel's largest), so that process does not run.
    let stale = dir.join(".out.tsv.4194303.tmp-write");
    std::fs::write(&stale, "half").unwrap();
    // The temporary file of a process that runs (this test) is not touched.
    let live = dir.join(format!(".out.tsv.{}.tmp-write", std::process::id()));
    std::fs::write(&live, "mine").unwrap();
    let o = run(
        &["batch", "--device", "cpu", "--output", out.to_str().unwrap()],
        Some(&format!("{KEY}\n")),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!stale.exists(), "the dead run's temporary file is still there");
    assert!(live.exists());
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("problem\t"));
    let _ = std::fs::remove_dir_all(dir);
}
