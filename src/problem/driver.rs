//! MIOpenDriver arguments (`conv -n 256 -c 2048 ...`): parsing and writing.

use super::*;

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
    // The depth of a 3-D problem (`--spatial_dim 3`; MIOpenDriver's short flags).
    ("-!", "--in_d", "input depth"),
    ("-@", "--fil_d", "filter depth"),
    ("-$", "--pad_d", "padding depth"),
    ("-#", "--conv_stride_d", "stride depth"),
    ("-^", "--dilation_d", "dilation depth"),
    ("-_", "--spatial_dim", "spatial dimensions"),
    ("-I", "--in_layout", "input layout"),
    ("-O", "--out_layout", "output layout"),
    ("-f", "--fil_layout", "filter layout"),
    ("-z", "--pad_mode", "padding mode"),
    // Transposed convolutions' output padding (`-m trans` only; MIOpen's logs never print it).
    ("-Y", "--trans_output_pad_h", "transposed output padding height"),
    ("-X", "--trans_output_pad_w", "transposed output padding width"),
    ("-%", "--trans_output_pad_d", "transposed output padding depth"),
    // Accepted and ignored: they change how the driver runs, not the problem.
    ("-t", "--time", "timing"),
    ("-V", "--verify", "verification"),
    ("-i", "--iter", "iterations"),
    ("-s", "--search", "search"),
    ("-w", "--wall", "wall-clock timing"),
    ("-P", "--printconv", "print convolution"),
    // MIOpen's own log lines carry these: `-S` names the solver of an immediate-mode call.
    ("-S", "--solution", "solution"),
];

/// The flags of a 3-D problem's depth: MIOpenDriver reads them only with `--spatial_dim 3`.
const DEPTH_FLAGS: [&str; 6] = [
    "--in_d",
    "--fil_d",
    "--pad_d",
    "--conv_stride_d",
    "--dilation_d",
    "--trans_output_pad_d",
];

/// Looks a driver flag up; returns its long name (the canonical key) and description.
/// `--spatial_dim`'s short form is MIOpenDriver's `-_`.
fn driver_flag(token: &str) -> Option<(&'static str, &'static str)> {
    DRIVER_FLAGS
        .iter()
        .find(|(short, long, _)| token == *short || token == *long)
        .map(|(_, long, what)| (*long, *what))
}

impl ConvProblem {
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
    /// `--spatial_dim 3` (`-_ 3`) makes a 3-D problem (even with a depth of 1): its depth from
    /// `-!/--in_d` (default 32), `-@/--fil_d` (3), `-$/--pad_d` (0), `-#/--conv_stride_d` (1) and
    /// `-^/--dilation_d` (1), layouts NCDHW (the default) or NDHWC. A depth flag without
    /// `--spatial_dim 3` is an error (MIOpenDriver would ignore it).
    ///
    /// Flags that only change how the driver runs (`-t`, `-V`, `-i`, `-s`, `-w`, `-P`, `-S`) are
    /// accepted and ignored; `-z/--pad_mode` must be `default`, `--spatial_dim` 2 or 3, and
    /// `--out_layout`/`--fil_layout` must equal `--in_layout`.
    ///
    /// `-m trans` (a transposed convolution, `-g 1`, output padding `-Y`/`-X` below the
    /// strides) gives the convolution MIOpen runs and tunes for it: x and y swapped (C and K,
    /// and the spatial sizes), forward and backward data exchanged (see `Transposed`).
    pub fn from_driver_args(args: &[&str]) -> Result<ConvProblem> {
        let input = args.join(" ");
        let mut problems = ConvProblem::driver_problems(args, false)?;
        match problems.pop() {
            Some(p) if problems.is_empty() => Ok(p),
            _ => Err(Error::Internal(format!("{input}: one direction expected"))),
        }
    }

    /// Every problem a MIOpenDriver command line runs: like [`ConvProblem::from_driver_args`],
    /// except that `-F` is MIOpenDriver's bit mask (1 forward, 2 backward data, 4 backward
    /// weights, sums of them; 0 means all three), giving one problem per direction, in the
    /// order F, B, W. Without `-F`, the forward problem (as [`ConvProblem::from_driver_args`]).
    pub fn from_driver_args_all(args: &[&str]) -> Result<Vec<ConvProblem>> {
        ConvProblem::driver_problems(args, true)
    }

    /// [`ConvProblem::from_driver_args_all`] on a command line split on whitespace.
    pub fn from_driver_line_all(line: &str) -> Result<Vec<ConvProblem>> {
        let args: Vec<&str> = line.split_whitespace().collect();
        ConvProblem::from_driver_args_all(&args).map_err(|e| match e {
            Error::InvalidProblem { reason, .. } => Error::problem(line, reason),
            other => other,
        })
    }

    fn driver_problems(args: &[&str], several: bool) -> Result<Vec<ConvProblem>> {
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
        // `--spatial_dim 3`: a 3-D problem, its depth from the depth flags with MIOpenDriver's
        // defaults (in_d 32, fil_d 3, pad_d 0, conv_stride_d 1, dilation_d 1), even a depth of 1.
        let spatial_dims: u8 = match lookup("--spatial_dim") {
            None | Some((_, _, "2")) => 2,
            Some((_, _, "3")) => 3,
            Some((_, written, value)) => {
                return Err(Error::problem(
                    input,
                    format!("flag {written} (spatial dimensions): expected 2 or 3, got '{value}'"),
                ))
            }
        };
        if spatial_dims == 2 {
            if let Some((_, written, _)) = DEPTH_FLAGS.iter().find_map(|long| lookup(long)) {
                return Err(Error::problem(
                    input,
                    format!(
                        "flag {written}: a depth flag needs --spatial_dim 3 (a 2-D problem has no \
                         depth; MIOpenDriver ignores it)"
                    ),
                ));
            }
        }
        let depth = if spatial_dims == 3 {
            Some(RawDepth {
                in_d: num("--in_d", 32, Range::Positive)?,
                filter_d: num("--fil_d", 3, Range::Positive)?,
                pad_d: num("--pad_d", 0, Range::NonNegative)?,
                stride_d: num("--conv_stride_d", 1, Range::Positive)?,
                dilation_d: num("--dilation_d", 1, Range::Positive)?,
            })
        } else {
            None
        };
        for ignored in [
            "--time",
            "--verify",
            "--iter",
            "--search",
            "--wall",
            "--printconv",
            "--solution",
        ] {
            num(ignored, 0, Range::NonNegative)?;
        }
        let directions: Vec<Direction> = match lookup("--forw") {
            // MIOpenDriver's default is 0 (all three), but a problem typed without -F has always
            // meant the forward one here; MIOpen's logs always carry -F.
            None => vec![Direction::Forward],
            Some((_, written, value)) => {
                let mask: Option<u8> = value.parse().ok().filter(|m| *m <= 7);
                match mask {
                    Some(1) => vec![Direction::Forward],
                    Some(2) => vec![Direction::BackwardData],
                    Some(4) => vec![Direction::BackwardWeights],
                    Some(m) if several => {
                        let all = [Direction::Forward, Direction::BackwardData, Direction::BackwardWeights];
                        all.into_iter()
                            .filter(|d| m == 0 || m & d.driver_flag() as u8 != 0)
                            .collect()
                    }
                    Some(_) => {
                        return Err(Error::problem(
                            input,
                            format!(
                                "flag {written} (direction): value {value} selects several \
                                 directions; pick one: 1 (forward), 2 (backward data) or 4 \
                                 (backward weights)"
                            ),
                        ))
                    }
                    None => {
                        return Err(Error::problem(
                            input,
                            format!(
                                "flag {written} (direction): expected 1 (forward), 2 (backward \
                                 data) or 4 (backward weights){}, got '{value}'",
                                if several {
                                    ", a sum of them, or 0 (all three)"
                                } else {
                                    ""
                                }
                            ),
                        ))
                    }
                }
            }
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
        let transposed = matches!(lookup("--mode"), Some((_, _, "trans")));
        let out_pad_h = num("--trans_output_pad_h", 0, Range::NonNegative)?;
        let out_pad_w = num("--trans_output_pad_w", 0, Range::NonNegative)?;
        let out_pad_d = num("--trans_output_pad_d", 0, Range::NonNegative)?;
        if transposed && groups > 1 {
            return Err(Error::problem(
                input,
                format!(
                    "-m trans with -g {groups}: a grouped transposed convolution cannot be read \
                     back from its command line (MIOpen's log prints -k as the output channels \
                     of one group, MIOpenDriver reads it as all groups'); tuneinfer predicts \
                     transposed convolutions with -g 1 only"
                ),
            ));
        }
        if !transposed && (out_pad_h > 0 || out_pad_w > 0 || out_pad_d > 0) {
            return Err(Error::problem(
                input,
                "flags -Y/-X/-% (transposed output padding) apply to '-m trans' only",
            ));
        }
        if let Some(d) = depth.filter(|d| transposed && out_pad_d >= d.stride_d) {
            return Err(Error::problem(
                input,
                format!(
                    "flag -% (transposed output padding depth {out_pad_d}): must be smaller than \
                     the depth stride ({}), as MIOpen requires",
                    d.stride_d
                ),
            ));
        }
        if transposed && (out_pad_h >= stride_h || out_pad_w >= stride_w) {
            return Err(Error::problem(
                input,
                format!(
                    "flags -Y/-X (transposed output padding {out_pad_h}x{out_pad_w}): each must \
                     be smaller than its stride ({stride_h}x{stride_w}), as MIOpen requires"
                ),
            ));
        }
        text_flag("--mode", &["conv", "trans"])?;
        text_flag("--pad_mode", &["default"])?;
        let layout_of = |long: &str| -> Result<Option<(Layout, &str)>> {
            match lookup(long) {
                None => Ok(None),
                Some((_, written, value)) => match Layout::parse_for(value, spatial_dims) {
                    Ok(l) => Ok(Some((l, written))),
                    Err(why) => Err(Error::problem(input, format!("flag {written}: {why}"))),
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
                            "flag {written}: layout {} differs from the input layout \
                             {} (--in_layout); mixed layouts are not supported",
                            other.name(spatial_dims),
                            layout.name(spatial_dims)
                        ),
                    ));
                }
            }
        }
        directions
            .into_iter()
            .map(|direction| {
                if transposed {
                    let trans = Transposed {
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
                        out_pad_h,
                        out_pad_w,
                        bias,
                        layout,
                        precision,
                        direction,
                        depth,
                        out_pad_d,
                    };
                    return trans.as_miopen_runs_it(input);
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
                    depth,
                };
                raw.finish(input, DRIVER_FIELDS)
            })
            .collect()
    }

    /// [`ConvProblem::from_driver_args`] on a command line split on whitespace.
    pub fn from_driver_line(line: &str) -> Result<ConvProblem> {
        let args: Vec<&str> = line.split_whitespace().collect();
        ConvProblem::from_driver_args(&args).map_err(|e| match e {
            Error::InvalidProblem { reason, .. } => Error::problem(line, reason),
            other => other,
        })
    }

    /// An equivalent MIOpenDriver command line (all flags explicit; a 3-D problem's with
    /// `--spatial_dim 3` and its depth flags, as MIOpen logs them);
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
        if let Some(d) = self.depth {
            line.push_str(&format!(
                " --spatial_dim 3 --in_d {} --fil_d {} --pad_d {} --conv_stride_d {} --dilation_d {}",
                d.in_d, d.filter_d, d.pad_d, d.stride_d, d.dilation_d
            ));
        }
        if self.layout != Layout::Nchw {
            let l = self.layout_name();
            line.push_str(&format!(" --in_layout {l} --out_layout {l} --fil_layout {l}"));
        }
        line
    }
}

/// The flags of depth, height and width in the "output would be empty" error.
const DRIVER_FIELDS: [&str; 3] = ["flags -!/-@/-$/-#/-^", "flags -H/-y/-p/-u/-l", "flags -W/-x/-q/-v/-j"];

/// True for a token that is a flag rather than a value (`-n`, `--iter`), false for values,
/// including negative numbers such as `-1` (which then fail the range check with a clear error).
fn looks_like_flag(token: &str) -> bool {
    match token.strip_prefix('-') {
        Some(rest) => !rest.is_empty() && !rest.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// A transposed convolution (`-m trans`) as MIOpenDriver's flags describe it: x has `c`
/// channels and `in_h` x `in_w` pixels, y has `k` channels and
/// `max(1, stride*(in-1) + 1 + dilation*(filter-1) - 2*pad + out_pad)` pixels
/// (MIOpen's `GetForwardOutputTensorWithLayout`, mode `miopenTranspose`).
struct Transposed {
    n: u64,
    c: u64,
    in_h: u64,
    in_w: u64,
    k: u64,
    filter_h: u64,
    filter_w: u64,
    pad_h: u64,
    pad_w: u64,
    stride_h: u64,
    stride_w: u64,
    dilation_h: u64,
    dilation_w: u64,
    out_pad_h: u64,
    out_pad_w: u64,
    bias: bool,
    layout: Layout,
    precision: Precision,
    direction: Direction,
    /// The depth of a 3-D problem (None: 2-D) and its output padding.
    depth: Option<RawDepth>,
    out_pad_d: u64,
}

impl Transposed {
    /// The convolution MIOpen runs (and tunes, under its key) for this one
    /// (`src/convolution_api.cpp`, `MakeFwdCtxAndProblem` and friends): x and y swap places, so
    /// the transposed y (`k` channels, the larger image) is the input of an ordinary convolution
    /// whose output is the transposed x (`c` channels); a transposed forward runs as that
    /// convolution's backward data, a transposed backward data as its forward, and backward
    /// weights stays backward weights. Pads, strides and dilations are the same.
    fn as_miopen_runs_it(&self, input: &str) -> Result<ConvProblem> {
        let out = |i: u64, s: u64, f: u64, d: u64, p: u64, op: u64| -> u64 {
            let size = (s * (i - 1) + 1 + d * (f - 1) + op).saturating_sub(2 * p);
            size.max(1)
        };
        let out_h = out(
            self.in_h,
            self.stride_h,
            self.filter_h,
            self.dilation_h,
            self.pad_h,
            self.out_pad_h,
        );
        let out_w = out(
            self.in_w,
            self.stride_w,
            self.filter_w,
            self.dilation_w,
            self.pad_w,
            self.out_pad_w,
        );
        let out_d = self
            .depth
            .map(|d| out(d.in_d, d.stride_d, d.filter_d, d.dilation_d, d.pad_d, self.out_pad_d));
        if out_h > MAX_FIELD_VALUE || out_w > MAX_FIELD_VALUE || out_d.is_some_and(|d| d > MAX_FIELD_VALUE) {
            return Err(Error::problem(
                input,
                format!("-m trans: output {out_h}x{out_w} is larger than MIOpen's int sizes"),
            ));
        }
        let direction = match self.direction {
            Direction::Forward => Direction::BackwardData,
            Direction::BackwardData => Direction::Forward,
            Direction::BackwardWeights => Direction::BackwardWeights,
        };
        let raw = Raw {
            n: self.n,
            c: self.k,
            in_h: out_h,
            in_w: out_w,
            k: self.c,
            filter_h: self.filter_h,
            filter_w: self.filter_w,
            pad_h: self.pad_h,
            pad_w: self.pad_w,
            stride_h: self.stride_h,
            stride_w: self.stride_w,
            dilation_h: self.dilation_h,
            dilation_w: self.dilation_w,
            groups: 1,
            bias: self.bias,
            layout: self.layout,
            precision: self.precision,
            direction,
            depth: match (self.depth, out_d) {
                (Some(d), Some(out_d)) => Some(RawDepth { in_d: out_d, ..d }),
                _ => None,
            },
        };
        let problem = raw.finish(input, DRIVER_FIELDS)?;
        // The ordinary convolution's output is the transposed input again, unless the output
        // size was clamped to 1 (a filter larger than the padded image): MIOpen cannot run that.
        let depth_back = problem.depth.map(|d| d.out_d) == self.depth.map(|d| d.in_d);
        if (problem.out_h, problem.out_w) != (self.in_h, self.in_w) || !depth_back {
            return Err(Error::problem(
                input,
                format!(
                    "-m trans: the padding ({}x{}) leaves no output (MIOpen clamps it to {out_h}x{out_w}, \
                     whose convolution does not give back the {}x{} input)",
                    self.pad_h, self.pad_w, self.in_h, self.in_w
                ),
            ));
        }
        Ok(problem)
    }
}
