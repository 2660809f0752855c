//! `tuneinfer info`: the GPU adapters (limits and features that matter) and the models found.

use std::path::Path;

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::models;
use crate::seq2seq::weights::{self, WeightsFiles};
use crate::seq2seq::{find_model_files, KtnModel};
use crate::solvers;

const HELP: &str = "\
Usage: tuneinfer info [--models DIR] [--arch GPU [--cu N]]

Prints the Vulkan adapters (backend, driver, the limits and features the GPU engine uses),
which one each --device choice would use, and every model found, tuneinfer's and MIOpen's
together, each once: the directory predict takes it from, the solvers that use it, and
whether it loads. --models DIR is searched first, before the default directories
($TUNEINFER_MODELS, weights/, $MIOPEN_SYSTEM_DB_PATH, $ROCM_PATH/share/miopen/db,
/opt/rocm/share/miopen/db).

--arch GPU (a MIOpen database name such as gfx90a6e, gfx942_xnacke4, gfx1030_40, or an arch
with --cu N) lists instead, for every solver, the model that serves that GPU and why: its own;
MIOpen's model of the arch; a model with the GPU as an input trained for another GPU of the
arch; the arch's model of the closest compute-unit count (MIOpen's rule for its databases); or
why none does. Under a model, the kinds of problem where predict's --method best answers with
another predictor, by the model's recorded held-out figures.";

pub(super) fn info(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: &["models", "arch", "cu"],
            flags: &[],
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!("info takes no positional argument ('{extra}')")));
    }
    let dirs = models::model_dirs(args.value("models").map(Path::new))?;
    if let Some(arch) = args.value("arch") {
        let cu = match args.value("cu") {
            None => None,
            Some(_) => crate::request::CU.parse(args.value("cu"))?.map(|n| n as u32),
        };
        super::words::check_arch(arch, &dirs)?;
        let gpu = super::predict::gpu_name(arch, cu)?;
        return list_served(&gpu, &dirs);
    }
    if args.value("cu").is_some() {
        return Err(Error::Usage("--cu needs --arch".into()));
    }
    say!("tuneinfer {}", env!("CARGO_PKG_VERSION"));
    print_gpu()?;
    list_models(&dirs)?;
    Ok(0)
}

/// `info --arch`: for every solver, the model that serves `gpu` and why ([`models::resolve`]),
/// or why none does. A model found but damaged is named as not loadable.
fn list_served(gpu: &str, dirs: &[std::path::PathBuf]) -> Result<i32> {
    let name = models::GpuName::parse(gpu);
    let cu = name.compute_units.map_or_else(
        || "compute units not named".to_string(),
        |cu| format!("{cu} compute units"),
    );
    say!("{gpu}: arch {}, {cu}", name.arch);
    let solvers = solvers::all();
    let w = solvers.iter().map(|s| s.name().len()).max().unwrap_or(0);
    let mut served = 0usize;
    for s in solvers {
        match models::find_and_load_resolved(gpu, s, dirs) {
            Ok((_, r)) => {
                served += 1;
                say!("  {:w$}  {}", s.name(), r.describe());
                let differs = crate::method::best_differs(&r, true);
                if !differs.is_empty() {
                    say!("  {:w$}    --method best answers with: {}", "", differs.join("; "));
                }
            }
            Err(e @ (Error::ModelNotFound { .. } | Error::NoModelForArch { .. })) => {
                let why = match e {
                    Error::NoModelForArch { reason, .. } => reason,
                    _ => format!("no model of {} (any CU count) in the model directories", name.arch),
                };
                say!("  {:w$}  none: {why}", s.name());
            }
            Err(e) => say!("  {:w$}  not loadable: {e}", s.name()),
        }
    }
    say!("{served} solver(s) served on {gpu}");
    Ok(0)
}

/// One model file set found in a model directory.
struct Listed {
    arch: String,
    model: String,
    kind: &'static str,
    dir: std::path::PathBuf,
    /// The file that names it (the `.safetensors`, or the KTN encoder).
    file: std::path::PathBuf,
}

/// Lists every model of the search directories once, tuneinfer's and MIOpen's together, sorted
/// by arch and model: the directory it is taken from (the first that has it: `predict` uses
/// that one), the solvers that use it, copies in later directories, and whether it loads.
fn list_models(dirs: &[std::path::PathBuf]) -> Result<()> {
    let searched: Vec<String> = dirs
        .iter()
        .map(|d| {
            if crate::format::bundle::is_bundled_path(d) {
                format!(
                    "{} ({} files inside tuneinfer)",
                    d.display(),
                    crate::format::bundle::files().len()
                )
            } else {
                crate::error::describe_dir(d)
            }
        })
        .collect();
    say!("models (searched in this order: {}):", searched.join(", "));
    let mut all: Vec<Listed> = Vec::new();
    for dir in dirs {
        let Some(mut names) = crate::format::bundle::file_names(dir) else {
            continue;
        };
        names.sort();
        for n in names {
            let found = if let Some(stem) = n.strip_suffix("_encoder.ktn.model") {
                Some((stem.to_string(), "MIOpen KTN"))
            } else {
                n.strip_suffix(".safetensors")
                    .filter(|stem| crate::format::bundle::is_file(&dir.join(format!("{stem}.json"))))
                    .map(|stem| (stem.to_string(), "tuneinfer attention"))
            };
            let Some((stem, kind)) = found else { continue };
            // `{arch}_{model}`, the arch possibly a database name with its CU count (`gfx906_64`).
            let (arch, model) = split_model_file_name(&stem);
            // tuneinfer's file names spell `Name<N>` as `Name_N` (weights::file_solver_name).
            let model = solvers::all()
                .into_iter()
                .map(|s| s.name())
                .find(|name| *name != model && crate::seq2seq::weights::file_solver_name(name) == model)
                .unwrap_or(model);
            all.push(Listed {
                arch: arch.to_string(),
                model: model.to_string(),
                kind,
                dir: dir.clone(),
                file: dir.join(&n),
            });
        }
    }
    if all.is_empty() {
        say!("  none found");
        return Ok(());
    }
    // Sorted by arch and model; for one (arch, model, kind), the directories in search order.
    let position = |d: &std::path::PathBuf| dirs.iter().position(|x| x == d).unwrap_or(usize::MAX);
    all.sort_by(|a, b| {
        (&a.arch, &a.model, a.kind, position(&a.dir)).cmp(&(&b.arch, &b.model, b.kind, position(&b.dir)))
    });
    let widths = (
        all.iter().map(|e| e.arch.len()).max().unwrap_or(0),
        all.iter().map(|e| e.model.len()).max().unwrap_or(0),
    );
    let mut i = 0;
    while i < all.len() {
        let first = &all[i];
        let mut j = i + 1;
        while j < all.len() && (&all[j].arch, &all[j].model, all[j].kind) == (&first.arch, &first.model, first.kind) {
            j += 1;
        }
        describe(first, &all[i + 1..j], dirs, widths)?;
        i = j;
    }
    Ok(())
}

/// One line (and notes) of [`list_models`].
fn describe(entry: &Listed, copies: &[Listed], dirs: &[std::path::PathBuf], (aw, mw): (usize, usize)) -> Result<()> {
    let (arch, model, kind, dir) = (entry.arch.as_str(), entry.model.as_str(), entry.kind, &entry.dir);
    // KTN files are named after the model, which several solvers may share.
    let candidates: Vec<&'static dyn solvers::Solver> = solvers::all()
        .into_iter()
        .filter(|s| s.name() == model || s.model_name(arch).is_ok_and(|m| m == model))
        .collect();
    // The solvers that take this very file, as predict searches; the others take another first.
    let mut users = Vec::new();
    let mut others = Vec::new();
    for s in &candidates {
        match models::locate(arch, *s, dirs) {
            Ok(found) if found.main_file() == entry.file => users.push(s.name()),
            Ok(found) => others.push(format!("{} uses {}", s.name(), found.main_file().display())),
            Err(_) => {}
        }
    }
    let used_by = match (users.is_empty(), candidates.is_empty()) {
        (false, _) => users.join(", "),
        (true, true) => "no solver uses it".to_string(),
        (true, false) => "not used".to_string(),
    };
    let from = if crate::format::bundle::is_bundled_path(dir) {
        "built into tuneinfer".to_string()
    } else {
        dir.display().to_string()
    };
    say!("  {arch:aw$} {model:mw$} {kind:19} {used_by}  ({from})");
    for other in others {
        say!("      not used: {other}");
    }
    for copy in copies {
        say!(
            "      also in {} (not used: the first directory wins)",
            copy.dir.display()
        );
    }
    // Loading it as its solver would (with its vocabulary check) says whether it is usable.
    let solver = candidates.first().copied();
    let one_dir = std::slice::from_ref(dir);
    let loaded = match (kind == "MIOpen KTN", solver) {
        (true, Some(s)) => find_model_files(one_dir, arch, model).and_then(|f| models::load_ktn(&f, s).map(|_| ())),
        (true, None) => KtnModel::find_and_load(one_dir, arch, model).map(|_| ()),
        (false, Some(s)) => models::load_weights(&WeightsFiles::in_dir(dir, arch, model), arch, s).map(|_| ()),
        (false, None) => weights::load(&WeightsFiles::in_dir(dir, arch, model), arch, model).map(|_| ()),
    };
    if let Err(e) = loaded {
        say!("      not loadable: {e}");
    }
    Ok(())
}

/// `gfx906_ConvAsm1x1U` -> (gfx906, ConvAsm1x1U); `gfx906_64_ConvAsm1x1U` -> (gfx906_64,
/// ConvAsm1x1U): an underscore followed by a digit is part of the arch (a CU count).
fn split_model_file_name(name: &str) -> (&str, &str) {
    let mut from = 0;
    while let Some(i) = name[from..].find('_').map(|i| from + i) {
        if name[i + 1..].starts_with(|c: char| c.is_ascii_digit()) {
            from = i + 1;
            continue;
        }
        return (&name[..i], &name[i + 1..]);
    }
    (name, "")
}

#[cfg(feature = "gpu")]
fn print_gpu() -> Result<()> {
    use crate::gpu::{list_adapters, GpuContext};
    let adapters = list_adapters();
    if adapters.is_empty() {
        say!("gpu: no Vulkan adapter (--device auto computes on the CPU; --device gpu fails)");
        return Ok(());
    }
    for (i, a) in adapters.iter().enumerate() {
        say!("adapter {i}: {}", a.name);
        say!(
            "  backend {}, type {}{}",
            a.backend,
            a.device_type,
            if a.software { " (software)" } else { "" }
        );
        say!("  driver {} {}", a.driver, a.driver_info);
        say!("  shader f16: {}", if a.shader_f16 { "yes" } else { "no" });
        say!(
            "  max storage buffer binding {} MiB, max buffer {} MiB, {} storage buffers per stage",
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_storage_buffers_per_shader_stage
        );
        say!(
            "  workgroup: max size x {}, max invocations {}, max groups per dimension {}, shared memory {} KiB",
            a.max_compute_workgroup_size_x,
            a.max_compute_invocations_per_workgroup,
            a.max_compute_workgroups_per_dimension,
            a.max_compute_workgroup_storage_size >> 10
        );
    }
    let hardware = adapters.iter().find(|a| !a.software);
    say!(
        "--device auto: {}",
        hardware.map_or("cpu (no hardware GPU)".to_string(), |a| a.name.clone())
    );
    match GpuContext::shared() {
        Ok(ctx) => say!("--device gpu: {}", ctx.adapter().one_line()),
        Err(e) => say!("--device gpu: fails ({e})"),
    }
    Ok(())
}

#[cfg(not(feature = "gpu"))]
fn print_gpu() -> Result<()> {
    say!("gpu: {}", crate::engine::NOT_COMPILED);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn model_file_names_split_after_the_cu_count() {
        use super::split_model_file_name as split;
        assert_eq!(split("gfx906_ConvAsm1x1U"), ("gfx906", "ConvAsm1x1U"));
        assert_eq!(split("gfx906_64_ConvAsm1x1U"), ("gfx906_64", "ConvAsm1x1U"));
        assert_eq!(
            split("gfx942_ConvHipIgemmGroupXdlops"),
            ("gfx942", "ConvHipIgemmGroupXdlops")
        );
        assert_eq!(split("gfx906"), ("gfx906", ""));
    }
}
