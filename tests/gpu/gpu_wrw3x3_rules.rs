//! The WGSL twin of ConvAsmBwdWrW3x3's rules (`shaders/conv_asm_bwd_wrw_3x3_rules.wgsl`) against
//! `Rules::prefix_valid` and `Rules::completable` over random prefixes of every length (junk past
//! the prefix), on generated and perf-db problems (FP32 and FP16, gfx906 with dot2 and gfx900
//! without, odd sizes, tiny channel counts, N = 1), over three domains that make dead ends
//! common; and the bounded look-ahead (`Rules::completable`, the library's twin) against the
//! plain depth-first search on the CPU.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::perfdb;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_bwd_wrw_3x3::{check_applicable, Rules, NAME, NUM_PARAMS};
use tuneinfer::solvers::{GpuSearch, Target};
use tuneinfer::testutil::Lcg;

/// Plausible values per position (long prefixes are often valid), plus junk.
const PLAUSIBLE: [&[i64]; NUM_PARAMS] = [
    &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    &[0, 1],
    &[8, 16],
    &[1, 2, 4, 8],
    &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    &[1, 2, 3, 4, 5, 6, 7, 8],
];
const JUNK: &[i64] = &[-7, -1, 0, 3, 5, 10, 17, 32, 64, 100, 1 << 20];

/// The look-ahead's domains: nearly every value (and values past the rules' sets), no 0 (so
/// limit_wave_cnt > 0 and reverse_inout 1 only), and a tiny one.
const DOMAINS: [&[i64]; 3] = [
    &[-3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 32, 64],
    &[1, 2, 4, 8, 16],
    &[0, 1, 3, 5, 8],
];

/// (arch, problem) pairs the solver applies to: generated (odd and tiny sizes, N = 1, FP16)
/// and every 40th tuned row of the shared databases.
fn problems() -> Vec<(Target, ConvProblem)> {
    let mut out = Vec::new();
    for arch in ["gfx906", "gfx900"] {
        let target = Target::new(arch);
        let mut keys = Vec::new();
        // A W key's "in" is dy: K-Hdy-Wdy-3x3-C-Hx-Wx-N-pad-stride-dilation-bias-layout-type-W.
        for (k, c) in [(4, 4), (1, 4), (4, 1), (8, 12), (64, 3), (3, 64), (256, 512), (36, 20)] {
            for (h, w) in [(1, 1), (7, 5), (13, 131), (56, 56), (2, 512), (300, 17)] {
                for (n, ty) in [(1, "FP32"), (16, "FP32"), (2, "FP16"), (8, "FP16")] {
                    keys.push(format!("{k}-{h}-{w}-3x3-{c}-{h}-{w}-{n}-1x1-1x1-1x1-0-NCHW-{ty}-W"));
                }
            }
        }
        for key in keys {
            let p = ConvProblem::from_perfdb_key(&key).expect("key");
            if check_applicable(&target, &p).is_ok() {
                out.push((target.clone(), p));
            }
        }
        let db = if arch == "gfx906" {
            "gfx906_60.db"
        } else {
            "gfx900_56.db"
        };
        let rows = perfdb::solver_rows(&common::perfdb_dir().join(db), NAME).expect("rows");
        out.extend(
            rows.rows
                .into_iter()
                .step_by(40)
                .map(|r| r.problem)
                .filter(|p| check_applicable(&target, p).is_ok())
                .map(|p| (target.clone(), p)),
        );
    }
    out
}

/// A random prefix of 0..=6 values (7 and 8 now and then: never valid), mostly plausible.
fn random_prefix(rng: &mut Lcg) -> Vec<i64> {
    let len = if rng.below(4) == 0 {
        NUM_PARAMS
    } else {
        rng.below(NUM_PARAMS as u64 + 3) as usize
    };
    (0..len)
        .map(|i| {
            let plausible = PLAUSIBLE.get(i).copied().unwrap_or(JUNK);
            if rng.below(25) == 0 {
                JUNK[rng.below(JUNK.len() as u64) as usize]
            } else {
                plausible[rng.below(plausible.len() as u64) as usize]
            }
        })
        .collect()
}

#[test]
fn bounded_look_ahead_equals_the_plain_search() {
    let mut rng = Lcg::new(33);
    let problems = problems();
    let (mut cases, mut completable) = (0, 0);
    for (target, p) in &problems {
        let rules = Rules::new(target, p);
        for domain in DOMAINS {
            for _ in 0..40 {
                let prefix = random_prefix(&mut rng);
                let want = rules.completable_by_search(&prefix, domain);
                assert_eq!(
                    rules.completable(&prefix, domain),
                    want,
                    "{p} on {}: prefix {prefix:?} over {domain:?}",
                    target.arch
                );
                cases += 1;
                completable += usize::from(want);
            }
        }
    }
    println!("{cases} cases, {completable} completable");
    assert!(
        completable > cases / 10 && completable < cases * 9 / 10,
        "{completable} of {cases}"
    );
}

#[cfg(feature = "gpu")]
#[test]
fn wgsl_rules_match_cpu_rules() {
    use tuneinfer::gpu::kernels::host;
    use tuneinfer::gpu::pack_rule_words;
    use tuneinfer::solvers::{by_name, RuleWords};

    let Some(ctx) = common::gpu() else {
        return;
    };
    let solver = by_name(NAME).expect("solver");
    assert_eq!(solver.gpu_search(), GpuSearch::Rules("conv_asm_bwd_wrw_3x3_rules"));
    let mut rng = Lcg::new(19);
    let problems = problems();
    let (mut cases, mut checked) = (0, [0usize; 3]);
    for domain in DOMAINS {
        let (mut words, mut prefixes, mut lens, mut want) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (target, p) in &problems {
            let rules = Rules::new(target, p);
            let w = solver
                .wgsl_rule_words(target, p)
                .expect("rule words of an applicable problem");
            assert_eq!(w, RuleWords::Table(rules.gpu_words().to_vec()));
            for _ in 0..30 {
                let prefix = random_prefix(&mut rng);
                // Positions past the prefix hold junk: the library must not read them.
                let mut row = [JUNK[rng.below(JUNK.len() as u64) as usize] as i32; NUM_PARAMS];
                for (x, &v) in row.iter_mut().zip(&prefix) {
                    *x = v as i32;
                }
                words.push(w.clone());
                prefixes.extend(row);
                lens.push(prefix.len() as u32);
                want.push((rules.prefix_valid(&prefix), rules.completable(&prefix, domain), prefix));
            }
        }
        let (fixed, tables) = pack_rule_words(words.iter().map(Some)).expect("packed");
        let buffer: Vec<i32> = fixed.iter().flatten().chain(&tables).copied().collect();
        let domain32: Vec<i32> = domain.iter().map(|&v| v as i32).collect();
        let got = host::rules_check_words(&ctx, "conv_asm_bwd_wrw_3x3_rules", &buffer, &prefixes, &lens, &domain32)
            .expect("rules_check");
        for (i, ((valid, completable, prefix), g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(
                (*valid, *completable),
                *g,
                "{} on {}: prefix {prefix:?} over {domain:?} (cpu, gpu)",
                problems[i / 30].1,
                problems[i / 30].0.arch
            );
            checked[0] += usize::from(*valid);
            checked[1] += usize::from(*completable);
            checked[2] += usize::from(*valid && !*completable);
        }
        cases += want.len();
    }
    println!(
        "{cases} cases on {} problems: {} valid, {} completable, {} valid dead ends",
        problems.len(),
        checked[0],
        checked[1],
        checked[2]
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

/// The shipped models decode resident with the library (greedy and beam 4), with the CPU's
/// configs and finite scores, on perf-db problems and the hard ones (tiny channels, N = 1).
#[cfg(feature = "gpu")]
#[test]
fn shipped_models_decode_resident_with_the_library() {
    use tuneinfer::gpu::GpuPredictor;
    use tuneinfer::{DecodeMode, Predictor};

    let Some(ctx) = common::gpu() else {
        return;
    };
    let dirs = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights")];
    for arch in ["gfx906", "gfx900"] {
        let target = Target::new(arch);
        let problems: Vec<ConvProblem> = problems()
            .into_iter()
            .filter(|(t, _)| *t == target)
            .map(|(_, p)| p)
            .step_by(3)
            .collect();
        let cpu = Predictor::load(arch, NAME, &dirs).expect("cpu model");
        let gpu = GpuPredictor::load(arch, NAME, &dirs, ctx.clone()).expect("gpu model");
        for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
            let want = cpu.predict_batch(&problems, mode);
            let got = gpu.predict_batch(&problems, mode);
            let label = format!("{arch} {mode:?}");
            let (same, worst) = common::assert_same_predictions(&label, &problems, &want, &got);
            for r in got.iter().flatten() {
                assert!(r.iter().all(|x| x.score.is_none_or(f32::is_finite)), "{label}: {r:?}");
            }
            println!(
                "{label}: {same} of {} problems identical, worst score difference {worst:e}",
                problems.len()
            );
            assert!(same > 50 && worst <= 1e-4, "{label}: {same}, {worst}");
        }
    }
    let kernels = ctx.compiled_kernels().join(" ");
    assert!(kernels.contains("greedy_step+conv_asm_bwd_wrw_3x3_rules"), "{kernels}");
    assert!(kernels.contains("beam_step+conv_asm_bwd_wrw_3x3_rules"), "{kernels}");
}
