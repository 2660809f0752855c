//! frugally-deep JSON models: the format MIOpen ships its KernelTuningNet encoders and decoders in.
//!
//! Only what those models use is implemented: `InputLayer`, `Dense` (linear), `LSTM` (tanh /
//! sigmoid, forward, not stateful) and `Embedding`, wired as a Keras functional graph. Anything
//! else is an [`Error::UnsupportedLayer`] naming the layer and its class.

use std::path::Path;

use serde_json::Value;

use super::{base64, sha256};
use crate::error::{Error, Result};

/// A tensor of one sample (no batch dimension), row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

/// A reference to an output tensor of a layer: Keras's `[layer_name, node_index, tensor_index]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorRef {
    pub layer: String,
    pub tensor_index: usize,
}

/// Dense (fully connected, linear activation) weights.
#[derive(Debug, Clone)]
pub struct DenseWeights {
    pub input_dim: usize,
    pub units: usize,
    /// `[input_dim, units]`, row-major.
    pub kernel: Vec<f32>,
    /// `[units]`, absent when `use_bias` is false.
    pub bias: Option<Vec<f32>>,
}

/// LSTM weights in Keras's layout, gate order i, f, c (candidate), o.
#[derive(Debug, Clone)]
pub struct LstmWeights {
    pub input_dim: usize,
    pub units: usize,
    /// `[input_dim, 4*units]`, row-major.
    pub kernel: Vec<f32>,
    /// `[units, 4*units]`, row-major.
    pub recurrent: Vec<f32>,
    /// `[4*units]` (zeros when the layer has no bias).
    pub bias: Vec<f32>,
    pub return_sequences: bool,
}

/// Embedding table.
#[derive(Debug, Clone)]
pub struct EmbeddingWeights {
    pub input_dim: usize,
    pub output_dim: usize,
    /// `[input_dim, output_dim]`, row-major.
    pub table: Vec<f32>,
}

/// What a layer computes.
#[derive(Debug, Clone)]
pub enum LayerKind {
    /// A model input; `shape` excludes the batch dimension.
    Input {
        shape: Vec<usize>,
    },
    Dense(DenseWeights),
    Lstm(LstmWeights),
    Embedding(EmbeddingWeights),
}

/// One layer of the functional graph.
#[derive(Debug, Clone)]
pub struct Layer {
    pub name: String,
    pub class: String,
    pub kind: LayerKind,
    /// The tensors this layer consumes (for an LSTM: sequence, then optional initial h and c).
    pub inbound: Vec<TensorRef>,
}

/// One embedded test: inputs and the outputs Keras computed for them.
#[derive(Debug, Clone)]
pub struct TestVector {
    pub inputs: Vec<Tensor>,
    pub outputs: Vec<Tensor>,
}

/// A parsed frugally-deep model file.
#[derive(Debug, Clone)]
pub struct KerasModel {
    /// Where it was loaded from (for messages).
    pub source: String,
    pub layers: Vec<Layer>,
    pub inputs: Vec<TensorRef>,
    pub outputs: Vec<TensorRef>,
    pub tests: Vec<TestVector>,
    /// The `hash` stored in the file.
    pub stored_hash: String,
    /// The hash recomputed from the loaded weights (sha256 over each layer's weight arrays'
    /// float32 bytes, then its name, in layer order).
    pub computed_hash: String,
}

impl KerasModel {
    /// Reads and parses a model file.
    pub fn load(path: &Path) -> Result<KerasModel> {
        let text = crate::format::read_text(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a model from JSON text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<KerasModel> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| Error::format(source, format!("not valid JSON: {e}")))?;
        let ctx = Ctx { source };
        let arch = ctx.field(&root, "architecture", "top level")?;
        let config = ctx.field(arch, "config", "architecture")?;
        let layer_list = ctx.array(ctx.field(config, "layers", "architecture.config")?, "layers")?;
        let params = root.get("trainable_params");
        let mut layers = Vec::with_capacity(layer_list.len());
        let mut hasher = sha256::Sha256::new();
        for (i, layer_json) in layer_list.iter().enumerate() {
            let layer = ctx.layer(layer_json, i, params)?;
            for array in layer_weight_arrays(&layer.kind) {
                for v in array {
                    hasher.update(&v.to_le_bytes());
                }
            }
            hasher.update(layer.name.as_bytes());
            layers.push(layer);
        }
        let inputs = ctx.refs(
            ctx.field(config, "input_layers", "architecture.config")?,
            "input_layers",
        )?;
        let outputs = ctx.refs(
            ctx.field(config, "output_layers", "architecture.config")?,
            "output_layers",
        )?;
        for r in inputs.iter().chain(outputs.iter()) {
            if !layers.iter().any(|l| l.name == r.layer) {
                return Err(Error::format(
                    source,
                    format!("graph names unknown layer '{}'", r.layer),
                ));
            }
        }
        let tests = match root.get("tests") {
            None | Some(Value::Null) => Vec::new(),
            Some(t) => ctx
                .array(t, "tests")?
                .iter()
                .enumerate()
                .map(|(i, t)| ctx.test(t, i))
                .collect::<Result<_>>()?,
        };
        let stored_hash = root.get("hash").and_then(Value::as_str).unwrap_or("").to_string();
        Ok(KerasModel {
            source: source.to_string(),
            layers,
            inputs,
            outputs,
            tests,
            stored_hash,
            computed_hash: sha256::hex(&hasher.finish()),
        })
    }

    /// The layer of that name.
    pub fn layer(&self, name: &str) -> Option<&Layer> {
        self.layers.iter().find(|l| l.name == name)
    }
}

/// A layer's weight arrays in Keras `get_weights()` order (what the file hash covers).
fn layer_weight_arrays(kind: &LayerKind) -> Vec<&[f32]> {
    match kind {
        LayerKind::Input { .. } => vec![],
        LayerKind::Dense(d) => {
            let mut v = vec![&d.kernel[..]];
            if let Some(b) = &d.bias {
                v.push(&b[..]);
            }
            v
        }
        LayerKind::Lstm(l) => vec![&l.kernel[..], &l.recurrent[..], &l.bias[..]],
        LayerKind::Embedding(e) => vec![&e.table[..]],
    }
}

struct Ctx<'a> {
    source: &'a str,
}

impl Ctx<'_> {
    fn err(&self, detail: String) -> Error {
        Error::format(self.source, detail)
    }

    fn field<'v>(&self, v: &'v Value, key: &str, within: &str) -> Result<&'v Value> {
        v.get(key)
            .ok_or_else(|| self.err(format!("missing '{key}' in {within}")))
    }

    fn array<'v>(&self, v: &'v Value, what: &str) -> Result<&'v Vec<Value>> {
        v.as_array().ok_or_else(|| self.err(format!("'{what}' is not a list")))
    }

    fn usize_of(&self, v: Option<&Value>, what: &str) -> Result<usize> {
        v.and_then(Value::as_u64)
            .map(|x| x as usize)
            .ok_or_else(|| self.err(format!("'{what}' is missing or not a non-negative integer")))
    }

    fn bool_of(&self, cfg: &Value, key: &str, default: bool) -> bool {
        cfg.get(key).and_then(Value::as_bool).unwrap_or(default)
    }

    fn str_of<'v>(&self, cfg: &'v Value, key: &str) -> Option<&'v str> {
        cfg.get(key).and_then(Value::as_str)
    }

    /// A float array: a list of base64 chunks (each decodes on its own) or a list of numbers.
    fn floats(&self, v: Option<&Value>, what: &str) -> Result<Vec<f32>> {
        let list = v
            .and_then(Value::as_array)
            .ok_or_else(|| self.err(format!("{what}: missing float array")))?;
        let mut out = Vec::new();
        for (i, item) in list.iter().enumerate() {
            match item {
                Value::String(s) => {
                    let bytes = base64::decode(s).map_err(|e| self.err(format!("{what}: chunk {i}: {e}")))?;
                    if bytes.len() % 4 != 0 {
                        return Err(self.err(format!(
                            "{what}: chunk {i} holds {} bytes, not whole float32s",
                            bytes.len()
                        )));
                    }
                    out.extend(
                        bytes
                            .chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                    );
                }
                Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN) as f32),
                _ => return Err(self.err(format!("{what}: element {i} is neither base64 text nor a number"))),
            }
        }
        Ok(out)
    }

    fn refs(&self, v: &Value, what: &str) -> Result<Vec<TensorRef>> {
        self.array(v, what)?.iter().map(|r| self.tensor_ref(r, what)).collect()
    }

    fn tensor_ref(&self, r: &Value, what: &str) -> Result<TensorRef> {
        let parts = r
            .as_array()
            .ok_or_else(|| self.err(format!("{what}: entry is not a list")))?;
        let layer = parts
            .first()
            .and_then(Value::as_str)
            .ok_or_else(|| self.err(format!("{what}: entry lacks a layer name")))?;
        let tensor_index = self.usize_of(parts.get(2), &format!("{what} tensor index"))?;
        Ok(TensorRef {
            layer: layer.to_string(),
            tensor_index,
        })
    }

    fn test(&self, t: &Value, index: usize) -> Result<TestVector> {
        let tensors = |key: &str| -> Result<Vec<Tensor>> {
            let list = self.array(self.field(t, key, &format!("tests[{index}]"))?, key)?;
            list.iter()
                .enumerate()
                .map(|(j, x)| {
                    let what = format!("tests[{index}].{key}[{j}]");
                    let shape: Vec<usize> = self
                        .array(self.field(x, "shape", &what)?, "shape")?
                        .iter()
                        .map(|d| self.usize_of(Some(d), &format!("{what}.shape")))
                        .collect::<Result<_>>()?;
                    let values = self.floats(x.get("values"), &what)?;
                    let expected = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
                    if expected != Some(values.len()) {
                        return Err(self.err(format!(
                            "{what}: shape {shape:?} needs {} values, found {}",
                            expected.map_or("more than 2^64".to_string(), |n| n.to_string()),
                            values.len()
                        )));
                    }
                    Ok(Tensor { shape, values })
                })
                .collect()
        };
        Ok(TestVector {
            inputs: tensors("inputs")?,
            outputs: tensors("outputs")?,
        })
    }

    fn layer(&self, v: &Value, index: usize, params: Option<&Value>) -> Result<Layer> {
        let class = self
            .str_of(v, "class_name")
            .ok_or_else(|| self.err(format!("layer {index}: missing class_name")))?
            .to_string();
        let name = self
            .str_of(v, "name")
            .ok_or_else(|| self.err(format!("layer {index}: missing name")))?
            .to_string();
        let cfg = self.field(v, "config", &format!("layer '{name}'"))?;
        let unsupported = |detail: String| Error::UnsupportedLayer {
            layer: name.clone(),
            class: class.clone(),
            detail,
        };
        let inbound = match v.get("inbound_nodes").and_then(Value::as_array) {
            None => Vec::new(),
            Some(nodes) if nodes.is_empty() => Vec::new(),
            Some(nodes) if nodes.len() == 1 => self.refs(&nodes[0], &format!("layer '{name}' inbound_nodes"))?,
            Some(_) => return Err(unsupported("the layer is called more than once (shared layers)".into())),
        };
        let weights = |key: &str| -> Result<Vec<f32>> {
            let p = params
                .and_then(|p| p.get(&name))
                .ok_or_else(|| self.err(format!("no trainable_params for layer '{name}'")))?;
            let what = format!("trainable_params.{name}.{key}");
            let values = self.floats(p.get(key), &what)?;
            if values.iter().any(|v| !v.is_finite()) {
                return Err(self.err(format!("{what} holds NaN or infinite values")));
            }
            Ok(values)
        };
        let kind = match class.as_str() {
            "InputLayer" => {
                let shape = cfg
                    .get("batch_input_shape")
                    .and_then(Value::as_array)
                    .ok_or_else(|| self.err(format!("layer '{name}': missing batch_input_shape")))?;
                let dims = shape
                    .iter()
                    .skip(1)
                    .map(|d| self.usize_of(Some(d), &format!("layer '{name}' batch_input_shape")))
                    .collect::<Result<_>>()?;
                LayerKind::Input { shape: dims }
            }
            "Dense" => {
                let units = self.usize_of(cfg.get("units"), &format!("layer '{name}' units"))?;
                if units == 0 || units > crate::format::MAX_MODEL_SIZE {
                    return Err(self.err(format!(
                        "layer '{name}': units {units} is not in 1..={}",
                        crate::format::MAX_MODEL_SIZE
                    )));
                }
                let activation = self.str_of(cfg, "activation").unwrap_or("linear");
                if activation != "linear" {
                    return Err(unsupported(format!("activation '{activation}' (only linear)")));
                }
                let kernel = weights("weights")?;
                if units == 0 || kernel.is_empty() || kernel.len() % units != 0 {
                    return Err(Error::Shape {
                        what: format!("{}: Dense '{name}' kernel", self.source),
                        expected: format!("a multiple of {units} values"),
                        got: kernel.len().to_string(),
                    });
                }
                let bias = if self.bool_of(cfg, "use_bias", true) {
                    let b = weights("bias")?;
                    if b.len() != units {
                        return Err(Error::Shape {
                            what: format!("{}: Dense '{name}' bias", self.source),
                            expected: units.to_string(),
                            got: b.len().to_string(),
                        });
                    }
                    Some(b)
                } else {
                    None
                };
                LayerKind::Dense(DenseWeights {
                    input_dim: kernel.len() / units,
                    units,
                    kernel,
                    bias,
                })
            }
            "LSTM" => {
                let units = self.usize_of(cfg.get("units"), &format!("layer '{name}' units"))?;
                if units == 0 || units > crate::format::MAX_MODEL_SIZE {
                    return Err(self.err(format!(
                        "layer '{name}': units {units} is not in 1..={}",
                        crate::format::MAX_MODEL_SIZE
                    )));
                }
                for (key, want) in [("activation", "tanh"), ("recurrent_activation", "sigmoid")] {
                    let got = self.str_of(cfg, key).unwrap_or(want);
                    if got != want {
                        return Err(unsupported(format!("{key} '{got}' (only {want})")));
                    }
                }
                for key in ["go_backwards", "stateful", "time_major"] {
                    if self.bool_of(cfg, key, false) {
                        return Err(unsupported(format!("{key} = true")));
                    }
                }
                let kernel = weights("weights")?;
                let recurrent = weights("recurrent_weights")?;
                let four_u = 4 * units;
                if units == 0 || kernel.is_empty() || kernel.len() % four_u != 0 {
                    return Err(Error::Shape {
                        what: format!("{}: LSTM '{name}' kernel", self.source),
                        expected: format!("a multiple of {four_u} values"),
                        got: kernel.len().to_string(),
                    });
                }
                if recurrent.len() != units * four_u {
                    return Err(Error::Shape {
                        what: format!("{}: LSTM '{name}' recurrent kernel", self.source),
                        expected: (units * four_u).to_string(),
                        got: recurrent.len().to_string(),
                    });
                }
                let bias = if self.bool_of(cfg, "use_bias", true) {
                    weights("bias")?
                } else {
                    vec![0.0; four_u]
                };
                if bias.len() != four_u {
                    return Err(Error::Shape {
                        what: format!("{}: LSTM '{name}' bias", self.source),
                        expected: four_u.to_string(),
                        got: bias.len().to_string(),
                    });
                }
                LayerKind::Lstm(LstmWeights {
                    input_dim: kernel.len() / four_u,
                    units,
                    kernel,
                    recurrent,
                    bias,
                    return_sequences: self.bool_of(cfg, "return_sequences", false),
                })
            }
            "Embedding" => {
                let input_dim = self.usize_of(cfg.get("input_dim"), &format!("layer '{name}' input_dim"))?;
                let output_dim = self.usize_of(cfg.get("output_dim"), &format!("layer '{name}' output_dim"))?;
                if self.bool_of(cfg, "mask_zero", false) {
                    return Err(unsupported("mask_zero = true".into()));
                }
                let table = weights("weights")?;
                if input_dim.checked_mul(output_dim) != Some(table.len()) || table.is_empty() {
                    return Err(Error::Shape {
                        what: format!("{}: Embedding '{name}' table", self.source),
                        expected: format!("{input_dim}x{output_dim}"),
                        got: format!("{} values", table.len()),
                    });
                }
                LayerKind::Embedding(EmbeddingWeights {
                    input_dim,
                    output_dim,
                    table,
                })
            }
            _ => return Err(unsupported(String::new())),
        };
        Ok(Layer {
            name,
            class,
            kind,
            inbound,
        })
    }
}
