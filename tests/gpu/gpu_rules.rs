//! The WGSL twin of ConvAsm1x1U's partial-validity rules (`shaders/conv_asm_1x1u_rules.wgsl`)
//! against `Rules::prefix_valid` over many random prefixes and problems (random and from the
//! perf-dbs), both outcomes well represented.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::perfdb;
use tuneinfer::format::metadata::KtnMetadata;
use tuneinfer::gpu::kernels::host;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::{Rules, NAME};
use tuneinfer::testutil::Lcg;

/// Plausible values per position (so that long prefixes are often valid), plus junk.
const PLAUSIBLE: [&[i64]; 8] = [
    &[1, 2, 3, 4],
    &[1, 4, 8, 12, 16, 20, 24, 28, 32],
    &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    &[1, 2, 4, 8, 16, 32, 64],
    &[1, 2, 3, 4, 5, 6, 7, 8],
    &[1, 2, 4, 8, 16, 32],
    &[1, 2, 3, 4, 5, 6, 7, 8],
    &[1, 2, 4, 8],
];
const JUNK: &[i64] = &[-7, -1, 0, 5, 9, 17, 33, 63, 64, 65, 100, 128];

fn random_problem(rng: &mut Lcg) -> ConvProblem {
    let pick = |rng: &mut Lcg, v: &[u64]| v[rng.below(v.len() as u64) as usize];
    let c = pick(rng, &[1, 3, 4, 5, 16, 64, 65, 256, 1000, 2048]);
    let k = pick(rng, &[1, 2, 4, 6, 8, 32, 128, 250, 512]);
    let hw = pick(rng, &[1, 2, 3, 7, 14, 28, 56, 112]);
    let n = pick(rng, &[1, 2, 3, 16, 64, 100, 256]);
    let prec = if rng.below(2) == 0 { "FP32" } else { "FP16" };
    let dir = if rng.below(2) == 0 { "F" } else { "B" };
    let key = format!("{c}-{hw}-{hw}-1x1-{k}-{hw}-{hw}-{n}-0x0-1x1-1x1-0-NCHW-{prec}-{dir}");
    ConvProblem::from_perfdb_key(&key).expect("valid key")
}

#[test]
fn wgsl_rules_match_cpu_rules() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut rng = Lcg::new(99);
    let mut problems: Vec<ConvProblem> = (0..200).map(|_| random_problem(&mut rng)).collect();
    for db in ["gfx900_56.db", "gfx906_60.db"] {
        if let Ok(rows) = perfdb::solver_rows(&common::perfdb_dir().join(db), NAME) {
            problems.extend(rows.rows.into_iter().take(100).map(|r| r.problem));
        }
    }
    let mut cases: Vec<([i32; 8], [i32; 8], u32)> = Vec::new();
    let mut prefixes: Vec<(Rules, Vec<i64>)> = Vec::new();
    for p in &problems {
        let rules = Rules::new(p);
        for _ in 0..100 {
            let len = if rng.below(3) == 0 { 8 } else { rng.below(9) as usize };
            let prefix: Vec<i64> = (0..len)
                .map(|i| {
                    if rng.below(12) == 0 {
                        JUNK[rng.below(JUNK.len() as u64) as usize]
                    } else {
                        PLAUSIBLE[i][rng.below(PLAUSIBLE[i].len() as u64) as usize]
                    }
                })
                .collect();
            let mut words = [0i32; 8];
            for (w, &v) in words.iter_mut().zip(&prefix) {
                *w = v as i32;
            }
            cases.push((rules.gpu_words(), words, len as u32));
            prefixes.push((rules.clone(), prefix));
        }
    }
    // The gfx908 model's accepted values, as the beam search's look-ahead uses them.
    let meta =
        KtnMetadata::load(&common::models_dir().join("gfx908_ConvAsm1x1U_metadata.ktn.model")).expect("metadata");
    let mut domain: Vec<i64> = meta
        .token_values
        .iter()
        .filter_map(|s| s.trim().parse::<i64>().ok())
        .filter(|&v| v != -1)
        .collect();
    domain.sort_unstable();
    domain.dedup();
    let domain32: Vec<i32> = domain.iter().map(|&v| v as i32).collect();
    let got = host::rules_check(&ctx, "conv_asm_1x1u_rules", &cases, &domain32).expect("rules_check");
    let (mut valid_full, mut valid, mut completable, mut dead_ends) = (0, 0, 0, 0);
    for ((rules, prefix), &(g_valid, g_completable)) in prefixes.iter().zip(&got) {
        let want = rules.prefix_valid(prefix);
        assert_eq!(g_valid, want, "prefix {prefix:?} with rules {:?}", rules.gpu_words());
        let want_c = rules.completable(prefix, &domain);
        assert_eq!(
            g_completable,
            want_c,
            "look-ahead of {prefix:?} with rules {:?}",
            rules.gpu_words()
        );
        valid += usize::from(want);
        valid_full += usize::from(want && prefix.len() == 8);
        completable += usize::from(want_c);
        dead_ends += usize::from(want && !want_c);
    }
    println!(
        "{} cases, {valid} valid, {valid_full} valid full configs, {completable} completable, {dead_ends} valid dead ends",
        cases.len()
    );
    assert!(
        dead_ends > 100,
        "the look-ahead's failures must be covered ({dead_ends})"
    );
    assert!(
        valid > cases.len() / 5 && valid < cases.len() * 4 / 5,
        "both outcomes must be well covered"
    );
    assert!(valid_full > 50, "full configs must be covered ({valid_full})");
}

/// greedy_step.wgsl against MIOpen's walk written out by hand (rank by raw score, ties to the
/// larger token id; "-1" fails; the first accepted value is taken), on scores drawn from four
/// levels so that ties are everywhere, prefixes of every length, finished rows and NaN rows.
#[test]
fn greedy_step_matches_the_miopen_walk_with_ties() {
    use tuneinfer::search::{Constraint, Vocabulary};
    use tuneinfer::solvers::conv_asm_1x1u::constraint as asm_constraint;
    let Some(ctx) = common::gpu() else {
        return;
    };
    let meta =
        KtnMetadata::load(&common::models_dir().join("gfx908_ConvAsm1x1U_metadata.ktn.model")).expect("metadata");
    let vocab = Vocabulary::from_token_values(&meta.token_values);
    let v = vocab.len();
    let max_len = 8;
    let words = 2 * max_len + 4;
    let mut rng = Lcg::new(7);
    let problems = tuneinfer::workload::asm1x1u_problems(60, 3);
    let (mut rules, mut hyp, mut scores, mut logp) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut constraints = Vec::new();
    for p in &problems {
        let c = asm_constraint(p, &vocab);
        for _ in 0..10 {
            // A random accepted prefix.
            let want_len = rng.below(8) as usize;
            let (mut tokens, mut values) = (Vec::new(), Vec::new());
            while tokens.len() < want_len {
                let ok: Vec<usize> = (0..v)
                    .filter(|&t| !vocab.is_end(t) && c.accepts(&values, vocab.token_value[t]))
                    .collect();
                if ok.is_empty() {
                    break;
                }
                let t = ok[rng.below(ok.len() as u64) as usize];
                tokens.push(t as u32);
                values.push(vocab.token_value[t]);
            }
            let mut h = vec![0u32; words];
            h[..tokens.len()].copy_from_slice(&tokens);
            h[max_len..max_len + values.len()].copy_from_slice(&values);
            h[2 * max_len] = tokens.len() as u32;
            h[2 * max_len + 1] = [0, 0, 0, 0, 0, 0, 0, 1, 2][rng.below(9) as usize];
            h[2 * max_len + 2] = (-(rng.next_f32() * 3.0)).to_bits();
            hyp.extend_from_slice(&h);
            let nan_row = rng.below(25) == 0;
            for t in 0..v {
                scores.push(if nan_row && t == 5 {
                    f32::NAN
                } else {
                    rng.below(4) as f32
                });
                logp.push(-rng.next_f32() * 4.0);
            }
            rules.push(tuneinfer::solvers::conv_asm_1x1u::Rules::new(p).gpu_words());
            constraints.push(c.clone());
        }
    }
    let words32 = tuneinfer::gpu::vocab_words(&vocab);
    let step = host::SearchStepInputs {
        rules_library: "conv_asm_1x1u_rules",
        scores: &scores,
        logp: &logp,
        vocab_words: &words32,
        rules: &rules,
        tables: &[],
        hyp: &hyp,
        vocab: v,
        max_len,
    };
    let (out, feed) = host::greedy_step(&ctx, &step).expect("kernel");
    let (mut taken, mut failed) = (0, 0);
    for (row, c) in constraints.iter().enumerate() {
        let h = &hyp[row * words..(row + 1) * words];
        let got = &out[row * words..(row + 1) * words];
        let len = h[2 * max_len] as usize;
        if h[2 * max_len + 1] != 0 {
            assert_eq!(got, h, "row {row}: a finished or failed row must be left alone");
            continue;
        }
        let raw = &scores[row * v..(row + 1) * v];
        let values: Vec<u32> = h[max_len..max_len + len].to_vec();
        let mut order: Vec<usize> = (0..v).collect();
        order.sort_by(|&a, &b| raw[b].total_cmp(&raw[a]).then(b.cmp(&a)));
        let mut pick = None;
        if raw.iter().all(|s| !s.is_nan()) {
            for t in order {
                if vocab.is_end(t) {
                    break;
                }
                if c.accepts(&values, vocab.token_value[t]) {
                    pick = Some(t);
                    break;
                }
            }
        }
        // The library's twin of the kernel (what the CPU search runs) takes the same token.
        let twin = tuneinfer::search::greedy_position(raw, &vocab, c, &values, &mut Vec::new());
        assert_eq!(
            twin.map(|(t, _)| t as usize),
            pick,
            "row {row}: search::greedy_position differs from the walk"
        );
        match pick {
            None => {
                failed += 1;
                assert_eq!(
                    got[2 * max_len + 1],
                    2,
                    "row {row}: the walk fails (nan {}, raw {raw:?}, got {got:?})",
                    raw.iter().any(|s| s.is_nan())
                );
            }
            Some(t) => {
                taken += 1;
                assert_eq!(got[len], t as u32, "row {row}: token");
                assert_eq!(got[max_len + len], vocab.token_value[t], "row {row}: value");
                assert_eq!(got[2 * max_len] as usize, len + 1);
                assert_eq!(got[2 * max_len + 1], u32::from(len + 1 >= max_len), "row {row}: status");
                let score = f32::from_bits(h[2 * max_len + 2]) + logp[row * v + t];
                assert_eq!(got[2 * max_len + 2], score.to_bits(), "row {row}: score");
                assert_eq!(feed[row], t as u32);
            }
        }
    }
    println!("{taken} rows took a token, {failed} failed");
    assert!(taken > 100 && failed > 5);
}

/// beam_step.wgsl against one iteration of the beam search written out by hand: candidates are
/// (live slot, token) with a non-"-1" value the rules accept and a non-NaN log-probability,
/// taken by (score, raw score, larger token, lower slot), skipping value prefixes already kept
/// and prefixes that cannot be completed, until `width` are kept. Scores come from few levels
/// so ties and merges are common.
#[test]
fn beam_step_matches_the_beam_iteration_with_ties() {
    use tuneinfer::search::{Constraint, Vocabulary};
    use tuneinfer::solvers::conv_asm_1x1u::constraint as asm_constraint;
    let Some(ctx) = common::gpu() else {
        return;
    };
    let meta =
        KtnMetadata::load(&common::models_dir().join("gfx908_ConvAsm1x1U_metadata.ktn.model")).expect("metadata");
    let vocab = Vocabulary::from_token_values(&meta.token_values);
    let (v, max_len, width) = (vocab.len(), 8usize, 4usize);
    let words = 2 * max_len + 4;
    let mut rng = Lcg::new(8);
    let problems = tuneinfer::workload::asm1x1u_problems(80, 9);
    let (mut rules, mut hyp, mut scores, mut logp, mut constraints) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for p in &problems {
        let c = asm_constraint(p, &vocab);
        // All live slots of a problem share one prefix length (as in the search).
        let len = rng.below(8) as usize;
        for slot in 0..width {
            let (mut tokens, mut values) = (Vec::new(), Vec::new());
            while tokens.len() < len {
                let ok: Vec<usize> = (0..v)
                    .filter(|&t| !vocab.is_end(t) && c.accepts(&values, vocab.token_value[t]))
                    .collect();
                if ok.is_empty() {
                    break;
                }
                // Few choices so that slots often share prefixes (merging).
                let t = ok[rng.below(ok.len().min(2) as u64) as usize];
                tokens.push(t as u32);
                values.push(vocab.token_value[t]);
            }
            let mut h = vec![0u32; words];
            h[..tokens.len()].copy_from_slice(&tokens);
            h[max_len..max_len + values.len()].copy_from_slice(&values);
            h[2 * max_len] = tokens.len() as u32;
            let dead = tokens.len() < len || (slot > 0 && rng.below(4) == 0);
            h[2 * max_len + 1] = if dead { 2 } else { 0 };
            h[2 * max_len + 2] = (-(rng.below(3) as f32) * 0.5).to_bits();
            hyp.extend_from_slice(&h);
            for _ in 0..v {
                scores.push(rng.below(3) as f32);
                logp.push(if rng.below(60) == 0 {
                    f32::NAN
                } else {
                    -(rng.below(4) as f32) * 0.25
                });
            }
        }
        rules.push(tuneinfer::solvers::conv_asm_1x1u::Rules::new(p).gpu_words());
        constraints.push(c);
    }
    let (words32, values, domain_len) = tuneinfer::gpu::beam_vocab_words(&vocab);
    let step = host::SearchStepInputs {
        rules_library: "conv_asm_1x1u_rules",
        scores: &scores,
        logp: &logp,
        vocab_words: &words32,
        rules: &rules,
        tables: &[],
        hyp: &hyp,
        vocab: v,
        max_len,
    };
    let (out, parents, feed) = host::beam_step(&ctx, &step, width, values, domain_len).expect("kernel");
    let (mut kept_total, mut merged) = (0, 0);
    for (p, c) in constraints.iter().enumerate() {
        let slot = |s: usize| &hyp[(p * width + s) * words..(p * width + s + 1) * words];
        // (score, raw, token, slot)
        let mut cands: Vec<(f32, f32, usize, usize)> = Vec::new();
        for s in 0..width {
            let h = slot(s);
            let len = h[2 * max_len] as usize;
            if h[2 * max_len + 1] != 0 || len >= max_len {
                continue;
            }
            let prefix = &h[max_len..max_len + len];
            for t in 0..v {
                let row = p * width + s;
                let lp = logp[row * v + t];
                if vocab.is_end(t) || lp.is_nan() || !c.accepts(prefix, vocab.token_value[t]) {
                    continue;
                }
                cands.push((f32::from_bits(h[2 * max_len + 2]) + lp, scores[row * v + t], t, s));
            }
        }
        cands.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(b.1.total_cmp(&a.1))
                .then(b.2.cmp(&a.2))
                .then(a.3.cmp(&b.3))
        });
        let mut kept: Vec<(Vec<u32>, usize, usize, f32)> = Vec::new();
        for &(score, _, t, s) in &cands {
            if kept.len() == width {
                break;
            }
            let h = slot(s);
            let len = h[2 * max_len] as usize;
            let mut values: Vec<u32> = h[max_len..max_len + len].to_vec();
            values.push(vocab.token_value[t]);
            if kept.iter().any(|k| k.0 == values) {
                merged += 1;
                continue;
            }
            if !c.completable(&values) {
                continue;
            }
            kept.push((values, t, s, score));
        }
        // The library's twin of the kernel (one iteration of search::beam_search) keeps the
        // same children in the same order.
        let live: Vec<(usize, tuneinfer::search::Hypothesis)> = (0..width)
            .filter_map(|s| {
                let h = slot(s);
                let len = h[2 * max_len] as usize;
                (h[2 * max_len + 1] == 0 && len < max_len).then(|| {
                    (
                        s,
                        tuneinfer::search::Hypothesis {
                            tokens: h[..len].to_vec(),
                            values: h[max_len..max_len + len].to_vec(),
                            score: f32::from_bits(h[2 * max_len + 2]),
                        },
                    )
                })
            })
            .collect();
        let rows: Vec<tuneinfer::search::BeamRow> = live
            .iter()
            .map(|(s, hyp)| {
                let row = p * width + s;
                tuneinfer::search::BeamRow {
                    hyp,
                    scores: &scores[row * v..(row + 1) * v],
                    log_probs: &logp[row * v..(row + 1) * v],
                }
            })
            .collect();
        let twin = tuneinfer::search::beam_iteration(&rows, &vocab, c, width, &mut Default::default());
        let twin: Vec<(Vec<u32>, usize, usize, f32)> = twin
            .into_iter()
            .map(|(parent, h)| {
                (
                    h.values,
                    *h.tokens.last().unwrap_or(&0) as usize,
                    live[parent].0,
                    h.score,
                )
            })
            .collect();
        assert_eq!(
            twin, kept,
            "problem {p}: search::beam_iteration differs from the iteration"
        );
        kept_total += kept.len();
        for q in 0..width {
            let got = &out[(p * width + q) * words..(p * width + q + 1) * words];
            match kept.get(q) {
                None => assert_eq!(got[2 * max_len + 1], 2, "problem {p} slot {q}: dead"),
                Some((values, t, s, score)) => {
                    let len = values.len();
                    assert_eq!(
                        &got[max_len..max_len + len],
                        &values[..],
                        "problem {p} slot {q}: values"
                    );
                    assert_eq!(got[len - 1], *t as u32, "problem {p} slot {q}: token");
                    assert_eq!(got[2 * max_len] as usize, len);
                    assert_eq!(got[2 * max_len + 1], u32::from(len >= max_len));
                    assert_eq!(got[2 * max_len + 2], score.to_bits(), "problem {p} slot {q}: score");
                    assert_eq!(
                        parents[p * width + q] as usize,
                        p * width + s,
                        "problem {p} slot {q}: parent"
                    );
                    assert_eq!(feed[p * width + q], *t as u32);
                }
            }
        }
    }
    println!("{kept_total} hypotheses kept, {merged} merged away");
    assert!(kept_total > 100 && merged > 10);
}
