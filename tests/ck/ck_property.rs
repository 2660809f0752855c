//! Property test over generated grouped-convolution problems: in both decode modes every answer
//! names a kernel instance of the right catalogue that supports the problem (and, for gfx942
//! wrw beam answers, a split-k value MIOpen accepts).

#[allow(unused_imports)]
use crate::common;

use tuneinfer::predict::{DecodeMode, Predictor, Source};
use tuneinfer::problem::{ConvProblem, Direction, Precision};
use tuneinfer::solvers::ck::catalogue::{file_name, Catalogue};
use tuneinfer::solvers::ck::instance::CkInstance;
use tuneinfer::solvers::ck::rules::{self, CkProblem, CkVersion};

/// MIOpen 2024's rules: `valid_kernels` (no split-k) or a split-k id's.
fn supports(i: &CkInstance, p: &CkProblem) -> bool {
    rules::supports(i, p, None, CkVersion::Miopen2024).is_ok()
}

fn supports_split_k(i: &CkInstance, p: &CkProblem, split_k: u64) -> bool {
    rules::supports(i, p, Some(split_k), CkVersion::Miopen2024).is_ok()
}
use tuneinfer::testutil::Lcg;
use tuneinfer::Error;

const PER_CASE: usize = 250;

fn pick<T: Copy>(rng: &mut Lcg, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

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

/// Checks that `config` names a supported instance (with a valid split-k after `+`).
fn assert_supported(catalogue: &Catalogue, problem: &ConvProblem, config: &str, beam_split_k: bool) {
    let dims = CkProblem::new(problem, problem.precision.into()).unwrap();
    let (name, split) = match config.rsplit_once('+') {
        Some((n, s)) if problem.direction == Direction::BackwardWeights => (n, s.parse::<u64>().ok()),
        _ => (config, None),
    };
    if problem.direction == Direction::BackwardWeights {
        let sk = split.unwrap_or_else(|| panic!("wrw answer without split-k: {config}"));
        if !beam_split_k {
            assert_eq!(sk, 1, "{config}");
        }
        assert!(
            catalogue.instances.iter().any(|i| i.type_string == name
                && supports(i, &dims)
                && (!beam_split_k || supports_split_k(i, &dims, sk))),
            "{problem}: {config} is not a supported instance"
        );
    } else {
        assert!(
            catalogue
                .instances
                .iter()
                .any(|i| i.type_string == name && supports(i, &dims)),
            "{problem}: {config} is not a supported instance"
        );
    }
}

#[test]
fn every_answer_is_a_supported_instance() {
    let mut rng = Lcg::new(2024);
    let cases = [
        ("ConvHipImplicitGemmGroupFwdXdlops", Direction::Forward),
        ("ConvHipImplicitGemmGroupBwdXdlops", Direction::BackwardData),
        ("ConvHipImplicitGemmGroupWrwXdlops", Direction::BackwardWeights),
    ];
    let mut total = 0;
    for (solver, dir) in cases {
        for arch in ["gfx90a", "gfx942"] {
            let predictor = Predictor::load(arch, solver, &[common::models_dir()])
                .unwrap()
                .with_catalogue_dir(Some(common::ck_dir()))
                .with_threads(2);
            for prec in [Precision::Fp32, Precision::Fp16] {
                let catalogue =
                    Catalogue::load(&common::ck_dir().join(file_name(dir, prec).unwrap()), dir, prec).unwrap();
                let problems: Vec<ConvProblem> = std::iter::repeat_with(|| random_problem(&mut rng, dir, prec))
                    .flatten()
                    .take(PER_CASE)
                    .collect();
                total += problems.len();
                let miopen = predictor.predict_batch(&problems, DecodeMode::Miopen);
                let beam = predictor.predict_batch(&problems, DecodeMode::Beam { width: 4, top: 4 });
                let (mut model, mut default, mut none) = (0, 0, 0);
                for ((p, m), b) in problems.iter().zip(miopen).zip(beam) {
                    let dims = CkProblem::new(p, p.precision.into()).unwrap();
                    let any_supported = catalogue.supported(&dims).next().is_some();
                    match (m, b) {
                        (Ok(m), Ok(b)) => {
                            assert!(any_supported);
                            assert_eq!(m.len(), 1);
                            assert_supported(&catalogue, p, &m[0].config, false);
                            match m[0].source {
                                Source::Model => model += 1,
                                Source::Default => {
                                    default += 1;
                                    let first = catalogue.supported(&dims).next().unwrap();
                                    assert!(m[0].config.starts_with(&first.type_string), "{p}");
                                }
                                Source::Neighbour | Source::PerfDb => {
                                    panic!("a predictor answers with neither a neighbour nor a perf db: {p}")
                                }
                            }
                            assert!(!b.is_empty() && b.len() <= 4);
                            for (i, a) in b.iter().enumerate() {
                                assert_supported(&catalogue, p, &a.config, a.source == Source::Model);
                                assert!(b[..i].iter().all(|x| x.config != a.config), "duplicate answer");
                                if i > 0 {
                                    assert!(a.score <= b[i - 1].score);
                                }
                            }
                            // Width-1 beam agrees with MIOpen whenever MIOpen's walk succeeds
                            // (gfx942 wrw never succeeds: its split-k step never matches).
                            if m[0].source == Source::Model {
                                let one = predictor.predict_one(p, DecodeMode::Beam { width: 1, top: 1 }).unwrap();
                                assert_eq!(one[0].config, m[0].config, "{p}");
                            }
                        }
                        (Err(Error::NotApplicable { .. }), Err(Error::NotApplicable { .. })) => {
                            assert!(!any_supported, "{p}");
                            none += 1;
                        }
                        (m, b) => panic!("{p}: {m:?} / {b:?}"),
                    }
                }
                eprintln!("{solver} {arch} {prec}: model {model}, default {default}, no instance {none}");
                if arch == "gfx942" && dir == Direction::BackwardWeights {
                    assert_eq!(model, 0, "MIOpen's gfx942 wrw walk always falls back");
                }
                assert!(model + default > PER_CASE / 2);
            }
        }
    }
    assert!(total >= 3000);
}
