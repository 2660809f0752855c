//! MIOpen's perf-db dash key, 2-D (`2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F`) and 3-D
//! (`64-1-7-7-1x1x1-64-1-7-7-8-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F`): parsing and writing.
//!
//! MIOpen writes it in `ProblemDescription::Serialize` (`src/conv/problem_description.cpp`): the
//! depth of a 3-D problem comes first in every spatial group (`D-H-W` for the tensors,
//! `DxHxW` for filter, pad, stride and dilation); the layout once when all three tensors are
//! NCHW (2-D) or NCDHW (3-D), else the three layouts (x, w, y).

use super::*;

/// Names of the depth, height and width parts of a spatial field, for error messages.
struct AxisNames {
    field: &'static str,
    names: [&'static str; 3],
}

const FILTER: AxisNames = AxisNames {
    field: "filter",
    names: ["Fz", "Fy", "Fx"],
};
const PAD: AxisNames = AxisNames {
    field: "pad",
    names: ["PadD", "PadH", "PadW"],
};
const STRIDE: AxisNames = AxisNames {
    field: "stride",
    names: ["StrideD", "StrideH", "StrideW"],
};
const DILATION: AxisNames = AxisNames {
    field: "dilation",
    names: ["DilD", "DilH", "DilW"],
};

/// The 2-D key's fields, for error messages.
const FORM_2D: &str =
    "C_in-H_in-W_in-FyxFx-C_out-H_out-W_out-N-PadHxPadW-StrideHxStrideW-DilHxDilW-bias-layout-type-direction";
/// The 3-D key's fields, for error messages.
const FORM_3D: &str = "C_in-D_in-H_in-W_in-FzxFyxFx-C_out-D_out-H_out-W_out-N-PadDxPadHxPadW-\
                       StrideDxStrideHxStrideW-DilDxDilHxDilW-bias-layout-type-direction";

impl ConvProblem {
    /// Parses a MIOpen perf-db dash key, 2-D such as
    /// `2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F`
    /// (`C_in-H_in-W_in-FyxFx-C_out-H_out-W_out-N-PadHxPadW-StrideHxStrideW-DilHxDilW-bias-layout-type-direction`)
    /// or 3-D such as `64-4-7-7-3x1x1-64-4-7-7-8-1x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F` (each spatial
    /// group with the depth first: `C_in-D_in-H_in-W_in-FzxFyxFx-C_out-D_out-H_out-W_out-N-
    /// PadDxPadHxPadW-StrideDxStrideHxStrideW-DilDxDilHxDilW-...`), optionally followed by a
    /// group suffix (`...-F_g16`). A layout may be given once or, as MIOpen writes every layout
    /// but NCHW and NCDHW, three times (`-NDHWC-NDHWC-NDHWC-`).
    ///
    /// In/out follow MIOpen's direction convention: for `F` "in" is x and "out" is y; for `B`
    /// and `W` "in" is dy and "out" is dx. The result stores the forward convolution. The given
    /// output size must match the one the forward convolution produces.
    pub fn from_perfdb_key(key: &str) -> Result<ConvProblem> {
        let input = key;
        let key = key.trim();
        let mut fields: Vec<&str> = key.split('-').collect();
        // A 2-D key has `FyxFx` as its fourth field; a 3-D key has W_in there (a number) and
        // `FzxFyxFx` as its fifth.
        let three_d = fields.len() > 4 && !fields[3].contains('x') && fields[4].contains('x');
        let (expected, form) = if three_d {
            (PERFDB_KEY_FIELDS_3D, FORM_3D)
        } else {
            (PERFDB_KEY_FIELDS, FORM_2D)
        };
        // The layout field is third from the end; MIOpen repeats a layout other than NCHW and
        // NCDHW for x, w and y (`...-0-NHWC-NHWC-NHWC-FP16-F`). The three must agree (mixed
        // layouts are not supported).
        let at = expected - 3;
        if fields.len() == expected + 2 && fields[at..at + 3].iter().all(|f| Layout::from_any_name(f).is_some()) {
            if fields[at] != fields[at + 1] || fields[at] != fields[at + 2] {
                return Err(Error::problem(
                    input,
                    format!(
                        "fields 'layout': input, weights and output layouts {}, {}, {} differ; mixed layouts are not supported",
                        fields[at],
                        fields[at + 1],
                        fields[at + 2]
                    ),
                ));
            }
            fields.drain(at + 1..at + 3);
        }
        if fields.len() != expected {
            let hint = if !three_d && fields.len() == PERFDB_KEY_FIELDS_3D {
                " (a 3-D key has W_in, a number, as its fourth field and FzxFyxFx as its fifth)"
            } else {
                ""
            };
            return Err(Error::problem(
                input,
                format!(
                    "expected {expected} '-'-separated fields ({form}), got {}{hint}",
                    fields.len()
                ),
            ));
        }
        // The spatial fields (depth, height, width) of in, filter and out, then the rest.
        let (c_in, d_in, h_in, w_in, fil, c_out, d_out, h_out, w_out, rest) = if three_d {
            let f = &fields;
            (
                f[0],
                Some(f[1]),
                f[2],
                f[3],
                f[4],
                f[5],
                Some(f[6]),
                f[7],
                f[8],
                &f[9..],
            )
        } else {
            let f = &fields;
            (f[0], None, f[1], f[2], f[3], f[4], None, f[5], f[6], &f[7..])
        };
        let [n, pad, stride, dil, bias, layout, ty, dir]: [&str; 8] = match rest.try_into() {
            Ok(r) => r,
            Err(_) => return Err(Error::Internal(format!("{input}: the field count was checked"))),
        };
        let num = |name: &str, what: &str, text: &str, range: Range| {
            parse_num(input, &format!("field '{name}' ({what})"), text, range)
        };
        // One spatial field: (depth, height, width), the depth None for a 2-D key.
        let axes = |names: &AxisNames, text: &str, range: Range| -> Result<(Option<u64>, u64, u64)> {
            if three_d {
                let [d, h, w] = parse_axes(input, names.field, text, names.names, range)?;
                Ok((Some(d), h, w))
            } else {
                let [h, w] = parse_axes(input, names.field, text, [names.names[1], names.names[2]], range)?;
                Ok((None, h, w))
            }
        };
        let c_in = num("C_in", "input channels", c_in, Range::Positive)?;
        let d_in = d_in
            .map(|d| num("D_in", "input depth", d, Range::Positive))
            .transpose()?;
        let h_in = num("H_in", "input height", h_in, Range::Positive)?;
        let w_in = num("W_in", "input width", w_in, Range::Positive)?;
        let (filter_d, filter_h, filter_w) = axes(&FILTER, fil, Range::Positive)?;
        let c_out = num("C_out", "output channels", c_out, Range::Positive)?;
        let d_out = d_out
            .map(|d| num("D_out", "output depth", d, Range::Positive))
            .transpose()?;
        let h_out = num("H_out", "output height", h_out, Range::Positive)?;
        let w_out = num("W_out", "output width", w_out, Range::Positive)?;
        let n = num("N", "batch", n, Range::Positive)?;
        let (pad_d, pad_h, pad_w) = axes(&PAD, pad, Range::NonNegative)?;
        let (stride_d, stride_h, stride_w) = axes(&STRIDE, stride, Range::Positive)?;
        let (dilation_d, dilation_h, dilation_w) = axes(&DILATION, dil, Range::Positive)?;
        let bias = num("bias", "bias", bias, Range::Flag)? == 1;
        let layout = Layout::parse_for(layout, if three_d { 3 } else { 2 })
            .map_err(|why| Error::problem(input, format!("field 'layout': {why}")))?;
        let precision = Precision::from_name(ty).ok_or_else(|| {
            Error::problem(
                input,
                format!("field 'type': unsupported data type '{ty}' (expected FP32, FP16 or BF16)"),
            )
        })?;
        let (dir_text, groups) = match dir.split_once('_') {
            None => (dir, 1),
            Some((d, g)) => match g.strip_prefix('g') {
                Some(count) => (d, num("groups", "group count suffix _gN", count, Range::Positive)?),
                None => {
                    return Err(Error::problem(
                        input,
                        format!(
                            "field 'direction': expected F, B or W optionally followed by \
                             '_g<groups>', got '{dir}'"
                        ),
                    ))
                }
            },
        };
        let direction = dir_text.parse::<Direction>().map_err(|_| {
            Error::problem(
                input,
                format!("field 'direction': expected F, B or W, got '{dir_text}'"),
            )
        })?;
        // Undo the direction convention: for B and W, "in" is dy (forward output).
        let fwd = direction.is_forward();
        let (c, k) = if fwd { (c_in, c_out) } else { (c_out, c_in) };
        let (x, y) = if fwd {
            ((d_in, h_in, w_in), (d_out, h_out, w_out))
        } else {
            ((d_out, h_out, w_out), (d_in, h_in, w_in))
        };
        let (x_names, y_names) = if fwd {
            (["D_in", "H_in", "W_in"], ["D_out", "H_out", "W_out"])
        } else {
            (["D_out", "H_out", "W_out"], ["D_in", "H_in", "W_in"])
        };
        let depth = match (x.0, filter_d, pad_d, stride_d, dilation_d) {
            (Some(in_d), Some(filter_d), Some(pad_d), Some(stride_d), Some(dilation_d)) => Some(RawDepth {
                in_d,
                filter_d,
                pad_d,
                stride_d,
                dilation_d,
            }),
            _ => None,
        };
        let raw = Raw {
            n,
            c,
            in_h: x.1,
            in_w: x.2,
            k,
            filter_h,
            filter_w,
            pad_h,
            pad_w,
            stride_h,
            stride_w,
            dilation_h,
            dilation_w,
            groups,
            bias,
            layout,
            precision,
            direction,
            depth,
        };
        let problem = raw.finish(
            input,
            [
                &format!("field '{}' (forward input depth)", x_names[0]),
                &format!("field '{}' (forward input height)", x_names[1]),
                &format!("field '{}' (forward input width)", x_names[2]),
            ],
        )?;
        let derived_d = problem.depth.map(|d| d.out_d);
        let sizes = [
            (y_names[0], y.0, derived_d),
            (y_names[1], Some(y.1), Some(problem.out_h)),
            (y_names[2], Some(y.2), Some(problem.out_w)),
        ];
        for (name, given, derived) in sizes {
            if let (Some(given), Some(derived)) = (given, derived) {
                if given != derived {
                    return Err(Error::problem(
                        input,
                        format!(
                            "field '{name}': inconsistent output size {given}; the forward \
                             convolution gives {derived} = (in + 2*pad - dil*(fil-1) - 1)/stride + 1"
                        ),
                    ));
                }
            }
        }
        Ok(problem)
    }

    /// The MIOpen perf-db dash key of this problem, in the direction convention, with a `_g{G}`
    /// suffix only when `groups != 1`. [`ConvProblem::from_perfdb_key`] inverts it.
    ///
    /// A 3-D problem's key is MIOpen's own (`ProblemDescription::Serialize`): the depth first in
    /// every spatial group, NCDHW written once and NDHWC three times (`-NDHWC-NDHWC-NDHWC-`). A
    /// 2-D problem's layout is written once (`-NHWC-FP16-F`), where MIOpen's own key repeats
    /// NHWC for the three tensors (`-NHWC-NHWC-NHWC-FP16-F`); both parse. MIOpen's user perf
    /// databases use the 24-field key ([`ConvProblem::to_db_key`]), which holds one layout.
    pub fn to_perfdb_key(&self) -> String {
        let (c_in, (h_in, w_in)) = (self.in_channels(), self.in_hw());
        let (c_out, (h_out, w_out)) = (self.out_channels(), self.out_hw());
        let bias = u8::from(self.bias);
        let (precision, direction) = (self.precision, self.direction);
        let mut key = match (self.depth, self.in_d(), self.out_d()) {
            (Some(d), Some(d_in), Some(d_out)) => {
                let layout = match self.layout {
                    Layout::Nchw => "NCDHW".to_string(),
                    Layout::Nhwc => "NDHWC-NDHWC-NDHWC".to_string(),
                };
                format!(
                    "{c_in}-{d_in}-{h_in}-{w_in}-{}x{}x{}-{c_out}-{d_out}-{h_out}-{w_out}-{}-{}x{}x{}-{}x{}x{}-{}x{}x{}-\
                     {bias}-{layout}-{precision}-{direction}",
                    d.filter_d,
                    self.filter_h,
                    self.filter_w,
                    self.n,
                    d.pad_d,
                    self.pad_h,
                    self.pad_w,
                    d.stride_d,
                    self.stride_h,
                    self.stride_w,
                    d.dilation_d,
                    self.dilation_h,
                    self.dilation_w,
                )
            }
            _ => format!(
                "{c_in}-{h_in}-{w_in}-{}x{}-{c_out}-{h_out}-{w_out}-{}-{}x{}-{}x{}-{}x{}-{bias}-{}-{precision}-{direction}",
                self.filter_h,
                self.filter_w,
                self.n,
                self.pad_h,
                self.pad_w,
                self.stride_h,
                self.stride_w,
                self.dilation_h,
                self.dilation_w,
                self.layout,
            ),
        };
        if self.groups != 1 {
            key.push_str(&format!("_g{}", self.groups));
        }
        key
    }
}
