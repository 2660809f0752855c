//! ONNX networks to MIOpen convolution problems, with no GPU: the problems a framework would hand
//! MIOpen when it runs the network (`tuneinfer problems --onnx`, `userdb --onnx`, `batch --onnx`,
//! Python's `problems_from_onnx`).
//!
//! The model is decoded with `prost` ([`proto`], generated from ONNX's own `onnx.proto` by
//! `tools/onnx_proto`); weights are never read (only the dimensions of initializers matter, so a
//! model whose external data files are missing reads as well). Shapes are propagated through the
//! graph ([`graph`]): `value_info` is used where an op's shape rule is not known here. Every
//! `Conv` and `ConvTranspose` becomes one MIOpenDriver line per direction, in the form MIOpen
//! logs it (`src/driver_arguments.cpp`, `ConvArgsForMIOpenDriver`, MIOpen 2d1fd99), which
//! `batch --input` and `userdb --input` read ([`conv`] says how ONNX's attributes map).
//!
//! The library prints nothing: what a user should know (asymmetric padding rewritten, a batch
//! replaced) comes back in [`Network::notes`].

mod conv;
mod dims;
mod graph;
mod shape;
#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]
pub mod proto;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Layout, Precision};

/// The oldest and newest versions of the default (`ai.onnx`) operator set read. Older sets spell
/// several attributes differently (opset 7 is the oldest in use by exporters); the newest is the
/// newest ONNX defines (`onnx/helper.py`, `VERSION_TABLE`, ONNX 1.23: opset 28).
pub const MIN_OPSET: i64 = 7;
/// See [`MIN_OPSET`].
pub const MAX_OPSET: i64 = 28;

/// Largest model file read (ONNX's protobuf limit is 2 GiB).
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// What to derive from a network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The batch size: replaces the first dimension of the graph's inputs (needed when it is
    /// symbolic; a fixed one is replaced too, said in a note).
    pub batch: Option<u64>,
    /// Training: forward, backward data and backward weights of every convolution, except the
    /// backward data of one whose input needs no gradient (the network's input).
    pub training: bool,
    /// The data type of every problem; default: each convolution's input tensor type.
    pub precision: Option<Precision>,
    /// NCHW (default) or NHWC (channels-last, as PyTorch's `channels_last` memory format).
    pub layout: Layout,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            batch: None,
            training: false,
            precision: None,
            layout: Layout::Nchw,
        }
    }
}

/// One distinct problem of a network.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkProblem {
    /// The MIOpenDriver command line (`conv -n 32 -c 64 ... -m conv -g 1 -F 1 -t 1`).
    pub line: String,
    /// The problem MIOpen tunes for it (a `-m trans` line's is the convolution MIOpen runs).
    pub problem: ConvProblem,
    /// The first node that gave it.
    pub node: String,
    /// How many (node, direction) pairs gave it.
    pub count: usize,
}

/// The convolution problems of a network, and what the walk met.
#[derive(Debug, Clone, Default)]
pub struct Network {
    /// The distinct problems: the forward ones in graph order, then backward data, then
    /// backward weights.
    pub problems: Vec<NetworkProblem>,
    /// `Conv` and `ConvTranspose` nodes.
    pub convolutions: usize,
    /// Problems before duplicates were merged (one per convolution and direction).
    pub total: usize,
    /// The other ops whose output shapes were derived, with their counts.
    pub passed_through: BTreeMap<String, usize>,
    /// Ops whose output shape was not derived, and no convolution needed it: (op, count).
    pub not_derived: BTreeMap<String, usize>,
    /// What the user should know: asymmetric padding rewritten, the batch replaced, a grouped
    /// transposed convolution written as the convolution MIOpen runs.
    pub notes: Vec<String>,
}

impl Network {
    /// The distinct problems as MIOpenDriver lines.
    pub fn lines(&self) -> Vec<&str> {
        self.problems.iter().map(|p| p.line.as_str()).collect()
    }

    /// One line: convolutions found, distinct problems, ops passed through.
    pub fn summary(&self, name: &str) -> String {
        let ops: Vec<String> = self.passed_through.iter().map(|(op, n)| format!("{op} {n}")).collect();
        let mut s = format!(
            "{name}: {} convolution(s), {} problem(s), {} distinct; ops passed through: {}",
            self.convolutions,
            self.total,
            self.problems.len(),
            if ops.is_empty() {
                "none".to_string()
            } else {
                ops.join(", ")
            }
        );
        if !self.not_derived.is_empty() {
            let skipped: Vec<String> = self.not_derived.iter().map(|(op, n)| format!("{op} {n}")).collect();
            s.push_str(&format!(
                "; not on a convolution's path, shapes not derived: {}",
                skipped.join(", ")
            ));
        }
        s
    }
}

/// Decodes a model and checks that it is one: a graph, an `ai.onnx` operator set between
/// [`MIN_OPSET`] and [`MAX_OPSET`]. `name` names the file in errors.
pub fn read_model(bytes: &[u8], name: &str) -> Result<proto::ModelProto> {
    use prost::Message;
    if bytes.is_empty() {
        return Err(Error::format(name, "empty file: not an ONNX model"));
    }
    let model = proto::ModelProto::decode(bytes).map_err(|e| {
        Error::format(
            name,
            format!("not an ONNX model (the protobuf does not decode: {e}; truncated, or another format)"),
        )
    })?;
    let Some(graph) = &model.graph else {
        return Err(Error::format(name, "not an ONNX model: no graph"));
    };
    if model.ir_version.unwrap_or(0) <= 0 {
        return Err(Error::format(name, "not an ONNX model: no IR version"));
    }
    let opset = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
        .and_then(|o| o.version);
    match opset {
        None => {
            return Err(Error::format(
                name,
                "not an ONNX model: it imports no ai.onnx operator set",
            ))
        }
        Some(v) if !(MIN_OPSET..=MAX_OPSET).contains(&v) => {
            return Err(Error::format(
                name,
                format!(
                    "unsupported ONNX operator set {v} (read: {MIN_OPSET} to {MAX_OPSET}); convert the model \
                     with onnx.version_converter.convert_version"
                ),
            ))
        }
        Some(_) => {}
    }
    if graph.node.is_empty() {
        return Err(Error::format(name, "the ONNX graph has no nodes"));
    }
    Ok(model)
}

/// The distinct convolution problems of the ONNX model in `bytes` (`name` names it in errors).
///
/// Errors: a file that is not an ONNX model, an unsupported operator set, a convolution whose
/// input shape cannot be derived (the error names the node that stopped the walk and says what
/// to do), bad dimensions (`Format`, exit 4); a symbolic batch without [`Options::batch`]
/// (`Usage`, exit 2); a convolution MIOpen cannot run (`InvalidProblem`, exit 5).
pub fn problems_from_bytes(bytes: &[u8], name: &str, options: &Options) -> Result<Network> {
    let model = read_model(bytes, name)?;
    graph::walk(&model, name, options)
}

/// [`problems_from_bytes`] on a file (read whole; at most [`MAX_FILE_BYTES`]).
pub fn problems_from_file(path: &Path, options: &Options) -> Result<Network> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::io(path, std::io::Error::other("is a directory")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Error::format(
            path.display().to_string(),
            format!("{} bytes: larger than ONNX's 2 GiB limit", meta.len()),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    problems_from_bytes(&bytes, &path.display().to_string(), options)
}

/// Collects problems, merging duplicates (by line), in direction blocks.
#[derive(Default)]
pub(crate) struct Collector {
    by_direction: [Vec<NetworkProblem>; 3],
    index: std::collections::HashMap<String, (usize, usize)>,
    total: usize,
}

impl Collector {
    pub(crate) fn add(&mut self, line: String, problem: ConvProblem, node: &str, direction: Direction) {
        self.total += 1;
        if let Some(&(d, i)) = self.index.get(&line) {
            self.by_direction[d][i].count += 1;
            return;
        }
        let d = match direction {
            Direction::Forward => 0,
            Direction::BackwardData => 1,
            Direction::BackwardWeights => 2,
        };
        self.index.insert(line.clone(), (d, self.by_direction[d].len()));
        self.by_direction[d].push(NetworkProblem {
            line,
            problem,
            node: node.to_string(),
            count: 1,
        });
    }

    pub(crate) fn finish(self) -> (Vec<NetworkProblem>, usize) {
        let [f, b, w] = self.by_direction;
        (f.into_iter().chain(b).chain(w).collect(), self.total)
    }
}
