//! `tuneinfer bench`: predictions per second on the CPU and the GPU, side by side, on the same
//! problems (and whether the answers agree).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{wants_help, Args, Spec};
use crate::engine::{DeviceChoice, Engine, Precision};
use crate::error::{Error, Result};
use crate::predict::{DecodeMode, Prediction};
use crate::problem::ConvProblem;

/// Most generated problems `--problems` may ask for (each costs memory on the host and device).
const MAX_PROBLEMS: usize = 10_000_000;

const HELP: &str = "\
Usage: tuneinfer bench [OPTIONS]

Loads the model on each device, then times the same batch of problems there twice: the first
run pays the one-time costs (pipelines compiled, buffers allocated, constant data built), the
repeat shows the steady state; predictions per second are the repeat's, over the problems predicted (those the solver refused, as not applicable, are counted apart). Then how many answers equal the first
device's. Problems: --input FILE (one perf-db key or MIOpenDriver line per line), else N random
applicable ConvAsm1x1U problems (seed 1). A device named in --devices that cannot load the model
fails the command (after the table; with the default list a missing GPU is only a row), and a
device whose every prediction failed (problems its solver does not apply to) exits 1.

With --profile, the GPU runs the batch once more with every dispatch timed by GPU timestamp
queries and prints GPU time per kernel (by shader, then by pipeline key), host phase times,
and the wall time of the smallest round trips (empty submit + wait, one dispatch, a 4-byte
read-back; median of 50). Adapters without timestamp queries say so and print the rest.

Options:
  --problems N       number of random problems (default: 1000)
  --input FILE       problems to read instead (- = standard input)
  --devices LIST     comma-separated, from cpu and gpu (default: cpu,gpu)
  --beam K           time a beam search of width K (default: MIOpen's greedy walk, for any
                     model; predict's default for tuneinfer's own models is a beam of 6)
  --decode D         miopen (default: MIOpen's greedy walk) or auto (each model's default:
                     a beam of 6 for tuneinfer's own models)
  --threads N        CPU worker threads (default: all cores)
  --latency N        time N single predictions, one at a time, for p50/p99 latency
                     (default: 100; 0: none)
  --precision P      the GPU's weights: f32 (default) or f16 (needs gpu in --devices)
  --profile          per-kernel GPU times, host phases and round-trip floors (GPU only)
  --arch, --solver, --models   as for predict";

pub(super) fn bench(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}");
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
                "threads",
                "decode",
                "latency",
            ],
            flags: &["profile"],
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!(
            "bench takes no positional argument ('{}'); use --input FILE for problems",
            crate::error::quote_short(extra)
        )));
    }
    let arch = args.value("arch").unwrap_or_else(|| {
        super::words::announce_default("arch", super::DEFAULT_ARCH, "--arch names the GPU");
        super::DEFAULT_ARCH
    });
    let solver = args.value("solver").unwrap_or_else(|| {
        super::words::announce_default("solver", crate::request::DEFAULT_SOLVER, "--solver NAME picks another");
        crate::request::DEFAULT_SOLVER
    });
    let dirs: Vec<PathBuf> = crate::models::model_dirs(args.value("models").map(Path::new))?;
    // None: the loaded model's default decoding (`--decode auto`).
    let forced_mode = match (args.value("beam"), args.value("decode")) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "--decode and --beam exclude each other: choose one".into(),
            ))
        }
        (None, None | Some("miopen")) => Some(DecodeMode::Miopen),
        (None, Some("auto")) => None,
        (None, Some(other)) => {
            return Err(Error::Usage(format!(
                "--decode: unknown mode '{other}' (auto or miopen; or use --beam K)"
            )))
        }
        (Some(_), None) => {
            let width = args.positive("beam", 1, crate::predict::MAX_BEAM_WIDTH)?;
            Some(DecodeMode::Beam { width, top: width })
        }
    };
    let threads = crate::request::THREADS.parse(args.value("threads"))?.map(|n| n as usize);
    let latency_count = match args.value("latency") {
        Some("0") => 0,
        _ => args.positive("latency", 100, 100_000)?,
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
    // As `predict --device cpu --precision f16`: timing f32 while f16 was asked for would be a
    // wrong measurement, not a preference.
    if precision == Precision::F16 && !devices.contains(&DeviceChoice::Gpu) {
        return Err(Error::Usage(
            "--precision f16 is for the GPU's weights, and --devices has no gpu (the CPU computes in f32)".into(),
        ));
    }
    let problems: Vec<ConvProblem> = match args.value("input") {
        Some(file) => {
            let mut reader = super::predict::LineReader::open(file)?;
            let mut problems = Vec::new();
            while let Some(text) = reader.next_line()? {
                match crate::problem::parse_line(&text) {
                    Ok(crate::problem::InputLine::Problems(p)) => problems.extend(p),
                    Ok(_) => {}
                    Err(e) => {
                        return Err(Error::AtLine {
                            file: file.to_string(),
                            line: reader.line_no,
                            error: Box::new(e),
                        })
                    }
                }
            }
            if problems.is_empty() {
                return Err(Error::Usage(format!("--input {file}: no problems in it")));
            }
            problems
        }
        None => {
            let count = args.positive("problems", 1000, MAX_PROBLEMS)?;
            let tunable = crate::solvers::tunable(crate::solvers::by_name(solver)?).map_err(|_| {
                Error::Usage(format!("bench draws random problems only for solvers tuneinfer trains models for; give {solver}'s problems with --input FILE"))
            })?;
            crate::workload::problems(tunable, arch, count, 1)?
        }
    };
    let mode_text = match forced_mode {
        Some(DecodeMode::Miopen) => "MIOpen's greedy walk".to_string(),
        Some(DecodeMode::Beam { width, .. }) => format!("beam width {width}"),
        None => "each model's default decoding (--decode auto)".to_string(),
    };
    let want_profile = args.flag("profile");
    say!("{} problems, {mode_text}", problems.len());
    say!(
        "{:6} {:>8} {:>9} {:>9} {:>14}  device",
        "",
        "load s",
        "first s",
        "repeat s",
        "predictions/s"
    );
    let mut reference: Option<Vec<Result<Vec<Prediction>>>> = None;
    // A device asked for by --devices that does not load fails the command (after the table);
    // with the default list a missing GPU is only a row. Every prediction failing exits 1.
    let explicit_devices = args.value("devices").is_some();
    let (mut load_failure, mut loaded, mut all_failed) = (None, 0, false);
    for device in devices {
        let p = if device == DeviceChoice::Gpu {
            precision
        } else {
            Precision::F32
        };
        let start = Instant::now();
        let engine = match Engine::load(arch, solver, &dirs, device, p) {
            Ok(e) => e,
            Err(e) => {
                let label = device_label(device);
                say!("{label:6} {:>8} {:>9} {:>9} {:>14}  {e}", "-", "-", "-", "-");
                if load_failure.is_none() && (explicit_devices || device == DeviceChoice::Cpu) {
                    load_failure = Some(e);
                }
                continue;
            }
        };
        let engine = match threads {
            Some(n) => engine.with_threads(n),
            None => engine,
        };
        let mode = forced_mode.unwrap_or_else(|| engine.default_mode());
        loaded += 1;
        let load_secs = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let first = engine.predict_batch(&problems, mode);
        let first_secs = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let results = engine.predict_batch(&problems, mode);
        let secs = start.elapsed().as_secs_f64();
        // Problems the solver refused (it does not apply) are counted apart, not as predictions.
        let refused = results
            .iter()
            .filter(|r| matches!(r, Err(Error::NotApplicable { .. } | Error::InvalidProblem { .. })))
            .count();
        let failed = results.iter().filter(|r| r.is_err()).count() - refused;
        let predicted = problems.len() - refused - failed;
        say!(
            "{:6} {:>8.3} {:>9.3} {:>9.3} {:>14.0}  {}",
            device_label(device),
            load_secs,
            first_secs,
            secs,
            predicted as f64 / secs.max(1e-9),
            engine.device_name()
        );
        if refused + failed > 0 {
            say!(
                "       {predicted} problems predicted; {refused} refused by {solver} (it does not apply to them), {failed} failed: \
                 not counted in the rate"
            );
        }
        if let Some(Err(e)) = results.first().filter(|_| results.iter().all(Result::is_err)) {
            say!("       every prediction failed; the first: {e}");
            all_failed = true;
        }
        // Latency: single predictions, one at a time, on the first problems.
        let mut times: Vec<f64> = problems
            .iter()
            .take(latency_count)
            .map(|p| {
                let t = Instant::now();
                let _ = engine.predict_one(p, mode);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        if !times.is_empty() {
            times.sort_by(f64::total_cmp);
            let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
            say!(
                "       single predictions: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {}",
                at(0.5),
                at(0.99),
                at(1.0),
                times.len()
            );
        }
        let unstable = first.iter().zip(&results).filter(|(a, b)| !same_answer(a, b)).count();
        if unstable > 0 {
            say!(
                "       repeat answers differ from the first run's: {unstable} of {}",
                problems.len()
            );
        }
        #[cfg(feature = "gpu")]
        if let Engine::Gpu { gpu, .. } = &engine {
            let per_problem = match mode {
                DecodeMode::Miopen => gpu.greedy_bytes_per_problem(),
                DecodeMode::Beam { width, .. } => gpu.beam_bytes_per_problem(width),
            };
            say!(
                "       device memory: {} bytes per problem, {} KiB of weights ({:?}), {} problems per chunk",
                per_problem,
                gpu.weight_bytes() >> 10,
                p,
                gpu.chunk_size(mode)
            );
            if want_profile {
                profile::print(gpu.context(), &engine, &problems, mode, &results)?;
            }
        }
        if want_profile && device == DeviceChoice::Cpu {
            say!("       --profile: per-kernel times are for the GPU only");
        }
        match &reference {
            None => reference = Some(results),
            Some(r) => {
                let same = r.iter().zip(&results).filter(|(a, b)| same_answer(a, b)).count();
                say!("answers equal to the first device's: {same} of {}", problems.len());
            }
        }
    }
    match load_failure {
        Some(e) if explicit_devices || loaded == 0 => Err(e),
        _ if all_failed => Ok(1),
        _ => Ok(0),
    }
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

/// `--profile`: one more run of the batch with every dispatch timed, the round trips, then one
/// problem at a time (the latency path), timed and profiled.
#[cfg(feature = "gpu")]
mod profile {
    use std::time::Instant;

    use super::same_answer;
    use crate::engine::Engine;
    use crate::error::{Error, Result};
    use crate::gpu::probe::round_trips;
    use crate::gpu::profile::{self as phase, ProfileReport};
    use crate::gpu::GpuContext;
    use crate::predict::{DecodeMode, Prediction};
    use crate::problem::ConvProblem;

    /// Round trips (and single-problem predictions) timed for each median.
    const ROUND_TRIPS: usize = 50;
    /// Pipeline keys listed (the rest are in the per-kernel totals).
    const TOP_KEYS: usize = 12;
    /// Host phases in the order a chunk goes through them (the indented ones inside the decode).
    const HOST_PHASES: [(&str, bool); 7] = [
        (phase::PREPARE, false),
        (phase::DECODE, false),
        (phase::RECORD, true),
        (phase::SUBMIT, true),
        (phase::WAIT, true),
        (phase::COPY, true),
        (phase::ANSWERS, false),
    ];

    pub(super) fn print(
        ctx: &GpuContext,
        engine: &Engine,
        problems: &[ConvProblem],
        mode: DecodeMode,
        unprofiled: &[Result<Vec<Prediction>>],
    ) -> Result<()> {
        let timestamps = match ctx.start_profile() {
            Ok(()) => {
                let start = Instant::now();
                let results = engine.predict_batch(problems, mode);
                let wall = start.elapsed().as_secs_f64();
                let report = ctx.finish_profile()?;
                let same = unprofiled
                    .iter()
                    .zip(&results)
                    .filter(|(a, b)| same_answer(a, b))
                    .count();
                say!(
                    "profile: one more run, every dispatch in a timestamped pass of its own: {wall:.3} s wall, \
                     answers equal to the repeat's: {same} of {}",
                    problems.len()
                );
                print_report(&report, wall, 1)?;
                true
            }
            Err(Error::Gpu(msg)) => {
                say!("profile: {msg}");
                false
            }
            Err(e) => return Err(e),
        };
        let trips = round_trips(ctx, ROUND_TRIPS)?;
        say!(
            "round trips (median of {}):{:>24} {:>10} {:>10}",
            trips.samples,
            "total ms",
            "submit ms",
            "wait ms"
        );
        let ms = |t: Option<f64>| t.map_or("-".to_string(), |t| format!("{:.3}", t * 1e3));
        for row in &trips.rows {
            say!(
                "  {:48} {:>10.3} {:>10} {:>10}",
                row.what,
                row.total * 1e3,
                ms(row.submit),
                ms(row.wait)
            );
        }
        // The whole path for one problem (what `predict` pays; criterion's `gpu_single`).
        let one = &problems[..problems.len().min(1)];
        let mut times = Vec::with_capacity(ROUND_TRIPS);
        for i in 0..=ROUND_TRIPS {
            let start = Instant::now();
            std::hint::black_box(engine.predict_batch(one, mode));
            if i > 0 {
                times.push(start.elapsed().as_secs_f64());
            }
        }
        times.sort_by(f64::total_cmp);
        let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
        say!(
            "  {:48} {:>10.3} {:>10} {:>10}",
            "predict 1 problem (the whole path)",
            median * 1e3,
            "-",
            "-"
        );
        if timestamps {
            ctx.start_profile()?;
            let start = Instant::now();
            for _ in 0..ROUND_TRIPS {
                std::hint::black_box(engine.predict_batch(one, mode));
            }
            let wall = start.elapsed().as_secs_f64();
            let report = ctx.finish_profile()?;
            say!(
                "profile of predicting 1 problem, {ROUND_TRIPS} times: per prediction {:.3} ms wall (profiled)",
                wall * 1e3 / ROUND_TRIPS as f64
            );
            print_report(&report, wall, ROUND_TRIPS)?;
        }
        Ok(())
    }

    /// The per-kernel table, the top pipeline keys and the host phases, divided by `runs`.
    fn print_report(r: &ProfileReport, wall: f64, runs: usize) -> Result<()> {
        let per = runs.max(1) as f64;
        let gpu_ns = r.gpu_ns();
        let pct = |ns: f64| 100.0 * ns / gpu_ns.max(1e-9);
        let each = if runs > 1 { " per run" } else { "" };
        say!(
            "  {:26} {:>10} {:>11} {:>10} {:>7}",
            format!("GPU time per kernel{each}"),
            "ms",
            "dispatches",
            "mean us",
            "% GPU"
        );
        for k in r.by_kernel() {
            say!(
                "  {:26} {:>10.3} {:>11} {:>10.1} {:>7.1}",
                k.key,
                k.gpu_ns / 1e6 / per,
                k.dispatches as f64 / per,
                k.gpu_ns / 1e3 / k.dispatches.max(1) as f64,
                pct(k.gpu_ns)
            );
        }
        let span = match r.encoder_span_ns {
            Some(ns) => format!("{:.3} ms from first to last timestamp of", ns / 1e6 / per),
            None => "(no span: no TIMESTAMP_QUERY_INSIDE_ENCODERS) over".to_string(),
        };
        say!(
            "  sum of dispatches {:.3} ms = {:.1}% of the wall time; {span} {} command encoders",
            gpu_ns / 1e6 / per,
            100.0 * gpu_ns / 1e9 / wall.max(1e-12),
            r.encoders as f64 / per
        );
        say!("  top pipeline keys:");
        say!("    {:>10} {:>11} {:>7}  key", "ms", "dispatches", "% GPU");
        for k in r.kernels.iter().take(TOP_KEYS) {
            say!(
                "    {:>10.3} {:>11} {:>7.1}  {}",
                k.gpu_ns / 1e6 / per,
                k.dispatches as f64 / per,
                pct(k.gpu_ns),
                k.key
            );
        }
        if r.kernels.len() > TOP_KEYS {
            say!("    ({} more keys)", r.kernels.len() - TOP_KEYS);
        }
        say!(
            "  host phases{each}, summed over chunks (prepare and answers run on other threads, overlapping decodes):"
        );
        say!("    {:44} {:>10} {:>7}", "", "ms", "count");
        let find = |name: &str| r.phases.iter().find(|p| p.0 == name).map(|p| (p.1, p.2));
        let line = |name: &str, secs: f64, count: u64| -> Result<()> {
            say!("    {name:44} {:>10.3} {:>7}", secs * 1e3 / per, count as f64 / per);
            Ok(())
        };
        let rest = find(phase::DECODE).map(|(decode, count)| {
            let parts: f64 = HOST_PHASES
                .iter()
                .filter(|p| p.1)
                .filter_map(|p| find(p.0))
                .map(|p| p.0)
                .sum();
            ((decode - parts).max(0.0), count)
        });
        for (name, inside) in HOST_PHASES {
            if name == phase::ANSWERS {
                if let Some((secs, count)) = rest {
                    line("  the rest (uploads, parsing the read-back)", secs, count)?;
                }
            }
            if let Some((secs, count)) = find(name) {
                let name = if inside { format!("  {name}") } else { name.to_string() };
                line(&name, secs, count)?;
            }
        }
        for (name, secs, count) in &r.phases {
            if !HOST_PHASES.iter().any(|p| p.0 == *name) {
                line(name, *secs, *count)?;
            }
        }
        Ok(())
    }
}
