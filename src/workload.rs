//! Reproducible problem sets for benchmarks: random problems of a solver's kind drawn from
//! typical layer sizes (NCHW, fp32/fp16, the solver's directions and filter, stride 1, "same"
//! padding), kept only when the solver applies.

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction};
use crate::solvers::{Target, Tunable};
use crate::testutil::Lcg;

/// `count` problems `solver` applies to on `arch`, the same for a seed. An error when the
/// solver accepts too few of the drawn problems (its kind is not what this generator draws).
pub fn problems(solver: &dyn Tunable, arch: &str, count: usize, seed: u64) -> Result<Vec<ConvProblem>> {
    const CHANNELS: &[u64] = &[16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048];
    const SIZES: &[u64] = &[1, 3, 7, 14, 17, 28, 35, 56, 112];
    const BATCHES: &[u64] = &[1, 2, 4, 8, 16, 32, 64, 128, 256];
    let target = Target::new(arch);
    let (directions, filter) = solver.workload_kind();
    let pad = filter / 2;
    let mut rng = Lcg::new(seed);
    let mut out = Vec::with_capacity(count);
    let pick = |rng: &mut Lcg, v: &[u64]| v[rng.below(v.len() as u64) as usize];
    let mut drawn = 0usize;
    while out.len() < count {
        drawn += 1;
        // Give up when the solver takes almost none of what is drawn (e.g. on an arch where it
        // never applies): after 10,000 draws with nothing, or 100 per problem asked.
        if (out.is_empty() && drawn > 10_000) || drawn > 10_000 + 100 * count {
            return Err(Error::Usage(format!(
                "{} applies to too few random {filter}x{filter} problems on {arch}; give the problems with --input FILE",
                solver.solver_name()
            )));
        }
        let (c, k) = (pick(&mut rng, CHANNELS), pick(&mut rng, CHANNELS));
        let hw = pick(&mut rng, SIZES);
        let n = pick(&mut rng, BATCHES);
        let prec = if rng.below(2) == 0 { "FP32" } else { "FP16" };
        let dir = match directions.get(rng.below(directions.len().max(1) as u64) as usize) {
            Some(Direction::Forward) | None => "F",
            Some(Direction::BackwardData) => "B",
            Some(Direction::BackwardWeights) => "W",
        };
        let key = format!("{c}-{hw}-{hw}-{filter}x{filter}-{k}-{hw}-{hw}-{n}-{pad}x{pad}-1x1-1x1-0-NCHW-{prec}-{dir}");
        if let Ok(p) = ConvProblem::from_perfdb_key(&key) {
            if solver.applicable(&target, &p).is_ok() {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// The benchmarks' usual workload: ConvAsm1x1U problems on gfx906.
pub fn asm1x1u_problems(count: usize, seed: u64) -> Vec<ConvProblem> {
    let solver = crate::solvers::by_name("ConvAsm1x1U").ok().and_then(|s| s.tunable());
    solver
        .and_then(|s| problems(s, "gfx906", count, seed).ok())
        .unwrap_or_default()
}
