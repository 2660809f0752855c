//! The library's one error type. Every variant names what was wrong and where, so the CLI can
//! print it as a single line; `exit_code` gives each kind of failure its own process exit status.

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong in tuneinfer.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read or written.
    Io { path: PathBuf, source: std::io::Error },
    /// A model, metadata or weights file is malformed.
    Format { path: String, detail: String },
    /// A model uses a Keras layer (or layer option) this engine does not implement.
    UnsupportedLayer {
        layer: String,
        class: String,
        detail: String,
    },
    /// Tensor sizes disagree (weights vs config, inputs vs model).
    Shape {
        what: String,
        expected: String,
        got: String,
    },
    /// A convolution problem (perf-db key or MIOpenDriver arguments) is malformed or inconsistent.
    InvalidProblem { input: String, reason: String },
    /// No solver of that name is implemented.
    UnknownSolver { solver: String, known: Vec<&'static str> },
    /// No model files for (arch, solver) were found in any searched directory.
    ModelNotFound {
        /// The file names looked for, e.g. `gfx906_ConvAsm1x1U.safetensors + .json`.
        looked_for: Vec<String>,
        searched: Vec<PathBuf>,
    },
    /// MIOpen has no model of the solver for this arch (`reason` says which arches it has).
    NoModelForArch {
        arch: String,
        solver: String,
        reason: String,
    },
    /// The solver's model does not apply to this problem (e.g. ConvAsm1x1U with stride 2).
    NotApplicable { solver: String, reason: String },
    /// A perf database could not be read.
    Database { path: String, detail: String },
    /// A model's embedded test vectors were not reproduced.
    VerifyMismatch { path: String, detail: String },
    /// Bad command-line usage.
    Usage(String),
    /// No usable GPU (no adapter, or the binary was built without the `gpu` feature).
    NoGpu(String),
    /// A GPU call failed: device lost, out of memory, shader compile or validation error.
    Gpu(String),
    /// Something that should not happen did (a worker thread panicked, a result went missing):
    /// a bug in tuneinfer.
    Internal(String),
    /// An error of one line of an input file (`batch`, `bench`, `userdb`): `{file}:{line}: ...`.
    AtLine {
        file: String,
        line: usize,
        error: Box<Error>,
    },
}

/// `Result` with tuneinfer's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Process exit status for this error (0 and 1 are reserved for success and partial failure).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Io { .. } => 3,
            Error::Format { .. } | Error::UnsupportedLayer { .. } | Error::Shape { .. } => 4,
            Error::InvalidProblem { .. } | Error::NotApplicable { .. } => 5,
            Error::UnknownSolver { .. } | Error::ModelNotFound { .. } | Error::NoModelForArch { .. } => 6,
            Error::Database { .. } => 7,
            Error::VerifyMismatch { .. } => 8,
            Error::NoGpu(_) | Error::Gpu(_) => 9,
            Error::AtLine { error, .. } => error.exit_code(),
            Error::Internal(_) => 11,
        }
    }

    pub(crate) fn format(path: impl Into<String>, detail: impl Into<String>) -> Error {
        Error::Format {
            path: path.into(),
            detail: detail.into(),
        }
    }

    pub(crate) fn problem(input: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidProblem {
            input: input.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    /// The message with every overlong word cut ([`shorten_words`]): an error that quotes a
    /// huge argument, a binary file's line or a long field never floods a terminal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let full = Full(self).to_string();
        f.write_str(&shorten_words(&full))
    }
}

/// An error's whole message, before [`shorten_words`].
struct Full<'a>(&'a Error);

impl fmt::Display for Full<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Format { path, detail } => write!(f, "{path}: {detail}"),
            Error::UnsupportedLayer { layer, class, detail } => {
                write!(f, "unsupported layer '{layer}' of class {class}")?;
                if !detail.is_empty() {
                    write!(f, ": {detail}")?;
                }
                Ok(())
            }
            Error::Shape { what, expected, got } => {
                write!(f, "shape mismatch in {what}: expected {expected}, got {got}")
            }
            Error::InvalidProblem { input, reason } => {
                write!(f, "invalid problem '{}': {reason}", quote_short(input))
            }
            Error::UnknownSolver { solver, known } => {
                write!(f, "unknown solver '{solver}' (known: {})", known.join(", "))
            }
            Error::ModelNotFound { looked_for, searched } => {
                write!(
                    f,
                    "no {} found (searched: {})",
                    looked_for.join(" or "),
                    searched_text(searched)
                )
            }
            Error::NoModelForArch { arch, solver, reason } => write!(f, "no {solver} model for {arch}: {reason}"),
            Error::NotApplicable { solver, reason } => {
                write!(f, "{solver} model does not apply: {reason}")
            }
            Error::Database { path, detail } => write!(f, "{path}: {detail}"),
            Error::VerifyMismatch { path, detail } => write!(f, "{path}: {detail}"),
            Error::Usage(msg) => write!(f, "{msg}"),
            Error::NoGpu(msg) => write!(f, "no GPU: {msg}"),
            Error::Gpu(msg) => write!(f, "GPU error: {msg}"),
            Error::AtLine { file, line, error } => write!(f, "{file}:{line}: {error}"),
            Error::Internal(msg) => write!(f, "internal error (a bug in tuneinfer, please report it): {msg}"),
        }
    }
}

/// Most characters of outside input an error message quotes.
pub const QUOTE_LIMIT: usize = 120;

/// `text` as an error message quotes it: control characters escaped, about [`QUOTE_LIMIT`]
/// bytes at most, a longer text cut with its length named, so a binary file or a huge argument
/// never floods a terminal.
pub fn quote_short(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if out.len() >= QUOTE_LIMIT {
            out.push_str(&format!("... ({} characters in all)", text.chars().count()));
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Longest word (a run of characters without white space) an error message keeps whole.
pub const WORD_LIMIT: usize = 300;

/// `text` with every word longer than [`WORD_LIMIT`] characters cut to its first
/// [`QUOTE_LIMIT`] characters and its length named; white space and shorter words are kept.
pub fn shorten_words(text: &str) -> std::borrow::Cow<'_, str> {
    let long = |w: &str| w.chars().nth(WORD_LIMIT).is_some();
    if !text.split(char::is_whitespace).any(long) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(WORD_LIMIT * 4);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if long(word) {
            out.extend(word.chars().take(QUOTE_LIMIT));
            out.push_str(&format!("... ({} characters in all)", word.chars().count()));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    std::borrow::Cow::Owned(out)
}

/// The file names of MIOpen's KTN model `model` on `arch`, as [`Error::ModelNotFound`] lists them.
pub(crate) fn ktn_pattern(arch: &str, model: &str) -> String {
    format!("{arch}_{model}_{{encoder,decoder,metadata}}.ktn.model")
}

/// The searched directories, comma-separated ("nothing" for none).
fn searched_text(searched: &[PathBuf]) -> String {
    if searched.is_empty() {
        return "nothing".to_string();
    }
    let dirs: Vec<String> = searched.iter().map(|p| describe_dir(p)).collect();
    dirs.join(", ")
}

/// The name of the directory the files built into tuneinfer are read under (no such directory
/// exists; `format::bundle::ROOT`).
pub const BUILT_IN_DIR: &str = "(built in)";

/// A searched directory as errors and `info` show it: the path, and whether it is the built-in
/// one, not a directory or missing.
pub fn describe_dir(p: &std::path::Path) -> String {
    if p == std::path::Path::new(BUILT_IN_DIR) {
        format!("{} (inside tuneinfer)", p.display())
    } else if p.is_dir() {
        p.display().to_string()
    } else if p.exists() {
        format!("{} (not a directory)", p.display())
    } else {
        format!("{} (does not exist)", p.display())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn overlong_words_are_cut_and_the_rest_kept() {
        // Hand-derived: a 303-character word ('x' and its quotes) is cut to its first 120
        // characters and its length named; a 300-character word and the spacing around it are
        // kept as they are.
        let long = "a".repeat(301);
        let kept = "b".repeat(300);
        let message = format!("bad '{long}'\n  x {kept}");
        let cut = super::shorten_words(&message);
        assert_eq!(
            cut,
            format!("bad '{}... (303 characters in all)\n  x {kept}", "a".repeat(119))
        );
        assert!(matches!(
            super::shorten_words("short words"),
            std::borrow::Cow::Borrowed(_)
        ));
        // Every error's message goes through it.
        let e = super::Error::Usage(format!("--x: got {long}"));
        assert_eq!(
            e.to_string(),
            format!("--x: got {}... (301 characters in all)", "a".repeat(120))
        );
    }
}
