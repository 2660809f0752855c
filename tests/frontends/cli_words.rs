//! Issue 26, "Words": every message says what to do next. Each test fails on the code before:
//! a bad --arch listed no supported arch, errors echoed 64 KiB of input, "nothing to write: the
//! database already has every entry" was printed when nothing applied, the help lists were
//! hand-written (the GTC solvers missing), defaults were used silently, the summary did not
//! count distinct problems, bench counted refused problems as predictions, and Ctrl-C left
//! `.tuneinfer-tmp` files (or a database without its `.time`).

#[allow(unused_imports)]
use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-words-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
    cmd.args(args)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_USER_DB_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = command(args).spawn().expect("spawn");
    let mut input = child.stdin.take().unwrap();
    // A command that fails on its options exits without reading its input.
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().expect("wait")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// userdb's options for a dry run into `out` with no system db and a fixed name suffix.
fn userdb_args<'a>(out: &'a str, arch: &'a str) -> Vec<&'a str> {
    vec![
        "userdb",
        "--arch",
        arch,
        "--out",
        out,
        "--system-db",
        "none",
        "--miopen-version",
        "HIP.3_2_0_",
        "--device",
        "cpu",
    ]
}

const FWD_3X3: &str = "conv -n 16 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1\n";
const FWD_1X1: &str = "conv -n 16 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 1\n";

#[test]
fn a_bad_arch_lists_the_supported_ones() {
    let out = temp_dir("arch");
    let out = out.to_str().unwrap();
    for arch in ["banana", "gfx1100", "gfx1100_48"] {
        let o = run(&userdb_args(out, arch), b"");
        assert_eq!(o.status.code(), Some(6), "{arch}");
        let err = text(&o.stderr);
        // The shipped models' arches, with their solver counts.
        assert!(
            err.contains("tuneinfer serves these arches, at any compute-unit count"),
            "{arch}: {err}"
        );
        assert!(err.contains("gfx906 (") && err.contains(" solvers)"), "{arch}: {err}");
        assert!(err.contains("'tuneinfer info' lists them"), "{arch}: {err}");
        assert!(err.contains("gfx942 ("), "{arch}: {err}");
    }
    let o = run(
        &[
            "predict", "--arch", "banana", "conv", "-n", "1", "-c", "64", "-H", "7", "-W", "7", "-k", "64",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(6));
    assert!(text(&o.stderr).contains("gfx906 ("), "{}", text(&o.stderr));
}

#[test]
fn errors_quote_at_most_a_few_hundred_characters_of_input() {
    let huge = "x".repeat(70_000);
    for args in [
        vec!["predict", "--arch", huge.as_str(), "conv"],
        vec!["predict", "--solver", huge.as_str(), "conv", "-n", "1"],
        vec![huge.as_str()],
        vec!["predict", "--device", huge.as_str(), "conv"],
        vec!["userdb", "--arch", "gfx906_60", "--format", huge.as_str()],
    ] {
        let o = run(&args, b"");
        assert_ne!(o.status.code(), Some(0));
        let err = text(&o.stderr);
        assert!(err.len() < 2_000, "{} bytes: {}", err.len(), &err[..300]);
        assert!(err.contains("characters in all"), "{err}");
    }
    // A bad input line of 70,000 characters.
    let line = format!("conv -n 1 -c 64 -H 7 -W 7 -k 64 -y 1 -x 1 -m {}\n", "z".repeat(70_000));
    let o = run(
        &[
            "batch",
            "--arch",
            "gfx906",
            "--solver",
            "ConvAsm1x1U",
            "--device",
            "cpu",
        ],
        line.as_bytes(),
    );
    let err = text(&o.stderr);
    assert!(err.contains("<stdin>:1:"), "{}", &err[..err.len().min(500)]);
    assert!(err.len() < 3_000, "{} bytes", err.len());
}

#[test]
fn userdb_says_why_nothing_was_written() {
    let out = temp_dir("nothing");
    let out = out.to_str().unwrap();
    // Empty input, a binary file, and problems no chosen solver applies to.
    let binary: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
    let cases: [(&[u8], &str, &[&str]); 3] = [
        (b"", "the input is empty", &[]),
        (&binary, "a binary file?", &[]),
        (
            format!("{FWD_3X3}{FWD_1X1}").as_bytes().to_vec().leak(),
            "no solver with a model applies to these 2 problems on gfx906_60",
            &["--solver", "ConvAsmBwdWrW1x1"],
        ),
    ];
    for (input, expected, extra) in cases {
        let mut args = userdb_args(out, "gfx906_60");
        args.extend_from_slice(extra);
        let o = run(&args, input);
        let stdout = text(&o.stdout);
        assert!(stdout.contains(expected), "{expected}: {stdout}\n{}", text(&o.stderr));
        assert!(!stdout.contains("already has every entry"), "{stdout}");
    }
    // Nothing was written.
    assert_eq!(std::fs::read_dir(out).unwrap().count(), 0);
}

#[test]
fn userdb_hints_at_nhwc_when_only_nhwc_solvers_have_models() {
    // MIOpen's gfx90a models are composable_kernel's (NHWC only); a PyTorch log is NCHW.
    // tuneinfer's own gfx90a68 models (GTC through transposes, MLIR igemm) take NCHW, so the
    // solvers are narrowed to composable_kernel's three.
    let models = common::models_dir();
    let out = temp_dir("nhwc");
    let mut args = userdb_args(out.to_str().unwrap(), "gfx90a68");
    args.extend(["--dry-run", "--models", models.to_str().unwrap()]);
    args.extend(["--solver", "ConvHipImplicitGemmGroupFwdXdlops"]);
    let o = run(&args, FWD_3X3.as_bytes());
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("no solver with a model applies to these 1 problems"),
        "{stdout}\n{}",
        text(&o.stderr)
    );
    assert!(stdout.contains("take NHWC problems only"), "{stdout}");
    assert!(stdout.contains("channels_last"), "{stdout}");
}

#[test]
fn userdb_counts_distinct_problems() {
    let out = temp_dir("distinct");
    let mut args = userdb_args(out.to_str().unwrap(), "gfx906_60");
    args.push("--dry-run");
    let o = run(&args, format!("{FWD_1X1}{FWD_1X1}{FWD_3X3}").as_bytes());
    let stdout = text(&o.stdout);
    assert!(stdout.contains("3 problems, 2 distinct (1 repeated"), "{stdout}");
}

#[test]
fn help_lists_every_solver_and_tells_the_truth_about_f() {
    let names: Vec<&str> = tuneinfer::solvers::all().iter().map(|s| s.name()).collect();
    assert!(names.contains(&"ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC"));
    for command in ["predict", "batch", "train", "eval"] {
        let o = run(&[command, "--help"], b"");
        let help = text(&o.stdout);
        for name in &names {
            assert!(help.contains(name), "{command} --help lacks {name}");
        }
        assert!(!help.contains("ships"), "{command}: {help}");
        assert!(!help.contains("also ConvAsmBwdWrW1x1]"), "{command}: {help}");
    }
    let help = text(&run(&["predict", "--help"], b"").stdout);
    assert!(help.contains("no -F: forward only"), "{help}");
    // The models found, generated: MI300X's GTC models are in weights/.
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("gfx942130 (ConvBinWinogradRxSf2x3"), "{help}");
    // ... and it is true: no -F predicts the forward problem alone.
    let o = run(
        &[
            "predict",
            "--arch",
            "gfx906",
            "--solver",
            "ConvAsm1x1U",
            "--device",
            "cpu",
            "--system-db",
            "none",
            "conv",
            "-n",
            "16",
            "-c",
            "64",
            "-H",
            "56",
            "-W",
            "56",
            "-k",
            "256",
            "-y",
            "1",
            "-x",
            "1",
        ],
        b"",
    );
    let stdout = text(&o.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
}

#[test]
fn defaults_are_announced() {
    let o = run(
        &[
            "predict",
            "--device",
            "cpu",
            "--system-db",
            "none",
            "conv",
            "-n",
            "16",
            "-c",
            "64",
            "-H",
            "56",
            "-W",
            "56",
            "-k",
            "256",
            "-y",
            "1",
            "-x",
            "1",
            "-F",
            "1",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("no --arch given: using gfx906"), "{err}");
    assert!(err.contains("no --solver given: using ConvAsm1x1U"), "{err}");
    // Given, they are not announced.
    let o = run(
        &[
            "predict",
            "--arch",
            "gfx906",
            "--solver",
            "ConvAsm1x1U",
            "--device",
            "cpu",
            "--system-db",
            "none",
            "conv",
            "-n",
            "16",
            "-c",
            "64",
            "-H",
            "56",
            "-W",
            "56",
            "-k",
            "256",
            "-y",
            "1",
            "-x",
            "1",
            "-F",
            "1",
        ],
        b"",
    );
    assert!(!text(&o.stderr).contains("no --"), "{}", text(&o.stderr));
}

#[test]
fn bench_counts_refused_problems_apart() {
    let dir = temp_dir("bench");
    let input = dir.join("problems.txt");
    // ConvAsm1x1U applies to the 1x1 problem only.
    std::fs::write(&input, format!("{FWD_1X1}{FWD_3X3}{FWD_3X3}")).unwrap();
    let o = run(
        &[
            "bench",
            "--arch",
            "gfx906",
            "--solver",
            "ConvAsm1x1U",
            "--devices",
            "cpu",
            "--latency",
            "0",
            "--input",
            input.to_str().unwrap(),
        ],
        b"",
    );
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("1 problems predicted; 2 refused by ConvAsm1x1U"),
        "{stdout}\n{}",
        text(&o.stderr)
    );
}

/// A big text user db: `lines` distinct entries.
fn big_db(path: &Path, lines: usize) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..lines {
        writeln!(
            out,
            "2x{}x{}x56x1x1x1x1x64x16x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP32xF=ConvAsm1x1U:1,16,1,64,2,1,1,4;ConvOclDirectFwd:1,1,1,1,1,1,1,1",
            i % 4096 + 1,
            i / 4096 + 1
        )
        .unwrap();
    }
}

fn temps_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tuneinfer-tmp"))
        .collect()
}

#[cfg(unix)]
#[test]
fn ctrl_c_while_writing_finishes_the_write_with_its_time_file() {
    let dir = temp_dir("sigint-write");
    let db = dir.join("gfx906_60.HIP.3_2_0_.udb.txt");
    big_db(&db, 400_000);
    let before = std::fs::read_to_string(&db).unwrap();
    let mut child = command(&userdb_args(dir.to_str().unwrap(), "gfx906_60"))
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(FWD_1X1.as_bytes()).unwrap();
    drop(input);
    // SIGINT the moment the temporary file appears: the write is under way.
    let start = std::time::Instant::now();
    let mut sent = false;
    while start.elapsed() < std::time::Duration::from_secs(120) {
        if !temps_in(&dir).is_empty() {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            sent = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    let output = child.wait_with_output().unwrap();
    assert!(sent, "the temporary file was never seen: {}", text(&output.stdout));
    assert_eq!(output.status.code(), Some(130), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("the write was finished"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(temps_in(&dir), Vec::<String>::new());
    // The db has the new entry and every old line, and its .time is as new as it.
    let after = std::fs::read_to_string(&db).unwrap();
    assert!(after.len() > before.len());
    assert!(after.starts_with(&before[..before.len() / 2]));
    let time = dir.join("gfx906_60.HIP.3_2_0_.udb.txt.time");
    let modified = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    assert!(modified(&time) >= modified(&db), ".time older than the db");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn ctrl_c_before_writing_ends_at_once_with_nothing_written() {
    let dir = temp_dir("sigint-read");
    let mut child = command(&userdb_args(dir.to_str().unwrap(), "gfx906_60"))
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // The input stays open: userdb is still reading when the signal comes.
    input.write_all(FWD_1X1.as_bytes()).unwrap();
    input.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3000));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    drop(input);
    assert_eq!(output.status.code(), Some(130), "{:?}", output.status);
    assert!(
        text(&output.stderr).contains("nothing written"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}
