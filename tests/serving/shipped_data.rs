//! The run-time data tuneinfer ships (issue 43): the kernel catalogues built into the library
//! are what `tools/gen_data.sh` writes from MIOpen's data beside the checkout, byte for byte, and
//! the catalogues answering builds from them are the ones built from MIOpen's files.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::textdb::read_text;
use tuneinfer::problem::{Direction, Precision};
use tuneinfer::solvers::ck::catalogue;
use tuneinfer::solvers::ck::index::{tuned_only_text, CkIndex, BUILTIN_TUNED_ONLY};
use tuneinfer::solvers::gtc_nhwc::catalogue as gtc;

const DIRECTIONS: [Direction; 3] = [Direction::Forward, Direction::BackwardData, Direction::BackwardWeights];

#[test]
fn the_gtc_catalogues_built_in_are_miopens_files() {
    let dir = common::miopen_dir().join("solvers");
    for d in DIRECTIONS {
        let file = dir.join(gtc::file_name(d));
        let shared = std::fs::read_to_string(&file).unwrap();
        assert!(
            shared == gtc::builtin_text(d),
            "{} differs: run tools/gen_data.sh",
            file.display()
        );
        // And the catalogue answering uses parses to the file's.
        let from_file = gtc::Catalogue::load(&file, d).unwrap();
        let built_in = gtc::load(d).unwrap();
        assert_eq!(from_file.entries.len(), built_in.entries.len());
        assert!(from_file
            .entries
            .iter()
            .zip(&built_in.entries)
            .all(|(a, b)| a.text == b.text));
    }
}

#[test]
fn the_ck_lists_built_in_are_the_composable_kernel_files() {
    let dir = common::miopen_dir().join("ck");
    for d in DIRECTIONS {
        for p in [Precision::Fp32, Precision::Fp16] {
            let file = dir.join(catalogue::file_name(d, p).unwrap());
            let shared = std::fs::read_to_string(&file).unwrap();
            assert!(
                shared == catalogue::builtin_text(d, p).unwrap(),
                "{} differs: run tools/gen_data.sh",
                file.display()
            );
            let from_file = catalogue::load_cached(Some(&dir), d, p).unwrap();
            let built_in = catalogue::load_cached(None, d, p).unwrap();
            let names =
                |c: &catalogue::Catalogue| c.instances.iter().map(|i| i.type_string.clone()).collect::<Vec<_>>();
            assert_eq!(names(&from_file), names(&built_in));
        }
    }
    // BF16 has no list, built in or not: the error says so.
    let e = catalogue::builtin_text(Direction::Forward, Precision::Bf16)
        .unwrap_err()
        .to_string();
    assert!(e.contains("BF16"), "{e}");
}

#[test]
fn the_miopen_351_catalogue_built_in_is_the_one_its_databases_give() {
    let data = common::miopen_dir();
    let built = CkIndex::build(&data, &read_text).unwrap();
    assert!(built.missing.is_empty(), "{:?}", built.missing);
    let text = tuned_only_text(&built);
    assert!(
        text == BUILTIN_TUNED_ONLY,
        "src/solvers/ck/data/miopen351_instances.tsv differs: run tools/gen_data.sh"
    );
    // Every (solver, type) catalogue: the same instances in the same order (the models' token
    // ids are positions in it).
    let builtin = CkIndex::builtin().unwrap();
    assert_eq!(
        built.catalogues.keys().collect::<Vec<_>>(),
        builtin.catalogues.keys().collect::<Vec<_>>()
    );
    let mut tuned_only = 0;
    for (key, a) in &built.catalogues {
        let b = &builtin.catalogues[key];
        assert_eq!(a.entries.len(), b.entries.len(), "{key:?}");
        for (x, y) in a.entries.iter().zip(&b.entries) {
            assert_eq!((&x.instance, x.tsv_index), (&y.instance, y.tsv_index), "{key:?}");
            tuned_only += usize::from(x.tsv_index.is_none());
        }
    }
    // The file's lines past its header, one per instance on no reachable list.
    assert_eq!(tuned_only, BUILTIN_TUNED_ONLY.lines().count() - 1);
    assert!(tuned_only > 1000, "{tuned_only}");
}
