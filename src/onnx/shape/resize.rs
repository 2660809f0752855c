//! Resampling: `Resize` and `Upsample`, by output sizes or by scales.

use super::super::graph::{Info, Tensor};
use super::super::proto::NodeProto;
use super::{attr, attr_ints, attr_s, axis, input, int_values, optional, Fail, Rule};
use crate::problem::MAX_FIELD_VALUE;

/// Resize's `sizes` (input 3, from opset 11) where given, else the scales: Upsample's attribute
/// before opset 9, else input 1 (Upsample, Resize before 11) or 2 (Resize). Each dimension is
/// `floor(dim * scale)`; `axes` (18) picks the dimensions.
pub(super) fn resize(node: &NodeProto, op: &str, inputs: &[Option<Info>], opset: i64) -> Rule<Vec<Tensor>> {
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

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    /// Resize from opset 11: scales are input 2 (each dimension floor(dim * scale)), sizes
    /// input 3 where given (the spec's resize tests).
    #[test]
    fn resize_by_scales_and_sizes() {
        let r = |x: &[u64], scales: &[f64]| dims(&node("Resize", 1, &[]), &[t(x), None, floats(scales)], 13);
        assert_eq!(r(&[1, 1, 2, 2], &[1.0, 1.0, 2.0, 3.0]), [1, 1, 4, 6]);
        assert_eq!(r(&[1, 1, 2, 4], &[1.0, 1.0, 0.6, 0.6]), [1, 1, 1, 2]);
        assert_eq!(r(&[1, 3, 7, 7], &[1.0, 1.0, 1.5, 0.5]), [1, 3, 10, 3]);
        let sizes = |s: &[i64]| dims(&node("Resize", 1, &[]), &[t(&[1, 1, 2, 2]), None, None, ints(s)], 13);
        assert_eq!(sizes(&[1, 1, 7, 8]), [1, 1, 7, 8]);
        assert_eq!(sizes(&[1, 1, 1, 3]), [1, 1, 1, 3]);
        // An empty sizes tensor is no sizes: the scales count.
        let n = node("Resize", 1, &[]);
        assert_eq!(
            dims(
                &n,
                &[t(&[1, 1, 2, 2]), None, floats(&[1.0, 1.0, 2.0, 2.0]), ints(&[])],
                13
            ),
            [1, 1, 4, 4]
        );
    }

    /// Opset 18's `axes`: the scales or sizes of those axes only.
    #[test]
    fn resize_of_some_axes() {
        let n = node("Resize", 1, &[("axes", A::Ints(&[2, 3]))]);
        assert_eq!(
            dims(&n, &[t(&[1, 1, 2, 2]), None, floats(&[2.0, 3.0])], 18),
            [1, 1, 4, 6]
        );
        let n = node("Resize", 1, &[("axes", A::Ints(&[-1]))]);
        assert_eq!(dims(&n, &[t(&[1, 1, 2, 2]), None, None, ints(&[5])], 18), [1, 1, 2, 5]);
    }

    /// Upsample before opset 9 takes its scales as an attribute; Upsample from 9 and Resize 10
    /// as input 1.
    #[test]
    fn scales_by_opset() {
        let up = node("Upsample", 1, &[("scales", A::Floats(&[1.0, 1.0, 2.0, 2.0]))]);
        assert_eq!(dims(&up, &[t(&[1, 1, 2, 2])], 7), [1, 1, 4, 4]);
        let s = floats(&[1.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            dims(&node("Upsample", 1, &[]), &[t(&[1, 1, 2, 2]), s.clone()], 9),
            [1, 1, 4, 6]
        );
        assert_eq!(
            dims(&node("Resize", 1, &[]), &[t(&[1, 1, 2, 2]), s.clone()], 10),
            [1, 1, 4, 6]
        );
        // Resize 11 reads input 2, not 1 (the ROI).
        assert!(fails(&node("Resize", 1, &[]), &[t(&[1, 1, 2, 2]), s], 11).contains("input 2 is missing"));
        assert!(fails(&node("Upsample", 1, &[]), &[t(&[1, 1, 2, 2])], 7).contains("no scales"));
    }

    #[test]
    fn resizes_that_cannot_be_are_refused() {
        let n = node("Resize", 1, &[]);
        let x = || t(&[1, 1, 2, 2]);
        let why = fails(&n, &[x(), None, t(&[4])], 13);
        assert!(why.contains("scales (input 2) are computed at run time"), "{why}");
        assert!(fails(&n, &[x(), None, floats(&[1.0, 2.0])], 13).contains("scales [1.0, 2.0]"));
        assert!(fails(&n, &[x(), None, floats(&[1.0, 1.0, 0.0, 1.0])], 13).contains("scales"));
        assert!(fails(&n, &[x(), None, floats(&[1.0, 1.0, 0.4, 1.0])], 13).contains("gives 0"));
        assert!(fails(&n, &[x(), None, None, ints(&[1, 1, 0, 2])], 13).contains("sizes [1, 1, 0, 2]"));
        let keep = node("Resize", 1, &[("keep_aspect_ratio_policy", A::S("not_larger"))]);
        assert!(
            fails(&keep, &[x(), None, None, ints(&[1, 1, 4, 4])], 18).contains("keep_aspect_ratio_policy 'not_larger'")
        );
    }
}
