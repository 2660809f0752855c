//! The attention model's training pass: teacher-forced forward over a batch of samples, keeping
//! every activation, then backpropagation through the decoder steps, the attention and the
//! encoder steps (LSTM through time). Gradients are of the *summed* token loss.

use super::conv::conv1d_same_tanh_backward;
use super::ops::{
    attention_backward, col_sums_acc, embedding_backward, lstm_backward, lstm_forward, matmul_a_bt_acc,
    matmul_at_b_acc, softmax_cross_entropy, tanh_backward,
};
use crate::cpu;
use crate::seq2seq::attention::{idx, AttentionParams};
use crate::seq2seq::conv_encoder::conv1d_same_tanh;

/// Loss statistics of a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Summed cross-entropy over all target tokens.
    pub loss: f64,
    /// Target tokens that were the arg-max (teacher forced).
    pub correct: usize,
    pub tokens: usize,
}

impl Stats {
    pub fn add(&mut self, o: Stats) {
        self.loss += o.loss;
        self.correct += o.correct;
        self.tokens += o.tokens;
    }

    pub fn mean_loss(&self) -> f64 {
        self.loss / self.tokens.max(1) as f64
    }

    pub fn token_accuracy(&self) -> f64 {
        self.correct as f64 / self.tokens.max(1) as f64
    }
}

/// Inverted dropout on the attention output `o` (before the output layer), training only.
/// The mask of element k of decoder step j of sample r depends only on (`seed`, `first_row` + r,
/// j, k), so it does not change with how a batch is split over threads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dropout {
    pub rate: f32,
    pub seed: u64,
    /// Index of the first row of this call within the mini-batch.
    pub first_row: usize,
}

impl Dropout {
    /// 0 (dropped) or 1 / (1 - rate) (kept).
    fn mask(&self, row: usize, step: usize, k: usize) -> f32 {
        let mut z = self
            .seed
            .wrapping_add(((self.first_row + row) as u64) << 32)
            .wrapping_add((step as u64) << 20)
            .wrapping_add(k as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let u = (z >> 40) as f32 / (1u64 << 24) as f32;
        if u < self.rate {
            0.0
        } else {
            1.0 / (1.0 - self.rate)
        }
    }
}

/// One LSTM step's saved tensors.
struct LstmCache {
    h_prev: Vec<f32>,
    c_prev: Vec<f32>,
    gates: Vec<f32>,
    c: Vec<f32>,
    h: Vec<f32>,
}

struct DecoderCache {
    ids: Vec<u32>,
    emb: Vec<f32>,
    lstm: LstmCache,
    weights: Vec<f32>,
    q: Vec<f32>,
    o: Vec<f32>,
    /// `o` after dropout (what the output layer saw) and the dropout mask (empty: none).
    o_used: Vec<f32>,
    mask: Vec<f32>,
    /// softmax - onehot(target)
    dlogits: Vec<f32>,
}

#[allow(clippy::too_many_arguments)]
fn lstm_step(
    x: &[f32],
    w: &[f32],
    u: &[f32],
    bias: &[f32],
    h_prev: Vec<f32>,
    c_prev: Vec<f32>,
    rows: usize,
    fin: usize,
    hid: usize,
) -> LstmCache {
    let mut gates = vec![0.0; rows * 4 * hid];
    cpu::dense(x, w, Some(bias), &mut gates, rows, fin, 4 * hid);
    cpu::matmul_acc(&h_prev, u, &mut gates, rows, hid, 4 * hid);
    let (mut c, mut h) = (vec![0.0; rows * hid], vec![0.0; rows * hid]);
    lstm_forward(&mut gates, &c_prev, &mut c, &mut h, rows, hid);
    LstmCache {
        h_prev,
        c_prev,
        gates,
        c,
        h,
    }
}

/// Teacher-forced forward (and, with `grads`, backward) over `rows` samples.
///
/// `inputs`: `[rows, steps, 1 + steps]` encoder inputs; `targets`: `[rows, seq_len]` token ids.
/// `grads` (when given) receives the gradients of the summed loss, added to what it holds.
/// `logits_out` (when given) receives the raw scores `[seq_len, rows, vocab]` (tests).
pub fn forward_backward(
    p: &AttentionParams,
    inputs: &[f32],
    targets: &[u32],
    rows: usize,
    dropout: Option<Dropout>,
    grads: Option<&mut AttentionParams>,
    mut logits_out: Option<&mut Vec<f32>>,
) -> Stats {
    let c = p.config;
    let (hid, emb_dim, v, steps, len, fin) = (c.hidden, c.embed, c.vocab, c.steps, c.seq_len, c.enc_input());
    assert_eq!(inputs.len(), rows * steps * fin, "forward_backward: inputs");
    assert_eq!(targets.len(), rows * len, "forward_backward: targets");
    // The hybrid encoder's convolution; the LSTM reads its output (or the inputs themselves).
    let lin = c.lstm_input();
    let conv_out = c.encoder.conv_channels().map(|ch| {
        let mut y = vec![0.0; rows * steps * ch];
        conv1d_same_tanh(
            inputs,
            p.get(idx::CONV_W),
            p.get(idx::CONV_B),
            &mut y,
            rows,
            steps,
            fin,
            ch,
        );
        y
    });
    let seq = conv_out.as_deref().unwrap_or(inputs);
    // Encoder.
    let mut enc_x: Vec<Vec<f32>> = Vec::with_capacity(steps);
    let mut enc: Vec<LstmCache> = Vec::with_capacity(steps);
    let mut enc_out = vec![0.0; rows * steps * hid];
    for t in 0..steps {
        let mut x = vec![0.0; rows * lin];
        for b in 0..rows {
            x[b * lin..(b + 1) * lin].copy_from_slice(&seq[(b * steps + t) * lin..(b * steps + t + 1) * lin]);
        }
        let (h_prev, c_prev) = match enc.last() {
            Some(l) => (l.h.clone(), l.c.clone()),
            None => (vec![0.0; rows * hid], vec![0.0; rows * hid]),
        };
        let cache = lstm_step(
            &x,
            p.get(idx::ENC_W),
            p.get(idx::ENC_U),
            p.get(idx::ENC_B),
            h_prev,
            c_prev,
            rows,
            lin,
            hid,
        );
        for b in 0..rows {
            enc_out[(b * steps + t) * hid..(b * steps + t + 1) * hid].copy_from_slice(&cache.h[b * hid..(b + 1) * hid]);
        }
        enc_x.push(x);
        enc.push(cache);
    }
    // Decoder, teacher forced.
    let mut stats = Stats::default();
    let mut dec: Vec<DecoderCache> = Vec::with_capacity(len);
    for j in 0..len {
        let ids: Vec<u32> = (0..rows)
            .map(|b| if j == 0 { 0 } else { targets[b * len + j - 1] })
            .collect();
        let mut emb = vec![0.0; rows * emb_dim];
        cpu::embedding_gather(p.get(idx::EMB), &ids, &mut emb, emb_dim);
        let (h_prev, c_prev) = match dec.last() {
            Some(d) => (d.lstm.h.clone(), d.lstm.c.clone()),
            None => match enc.last() {
                Some(l) => (l.h.clone(), l.c.clone()),
                None => (vec![0.0; rows * hid], vec![0.0; rows * hid]),
            },
        };
        let lstm = lstm_step(
            &emb,
            p.get(idx::DEC_W),
            p.get(idx::DEC_U),
            p.get(idx::DEC_B),
            h_prev,
            c_prev,
            rows,
            emb_dim,
            hid,
        );
        let (mut weights, mut ctx) = (vec![0.0; rows * steps], vec![0.0; rows * hid]);
        cpu::attention(&lstm.h, &enc_out, &mut weights, &mut ctx, rows, steps, hid);
        let mut q = vec![0.0; rows * 2 * hid];
        for b in 0..rows {
            q[b * 2 * hid..b * 2 * hid + hid].copy_from_slice(&lstm.h[b * hid..(b + 1) * hid]);
            q[b * 2 * hid + hid..(b + 1) * 2 * hid].copy_from_slice(&ctx[b * hid..(b + 1) * hid]);
        }
        let mut o = vec![0.0; rows * hid];
        cpu::dense(
            &q,
            p.get(idx::COMB_W),
            Some(p.get(idx::COMB_B)),
            &mut o,
            rows,
            2 * hid,
            hid,
        );
        o.iter_mut().for_each(|x| *x = cpu::activations::tanh(*x));
        let (mut o_used, mut mask) = (Vec::new(), Vec::new());
        if let Some(d) = dropout.filter(|d| d.rate > 0.0) {
            mask = (0..rows * hid).map(|i| d.mask(i / hid, j, i % hid)).collect();
            o_used = o.iter().zip(&mask).map(|(a, m)| a * m).collect();
        }
        let o_out = if mask.is_empty() { &o } else { &o_used };
        let mut logits = vec![0.0; rows * v];
        cpu::dense(
            o_out,
            p.get(idx::OUT_W),
            Some(p.get(idx::OUT_B)),
            &mut logits,
            rows,
            hid,
            v,
        );
        if let Some(out) = logits_out.as_deref_mut() {
            out.extend_from_slice(&logits);
        }
        let tj: Vec<u32> = (0..rows).map(|b| targets[b * len + j]).collect();
        let mut dlogits = vec![0.0; rows * v];
        let (loss, correct) = softmax_cross_entropy(&logits, &tj, &mut dlogits, rows, v);
        stats.add(Stats {
            loss,
            correct,
            tokens: rows,
        });
        dec.push(DecoderCache {
            ids,
            emb,
            lstm,
            weights,
            q,
            o,
            o_used,
            mask,
            dlogits,
        });
    }
    let Some(g) = grads else { return stats };
    // Backward through the decoder.
    let g = &mut g.tensors;
    let mut denc = vec![0.0; rows * steps * hid];
    let mut dh_next = vec![0.0; rows * hid];
    let mut dc_next = vec![0.0; rows * hid];
    let mut dz = vec![0.0; rows * 4 * hid];
    for d in dec.iter().rev() {
        let o_out = if d.mask.is_empty() { &d.o } else { &d.o_used };
        matmul_at_b_acc(o_out, &d.dlogits, &mut g[idx::OUT_W], rows, hid, v);
        col_sums_acc(&d.dlogits, &mut g[idx::OUT_B], rows, v);
        let mut dpre = vec![0.0; rows * hid];
        matmul_a_bt_acc(&d.dlogits, p.get(idx::OUT_W), &mut dpre, rows, v, hid);
        if !d.mask.is_empty() {
            dpre.iter_mut().zip(&d.mask).for_each(|(x, m)| *x *= m);
        }
        tanh_backward(&d.o, &mut dpre);
        matmul_at_b_acc(&d.q, &dpre, &mut g[idx::COMB_W], rows, 2 * hid, hid);
        col_sums_acc(&dpre, &mut g[idx::COMB_B], rows, hid);
        let mut dq = vec![0.0; rows * 2 * hid];
        matmul_a_bt_acc(&dpre, p.get(idx::COMB_W), &mut dq, rows, hid, 2 * hid);
        let mut dh = dh_next.clone();
        let mut dctx = vec![0.0; rows * hid];
        for b in 0..rows {
            for k in 0..hid {
                dh[b * hid + k] += dq[b * 2 * hid + k];
                dctx[b * hid + k] = dq[b * 2 * hid + hid + k];
            }
        }
        attention_backward(
            &d.lstm.h, &enc_out, &d.weights, &dctx, &mut dh, &mut denc, rows, steps, hid,
        );
        let l = &d.lstm;
        lstm_backward(&l.gates, &l.c_prev, &l.c, &dh, &mut dc_next, &mut dz, rows, hid);
        matmul_at_b_acc(&d.emb, &dz, &mut g[idx::DEC_W], rows, emb_dim, 4 * hid);
        matmul_at_b_acc(&l.h_prev, &dz, &mut g[idx::DEC_U], rows, hid, 4 * hid);
        col_sums_acc(&dz, &mut g[idx::DEC_B], rows, 4 * hid);
        let mut demb = vec![0.0; rows * emb_dim];
        matmul_a_bt_acc(&dz, p.get(idx::DEC_W), &mut demb, rows, 4 * hid, emb_dim);
        embedding_backward(&d.ids, &demb, &mut g[idx::EMB], emb_dim);
        dh_next.fill(0.0);
        matmul_a_bt_acc(&dz, p.get(idx::DEC_U), &mut dh_next, rows, 4 * hid, hid);
    }
    // Backward through the encoder (and, for the hybrid encoder, into its convolution's output).
    let mut dseq = conv_out.as_ref().map(|y| vec![0.0; y.len()]);
    for t in (0..steps).rev() {
        let l = &enc[t];
        let mut dh = dh_next.clone();
        for b in 0..rows {
            for k in 0..hid {
                dh[b * hid + k] += denc[(b * steps + t) * hid + k];
            }
        }
        lstm_backward(&l.gates, &l.c_prev, &l.c, &dh, &mut dc_next, &mut dz, rows, hid);
        matmul_at_b_acc(&enc_x[t], &dz, &mut g[idx::ENC_W], rows, lin, 4 * hid);
        matmul_at_b_acc(&l.h_prev, &dz, &mut g[idx::ENC_U], rows, hid, 4 * hid);
        col_sums_acc(&dz, &mut g[idx::ENC_B], rows, 4 * hid);
        if let Some(ds) = dseq.as_mut() {
            let mut dx = vec![0.0; rows * lin];
            matmul_a_bt_acc(&dz, p.get(idx::ENC_W), &mut dx, rows, 4 * hid, lin);
            for b in 0..rows {
                ds[(b * steps + t) * lin..(b * steps + t + 1) * lin].copy_from_slice(&dx[b * lin..(b + 1) * lin]);
            }
        }
        dh_next.fill(0.0);
        matmul_a_bt_acc(&dz, p.get(idx::ENC_U), &mut dh_next, rows, 4 * hid, hid);
    }
    if let (Some(y), Some(dy)) = (conv_out.as_ref(), dseq.as_ref()) {
        let (dw, rest) = g[idx::CONV_W..].split_at_mut(1);
        conv1d_same_tanh_backward(inputs, y, dy, &mut dw[0], &mut rest[0], rows, steps, fin, lin);
    }
    stats
}

/// [`forward_backward`] over `rows` samples split into `shards` contiguous parts, each on its
/// own thread, gradients summed in shard order: the result does not depend on timing.
pub fn forward_backward_sharded(
    p: &AttentionParams,
    inputs: &[f32],
    targets: &[u32],
    rows: usize,
    shards: usize,
    dropout: Option<Dropout>,
    grads: &mut AttentionParams,
) -> Stats {
    let c = p.config;
    let per_in = c.steps * c.enc_input();
    let shards = shards.clamp(1, rows.max(1));
    let chunk = rows.div_ceil(shards);
    let parts: Vec<(usize, usize)> = (0..shards)
        .map(|s| (s * chunk, ((s + 1) * chunk).min(rows)))
        .filter(|(a, b)| b > a)
        .collect();
    let results: Vec<(Stats, AttentionParams)> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|&(a, b)| {
                scope.spawn(move || {
                    let mut g = AttentionParams::zeros(c);
                    let s = forward_backward(
                        p,
                        &inputs[a * per_in..b * per_in],
                        &targets[a * c.seq_len..b * c.seq_len],
                        b - a,
                        dropout.map(|d| Dropout {
                            first_row: d.first_row + a,
                            ..d
                        }),
                        Some(&mut g),
                        None,
                    );
                    (s, g)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Stats::default(), AttentionParams::zeros(c)))
            })
            .collect()
    });
    let mut stats = Stats::default();
    for (s, g) in results {
        stats.add(s);
        for (acc, part) in grads.tensors.iter_mut().zip(&g.tensors) {
            for (a, b) in acc.iter_mut().zip(part) {
                *a += b;
            }
        }
    }
    stats
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::seq2seq::attention::{AttentionConfig, EncoderKind};
    use crate::testutil::Lcg;

    fn tiny() -> (AttentionParams, Vec<f32>, Vec<u32>, usize) {
        tiny_with(EncoderKind::Lstm)
    }

    fn tiny_with(encoder: EncoderKind) -> (AttentionParams, Vec<f32>, Vec<u32>, usize) {
        let config = AttentionConfig {
            steps: 3,
            hidden: 4,
            embed: 3,
            vocab: 6,
            seq_len: 3,
            encoder,
        };
        let mut p = AttentionParams::init(config, 9);
        let mut rng = Lcg::new(10);
        // Non-zero biases so every path is exercised.
        for t in &mut p.tensors {
            for x in t.iter_mut() {
                *x += rng.value(0.1);
            }
        }
        let rows = 2;
        let inputs = rng.vec(rows * config.steps * config.enc_input(), 1.0);
        let targets: Vec<u32> = (0..rows * config.seq_len).map(|_| 1 + rng.below(5) as u32).collect();
        (p, inputs, targets, rows)
    }

    #[test]
    fn whole_model_gradient_matches_finite_differences() {
        whole_model_gradient_check(EncoderKind::Lstm);
    }

    #[test]
    fn hybrid_model_gradient_matches_finite_differences() {
        whole_model_gradient_check(EncoderKind::Hybrid { channels: 3 });
    }

    fn whole_model_gradient_check(encoder: EncoderKind) {
        let (p, inputs, targets, rows) = tiny_with(encoder);
        let mut g = AttentionParams::zeros(p.config);
        let drop = Some(Dropout {
            rate: 0.3,
            seed: 5,
            first_row: 0,
        });
        forward_backward(&p, &inputs, &targets, rows, drop, Some(&mut g), None);
        let names = p.config.tensor_shapes();
        assert_eq!(
            names.len(),
            if encoder == EncoderKind::Lstm {
                idx::COUNT
            } else {
                idx::CONV_B + 1
            }
        );
        for ti in 0..names.len() {
            for i in 0..p.tensors[ti].len() {
                let eps = 1e-2;
                let mut q = p.clone();
                q.tensors[ti][i] += eps;
                let up = forward_backward(&q, &inputs, &targets, rows, drop, None, None).loss;
                q.tensors[ti][i] -= 2.0 * eps;
                let down = forward_backward(&q, &inputs, &targets, rows, drop, None, None).loss;
                let num = (up - down) / (2.0 * eps as f64);
                let got = g.tensors[ti][i] as f64;
                assert!(
                    (got - num).abs() <= 3e-3 + 3e-2 * num.abs(),
                    "{}[{i}]: analytic {got} vs numeric {num}",
                    names[ti].0
                );
            }
        }
    }

    #[test]
    fn sharding_gives_the_same_gradients() {
        let (p, inputs, targets, rows) = tiny();
        let mut g1 = AttentionParams::zeros(p.config);
        let drop = Some(Dropout {
            rate: 0.5,
            seed: 8,
            first_row: 0,
        });
        let s1 = forward_backward(&p, &inputs, &targets, rows, drop, Some(&mut g1), None);
        let mut g2 = AttentionParams::zeros(p.config);
        let s2 = forward_backward_sharded(&p, &inputs, &targets, rows, 2, drop, &mut g2);
        assert!((s1.loss - s2.loss).abs() < 1e-9 && s1.tokens == s2.tokens);
        for (a, b) in g1.tensors.iter().flatten().zip(g2.tensors.iter().flatten()) {
            assert!((a - b).abs() < 1e-5);
        }
    }

    #[test]
    fn inference_model_matches_the_training_forward() {
        inference_matches_training(EncoderKind::Lstm);
    }

    #[test]
    fn hybrid_inference_model_matches_the_training_forward() {
        inference_matches_training(EncoderKind::Hybrid { channels: 6 });
    }

    fn inference_matches_training(encoder: EncoderKind) {
        use crate::seq2seq::attention::{AttentionModel, FeatureTransform, NUM_FEATURES};
        use crate::seq2seq::weights::ktn_metadata;
        use crate::seq2seq::{DecoderScratch, Seq2SeqModel, StepDecoder};
        let config = AttentionConfig {
            steps: NUM_FEATURES,
            hidden: 5,
            embed: 3,
            vocab: 7,
            seq_len: 4,
            encoder,
        };
        let mut p = AttentionParams::init(config, 4);
        let mut rng = Lcg::new(12);
        p.tensors.iter_mut().flatten().for_each(|x| *x += rng.value(0.2));
        let rows = 3;
        let inputs = rng.vec(rows * config.steps * config.enc_input(), 1.0);
        let targets: Vec<u32> = (0..rows * config.seq_len).map(|_| 1 + rng.below(6) as u32).collect();
        let mut logits = Vec::new();
        forward_backward(&p, &inputs, &targets, rows, None, None, Some(&mut logits));
        let tokens: Vec<String> = (0..7)
            .map(|i| if i == 0 { "-1".into() } else { i.to_string() })
            .collect();
        let transform = FeatureTransform {
            mean: vec![0.0; NUM_FEATURES],
            std: vec![1.0; NUM_FEATURES],
            gpu: None,
        };
        let model = AttentionModel::new(p, transform, ktn_metadata(&tokens, 4), "test".into()).unwrap();
        let mut states = model.encode(&inputs, rows).unwrap();
        let mut scratch = DecoderScratch::default();
        let mut scores = Vec::new();
        for j in 0..config.seq_len {
            let feed: Vec<u32> = (0..rows)
                .map(|b| if j == 0 { 0 } else { targets[b * 4 + j - 1] })
                .collect();
            model.step(&feed, &mut states, &mut scores, &mut scratch);
            let want = &logits[j * rows * 7..(j + 1) * rows * 7];
            for (a, b) in scores.iter().zip(want) {
                assert!((a - b).abs() < 1e-5, "step {j}: {a} vs {b}");
            }
        }
    }
}
