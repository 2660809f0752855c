//! Rows of a sqlite perf database's `config` table.

use super::*;

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

impl ConvProblem {
    /// Builds a problem from one row of a perf-db `config` table.
    ///
    /// `spatial_dim` 2 (layout NCHW or NHWC) or 3 (NCDHW or NDHWC: a 3-D problem, even when its
    /// depths are 1). For 2-D rows the `*_d` columns are ignored (MIOpen stores in_d = fil_d = 1
    /// and pad_d = conv_stride_d = dilation_d = 0 for them).
    ///
    /// The table does not store output spatial sizes. For `F` rows `in_d`/`in_h`/`in_w` are x's
    /// size and y's is derived. For `B` and `W` rows they are dy's size (the forward output)
    /// and x's size is not stored: it is recovered as the *smallest* x whose forward output is
    /// dy, i.e. `x = (dy-1)*stride - 2*pad + dil*(fil-1) + 1` (at least 1). With stride > 1
    /// several x sizes give the same dy; MIOpen's own key for such a row would carry the x
    /// size that was tuned, which this table has lost.
    pub fn from_perfdb_columns(cols: &PerfDbConfigRow) -> Result<ConvProblem> {
        let input = format!("{cols:?}");
        let input = input.as_str();
        let three_d = match cols.spatial_dim {
            2 => false,
            3 => true,
            other => {
                return Err(Error::problem(
                    input,
                    format!("column 'spatial_dim': only 2-D and 3-D convolutions are supported, got {other}"),
                ))
            }
        };
        let layout = Layout::parse_for(&cols.layout, cols.spatial_dim as u8).map_err(|why| {
            Error::problem(
                input,
                format!("column 'layout': {why} (spatial_dim {})", cols.spatial_dim),
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
        // The direction's input depth (dy's for B and W), as in_h and in_w.
        let depth = if three_d {
            Some(RawDepth {
                in_d: col("in_d", cols.in_d, Range::Positive)?,
                filter_d: col("fil_d", cols.fil_d, Range::Positive)?,
                pad_d: col("pad_d", cols.pad_d, Range::NonNegative)?,
                stride_d: col("conv_stride_d", cols.conv_stride_d, Range::Positive)?,
                dilation_d: col("dilation_d", cols.dilation_d, Range::Positive)?,
            })
        } else {
            None
        };
        let (c, k, in_h, in_w, depth) = if direction.is_forward() {
            (c_in, c_out, h_in, w_in, depth)
        } else {
            let recover = |name: &str, dy: u64, pad: u64, fil: u64, stride: u64, dil: u64| {
                let x = smallest_input(dy, pad, fil, stride, dil).ok_or_else(|| {
                    Error::problem(
                        input,
                        format!(
                            "column '{name}': no forward input size gives output size {dy} \
                             with filter {fil}, pad {pad}, stride {stride}, dilation {dil}"
                        ),
                    )
                })?;
                if x > MAX_FIELD_VALUE {
                    return Err(Error::problem(
                        input,
                        format!(
                            "column '{name}': the forward input size {x} that gives output size \
                             {dy} with stride {stride} is out of range (at most {MAX_FIELD_VALUE})"
                        ),
                    ));
                }
                Ok(x)
            };
            let x_h = recover("in_h", h_in, pad_h, filter_h, stride_h, dilation_h)?;
            let x_w = recover("in_w", w_in, pad_w, filter_w, stride_w, dilation_w)?;
            let depth = match depth {
                None => None,
                Some(d) => Some(RawDepth {
                    in_d: recover("in_d", d.in_d, d.pad_d, d.filter_d, d.stride_d, d.dilation_d)?,
                    ..d
                }),
            };
            (c_out, c_in, x_h, x_w, depth)
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
            depth,
        };
        raw.finish(
            input,
            [
                "columns in_d/fil_d/pad_d",
                "columns in_h/fil_h/pad_h",
                "columns in_w/fil_w/pad_w",
            ],
        )
    }

    /// The problem as a sqlite perf database stores it: for backward directions the x size is
    /// not stored, and a row's problem takes the smallest x that gives its dy size (see
    /// [`ConvProblem::from_perfdb_columns`]). Text keys carry the tuned x size; this maps them
    /// onto the same record, so rows of the two kinds of database are recognised as one problem.
    /// Forward problems, and backward ones whose x is already the smallest, are unchanged.
    pub fn as_stored_in_sqlite(&self) -> ConvProblem {
        let mut p = self.clone();
        if !p.direction.is_forward() {
            if let Some(h) = smallest_input(p.out_h, p.pad_h, p.filter_h, p.stride_h, p.dilation_h) {
                p.in_h = h;
            }
            if let Some(w) = smallest_input(p.out_w, p.pad_w, p.filter_w, p.stride_w, p.dilation_w) {
                p.in_w = w;
            }
            if let Some(d) = p.depth.as_mut() {
                if let Some(x) = smallest_input(d.out_d, d.pad_d, d.filter_d, d.stride_d, d.dilation_d) {
                    d.in_d = x;
                }
            }
        }
        p
    }
}

/// Number of `x`-separated fields of MIOpen's current text perf-db key: the 24 columns of the
/// sqlite `config` table.
pub const DB_KEY_FIELDS: usize = 24;

/// The integer columns of the `config` table in the order MIOpen's
/// `ProblemDescription::Visit` lists them (`src/include/miopen/conv/problem_description.hpp`),
/// which is the order of the text key; the three text columns (layout, data_type, direction)
/// follow them.
pub const DB_KEY_INT_COLUMNS: [&str; 21] = [
    "spatial_dim",
    "in_channels",
    "in_h",
    "in_w",
    "in_d",
    "fil_h",
    "fil_w",
    "fil_d",
    "out_channels",
    "batchsize",
    "pad_h",
    "pad_w",
    "pad_d",
    "conv_stride_h",
    "conv_stride_w",
    "conv_stride_d",
    "dilation_h",
    "dilation_w",
    "dilation_d",
    "bias",
    "group_count",
];

impl PerfDbConfigRow {
    /// The integer columns in [`DB_KEY_INT_COLUMNS`] order.
    pub fn int_columns(&self) -> [i64; 21] {
        [
            self.spatial_dim,
            self.in_channels,
            self.in_h,
            self.in_w,
            self.in_d,
            self.fil_h,
            self.fil_w,
            self.fil_d,
            self.out_channels,
            self.batchsize,
            self.pad_h,
            self.pad_w,
            self.pad_d,
            self.conv_stride_h,
            self.conv_stride_w,
            self.conv_stride_d,
            self.dilation_h,
            self.dilation_w,
            self.dilation_d,
            self.bias,
            self.group_count,
        ]
    }

    /// MIOpen's text perf-db key of this row: the integer columns, then layout, data type and
    /// direction, joined by `x` (`DbRecord::SerializeKey` over `ProblemDescription::VisitAll`).
    pub fn to_db_key(&self) -> String {
        let mut key = String::with_capacity(80);
        for v in self.int_columns() {
            key.push_str(&v.to_string());
            key.push('x');
        }
        key.push_str(&self.layout);
        key.push('x');
        key.push_str(&self.data_type);
        key.push('x');
        key.push_str(&self.direction);
        key
    }
}

impl ConvProblem {
    /// The row of a sqlite perf database's `config` table that MIOpen writes for this problem
    /// (direction convention; for 2-D problems in_d = fil_d = 1 and pad_d = conv_stride_d =
    /// dilation_d = 0, as MIOpen's getters give them; a 3-D problem's row has spatial_dim 3, its
    /// depths and layout NCDHW or NDHWC). For backward problems the x size is not part of the
    /// row (see [`ConvProblem::from_perfdb_columns`]).
    pub fn to_perfdb_columns(&self) -> PerfDbConfigRow {
        let (in_h, in_w) = self.in_hw();
        let i = |v: u64| v as i64;
        // MIOpen's getters for a 2-D problem: depth 1 for the tensors, 0 for pad/stride/dilation.
        let (in_d, fil_d, pad_d, stride_d, dilation_d) = match (self.depth, self.in_d()) {
            (Some(d), Some(in_d)) => (i(in_d), i(d.filter_d), i(d.pad_d), i(d.stride_d), i(d.dilation_d)),
            _ => (1, 1, 0, 0, 0),
        };
        PerfDbConfigRow {
            layout: self.layout_name().to_string(),
            data_type: self.precision.as_str().to_string(),
            direction: self.direction.as_char().to_string(),
            spatial_dim: i64::from(self.spatial_dims()),
            in_channels: i(self.in_channels()),
            in_h: i(in_h),
            in_w: i(in_w),
            in_d,
            fil_h: i(self.filter_h),
            fil_w: i(self.filter_w),
            fil_d,
            out_channels: i(self.out_channels()),
            batchsize: i(self.n),
            pad_h: i(self.pad_h),
            pad_w: i(self.pad_w),
            pad_d,
            conv_stride_h: i(self.stride_h),
            conv_stride_w: i(self.stride_w),
            conv_stride_d: stride_d,
            dilation_h: i(self.dilation_h),
            dilation_w: i(self.dilation_w),
            dilation_d,
            bias: i64::from(self.bias),
            group_count: i(self.groups),
        }
    }

    /// MIOpen's current text perf-db key (user `*.udb.txt` and system `.db.txt` files, ROCm 6.2
    /// and later), e.g. `2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xW`, or for
    /// a 3-D problem `3x64x7x7x4x3x3x3x64x8x1x1x1x1x1x1x1x1x1x0x1xNCDHWxFP32xF`: the 24 columns
    /// of [`ConvProblem::to_perfdb_columns`] joined by `x`.
    pub fn to_db_key(&self) -> String {
        self.to_perfdb_columns().to_db_key()
    }

    /// Parses MIOpen's 24-field text key ([`ConvProblem::to_db_key`]). Like a sqlite row, it
    /// does not hold the x size of a backward problem: the smallest x that gives its dy size is
    /// taken ([`ConvProblem::from_perfdb_columns`]).
    pub fn from_db_key(key: &str) -> Result<ConvProblem> {
        let input = key;
        let fields: Vec<&str> = key.trim().split('x').collect();
        if fields.len() != DB_KEY_FIELDS {
            return Err(Error::problem(
                input,
                format!(
                    "expected {DB_KEY_FIELDS} 'x'-separated fields (spatial_dim x in_channels x \
                     in_h x in_w x in_d x fil_h x fil_w x fil_d x out_channels x batchsize x \
                     pad_h/w/d x conv_stride_h/w/d x dilation_h/w/d x bias x group_count x \
                     layout x data_type x direction), got {}",
                    fields.len()
                ),
            ));
        }
        let mut ints = [0i64; 21];
        for (slot, (name, text)) in ints.iter_mut().zip(DB_KEY_INT_COLUMNS.iter().zip(&fields)) {
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) || text.len() > 10 {
                return Err(Error::problem(
                    input,
                    format!("field '{name}': expected a non-negative integer, got '{text}'"),
                ));
            }
            *slot = text.parse().map_err(|_| {
                Error::problem(
                    input,
                    format!("field '{name}': expected a non-negative integer, got '{text}'"),
                )
            })?;
        }
        let [spatial_dim, in_channels, in_h, in_w, in_d, fil_h, fil_w, fil_d, out_channels, batchsize, pad_h, pad_w, pad_d, conv_stride_h, conv_stride_w, conv_stride_d, dilation_h, dilation_w, dilation_d, bias, group_count] =
            ints;
        if spatial_dim == 2 && (in_d, fil_d, pad_d, conv_stride_d, dilation_d) != (1, 1, 0, 0, 0) {
            return Err(Error::problem(
                input,
                format!(
                    "fields in_d, fil_d, pad_d, conv_stride_d, dilation_d of a 2-D key must be \
                     1, 1, 0, 0, 0 (as MIOpen writes them), got {in_d}, {fil_d}, {pad_d}, \
                     {conv_stride_d}, {dilation_d}"
                ),
            ));
        }
        let row = PerfDbConfigRow {
            layout: fields[21].to_string(),
            data_type: fields[22].to_string(),
            direction: fields[23].to_string(),
            spatial_dim,
            in_channels,
            in_h,
            in_w,
            in_d,
            fil_h,
            fil_w,
            fil_d,
            out_channels,
            batchsize,
            pad_h,
            pad_w,
            pad_d,
            conv_stride_h,
            conv_stride_w,
            conv_stride_d,
            dilation_h,
            dilation_w,
            dilation_d,
            bias,
            group_count,
        };
        ConvProblem::from_perfdb_columns(&row).map_err(|e| match e {
            Error::InvalidProblem { reason, .. } => Error::problem(input, reason.replace("column '", "field '")),
            other => other,
        })
    }
}
