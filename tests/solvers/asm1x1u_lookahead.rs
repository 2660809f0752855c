//! ConvAsm1x1U's look-ahead (`Rules::completable`) against an exhaustive search over the plain
//! rules: for many problems (a quarter of the shared perf databases' problems with K or C below
//! 16 or N = 1, a sample of the rest, hand-made and random ones) and several value domains (MIOpen's
//! gfx908 vocabulary among them), every prefix over the domain that the rules accept is visited,
//! whether some full config extending it is valid is found by visiting all of them, and
//! `completable` must give exactly that answer, on every visited prefix and on every rejected
//! one-value extension of it.

#[allow(unused_imports)]
use crate::common;

use std::collections::HashSet;

use tuneinfer::data::dataset::read_rows;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_1x1u::{check_applicable, Rules, NAME};

/// MIOpen's gfx908 ConvAsm1x1U vocabulary's integer values (its metadata, "-1" left out).
const GFX908: &[i64] = &[1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64];

/// Other domains: without 1 (every position's easiest value gone), only powers of two, with
/// values a vocabulary need not hold in order (12, 24: k_mult's), odd sizes.
const OTHERS: &[&[i64]] = &[&[2, 3, 4, 8, 12, 32], &[1, 2, 4, 8, 16, 32, 64], &[64, 24, 1, 5, 12, 2]];

/// The exhaustive reference, written without the code under test: visits every prefix of
/// `buf`'s extensions over `domain` that `prefix_valid` accepts (a valid config's prefixes are
/// all accepted: `prefix_valid` checks exactly rules 1..=len, `is_valid` all eight), and returns
/// whether any full extension is valid. `visit(prefix, answer)` sees each accepted prefix with
/// its answer, and each rejected one-value extension with `false`.
fn exhaustive(r: &Rules, buf: &mut Vec<i64>, domain: &[i64], visit: &mut dyn FnMut(&[i64], bool)) -> bool {
    let any = if buf.len() == 8 {
        r.is_valid(buf)
    } else {
        let mut any = false;
        for &x in domain {
            buf.push(x);
            if r.prefix_valid(buf) {
                any |= exhaustive(r, buf, domain, visit);
            } else {
                visit(buf, false);
            }
            buf.pop();
        }
        any
    };
    visit(buf, any);
    any
}

/// Valid full configs over `domain` counted with no pruning at all (every one of
/// `domain.len()^8` configs through `is_valid`): the check that `exhaustive`'s pruning by
/// `prefix_valid` loses none.
fn count_unpruned(r: &Rules, domain: &[i64]) -> usize {
    let n = domain.len();
    let mut count = 0;
    for mut i in 0..n.pow(8) {
        let mut c = [0i64; 8];
        for v in c.iter_mut() {
            *v = domain[i % n];
            i /= n;
        }
        count += usize::from(r.is_valid(&c));
    }
    count
}

/// Checks `completable` on every prefix `exhaustive` visits; returns (prefixes checked,
/// completable ones, valid full configs).
fn check_problem(p: &ConvProblem, domain: &[i64]) -> (usize, usize, usize) {
    let r = Rules::new(p);
    let (mut checked, mut yes, mut full) = (0, 0, 0);
    let mut visit = |prefix: &[i64], want: bool| {
        assert_eq!(
            r.completable(prefix, domain),
            want,
            "{} prefix {prefix:?} domain {domain:?}",
            p.to_perfdb_key()
        );
        checked += 1;
        yes += usize::from(want);
        full += usize::from(want && prefix.len() == 8);
    };
    exhaustive(&r, &mut Vec::new(), domain, &mut visit);
    (checked, yes, full)
}

fn key(k: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

/// K or C below 16, or N = 1: where the rules of the last positions kill most prefixes.
fn hard(p: &ConvProblem) -> bool {
    p.c < 16 || p.k < 16 || p.n == 1
}

/// Every applicable ConvAsm1x1U problem of the shared perf databases, each once.
fn corpus() -> Vec<ConvProblem> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for name in common::PERF_DATABASES {
        let (path, _) = common::perf_database(name);
        let rows = read_rows(&path, NAME).unwrap_or_else(|e| panic!("{name}: {e}"));
        for r in rows.rows {
            if check_applicable(&r.problem).is_ok() && seen.insert(r.problem.clone()) {
                out.push(r.problem);
            }
        }
    }
    out
}

/// Hand-made hard problems (tiny and odd sizes, both precisions and directions), and the
/// issue's examples.
const HAND: &[&str] = &[
    "512-32-32-1x1-6-32-32-4-0x0-1x1-1x1-0-NCHW-FP32-F",
    "3-32-32-1x1-3-32-32-1-0x0-1x1-1x1-0-NCHW-FP32-F",
    "3-32-32-1x1-3-32-32-64-0x0-1x1-1x1-0-NCHW-FP32-F",
    "64-19-19-1x1-2-19-19-512-0x0-1x1-1x1-0-NCHW-FP32-F",
    "1-1-2-1x1-1-1-2-1-0x0-1x1-1x1-0-NCHW-FP32-F",
    "5-7-7-1x1-4-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-B",
    "4-1-2-1x1-4-1-2-3-0x0-1x1-1x1-0-NCHW-FP16-F",
    "6-3-3-1x1-8-3-3-1-0x0-1x1-1x1-0-NCHW-FP16-B",
    "2-5-5-1x1-12-5-5-1-0x0-1x1-1x1-0-NCHW-FP16-F",
    "7-14-14-1x1-28-14-14-2-0x0-1x1-1x1-0-NCHW-FP32-B",
    "24-1-1-1x1-20-1-1-1000-0x0-1x1-1x1-0-NCHW-FP32-F",
    "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
];

/// A deterministic stream of random problems (xorshift64*), mostly small sizes.
fn random_problems(count: usize) -> Vec<ConvProblem> {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: usize| {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    };
    let sizes = [1u64, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 16, 20, 24, 33, 64, 100];
    let hws = [1u64, 2, 3, 5, 7, 9, 14, 17, 28];
    let ns = [1u64, 2, 3, 4, 5, 8, 16, 31, 64, 100, 512];
    let mut out = Vec::new();
    while out.len() < count {
        let (c, k) = (sizes[next(sizes.len())], sizes[next(sizes.len())]);
        let (h, w) = (hws[next(hws.len())], hws[next(hws.len())]);
        let n = ns[next(ns.len())];
        let prec = ["FP32", "FP16"][next(2)];
        let dir = ["F", "B"][next(2)];
        let p = key(&format!(
            "{c}-{h}-{w}-1x1-{k}-{h}-{w}-{n}-0x0-1x1-1x1-0-NCHW-{prec}-{dir}"
        ));
        if check_applicable(&p).is_ok() {
            out.push(p);
        }
    }
    out
}

#[test]
fn exhaustive_pruning_loses_no_valid_config() {
    let small: &[i64] = &[1, 2, 4, 16];
    let odd: &[i64] = &[3, 4, 8, 64];
    let mut problems: Vec<ConvProblem> = HAND.iter().map(|k| key(k)).collect();
    problems.extend(random_problems(30));
    let mut total = 0;
    for p in &problems {
        for domain in [small, odd] {
            let r = Rules::new(p);
            let mut pruned = 0;
            exhaustive(&r, &mut Vec::new(), domain, &mut |prefix, ok| {
                pruned += usize::from(ok && prefix.len() == 8)
            });
            assert_eq!(pruned, count_unpruned(&r, domain), "{} {domain:?}", p.to_perfdb_key());
            total += pruned;
        }
    }
    assert!(total > 1000, "valid configs must be covered ({total})");
}

#[test]
fn completable_is_exactly_the_exhaustive_answer_on_the_corpus_hard_classes() {
    let t = std::time::Instant::now();
    let all = corpus();
    let (hard_ones, rest): (Vec<ConvProblem>, Vec<ConvProblem>) = all.into_iter().partition(hard);
    assert!(hard_ones.len() > 100, "only {} hard problems", hard_ones.len());
    // Every 4th hard problem and every 200th of the rest (about 10 s in release on 2 cores;
    // the GPU test runs every hard one end to end).
    let mut problems: Vec<ConvProblem> = hard_ones.iter().step_by(4).cloned().collect();
    problems.extend(rest.iter().step_by(200).cloned());
    problems.extend(HAND.iter().map(|k| key(k)));
    let (mut checked, mut yes, mut full) = (0, 0, 0);
    for p in &problems {
        let (c, y, f) = check_problem(p, GFX908);
        checked += c;
        yes += y;
        full += f;
    }
    println!(
        "{} problems ({} hard), gfx908 domain: {checked} prefixes checked, {yes} completable, {full} valid configs, {:.1} s",
        problems.len(),
        hard_ones.len(),
        t.elapsed().as_secs_f64()
    );
    assert!(yes > 10_000 && checked - yes > 10_000, "both answers must be covered");
}

#[test]
fn completable_is_exactly_the_exhaustive_answer_on_random_problems_and_domains() {
    let mut problems: Vec<ConvProblem> = HAND.iter().map(|k| key(k)).collect();
    problems.extend(random_problems(150));
    let (mut checked, mut yes) = (0, 0);
    for (i, p) in problems.iter().enumerate() {
        let (c, y, _) = check_problem(p, GFX908);
        let (c2, y2, _) = check_problem(p, OTHERS[i % OTHERS.len()]);
        checked += c + c2;
        yes += y + y2;
    }
    println!(
        "{} problems: {checked} prefixes checked, {yes} completable",
        problems.len()
    );
    assert!(yes > 10_000 && checked - yes > 10_000, "both answers must be covered");
}

/// Prefixes with values outside the domain (the search only ever passes accepted vocabulary
/// values, but the contract is any prefix) and an empty domain.
#[test]
fn completable_with_values_outside_the_domain() {
    let extra: &[i64] = &[-1, 0, 9, 12, 13, 20, 24, 28, 65];
    for k in HAND {
        let p = key(k);
        let r = Rules::new(&p);
        for &a in GFX908.iter().chain(extra) {
            for &b in [1i64, 4, 12, 20, 28].iter() {
                for &c in [1i64, 2, 9, 12].iter() {
                    let prefix = [a, b, c];
                    let mut buf = prefix.to_vec();
                    let want = r.prefix_valid(&prefix) && exhaustive(&r, &mut buf, GFX908, &mut |_, _| {});
                    assert_eq!(r.completable(&prefix, GFX908), want, "{k} {prefix:?}");
                }
            }
        }
        assert!(!r.completable(&[], &[]), "{k}: empty domain");
        assert!(!r.completable(&[1, 1, 1, 1, 1, 1, 1, 1, 1], GFX908), "{k}: nine values");
    }
}
