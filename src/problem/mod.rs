//! Convolution problems: what a user asks a prediction for.
//!
//! A [`ConvProblem`] always stores the *forward* convolution (x -> y with weights w) plus the
//! direction that is being tuned. MIOpen's "direction convention" (the tensor called `in` is x
//! for forward and dy for backward data / backward weights) is exposed through
//! [`ConvProblem::in_channels`] and friends, so solvers can read features exactly as MIOpen does.
//!
//! A problem is 2-D (MIOpen's `spatial_dim` 2: NCHW or NHWC) or 3-D (`spatial_dim` 3: NCDHW or
//! NDHWC, the depth in [`ConvProblem::depth`]). A 3-D problem stays 3-D when its depth is 1:
//! MIOpen keys it as a 3-D problem (`3x...x1x...xNCDHW...`), a different record from the 2-D one.

use crate::error::{Error, Result};

mod driver;
mod input;
mod key;
mod row;

pub use input::{parse_line, InputLine};
pub use row::{PerfDbConfigRow, DB_KEY_FIELDS, DB_KEY_INT_COLUMNS};

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

/// Memory layout of the activation tensors: channels first or channels last. A 3-D problem's
/// layout is the same choice with a depth: [`Layout::Nchw`] is MIOpen's NCDHW and
/// [`Layout::Nhwc`] its NDHWC ([`Layout::name`], [`ConvProblem::layout_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// NCHW (2-D), NCDHW (3-D).
    Nchw,
    /// NHWC (2-D), NDHWC (3-D).
    Nhwc,
}

/// The depth dimension of a 3-D problem, in the forward convention like the H and W fields of
/// [`ConvProblem`]: `in_d` is x's depth and `out_d` y's (derived from the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Depth {
    pub in_d: u64,
    pub out_d: u64,
    pub filter_d: u64,
    pub pad_d: u64,
    pub stride_d: u64,
    pub dilation_d: u64,
}

/// One 2-D or 3-D convolution problem, stored as its forward convolution plus the tuned
/// direction.
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
    /// The depth of a 3-D problem (MIOpen's `spatial_dim` 3, layouts NCDHW and NDHWC); None for
    /// a 2-D problem. Some with every size 1 is still a 3-D problem, as MIOpen keys it.
    pub depth: Option<Depth>,
}

/// Largest value accepted for any number in a problem description. MIOpen stores every size as
/// a C `int`, so anything above `i32::MAX` cannot describe a real problem.
pub const MAX_FIELD_VALUE: u64 = i32::MAX as u64;

/// Number of `-`-separated fields of a 2-D MIOpen perf-db key.
pub const PERFDB_KEY_FIELDS: usize = 15;

/// Number of `-`-separated fields of a 3-D MIOpen perf-db key (`C-D-H-W-FdxFhxFw-K-D-H-W-N-...`:
/// the depths of in and out add two fields).
pub const PERFDB_KEY_FIELDS_3D: usize = 17;

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
    /// MIOpen's 2-D spelling: `"NCHW"` or `"NHWC"` ([`Layout::name`] for a 3-D problem's).
    pub fn as_str(self) -> &'static str {
        self.name(2)
    }

    /// MIOpen's spelling for a problem of `spatial_dims` dimensions: `"NCHW"`/`"NHWC"` for 2,
    /// `"NCDHW"`/`"NDHWC"` for 3.
    pub fn name(self, spatial_dims: u8) -> &'static str {
        match (self, spatial_dims == 3) {
            (Layout::Nchw, false) => "NCHW",
            (Layout::Nhwc, false) => "NHWC",
            (Layout::Nchw, true) => "NCDHW",
            (Layout::Nhwc, true) => "NDHWC",
        }
    }

    /// Parses MIOpen's 2-D spelling (`"NCHW"`, `"NHWC"`); `None` for anything else.
    pub fn from_name(s: &str) -> Option<Layout> {
        match Layout::from_any_name(s) {
            Some((l, 2)) => Some(l),
            _ => None,
        }
    }

    /// Parses any of MIOpen's four spellings into the layout and its spatial dimensions:
    /// NCHW, NHWC (2), NCDHW, NDHWC (3); `None` for anything else.
    pub fn from_any_name(s: &str) -> Option<(Layout, u8)> {
        match s {
            "NCHW" => Some((Layout::Nchw, 2)),
            "NHWC" => Some((Layout::Nhwc, 2)),
            "NCDHW" => Some((Layout::Nchw, 3)),
            "NDHWC" => Some((Layout::Nhwc, 3)),
            _ => None,
        }
    }

    /// The layout of a problem of `spatial_dims` dimensions spelled `s`, or an error reason
    /// (without the field's name) naming the spellings that fit.
    fn parse_for(s: &str, spatial_dims: u8) -> std::result::Result<Layout, String> {
        match Layout::from_any_name(s) {
            Some((l, d)) if d == spatial_dims => Ok(l),
            Some((_, 2)) => Err(format!(
                "the 2-D layout '{s}' in a 3-D problem (MIOpen's 3-D layouts are NCDHW and NDHWC)"
            )),
            Some(_) => Err(format!(
                "the 3-D layout '{s}' in a 2-D problem (MIOpen's 2-D layouts are NCHW and NHWC)"
            )),
            None if spatial_dims == 3 => Err(format!("unsupported layout '{s}' (expected NCDHW or NDHWC)")),
            None => Err(format!("unsupported layout '{s}' (expected NCHW or NHWC)")),
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

/// Parses an `AxB` (2-D) or `AxBxC` (3-D: depth first) field of a perf-db key (filter, pad,
/// stride, dilation): one value per name in `names`.
fn parse_axes<const D: usize>(
    input: &str,
    field: &str,
    text: &str,
    names: [&str; D],
    range: Range,
) -> Result<[u64; D]> {
    let parts: Vec<&str> = text.split('x').collect();
    let form = names.join("x");
    if parts.len() != D {
        let hint = match (D, parts.len()) {
            (2, 3) => "; a 3-D key has 17 fields (C-D-H-W-FzxFyxFx-K-D-H-W-N-...)",
            (3, 2) => "; a 2-D key has 15 fields (C-H-W-FyxFx-K-H-W-N-...)",
            _ => "",
        };
        return Err(Error::problem(
            input,
            format!("field '{field}': expected '{form}', got '{text}'{hint}"),
        ));
    }
    let mut out = [0u64; D];
    for ((slot, name), part) in out.iter_mut().zip(names).zip(parts) {
        *slot = parse_num(input, &format!("field '{name}' ({field})"), part, range)?;
    }
    Ok(out)
}

/// Raw values of a problem as MIOpen describes it (direction convention), before validation.
/// Used by all three parsers so that the checks are written once.
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
    /// The depth of a 3-D problem (None: 2-D).
    depth: Option<RawDepth>,
}

/// The depth values of a 3-D problem before validation (forward convention: `in_d` is x's).
#[derive(Clone, Copy)]
struct RawDepth {
    in_d: u64,
    filter_d: u64,
    pad_d: u64,
    stride_d: u64,
    dilation_d: u64,
}

impl Raw {
    /// Derives y's spatial size and checks group divisibility. `fields` name the input fields
    /// of depth, height and width in the "output would be empty" error.
    fn finish(self, input: &str, fields: [&str; 3]) -> Result<ConvProblem> {
        let out = |dim: &str, field: &str, i, p, f, s, d| {
            let size = conv_out_size(i, p, f, s, d).ok_or_else(|| {
                Error::problem(
                    input,
                    format!(
                        "{field}: output {dim} would be empty (input {i} + 2*pad {p} is smaller \
                         than the dilated filter {d}*({f}-1)+1)"
                    ),
                )
            })?;
            // A large pad can make the output larger than any size MIOpen stores (a C int).
            if size > MAX_FIELD_VALUE {
                return Err(Error::problem(
                    input,
                    format!("{field}: output {dim} {size} is out of range (at most {MAX_FIELD_VALUE})"),
                ));
            }
            Ok(size)
        };
        let depth = match self.depth {
            None => None,
            Some(d) => Some(Depth {
                in_d: d.in_d,
                out_d: out(
                    "depth",
                    fields[0],
                    d.in_d,
                    d.pad_d,
                    d.filter_d,
                    d.stride_d,
                    d.dilation_d,
                )?,
                filter_d: d.filter_d,
                pad_d: d.pad_d,
                stride_d: d.stride_d,
                dilation_d: d.dilation_d,
            }),
        };
        let out_h = out(
            "height",
            fields[1],
            self.in_h,
            self.pad_h,
            self.filter_h,
            self.stride_h,
            self.dilation_h,
        )?;
        let out_w = out(
            "width",
            fields[2],
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
            depth,
        })
    }
}

impl ConvProblem {
    /// One problem in any form [`parse_line`] reads (a dash or 24-field perf-db key, a
    /// MIOpenDriver line, a MIOpen log line), except that a driver line without `-F` is the
    /// forward problem ([`ConvProblem::from_driver_args`]); a line naming several problems
    /// (`-F 0`), none, or a log line that is not a convolution is an error.
    pub fn parse(input: &str) -> Result<ConvProblem> {
        if input.trim_start().starts_with("conv") {
            return ConvProblem::from_driver_line(input);
        }
        match parse_line(input)? {
            InputLine::Problems(mut p) if p.len() == 1 => Ok(p.remove(0)),
            InputLine::Problems(p) => Err(Error::problem(
                input,
                format!(
                    "names {} problems (one per direction its -F selects); name one: -F 1 \
                     (forward), 2 (backward data) or 4 (backward weights)",
                    p.len()
                ),
            )),
            // What a key needs, for a blank line or a comment.
            InputLine::Blank => ConvProblem::from_perfdb_key(input),
            InputLine::Skipped(what) => Err(Error::problem(input, format!("{what}, not a problem"))),
        }
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

    /// MIOpen's `spatial_dim`: 2, or 3 for a problem with a depth (even a depth of 1).
    pub fn spatial_dims(&self) -> u8 {
        if self.depth.is_some() {
            3
        } else {
            2
        }
    }

    /// True for a 3-D problem (MIOpen's `spatial_dim` 3), whatever its depth.
    pub fn is_3d(&self) -> bool {
        self.depth.is_some()
    }

    /// The layout as MIOpen spells it for this problem: NCHW or NHWC (2-D), NCDHW or NDHWC (3-D).
    pub fn layout_name(&self) -> &'static str {
        self.layout.name(self.spatial_dims())
    }

    /// Depth of the direction's input tensor (x for forward, dy for backward); None for 2-D.
    pub fn in_d(&self) -> Option<u64> {
        self.depth
            .map(|d| if self.direction.is_forward() { d.in_d } else { d.out_d })
    }

    /// Depth of the direction's output tensor (y for forward, dx for backward); None for 2-D.
    pub fn out_d(&self) -> Option<u64> {
        self.depth
            .map(|d| if self.direction.is_forward() { d.out_d } else { d.in_d })
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

/// The smallest forward input size whose output size is `out`, if any.
fn smallest_input(out: u64, pad: u64, filter: u64, stride: u64, dilation: u64) -> Option<u64> {
    let span = dilation.checked_mul(filter.checked_sub(1)?)?.checked_add(1)?;
    let needed = out.checked_sub(1)?.checked_mul(stride)?.checked_add(span)?;
    let x = needed.saturating_sub(pad.checked_mul(2)?).max(1);
    (conv_out_size(x, pad, filter, stride, dilation)? == out).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MIOpen's four layout spellings (`ProblemDescription::IsLayoutDefault` / `IsLayoutNHWC`:
    /// NCHW and NHWC for 2-D, NCDHW and NDHWC for 3-D), both ways.
    #[test]
    fn layouts_are_spelled_per_spatial_dims() {
        let table = [
            ("NCHW", Layout::Nchw, 2),
            ("NHWC", Layout::Nhwc, 2),
            ("NCDHW", Layout::Nchw, 3),
            ("NDHWC", Layout::Nhwc, 3),
        ];
        for (name, layout, dims) in table {
            assert_eq!(Layout::from_any_name(name), Some((layout, dims)));
            assert_eq!(layout.name(dims), name);
            assert_eq!(Layout::parse_for(name, dims), Ok(layout));
            let other = 5 - dims;
            let why = Layout::parse_for(name, other).unwrap_err();
            assert!(
                why.contains(&format!("the {dims}-D layout '{name}' in a {other}-D problem")),
                "{why}"
            );
        }
        assert_eq!(Layout::from_name("NCDHW"), None);
        assert_eq!(Layout::from_any_name("CHWN"), None);
        assert!(Layout::parse_for("CHWN", 3)
            .unwrap_err()
            .contains("expected NCDHW or NDHWC"));
    }

    /// A spatial field has one value per dimension; the wrong count says which key form has it.
    #[test]
    fn spatial_fields_name_the_other_form() {
        let two = parse_axes("k", "pad", "0x0x0", ["PadH", "PadW"], Range::NonNegative).unwrap_err();
        assert!(two.to_string().contains("a 3-D key has 17 fields"), "{two}");
        let three = parse_axes("k", "pad", "0x1", ["PadD", "PadH", "PadW"], Range::NonNegative).unwrap_err();
        assert!(three.to_string().contains("a 2-D key has 15 fields"), "{three}");
        assert_eq!(
            parse_axes("k", "pad", "2x0x1", ["PadD", "PadH", "PadW"], Range::NonNegative).unwrap(),
            [2, 0, 1]
        );
    }
}
