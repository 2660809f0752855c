//! The decoder: one step maps (previous token, states) -> (scores over the vocabulary, states).
//! Embedding -> stacked LSTMs initialised from the encoder -> Dense to raw scores.

use super::graph::{expect_refs, next_in_chain, state_refs};
use super::packed::{dense_packed, pack_dense, PackedLstm};
use crate::cpu;
use crate::cpu::PackedMatrix;
use crate::error::{Error, Result};
use crate::format::frugally::{DenseWeights, EmbeddingWeights, KerasModel, LayerKind, LstmWeights};
use crate::search::States;
use crate::search::{DecoderScratch, StepDecoder};

/// A KTN decoder.
#[derive(Debug, Clone)]
pub struct Decoder {
    pub embedding: EmbeddingWeights,
    pub lstms: Vec<LstmWeights>,
    pub output: DenseWeights,
    packed_lstms: Vec<PackedLstm>,
    packed_output: PackedMatrix,
}

impl Decoder {
    /// Recognises the decoder structure in a parsed graph. Inputs must be ordered
    /// [token, h1, c1, h2, c2, ...] and outputs [scores, h1, c1, h2, c2, ...].
    pub fn from_keras(model: &KerasModel) -> Result<Decoder> {
        let bad = |d: String| Error::format(&model.source, d);
        let token_input = model
            .inputs
            .first()
            .ok_or_else(|| bad("decoder has no inputs".into()))?;
        let first =
            next_in_chain(model, &token_input.layer)?.ok_or_else(|| bad("decoder token input feeds nothing".into()))?;
        let embedding = match &first.kind {
            LayerKind::Embedding(e) => e.clone(),
            _ => {
                return Err(Error::UnsupportedLayer {
                    layer: first.name.clone(),
                    class: first.class.clone(),
                    detail: "a KTN decoder starts with an Embedding".into(),
                })
            }
        };
        let mut lstms: Vec<LstmWeights> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        let mut output = None;
        let mut dim = embedding.output_dim;
        let mut current = first.name.as_str();
        while let Some(layer) = next_in_chain(model, current)? {
            match &layer.kind {
                LayerKind::Lstm(l) if output.is_none() => {
                    let k = lstms.len();
                    let want_h = model.inputs.get(1 + 2 * k).map(|r| r.layer.as_str());
                    let want_c = model.inputs.get(2 + 2 * k).map(|r| r.layer.as_str());
                    let ok = layer.inbound.len() == 3
                        && Some(layer.inbound[1].layer.as_str()) == want_h
                        && Some(layer.inbound[2].layer.as_str()) == want_c;
                    if !ok {
                        return Err(bad(format!(
                            "LSTM '{}' must take its initial h and c from decoder inputs {} and {}",
                            layer.name,
                            1 + 2 * k,
                            2 + 2 * k
                        )));
                    }
                    if l.input_dim != dim {
                        return Err(Error::Shape {
                            what: format!("{}: input of layer '{}'", model.source, layer.name),
                            expected: l.input_dim.to_string(),
                            got: dim.to_string(),
                        });
                    }
                    dim = l.units;
                    lstms.push(l.clone());
                    names.push(&layer.name);
                }
                LayerKind::Dense(d) if output.is_none() && !lstms.is_empty() => {
                    if d.input_dim != dim {
                        return Err(Error::Shape {
                            what: format!("{}: input of layer '{}'", model.source, layer.name),
                            expected: d.input_dim.to_string(),
                            got: dim.to_string(),
                        });
                    }
                    output = Some((layer.name.as_str(), d.clone()));
                }
                _ => {
                    return Err(Error::UnsupportedLayer {
                        layer: layer.name.clone(),
                        class: layer.class.clone(),
                        detail: "not part of a KTN decoder (Embedding -> LSTM... -> Dense)".into(),
                    })
                }
            }
            current = &layer.name;
        }
        let (out_name, output) = output.ok_or_else(|| bad("decoder has no final Dense layer".into()))?;
        if model.inputs.len() != 1 + 2 * lstms.len() {
            return Err(bad(format!(
                "decoder has {} inputs, expected {}",
                model.inputs.len(),
                1 + 2 * lstms.len()
            )));
        }
        let mut want = vec![(out_name.to_string(), 0)];
        want.extend(state_refs(&names));
        let want: Vec<(&str, usize)> = want.iter().map(|(n, i)| (n.as_str(), *i)).collect();
        expect_refs(model, "decoder outputs", &model.outputs, &want)?;
        let packed_lstms = lstms.iter().map(PackedLstm::new).collect();
        let packed_output = pack_dense(&output);
        Ok(Decoder {
            embedding,
            lstms,
            output,
            packed_lstms,
            packed_output,
        })
    }

    /// Vocabulary size (number of scores per step).
    pub fn vocab_size(&self) -> usize {
        self.output.units
    }

    /// Units of each LSTM layer.
    pub fn units(&self) -> Vec<usize> {
        self.lstms.iter().map(|l| l.units).collect()
    }

    /// One decoding step for `states.batch` rows: feeds `tokens` (one per row), updates `states`
    /// in place and writes raw scores `[batch, vocab]` into `scores`.
    ///
    /// # Panics
    /// When a token id is outside the embedding table (the search only feeds vocabulary ids).
    pub fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, scratch: &mut DecoderScratch) {
        let batch = states.batch;
        assert_eq!(tokens.len(), batch, "decoder step: one token per row");
        let e = &self.embedding;
        assert!(
            tokens.iter().all(|&t| (t as usize) < e.input_dim),
            "decoder step: token outside the vocabulary"
        );
        let mut x = std::mem::take(scratch.buffer(0));
        let mut z = std::mem::take(scratch.buffer(1));
        x.resize(batch * e.output_dim, 0.0);
        cpu::embedding_gather(&e.table, tokens, &mut x, e.output_dim);
        for (l, lstm) in self.lstms.iter().enumerate() {
            let g = 4 * lstm.units;
            z.resize(batch * g, 0.0);
            let (below, this_and_above) = states.h.split_at_mut(l);
            let input: &[f32] = if l == 0 { &x } else { &below[l - 1] };
            let packed = &self.packed_lstms[l];
            dense_packed(input, &packed.kernel, Some(&lstm.bias), &mut z, batch);
            let h = &mut this_and_above[0];
            cpu::matmul_packed_acc(h, &packed.recurrent, &mut z, batch);
            cpu::lstm_cell(&z, &mut states.c[l], h, batch, lstm.units);
        }
        let last = states.h.last().map(|v| &v[..]).unwrap_or(&[]);
        let o = &self.output;
        scores.resize(batch * o.units, 0.0);
        dense_packed(last, &self.packed_output, o.bias.as_deref(), scores, batch);
        *scratch.buffer(0) = x;
        *scratch.buffer(1) = z;
    }
}

impl StepDecoder for Decoder {
    fn vocab_size(&self) -> usize {
        self.output.units
    }

    fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, scratch: &mut DecoderScratch) {
        Decoder::step(self, tokens, states, scores, scratch)
    }
}
