//! Issue 47: what `tuneinfer userdb` writes is what the user's MIOpen reads.
//!
//! 1. CK kernel ids per MIOpen version, checked by transcriptions of MIOpen's own parsers, with
//!    the instance lists of the composable_kernel each version pins (`../shared/miopen/ck/`, the
//!    lists of MIOpen 2d1fd997a's CK, not tuneinfer's built-in copy):
//!    - MIOpen 3.3 (`ROCm/MIOpen` 2d1fd997a, `src/include/miopen/solver/implicitgemm_ck_util.hpp`):
//!      `FindConvPtrByID` (:100-106) compares the whole value with each instance's type string
//!      for the forward and backward-data solvers (`IsCKArgsSupported`, :150-151); the
//!      backward-weights value is cut at its last `+` into type string and split-k (:138-147).
//!    - MIOpen 3.5.1 (`conv_hip_implicit_gemm_grouped_bwd_xdlops.cpp:226`): the backward-data
//!      value is `type string + "+" + split_k` too.
//! 2. On an xnack-on GPU no entry of a solver MIOpen refuses there (`if(target.Xnack() &&
//!    *target.Xnack()) return false;`: `conv_asm_1x1u.cpp:549`, `conv_asm_3x3u.cpp:196`,
//!    `conv_asm_dir_BwdWrW1x1.cpp:500`, `conv_asm_dir_BwdWrW3x3.cpp:414`, `conv_winoRxS.cpp:675`,
//!    `conv_asm_implicit_gemm_gtc_{fwd,bwd,wrw}_nhwc.cpp:916/973/922`, 2d1fd997a).

#[allow(unused_imports)]
use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

/// A ResNet-50-style NHWC FP16 training step's convolutions (forward, backward data, backward
/// weights), and a few NCHW FP32 ones, as MIOpen logs them.
const LOG: &str = "\
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 2 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 1 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 4 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 1 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 2 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 4 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 2 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 128 -c 512 -H 14 -W 14 -k 512 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 2 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 64 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 64 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 2 -t 1
MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 64 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 4 -t 1
";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-udbv-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `userdb` on [`LOG`] for `arch` and MIOpen `version`; returns the written file's
/// entries (solver -> (key, value)) and stdout.
fn userdb(name: &str, arch: &str, version: &str, extra: &[&str]) -> (BTreeMap<String, Vec<(String, String)>>, String) {
    let dir = temp_dir(name);
    let log = dir.join("net.log");
    std::fs::write(&log, LOG).unwrap();
    let out = dir.join("udb");
    let mut args = vec![
        "userdb",
        "--arch",
        arch,
        "--device",
        "cpu",
        "--system-db",
        "none",
        "--miopen-version",
        version,
        "--input",
        log.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(&args)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_USER_DB_PATH")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env_remove("ROCM_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut entries: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for f in std::fs::read_dir(&out).unwrap().flatten() {
        let path = f.path();
        if !path.to_string_lossy().ends_with(".udb.txt") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let (key, values) = line.split_once('=').unwrap();
            for e in values.split(';') {
                let (solver, value) = e.split_once(':').unwrap();
                entries
                    .entry(solver.to_string())
                    .or_default()
                    .push((key.to_string(), value.to_string()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    (entries, stdout)
}

/// The type strings of composable_kernel's list `file` (`../shared/miopen/ck/`).
fn ck_list(file: &str) -> BTreeSet<String> {
    let path: PathBuf = common::miopen_dir().join("ck").join(file);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(1).unwrap().to_string())
        .collect()
}

fn is_split_k(text: &str) -> bool {
    text.parse::<u32>().is_ok_and(|s| s >= 1)
}

#[test]
fn a_user_db_for_miopen_3_3_holds_only_kernel_ids_its_ck_and_parser_accept() {
    let (entries, stdout) = userdb("v33", "gfx942130", "HIP.3_3_0_2d1fd997a", &[]);
    let mut checked = 0;
    for (solver, values) in &entries {
        for (key, v) in values {
            // The list of the key's data type (the 24-field key's second to last field).
            let ty = if key.contains("xFP16x") { "f16" } else { "f32" };
            let list = |dir: &str| ck_list(&format!("{dir}_{ty}.tsv"));
            let (fwd, bwd, wrw) = (list("fwd"), list("bwd"), list("wrw"));
            match solver.as_str() {
                // FindConvPtrByID: the whole value is a type string of the list.
                "ConvHipImplicitGemmGroupFwdXdlops" => assert!(fwd.contains(v), "{solver}:{v}"),
                "ConvHipImplicitGemmGroupBwdXdlops" => assert!(bwd.contains(v), "{solver}:{v}"),
                // The last '+' splits type string and split-k.
                "ConvHipImplicitGemmGroupWrwXdlops" => {
                    let (head, tail) = v.rsplit_once('+').unwrap();
                    assert!(wrw.contains(head) && is_split_k(tail), "{solver}:{v}");
                }
                s if s.starts_with("ConvHipImplicitGemm3DGroup") => panic!("no 3-D list of MIOpen 3.3: {s}:{v}"),
                _ => continue,
            }
            checked += 1;
        }
    }
    assert!(
        entries.contains_key("ConvHipImplicitGemmGroupBwdXdlops") && checked >= 3,
        "{entries:?}\n{stdout}"
    );
}

#[test]
fn a_user_db_for_miopen_3_5_writes_backward_data_with_its_split_k() {
    let (entries, stdout) = userdb("v35", "gfx942130", "HIP.3_5_1_8c96f1c5d", &[]);
    let bwd = entries
        .get("ConvHipImplicitGemmGroupBwdXdlops")
        .unwrap_or_else(|| panic!("{stdout}"));
    for (_, v) in bwd {
        let (head, tail) = v.rsplit_once('+').unwrap_or_else(|| panic!("{v}: no +split_k"));
        assert!(head.ends_with('>') && is_split_k(tail), "{v}");
    }
    for (_, v) in entries.get("ConvHipImplicitGemmGroupFwdXdlops").into_iter().flatten() {
        assert!(v.ends_with('>'), "{v}");
    }
}

#[test]
fn on_an_xnack_gpu_no_entry_of_a_solver_miopen_refuses_there() {
    const REFUSED: [&str; 9] = [
        "ConvAsm1x1U",
        "ConvAsm3x3U",
        "ConvAsmBwdWrW1x1",
        "ConvAsmBwdWrW3x3",
        "ConvBinWinogradRxSf2x3",
        "ConvBinWinogradRxSf3x2",
        "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
        "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
    ];
    for (on, off) in [("gfx942_xnacke4", "gfx942e4"), ("gfx90a_xnack6e", "gfx90a6e")] {
        let (with, _) = userdb(on, on, "HIP.3_5_1_8c96f1c5d", &[]);
        let (without, _) = userdb(off, off, "HIP.3_5_1_8c96f1c5d", &[]);
        let refused_off: Vec<&String> = without.keys().filter(|s| REFUSED.contains(&s.as_str())).collect();
        // The same GPU with xnack off has entries of some of them, so the log reaches them.
        assert!(!refused_off.is_empty(), "{off}: {without:?}");
        for s in with.keys() {
            assert!(
                !REFUSED.contains(&s.as_str()),
                "{on}: an entry of {s}, which MIOpen refuses with xnack on"
            );
        }
        // The solvers MIOpen runs there are still served.
        assert!(!with.is_empty(), "{on}: nothing written");
    }
}

#[test]
fn predict_says_why_an_asm_solver_does_not_apply_with_xnack_on() {
    let o = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args([
            "predict",
            "--arch",
            "gfx90a_xnack6e",
            "--solver",
            "ConvAsm1x1U",
            "--device",
            "cpu",
            "--system-db",
            "none",
            "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
        ])
        .env_remove("TUNEINFER_MODELS")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(err.contains("XNACK") && err.contains("conv_asm_1x1u.cpp:549"), "{err}");
}

#[test]
fn batch_and_predict_answer_for_the_miopen_version_given() {
    let problems =
        "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NHWC-FP16-B\n128-28-28-3x3-128-28-28-32-1x1-1x1-1x1-0-NHWC-FP16-F\n";
    let dir = temp_dir("batch");
    let input = dir.join("p.txt");
    std::fs::write(&input, problems).unwrap();
    let run = |version: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
            .args([
                "batch",
                "--arch",
                "gfx942130",
                "--solver",
                "all",
                "--device",
                "cpu",
                "--system-db",
                "none",
            ])
            .args(["--miopen-version", version, "--input", input.to_str().unwrap()])
            .env_remove("TUNEINFER_MODELS")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (old, old_err) = run("3.3.0");
    let (new, new_err) = run("HIP.3_5_1_8c96f1c5d");
    assert!(
        old_err.contains("MIOpen 3.3.0") && new_err.contains("MIOpen 3.5.1"),
        "{old_err}\n{new_err}"
    );
    let bwd = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains("\tConvHipImplicitGemmGroupBwdXdlops\t"))
            .map(|l| l.split('\t').nth(3).unwrap_or("").to_string())
            .collect()
    };
    // MIOpen 3.5.1 reads `TYPE+split_k`; MIOpen 3.3 the bare type string of its list.
    assert!(bwd(&new).iter().all(|v| v
        .rsplit_once('+')
        .is_some_and(|(h, t)| h.ends_with('>') && is_split_k(t))));
    let list = ck_list("bwd_f16.tsv");
    assert!(bwd(&old).iter().all(|v| list.contains(v)), "{old}");
    assert!(!bwd(&new).is_empty(), "{new}");
    let _ = std::fs::remove_dir_all(&dir);
}
