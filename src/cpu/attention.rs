//! Dot-product attention of a decoder state over the encoder's outputs (Luong "dot").

use super::activations::exp;

/// For each row b: `scores[t] = h[b] · enc[b, t]`, `weights[b] = softmax_t(scores)` and
/// `ctx[b] = sum_t weights[b, t] * enc[b, t]`.
///
/// `h`: `[batch, units]`; `enc`: `[batch, steps, units]`; `weights`: `[batch, steps]`;
/// `ctx`: `[batch, units]`.
pub fn attention(
    h: &[f32],
    enc: &[f32],
    weights: &mut [f32],
    ctx: &mut [f32],
    batch: usize,
    steps: usize,
    units: usize,
) {
    assert!(
        h.len() >= batch * units
            && enc.len() >= batch * steps * units
            && weights.len() >= batch * steps
            && ctx.len() >= batch * units,
        "attention: shape"
    );
    for b in 0..batch {
        let hb = &h[b * units..(b + 1) * units];
        let eb = &enc[b * steps * units..(b + 1) * steps * units];
        let wb = &mut weights[b * steps..(b + 1) * steps];
        dot_rows(hb, eb, wb, units);
        let max = wb
            .iter()
            .fold(f32::NEG_INFINITY, |m, &v| if v > m || v.is_nan() { v } else { m });
        let mut sum = 0.0;
        for w in wb.iter_mut() {
            *w = exp(*w - max);
            sum += *w;
        }
        for w in wb.iter_mut() {
            *w /= sum;
        }
        let cb = &mut ctx[b * units..(b + 1) * units];
        cb.fill(0.0);
        for t in 0..steps {
            let w = wb[t];
            for (c, &e) in cb.iter_mut().zip(&eb[t * units..(t + 1) * units]) {
                *c += w * e;
            }
        }
    }
}

/// `out[t] = h · enc[t]` for every row `t` of `enc`, each a plain left-to-right sum of products
/// from -0.0 (what `Iterator::sum` computes). Four rows run side by side so that the additions of
/// one do not wait on each other's latency; each row's order is unchanged.
#[inline]
fn dot_rows(h: &[f32], enc: &[f32], out: &mut [f32], units: usize) {
    let h = &h[..units];
    let mut t = 0;
    while t + 4 <= out.len() {
        let rows: [&[f32]; 4] = std::array::from_fn(|i| &enc[(t + i) * units..(t + i + 1) * units]);
        let mut acc = [-0.0f32; 4];
        for p in 0..units {
            let x = h[p];
            for i in 0..4 {
                acc[i] += x * rows[i][p];
            }
        }
        out[t..t + 4].copy_from_slice(&acc);
        t += 4;
    }
    for (i, o) in out.iter_mut().enumerate().skip(t) {
        *o = h.iter().zip(&enc[i * units..(i + 1) * units]).map(|(x, y)| x * y).sum();
    }
}

/// The same in f64 with `std` functions: the reference `attention` is tested against.
pub fn attention_f64(h: &[f32], enc: &[f32], batch: usize, steps: usize, units: usize) -> (Vec<f64>, Vec<f64>) {
    let mut weights = vec![0f64; batch * steps];
    let mut ctx = vec![0f64; batch * units];
    for b in 0..batch {
        let s: Vec<f64> = (0..steps)
            .map(|t| {
                (0..units)
                    .map(|j| h[b * units + j] as f64 * enc[(b * steps + t) * units + j] as f64)
                    .sum()
            })
            .collect();
        let m = s.iter().cloned().fold(f64::MIN, f64::max);
        let z: f64 = s.iter().map(|v| (v - m).exp()).sum();
        for t in 0..steps {
            let w = (s[t] - m).exp() / z;
            weights[b * steps + t] = w;
            for j in 0..units {
                ctx[b * units + j] += w * enc[(b * steps + t) * units + j] as f64;
            }
        }
    }
    (weights, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Lcg;

    #[test]
    fn matches_f64_reference() {
        let mut rng = Lcg::new(21);
        for &(batch, steps, units) in &[(1, 1, 1), (3, 8, 17), (2, 5, 64)] {
            let h = rng.vec(batch * units, 1.0);
            let enc = rng.vec(batch * steps * units, 1.0);
            let mut w = vec![f32::NAN; batch * steps];
            let mut ctx = vec![f32::NAN; batch * units];
            attention(&h, &enc, &mut w, &mut ctx, batch, steps, units);
            let (ww, cw) = attention_f64(&h, &enc, batch, steps, units);
            for i in 0..w.len() {
                assert!((w[i] as f64 - ww[i]).abs() < 1e-5, "weight {i}");
            }
            for i in 0..ctx.len() {
                assert!((ctx[i] as f64 - cw[i]).abs() < 1e-5, "ctx {i}");
            }
        }
    }

    #[test]
    fn side_by_side_dots_are_the_serial_sums_bit_for_bit() {
        // Every step count around the blocks of four, and a row of zeros (the sum's -0.0 start).
        let mut rng = Lcg::new(5);
        for &(steps, units) in &[(1, 3), (4, 17), (7, 128), (12, 33), (13, 1)] {
            let h = rng.vec(units, 2.0);
            let mut enc = rng.vec(steps * units, 2.0);
            enc[..units].iter_mut().for_each(|x| *x = -0.0);
            let mut got = vec![f32::NAN; steps];
            dot_rows(&h, &enc, &mut got, units);
            for t in 0..steps {
                let mut want = -0.0f32;
                for p in 0..units {
                    want += h[p] * enc[t * units + p];
                }
                assert_eq!(got[t].to_bits(), want.to_bits(), "steps {steps} units {units} row {t}");
            }
        }
    }

    #[test]
    fn hand_derived() {
        // h = [1, 0]; enc rows [ln 3, 0] and [0, 5]: scores ln 3 and 0 -> weights 3/4, 1/4.
        let h = [1.0, 0.0];
        let enc = [3f32.ln(), 0.0, 0.0, 5.0];
        let (mut w, mut ctx) = ([0.0; 2], [0.0; 2]);
        attention(&h, &enc, &mut w, &mut ctx, 1, 2, 2);
        assert!((w[0] - 0.75).abs() < 1e-6 && (w[1] - 0.25).abs() < 1e-6);
        assert!((ctx[0] - 0.75 * 3f32.ln()).abs() < 1e-6 && (ctx[1] - 1.25).abs() < 1e-6);
    }
}
