//! Reductions: `Reduce*` over `axes`, `ArgMax`/`ArgMin` over one `axis`.

use super::super::graph::{Info, Tensor};
use super::super::proto::{tensor_proto::DataType, NodeProto};
use super::{attr_i, attr_ints, axis, input, int_values, optional, Rule};

/// The reduced axes kept as 1 (`keepdims`, the default) or removed. `axes` is an attribute
/// (an input from opset 18, 13 for ReduceSum); none means all, or none with
/// `noop_with_empty_axes`. ArgMax and ArgMin give INT64.
pub(super) fn reduce(node: &NodeProto, op: &str, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    fn reduce(op: &str, attrs: &[(&str, A)], x: &[u64]) -> Vec<u64> {
        dims(&node(op, 1, attrs), &[t(x)], 17)
    }

    /// The spec's reduce tests on data `[3, 2, 2]`: axes `[1]` kept as 1 by default (keepdims),
    /// removed with keepdims 0; `[-2]` is axis 1; no axes reduce every axis.
    #[test]
    fn axes_keepdims_and_negative_axes() {
        let x = [3, 2, 2];
        assert_eq!(reduce("ReduceMean", &[("axes", A::Ints(&[1]))], &x), [3, 1, 2]);
        assert_eq!(
            reduce("ReduceSum", &[("axes", A::Ints(&[1])), ("keepdims", A::I(0))], &x),
            [3, 2]
        );
        assert_eq!(reduce("ReduceMax", &[("axes", A::Ints(&[-2]))], &x), [3, 1, 2]);
        assert_eq!(
            reduce("ReduceMin", &[("axes", A::Ints(&[0, -1])), ("keepdims", A::I(0))], &x),
            [2]
        );
        assert_eq!(reduce("ReduceL2", &[], &x), [1, 1, 1]);
        assert_eq!(reduce("ReduceProd", &[("keepdims", A::I(0))], &x), Vec::<u64>::new());
        let why = fails(&node("ReduceMean", 1, &[("axes", A::Ints(&[3]))]), &[t(&x)], 17);
        assert!(why.contains("axis 3 out of range"), "{why}");
    }

    /// From opset 18 (13 for ReduceSum) the axes are input 1; empty or absent axes reduce
    /// everything, or nothing with noop_with_empty_axes.
    #[test]
    fn axes_as_an_input_and_noop_with_empty_axes() {
        let x = t(&[3, 2, 2]);
        assert_eq!(
            dims(&node("ReduceSum", 1, &[]), &[x.clone(), ints(&[-1])], 18),
            [3, 2, 1]
        );
        assert_eq!(
            dims(&node("ReduceMean", 1, &[]), &[x.clone(), ints(&[])], 18),
            [1, 1, 1]
        );
        let noop = node("ReduceSum", 1, &[("noop_with_empty_axes", A::I(1))]);
        assert_eq!(dims(&noop, std::slice::from_ref(&x), 18), [3, 2, 2]);
        assert_eq!(dims(&noop, &[x.clone(), ints(&[])], 18), [3, 2, 2]);
        assert_eq!(dims(&noop, &[x.clone(), ints(&[0])], 18), [1, 2, 2]);
        let why = fails(&node("ReduceSum", 1, &[]), &[x, t(&[1])], 18);
        assert!(why.contains("axes (input 1) is computed at run time"), "{why}");
    }

    /// ArgMax and ArgMin: one axis (default 0), INT64.
    #[test]
    fn arg_max_and_min() {
        let x = t(&[2, 3, 4]);
        let out = &run(&node("ArgMax", 1, &[]), std::slice::from_ref(&x), 17)[0];
        assert_eq!((out.dims.as_slice(), out.ty), (&[1, 3, 4][..], INT64));
        let n = node("ArgMin", 1, &[("axis", A::I(-1)), ("keepdims", A::I(0))]);
        assert_eq!(dims(&n, &[x], 17), [2, 3]);
    }
}
