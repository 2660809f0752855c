//! The LSTM cell update, Keras semantics (gate order i, f, c, o; exact logistic; tanh).

use super::activations::{sigmoid, tanh};

/// One LSTM layer's weights as [`lstm_step`] reads them (Keras layout): `kernel` `[in_dim,
/// 4*units]`, `recurrent` `[units, 4*units]`, `bias` `[4*units]`, gates side by side (i, f, c, o).
#[derive(Debug, Clone, Copy)]
pub struct LstmParams<'a> {
    pub kernel: &'a [f32],
    pub recurrent: &'a [f32],
    pub bias: &'a [f32],
    pub in_dim: usize,
    pub units: usize,
}

/// One step of an LSTM layer for `rows` rows: `z = x·W + b` ([`super::dense`]), then `z += h·U`
/// ([`super::matmul_acc`]), then [`lstm_cell`] updates `h` and `c` (`[rows, units]`) in place.
/// The CPU twin of one `lstm_step.wgsl` dispatch; the models' own steps compute the same sums
/// with the packed kernels.
pub fn lstm_step(x: &[f32], w: LstmParams<'_>, h: &mut [f32], c: &mut [f32], rows: usize) {
    let g = 4 * w.units;
    let mut z = vec![0.0; rows * g];
    super::dense(x, w.kernel, Some(w.bias), &mut z, rows, w.in_dim, g);
    super::matmul_acc(h, w.recurrent, &mut z, rows, w.units, g);
    lstm_cell(&z, c, h, rows, w.units);
}

/// Applies the gates to a batch of pre-activations and updates the state in place.
///
/// `z` is `[batch, 4*units]` = x·W + h·U + b, with the four gates side by side (i, f, g, o);
/// `c` and `h` are `[batch, units]`: `c' = σ(f)·c + σ(i)·tanh(g)`, `h' = σ(o)·tanh(c')`.
pub fn lstm_cell(z: &[f32], c: &mut [f32], h: &mut [f32], batch: usize, units: usize) {
    assert!(
        z.len() >= batch * 4 * units && c.len() >= batch * units && h.len() >= batch * units,
        "lstm_cell: shape"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the features the function is compiled for were just detected.
            unsafe { lstm_cell_avx2(z, c, h, batch, units) };
            return;
        }
    }
    lstm_cell_body(z, c, h, batch, units);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn lstm_cell_avx2(z: &[f32], c: &mut [f32], h: &mut [f32], batch: usize, units: usize) {
    lstm_cell_body(z, c, h, batch, units);
}

#[inline(always)]
fn lstm_cell_body(z: &[f32], c: &mut [f32], h: &mut [f32], batch: usize, units: usize) {
    for b in 0..batch {
        let zb = &z[b * 4 * units..(b + 1) * 4 * units];
        let (zi, rest) = zb.split_at(units);
        let (zf, rest) = rest.split_at(units);
        let (zg, zo) = rest.split_at(units);
        let cb = &mut c[b * units..(b + 1) * units];
        let hb = &mut h[b * units..(b + 1) * units];
        for j in 0..units {
            let i = sigmoid(zi[j]);
            let f = sigmoid(zf[j]);
            let g = tanh(zg[j]);
            let o = sigmoid(zo[j]);
            let c_new = f * cb[j] + i * g;
            cb[j] = c_new;
            hb[j] = o * tanh(c_new);
        }
    }
}

/// The same cell in f64 with `std` functions: the reference `lstm_cell` is tested against.
pub fn lstm_cell_f64(z: &[f32], c: &[f32], batch: usize, units: usize) -> (Vec<f64>, Vec<f64>) {
    let s = |x: f64| 1.0 / (1.0 + (-x).exp());
    let mut c_out = vec![0f64; batch * units];
    let mut h_out = vec![0f64; batch * units];
    for b in 0..batch {
        for j in 0..units {
            let at = |g: usize| z[b * 4 * units + g * units + j] as f64;
            let cn = s(at(1)) * c[b * units + j] as f64 + s(at(0)) * at(2).tanh();
            c_out[b * units + j] = cn;
            h_out[b * units + j] = s(at(3)) * cn.tanh();
        }
    }
    (c_out, h_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Lcg;

    #[test]
    fn cell_matches_f64_reference() {
        let mut rng = Lcg::new(11);
        for &(batch, units) in &[(1, 1), (3, 17), (5, 63), (2, 128)] {
            let z = rng.vec(batch * 4 * units, 6.0);
            let c0 = rng.vec(batch * units, 3.0);
            let mut c = c0.clone();
            let mut h = vec![f32::NAN; batch * units];
            lstm_cell(&z, &mut c, &mut h, batch, units);
            let (cw, hw) = lstm_cell_f64(&z, &c0, batch, units);
            for i in 0..batch * units {
                assert!((c[i] as f64 - cw[i]).abs() < 1e-5, "c[{i}]");
                assert!((h[i] as f64 - hw[i]).abs() < 1e-6, "h[{i}]");
            }
        }
    }

    #[test]
    fn hand_derived_cell() {
        // z = 0 everywhere: i = f = o = 0.5, g = 0; c' = 0.5*c; h' = 0.5*tanh(0.5*c).
        let z = [0.0f32; 4];
        let mut c = [2.0f32];
        let mut h = [0.0f32];
        lstm_cell(&z, &mut c, &mut h, 1, 1);
        assert!((c[0] - 1.0).abs() < 1e-7);
        assert!((h[0] - 0.5 * 1.0f32.tanh()).abs() < 1e-6);
    }
}
