//! The catalogue constraint on the GPU: `shaders/catalogue_rules.wgsl` against
//! `CatalogueConstraint` on random prefixes of generated CK problems, and the resident greedy
//! and beam searches giving exactly the CPU path's configs (MIOpen's 7 expected answers too).
#![cfg(feature = "gpu")]

mod common;

use std::sync::Arc;

use tuneinfer::gpu::kernels::host;
use tuneinfer::gpu::{GpuContext, GpuPredictor};
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

fn gpu() -> Option<Arc<GpuContext>> {
    match GpuContext::shared() {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            assert!(
                std::env::var("TUNEINFER_CI").ok().as_deref() != Some("1"),
                "no GPU adapter in CI: {e}"
            );
            println!("skipped: no GPU adapter ({e})");
            None
        }
    }
}

fn pick<T: Copy>(rng: &mut Lcg, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

/// A random grouped convolution (the generator of tests/ck_property.rs).
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
    let Some(ctx) = gpu() else { return };
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
            let got = host::rules_check_words(&ctx, CATALOGUE_RULES, &words, &prefixes, &lens).expect("rules_check");
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
    let Some(ctx) = gpu() else { return };
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
/// grouped-convolution solvers"; the same cases as tests/ck_miopen.rs) on the GPU.
#[test]
fn gpu_reproduces_miopens_seven_expected_answers() {
    let Some(ctx) = gpu() else { return };
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
