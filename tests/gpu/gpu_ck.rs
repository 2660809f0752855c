//! The catalogue constraint on the GPU: `shaders/catalogue_rules.wgsl` against
//! `CatalogueConstraint` on random prefixes of generated CK problems, and the resident greedy
//! and beam searches giving exactly the CPU path's configs (MIOpen's 7 expected answers too).
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::gpu::kernels::host;
use tuneinfer::gpu::GpuPredictor;
use tuneinfer::predict::{DecodeMode, Predictor};
use tuneinfer::problem::{ConvProblem, Direction, Precision};
use tuneinfer::solvers::ck::CATALOGUE_RULES;
use tuneinfer::testutil::Lcg;

/// `catalogue_rules.wgsl`'s `SOLVER_MAX_LEN` (the prefix stride of `rules_check`).
const MAX_LEN: usize = 24;

const CASES: [(&str, Direction); 3] = [
    ("ConvHipImplicitGemmGroupFwdXdlops", Direction::Forward),
    ("ConvHipImplicitGemmGroupBwdXdlops", Direction::BackwardData),
    ("ConvHipImplicitGemmGroupWrwXdlops", Direction::BackwardWeights),
];

fn pick<T: Copy>(rng: &mut Lcg, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

/// A random grouped convolution (the generator of tests/ck/ck_property.rs).
fn random_problem(rng: &mut Lcg, dir: Direction, prec: Precision) -> Option<ConvProblem> {
    let g = pick(rng, &[1, 1, 2, 3, 4, 8, 16, 32]);
    let c = g * pick(rng, &[1, 2, 3, 4, 8, 15, 16, 32, 64, 128]);
    let k = g * pick(rng, &[1, 2, 4, 6, 8, 16, 32, 64, 256]);
    let hw = 1 + rng.below(64);
    let fil = pick(rng, &[1, 1, 3, 3, 5, 7]);
    let pad = pick(rng, &[0, 0, 1, 2]);
    let stride = pick(rng, &[1, 1, 2]);
    let n = pick(rng, &[1, 2, 4, 8, 16, 32, 128]);
    let ty = if prec == Precision::Fp32 { "conv" } else { "convfp16" };
    let f = match dir {
        Direction::Forward => 1,
        Direction::BackwardData => 2,
        Direction::BackwardWeights => 4,
    };
    let line = format!(
        "{ty} -n {n} -c {c} -H {hw} -W {} -k {k} -y {fil} -x {fil} -p {pad} -q {pad} -u {stride} -v {stride} -g {g} -F {f} --in_layout NHWC",
        hw + rng.below(8)
    );
    ConvProblem::parse(&line).ok()
}

fn cpu_predictor(arch: &str, solver: &str) -> Predictor {
    Predictor::load(arch, solver, &[common::models_dir()])
        .expect("model loads")
        .with_catalogue_dir(Some(common::ck_dir()))
}

/// `count` problems of both precisions that some instance supports.
fn problems(rng: &mut Lcg, cpu: &Predictor, dir: Direction, count: usize) -> Vec<ConvProblem> {
    let mut out = Vec::with_capacity(count);
    let mut tries = 0;
    while out.len() < count && tries < 50 * count {
        tries += 1;
        let prec = if tries % 2 == 0 {
            Precision::Fp32
        } else {
            Precision::Fp16
        };
        if let Some(p) = random_problem(rng, dir, prec) {
            if cpu.solver.check(&cpu.target, &p).is_ok() {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn wgsl_table_check_matches_the_catalogue_constraint() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(5);
    let mut total = [0usize; 4];
    for (solver, dir) in CASES {
        for arch in ["gfx90a", "gfx942"] {
            let cpu = cpu_predictor(arch, solver);
            let (vocab, meta) = (cpu.model.vocab(), cpu.model.metadata());
            let nv = vocab.values.len() as u64;
            let list = problems(&mut rng, &cpu, dir, 40);
            assert!(list.len() >= 30, "{solver} {arch}: {} problems", list.len());
            let mut rules: Vec<[i32; 8]> = Vec::new();
            let mut tables: Vec<i32> = Vec::new();
            let mut prefixes: Vec<i32> = Vec::new();
            let mut lens: Vec<u32> = Vec::new();
            let mut want: Vec<(bool, bool)> = Vec::new();
            let cases_per_problem = 60;
            let offset0 = 8 * list.len() * cases_per_problem * 2;
            let mut offset = offset0;
            for p in &list {
                let c = cpu.solver.constraint(&cpu.target, p, vocab, meta).expect("constraint");
                let block = c.gpu_table().expect("a catalogue constraint has a table");
                let (r, w) = (block[0] as usize, block[1] as usize);
                let cells_at = 8 + 2 * block[2] as usize + 2 * r;
                for _ in 0..cases_per_problem {
                    // A prefix of a random row (often valid), its last value sometimes replaced.
                    let n = 1 + rng.below(w as u64) as usize;
                    let mut prefix: Vec<u32> = if r > 0 {
                        let row = rng.below(r as u64) as usize;
                        block[cells_at + row * w..cells_at + row * w + n]
                            .iter()
                            .map(|&v| if v < 0 { rng.below(nv) as u32 } else { v as u32 })
                            .collect()
                    } else {
                        (0..n).map(|_| rng.below(nv) as u32).collect()
                    };
                    if rng.below(3) == 0 {
                        prefix[n - 1] = rng.below(nv) as u32;
                    }
                    let (head, last) = (&prefix[..n - 1], prefix[n - 1]);
                    let completable = c.completable(&prefix);
                    for miopen in [false, true] {
                        let valid = if miopen {
                            c.accepts_miopen(head, last)
                        } else {
                            c.accepts(head, last)
                        };
                        want.push((valid, completable));
                        rules.push([offset as i32, i32::from(miopen), 0, 0, 0, 0, 0, 0]);
                        let mut row = vec![0i32; MAX_LEN];
                        for (k, &v) in prefix.iter().enumerate() {
                            row[k] = v as i32;
                        }
                        prefixes.extend_from_slice(&row);
                        lens.push(n as u32);
                    }
                }
                offset += block.len();
                tables.extend_from_slice(&block);
            }
            let mut words: Vec<i32> = rules.iter().flatten().copied().collect();
            assert_eq!(words.len(), offset0);
            words.extend_from_slice(&tables);
            let got =
                host::rules_check_words(&ctx, CATALOGUE_RULES, &words, &prefixes, &lens, &[0]).expect("rules_check");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g,
                    w,
                    "{solver} {arch} case {i}: prefix {:?} (miopen {})",
                    &prefixes[i * MAX_LEN..i * MAX_LEN + lens[i] as usize],
                    rules[i][1]
                );
                total[0] += usize::from(w.0);
                total[1] += usize::from(!w.0);
                total[2] += usize::from(w.1);
                total[3] += usize::from(!w.1);
            }
        }
    }
    println!(
        "valid {} / invalid {}, completable {} / not {}",
        total[0], total[1], total[2], total[3]
    );
    assert!(total.iter().all(|&n| n > 500), "{total:?}");
}

#[test]
fn gpu_configs_equal_cpu_configs_on_generated_ck_problems() {
    let Some(ctx) = common::gpu() else { return };
    let per_case: usize = std::env::var("TUNEINFER_GPU_CK_PROBLEMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let mut rng = Lcg::new(77);
    for (solver, dir) in CASES {
        for arch in ["gfx90a", "gfx942"] {
            let cpu = cpu_predictor(arch, solver).with_threads(2);
            let gpu = GpuPredictor::load(arch, solver, &[common::models_dir()], ctx.clone())
                .expect("gpu model")
                .map_host(|h| h.with_catalogue_dir(Some(common::ck_dir())));
            let list = problems(&mut rng, &cpu, dir, per_case);
            assert!(list.len() >= per_case / 2, "{solver} {arch}: {} problems", list.len());
            for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
                let want = cpu.predict_batch(&list, mode);
                let got = gpu.predict_batch(&list, mode);
                let (mut model, mut worst) = (0, 0f32);
                for ((p, w), g) in list.iter().zip(&want).zip(&got) {
                    match (w, g) {
                        (Ok(w), Ok(g)) => {
                            let wc: Vec<(&str, _)> = w.iter().map(|x| (x.config.as_str(), x.source)).collect();
                            let gc: Vec<(&str, _)> = g.iter().map(|x| (x.config.as_str(), x.source)).collect();
                            assert_eq!(wc, gc, "{solver} {arch} {mode:?} {p}");
                            for (a, b) in w.iter().zip(g) {
                                if let (Some(a), Some(b)) = (a.score, b.score) {
                                    worst = worst.max((a - b).abs());
                                }
                            }
                            model += usize::from(w[0].source == tuneinfer::predict::Source::Model);
                        }
                        (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string()),
                        _ => panic!("{solver} {arch} {mode:?} {p}: cpu {w:?} vs gpu {g:?}"),
                    }
                }
                println!(
                    "{solver} {arch} {mode:?}: {} problems, {model} model answers, identical configs; worst score difference {worst:e}",
                    list.len()
                );
                assert!(worst <= 1e-3, "{mode:?}: score difference {worst}");
            }
        }
    }
    // Both searches ran resident with the table check (not the host search with GPU steps).
    let kernels = ctx.compiled_kernels().join(" ");
    assert!(kernels.contains("greedy_step+catalogue_rules"), "{kernels}");
    assert!(kernels.contains("beam_step+catalogue_rules"), "{kernels}");
}

/// MIOpen's 7 expected answers (../shared/miopen/README.md, "Features and expectations: CK
/// grouped-convolution solvers"; the same cases as tests/ck/ck_miopen.rs) on the GPU.
#[test]
fn gpu_reproduces_miopens_seven_expected_answers() {
    let Some(ctx) = common::gpu() else { return };
    let cases: [(&str, &str, &str, &str); 7] = [
        (
            "ConvHipImplicitGemmGroupFwdXdlops",
            "gfx90a",
            "conv -n 128 -c 64 -H 209 -W 209 -k 128 -y 3 -x 3 -p 0 -q 0 -u 2 -v 2 -g 1 --in_layout NHWC",
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<256, 128, 128, 16, Default, 32, 32, 2, 2, 4, 4, 4, 1, 1, 1>",
        ),
        (
            "ConvHipImplicitGemmGroupFwdXdlops",
            "gfx942",
            "convfp16 -n 256 -c 2016 -H 7 -W 7 -k 192 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -g 16 --in_layout NHWC",
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<64, 64, 64, 32, Filter1x1Stride1Pad0, 32, 32, 2, 2, 1, 1, 1, 1, 1, 1>",
        ),
        (
            "ConvHipImplicitGemmGroupBwdXdlops",
            "gfx942",
            "conv -n 96 -c 64 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 64 -F 2 --in_layout NHWC",
            "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<64, 64, 64, 32, 8, 8, Default, 32, 32, 2, 2, 1, 1, 1, 1>",
        ),
        (
            "ConvHipImplicitGemmGroupBwdXdlops",
            "gfx90a",
            "convfp16 -n 4 -c 256 -H 59 -W 59 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 32 -F 2 --in_layout NHWC",
            "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<128, 128, 32, 32, 8, 8, Default, 32, 32, 2, 1, 8, 8, 1, 1>",
        ),
        (
            "ConvHipImplicitGemmGroupWrwXdlops",
            "gfx942",
            "conv -n 512 -c 3 -H 219 -W 219 -k 64 -y 11 -x 11 -p 2 -q 2 -u 4 -v 4 -g 1 -F 4 --in_layout NHWC",
            "DeviceGroupedConvBwdWeight_Xdl_CShuffle<64, 64, 64, 4, Default, 4, 2, 2, 1, 4, 1, 4, 1, 1, 1>+1",
        ),
        (
            "ConvHipImplicitGemmGroupWrwXdlops",
            "gfx942",
            "convfp16 -n 1024 -c 480 -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -g 32 -F 4 --in_layout NHWC",
            "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle<64, 16, 16, 32, Default, 8, 1, 1, 1, 4, 1, 4, 1, 1, 1, BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v2, 1>+1",
        ),
        (
            "ConvHipImplicitGemmGroupWrwXdlops",
            "gfx90a",
            "convfp16 -n 16 -c 128 -H 27 -W 27 -k 256 -y 3 -x 3 -p 0 -q 0 -u 1 -v 2 -g 1 -F 4 --in_layout NHWC",
            "DeviceGroupedConvBwdWeight_Xdl_CShuffle<64, 64, 32, 4, Default, 8, 2, 1, 8, 4, 8, 2, 1, 1, 8>+1",
        ),
    ];
    for (solver, arch, driver, expected) in cases {
        let gpu = GpuPredictor::load(arch, solver, &[common::models_dir()], ctx.clone())
            .expect("gpu model")
            .map_host(|h| h.with_catalogue_dir(Some(common::ck_dir())));
        let problem = ConvProblem::parse(driver).expect("problem parses");
        let got = gpu.predict_one(&problem, DecodeMode::Miopen).expect("prediction");
        assert_eq!(got[0].config, expected, "{solver} {arch}: {driver}");
    }
}

/// beam_step.wgsl with the catalogue library against one iteration of the beam search written
/// out by hand, with hypotheses finishing at their own lengths (gfx942: the first value picks a
/// kernel type of 15, 17 or 18 values) into a finished list that already holds some. Scores
/// come from few levels so ties (in the candidates and in the finished list) are common.
#[test]
fn beam_step_with_the_table_check_keeps_finished_lists_in_order() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(31);
    let (mut kept_total, mut finished_new, mut tied) = (0, 0, 0);
    for (solver, dir) in [CASES[0], CASES[2]] {
        let cpu = cpu_predictor("gfx942", solver);
        let (vocab, meta) = (cpu.model.vocab(), cpu.model.metadata());
        let v = vocab.len();
        let token_of = |value: i32| -> Option<u32> {
            (value >= 0)
                .then(|| vocab.token_value.iter().position(|&x| x == value as u32))
                .flatten()
                .map(|t| t as u32)
        };
        let list = problems(&mut rng, &cpu, dir, 60);
        let constraints: Vec<_> = list
            .iter()
            .map(|p| cpu.solver.constraint(&cpu.target, p, vocab, meta).expect("constraint"))
            .collect();
        let blocks: Vec<Vec<i32>> = constraints.iter().map(|c| c.gpu_table().expect("table")).collect();
        let max_len = blocks.iter().map(|b| b[1] as usize).max().unwrap_or(1);
        let (width, words) = (4usize, 2 * max_len + 4);
        let (mut rules, mut tables) = (Vec::new(), Vec::new());
        let (mut live, mut fin, mut scores, mut logp) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for b in &blocks {
            rules.push([(8 * blocks.len() + tables.len()) as i32, 0, 0, 0, 0, 0, 0, 0]);
            tables.extend_from_slice(b);
            let (r, w, nv) = (b[0] as usize, b[1] as usize, b[2] as usize);
            let lens_at = 8 + 2 * nv;
            let cells_at = lens_at + 2 * r;
            let row = |i: usize| &b[cells_at + i * w..cells_at + (i + 1) * w];
            // A record spelling the first `len` values of row `i` (None if it cannot).
            let record = |i: usize, len: usize, status: u32, score: f32| -> Option<Vec<u32>> {
                let mut h = vec![0u32; words];
                for (k, &value) in row(i)[..len].iter().enumerate() {
                    h[k] = token_of(value)?;
                    h[max_len + k] = value as u32;
                }
                h[2 * max_len] = len as u32;
                h[2 * max_len + 1] = status;
                h[2 * max_len + 2] = score.to_bits();
                Some(h)
            };
            let dead = |h: &mut Vec<u32>| {
                h.fill(0);
                h[2 * max_len + 1] = 2;
            };
            // Live slots: one prefix length per problem, often one value short of a row's end.
            let pivot = rng.below(r as u64) as usize;
            let len = if rng.below(2) == 0 {
                (b[lens_at + pivot] as usize).saturating_sub(1)
            } else {
                rng.below(w as u64) as usize
            };
            for slot in 0..width {
                let i = if slot == 0 { pivot } else { rng.below(r as u64) as usize };
                let score = -(rng.below(3) as f32) * 0.5;
                let ok = (b[lens_at + i] as usize) > len && (slot == 0 || rng.below(4) != 0);
                let mut h = if ok { record(i, len, 0, score) } else { None }.unwrap_or_else(|| vec![0; words]);
                if !ok || h[2 * max_len] as usize != len {
                    dead(&mut h);
                }
                live.extend_from_slice(&h);
                for _ in 0..v {
                    scores.push(rng.below(3) as f32);
                    logp.push(if rng.below(60) == 0 {
                        f32::NAN
                    } else {
                        -(rng.below(4) as f32) * 0.25
                    });
                }
            }
            // A finished list already holding some complete rows, in its order.
            let mut held: Vec<Vec<u32>> = (0..rng.below(width as u64 + 1))
                .filter_map(|_| {
                    let i = rng.below(r as u64) as usize;
                    record(i, b[lens_at + i] as usize, 1, -1.0 - (rng.below(3) as f32) * 0.5)
                })
                .collect();
            held.sort_by(|x, y| finished_order(x, y, max_len));
            for q in 0..width {
                let mut h = held.get(q).cloned().unwrap_or_else(|| vec![0; words]);
                if q >= held.len() {
                    dead(&mut h);
                }
                fin.extend_from_slice(&h);
            }
        }
        let mut hyp = live.clone();
        hyp.extend_from_slice(&fin);
        let mut vocab_words = tuneinfer::gpu::catalogue_vocab_words(vocab);
        vocab_words.push(0);
        let step = host::SearchStepInputs {
            rules_library: CATALOGUE_RULES,
            scores: &scores,
            logp: &logp,
            vocab_words: &vocab_words,
            rules: &rules,
            tables: &tables,
            hyp: &hyp,
            vocab: v,
            max_len,
        };
        let (out, parents, feed) = host::beam_step(&ctx, &step, width, vocab.values.len(), 0).expect("kernel");
        let rows = list.len() * width;
        for (p, c) in constraints.iter().enumerate() {
            let slot = |s: usize| &live[(p * width + s) * words..(p * width + s + 1) * words];
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
                if kept.iter().any(|k| k.0 == values) || !c.completable(&values) {
                    continue;
                }
                kept.push((values, t, s, score));
            }
            kept_total += kept.len();
            // The expected finished list: the held one, then this step's in kept order, sorted
            // stably by score and last token, the best `width`.
            let mut expected: Vec<Vec<u32>> = (0..width)
                .map(|q| fin[(p * width + q) * words..(p * width + q + 1) * words].to_vec())
                .filter(|h| h[2 * max_len + 1] == 1)
                .collect();
            for (q, (values, t, s, score)) in kept.iter().enumerate() {
                let got = &out[(p * width + q) * words..(p * width + q + 1) * words];
                let len = values.len();
                let finished = len >= c.config_len(values);
                assert_eq!(
                    &got[max_len..max_len + len],
                    &values[..],
                    "{solver} problem {p} slot {q}"
                );
                assert_eq!(got[len - 1], *t as u32);
                assert_eq!(got[2 * max_len] as usize, len);
                assert_eq!(
                    got[2 * max_len + 1],
                    u32::from(finished),
                    "{solver} problem {p} slot {q}"
                );
                assert_eq!(got[2 * max_len + 2], score.to_bits());
                assert_eq!(parents[p * width + q] as usize, p * width + s);
                assert_eq!(feed[p * width + q], *t as u32);
                if finished {
                    finished_new += 1;
                    let mut h = slot(*s).to_vec();
                    h[len - 1] = *t as u32;
                    h[max_len + len - 1] = values[len - 1];
                    h[2 * max_len] = len as u32;
                    h[2 * max_len + 1] = 1;
                    h[2 * max_len + 2] = score.to_bits();
                    expected.push(h);
                }
            }
            for q in kept.len()..width {
                let got = &out[(p * width + q) * words..(p * width + q + 1) * words];
                assert_eq!(
                    got[2 * max_len + 1],
                    2,
                    "{solver} problem {p} slot {q}: dead; kept {kept:?}, got {got:?}, parent {}",
                    parents[p * width + q]
                );
            }
            expected.sort_by(|x, y| finished_order(x, y, max_len));
            tied += expected
                .windows(2)
                .filter(|w| w[0][2 * max_len + 2] == w[1][2 * max_len + 2])
                .count();
            expected.truncate(width);
            for q in 0..width {
                let got = &out[(rows + p * width + q) * words..(rows + p * width + q + 1) * words];
                match expected.get(q) {
                    None => assert_eq!(got[2 * max_len + 1], 2, "{solver} problem {p} finished {q}: empty"),
                    Some(h) => {
                        let len = h[2 * max_len] as usize;
                        assert_eq!(got[2 * max_len..2 * max_len + 3], h[2 * max_len..2 * max_len + 3]);
                        assert_eq!(&got[..len], &h[..len], "{solver} problem {p} finished {q}: tokens");
                        assert_eq!(&got[max_len..max_len + len], &h[max_len..max_len + len]);
                    }
                }
            }
        }
    }
    println!("{kept_total} hypotheses kept, {finished_new} finished this step, {tied} ties in finished lists");
    assert!(kept_total > 100 && finished_new > 20 && tied > 5);
}

/// search::beam_search's final order of finished records: higher score, then larger last token.
fn finished_order(x: &[u32], y: &[u32], max_len: usize) -> std::cmp::Ordering {
    let score = |h: &[u32]| f32::from_bits(h[2 * max_len + 2]);
    let last = |h: &[u32]| h[h[2 * max_len] as usize - 1];
    score(y).total_cmp(&score(x)).then(last(y).cmp(&last(x)))
}
