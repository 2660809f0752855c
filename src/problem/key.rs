//! MIOpen's perf-db text key (`2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F`): parsing and writing.

use super::*;

impl ConvProblem {
    /// Parses a 2-D MIOpen perf-db key such as
    /// `2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F` (optionally followed by a group
    /// suffix, `...-F_g16`):
    /// `C_in-H_in-W_in-FyxFx-C_out-H_out-W_out-N-PadHxPadW-StrideHxStrideW-DilHxDilW-bias-layout-type-direction`.
    ///
    /// In/out follow MIOpen's direction convention: for `F` "in" is x and "out" is y; for `B`
    /// and `W` "in" is dy and "out" is dx. The result stores the forward convolution. The given
    /// output size must match the one the forward convolution produces.
    pub fn from_perfdb_key(key: &str) -> Result<ConvProblem> {
        let input = key;
        let key = key.trim();
        let mut fields: Vec<&str> = key.split('-').collect();
        // MIOpen writes a layout other than NCHW three times, for x, w and y
        // (`ProblemDescription::Serialize`: `...-0-NHWC-NHWC-NHWC-FP16-F`); tuneinfer writes it
        // once. Both are read; three layouts must agree (mixed layouts are not supported).
        if fields.len() == PERFDB_KEY_FIELDS + 2 && fields[12..15].iter().all(|f| Layout::from_name(f).is_some()) {
            if fields[12] != fields[13] || fields[12] != fields[14] {
                return Err(Error::problem(
                    input,
                    format!(
                        "fields 'layout': input, weights and output layouts {}, {}, {} differ; mixed layouts are not supported",
                        fields[12], fields[13], fields[14]
                    ),
                ));
            }
            fields.drain(13..15);
        }
        let fields: [&str; PERFDB_KEY_FIELDS] = match fields.as_slice().try_into() {
            Ok(f) => f,
            Err(_) => {
                // A 3-D key has 17 fields: C-D-H-W-FzxFyxFx-K-D-H-W-N-PadDxPadHxPadW-...
                let three_d = fields.len() == 17 || fields.iter().any(|f| f.split('x').count() == 3 && !f.is_empty());
                let hint = if three_d {
                    " (this looks like a 3-D key; only 2-D convolutions are supported)"
                } else {
                    ""
                };
                return Err(Error::problem(
                    input,
                    format!(
                        "expected {PERFDB_KEY_FIELDS} '-'-separated fields \
                         (C_in-H_in-W_in-FyxFx-C_out-H_out-W_out-N-PadHxPadW-StrideHxStrideW-\
                         DilHxDilW-bias-layout-type-direction), got {}{hint}",
                        fields.len()
                    ),
                ));
            }
        };
        let [c_in, h_in, w_in, fil, c_out, h_out, w_out, n, pad, stride, dil, bias, layout, ty, dir] = fields;
        let num = |name: &str, what: &str, text: &str, range: Range| {
            parse_num(input, &format!("field '{name}' ({what})"), text, range)
        };
        let c_in = num("C_in", "input channels", c_in, Range::Positive)?;
        let h_in = num("H_in", "input height", h_in, Range::Positive)?;
        let w_in = num("W_in", "input width", w_in, Range::Positive)?;
        let (filter_h, filter_w) = parse_pair(input, "filter", fil, ["Fy", "Fx"], Range::Positive)?;
        let c_out = num("C_out", "output channels", c_out, Range::Positive)?;
        let h_out = num("H_out", "output height", h_out, Range::Positive)?;
        let w_out = num("W_out", "output width", w_out, Range::Positive)?;
        let n = num("N", "batch", n, Range::Positive)?;
        let (pad_h, pad_w) = parse_pair(input, "pad", pad, ["PadH", "PadW"], Range::NonNegative)?;
        let (stride_h, stride_w) = parse_pair(input, "stride", stride, ["StrideH", "StrideW"], Range::Positive)?;
        let (dilation_h, dilation_w) = parse_pair(input, "dilation", dil, ["DilH", "DilW"], Range::Positive)?;
        let bias = num("bias", "bias", bias, Range::Flag)? == 1;
        let layout = Layout::from_name(layout).ok_or_else(|| {
            Error::problem(
                input,
                format!("field 'layout': unsupported layout '{layout}' (expected NCHW or NHWC)"),
            )
        })?;
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
        let (c, in_h, in_w, k, out_h, out_w) = if direction.is_forward() {
            (c_in, h_in, w_in, c_out, h_out, w_out)
        } else {
            (c_out, h_out, w_out, c_in, h_in, w_in)
        };
        let (x_h, x_w) = if direction.is_forward() {
            ("H_in", "W_in")
        } else {
            ("H_out", "W_out")
        };
        let (y_h, y_w) = if direction.is_forward() {
            ("H_out", "W_out")
        } else {
            ("H_in", "W_in")
        };
        let raw = Raw {
            n,
            c,
            in_h,
            in_w,
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
        };
        let problem = raw.finish(
            input,
            &format!("field '{x_h}' (forward input height)"),
            &format!("field '{x_w}' (forward input width)"),
        )?;
        for (name, given, derived) in [(y_h, out_h, problem.out_h), (y_w, out_w, problem.out_w)] {
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
        Ok(problem)
    }

    /// The MIOpen perf-db key of this problem, in the direction convention, with a `_g{G}`
    /// suffix only when `groups != 1`. [`ConvProblem::from_perfdb_key`] inverts it. A layout other
    /// than NCHW is written once (`-NHWC-FP16-F`), where MIOpen's own key repeats it for the three
    /// tensors (`-NHWC-NHWC-NHWC-FP16-F`); both parse. MIOpen's user perf databases use the
    /// 24-field key ([`ConvProblem::to_db_key`]), which holds one layout.
    pub fn to_perfdb_key(&self) -> String {
        let (c_in, (h_in, w_in)) = (self.in_channels(), self.in_hw());
        let (c_out, (h_out, w_out)) = (self.out_channels(), self.out_hw());
        let mut key = format!(
            "{c_in}-{h_in}-{w_in}-{}x{}-{c_out}-{h_out}-{w_out}-{}-{}x{}-{}x{}-{}x{}-{}-{}-{}-{}",
            self.filter_h,
            self.filter_w,
            self.n,
            self.pad_h,
            self.pad_w,
            self.stride_h,
            self.stride_w,
            self.dilation_h,
            self.dilation_w,
            u8::from(self.bias),
            self.layout,
            self.precision,
            self.direction,
        );
        if self.groups != 1 {
            key.push_str(&format!("_g{}", self.groups));
        }
        key
    }
}
