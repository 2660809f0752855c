//! The C ABI against the CLI: `examples/c/predict.c` and `tests/ffi/checks.c`, compiled with
//! the system `cc` against the `libtuneinfer.so` this test run built, must print what
//! `tuneinfer predict` / `batch` print for the README's examples, and return the header's
//! documented codes with the CLI's messages for bad input.

#[allow(unused_imports)]
use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const KEY: &str = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F";
const BAD_KEY: &str = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-X";

/// The directory holding the cdylib cargo built for this test run: the `deps/` folder beside
/// this test binary (cargo builds the library's cdylib there for every test run, but only
/// `cargo build` copies it up into the profile folder).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir").to_path_buf();
    for dir in [deps.clone(), deps.parent().map(Path::to_path_buf).unwrap_or_default()] {
        if dir.join("libtuneinfer.so").exists() {
            return dir;
        }
    }
    panic!(
        "libtuneinfer.so not found in {} or its parent: build with `cargo build --release --lib`",
        deps.display()
    );
}

/// Compiles `source` (relative to the crate) against the header and the library, once.
fn compile(source: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-ffi-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let exe = dir.join(name);
    let lib = lib_dir();
    let out = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1", "-g"])
        .arg(format!("-I{ROOT}/include"))
        .arg(Path::new(ROOT).join(source))
        .arg(format!("-L{}", lib.display()))
        .arg("-ltuneinfer")
        .arg("-lpthread")
        // RPATH, not RUNPATH: searched before LD_LIBRARY_PATH (which cargo sets for tests).
        .arg(format!("-Wl,--disable-new-dtags,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("the system C compiler `cc` must be installed");
    assert!(
        out.status.success(),
        "cc {source} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn predict_c() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile("examples/c/predict.c", "predict"))
}

fn checks_c() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile("tests/ffi/checks.c", "checks"))
}

fn run(program: &Path, args: &[String]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(ROOT)
        .env_remove("TUNEINFER_MODELS")
        // cargo's LD_LIBRARY_PATH names target/release first, where another build (e.g. one
        // with other features) may have left another libtuneinfer.so.
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run")
}

fn cli(args: &[String]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_tuneinfer")), args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The header's `#define TUNEINFER_* N` values.
fn header_codes() -> BTreeMap<String, i64> {
    let header = std::fs::read_to_string(Path::new(ROOT).join("include/tuneinfer.h")).expect("header");
    header
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("#define"), Some(name), Some(value)) => value.parse().ok().map(|v| (name.to_string(), v)),
                _ => None,
            }
        })
        .collect()
}

fn code(name: &str) -> i32 {
    *header_codes()
        .get(name)
        .unwrap_or_else(|| panic!("{name} not in the header")) as i32
}

/// The `$ tuneinfer predict|batch ...` examples of the README and docs/ as argument lists, with the files
/// its `$ cat FILE` blocks define written to `dir` (and their names replaced by those paths).
fn readme_examples(dir: &Path) -> Vec<Vec<String>> {
    // README.md and the pages of docs/ (where the examples moved), one text.
    let mut pages = vec![Path::new(ROOT).join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let readme: String = pages
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())) + "\n")
        .collect();
    let data = common::miopen_dir().display().to_string();
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut commands = Vec::new();
    let (mut inside, mut cat): (bool, Option<String>) = (false, None);
    for line in readme.lines() {
        if line.starts_with("```") {
            inside = line.trim() == "```console";
            cat = None;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            cat = cmd.strip_prefix("cat ").map(str::to_string);
            if let Some(name) = &cat {
                files.insert(name.clone(), Vec::new());
            }
            let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
            // A C predictor is one solver's: `--solver all` (several predictors' answers) is
            // the CLI's; the example's C program does not take it.
            let all_solvers = words.windows(2).any(|w| w[0] == "--solver" && w[1] == "all");
            // The system perf db and the choice among predictors (`--method`) are the CLI's: the
            // ABI predicts with the model.
            let cli_only = words.iter().any(|w| w == "--system-db" || w == "--method");
            if words.len() > 2
                && words[0] == "tuneinfer"
                && (words[1] == "predict" || words[1] == "batch")
                && !all_solvers
                && !cli_only
            {
                commands.push(words[1..].to_vec());
            }
        } else if let Some(name) = &cat {
            if let Some(lines) = files.get_mut(name) {
                lines.push(line.to_string());
            }
        }
    }
    for (name, lines) in &files {
        std::fs::write(dir.join(name), lines.join("\n") + "\n").expect("write example file");
    }
    commands
        .into_iter()
        .map(|words| {
            words
                .into_iter()
                .map(|w| match files.contains_key(&w) {
                    true => dir.join(&w).display().to_string(),
                    false => w.replace("../shared/miopen", &data),
                })
                .collect()
        })
        .collect()
}

#[test]
fn header_codes_are_the_libraries_and_the_clis() {
    use tuneinfer::ffi;
    let h = header_codes();
    assert_eq!(h["TUNEINFER_ABI_VERSION"], i64::from(ffi::ABI_VERSION));
    assert_eq!(i64::from(ffi::tuneinfer_abi_version()), h["TUNEINFER_ABI_VERSION"]);
    for (name, value) in [
        ("TUNEINFER_OK", ffi::TUNEINFER_OK),
        ("TUNEINFER_PARTIAL", ffi::TUNEINFER_PARTIAL),
        ("TUNEINFER_ERR_USAGE", ffi::TUNEINFER_ERR_USAGE),
        ("TUNEINFER_ERR_IO", ffi::TUNEINFER_ERR_IO),
        ("TUNEINFER_ERR_FORMAT", ffi::TUNEINFER_ERR_FORMAT),
        ("TUNEINFER_ERR_PROBLEM", ffi::TUNEINFER_ERR_PROBLEM),
        ("TUNEINFER_ERR_MODEL_NOT_FOUND", ffi::TUNEINFER_ERR_MODEL_NOT_FOUND),
        ("TUNEINFER_ERR_DATABASE", ffi::TUNEINFER_ERR_DATABASE),
        ("TUNEINFER_ERR_VERIFY", ffi::TUNEINFER_ERR_VERIFY),
        ("TUNEINFER_ERR_GPU", ffi::TUNEINFER_ERR_GPU),
        ("TUNEINFER_ERR_HANDLE", ffi::TUNEINFER_ERR_HANDLE),
        ("TUNEINFER_ERR_INTERNAL", ffi::TUNEINFER_ERR_INTERNAL),
        ("TUNEINFER_DECODE_DEFAULT", ffi::TUNEINFER_DECODE_DEFAULT),
        ("TUNEINFER_DECODE_GREEDY", ffi::TUNEINFER_DECODE_GREEDY),
        ("TUNEINFER_DECODE_BEAM", ffi::TUNEINFER_DECODE_BEAM),
        ("TUNEINFER_SOURCE_MODEL", ffi::TUNEINFER_SOURCE_MODEL),
        ("TUNEINFER_SOURCE_DEFAULT", ffi::TUNEINFER_SOURCE_DEFAULT),
        ("TUNEINFER_SOURCE_NEIGHBOUR", ffi::TUNEINFER_SOURCE_NEIGHBOUR),
        ("TUNEINFER_SOURCE_PERF_DB", ffi::TUNEINFER_SOURCE_PERF_DB),
        ("TUNEINFER_LAYOUT_NCHW", ffi::TUNEINFER_LAYOUT_NCHW),
        ("TUNEINFER_LAYOUT_NHWC", ffi::TUNEINFER_LAYOUT_NHWC),
        ("TUNEINFER_TYPE_FP32", ffi::TUNEINFER_TYPE_FP32),
        ("TUNEINFER_TYPE_FP16", ffi::TUNEINFER_TYPE_FP16),
        ("TUNEINFER_TYPE_BF16", ffi::TUNEINFER_TYPE_BF16),
    ] {
        assert_eq!(h.get(name), Some(&i64::from(value)), "{name}");
    }
    // The CLI's exit codes, from the CLI: a usage error, a bad problem, an unknown solver.
    for (args, name) in [
        (vec!["predict", "--beam", "0", KEY], "TUNEINFER_ERR_USAGE"),
        (vec!["predict", BAD_KEY], "TUNEINFER_ERR_PROBLEM"),
        (
            vec!["predict", "--device", "cpu", "--solver", "NoSuchSolver", KEY],
            "TUNEINFER_ERR_MODEL_NOT_FOUND",
        ),
    ] {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        assert_eq!(cli(&args).status.code(), Some(code(name)), "{args:?}");
    }
}

#[test]
fn c_example_prints_what_the_cli_prints_on_the_readme_examples() {
    let dir = std::env::temp_dir().join(format!("tuneinfer-ffi-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let examples = readme_examples(&dir);
    assert!(examples.len() >= 10, "only {} README examples found", examples.len());
    assert!(
        examples.iter().any(|e| e[0] == "batch"),
        "no batch example in the README"
    );
    for words in &examples {
        let expected = cli(words);
        // The C example takes predict's options, and batch's as `--input FILE`.
        let got = run(predict_c(), &words[1..]);
        let shown = words.join(" ");
        assert_eq!(text(&got.stdout), text(&expected.stdout), "stdout of {shown}");
        // The CLI's notes are its own: the per-problem one (`Solver::problem_note`, e.g. that
        // MIOpen transposes an NCHW problem for the GTC solvers), the system perf db it looked up
        // (the ABI predicts; it does not look up MIOpen's tuned values), a default it used and
        // which model served a GPU with none of its own.
        let cli_stderr = without_cli_notes(&text(&expected.stderr));
        assert_eq!(text(&got.stderr), cli_stderr, "stderr of {shown}");
        assert_eq!(got.status.code(), expected.status.code(), "exit status of {shown}");
        assert!(
            !expected.stdout.is_empty() || !expected.stderr.is_empty(),
            "{shown} printed nothing"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CLI's stderr without the notes that are the CLI's own: the per-problem one
/// (`Solver::problem_note`, e.g. that MIOpen transposes an NCHW problem for the GTC solvers), the
/// system perf db it looked up (the ABI predicts; it does not look up MIOpen's tuned values) and
/// a default it announced (the C example passes none of those options either).
fn without_cli_notes(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| {
            !(l.starts_with("note: NCHW problem:")
                || l.starts_with("note: system perf db")
                || l.starts_with("note: no --")
                || l.starts_with("note: composable_kernel kernel ids")
                || (l.starts_with("note: ") && l.contains("has no model of its own for these solvers")))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_bad_problem_is_the_documented_code_with_the_clis_message() {
    for problem in [
        BAD_KEY.to_string(),
        "2048-7-7-1x1-512-7-7".to_string(),
        "conv -n 0 -c 4".to_string(),
        // Stride 3: ConvAsm1x1U takes strides 1 and 2 only.
        "1024-14-14-1x1-2048-5-5-128-0x0-3x3-1x1-0-NCHW-FP32-F".to_string(),
    ] {
        let args = vec!["--device".into(), "cpu".into(), problem.clone()];
        let got = run(predict_c(), &args);
        let mut cli_args = vec!["predict".to_string()];
        cli_args.extend(args);
        let expected = cli(&cli_args);
        assert_eq!(got.status.code(), Some(code("TUNEINFER_ERR_PROBLEM")), "{problem}");
        assert_eq!(expected.status.code(), Some(code("TUNEINFER_ERR_PROBLEM")), "{problem}");
        assert_eq!(
            text(&got.stderr),
            without_cli_notes(&text(&expected.stderr)),
            "{problem}"
        );
        assert!(text(&got.stderr).starts_with("error: "), "{problem}");
        assert!(got.stdout.is_empty());
    }
}

/// `checks` output: name -> (status, message) and the other lines by their first word(s).
fn checks_output() -> (BTreeMap<String, (i32, String)>, Vec<String>) {
    let out = run(checks_c(), &[common::models_dir().display().to_string()]);
    assert!(out.status.success(), "checks failed: {}", text(&out.stderr));
    let mut reports = BTreeMap::new();
    let lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    for line in &lines {
        let mut parts = line.splitn(3, ' ');
        if let (Some(name), Some(status)) = (parts.next(), parts.next()) {
            if let Ok(s) = status.parse::<i32>() {
                reports.insert(name.to_string(), (s, parts.next().unwrap_or("").to_string()));
            }
        }
    }
    (reports, lines)
}

fn line_value<'a>(lines: &'a [String], prefix: &str) -> &'a str {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line '{prefix}...'"))
}

/// The CLI's stderr message without "error: " and the note lines.
fn cli_error<S: AsRef<str>>(args: &[S]) -> (i32, String) {
    let args: Vec<String> = args.iter().map(|s| s.as_ref().to_string()).collect();
    let out = cli(&args);
    let stderr = text(&out.stderr);
    let message = stderr
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("no error from {args:?}: {stderr}"))
        .to_string();
    (out.status.code().unwrap_or(-1), message)
}

fn cli_config<S: AsRef<str>>(args: &[S]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.as_ref().to_string()).collect();
    let out = cli(&args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim_end().to_string()
}

#[test]
fn bad_arguments_and_handles_are_errors_with_the_documented_codes() {
    let (r, lines) = checks_output();
    let models = common::models_dir().display().to_string();
    let gfx908 = [
        "predict",
        "--device",
        "cpu",
        "--arch",
        "gfx908",
        "--models",
        models.as_str(),
    ];
    let with = |extra: &[&str]| -> Vec<String> { gfx908.iter().chain(extra).map(|s| s.to_string()).collect() };

    assert_eq!(
        line_value(&lines, "abi "),
        format!("{0} {0}", tuneinfer::ffi::ABI_VERSION)
    );
    let handle = code("TUNEINFER_ERR_HANDLE");
    let usage = code("TUNEINFER_ERR_USAGE");
    for name in [
        "null_handle",
        "made_up_handle",
        "made_up_results_free",
        "results_double_free",
        "use_after_free",
        "double_free",
    ] {
        assert_eq!(r[name].0, handle, "{name}: {:?}", r[name]);
        assert!(r[name].1.contains("not a live handle"), "{name}: {:?}", r[name]);
    }
    for name in [
        "null_handle_free",
        "null_results_free",
        "open",
        "predict",
        "results_free",
        "free",
        "predict_problem",
        "default_decode",
        "predict_batch_empty",
    ] {
        assert_eq!(r[name], (code("TUNEINFER_OK"), String::new()), "{name}");
    }
    for name in [
        "open_null_out",
        "predict_null_out",
        "predict_null_problem",
        "predict_problem_null",
        "predict_batch_null_array",
        "bad_decode_kind",
    ] {
        assert_eq!(r[name].0, usage, "{name}: {:?}", r[name]);
        assert!(
            r[name].1.contains("NULL") || name == "bad_decode_kind",
            "{name}: {:?}",
            r[name]
        );
    }
    assert_eq!(line_value(&lines, "solver_of_bad_handle "), "null");
    assert_eq!(line_value(&lines, "open_failed_out "), "null");
    assert_eq!(line_value(&lines, "bad_problem_out "), "null");
    assert_eq!(line_value(&lines, "solver "), "ConvAsm1x1U");
    assert_eq!(line_value(&lines, "device "), "cpu");
    assert_eq!(
        line_value(&lines, "default_decode_kind ").parse::<i32>(),
        Ok(code("TUNEINFER_DECODE_GREEDY"))
    );
    assert_eq!(line_value(&lines, "status_name "), "TUNEINFER_ERR_PROBLEM");
    assert_eq!(line_value(&lines, "last_error_after_success_is_cleared "), "0 '' 4");
    assert_eq!(line_value(&lines, "threads_same "), "80 of 80");
    assert_eq!(line_value(&lines, "empty_count "), "0");

    // The same codes and messages as the CLI's for the same mistakes.
    for (name, args) in [
        (
            "open_unknown_solver",
            ["predict", "--device", "cpu", "--solver", "NoSuchSolver", KEY]
                .map(String::from)
                .to_vec(),
        ),
        (
            "open_model_not_found",
            [
                "predict",
                "--device",
                "cpu",
                "--arch",
                "gfx908",
                "--models",
                "/nonexistent/models",
                KEY,
            ]
            .map(String::from)
            .to_vec(),
        ),
        (
            "open_bad_device",
            ["predict", "--device", "tpu", KEY].map(String::from).to_vec(),
        ),
        ("bad_problem", with(&[BAD_KEY])),
        (
            "not_applicable",
            with(&["1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F"]),
        ),
    ] {
        assert_eq!(r[name], cli_error(&args), "{name}");
    }
    // Decode requests the CLI refuses as usage errors are usage errors here too.
    for (name, args) in [
        ("beam_width_0", with(&["--beam", "0", KEY])),
        ("beam_width_5000", with(&["--beam", "5000", KEY])),
        ("top_over_width", with(&["--beam", "4", "--top", "5", KEY])),
    ] {
        assert_eq!(r[name].0, cli_error(&args).0, "{name}: {:?}", r[name]);
    }

    // Answers: texts, structs, batches.
    let fwd = "convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -F 1";
    let bwd = fwd.replace("-F 1", "-F 2");
    let negative = "convfp16 -n -1 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1 -b 0 --in_layout NCHW";
    assert_eq!(line_value(&lines, "config key "), cli_config(&with(&[KEY])));
    assert_eq!(line_value(&lines, "config struct "), cli_config(&with(&[fwd])));
    let (neg_code, neg_message) = cli_error(&with(&[negative]));
    assert_eq!(r["predict_problem_negative"], (neg_code, neg_message.clone()));
    assert_eq!(r["predict_problem_bad_layout"].0, code("TUNEINFER_ERR_PROBLEM"));
    assert_eq!(r["predict_problems"].0, code("TUNEINFER_PARTIAL"));
    assert_eq!(r["predict_batch"].0, code("TUNEINFER_PARTIAL"));
    let items: Vec<&String> = lines.iter().filter(|l| l.starts_with("item ")).collect();
    let small = "conv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1";
    let expected = [
        format!("item 0 0 {}", cli_config(&with(&[fwd]))),
        format!("item 1 0 {}", cli_config(&with(&[bwd.as_str()]))),
        format!("item 2 {neg_code} {neg_message}"),
        format!("item 0 0 {} model", cli_config(&with(&[KEY]))),
        format!("item 1 {usage} argument 'problem' is NULL"),
        format!("item 2 0 {} default", cli_config(&with(&[small]))),
        {
            let (c, m) = cli_error(&with(&["not a problem"]));
            format!("item 3 {c} {m}")
        },
    ];
    let items: Vec<String> = items.into_iter().cloned().collect();
    assert_eq!(items, expected);
}

#[test]
fn the_headers_structs_have_the_libraries_layout() {
    use std::mem::{offset_of, size_of};
    use tuneinfer::ffi::*;
    let (_, lines) = checks_output();
    let layout: BTreeMap<&str, usize> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("layout "))
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(k, v)| v.parse().ok().map(|v| (k, v)))
        .collect();
    let rust = [
        ("tuneinfer_options", size_of::<tuneinfer_options>()),
        ("tuneinfer_options.catalogue", offset_of!(tuneinfer_options, catalogue)),
        (
            "tuneinfer_options.compute_units",
            offset_of!(tuneinfer_options, compute_units),
        ),
        ("tuneinfer_options.threads", offset_of!(tuneinfer_options, threads)),
        ("tuneinfer_options.method", offset_of!(tuneinfer_options, method)),
        ("tuneinfer_options.system_db", offset_of!(tuneinfer_options, system_db)),
        ("tuneinfer_decode", size_of::<tuneinfer_decode>()),
        ("tuneinfer_decode.beam_width", offset_of!(tuneinfer_decode, beam_width)),
        ("tuneinfer_decode.top", offset_of!(tuneinfer_decode, top)),
        ("tuneinfer_problem", size_of::<tuneinfer_problem>()),
        ("tuneinfer_problem.groups", offset_of!(tuneinfer_problem, groups)),
        ("tuneinfer_problem.bias", offset_of!(tuneinfer_problem, bias)),
        ("tuneinfer_problem.direction", offset_of!(tuneinfer_problem, direction)),
        ("tuneinfer_prediction", size_of::<tuneinfer_prediction>()),
        ("tuneinfer_prediction.score", offset_of!(tuneinfer_prediction, score)),
        (
            "tuneinfer_prediction.has_score",
            offset_of!(tuneinfer_prediction, has_score),
        ),
        ("tuneinfer_prediction.source", offset_of!(tuneinfer_prediction, source)),
        ("tuneinfer_result", size_of::<tuneinfer_result>()),
        ("tuneinfer_result.message", offset_of!(tuneinfer_result, message)),
        ("tuneinfer_result.count", offset_of!(tuneinfer_result, count)),
        (
            "tuneinfer_result.predictions",
            offset_of!(tuneinfer_result, predictions),
        ),
        ("tuneinfer_results.items", offset_of!(tuneinfer_results, items)),
    ];
    assert_eq!(layout.len(), rust.len(), "{layout:?}");
    for (name, value) in rust {
        assert_eq!(layout.get(name), Some(&value), "{name}");
    }
}

#[test]
fn the_c_abi_answers_through_the_clis_answering_path() {
    // Issue 43: MI100's GTC forward model's recorded figures choose MIOpen's default for this
    // kind of problem (`--method best`, the default), so the CLI's first answer is the default
    // (source "default") where the model's own first answer differs. The C ABI gives the CLI's.
    let args = |method: &str| -> Vec<String> {
        [
            "--arch",
            "gfx90878",
            "--solver",
            "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
            "--device",
            "cpu",
            "--system-db",
            "none",
            "--method",
            method,
            "--beam",
            "4",
            "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut cli_args = vec!["predict".to_string()];
    cli_args.extend(args("best"));
    let (c_best, cli_best) = (run(predict_c(), &args("best")), cli(&cli_args));
    assert_eq!(text(&c_best.stdout), text(&cli_best.stdout));
    let mut cli_args = vec!["predict".to_string()];
    cli_args.extend(args("model"));
    let (c_model, cli_model) = (run(predict_c(), &args("model")), cli(&cli_args));
    assert_eq!(text(&c_model.stdout), text(&cli_model.stdout));
    // The two differ: best puts MIOpen's default first (no score), the model its own answer.
    let first = |o: &Output| text(&o.stdout).lines().next().unwrap_or("").to_string();
    assert_ne!(first(&c_best), first(&c_model), "{}", text(&c_best.stdout));
    assert!(first(&c_best).contains(",12\t"), "{}", first(&c_best));
}
