//! Every AMD GPU a user has (issue 34): a GPU named as MIOpen names it (`rocminfo`'s arch and CU
//! count) is served as MIOpen serves it a database: its own model, else MIOpen's model of the
//! arch, else a model of the arch with the GPU as an input, else the arch's model of the closest
//! compute-unit count; the note says which. The system perf db is found the same way.

#[allow(unused_imports)]
use crate::common;

use std::process::{Command, Output};

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
    cmd.args(args)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("tuneinfer runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A 1x1 problem (ConvAsm1x1U, the GTC and MLIR xdlops solvers apply on gfx90a) and a 3x3 one
/// (Winograd, GTC on gfx942; Winograd, OclDirectFwd on gfx1030).
const P1X1: &str = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F";
const P3X3: &str = "64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F";

/// `predict --solver all` on `arch` (no system perf db): stdout and stderr, the run checked.
fn predict_all_output(arch: &str, problem: &str) -> (String, String) {
    let args = [
        "predict",
        "--arch",
        arch,
        "--solver",
        "all",
        "--device",
        "cpu",
        "--system-db",
        "none",
        problem,
    ];
    let o = run(&args, &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{arch}: {err}");
    (text(&o.stdout), err)
}

/// [`predict_all_output`]: the solvers that answered (every answer a model's), the stderr.
fn predict_all(arch: &str, problem: &str) -> (Vec<String>, String) {
    let (out, err) = predict_all_output(arch, problem);
    let solvers: Vec<String> = out
        .lines()
        .map(|l| l.split('\t').nth(1).expect("a solver column").to_string())
        .collect();
    // A cell served without a network (its record, `*.neighbour.json`) answers MIOpen's default
    // when no system perf db is at hand (tests/serving/neighbour_cells.rs); every other answer is a model's.
    let weights = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights");
    for l in out.lines() {
        let solver = tuneinfer::solvers::by_name(l.split('\t').nth(1).unwrap()).unwrap();
        let no_network = tuneinfer::models::resolve(arch, solver, std::slice::from_ref(&weights))
            .is_ok_and(|r| matches!(r.located, tuneinfer::models::Located::Neighbour(..)));
        if no_network {
            assert!(l.ends_with("\tdefault"), "{arch}: {l}");
        } else {
            assert!(l.ends_with("\tmodel"), "{arch}: not a model's answer: {l}");
        }
    }
    (solvers, err)
}

#[test]
fn gpus_tuned_by_no_one_get_answers_from_their_archs_models_and_the_note_names_them() {
    // (GPU as MIOpen names it, problem, the model named in the note, solvers that must answer)
    let cases: [(&str, &str, &str, &[&str]); 7] = [
        // MI250X's GCD: 110 CUs; MI210's 104-CU models.
        (
            "gfx90a6e",
            P1X1,
            "gfx90a68's models (closest CU count: 104 for 110",
            &["ConvAsm1x1U", "ConvMlirIgemmFwdXdlops"],
        ),
        // With XNACK on, MIOpen's assembly solvers (ConvAsm1x1U, ...) do not apply (issue 47);
        // the OpenCL one is served.
        (
            "gfx90a_xnack6e",
            P1X1,
            "gfx90a68's models (closest CU count: 104 for 110",
            &["ConvOclDirectFwd1x1"],
        ),
        // MI300A: 228 CUs, MI308X: 80; MI300X's 304-CU models.
        (
            "gfx942e4",
            P3X3,
            "gfx942130's models (closest CU count: 304 for 228",
            &["ConvBinWinogradRxSf3x2"],
        ),
        // With XNACK on, MIOpen's Winograd and GTC solvers do not apply (issue 47); CK does.
        (
            "gfx942_xnacke4",
            P3X3,
            "gfx942130's models (closest CU count: 304 for 228",
            &["ConvHipImplicitGemmGroupFwdXdlops"],
        ),
        (
            "gfx94250",
            P3X3,
            "gfx942130's models (closest CU count: 304 for 80",
            &["ConvBinWinogradRxSf3x2"],
        ),
        // RX 6800 XT (72 CUs) and a 40-CU RDNA2 part: gfx1030's models with the GPU as an input
        // read the GPU's own CU count.
        (
            "gfx103048",
            P3X3,
            "(the GPU an input: trained for 36 CUs, reads this GPU's)",
            &["ConvBinWinogradRxSf3x2", "ConvOclDirectFwd"],
        ),
        (
            "gfx1030_40",
            P3X3,
            "(the GPU an input: trained for 36 CUs, reads this GPU's)",
            &["ConvBinWinogradRxSf3x2"],
        ),
    ];
    for (arch, problem, named, must) in cases {
        let (solvers, err) = predict_all(arch, problem);
        for s in must {
            assert!(
                solvers.iter().any(|x| x == s),
                "{arch}: no {s} answer in {solvers:?}; {err}"
            );
        }
        let notes: Vec<&str> = err.lines().filter(|l| l.contains("has no model of its own")).collect();
        assert_eq!(notes.len(), 1, "{arch}: one note per run: {err}");
        assert!(notes[0].contains(named), "{arch}: {err}");
    }
}

#[test]
fn a_gpu_with_its_own_models_gets_no_note_and_the_plain_arch_is_its_usual_gpu() {
    let (_, err) = predict_all("gfx90a68", P1X1);
    assert!(!err.contains("has no model of its own"), "{err}");
    // MI300X by arch alone and by its database name: the same, current models (the 2024 ones
    // trained on the older sqlite rows are retired).
    let answers = |arch: &str| {
        let (out, err) = predict_all_output(arch, P3X3);
        assert!(!err.contains("has no model of its own"), "{err}");
        out
    };
    assert_eq!(answers("gfx942"), answers("gfx942130"));
    // An arch with --cu is the GPU of that name.
    let o = run(&["info", "--arch", "gfx90a", "--cu", "110"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("gfx90a6e: arch gfx90a, 110 compute units"), "{out}");
    assert!(
        out.contains("gfx90a68_ConvAsm1x1U (closest CU count: 104 for 110"),
        "{out}"
    );
    // A count in the name and another in --cu is refused.
    let o = run(&["predict", "--arch", "gfx90a68", "--cu", "110", P1X1], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("names 104 compute units but --cu says 110"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn info_arch_lists_every_solver_and_an_arch_without_models_is_one_line() {
    let o = run(&["info", "--arch", "gfx1030_40"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // One line per solver, served or not, then the count.
    for s in [
        "ConvAsm1x1U",
        "ConvOclBwdWrW2<1>",
        "ConvHipImplicitGemmV4R1Fwd",
        "ConvBinWinogradRxSf3x2",
    ] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(s)), "{s}: {out}");
    }
    assert!(
        out.contains("gfx1030_ConvHipImplicitGemmV4R1Fwd (closest CU count: 36 for 40"),
        "{out}"
    );
    assert!(
        out.contains("gfx1030_ConvBinWinogradRxSf3x2 (the GPU an input"),
        "{out}"
    );
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.ends_with("solver(s) served on gfx1030_40")),
        "{out}"
    );
    // gfx1100 (RDNA3): no model of any kind: one line, saying which arches are served.
    for args in [
        &["info", "--arch", "gfx1100"][..],
        &["predict", "--arch", "gfx1100_48", P3X3][..],
    ] {
        let o = run(args, &[]);
        assert_eq!(o.status.code(), Some(6), "{args:?}");
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("tuneinfer serves these arches, at any compute-unit count: gfx1030"),
            "{err}"
        );
    }
}

/// A directory holding only MI210's text perf db (its first `lines` lines) and one of its keys
/// with a tuned ConvAsm1x1U entry and that entry.
fn mi210_system_db(tag: &str, lines: usize) -> (std::path::PathBuf, String, String) {
    let dir = std::env::temp_dir().join(format!("tuneinfer-serve-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (path, _) = common::perf_database("gfx90a68.db.txt.bz2");
    let bytes = bunzip2(&path);
    let head: Vec<&str> = std::str::from_utf8(&bytes).unwrap().lines().take(lines).collect();
    std::fs::write(dir.join("gfx90a68.db.txt"), head.join("\n") + "\n").unwrap();
    let (key, tuned) = head
        .iter()
        .find_map(|l| {
            let (key, rest) = l.split_once('=')?;
            let entry = rest.split(';').find_map(|e| e.strip_prefix("ConvAsm1x1U:"))?;
            Some((key.to_string(), entry.to_string()))
        })
        .expect("a ConvAsm1x1U row near the top");
    (dir, key, tuned)
}

fn bunzip2(path: &std::path::Path) -> Vec<u8> {
    use std::io::Read;
    let file = std::fs::File::open(path).expect("the shared perf db");
    let mut out = Vec::new();
    bzip2::read::MultiBzDecoder::new(file)
        .read_to_end(&mut out)
        .expect("bzip2 data");
    out
}

#[test]
fn the_system_perf_db_of_the_closest_cu_count_serves_a_gpu_and_never_another_arch() {
    let (dir, key, tuned) = mi210_system_db("sysdb", 400);
    let dir_s = dir.to_str().unwrap();
    // MI250X finds MI210's database (the only one there): the tuned value itself is the answer.
    let o = run(
        &[
            "predict",
            "--arch",
            "gfx90a6e",
            "--solver",
            "ConvAsm1x1U",
            "--device",
            "cpu",
            &key,
        ],
        &[("MIOPEN_SYSTEM_DB_PATH", dir_s)],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(text(&o.stdout).trim(), tuned, "{err}");
    assert!(
        err.contains(&format!("{}", dir.join("gfx90a68.db.txt").display())),
        "{err}"
    );
    // userdb names the file and writes nothing it tunes.
    let out = dir.join("udb");
    let log = dir.join("net.txt");
    std::fs::write(&log, format!("{key}\n")).unwrap();
    let o = run(
        &[
            "userdb",
            "--arch",
            "gfx90a6e",
            "--solver",
            "ConvAsm1x1U",
            "--device",
            "cpu",
            "--input",
            log.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--dry-run",
            "--miopen-version",
            "HIP.3_5_1_",
        ],
        &[("MIOPEN_SYSTEM_DB_PATH", dir_s)],
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}{stdout}", text(&o.stderr));
    assert!(
        stdout.contains("gfx90a68.db.txt") && stdout.contains("closest compute-unit count"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("ConvAsm1x1U "))
        .expect("the solver's row");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        (cols[1], cols[2], cols[5]),
        ("0", "0", "1"),
        "not predicted, nothing written, tuned in the system db: {row}"
    );
    assert!(
        row.contains("gfx90a68_ConvAsm1x1U (closest CU count: 104 for 110"),
        "{row}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
