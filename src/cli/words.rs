//! Words shared by the commands: the solver and arch lists of `--help` and of errors, made
//! from the solver list and the models found (never written by hand), and the notes that say
//! which default was used.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// Every solver's name, in [`crate::solvers::all`] order.
pub(super) fn solver_names() -> Vec<&'static str> {
    crate::solvers::all().iter().map(|s| s.name()).collect()
}

/// The models in `dirs`, as arch -> solvers: tuneinfer's `{arch}_{solver}.safetensors` (the
/// arch as the file names it: `gfx906`, `gfx906_64`) and MIOpen's
/// `{arch}_{model}_encoder.ktn.model` (the solvers whose model name that is on the arch).
pub(super) fn models_by_arch(dirs: &[PathBuf]) -> BTreeMap<String, Vec<&'static str>> {
    let solvers = crate::solvers::all();
    let mut out: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    let mut add = |arch: &str, solver: &'static str| {
        let list = out.entry(arch.to_string()).or_default();
        if !list.contains(&solver) {
            list.push(solver);
        }
    };
    for dir in dirs {
        let Some(read) = crate::format::bundle::file_names(dir) else {
            continue;
        };
        for name in &read {
            let name = name.as_str();
            if let Some(stem) = name.strip_suffix(".safetensors") {
                if stem.ends_with(".checkpoint") {
                    continue;
                }
                for s in &solvers {
                    let file_name = crate::seq2seq::weights::file_solver_name(s.name());
                    if let Some(arch) = stem.strip_suffix(&*file_name).and_then(|a| a.strip_suffix('_')) {
                        if !arch.is_empty() {
                            add(arch, s.name());
                        }
                    }
                }
            } else if let Some(stem) = name.strip_suffix("_encoder.ktn.model") {
                let Some((arch, model)) = stem.split_once('_') else {
                    continue;
                };
                for s in &solvers {
                    if s.model_name(arch).is_ok_and(|m| m == model) {
                        add(arch, s.name());
                    }
                }
            }
        }
    }
    out
}

/// "gfx900 (ConvAsm1x1U, ...); gfx906 (..., ConvOclBwdWrW2<2,4,8>, ...)": the arches with models
/// in `dirs`, each with its solvers (a family's `Name<N>` members as one `Name<N,...>`).
pub(super) fn arches_with_models(dirs: &[PathBuf]) -> String {
    let models = sorted_models(dirs);
    if models.is_empty() {
        return "none found".into();
    }
    models
        .iter()
        .map(|(arch, solvers)| {
            let mut names: Vec<String> = Vec::new();
            for s in solvers {
                match s.split_once('<') {
                    Some((family, n)) => {
                        let n = n.trim_end_matches('>');
                        let prefix = format!("{family}<");
                        match names.iter_mut().find(|x| x.starts_with(&prefix)) {
                            Some(x) => {
                                x.pop();
                                x.push_str(&format!(",{n}>"));
                            }
                            None => names.push(format!("{family}<{n}>")),
                        }
                    }
                    None => names.push(s.to_string()),
                }
            }
            format!("{arch} ({})", names.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// "gfx900 (7 solvers), gfx906 (15 solvers), ...": the arches with models in `dirs`, counted
/// (for error lines, which `tuneinfer info` completes).
pub(super) fn arches_with_model_counts(dirs: &[PathBuf]) -> String {
    // Per plain arch: a GPU of any CU count of it is served (`models::resolve`).
    let mut models: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for (name, solvers) in sorted_models(dirs) {
        let arch = crate::solvers::split_db_name(&name).0.to_ascii_lowercase();
        let list = models.entry(arch).or_default();
        for s in solvers {
            if !list.contains(&s) {
                list.push(s);
            }
        }
    }
    if models.is_empty() {
        return "none found".into();
    }
    models
        .iter()
        .map(|(arch, solvers)| {
            let n = solvers.len();
            format!("{arch} ({n} solver{})", if n == 1 { "" } else { "s" })
        })
        .collect::<Vec<_>>()
        .join(", ")
        + " ('tuneinfer info' lists them)"
}

/// [`models_by_arch`] with each arch's solvers in [`solver_names`] order.
fn sorted_models(dirs: &[PathBuf]) -> BTreeMap<String, Vec<&'static str>> {
    let mut models = models_by_arch(dirs);
    let order = solver_names();
    for solvers in models.values_mut() {
        solvers.sort_by_key(|s| order.iter().position(|o| o == s));
    }
    models
}

/// Checks `--arch`'s arch part before anything is loaded: an arch MIOpen names its databases
/// by, with at least one model in `dirs`; the error lists the supported ones.
pub(super) fn check_arch(arch_text: &str, dirs: &[PathBuf]) -> Result<()> {
    let (base, _, _) = crate::solvers::split_db_name_features(arch_text);
    let mut base = base.split(':').next().unwrap_or(base).to_ascii_lowercase();
    if !crate::solvers::KNOWN_ARCHES.contains(&base.as_str()) {
        // A name MIOpen would not write (gfx908_120): its arch part, the rest checked later.
        if let Some(arch) = base
            .split('_')
            .next()
            .filter(|a| crate::solvers::KNOWN_ARCHES.contains(a))
        {
            base = arch.to_string();
        }
    }
    let short = crate::error::quote_short(arch_text);
    if !crate::solvers::KNOWN_ARCHES.contains(&base.as_str()) {
        return Err(Error::NoModelForArch {
            arch: short,
            solver: "tuneinfer or MIOpen".into(),
            reason: format!(
                "not a GPU arch tuneinfer knows ({}); tuneinfer serves these arches, at any compute-unit count: {}. rocminfo's \
                 'Name: gfx...' line names the GPU's arch",
                crate::solvers::KNOWN_ARCHES.join(", "),
                arches_with_model_counts(dirs)
            ),
        });
    }
    let models = models_by_arch(dirs);
    let has_model = models
        .keys()
        .any(|a| crate::solvers::split_db_name(a).0.eq_ignore_ascii_case(&base));
    if !has_model {
        return Err(Error::NoModelForArch {
            arch: short,
            solver: "tuneinfer or MIOpen".into(),
            reason: format!(
                "no model of any solver for {base} in the model directories ({}); tuneinfer \
                 serves these arches, at any compute-unit count: {}. Train one with 'tuneinfer train', or add a directory with --models DIR",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                arches_with_model_counts(dirs)
            ),
        });
    }
    Ok(())
}

/// Says on stderr that an option was not given and which default is used.
pub(super) fn announce_default(option: &str, value: &str, why: &str) {
    eprintln!("note: no --{option} given: using {value} ({why})");
}

/// The `--arch` and `--solver` lines of `predict`/`batch --help`, from the solver list and the
/// models found in the default search.
pub(super) fn arch_solver_help() -> String {
    let dirs = crate::models::search_dirs(None);
    let wrap = |text: &str| -> String {
        let mut out = String::new();
        let mut line = String::new();
        for word in text.split(' ') {
            if !line.is_empty() && line.len() + 1 + word.len() > 68 {
                out.push_str(&format!("\n                     {line}"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            out.push_str(&format!("\n                     {line}"));
        }
        out
    };
    format!(
        "  --arch GPU         the GPU as MIOpen names its databases (gfx906_60, gfx90a6e,\n                     \
         gfx942_xnacke4) or an arch (default: {}); a GPU with no model of its own\n                     \
         is served by its arch's (the closest CU count; 'tuneinfer info --arch GPU'\n                     \
         says which); models found:{}\n  \
         --solver NAME|all  MIOpen solver (default: {}): one of{}\n                     \
         'all': every solver with a model on --arch that applies to the problem, each with\n                     \
         its default decoding; the ConvHipImplicitGemmGroup*Xdlops (composable_kernel) and\n                     \
         *NHWC solvers take NHWC problems only (--in_layout NHWC, or a key ending -NHWC-...)",
        super::DEFAULT_ARCH,
        wrap(&arches_with_models(&dirs)),
        crate::request::DEFAULT_SOLVER,
        wrap(&(solver_names().join(", ") + ";")),
    )
}

/// What `userdb` knows when it has no entry to write.
pub(super) struct NothingApplied<'a> {
    /// Distinct problems read.
    pub distinct: usize,
    pub lines: usize,
    pub bad: usize,
    /// Distinct NCHW problems.
    pub nchw: usize,
    pub arch: &'a str,
    pub solvers: &'a [&'static str],
    /// (problem, solver) pairs `--method best` leaves to MIOpen's static default.
    pub left_default: usize,
    /// (problem, solver) pairs tuned in the system perf db.
    pub tuned: usize,
}

/// `userdb`'s last line when there was no entry to write: why, and what to do next.
pub(super) fn nothing_applied(n: &NothingApplied<'_>) -> String {
    if n.distinct == 0 {
        let what = if n.lines == 0 {
            "the input is empty".to_string()
        } else if n.bad > 0 {
            format!(
                "none of the input's {} lines is a convolution problem ({} bad; a binary file?)",
                n.lines, n.bad
            )
        } else {
            format!("none of the input's {} lines is a convolution problem", n.lines)
        };
        return format!(
            "nothing to write: {what}. Give a MIOpen log (run the network with \
             MIOPEN_ENABLE_LOGGING_CMD=1 and keep its stderr) or problem lines with --input FILE"
        );
    }
    if n.left_default > 0 {
        return format!(
            "nothing to write: on these {} problems on {}, --method best serves MIOpen's static default ({} (problem, solver) pairs{}): MIOpen runs it without an entry ('tuneinfer predict --solver all PROBLEM' says why; --include-unproven writes the models anyway)",
            n.distinct,
            n.arch,
            n.left_default,
            if n.tuned > 0 { format!("; {} tuned in MIOpen's system perf db", n.tuned) } else { String::new() }
        );
    }
    let mut out = format!(
        "nothing to write: no solver with a model applies to these {} problems on {}",
        n.distinct, n.arch
    );
    if n.tuned > 0 {
        out.push_str(&format!(
            " ({} (problem, solver) pairs are tuned in MIOpen's system perf db: MIOpen uses those)",
            n.tuned
        ));
    }
    if let Some(hint) = nhwc_hint(n.solvers, n.nchw) {
        out.push_str(&format!("\n{hint}"));
    } else {
        out.push_str(&format!(
            " (solvers with a model: {}; 'tuneinfer predict --solver NAME PROBLEM' says why one does not apply)",
            n.solvers.join(", ")
        ));
    }
    out
}

/// The solvers that take NHWC problems only: composable_kernel's (MIOpen runs NCHW problems
/// through transposes for the GTC `*NHWC` ones, not for these).
fn nhwc_only(solver: &str) -> bool {
    solver.starts_with("ConvHipImplicitGemmGroup")
}

/// A hint when NCHW problems met solvers that take NHWC only (gfx90a and gfx942 logs of
/// PyTorch's default layout).
pub(super) fn nhwc_hint(solvers: &[&'static str], nchw: usize) -> Option<String> {
    let only: Vec<&str> = solvers.iter().copied().filter(|s| nhwc_only(s)).collect();
    if only.is_empty() || nchw == 0 {
        return None;
    }
    Some(format!(
        "hint: {nchw} problem(s) are NCHW (PyTorch's default layout), and {} take NHWC problems \
         only: run the network in channels-last (model.to(memory_format=torch.channels_last) and \
         its inputs likewise) and log it again, so MIOpen runs NHWC convolutions these solvers apply to",
        only.join(", ")
    ))
}
