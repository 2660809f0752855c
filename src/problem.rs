//! Convolution problems: what a user asks a prediction for.
//!
//! A [`ConvProblem`] always stores the *forward* convolution (x -> y with weights w) plus the
//! direction that is being tuned. MIOpen's "direction convention" (the tensor called `in` is x
//! for forward and dy for backward data / backward weights) is exposed through
//! [`ConvProblem::in_channels`] and friends, so solvers can read features exactly as MIOpen does.

use crate::error::{Error, Result};

/// Data type of the convolution's tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    Fp32,
    Fp16,
    Bf16,
}

/// Which convolution is being tuned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// y = conv(x, w) ("F").
    Forward,
    /// dx from dy and w ("B").
    BackwardData,
    /// dw from dy and x ("W").
    BackwardWeights,
}

/// Memory layout of the activation tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    Nchw,
    Nhwc,
}

/// One 2-D convolution problem, stored as its forward convolution plus the tuned direction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConvProblem {
    /// Batch size N.
    pub n: u64,
    /// Channels of the forward input x (all groups together).
    pub c: u64,
    /// Channels of the forward output y (all groups together).
    pub k: u64,
    /// Spatial size of x.
    pub in_h: u64,
    pub in_w: u64,
    /// Spatial size of y (derived from the others, checked when given).
    pub out_h: u64,
    pub out_w: u64,
    pub filter_h: u64,
    pub filter_w: u64,
    pub pad_h: u64,
    pub pad_w: u64,
    pub stride_h: u64,
    pub stride_w: u64,
    pub dilation_h: u64,
    pub dilation_w: u64,
    pub groups: u64,
    pub bias: bool,
    pub layout: Layout,
    pub precision: Precision,
    pub direction: Direction,
}

/// Largest value accepted for any number in a problem description. MIOpen stores every size as
/// a C `int`, so anything above `i32::MAX` cannot describe a real problem.
pub const MAX_FIELD_VALUE: u64 = i32::MAX as u64;

/// Number of `-`-separated fields of a 2-D MIOpen perf-db key.
pub const PERFDB_KEY_FIELDS: usize = 15;

impl Precision {
    /// MIOpen's spelling: `"FP32"`, `"FP16"` or `"BF16"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "FP32",
            Precision::Fp16 => "FP16",
            Precision::Bf16 => "BF16",
        }
    }

    /// Parses MIOpen's spelling (`"FP32"`, `"FP16"`, `"BF16"`); `None` for anything else.
    pub fn from_name(s: &str) -> Option<Precision> {
        match s {
            "FP32" => Some(Precision::Fp32),
            "FP16" => Some(Precision::Fp16),
            "BF16" => Some(Precision::Bf16),
            _ => None,
        }
    }

    /// Size of one element in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            Precision::Fp32 => 4,
            Precision::Fp16 | Precision::Bf16 => 2,
        }
    }

    /// The MIOpenDriver sub-command for this data type (`conv`, `convfp16`, `convbfp16`).
    pub fn driver_command(self) -> &'static str {
        match self {
            Precision::Fp32 => "conv",
            Precision::Fp16 => "convfp16",
            Precision::Bf16 => "convbfp16",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Precision> {
        Precision::from_name(s)
            .ok_or_else(|| Error::problem(s, format!("unsupported data type '{s}' (expected FP32, FP16 or BF16)")))
    }
}

impl Direction {
    /// MIOpen's one-letter code: `'F'`, `'B'` or `'W'`.
    pub fn as_char(self) -> char {
        match self {
            Direction::Forward => 'F',
            Direction::BackwardData => 'B',
            Direction::BackwardWeights => 'W',
        }
    }

    /// Parses MIOpen's one-letter code; `None` for anything else.
    pub fn from_char(c: char) -> Option<Direction> {
        match c {
            'F' => Some(Direction::Forward),
            'B' => Some(Direction::BackwardData),
            'W' => Some(Direction::BackwardWeights),
            _ => None,
        }
    }

    /// MIOpenDriver's `-F` value: 1 forward, 2 backward data, 4 backward weights.
    pub fn driver_flag(self) -> u64 {
        match self {
            Direction::Forward => 1,
            Direction::BackwardData => 2,
            Direction::BackwardWeights => 4,
        }
    }

    /// True for forward; false for both backward directions (whose "in" tensor is dy).
    pub fn is_forward(self) -> bool {
        self == Direction::Forward
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

impl std::str::FromStr for Direction {
    type Err = Error;
    fn from_str(s: &str) -> Result<Direction> {
        let mut chars = s.chars();
        match (chars.next().and_then(Direction::from_char), chars.next()) {
            (Some(d), None) => Ok(d),
            _ => Err(Error::problem(
                s,
                format!("unknown direction '{s}' (expected F, B or W)"),
            )),
        }
    }
}

impl Layout {
    /// MIOpen's spelling: `"NCHW"` or `"NHWC"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Nchw => "NCHW",
            Layout::Nhwc => "NHWC",
        }
    }

    /// Parses MIOpen's spelling; `None` for anything else.
    pub fn from_name(s: &str) -> Option<Layout> {
        match s {
            "NCHW" => Some(Layout::Nchw),
            "NHWC" => Some(Layout::Nhwc),
            _ => None,
        }
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Layout {
    type Err = Error;
    fn from_str(s: &str) -> Result<Layout> {
        Layout::from_name(s)
            .ok_or_else(|| Error::problem(s, format!("unsupported layout '{s}' (expected NCHW or NHWC)")))
    }
}

/// One row of a perf-db `config` table, column for column (see
/// `shared/miopen/README.md`, "perfdb/"). Same direction convention as the text key: for `B`
/// and `W` rows, `in_*` describe dy and `out_channels` is dx's channel count.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PerfDbConfigRow {
    pub layout: String,
    pub data_type: String,
    pub direction: String,
    pub spatial_dim: i64,
    pub in_channels: i64,
    pub in_h: i64,
    pub in_w: i64,
    pub in_d: i64,
    pub fil_h: i64,
    pub fil_w: i64,
    pub fil_d: i64,
    pub out_channels: i64,
    pub batchsize: i64,
    pub pad_h: i64,
    pub pad_w: i64,
    pub pad_d: i64,
    pub conv_stride_h: i64,
    pub conv_stride_w: i64,
    pub conv_stride_d: i64,
    pub dilation_h: i64,
    pub dilation_w: i64,
    pub dilation_d: i64,
    pub bias: i64,
    pub group_count: i64,
}

/// Output size of one spatial dimension of a convolution, or `None` when it would be empty
/// (filter larger than the padded input) or the arithmetic overflows.
/// `(input + 2*pad - dilation*(filter-1) - 1) / stride + 1`.
pub fn conv_out_size(input: u64, pad: u64, filter: u64, stride: u64, dilation: u64) -> Option<u64> {
    if stride == 0 || filter == 0 {
        return None;
    }
    let padded = input.checked_add(pad.checked_mul(2)?)?;
    let span = dilation.checked_mul(filter - 1)?.checked_add(1)?;
    let room = padded.checked_sub(span)?;
    (room / stride).checked_add(1)
}

/// What a number is allowed to be.
#[derive(Clone, Copy)]
enum Range {
    /// 1..=MAX_FIELD_VALUE.
    Positive,
    /// 0..=MAX_FIELD_VALUE.
    NonNegative,
    /// 0 or 1.
    Flag,
}

impl Range {
    fn expectation(self) -> &'static str {
        match self {
            Range::Positive => "a positive integer",
            Range::NonNegative => "a non-negative integer",
            Range::Flag => "0 or 1",
        }
    }
}

/// Parses a decimal number made only of ASCII digits and checks its range. `what` names the
/// field or flag in the error message, e.g. `field 'N' (batch)`.
fn parse_num(input: &str, what: &str, text: &str, range: Range) -> Result<u64> {
    let bad = || Error::problem(input, format!("{what}: expected {}, got '{text}'", range.expectation()));
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let value: u64 = match text.parse() {
        Ok(v) => v,
        Err(_) => {
            return Err(Error::problem(
                input,
                format!("{what}: value '{text}' is out of range (at most {MAX_FIELD_VALUE})"),
            ))
        }
    };
    match range {
        Range::Positive if value == 0 => Err(bad()),
        Range::Flag if value > 1 => Err(bad()),
        _ if value > MAX_FIELD_VALUE => Err(Error::problem(
            input,
            format!("{what}: value '{text}' is out of range (at most {MAX_FIELD_VALUE})"),
        )),
        _ => Ok(value),
    }
}

/// Checks an `i64` column of the perf-db `config` table.
fn check_col(input: &str, name: &str, value: i64, range: Range) -> Result<u64> {
    let ok = match range {
        Range::Positive => value >= 1,
        Range::NonNegative => value >= 0,
        Range::Flag => value == 0 || value == 1,
    };
    let v = u64::try_from(value).ok().filter(|_| ok).ok_or_else(|| {
        Error::problem(
            input,
            format!("column '{name}': expected {}, got {value}", range.expectation()),
        )
    })?;
    if v > MAX_FIELD_VALUE {
        return Err(Error::problem(
            input,
            format!("column '{name}': value {value} is out of range (at most {MAX_FIELD_VALUE})"),
        ));
    }
    Ok(v)
}

/// Parses an `AxB` pair of a perf-db key (filter, pad, stride, dilation).
fn parse_pair(input: &str, field: &str, text: &str, names: [&str; 2], range: Range) -> Result<(u64, u64)> {
    let parts: Vec<&str> = text.split('x').collect();
    match parts.as_slice() {
        [a, b] => Ok((
            parse_num(input, &format!("field '{}' ({field})", names[0]), a, range)?,
            parse_num(input, &format!("field '{}' ({field})", names[1]), b, range)?,
        )),
        [_, _, _] => Err(Error::problem(
            input,
            format!(
                "field '{field}': got 3 values '{text}'; 3-D convolutions are not supported \
                 (expected {}x{})",
                names[0], names[1]
            ),
        )),
        _ => Err(Error::problem(
            input,
            format!("field '{field}': expected '{}x{}', got '{text}'", names[0], names[1]),
        )),
    }
}

/// Raw values of a 2-D problem as MIOpen describes it (direction convention), before
/// validation. Used by all three parsers so that the checks are written once.
struct Raw {
    n: u64,
    /// Channels and spatial size of the forward input x.
    c: u64,
    in_h: u64,
    in_w: u64,
    /// Channels of the forward output y.
    k: u64,
    filter_h: u64,
    filter_w: u64,
    pad_h: u64,
    pad_w: u64,
    stride_h: u64,
    stride_w: u64,
    dilation_h: u64,
    dilation_w: u64,
    groups: u64,
    bias: bool,
    layout: Layout,
    precision: Precision,
    direction: Direction,
}

impl Raw {
    /// Derives y's spatial size and checks group divisibility. `field_h`/`field_w` name the
    /// input fields in the "output would be empty" error.
    fn finish(self, input: &str, field_h: &str, field_w: &str) -> Result<ConvProblem> {
        let out = |dim: &str, field: &str, i, p, f, s, d| {
            conv_out_size(i, p, f, s, d).ok_or_else(|| {
                Error::problem(
                    input,
                    format!(
                        "{field}: output {dim} would be empty (input {i} + 2*pad {p} is smaller \
                         than the dilated filter {d}*({f}-1)+1)"
                    ),
                )
            })
        };
        let out_h = out(
            "height",
            field_h,
            self.in_h,
            self.pad_h,
            self.filter_h,
            self.stride_h,
            self.dilation_h,
        )?;
        let out_w = out(
            "width",
            field_w,
            self.in_w,
            self.pad_w,
            self.filter_w,
            self.stride_w,
            self.dilation_w,
        )?;
        if !self.c.is_multiple_of(self.groups) || !self.k.is_multiple_of(self.groups) {
            return Err(Error::problem(
                input,
                format!(
                    "groups: group count {} must divide both input channels C={} and output \
                     channels K={}",
                    self.groups, self.c, self.k
                ),
            ));
        }
        Ok(ConvProblem {
            n: self.n,
            c: self.c,
            k: self.k,
            in_h: self.in_h,
            in_w: self.in_w,
            out_h,
            out_w,
            filter_h: self.filter_h,
            filter_w: self.filter_w,
            pad_h: self.pad_h,
            pad_w: self.pad_w,
            stride_h: self.stride_h,
            stride_w: self.stride_w,
            dilation_h: self.dilation_h,
            dilation_w: self.dilation_w,
            groups: self.groups,
            bias: self.bias,
            layout: self.layout,
            precision: self.precision,
            direction: self.direction,
        })
    }
}

/// The value-taking flags of MIOpenDriver's `conv*` commands that tuneinfer understands:
/// (short, long, what it means).
const DRIVER_FLAGS: &[(&str, &str, &str)] = &[
    ("-n", "--batchsize", "batch size"),
    ("-c", "--in_channels", "input channels"),
    ("-H", "--in_h", "input height"),
    ("-W", "--in_w", "input width"),
    ("-k", "--out_channels", "output channels"),
    ("-y", "--fil_h", "filter height"),
    ("-x", "--fil_w", "filter width"),
    ("-p", "--pad_h", "padding height"),
    ("-q", "--pad_w", "padding width"),
    ("-u", "--conv_stride_h", "stride height"),
    ("-v", "--conv_stride_w", "stride width"),
    ("-l", "--dilation_h", "dilation height"),
    ("-j", "--dilation_w", "dilation width"),
    ("-g", "--group_count", "group count"),
    ("-F", "--forw", "direction"),
    ("-b", "--bias", "bias"),
    ("-m", "--mode", "convolution mode"),
    ("-_", "--spatial_dim", "spatial dimensions"),
    ("-_", "--in_layout", "input layout"),
    ("-_", "--out_layout", "output layout"),
    ("-_", "--fil_layout", "filter layout"),
    ("-z", "--pad_mode", "padding mode"),
    // Accepted and ignored: they change how the driver runs, not the problem.
    ("-t", "--time", "timing"),
    ("-V", "--verify", "verification"),
    ("-i", "--iter", "iterations"),
    ("-s", "--search", "search"),
    ("-w", "--wall", "wall-clock timing"),
    ("-P", "--printconv", "print convolution"),
];

/// Looks a driver flag up; returns its long name (the canonical key) and description.
fn driver_flag(token: &str) -> Option<(&'static str, &'static str)> {
    DRIVER_FLAGS
        .iter()
        .find(|(short, long, _)| (token == *short && *short != "-_") || token == *long)
        .map(|(_, long, what)| (*long, *what))
}

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
        let fields: Vec<&str> = key.split('-').collect();
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

    /// Parses MIOpenDriver's arguments, e.g.
    /// `["convfp16", "-n", "256", "-c", "2048", ...]`. The first word picks the data type
    /// (`conv` FP32, `convfp16`, `convbfp16`). Flags may be short (`-n 256`) or long
    /// (`--batchsize 256` or `--batchsize=256`); each may be given once.
    ///
    /// Missing flags take MIOpenDriver's defaults (n 100, c 3, H 32, W 32, k 32, y 3, x 3,
    /// p 0, q 0, u 1, v 1, l 1, j 1, g 1, NCHW, no bias) except `-F`: the driver's default 0
    /// means "all directions", which is not one problem, so we take forward (1). An explicit
    /// `-F` must be 1 (forward), 2 (backward data) or 4 (backward weights).
    ///
    /// Flags that only change how the driver runs (`-t`, `-V`, `-i`, `-s`, `-w`, `-P`) are
    /// accepted and ignored; `-z/--pad_mode` must be `default`, `-m/--mode` must be `conv`,
    /// `--spatial_dim` must be 2, and `--out_layout`/`--fil_layout` must equal `--in_layout`.
    pub fn from_driver_args(args: &[&str]) -> Result<ConvProblem> {
        let input = args.join(" ");
        let input = input.as_str();
        let (command, rest) = match args.split_first() {
            Some(split) => split,
            None => return Err(Error::problem(input, "empty MIOpenDriver command line")),
        };
        let precision = match *command {
            "conv" => Precision::Fp32,
            "convfp16" => Precision::Fp16,
            "convbfp16" => Precision::Bf16,
            other => {
                return Err(Error::problem(
                    input,
                    format!(
                        "unsupported MIOpenDriver command '{other}' (expected conv, convfp16 or \
                         convbfp16)"
                    ),
                ))
            }
        };
        // (long flag, token as written, value)
        let mut given: Vec<(&'static str, &str, &str)> = Vec::new();
        let mut i = 0;
        while let Some(&token) = rest.get(i) {
            i += 1;
            // Long flags may carry their value inline: `--batchsize=256`.
            let (flag_text, inline_value) = match token.split_once('=') {
                Some((name, value)) if token.starts_with("--") => (name, Some(value)),
                _ => (token, None),
            };
            if !flag_text.starts_with('-') {
                return Err(Error::problem(
                    input,
                    format!("unexpected argument '{token}' (expected a flag such as -n)"),
                ));
            }
            let (long, what) = driver_flag(flag_text)
                .ok_or_else(|| Error::problem(input, format!("unknown MIOpenDriver flag '{flag_text}'")))?;
            let value = match inline_value {
                Some(v) => v,
                None => match rest.get(i) {
                    Some(v) if !looks_like_flag(v) => {
                        i += 1;
                        *v
                    }
                    _ => {
                        return Err(Error::problem(
                            input,
                            format!("flag {flag_text} ({what}): missing value"),
                        ))
                    }
                },
            };
            if let Some((_, first, _)) = given.iter().find(|(l, _, _)| *l == long) {
                return Err(Error::problem(
                    input,
                    format!("flag {flag_text} ({what}): given more than once (also as {first})"),
                ));
            }
            given.push((long, flag_text, value));
        }
        let lookup = |long: &str| given.iter().find(|(l, _, _)| *l == long).copied();
        let num = |long: &str, default: u64, range: Range| -> Result<u64> {
            match lookup(long) {
                None => Ok(default),
                Some((_, written, value)) => {
                    let what = driver_flag(long).map_or("", |(_, w)| w);
                    parse_num(input, &format!("flag {written} ({what})"), value, range)
                }
            }
        };
        let n = num("--batchsize", 100, Range::Positive)?;
        let c = num("--in_channels", 3, Range::Positive)?;
        let in_h = num("--in_h", 32, Range::Positive)?;
        let in_w = num("--in_w", 32, Range::Positive)?;
        let k = num("--out_channels", 32, Range::Positive)?;
        let filter_h = num("--fil_h", 3, Range::Positive)?;
        let filter_w = num("--fil_w", 3, Range::Positive)?;
        let pad_h = num("--pad_h", 0, Range::NonNegative)?;
        let pad_w = num("--pad_w", 0, Range::NonNegative)?;
        let stride_h = num("--conv_stride_h", 1, Range::Positive)?;
        let stride_w = num("--conv_stride_w", 1, Range::Positive)?;
        let dilation_h = num("--dilation_h", 1, Range::Positive)?;
        let dilation_w = num("--dilation_w", 1, Range::Positive)?;
        let groups = num("--group_count", 1, Range::Positive)?;
        let bias = num("--bias", 0, Range::Flag)? == 1;
        for ignored in ["--time", "--verify", "--iter", "--search", "--wall", "--printconv"] {
            num(ignored, 0, Range::NonNegative)?;
        }
        let direction = match lookup("--forw") {
            None => Direction::Forward,
            Some((_, written, value)) => match value {
                "1" => Direction::Forward,
                "2" => Direction::BackwardData,
                "4" => Direction::BackwardWeights,
                "0" | "3" | "5" | "6" | "7" => {
                    return Err(Error::problem(
                        input,
                        format!(
                            "flag {written} (direction): value {value} selects several \
                             directions; pick one: 1 (forward), 2 (backward data) or 4 \
                             (backward weights)"
                        ),
                    ))
                }
                _ => {
                    return Err(Error::problem(
                        input,
                        format!(
                            "flag {written} (direction): expected 1 (forward), 2 (backward \
                             data) or 4 (backward weights), got '{value}'"
                        ),
                    ))
                }
            },
        };
        let text_flag = |long: &str, allowed: &[&str]| -> Result<()> {
            match lookup(long) {
                Some((_, written, value)) if !allowed.contains(&value) => {
                    let what = driver_flag(long).map_or("", |(_, w)| w);
                    Err(Error::problem(
                        input,
                        format!(
                            "flag {written} ({what}): unsupported value '{value}' (only {} \
                             supported)",
                            allowed.join(", ")
                        ),
                    ))
                }
                _ => Ok(()),
            }
        };
        text_flag("--mode", &["conv"])?;
        text_flag("--spatial_dim", &["2"])?;
        text_flag("--pad_mode", &["default"])?;
        let layout_of = |long: &str| -> Result<Option<(Layout, &str)>> {
            match lookup(long) {
                None => Ok(None),
                Some((_, written, value)) => match Layout::from_name(value) {
                    Some(l) => Ok(Some((l, written))),
                    None => Err(Error::problem(
                        input,
                        format!("flag {written}: unsupported layout '{value}' (expected NCHW or NHWC)"),
                    )),
                },
            }
        };
        let layout = layout_of("--in_layout")?.map_or(Layout::Nchw, |(l, _)| l);
        for long in ["--out_layout", "--fil_layout"] {
            if let Some((other, written)) = layout_of(long)? {
                if other != layout {
                    return Err(Error::problem(
                        input,
                        format!(
                            "flag {written}: layout {other} differs from the input layout \
                             {layout} (--in_layout); mixed layouts are not supported"
                        ),
                    ));
                }
            }
        }
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
        raw.finish(input, "flags -H/-y/-p/-u/-l", "flags -W/-x/-q/-v/-j")
    }

    /// [`ConvProblem::from_driver_args`] on a command line split on whitespace.
    pub fn from_driver_line(line: &str) -> Result<ConvProblem> {
        let args: Vec<&str> = line.split_whitespace().collect();
        ConvProblem::from_driver_args(&args).map_err(|e| match e {
            Error::InvalidProblem { reason, .. } => Error::problem(line, reason),
            other => other,
        })
    }

    /// Auto-detects the format: text starting with `conv` is a MIOpenDriver command line,
    /// anything else a perf-db key.
    pub fn parse(input: &str) -> Result<ConvProblem> {
        if input.trim_start().starts_with("conv") {
            ConvProblem::from_driver_line(input)
        } else {
            ConvProblem::from_perfdb_key(input)
        }
    }

    /// Builds a problem from one row of a perf-db `config` table.
    ///
    /// Only `spatial_dim` 2 is supported; the `*_d` columns are ignored then (MIOpen stores
    /// in_d = fil_d = 1 and pad_d = conv_stride_d = dilation_d = 0 for 2-D rows).
    ///
    /// The table does not store output spatial sizes. For `F` rows `in_h`/`in_w` are x's size
    /// and y's is derived. For `B` and `W` rows `in_h`/`in_w` are dy's size (the forward output)
    /// and x's size is not stored: it is recovered as the *smallest* x whose forward output is
    /// dy, i.e. `x = (dy-1)*stride - 2*pad + dil*(fil-1) + 1` (at least 1). With stride > 1
    /// several x sizes give the same dy; MIOpen's own key for such a row would carry the x
    /// size that was tuned, which this table has lost.
    pub fn from_perfdb_columns(cols: &PerfDbConfigRow) -> Result<ConvProblem> {
        let input = format!("{cols:?}");
        let input = input.as_str();
        if cols.spatial_dim != 2 {
            return Err(Error::problem(
                input,
                format!(
                    "column 'spatial_dim': only 2-D convolutions are supported, got {}",
                    cols.spatial_dim
                ),
            ));
        }
        let layout = Layout::from_name(&cols.layout).ok_or_else(|| {
            Error::problem(
                input,
                format!(
                    "column 'layout': unsupported layout '{}' (expected NCHW or NHWC)",
                    cols.layout
                ),
            )
        })?;
        let precision = Precision::from_name(&cols.data_type).ok_or_else(|| {
            Error::problem(
                input,
                format!(
                    "column 'data_type': unsupported data type '{}' (expected FP32, FP16 or BF16)",
                    cols.data_type
                ),
            )
        })?;
        let direction = cols.direction.parse::<Direction>().map_err(|_| {
            Error::problem(
                input,
                format!("column 'direction': expected F, B or W, got '{}'", cols.direction),
            )
        })?;
        let col = |name: &str, v: i64, r: Range| check_col(input, name, v, r);
        let c_in = col("in_channels", cols.in_channels, Range::Positive)?;
        let h_in = col("in_h", cols.in_h, Range::Positive)?;
        let w_in = col("in_w", cols.in_w, Range::Positive)?;
        let filter_h = col("fil_h", cols.fil_h, Range::Positive)?;
        let filter_w = col("fil_w", cols.fil_w, Range::Positive)?;
        let c_out = col("out_channels", cols.out_channels, Range::Positive)?;
        let n = col("batchsize", cols.batchsize, Range::Positive)?;
        let pad_h = col("pad_h", cols.pad_h, Range::NonNegative)?;
        let pad_w = col("pad_w", cols.pad_w, Range::NonNegative)?;
        let stride_h = col("conv_stride_h", cols.conv_stride_h, Range::Positive)?;
        let stride_w = col("conv_stride_w", cols.conv_stride_w, Range::Positive)?;
        let dilation_h = col("dilation_h", cols.dilation_h, Range::Positive)?;
        let dilation_w = col("dilation_w", cols.dilation_w, Range::Positive)?;
        let bias = col("bias", cols.bias, Range::Flag)? == 1;
        let groups = col("group_count", cols.group_count, Range::Positive)?;
        let (c, k, in_h, in_w) = if direction.is_forward() {
            (c_in, c_out, h_in, w_in)
        } else {
            let recover = |name: &str, dy: u64, pad: u64, fil: u64, stride: u64, dil: u64| {
                smallest_input(dy, pad, fil, stride, dil).ok_or_else(|| {
                    Error::problem(
                        input,
                        format!(
                            "column '{name}': no forward input size gives output size {dy} \
                             with filter {fil}, pad {pad}, stride {stride}, dilation {dil}"
                        ),
                    )
                })
            };
            let x_h = recover("in_h", h_in, pad_h, filter_h, stride_h, dilation_h)?;
            let x_w = recover("in_w", w_in, pad_w, filter_w, stride_w, dilation_w)?;
            (c_out, c_in, x_h, x_w)
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
        raw.finish(input, "columns in_h/fil_h/pad_h", "columns in_w/fil_w/pad_w")
    }

    /// The MIOpen perf-db key of this problem, in the direction convention, with a `_g{G}`
    /// suffix only when `groups != 1`. [`ConvProblem::from_perfdb_key`] inverts it.
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

    /// An equivalent MIOpenDriver command line (all flags explicit);
    /// [`ConvProblem::from_driver_line`] inverts it.
    pub fn to_driver_line(&self) -> String {
        let mut line = format!(
            "{} -n {} -c {} -H {} -W {} -k {} -y {} -x {} -p {} -q {} -u {} -v {} -l {} -j {} \
             -g {} -F {}",
            self.precision.driver_command(),
            self.n,
            self.c,
            self.in_h,
            self.in_w,
            self.k,
            self.filter_h,
            self.filter_w,
            self.pad_h,
            self.pad_w,
            self.stride_h,
            self.stride_w,
            self.dilation_h,
            self.dilation_w,
            self.groups,
            self.direction.driver_flag(),
        );
        if self.bias {
            line.push_str(" -b 1");
        }
        if self.layout != Layout::Nchw {
            let l = self.layout;
            line.push_str(&format!(" --in_layout {l} --out_layout {l} --fil_layout {l}"));
        }
        line
    }

    /// Channels of the direction's input tensor: x (C) for forward, dy (K) for backward
    /// data and backward weights.
    pub fn in_channels(&self) -> u64 {
        if self.direction.is_forward() {
            self.c
        } else {
            self.k
        }
    }

    /// Channels of the direction's output tensor: y (K) for forward, dx (C) for backward.
    pub fn out_channels(&self) -> u64 {
        if self.direction.is_forward() {
            self.k
        } else {
            self.c
        }
    }

    /// (H, W) of the direction's input tensor: x for forward, dy for backward.
    pub fn in_hw(&self) -> (u64, u64) {
        if self.direction.is_forward() {
            (self.in_h, self.in_w)
        } else {
            (self.out_h, self.out_w)
        }
    }

    /// (H, W) of the direction's output tensor: y for forward, dx for backward.
    pub fn out_hw(&self) -> (u64, u64) {
        if self.direction.is_forward() {
            (self.out_h, self.out_w)
        } else {
            (self.in_h, self.in_w)
        }
    }
}

impl std::fmt::Display for ConvProblem {
    /// Writes the perf-db key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_perfdb_key())
    }
}

impl std::str::FromStr for ConvProblem {
    type Err = Error;
    /// Same as [`ConvProblem::parse`].
    fn from_str(s: &str) -> Result<ConvProblem> {
        ConvProblem::parse(s)
    }
}

/// True for a token that is a flag rather than a value (`-n`, `--iter`), false for values,
/// including negative numbers such as `-1` (which then fail the range check with a clear error).
fn looks_like_flag(token: &str) -> bool {
    match token.strip_prefix('-') {
        Some(rest) => !rest.is_empty() && !rest.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// The smallest forward input size whose output size is `out`, if any.
fn smallest_input(out: u64, pad: u64, filter: u64, stride: u64, dilation: u64) -> Option<u64> {
    let span = dilation.checked_mul(filter.checked_sub(1)?)?.checked_add(1)?;
    let needed = out.checked_sub(1)?.checked_mul(stride)?.checked_add(span)?;
    let x = needed.saturating_sub(pad.checked_mul(2)?).max(1);
    (conv_out_size(x, pad, filter, stride, dilation)? == out).then_some(x)
}
