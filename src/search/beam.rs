//! The constrained beam search (arXiv 2404.10162), batched over problems.
//!
//! Score of a hypothesis = sum of log-softmax (over the full vocabulary) of its tokens. At each
//! step the candidates of a problem are every (hypothesis, token) whose value is not "-1", that
//! the solver accepts after the hypothesis's prefix, and whose new prefix can still be completed
//! to a full valid config (look-ahead). Candidates giving the same value prefix are merged (the
//! best score survives); the best `width` by [`rank_cmp`] continue. Width 1 therefore equals
//! MIOpen's greedy answer whenever greedy succeeds.

use super::States;
use super::{rank_cmp, Constraint, Hypothesis, Vocabulary};
use super::{DecoderScratch, StepDecoder};
use crate::cpu;

struct Candidate {
    score: f32,
    raw: f32,
    token: u32,
    value: u32,
    parent: usize,
}

/// One live hypothesis of a problem as an iteration of the beam reads it: the hypothesis, its
/// row's raw scores and their log-softmax (`[vocab]` each).
pub struct BeamRow<'a> {
    pub hyp: &'a Hypothesis,
    pub scores: &'a [f32],
    pub log_probs: &'a [f32],
}

/// Work buffers of [`beam_iteration`], kept between calls.
#[derive(Default)]
pub struct BeamScratch {
    accepted: Vec<Option<bool>>,
    candidates: Vec<Candidate>,
}

/// One iteration of the constrained beam for one problem: the CPU twin of `beam_step.wgsl`.
/// Candidates are every (row, token) whose value is not "-1" and that `constraint` accepts after
/// the row's prefix, with a log-probability that is not NaN, scored by the row's score plus it;
/// they are taken in [`rank_cmp`] order (higher score, higher raw score, larger token), ties
/// to the lower row, skipping value prefixes already kept and prefixes that cannot be
/// completed, until `width` are kept. Returns each kept child with its parent (an index into
/// `rows`), best first.
pub fn beam_iteration(
    rows: &[BeamRow<'_>],
    vocab: &Vocabulary,
    constraint: &dyn Constraint,
    width: usize,
    scratch: &mut BeamScratch,
) -> Vec<(usize, Hypothesis)> {
    let BeamScratch { accepted, candidates } = scratch;
    accepted.resize(vocab.values.len(), None);
    candidates.clear();
    for (row, r) in rows.iter().enumerate() {
        accepted.iter_mut().for_each(|a| *a = None);
        for (t, (&lp, &raw)) in r.log_probs.iter().zip(r.scores).enumerate() {
            if vocab.is_end(t) {
                continue;
            }
            let value = vocab.token_value[t];
            let ok = *accepted[value as usize].get_or_insert_with(|| constraint.accepts(&r.hyp.values, value));
            if ok && !lp.is_nan() {
                candidates.push(Candidate {
                    score: r.hyp.score + lp,
                    raw,
                    token: t as u32,
                    value,
                    parent: row,
                });
            }
        }
    }
    candidates.sort_unstable_by(|a, b| {
        rank_cmp((a.score, a.raw, a.token), (b.score, b.raw, b.token)).then(a.parent.cmp(&b.parent))
    });
    let mut kept: Vec<(usize, Hypothesis)> = Vec::with_capacity(width);
    for cand in candidates.iter() {
        if kept.len() == width {
            break;
        }
        let parent = rows[cand.parent].hyp;
        let mut values = Vec::with_capacity(parent.values.len() + 1);
        values.extend_from_slice(&parent.values);
        values.push(cand.value);
        if kept.iter().any(|(_, h)| h.values == values) || !constraint.completable(&values) {
            continue;
        }
        let mut tokens = Vec::with_capacity(parent.tokens.len() + 1);
        tokens.extend_from_slice(&parent.tokens);
        tokens.push(cand.token);
        kept.push((
            cand.parent,
            Hypothesis {
                tokens,
                values,
                score: cand.score,
            },
        ));
    }
    kept
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
    let mut scratch_beam = BeamScratch::default();
    while !live.is_empty() {
        decoder.step(&feed, &mut states, &mut scores, &mut scratch);
        log_probs.resize(scores.len(), 0.0);
        cpu::log_softmax_rows(&scores, &mut log_probs, live.len(), v);
        let mut next_live: Vec<(usize, Hypothesis)> = Vec::with_capacity(live.len());
        let mut parents: Vec<usize> = Vec::with_capacity(live.len());
        let mut rows: Vec<BeamRow<'_>> = Vec::with_capacity(width);
        let mut start = 0;
        while start < live.len() {
            let p = live[start].0;
            let end = start + live[start..].iter().take_while(|(q, _)| *q == p).count();
            rows.clear();
            rows.extend((start..end).map(|row| BeamRow {
                hyp: &live[row].1,
                scores: &scores[row * v..(row + 1) * v],
                log_probs: &log_probs[row * v..(row + 1) * v],
            }));
            for (parent, hyp) in beam_iteration(&rows, vocab, constraints[p], width, &mut scratch_beam) {
                if hyp.values.len() >= constraints[p].config_len(&hyp.values) {
                    finished[p].push(hyp);
                } else {
                    next_live.push((p, hyp));
                    parents.push(start + parent);
                }
            }
            start = end;
        }
        drop(rows);
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
