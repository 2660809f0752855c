//! Finding and loading the model of one (arch, solver): the one search order that the CPU
//! [`Predictor`](crate::predict::Predictor) and the GPU predictor use, and the one vocabulary
//! check that they and `eval` use.
//!
//! In each model directory, in order: tuneinfer's own attention model
//! `{arch}_{solver}.safetensors` + `.json`, then MIOpen's KTN model
//! `{arch}_{model}_{encoder,decoder,metadata}.ktn.model` (`{model}` is the solver's
//! [`Solver::model_name`]). The first directory holding either kind (or any of its files) wins,
//! and its model must load: a damaged or incomplete model is reported, naming the file, never
//! skipped in favour of a later directory (that would silently predict with a different model).

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::format::weights::{self, WeightsFiles};
use crate::seq2seq::{AttentionModel, KtnModel, ModelFiles};
use crate::solvers::Solver;

/// A model found and loaded for one (arch, solver), its vocabulary checked against the solver.
pub enum LoadedModel {
    /// tuneinfer's own seq2seq-with-attention model (`{arch}_{solver}.safetensors` + `.json`).
    Attention(Box<AttentionModel>),
    /// MIOpen's KernelTuningNet model (`{arch}_{model}_*.ktn.model`).
    Ktn(Box<KtnModel>),
}

/// Where the model of one (arch, solver) is, found by [`locate`] (nothing loaded yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// tuneinfer's own model: its files and the arch it was saved for (`gfx906_60`, or the
    /// plain arch when its training database was that very one).
    Attention(WeightsFiles, String),
    /// MIOpen's KTN model.
    Ktn(ModelFiles),
}

impl Located {
    /// The file that names the model (the `.safetensors`, or the KTN encoder).
    pub fn main_file(&self) -> &std::path::Path {
        match self {
            Located::Attention(files, _) => &files.tensors,
            Located::Ktn(files) => &files.encoder,
        }
    }
}

/// Finds the model of `solver` on `arch` in `dirs` without loading it (see the module
/// documentation for the order; [`find_and_load`] loads what this finds). Errors:
/// [`Error::NoModelForArch`] when MIOpen has no model of the solver for `arch`; a KTN model with
/// a file missing (naming it); [`Error::ModelNotFound`] when no directory holds one.
pub fn locate(arch: &str, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<Located> {
    // A MIOpen database name (`gfx906_64`) selects our models trained for that CU count
    // (`gfx906_64_{solver}`), or the arch's (`gfx906_{solver}`) when those were trained on that
    // very database; MIOpen's KTN models are per arch.
    let (base, compute_units) = crate::solvers::split_db_name(arch);
    let model_name = match solver.model_name(base) {
        Ok(name) => name,
        Err(Error::NotApplicable { reason, .. }) => {
            return Err(Error::NoModelForArch {
                arch: arch.to_string(),
                solver: solver.name().to_string(),
                reason,
            })
        }
        Err(e) => return Err(e),
    };
    for dir in dirs {
        // A model with a file missing is here too: loading it names the missing file.
        let ours = WeightsFiles::in_dir(dir, arch, solver.name());
        if ours.tensors.exists() || ours.metadata.exists() {
            return Ok(Located::Attention(ours, arch.to_string()));
        }
        if compute_units.is_some() {
            let arch_wide = WeightsFiles::in_dir(dir, base, solver.name());
            if arch_wide.metadata.is_file() && trained_on(&arch_wide, arch) {
                return Ok(Located::Attention(arch_wide, base.to_string()));
            }
        }
        if let Some(files) = ktn_files_in(dir, base, model_name)? {
            return Ok(Located::Ktn(files));
        }
    }
    Err(Error::ModelNotFound {
        looked_for: vec![
            crate::error::weights_pattern(arch, solver.name()),
            crate::error::ktn_pattern(base, model_name),
        ],
        searched: dirs.to_vec(),
    })
}

/// Finds and loads the model of `solver` on `arch` in `dirs` ([`locate`], then the load).
/// Errors: those of [`locate`]; the model found does not load, is incomplete or its vocabulary
/// does not suit the solver (naming the file).
pub fn find_and_load(arch: &str, solver: &dyn Solver, dirs: &[PathBuf]) -> Result<LoadedModel> {
    match locate(arch, solver, dirs)? {
        Located::Attention(files, saved_for) => Ok(LoadedModel::Attention(Box::new(load_weights(
            &files, &saved_for, solver,
        )?))),
        Located::Ktn(files) => Ok(LoadedModel::Ktn(Box::new(load_ktn(&files, solver)?))),
    }
}

/// The directories searched for models, in order: `--models DIR` (searched first; it adds to
/// the search, never replaces it), `$TUNEINFER_MODELS`, the project's `weights/` (the crate's,
/// then the current directory's), then MIOpen's models where MIOpen reads them
/// (`src/db_path.cpp.in`, `GetSystemDbPath`: `$MIOPEN_SYSTEM_DB_PATH`, else the install's
/// `share/miopen/db`: under `$ROCM_PATH`, then `/opt/rocm`). A directory is listed once
/// (the same directory by two names, e.g. `./weights` inside the checkout, too).
pub fn search_dirs(flag: Option<&std::path::Path>) -> Vec<PathBuf> {
    let env_dir = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut dirs: Vec<PathBuf> = Vec::new();
    dirs.extend(flag.map(|f| f.to_path_buf()));
    dirs.extend(env_dir("TUNEINFER_MODELS"));
    dirs.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights"));
    dirs.push(PathBuf::from("weights"));
    dirs.extend(env_dir("MIOPEN_SYSTEM_DB_PATH"));
    dirs.extend(env_dir("ROCM_PATH").map(|r| r.join("share/miopen/db")));
    dirs.push(PathBuf::from("/opt/rocm/share/miopen/db"));
    dedup_dirs(dirs)
}

/// [`search_dirs`] for a command line's `--models DIR`, which must be a directory (a
/// mistyped one is an error, not a silent fall-back to the other directories).
pub fn model_dirs(flag: Option<&std::path::Path>) -> Result<Vec<PathBuf>> {
    if let Some(dir) = flag {
        if !dir.is_dir() {
            return Err(Error::ModelNotFound {
                looked_for: vec!["models (--models names no directory)".into()],
                searched: vec![dir.to_path_buf()],
            });
        }
    }
    Ok(search_dirs(flag))
}

/// `dirs` with each directory once, in order: two names of one directory (a relative and an
/// absolute path, a link) count as one.
pub fn dedup_dirs(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for d in dirs {
        let key = d.canonicalize().unwrap_or_else(|_| d.clone());
        if !seen.contains(&key) {
            seen.push(key);
            out.push(d);
        }
    }
    out
}

/// Was our model in `files` trained on the database named `db_name` (its metadata's
/// `training.perf_db` is `{db_name}.db` or `{db_name}.*`)? False when the file cannot be read.
fn trained_on(files: &WeightsFiles, db_name: &str) -> bool {
    weights::read_info(&files.metadata).is_ok_and(|(info, _)| {
        info.training["perf_db"]
            .as_str()
            .and_then(|f| f.split('.').next())
            .is_some_and(|stem| stem.eq_ignore_ascii_case(db_name))
    })
}

/// MIOpen's KTN model files of `model_name` on `arch` in `dir`: None when none of the three is
/// there, an error naming the first missing one when only some are.
fn ktn_files_in(dir: &std::path::Path, arch: &str, model_name: &str) -> Result<Option<ModelFiles>> {
    let file = |part: &str| dir.join(format!("{arch}_{model_name}_{part}.ktn.model"));
    let files = ModelFiles {
        encoder: file("encoder"),
        decoder: file("decoder"),
        metadata: file("metadata"),
    };
    let parts = [&files.encoder, &files.decoder, &files.metadata];
    match parts.iter().find(|p| !p.exists()) {
        None => Ok(Some(files)),
        Some(_) if parts.iter().all(|p| !p.exists()) => Ok(None),
        Some(missing) => Err(Error::format(
            missing.display().to_string(),
            "missing, while the model's other files are in the same directory (an incomplete model is not skipped)",
        )),
    }
}

/// Loads tuneinfer's own model from `files` (checked to be for `arch` and `solver`) and checks
/// its vocabulary against the solver.
pub fn load_weights(files: &WeightsFiles, arch: &str, solver: &dyn Solver) -> Result<AttentionModel> {
    let (model, _) = AttentionModel::load(files, arch, solver.name())?;
    solver.check_vocabulary(&model.vocab, &files.metadata.display().to_string())?;
    Ok(model)
}

/// Loads MIOpen's KTN model from `files` and checks its vocabulary against the solver.
pub fn load_ktn(files: &ModelFiles, solver: &dyn Solver) -> Result<KtnModel> {
    let model = KtnModel::load(files)?;
    solver.check_vocabulary(&model.vocab, &files.metadata.display().to_string())?;
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::weights::WeightsInfo;
    use crate::seq2seq::attention::{AttentionConfig, AttentionParams, FeatureTransform, NUM_FEATURES};
    use crate::solvers;

    const CK_FWD: &str = "ConvHipImplicitGemmGroupFwdXdlops";

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tuneinfer-models-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Saves a tiny untrained attention model of (arch, solver) into `dir`.
    fn save_tiny(dir: &std::path::Path, arch: &str, solver: &str) {
        save_tiny_from(dir, arch, solver, "gfx906_60.db");
    }

    /// [`save_tiny`] with the training database named in its metadata.
    fn save_tiny_from(dir: &std::path::Path, arch: &str, solver: &str, perf_db: &str) {
        let config = AttentionConfig {
            steps: NUM_FEATURES,
            hidden: 4,
            embed: 3,
            vocab: 4,
            seq_len: 2,
            encoder: Default::default(),
        };
        let info = WeightsInfo {
            arch: arch.into(),
            solver: solver.into(),
            config,
            members: 1,
            token_values: ["-1", "1", "2", "4"].iter().map(|s| s.to_string()).collect(),
            transform: FeatureTransform {
                mean: vec![0.0; NUM_FEATURES],
                std: vec![1.0; NUM_FEATURES],
                gpu: None,
            },
            training: serde_json::json!({ "perf_db": perf_db }),
            metrics: serde_json::json!({}),
        };
        weights::save(dir, &[AttentionParams::init(config, 1)], &info).unwrap();
    }

    #[test]
    fn a_database_name_selects_the_model_of_that_cu_count_and_never_another() {
        let dir = temp_dir("cu");
        let solver = solvers::by_name("ConvAsm1x1U").unwrap();
        let dirs = std::slice::from_ref(&dir);
        // The arch's model, trained on gfx906_60.db: the model of gfx906 and of gfx906_60 ...
        save_tiny_from(&dir, "gfx906", "ConvAsm1x1U", "gfx906_60.db");
        assert!(find_and_load("gfx906", solver, dirs).is_ok());
        let LoadedModel::Attention(m) = find_and_load("gfx906_60", solver, dirs).unwrap() else {
            panic!("our model")
        };
        assert!(m.source.contains("gfx906_ConvAsm1x1U"), "{}", m.source);
        // ... never of gfx906_64 (another CU count): not found, naming the file looked for.
        let e = find_and_load("gfx906_64", solver, dirs)
            .err()
            .expect("no gfx906_64 model");
        assert!(e.to_string().contains("gfx906_64_ConvAsm1x1U.safetensors"), "{e}");
        // A model of its own for gfx906_64 is found by that name.
        save_tiny_from(&dir, "gfx906_64", "ConvAsm1x1U", "gfx906_64.2019.cd.pdb.txt");
        let LoadedModel::Attention(m) = find_and_load("gfx906_64", solver, dirs).unwrap() else {
            panic!("our model")
        };
        assert!(m.source.contains("gfx906_64_ConvAsm1x1U"), "{}", m.source);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_arch_without_a_miopen_model_is_model_not_found_even_with_weights_of_ours() {
        // The CK solvers' rules exist for MIOpen's arches only: weights of ours for another arch
        // could load but never predict, so the arch is refused before any file is read.
        let dir = temp_dir("no-arch");
        save_tiny(&dir, "gfx906", CK_FWD);
        let solver = solvers::by_name(CK_FWD).unwrap();
        let e = find_and_load("gfx906", solver, std::slice::from_ref(&dir))
            .err()
            .expect("MIOpen has no gfx906 model of a CK solver");
        assert!(matches!(e, Error::NoModelForArch { .. }), "{e}");
        assert_eq!(e.exit_code(), 6);
        let text = e.to_string();
        assert!(text.contains("gfx906") && text.contains("gfx90a, gfx942"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_incomplete_model_is_reported_not_skipped() {
        let (first, second) = (temp_dir("half-first"), temp_dir("half-second"));
        let solver = solvers::by_name("ConvAsm1x1U").unwrap();
        save_tiny(&second, "gfx906", "ConvAsm1x1U");
        let dirs = [first.clone(), second.clone()];
        // Our weights without their tensors file: the missing file is named.
        save_tiny(&first, "gfx906", "ConvAsm1x1U");
        std::fs::remove_file(first.join("gfx906_ConvAsm1x1U.safetensors")).unwrap();
        let e = find_and_load("gfx906", solver, &dirs).err().expect("half a model");
        assert!(e.to_string().contains("gfx906_ConvAsm1x1U.safetensors"), "{e}");
        // MIOpen's model with one of its three files: the first missing one is named.
        std::fs::remove_file(first.join("gfx906_ConvAsm1x1U.json")).unwrap();
        std::fs::write(first.join("gfx906_ConvAsm1x1U_decoder.ktn.model"), b"{}").unwrap();
        let e = find_and_load("gfx906", solver, &dirs)
            .err()
            .expect("a third of a model");
        assert!(e.to_string().contains("gfx906_ConvAsm1x1U_encoder.ktn.model"), "{e}");
        assert_eq!(e.exit_code(), 4);
        let _ = std::fs::remove_dir_all(&first);
        let _ = std::fs::remove_dir_all(&second);
    }

    #[test]
    fn the_first_directory_with_a_model_wins_and_must_load() {
        let (first, second) = (temp_dir("first"), temp_dir("second"));
        let solver = solvers::by_name("ConvAsm1x1U").unwrap();
        let dirs = [first.clone(), second.clone()];
        let e = find_and_load("gfx906", solver, &dirs).err().expect("nothing there");
        assert!(matches!(e, Error::ModelNotFound { .. }), "{e}");
        save_tiny(&second, "gfx906", "ConvAsm1x1U");
        assert!(matches!(
            find_and_load("gfx906", solver, &dirs),
            Ok(LoadedModel::Attention(_))
        ));
        // A damaged model in the first directory is reported, naming its file, not skipped.
        std::fs::write(first.join("gfx906_ConvAsm1x1U.safetensors"), b"damaged").unwrap();
        std::fs::write(first.join("gfx906_ConvAsm1x1U.json"), b"{").unwrap();
        let e = find_and_load("gfx906", solver, &dirs)
            .err()
            .expect("the damage is reported");
        assert!(e.to_string().contains("gfx906_ConvAsm1x1U.json"), "{e}");
        let _ = std::fs::remove_dir_all(&first);
        let _ = std::fs::remove_dir_all(&second);
    }
}
