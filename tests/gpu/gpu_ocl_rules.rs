//! The WGSL twin of ConvOclDirectFwd's rules (`shaders/conv_ocl_direct_fwd_rules.wgsl`) against
//! `Rules::prefix_valid` and `Rules::completable` over random prefixes of every length (junk past
//! the prefix), on generated and perf-db problems (forward and backward data, strides 1 and 2,
//! every supported filter, groups, FP32, FP16 and BF16, odd sizes, tiny channel counts, N = 1,
//! and sizes up to i32::MAX where V5's products need the library's saturation), over three
//! domains that make dead ends common; and the bounded look-ahead (`Rules::completable`, the
//! library's twin) against the memoised depth-first search on the CPU.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::perfdb;
use tuneinfer::problem::{conv_out_size, ConvProblem, Direction, Layout, Precision};
use tuneinfer::solvers::conv_ocl_direct_fwd::{check_applicable, Rules, NAME, NUM_PARAMS};
use tuneinfer::solvers::{GpuSearch, Target};
use tuneinfer::testutil::Lcg;

/// Plausible values per position (long prefixes are often valid), plus junk.
const PLAUSIBLE: [&[i64]; NUM_PARAMS] = [
    &[8, 16, 32, 64],
    &[8, 16, 32, 64],
    &[8, 16, 32, 64],
    &[8, 16, 32, 64],
    &[1, 2, 4],
    &[1, 2, 4],
    &[1, 2, 4, 8],
    &[1, 2, 4],
    &[1, 2],
];
const JUNK: &[i64] = &[-7, -1, 0, 3, 5, 12, 100, 128, 1 << 20];

/// The look-ahead's domains: every value (and values past the rules' sets), no 4, 32 or 64
/// (out_pix_tile and the tiles narrowed), and no 1 (n_stacks 2 only, out_pix_tile 2 or 4).
const DOMAINS: [&[i64]; 3] = [
    &[-3, 0, 1, 2, 3, 4, 5, 8, 12, 16, 32, 64, 100, 128],
    &[1, 2, 8, 16],
    &[2, 4, 8, 64],
];

#[allow(clippy::too_many_arguments)]
fn problem(
    direction: Direction,
    precision: Precision,
    n: u64,
    c: u64,
    k: u64,
    hw: (u64, u64),
    filter: (u64, u64),
    pad: u64,
    stride: u64,
    groups: u64,
) -> ConvProblem {
    let (in_h, in_w) = hw;
    ConvProblem {
        n,
        c,
        k,
        in_h,
        in_w,
        out_h: conv_out_size(in_h, pad, filter.0, stride, 1).unwrap_or(1),
        out_w: conv_out_size(in_w, pad, filter.1, stride, 1).unwrap_or(1),
        filter_h: filter.0,
        filter_w: filter.1,
        pad_h: pad,
        pad_w: pad,
        stride_h: stride,
        stride_w: stride,
        dilation_h: 1,
        dilation_w: 1,
        groups,
        bias: false,
        layout: Layout::Nchw,
        precision,
        direction,
        depth: None,
    }
}

/// Problems: generated ones the solver applies to on gfx906, a few it does not (sizes up to
/// i32::MAX: the rules, and the library, take any), and every 60th tuned row of the shared
/// databases.
fn problems() -> Vec<ConvProblem> {
    let target = Target::new("gfx906");
    let mut out = Vec::new();
    use Direction::{BackwardData as B, Forward as F};
    use Precision::{Bf16, Fp16, Fp32};
    for direction in [F, B] {
        for precision in [Fp32, Fp16, Bf16] {
            for (n, c, k) in [(1, 1, 1), (1, 3, 64), (16, 64, 3), (2, 7, 9), (32, 256, 512)] {
                for hw in [(1, 1), (7, 5), (13, 131), (56, 56), (300, 17)] {
                    for (filter, pad, stride) in [
                        ((3, 3), 1, 1),
                        ((5, 5), 2, 2),
                        ((7, 7), 3, 1),
                        ((9, 9), 0, 2),
                        ((11, 11), 5, 1),
                        ((5, 10), 0, 2),
                        ((5, 20), 0, 2),
                        ((4, 4), 0, 1),
                    ] {
                        let p = problem(direction, precision, n, c, k, hw, filter, pad, stride, 1);
                        if check_applicable(&target, &p).is_ok() {
                            out.push(p);
                        }
                    }
                }
            }
            // Grouped: any filter.
            for (n, g, filter, stride) in [
                (1, 4, (1, 1), 1),
                (8, 32, (3, 3), 2),
                (2, 2, (13, 2), 1),
                (1, 64, (30, 30), 1),
            ] {
                let p = problem(direction, precision, n, 2 * g, 4 * g, (40, 40), filter, 0, stride, g);
                if check_applicable(&target, &p).is_ok() {
                    out.push(p);
                }
            }
        }
    }
    let generated = out.len();
    assert!(generated > 100, "{generated} generated problems apply");
    // Grouped with large filters (applicable or not): V5's filter term decides, so the
    // look-ahead's choice of n_out_pix_tiles and n_in_data_tiles matters.
    for direction in [F, B] {
        for precision in [Fp32, Fp16] {
            for f in [13, 17, 21, 25, 30] {
                for (hw, stride) in [((40, 40), 1), ((9, 9), 2), ((17, 30), 1)] {
                    out.push(problem(direction, precision, 4, 16, 64, hw, (f, f), 0, stride, 8));
                }
            }
        }
    }
    // Not applicable, but rules all the same: huge filters, strides, channels and batches.
    let max = i32::MAX as u64;
    for direction in [F, B] {
        for (n, c, k, filter, stride, groups) in [
            (max, max, max, (max, max), max, 1),
            (1, 3, 5, (1, 40_000), 1, 1),
            (1, 8, 8, (300, 300), 3, 2),
            (5, 1, 1, (3, 3), 9, 4),
            (0, 0, 0, (0, 0), 0, 1),
            (3, 100, 100, (70_000, 1), 2, 1),
            (3, max, 64, (3, 3), max, 1),
        ] {
            out.push(problem(direction, Fp32, n, c, k, (64, 64), filter, 0, stride, groups));
        }
    }
    for db in ["gfx906_60.db", "gfx900_56.db", "gfx1030_36.db"] {
        let rows = perfdb::solver_rows(&common::perfdb_dir().join(db), NAME).expect("rows");
        out.extend(rows.rows.into_iter().step_by(60).map(|r| r.problem));
    }
    out
}

/// A random prefix of 0..=9 values (10 and 11 now and then: never valid), mostly plausible.
fn random_prefix(rng: &mut Lcg) -> Vec<i64> {
    let len = if rng.below(4) == 0 {
        NUM_PARAMS
    } else {
        rng.below(NUM_PARAMS as u64 + 3) as usize
    };
    let mut prefix: Vec<i64> = (0..len)
        .map(|i| {
            let plausible = PLAUSIBLE.get(i).copied().unwrap_or(JUNK);
            if rng.below(30) == 0 {
                JUNK[rng.below(JUNK.len() as u64) as usize]
            } else {
                plausible[rng.below(plausible.len() as u64) as usize]
            }
        })
        .collect();
    // Mostly keep V2 (gt0' * gt1' <= 256) within reach: small in tiles.
    if len > 3 && rng.below(2) == 0 {
        prefix[2] = [8, 16][rng.below(2) as usize];
        prefix[3] = [8, 16][rng.below(2) as usize];
    }
    prefix
}

#[test]
fn bounded_look_ahead_equals_the_search() {
    let mut rng = Lcg::new(44);
    let problems = problems();
    let (mut cases, mut completable) = (0, 0);
    for p in &problems {
        let rules = Rules::new(p);
        for domain in DOMAINS {
            for _ in 0..30 {
                let prefix = random_prefix(&mut rng);
                let want = rules.completable_by_search(&prefix, domain);
                assert_eq!(
                    rules.completable(&prefix, domain),
                    want,
                    "{p}: prefix {prefix:?} over {domain:?}"
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
    assert_eq!(solver.gpu_search(), GpuSearch::Rules("conv_ocl_direct_fwd_rules"));
    let target = Target::new("gfx906");
    let mut rng = Lcg::new(23);
    let problems = problems();
    const PER_PROBLEM: usize = 24;
    let (mut cases, mut checked) = (0, [0usize; 3]);
    for domain in DOMAINS {
        let (mut words, mut prefixes, mut lens, mut want) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for p in &problems {
            let rules = Rules::new(p);
            let w = solver.wgsl_rule_words(&target, p).expect("rule words");
            assert_eq!(w, RuleWords::Table(rules.gpu_words().to_vec()));
            for _ in 0..PER_PROBLEM {
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
        let got = host::rules_check_words(&ctx, "conv_ocl_direct_fwd_rules", &buffer, &prefixes, &lens, &domain32)
            .expect("rules_check");
        for (i, ((valid, completable, prefix), g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(
                (*valid, *completable),
                *g,
                "{}: prefix {prefix:?} over {domain:?} (cpu, gpu)",
                problems[i / PER_PROBLEM]
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
/// configs and finite scores, on the generated problems that apply and perf-db problems.
#[cfg(feature = "gpu")]
#[test]
fn shipped_models_decode_resident_with_the_library() {
    use tuneinfer::gpu::GpuPredictor;
    use tuneinfer::{DecodeMode, Predictor};

    let Some(ctx) = common::gpu() else {
        return;
    };
    let dirs = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights")];
    for arch in ["gfx906", "gfx900", "gfx1030"] {
        let target = Target::new(arch);
        let problems: Vec<ConvProblem> = problems()
            .into_iter()
            .filter(|p| check_applicable(&target, p).is_ok())
            .step_by(4)
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
    assert!(kernels.contains("greedy_step+conv_ocl_direct_fwd_rules"), "{kernels}");
    assert!(kernels.contains("beam_step+conv_ocl_direct_fwd_rules"), "{kernels}");
}
