//! Ops that rearrange a tensor's elements into another shape: `Reshape`, `Flatten`, `Squeeze`,
//! `Unsqueeze`, `Transpose`, `DepthToSpace`, `SpaceToDepth`. Reshape, Squeeze and Unsqueeze
//! carry a small tensor's values.

use super::super::graph::{Info, Tensor};
use super::super::proto::NodeProto;
use super::{attr_i, attr_ints, axis, input, int_values, optional, Fail, Rule};

/// The number of elements of these dims.
pub(super) fn product(dims: &[u64]) -> Rule<u64> {
    dims.iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Fail::Here("too many elements".into()))
}

/// The target shape as an attribute (before opset 5) or an input: 0 copies the input's
/// dimension (unless `allowzero`), one -1 is inferred.
pub(super) fn reshape(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> Rule<Vec<Tensor>> {
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

/// A matrix: the axes before `axis` (default 1, negative from the end, in 0..=rank) and those
/// from it.
pub(super) fn flatten(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let x = input(inputs, 0)?;
    let a = attr_i(node, "axis").unwrap_or(1);
    let a = if a < 0 { a + x.rank() as i64 } else { a };
    if !(0..=x.rank() as i64).contains(&a) {
        return Err(Fail::Here(format!("axis {a} for rank {}", x.rank())));
    }
    let (l, r) = x.dims.split_at(a as usize);
    Ok(vec![Tensor::new(vec![product(l)?, product(r)?], x.ty)])
}

/// `axes` as an attribute (before opset 13) or an input. Squeeze without axes removes every 1;
/// Unsqueeze's axes are of the output's rank.
pub(super) fn squeeze(node: &NodeProto, op: &str, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

/// `perm`, by default the axes reversed.
pub(super) fn transpose(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

/// DepthToSpace and SpaceToDepth of an NCHW tensor by `blocksize`.
pub(super) fn depth_to_space(node: &NodeProto, op: &str, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    fn reshape(x: &[u64], shape: &[i64]) -> Vec<u64> {
        dims(&node("Reshape", 1, &[]), &[t(x), ints(shape)], 17)
    }

    /// The spec's reshape tests on `[2, 3, 4]`: 0 copies the input's dimension at its index,
    /// -1 takes what is left.
    #[test]
    fn reshape_with_zero_and_minus_one() {
        assert_eq!(reshape(&[2, 3, 4], &[4, 2, 3]), [4, 2, 3]);
        assert_eq!(reshape(&[2, 3, 4], &[2, 12]), [2, 12]);
        assert_eq!(reshape(&[2, 3, 4], &[2, 3, 2, 2]), [2, 3, 2, 2]);
        assert_eq!(reshape(&[2, 3, 4], &[24]), [24]);
        assert_eq!(reshape(&[2, 3, 4], &[2, -1, 2]), [2, 6, 2]);
        assert_eq!(reshape(&[2, 3, 4], &[-1, 2, 3, 4]), [1, 2, 3, 4]);
        assert_eq!(reshape(&[2, 3, 4], &[2, 0, 4, 1]), [2, 3, 4, 1]);
        assert_eq!(reshape(&[2, 3, 4], &[2, 0, 1, -1]), [2, 3, 1, 4]);
        assert_eq!(reshape(&[1, 512, 1, 1], &[0, -1]), [1, 512]);
        assert_eq!(reshape(&[1, 1], &[]), Vec::<u64>::new());
    }

    /// allowzero 1: a 0 is a dimension of 0, not a copy (the spec's reshape_allowzero_reordered:
    /// `[0, 3, 4]` to `[3, 4, 0]`); without it the 0 copies the 4, and 48 elements are not 0.
    #[test]
    fn reshape_allowzero() {
        let n = node("Reshape", 1, &[("allowzero", A::I(1))]);
        assert_eq!(dims(&n, &[t(&[0, 3, 4]), ints(&[3, 4, 0])], 17), [3, 4, 0]);
        let why = fails(&node("Reshape", 1, &[]), &[t(&[0, 3, 4]), ints(&[3, 4, 0])], 17);
        assert!(why.contains("cannot reshape"), "{why}");
    }

    #[test]
    fn reshapes_that_cannot_be_are_refused() {
        let f = |x: &[u64], shape: &[i64]| fails(&node("Reshape", 1, &[]), &[t(x), ints(shape)], 17);
        assert!(f(&[2, 3, 4], &[5, -1]).contains("cannot reshape [2, 3, 4] to [5, -1]"));
        assert!(f(&[2, 3, 4], &[2, 3, 5]).contains("cannot reshape"));
        assert!(f(&[2, 3, 4], &[-1, -1]).contains("target shape [-1, -1]"));
        assert!(f(&[2, 3, 4], &[-2, 12]).contains("target shape"));
        assert!(f(&[2, 12], &[2, 3, 0]).contains("0 past the input's rank"));
        assert!(f(&[0, 4], &[0, -1]).contains("cannot reshape"));
    }

    /// Opset 1 to 4 give the shape as an attribute; from 5 it is input 1, the attribute ignored.
    #[test]
    fn reshape_before_opset_5() {
        let n = node("Reshape", 1, &[("shape", A::Ints(&[6, -1]))]);
        assert_eq!(dims(&n, &[t(&[2, 3, 4])], 4), [6, 4]);
        assert_eq!(dims(&n, &[t(&[2, 3, 4]), ints(&[4, 6])], 5), [4, 6]);
        assert!(fails(&n, &[t(&[2, 3, 4])], 5).contains("input 1 is missing"));
    }

    /// A shape being reshaped keeps its values.
    #[test]
    fn reshape_keeps_values() {
        let out = &run(&node("Reshape", 1, &[]), &[ints(&[1, 2]), ints(&[1, 2])], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[1, 2][..], Some(vec![1, 2])));
    }

    /// The spec's flatten tests on `[2, 3, 4, 5]`: axis 0 to 4, negative counting from the end.
    #[test]
    fn flatten() {
        let f = |a: Option<i64>| {
            let attrs: Vec<(&str, A)> = a.map(|a| ("axis", A::I(a))).into_iter().collect();
            dims(&node("Flatten", 1, &attrs), &[t(&[2, 3, 4, 5])], 17)
        };
        assert_eq!(f(None), [2, 60]);
        assert_eq!(f(Some(0)), [1, 120]);
        assert_eq!(f(Some(2)), [6, 20]);
        assert_eq!(f(Some(4)), [120, 1]);
        assert_eq!(f(Some(-1)), [24, 5]);
        assert_eq!(f(Some(-4)), [1, 120]);
        let why = fails(&node("Flatten", 1, &[("axis", A::I(5))]), &[t(&[2, 3, 4, 5])], 17);
        assert!(why.contains("axis 5 for rank 4"), "{why}");
        assert!(fails(&node("Flatten", 1, &[("axis", A::I(-5))]), &[t(&[2, 3, 4, 5])], 17).contains("axis -1"));
    }

    /// Squeeze: the given axes (each of size 1, negative from the end), or every 1.
    #[test]
    fn squeeze() {
        let x = || t(&[1, 3, 1, 5]);
        assert_eq!(
            dims(&node("Squeeze", 1, &[("axes", A::Ints(&[0]))]), &[x()], 11),
            [3, 1, 5]
        );
        assert_eq!(
            dims(&node("Squeeze", 1, &[("axes", A::Ints(&[-2]))]), &[x()], 11),
            [1, 3, 5]
        );
        assert_eq!(dims(&node("Squeeze", 1, &[]), &[x()], 11), [3, 5]);
        // From opset 13 the axes are input 1.
        assert_eq!(dims(&node("Squeeze", 1, &[]), &[x(), ints(&[0, 2])], 13), [3, 5]);
        assert_eq!(dims(&node("Squeeze", 1, &[]), &[x(), ints(&[2])], 13), [1, 3, 5]);
        let why = fails(&node("Squeeze", 1, &[]), &[x(), ints(&[1])], 13);
        assert!(why.contains("cannot squeeze [1, 3, 1, 5] on axes [1]"), "{why}");
        assert_eq!(dims(&node("Squeeze", 1, &[]), &[t(&[1])], 13), Vec::<u64>::new());
    }

    /// Unsqueeze: the axes are of the output's rank, in any order (the spec's unsqueeze tests).
    #[test]
    fn unsqueeze() {
        let u = |x: &[u64], axes: &[i64]| dims(&node("Unsqueeze", 1, &[]), &[t(x), ints(axes)], 13);
        assert_eq!(u(&[3, 4, 5], &[0]), [1, 3, 4, 5]);
        assert_eq!(u(&[3, 4, 5], &[3]), [3, 4, 5, 1]);
        assert_eq!(u(&[3, 4, 5], &[1, 4]), [3, 1, 4, 5, 1]);
        assert_eq!(u(&[3, 4, 5], &[2, 0, 1]), [1, 1, 1, 3, 4, 5]);
        assert_eq!(u(&[3, 4, 5], &[5, 4, 2]), [3, 4, 1, 5, 1, 1]);
        assert_eq!(u(&[1, 3, 1, 5], &[-2]), [1, 3, 1, 1, 5]);
        assert_eq!(u(&[], &[0]), [1]);
        // Before opset 13, an attribute.
        let n = node("Unsqueeze", 1, &[("axes", A::Ints(&[0, -1]))]);
        assert_eq!(dims(&n, &[t(&[3, 4])], 11), [1, 3, 4, 1]);
        let f = |axes: &[i64]| fails(&node("Unsqueeze", 1, &[]), &[t(&[3, 4]), ints(axes)], 13);
        assert!(f(&[1, 1]).contains("repeated axes"));
        assert!(f(&[4]).contains("axis 4 out of range for rank 3"));
        assert!(fails(&node("Unsqueeze", 1, &[]), &[t(&[3])], 13).contains("no axes"));
    }

    /// A shape squeezed or unsqueezed keeps its values (`x.shape[0:1]` to a scalar and back).
    #[test]
    fn squeeze_and_unsqueeze_keep_values() {
        let out = &run(&node("Squeeze", 1, &[]), &[ints(&[8]), ints(&[0])], 13)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[][..], Some(vec![8])));
        let out = &run(&node("Unsqueeze", 1, &[]), &[scalar(8), ints(&[0])], 13)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[1][..], Some(vec![8])));
    }

    /// Transpose: perm, by default the axes reversed.
    #[test]
    fn transpose() {
        let x = || t(&[2, 3, 4]);
        assert_eq!(dims(&node("Transpose", 1, &[]), &[x()], 17), [4, 3, 2]);
        assert_eq!(
            dims(&node("Transpose", 1, &[("perm", A::Ints(&[1, 0, 2]))]), &[x()], 17),
            [3, 2, 4]
        );
        assert_eq!(
            dims(&node("Transpose", 1, &[("perm", A::Ints(&[0, 2, 1]))]), &[x()], 17),
            [2, 4, 3]
        );
        let why = fails(&node("Transpose", 1, &[("perm", A::Ints(&[1, 0]))]), &[x()], 17);
        assert!(why.contains("perm [1, 0] for rank 3"), "{why}");
    }

    /// DepthToSpace `[N, C, H, W]` to `[N, C / b^2, H * b, W * b]`; SpaceToDepth the reverse.
    #[test]
    fn depth_to_space_and_back() {
        let b2 = [("blocksize", A::I(2))];
        assert_eq!(
            dims(&node("DepthToSpace", 1, &b2), &[t(&[1, 8, 2, 3])], 17),
            [1, 2, 4, 6]
        );
        assert_eq!(
            dims(&node("SpaceToDepth", 1, &b2), &[t(&[1, 2, 4, 6])], 17),
            [1, 8, 2, 3]
        );
        assert!(fails(&node("DepthToSpace", 1, &b2), &[t(&[1, 6, 2, 3])], 17).contains("blocksize^2"));
        assert!(fails(&node("SpaceToDepth", 1, &b2), &[t(&[1, 2, 4, 5])], 17).contains("not divisible"));
        assert!(fails(&node("SpaceToDepth", 1, &[]), &[t(&[1, 2, 4, 4])], 17).contains("no blocksize"));
        assert!(fails(&node("DepthToSpace", 1, &b2), &[t(&[8, 2, 3])], 17).contains("rank other than 4"));
    }
}
