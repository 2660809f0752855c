//! Backward pass of the hybrid encoder's convolution
//! ([`conv1d_same_tanh`](crate::seq2seq::conv_encoder::conv1d_same_tanh)), checked against
//! finite differences below.

use crate::seq2seq::conv_encoder::CONV_WIDTH;

/// Given the forward input `x` `[batch, steps, fin]`, its output `y` (after tanh) and the
/// output's gradient `dy` (same shape as `y`), adds the gradients of the kernel `dw`
/// `[CONV_WIDTH, fin, ch]` and the bias `db` `[ch]`. (The input is data: no gradient.)
#[allow(clippy::too_many_arguments)]
pub fn conv1d_same_tanh_backward(
    x: &[f32],
    y: &[f32],
    dy: &[f32],
    dw: &mut [f32],
    db: &mut [f32],
    batch: usize,
    steps: usize,
    fin: usize,
    ch: usize,
) {
    let mut dpre = vec![0.0; ch];
    for r in 0..batch {
        for t in 0..steps {
            let at = (r * steps + t) * ch;
            for (c, d) in dpre.iter_mut().enumerate() {
                *d = dy[at + c] * (1.0 - y[at + c] * y[at + c]);
            }
            for (b, d) in db.iter_mut().zip(&dpre) {
                *b += d;
            }
            for k in 0..CONV_WIDTH {
                let Some(s) = (t + k).checked_sub(1).filter(|&s| s < steps) else {
                    continue;
                };
                let xs = &x[(r * steps + s) * fin..(r * steps + s + 1) * fin];
                for (f, &xv) in xs.iter().enumerate() {
                    let row = &mut dw[(k * fin + f) * ch..(k * fin + f + 1) * ch];
                    for (w, d) in row.iter_mut().zip(&dpre) {
                        *w += xv * d;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq2seq::conv_encoder::conv1d_same_tanh;
    use crate::testutil::Lcg;

    #[test]
    fn conv_backward_matches_finite_differences() {
        let mut rng = Lcg::new(31);
        // Odd sizes; steps 1 and 2 reach both paddings at once.
        for &(batch, steps, fin, ch) in &[(2, 5, 3, 4), (1, 1, 2, 3), (3, 2, 1, 1)] {
            let x = rng.vec(batch * steps * fin, 1.0);
            let w0 = rng.vec(CONV_WIDTH * fin * ch, 0.8);
            let b0 = rng.vec(ch, 0.3);
            let r = rng.vec(batch * steps * ch, 1.0);
            let loss = |w: &[f32], b: &[f32]| -> f64 {
                let mut y = vec![0.0; batch * steps * ch];
                conv1d_same_tanh(&x, w, b, &mut y, batch, steps, fin, ch);
                y.iter().zip(&r).map(|(a, b)| *a as f64 * *b as f64).sum()
            };
            let mut y = vec![0.0; batch * steps * ch];
            conv1d_same_tanh(&x, &w0, &b0, &mut y, batch, steps, fin, ch);
            let (mut dw, mut db) = (vec![0.0; w0.len()], vec![0.0; ch]);
            conv1d_same_tanh_backward(&x, &y, &r, &mut dw, &mut db, batch, steps, fin, ch);
            let eps = 1e-2f32;
            let close = |got: f32, num: f64, what: String| {
                assert!(
                    (got as f64 - num).abs() <= 2e-3 + 2e-2 * num.abs(),
                    "{what}: analytic {got} vs numeric {num}"
                );
            };
            for i in 0..w0.len() {
                let (mut up, mut down) = (w0.clone(), w0.clone());
                up[i] += eps;
                down[i] -= eps;
                let num = (loss(&up, &b0) - loss(&down, &b0)) / (2.0 * eps as f64);
                close(dw[i], num, format!("dw[{i}] ({batch},{steps},{fin},{ch})"));
            }
            for i in 0..ch {
                let (mut up, mut down) = (b0.clone(), b0.clone());
                up[i] += eps;
                down[i] -= eps;
                let num = (loss(&w0, &up) - loss(&w0, &down)) / (2.0 * eps as f64);
                close(db[i], num, format!("db[{i}] ({batch},{steps},{fin},{ch})"));
            }
            // Not vacuous: some gradient is clearly non-zero.
            assert!(dw.iter().any(|g| g.abs() > 1e-2));
        }
    }
}
