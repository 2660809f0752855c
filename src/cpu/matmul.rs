//! `C += A · B` for row-major f32 matrices: the one op that dominates encoder and decoder time.
//!
//! The main loop keeps a 6 x 16 block of C in registers while streaming one row of B and
//! broadcasting six elements of A per step of k (no packing: B rows of the models are short and
//! contiguous). Rows left over are done one at a time as AXPYs over whole rows of B, which is
//! also the fastest shape for a single prediction (M = 1). On x86-64 the same code is compiled a
//! second time with AVX2+FMA enabled and chosen at run time.

const MR: usize = 6;
const NR: usize = 16;

/// `c[m, n] += a[m, k] · b[k, n]`, all row-major and contiguous.
///
/// # Panics
/// When a slice is shorter than its stated shape (a programming error, never user input).
pub fn matmul_acc(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    assert!(
        a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
        "matmul_acc: shape"
    );
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the features the function is compiled for were just detected.
            unsafe { matmul_avx2_fma(a, b, c, m, k, n) };
            return;
        }
    }
    matmul_body::<false>(a, b, c, m, k, n);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn matmul_avx2_fma(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    matmul_body::<true>(a, b, c, m, k, n);
}

#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, acc: f32) -> f32 {
    if FMA {
        a.mul_add(b, acc)
    } else {
        a * b + acc
    }
}

/// The register tile both kernels share: `acc[r][q] += sum_p a_rows[r][p] * b[p*stride + offset + q]`.
/// With `SKIP`, a subnormal `a_rows[r][p]` is skipped where every accumulator of row `r` is at
/// least `floor` in magnitude: those multiply-adds provably leave every bit as it is
/// ([`subnormal_skip_floor`]).
#[inline(always)]
fn tile_rows<const FMA: bool, const SKIP: bool>(
    a_rows: &[&[f32]; MR],
    b: &[f32],
    stride: usize,
    offset: usize,
    acc: &mut [[f32; NR]; MR],
    floor: f32,
) {
    for p in 0..a_rows[0].len() {
        let b_part: &[f32; NR] = match b[p * stride + offset..p * stride + offset + NR].try_into() {
            Ok(part) => part,
            Err(_) => unreachable!(),
        };
        for r in 0..MR {
            let av = a_rows[r][p];
            if SKIP && av.is_subnormal() && all_at_least(&acc[r], floor) {
                continue;
            }
            for q in 0..NR {
                acc[r][q] = madd::<FMA>(av, b_part[q], acc[r][q]);
            }
        }
    }
}

/// Is every `|x|` at least `floor` (false for NaN)?
#[inline(always)]
fn all_at_least(xs: &[f32], floor: f32) -> bool {
    xs.iter().fold(true, |ok, x| ok & (x.abs() >= floor))
}

/// One row against [`NR_ROW`] columns: `acc[q] += sum_p a_row[p] * b[p*stride + offset + q]`.
/// C is loaded and stored once per block instead of once per k (the single-prediction case).
/// `SKIP` as for [`tile_rows`].
#[inline(always)]
fn tile_row<const FMA: bool, const SKIP: bool>(
    a_row: &[f32],
    b: &[f32],
    stride: usize,
    offset: usize,
    acc: &mut [f32; NR_ROW],
    floor: f32,
) {
    for (p, &av) in a_row.iter().enumerate() {
        if SKIP && av.is_subnormal() && all_at_least(acc, floor) {
            continue;
        }
        let b_part: &[f32; NR_ROW] = match b[p * stride + offset..p * stride + offset + NR_ROW].try_into() {
            Ok(part) => part,
            Err(_) => unreachable!(),
        };
        for q in 0..NR_ROW {
            acc[q] = madd::<FMA>(av, b_part[q], acc[q]);
        }
    }
}

#[inline(always)]
fn matmul_body<const FMA: bool>(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    let m_blocked = m / MR * MR;
    let n_blocked = n / NR * NR;
    let b = &b[..k * n];
    for i0 in (0..m_blocked).step_by(MR) {
        let a_rows: [&[f32]; MR] = std::array::from_fn(|r| &a[(i0 + r) * k..(i0 + r + 1) * k]);
        for j0 in (0..n_blocked).step_by(NR) {
            let mut acc = [[0f32; NR]; MR];
            for (r, acc_row) in acc.iter_mut().enumerate() {
                acc_row.copy_from_slice(&c[(i0 + r) * n + j0..(i0 + r) * n + j0 + NR]);
            }
            tile_rows::<FMA, false>(&a_rows, b, n, j0, &mut acc, 0.0);
            for (r, acc_row) in acc.iter().enumerate() {
                c[(i0 + r) * n + j0..(i0 + r) * n + j0 + NR].copy_from_slice(acc_row);
            }
        }
        if n_blocked < n {
            for r in 0..MR {
                axpy_row::<FMA>(a_rows[r], b, &mut c[(i0 + r) * n..(i0 + r + 1) * n], n, n_blocked);
            }
        }
    }
    for i in m_blocked..m {
        gemv_row::<FMA>(&a[i * k..(i + 1) * k], b, &mut c[i * n..(i + 1) * n], k, n);
    }
}

/// Columns per register block of a single row (8 AVX vectors of accumulators).
const NR_ROW: usize = 64;

/// `c_row += a_row · b` for one row, [`NR_ROW`] columns at a time.
#[inline(always)]
fn gemv_row<const FMA: bool>(a_row: &[f32], b: &[f32], c_row: &mut [f32], k: usize, n: usize) {
    let n_blocked = n / NR_ROW * NR_ROW;
    for j0 in (0..n_blocked).step_by(NR_ROW) {
        let mut acc = [0f32; NR_ROW];
        acc.copy_from_slice(&c_row[j0..j0 + NR_ROW]);
        tile_row::<FMA, false>(&a_row[..k], b, n, j0, &mut acc, 0.0);
        c_row[j0..j0 + NR_ROW].copy_from_slice(&acc);
    }
    if n_blocked < n {
        axpy_row::<FMA>(a_row, b, c_row, n, n_blocked);
    }
}

/// `c_row[from..n] += sum_p a_row[p] * b[p, from..n]`.
#[inline(always)]
fn axpy_row<const FMA: bool>(a_row: &[f32], b: &[f32], c_row: &mut [f32], n: usize, from: usize) {
    let c_part = &mut c_row[from..n];
    for (p, &av) in a_row.iter().enumerate() {
        let b_part = &b[p * n + from..p * n + n];
        for (cv, &bv) in c_part.iter_mut().zip(b_part) {
            *cv = madd::<FMA>(av, bv, *cv);
        }
    }
}

/// The obvious triple loop, in f64: the reference the blocked kernel is tested against.
pub fn matmul_naive_f64(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0f64;
            for p in 0..k {
                s += a[i * k + p] as f64 * b[p * n + j] as f64;
            }
            c[i * n + j] = s;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Lcg;

    #[test]
    fn blocked_matches_naive_on_odd_shapes() {
        let mut rng = Lcg::new(7);
        for &(m, k, n) in &[
            (1, 1, 1),
            (1, 3, 17),
            (7, 5, 33),
            (6, 128, 512),
            (13, 63, 65),
            (17, 129, 38),
            (65, 17, 3),
        ] {
            let a = rng.vec(m * k, 1.0);
            let b = rng.vec(k * n, 1.0);
            let init = rng.vec(m * n, 1.0);
            let mut c = init.clone();
            matmul_acc(&a, &b, &mut c, m, k, n);
            let want = matmul_naive_f64(&a, &b, m, k, n);
            for i in 0..m * n {
                let expected = want[i] + init[i] as f64;
                let err = (c[i] as f64 - expected).abs();
                assert!(
                    err <= 1e-5 * (k as f64).sqrt() * (1.0 + expected.abs()),
                    "({m},{k},{n}) at {i}: {} vs {expected}",
                    c[i]
                );
            }
        }
    }

    #[test]
    fn scalar_path_matches_simd_path() {
        let mut rng = Lcg::new(3);
        let (m, k, n) = (9, 31, 47);
        let a = rng.vec(m * k, 1.0);
        let b = rng.vec(k * n, 1.0);
        let mut c1 = vec![0.5; m * n];
        let mut c2 = c1.clone();
        matmul_acc(&a, &b, &mut c1, m, k, n);
        matmul_body::<false>(&a, &b, &mut c2, m, k, n);
        for (x, y) in c1.iter().zip(&c2) {
            assert!((x - y).abs() < 1e-4, "{x} vs {y}");
        }
    }
}

/// Row stride multiple of a [`PackedMatrix`] (one single-row register tile).
pub const PANEL: usize = NR_ROW;

/// A constant right-hand matrix `[k, n]` prepared once at model load: row-major with each row
/// zero-padded to a multiple of [`PANEL`] columns and cache-line aligned (so every register tile
/// loads a full, aligned slice and no column is left to a slow remainder loop), plus its
/// [`subnormal_skip_floor`].
#[derive(Debug)]
pub struct PackedMatrix {
    pub k: usize,
    pub n: usize,
    /// Row stride of the matrix: `n` rounded up to a multiple of [`PANEL`].
    stride: usize,
    /// The rows start at `data[offset]`, a 64-byte boundary (with the stride, every row and
    /// every register tile's load is cache-line aligned).
    offset: usize,
    data: Vec<f32>,
    /// Accumulators at least this large in magnitude cannot change when a subnormal `a` element
    /// times any element of this matrix is added to them (see [`subnormal_skip_floor`]).
    skip_floor: f32,
}

/// The smallest power of two `T` such that, for every subnormal `a` and every element `b` of a
/// matrix whose largest magnitude is `max_abs`, `fma(a, b, c) == c` whenever `|c| >= T`.
///
/// Why: `|a| < 2^-126` and `|b| <= 2^e` give `|a·b| < 2^(e-126)`; for `|c| >= 2^E` the gap to
/// `c`'s neighbours is at least `2^(E-24)` (the smaller gap, below a power of two), so the exact
/// sum rounds (to nearest) back to `c` while `|a·b| < 2^(E-25)`, i.e. for `E >= e - 101`; we take
/// `E = e - 100`. A matrix with a non-finite element gets NaN: no accumulator passes the test.
/// This lets the products skip the multiply-adds of subnormal inputs (which cost a microcode
/// assist of ~100 cycles each on Intel cores) without changing a single bit of the result.
pub fn subnormal_skip_floor(max_abs: f32) -> f32 {
    if !max_abs.is_finite() {
        return f32::NAN;
    }
    // e = floor(log2 max_abs) + 1 bounds max_abs by 2^e (normal or not).
    let exponent = ((max_abs.to_bits() >> 23) & 0xff) as i32 - 127;
    let e = exponent + 1;
    let floor_exp = (e - 100).clamp(-126, 127);
    if floor_exp == 127 {
        return f32::INFINITY;
    }
    f32::from_bits(((floor_exp + 127) as u32) << 23)
}

impl Clone for PackedMatrix {
    /// A copy whose rows are cache-line aligned again (a plain copy of `data` would keep the
    /// offset of the original allocation, not of its own).
    fn clone(&self) -> PackedMatrix {
        let mut data = vec![0f32; self.data.len()];
        let offset = data.as_ptr().align_offset(64).min(16);
        let len = self.k * self.stride;
        data[offset..offset + len].copy_from_slice(&self.data[self.offset..self.offset + len]);
        PackedMatrix { data, offset, ..*self }
    }
}

impl PackedMatrix {
    /// Packs row-major `b[k, n]`.
    pub fn pack(b: &[f32], k: usize, n: usize) -> PackedMatrix {
        assert!(b.len() >= k * n, "PackedMatrix::pack: shape");
        let stride = n.div_ceil(PANEL) * PANEL;
        let mut data = vec![0f32; k * stride + 16];
        let offset = data.as_ptr().align_offset(64).min(16);
        for p in 0..k {
            let row = offset + p * stride;
            data[row..row + n].copy_from_slice(&b[p * n..(p + 1) * n]);
        }
        let max_abs = b[..k * n]
            .iter()
            .fold(0f32, |m, &x| if x.abs() > m || x.is_nan() { x.abs() } else { m });
        PackedMatrix {
            k,
            n,
            stride,
            offset,
            data,
            skip_floor: subnormal_skip_floor(max_abs),
        }
    }
}

/// `c[m, n] += a[m, k] · b` with `b` packed: the engine's hot path (same result as
/// [`matmul_acc`] up to rounding order).
pub fn matmul_packed_acc(a: &[f32], b: &PackedMatrix, c: &mut [f32], m: usize) {
    let (k, n) = (b.k, b.n);
    assert!(a.len() >= m * k && c.len() >= m * n, "matmul_packed_acc: shape");
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the features the function is compiled for were just detected.
            unsafe { packed_avx2_fma(a, b, c, m) };
            return;
        }
    }
    packed_body::<false>(a, b, c, m);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn packed_avx2_fma(a: &[f32], b: &PackedMatrix, c: &mut [f32], m: usize) {
    packed_body::<true>(a, b, c, m);
}

#[inline(always)]
fn packed_body<const FMA: bool>(a: &[f32], b: &PackedMatrix, c: &mut [f32], m: usize) {
    // Subnormal inputs (saturated LSTM states give some) are rare: only then the tiles test
    // each input before its multiply-adds. The scan picks a whole copy of the kernel without the
    // test; deciding per block in one copy instead measured twice as slow (cpu_batch/100).
    if a[..m * b.k].iter().any(|x| x.is_subnormal()) {
        packed_tiles::<FMA, true>(a, b, c, m);
    } else {
        packed_tiles::<FMA, false>(a, b, c, m);
    }
}

#[inline(always)]
fn packed_tiles<const FMA: bool, const SKIP: bool>(a: &[f32], b: &PackedMatrix, c: &mut [f32], m: usize) {
    let (k, n, stride) = (b.k, b.n, b.stride);
    let data = &b.data[b.offset..b.offset + k * stride];
    let floor = b.skip_floor;
    let m_blocked = m / MR * MR;
    let n_full = n / NR * NR;
    // Blocks of MR rows x NR columns in registers. The full ones move C with fixed-size copies;
    // a last partial block (its padding columns computed, not stored) has its own accumulators,
    // so that the variable-length copies it needs do not pull the hot loop's out of registers.
    for i0 in (0..m_blocked).step_by(MR) {
        let a_rows: [&[f32]; MR] = std::array::from_fn(|r| &a[(i0 + r) * k..(i0 + r + 1) * k]);
        // Only blocks with a subnormal input pay for the test.
        let skip = SKIP && a_rows.iter().any(|row| row.iter().any(|x| x.is_subnormal()));
        for j0 in (0..n_full).step_by(NR) {
            let mut acc = [[0f32; NR]; MR];
            for (r, acc_row) in acc.iter_mut().enumerate() {
                acc_row.copy_from_slice(&c[(i0 + r) * n + j0..(i0 + r) * n + j0 + NR]);
            }
            if skip {
                tile_rows::<FMA, true>(&a_rows, data, stride, j0, &mut acc, floor);
            } else {
                tile_rows::<FMA, false>(&a_rows, data, stride, j0, &mut acc, floor);
            }
            for (r, acc_row) in acc.iter().enumerate() {
                c[(i0 + r) * n + j0..(i0 + r) * n + j0 + NR].copy_from_slice(acc_row);
            }
        }
        if n_full < n {
            let cols = n - n_full;
            let mut part = [[0f32; NR]; MR];
            for (r, acc_row) in part.iter_mut().enumerate() {
                acc_row[..cols].copy_from_slice(&c[(i0 + r) * n + n_full..(i0 + r + 1) * n]);
            }
            tile_rows::<FMA, SKIP>(&a_rows, data, stride, n_full, &mut part, floor);
            for (r, acc_row) in part.iter().enumerate() {
                c[(i0 + r) * n + n_full..(i0 + r + 1) * n].copy_from_slice(&acc_row[..cols]);
            }
        }
    }
    // Leftover rows: [`PANEL`] columns of accumulators at a time, the same way.
    let n_panels = n / PANEL * PANEL;
    for i in m_blocked..m {
        let a_row = &a[i * k..(i + 1) * k];
        let c_row = &mut c[i * n..(i + 1) * n];
        for j0 in (0..n_panels).step_by(PANEL) {
            let mut acc = [0f32; PANEL];
            acc.copy_from_slice(&c_row[j0..j0 + PANEL]);
            tile_row::<FMA, SKIP>(a_row, data, stride, j0, &mut acc, floor);
            c_row[j0..j0 + PANEL].copy_from_slice(&acc);
        }
        if n_panels < n {
            let width = n - n_panels;
            let mut part = [0f32; PANEL];
            part[..width].copy_from_slice(&c_row[n_panels..]);
            tile_row::<FMA, SKIP>(a_row, data, stride, n_panels, &mut part, floor);
            c_row[n_panels..].copy_from_slice(&part[..width]);
        }
    }
}

#[cfg(test)]
mod packed_tests {
    use super::*;
    use crate::testutil::Lcg;

    /// `c[i, j] += sum_p a[i, p] * b[p, j]` one multiply-add at a time in order of `p`, fused
    /// or not like the kernel that runs: the bit-exact reference of the blocked kernels.
    fn sequential_reference(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
        #[cfg(target_arch = "x86_64")]
        let fused = std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
        #[cfg(not(target_arch = "x86_64"))]
        let fused = false;
        for i in 0..m {
            for j in 0..n {
                let mut acc = c[i * n + j];
                for p in 0..k {
                    let (x, y) = (a[i * k + p], b[p * n + j]);
                    acc = if fused { x.mul_add(y, acc) } else { x * y + acc };
                }
                c[i * n + j] = acc;
            }
        }
    }

    #[test]
    fn subnormal_inputs_give_the_same_bits() {
        // Saturated LSTM states put subnormals into A. Accumulators large and tiny, subnormals
        // at every position, rows of 1 and of several register blocks: every bit must equal the
        // plain sequential multiply-adds, whether a subnormal's multiply-add is skipped or not.
        let mut rng = Lcg::new(21);
        let tiny = f32::MIN_POSITIVE;
        // (m, k, n, accumulator scale, every third or every element of A subnormal): with a
        // whole row subnormal and tiny accumulators the subnormal terms decide the result.
        for &(m, k, n, acc_scale, every) in &[
            (1, 128, 512, 1.0f32, 3),
            (1, 37, 70, 1e-37, 1),
            (1, 37, 70, 1e-20, 1),
            (7, 33, 65, 1.0, 3),
            (7, 33, 65, 1e-36, 1),
            (13, 64, 129, 1e-36, 3),
            (13, 64, 129, 0.0, 1),
            (6, 9, 64, 0.0, 3),
        ] {
            let mut a = rng.vec(m * k, 1.0);
            for (i, x) in a.iter_mut().enumerate() {
                if i % every == 0 {
                    // Subnormals of both signs and several sizes.
                    *x = tiny * (*x * 0.999) / (1 << (i % 20)) as f32;
                    assert!(x.is_subnormal() || *x == 0.0);
                }
            }
            let b = rng.vec(k * n, 3.0);
            let init: Vec<f32> = rng.vec(m * n, 1.0).iter().map(|x| x * acc_scale).collect();
            let packed = PackedMatrix::pack(&b, k, n);
            let mut got = init.clone();
            matmul_packed_acc(&a, &packed, &mut got, m);
            let mut want = init.clone();
            sequential_reference(&a, &b, &mut want, m, k, n);
            for i in 0..m * n {
                assert_eq!(
                    got[i].to_bits(),
                    want[i].to_bits(),
                    "({m},{k},{n}) scale {acc_scale} at {i}"
                );
            }
        }
    }

    #[test]
    fn skip_floor_is_safe_and_tight() {
        // Hand-derived: max |b| = 3 (< 2^2) gives 2^(2 - 100) = 2^-98.
        assert_eq!(subnormal_skip_floor(3.0), 2f32.powi(-98));
        assert_eq!(subnormal_skip_floor(0.0), f32::MIN_POSITIVE);
        assert!(subnormal_skip_floor(f32::INFINITY).is_nan());
        assert!(subnormal_skip_floor(f32::NAN).is_nan());
        // At the floor, the largest subnormal times the largest weight leaves c unchanged.
        let largest_sub = f32::from_bits(0x007f_ffff);
        for &w in &[3.0f32, -3.0, 1e-20, 1e30] {
            let floor = subnormal_skip_floor(w.abs());
            for &c in &[floor, -floor, floor * 1.5, -floor * 1.0000001] {
                assert_eq!(largest_sub.mul_add(w, c).to_bits(), c.to_bits(), "w {w} c {c}");
                assert_eq!((largest_sub * w + c).to_bits(), c.to_bits(), "w {w} c {c}");
            }
        }
    }

    #[test]
    fn packed_matches_naive_on_odd_shapes() {
        let mut rng = Lcg::new(9);
        for &(m, k, n) in &[
            (1, 1, 1),
            (1, 3, 17),
            (7, 5, 65),
            (6, 128, 512),
            (13, 63, 129),
            (17, 129, 38),
            (3, 8, 64),
        ] {
            let a = rng.vec(m * k, 1.0);
            let b = rng.vec(k * n, 1.0);
            let init = rng.vec(m * n, 1.0);
            let packed = PackedMatrix::pack(&b, k, n);
            let mut c = init.clone();
            // Sentinels after C catch writes past the end.
            c.extend_from_slice(&[f32::MAX; 5]);
            matmul_packed_acc(&a, &packed, &mut c, m);
            assert!(c[m * n..].iter().all(|&v| v == f32::MAX), "({m},{k},{n}) wrote past C");
            let want = matmul_naive_f64(&a, &b, m, k, n);
            for i in 0..m * n {
                let expected = want[i] + init[i] as f64;
                let err = (c[i] as f64 - expected).abs();
                assert!(
                    err <= 1e-5 * (k as f64).sqrt() * (1.0 + expected.abs()),
                    "({m},{k},{n}) at {i}"
                );
            }
        }
    }
}
