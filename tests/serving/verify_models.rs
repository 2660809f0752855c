//! Every MIOpen KernelTuningNet file's embedded Keras test vectors reproduce within 1e-4.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::format::frugally::KerasModel;
use tuneinfer::seq2seq::verify::verify_model;

#[test]
fn all_twelve_ktn_models_reproduce_their_embedded_tests() {
    let files = common::ktn_model_files();
    assert_eq!(files.len(), 12, "expected 12 encoder/decoder files, found {files:?}");
    for file in &files {
        let model = KerasModel::load(file).unwrap_or_else(|e| panic!("{e}"));
        let report = verify_model(&model).unwrap_or_else(|e| panic!("{e}"));
        for o in &report.outputs {
            println!(
                "{} output {}: max |err| {:.3e}",
                file.display(),
                o.output,
                o.max_abs_error
            );
        }
        assert!(report.passes(1e-4), "{}: {:?}", file.display(), report.outputs);
        assert!(
            report.hash_ok,
            "{}: stored hash {} != computed {}",
            file.display(),
            model.stored_hash,
            model.computed_hash
        );
    }
}
