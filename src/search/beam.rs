//! The constrained beam search (arXiv 2404.10162), batched over problems.
//!
//! Score of a hypothesis = sum of log-softmax (over the full vocabulary) of its tokens. At each
//! step the candidates of a problem are every (hypothesis, token) whose value is not "-1", that
//! the solver accepts after the hypothesis's prefix, and whose new prefix can still be completed
//! to a full valid config (look-ahead). Candidates giving the same value prefix are merged (the
//! best score survives); the best `width` by [`rank_cmp`] continue. Width 1 therefore equals
//! MIOpen's greedy answer whenever greedy succeeds.

use super::{rank_cmp, Constraint, Hypothesis, Vocabulary};
use super::{DecoderScratch, StepDecoder};
use crate::cpu;
use crate::seq2seq::States;

struct Candidate {
    score: f32,
    raw: f32,
    token: u32,
    value: u32,
    parent: usize,
}

/// Beam search of width `width` for every problem of a batch (`init`: one row per problem).
/// Returns, per problem, up to `top` complete hypotheses, best first (empty when no valid
/// config exists).
pub fn beam_search(
    decoder: &dyn StepDecoder,
    vocab: &Vocabulary,
    init: States,
    constraints: &[&dyn Constraint],
    width: usize,
    top: usize,
) -> Vec<Vec<Hypothesis>> {
    let problems = init.batch;
    assert_eq!(constraints.len(), problems, "one constraint per problem");
    let width = width.max(1);
    let v = decoder.vocab_size();
    let mut finished: Vec<Vec<Hypothesis>> = vec![Vec::new(); problems];
    // Live hypotheses: (problem, hypothesis); row i of `states` belongs to live[i].
    let mut live: Vec<(usize, Hypothesis)> = (0..problems)
        .map(|p| {
            (
                p,
                Hypothesis {
                    tokens: Vec::new(),
                    values: Vec::new(),
                    score: 0.0,
                },
            )
        })
        .collect();
    // Problems whose empty prefix cannot be completed have no answer at all.
    live.retain(|(p, h)| constraints[*p].completable(&h.values));
    let first_rows: Vec<usize> = live.iter().map(|(p, _)| *p).collect();
    let mut states = init.empty_like();
    states.gather_from(&init, &first_rows);
    let mut spare = init.empty_like();
    let mut feed: Vec<u32> = vec![0; live.len()];
    let (mut scores, mut log_probs) = (Vec::new(), Vec::new());
    let mut scratch = DecoderScratch::default();
    let mut accepted: Vec<Option<bool>> = vec![None; vocab.values.len()];
    let mut candidates: Vec<Candidate> = Vec::new();
    while !live.is_empty() {
        decoder.step(&feed, &mut states, &mut scores, &mut scratch);
        log_probs.resize(scores.len(), 0.0);
        cpu::log_softmax_rows(&scores, &mut log_probs, live.len(), v);
        let mut next_live: Vec<(usize, Hypothesis)> = Vec::with_capacity(live.len());
        let mut parents: Vec<usize> = Vec::with_capacity(live.len());
        let mut start = 0;
        while start < live.len() {
            let p = live[start].0;
            let end = start + live[start..].iter().take_while(|(q, _)| *q == p).count();
            candidates.clear();
            for row in start..end {
                let hyp = &live[row].1;
                accepted.iter_mut().for_each(|a| *a = None);
                for t in 0..v {
                    if vocab.is_end(t) {
                        continue;
                    }
                    let value = vocab.token_value[t];
                    let ok =
                        *accepted[value as usize].get_or_insert_with(|| constraints[p].accepts(&hyp.values, value));
                    let lp = log_probs[row * v + t];
                    if ok && !lp.is_nan() {
                        candidates.push(Candidate {
                            score: hyp.score + lp,
                            raw: scores[row * v + t],
                            token: t as u32,
                            value,
                            parent: row,
                        });
                    }
                }
            }
            candidates.sort_unstable_by(|a, b| rank_cmp((a.score, a.raw, a.token), (b.score, b.raw, b.token)));
            let mut kept = 0;
            let mut kept_prefixes: Vec<Vec<u32>> = Vec::with_capacity(width);
            for cand in &candidates {
                if kept == width {
                    break;
                }
                let parent = &live[cand.parent].1;
                let mut values = parent.values.clone();
                values.push(cand.value);
                if kept_prefixes.contains(&values) || !constraints[p].completable(&values) {
                    continue;
                }
                kept_prefixes.push(values.clone());
                kept += 1;
                let mut tokens = parent.tokens.clone();
                tokens.push(cand.token);
                let hyp = Hypothesis {
                    tokens,
                    values,
                    score: cand.score,
                };
                if hyp.values.len() >= constraints[p].config_len(&hyp.values) {
                    finished[p].push(hyp);
                } else {
                    next_live.push((p, hyp));
                    parents.push(cand.parent);
                }
            }
            start = end;
        }
        spare.gather_from(&states, &parents);
        std::mem::swap(&mut states, &mut spare);
        feed.clear();
        feed.extend(next_live.iter().map(|(_, h)| *h.tokens.last().unwrap_or(&0)));
        live = next_live;
    }
    for list in &mut finished {
        list.sort_by(|a, b| {
            rank_cmp(
                (a.score, 0.0, *a.tokens.last().unwrap_or(&0)),
                (b.score, 0.0, *b.tokens.last().unwrap_or(&0)),
            )
        });
        list.truncate(top);
    }
    finished
}
