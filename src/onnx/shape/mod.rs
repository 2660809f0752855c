//! Shape rules of the ops convolutional networks use: a node's output tensors from its inputs
//! (their shapes and element types, and the values of small integer tensors that become
//! shapes). One file per op family; [`rule`] picks the family.
//!
//! A rule fails with [`Fail::Upstream`] when an input it needs is unknown, and with
//! [`Fail::Here`] when it cannot compute a shape itself; the walk ([`super::graph`]) then takes
//! the outputs' stated shapes, or names the node in the reason.

use std::rc::Rc;

use super::graph::{Info, Tensor, Unknown};
use super::proto::{AttributeProto, NodeProto};

mod constant;
mod elementwise;
mod linear;
mod parts;
mod pool;
mod reduce;
mod reshape;
mod resize;

/// A node rule's failure: an input is unknown (its reason passed on), or the rule itself failed.
pub(super) enum Fail {
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

/// The output tensors of a (non-convolution) node, from its inputs.
pub(super) fn rule(node: &NodeProto, op: &str, inputs: &[Option<Info>], opset: i64) -> Rule<Vec<Tensor>> {
    if elementwise::SAME_SHAPE.contains(&op) {
        return elementwise::same_shape(op, inputs);
    }
    if elementwise::BROADCAST.contains(&op) {
        return elementwise::broadcasting(op, inputs);
    }
    match op {
        "Cast" | "CastLike" => elementwise::cast(node, op, inputs),
        "MaxPool" | "AveragePool" | "LpPool" => pool::windowed(node, inputs),
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => pool::global(inputs),
        "Reshape" => reshape::reshape(node, inputs, opset),
        "Flatten" => reshape::flatten(node, inputs),
        "Squeeze" | "Unsqueeze" => reshape::squeeze(node, op, inputs),
        "Transpose" => reshape::transpose(node, inputs),
        "DepthToSpace" | "SpaceToDepth" => reshape::depth_to_space(node, op, inputs),
        "Concat" => parts::concat(node, inputs),
        "Split" => parts::split(node, inputs, opset),
        "Slice" => parts::slice(node, inputs, opset),
        "Gather" => parts::gather(node, inputs),
        "Pad" => parts::pad(node, inputs, opset),
        "Expand" => parts::expand(inputs),
        "Tile" => parts::tile(inputs),
        "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceSum" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSumExp" | "ReduceSumSquare" | "ArgMax" | "ArgMin" => reduce::reduce(node, op, inputs),
        "Gemm" => linear::gemm(node, inputs),
        "MatMul" => linear::matmul(inputs),
        "Resize" | "Upsample" => resize::resize(node, op, inputs, opset),
        "Shape" => constant::shape(node, inputs),
        "Size" => constant::size(inputs),
        "Constant" => constant::constant(node),
        "ConstantOfShape" => constant::constant_of_shape(node, inputs),
        _ => Err(Fail::Here(format!("tuneinfer does not know how {op} changes shapes"))),
    }
}

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

/// The given inputs, in order (the absent optional ones left out).
fn given(inputs: &[Option<Info>]) -> Rule<Vec<Rc<Tensor>>> {
    let mut ts = Vec::new();
    for i in 0..inputs.len() {
        if let Some(t) = optional(inputs, i)? {
            ts.push(t);
        }
    }
    Ok(ts)
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

/// Builders for the families' tests: nodes with attributes, inputs with shapes and values, and
/// [`rule`] run on them.
#[cfg(test)]
mod testing {
    use std::rc::Rc;

    use super::super::graph::{Tensor, Unknown};
    use super::super::proto::{tensor_proto::DataType, AttributeProto, NodeProto};
    use super::{rule, Fail};

    pub(in crate::onnx) use super::super::graph::Info;

    pub const FLOAT: i32 = DataType::Float as i32;
    pub const INT64: i32 = DataType::Int64 as i32;

    /// An attribute value.
    pub enum A {
        I(i64),
        Ints(&'static [i64]),
        S(&'static str),
        Floats(&'static [f32]),
    }

    /// A node of `op` with one output per `outputs` and the given attributes.
    pub fn node(op: &str, outputs: usize, attrs: &[(&str, A)]) -> NodeProto {
        NodeProto {
            name: Some("n".into()),
            op_type: Some(op.into()),
            output: (0..outputs).map(|i| format!("y{i}")).collect(),
            attribute: attrs
                .iter()
                .map(|(name, v)| {
                    let mut a = AttributeProto {
                        name: Some(name.to_string()),
                        ..Default::default()
                    };
                    match v {
                        A::I(i) => a.i = Some(*i),
                        A::Ints(v) => a.ints = v.to_vec(),
                        A::S(s) => a.s = Some(s.as_bytes().to_vec()),
                        A::Floats(v) => a.floats = v.to_vec(),
                    }
                    a
                })
                .collect(),
            ..Default::default()
        }
    }

    /// A float tensor of these dims, values unknown.
    pub fn t(dims: &[u64]) -> Option<Info> {
        typed(dims, FLOAT)
    }

    /// A tensor of these dims and element type, values unknown.
    pub fn typed(dims: &[u64], ty: i32) -> Option<Info> {
        Some(Ok(Rc::new(Tensor {
            dims: dims.to_vec(),
            ty,
            ints: None,
            floats: None,
        })))
    }

    /// A constant 1-D INT64 tensor of these values (a shape, axes, pads...).
    pub fn ints(v: &[i64]) -> Option<Info> {
        Some(Ok(Rc::new(Tensor {
            dims: vec![v.len() as u64],
            ty: INT64,
            ints: Some(v.to_vec()),
            floats: None,
        })))
    }

    /// A constant INT64 scalar.
    pub fn scalar(v: i64) -> Option<Info> {
        Some(Ok(Rc::new(Tensor {
            dims: vec![],
            ty: INT64,
            ints: Some(vec![v]),
            floats: None,
        })))
    }

    /// A constant 1-D FLOAT tensor of these values (scales).
    pub fn floats(v: &[f64]) -> Option<Info> {
        Some(Ok(Rc::new(Tensor {
            dims: vec![v.len() as u64],
            ty: FLOAT,
            ints: None,
            floats: Some(v.to_vec()),
        })))
    }

    /// A tensor whose shape is not known.
    pub fn unknown_input() -> Option<Info> {
        Some(Err(Rc::new(Unknown {
            why: "upstream".into(),
            usage: false,
        })))
    }

    /// The outputs of `node` at `opset`.
    pub fn run(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> Vec<Tensor> {
        let op = node.op_type.clone().unwrap_or_default();
        match rule(node, &op, inputs, opset) {
            Ok(ts) => ts,
            Err(Fail::Here(why)) => panic!("{op} failed: {why}"),
            Err(Fail::Upstream(u)) => panic!("{op} failed upstream: {}", u.why),
        }
    }

    /// Output 0's dims.
    pub fn dims(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> Vec<u64> {
        run(node, inputs, opset).swap_remove(0).dims
    }

    /// The rule's own failure (its reason); panics on success or an upstream failure.
    pub fn fails(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> String {
        let op = node.op_type.clone().unwrap_or_default();
        match rule(node, &op, inputs, opset) {
            Ok(ts) => panic!("{op} gave {:?}", ts.iter().map(|t| &t.dims).collect::<Vec<_>>()),
            Err(Fail::Here(why)) => why,
            Err(Fail::Upstream(u)) => panic!("{op} failed upstream: {}", u.why),
        }
    }

    /// Whether the rule passed an unknown input's reason on.
    pub fn upstream(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> bool {
        let op = node.op_type.clone().unwrap_or_default();
        matches!(rule(node, &op, inputs, opset), Err(Fail::Upstream(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    /// Negative axes count from the end: -1 is the last of rank 4, -4 the first; -5 and 4 are
    /// out of range.
    #[test]
    fn axes_count_from_the_end_when_negative() {
        assert!(matches!(axis(-1, 4), Ok(3)));
        assert!(matches!(axis(-4, 4), Ok(0)));
        assert!(matches!(axis(3, 4), Ok(3)));
        assert!(matches!(axis(-5, 4), Err(Fail::Here(_))));
        assert!(matches!(axis(4, 4), Err(Fail::Here(_))));
        assert!(matches!(axis(0, 0), Err(Fail::Here(_))));
    }

    /// An op the reader does not know is refused with its name; the walk adds the node's.
    #[test]
    fn an_unknown_op_is_refused_by_name() {
        let why = fails(&node("NonMaxSuppression", 1, &[]), &[t(&[1, 4])], 17);
        assert!(why.contains("NonMaxSuppression"), "{why}");
    }

    /// A missing required input is named; an unknown one passes its reason on.
    #[test]
    fn missing_and_unknown_inputs() {
        let why = fails(&node("Relu", 1, &[]), &[], 17);
        assert!(why.contains("input 0 is missing"), "{why}");
        assert!(upstream(&node("Relu", 1, &[]), &[unknown_input()], 17));
        assert!(upstream(&node("Add", 1, &[]), &[t(&[2]), unknown_input()], 17));
    }

    /// Values that must be constants refuse when computed at run time.
    #[test]
    fn run_time_values_are_refused() {
        let why = fails(&node("Reshape", 1, &[]), &[t(&[2, 3]), t(&[2])], 17);
        assert!(why.contains("target shape (input 1) is computed at run time"), "{why}");
    }
}
