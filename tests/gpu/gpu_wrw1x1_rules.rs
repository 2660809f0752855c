//! The WGSL twin of ConvAsmBwdWrW1x1's rules (`shaders/conv_asm_bwd_wrw_1x1_rules.wgsl`) against
//! `Rules::prefix_valid` and `Rules::completable` over random prefixes of every length, on random
//! and perf-db problems (fp32, fp16, bf16, odd C), with domains that make dead ends common; and
//! the bounded look-ahead (`Rules::completable`, the library's twin) against the search
//! (`Rules::completable_by_search`) and a plain depth-first search on the CPU, over random
//! prefixes and over every valid prefix of several domains.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::perfdb;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_bwd_wrw_1x1::{check_applicable, Rules, NAME, NUM_PARAMS};
use tuneinfer::solvers::Target;
use tuneinfer::testutil::Lcg;

/// Plausible values per position (long prefixes are often valid), plus junk.
const PLAUSIBLE: [&[i64]; NUM_PARAMS] = [
    &[1, 2, 4, 8, 16],
    &[1, 2, 4, 8, 16],
    &[1, 2, 4, 8, 16],
    &[1, 2, 4, 8, 16],
    &[1, 2, 4, 8, 16],
    &[1, 2, 4],
    &[1, 2, 3, 4, 5, 6, 7, 8],
    &[1, 2, 3, 4],
    &[0, 1],
    &[0, 1, 2, 3, 4],
];
const JUNK: &[i64] = &[-7, -1, 0, 3, 5, 9, 17, 32, 64, 100];

/// The look-ahead's domains: the shipped models' values, every value (and values past the
/// rules' sets), no 0 (fp32 needs short_store 0: nothing completes), no 0 or 1, a tiny one, and
/// odd ones (no 1 for n_part_cnt and read_size; short_store only 1; no power of two above 2).
const DOMAINS: [&[i64]; 8] = [
    &[0, 1, 2, 3, 4, 8, 16],
    &[-3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 32, 64],
    &[1, 2, 4, 8, 16],
    &[2, 3, 4, 8, 16],
    &[1, 16],
    &[0, 2, 4, 5, 8, 16],
    &[1, 2, 3, 5, 6, 7],
    &[0, 1, 2, 3, 16],
];

/// Problems the solver applies to (on gfx906): generated (odd and tiny channel counts, odd sizes,
/// N = 1, stride 1 and 2, fp32, fp16 and bf16) and every 100th tuned row of the shared databases.
fn problems() -> Vec<ConvProblem> {
    let target = Target::new("gfx906");
    let mut out = Vec::new();
    // A W key's "in" is dy: K-Hdy-Wdy-1x1-C-Hx-Wx-N-pad-stride-dilation-bias-layout-type-W.
    for (k, c) in [(4, 4), (1, 1), (1, 3), (3, 1), (64, 127), (19, 2048), (36, 20)] {
        for (h, w, s) in [(1, 1, 1), (7, 5, 1), (7, 5, 2), (13, 131, 2), (56, 56, 1)] {
            let (hx, wx) = (h * s, w * s);
            for (n, ty) in [(1, "FP32"), (16, "FP32"), (1, "FP16"), (8, "FP16"), (2, "BF16")] {
                let key = format!("{k}-{h}-{w}-1x1-{c}-{hx}-{wx}-{n}-0x0-{s}x{s}-1x1-0-NCHW-{ty}-W");
                let p = ConvProblem::from_perfdb_key(&key).expect("key");
                if check_applicable(&target, &p).is_ok() {
                    out.push(p);
                }
            }
        }
    }
    assert!(out.len() > 100, "{} generated problems apply", out.len());
    for db in ["gfx900_56.db", "gfx906_60.db"] {
        let rows = perfdb::solver_rows(&common::perfdb_dir().join(db), NAME).expect("rows");
        out.extend(rows.rows.into_iter().step_by(100).map(|r| r.problem));
    }
    out
}

fn random_prefix(rng: &mut Lcg) -> Vec<i64> {
    let len = if rng.below(3) == 0 {
        NUM_PARAMS
    } else {
        rng.below(NUM_PARAMS as u64 + 2) as usize
    };
    let mut prefix: Vec<i64> = (0..len)
        .map(|i| {
            let plausible = PLAUSIBLE.get(i).copied().unwrap_or(JUNK);
            if rng.below(25) == 0 {
                JUNK[rng.below(JUNK.len() as u64) as usize]
            } else {
                plausible[rng.below(plausible.len() as u64) as usize]
            }
        })
        .collect();
    // Mostly keep rule 2 (chunk_size * c_per_gpr == 16) so that later rules are reached.
    if len > 1 && prefix[0] > 0 && 16 % prefix[0] == 0 && rng.below(4) != 0 {
        prefix[1] = 16 / prefix[0];
    }
    prefix
}

/// The plain depth-first search: no memo, no prune.
fn plain_search(rules: &Rules, prefix: &[i64], domain: &[i64]) -> bool {
    fn dfs(r: &Rules, buf: &mut Vec<i64>, domain: &[i64]) -> bool {
        if buf.len() == NUM_PARAMS {
            return true;
        }
        for &x in domain {
            buf.push(x);
            let found = r.prefix_valid(buf) && dfs(r, buf, domain);
            buf.pop();
            if found {
                return true;
            }
        }
        false
    }
    rules.prefix_valid(prefix) && prefix.len() <= NUM_PARAMS && dfs(rules, &mut prefix.to_vec(), domain)
}

#[test]
fn bounded_look_ahead_equals_the_plain_search() {
    let mut rng = Lcg::new(33);
    let problems = problems();
    let (mut cases, mut completable, mut plain) = (0, 0, 0);
    for p in &problems {
        let rules = Rules::new(p);
        for domain in DOMAINS {
            for i in 0..40 {
                let prefix = random_prefix(&mut rng);
                let want = rules.completable_by_search(&prefix, domain);
                assert_eq!(
                    rules.completable(&prefix, domain),
                    want,
                    "{p}: prefix {prefix:?} over {domain:?}"
                );
                // The plain search is slow on dead ends of short prefixes: every 8th case.
                if i % 8 == 0 {
                    assert_eq!(
                        plain_search(&rules, &prefix, domain),
                        want,
                        "{p}: plain, {prefix:?} over {domain:?}"
                    );
                    plain += 1;
                }
                cases += 1;
                completable += usize::from(want);
            }
        }
    }
    println!("{cases} cases ({plain} also against the plain search), {completable} completable");
    assert!(
        completable > cases / 10 && completable < cases * 9 / 10,
        "{completable} of {cases}"
    );
}

/// Every valid prefix (each length 0..=9) over each domain, for each of the rules' six contexts
/// (the rules read only fp32, bf16 and C's parity).
#[test]
fn bounded_look_ahead_equals_the_search_on_every_valid_prefix() {
    let (mut cases, mut completable, mut contexts) = (0usize, 0usize, Vec::new());
    for c in [1u64, 2] {
        for ty in ["FP32", "FP16", "BF16"] {
            let key = format!("8-7-7-1x1-{c}-7-7-1-0x0-1x1-1x1-0-NCHW-{ty}-W");
            contexts.push(Rules::new(&ConvProblem::from_perfdb_key(&key).expect("key")));
        }
    }
    for rules in &contexts {
        for domain in DOMAINS {
            let mut stack: Vec<Vec<i64>> = vec![vec![]];
            while let Some(prefix) = stack.pop() {
                let want = rules.completable_by_search(&prefix, domain);
                assert_eq!(
                    rules.completable(&prefix, domain),
                    want,
                    "{rules:?}: {prefix:?} over {domain:?}"
                );
                cases += 1;
                completable += usize::from(want);
                if prefix.len() < NUM_PARAMS - 1 {
                    for &v in domain {
                        let mut q = prefix.clone();
                        q.push(v);
                        if rules.prefix_valid(&q) {
                            stack.push(q);
                        }
                    }
                }
            }
        }
    }
    println!("{cases} valid prefixes, {completable} completable");
    assert!(
        completable > cases / 10 && completable < cases * 9 / 10,
        "{completable} of {cases}"
    );
}

#[cfg(feature = "gpu")]
#[test]
fn wgsl_rules_match_cpu_rules() {
    use tuneinfer::gpu::kernels::host;

    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut rng = Lcg::new(17);
    let problems = problems();
    let (mut cases, mut checked) = (0, [0usize; 3]);
    for domain in DOMAINS {
        let (mut words, mut prefixes, mut lens, mut want) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for p in &problems {
            let rules = Rules::new(p);
            for _ in 0..20 {
                let prefix = random_prefix(&mut rng);
                words.extend(rules.gpu_words());
                // Positions past the prefix hold junk: the library must not read them.
                let mut row = [JUNK[rng.below(JUNK.len() as u64) as usize] as i32; NUM_PARAMS];
                for (w, &v) in row.iter_mut().zip(&prefix) {
                    *w = v as i32;
                }
                prefixes.extend(row);
                lens.push(prefix.len() as u32);
                want.push((rules.prefix_valid(&prefix), rules.completable(&prefix, domain), prefix));
            }
        }
        let domain32: Vec<i32> = domain.iter().map(|&v| v as i32).collect();
        let got = host::rules_check_words(&ctx, "conv_asm_bwd_wrw_1x1_rules", &words, &prefixes, &lens, &domain32)
            .expect("rules_check");
        for (i, ((valid, completable, prefix), g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(
                (*valid, *completable),
                *g,
                "prefix {prefix:?} over {domain:?}, rule words {:?} (cpu, gpu)",
                &words[i * 8..i * 8 + 8]
            );
            checked[0] += usize::from(*valid);
            checked[1] += usize::from(*completable);
            checked[2] += usize::from(*valid && !*completable);
        }
        cases += want.len();
    }
    println!(
        "{cases} cases: {} valid, {} completable, {} valid dead ends",
        checked[0], checked[1], checked[2]
    );
    assert!(
        checked[0] > cases / 5 && checked[0] < cases * 4 / 5,
        "{checked:?} of {cases}"
    );
    assert!(
        checked[2] > 100,
        "the look-ahead's failures must be covered: {checked:?}"
    );
}
