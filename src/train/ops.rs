//! Forward passes that keep what the backward pass needs, and the backward passes, for every
//! op of the attention model: matmul (both transposed products), LSTM cell, attention,
//! dense + tanh, embedding and softmax cross-entropy. Each backward op is checked against
//! finite differences in the tests below.

use crate::cpu;
use crate::cpu::activations::{exp, sigmoid, tanh};

/// `c[k, n] += a[m, k]ᵀ · b[m, n]` (weight gradients: inputsᵀ · output gradients).
pub fn matmul_at_b_acc(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    let mut at = vec![0.0; k * m];
    transpose(a, &mut at, m, k);
    cpu::matmul_acc(&at, b, c, k, m, n);
}

/// `c[m, k] += a[m, n] · b[k, n]ᵀ` (input gradients: output gradients · weightsᵀ).
pub fn matmul_a_bt_acc(a: &[f32], b: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
    let mut bt = vec![0.0; n * k];
    transpose(b, &mut bt, k, n);
    cpu::matmul_acc(a, &bt, c, m, n, k);
}

/// `out[cols, rows] = x[rows, cols]ᵀ`.
pub fn transpose(x: &[f32], out: &mut [f32], rows: usize, cols: usize) {
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = x[r * cols + c];
        }
    }
}

/// `sums[n] += column sums of x[m, n]` (bias gradients).
pub fn col_sums_acc(x: &[f32], sums: &mut [f32], m: usize, n: usize) {
    for r in 0..m {
        for (s, &v) in sums.iter_mut().zip(&x[r * n..(r + 1) * n]) {
            *s += v;
        }
    }
}

/// LSTM cell forward keeping the activated gates: `z` (`[batch, 4u]` pre-activations) is
/// overwritten with `[σ(i), σ(f), tanh(g), σ(o)]`; `c` is updated in place from `c_prev`, and
/// `h = σ(o) ∘ tanh(c)`. Same arithmetic as [`cpu::lstm_cell`].
pub fn lstm_forward(z: &mut [f32], c_prev: &[f32], c: &mut [f32], h: &mut [f32], batch: usize, units: usize) {
    for b in 0..batch {
        let zb = &mut z[b * 4 * units..(b + 1) * 4 * units];
        for j in 0..units {
            let i = sigmoid(zb[j]);
            let f = sigmoid(zb[units + j]);
            let g = tanh(zb[2 * units + j]);
            let o = sigmoid(zb[3 * units + j]);
            zb[j] = i;
            zb[units + j] = f;
            zb[2 * units + j] = g;
            zb[3 * units + j] = o;
            let cn = f * c_prev[b * units + j] + i * g;
            c[b * units + j] = cn;
            h[b * units + j] = o * tanh(cn);
        }
    }
}

/// LSTM cell backward. Inputs: activated `gates`, `c_prev`, `c` (new cell), the gradients
/// `dh` and `dc` of the new state. Writes `dz` (`[batch, 4u]`, pre-activation gradients) and
/// overwrites `dc` with the gradient of `c_prev`.
#[allow(clippy::too_many_arguments)]
pub fn lstm_backward(
    gates: &[f32],
    c_prev: &[f32],
    c: &[f32],
    dh: &[f32],
    dc: &mut [f32],
    dz: &mut [f32],
    batch: usize,
    units: usize,
) {
    for b in 0..batch {
        let g4 = &gates[b * 4 * units..(b + 1) * 4 * units];
        let dzb = &mut dz[b * 4 * units..(b + 1) * 4 * units];
        for j in 0..units {
            let k = b * units + j;
            let (i, f, g, o) = (g4[j], g4[units + j], g4[2 * units + j], g4[3 * units + j]);
            let tc = tanh(c[k]);
            let dct = dc[k] + dh[k] * o * (1.0 - tc * tc);
            dzb[j] = dct * g * i * (1.0 - i);
            dzb[units + j] = dct * c_prev[k] * f * (1.0 - f);
            dzb[2 * units + j] = dct * i * (1.0 - g * g);
            dzb[3 * units + j] = dh[k] * tc * o * (1.0 - o);
            dc[k] = dct * f;
        }
    }
}

/// Attention backward ([`cpu::attention`] forward). Given `h`, `enc`, the forward `weights`
/// and `dctx`, adds the gradients to `dh` (`[batch, units]`) and `denc`
/// (`[batch, steps, units]`).
#[allow(clippy::too_many_arguments)]
pub fn attention_backward(
    h: &[f32],
    enc: &[f32],
    weights: &[f32],
    dctx: &[f32],
    dh: &mut [f32],
    denc: &mut [f32],
    batch: usize,
    steps: usize,
    units: usize,
) {
    let mut dw = vec![0.0; steps];
    for b in 0..batch {
        let hb = &h[b * units..(b + 1) * units];
        let dcb = &dctx[b * units..(b + 1) * units];
        let wb = &weights[b * steps..(b + 1) * steps];
        for t in 0..steps {
            let e = &enc[(b * steps + t) * units..(b * steps + t + 1) * units];
            dw[t] = dcb.iter().zip(e).map(|(x, y)| x * y).sum();
        }
        let dot: f32 = wb.iter().zip(&dw).map(|(a, d)| a * d).sum();
        for t in 0..steps {
            let ds = wb[t] * (dw[t] - dot);
            let e = &enc[(b * steps + t) * units..(b * steps + t + 1) * units];
            let de = &mut denc[(b * steps + t) * units..(b * steps + t + 1) * units];
            for j in 0..units {
                de[j] += wb[t] * dcb[j] + ds * hb[j];
                dh[b * units + j] += ds * e[j];
            }
        }
    }
}

/// Backward of `y = tanh(pre)` given `y`: `dpre = dy ∘ (1 - y²)`, in place on `dy`.
pub fn tanh_backward(y: &[f32], dy: &mut [f32]) {
    for (d, &v) in dy.iter_mut().zip(y) {
        *d *= 1.0 - v * v;
    }
}

/// Embedding backward: `dtable[ids[i]] += dx[i]`.
pub fn embedding_backward(ids: &[u32], dx: &[f32], dtable: &mut [f32], dim: usize) {
    for (i, &id) in ids.iter().enumerate() {
        let id = id as usize;
        for (t, &d) in dtable[id * dim..(id + 1) * dim]
            .iter_mut()
            .zip(&dx[i * dim..(i + 1) * dim])
        {
            *t += d;
        }
    }
}

/// Softmax cross-entropy over rows of `logits` (`[rows, width]`) against `targets`: returns
/// the summed loss (f64) and the number of rows whose arg-max is the target, and writes
/// `dlogits = softmax - onehot(target)` (the gradient of the summed loss).
pub fn softmax_cross_entropy(
    logits: &[f32],
    targets: &[u32],
    dlogits: &mut [f32],
    rows: usize,
    width: usize,
) -> (f64, usize) {
    let mut loss = 0f64;
    let mut correct = 0;
    for r in 0..rows {
        let x = &logits[r * width..(r + 1) * width];
        let d = &mut dlogits[r * width..(r + 1) * width];
        let t = targets[r] as usize;
        let (mut best, mut max) = (0, f32::NEG_INFINITY);
        for (j, &v) in x.iter().enumerate() {
            if v > max {
                max = v;
                best = j;
            }
        }
        let mut sum = 0f32;
        for (dj, &v) in d.iter_mut().zip(x) {
            *dj = exp(v - max);
            sum += *dj;
        }
        for dj in d.iter_mut() {
            *dj /= sum;
        }
        loss += -((x[t] - max) as f64 - (sum as f64).ln());
        d[t] -= 1.0;
        correct += usize::from(best == t);
    }
    (loss, correct)
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // index loops read best in gradient checks
mod tests {
    use super::*;
    use crate::cpu::matmul::matmul_naive_f64;
    use crate::testutil::Lcg;

    /// Central finite difference of `f` at `x[i]`.
    fn numeric(f: &mut dyn FnMut(&[f32]) -> f64, x: &[f32], i: usize, eps: f32) -> f64 {
        let mut xp = x.to_vec();
        xp[i] += eps;
        let up = f(&xp);
        xp[i] = x[i] - eps;
        let down = f(&xp);
        (up - down) / (2.0 * eps as f64)
    }

    fn assert_close(analytic: f32, numeric: f64, what: &str) {
        let err = (analytic as f64 - numeric).abs();
        assert!(
            err <= 2e-3 + 2e-2 * numeric.abs(),
            "{what}: analytic {analytic} vs numeric {numeric}"
        );
    }

    /// A fixed random projection of an output: the scalar loss the checks differentiate.
    fn project(y: &[f32], r: &[f32]) -> f64 {
        y.iter().zip(r).map(|(a, b)| *a as f64 * *b as f64).sum()
    }

    #[test]
    fn transposed_matmuls_match_naive() {
        let mut rng = Lcg::new(1);
        for &(m, k, n) in &[(1, 1, 1), (7, 5, 33), (13, 64, 17)] {
            let a = rng.vec(m * k, 1.0);
            let b = rng.vec(m * n, 1.0);
            let mut c = vec![0.25; k * n];
            matmul_at_b_acc(&a, &b, &mut c, m, k, n);
            let mut at = vec![0.0; k * m];
            transpose(&a, &mut at, m, k);
            let want = matmul_naive_f64(&at, &b, k, m, n);
            for i in 0..k * n {
                assert!((c[i] as f64 - 0.25 - want[i]).abs() < 1e-4, "at_b {i}");
            }
            let a2 = rng.vec(m * n, 1.0);
            let b2 = rng.vec(k * n, 1.0);
            let mut c2 = vec![-0.5; m * k];
            matmul_a_bt_acc(&a2, &b2, &mut c2, m, n, k);
            for i in 0..m {
                for j in 0..k {
                    let want: f64 = (0..n).map(|p| a2[i * n + p] as f64 * b2[j * n + p] as f64).sum();
                    assert!((c2[i * k + j] as f64 + 0.5 - want).abs() < 1e-4, "a_bt {i},{j}");
                }
            }
        }
    }

    #[test]
    fn lstm_forward_matches_engine_cell() {
        let mut rng = Lcg::new(2);
        let (b, u) = (3, 5);
        let z0 = rng.vec(b * 4 * u, 2.0);
        let c0 = rng.vec(b * u, 1.0);
        let (mut c1, mut h1) = (c0.clone(), vec![0.0; b * u]);
        cpu::lstm_cell(&z0, &mut c1, &mut h1, b, u);
        let (mut z, mut c2, mut h2) = (z0.clone(), vec![0.0; b * u], vec![0.0; b * u]);
        lstm_forward(&mut z, &c0, &mut c2, &mut h2, b, u);
        assert_eq!((c1, h1), (c2, h2));
    }

    #[test]
    fn lstm_backward_matches_finite_differences() {
        let mut rng = Lcg::new(3);
        let (b, u) = (2, 3);
        let z0 = rng.vec(b * 4 * u, 1.5);
        let c0 = rng.vec(b * u, 1.0);
        let (rh, rc) = (rng.vec(b * u, 1.0), rng.vec(b * u, 1.0));
        // loss = rh·h + rc·c
        let loss = |z: &[f32], cp: &[f32]| {
            let mut z = z.to_vec();
            let (mut c, mut h) = (vec![0.0; b * u], vec![0.0; b * u]);
            lstm_forward(&mut z, cp, &mut c, &mut h, b, u);
            project(&h, &rh) + project(&c, &rc)
        };
        let mut gates = z0.clone();
        let (mut c, mut h) = (vec![0.0; b * u], vec![0.0; b * u]);
        lstm_forward(&mut gates, &c0, &mut c, &mut h, b, u);
        let mut dc = rc.clone();
        let mut dz = vec![0.0; b * 4 * u];
        lstm_backward(&gates, &c0, &c, &rh, &mut dc, &mut dz, b, u);
        for i in 0..z0.len() {
            let n = numeric(&mut |z| loss(z, &c0), &z0, i, 1e-2);
            assert_close(dz[i], n, &format!("dz[{i}]"));
        }
        for i in 0..c0.len() {
            let n = numeric(&mut |cp| loss(&z0, cp), &c0, i, 1e-2);
            assert_close(dc[i], n, &format!("dc_prev[{i}]"));
        }
    }

    #[test]
    fn attention_backward_matches_finite_differences() {
        let mut rng = Lcg::new(4);
        let (b, t, u) = (2, 4, 3);
        let h0 = rng.vec(b * u, 1.0);
        let e0 = rng.vec(b * t * u, 1.0);
        let r = rng.vec(b * u, 1.0);
        let loss = |h: &[f32], e: &[f32]| {
            let (mut w, mut ctx) = (vec![0.0; b * t], vec![0.0; b * u]);
            cpu::attention(h, e, &mut w, &mut ctx, b, t, u);
            project(&ctx, &r)
        };
        let (mut w, mut ctx) = (vec![0.0; b * t], vec![0.0; b * u]);
        cpu::attention(&h0, &e0, &mut w, &mut ctx, b, t, u);
        let (mut dh, mut de) = (vec![0.0; b * u], vec![0.0; b * t * u]);
        attention_backward(&h0, &e0, &w, &r, &mut dh, &mut de, b, t, u);
        for i in 0..h0.len() {
            assert_close(dh[i], numeric(&mut |h| loss(h, &e0), &h0, i, 1e-2), &format!("dh[{i}]"));
        }
        for i in 0..e0.len() {
            assert_close(
                de[i],
                numeric(&mut |e| loss(&h0, e), &e0, i, 1e-2),
                &format!("denc[{i}]"),
            );
        }
    }

    #[test]
    fn dense_tanh_backward_matches_finite_differences() {
        let mut rng = Lcg::new(5);
        let (m, k, n) = (3, 4, 5);
        let x0 = rng.vec(m * k, 1.0);
        let w0 = rng.vec(k * n, 0.7);
        let b0 = rng.vec(n, 0.3);
        let r = rng.vec(m * n, 1.0);
        let forward = |x: &[f32], w: &[f32], bias: &[f32]| {
            let mut y = vec![0.0; m * n];
            cpu::dense(x, w, Some(bias), &mut y, m, k, n);
            y.iter_mut().for_each(|v| *v = tanh(*v));
            y
        };
        let y = forward(&x0, &w0, &b0);
        let mut dpre = r.clone();
        tanh_backward(&y, &mut dpre);
        let (mut dx, mut dw, mut db) = (vec![0.0; m * k], vec![0.0; k * n], vec![0.0; n]);
        matmul_a_bt_acc(&dpre, &w0, &mut dx, m, n, k);
        matmul_at_b_acc(&x0, &dpre, &mut dw, m, k, n);
        col_sums_acc(&dpre, &mut db, m, n);
        for i in 0..x0.len() {
            let num = numeric(&mut |x| project(&forward(x, &w0, &b0), &r), &x0, i, 1e-2);
            assert_close(dx[i], num, &format!("dx[{i}]"));
        }
        for i in 0..w0.len() {
            let num = numeric(&mut |w| project(&forward(&x0, w, &b0), &r), &w0, i, 1e-2);
            assert_close(dw[i], num, &format!("dw[{i}]"));
        }
        for i in 0..n {
            let num = numeric(&mut |bb| project(&forward(&x0, &w0, bb), &r), &b0, i, 1e-2);
            assert_close(db[i], num, &format!("db[{i}]"));
        }
    }

    #[test]
    fn embedding_backward_matches_finite_differences() {
        let mut rng = Lcg::new(6);
        let (v, d) = (4, 3);
        let table = rng.vec(v * d, 1.0);
        let ids = [2u32, 0, 2];
        let r = rng.vec(ids.len() * d, 1.0);
        let loss = |t: &[f32]| {
            let mut x = vec![0.0; ids.len() * d];
            cpu::embedding_gather(t, &ids, &mut x, d);
            project(&x, &r)
        };
        let mut dt = vec![0.0; v * d];
        embedding_backward(&ids, &r, &mut dt, d);
        for i in 0..table.len() {
            assert_close(
                dt[i],
                numeric(&mut |t| loss(t), &table, i, 1e-2),
                &format!("dtable[{i}]"),
            );
        }
    }

    #[test]
    fn softmax_cross_entropy_matches_finite_differences_and_hand_value() {
        let mut rng = Lcg::new(7);
        let (rows, width) = (3, 5);
        let x0 = rng.vec(rows * width, 3.0);
        let targets = [1u32, 4, 0];
        let loss = |x: &[f32]| {
            let mut d = vec![0.0; rows * width];
            softmax_cross_entropy(x, &targets, &mut d, rows, width).0
        };
        let mut d = vec![0.0; rows * width];
        softmax_cross_entropy(&x0, &targets, &mut d, rows, width);
        for i in 0..x0.len() {
            assert_close(d[i], numeric(&mut |x| loss(x), &x0, i, 1e-2), &format!("dlogits[{i}]"));
        }
        // Two equal logits: loss ln 2, one correct arg-max (the first maximum).
        let mut d2 = [0.0; 2];
        let (l, correct) = softmax_cross_entropy(&[0.5, 0.5], &[0], &mut d2, 1, 2);
        assert!((l - 2f64.ln()).abs() < 1e-6 && correct == 1);
        assert!((d2[0] + 0.5).abs() < 1e-6 && (d2[1] - 0.5).abs() < 1e-6);
    }
}
