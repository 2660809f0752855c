//! The WGSL twin of ConvAsmBwdWrW1x1's rules (`shaders/conv_asm_bwd_wrw_1x1_rules.wgsl`) against
//! `Rules::prefix_valid` and `Rules::completable` over random prefixes of every length, on random
//! and perf-db problems (fp32, fp16, bf16, odd C), with domains that make dead ends common.
#![cfg(feature = "gpu")]

mod common;

use tuneinfer::data::perfdb;
use tuneinfer::gpu::kernels::host;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::conv_asm_bwd_wrw_1x1::{Rules, NAME, NUM_PARAMS};
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

#[test]
fn wgsl_rules_match_cpu_rules() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut rng = Lcg::new(17);
    let mut problems = Vec::new();
    for c in [1u64, 3, 64, 127, 2048] {
        for ty in ["FP32", "FP16", "BF16"] {
            let key = format!("64-14-14-1x1-{c}-14-14-1-0x0-1x1-1x1-0-NCHW-{ty}-W");
            problems.push(ConvProblem::from_perfdb_key(&key).expect("key"));
        }
    }
    for db in ["gfx900_56.db", "gfx906_60.db"] {
        let rows = perfdb::solver_rows(&common::perfdb_dir().join(db), NAME).expect("rows");
        problems.extend(rows.rows.into_iter().step_by(400).map(|r| r.problem));
    }
    // The vocabulary's values as the search's look-ahead sees them: complete, without 0 or 1
    // (completions need other values), and tiny.
    let domains: [&[i64]; 3] = [&[0, 1, 2, 3, 4, 5, 6, 7, 8, 16], &[2, 3, 4, 8, 16], &[1, 16]];
    let (mut cases, mut checked) = (0, [0usize; 3]);
    for domain in domains {
        let (mut words, mut prefixes, mut lens, mut want) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for p in &problems {
            let rules = Rules::new(p);
            for _ in 0..60 {
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
