//! TunaNet's network: a Keras functional graph of `Dense`, `ReLU` and `Add` layers, exported by
//! frugally-deep.
//!
//! The `Dense` layers, the input, the embedded test vectors and every float array are read by
//! tuneinfer's frugally-deep reader ([`KerasModel`]); that reader does not know `ReLU` and `Add`
//! (MIOpen's KTN models have neither), so they are taken out of the layer list here, kept as
//! weightless graph nodes, and the rest is handed to [`KerasModel::parse`]. The hash stored in the
//! file is recomputed over the original layer order (every layer's weight arrays, then its name),
//! so a layer dropped or misread is caught.

use serde_json::Value;

use crate::cpu;
use crate::error::{Error, Result};
use crate::format::frugally::{DenseWeights, KerasModel, LayerKind, TestVector};
use crate::format::sha256;

/// What a node computes.
#[derive(Debug, Clone)]
enum Op {
    /// The model input.
    Input,
    /// `Dense` (linear activation), index into [`Net::dense`].
    Dense(usize),
    /// `ReLU` with Keras's defaults: `max(x, 0)`.
    Relu,
    /// `Add`: the element-wise sum of its inputs.
    Add,
}

#[derive(Debug, Clone)]
struct Node {
    name: String,
    op: Op,
    /// Indices of the nodes it reads, all earlier in [`Net::nodes`].
    inputs: Vec<usize>,
    /// Its output width (every tensor here is a vector per sample).
    width: usize,
}

/// A loaded TunaNet network.
#[derive(Debug, Clone)]
pub struct Net {
    nodes: Vec<Node>,
    dense: Vec<DenseWeights>,
    output: usize,
    /// The input width (MIOpen's `num_inputs`).
    pub input_width: usize,
    /// The output width (MIOpen's `num_outputs`).
    pub output_width: usize,
    /// The test vectors embedded in the file (Keras's own outputs), possibly none.
    pub tests: Vec<TestVector>,
    /// The `hash` the file stores.
    pub stored_hash: String,
    /// The hash recomputed from the loaded weights and every layer's name, in file order.
    pub computed_hash: String,
}

/// A layer of the file, before the split into [`KerasModel`] layers and weightless nodes.
struct RawLayer {
    name: String,
    class: String,
    inbound: Vec<String>,
}

fn raw_layers(root: &Value, source: &str) -> Result<Vec<RawLayer>> {
    let layers = root
        .pointer("/architecture/config/layers")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::format(source, "missing architecture.config.layers"))?;
    let mut out = Vec::with_capacity(layers.len());
    for (i, layer) in layers.iter().enumerate() {
        let class = layer
            .get("class_name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::format(source, format!("layer {i}: missing class_name")))?;
        let name = layer
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::format(source, format!("layer {i}: missing name")))?;
        let unsupported = |detail: &str| Error::UnsupportedLayer {
            layer: name.to_string(),
            class: class.to_string(),
            detail: detail.to_string(),
        };
        let nodes = layer.get("inbound_nodes").and_then(Value::as_array);
        let inbound = match nodes.map(|n| n.as_slice()) {
            None | Some([]) => Vec::new(),
            Some([node]) => node
                .as_array()
                .ok_or_else(|| Error::format(source, format!("layer '{name}': inbound node is not a list")))?
                .iter()
                .map(|r| {
                    r.as_array()
                        .and_then(|p| p.first())
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| Error::format(source, format!("layer '{name}': inbound entry lacks a layer name")))
                })
                .collect::<Result<Vec<_>>>()?,
            Some(_) => return Err(unsupported("the layer is called more than once (shared layers)")),
        };
        match class {
            "InputLayer" | "Dense" | "Add" => {}
            "ReLU" => {
                // Keras's ReLU(max_value, negative_slope, threshold); TunaNet uses the plain one.
                let cfg = layer.get("config");
                let field = |k: &str| cfg.and_then(|c| c.get(k));
                if !field("max_value").is_none_or(Value::is_null) {
                    return Err(unsupported("max_value is set (only the plain ReLU)"));
                }
                for k in ["negative_slope", "threshold"] {
                    if field(k).and_then(Value::as_f64).unwrap_or(0.0) != 0.0 {
                        return Err(unsupported(&format!("{k} is not 0 (only the plain ReLU)")));
                    }
                }
            }
            _ => return Err(unsupported("TunaNet's graph reader takes InputLayer, Dense, ReLU and Add")),
        }
        out.push(RawLayer {
            name: name.to_string(),
            class: class.to_string(),
            inbound,
        });
    }
    Ok(out)
}

impl Net {
    /// Parses a frugally-deep TunaNet file's text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Net> {
        let mut root: Value =
            serde_json::from_str(text).map_err(|e| Error::format(source, format!("not valid JSON: {e}")))?;
        let raw = raw_layers(&root, source)?;
        // Hand the layers tuneinfer's reader knows (input, Dense) to it; keep ReLU and Add here.
        if let Some(list) = root
            .pointer_mut("/architecture/config/layers")
            .and_then(Value::as_array_mut)
        {
            list.retain(|l| matches!(l.get("class_name").and_then(Value::as_str), Some("InputLayer" | "Dense")));
        }
        let stripped = serde_json::to_string(&root).map_err(|e| Error::Internal(format!("{source}: {e}")))?;
        drop(root);
        let keras = KerasModel::parse(&stripped, source)?;

        let mut nodes: Vec<Node> = Vec::with_capacity(raw.len());
        let mut dense = Vec::new();
        let mut hasher = sha256::Sha256::new();
        let index_of = |nodes: &[Node], name: &str, of: &str| -> Result<usize> {
            nodes.iter().position(|n| n.name == name).ok_or_else(|| {
                Error::format(
                    source,
                    format!("layer '{of}' reads '{name}', which is not an earlier layer"),
                )
            })
        };
        for r in &raw {
            let inputs = r
                .inbound
                .iter()
                .map(|n| index_of(&nodes, n, &r.name))
                .collect::<Result<Vec<_>>>()?;
            let widths: Vec<usize> = inputs.iter().map(|&i| nodes[i].width).collect();
            let shape_err = |expected: String, got: String| Error::Shape {
                what: format!("{source}: {} '{}' input", r.class, r.name),
                expected,
                got,
            };
            let (op, width) = match r.class.as_str() {
                "InputLayer" => {
                    let layer = keras
                        .layer(&r.name)
                        .ok_or_else(|| Error::Internal(format!("{source}: input '{}' lost", r.name)))?;
                    match &layer.kind {
                        LayerKind::Input { shape } if shape.len() == 1 && shape[0] > 0 => (Op::Input, shape[0]),
                        LayerKind::Input { shape } => {
                            return Err(shape_err("one non-empty dimension".into(), format!("{shape:?}")))
                        }
                        _ => return Err(Error::Internal(format!("{source}: '{}' is not an input", r.name))),
                    }
                }
                "Dense" => {
                    let layer = keras
                        .layer(&r.name)
                        .ok_or_else(|| Error::Internal(format!("{source}: Dense '{}' lost", r.name)))?;
                    let LayerKind::Dense(d) = &layer.kind else {
                        return Err(Error::Internal(format!("{source}: '{}' is not Dense", r.name)));
                    };
                    if widths != [d.input_dim] {
                        return Err(shape_err(format!("one input of width {}", d.input_dim), format!("{widths:?}")));
                    }
                    hasher.update(&floats_le(&d.kernel));
                    if let Some(b) = &d.bias {
                        hasher.update(&floats_le(b));
                    }
                    dense.push(d.clone());
                    (Op::Dense(dense.len() - 1), d.units)
                }
                "ReLU" => {
                    if widths.len() != 1 {
                        return Err(shape_err("one input".into(), format!("{}", widths.len())));
                    }
                    (Op::Relu, widths[0])
                }
                "Add" => {
                    if widths.len() < 2 || widths.iter().any(|&w| w != widths[0]) {
                        return Err(shape_err(
                            "two or more inputs of one width".into(),
                            format!("{widths:?}"),
                        ));
                    }
                    (Op::Add, widths[0])
                }
                _ => return Err(Error::Internal(format!("{source}: class {} passed the check", r.class))),
            };
            hasher.update(r.name.as_bytes());
            nodes.push(Node {
                name: r.name.clone(),
                op,
                inputs,
                width,
            });
        }
        let (Some(input), Some(output)) = (keras.inputs.first(), keras.outputs.first()) else {
            return Err(Error::format(source, "the model names no input or no output"));
        };
        if keras.inputs.len() != 1 || keras.outputs.len() != 1 {
            return Err(Error::format(
                source,
                format!(
                    "{} inputs and {} outputs (TunaNet has one of each)",
                    keras.inputs.len(),
                    keras.outputs.len()
                ),
            ));
        }
        let input_idx = index_of(&nodes, &input.layer, "input_layers")?;
        let output_idx = index_of(&nodes, &output.layer, "output_layers")?;
        if !matches!(nodes[input_idx].op, Op::Input) {
            return Err(Error::format(source, format!("input '{}' is not an InputLayer", input.layer)));
        }
        if nodes.iter().filter(|n| matches!(n.op, Op::Input)).count() != 1 {
            return Err(Error::format(source, "more than one InputLayer"));
        }
        Ok(Net {
            input_width: nodes[input_idx].width,
            output_width: nodes[output_idx].width,
            nodes,
            dense,
            output: output_idx,
            tests: keras.tests,
            stored_hash: keras.stored_hash,
            computed_hash: sha256::hex(&hasher.finish()),
        })
    }

    /// Runs `rows` samples (`x` is `[rows, input_width]`, row-major) through the network and
    /// returns `[rows, output_width]`.
    ///
    /// # Errors
    /// [`Error::Shape`] when `x` is not `rows * input_width` long.
    pub fn forward(&self, x: &[f32], rows: usize) -> Result<Vec<f32>> {
        if x.len() != rows * self.input_width {
            return Err(Error::Shape {
                what: "TunaNet input".into(),
                expected: format!("{rows} x {}", self.input_width),
                got: x.len().to_string(),
            });
        }
        let mut values: Vec<Vec<f32>> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let out = match node.op {
                Op::Input => x.to_vec(),
                Op::Dense(i) => {
                    let d = &self.dense[i];
                    let mut out = vec![0.0; rows * d.units];
                    cpu::dense(
                        &values[node.inputs[0]],
                        &d.kernel,
                        d.bias.as_deref(),
                        &mut out,
                        rows,
                        d.input_dim,
                        d.units,
                    );
                    out
                }
                Op::Relu => values[node.inputs[0]].iter().map(|&v| if v > 0.0 { v } else { 0.0 }).collect(),
                Op::Add => {
                    let mut out = values[node.inputs[0]].clone();
                    for &j in &node.inputs[1..] {
                        for (o, v) in out.iter_mut().zip(&values[j]) {
                            *o += v;
                        }
                    }
                    out
                }
            };
            values.push(out);
        }
        Ok(values.swap_remove(self.output))
    }

    /// Checks every embedded test vector as frugally-deep's `load_model(path, verify = true)` does
    /// when MIOpen loads the model (`ai_heuristics.cpp:129`): each output within `1e-4` of Keras's
    /// (relative above 1 in magnitude). The largest difference, or an [`Error::VerifyMismatch`].
    pub fn verify(&self, source: &str) -> Result<f32> {
        let mut worst = 0f32;
        for (t, test) in self.tests.iter().enumerate() {
            let (Some(input), Some(want)) = (test.inputs.first(), test.outputs.first()) else {
                return Err(Error::format(source, format!("test {t} has no input or no output")));
            };
            if test.inputs.len() != 1 || test.outputs.len() != 1 || want.values.len() != self.output_width {
                return Err(Error::format(
                    source,
                    format!("test {t} does not have one input and one output of the model's sizes"),
                ));
            }
            let got = self.forward(&input.values, 1)?;
            for (j, (g, w)) in got.iter().zip(&want.values).enumerate() {
                let diff = (g - w).abs();
                let scaled = diff / w.abs().max(1.0);
                if scaled.is_nan() || scaled > 1e-4 {
                    return Err(Error::VerifyMismatch {
                        path: source.to_string(),
                        detail: format!("test {t} output {j}: {g} where Keras computed {w}"),
                    });
                }
                worst = worst.max(diff);
            }
        }
        Ok(worst)
    }
}

fn floats_le(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
