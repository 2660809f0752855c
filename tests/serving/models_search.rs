//! `--models DIR` adds a directory to the model search (searched first); it never hides the
//! other models, and `info` lists each model once, tuneinfer's and MIOpen's together.

#[allow(unused_imports)]
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tuneinfer::models::{self, Located};
use tuneinfer::solvers;

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(args)
        .current_dir(dir)
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_SYSTEM_DB_PATH")
        .env("ROCM_PATH", "/nonexistent-rocm")
        .output()
        .expect("run tuneinfer")
}

fn stdout_of(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_flag_comes_first_and_the_default_directories_stay() {
    let flag = common::scratch_dir("models-search-order");
    let dirs = models::search_dirs(Some(&flag));
    assert_eq!(dirs[0], flag);
    assert!(dirs.contains(&common::weights_dir()), "{dirs:?}");
    assert!(dirs.contains(&PathBuf::from("/opt/rocm/share/miopen/db")), "{dirs:?}");
    // The same directory by two names is searched once.
    let dirs = models::search_dirs(Some(&common::weights_dir()));
    assert_eq!(
        dirs.iter()
            .filter(|d| d.canonicalize().ok() == common::weights_dir().canonicalize().ok())
            .count(),
        1
    );
    // A directory that is not there is an error, not a silent fall-back.
    let e = models::model_dirs(Some(Path::new("/nonexistent/models"))).unwrap_err();
    assert_eq!(e.exit_code(), 6);
    assert!(e.to_string().contains("/nonexistent/models (does not exist)"), "{e}");
    let _ = std::fs::remove_dir_all(flag);
}

#[test]
fn a_model_in_the_flag_directory_wins_and_the_others_are_still_found() {
    let flag = common::scratch_dir("models-search-wins");
    common::copy_gfx908_asm1x1u_model(&flag);
    let dirs = models::search_dirs(Some(&flag));
    let asm = solvers::by_name("ConvAsm1x1U").unwrap();
    // gfx908: MIOpen's model from the flag directory.
    match models::locate("gfx908", asm, &dirs).unwrap() {
        Located::Ktn(files) => assert!(files.encoder.starts_with(&flag)),
        other => panic!("{other:?}"),
    }
    // gfx906: tuneinfer's model from weights/, which the flag does not hide.
    match models::locate("gfx906", asm, &dirs).unwrap() {
        Located::Attention(files, arch) => {
            assert_eq!(arch, "gfx906");
            assert_eq!(
                files.tensors,
                common::weights_dir().join("gfx906_ConvAsm1x1U.safetensors")
            );
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(flag);
}

#[test]
fn predict_with_miopens_models_also_uses_tuneinfers() {
    // On MI300 (gfx942): MIOpen's CK model from --models and tuneinfer's GTC model from
    // weights/, both in one run.
    let key = "2x64x56x56x1x1x1x1x256x64x0x0x0x1x1x0x1x1x0x0x1xNHWCxFP16xF";
    let models = common::models_dir();
    let out = stdout_of(&run_in(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "predict",
            "--arch",
            "gfx942",
            "--solver",
            "all",
            "--device",
            "cpu",
            "--models",
            models.to_str().unwrap(),
            key,
        ],
    ));
    assert!(out.contains("ConvHipImplicitGemmGroupFwdXdlops"), "{out}");
    assert!(out.contains("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC"), "{out}");
}

/// The model lines of `info` (two spaces, then the arch).
fn model_lines(listing: &str) -> Vec<&str> {
    listing.lines().filter(|l| l.starts_with("  gfx")).collect()
}

#[test]
fn info_lists_each_model_once_tuneinfers_and_miopens_together() {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Inside the checkout, ./weights is the crate's weights/: one line per model.
    let listing = stdout_of(&run_in(checkout, &["info"]));
    let lines = model_lines(&listing);
    let ours = lines
        .iter()
        .filter(|l| l.contains(" ConvAsm1x1U ") && l.starts_with("  gfx906 "))
        .count();
    assert_eq!(ours, 1, "{listing}");
    let mut seen = std::collections::HashSet::new();
    for l in &lines {
        let mut words = l.split_whitespace();
        let id = (words.next(), words.next(), words.next());
        assert!(seen.insert(id), "listed twice: {l}\n{listing}");
    }
    // Run from another checkout (its own weights/ beside the binary's): still once, the
    // other copy named under it.
    let other = common::scratch_dir("models-search-other-checkout");
    std::fs::create_dir_all(other.join("weights")).unwrap();
    for ext in ["safetensors", "json"] {
        let name = format!("gfx906_ConvAsm1x1U.{ext}");
        std::fs::copy(common::weights_dir().join(&name), other.join("weights").join(&name)).unwrap();
    }
    let listing = stdout_of(&run_in(&other, &["info"]));
    let lines = model_lines(&listing);
    let ours: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(" ConvAsm1x1U ") && l.starts_with("  gfx906 "))
        .collect();
    assert_eq!(ours.len(), 1, "{listing}");
    assert!(listing.contains("also in weights (not used"), "{listing}");
    let _ = std::fs::remove_dir_all(other);
    // With MIOpen's models: both kinds, each once; a copy of one of ours in the flag directory
    // is the one used, the weights/ one listed as a copy under it.
    let flag = common::scratch_dir("models-search-info");
    for f in std::fs::read_dir(common::models_dir()).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, flag.join(f.file_name().unwrap())).unwrap();
    }
    for ext in ["safetensors", "json"] {
        let name = format!("gfx906_ConvAsm1x1U.{ext}");
        std::fs::copy(common::weights_dir().join(&name), flag.join(&name)).unwrap();
    }
    let listing = stdout_of(&run_in(checkout, &["info", "--models", flag.to_str().unwrap()]));
    let lines = model_lines(&listing);
    let find = |arch: &str, model: &str| -> Vec<&&str> {
        lines
            .iter()
            .filter(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some(arch) && w.next() == Some(model)
            })
            .collect()
    };
    let ktn = find("gfx908", "ConvAsm1x1U");
    assert_eq!(ktn.len(), 1, "{listing}");
    assert!(
        ktn[0].contains("MIOpen KTN") && ktn[0].contains(flag.to_str().unwrap()),
        "{listing}"
    );
    let ours = find("gfx906", "ConvAsm1x1U");
    assert_eq!(ours.len(), 1, "{listing}");
    assert!(
        ours[0].contains("tuneinfer attention") && ours[0].contains(flag.to_str().unwrap()),
        "{listing}"
    );
    assert!(
        listing.contains(&format!("also in {} (not used", common::weights_dir().display())),
        "{listing}"
    );
    // tuneinfer's MI300X GTC models from weights/ are listed beside MIOpen's gfx942 CK ones.
    assert_eq!(
        find("gfx942130", "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC").len(),
        1,
        "{listing}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  gfx942") && l.contains("MIOpen KTN")),
        "{listing}"
    );
    let _ = std::fs::remove_dir_all(flag);
}

#[test]
fn a_model_across_gpus_trained_with_this_gpus_rows_comes_before_miopens_model_of_the_arch() {
    use tuneinfer::models::ServedBy;
    use tuneinfer::seq2seq::weights::{self, WeightsFiles};
    // MI210's model trained with MI100's rows too, its figures on MI100 recorded.
    let dir = common::tiny_model_pooled(
        "pool-before-ktn",
        "gfx90a68.db.txt.bz2",
        "gfx90a68",
        "ConvAsm1x1U",
        &["gfx90878.db.txt.bz2"],
    );
    let files = WeightsFiles::in_dir(&dir, "gfx90a68", "ConvAsm1x1U");
    weights::set_gpu_validation(&files, "gfx90878", &serde_json::json!({"methods": []})).unwrap();
    let dirs = vec![dir.clone(), common::models_dir()];
    let asm = solvers::by_name("ConvAsm1x1U").unwrap();
    // MI100 (by name, and as the plain arch's usual GPU): that model, before MIOpen's gfx908 KTN.
    for arch in ["gfx90878", "gfx908"] {
        let r = models::resolve(arch, asm, &dirs).unwrap();
        assert_eq!(
            r.served_by,
            ServedBy::Pool {
                member: "gfx90878".into(),
                own: true
            },
            "{arch}"
        );
        assert!(r.is_own());
    }
    // Another gfx908 GPU (128 CUs): MIOpen's model of the arch comes before a model validated on
    // another GPU of it.
    let r = models::resolve("gfx90880", asm, &dirs).unwrap();
    assert_eq!(r.served_by, ServedBy::Miopen);
    let _ = std::fs::remove_dir_all(dir);
}
