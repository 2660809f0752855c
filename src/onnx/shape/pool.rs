//! Pooling: `MaxPool`, `AveragePool`, `LpPool` (a window over the spatial axes) and the global
//! pools.

use super::super::graph::{Info, Tensor};
use super::super::proto::{tensor_proto::DataType, NodeProto};
use super::{attr_i, attr_ints, attr_s, input, Fail, Rule};

/// MaxPool, AveragePool, LpPool: the pooled tensor, and MaxPool's optional indices (INT64).
pub(super) fn windowed(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    pool(node, &*input(inputs, 0)?).map(|t| {
        vec![
            t.clone(),
            Tensor {
                ty: DataType::Int64 as i32,
                ..t
            },
        ]
    })
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: every spatial axis to 1.
pub(super) fn global(inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let x = input(inputs, 0)?;
    if x.rank() < 3 {
        return Err("input of rank below 3".into());
    }
    let mut d = x.dims[..2].to_vec();
    d.extend(std::iter::repeat_n(1, x.rank() - 2));
    Ok(vec![Tensor::new(d, x.ty)])
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

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    fn maxpool(x: &[u64], attrs: &[(&str, A)]) -> Vec<u64> {
        dims(&node("MaxPool", 1, attrs), &[t(x)], 17)
    }

    /// ONNX's output size without auto_pad: floor((in + pads - ((k - 1) * d + 1)) / s) + 1
    /// (the spec's maxpool tests).
    #[test]
    fn explicit_padding_strides_and_dilations() {
        // maxpool_2d_default, _1d_default, _3d_default: kernel 2, stride 1.
        assert_eq!(
            maxpool(&[1, 3, 32, 32], &[("kernel_shape", A::Ints(&[2, 2]))]),
            [1, 3, 31, 31]
        );
        assert_eq!(maxpool(&[1, 3, 32], &[("kernel_shape", A::Ints(&[2]))]), [1, 3, 31]);
        assert_eq!(
            maxpool(&[1, 3, 32, 32, 32], &[("kernel_shape", A::Ints(&[2, 2, 2]))]),
            [1, 3, 31, 31, 31]
        );
        // maxpool_2d_pads: 5 + 2 + 2 - 5 + 1 = 5.
        let pads = [("kernel_shape", A::Ints(&[5, 5])), ("pads", A::Ints(&[2, 2, 2, 2]))];
        assert_eq!(maxpool(&[1, 1, 5, 5], &pads), [1, 1, 5, 5]);
        // maxpool_2d_strides: (32 - 5) / 3 + 1 = 10.
        let strides = [("kernel_shape", A::Ints(&[5, 5])), ("strides", A::Ints(&[3, 3]))];
        assert_eq!(maxpool(&[1, 3, 32, 32], &strides), [1, 3, 10, 10]);
        // maxpool_2d_dilations: kernel 2 dilated by 2 spans 3: 4 - 3 + 1 = 2.
        let dil = [("kernel_shape", A::Ints(&[2, 2])), ("dilations", A::Ints(&[2, 2]))];
        assert_eq!(maxpool(&[1, 1, 4, 4], &dil), [1, 1, 2, 2]);
        // Unequal begin and end pads, per axis: H 7 + 0 + 1 - 3 + 1 = 6, W 7 + 2 + 0 - 3 + 1 = 7.
        let uneven = [("kernel_shape", A::Ints(&[3, 3])), ("pads", A::Ints(&[0, 2, 1, 0]))];
        assert_eq!(maxpool(&[1, 1, 7, 7], &uneven), [1, 1, 6, 7]);
    }

    /// ceil_mode rounds up (maxpool_2d_ceil: 4, kernel 3, stride 2: ceil(1 / 2) + 1 = 2 where
    /// floor gives 1); a last window that would start in the end padding is dropped.
    #[test]
    fn ceil_mode() {
        let k3s2 = |ceil: i64| {
            [
                ("kernel_shape", A::Ints(&[3, 3])),
                ("strides", A::Ints(&[2, 2])),
                ("ceil_mode", A::I(ceil)),
            ]
        };
        assert_eq!(maxpool(&[1, 1, 4, 4], &k3s2(1)), [1, 1, 2, 2]);
        assert_eq!(maxpool(&[1, 1, 4, 4], &k3s2(0)), [1, 1, 1, 1]);
        // 6, kernel 3, stride 2: windows at 0, 2 and (ceil) 4, which starts inside.
        assert_eq!(maxpool(&[1, 1, 6, 6], &k3s2(1)), [1, 1, 3, 3]);
        assert_eq!(maxpool(&[1, 1, 6, 6], &k3s2(0)), [1, 1, 2, 2]);
        // 5, kernel 2, stride 2, pads 1: windows start at -1, 1, 3 and (ceil) 5, which lies
        // wholly in the end padding: dropped, 3. Without ceil_mode: (7 - 2) / 2 + 1 = 3 too.
        let drop = |ceil: i64| {
            [
                ("kernel_shape", A::Ints(&[2])),
                ("strides", A::Ints(&[2])),
                ("pads", A::Ints(&[1, 1])),
                ("ceil_mode", A::I(ceil)),
            ]
        };
        assert_eq!(maxpool(&[1, 1, 5], &drop(1)), [1, 1, 3]);
        assert_eq!(maxpool(&[1, 1, 5], &drop(0)), [1, 1, 3]);
        // 8, kernel 2, stride 2, pads 1: ceil(8 / 2) + 1 = 5 windows, the last at 7 inside.
        assert_eq!(maxpool(&[1, 1, 8], &drop(1)), [1, 1, 5]);
        assert_eq!(maxpool(&[1, 1, 8], &drop(0)), [1, 1, 5]);
    }

    /// SAME_UPPER and SAME_LOWER: ceil(in / stride), whatever the kernel (maxpool_2d_same_upper,
    /// _same_lower: 5, stride 2 is 3; stride 1 keeps 5). VALID: no padding,
    /// (in - span) / stride + 1.
    #[test]
    fn auto_pad() {
        for mode in ["SAME_UPPER", "SAME_LOWER"] {
            let s2 = [
                ("kernel_shape", A::Ints(&[3, 3])),
                ("strides", A::Ints(&[2, 2])),
                ("auto_pad", A::S(mode)),
            ];
            assert_eq!(maxpool(&[1, 1, 5, 5], &s2), [1, 1, 3, 3], "{mode}");
            let s1 = [("kernel_shape", A::Ints(&[2, 2])), ("auto_pad", A::S(mode))];
            assert_eq!(maxpool(&[1, 1, 5, 5], &s1), [1, 1, 5, 5], "{mode}");
            let odd = [
                ("kernel_shape", A::Ints(&[3])),
                ("strides", A::Ints(&[4])),
                ("auto_pad", A::S(mode)),
            ];
            assert_eq!(maxpool(&[1, 1, 7], &odd), [1, 1, 2], "{mode}");
        }
        // VALID: 32, kernel 2, stride 2: 16; 5, kernel 3, stride 2: 2 (the spec's
        // ceil((in - span + 1) / stride), the same).
        let valid = |k: &'static [i64], s: &'static [i64]| {
            [
                ("kernel_shape", A::Ints(k)),
                ("strides", A::Ints(s)),
                ("auto_pad", A::S("VALID")),
            ]
        };
        assert_eq!(maxpool(&[1, 3, 32, 32], &valid(&[2, 2], &[2, 2])), [1, 3, 16, 16]);
        assert_eq!(maxpool(&[1, 3, 5, 5], &valid(&[3, 3], &[2, 2])), [1, 3, 2, 2]);
        // An explicit NOTSET is the default.
        let notset = [("kernel_shape", A::Ints(&[2, 2])), ("auto_pad", A::S("NOTSET"))];
        assert_eq!(maxpool(&[1, 3, 32, 32], &notset), [1, 3, 31, 31]);
    }

    /// AveragePool and LpPool size as MaxPool does; MaxPool's second output (indices) is INT64.
    #[test]
    fn every_windowed_pool_and_the_indices() {
        let attrs = [("kernel_shape", A::Ints(&[3, 3])), ("strides", A::Ints(&[2, 2]))];
        for op in ["AveragePool", "LpPool"] {
            assert_eq!(
                dims(&node(op, 1, &attrs), &[t(&[2, 8, 9, 9])], 17),
                [2, 8, 4, 4],
                "{op}"
            );
        }
        let outs = run(&node("MaxPool", 2, &attrs), &[t(&[2, 8, 9, 9])], 17);
        assert_eq!((outs[0].dims.as_slice(), outs[0].ty), (&[2, 8, 4, 4][..], FLOAT));
        assert_eq!((outs[1].dims.as_slice(), outs[1].ty), (&[2, 8, 4, 4][..], INT64));
    }

    #[test]
    fn windows_that_do_not_fit_are_refused() {
        let p = |x: &[u64], attrs: &[(&str, A)]| fails(&node("MaxPool", 1, attrs), &[t(x)], 17);
        assert!(p(&[1, 1, 2, 2], &[("kernel_shape", A::Ints(&[3, 3]))]).contains("window larger"));
        let valid = [("kernel_shape", A::Ints(&[3])), ("auto_pad", A::S("VALID"))];
        assert!(p(&[1, 1, 2], &valid).contains("window larger"));
        assert!(p(&[1, 1, 4, 4], &[("kernel_shape", A::Ints(&[2]))]).contains("kernel_shape"));
        assert!(p(&[1, 1, 4, 4], &[]).contains("no kernel_shape"));
        assert!(p(&[4, 4], &[("kernel_shape", A::Ints(&[2]))]).contains("rank below 3"));
        let zero = [("kernel_shape", A::Ints(&[2, 2])), ("strides", A::Ints(&[0, 1]))];
        assert!(p(&[1, 1, 4, 4], &zero).contains("strides"));
        let pads = [("kernel_shape", A::Ints(&[2, 2])), ("pads", A::Ints(&[1, 1]))];
        assert!(p(&[1, 1, 4, 4], &pads).contains("pads"));
        let bad = [("kernel_shape", A::Ints(&[2, 2])), ("auto_pad", A::S("SAME"))];
        assert!(p(&[1, 1, 4, 4], &bad).contains("auto_pad 'SAME'"));
    }

    /// The global pools: every spatial axis 1, any rank from 3.
    #[test]
    fn global_pools() {
        for op in ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"] {
            assert_eq!(dims(&node(op, 1, &[]), &[t(&[2, 3, 5, 7])], 17), [2, 3, 1, 1], "{op}");
            assert_eq!(
                dims(&node(op, 1, &[]), &[t(&[1, 2, 4, 4, 4])], 17),
                [1, 2, 1, 1, 1],
                "{op}"
            );
            assert_eq!(dims(&node(op, 1, &[]), &[t(&[1, 2, 9])], 17), [1, 2, 1], "{op}");
        }
        assert!(fails(&node("GlobalAveragePool", 1, &[]), &[t(&[2, 3])], 17).contains("rank below 3"));
    }
}
