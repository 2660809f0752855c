//! `tuneinfer info`: the GPU adapters (limits and features that matter) and the models found.

use std::path::Path;

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::format::weights::{self, WeightsFiles};
use crate::models;
use crate::seq2seq::{default_model_dirs, find_model_files, KtnModel};
use crate::solvers;

const HELP: &str = "\
Usage: tuneinfer info [--models DIR]

Prints the Vulkan adapters (backend, driver, the limits and features the GPU engine uses),
which one each --device choice would use, and the models found in the model directories.";

pub(super) fn info(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: &["models"],
            flags: &[],
            options_after_positionals: false,
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!("info takes no positional argument ('{extra}')")));
    }
    say!("tuneinfer {}", env!("CARGO_PKG_VERSION"));
    print_gpu()?;
    say!("models:");
    let dirs = default_model_dirs(args.value("models").map(Path::new));
    let mut any = false;
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut found: Vec<(String, &str)> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| {
                if let Some(stem) = n.strip_suffix("_encoder.ktn.model") {
                    Some((stem.to_string(), "MIOpen KTN"))
                } else {
                    let stem = n.strip_suffix(".safetensors")?;
                    dir.join(format!("{stem}.json"))
                        .is_file()
                        .then(|| (stem.to_string(), "tuneinfer attention"))
                }
            })
            .collect();
        found.sort();
        for (name, kind) in found {
            any = true;
            // `{arch}_{model}`, the arch possibly a database name with its CU count (`gfx906_64`).
            let (arch, model) = split_model_file_name(&name);
            // KTN files are named after the model, which several solvers may share.
            let users: Vec<&str> = solvers::all()
                .into_iter()
                .filter(|s| s.name() == model || s.model_name(arch).is_ok_and(|m| m == model))
                .map(|s| s.name())
                .collect();
            let used_by = if users.is_empty() {
                "no solver uses it".to_string()
            } else {
                users.join(", ")
            };
            say!("  {arch:8} {model:34} {kind:20} {used_by}  ({})", dir.display());
            // Listed by name; loading them as their solver would (with its vocabulary check)
            // says whether they are usable.
            let solver = users.first().and_then(|name| solvers::by_name(name).ok());
            let one_dir = std::slice::from_ref(dir);
            let loaded = match (kind == "MIOpen KTN", solver) {
                (true, Some(s)) => {
                    find_model_files(one_dir, arch, model).and_then(|f| models::load_ktn(&f, s).map(|_| ()))
                }
                (true, None) => KtnModel::find_and_load(one_dir, arch, model).map(|_| ()),
                (false, Some(s)) => models::load_weights(&WeightsFiles::in_dir(dir, arch, model), arch, s).map(|_| ()),
                (false, None) => weights::load(&WeightsFiles::in_dir(dir, arch, model), arch, model).map(|_| ()),
            };
            if let Err(e) = loaded {
                say!("           not loadable: {e}");
            }
        }
    }
    if !any {
        let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        say!("  none found (searched: {})", searched.join(", "));
    }
    Ok(0)
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
