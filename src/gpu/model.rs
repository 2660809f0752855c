//! A KTN model's weights on the device, uploaded once per model.

use super::buffers;
use super::context::GpuContext;
use super::kernels::{DenseLayer, LstmLayer};
use crate::error::Result;
use crate::format::frugally::LstmWeights;
use crate::seq2seq::KtnModel;

/// One LSTM layer: `[in_dim, 4u] kernel | [u, 4u] recurrent | [4u] bias` in one buffer, the
/// layout `lstm_step.wgsl` reads.
pub(crate) struct GpuLstm {
    pub weights: wgpu::Buffer,
    pub in_dim: usize,
    pub units: usize,
}

impl GpuLstm {
    fn upload(ctx: &GpuContext, label: &str, l: &LstmWeights, half: bool) -> Result<GpuLstm> {
        let w: Vec<f32> = l.kernel.iter().chain(&l.recurrent).chain(&l.bias).copied().collect();
        Ok(GpuLstm {
            weights: buffers::upload_weights(ctx, label, &w, half)?,
            in_dim: l.input_dim,
            units: l.units,
        })
    }

    /// The layer as `lstm_step` reads it (`half`: its weights are stored as f16).
    pub fn layer(&self, half: bool) -> LstmLayer<'_> {
        LstmLayer {
            weights: (&self.weights).into(),
            in_dim: self.in_dim,
            units: self.units,
            half,
        }
    }
}

/// A dense layer `[in, units]` with optional bias.
pub(crate) struct GpuDense {
    pub kernel: wgpu::Buffer,
    pub bias: Option<wgpu::Buffer>,
    pub in_dim: usize,
    pub units: usize,
}

impl GpuDense {
    /// The layer as `dense` reads it (`half`: its weights are stored as f16).
    pub fn layer(&self, half: bool) -> DenseLayer<'_> {
        DenseLayer {
            kernel: (&self.kernel).into(),
            bias: self.bias.as_ref().map(Into::into),
            in_dim: self.in_dim,
            units: self.units,
            half,
        }
    }
}

/// Encoder + decoder weights of a KTN model.
pub(crate) struct GpuKtn {
    /// Encoder time steps and features per step.
    pub steps: usize,
    pub features: usize,
    pub enc_dense: Option<GpuDense>,
    pub enc_lstms: Vec<GpuLstm>,
    pub embedding: wgpu::Buffer,
    pub vocab: usize,
    pub embed_dim: usize,
    pub dec_lstms: Vec<GpuLstm>,
    pub output: GpuDense,
    /// Bytes of weights on the device.
    pub weight_bytes: u64,
    /// Weights stored as f16 (arithmetic stays f32).
    pub half: bool,
}

impl GpuKtn {
    pub fn upload(ctx: &GpuContext, m: &KtnModel, half: bool) -> Result<GpuKtn> {
        let e = &m.encoder;
        let d = &m.decoder;
        let mut weight_bytes = 0u64;
        let bytes_per_weight = if half { 2 } else { 4 };
        let mut count = |n: usize| weight_bytes += bytes_per_weight * n as u64;
        let enc_dense = match &e.dense {
            Some(dn) => {
                count(dn.kernel.len() + dn.bias.as_ref().map_or(0, Vec::len));
                Some(GpuDense {
                    kernel: buffers::upload_weights(ctx, "encoder dense", &dn.kernel, half)?,
                    bias: dn
                        .bias
                        .as_ref()
                        .map(|b| buffers::upload_weights(ctx, "encoder dense bias", b, half))
                        .transpose()?,
                    in_dim: dn.input_dim,
                    units: dn.units,
                })
            }
            None => None,
        };
        let mut enc_lstms = Vec::new();
        for (i, l) in e.lstms.iter().enumerate() {
            count(l.kernel.len() + l.recurrent.len() + l.bias.len());
            enc_lstms.push(GpuLstm::upload(ctx, &format!("encoder lstm {i}"), l, half)?);
        }
        let mut dec_lstms = Vec::new();
        for (i, l) in d.lstms.iter().enumerate() {
            count(l.kernel.len() + l.recurrent.len() + l.bias.len());
            dec_lstms.push(GpuLstm::upload(ctx, &format!("decoder lstm {i}"), l, half)?);
        }
        count(d.embedding.table.len() + d.output.kernel.len() + d.output.bias.as_ref().map_or(0, Vec::len));
        Ok(GpuKtn {
            steps: e.steps,
            features: e.features,
            enc_dense,
            enc_lstms,
            embedding: buffers::upload_f32(ctx, "embedding", &d.embedding.table)?,
            vocab: d.embedding.input_dim,
            embed_dim: d.embedding.output_dim,
            dec_lstms,
            output: GpuDense {
                kernel: buffers::upload_weights(ctx, "output dense", &d.output.kernel, half)?,
                bias: d
                    .output
                    .bias
                    .as_ref()
                    .map(|b| buffers::upload_weights(ctx, "output bias", b, half))
                    .transpose()?,
                in_dim: d.output.input_dim,
                units: d.output.units,
            },
            weight_bytes,
            half,
        })
    }

    /// Widest encoder sequence row (input features, dense units or LSTM units).
    pub fn widest_seq(&self) -> usize {
        let mut w = self.features;
        if let Some(d) = &self.enc_dense {
            w = w.max(d.units);
        }
        self.enc_lstms.iter().fold(w, |w, l| w.max(l.units))
    }
}
