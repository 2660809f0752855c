//! Ops that take, join or repeat parts of tensors: `Concat`, `Split`, `Slice`, `Gather`, `Pad`,
//! `Expand`, `Tile`. Concat, Slice and Gather carry a small 1-D integer tensor's values (a shape
//! being cut and assembled).

use super::super::graph::{Info, Tensor, MAX_VALUES};
use super::super::proto::NodeProto;
use super::elementwise::broadcast;
use super::{attr_i, attr_ints, axis, given, input, int_values, optional, Fail, Rule};

pub(super) fn concat(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let ts = given(inputs)?;
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

/// `split` as an attribute (before opset 13) or an input (from 13), else `num_outputs` (18) or
/// the node's outputs: equal parts, the last smaller.
pub(super) fn split(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> Rule<Vec<Tensor>> {
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

/// `pads` as an attribute (before opset 11) or an input, `axes` an optional input (18).
pub(super) fn pad(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> Rule<Vec<Tensor>> {
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

pub(super) fn gather(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

pub(super) fn expand(inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let x = input(inputs, 0)?;
    let shape: Vec<u64> = int_values(inputs, 1, "shape")?
        .iter()
        .map(|&d| d.max(0) as u64)
        .collect();
    Ok(vec![Tensor::new(broadcast(&[&x.dims, &shape])?, x.ty)])
}

pub(super) fn tile(inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
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

/// `starts`, `ends`, `axes` as attributes (before opset 10) or inputs, with `steps` (10):
/// ONNX's clamping of starts and ends to the axis, negative ones counting from its end.
pub(super) fn slice(node: &NodeProto, inputs: &[Option<Info>], opset: i64) -> Rule<Vec<Tensor>> {
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

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    /// Concat: the inputs' sizes on `axis` (negative from the end) added; the other axes equal.
    #[test]
    fn concat() {
        let c = |axis: i64, a: &[u64], b: &[u64]| dims(&node("Concat", 1, &[("axis", A::I(axis))]), &[t(a), t(b)], 17);
        assert_eq!(c(1, &[2, 3], &[2, 5]), [2, 8]);
        assert_eq!(c(-1, &[2, 3], &[2, 5]), [2, 8]);
        assert_eq!(c(0, &[2, 3], &[4, 3]), [6, 3]);
        assert_eq!(c(-2, &[1, 2, 3], &[1, 0, 3]), [1, 2, 3]);
        let n = node("Concat", 1, &[("axis", A::I(1))]);
        assert_eq!(dims(&n, &[t(&[1, 2, 7]), t(&[1, 3, 7]), t(&[1, 4, 7])], 17), [1, 9, 7]);
        let why = fails(&node("Concat", 1, &[("axis", A::I(1))]), &[t(&[2, 3]), t(&[3, 3])], 17);
        assert!(why.contains("do not concatenate on axis 1"), "{why}");
        assert!(fails(&node("Concat", 1, &[("axis", A::I(0))]), &[t(&[2, 3]), t(&[3])], 17).contains("concatenate"));
        assert!(fails(&node("Concat", 1, &[("axis", A::I(2))]), &[t(&[2, 3]), t(&[2, 3])], 17).contains("axis 2"));
    }

    /// Concatenated 1-D shapes keep their values (`[x.size(0), -1]` built for a Reshape).
    #[test]
    fn concat_of_shapes_keeps_values() {
        let n = node("Concat", 1, &[("axis", A::I(0))]);
        let out = &run(&n, &[ints(&[1, 2]), ints(&[-1])], 17)[0];
        assert_eq!(
            (out.dims.as_slice(), out.ints.clone()),
            (&[3][..], Some(vec![1, 2, -1]))
        );
        assert_eq!(run(&n, &[ints(&[1, 2]), t(&[1])], 17)[0].ints, None);
    }

    fn split_of(x: &[u64], outputs: usize, attrs: &[(&str, A)], inputs: &[Option<Info>], opset: i64) -> Vec<Vec<u64>> {
        let mut all = vec![t(x)];
        all.extend_from_slice(inputs);
        run(&node("Split", outputs, attrs), &all, opset)
            .into_iter()
            .map(|t| t.dims)
            .collect()
    }

    /// Split: the `split` attribute (before opset 13) or input (from 13), else equal parts, one
    /// per output, or `num_outputs` (18) of ceil(size / n), the last smaller (the spec's
    /// split_1d_uneven_split_opset18: 7 in 4 is 2, 2, 2, 1).
    #[test]
    fn split() {
        assert_eq!(split_of(&[6], 3, &[], &[], 11), [[2], [2], [2]]);
        assert_eq!(split_of(&[6], 2, &[("split", A::Ints(&[2, 4]))], &[], 11), [[2], [4]]);
        assert_eq!(split_of(&[6], 2, &[], &[ints(&[2, 4])], 13), [[2], [4]]);
        assert_eq!(split_of(&[2, 6], 2, &[("axis", A::I(-1))], &[], 13), [[2, 3], [2, 3]]);
        assert_eq!(
            split_of(&[2, 6], 2, &[("axis", A::I(1))], &[ints(&[1, 5])], 13),
            [[2, 1], [2, 5]]
        );
        assert_eq!(
            split_of(&[7], 4, &[("num_outputs", A::I(4))], &[], 18),
            [[2], [2], [2], [1]]
        );
        assert_eq!(
            split_of(&[2, 8], 3, &[("axis", A::I(1)), ("num_outputs", A::I(3))], &[], 18),
            [[2, 3], [2, 3], [2, 2]]
        );
        // An empty optional input (opset 13) is no split: equal parts.
        assert_eq!(split_of(&[4, 2], 2, &[], &[None], 13), [[2, 2], [2, 2]]);
        let why = fails(&node("Split", 2, &[("split", A::Ints(&[2, 3]))]), &[t(&[6])], 11);
        assert!(why.contains("split [2, 3] does not sum to 6"), "{why}");
        assert!(fails(&node("Split", 2, &[]), &[t(&[6]), t(&[2])], 13).contains("split sizes (input 1)"));
    }

    /// Pad: the pads are `[x1_begin, x2_begin, ..., x1_end, x2_end, ...]`, negative ones
    /// cropping; an attribute before opset 11, input 1 from 11, over the axes of input 3 (18).
    #[test]
    fn pad() {
        let p = |x: &[u64], pads: &[i64]| dims(&node("Pad", 1, &[]), &[t(x), ints(pads)], 13);
        assert_eq!(p(&[1, 3, 4, 5], &[0, 0, 1, 2, 0, 0, 3, 4]), [1, 3, 8, 11]);
        assert_eq!(p(&[1, 3, 4, 5], &[0, 0, -1, 0, 0, 0, -1, 0]), [1, 3, 2, 5]);
        assert_eq!(p(&[3, 2], &[0, 2, 0, 0]), [3, 4]);
        let old = node("Pad", 1, &[("pads", A::Ints(&[0, 0, 1, 1, 0, 0, 1, 1]))]);
        assert_eq!(dims(&old, &[t(&[1, 3, 4, 5])], 2), [1, 3, 6, 7]);
        let axes = |a: &[i64]| {
            dims(
                &node("Pad", 1, &[]),
                &[t(&[1, 3, 4, 5]), ints(&[1, 2, 3, 4]), None, ints(a)],
                18,
            )
        };
        assert_eq!(axes(&[2, 3]), [1, 3, 8, 11]);
        assert_eq!(axes(&[-2, -1]), [1, 3, 8, 11]);
        assert_eq!(axes(&[1, 3]), [1, 7, 4, 11]);
        let f = |x: &[u64], pads: &[i64]| fails(&node("Pad", 1, &[]), &[t(x), ints(pads)], 13);
        assert!(f(&[2], &[-1, -1]).contains("leave nothing of [2]"));
        assert!(f(&[2, 2], &[1, 1]).contains("pads [1, 1] for rank 2"));
        assert!(fails(&node("Pad", 1, &[]), &[t(&[2])], 2).contains("no pads"));
        assert!(fails(&old, &[t(&[2])], 11).contains("input 1 is missing"));
    }

    /// Gather: data's axes before `axis`, the indices' shape, data's axes after (the spec's
    /// gather tests on `[5, 4, 3, 2]`).
    #[test]
    fn gather() {
        let g = |axis: i64, idx: &[u64]| {
            dims(
                &node("Gather", 1, &[("axis", A::I(axis))]),
                &[t(&[5, 4, 3, 2]), typed(idx, INT64)],
                17,
            )
        };
        assert_eq!(g(0, &[3]), [3, 4, 3, 2]);
        assert_eq!(g(1, &[3]), [5, 3, 3, 2]);
        assert_eq!(g(-1, &[3]), [5, 4, 3, 3]);
        assert_eq!(g(1, &[2, 2]), [5, 2, 2, 3, 2]);
        assert_eq!(g(1, &[]), [5, 3, 2]);
        assert!(fails(
            &node("Gather", 1, &[("axis", A::I(4))]),
            &[t(&[5, 4, 3, 2]), t(&[1])],
            17
        )
        .contains("axis 4"));
    }

    /// Gathering from a shape keeps the values, a negative index counting from the end
    /// (`x.shape[-1]`).
    #[test]
    fn gather_from_a_shape() {
        let n = node("Gather", 1, &[]);
        let out = &run(&n, &[ints(&[2, 3, 4, 5]), scalar(-1)], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[][..], Some(vec![5])));
        let out = &run(&n, &[ints(&[2, 3, 4, 5]), ints(&[0, 2])], 17)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[2][..], Some(vec![2, 4])));
        assert_eq!(run(&n, &[ints(&[2, 3]), ints(&[5])], 17)[0].ints, None);
    }

    /// Expand broadcasts the input and the shape both ways (the spec's expand tests: `[3, 1]`
    /// to `[2, 1, 6]` is `[2, 3, 6]`; to `[3, 4]` is `[3, 4]`; a 1 in the shape keeps the input's).
    #[test]
    fn expand() {
        let e = |x: &[u64], shape: &[i64]| dims(&node("Expand", 1, &[]), &[t(x), ints(shape)], 17);
        assert_eq!(e(&[3, 1], &[2, 1, 6]), [2, 3, 6]);
        assert_eq!(e(&[3, 1], &[3, 4]), [3, 4]);
        assert_eq!(e(&[3, 4], &[1, 1]), [3, 4]);
        assert_eq!(e(&[3, 4], &[1]), [3, 4]);
        assert!(fails(&node("Expand", 1, &[]), &[t(&[3, 4]), ints(&[2, 4])], 17).contains("do not broadcast"));
    }

    /// Tile: each axis times its repeat.
    #[test]
    fn tile() {
        let tl = |x: &[u64], reps: &[i64]| dims(&node("Tile", 1, &[]), &[t(x), ints(reps)], 17);
        assert_eq!(tl(&[2, 3], &[1, 2]), [2, 6]);
        assert_eq!(tl(&[2, 3], &[3, 1]), [6, 3]);
        assert_eq!(tl(&[2, 3], &[2, 0]), [4, 0]);
        assert!(fails(&node("Tile", 1, &[]), &[t(&[2, 3]), ints(&[2])], 17).contains("repeats [2]"));
        assert!(fails(&node("Tile", 1, &[]), &[t(&[2, 3]), ints(&[1, -1])], 17).contains("repeats"));
    }

    fn slice(x: &[u64], starts: &[i64], ends: &[i64], axes: Option<&[i64]>, steps: Option<&[i64]>) -> Vec<u64> {
        let inputs = [
            t(x),
            ints(starts),
            ints(ends),
            axes.and_then(ints),
            steps.and_then(ints),
        ];
        dims(&node("Slice", 1, &[]), &inputs, 13)
    }

    /// The spec's slice tests on `[20, 10, 5]`: starts and ends clamped to the axis, negative
    /// ones counting from its end; negative steps walk back from a start clamped to dim - 1.
    #[test]
    fn slice_clamps_and_steps() {
        let x = [20, 10, 5];
        assert_eq!(slice(&x, &[0, 0], &[3, 10], Some(&[0, 1]), Some(&[1, 1])), [3, 10, 5]);
        assert_eq!(slice(&x, &[0], &[-1], Some(&[1]), Some(&[1])), [20, 9, 5]);
        assert_eq!(slice(&x, &[1000], &[1000], Some(&[1]), Some(&[1])), [20, 0, 5]);
        assert_eq!(slice(&x, &[1], &[1000], Some(&[1]), Some(&[1])), [20, 9, 5]);
        assert_eq!(
            slice(&x, &[0, 0, 3], &[20, 10, 4], Some(&[0, -2, -1]), None),
            [20, 10, 1]
        );
        assert_eq!(slice(&x, &[0, 0, 3], &[20, 10, 4], None, None), [20, 10, 1]);
        // slice_neg_steps: 20 from 19 down to 1 by 1 is 19; 10 from 9 to 1 by 3 is 9, 6, 3;
        // 5 from 4 to 2 by 2 is 4, 2.
        assert_eq!(
            slice(&x, &[20, 10, 4], &[0, 0, 1], Some(&[0, 1, 2]), Some(&[-1, -3, -2])),
            [19, 3, 2]
        );
        // Reversing a whole axis: from -1 to the smallest int64, by -1.
        assert_eq!(slice(&x, &[-1], &[i64::MIN], Some(&[1]), Some(&[-1])), [20, 10, 5]);
        // Ends past the axis: the largest int64; a start past the end is empty.
        assert_eq!(slice(&x, &[2], &[i64::MAX], Some(&[0]), Some(&[3])), [6, 10, 5]);
        assert_eq!(slice(&x, &[-3], &[-5], Some(&[0]), None), [0, 10, 5]);
        assert_eq!(slice(&x, &[-100], &[3], Some(&[0]), None), [3, 10, 5]);
        assert_eq!(slice(&x, &[2], &[-100], Some(&[1]), Some(&[-1])), [20, 3, 5]);
        assert_eq!(slice(&x, &[0], &[5], Some(&[1]), Some(&[-1])), [20, 0, 5]);
    }

    /// Before opset 10, starts, ends and axes are attributes and there are no steps.
    #[test]
    fn slice_before_opset_10() {
        let n = node(
            "Slice",
            1,
            &[
                ("starts", A::Ints(&[0, 1])),
                ("ends", A::Ints(&[3, -1])),
                ("axes", A::Ints(&[0, 1])),
            ],
        );
        assert_eq!(dims(&n, &[t(&[20, 10, 5])], 9), [3, 8, 5]);
        let n = node("Slice", 1, &[("starts", A::Ints(&[1])), ("ends", A::Ints(&[3]))]);
        assert_eq!(dims(&n, &[t(&[20, 10, 5])], 9), [2, 10, 5]);
        assert!(fails(&node("Slice", 1, &[("ends", A::Ints(&[3]))]), &[t(&[4])], 9).contains("no starts"));
    }

    #[test]
    fn slices_that_cannot_be_are_refused() {
        let f = |inputs: &[Option<Info>]| fails(&node("Slice", 1, &[]), inputs, 13);
        assert!(f(&[t(&[4]), ints(&[0]), ints(&[2]), None, ints(&[0])]).contains("step 0"));
        assert!(f(&[t(&[4]), ints(&[0, 0]), ints(&[2])]).contains("different lengths"));
        assert!(f(&[t(&[4]), ints(&[0]), ints(&[2]), ints(&[1])]).contains("axis 1 out of range for rank 1"));
        assert!(f(&[t(&[4]), ints(&[0]), t(&[1])]).contains("ends (input 2) is computed at run time"));
    }

    /// Slicing a 1-D shape with step 1 keeps the values (`x.shape[1:3]`).
    #[test]
    fn slice_of_a_shape_keeps_values() {
        let n = node("Slice", 1, &[]);
        let out = &run(&n, &[ints(&[2, 3, 4, 5]), ints(&[1]), ints(&[3])], 13)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[2][..], Some(vec![3, 4])));
        let out = &run(&n, &[ints(&[2, 3, 4, 5]), ints(&[-2]), ints(&[i64::MAX])], 13)[0];
        assert_eq!(out.ints, Some(vec![4, 5]));
        let out = &run(&n, &[ints(&[2, 3, 4, 5]), ints(&[0]), ints(&[4]), None, ints(&[2])], 13)[0];
        assert_eq!((out.dims.as_slice(), out.ints.clone()), (&[2][..], None));
    }
}
