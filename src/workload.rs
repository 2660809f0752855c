//! Reproducible problem sets for benchmarks: random ConvAsm1x1U problems MIOpen would send to
//! the model (1x1, stride 1, NCHW, fp32/fp16, forward/backward data), checked applicable.

use crate::problem::ConvProblem;
use crate::solvers::{Target, Tunable};
use crate::testutil::Lcg;

/// `count` applicable ConvAsm1x1U problems drawn from typical layer sizes, the same for a seed.
pub fn asm1x1u_problems(count: usize, seed: u64) -> Vec<ConvProblem> {
    let solver: &dyn Tunable = &crate::solvers::conv_asm_1x1u::ConvAsm1x1USolver;
    let target = Target::new("gfx906");
    const CHANNELS: &[u64] = &[16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048];
    const SIZES: &[u64] = &[1, 3, 7, 14, 17, 28, 35, 56, 112];
    const BATCHES: &[u64] = &[1, 2, 4, 8, 16, 32, 64, 128, 256];
    let mut rng = Lcg::new(seed);
    let mut out = Vec::with_capacity(count);
    let pick = |rng: &mut Lcg, v: &[u64]| v[rng.below(v.len() as u64) as usize];
    while out.len() < count {
        let (c, k) = (pick(&mut rng, CHANNELS), pick(&mut rng, CHANNELS));
        let hw = pick(&mut rng, SIZES);
        let n = pick(&mut rng, BATCHES);
        let prec = if rng.below(2) == 0 { "FP32" } else { "FP16" };
        let dir = if rng.below(2) == 0 { "F" } else { "B" };
        let key = format!("{c}-{hw}-{hw}-1x1-{k}-{hw}-{hw}-{n}-0x0-1x1-1x1-0-NCHW-{prec}-{dir}");
        if let Ok(p) = ConvProblem::from_perfdb_key(&key) {
            if solver.applicable(&target, &p).is_ok() {
                out.push(p);
            }
        }
    }
    out
}
