//! The encoder: problem features `[T, F]` -> optional Dense -> stacked LSTMs -> final (h, c) of
//! every LSTM, which initialise the decoder.

use super::graph::{expect_refs, next_in_chain, state_refs};
use super::packed::{dense_packed, pack_dense, PackedLstm};
use crate::cpu;
use crate::cpu::PackedMatrix;
use crate::error::{Error, Result};
use crate::format::frugally::{DenseWeights, KerasModel, LayerKind, LstmWeights};
use crate::search::States;

/// A KTN encoder.
#[derive(Debug, Clone)]
pub struct Encoder {
    /// Time steps T of the input.
    pub steps: usize,
    /// Features per step F.
    pub features: usize,
    pub dense: Option<DenseWeights>,
    pub lstms: Vec<LstmWeights>,
    packed_dense: Option<PackedMatrix>,
    packed_lstms: Vec<PackedLstm>,
}

impl Encoder {
    /// Recognises the encoder structure in a parsed graph.
    pub fn from_keras(model: &KerasModel) -> Result<Encoder> {
        let bad = |d: String| Error::format(&model.source, d);
        if model.inputs.len() != 1 {
            return Err(bad(format!(
                "an encoder has one input, this graph has {}",
                model.inputs.len()
            )));
        }
        let input = model
            .layer(&model.inputs[0].layer)
            .ok_or_else(|| bad("input layer missing".into()))?;
        let (steps, features) = match &input.kind {
            LayerKind::Input { shape } if shape.len() == 2 && shape[0] > 0 && shape[1] > 0 => (shape[0], shape[1]),
            _ => return Err(bad(format!("encoder input '{}' must have shape [T, F]", input.name))),
        };
        let mut dense = None;
        let mut lstms: Vec<LstmWeights> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        let mut dim = features;
        let mut current = input.name.as_str();
        while let Some(layer) = next_in_chain(model, current)? {
            match &layer.kind {
                LayerKind::Dense(d) if lstms.is_empty() && dense.is_none() => {
                    check_dim(model, &layer.name, d.input_dim, dim)?;
                    dim = d.units;
                    dense = Some(d.clone());
                }
                LayerKind::Lstm(l) if layer.inbound.len() == 1 => {
                    check_dim(model, &layer.name, l.input_dim, dim)?;
                    if let Some(prev) = lstms.last() {
                        if !prev.return_sequences {
                            return Err(bad(format!("LSTM before '{}' must return sequences", layer.name)));
                        }
                    }
                    dim = l.units;
                    lstms.push(l.clone());
                    names.push(&layer.name);
                }
                _ => {
                    return Err(Error::UnsupportedLayer {
                        layer: layer.name.clone(),
                        class: layer.class.clone(),
                        detail: "not part of a KTN encoder (Input -> [Dense] -> LSTM...)".into(),
                    })
                }
            }
            current = &layer.name;
        }
        if lstms.is_empty() {
            return Err(bad("encoder has no LSTM layer".into()));
        }
        let want = state_refs(&names);
        let want: Vec<(&str, usize)> = want.iter().map(|(n, i)| (n.as_str(), *i)).collect();
        expect_refs(model, "encoder outputs", &model.outputs, &want)?;
        let packed_dense = dense.as_ref().map(pack_dense);
        let packed_lstms = lstms.iter().map(PackedLstm::new).collect();
        Ok(Encoder {
            steps,
            features,
            dense,
            lstms,
            packed_dense,
            packed_lstms,
        })
    }

    /// Units of each LSTM layer.
    pub fn units(&self) -> Vec<usize> {
        self.lstms.iter().map(|l| l.units).collect()
    }

    /// Encodes `batch` problems; `input` is `[batch, steps, features]`. Returns the final states.
    pub fn run(&self, input: &[f32], batch: usize) -> Result<States> {
        let (t, f) = (self.steps, self.features);
        if input.len() != batch * t * f {
            return Err(Error::Shape {
                what: "encoder input".into(),
                expected: format!("{batch}x{t}x{f} = {} values", batch * t * f),
                got: input.len().to_string(),
            });
        }
        let rows = batch * t;
        let mut seq = match (&self.dense, &self.packed_dense) {
            (Some(d), Some(packed)) => {
                let mut out = vec![0.0; rows * d.units];
                dense_packed(input, packed, d.bias.as_deref(), &mut out, rows);
                out
            }
            _ => input.to_vec(),
        };
        let mut states = States::zeros(&self.units(), batch);
        for (l, lstm) in self.lstms.iter().enumerate() {
            let u = lstm.units;
            let g = 4 * u;
            // Input projections of every time step at once: [batch*T, 4u].
            let mut xw = vec![0.0; rows * g];
            let packed = &self.packed_lstms[l];
            dense_packed(&seq, &packed.kernel, Some(&lstm.bias), &mut xw, rows);
            let last = l + 1 == self.lstms.len();
            let mut out_seq = if last { Vec::new() } else { vec![0.0; rows * u] };
            let mut z = vec![0.0; batch * g];
            let (h, c) = (&mut states.h[l], &mut states.c[l]);
            for step in 0..t {
                for b in 0..batch {
                    z[b * g..(b + 1) * g].copy_from_slice(&xw[(b * t + step) * g..(b * t + step + 1) * g]);
                }
                cpu::matmul_packed_acc(h, &packed.recurrent, &mut z, batch);
                cpu::lstm_cell(&z, c, h, batch, u);
                if !last {
                    for b in 0..batch {
                        out_seq[(b * t + step) * u..(b * t + step + 1) * u].copy_from_slice(&h[b * u..(b + 1) * u]);
                    }
                }
            }
            seq = out_seq;
        }
        Ok(states)
    }
}

fn check_dim(model: &KerasModel, layer: &str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::Shape {
            what: format!("{}: input of layer '{layer}'", model.source),
            expected: expected.to_string(),
            got: got.to_string(),
        })
    }
}
