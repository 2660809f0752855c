//! tuneinfer's own predictor (the paper's design): an LSTM encoder over the transformed problem
//! features, an LSTM decoder with dot-product attention over the encoder outputs, and tokens =
//! (position, value) pairs seen in training.
//!
//! Encoder: step t reads `[z_t, onehot(t)]` where `z` are the standardised features (see
//! [`FeatureTransform`]); its outputs `enc[t]` ( `[steps, hidden]` per problem) travel in
//! `States::extra[0]` and its final (h, c) start the decoder.
//! Decoder step: `e = embedding[token]`; `(h, c) = LSTM(e, h, c)`; `a = softmax_t(h · enc[t])`;
//! `ctx = sum_t a_t enc[t]`; `o = tanh([h, ctx] · Wc + bc)`; scores = `o · Wo + bo`.
//! Token 0 (value "-1") starts decoding.

pub use super::conv_encoder::EncoderKind;
use super::conv_encoder::{conv1d_same_tanh, CONV_WIDTH};
use super::packed::dense_packed;
use super::{DecoderScratch, Seq2SeqModel, States, StepDecoder};
use crate::cpu;
use crate::cpu::PackedMatrix;
use crate::error::{Error, Result};
use crate::format::metadata::KtnMetadata;
use crate::problem::ConvProblem;
use crate::search::Vocabulary;
use crate::solvers::{Solver, Target};

/// Sizes of an attention model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionConfig {
    /// Encoder steps (one per feature).
    pub steps: usize,
    /// LSTM units of encoder and decoder.
    pub hidden: usize,
    /// Token embedding width.
    pub embed: usize,
    /// Number of token ids.
    pub vocab: usize,
    /// Decoded positions (parameters per config).
    pub seq_len: usize,
    /// The plain LSTM encoder or the hybrid one (a convolution before it; `conv_encoder.rs`).
    pub encoder: EncoderKind,
}

impl AttentionConfig {
    /// Encoder input width per step: the feature value plus a one-hot of the step.
    pub fn enc_input(&self) -> usize {
        1 + self.steps
    }

    /// Input width per step of the encoder LSTM: the encoder input's, or the hybrid
    /// encoder's convolution channels.
    pub fn lstm_input(&self) -> usize {
        self.encoder.conv_channels().unwrap_or_else(|| self.enc_input())
    }

    /// Names and shapes of the parameter tensors, in storage order.
    pub fn tensor_shapes(&self) -> Vec<(&'static str, Vec<usize>)> {
        let (h, e, v) = (self.hidden, self.embed, self.vocab);
        let mut shapes = vec![
            ("encoder.kernel", vec![self.lstm_input(), 4 * h]),
            ("encoder.recurrent", vec![h, 4 * h]),
            ("encoder.bias", vec![4 * h]),
            ("decoder.embedding", vec![v, e]),
            ("decoder.kernel", vec![e, 4 * h]),
            ("decoder.recurrent", vec![h, 4 * h]),
            ("decoder.bias", vec![4 * h]),
            ("attention.combine.kernel", vec![2 * h, h]),
            ("attention.combine.bias", vec![h]),
            ("output.kernel", vec![h, v]),
            ("output.bias", vec![v]),
        ];
        if let Some(ch) = self.encoder.conv_channels() {
            shapes.push(("encoder.conv.kernel", vec![CONV_WIDTH, self.enc_input(), ch]));
            shapes.push(("encoder.conv.bias", vec![ch]));
        }
        shapes
    }
}

/// Index of each tensor in [`AttentionParams::tensors`].
pub mod idx {
    pub const ENC_W: usize = 0;
    pub const ENC_U: usize = 1;
    pub const ENC_B: usize = 2;
    pub const EMB: usize = 3;
    pub const DEC_W: usize = 4;
    pub const DEC_U: usize = 5;
    pub const DEC_B: usize = 6;
    pub const COMB_W: usize = 7;
    pub const COMB_B: usize = 8;
    pub const OUT_W: usize = 9;
    pub const OUT_B: usize = 10;
    /// Tensors every model has.
    pub const COUNT: usize = 11;
    /// The hybrid encoder's convolution `[CONV_WIDTH, enc_input, channels]` and bias (after
    /// the others, so a plain model's tensors keep their indices).
    pub const CONV_W: usize = 11;
    pub const CONV_B: usize = 12;
}

/// The weights of an attention model: one flat f32 tensor per entry of
/// [`AttentionConfig::tensor_shapes`].
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionParams {
    pub config: AttentionConfig,
    pub tensors: Vec<Vec<f32>>,
}

impl AttentionParams {
    /// All-zero parameters (gradient accumulators).
    pub fn zeros(config: AttentionConfig) -> AttentionParams {
        let tensors = config
            .tensor_shapes()
            .iter()
            .map(|(_, s)| vec![0.0; s.iter().product()])
            .collect();
        AttentionParams { config, tensors }
    }

    /// Glorot-uniform kernels, zero biases except the LSTM forget gates (1), embedding
    /// uniform in [-0.1, 0.1]; deterministic for a seed.
    pub fn init(config: AttentionConfig, seed: u64) -> AttentionParams {
        let mut p = AttentionParams::zeros(config);
        let mut rng = crate::testutil::Lcg::new(seed);
        for (i, (_, shape)) in config.tensor_shapes().iter().enumerate() {
            let t = &mut p.tensors[i];
            if shape.len() >= 2 {
                let limit = if i == idx::EMB {
                    0.1
                } else if shape.len() == 3 {
                    // Glorot for a convolution: fan-in width·in, fan-out width·out.
                    (6.0 / (shape[0] * (shape[1] + shape[2])) as f32).sqrt()
                } else {
                    (6.0 / (shape[0] + shape[1]) as f32).sqrt()
                };
                t.iter_mut().for_each(|x| *x = (rng.next_f32() * 2.0 - 1.0) * limit);
            }
        }
        for b in [idx::ENC_B, idx::DEC_B] {
            let h = config.hidden;
            p.tensors[b][h..2 * h].fill(1.0);
        }
        p
    }

    pub fn get(&self, i: usize) -> &[f32] {
        &self.tensors[i]
    }

    /// Number of scalars.
    pub fn len(&self) -> usize {
        self.tensors.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Number of model features per problem (every tunable solver gives this many; its
/// [`Tunable::features`](crate::solvers::Tunable::features) computes them).
pub use crate::solvers::NUM_FEATURES;

/// Standardisation of the raw features: `z = (raw - mean) / std`, fitted on the training set.
/// The raw features are the solver's [`NUM_FEATURES`] (its `Tunable::features`), followed, for
/// a model trained across GPUs (`gpu` set), by the GPU's
/// [`NUM_GPU_FEATURES`](crate::solvers::NUM_GPU_FEATURES) (`solvers::gpu_features`).
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureTransform {
    pub mean: Vec<f32>,
    pub std: Vec<f32>,
    /// Set when the model reads the GPU as an input: the GPU it was trained for, whose compute
    /// units stand in when a target names none (`--arch gfx1030` for a `gfx1030_36` model).
    pub gpu: Option<GpuInput>,
}

/// The GPU a model with the GPU as an input was trained for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInput {
    pub arch: String,
    pub compute_units: u32,
}

impl FeatureTransform {
    /// Mean and standard deviation (at least 1e-3) of each raw feature over `features` (one
    /// list per problem, each as long as the first; see [`FeatureTransform::raw_features`]).
    pub fn fit<F: AsRef<[f32]>>(features: impl Iterator<Item = F>, gpu: Option<GpuInput>) -> FeatureTransform {
        let steps = FeatureTransform::steps_with(gpu.as_ref());
        let mut sum = vec![0f64; steps];
        let mut sq = vec![0f64; steps];
        let mut n = 0f64;
        for f in features {
            for (i, &x) in f.as_ref().iter().take(steps).enumerate() {
                sum[i] += x as f64;
                sq[i] += (x as f64).powi(2);
            }
            n += 1.0;
        }
        let n = n.max(1.0);
        let mean: Vec<f32> = sum.iter().map(|s| (s / n) as f32).collect();
        let std: Vec<f32> = (0..steps)
            .map(|i| ((sq[i] / n - (sum[i] / n).powi(2)).max(0.0).sqrt() as f32).max(1e-3))
            .collect();
        FeatureTransform { mean, std, gpu }
    }

    /// Encoder steps: the number of raw features.
    pub fn steps(&self) -> usize {
        self.mean.len()
    }

    /// The number of raw features of a model with (`gpu` set) or without the GPU as an input.
    pub fn steps_with(gpu: Option<&GpuInput>) -> usize {
        NUM_FEATURES + gpu.map_or(0, |_| crate::solvers::NUM_GPU_FEATURES)
    }

    /// The raw features of a problem on a target: the solver's, then (a model with the GPU as
    /// an input) the target's GPU features, with the model's GPU's compute units where the
    /// target names none.
    pub fn raw_features(
        &self,
        solver: &dyn crate::solvers::Tunable,
        target: &Target,
        problem: &ConvProblem,
    ) -> Vec<f32> {
        FeatureTransform::raw_features_with(self.gpu.as_ref(), solver, target, problem)
    }

    /// [`FeatureTransform::raw_features`] before a transform is fitted: for a model reading
    /// `gpu` (None: the solver's features alone).
    pub fn raw_features_with(
        gpu: Option<&GpuInput>,
        solver: &dyn crate::solvers::Tunable,
        target: &Target,
        problem: &ConvProblem,
    ) -> Vec<f32> {
        let mut f = solver.features(problem).to_vec();
        if let Some(gpu) = gpu {
            f.extend(crate::solvers::gpu_features(
                &target.arch,
                stand_in_compute_units(gpu, target),
            ));
        }
        f
    }

    /// The encoder input of a problem's raw features: `[steps, 1 + steps]`, row t =
    /// `[z_t, onehot(t)]`. A missing raw feature counts as the mean.
    pub fn encoder_input(&self, f: &[f32]) -> Vec<f32> {
        let steps = self.steps();
        let mut out = vec![0.0; steps * (1 + steps)];
        for t in 0..steps {
            let raw = f.get(t).copied().unwrap_or(self.mean[t]);
            out[t * (1 + steps)] = (raw - self.mean[t]) / self.std[t];
            out[t * (1 + steps) + 1 + t] = 1.0;
        }
        out
    }
}

/// The compute units a model with the GPU as an input reads for `target`: the target's own, else
/// (a plain arch) the model's GPU's when it is of the same arch, else the arch's usual GPU's (a
/// model across GPUs serving `gfx90a` reads MI210's 104, not its own MI300X's 304).
pub fn stand_in_compute_units(gpu: &GpuInput, target: &Target) -> u32 {
    target.compute_units.unwrap_or_else(|| {
        if gpu.arch.eq_ignore_ascii_case(&target.arch) {
            gpu.compute_units
        } else {
            crate::solvers::conv_bin_winograd_rxs::default_compute_units(&target.arch).unwrap_or(gpu.compute_units)
        }
    })
}

/// A loaded attention model, ready for the search: one or more members (an ensemble of
/// separately trained networks of the same sizes and vocabulary). With several members the
/// step's scores are the mean of the members' log-softmax outputs.
#[derive(Debug, Clone)]
pub struct AttentionModel {
    pub members: Vec<AttentionParams>,
    pub transform: FeatureTransform,
    pub metadata: KtnMetadata,
    pub vocab: Vocabulary,
    /// Where it came from, for messages.
    pub source: String,
    /// Each member's weights re-laid for the CPU encoder and decoder step, built from `members`
    /// once.
    kernels: Vec<StepKernels>,
}

/// A member's weights as the CPU encoder and decoder step use them, computing exactly what the
/// plain tensors give (every output element is the same multiply-adds in the same order):
/// - the encoder's kernels packed (its input projections of all steps then run as one product);
/// - `token_gates[t]` = `decoder.bias + embedding[t] · decoder.kernel`, the token's part of the
///   LSTM gates, once per token instead of once per step and hypothesis;
/// - the recurrent, combine (split at the `[h, ctx]` seam, so no concatenation) and output
///   kernels packed ([`PackedMatrix`]).
#[derive(Debug, Clone)]
struct StepKernels {
    /// The encoder LSTM's input and recurrent kernels, packed.
    encoder_kernel: PackedMatrix,
    encoder_recurrent: PackedMatrix,
    token_gates: Vec<f32>,
    recurrent: PackedMatrix,
    combine_h: PackedMatrix,
    combine_ctx: PackedMatrix,
    output: PackedMatrix,
}

impl StepKernels {
    fn new(p: &AttentionParams) -> StepKernels {
        let c = p.config;
        let (h, e, v) = (c.hidden, c.embed, c.vocab);
        let mut token_gates = vec![0.0; v * 4 * h];
        cpu::dense(
            p.get(idx::EMB),
            p.get(idx::DEC_W),
            Some(p.get(idx::DEC_B)),
            &mut token_gates,
            v,
            e,
            4 * h,
        );
        let comb = p.get(idx::COMB_W);
        StepKernels {
            encoder_kernel: PackedMatrix::pack(p.get(idx::ENC_W), c.lstm_input(), 4 * h),
            encoder_recurrent: PackedMatrix::pack(p.get(idx::ENC_U), h, 4 * h),
            token_gates,
            recurrent: PackedMatrix::pack(p.get(idx::DEC_U), h, 4 * h),
            combine_h: PackedMatrix::pack(&comb[..h * h], h, h),
            combine_ctx: PackedMatrix::pack(&comb[h * h..2 * h * h], h, h),
            output: PackedMatrix::pack(p.get(idx::OUT_W), h, v),
        }
    }
}

impl AttentionModel {
    /// Loads tuneinfer's model pair `files` (checked to be for `arch` and `solver`; see
    /// [`weights::load`](crate::seq2seq::weights::load)) and builds the ensemble.
    pub fn load(
        files: &crate::seq2seq::weights::WeightsFiles,
        arch: &str,
        solver: &str,
    ) -> Result<(AttentionModel, crate::seq2seq::weights::WeightsInfo)> {
        let (members, info) = crate::seq2seq::weights::load(files, arch, solver)?;
        let metadata = crate::seq2seq::weights::ktn_metadata(&info.token_values, info.config.seq_len);
        let source = files.tensors.display().to_string();
        let model = AttentionModel::ensemble(members, info.transform.clone(), metadata, source)?;
        Ok((model, info))
    }

    /// A model of one network.
    pub fn new(
        params: AttentionParams,
        transform: FeatureTransform,
        metadata: KtnMetadata,
        source: String,
    ) -> Result<AttentionModel> {
        AttentionModel::ensemble(vec![params], transform, metadata, source)
    }

    /// A model averaging several networks of the same configuration.
    pub fn ensemble(
        members: Vec<AttentionParams>,
        transform: FeatureTransform,
        metadata: KtnMetadata,
        source: String,
    ) -> Result<AttentionModel> {
        let Some(first) = members.first() else {
            return Err(Error::format(source, "an attention model needs at least one member"));
        };
        let c = first.config;
        if members.iter().any(|m| m.config != c) {
            return Err(Error::format(source, "ensemble members differ in sizes"));
        }
        let want_steps = FeatureTransform::steps_with(transform.gpu.as_ref());
        if metadata.token_values.len() != c.vocab
            || c.steps != want_steps
            || transform.mean.len() != want_steps
            || transform.std.len() != want_steps
        {
            return Err(Error::Shape {
                what: format!("{source}: attention model"),
                expected: format!("{} tokens and {want_steps} features", c.vocab),
                got: format!(
                    "{} tokens, {} steps, {} feature means",
                    metadata.token_values.len(),
                    c.steps,
                    transform.mean.len()
                ),
            });
        }
        let vocab = Vocabulary::from_token_values(&metadata.token_values);
        let kernels = members.iter().map(StepKernels::new).collect();
        Ok(AttentionModel {
            members,
            transform,
            metadata,
            vocab,
            source,
            kernels,
        })
    }

    pub fn config(&self) -> AttentionConfig {
        self.members[0].config
    }

    /// Runs the encoder of every member: layer k of the states and side buffer k (the encoder
    /// outputs `[batch, steps, hidden]`) belong to member k.
    pub fn run_encoder(&self, inputs: &[f32], batch: usize) -> Result<States> {
        let c = self.config();
        let (h, fin, steps) = (c.hidden, c.enc_input(), c.steps);
        if inputs.len() != batch * steps * fin {
            return Err(Error::Shape {
                what: "attention encoder input".into(),
                expected: format!("{batch} x {steps} x {fin} values"),
                got: format!("{}", inputs.len()),
            });
        }
        let k = self.members.len();
        let mut states = States::zeros_with_extra(&vec![h; k], &vec![steps * h; k], batch);
        let mut xw = vec![0.0; batch * steps * 4 * h];
        let mut z = vec![0.0; batch * 4 * h];
        let mut conv = Vec::new();
        for (m, p) in self.members.iter().enumerate() {
            let kernels = &self.kernels[m];
            // The hybrid encoder's LSTM reads the convolution's output.
            let seq: &[f32] = match c.encoder.conv_channels() {
                Some(ch) => {
                    conv.resize(batch * steps * ch, 0.0);
                    let (w, b) = (p.get(idx::CONV_W), p.get(idx::CONV_B));
                    conv1d_same_tanh(inputs, w, b, &mut conv, batch, steps, fin, ch);
                    &conv
                }
                None => inputs,
            };
            // The input projections of every step at once: xw[b, t] = bias + seq[b, t] · W.
            dense_packed(
                seq,
                &kernels.encoder_kernel,
                Some(p.get(idx::ENC_B)),
                &mut xw,
                batch * steps,
            );
            for t in 0..steps {
                for b in 0..batch {
                    z[b * 4 * h..(b + 1) * 4 * h]
                        .copy_from_slice(&xw[(b * steps + t) * 4 * h..(b * steps + t + 1) * 4 * h]);
                }
                cpu::matmul_packed_acc(&states.h[m], &kernels.encoder_recurrent, &mut z, batch);
                cpu::lstm_cell(&z, &mut states.c[m], &mut states.h[m], batch, h);
                for b in 0..batch {
                    states.extra[m][(b * steps + t) * h..(b * steps + t + 1) * h]
                        .copy_from_slice(&states.h[m][b * h..(b + 1) * h]);
                }
            }
        }
        Ok(states)
    }

    /// One decoder step of member `m` (its layer and side buffer of `states`): raw scores.
    fn member_step(
        &self,
        m: usize,
        tokens: &[u32],
        states: &mut States,
        scores: &mut Vec<f32>,
        scratch: &mut DecoderScratch,
    ) {
        let k = &self.kernels[m];
        let p = &self.members[m];
        let c = p.config;
        let (h, v, steps) = (c.hidden, c.vocab, c.steps);
        let batch = states.batch;
        let mut z = std::mem::take(scratch.buffer(1));
        let mut w = std::mem::take(scratch.buffer(2));
        let mut o = std::mem::take(scratch.buffer(4));
        let mut ctx = std::mem::take(scratch.buffer(5));
        // The gates: the token's precomputed part, then + h · U.
        z.resize(batch * 4 * h, 0.0);
        cpu::embedding_gather(&k.token_gates, tokens, &mut z, 4 * h);
        cpu::matmul_packed_acc(&states.h[m], &k.recurrent, &mut z, batch);
        cpu::lstm_cell(&z, &mut states.c[m], &mut states.h[m], batch, h);
        w.resize(batch * steps, 0.0);
        ctx.resize(batch * h, 0.0);
        cpu::attention(&states.h[m], &states.extra[m], &mut w, &mut ctx, batch, steps, h);
        // o = tanh([h, ctx] · Wc + bc), the two halves of Wc one after the other.
        o.resize(batch * h, 0.0);
        dense_packed(&states.h[m], &k.combine_h, Some(p.get(idx::COMB_B)), &mut o, batch);
        cpu::matmul_packed_acc(&ctx, &k.combine_ctx, &mut o, batch);
        o.iter_mut().for_each(|x| *x = cpu::activations::tanh(*x));
        scores.resize(batch * v, 0.0);
        dense_packed(&o, &k.output, Some(p.get(idx::OUT_B)), scores, batch);
        *scratch.buffer(1) = z;
        *scratch.buffer(2) = w;
        *scratch.buffer(4) = o;
        *scratch.buffer(5) = ctx;
    }
}

impl StepDecoder for AttentionModel {
    fn vocab_size(&self) -> usize {
        self.config().vocab
    }

    fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, scratch: &mut DecoderScratch) {
        let v = self.config().vocab;
        let batch = states.batch;
        assert_eq!(tokens.len(), batch, "decoder step: one token per row");
        assert!(
            tokens.iter().all(|&t| (t as usize) < v),
            "decoder step: token outside the vocabulary"
        );
        if self.members.len() == 1 {
            self.member_step(0, tokens, states, scores, scratch);
            return;
        }
        let mut raw = std::mem::take(scratch.buffer(6));
        let mut logp = std::mem::take(scratch.buffer(7));
        scores.clear();
        scores.resize(batch * v, 0.0);
        let share = 1.0 / self.members.len() as f32;
        for m in 0..self.members.len() {
            self.member_step(m, tokens, states, &mut raw, scratch);
            logp.resize(batch * v, 0.0);
            cpu::log_softmax_rows(&raw, &mut logp, batch, v);
            cpu::ensemble_add(scores, &logp, share);
        }
        *scratch.buffer(6) = raw;
        *scratch.buffer(7) = logp;
    }
}

impl Seq2SeqModel for AttentionModel {
    fn encoder_input(&self, solver: &dyn Solver, target: &Target, problem: &ConvProblem) -> Result<Vec<f32>> {
        let features = self
            .transform
            .raw_features(crate::solvers::tunable(solver)?, target, problem);
        Ok(self.transform.encoder_input(&features))
    }

    fn encode(&self, inputs: &[f32], batch: usize) -> Result<States> {
        self.run_encoder(inputs, batch)
    }

    fn decoder(&self) -> &dyn StepDecoder {
        self
    }

    fn vocab(&self) -> &Vocabulary {
        &self.vocab
    }

    fn metadata(&self) -> &KtnMetadata {
        &self.metadata
    }

    fn describe(&self) -> String {
        let c = self.config();
        let encoder = match c.encoder.conv_channels() {
            Some(ch) => format!("hybrid encoder ({ch} convolution channels), "),
            None => String::new(),
        };
        format!(
            "attention seq2seq {} ({} member(s), {encoder}hidden {}, embedding {}, vocabulary {}, {} parameters each)",
            self.source,
            self.members.len(),
            c.hidden,
            c.embed,
            c.vocab,
            self.members[0].len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_arch_reads_its_own_usual_gpu_not_the_model_gpu_of_another_arch() {
        let mi300x = GpuInput {
            arch: "gfx942".into(),
            compute_units: 304,
        };
        // Named CUs are read as named; a plain arch of the model's own arch reads the model's
        // GPU; a plain arch of another arch (a model across GPUs) its usual GPU (MI210: 104).
        assert_eq!(stand_in_compute_units(&mi300x, &Target::new("gfx90a6e")), 110);
        assert_eq!(stand_in_compute_units(&mi300x, &Target::new("gfx942")), 304);
        assert_eq!(stand_in_compute_units(&mi300x, &Target::new("gfx90a")), 104);
        assert_eq!(stand_in_compute_units(&mi300x, &Target::new("gfx908")), 120);
    }
}
