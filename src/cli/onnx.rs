//! `tuneinfer problems --onnx FILE`, and the `--onnx` input of `batch` and `userdb`: an ONNX
//! network's convolution problems as MIOpenDriver lines (`crate::onnx`).

use std::path::Path;

use super::{wants_help, Args, Spec};
use crate::error::{Error, Result};
use crate::onnx::{self, Network, Options};
use crate::problem::{Layout, Precision};

const HELP: &str = "\
Usage: tuneinfer problems --onnx FILE [--batch N] [--training] [--precision P] [--layout L]

Prints the distinct MIOpen convolution problems of an ONNX network as MIOpenDriver command
lines, the form 'batch --input' and 'userdb --input' read (and MIOpen logs), with no GPU: the
problems a framework hands MIOpen when it runs the network. Shapes are propagated through the
graph (value_info where the model states them); weights are not read, so a model whose
external data files are missing reads too. 1-D convolutions are written as MIOpen gets them
from PyTorch (2-D, H = 1), 3-D ones with --spatial_dim 3, ConvTranspose as '-m trans';
padding MIOpen cannot express (begin != end) is rewritten as frameworks do, said on stderr.
A summary goes to stderr: convolutions found, problems, distinct ones, ops passed through.

Options:
  --onnx FILE        the ONNX model (.onnx)
  --batch N          the batch size (needed when the model's is symbolic; a fixed one is
                     replaced, said on stderr)
  --training         forward, backward data and backward weights of every convolution, as a
                     training step calls MIOpen (no backward data for a convolution whose
                     input needs no gradient, e.g. the network's input)
  --precision P      fp32, fp16 or bf16 for every problem (default: each convolution's input
                     type; an override for mixed precision)
  --layout L         NCHW (default) or NHWC (channels-last)

The same options take the network directly in 'userdb --onnx FILE' and 'batch --onnx FILE',
where the data type is --onnx-precision (their --precision is the GPU's weights). Errors
(not an ONNX model, an unsupported operator set, a convolution whose input shape cannot be
derived, bad dimensions) are one line on stderr, with nothing written: exit 2 (a symbolic
batch without --batch), 3 (file), 4 (the model), 5 (a convolution MIOpen cannot run).";

/// The options `problems` takes.
const VALUED: &[&str] = &["onnx", "batch", "precision", "layout"];
const FLAGS: &[&str] = &["training"];

/// The ONNX options of `batch` and `userdb` (`--onnx-precision`: their `--precision` is the
/// GPU's weights).
pub(super) const INPUT_VALUED: &[&str] = &["onnx", "batch", "onnx-precision", "layout"];
/// See [`INPUT_VALUED`].
pub(super) const INPUT_FLAGS: &[&str] = &["training"];

/// The network's options from the command line; `precision` names the data-type option.
fn options(args: &Args, precision: &str) -> Result<Options> {
    let batch = match args.value("batch") {
        None => None,
        Some(_) => Some(args.positive("batch", 1, crate::problem::MAX_FIELD_VALUE as usize)? as u64),
    };
    let precision = match args.value(precision) {
        None => None,
        Some(p) => Some(match p.to_ascii_lowercase().as_str() {
            "fp32" | "f32" | "float" | "float32" => Precision::Fp32,
            "fp16" | "f16" | "half" | "float16" => Precision::Fp16,
            "bf16" | "bfloat16" => Precision::Bf16,
            _ => {
                return Err(Error::Usage(format!(
                    "--{precision} '{}': expected fp32, fp16 or bf16",
                    crate::error::quote_short(p)
                )))
            }
        }),
    };
    let layout = match args.value("layout") {
        None => Layout::Nchw,
        Some(l) => match l.to_ascii_uppercase().as_str() {
            "NCHW" | "NCDHW" => Layout::Nchw,
            "NHWC" | "NDHWC" => Layout::Nhwc,
            _ => {
                return Err(Error::Usage(format!(
                    "--layout '{}': expected NCHW or NHWC",
                    crate::error::quote_short(l)
                )))
            }
        },
    };
    Ok(Options {
        batch,
        training: args.flag("training"),
        precision,
        layout,
    })
}

/// Reads the network of `--onnx` and reports its summary and notes on stderr.
fn read(path: &str, options: &Options) -> Result<Network> {
    let network = onnx::problems_from_file(Path::new(path), options)?;
    for note in &network.notes {
        eprintln!("note: {note}");
    }
    eprintln!("{}", network.summary(path));
    Ok(network)
}

/// For `batch` and `userdb`, before anything else is done: `--onnx` with `--input`, or the
/// network's options without `--onnx`, is a usage error, and so is a bad option value.
pub(super) fn check_input_options(args: &Args) -> Result<()> {
    if args.value("onnx").is_none() {
        for name in INPUT_VALUED.iter().chain(INPUT_FLAGS) {
            if args.value(name).is_some() || args.flag(name) {
                return Err(Error::Usage(format!("--{name} applies to --onnx FILE only")));
            }
        }
        return Ok(());
    }
    if args.value("input").is_some() {
        return Err(Error::Usage("give --onnx FILE or --input FILE, not both".into()));
    }
    options(args, "onnx-precision").map(|_| ())
}

/// For `batch` and `userdb`: the network of `--onnx` as the lines their reader takes (its
/// summary and notes on stderr), or None without `--onnx`.
pub(super) fn input_lines(args: &Args) -> Result<Option<(String, String)>> {
    check_input_options(args)?;
    let Some(path) = args.value("onnx") else {
        return Ok(None);
    };
    let network = read(path, &options(args, "onnx-precision")?)?;
    let mut text = String::new();
    for line in network.lines() {
        text.push_str(line);
        text.push('\n');
    }
    Ok(Some((path.to_string(), text)))
}

/// `tuneinfer problems`.
pub(super) fn problems(words: &[String]) -> Result<i32> {
    if wants_help(words) {
        say!("{HELP}");
        return Ok(0);
    }
    let args = Args::parse(
        words,
        &Spec {
            valued: VALUED,
            flags: FLAGS,
        },
    )?;
    if let Some(extra) = args.rest.first() {
        return Err(Error::Usage(format!(
            "problems takes no positional argument ('{}'); give the model with --onnx FILE",
            crate::error::quote_short(extra)
        )));
    }
    let path = args
        .value("onnx")
        .ok_or_else(|| Error::Usage("problems needs --onnx FILE (an ONNX model)".into()))?;
    let options = options(&args, "precision")?;
    let network = read(path, &options)?;
    // Everything is known before anything is written: an error leaves stdout empty.
    let mut out = String::new();
    for line in network.lines() {
        out.push_str(line);
        out.push('\n');
    }
    if !out.is_empty() {
        out.pop();
        say!("{out}");
    }
    Ok(0)
}
