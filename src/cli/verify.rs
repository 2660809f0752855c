//! `tuneinfer verify`: a model file checks itself against its embedded Keras test vectors.

use std::path::Path;

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::format::frugally::KerasModel;
use crate::format::metadata::KtnMetadata;
use crate::seq2seq::verify::verify_model;

const HELP: &str = "\
Usage: tuneinfer verify [--tolerance T] [--device cpu|gpu|auto] FILE...

Runs each frugally-deep model file's embedded test vectors through the engine and prints the
largest absolute error per output, and whether the file's weight hash matches. Metadata files
are parsed and summarised. Exit code 8 when any output is off by more than T (default 1e-4)
or a hash differs. With --device gpu (or auto and a hardware GPU), KTN encoder and decoder
files are also run on the GPU (their model's three files must sit side by side).";

pub(super) fn verify(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: &["tolerance", "device"],
            flags: &[],
        },
    )?;
    let tolerance: f32 = match args.value("tolerance") {
        None => 1e-4,
        Some(t) => t
            .parse()
            .ok()
            .filter(|v: &f32| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| Error::Usage(format!("--tolerance: expected a non-negative number, got '{t}'")))?,
    };
    if args.rest.is_empty() {
        return Err(Error::Usage("verify needs at least one FILE; see --help".into()));
    }
    let device = crate::engine::DeviceChoice::parse(args.value("device").unwrap_or("cpu"))?;
    let mut failures = 0;
    let mut first_error: Option<Error> = None;
    for file in &args.rest {
        let result = verify_file(Path::new(file), tolerance)
            .and_then(|ok| Ok(ok & gpu::verify_on_gpu(Path::new(file), tolerance, device)?));
        match result {
            Ok(true) => {}
            Ok(false) => failures += 1,
            Err(e) => {
                // Errors about a layer or a shape do not name the file; with several files the
                // reader must know which one.
                let message = e.to_string();
                if message.contains(file.as_str()) {
                    eprintln!("error: {message}");
                } else {
                    eprintln!("error: {file}: {message}");
                }
                failures += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    if failures == 0 {
        return Ok(0);
    }
    if args.rest.len() > 1 {
        eprintln!("{failures} of {} file(s) failed", args.rest.len());
    }
    Ok(match first_error {
        Some(e) if failures == 1 => e.exit_code(),
        _ => Error::VerifyMismatch {
            path: String::new(),
            detail: String::new(),
        }
        .exit_code(),
    })
}

fn verify_file(path: &Path, tolerance: f32) -> Result<bool> {
    let name = path.display();
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.contains("_metadata"))
    {
        let meta = KtnMetadata::load(path)?;
        say!(
            "{name}: metadata: {} tokens, predict_type {}, params {:?}",
            meta.token_values.len(),
            meta.predict_type,
            meta.num_tuning_params
        );
        return Ok(true);
    }
    let model = KerasModel::load(path)?;
    let report = verify_model(&model)?;
    let passes = report.passes(tolerance) && report.hash_ok;
    say!(
        "{name}: {} with {} test(s): {}",
        report.kind,
        report.tests,
        if passes { "ok" } else { "MISMATCH" }
    );
    for o in &report.outputs {
        let mark = if o.max_abs_error <= tolerance { "ok" } else { "MISMATCH" };
        say!(
            "  output {}: max |err| {:.3e} at [{}] (got {}, expected {}) {mark}",
            o.output,
            o.max_abs_error,
            o.worst_index,
            o.got,
            o.expected
        );
    }
    say!(
        "  hash: {}",
        if report.hash_ok {
            "ok".to_string()
        } else {
            format!("MISMATCH (file {}, weights {})", model.stored_hash, model.computed_hash)
        }
    );
    Ok(passes)
}

/// The GPU side of `verify --device`.
mod gpu {
    use std::path::Path;

    use crate::engine::DeviceChoice;
    use crate::error::Result;

    /// Runs the file's model on the GPU when `device` asks for it; true when it passes (or the
    /// GPU is not asked for, or the file is not a KTN encoder/decoder).
    #[cfg(feature = "gpu")]
    pub fn verify_on_gpu(path: &Path, tolerance: f32, device: DeviceChoice) -> Result<bool> {
        use crate::error::Error;
        use crate::gpu::{verify_ktn_on_gpu, GpuContext};
        use crate::seq2seq::ModelFiles;
        let ctx = match device {
            DeviceChoice::Cpu => return Ok(true),
            DeviceChoice::Gpu => GpuContext::shared()?,
            DeviceChoice::Auto => match GpuContext::open(false) {
                Ok(c) => std::sync::Arc::new(c),
                Err(e) => {
                    eprintln!("note: {e}; verified on the CPU only");
                    return Ok(true);
                }
            },
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let (prefix, kind) = match (
            name.strip_suffix("_encoder.ktn.model"),
            name.strip_suffix("_decoder.ktn.model"),
        ) {
            (Some(p), _) => (p, "encoder"),
            (_, Some(p)) => (p, "decoder"),
            _ => return Ok(true),
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let file = |part: &str| dir.join(format!("{prefix}_{part}.ktn.model"));
        let files = ModelFiles {
            encoder: file("encoder"),
            decoder: file("decoder"),
            metadata: file("metadata"),
        };
        let reports = verify_ktn_on_gpu(&ctx, &files)?;
        let report = reports
            .iter()
            .find(|r| r.kind == kind)
            .ok_or_else(|| Error::Gpu(format!("{}: no GPU {kind} report", path.display())))?;
        let ok = report.max_abs_error <= tolerance;
        say!(
            "  gpu ({}): max |err| {:.3e} over {} test(s) {}",
            ctx.adapter().name,
            report.max_abs_error,
            report.tests,
            if ok { "ok" } else { "MISMATCH" }
        );
        Ok(ok)
    }

    #[cfg(not(feature = "gpu"))]
    pub fn verify_on_gpu(_path: &Path, _tolerance: f32, device: DeviceChoice) -> Result<bool> {
        match device {
            DeviceChoice::Gpu => Err(crate::error::Error::NoGpu(crate::engine::NOT_COMPILED.into())),
            _ => Ok(true),
        }
    }
}
