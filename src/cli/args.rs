//! A small command-line option reader (no dependency): `--name value`, `--name=value` and
//! boolean `--flag`s anywhere on the line, the other words positional. A MIOpenDriver command
//! line (`convfp16 -n 256 ... --in_h 7`) is a problem: after the first positional word an
//! unknown `--word` is the driver's, not an error; `--` ends the options (a problem that starts
//! with `-` follows it).

use crate::error::{Error, Result};

/// Parsed options of one command.
#[derive(Debug, Default)]
pub struct Args {
    values: Vec<(String, String)>,
    flags: Vec<String>,
    /// Positional words, in order.
    pub rest: Vec<String>,
}

/// Declares which options a command takes.
pub struct Spec {
    /// Options that take a value.
    pub valued: &'static [&'static str],
    /// Boolean flags.
    pub flags: &'static [&'static str],
}

impl Args {
    pub fn parse(words: &[String], spec: &Spec) -> Result<Args> {
        let mut args = Args::default();
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            if w == "--" {
                args.rest.extend(words[i + 1..].iter().cloned());
                break;
            }
            let name = w
                .strip_prefix("--")
                .map(|n| n.split_once('=').map_or(n, |(n, _)| n))
                .filter(|n| !n.is_empty());
            let ours = name.is_some_and(|n| spec.valued.contains(&n) || spec.flags.contains(&n));
            // A word that is not an option, or (after the problem began) an option that is not
            // ours: MIOpenDriver's (`--in_h 7`), part of the problem.
            if name.is_none() || (!ours && !args.rest.is_empty()) {
                args.rest.push(w.clone());
                i += 1;
                continue;
            }
            let (name, inline) = match w.split_once('=') {
                Some((n, v)) => (&n[2..], Some(v.to_string())),
                None => (&w[2..], None),
            };
            if spec.flags.contains(&name) {
                if inline.is_some() {
                    return Err(Error::Usage(format!("--{name} takes no value")));
                }
                args.flags.push(name.to_string());
                i += 1;
            } else if spec.valued.contains(&name) {
                let value = match inline {
                    Some(v) => v,
                    None => {
                        i += 1;
                        words
                            .get(i)
                            .cloned()
                            .ok_or_else(|| Error::Usage(format!("--{name} needs a value")))?
                    }
                };
                if args.values.iter().any(|(n, _)| n == name) {
                    return Err(Error::Usage(format!("--{name} given twice")));
                }
                args.values.push((name.to_string(), value));
                i += 1;
            } else {
                return Err(Error::Usage(format!("unknown option --{name} (see --help)")));
            }
        }
        Ok(args)
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    /// A comma-separated list of files (`--name FILE[,FILE...]`): None when absent; an empty
    /// list is a usage error.
    pub fn paths(&self, name: &str) -> Result<Option<Vec<std::path::PathBuf>>> {
        let Some(list) = self.value(name) else {
            return Ok(None);
        };
        let paths: Vec<std::path::PathBuf> = list.split(',').filter(|p| !p.is_empty()).map(Into::into).collect();
        if paths.is_empty() {
            return Err(Error::Usage(format!("--{name} needs at least one FILE")));
        }
        Ok(Some(paths))
    }

    /// A positive integer option, or `default`.
    /// The value of `--name` as an integer in `1..=max`, or `default` when absent.
    pub fn positive(&self, name: &str, default: usize, max: usize) -> Result<usize> {
        match self.value(name) {
            None => Ok(default),
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=max).contains(&n))
                .ok_or_else(|| {
                    let range = if max == usize::MAX {
                        "a positive integer".to_string()
                    } else {
                        format!("an integer in 1..={max}")
                    };
                    Error::Usage(format!(
                        "--{name}: expected {range}, got '{}'",
                        crate::error::quote_short(v)
                    ))
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        valued: &["arch", "beam"],
        flags: &["json"],
    };

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_then_driver_line() {
        let a = Args::parse(&words("--arch gfx908 --json convfp16 -n 2 --in_h 7"), &SPEC).unwrap();
        assert_eq!(a.value("arch"), Some("gfx908"));
        assert!(a.flag("json"));
        assert_eq!(a.rest, words("convfp16 -n 2 --in_h 7"));
        // Our options anywhere on the line: after the problem, between its words.
        for late in ["--beam 4", "--beam=4"] {
            let a = Args::parse(&words(&format!("--arch gfx908 convfp16 -n 2 {late} --in_h 7 --json")), &SPEC).unwrap();
            assert_eq!((a.value("beam"), a.flag("json")), (Some("4"), true));
            assert_eq!(a.rest, words("convfp16 -n 2 --in_h 7"));
        }
        // `--` ends the options: a problem starting with `-`, or one of our names as a word.
        let a = Args::parse(&words("--json -- -n 2 --beam 4"), &SPEC).unwrap();
        assert!(a.flag("json") && a.value("beam").is_none());
        assert_eq!(a.rest, words("-n 2 --beam 4"));
        // Before any positional word an unknown option is an error, not a problem.
        assert!(Args::parse(&words("--in_h 7"), &SPEC).is_err());
    }

    #[test]
    fn errors_name_the_option() {
        assert!(Args::parse(&words("--arch"), &SPEC)
            .unwrap_err()
            .to_string()
            .contains("--arch"));
        assert!(Args::parse(&words("--bogus 1"), &SPEC)
            .unwrap_err()
            .to_string()
            .contains("--bogus"));
        assert!(Args::parse(&words("--arch=a --arch b"), &SPEC)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        let a = Args::parse(&words("--beam 0"), &SPEC).unwrap();
        assert!(a.positive("beam", 1, 8).unwrap_err().to_string().contains("--beam"));
    }
}
