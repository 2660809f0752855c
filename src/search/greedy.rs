//! MIOpen's greedy walk (`KernelTuningNet` decoding, width 1, value-based constraint).
//!
//! At each position the tokens are ranked by raw score (ties: larger token id first) and walked
//! down: a token whose value is "-1" fails the whole prediction; the first token whose value the
//! solver accepts is taken and fed to the next step.

use super::States;
use super::{rank_cmp, Constraint, Hypothesis, Vocabulary};
use super::{DecoderScratch, StepDecoder};
use crate::cpu;

/// One position of MIOpen's walk for one row: the CPU twin of `greedy_step.wgsl`. The tokens
/// are ranked by raw score (`raw`, `[vocab]`; ties to the larger token id) and walked down: an
/// end token ("-1") fails the walk, the first token whose value `constraint` accepts after
/// `prefix` (MIOpen's check) is taken. A NaN score fails the row. Returns the (token, value)
/// taken, or None where the walk fails; `order` is scratch.
pub fn greedy_position(
    raw: &[f32],
    vocab: &Vocabulary,
    constraint: &dyn Constraint,
    prefix: &[u32],
    order: &mut Vec<u32>,
) -> Option<(u32, u32)> {
    if raw.iter().any(|s| s.is_nan()) {
        return None;
    }
    order.clear();
    order.extend(0..raw.len() as u32);
    order.sort_unstable_by(|&a, &b| rank_cmp((raw[a as usize], 0.0, a), (raw[b as usize], 0.0, b)));
    for &t in order.iter() {
        if vocab.is_end(t as usize) {
            return None;
        }
        let value = vocab.token_value[t as usize];
        if constraint.accepts_miopen(prefix, value) {
            return Some((t, value));
        }
    }
    None
}

/// Decodes every problem of a batch greedily. `init` holds one row of encoder states per
/// problem. Returns, per problem, the hypothesis or `None` where MIOpen's walk fails.
pub fn greedy_miopen(
    decoder: &dyn StepDecoder,
    vocab: &Vocabulary,
    init: States,
    constraints: &[&dyn Constraint],
) -> Vec<Option<Hypothesis>> {
    let problems = init.batch;
    assert_eq!(constraints.len(), problems, "one constraint per problem");
    let v = decoder.vocab_size();
    let mut results: Vec<Option<Hypothesis>> = vec![None; problems];
    let mut running: Vec<Hypothesis> = (0..problems)
        .map(|_| Hypothesis {
            tokens: Vec::new(),
            values: Vec::new(),
            score: 0.0,
        })
        .collect();
    // rows[i] = the problem decoded in row i of `states`.
    let mut rows: Vec<usize> = (0..problems).collect();
    let mut spare = init.empty_like();
    let mut states = init;
    let mut feed: Vec<u32> = vec![0; problems];
    let (mut scores, mut log_probs) = (Vec::new(), Vec::new());
    let mut scratch = DecoderScratch::default();
    let mut order: Vec<u32> = Vec::with_capacity(v);
    while !rows.is_empty() {
        decoder.step(&feed, &mut states, &mut scores, &mut scratch);
        log_probs.resize(scores.len(), 0.0);
        cpu::log_softmax_rows(&scores, &mut log_probs, rows.len(), v);
        let mut keep: Vec<usize> = Vec::with_capacity(rows.len());
        for (row, &p) in rows.iter().enumerate() {
            let raw = &scores[row * v..(row + 1) * v];
            let hyp = &mut running[p];
            let taken = greedy_position(raw, vocab, constraints[p], &hyp.values, &mut order);
            let Some((t, value)) = taken else { continue };
            hyp.tokens.push(t);
            hyp.values.push(value);
            hyp.score += log_probs[row * v + t as usize];
            if hyp.values.len() >= constraints[p].config_len(&hyp.values) {
                results[p] = Some(hyp.clone());
            } else {
                feed[keep.len()] = t;
                keep.push(row);
            }
        }
        if keep.len() != rows.len() {
            spare.gather_from(&states, &keep);
            std::mem::swap(&mut states, &mut spare);
            rows = keep.iter().map(|&r| rows[r]).collect();
            feed.truncate(rows.len());
        }
    }
    results
}
