//! ConvAsm1x1U rules, features, default and constraint adapter, checked against hand-derived
//! cases from `../shared/miopen/README.md` ("ConvAsm1x1U parameters and validity").
//!
//! Notation in the comments: e = 1 fp32 / 2 fp16; C_in, K_out = channels of the direction's
//! input / output (fwd: C, K; bwd: K, C); HW = H*W of the direction's output; vgprs as in the
//! README: 4 + 2*ceil(cpw*n*c/e) + cpw*n*k + (HW % e != 0) + 1.

use tuneinfer::problem::{ConvProblem, Direction, Layout, Precision};
use tuneinfer::search::{Constraint, Vocabulary};
use tuneinfer::solvers::conv_asm_1x1u::*;
use tuneinfer::Error;

/// A 1x1, stride 1, pad 0 problem (out size = in size).
fn prob(prec: Precision, dir: Direction, n: u64, c: u64, k: u64, h: u64, w: u64) -> ConvProblem {
    ConvProblem {
        n,
        c,
        k,
        in_h: h,
        in_w: w,
        out_h: h,
        out_w: w,
        filter_h: 1,
        filter_w: 1,
        pad_h: 0,
        pad_w: 0,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        groups: 1,
        bias: false,
        layout: Layout::Nchw,
        precision: prec,
        direction: dir,
        depth: None,
    }
}

use Direction::{BackwardData as Bwd, BackwardWeights as Wrw, Forward as Fwd};
use Precision::{Bf16, Fp16, Fp32};

/// fp32 forward N=10 C=64 K=32 14x14: e=1, C_in=64, K_out=32, HW=196 (even), N=10.
fn base32() -> Rules {
    Rules::new(&prob(Fp32, Fwd, 10, 64, 32, 14, 14))
}

/// README case 1: fp32 backward data N=512 C=192 K=288 56x56.
fn readme_bwd() -> ConvProblem {
    prob(Fp32, Bwd, 512, 192, 288, 56, 56)
}

/// README case 2: fp16 forward N=256 C=2048 K=512 7x7.
fn readme_fwd16() -> ConvProblem {
    prob(Fp16, Fwd, 256, 2048, 512, 7, 7)
}

#[test]
fn constants() {
    assert_eq!(NAME, "ConvAsm1x1U");
    assert_eq!(NUM_PARAMS, 8);
    assert_eq!(PARAM_NAMES[0], "read_size");
    assert_eq!(PARAM_NAMES[1], "k_mult");
    assert_eq!(PARAM_NAMES[7], "waves_k_in_group");
}

#[test]
fn rule1_read_size() {
    let r = base32();
    assert!(r.prefix_valid(&[]));
    // read_size in 1..4
    assert!(r.prefix_valid(&[1]));
    assert!(r.prefix_valid(&[4]));
    assert!(!r.prefix_valid(&[5]));
    assert!(!r.prefix_valid(&[0]));
    assert!(!r.prefix_valid(&[-1]));
}

#[test]
fn rule2_k_mult() {
    let r = base32();
    // {1,4,8,...,32}: 12 = 3*4 is in, 2 and 36 are not; 0 is not.
    assert!(r.prefix_valid(&[1, 12]));
    assert!(r.prefix_valid(&[1, 1]));
    assert!(r.prefix_valid(&[1, 32]));
    assert!(!r.prefix_valid(&[1, 2]));
    assert!(!r.prefix_valid(&[1, 36]));
    assert!(!r.prefix_valid(&[1, 0]));
    // fp16 (e=2): k_mult % 2 == 0, so 1 fails and 4 passes.
    let r16 = Rules::new(&prob(Fp16, Fwd, 10, 64, 32, 14, 14));
    assert!(r16.prefix_valid(&[1, 4]));
    assert!(!r16.prefix_valid(&[1, 1]));
    // backward data N=16 C=24 K=64: K_out = C = 24; 24 % 16 = 8 fails, 24 % 8 = 0 passes.
    let rb = Rules::new(&prob(Fp32, Bwd, 16, 24, 64, 14, 14));
    assert!(rb.prefix_valid(&[1, 8]));
    assert!(!rb.prefix_valid(&[1, 16]));
    // the same problem forward has no divisibility check: 16 passes.
    let rf = Rules::new(&prob(Fp32, Fwd, 16, 24, 64, 14, 14));
    assert!(rf.prefix_valid(&[1, 16]));
}

#[test]
fn rule3_chunks_per_wave() {
    let r = base32();
    // fp32: read_size*1 <= cpw; cpw in 1..16.
    assert!(r.prefix_valid(&[1, 4, 1]));
    assert!(r.prefix_valid(&[4, 4, 16]));
    assert!(!r.prefix_valid(&[2, 4, 1])); // 2*1 > 1
    assert!(!r.prefix_valid(&[1, 4, 17])); // out of 1..16
    assert!(!r.prefix_valid(&[1, 4, 0]));
    // fp16: read_size*2 <= cpw and cpw even.
    let r16 = Rules::new(&prob(Fp16, Fwd, 10, 64, 32, 14, 14));
    assert!(r16.prefix_valid(&[1, 4, 2]));
    assert!(!r16.prefix_valid(&[1, 4, 3])); // 3 % 2 != 0
    assert!(!r16.prefix_valid(&[2, 4, 2])); // 2*2 = 4 > 2
    assert!(r16.prefix_valid(&[2, 4, 4]));
}

#[test]
fn rule4_chunk_size() {
    let r = base32();
    // HW = 196: ceil(196/64) = 4, so cpw 4 passes and cpw 5 fails with chunk_size 64.
    assert!(r.prefix_valid(&[1, 4, 4, 64]));
    assert!(!r.prefix_valid(&[1, 4, 5, 64]));
    // 48 is not a power of two, 128 is out of range.
    assert!(!r.prefix_valid(&[1, 4, 4, 48]));
    assert!(!r.prefix_valid(&[1, 4, 4, 128]));
    assert!(r.prefix_valid(&[1, 4, 16, 1]));
    // backward: HW is dx's (in_h x in_w); with a 2x2 image ceil(4/2) = 2.
    let rb = Rules::new(&prob(Fp32, Bwd, 10, 64, 32, 2, 2));
    assert!(rb.prefix_valid(&[1, 4, 2, 2]));
    assert!(!rb.prefix_valid(&[1, 4, 3, 2]));
}

#[test]
fn rule5_n_mult() {
    let r = base32();
    // N = 10, chunk_size 16: 64/16 = 4, ceil(10/4) = 3: n_mult 3 passes, 4 fails.
    assert!(r.prefix_valid(&[1, 4, 4, 16, 3]));
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 4]));
    // chunk_size 64: 64/64 = 1, ceil(10/1) = 10, but n_mult is capped at 8.
    assert!(r.prefix_valid(&[1, 4, 4, 64, 8]));
    assert!(!r.prefix_valid(&[1, 4, 4, 64, 9]));
    assert!(!r.prefix_valid(&[1, 4, 4, 64, 0]));
}

#[test]
fn rule6_c_mult_and_registers() {
    let r = base32();
    // [1,4,4,16,2,c]: vgprs = 4 + 2*(4*2*c) + 4*2*4 + 0 + 1 = 37 + 16c; sgprs = 25 + 8c.
    // c = 8: vgprs 165, sgprs 89: passes. c = 16: vgprs 293 >= 256: fails.
    assert!(r.prefix_valid(&[1, 4, 4, 16, 2, 8]));
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 2, 16]));
    // c = 3 is not a power of two; 64 out of range.
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 1, 3]));
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 1, 64]));
    // vgprs boundary: [1,8,5,32,5,1]: rule 4: ceil(196/32) = 7 >= 5; rule 5: 64/32 = 2,
    // ceil(10/2) = 5 >= 5; vgprs = 4 + 2*25 + 25*8 + 0 + 1 = 255 < 256: passes.
    assert!(r.prefix_valid(&[1, 8, 5, 32, 5, 1]));
    // with c = 2: vgprs = 4 + 100 + 200 + 1 = 305: fails.
    assert!(!r.prefix_valid(&[1, 8, 5, 32, 5, 2]));
    // sgprs: 25 + 2*16*2 = 89 < 102 passes; 25 + 2*20*2 = 105 fails
    // ([1,k,1,16,1,2]: vgprs = 4 + 4 + k + 1, small).
    assert!(r.prefix_valid(&[1, 16, 1, 16, 1, 2]));
    assert!(!r.prefix_valid(&[1, 20, 1, 16, 1, 2]));
    // fp16: c_mult % 2 == 0: [2,4,4,16,1,c] (HW 196: ceil(196/16) = 13 >= 4) with c = 1 fails.
    let r16 = Rules::new(&prob(Fp16, Fwd, 10, 64, 32, 14, 14));
    assert!(r16.prefix_valid(&[2, 4, 4, 16, 1, 2]));
    assert!(!r16.prefix_valid(&[2, 4, 4, 16, 1, 1]));
}

#[test]
fn rule7_waves_c_in_group() {
    let r = base32();
    // [1,4,4,16,2,8] is valid (rule 6 above). C_in = 64.
    // wc = 4: ceil(64/4) = 16, 16 % 8 = 0; last = 64 - 48 = 16: passes.
    assert!(r.prefix_valid(&[1, 4, 4, 16, 2, 8, 4]));
    // wc = 3: ceil(64/3) = 22, 22 % 8 = 6: fails.
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 2, 8, 3]));
    // wc = 9 is out of 1..8.
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 1, 1, 9]));
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 1, 1, 0]));
    // C_in = 7 (fp32 fwd C=7): wc = 2, c = 2: ceil(7/2) = 4 divisible, last = 7 - 4 = 3 is not.
    let r7 = Rules::new(&prob(Fp32, Fwd, 10, 7, 32, 14, 14));
    assert!(!r7.prefix_valid(&[1, 4, 4, 16, 1, 2, 2]));
    // ... with c = 1 both are divisible.
    assert!(r7.prefix_valid(&[1, 4, 4, 16, 1, 1, 2]));
    // wc <= C_in: C_in = 5: wc 6 fails; wc 4 gives cpw = 2 and last = 5 - 6 = -1, divisible by
    // c_mult 1 (the README asks only divisibility; MIOpen's int arithmetic agrees).
    let r5 = Rules::new(&prob(Fp32, Fwd, 10, 5, 32, 14, 14));
    assert!(!r5.prefix_valid(&[1, 4, 4, 16, 1, 1, 6]));
    assert!(r5.prefix_valid(&[1, 4, 4, 16, 1, 1, 4]));
    assert!(r5.prefix_valid(&[1, 4, 4, 16, 1, 1, 5]));
    // backward: C_in is K (dy channels). Bwd N=10 C=64 K=6: wc 6 passes, 7 fails (7 > 6).
    let rb = Rules::new(&prob(Fp32, Bwd, 10, 64, 6, 14, 14));
    assert!(rb.prefix_valid(&[1, 4, 4, 16, 1, 1, 6]));
    assert!(!rb.prefix_valid(&[1, 4, 4, 16, 1, 1, 7]));
}

#[test]
fn rule8_waves_k_in_group() {
    let r = base32();
    // [1,4,4,16,2,8,4]: vgprs = 165, (256/165)*4 = 4: wc*wk = 4*1 passes, 4*2 = 8 fails.
    assert!(r.prefix_valid(&[1, 4, 4, 16, 2, 8, 4, 1]));
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 2, 8, 4, 2]));
    // [1,16,4,16,1,1,1]: vgprs = 4 + 2*4 + 64 + 1 = 77, (256/77)*4 = 12.
    // k*wk <= K_out = 32: wk 2 gives 32 (passes), wk 4 gives 64 (fails).
    assert!(r.prefix_valid(&[1, 16, 4, 16, 1, 1, 1, 2]));
    assert!(!r.prefix_valid(&[1, 16, 4, 16, 1, 1, 1, 4]));
    // wk = 3 is not a power of two; 16 out of range.
    assert!(!r.prefix_valid(&[1, 4, 4, 16, 1, 1, 1, 3]));
    assert!(!r.prefix_valid(&[1, 1, 4, 16, 1, 1, 1, 16]));
    // [1,4,1,16,1,1,4,wk]: vgprs = 4 + 2 + 4 + 1 = 11, (256/11)*4 = 92.
    // wc*wk <= 16: 4*4 = 16 passes, 4*8 = 32 fails (k*wk = 32 <= 32 still holds).
    assert!(r.prefix_valid(&[1, 4, 1, 16, 1, 1, 4, 4]));
    assert!(!r.prefix_valid(&[1, 4, 1, 16, 1, 1, 4, 8]));
    // The odd-HW vgpr: fp16 fwd N=8 C=12 K=64, config [1,8,8,4,1,2,3,4]:
    // vgprs = 4 + 2*ceil(8*1*2/2) + 8*1*8 + odd + 1 = 85 + odd.
    // 8x8 (HW 64 even): (256/85)*4 = 12 >= 3*4: passes.
    // 7x7 (HW 49 odd): (256/86)*4 = 8 < 12: fails.
    // (rule 4: ceil(49/4) = 13 >= 8; rule 5: ceil(8/16) = 1 >= 1; rule 7: ceil(12/3) = 4,
    // last 4, both even; k*wk = 32 <= 64.)
    let even = Rules::new(&prob(Fp16, Fwd, 8, 12, 64, 8, 8));
    let odd = Rules::new(&prob(Fp16, Fwd, 8, 12, 64, 7, 7));
    assert!(even.is_valid(&[1, 8, 8, 4, 1, 2, 3, 4]));
    assert!(odd.prefix_valid(&[1, 8, 8, 4, 1, 2, 3]));
    assert!(!odd.is_valid(&[1, 8, 8, 4, 1, 2, 3, 4]));
}

#[test]
fn prefix_longer_than_eight_is_invalid() {
    let r = base32();
    assert!(!r.prefix_valid(&[1, 4, 1, 16, 1, 1, 1, 1, 1]));
    assert!(!r.is_valid(&[1, 4, 1, 16, 1, 1, 1]));
    assert!(r.is_valid(&[1, 4, 1, 16, 1, 1, 1, 1]));
}

#[test]
fn readme_known_good_answers_are_valid() {
    // Hand check of 1,16,1,64,2,2,1,4 for fp32 bwd N=512 C=192 K=288 56x56:
    // C_in = 288, K_out = 192, HW = 3136. 192 % 16 = 0; cpw 1 >= 1*1; ceil(3136/64) = 49 >= 1;
    // 64/64 = 1, ceil(512/1) = 512 >= 2; vgprs = 4 + 2*4 + 32 + 0 + 1 = 45, sgprs 89;
    // 288 % 2 = 0; 16*4 = 64 <= 192, 4 <= 16, (256/45)*4 = 20 >= 4.
    let r = Rules::new(&readme_bwd());
    assert!(r.is_valid(&parse_config("1,16,1,64,2,2,1,4").unwrap()));
    // Hand check of 2,8,4,16,1,4,1,4 for fp16 fwd N=256 C=2048 K=512 7x7:
    // e=2, HW = 49 (odd). 8 % 2 = 0; 2*2 <= 4, 4 % 2 = 0; ceil(49/16) = 4 >= 4;
    // ceil(256/4) = 64 >= 1; vgprs = 4 + 2*8 + 32 + 1 + 1 = 54, sgprs 25 + 64 = 89;
    // 2048 % 4 = 0; 32 <= 512, 4 <= 16, (256/54)*4 = 16 >= 4.
    let r = Rules::new(&readme_fwd16());
    assert!(r.is_valid(&parse_config("2,8,4,16,1,4,1,4").unwrap()));
    for p in [readme_bwd(), readme_fwd16()] {
        assert!(check_applicable(&p).is_ok());
    }
}

#[test]
fn readme_features() {
    // [prec, is_fwd, is_bwd, C, K, H, W, N]
    assert_eq!(
        features(&readme_bwd()),
        [2.0, 0.0, 1.0, 192.0, 288.0, 56.0, 56.0, 512.0]
    );
    assert_eq!(
        features(&readme_fwd16()),
        [1.0, 1.0, 0.0, 2048.0, 512.0, 7.0, 7.0, 256.0]
    );
    // H, W are those of the direction's input: dy (out_h x out_w) for backward.
    let mut p = readme_bwd();
    p.out_h = 5;
    p.out_w = 6;
    let f = features(&p);
    assert_eq!((f[5], f[6]), (5.0, 6.0));
    let mut p = readme_fwd16();
    p.out_h = 5;
    p.out_w = 6;
    let f = features(&p);
    assert_eq!((f[5], f[6]), (7.0, 7.0));
    // The 8x8 input is the diagonal matrix.
    let m = encoder_input(&readme_bwd());
    let f = features(&readme_bwd());
    assert_eq!(m.len(), 64);
    for t in 0..8 {
        for s in 0..8 {
            assert_eq!(m[t * 8 + s], if t == s { f[t] } else { 0.0 });
        }
    }
}

#[test]
fn static_default_hand_checked() {
    // fp32 bwd N=512 C=192 K=288 56x56: 4,16,4,16,2,1,1,1 is valid:
    // 192 % 16 = 0; 4*1 <= 4; ceil(3136/16) = 196 >= 4; 64/16 = 4, ceil(512/4) = 128 >= 2;
    // vgprs = 4 + 2*8 + 4*2*16 + 0 + 1 = 149 < 256, sgprs = 25 + 32 = 57 < 102;
    // wc 1: 288 % 1 = 0; 16 <= 192, 1 <= 16, (256/149)*4 = 4 >= 1.
    assert_eq!(static_default(&readme_bwd()), [4, 16, 4, 16, 2, 1, 1, 1]);
    // fp16 fwd N=256 C=2048 K=512 7x7: 4,16,8,16,2,2,1,1 fails rule 4 (ceil(49/16) = 4 < 8);
    // step 2 gives 1,4,8,1,1,2,1,1: 1*2 <= 8; ceil(49/1) = 49 >= 8; ceil(256/64) = 4 >= 1;
    // vgprs = 4 + 2*8 + 32 + 1 + 1 = 54, sgprs 41; 2048 % 2 = 0; 4 <= 512, (256/54)*4 = 16 >= 1.
    assert_eq!(static_default(&readme_fwd16()), [1, 4, 8, 1, 1, 2, 1, 1]);
    // fp32 fwd N=1 C=4 K=4 2x2 (the README's model-fails case): 4,16,4,16,2,1,1,1 fails rule 4
    // (ceil(4/16) = 1 < 4); step 2 1,4,4,1,1,1,1,1 passes rules 1-7 (ceil(4/1) = 4 >= 4,
    // ceil(1/64) = 1 >= 1, vgprs = 4 + 8 + 16 + 1 = 29) and rule 8 (4 <= K_out = 4).
    assert_eq!(
        static_default(&prob(Fp32, Fwd, 1, 4, 4, 2, 2)),
        [1, 4, 4, 1, 1, 1, 1, 1]
    );
    // fp32 fwd N=1 C=4 K=2 1x1: step 2 fails (k_mult 4 > K_out 2 and ceil(1/1) = 1 < 4);
    // step 3 1,1,4,1,1,2,1,1 fails rule 4 too; step 4 1,1,2,1,1,1,1,1 fails (2 > 1);
    // step 5 1,1,1,1,1,1,1,1 is valid.
    assert_eq!(
        static_default(&prob(Fp32, Fwd, 1, 4, 2, 1, 1)),
        [1, 1, 1, 1, 1, 1, 1, 1]
    );
}

/// A tiny deterministic PRNG (xorshift64*), so the tests need no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

fn random_problem(rng: &mut Rng) -> ConvProblem {
    let prec = rng.pick(&[Fp32, Fp16]);
    let dir = rng.pick(&[Fwd, Bwd]);
    let n = rng.pick(&[1, 2, 3, 5, 8, 16, 64, 100, 256]);
    let c = rng.pick(&[1, 2, 4, 6, 7, 8, 12, 16, 24, 64, 96, 192]);
    let k = rng.pick(&[1, 2, 4, 6, 8, 12, 16, 20, 32, 64, 288]);
    let (h, w) = rng.pick(&[(1, 1), (1, 2), (2, 2), (3, 3), (7, 7), (14, 14), (5, 9)]);
    prob(prec, dir, n, c, k, h, w)
}

/// Slow reference: is there any completion of `prefix` over `domain` that is valid?
fn brute(r: &Rules, prefix: &[i64], domain: &[i64]) -> bool {
    let mut cfg = prefix.to_vec();
    fn rec(r: &Rules, cfg: &mut Vec<i64>, domain: &[i64]) -> bool {
        if cfg.len() == 8 {
            return r.is_valid(cfg);
        }
        for &x in domain {
            cfg.push(x);
            let ok = rec(r, cfg, domain);
            cfg.pop();
            if ok {
                return true;
            }
        }
        false
    }
    rec(r, &mut cfg, domain)
}

#[test]
fn completable_matches_brute_force() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let domain: [i64; 8] = [1, 2, 3, 4, 8, 16, 32, 64];
    let small: [i64; 5] = [1, 2, 4, 16, 64];
    let (mut yes, mut no) = (0, 0);
    for case in 0..600 {
        let p = random_problem(&mut rng);
        let r = Rules::new(&p);
        // Short prefixes enumerate huge spaces: use the small domain for them.
        let len = 2 + (rng.next() % 7) as usize; // 2..=8
        let (dom, len): (&[i64], usize) = if case % 20 == 0 {
            (&small, case / 20 % 3)
        } else {
            (&domain, len)
        };
        // Half the prefixes walk through accepted values (so they are valid), half are random.
        let mut prefix = Vec::new();
        for _ in 0..len {
            if case % 2 == 0 {
                let ok: Vec<i64> = dom
                    .iter()
                    .copied()
                    .filter(|&x| {
                        let mut t = prefix.clone();
                        t.push(x);
                        r.prefix_valid(&t)
                    })
                    .collect();
                if ok.is_empty() {
                    break;
                }
                prefix.push(rng.pick(&ok));
            } else {
                prefix.push(rng.pick(dom));
            }
        }
        let want = brute(&r, &prefix, dom);
        assert_eq!(r.completable(&prefix, dom), want, "problem {p:?} prefix {prefix:?}");
        if want {
            yes += 1;
        } else {
            no += 1;
        }
    }
    // Both answers were exercised.
    assert!(yes > 50 && no > 50, "yes {yes} no {no}");
}

#[test]
fn completable_edge_cases() {
    let r = base32();
    let d = [1, 2, 4, 8, 16, 32, 64];
    assert!(r.completable(&[], &d));
    assert!(!r.completable(&[], &[]));
    assert!(!r.completable(&[5], &d)); // invalid prefix
    assert!(r.completable(&[1, 4, 1, 16, 1, 1, 1, 1], &[])); // complete and valid
                                                             // a domain without any valid chunk_size-compatible value: only 3 and 5 are available
                                                             // after [1,4,1]: chunk_size must be a power of two.
    assert!(!r.completable(&[1, 4, 1], &[3, 5]));
}

#[test]
fn static_default_valid_for_spread() {
    let mut rng = Rng(42);
    let mut applicable = 0;
    for _ in 0..3000 {
        let p = random_problem(&mut rng);
        let d = static_default(&p);
        if check_applicable(&p).is_ok() {
            applicable += 1;
            assert!(Rules::new(&p).is_valid(&d), "{p:?} -> {}", format_config(&d));
        }
    }
    assert!(applicable > 500);
    // Where the first attempt is valid, it is the answer.
    for p in [
        readme_bwd(),
        prob(Fp16, Bwd, 64, 256, 256, 28, 28),
        prob(Fp32, Fwd, 32, 64, 64, 56, 56),
    ] {
        let e = if p.precision == Fp32 { 1 } else { 2 };
        let first = [4, 16, 4 * e, 16, 2, e, 1, 1];
        if Rules::new(&p).is_valid(&first) {
            assert_eq!(static_default(&p), first);
        }
    }
}

#[test]
fn format_and_parse() {
    assert_eq!(format_config(&[4, 8, 4, 16, 1, 4, 1, 8]), "4,8,4,16,1,4,1,8");
    assert_eq!(parse_config("4,8,4,16,1,4,1,8").unwrap(), [4, 8, 4, 16, 1, 4, 1, 8]);
    assert_eq!(parse_config(" 4, 8,4,16,1,4,1,8 ").unwrap(), [4, 8, 4, 16, 1, 4, 1, 8]);
    let err = parse_config("4,8,x,16,1,4,1,8").unwrap_err().to_string();
    assert!(err.contains("chunks_per_wave") && err.contains("'x'"), "{err}");
    let err = parse_config("4,8,4").unwrap_err().to_string();
    assert!(err.contains("expected 8"), "{err}");
    assert!(parse_config("").is_err());
    assert!(parse_config("4,8,4,16,1,4,1,8,1").is_err());
    assert!(parse_config("4,8,4,16,1,4,1,99999999999999999999").is_err());
}

fn reason(p: &ConvProblem) -> String {
    match check_applicable(p) {
        Err(Error::NotApplicable { solver, reason }) => {
            assert_eq!(solver, "ConvAsm1x1U");
            reason
        }
        other => panic!("expected NotApplicable for {p:?}, got {other:?}"),
    }
}

#[test]
fn check_applicable_errors() {
    let ok = prob(Fp32, Fwd, 16, 64, 64, 14, 14);
    assert!(check_applicable(&ok).is_ok());
    assert!(check_applicable(&prob(Fp16, Bwd, 16, 64, 64, 14, 14)).is_ok());

    // Stride 2 (MIOpen's IsApplicable: stride_w <= 2 and stride_w == stride_h; the kernel runs
    // on the subsampled input): 14x14 -> 7x7, and 15x15 -> 8x8 ((15 - 1) / 2 + 1).
    let mut p = ok.clone();
    p.stride_h = 2;
    p.stride_w = 2;
    p.out_h = 7;
    p.out_w = 7;
    assert!(check_applicable(&p).is_ok());
    // ... which MIOpen's KTN model does not take (IsModelApplicable: stride 1).
    let e = tuneinfer::solvers::conv_asm_1x1u::check_model_applicable(&p).unwrap_err();
    assert!(e.to_string().contains("applies only to stride 1"), "{e}");
    let mut odd = p.clone();
    (odd.in_h, odd.in_w, odd.out_h, odd.out_w) = (15, 15, 8, 8);
    assert!(check_applicable(&odd).is_ok());
    odd.out_h = 7;
    assert!(reason(&odd).contains("gives 8x8"), "{}", reason(&odd));
    let mut p3 = ok.clone();
    (p3.stride_h, p3.stride_w, p3.out_h, p3.out_w) = (3, 3, 5, 5);
    assert!(reason(&p3).contains("strides 1x1 and 2x2 only"));
    let mut p21 = ok.clone();
    (p21.stride_h, p21.stride_w, p21.out_h) = (2, 1, 7);
    assert!(reason(&p21).contains("strides 1x1 and 2x2 only"));

    assert_eq!(
        reason(&prob(Fp32, Wrw, 16, 64, 64, 14, 14)),
        "backward weights is not a ConvAsm1x1U direction"
    );
    assert!(reason(&prob(Bf16, Fwd, 16, 64, 64, 14, 14)).contains("bf16"));

    let mut p = ok.clone();
    p.layout = Layout::Nhwc;
    assert!(reason(&p).contains("NCHW"));
    let mut p = ok.clone();
    p.groups = 2;
    assert!(reason(&p).contains("groups 2"));
    let mut p = ok.clone();
    p.filter_h = 3;
    p.filter_w = 3;
    assert!(reason(&p).contains("filter 3x3"));
    let mut p = ok.clone();
    p.pad_h = 1;
    assert!(reason(&p).contains("pad 1x0"));
    let mut p = ok.clone();
    p.dilation_w = 2;
    assert!(reason(&p).contains("dilation 1x2"));
    let mut p = ok.clone();
    p.bias = true;
    assert!(reason(&p).contains("bias"));
    let mut p = ok.clone();
    p.out_h = 13;
    assert!(reason(&p).contains("gives 14x14"));
    assert!(reason(&prob(Fp32, Fwd, 0, 64, 64, 14, 14)).contains("zero"));
    // fp16: odd channels; fewer than 4 output channels; bwd output channels % 4.
    assert!(reason(&prob(Fp16, Fwd, 16, 63, 64, 14, 14)).contains("even"));
    assert!(reason(&prob(Fp16, Fwd, 16, 64, 2, 14, 14)).contains("at least 4"));
    assert!(reason(&prob(Fp16, Bwd, 16, 6, 64, 14, 14)).contains("divisible by 4"));
    // size limits
    assert!(reason(&prob(Fp32, Fwd, 1 << 16, 64, 64, 1, 1)).contains("65536"));
    assert!(reason(&prob(Fp32, Fwd, 16, 1024, 64, 64, 64)).contains("2^24"));
    assert!(reason(&prob(Fp32, Fwd, 16384, 64, 64, 28, 28)).contains("2^29"));
}

#[test]
fn constraint_adapter_follows_readme_greedy_answer() {
    // The gfx908 ConvAsm1x1U metadata's token values (index = token id).
    let tokens = [
        "-1", "4", "2", "1", "3", "16", "8", "1", "4", "32", "4", "1", "2", "5", "7", "3", "6", "8", "64", "16", "32",
        "4", "1", "1", "3", "2", "4", "2", "4", "1", "2", "1", "4", "2", "4", "8", "1", "-1",
    ];
    let tokens: Vec<String> = tokens.iter().map(|s| s.to_string()).collect();
    let vocab = Vocabulary::from_token_values(&tokens);
    let con = constraint(&readme_bwd(), &vocab);
    assert_eq!(con.config_len(&[]), 8);
    // Greedy token ids 3,5,11,18,25,27,31,34 = values 1,16,1,64,2,2,1,4.
    let ids = [3usize, 5, 11, 18, 25, 27, 31, 34];
    let mut chosen: Vec<u32> = Vec::new();
    assert!(con.completable(&chosen));
    for &t in &ids {
        let v = vocab.token_value[t];
        assert!(con.accepts(&chosen, v), "token {t} after {chosen:?}");
        chosen.push(v);
        assert!(con.completable(&chosen));
    }
    let values: Vec<&str> = ids.iter().map(|&t| vocab.value_text(t)).collect();
    assert_eq!(values.join(","), "1,16,1,64,2,2,1,4");
    // "-1" is never accepted, nor is anything after a full config, nor unknown value ids.
    let end = vocab.token_value[0];
    assert!(!con.accepts(&[], end));
    assert!(!con.accepts(&chosen, vocab.token_value[3]));
    assert!(!con.accepts(&[], 999));
    assert!(!con.completable(&[999]));
    // 5 is not a read_size.
    assert!(!con.accepts(&[], vocab.token_value[13]));

    // Non-integer values are never accepted.
    let odd: Vec<String> = ["-1", "abc", "1.5", "4"].iter().map(|s| s.to_string()).collect();
    let vocab = Vocabulary::from_token_values(&odd);
    let con = constraint(&readme_bwd(), &vocab);
    assert!(!con.accepts(&[], 1));
    assert!(!con.accepts(&[], 2));
    assert!(con.accepts(&[], 3));
    // Domain {4} only: k_mult 4 and read_size 4 need cpw >= 4 and chunk 4: completable?
    // brute force says whatever Rules says over domain [4].
    let want = brute(&Rules::new(&readme_bwd()), &[], &[4]);
    assert_eq!(con.completable(&[]), want);
}

#[test]
fn huge_values_never_panic() {
    let big = ConvProblem {
        n: u64::MAX,
        c: u64::MAX,
        k: u64::MAX,
        in_h: u64::MAX,
        in_w: u64::MAX,
        out_h: u64::MAX,
        out_w: u64::MAX,
        filter_h: u64::MAX,
        filter_w: 1,
        pad_h: 0,
        pad_w: 0,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        groups: 1,
        bias: false,
        layout: Layout::Nchw,
        precision: Fp16,
        direction: Bwd,
        depth: None,
    };
    let mut probs = vec![big.clone()];
    let mut p = big.clone();
    p.filter_h = 1;
    probs.push(p.clone());
    p.precision = Fp32;
    p.direction = Fwd;
    probs.push(p.clone());
    let mut z = prob(Fp16, Bwd, 0, 0, 0, 0, 0);
    probs.push(z.clone());
    z.precision = Bf16;
    z.direction = Wrw;
    probs.push(z);
    let weird = [i64::MIN, -1, 0, 1, 2, 4, 8, 64, i64::MAX];
    for p in &probs {
        let _ = features(p);
        let _ = encoder_input(p);
        let _ = check_applicable(p);
        let _ = static_default(p);
        let r = Rules::new(p);
        for &a in &weird {
            for &b in &weird {
                let _ = r.prefix_valid(&[1, a, b]);
                let _ = r.prefix_valid(&[1, 4, 4, a, b, 2, 1, 1]);
                let _ = r.prefix_valid(&[1, 4, 4, 16, 1, a, b, 1]);
                let _ = r.prefix_valid(&[1, 4, 4, 16, 1, 2, a, b]);
            }
        }
        let _ = r.completable(&[], &[1, 2, 4, 8, 16, 64]);
        let _ = r.completable(&[], &weird);
    }
    assert!(check_applicable(&big).is_err());
    // fp32 forward with every size huge: the all-ones config is valid (no divisibility fails).
    let r = Rules::new(&probs[2]);
    assert!(r.is_valid(&[1, 1, 1, 1, 1, 1, 1, 1]));
    assert!(r.completable(&[], &[1, 2, 4, 8, 16, 64]));
}
