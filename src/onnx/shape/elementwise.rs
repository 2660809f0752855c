//! Elementwise ops: those that keep their input's shape (activations, normalisations,
//! (de)quantization...), those that broadcast their inputs (arithmetic, comparisons, `Where`),
//! and `Cast`.

use super::super::graph::{Info, Tensor, MAX_VALUES};
use super::super::proto::{tensor_proto::DataType, NodeProto};
use super::{attr_i, given, input, optional, Fail, Rule};

/// Ops that keep their first input's shape (and, for output 0, its type).
#[rustfmt::skip]
pub(super) const SAME_SHAPE: &[&str] = &[
    "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu", "HardSwish", "HardSigmoid", "Elu", "Selu", "Celu", "Softplus",
    "Softsign", "Mish", "Gelu", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round",
    "Sign", "Not", "Softmax", "LogSoftmax", "Hardmax", "LRN", "InstanceNormalization", "LayerNormalization",
    "GroupNormalization", "MeanVarianceNormalization", "BatchNormalization", "Identity", "Dropout", "ThresholdedRelu",
    "Shrink", "Sin", "Cos", "Swish", "IsNaN", "IsInf", "QuantizeLinear", "DequantizeLinear", "CumSum",
];

/// Elementwise ops with broadcasting over all their inputs.
#[rustfmt::skip]
pub(super) const BROADCAST: &[&str] = &[
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu", "Where", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Mod", "BitShift",
];

/// An op of [`SAME_SHAPE`]: its first input's shape; `Identity` keeps its values too.
pub(super) fn same_shape(op: &str, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let x = input(inputs, 0)?;
    // (De)quantization changes the type: to the scale's (float), or the zero point's.
    let ty = match op {
        "DequantizeLinear" => optional(inputs, 1)?.map_or(DataType::Float as i32, |t| t.ty),
        "QuantizeLinear" => optional(inputs, 2)?.map_or(DataType::Uint8 as i32, |t| t.ty),
        _ => x.ty,
    };
    let mut out = Tensor::new(x.dims.clone(), ty);
    if op == "Identity" {
        out.ints = x.ints.clone();
        out.floats = x.floats.clone();
    }
    Ok(vec![out])
}

/// An op of [`BROADCAST`]: its inputs' shapes broadcast; small integer arithmetic on shapes
/// (`x.size(0) * 2`...) computed.
pub(super) fn broadcasting(op: &str, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let ts = given(inputs)?;
    let shapes: Vec<&[u64]> = ts.iter().map(|t| t.dims.as_slice()).collect();
    let dims = broadcast(&shapes)?;
    let ty = match op {
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" => DataType::Bool as i32,
        "Where" => ts.get(1).map_or(0, |t| t.ty),
        _ => ts.first().map_or(0, |t| t.ty),
    };
    let mut out = Tensor::new(dims, ty);
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
    Ok(vec![out])
}

/// Numpy broadcasting of several shapes.
pub(super) fn broadcast(shapes: &[&[u64]]) -> Rule<Vec<u64>> {
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

/// `Cast` (to its `to` type) and `CastLike` (to its second input's): the shape, and the values
/// converted.
pub(super) fn cast(node: &NodeProto, op: &str, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let x = input(inputs, 0)?;
    let to = if op == "Cast" {
        attr_i(node, "to").unwrap_or(0) as i32
    } else {
        input(inputs, 1)?.ty
    };
    let mut out = Tensor::new(x.dims.clone(), to);
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

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    const BOOL: i32 = DataType::Bool as i32;

    fn add(a: &[u64], b: &[u64]) -> Vec<u64> {
        dims(&node("Add", 1, &[]), &[t(a), t(b)], 17)
    }

    /// ONNX's broadcasting (docs/Broadcasting.md): the shapes aligned on their last axes, a 1
    /// stretched, a missing leading axis a 1.
    #[test]
    fn broadcasting_of_unequal_ranks() {
        assert_eq!(add(&[2, 3, 4, 5], &[]), [2, 3, 4, 5]);
        assert_eq!(add(&[2, 3, 4, 5], &[5]), [2, 3, 4, 5]);
        assert_eq!(add(&[4, 5], &[2, 3, 4, 5]), [2, 3, 4, 5]);
        assert_eq!(add(&[1, 4, 5], &[2, 3, 1, 1]), [2, 3, 4, 5]);
        assert_eq!(add(&[3, 4, 5], &[2, 1, 1, 1]), [2, 3, 4, 5]);
        assert_eq!(add(&[1], &[1, 1]), [1, 1]);
        assert_eq!(broadcast(&[]).ok(), Some(vec![]));
    }

    #[test]
    fn shapes_that_do_not_broadcast_are_refused() {
        let why = fails(&node("Mul", 1, &[]), &[t(&[2, 3]), t(&[3, 2])], 17);
        assert!(why.contains("do not broadcast"), "{why}");
        fails(&node("Add", 1, &[]), &[t(&[4]), t(&[3])], 17);
    }

    /// Sum, Max, Min, Mean broadcast any number of inputs.
    #[test]
    fn variadic_ops_broadcast_every_input() {
        let n = node("Sum", 1, &[]);
        assert_eq!(dims(&n, &[t(&[2, 1, 4]), t(&[3, 1]), t(&[4])], 17), [2, 3, 4]);
        assert_eq!(dims(&node("Max", 1, &[]), &[t(&[5, 1])], 17), [5, 1]);
    }

    /// Comparisons and logical ops give BOOL; Where takes X's type (input 1); the others their
    /// first input's.
    #[test]
    fn element_types() {
        let out = &run(&node("Less", 1, &[]), &[t(&[2, 3]), t(&[3])], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ty), (&[2, 3][..], BOOL));
        let w = &run(
            &node("Where", 1, &[]),
            &[typed(&[3, 1], BOOL), typed(&[1, 4], INT64), typed(&[4], INT64)],
            17,
        )[0];
        assert_eq!((w.dims.as_slice(), w.ty), (&[3, 4][..], INT64));
        assert_eq!(
            run(&node("Pow", 1, &[]), &[typed(&[2], INT64), t(&[1])], 17)[0].ty,
            INT64
        );
    }

    /// Add, Sub, Mul, Div of small constant integer tensors compute their values (shapes
    /// computed in the graph); integer Div truncates.
    #[test]
    fn integer_arithmetic_on_shapes() {
        let out = &run(&node("Mul", 1, &[]), &[ints(&[3, 4]), scalar(2)], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[2][..], Some(vec![6, 8])));
        let out = &run(&node("Sub", 1, &[]), &[ints(&[5, 6]), ints(&[1])], 17)[0];
        assert_eq!(out.ints, Some(vec![4, 5]));
        let out = &run(&node("Div", 1, &[]), &[ints(&[7, -7]), scalar(2)], 17)[0];
        assert_eq!(out.ints, Some(vec![3, -3]));
        let out = &run(&node("Add", 1, &[]), &[scalar(1), scalar(2)], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[][..], Some(vec![3])));
        // Division by zero has no value; neither does an op other than the four.
        assert_eq!(run(&node("Div", 1, &[]), &[ints(&[7]), scalar(0)], 17)[0].ints, None);
        assert_eq!(run(&node("Mod", 1, &[]), &[ints(&[7]), scalar(2)], 17)[0].ints, None);
    }

    /// Activations and normalisations keep their input's shape and type; only Identity keeps
    /// its values.
    #[test]
    fn same_shape_ops_keep_the_input() {
        for op in [
            "Relu",
            "Sigmoid",
            "Softmax",
            "BatchNormalization",
            "LayerNormalization",
            "Dropout",
        ] {
            let out = &run(&node(op, 1, &[]), &[t(&[2, 3, 5, 7]), t(&[3]), t(&[3])], 17)[0];
            assert_eq!((out.dims.as_slice(), out.ty), (&[2, 3, 5, 7][..], FLOAT), "{op}");
        }
        assert_eq!(run(&node("Neg", 1, &[]), &[ints(&[1, 2])], 17)[0].ints, None);
        assert_eq!(
            run(&node("Identity", 1, &[]), &[ints(&[1, 2])], 17)[0].ints,
            Some(vec![1, 2])
        );
        assert_eq!(dims(&node("Relu", 1, &[]), &[t(&[])], 17), Vec::<u64>::new());
    }

    /// DequantizeLinear gives its scale's type (FLOAT when absent); QuantizeLinear its zero
    /// point's (UINT8 when absent).
    #[test]
    fn quantization_changes_the_type() {
        let int8 = DataType::Int8 as i32;
        let f16 = DataType::Float16 as i32;
        let x = typed(&[1, 8, 4, 4], int8);
        let out = &run(&node("DequantizeLinear", 1, &[]), &[x.clone(), typed(&[], f16)], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ty), (&[1, 8, 4, 4][..], f16));
        assert_eq!(run(&node("DequantizeLinear", 1, &[]), &[x], 17)[0].ty, FLOAT);
        let q = node("QuantizeLinear", 1, &[]);
        assert_eq!(run(&q, &[t(&[2]), t(&[])], 17)[0].ty, DataType::Uint8 as i32);
        assert_eq!(run(&q, &[t(&[2]), t(&[]), typed(&[], int8)], 17)[0].ty, int8);
    }

    /// Cast to `to`, CastLike to input 1's type; the values converted both ways.
    #[test]
    fn cast_converts_type_and_values() {
        let out = &run(&node("Cast", 1, &[("to", A::I(7))]), &[floats(&[2.0, 3.0])], 17)[0];
        assert_eq!((out.ty, out.ints.clone()), (INT64, Some(vec![2, 3])));
        let out = &run(&node("Cast", 1, &[("to", A::I(1))]), &[ints(&[4])], 17)[0];
        assert_eq!((out.ty, out.floats.clone()), (FLOAT, Some(vec![4.0])));
        let out = &run(&node("CastLike", 1, &[]), &[t(&[2, 2]), typed(&[], INT64)], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ty), (&[2, 2][..], INT64));
    }
}
