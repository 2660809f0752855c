//! The catalogue constraint on hand-made tables: strict acceptance (beam search), MIOpen's
//! quirks (greedy walk), answers, and the prefix cache.

use std::sync::Arc;

use tuneinfer::search::Constraint;
use tuneinfer::solvers::ck::constraint::{CandidateTable, CatalogueConstraint, Lengths, MiopenFirst, NO_VALUE};

/// Value ids: 0 "-1", 1 type A, 2 type B, 3 "64", 4 "32", 5 "8", 6 "1", 7 "2".
fn table() -> CandidateTable {
    let mut t = CandidateTable::new(4);
    t.answers = Arc::new(vec![
        "A<64,8>".into(),
        "A<32,8>".into(),
        "B<64,8,x>+1".into(),
        "B<64,8,x>+2".into(),
    ]);
    t.push(&[1, 3, 5], 0, None); // type A: 3 values
    t.push(&[1, 4, 5], 1, None);
    t.push(&[2, 3, 5, 6], 2, Some(3)); // type B: 4 values, split-k at position 3
    t.push(&[2, 3, 5, 7], 3, Some(3));
    t
}

fn lengths() -> Lengths {
    Lengths::ByFirstValue(vec![0, 3, 4, 0, 0, 0, 0, 0])
}

#[test]
fn strict_acceptance_follows_the_rows() {
    let c = CatalogueConstraint::new(table(), lengths(), None);
    assert_eq!(c.config_len(&[]), 1);
    assert_eq!(c.config_len(&[1]), 3);
    assert_eq!(c.config_len(&[2]), 4);
    assert!(c.accepts(&[], 1) && c.accepts(&[], 2));
    assert!(!c.accepts(&[], 3), "not a type");
    assert!(c.accepts(&[1], 3) && c.accepts(&[1], 4) && !c.accepts(&[1], 5));
    assert!(c.accepts(&[2, 3, 5], 6) && c.accepts(&[2, 3, 5], 7) && !c.accepts(&[2, 3, 5], 5));
    assert!(!c.accepts(&[1, 3, 5], 6), "past the row's end");
    assert!(c.completable(&[]) && c.completable(&[1, 4]) && !c.completable(&[1, 5]));
    assert_eq!(c.config_text(&[1, 4, 5]).as_deref(), Some("A<32,8>"));
    assert_eq!(c.config_text(&[2, 3, 5, 7]).as_deref(), Some("B<64,8,x>+2"));
    assert_eq!(c.config_text(&[1, 5, 5]), None);
}

#[test]
fn miopen_rejects_split_k_and_filters_first_values_by_substring() {
    let answers = vec![None, None, None, Some("A<64,8>".to_string()), None, None, None, None];
    let c = CatalogueConstraint::new(table(), lengths(), Some(MiopenFirst::Substring(answers)));
    assert!(c.accepts_miopen(&[], 1) && c.accepts_miopen(&[], 3) && !c.accepts_miopen(&[], 4));
    // A value that is not a type ends the walk (length 0); MIOpen answers the first instance
    // whose name contains it.
    assert_eq!(c.config_len(&[3]), 0);
    assert_eq!(c.config_text(&[3]).as_deref(), Some("A<64,8>"));
    assert!(c.accepts_miopen(&[2, 3], 5));
    assert!(
        !c.accepts_miopen(&[2, 3, 5], 6) && !c.accepts_miopen(&[2, 3, 5], 7),
        "split-k never matches"
    );
    assert!(c.accepts(&[2, 3, 5], 6), "the beam's strict rule does accept it");
}

#[test]
fn miopen_wrw_accepts_any_first_value() {
    let c = CatalogueConstraint::new(table(), lengths(), Some(MiopenFirst::Any));
    for v in 1..8 {
        assert!(c.accepts_miopen(&[], v));
    }
    assert_eq!(
        c.config_text(&[5]).as_deref(),
        Some(""),
        "MIOpen leaves the kernel id empty"
    );
    let empty = CatalogueConstraint::new(CandidateTable::new(4), lengths(), Some(MiopenFirst::Any));
    assert!(!empty.accepts_miopen(&[], 1), "no supported instance at all");
    assert!(!empty.completable(&[]));
}

#[test]
fn prefix_cache_gives_the_same_answers_in_any_order() {
    let c = CatalogueConstraint::new(table(), lengths(), None);
    let fresh = || CatalogueConstraint::new(table(), lengths(), None);
    let prefixes: [&[u32]; 7] = [&[1], &[2, 3], &[1, 4], &[], &[2, 3, 5], &[1, 3], &[2]];
    for _ in 0..3 {
        for p in prefixes {
            for v in 0..9 {
                assert_eq!(c.accepts(p, v), fresh().accepts(p, v), "{p:?} {v}");
            }
            assert_eq!(c.completable(p), fresh().completable(p), "{p:?}");
        }
    }
    assert_eq!(table().row(2), &[2, 3, 5, 6]);
    let mut short = CandidateTable::new(4);
    short.push(&[1, 3], 0, None);
    assert_eq!(short.row(0), &[1, 3, NO_VALUE, NO_VALUE]);
    let fixed = CatalogueConstraint::new(short, Lengths::Fixed(2), None);
    assert_eq!(fixed.config_len(&[]), 2);
    assert!(fixed.accepts(&[], 1) && fixed.accepts(&[1], 3) && !fixed.accepts(&[1, 3], 3));
}
