//! Hand-derived cases for the greedy walk and the beam search, on a toy decoder whose scores
//! are a fixed table per step (so every expected answer can be worked out on paper).

use super::*;
use crate::search::{DecoderScratch, States, StepDecoder};

/// Scores for step s are `table[s]` whatever the input token; the step counter lives in the
/// states' side buffer so beam reordering carries it.
struct TableDecoder {
    table: Vec<Vec<f32>>,
}

impl StepDecoder for TableDecoder {
    fn vocab_size(&self) -> usize {
        self.table[0].len()
    }

    fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, _: &mut DecoderScratch) {
        let v = self.vocab_size();
        scores.clear();
        for (row, _) in tokens.iter().enumerate() {
            let step = states.extra[0][row] as usize;
            scores.extend_from_slice(&self.table[step.min(self.table.len() - 1)]);
            states.extra[0][row] += 1.0;
        }
        assert_eq!(scores.len(), tokens.len() * v);
    }
}

/// Two positions; value texts "1","2","3" by id; `rejected[pos]` lists values the solver
/// refuses there; `dead_ends` lists first values that are accepted but cannot be completed.
struct ToyConstraint {
    vocab: Vocabulary,
    rejected: Vec<Vec<&'static str>>,
    dead_ends: Vec<&'static str>,
}

impl Constraint for ToyConstraint {
    fn config_len(&self, _: &[u32]) -> usize {
        2
    }

    fn accepts(&self, chosen: &[u32], value: u32) -> bool {
        let text = self.vocab.values[value as usize].as_str();
        text != "-1" && !self.rejected[chosen.len()].contains(&text)
    }

    fn completable(&self, chosen: &[u32]) -> bool {
        !(chosen.len() == 1 && self.dead_ends.contains(&self.vocab.values[chosen[0] as usize].as_str()))
    }
}

fn vocab() -> Vocabulary {
    // Token ids:          0     1    2    3    4
    let values = ["-1", "1", "2", "1", "3"].map(String::from);
    Vocabulary::from_token_values(&values)
}

fn states(problems: usize) -> States {
    States::zeros_with_extra(&[1], &[1], problems)
}

fn texts(v: &Vocabulary, h: &Hypothesis) -> Vec<String> {
    h.values.iter().map(|&x| v.values[x as usize].clone()).collect()
}

fn toy(rejected: Vec<Vec<&'static str>>, dead_ends: Vec<&'static str>) -> ToyConstraint {
    ToyConstraint {
        vocab: vocab(),
        rejected,
        dead_ends,
    }
}

#[test]
fn greedy_takes_the_best_accepted_value_and_ties_go_to_the_larger_token() {
    let v = vocab();
    // Step 0: token 2 ("2") is best but rejected at position 0; tokens 1 and 3 (both "1") tie
    // next: the larger id, 3, is taken. Step 1: token 4 ("3") is best.
    let dec = TableDecoder {
        table: vec![vec![0.0, 2.0, 5.0, 2.0, 1.0], vec![0.0, 1.0, 1.0, 1.0, 3.0]],
    };
    let c = toy(vec![vec!["2"], vec![]], vec![]);
    let got = greedy_miopen(&dec, &v, states(1), &[&c]);
    let h = got[0].as_ref().expect("greedy succeeds");
    assert_eq!(h.tokens, vec![3, 4]);
    assert_eq!(texts(&v, h), ["1", "3"]);
}

#[test]
fn greedy_fails_when_minus_one_outranks_every_accepted_value() {
    let v = vocab();
    // Step 0: "2" is rejected, then token 0 ("-1") comes before "1" and "3": MIOpen fails.
    let dec = TableDecoder {
        table: vec![vec![4.0, 1.0, 5.0, 1.0, 0.5]],
    };
    let c = toy(vec![vec!["2"], vec![]], vec![]);
    assert_eq!(greedy_miopen(&dec, &v, states(1), &[&c]), vec![None]);
}

#[test]
fn beam_merges_equal_value_prefixes_and_looks_ahead() {
    let v = vocab();
    // Step 0 scores: "1" via token 1 (3.0) and token 3 (2.9) are the same prefix -> one
    // hypothesis; "3" (token 4, 2.8) is accepted but a dead end; "2" (token 2, 1.0) survives.
    let dec = TableDecoder {
        table: vec![vec![9.0, 3.0, 1.0, 2.9, 2.8], vec![0.0, 2.0, 1.0, 0.0, 0.0]],
    };
    let c = toy(vec![vec![], vec![]], vec!["3"]);
    let got = beam_search(&dec, &v, states(1), &[&c], 2, 2);
    let got: Vec<Vec<String>> = got[0].iter().map(|h| texts(&v, h)).collect();
    // Step 1 gives both parents the same scores, so with a = 3, b = 1 (step 0, minus the same
    // log-sum) and x = 2, y = 1 (step 1): [1,1] = a+x = 5, [1,2] = a+y = 4, [2,1] = b+x = 3.
    assert_eq!(got, vec![vec!["1", "1"], vec!["1", "2"]]);
}

#[test]
fn beam_scores_are_sums_of_log_softmax() {
    let v = vocab();
    let dec = TableDecoder {
        table: vec![vec![0.0, 1.0, 0.0, 0.0, 0.0], vec![0.0, 0.0, 2.0, 0.0, 0.0]],
    };
    let c = toy(vec![vec![], vec![]], vec![]);
    let got = beam_search(&dec, &v, states(1), &[&c], 3, 1);
    let best = &got[0][0];
    assert_eq!(texts(&v, best), ["1", "2"]);
    // log-softmax of 1 among (0,1,0,0,0) plus of 2 among (0,0,2,0,0), worked out in f64.
    let l0 = 1.0 - (4.0 + 1f64.exp()).ln();
    let l1 = 2.0 - (4.0 + 2f64.exp()).ln();
    assert!(
        (best.score as f64 - (l0 + l1)).abs() < 1e-5,
        "{} vs {}",
        best.score,
        l0 + l1
    );
}

#[test]
fn beam_width_one_equals_greedy_and_batches_are_independent() {
    let v = vocab();
    let dec = TableDecoder {
        table: vec![vec![0.0, 2.0, 5.0, 2.0, 1.0], vec![0.0, 1.0, 1.0, 1.0, 3.0]],
    };
    let picky = toy(vec![vec!["2"], vec![]], vec![]);
    let open = toy(vec![vec![], vec!["3"]], vec![]);
    let greedy = greedy_miopen(&dec, &v, states(2), &[&picky, &open]);
    let beam = beam_search(&dec, &v, states(2), &[&picky, &open], 1, 1);
    for p in 0..2 {
        let g = greedy[p].as_ref().unwrap();
        assert_eq!(g.tokens, beam[p][0].tokens, "problem {p}");
    }
    assert_eq!(texts(&v, &beam[1][0]), ["2", "1"]);
}

#[test]
fn a_problem_without_any_valid_config_gets_nothing() {
    let v = vocab();
    let dec = TableDecoder {
        table: vec![vec![0.0, 1.0, 1.0, 1.0, 1.0]],
    };
    let none = toy(vec![vec!["1", "2", "3"], vec![]], vec![]);
    assert!(beam_search(&dec, &v, states(1), &[&none], 4, 4)[0].is_empty());
    assert_eq!(greedy_miopen(&dec, &v, states(1), &[&none]), vec![None]);
}
