//! `tuneinfer bench`: predictions per second on the CPU and the GPU, side by side, on the same
//! problems (and whether the answers agree).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::gpu::{DeviceChoice, Engine, Precision};
use crate::predict::{DecodeMode, Prediction};
use crate::problem::ConvProblem;
use crate::seq2seq::default_model_dirs;
use crate::workload::asm1x1u_problems;

const HELP: &str = "\
Usage: tuneinfer bench [OPTIONS]

Times the same batch of problems on each device and prints predictions per second side by
side, then how many GPU answers equal the CPU's. Problems: --input FILE (one perf-db key or
MIOpenDriver line per line), else N random applicable ConvAsm1x1U problems (seed 1).
The first (untimed) run of each device compiles its pipelines and warms caches.

Options:
  --problems N       number of random problems (default: 1000)
  --input FILE       problems to read instead
  --devices LIST     comma-separated, from cpu and gpu (default: cpu,gpu)
  --beam K           time a beam search of width K (default: MIOpen's greedy walk)
  --precision P      the GPU's weights: f32 (default) or f16
  --arch, --solver, --models   as for predict";

pub(super) fn bench(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        println!("{HELP}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: &[
                "problems",
                "input",
                "devices",
                "beam",
                "arch",
                "solver",
                "models",
                "precision",
            ],
            flags: &[],
            options_after_positionals: false,
        },
    )?;
    let arch = args.value("arch").unwrap_or("gfx908");
    let solver = args.value("solver").unwrap_or("ConvAsm1x1U");
    let dirs: Vec<PathBuf> = default_model_dirs(args.value("models").map(Path::new));
    let mode = match args.value("beam") {
        None => DecodeMode::Miopen,
        Some(_) => {
            let width = args.positive("beam", 1)?;
            DecodeMode::Beam { width, top: width }
        }
    };
    let problems: Vec<ConvProblem> = match args.value("input") {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(ConvProblem::parse)
                .collect::<Result<_>>()?
        }
        None => asm1x1u_problems(args.positive("problems", 1000)?, 1),
    };
    let precision = Precision::parse(args.value("precision").unwrap_or("f32"))?;
    let mut devices = Vec::new();
    for d in args.value("devices").unwrap_or("cpu,gpu").split(',') {
        devices.push(match d.trim() {
            "cpu" => DeviceChoice::Cpu,
            "gpu" => DeviceChoice::Gpu,
            other => return Err(Error::Usage(format!("--devices: expected cpu or gpu, got '{other}'"))),
        });
    }
    let mode_text = match mode {
        DecodeMode::Miopen => "MIOpen's greedy walk".to_string(),
        DecodeMode::Beam { width, .. } => format!("beam width {width}"),
    };
    println!("{} problems, {mode_text}", problems.len());
    println!("{:6} {:>10} {:>14}  device", "", "seconds", "predictions/s");
    let mut reference: Option<Vec<Result<Vec<Prediction>>>> = None;
    for device in devices {
        let p = if device == DeviceChoice::Gpu {
            precision
        } else {
            Precision::F32
        };
        let engine = match Engine::load(arch, solver, &dirs, device, p) {
            Ok(e) => e,
            Err(e) => {
                println!("{:6} {:>10} {:>14}  {e}", device_label(device), "-", "-");
                continue;
            }
        };
        let warm = problems.len().min(64);
        let _ = engine.predict_batch(&problems[..warm], mode);
        let start = Instant::now();
        let results = engine.predict_batch(&problems, mode);
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{:6} {:>10.3} {:>14.0}  {}",
            device_label(device),
            secs,
            problems.len() as f64 / secs.max(1e-9),
            engine.device_name()
        );
        #[cfg(feature = "gpu")]
        if let Engine::Gpu { gpu, .. } = &engine {
            let per_problem = match mode {
                DecodeMode::Miopen => gpu.greedy_bytes_per_problem(),
                DecodeMode::Beam { width, .. } => gpu.beam_bytes_per_problem(width),
            };
            println!(
                "       device memory: {} bytes per problem, {} KiB of weights ({:?}), {} problems per chunk",
                per_problem,
                gpu.weight_bytes() >> 10,
                p,
                gpu.chunk_size(mode)
            );
        }
        match &reference {
            None => reference = Some(results),
            Some(r) => {
                let same = r.iter().zip(&results).filter(|(a, b)| same_answer(a, b)).count();
                println!("answers equal to the first device's: {same} of {}", problems.len());
            }
        }
    }
    Ok(0)
}

fn device_label(d: DeviceChoice) -> &'static str {
    match d {
        DeviceChoice::Cpu => "cpu",
        DeviceChoice::Gpu => "gpu",
        DeviceChoice::Auto => "auto",
    }
}

fn same_answer(a: &Result<Vec<Prediction>>, b: &Result<Vec<Prediction>>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.config == y.config),
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    }
}
