//! Transposed convolutions (`-m trans`) are predicted for the convolution MIOpen runs for them.
//!
//! Goldens hand-derived from MIOpen's source: the driver builds a transposed problem's weights
//! as `[c, k/g, y, x]` and its output as `stride*(in-1) + 1 + dilation*(filter-1) - 2*pad +
//! output_pad` pixels of `k` channels (`driver/conv_driver.hpp`, `GetWeightTensorLengths...`;
//! `src/convolution.cpp`, `GetForwardOutputTensorWithLayout`); its log line prints x's sizes as
//! `-c -H -W` in every direction (`src/driver_arguments.cpp`); and the API runs a transposed
//! forward as backward data, a transposed backward data as forward, both with x and y swapped,
//! and a transposed backward weights as backward weights with x and dy swapped
//! (`src/convolution_api.cpp`, `MakeFwdCtxAndProblem`, `MakeBwdCtxAndProblem`,
//! `MakeWrWCtxAndProblem`). The perf-db key of that problem (`ProblemDescription::Serialize`)
//! names "in" the tensor passed first: x of the transposed forward and backward weights, dy of
//! the transposed backward data.

use std::process::{Command, Output};

use tuneinfer::problem::{parse_line, ConvProblem, InputLine};

fn problems(line: &str) -> Vec<ConvProblem> {
    match parse_line(line) {
        Ok(InputLine::Problems(p)) => p,
        other => panic!("{line}: {other:?}"),
    }
}

fn one(line: &str) -> ConvProblem {
    let mut p = problems(line);
    assert_eq!(p.len(), 1, "{line}");
    p.remove(0)
}

fn error_of(line: &str) -> String {
    match parse_line(line) {
        Err(e) => e.to_string(),
        other => panic!("{line}: expected an error, got {other:?}"),
    }
}

/// (line, MIOpen's dash key as tuneinfer writes it, MIOpen's 24-field key, the ordinary
/// MIOpenDriver line of the same problem).
const GOLDENS: [(&str, &str, &str, &str); 5] = [
    (
        // U-Net's up-convolution, forward: x 512x28x28, y 256 channels of 2*27+1+1 = 56; runs
        // as backward data with dy = x (512x28x28) and dx = y (256x56x56).
        "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 4 -c 512 -H 28 -W 28 -k 256 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 1 -t 1",
        "512-28-28-2x2-256-56-56-4-0x0-2x2-1x1-0-NCHW-FP32-B",
        "2x512x28x28x1x2x2x1x256x4x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xB",
        "conv -n 4 -c 256 -H 56 -W 56 -k 512 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -F 2",
    ),
    (
        // Its backward data (logged with dx = the transposed x, 512x28x28): runs as a forward
        // convolution of the transposed dy (256x56x56) into 512x28x28.
        "MIOpen(HIP): Command [LogCmdFindConvolution] ./bin/MIOpenDriver conv -n 4 -c 512 -H 28 -W 28 -k 256 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 2 -t 1",
        "256-56-56-2x2-512-28-28-4-0x0-2x2-1x1-0-NCHW-FP32-F",
        "2x256x56x56x1x2x2x1x512x4x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xF",
        "conv -n 4 -c 256 -H 56 -W 56 -k 512 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -F 1",
    ),
    (
        // Its backward weights: x (512x28x28) in the key's "in" place, dy (256x56x56) out.
        "conv -n 4 -c 512 -H 28 -W 28 -k 256 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 4",
        "512-28-28-2x2-256-56-56-4-0x0-2x2-1x1-0-NCHW-FP32-W",
        "2x512x28x28x1x2x2x1x256x4x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xW",
        "conv -n 4 -c 256 -H 56 -W 56 -k 512 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -F 4",
    ),
    (
        // Padding, output padding (-Y 1 on the height only), NHWC FP16: y is
        // 2*14+1+2-2+1 = 30 by 2*19+1+2-2+0 = 39.
        "convfp16 -n 2 -c 64 -H 15 -W 20 -k 32 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -Y 1 -X 0 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
        "64-15-20-3x3-32-30-39-2-1x1-2x2-1x1-0-NHWC-FP16-B",
        "2x64x15x20x1x3x3x1x32x2x1x1x0x2x2x0x1x1x0x0x1xNHWCxFP16xB",
        "convfp16 -n 2 -c 32 -H 30 -W 39 -k 64 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
    ),
    (
        // Dilation 2, stride 1, pad 2 and bias: y is 1*9+1+2*2-4 = 10 square, 16 channels.
        "conv -n 1 -c 8 -H 10 -W 10 -k 16 -y 3 -x 3 -p 2 -q 2 -u 1 -v 1 -l 2 -j 2 -b 1 -m trans -F 1",
        "8-10-10-3x3-16-10-10-1-2x2-1x1-2x2-1-NCHW-FP32-B",
        "2x8x10x10x1x3x3x1x16x1x2x2x0x1x1x0x2x2x0x1x1xNCHWxFP32xB",
        "conv -n 1 -c 16 -H 10 -W 10 -k 8 -y 3 -x 3 -p 2 -q 2 -u 1 -v 1 -l 2 -j 2 -b 1 -F 2",
    ),
];

#[test]
fn transposed_convolutions_are_the_problems_miopen_runs_for_them() {
    for (line, dash, x24, ordinary) in GOLDENS {
        let p = one(line);
        assert_eq!(p.to_perfdb_key(), dash, "{line}");
        assert_eq!(p.to_db_key(), x24, "{line}");
        assert_eq!(p, one(ordinary), "{line}");
    }
    // -F 0 (MIOpenDriver's every direction) in the order F, B, W of the transposed problem:
    // backward data, forward and backward weights of the one MIOpen runs.
    let all = problems("conv -n 4 -c 512 -H 28 -W 28 -k 256 -y 2 -x 2 -p 0 -q 0 -u 2 -v 2 -m trans -F 0");
    let keys: Vec<String> = all.iter().map(|p| p.to_perfdb_key()).collect();
    assert_eq!(keys, [GOLDENS[0].1, GOLDENS[1].1, GOLDENS[2].1]);
    // Long flags as MIOpenDriver takes them.
    assert_eq!(
        one("conv -n 2 -c 64 -H 15 -W 20 -k 32 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 --mode trans --trans_output_pad_h 1 --trans_output_pad_w=1 -F 1"),
        one("conv -n 2 -c 32 -H 30 -W 40 -k 64 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2"),
    );
}

#[test]
fn transposed_convolutions_miopen_refuses_or_cannot_be_read_back_are_refused() {
    // MIOpen: output padding must be below the stride.
    let e = error_of("conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3 -u 2 -v 2 -Y 2 -m trans -F 1");
    assert!(e.contains("-Y") && e.contains("smaller than its stride"), "{e}");
    // Output padding means nothing to an ordinary convolution.
    let e = error_of("conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3 -u 2 -v 2 -X 1 -F 1");
    assert!(e.contains("-m trans"), "{e}");
    // A grouped transposed convolution: MIOpen's log prints -k per group, the driver reads all.
    let e = error_of("conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3 -g 2 -m trans -F 1");
    assert!(e.contains("-g 2") && e.contains("-k"), "{e}");
    // Padding that leaves no output (MIOpen clamps the size to 1).
    let e = error_of("conv -n 1 -c 8 -H 1 -W 1 -k 8 -y 1 -x 1 -p 1 -q 1 -m trans -F 1");
    assert!(e.contains("-m trans"), "{e}");
    // Any other mode is still refused, by name.
    let e = error_of("conv -n 1 -c 8 -H 8 -W 8 -k 8 -m banana -F 1");
    assert!(e.contains("'banana'"), "{e}");
}

fn run(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(args)
        .env_remove("TUNEINFER_MODELS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let _ = child.stdin.take().expect("stdin").write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait")
}

#[test]
fn batch_predicts_a_transposed_log_line_as_its_ordinary_problem() {
    // A 1x1 transposed forward of a 64-channel x into 128 channels: ConvAsm1x1U's backward
    // data of 128 -> 64 channels, which tuneinfer's gfx906 model predicts.
    let trans = "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 8 -c 64 -H 14 -W 14 -k 128 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m trans -g 1 -F 1 -t 1\n";
    let ordinary = "conv -n 8 -c 128 -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 2\n";
    let args = [
        "batch",
        "--arch",
        "gfx906",
        "--solver",
        "ConvAsm1x1U",
        "--device",
        "cpu",
    ];
    let a = run(&args, trans);
    let b = run(&args, ordinary);
    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(b.status.code(), Some(0), "{}", String::from_utf8_lossy(&b.stderr));
    // The same rows but for the first column (the input line as given).
    let rows = |o: &Output| -> Vec<String> {
        text(o)
            .lines()
            .skip(1)
            .map(|l| l.split_once('\t').map_or("", |(_, rest)| rest).to_string())
            .collect()
    };
    assert_eq!(rows(&a).len(), 1, "{}", text(&a));
    assert!(rows(&a)[0].starts_with("ConvAsm1x1U\t1\t"), "{}", text(&a));
    assert_eq!(rows(&a), rows(&b));
}
