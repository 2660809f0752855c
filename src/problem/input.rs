//! One line of problem input, whatever its form: a perf-db key (dash or 24-field form), a
//! MIOpenDriver command line, or a line of a MIOpen log (`MIOPEN_ENABLE_LOGGING_CMD=1`).
//!
//! MIOpen logs a convolution as (`src/include/miopen/logger.hpp`, `MIOPEN_LOG_DRIVER_COMMAND`;
//! `src/driver_arguments.cpp`, `ConvArgsForMIOpenDriver`):
//! `[TID ]MIOpen(HIP)[ ELAPSED]: Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n ...`,
//! where the thread id comes with `MIOPEN_ENABLE_LOGGING_MPMT`, the elapsed time with
//! `MIOPEN_ENABLE_LOGGING_ELAPSED_TIME`, and the backend is `(HIP)` or `(OpenCL)` (or absent).
//! Anything in front of that prefix (a timestamp, a job name) is ignored.

use super::*;

/// What one input line holds.
#[derive(Debug, Clone, PartialEq)]
pub enum InputLine {
    /// Blank, or a `#` comment.
    Blank,
    /// A MIOpen log line that is not a convolution command (`reason` says what it is).
    Skipped(&'static str),
    /// The problems of the line: one, or up to three for a MIOpenDriver line whose `-F` names
    /// several directions (`-F 0`, MIOpenDriver's default, is all three).
    Problems(Vec<ConvProblem>),
}

/// The log functions whose command lines are convolutions.
const CONV_LOG_FUNCTIONS: [&str; 2] = ["LogCmdConvolution", "LogCmdFindConvolution"];

/// Classifies and parses one line. Errors: a line that is meant as a problem (a key, a driver
/// line, a convolution log line) but is malformed or unsupported.
pub fn parse_line(line: &str) -> Result<InputLine> {
    let text = line.trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(InputLine::Blank);
    }
    if let Some(message) = log_message(text) {
        return log_line(text, message);
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    // `./bin/MIOpenDriver conv ...`, `MIOpenDriver.exe conv ...` or plain `conv ...`.
    let driver = match words.first() {
        Some(first) if is_driver_program(first) => Some(&words[1..]),
        Some(first) if first.starts_with("conv") => Some(&words[..]),
        _ => None,
    };
    if let Some(args) = driver {
        return ConvProblem::from_driver_args_all(args)
            .map(InputLine::Problems)
            .map_err(|e| rename_input(e, text));
    }
    if words.len() == 1 && !text.contains('-') && text.contains('x') {
        return ConvProblem::from_db_key(text).map(|p| InputLine::Problems(vec![p]));
    }
    ConvProblem::from_perfdb_key(text).map(|p| InputLine::Problems(vec![p]))
}

/// True for MIOpenDriver's program word (`./bin/MIOpenDriver`, `MIOpenDriver.exe`, a path).
fn is_driver_program(word: &str) -> bool {
    let name = word.rsplit(['/', '\\']).next().unwrap_or(word);
    name == "MIOpenDriver" || name == "MIOpenDriver.exe"
}

/// The message of a MIOpen log line (what follows `MIOpen(HIP): `), or None when the line
/// has no such prefix.
fn log_message(text: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(at) = text[from..].find("MIOpen") {
        let start = from + at;
        let mut rest = &text[start + "MIOpen".len()..];
        from = start + "MIOpen".len();
        // `MIOpenDriver` is the program, not the prefix.
        for backend in ["(HIP)", "(OpenCL)", "(HIPOC)", "(HIPNOGPU)"] {
            if let Some(r) = rest.strip_prefix(backend) {
                rest = r;
                break;
            }
        }
        // An optional elapsed time: spaces, digits and a point.
        let rest = rest.trim_start_matches(|c: char| c == ' ' || c == '.' || c.is_ascii_digit());
        if let Some(message) = rest.strip_prefix(':') {
            return Some(message.trim_start());
        }
    }
    None
}

fn log_line(text: &str, message: &str) -> Result<InputLine> {
    let Some(command) = message.strip_prefix("Command") else {
        return Ok(InputLine::Skipped("a MIOpen log line that is not a command"));
    };
    let command = command.trim_start();
    let function = command
        .strip_prefix('[')
        .and_then(|c| c.split_once(']'))
        .map(|(name, rest)| (name.trim(), rest));
    let Some((function, rest)) = function else {
        return Ok(InputLine::Skipped("a MIOpen log command without a [function] name"));
    };
    if !CONV_LOG_FUNCTIONS.contains(&function) {
        return Ok(InputLine::Skipped("a MIOpen log command that is not a convolution"));
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let args = match words.first() {
        Some(first) if is_driver_program(first) => &words[1..],
        _ => &words[..],
    };
    ConvProblem::from_driver_args_all(args)
        .map(InputLine::Problems)
        .map_err(|e| rename_input(e, text))
}

/// Makes an error name the whole line the user gave.
fn rename_input(e: Error, line: &str) -> Error {
    match e {
        Error::InvalidProblem { reason, .. } => Error::problem(line, reason),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(line: &str) -> Vec<ConvProblem> {
        match parse_line(line) {
            Ok(InputLine::Problems(p)) => p,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn the_log_prefix_is_found_after_a_thread_id_and_before_an_elapsed_time() {
        assert_eq!(log_message("1234 MIOpen(HIP)   0.123: Command x"), Some("Command x"));
        assert_eq!(log_message("MIOpen: Info"), Some("Info"));
        assert_eq!(log_message("./bin/MIOpenDriver conv -n 1"), None);
    }

    #[test]
    fn a_driver_line_with_a_program_word_parses() {
        let p = problems("./bin/MIOpenDriver conv -n 2 -c 8 -H 7 -W 7 -k 8 -y 1 -x 1 -F 2");
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].direction, Direction::BackwardData);
    }
}
