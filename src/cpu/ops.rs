//! Dense, embedding gather, bias broadcast and log-softmax, batched over rows.

use super::activations::exp;
use super::matmul::matmul_acc;

/// Writes `bias` (or zeros) into every row of `out` (`[rows, bias.len()]`).
pub fn add_bias_rows(out: &mut [f32], bias: Option<&[f32]>, rows: usize, width: usize) {
    for r in 0..rows {
        let row = &mut out[r * width..(r + 1) * width];
        match bias {
            Some(b) => row.copy_from_slice(&b[..width]),
            None => row.fill(0.0),
        }
    }
}

/// `out[rows, units] = x[rows, in] · kernel[in, units] + bias`.
pub fn dense(
    x: &[f32],
    kernel: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
    rows: usize,
    input_dim: usize,
    units: usize,
) {
    add_bias_rows(out, bias, rows, units);
    matmul_acc(x, kernel, out, rows, input_dim, units);
}

/// `out[i, :] = table[ids[i], :]`. Ids must be below the table's row count (checked by callers).
pub fn embedding_gather(table: &[f32], ids: &[u32], out: &mut [f32], dim: usize) {
    for (i, &id) in ids.iter().enumerate() {
        let id = id as usize;
        out[i * dim..(i + 1) * dim].copy_from_slice(&table[id * dim..(id + 1) * dim]);
    }
}

/// Row-wise log-softmax, max-subtracted: `out[r, j] = x[r, j] - max_r - ln(sum_j e^(x[r,j] - max_r))`.
pub fn log_softmax_rows(x: &[f32], out: &mut [f32], rows: usize, width: usize) {
    for r in 0..rows {
        let xr = &x[r * width..(r + 1) * width];
        let or = &mut out[r * width..(r + 1) * width];
        let max = xr
            .iter()
            .fold(f32::NEG_INFINITY, |m, &v| if v > m || v.is_nan() { v } else { m });
        let sum: f32 = xr.iter().map(|&v| exp(v - max)).sum();
        let log_sum = sum.ln();
        for (o, &v) in or.iter_mut().zip(xr) {
            *o = v - max - log_sum;
        }
    }
}

/// Adds one ensemble member's share of its log-probabilities to the running mean: `mean[i] +=
/// share * logp[i]` (members added in order, starting from zeros). The CPU twin of
/// `ensemble_mean.wgsl`.
pub fn ensemble_add(mean: &mut [f32], logp: &[f32], share: f32) {
    for (s, l) in mean.iter_mut().zip(logp) {
        *s += share * l;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Lcg;

    #[test]
    fn log_softmax_matches_f64_and_normalises() {
        let mut rng = Lcg::new(5);
        for &(rows, width) in &[(1, 1), (3, 17), (4, 38), (2, 129)] {
            let mut x = rng.vec(rows * width, 20.0);
            x[0] += 500.0; // a large logit must not overflow
            let mut out = vec![f32::NAN; rows * width];
            log_softmax_rows(&x, &mut out, rows, width);
            for r in 0..rows {
                let xr: Vec<f64> = x[r * width..(r + 1) * width].iter().map(|&v| v as f64).collect();
                let m = xr.iter().cloned().fold(f64::MIN, f64::max);
                let lse = m + xr.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
                let mut total = 0f64;
                for j in 0..width {
                    let want = xr[j] - lse;
                    assert!((out[r * width + j] as f64 - want).abs() < 1e-4, "row {r} col {j}");
                    total += (out[r * width + j] as f64).exp();
                }
                assert!((total - 1.0).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn log_softmax_propagates_nan() {
        let x = [1.0, f32::NAN, 2.0];
        let mut out = [0.0; 3];
        log_softmax_rows(&x, &mut out, 1, 3);
        assert!(out.iter().all(|v| v.is_nan()));
    }

    #[test]
    fn dense_and_gather_hand_derived() {
        // [1 2] · [[1 0 2], [3 1 0]] + [0.5 0.5 0.5] = [7.5 2.5 2.5]
        let mut out = [0.0; 3];
        dense(
            &[1.0, 2.0],
            &[1.0, 0.0, 2.0, 3.0, 1.0, 0.0],
            Some(&[0.5; 3]),
            &mut out,
            1,
            2,
            3,
        );
        assert_eq!(out, [7.5, 2.5, 2.5]);
        let table = [0.0, 1.0, 10.0, 11.0, 20.0, 21.0];
        let mut g = [0.0; 4];
        embedding_gather(&table, &[2, 0], &mut g, 2);
        assert_eq!(g, [20.0, 21.0, 0.0, 1.0]);
    }
}
