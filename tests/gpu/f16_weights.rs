//! Would storing the shipped models' weights as f16 change a prediction? For every model in
//! `weights/`: a copy with its tensors rounded to IEEE halves (`seq2seq::weights::store_as`),
//! then the configs of MIOpen's greedy walk and of the default decoding, f32 vs f16, on up to
//! ~2,000 problems of the database it was trained on. Slow (the default decoding is a beam of 6
//! over 5 members): `#[ignore]`d, run by `tools/f16_check.sh`.

#[allow(unused_imports)]
use crate::common;

use std::path::PathBuf;

use tuneinfer::data::dataset::read_rows;
use tuneinfer::format::safetensors::Dtype;
use tuneinfer::seq2seq::weights::{self, WeightsFiles};
use tuneinfer::solvers::{self, Target};
use tuneinfer::{DecodeMode, Predictor};

#[test]
#[ignore]
fn f16_weights_change_no_prediction() {
    let weights_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights");
    let out_dir = std::env::temp_dir().join(format!("tuneinfer-f16-{}", std::process::id()));
    let mut models: Vec<PathBuf> = std::fs::read_dir(&weights_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    models.sort();
    let mut all_same = true;
    for meta in models {
        let (info, _) = weights::read_info(&meta).unwrap_or_else(|e| panic!("{e}"));
        let Ok(solver) = solvers::by_name(&info.solver) else {
            continue;
        };
        let Some(tunable) = solver.tunable() else { continue };
        let db_name = info.training["perf_db"].as_str().unwrap_or("").to_string();
        let db = [
            common::perfdb_dir().join(&db_name),
            common::perfdb_dir().join("history").join(&db_name),
        ]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{}: training database {db_name} not found", meta.display()));
        let stem = meta.file_stem().unwrap().to_string_lossy().to_string();
        let arch = stem.strip_suffix(&format!("_{}", info.solver)).unwrap().to_string();
        let files = WeightsFiles::in_dir(&weights_dir, &arch, &info.solver);
        weights::store_as(&files, &out_dir, Dtype::F16).unwrap_or_else(|e| panic!("{e}"));
        let target = Target::new(&arch);
        let rows = read_rows(&db, &info.solver).unwrap_or_else(|e| panic!("{e}"));
        let problems: Vec<_> = rows
            .rows
            .into_iter()
            .map(|r| r.problem)
            .filter(|p| tunable.applicable(&target, p).is_ok())
            .collect();
        let step = problems.len().div_ceil(2000).max(1);
        let problems: Vec<_> = problems.into_iter().step_by(step).collect();
        let full = Predictor::load(&arch, &info.solver, std::slice::from_ref(&weights_dir)).unwrap();
        let halved = Predictor::load(&arch, &info.solver, std::slice::from_ref(&out_dir)).unwrap();
        for mode in [DecodeMode::Miopen, full.default_mode()] {
            let a = common::config_lines(&full.predict_batch(&problems, mode));
            let b = common::config_lines(&halved.predict_batch(&problems, mode));
            let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
            println!(
                "{arch} {} {mode:?}: {same} of {} problems the same config with f16 weights",
                info.solver,
                problems.len()
            );
            all_same &= same == problems.len();
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(all_same, "some model's predictions change with f16 weights (see above)");
}
