//! Shapes through an ONNX graph, and the convolutions met on the way.
//!
//! One pass over the nodes in topological order. Every tensor gets its shape (and, for small
//! integer and float tensors, its values: the shapes of `Reshape`, the scales of `Resize`), or
//! the reason it has none. A node whose rule fails, or is not known here, takes its outputs'
//! shapes from the model's `value_info` when it has them; otherwise its outputs carry the
//! reason, and only a convolution that needs one of them turns it into an error (an unknown op
//! after the last convolution is harmless).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use super::conv::MiopenConv;
use super::dims::{is_symbol, BatchSymbols, DimError};
use super::proto::{self, tensor_proto::DataType, ModelProto, NodeProto, TensorProto};
use super::shape::{rule, Fail};
use super::{Collector, Network, Options};
use crate::error::{Error, Result};
use crate::problem::MAX_FIELD_VALUE;

/// Largest tensor whose values are kept (shapes, scales, axes).
pub(super) const MAX_VALUES: u64 = 4096;

/// What is known of a tensor.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tensor {
    pub dims: Vec<u64>,
    /// ONNX's element type (`TensorProto.DataType`), 0 when unknown.
    pub ty: i32,
    /// The values of a small integer tensor, when known.
    pub ints: Option<Vec<i64>>,
    /// The values of a small floating-point tensor, when known.
    pub floats: Option<Vec<f64>>,
}

/// Why a tensor's shape is not known, and what kind of error it becomes when a convolution
/// needs it.
#[derive(Debug)]
pub(super) struct Unknown {
    pub why: String,
    /// The symbolic batch: a usage error (give --batch).
    pub usage: bool,
}

pub(super) type Info = std::result::Result<Rc<Tensor>, Rc<Unknown>>;

impl Tensor {
    pub(super) fn new(dims: Vec<u64>, ty: i32) -> Tensor {
        Tensor {
            dims,
            ty,
            ints: None,
            floats: None,
        }
    }

    pub(super) fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The number of elements, or None past u64.
    pub(super) fn elements(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }
}

/// The graph and what the walk knows of it.
struct Walk<'a> {
    name: &'a str,
    options: &'a Options,
    opset: i64,
    tensors: HashMap<String, Info>,
    /// value_info (and graph outputs): shapes the model states.
    stated: HashMap<String, Info>,
    initializers: HashSet<&'a str>,
    /// The symbols of the graph inputs' first dimensions, which --batch sets.
    symbols: BatchSymbols,
    /// The graph inputs whose fixed first dimension is the batch (--batch replaces it): `None`,
    /// every graph input of rank 2 or more (there is one); else those whose first dimension
    /// reaches a convolution's batch ([`probe`]). The others are parameters, which keep their
    /// shapes.
    carriers: Option<HashSet<String>>,
    /// The fixed batch the model was exported with, where --batch replaced it: the fixed
    /// shapes the model states are for that batch, not this one.
    replaced: Option<u64>,
    /// Tensors that are parameters or constants: initializers, graph inputs that do not carry
    /// the batch, `Constant` outputs, and what nodes compute from those alone (a weight cast
    /// or normalised before its convolution).
    params: HashSet<String>,
    /// Tensors that need a gradient in training (they depend on a trained parameter).
    needs_grad: HashSet<String>,
    /// Probing which graph inputs carry the batch: see [`probe`].
    probe: Option<Probe>,
    collector: Collector,
    network: Network,
}

/// What [`probe`] gathers: for each tensor, the graph inputs whose first axis is its first
/// axis; and the graph inputs whose first axis is a convolution's batch.
#[derive(Default)]
struct Probe {
    axis0: HashMap<String, BTreeSet<String>>,
    data: BTreeSet<String>,
}

/// Walks the graph of `model`: the distinct problems and the summary's counts.
pub(super) fn walk(model: &ModelProto, name: &str, options: &Options) -> Result<Network> {
    let graph = model.graph.as_ref().ok_or_else(|| Error::format(name, "no graph"))?;
    let initializers: HashSet<&str> = graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
    // Graph inputs that may carry the batch: not initializers, of rank 2 or more.
    let candidates = graph
        .input
        .iter()
        .filter(|i| i.name.as_deref().is_some_and(|n| !initializers.contains(n)))
        .filter(|i| tensor_type(i).is_some_and(|(d, _)| d.len() >= 2))
        .count();
    let carriers = if candidates >= 2 && (options.batch.is_some() || options.training) {
        Some(probe(model, name, options)?)
    } else {
        None
    };
    let mut w = Walk::new(model, name, options, carriers, false)?;
    w.run(model)?;
    let (problems, total) = std::mem::take(&mut w.collector).finish();
    w.network.problems = problems;
    w.network.total = total;
    Ok(w.network)
}

/// The graph inputs whose first dimension is the batch, where there are several: the graph is
/// walked with the shapes as stated (the symbolic batch set), following where each input's
/// first axis goes. An op's output takes its first axis from an input of the same rank and the
/// same first dimension that is not in a parameter's place (a convolution's weights, a
/// reshape's target...): broadcasting aligns the last axes, so a `[C, 1, 1]` scale does not
/// pass its first axis on. The inputs that reach a convolution's input's first axis carry the
/// batch; the others (weights given as graph inputs) are parameters and keep their shapes.
fn probe(model: &ModelProto, name: &str, options: &Options) -> Result<HashSet<String>> {
    let plain = Options {
        training: false,
        ..options.clone()
    };
    let mut w = Walk::new(model, name, &plain, Some(HashSet::new()), true)?;
    w.run(model)?;
    Ok(w.probe.map(|p| p.data.into_iter().collect()).unwrap_or_default())
}

impl<'a> Walk<'a> {
    fn new(
        model: &'a ModelProto,
        name: &'a str,
        options: &'a Options,
        carriers: Option<HashSet<String>>,
        probing: bool,
    ) -> Result<Walk<'a>> {
        let graph = model.graph.as_ref().ok_or_else(|| Error::format(name, "no graph"))?;
        let opset = model
            .opset_import
            .iter()
            .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
            .and_then(|o| o.version)
            .unwrap_or(super::MAX_OPSET);
        let initializers: HashSet<&str> = graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
        let mut symbols = BatchSymbols {
            names: HashSet::new(),
            batch: options.batch,
        };
        for input in &graph.input {
            if input.name.as_deref().is_some_and(|n| initializers.contains(n)) {
                continue;
            }
            if let Some((dims, _)) = tensor_type(input) {
                if let Some(Dim::Symbolic(s)) = dims.first() {
                    if is_symbol(s) {
                        symbols.names.insert(s.clone());
                    }
                }
            }
        }
        Ok(Walk {
            name,
            options,
            opset,
            tensors: HashMap::new(),
            stated: HashMap::new(),
            params: initializers.iter().map(|s| s.to_string()).collect(),
            initializers,
            symbols,
            carriers,
            replaced: None,
            needs_grad: HashSet::new(),
            probe: probing.then(Probe::default),
            collector: Collector::default(),
            network: Network::default(),
        })
    }

    fn run(&mut self, model: &ModelProto) -> Result<()> {
        let graph = model
            .graph
            .as_ref()
            .ok_or_else(|| Error::format(self.name, "no graph"))?;
        for t in &graph.initializer {
            let Some(tname) = t.name.as_deref() else { continue };
            self.tensors.insert(tname.to_string(), initializer(t));
        }
        for input in &graph.input {
            let Some(iname) = input.name.as_deref() else { continue };
            if self.initializers.contains(iname) {
                continue;
            }
            let info = self.graph_input(input);
            if let Some(p) = &mut self.probe {
                p.axis0.insert(iname.to_string(), BTreeSet::from([iname.to_string()]));
            }
            self.tensors.insert(iname.to_string(), info);
        }
        for vi in graph.value_info.iter().chain(&graph.output) {
            let Some(vname) = vi.name.as_deref() else { continue };
            let info = self.stated_info(vi);
            self.stated.insert(vname.to_string(), info);
        }
        let order = topological(&graph.node, &self.tensors).map_err(|e| Error::format(self.name, e))?;
        for i in order {
            self.node(&graph.node[i])?;
        }
        Ok(())
    }
}

/// The nodes in an order where every input is produced before it is used (ONNX requires the
/// file's order to be one; this does not rely on it). A cycle is an error.
fn topological(nodes: &[NodeProto], known: &HashMap<String, Info>) -> std::result::Result<Vec<usize>, String> {
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            producer.entry(o.as_str()).or_insert(i);
        }
    }
    let mut waiting = vec![0usize; nodes.len()];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for input in n.input.iter().filter(|s| !s.is_empty()) {
            if known.contains_key(input.as_str()) {
                continue;
            }
            if let Some(&p) = producer.get(input.as_str()) {
                if p != i {
                    waiting[i] += 1;
                    users[p].push(i);
                }
            }
        }
    }
    // The smallest ready index first: a file already in topological order keeps its order.
    use std::cmp::Reverse;
    let mut ready: std::collections::BinaryHeap<Reverse<usize>> =
        (0..nodes.len()).filter(|&i| waiting[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &u in &users[i] {
            waiting[u] -= 1;
            if waiting[u] == 0 {
                ready.push(Reverse(u));
            }
        }
    }
    if order.len() != nodes.len() {
        let stuck = (0..nodes.len())
            .find(|&i| waiting[i] > 0)
            .map(|i| node_label(&nodes[i]));
        return Err(format!(
            "the graph has a cycle (node {} waits on itself)",
            stuck.unwrap_or_default()
        ));
    }
    Ok(order)
}

fn node_label(n: &NodeProto) -> String {
    format!(
        "'{}' ({})",
        n.name.as_deref().unwrap_or(""),
        n.op_type.as_deref().unwrap_or("?")
    )
}

/// A shape that needs --batch: a usage error when a convolution needs it.
fn needs_batch(what: String) -> Rc<Unknown> {
    Rc::new(Unknown {
        why: format!("{what}: give the batch size (--batch N; Python: batch=N)"),
        usage: true,
    })
}

fn unknown(why: impl Into<String>) -> Info {
    Err(Rc::new(Unknown {
        why: why.into(),
        usage: false,
    }))
}

/// A checked dimension from the file: positive and at most MIOpen's int.
fn file_dim(d: i64, what: &dyn Fn() -> String) -> std::result::Result<u64, String> {
    if d <= 0 {
        return Err(format!("{}: dimension {d} (dimensions must be positive)", what()));
    }
    let d = d as u64;
    if d > MAX_FIELD_VALUE {
        return Err(format!(
            "{}: dimension {d} is larger than MIOpen's sizes (at most {MAX_FIELD_VALUE})",
            what()
        ));
    }
    Ok(d)
}

/// An initializer: its dims (never its data, unless small and stored in the file).
pub(super) fn initializer(t: &TensorProto) -> Info {
    let tname = t.name.as_deref().unwrap_or("");
    let mut dims = Vec::with_capacity(t.dims.len());
    for &d in &t.dims {
        if !(0..=MAX_FIELD_VALUE as i64).contains(&d) {
            return unknown(format!("initializer '{tname}': dimension {d} is out of range"));
        }
        dims.push(d as u64);
    }
    let ty = t.data_type.unwrap_or(0);
    let mut tensor = Tensor::new(dims, ty);
    if tensor.elements().is_some_and(|n| n <= MAX_VALUES) {
        let (ints, floats) = values(t, tensor.elements().unwrap_or(0) as usize);
        tensor.ints = ints;
        tensor.floats = floats;
    }
    Ok(Rc::new(tensor))
}

/// The values of a small tensor stored in the file: integers (INT64, INT32) or floats (FLOAT,
/// DOUBLE, FLOAT16). External data is not read.
fn values(t: &TensorProto, n: usize) -> (Option<Vec<i64>>, Option<Vec<f64>>) {
    let external = t.data_location == Some(proto::tensor_proto::DataLocation::External as i32);
    if external {
        return (None, None);
    }
    let raw = t.raw_data.as_deref();
    let from_raw = |size: usize| raw.filter(|r| r.len() == n * size).map(|r| r.chunks_exact(size));
    let ty = DataType::try_from(t.data_type.unwrap_or(0)).unwrap_or(DataType::Undefined);
    let ints = match ty {
        DataType::Int64 => match from_raw(8) {
            Some(c) => Some(c.map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8]))).collect()),
            None if raw.is_none() && t.int64_data.len() == n => Some(t.int64_data.clone()),
            None => None,
        },
        DataType::Int32 => match from_raw(4) {
            Some(c) => Some(
                c.map(|b| i32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as i64)
                    .collect(),
            ),
            None if raw.is_none() && t.int32_data.len() == n => Some(t.int32_data.iter().map(|&v| v as i64).collect()),
            None => None,
        },
        _ => None,
    };
    let floats = match ty {
        DataType::Float => match from_raw(4) {
            Some(c) => Some(
                c.map(|b| f32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64)
                    .collect(),
            ),
            None if raw.is_none() && t.float_data.len() == n => Some(t.float_data.iter().map(|&v| v as f64).collect()),
            None => None,
        },
        DataType::Double => match from_raw(8) {
            Some(c) => Some(c.map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))).collect()),
            None if raw.is_none() && t.double_data.len() == n => Some(t.double_data.clone()),
            None => None,
        },
        DataType::Float16 => match from_raw(2) {
            Some(c) => Some(
                c.map(|b| half::f16::from_le_bytes(b.try_into().unwrap_or([0; 2])).to_f64())
                    .collect(),
            ),
            None if raw.is_none() && t.int32_data.len() == n => Some(
                t.int32_data
                    .iter()
                    .map(|&v| half::f16::from_bits(v as u16).to_f64())
                    .collect(),
            ),
            None => None,
        },
        _ => ints.as_ref().map(|v| v.iter().map(|&x| x as f64).collect()),
    };
    (ints, floats)
}

impl Walk<'_> {
    /// A graph input's shape. A symbolic dimension is the batch or an expression in it; a
    /// fixed first one is the batch where the input carries it ([`Walk::carriers`]): --batch
    /// replaces it. A graph input that does not carry the batch keeps its shape.
    fn graph_input(&mut self, vi: &proto::ValueInfoProto) -> Info {
        let iname = vi.name.as_deref().unwrap_or("");
        let (dims, ty) = match tensor_type(vi) {
            Some(x) => x,
            None => return unknown(format!("graph input '{iname}' has no tensor shape")),
        };
        let carries = matches!(dims.first(), Some(Dim::Symbolic(_)))
            || (dims.len() >= 2 && self.carriers.as_ref().is_none_or(|c| c.contains(iname)));
        if !carries {
            self.params.insert(iname.to_string());
        }
        let mut out = Vec::with_capacity(dims.len());
        for (i, d) in dims.iter().enumerate() {
            let batch_axis = i == 0 && dims.len() >= 2;
            match d {
                Dim::Fixed(v) => {
                    match (batch_axis && carries, self.options.batch) {
                        (true, Some(b)) => {
                            if *v != b as i64 {
                                self.network
                                    .notes
                                    .push(format!("graph input '{iname}': its batch {v} replaced by --batch {b}"));
                                if *v >= 1 {
                                    self.replaced = Some(*v as u64);
                                }
                            }
                            out.push(b);
                            continue;
                        }
                        (false, Some(b)) if batch_axis && *v != b as i64 && self.probe.is_none() => {
                            self.network.notes.push(format!(
                                "graph input '{iname}' keeps its first dimension {v}: no convolution takes its \
                                 first axis as the batch (weights given as a graph input)"
                            ));
                        }
                        _ => {}
                    }
                    match file_dim(*v, &|| format!("graph input '{iname}' dimension {i}")) {
                        Ok(v) => out.push(v),
                        Err(e) => return unknown(e),
                    }
                }
                // An unnamed first dimension is the batch (it can be nothing else).
                Dim::Symbolic(s) if batch_axis && s.is_empty() => match self.options.batch {
                    Some(b) => out.push(b),
                    None => {
                        return Err(needs_batch(format!(
                            "graph input '{iname}' has a symbolic batch dimension"
                        )))
                    }
                },
                Dim::Symbolic(s) => match self.symbols.eval(s) {
                    Ok(v) => out.push(v),
                    Err(DimError::NeedsBatch) if batch_axis => {
                        return Err(needs_batch(format!(
                            "graph input '{iname}' has a symbolic batch dimension '{s}'"
                        )))
                    }
                    Err(DimError::NeedsBatch) => {
                        return Err(needs_batch(format!(
                            "graph input '{iname}' dimension {i} is the batch or an expression in it ('{s}')"
                        )))
                    }
                    Err(DimError::Refused(why)) => {
                        return unknown(format!(
                            "graph input '{iname}' dimension {i} is symbolic ('{s}': {why}); only the batch can be \
                             given (--batch): export the model with fixed sizes"
                        ))
                    }
                },
            }
        }
        Ok(Rc::new(Tensor::new(out, ty)))
    }

    /// A shape the model states (value_info, graph outputs): fixed dimensions, and symbolic ones
    /// that are the batch or an expression in it (`2*batch`, `s0*2`). A symbol that is not the
    /// batch is refused, never taken as it. Where --batch replaced a fixed batch, fixed shapes
    /// are the export's, not this batch's: refused too.
    fn stated_info(&self, vi: &proto::ValueInfoProto) -> Info {
        let vname = vi.name.as_deref().unwrap_or("");
        let Some((dims, ty)) = tensor_type(vi) else {
            return unknown(format!("value_info '{vname}' has no shape"));
        };
        let mut out = Vec::with_capacity(dims.len());
        let mut symbolic = false;
        for (i, d) in dims.iter().enumerate() {
            match d {
                Dim::Fixed(v) => match file_dim(*v, &|| format!("value_info '{vname}' dimension {i}")) {
                    Ok(v) => out.push(v),
                    Err(e) => return unknown(e),
                },
                Dim::Symbolic(s) => {
                    symbolic = true;
                    match self.symbols.eval(s) {
                        Ok(v) => out.push(v),
                        Err(DimError::NeedsBatch) => {
                            return Err(needs_batch(format!(
                                "value_info '{vname}' dimension {i} is an expression in the batch ('{s}')"
                            )))
                        }
                        Err(DimError::Refused(why)) => {
                            let shown = if s.is_empty() {
                                "unnamed".to_string()
                            } else {
                                format!("'{s}'")
                            };
                            return unknown(format!(
                                "the model states the shape of '{vname}' with dimension {i} {shown}: {why}"
                            ));
                        }
                    }
                }
            }
        }
        if let (Some(old), Some(b), false) = (self.replaced, self.options.batch, symbolic) {
            return unknown(format!(
                "the model states the shape of '{vname}' as {out:?} for the batch it was exported with ({old}), \
                 which --batch {b} replaced: its shape at batch {b} is not stated (export with a symbolic batch, \
                 or leave --batch out)"
            ));
        }
        Ok(Rc::new(Tensor::new(out, ty)))
    }

    fn info(&self, name: &str) -> Info {
        match self.tensors.get(name) {
            Some(i) => i.clone(),
            None => unknown(format!(
                "tensor '{name}' is not produced by any node, initializer or graph input"
            )),
        }
    }

    /// Derives a node's outputs (or records a convolution's problems).
    fn node(&mut self, node: &NodeProto) -> Result<()> {
        let op = node.op_type.as_deref().unwrap_or("");
        let domain = node.domain.as_deref().unwrap_or("");
        let standard = domain.is_empty() || domain == "ai.onnx";
        let inputs: Vec<Option<Info>> = node
            .input
            .iter()
            .map(|i| if i.is_empty() { None } else { Some(self.info(i)) })
            .collect();
        if self.options.training {
            self.mark_gradients(node, op);
        }
        let result = if standard && (op == "Conv" || op == "ConvTranspose") {
            self.network.convolutions += 1;
            if let Some(p) = &mut self.probe {
                // The input's first axis is this convolution's batch.
                if let Some(from) = node.input.first().and_then(|x| p.axis0.get(x)) {
                    p.data.extend(from.iter().cloned());
                }
            }
            match self.convolution(node, &inputs) {
                Ok(out) => Ok(vec![out]),
                // Probing goes on past what the real walk will report.
                Err(e) if self.probe.is_some() => Err(Fail::Here(e.to_string())),
                Err(e) => return Err(e),
            }
        } else if standard {
            rule(node, op, &inputs, self.opset)
        } else {
            Err(Fail::Here(format!(
                "op {op} of domain '{domain}' is not one tuneinfer knows"
            )))
        };
        let outputs: Vec<&String> = node.output.iter().collect();
        let named: Vec<&String> = node.input.iter().filter(|i| !i.is_empty()).collect();
        if op == "Constant" || (!named.is_empty() && named.iter().all(|i| self.params.contains(i.as_str()))) {
            for o in outputs.iter().filter(|o| !o.is_empty()) {
                self.params.insert(o.to_string());
            }
        }
        match result {
            Ok(tensors) => {
                if op != "Conv" && op != "ConvTranspose" {
                    *self.network.passed_through.entry(op.to_string()).or_default() += 1;
                }
                for (i, o) in outputs.iter().enumerate() {
                    if o.is_empty() {
                        continue;
                    }
                    let info = match tensors.get(i) {
                        Some(t) => check_dims(t, o),
                        None => match self.stated.get(o.as_str()) {
                            Some(Ok(t)) => Ok(t.clone()),
                            Some(Err(u)) => Err(Rc::new(Unknown {
                                why: format!(
                                    "output {i} of node {} is not derived, and its stated shape cannot be used: {}",
                                    node_label(node),
                                    u.why
                                ),
                                usage: u.usage,
                            })),
                            None => unknown(format!("output {i} of node {} is not derived", node_label(node))),
                        },
                    };
                    self.tensors.insert(o.to_string(), info);
                }
            }
            Err(fail) => {
                let all_stated = outputs
                    .iter()
                    .filter(|o| !o.is_empty())
                    .all(|o| self.stated.get(o.as_str()).is_some_and(|s| s.is_ok()));
                if all_stated {
                    *self.network.passed_through.entry(op.to_string()).or_default() += 1;
                } else {
                    *self.network.not_derived.entry(op.to_string()).or_default() += 1;
                }
                // A stated shape that cannot be used (a symbol that is not the batch): the node
                // and both reasons, never a guess.
                let refused = outputs
                    .iter()
                    .find_map(|o| self.stated.get(o.as_str()).and_then(|s| s.as_ref().err()).cloned());
                let reason: Rc<Unknown> = match (fail, refused) {
                    (Fail::Upstream(u), _) => u,
                    (Fail::Here(why), Some(stated)) => Rc::new(Unknown {
                        why: format!(
                            "node {}: {why}, and its stated shape cannot be used: {}",
                            node_label(node),
                            stated.why
                        ),
                        usage: stated.usage,
                    }),
                    (Fail::Here(why), None) => Rc::new(Unknown {
                        why: format!(
                            "node {}: {why}; run ONNX's shape inference first (python -c \"import onnx; \
                             m = onnx.load('MODEL', load_external_data=False); \
                             onnx.save(onnx.shape_inference.infer_shapes(m), 'MODEL-shapes.onnx')\") \
                             so that the model states its shapes (value_info)",
                            node_label(node)
                        ),
                        usage: false,
                    }),
                };
                for o in outputs.iter().filter(|o| !o.is_empty()) {
                    let info = match self.stated.get(o.as_str()) {
                        Some(Ok(t)) => Ok(t.clone()),
                        _ => Err(reason.clone()),
                    };
                    self.tensors.insert(o.to_string(), info);
                }
            }
        }
        if self.probe.is_some() {
            self.follow_axis0(node, op);
        }
        Ok(())
    }

    /// Probing: each output's first axis comes from the inputs of its rank and first dimension
    /// that are not in a parameter's or a shape's place.
    fn follow_axis0(&mut self, node: &NodeProto, op: &str) {
        let not_data: &[usize] = match op {
            "Conv"
            | "ConvTranspose"
            | "Gemm"
            | "InstanceNormalization"
            | "LayerNormalization"
            | "GroupNormalization" => &[1, 2],
            "BatchNormalization" => &[1, 2, 3, 4],
            "MatMul" | "PRelu" => &[1],
            "Reshape" | "Expand" | "Tile" | "Slice" | "Pad" | "Resize" | "Upsample" | "Split" | "Squeeze"
            | "Unsqueeze" | "Gather" | "ConstantOfShape" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceSum"
            | "DequantizeLinear" | "QuantizeLinear" => &[1, 2, 3, 4],
            _ => &[],
        };
        let Some(p) = &mut self.probe else { return };
        for o in node.output.iter().filter(|o| !o.is_empty()) {
            let Some(Ok(out)) = self.tensors.get(o.as_str()) else {
                continue;
            };
            let Some(&first) = out.dims.first() else { continue };
            let mut from = BTreeSet::new();
            for (i, x) in node.input.iter().enumerate() {
                if x.is_empty() || not_data.contains(&i) {
                    continue;
                }
                let aligned = matches!(self.tensors.get(x.as_str()),
                    Some(Ok(t)) if t.rank() == out.rank() && t.dims.first() == Some(&first));
                if aligned {
                    if let Some(src) = p.axis0.get(x.as_str()) {
                        from.extend(src.iter().cloned());
                    }
                }
            }
            if !from.is_empty() {
                p.axis0.insert(o.clone(), from);
            }
        }
    }

    /// Marks the node's outputs as needing a gradient when an input does, or when an input is
    /// a trained parameter: a parameter ([`Walk::params`]: an initializer, a weight given as a
    /// graph input, or computed from those alone) in a weight position (Conv and ConvTranspose W and B,
    /// Gemm and MatMul, the normalisations' scale and bias, PRelu's slope).
    fn mark_gradients(&mut self, node: &NodeProto, op: &str) {
        let weight_slots: &[usize] = match op {
            "Conv"
            | "ConvTranspose"
            | "Gemm"
            | "BatchNormalization"
            | "InstanceNormalization"
            | "LayerNormalization"
            | "GroupNormalization" => &[1, 2],
            "MatMul" => &[0, 1],
            "PRelu" => &[1],
            _ => &[],
        };
        let needs = node.input.iter().enumerate().any(|(i, name)| {
            !name.is_empty()
                && (self.needs_grad.contains(name)
                    || (weight_slots.contains(&i) && self.params.contains(name.as_str())))
        });
        if needs {
            for o in node.output.iter().filter(|o| !o.is_empty()) {
                self.needs_grad.insert(o.clone());
            }
        }
    }

    /// A Conv or ConvTranspose: its problems recorded, its output derived. A convolution whose
    /// input shapes are unknown is an error here: its problem is needed.
    fn convolution(&mut self, node: &NodeProto, inputs: &[Option<Info>]) -> Result<Tensor> {
        let label = node_label(node);
        let needed = |slot: usize, what: &str| -> Result<Rc<Tensor>> {
            match inputs.get(slot) {
                Some(Some(Ok(t))) => Ok(t.clone()),
                Some(Some(Err(u))) => {
                    let detail = format!(
                        "convolution node {label}: the shape of its {what} '{}' is not known: {}",
                        node.input[slot], u.why
                    );
                    Err(if u.usage {
                        Error::Usage(format!("{}: {detail}", self.name))
                    } else {
                        Error::format(self.name, detail)
                    })
                }
                _ => Err(Error::format(
                    self.name,
                    format!("convolution node {label} has no {what}"),
                )),
            }
        };
        let x = needed(0, "input")?;
        let w = needed(1, "weights")?;
        let super::conv::Mapped { conv, out_dims, notes } = super::conv::map(node, &label, &x, &w, self.options)
            .map_err(|why| Error::format(self.name, format!("convolution node {label}: {why}")))?;
        self.network.notes.extend(notes);
        let input_grad = self.needs_grad.contains(&node.input[0]);
        for direction in MiopenConv::directions(self.options, input_grad) {
            let (line, problem) = conv.line(direction).map_err(|reason| {
                Error::problem(
                    format!("{}: node {label}", self.name),
                    format!("MIOpen cannot run this convolution: {reason}"),
                )
            })?;
            let node_name = node.name.clone().unwrap_or_default();
            self.collector.add(line, problem, &node_name, direction);
        }
        Ok(Tensor::new(out_dims, x.ty))
    }
}

/// A dimension as the file states it.
enum Dim {
    Fixed(i64),
    Symbolic(String),
}

/// The dims and element type of a tensor-typed value.
fn tensor_type(vi: &proto::ValueInfoProto) -> Option<(Vec<Dim>, i32)> {
    use proto::tensor_shape_proto::dimension::Value;
    use proto::type_proto::Value as T;
    let Some(T::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    let shape = t.shape.as_ref()?;
    let dims = shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(Value::DimValue(v)) => Dim::Fixed(*v),
            Some(Value::DimParam(s)) => Dim::Symbolic(s.clone()),
            None => Dim::Symbolic(String::new()),
        })
        .collect();
    Some((dims, t.elem_type.unwrap_or(0)))
}

/// A derived tensor's dims must fit MIOpen's int.
fn check_dims(t: &Tensor, name: &str) -> Info {
    if let Some(d) = t.dims.iter().find(|&&d| d > MAX_FIELD_VALUE) {
        return unknown(format!(
            "tensor '{name}' would have a dimension of {d}, larger than MIOpen's sizes (at most {MAX_FIELD_VALUE})"
        ));
    }
    Ok(Rc::new(t.clone()))
}
