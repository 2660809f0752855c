//! ONNX `Conv` / `ConvTranspose` to the MIOpenDriver lines MIOpen logs for them.
//!
//! The mapping (MIOpen at 2d1fd99; PyTorch's `aten/src/ATen/native/Convolution.cpp` for what a
//! framework hands MIOpen):
//! - 2-D: `-H -W -y -x -p -q -u -v -l -j`; 3-D: the same with `--in_d --fil_d --pad_d
//!   --conv_stride_d --dilation_d --spatial_dim 3` (`src/driver_arguments.cpp`,
//!   `ConvArgsForMIOpenDriver`, lines 143-200: the order written here).
//! - 1-D: as PyTorch hands it to MIOpen, a 2-D convolution with H = 1 (its `view1d_as_2d`
//!   puts a 1 in front of every spatial parameter, `view4d` unsqueezes dimension 2): filter,
//!   stride and dilation 1 and pad 0 in H.
//! - `group` is `-g`; `-k` is all groups' output channels (`wDesc.GetLengths()[0]`).
//! - `ConvTranspose` is MIOpen's transposed convolution `-m trans`: `-c` its input channels,
//!   `-k` its output channels (`wDesc.GetLengths()[1]`, one group's; `-g 1` here), `output_padding`
//!   as `-Y -X` (`--trans_output_pad_*`, `driver/conv_driver.hpp`), which MIOpen's log leaves out
//!   but the problem's size needs. A grouped one cannot be written as a `-m trans` line that
//!   reads back (the log's `-k` is one group's, MIOpenDriver reads all groups'), so it is
//!   written as the convolution MIOpen runs for it (`src/convolution_api.cpp`: x and y swapped,
//!   a transposed forward is that convolution's backward data).
//! - Bias is not part of the problem: a framework adds it with a separate call
//!   (`miopenConvolutionForwardBias`), and MIOpen's log lines carry no `-b`.
//! - Padding MIOpen cannot express (begin != end) is handled as PyTorch handles `padding='same'`
//!   with an even filter (`_convolution_mode`: `F.pad` the input by the difference, then the
//!   symmetric padding): the convolution sees the input padded by `end - begin` (or the
//!   reverse) and pads `min(begin, end)`; a transposed one pads `min` and its output is cropped.

use super::graph::Tensor;
use super::proto::{tensor_proto::DataType, NodeProto};
use super::Options;
use crate::problem::{ConvProblem, Direction, Layout, Precision, MAX_FIELD_VALUE};

/// One spatial dimension of a convolution, as MIOpen sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Axis {
    pub input: u64,
    pub filter: u64,
    pub pad: u64,
    pub stride: u64,
    pub dilation: u64,
    /// Transposed convolutions only.
    pub out_pad: u64,
}

/// A convolution as MIOpen is asked to run it.
#[derive(Debug, Clone)]
pub(super) struct MiopenConv {
    pub transposed: bool,
    pub n: u64,
    /// Input channels (all groups).
    pub c: u64,
    /// Output channels (all groups).
    pub k: u64,
    pub groups: u64,
    /// H and W (2-D) or D, H and W (3-D).
    pub axes: Vec<Axis>,
    pub precision: Precision,
    pub layout: Layout,
}

impl Axis {
    /// H of a 1-D convolution as PyTorch hands it to MIOpen.
    pub const UNIT: Axis = Axis {
        input: 1,
        filter: 1,
        pad: 0,
        stride: 1,
        dilation: 1,
        out_pad: 0,
    };
}

impl MiopenConv {
    /// The directions a framework runs: forward; with training backward data (when the input
    /// needs a gradient) and backward weights.
    pub fn directions(options: &Options, input_needs_grad: bool) -> Vec<Direction> {
        let mut d = vec![Direction::Forward];
        if options.training {
            if input_needs_grad {
                d.push(Direction::BackwardData);
            }
            d.push(Direction::BackwardWeights);
        }
        d
    }

    /// The MIOpenDriver line of one direction, in MIOpen's log order, and its problem.
    /// `Err(reason)` where MIOpen cannot take it (the parser's reason).
    pub fn line(&self, direction: Direction) -> std::result::Result<(String, ConvProblem), String> {
        if self.transposed && self.groups > 1 {
            return self.as_run().line(swap(direction));
        }
        let three = self.axes.len() == 3;
        let (d, h, w) = if three {
            (Some(self.axes[0]), self.axes[1], self.axes[2])
        } else {
            (None, self.axes[0], self.axes[1])
        };
        let mut s = format!("{} -n {} -c {}", self.precision.driver_command(), self.n, self.c);
        if let Some(d) = d {
            s.push_str(&format!(" --in_d {}", d.input));
        }
        s.push_str(&format!(" -H {} -W {} -k {}", h.input, w.input, self.k));
        if let Some(d) = d {
            s.push_str(&format!(" --fil_d {}", d.filter));
        }
        s.push_str(&format!(" -y {} -x {}", h.filter, w.filter));
        if let Some(d) = d {
            s.push_str(&format!(" --pad_d {}", d.pad));
        }
        s.push_str(&format!(" -p {} -q {}", h.pad, w.pad));
        if let Some(d) = d {
            s.push_str(&format!(" --conv_stride_d {}", d.stride));
        }
        s.push_str(&format!(" -u {} -v {}", h.stride, w.stride));
        if let Some(d) = d {
            s.push_str(&format!(" --dilation_d {}", d.dilation));
        }
        s.push_str(&format!(" -l {} -j {}", h.dilation, w.dilation));
        if three {
            s.push_str(" --spatial_dim 3");
        }
        if self.layout == Layout::Nhwc {
            let l = self.layout.name(if three { 3 } else { 2 });
            s.push_str(&format!(" --in_layout {l} --fil_layout {l} --out_layout {l}"));
        }
        s.push_str(&format!(
            " -m {} -g {} -F {} -t 1",
            if self.transposed { "trans" } else { "conv" },
            self.groups,
            direction.driver_flag()
        ));
        if self.transposed {
            if h.out_pad > 0 || w.out_pad > 0 {
                s.push_str(&format!(" -Y {} -X {}", h.out_pad, w.out_pad));
            }
            if let Some(d) = d.filter(|d| d.out_pad > 0) {
                s.push_str(&format!(" --trans_output_pad_d {}", d.out_pad));
            }
        }
        match ConvProblem::from_driver_line(&s) {
            Ok(p) => Ok((s, p)),
            Err(crate::error::Error::InvalidProblem { reason, .. }) => Err(reason),
            Err(other) => Err(other.to_string()),
        }
    }

    /// A transposed convolution as the ordinary convolution MIOpen runs for it: its output
    /// (`k` channels, the larger image) is the input.
    fn as_run(&self) -> MiopenConv {
        let axes = self
            .axes
            .iter()
            .map(|a| Axis {
                input: transposed_out(a),
                out_pad: 0,
                ..*a
            })
            .collect();
        MiopenConv {
            transposed: false,
            c: self.k,
            k: self.c,
            axes,
            ..self.clone()
        }
    }
}

/// A transposed convolution's forward is the run convolution's backward data, and back.
fn swap(d: Direction) -> Direction {
    match d {
        Direction::Forward => Direction::BackwardData,
        Direction::BackwardData => Direction::Forward,
        Direction::BackwardWeights => Direction::BackwardWeights,
    }
}

/// The output size of a transposed convolution with MIOpen's symmetric padding:
/// `stride*(in-1) + dilation*(filter-1) + 1 - 2*pad + out_pad` (0 when the padding eats it).
pub(super) fn transposed_out(a: &Axis) -> u64 {
    let full = a
        .stride
        .saturating_mul(a.input.saturating_sub(1))
        .saturating_add(a.dilation.saturating_mul(a.filter.saturating_sub(1)))
        .saturating_add(1)
        .saturating_add(a.out_pad);
    full.saturating_sub(a.pad.saturating_mul(2))
}

/// ONNX's `auto_pad` SAME padding of one axis: (begin, end) so that the output is
/// `ceil(input / stride)`; SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the begin.
pub(super) fn same_pads(input: u64, filter: u64, stride: u64, dilation: u64, upper: bool) -> (u64, u64) {
    let out = input.div_ceil(stride);
    let span = dilation * (filter - 1) + 1;
    let total = ((out - 1) * stride + span).saturating_sub(input);
    let small = total / 2;
    if upper {
        (small, total - small)
    } else {
        (total - small, small)
    }
}

/// A `Conv` or `ConvTranspose` node with its input `x` and weights `w` as MIOpen is asked to run
/// it, its output's dims, and what the user should know (notes); `Err(why)` where it does not
/// map (bad attributes, channels, padding; `label` names the node in notes).
pub(super) fn map(node: &NodeProto, label: &str, x: &Tensor, w: &Tensor, options: &Options) -> Result<Mapped, String> {
    let mut notes = Vec::new();
    let op = node.op_type.as_deref().unwrap_or("");
    let bad = |why: String| why;
    let rank = x.rank();
    if !(3..=5).contains(&rank) {
        return Err(bad(format!(
            "input of rank {rank}: MIOpen convolves 1-D (as 2-D), 2-D and 3-D images (rank 3 to 5)"
        )));
    }
    if w.rank() != rank {
        return Err(bad(format!("weights of rank {} for an input of rank {rank}", w.rank())));
    }
    let spatial = rank - 2;
    let transposed = op == "ConvTranspose";
    let attr = |n: &str| node.attribute.iter().find(|a| a.name.as_deref() == Some(n));
    let group = match attr("group").and_then(|a| a.i) {
        None => 1,
        Some(g) if g >= 1 && g as u64 <= MAX_FIELD_VALUE => g as u64,
        Some(g) => return Err(bad(format!("group {g}"))),
    };
    let ints = |n: &str, default: u64| -> Result<Vec<u64>, String> {
        match attr(n) {
            None => Ok(vec![default; spatial]),
            Some(a) if a.ints.len() == spatial => a
                .ints
                .iter()
                .map(|&v| {
                    u64::try_from(v)
                        .ok()
                        .filter(|v| *v <= MAX_FIELD_VALUE && (default == 0 || *v >= 1))
                        .ok_or_else(|| bad(format!("{n} {:?}: out of range", a.ints)))
                })
                .collect(),
            Some(a) => Err(bad(format!("{n} {:?} for {spatial} spatial dimension(s)", a.ints))),
        }
    };
    let strides = ints("strides", 1)?;
    let dilations = ints("dilations", 1)?;
    let filter: Vec<u64> = w.dims[2..].to_vec();
    if let Some(k) = attr("kernel_shape") {
        if k.ints.iter().map(|&v| v as u64).ne(filter.iter().copied()) {
            return Err(bad(format!(
                "kernel_shape {:?} differs from the weights' {:?}",
                k.ints, filter
            )));
        }
    }
    if filter.contains(&0) || w.dims.contains(&0) {
        return Err(bad(format!("weights of shape {:?}", w.dims)));
    }
    if x.dims.contains(&0) {
        return Err(bad(format!("input of shape {:?}", x.dims)));
    }
    let n = x.dims[0];
    let c = x.dims[1];
    let (c_per_group, k) = if transposed {
        // ConvTranspose's W is (C, M/group, k...).
        if w.dims[0] != c {
            return Err(bad(format!(
                "input has {c} channels, weights {:?} expect {}",
                w.dims, w.dims[0]
            )));
        }
        (c / group.max(1), w.dims[1].saturating_mul(group))
    } else {
        (w.dims[1], w.dims[0])
    };
    if !transposed && c != c_per_group.saturating_mul(group) {
        return Err(bad(format!(
            "input has {c} channels, weights {:?} with group {group} expect {}",
            w.dims,
            c_per_group.saturating_mul(group)
        )));
    }
    if !c.is_multiple_of(group) || !k.is_multiple_of(group) {
        return Err(bad(format!(
            "group {group} does not divide the channels ({c} in, {k} out)"
        )));
    }
    let auto_pad = attr("auto_pad")
        .and_then(|a| a.s.as_deref())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .unwrap_or_else(|| "NOTSET".into());
    let in_sizes = &x.dims[2..];
    let out_pads = if transposed {
        ints("output_padding", 0)?
    } else {
        vec![0; spatial]
    };
    // (begin, end) padding of each spatial axis, as ONNX defines it.
    let mut pads: Vec<(u64, u64)> = match auto_pad.as_str() {
        "NOTSET" | "" => {
            let p = match attr("pads") {
                None => vec![0; 2 * spatial],
                Some(a)
                    if a.ints.len() == 2 * spatial
                        && a.ints.iter().all(|&v| (0..=MAX_FIELD_VALUE as i64).contains(&v)) =>
                {
                    a.ints.iter().map(|&v| v as u64).collect()
                }
                Some(a) => return Err(bad(format!("pads {:?}", a.ints))),
            };
            (0..spatial).map(|i| (p[i], p[i + spatial])).collect()
        }
        "VALID" => vec![(0, 0); spatial],
        "SAME_UPPER" | "SAME_LOWER" if !transposed => (0..spatial)
            .map(|i| {
                same_pads(
                    in_sizes[i],
                    filter[i],
                    strides[i],
                    dilations[i],
                    auto_pad == "SAME_UPPER",
                )
            })
            .collect(),
        "SAME_UPPER" | "SAME_LOWER" => Vec::new(),
        other => return Err(bad(format!("auto_pad '{other}'"))),
    };
    // ConvTranspose: output_shape (or SAME: input * stride) sets the padding.
    let output_shape = attr("output_shape").map(|a| a.ints.clone());
    if transposed && (pads.is_empty() || output_shape.is_some()) {
        let target: Vec<i64> = match &output_shape {
            Some(s) if s.len() == spatial => s.clone(),
            Some(s) if s.len() == rank => s[2..].to_vec(),
            Some(s) => return Err(bad(format!("output_shape {s:?}"))),
            None => (0..spatial).map(|i| (in_sizes[i] * strides[i]) as i64).collect(),
        };
        pads = Vec::with_capacity(spatial);
        for i in 0..spatial {
            let full = (strides[i] * (in_sizes[i] - 1) + out_pads[i] + dilations[i] * (filter[i] - 1) + 1) as i64;
            let total = full.checked_sub(target[i]).unwrap_or(-1);
            if total < 0 || target[i] <= 0 {
                return Err(bad(format!(
                    "output_shape {target:?} is larger than the transposed convolution gives"
                )));
            }
            let total = total as u64;
            pads.push(if auto_pad == "SAME_UPPER" {
                (total / 2, total - total / 2)
            } else {
                (total - total / 2, total / 2)
            });
        }
    }
    // MIOpen's symmetric padding; the rest explicit (conv) or cropped (transposed).
    let mut axes = Vec::with_capacity(spatial);
    let mut out_dims = vec![n, k];
    let mut asymmetric = false;
    for i in 0..spatial {
        let (b, e) = pads[i];
        let sym = b.min(e);
        let extra = b.max(e) - sym;
        asymmetric |= extra > 0;
        let span = dilations[i] * (filter[i] - 1) + 1;
        let axis = Axis {
            input: if transposed { in_sizes[i] } else { in_sizes[i] + extra },
            filter: filter[i],
            pad: sym,
            stride: strides[i],
            dilation: dilations[i],
            out_pad: out_pads[i],
        };
        let out = if transposed {
            let full = transposed_out(&axis);
            full.checked_sub(extra).filter(|o| *o > 0).ok_or_else(|| {
                bad(format!(
                    "the padding {:?} leaves no output in spatial dimension {i}",
                    pads[i]
                ))
            })?
        } else {
            let padded = in_sizes[i] + b + e;
            if padded < span {
                return Err(bad(format!(
                    "output would be empty in spatial dimension {i} (input {} + pads {b}+{e} < dilated filter {span})",
                    in_sizes[i]
                )));
            }
            (padded - span) / strides[i] + 1
        };
        out_dims.push(out);
        axes.push(axis);
    }
    if asymmetric {
        let p: Vec<String> = pads.iter().map(|(b, e)| format!("{b}/{e}")).collect();
        notes.push(format!(
            "node {label}: asymmetric padding (begin/end {}) MIOpen cannot express: {}",
            p.join(", "),
            if transposed {
                "as frameworks do, the transposed convolution pads the smaller side on both and its output is \
                 cropped by the difference"
            } else {
                "as frameworks do (PyTorch's padding='same'), the input is padded explicitly by the difference \
                 first and the convolution pads the smaller side on both"
            }
        ));
    }
    // 1-D: H = 1 in front (PyTorch's view1d_as_2d).
    if spatial == 1 {
        axes.insert(0, Axis::UNIT);
    }
    let precision = match options.precision {
        Some(p) => p,
        None => precision_of(if x.ty != 0 { x.ty } else { w.ty }).ok_or_else(|| {
            bad(format!(
                "input of data type {} (MIOpen's convolutions here: float, float16, bfloat16); give --precision",
                type_name(x.ty)
            ))
        })?,
    };
    let conv = MiopenConv {
        transposed,
        n,
        c,
        k,
        groups: group,
        axes,
        precision,
        layout: options.layout,
    };
    if transposed && group > 1 {
        notes.push(format!(
            "node {label}: a grouped transposed convolution is written as the convolution MIOpen runs for it \
             (x and y swapped, forward as backward data)"
        ));
    }
    Ok(Mapped { conv, out_dims, notes })
}

/// What [`map`] gives.
pub(super) struct Mapped {
    pub conv: MiopenConv,
    /// The output's dims: N, K and the spatial sizes.
    pub out_dims: Vec<u64>,
    pub notes: Vec<String>,
}

fn precision_of(ty: i32) -> Option<Precision> {
    match DataType::try_from(ty).ok()? {
        DataType::Float => Some(Precision::Fp32),
        DataType::Float16 => Some(Precision::Fp16),
        DataType::Bfloat16 => Some(Precision::Bf16),
        _ => None,
    }
}

fn type_name(ty: i32) -> String {
    match DataType::try_from(ty) {
        Ok(t) => t.as_str_name().to_lowercase(),
        Err(_) => format!("{ty}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ONNX's Conv spec: SAME_UPPER with input 5, kernel 2, stride 1 pads (0, 1); with input 7,
    /// kernel 3, stride 2 the output is 4 and the total padding (4-1)*2+3-7 = 2, (1, 1).
    #[test]
    fn same_padding_follows_the_onnx_spec() {
        assert_eq!(same_pads(5, 2, 1, 1, true), (0, 1));
        assert_eq!(same_pads(5, 2, 1, 1, false), (1, 0));
        assert_eq!(same_pads(7, 3, 2, 1, true), (1, 1));
        assert_eq!(same_pads(224, 7, 2, 1, true), (2, 3));
        assert_eq!(same_pads(8, 1, 2, 1, true), (0, 0));
    }

    /// The transposed output: stride 2, input 4, filter 3, pad 1, output padding 1 is 8.
    #[test]
    fn transposed_output_size() {
        let a = Axis {
            input: 4,
            filter: 3,
            pad: 1,
            stride: 2,
            dilation: 1,
            out_pad: 1,
        };
        assert_eq!(transposed_out(&a), 8);
    }
}
