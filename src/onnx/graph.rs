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
use super::proto::{self, tensor_proto::DataType, AttributeProto, ModelProto, NodeProto, TensorProto};
use super::{Collector, Network, Options};
use crate::error::{Error, Result};
use crate::problem::MAX_FIELD_VALUE;

/// Largest tensor whose values are kept (shapes, scales, axes).
const MAX_VALUES: u64 = 4096;

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

type Info = std::result::Result<Rc<Tensor>, Rc<Unknown>>;

/// A node rule's failure: an input is unknown (its reason passed on), or the rule itself failed.
enum Fail {
    Upstream(Rc<Unknown>),
    Here(String),
}

impl From<String> for Fail {
    fn from(s: String) -> Fail {
        Fail::Here(s)
    }
}

impl From<&str> for Fail {
    fn from(s: &str) -> Fail {
        Fail::Here(s.to_string())
    }
}

type Rule<T> = std::result::Result<T, Fail>;

impl Tensor {
    fn new(dims: Vec<u64>, ty: i32) -> Tensor {
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
    fn elements(&self) -> Option<u64> {
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
fn initializer(t: &TensorProto) -> Info {
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

// ---- Shape rules of the ops convolutional networks use.

fn attr<'n>(node: &'n NodeProto, name: &str) -> Option<&'n AttributeProto> {
    node.attribute.iter().find(|a| a.name.as_deref() == Some(name))
}

fn attr_i(node: &NodeProto, name: &str) -> Option<i64> {
    attr(node, name).and_then(|a| a.i)
}

fn attr_ints(node: &NodeProto, name: &str) -> Option<Vec<i64>> {
    attr(node, name).map(|a| a.ints.clone())
}

fn attr_s(node: &NodeProto, name: &str) -> Option<String> {
    attr(node, name)
        .and_then(|a| a.s.as_deref())
        .map(|s| String::from_utf8_lossy(s).into_owned())
}

/// Input `i`'s tensor; an absent input is an error naming it.
fn input(inputs: &[Option<Info>], i: usize) -> Rule<Rc<Tensor>> {
    match inputs.get(i) {
        Some(Some(Ok(t))) => Ok(t.clone()),
        Some(Some(Err(u))) => Err(Fail::Upstream(u.clone())),
        _ => Err(Fail::Here(format!("input {i} is missing"))),
    }
}

/// Input `i`'s tensor if given.
fn optional(inputs: &[Option<Info>], i: usize) -> Rule<Option<Rc<Tensor>>> {
    match inputs.get(i) {
        Some(Some(_)) => input(inputs, i).map(Some),
        _ => Ok(None),
    }
}

/// The integer values of input `i` (a shape, axes, pads), which must be known.
fn int_values(inputs: &[Option<Info>], i: usize, what: &str) -> Rule<Vec<i64>> {
    let t = input(inputs, i)?;
    t.ints.clone().ok_or_else(|| {
        Fail::Here(format!(
            "its {what} (input {i}) is computed at run time, not a constant"
        ))
    })
}

/// An axis, negative counting from the end, in 0..rank.
fn axis(a: i64, rank: usize) -> Rule<usize> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if (0..r).contains(&v) {
        Ok(v as usize)
    } else {
        Err(Fail::Here(format!("axis {a} out of range for rank {rank}")))
    }
}

/// Numpy broadcasting of several shapes.
fn broadcast(shapes: &[&[u64]]) -> Rule<Vec<u64>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1u64; rank];
    for s in shapes {
        let off = rank - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[off + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(Fail::Here(format!("shapes {shapes:?} do not broadcast")));
            }
        }
    }
    Ok(out)
}

fn product(dims: &[u64]) -> Rule<u64> {
    dims.iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Fail::Here("too many elements".into()))
}

/// Ops that keep their first input's shape (and, for output 0, its type).
#[rustfmt::skip]
const SAME_SHAPE: &[&str] = &[
    "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu", "HardSwish", "HardSigmoid", "Elu", "Selu", "Celu", "Softplus",
    "Softsign", "Mish", "Gelu", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round",
    "Sign", "Not", "Softmax", "LogSoftmax", "Hardmax", "LRN", "InstanceNormalization", "LayerNormalization",
    "GroupNormalization", "MeanVarianceNormalization", "BatchNormalization", "Identity", "Dropout", "ThresholdedRelu",
    "Shrink", "Sin", "Cos", "Swish", "IsNaN", "IsInf", "QuantizeLinear", "DequantizeLinear", "CumSum",
];

/// Elementwise ops with broadcasting over all their inputs.
#[rustfmt::skip]
const BROADCAST: &[&str] = &[
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu", "Where", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Mod", "BitShift",
];

/// The output tensors of a (non-convolution) node, from its inputs.
fn rule(node: &NodeProto, op: &str, inputs: &[Option<Info>], opset: i64) -> Rule<Vec<Tensor>> {
    let dims_of = |t: &Tensor| t.dims.clone();
    if SAME_SHAPE.contains(&op) {
        let x = input(inputs, 0)?;
        // (De)quantization changes the type: to the scale's (float), or the zero point's.
        let ty = match op {
            "DequantizeLinear" => optional(inputs, 1)?.map_or(DataType::Float as i32, |t| t.ty),
            "QuantizeLinear" => optional(inputs, 2)?.map_or(DataType::Uint8 as i32, |t| t.ty),
            _ => x.ty,
        };
        let mut out = Tensor::new(dims_of(&x), ty);
        if op == "Identity" {
            out.ints = x.ints.clone();
            out.floats = x.floats.clone();
        }
        return Ok(vec![out]);
    }
    if BROADCAST.contains(&op) {
        let mut ts = Vec::new();
        for i in 0..inputs.len() {
            if let Some(t) = optional(inputs, i)? {
                ts.push(t);
            }
        }
        let shapes: Vec<&[u64]> = ts.iter().map(|t| t.dims.as_slice()).collect();
        let dims = broadcast(&shapes)?;
        let ty = match op {
            "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" => {
                DataType::Bool as i32
            }
            "Where" => ts.get(1).map_or(0, |t| t.ty),
            _ => ts.first().map_or(0, |t| t.ty),
        };
        let mut out = Tensor::new(dims, ty);
        // Small integer arithmetic on shapes (x.size(0) * 2 ...).
        if matches!(op, "Add" | "Sub" | "Mul" | "Div") && ts.len() == 2 {
            if let (Some(a), Some(b)) = (&ts[0].ints, &ts[1].ints) {
                let n = out.elements().unwrap_or(0) as usize;
                let get = |v: &Vec<i64>, i: usize| {
                    if v.len() == 1 {
                        v[0]
                    } else {
                        v.get(i).copied().unwrap_or(0)
                    }
                };
                if n as u64 <= MAX_VALUES && (a.len() == n || a.len() == 1) && (b.len() == n || b.len() == 1) {
                    let vals: Option<Vec<i64>> = (0..n)
                        .map(|i| {
                            let (x, y) = (get(a, i), get(b, i));
                            match op {
                                "Add" => x.checked_add(y),
                                "Sub" => x.checked_sub(y),
                                "Mul" => x.checked_mul(y),
                                _ => x.checked_div(y),
                            }
                        })
                        .collect();
                    out.ints = vals;
                }
            }
        }
        return Ok(vec![out]);
    }
    match op {
        "Cast" | "CastLike" => {
            let x = input(inputs, 0)?;
            let to = if op == "Cast" {
                attr_i(node, "to").unwrap_or(0) as i32
            } else {
                input(inputs, 1)?.ty
            };
            let mut out = Tensor::new(dims_of(&x), to);
            out.ints = x
                .ints
                .clone()
                .or_else(|| x.floats.as_ref().map(|f| f.iter().map(|&v| v as i64).collect()));
            out.floats = x
                .floats
                .clone()
                .or_else(|| x.ints.as_ref().map(|v| v.iter().map(|&i| i as f64).collect()));
            Ok(vec![out])
        }
        "MaxPool" | "AveragePool" | "LpPool" => pool(node, &*input(inputs, 0)?).map(|t| {
            vec![
                t.clone(),
                Tensor {
                    ty: DataType::Int64 as i32,
                    ..t
                },
            ]
        }),
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            let x = input(inputs, 0)?;
            if x.rank() < 3 {
                return Err("input of rank below 3".into());
            }
            let mut d = x.dims[..2].to_vec();
            d.extend(std::iter::repeat_n(1, x.rank() - 2));
            Ok(vec![Tensor::new(d, x.ty)])
        }
        "Concat" => {
            let mut ts = Vec::new();
            for i in 0..inputs.len() {
                if let Some(t) = optional(inputs, i)? {
                    ts.push(t);
                }
            }
            let first = ts.first().ok_or("no inputs")?;
            let ax = axis(attr_i(node, "axis").unwrap_or(0), first.rank())?;
            let mut d = first.dims.clone();
            d[ax] = 0;
            for t in &ts {
                if t.rank() != first.rank() || t.dims.iter().enumerate().any(|(i, &v)| i != ax && v != first.dims[i]) {
                    return Err(Fail::Here(format!(
                        "inputs {:?} and {:?} do not concatenate on axis {ax}",
                        first.dims, t.dims
                    )));
                }
                d[ax] += t.dims[ax];
            }
            let mut out = Tensor::new(d, first.ty);
            if first.rank() == 1 && out.dims[0] <= MAX_VALUES && ts.iter().all(|t| t.ints.is_some()) {
                out.ints = Some(ts.iter().flat_map(|t| t.ints.clone().unwrap_or_default()).collect());
            }
            Ok(vec![out])
        }
        "Split" => {
            let x = input(inputs, 0)?;
            let ax = axis(attr_i(node, "axis").unwrap_or(0), x.rank())?;
            let outs = node.output.len().max(1);
            let size = x.dims[ax];
            let parts: Vec<u64> = if let Some(s) = attr_ints(node, "split") {
                s.iter().map(|&v| v.max(0) as u64).collect()
            } else if opset >= 13 && optional(inputs, 1)?.is_some() {
                int_values(inputs, 1, "split sizes")?
                    .iter()
                    .map(|&v| v.max(0) as u64)
                    .collect()
            } else {
                let pieces = attr_i(node, "num_outputs").map_or(outs as u64, |v| (v.max(1) as u64).min(outs as u64));
                let chunk = size.div_ceil(pieces);
                (0..pieces).map(|i| chunk.min(size.saturating_sub(i * chunk))).collect()
            };
            if parts.iter().try_fold(0u64, |a, &p| a.checked_add(p)) != Some(size) {
                return Err(Fail::Here(format!("split {parts:?} does not sum to {size}")));
            }
            Ok(parts
                .iter()
                .map(|&p| {
                    let mut d = x.dims.clone();
                    d[ax] = p;
                    Tensor::new(d, x.ty)
                })
                .collect())
        }
        "Pad" => {
            let x = input(inputs, 0)?;
            let pads = if opset < 11 {
                attr_ints(node, "pads").ok_or("no pads")?
            } else {
                int_values(inputs, 1, "pads")?
            };
            let axes: Vec<usize> = match optional(inputs, 3)? {
                Some(_) => int_values(inputs, 3, "axes")?
                    .iter()
                    .map(|&a| axis(a, x.rank()))
                    .collect::<Rule<_>>()?,
                None => (0..x.rank()).collect(),
            };
            if pads.len() != 2 * axes.len() {
                return Err(Fail::Here(format!("pads {pads:?} for rank {}", x.rank())));
            }
            let mut d = x.dims.clone();
            for (j, &a) in axes.iter().enumerate() {
                let v = (d[a] as i64)
                    .checked_add(pads[j])
                    .and_then(|v| v.checked_add(pads[j + axes.len()]))
                    .unwrap_or(0);
                if v <= 0 {
                    return Err(Fail::Here(format!("pads {pads:?} leave nothing of {:?}", x.dims)));
                }
                d[a] = v as u64;
            }
            Ok(vec![Tensor::new(d, x.ty)])
        }
        "Resize" | "Upsample" => {
            let x = input(inputs, 0)?;
            let sizes = if op == "Resize" && opset >= 11 {
                match optional(inputs, 3)? {
                    Some(t) if t.elements() != Some(0) => Some(int_values(inputs, 3, "sizes")?),
                    _ => None,
                }
            } else {
                None
            };
            let axes: Vec<usize> = match attr_ints(node, "axes") {
                Some(a) => a.iter().map(|&v| axis(v, x.rank())).collect::<Rule<_>>()?,
                None => (0..x.rank()).collect(),
            };
            let mut d = x.dims.clone();
            if let Some(sizes) = sizes {
                let policy = attr_s(node, "keep_aspect_ratio_policy").unwrap_or_else(|| "stretch".into());
                if policy != "stretch" {
                    return Err(Fail::Here(format!("keep_aspect_ratio_policy '{policy}'")));
                }
                if sizes.len() != axes.len() || sizes.iter().any(|&s| s <= 0) {
                    return Err(Fail::Here(format!("sizes {sizes:?}")));
                }
                for (j, &a) in axes.iter().enumerate() {
                    d[a] = sizes[j] as u64;
                }
            } else {
                let scales: Vec<f64> = if op == "Upsample" && opset < 9 {
                    attr(node, "scales")
                        .map(|a| a.floats.iter().map(|&f| f as f64).collect())
                        .ok_or("no scales")?
                } else {
                    let slot = if op == "Upsample" || opset < 11 { 1 } else { 2 };
                    input(inputs, slot)?.floats.clone().ok_or_else(|| {
                        Fail::Here(format!(
                            "its scales (input {slot}) are computed at run time, not a constant"
                        ))
                    })?
                };
                if scales.len() != axes.len() || scales.iter().any(|&s| !(s > 0.0 && s.is_finite())) {
                    return Err(Fail::Here(format!("scales {scales:?}")));
                }
                for (j, &a) in axes.iter().enumerate() {
                    let v = (d[a] as f64 * scales[j]).floor();
                    if !(1.0..=MAX_FIELD_VALUE as f64).contains(&v) {
                        return Err(Fail::Here(format!(
                            "scale {} of dimension {} gives {v}",
                            scales[j], d[a]
                        )));
                    }
                    d[a] = v as u64;
                }
            }
            Ok(vec![Tensor::new(d, x.ty)])
        }
        "Reshape" => {
            let x = input(inputs, 0)?;
            let shape = match attr_ints(node, "shape") {
                Some(s) if opset < 5 => s,
                _ => int_values(inputs, 1, "target shape")?,
            };
            let allow_zero = attr_i(node, "allowzero").unwrap_or(0) == 1;
            let total = product(&x.dims)?;
            let mut d = Vec::with_capacity(shape.len());
            let mut infer = None;
            for (i, &s) in shape.iter().enumerate() {
                match s {
                    -1 if infer.is_none() => {
                        infer = Some(i);
                        d.push(1);
                    }
                    0 if !allow_zero => d.push(*x.dims.get(i).ok_or("0 past the input's rank")?),
                    s if s >= 0 => d.push(s as u64),
                    _ => return Err(Fail::Here(format!("target shape {shape:?}"))),
                }
            }
            if let Some(i) = infer {
                let known = product(&d)?;
                if known == 0 || total % known != 0 {
                    return Err(Fail::Here(format!("cannot reshape {:?} to {shape:?}", x.dims)));
                }
                d[i] = total / known;
            }
            if product(&d)? != total {
                return Err(Fail::Here(format!("cannot reshape {:?} to {shape:?}", x.dims)));
            }
            let mut out = Tensor::new(d, x.ty);
            out.ints = x.ints.clone();
            Ok(vec![out])
        }
        "Flatten" => {
            let x = input(inputs, 0)?;
            let a = attr_i(node, "axis").unwrap_or(1);
            let a = if a < 0 { a + x.rank() as i64 } else { a };
            if !(0..=x.rank() as i64).contains(&a) {
                return Err(Fail::Here(format!("axis {a} for rank {}", x.rank())));
            }
            let (l, r) = x.dims.split_at(a as usize);
            Ok(vec![Tensor::new(vec![product(l)?, product(r)?], x.ty)])
        }
        "Squeeze" | "Unsqueeze" => {
            let x = input(inputs, 0)?;
            let axes = match attr_ints(node, "axes") {
                Some(a) => Some(a),
                None if optional(inputs, 1)?.is_some() => Some(int_values(inputs, 1, "axes")?),
                None => None,
            };
            let mut out = if op == "Squeeze" {
                let remove: Vec<usize> = match axes {
                    Some(a) => a.iter().map(|&v| axis(v, x.rank())).collect::<Rule<_>>()?,
                    None => (0..x.rank()).filter(|&i| x.dims[i] == 1).collect(),
                };
                if remove.iter().any(|&i| x.dims[i] != 1) {
                    return Err(Fail::Here(format!("cannot squeeze {:?} on axes {remove:?}", x.dims)));
                }
                Tensor::new(
                    x.dims
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !remove.contains(i))
                        .map(|(_, &d)| d)
                        .collect(),
                    x.ty,
                )
            } else {
                let axes = axes.ok_or("no axes")?;
                let rank = x.rank() + axes.len();
                let mut insert: Vec<usize> = axes.iter().map(|&v| axis(v, rank)).collect::<Rule<_>>()?;
                insert.sort_unstable();
                let mut rest = x.dims.iter();
                let d = (0..rank)
                    .map(|i| {
                        if insert.contains(&i) {
                            Some(1)
                        } else {
                            rest.next().copied()
                        }
                    })
                    .collect::<Option<Vec<u64>>>()
                    .ok_or("repeated axes")?;
                Tensor::new(d, x.ty)
            };
            out.ints = x.ints.clone();
            out.floats = x.floats.clone();
            Ok(vec![out])
        }
        "Transpose" => {
            let x = input(inputs, 0)?;
            let perm: Vec<usize> = match attr_ints(node, "perm") {
                Some(p) => p.iter().map(|&v| axis(v, x.rank())).collect::<Rule<_>>()?,
                None => (0..x.rank()).rev().collect(),
            };
            if perm.len() != x.rank() {
                return Err(Fail::Here(format!("perm {perm:?} for rank {}", x.rank())));
            }
            Ok(vec![Tensor::new(perm.iter().map(|&p| x.dims[p]).collect(), x.ty)])
        }
        "Gemm" => {
            let a = input(inputs, 0)?;
            let b = input(inputs, 1)?;
            if a.rank() != 2 || b.rank() != 2 {
                return Err("Gemm of inputs that are not matrices".into());
            }
            let m = if attr_i(node, "transA").unwrap_or(0) == 1 {
                a.dims[1]
            } else {
                a.dims[0]
            };
            let n = if attr_i(node, "transB").unwrap_or(0) == 1 {
                b.dims[0]
            } else {
                b.dims[1]
            };
            Ok(vec![Tensor::new(vec![m, n], a.ty)])
        }
        "MatMul" => {
            let a = input(inputs, 0)?;
            let b = input(inputs, 1)?;
            if a.rank() == 0 || b.rank() == 0 {
                return Err("MatMul of a scalar".into());
            }
            let mut ad = a.dims.clone();
            let mut bd = b.dims.clone();
            let (a1, b1) = (ad.len() == 1, bd.len() == 1);
            if a1 {
                ad.insert(0, 1);
            }
            if b1 {
                bd.push(1);
            }
            let (m, ka) = (ad[ad.len() - 2], ad[ad.len() - 1]);
            let (kb, n) = (bd[bd.len() - 2], bd[bd.len() - 1]);
            if ka != kb {
                return Err(Fail::Here(format!("MatMul of {:?} and {:?}", a.dims, b.dims)));
            }
            let mut d = broadcast(&[&ad[..ad.len() - 2], &bd[..bd.len() - 2]])?;
            if !a1 {
                d.push(m);
            }
            if !b1 {
                d.push(n);
            }
            Ok(vec![Tensor::new(d, a.ty)])
        }
        "Shape" => {
            let x = input(inputs, 0)?;
            let r = x.rank() as i64;
            let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let start = clamp(attr_i(node, "start").unwrap_or(0));
            let end = clamp(attr_i(node, "end").unwrap_or(r)).max(start);
            let vals: Vec<i64> = x.dims[start..end].iter().map(|&d| d as i64).collect();
            let mut out = Tensor::new(vec![vals.len() as u64], DataType::Int64 as i32);
            out.ints = Some(vals);
            Ok(vec![out])
        }
        "Size" => {
            let x = input(inputs, 0)?;
            let mut out = Tensor::new(vec![], DataType::Int64 as i32);
            out.ints = Some(vec![product(&x.dims)? as i64]);
            Ok(vec![out])
        }
        "Gather" => {
            let x = input(inputs, 0)?;
            let idx = input(inputs, 1)?;
            let ax = axis(attr_i(node, "axis").unwrap_or(0), x.rank())?;
            let mut d = x.dims[..ax].to_vec();
            d.extend_from_slice(&idx.dims);
            d.extend_from_slice(&x.dims[ax + 1..]);
            let mut out = Tensor::new(d, x.ty);
            if let (Some(xv), Some(iv), 1) = (&x.ints, &idx.ints, x.rank()) {
                let n = xv.len() as i64;
                out.ints = iv
                    .iter()
                    .map(|&i| xv.get((if i < 0 { i + n } else { i }) as usize).copied())
                    .collect();
            }
            Ok(vec![out])
        }
        "Constant" => {
            let a = node.attribute.first().ok_or("no value")?;
            let mut out = match a.name.as_deref() {
                Some("value") => {
                    let t = a.t.as_ref().ok_or("no value tensor")?;
                    match initializer(t) {
                        Ok(t) => (*t).clone(),
                        Err(u) => return Err(Fail::Here(u.why.clone())),
                    }
                }
                Some("value_int") => {
                    let mut t = Tensor::new(vec![], DataType::Int64 as i32);
                    t.ints = a.i.map(|v| vec![v]);
                    t
                }
                Some("value_ints") => {
                    let mut t = Tensor::new(vec![a.ints.len() as u64], DataType::Int64 as i32);
                    t.ints = Some(a.ints.clone());
                    t
                }
                Some("value_float") => {
                    let mut t = Tensor::new(vec![], DataType::Float as i32);
                    t.floats = a.f.map(|v| vec![v as f64]);
                    t
                }
                Some("value_floats") => {
                    let mut t = Tensor::new(vec![a.floats.len() as u64], DataType::Float as i32);
                    t.floats = Some(a.floats.iter().map(|&f| f as f64).collect());
                    t
                }
                other => return Err(Fail::Here(format!("Constant of attribute {other:?}"))),
            };
            if out.floats.is_none() {
                out.floats = out.ints.as_ref().map(|v| v.iter().map(|&i| i as f64).collect());
            }
            Ok(vec![out])
        }
        "ConstantOfShape" => {
            let shape = int_values(inputs, 0, "shape")?;
            if shape.iter().any(|&d| d < 0) {
                return Err(Fail::Here(format!("shape {shape:?}")));
            }
            let ty = attr(node, "value")
                .and_then(|a| a.t.as_ref())
                .and_then(|t| t.data_type)
                .unwrap_or(DataType::Float as i32);
            Ok(vec![Tensor::new(shape.iter().map(|&d| d as u64).collect(), ty)])
        }
        "Expand" => {
            let x = input(inputs, 0)?;
            let shape: Vec<u64> = int_values(inputs, 1, "shape")?
                .iter()
                .map(|&d| d.max(0) as u64)
                .collect();
            Ok(vec![Tensor::new(broadcast(&[&x.dims, &shape])?, x.ty)])
        }
        "Tile" => {
            let x = input(inputs, 0)?;
            let reps = int_values(inputs, 1, "repeats")?;
            if reps.len() != x.rank() || reps.iter().any(|&r| r < 0) {
                return Err(Fail::Here(format!("repeats {reps:?}")));
            }
            let d = x
                .dims
                .iter()
                .zip(&reps)
                .map(|(&d, &r)| d.saturating_mul(r as u64))
                .collect();
            Ok(vec![Tensor::new(d, x.ty)])
        }
        "Slice" => {
            let x = input(inputs, 0)?;
            let (starts, ends, axes, steps) = if opset < 10 {
                (
                    attr_ints(node, "starts").ok_or("no starts")?,
                    attr_ints(node, "ends").ok_or("no ends")?,
                    attr_ints(node, "axes"),
                    None,
                )
            } else {
                (
                    int_values(inputs, 1, "starts")?,
                    int_values(inputs, 2, "ends")?,
                    match optional(inputs, 3)? {
                        Some(_) => Some(int_values(inputs, 3, "axes")?),
                        None => None,
                    },
                    match optional(inputs, 4)? {
                        Some(_) => Some(int_values(inputs, 4, "steps")?),
                        None => None,
                    },
                )
            };
            let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
            if ends.len() != starts.len() || axes.len() != starts.len() {
                return Err("starts, ends and axes of different lengths".into());
            }
            let mut d = x.dims.clone();
            let mut range = None;
            for (j, &a) in axes.iter().enumerate() {
                let a = axis(a, x.rank())?;
                let step = steps.as_ref().map_or(1, |s| s.get(j).copied().unwrap_or(1));
                if step == 0 {
                    return Err("step 0".into());
                }
                let dim = d[a] as i64;
                let norm = |v: i64, lo: i64, hi: i64| (if v < 0 { v + dim } else { v }).clamp(lo, hi);
                let (s, e) = if step > 0 {
                    (norm(starts[j], 0, dim), norm(ends[j], 0, dim))
                } else {
                    (norm(starts[j], 0, dim - 1), norm(ends[j], -1, dim - 1))
                };
                let (s128, e128, step128) = (s as i128, e as i128, step as i128);
                let len = if step > 0 {
                    if e > s {
                        (e128 - s128 + step128 - 1) / step128
                    } else {
                        0
                    }
                } else if s > e {
                    (s128 - e128 - step128 - 1) / (-step128)
                } else {
                    0
                };
                d[a] = len as u64;
                if x.rank() == 1 && step == 1 {
                    range = Some((s as usize, e.max(s) as usize));
                }
            }
            let mut out = Tensor::new(d, x.ty);
            if let (Some(v), Some((s, e))) = (&x.ints, range) {
                out.ints = v.get(s..e).map(|v| v.to_vec());
            }
            Ok(vec![out])
        }
        "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceSum" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSumExp" | "ReduceSumSquare" | "ArgMax" | "ArgMin" => {
            let x = input(inputs, 0)?;
            let keep = attr_i(node, "keepdims").unwrap_or(1) == 1;
            let axes: Vec<usize> = if op.starts_with("Arg") {
                vec![axis(attr_i(node, "axis").unwrap_or(0), x.rank())?]
            } else {
                let given = match attr_ints(node, "axes") {
                    Some(a) => Some(a),
                    None if optional(inputs, 1)?.is_some() => Some(int_values(inputs, 1, "axes")?),
                    None => None,
                };
                match given {
                    Some(a) if !a.is_empty() => a.iter().map(|&v| axis(v, x.rank())).collect::<Rule<_>>()?,
                    _ if attr_i(node, "noop_with_empty_axes").unwrap_or(0) == 1 => Vec::new(),
                    _ => (0..x.rank()).collect(),
                }
            };
            let d = x
                .dims
                .iter()
                .enumerate()
                .filter_map(|(i, &d)| match (axes.contains(&i), keep) {
                    (false, _) => Some(d),
                    (true, true) => Some(1),
                    (true, false) => None,
                })
                .collect();
            let ty = if op.starts_with("Arg") {
                DataType::Int64 as i32
            } else {
                x.ty
            };
            Ok(vec![Tensor::new(d, ty)])
        }
        "DepthToSpace" | "SpaceToDepth" => {
            let x = input(inputs, 0)?;
            let b = attr_i(node, "blocksize")
                .filter(|&b| (1..=65_536).contains(&b))
                .ok_or("no blocksize")? as u64;
            if x.rank() != 4 {
                return Err("input of rank other than 4".into());
            }
            let [n, c, h, w] = [x.dims[0], x.dims[1], x.dims[2], x.dims[3]];
            let d = if op == "DepthToSpace" {
                if c % (b * b) != 0 {
                    return Err("channels not divisible by blocksize^2".into());
                }
                vec![n, c / (b * b), h * b, w * b]
            } else {
                if h % b != 0 || w % b != 0 {
                    return Err("size not divisible by blocksize".into());
                }
                vec![n, c * b * b, h / b, w / b]
            };
            Ok(vec![Tensor::new(d, x.ty)])
        }
        _ => Err(Fail::Here(format!("tuneinfer does not know how {op} changes shapes"))),
    }
}

/// MaxPool, AveragePool, LpPool: ONNX's output size, with `ceil_mode` (a last window that would
/// start in the end padding is dropped, as ONNX's reference and PyTorch do).
fn pool(node: &NodeProto, x: &Tensor) -> Rule<Tensor> {
    if x.rank() < 3 {
        return Err("input of rank below 3".into());
    }
    let spatial = x.rank() - 2;
    let kernel = attr_ints(node, "kernel_shape").ok_or("no kernel_shape")?;
    let get = |n: &str, default: i64, len: usize| -> Rule<Vec<u64>> {
        let v = attr_ints(node, n).unwrap_or_else(|| vec![default; len]);
        if v.len() != len || v.iter().any(|&x| x < 0 || (default == 1 && x < 1)) {
            return Err(Fail::Here(format!("{n} {v:?}")));
        }
        Ok(v.iter().map(|&x| x as u64).collect())
    };
    if kernel.len() != spatial || kernel.iter().any(|&k| k < 1) {
        return Err(Fail::Here(format!("kernel_shape {kernel:?}")));
    }
    let kernel: Vec<u64> = kernel.iter().map(|&k| k as u64).collect();
    let strides = get("strides", 1, spatial)?;
    let dilations = get("dilations", 1, spatial)?;
    let ceil = attr_i(node, "ceil_mode").unwrap_or(0) == 1;
    let auto_pad = attr_s(node, "auto_pad").unwrap_or_else(|| "NOTSET".into());
    let mut d = x.dims[..2].to_vec();
    for i in 0..spatial {
        let input = x.dims[2 + i];
        let span = dilations[i].saturating_mul(kernel[i] - 1).saturating_add(1);
        let out = match auto_pad.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => input.div_ceil(strides[i]),
            "VALID" => {
                if input < span {
                    return Err("window larger than the input".into());
                }
                (input - span) / strides[i] + 1
            }
            "NOTSET" | "" => {
                let pads = get("pads", 0, 2 * spatial)?;
                let padded = input.saturating_add(pads[i]).saturating_add(pads[i + spatial]);
                if padded < span {
                    return Err("window larger than the padded input".into());
                }
                let room = padded - span;
                let mut out = if ceil {
                    room.div_ceil(strides[i])
                } else {
                    room / strides[i]
                } + 1;
                if ceil && (out - 1).saturating_mul(strides[i]) >= input.saturating_add(pads[i]) {
                    out -= 1;
                }
                out
            }
            other => return Err(Fail::Here(format!("auto_pad '{other}'"))),
        };
        d.push(out);
    }
    Ok(Tensor::new(d, x.ty))
}
