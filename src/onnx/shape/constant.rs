//! Ops whose output is a constant or a shape: `Constant`, `ConstantOfShape`, `Shape`, `Size`.
//! Their values are kept (the shapes a network computes for its `Reshape`s start here).

use super::super::graph::{initializer, Info, Tensor};
use super::super::proto::{tensor_proto::DataType, NodeProto};
use super::reshape::product;
use super::{attr, attr_i, input, int_values, Fail, Rule};

/// The input's dims as an INT64 tensor, `start` and `end` (opset 15) clamped to the rank,
/// negative ones counting from its end.
pub(super) fn shape(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

/// The input's number of elements, an INT64 scalar.
pub(super) fn size(inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let x = input(inputs, 0)?;
    let mut out = Tensor::new(vec![], DataType::Int64 as i32);
    out.ints = Some(vec![product(&x.dims)? as i64]);
    Ok(vec![out])
}

/// The value of its one attribute: a tensor (read as an initializer is) or a scalar or list.
pub(super) fn constant(node: &NodeProto) -> Rule<Vec<Tensor>> {
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

/// A tensor of the shape given by its input, of its `value`'s type (FLOAT by default).
pub(super) fn constant_of_shape(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

#[cfg(test)]
mod tests {
    use super::super::super::proto::TensorProto;
    use super::super::testing::*;
    use super::*;

    fn shape(attrs: &[(&str, A)], x: &[u64]) -> Tensor {
        run(&node("Shape", 1, attrs), &[t(x)], 15).swap_remove(0)
    }

    /// Shape: the dims as INT64 values; `start` and `end` (opset 15) count from the end when
    /// negative and are clamped to the rank (the spec's shape tests).
    #[test]
    fn shape_with_start_and_end() {
        let x = [3, 4, 5];
        let all = shape(&[], &x);
        assert_eq!((all.dims, all.ty, all.ints), (vec![3], INT64, Some(vec![3, 4, 5])));
        let vals = |attrs: &[(&str, A)]| shape(attrs, &x).ints.unwrap_or_default();
        assert_eq!(vals(&[("start", A::I(1))]), [4, 5]);
        assert_eq!(vals(&[("end", A::I(1))]), [3]);
        assert_eq!(vals(&[("start", A::I(-1))]), [5]);
        assert_eq!(vals(&[("end", A::I(-1))]), [3, 4]);
        assert_eq!(vals(&[("start", A::I(-10))]), [3, 4, 5]);
        assert_eq!(vals(&[("end", A::I(10))]), [3, 4, 5]);
        assert_eq!(vals(&[("start", A::I(1)), ("end", A::I(2))]), [4]);
        let empty = shape(&[("start", A::I(2)), ("end", A::I(1))], &x);
        assert_eq!((empty.dims, empty.ints), (vec![0], Some(vec![])));
        let scalar = shape(&[], &[]);
        assert_eq!((scalar.dims, scalar.ints), (vec![0], Some(vec![])));
    }

    /// Size: the number of elements, an INT64 scalar.
    #[test]
    fn size() {
        let out = run(&node("Size", 1, &[]), &[t(&[2, 3, 4])], 17).swap_remove(0);
        assert_eq!((out.dims, out.ty, out.ints), (vec![], INT64, Some(vec![24])));
        let out = run(&node("Size", 1, &[]), &[t(&[])], 17).swap_remove(0);
        assert_eq!(out.ints, Some(vec![1]));
    }

    /// Constant: a tensor (its values read when stored), or a scalar or list of ints or floats;
    /// integers get float values too.
    #[test]
    fn constant_values() {
        let out = run(&node("Constant", 1, &[("value_ints", A::Ints(&[1, 2, 3]))]), &[], 17).swap_remove(0);
        assert_eq!((out.dims, out.ty, out.ints), (vec![3], INT64, Some(vec![1, 2, 3])));
        assert_eq!(out.floats, Some(vec![1.0, 2.0, 3.0]));
        let out = run(&node("Constant", 1, &[("value_int", A::I(-4))]), &[], 17).swap_remove(0);
        assert_eq!((out.dims, out.ints), (vec![], Some(vec![-4])));
        let out = run(
            &node("Constant", 1, &[("value_floats", A::Floats(&[0.5, 2.0]))]),
            &[],
            17,
        )
        .swap_remove(0);
        assert_eq!(
            (out.dims, out.ty, out.ints, out.floats),
            (vec![2], FLOAT, None, Some(vec![0.5, 2.0]))
        );
        let mut n = node("Constant", 1, &[("value", A::I(0))]);
        n.attribute[0].t = Some(TensorProto {
            dims: vec![2, 2],
            data_type: Some(INT64),
            int64_data: vec![1, 2, 3, 4],
            ..Default::default()
        });
        let out = run(&n, &[], 17).swap_remove(0);
        assert_eq!(
            (out.dims, out.ty, out.ints),
            (vec![2, 2], INT64, Some(vec![1, 2, 3, 4]))
        );
    }

    #[test]
    fn constants_that_cannot_be_read_are_refused() {
        assert!(fails(&node("Constant", 1, &[]), &[], 17).contains("no value"));
        assert!(fails(&node("Constant", 1, &[("value", A::I(0))]), &[], 17).contains("no value tensor"));
        let why = fails(&node("Constant", 1, &[("sparse_value", A::I(0))]), &[], 17);
        assert!(why.contains("Constant of attribute Some(\"sparse_value\")"), "{why}");
        let mut n = node("Constant", 1, &[("value", A::I(0))]);
        n.attribute[0].t = Some(TensorProto {
            dims: vec![-1],
            ..Default::default()
        });
        assert!(fails(&n, &[], 17).contains("out of range"));
    }

    /// ConstantOfShape: the shape its input gives, of its value's type (FLOAT by default).
    #[test]
    fn constant_of_shape() {
        let out = run(&node("ConstantOfShape", 1, &[]), &[ints(&[2, 3])], 17).swap_remove(0);
        assert_eq!((out.dims, out.ty), (vec![2, 3], FLOAT));
        let mut n = node("ConstantOfShape", 1, &[("value", A::I(0))]);
        n.attribute[0].t = Some(TensorProto {
            dims: vec![1],
            data_type: Some(INT64),
            int64_data: vec![0],
            ..Default::default()
        });
        assert_eq!(run(&n, &[ints(&[4])], 17)[0].ty, INT64);
        assert_eq!(
            dims(&node("ConstantOfShape", 1, &[]), &[ints(&[])], 17),
            Vec::<u64>::new()
        );
        assert!(fails(&node("ConstantOfShape", 1, &[]), &[ints(&[2, -1])], 17).contains("shape [2, -1]"));
        assert!(fails(&node("ConstantOfShape", 1, &[]), &[t(&[2])], 17).contains("computed at run time"));
    }
}
