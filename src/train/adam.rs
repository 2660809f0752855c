//! Adam (Kingma & Ba) with global-norm gradient clipping.

use crate::seq2seq::attention::AttentionParams;

#[derive(Debug, Clone, PartialEq)]
pub struct Adam {
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    /// Steps taken so far.
    pub step: u64,
    pub m: AttentionParams,
    pub v: AttentionParams,
}

impl Adam {
    pub fn new(like: &AttentionParams) -> Adam {
        Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            step: 0,
            m: AttentionParams::zeros(like.config),
            v: AttentionParams::zeros(like.config),
        }
    }

    /// One update of `params` with `grads` at learning rate `lr`.
    pub fn update(&mut self, params: &mut AttentionParams, grads: &AttentionParams, lr: f32) {
        self.step += 1;
        let t = self.step as i32;
        let c1 = 1.0 - self.beta1.powi(t);
        let c2 = 1.0 - self.beta2.powi(t);
        for i in 0..params.tensors.len() {
            let (p, g) = (&mut params.tensors[i], &grads.tensors[i]);
            let (m, v) = (&mut self.m.tensors[i], &mut self.v.tensors[i]);
            for k in 0..p.len() {
                m[k] = self.beta1 * m[k] + (1.0 - self.beta1) * g[k];
                v[k] = self.beta2 * v[k] + (1.0 - self.beta2) * g[k] * g[k];
                p[k] -= lr * (m[k] / c1) / ((v[k] / c2).sqrt() + self.eps);
            }
        }
    }
}

/// Multiplies `grads` by `scale`, then rescales them so their global L2 norm is at most
/// `max_norm`. Returns the norm before clipping (after `scale`).
pub fn scale_and_clip(grads: &mut AttentionParams, scale: f32, max_norm: f32) -> f32 {
    let mut sq = 0f64;
    for t in &mut grads.tensors {
        for g in t.iter_mut() {
            *g *= scale;
            sq += (*g as f64) * (*g as f64);
        }
    }
    let norm = sq.sqrt() as f32;
    if norm > max_norm && norm > 0.0 {
        let k = max_norm / norm;
        grads.tensors.iter_mut().flatten().for_each(|g| *g *= k);
    }
    norm
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq2seq::attention::AttentionConfig;

    #[test]
    fn first_step_moves_each_weight_by_lr_against_its_gradient_sign() {
        let c = AttentionConfig {
            steps: 2,
            hidden: 2,
            embed: 2,
            vocab: 3,
            seq_len: 2,
            encoder: Default::default(),
        };
        let mut p = AttentionParams::zeros(c);
        let mut g = AttentionParams::zeros(c);
        g.tensors[0][0] = 3.0;
        g.tensors[0][1] = -0.5;
        let mut adam = Adam::new(&p);
        adam.update(&mut p, &g, 0.01);
        assert!((p.tensors[0][0] + 0.01).abs() < 1e-6);
        assert!((p.tensors[0][1] - 0.01).abs() < 1e-6);
        assert_eq!(p.tensors[0][2], 0.0);
    }

    #[test]
    fn clipping_bounds_the_norm() {
        let c = AttentionConfig {
            steps: 2,
            hidden: 2,
            embed: 2,
            vocab: 3,
            seq_len: 2,
            encoder: Default::default(),
        };
        let mut g = AttentionParams::zeros(c);
        g.tensors[1][0] = 3.0;
        g.tensors[2][0] = 4.0;
        let n = scale_and_clip(&mut g, 2.0, 1.0);
        assert!((n - 10.0).abs() < 1e-5);
        assert!((g.tensors[1][0] - 0.6).abs() < 1e-6 && (g.tensors[2][0] - 0.8).abs() < 1e-6);
    }
}
