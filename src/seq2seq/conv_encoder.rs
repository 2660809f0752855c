//! The paper's "hybrid" encoder: a 1-D convolution over the time axis of the encoder's input
//! sequence feeding the recurrent encoder.
//!
//! The encoder input of a problem is `[steps, fin]` (row t = `[z_t, onehot(t)]`, see
//! [`FeatureTransform`](super::attention::FeatureTransform)). With [`EncoderKind::Hybrid`] one
//! convolution layer of width [`CONV_WIDTH`] with 'same' (zero) padding maps it to
//! `[steps, channels]`:
//!
//! `y[t, c] = tanh(b[c] + sum_{k=0..3} sum_f x[t + k - 1, f] · w[k, f, c])` (rows outside
//! `0..steps` are zero),
//!
//! and the LSTM encoder reads `y[t]` instead of `x[t]`; everything after it (the encoder
//! outputs the attention reads, the decoder) is unchanged. tanh keeps the LSTM's inputs in
//! [-1, 1] like the one-hot part of the plain encoder's input. Each step of `y` sees the
//! feature of its own step and of both neighbours, so the LSTM starts from local pairs of
//! features (C with K, H with W, ...) instead of one scalar at a time.
//!
//! [`conv1d_same_tanh`] is the CPU twin of `shaders/conv1d.wgsl` (the same summation order:
//! bias, then k ascending, f ascending, each step a fused multiply-add where the CPU has FMA).

use crate::cpu::activations::tanh;
use crate::error::{Error, Result};

/// Width of the convolution (taps over the time axis).
pub const CONV_WIDTH: usize = 3;

/// Default number of convolution channels of `--encoder hybrid`.
pub const DEFAULT_CONV_CHANNELS: usize = 32;

/// Which encoder a model has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EncoderKind {
    /// The LSTM reads the input sequence itself (every model before the hybrid encoder).
    #[default]
    Lstm,
    /// One width-3 'same' convolution with tanh, `channels` outputs per step, then the LSTM.
    Hybrid { channels: usize },
}

impl EncoderKind {
    /// `lstm` or `hybrid` (with `channels` convolution outputs).
    pub fn parse(text: &str, channels: usize) -> Result<EncoderKind> {
        match text {
            "lstm" => Ok(EncoderKind::Lstm),
            "hybrid" if channels > 0 => Ok(EncoderKind::Hybrid { channels }),
            "hybrid" => Err(Error::Usage("--conv-channels must be at least 1".into())),
            other => Err(Error::Usage(format!("--encoder '{other}': expected lstm or hybrid"))),
        }
    }

    /// The name used on the command line and in the weights JSON.
    pub fn name(&self) -> &'static str {
        match self {
            EncoderKind::Lstm => "lstm",
            EncoderKind::Hybrid { .. } => "hybrid",
        }
    }

    /// Convolution channels (None for the plain LSTM encoder).
    pub fn conv_channels(&self) -> Option<usize> {
        match *self {
            EncoderKind::Lstm => None,
            EncoderKind::Hybrid { channels } => Some(channels),
        }
    }
}

/// The hybrid encoder's convolution: `x` `[batch, steps, fin]`, `w` `[CONV_WIDTH, fin, ch]`,
/// `b` `[ch]`; writes `y` `[batch, steps, ch]` = tanh of the 'same'-padded convolution over
/// the steps (see the module docs). CPU twin of `shaders/conv1d.wgsl`. Like `cpu::matmul_acc`,
/// the multiply-adds are fused on x86-64 machines with FMA (chosen at run time).
#[allow(clippy::too_many_arguments)]
pub fn conv1d_same_tanh(
    x: &[f32],
    w: &[f32],
    b: &[f32],
    y: &mut [f32],
    batch: usize,
    steps: usize,
    fin: usize,
    ch: usize,
) {
    assert_eq!(x.len(), batch * steps * fin, "conv1d: input");
    assert_eq!(w.len(), CONV_WIDTH * fin * ch, "conv1d: kernel");
    assert_eq!(b.len(), ch, "conv1d: bias");
    assert_eq!(y.len(), batch * steps * ch, "conv1d: output");
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the features the function is compiled for were just detected.
            unsafe { conv_avx2_fma(x, w, b, y, steps, fin, ch) };
            return;
        }
    }
    conv_body::<false>(x, w, b, y, steps, fin, ch);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn conv_avx2_fma(x: &[f32], w: &[f32], b: &[f32], y: &mut [f32], steps: usize, fin: usize, ch: usize) {
    conv_body::<true>(x, w, b, y, steps, fin, ch);
}

#[inline(always)]
fn conv_body<const FMA: bool>(x: &[f32], w: &[f32], b: &[f32], y: &mut [f32], steps: usize, fin: usize, ch: usize) {
    for (r, ys) in y.chunks_exact_mut(steps * ch).enumerate() {
        for (t, out) in ys.chunks_exact_mut(ch).enumerate() {
            out.copy_from_slice(b);
            for k in 0..CONV_WIDTH {
                // Input step t + k - 1 ('same' padding: outside 0..steps is zero).
                let Some(s) = (t + k).checked_sub(1).filter(|&s| s < steps) else {
                    continue;
                };
                let xs = &x[(r * steps + s) * fin..(r * steps + s + 1) * fin];
                for (f, &xv) in xs.iter().enumerate() {
                    let wr = &w[(k * fin + f) * ch..(k * fin + f + 1) * ch];
                    for (o, &wv) in out.iter_mut().zip(wr) {
                        *o = if FMA { xv.mul_add(wv, *o) } else { xv * wv + *o };
                    }
                }
            }
            out.iter_mut().for_each(|v| *v = tanh(*v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_derived_case() {
        // One problem, 3 steps, 1 input value, 1 channel; kernel taps 1, 2, 3 (previous, own,
        // next step), bias 0.5: pre[t] = 0.5 + 1·x[t-1] + 2·x[t] + 3·x[t+1].
        let x = [0.1, -0.2, 0.3];
        let w = [1.0, 2.0, 3.0];
        let mut y = [0.0; 3];
        conv1d_same_tanh(&x, &w, &[0.5], &mut y, 1, 3, 1, 1);
        let pre: [f64; 3] = [0.5 + 0.2 - 0.6, 0.5 + 0.1 - 0.4 + 0.9, 0.5 - 0.2 + 0.6];
        for t in 0..3 {
            let want: f64 = pre[t].tanh();
            assert!((y[t] as f64 - want).abs() < 1e-6, "step {t}: {} vs {want}", y[t]);
        }
    }

    #[test]
    fn channels_and_rows_are_independent() {
        // Two rows, 2 inputs, 2 channels: channel 1's kernel is channel 0's negated, so its
        // output is the negation (tanh is odd, bias 0); row 1 is row 0 scaled by 0.
        let x = [0.3, -0.1, 0.2, 0.4, 0.0, 0.0, 0.0, 0.0];
        let mut w = vec![0.0; CONV_WIDTH * 2 * 2];
        for (i, v) in w.iter_mut().enumerate() {
            let base = 0.1 * (i / 2 + 1) as f32;
            *v = if i % 2 == 0 { base } else { -base };
        }
        let mut y = vec![0.0; 2 * 2 * 2];
        conv1d_same_tanh(&x, &w, &[0.0, 0.0], &mut y, 2, 2, 2, 2);
        for t in 0..2 {
            assert!(y[t * 2] != 0.0 && (y[t * 2] + y[t * 2 + 1]).abs() < 1e-7);
        }
        assert!(y[4..].iter().all(|&v| v == 0.0));
    }

    #[test]
    fn parse_names() {
        assert_eq!(EncoderKind::parse("lstm", 32).ok(), Some(EncoderKind::Lstm));
        assert_eq!(
            EncoderKind::parse("hybrid", 8).ok(),
            Some(EncoderKind::Hybrid { channels: 8 })
        );
        assert!(EncoderKind::parse("conv", 8).is_err());
        assert!(EncoderKind::parse("hybrid", 0).is_err());
    }
}
