//! Symbolic dimensions as exporters write them: a plain symbol (`batch`, `N`, `s0`, or ONNX's
//! empty `dim_param`) or an expression in one (`torch.export` writes SymPy's text: `2*batch`,
//! `s0*2`, `(s0//2)`, `s0 + 1`, `Max(1, s0)`).
//!
//! A dimension is evaluated only in the batch: the symbols the graph's inputs give their first
//! dimension, which `--batch` sets. Any other symbol, or an expression this does not read, is
//! refused with the reason; never taken as the batch.

use std::collections::HashSet;

use crate::problem::MAX_FIELD_VALUE;

/// Longest expression read, and deepest nesting (the text comes from the file).
const MAX_TEXT: usize = 256;
const MAX_DEPTH: usize = 32;

/// The batch symbols and the batch that `--batch` gives them.
#[derive(Debug, Clone, Default)]
pub(super) struct BatchSymbols {
    /// The symbols (plain identifiers) of the graph inputs' first dimensions. An unnamed
    /// dimension is never one: each unnamed dimension is its own unknown.
    pub names: HashSet<String>,
    pub batch: Option<u64>,
}

/// Why a symbolic dimension has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DimError {
    /// It is an expression in the batch, and no batch was given: a usage error.
    NeedsBatch,
    /// It names something other than the batch, does not read, or gives no valid size.
    Refused(String),
}

/// Whether `s` is a plain symbol (an identifier), as graph inputs name their dimensions.
pub(super) fn is_symbol(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        None => false,
        Some(c) if c.is_ascii_alphabetic() || c == '_' => chars.all(|c| c.is_ascii_alphanumeric() || c == '_'),
        _ => false,
    }
}

impl BatchSymbols {
    /// The value of the symbolic dimension `text`: a batch symbol is the batch, an expression
    /// in batch symbols its value (a positive integer within MIOpen's sizes).
    pub fn eval(&self, text: &str) -> Result<u64, DimError> {
        let text = text.trim();
        if text.len() > MAX_TEXT {
            return Err(DimError::Refused(format!("an expression of {} characters", text.len())));
        }
        if text.is_empty() {
            return Err(DimError::Refused(
                "an unnamed dimension (unknown to the model; it need not be the batch)".into(),
            ));
        }
        if is_symbol(text) {
            if !self.names.contains(text) {
                return Err(DimError::Refused(format!(
                    "the symbol '{text}' is not the batch ({})",
                    self.describe()
                )));
            }
            return self.batch.ok_or(DimError::NeedsBatch);
        }
        let tokens = tokenize(text).map_err(DimError::Refused)?;
        // Every symbol must be a batch symbol before the batch matters.
        for t in &tokens {
            if let Token::Ident(name) = t {
                if !FUNCTIONS.contains(&name.as_str()) && !self.names.contains(name) {
                    return Err(DimError::Refused(format!(
                        "'{text}' names '{name}', which is not the batch ({})",
                        self.describe()
                    )));
                }
            }
        }
        let batch = self.batch.ok_or(DimError::NeedsBatch)?;
        let mut p = Parser {
            tokens: &tokens,
            at: 0,
            batch: batch as i128,
            depth: 0,
        };
        let v = p.expr().map_err(|e| DimError::Refused(format!("'{text}': {e}")))?;
        if p.at != tokens.len() {
            return Err(DimError::Refused(format!("'{text}' does not read as an expression")));
        }
        let v = v
            .integer()
            .ok_or_else(|| DimError::Refused(format!("'{text}' is not a whole number at batch {batch}")))?;
        if v < 1 || v > MAX_FIELD_VALUE as i128 {
            return Err(DimError::Refused(format!(
                "'{text}' is {v} at batch {batch} (sizes are 1 to {MAX_FIELD_VALUE})"
            )));
        }
        Ok(v as u64)
    }

    fn describe(&self) -> String {
        let mut names: Vec<String> = self.names.iter().map(|n| format!("'{n}'")).collect();
        names.sort();
        if names.is_empty() {
            "the graph's inputs have no symbolic batch".to_string()
        } else {
            format!("the graph's inputs name their batch {}", names.join(", "))
        }
    }
}

/// The functions read (SymPy's names, and the lower-case ones).
const FUNCTIONS: &[&str] = &[
    "floor", "ceiling", "ceil", "Max", "Min", "max", "min", "FloorDiv", "CeilDiv",
];

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(i128),
    Ident(String),
    Op(&'static str),
}

fn tokenize(s: &str) -> Result<Vec<Token>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let v: i128 = s[start..i]
                .parse()
                .map_err(|_| format!("the number '{}'", &s[start..i]))?;
            if v > 1 << 62 {
                return Err(format!("the number {v} is too large"));
            }
            out.push(Token::Num(v));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token::Ident(s[start..i].to_string()));
        } else {
            let next = b.get(i + 1).copied();
            let op = match (c, next) {
                (b'/', Some(b'/')) => "//",
                (b'*', Some(b'*')) => return Err(format!("'{s}': powers are not read")),
                (b'+', _) => "+",
                (b'-', _) => "-",
                (b'*', _) => "*",
                (b'/', _) => "/",
                (b'%', _) => "%",
                (b'(', _) => "(",
                (b')', _) => ")",
                (b',', _) => ",",
                _ => {
                    return Err(format!(
                        "'{s}': the character '{}' is not read",
                        s[i..].chars().next().unwrap_or('?')
                    ))
                }
            };
            i += op.len();
            out.push(Token::Op(op));
        }
    }
    Ok(out)
}

/// A rational p/q, q > 0, reduced.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Q(i128, i128);

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

impl Q {
    fn int(v: i128) -> Q {
        Q(v, 1)
    }

    fn new(p: i128, q: i128) -> Result<Q, String> {
        if q == 0 {
            return Err("division by zero".into());
        }
        let (p, q) = if q < 0 { (-p, -q) } else { (p, q) };
        let g = gcd(p, q);
        let v = Q(p / g, q / g);
        // Keep far from overflow: sizes are below 2^31.
        if v.0.abs() > 1 << 80 || v.1 > 1 << 80 {
            return Err("a value out of range".into());
        }
        Ok(v)
    }

    fn integer(self) -> Option<i128> {
        (self.1 == 1).then_some(self.0)
    }

    fn floor(self) -> i128 {
        self.0.div_euclid(self.1)
    }

    fn ceil(self) -> i128 {
        -((-self.0).div_euclid(self.1))
    }

    fn less(self, o: Q) -> bool {
        self.0 * o.1 < o.0 * self.1
    }
}

struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    batch: i128,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Token::Op(o)) if *o == op) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("'{op}' expected"))
        }
    }

    fn expr(&mut self) -> Result<Q, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("nested too deep".into());
        }
        let mut v = self.term()?;
        loop {
            if self.eat("+") {
                let r = self.term()?;
                v = Q::new(v.0 * r.1 + r.0 * v.1, v.1 * r.1)?;
            } else if self.eat("-") {
                let r = self.term()?;
                v = Q::new(v.0 * r.1 - r.0 * v.1, v.1 * r.1)?;
            } else {
                break;
            }
        }
        self.depth -= 1;
        Ok(v)
    }

    fn term(&mut self) -> Result<Q, String> {
        let mut v = self.factor()?;
        loop {
            if self.eat("*") {
                let r = self.factor()?;
                v = Q::new(v.0 * r.0, v.1 * r.1)?;
            } else if self.eat("//") {
                let r = self.factor()?;
                v = Q::int(Q::new(v.0 * r.1, v.1 * r.0)?.floor());
            } else if self.eat("/") {
                let r = self.factor()?;
                v = Q::new(v.0 * r.1, v.1 * r.0)?;
            } else if self.eat("%") {
                let r = self.factor()?;
                let (a, b) = (v.integer(), r.integer());
                match (a, b) {
                    (Some(a), Some(b)) if b != 0 => v = Q::int(a.rem_euclid(b)),
                    _ => return Err("a remainder of fractions or by zero".into()),
                }
            } else {
                return Ok(v);
            }
        }
    }

    fn factor(&mut self) -> Result<Q, String> {
        let minus = self.eat("-");
        if minus || self.eat("+") {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err("nested too deep".into());
            }
            let v = self.factor()?;
            self.depth -= 1;
            return Ok(if minus { Q(-v.0, v.1) } else { v });
        }
        match self.peek().cloned() {
            Some(Token::Num(v)) => {
                self.at += 1;
                Ok(Q::int(v))
            }
            Some(Token::Ident(name)) => {
                self.at += 1;
                if FUNCTIONS.contains(&name.as_str()) {
                    self.call(&name)
                } else {
                    Ok(Q::int(self.batch))
                }
            }
            Some(Token::Op("(")) => {
                self.at += 1;
                let v = self.expr()?;
                self.expect(")")?;
                Ok(v)
            }
            _ => Err("a value expected".into()),
        }
    }

    fn call(&mut self, name: &str) -> Result<Q, String> {
        self.expect("(")?;
        let mut args = vec![self.expr()?];
        while self.eat(",") {
            if args.len() >= 16 {
                return Err("too many arguments".into());
            }
            args.push(self.expr()?);
        }
        self.expect(")")?;
        let one = |args: &[Q]| -> Result<Q, String> {
            match args {
                [a] => Ok(*a),
                _ => Err(format!("{name} of {} arguments", args.len())),
            }
        };
        let two = |args: &[Q]| -> Result<(Q, Q), String> {
            match args {
                [a, b] => Ok((*a, *b)),
                _ => Err(format!("{name} of {} arguments", args.len())),
            }
        };
        match name {
            "floor" => Ok(Q::int(one(&args)?.floor())),
            "ceiling" | "ceil" => Ok(Q::int(one(&args)?.ceil())),
            "FloorDiv" => {
                let (a, b) = two(&args)?;
                Ok(Q::int(Q::new(a.0 * b.1, a.1 * b.0)?.floor()))
            }
            "CeilDiv" => {
                let (a, b) = two(&args)?;
                Ok(Q::int(Q::new(a.0 * b.1, a.1 * b.0)?.ceil()))
            }
            _ => {
                let max = name.eq_ignore_ascii_case("max");
                let mut best = args[0];
                for &a in &args[1..] {
                    if best.less(a) == max {
                        best = a;
                    }
                }
                Ok(best)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(names: &[&str], batch: Option<u64>) -> BatchSymbols {
        BatchSymbols {
            names: names.iter().map(|s| s.to_string()).collect(),
            batch,
        }
    }

    /// `torch.export`'s forms, evaluated by hand at batch 32.
    #[test]
    fn expressions_in_the_batch() {
        let b = symbols(&["batch", "s0"], Some(32));
        for (text, want) in [
            ("batch", 32),
            ("2*batch", 64),
            ("s0*2", 64),
            ("2*s0 + 1", 65),
            ("s0 - 1", 31),
            ("(s0//2)", 16),
            ("s0/4", 8),
            ("3*(s0 + 2)//2", 51),
            ("Max(1, s0)", 32),
            ("Min(16, 2*batch)", 16),
            ("floor(s0/3)", 10),
            ("ceiling(s0/3)", 11),
            ("FloorDiv(s0, 3)", 10),
            ("CeilDiv(s0, 3)", 11),
            ("s0 % 5 + 1", 3),
            ("-s0 + 40", 8),
        ] {
            assert_eq!(b.eval(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn other_symbols_and_bad_text_are_refused() {
        let b = symbols(&["batch"], Some(32));
        for text in [
            "N",
            "2*seq",
            "unk__3",
            "batch*seq",
            "s0**2",
            "batch/3",
            "batch - 32",
            "2*",
            "(batch",
            "batch)",
            "1e9",
            "batch ^ 2",
            "Max()",
            "floor(batch, 2)",
            "99999999999*batch",
            "batch//0",
            "",
        ] {
            let got = b.eval(text);
            assert!(matches!(got, Err(DimError::Refused(_))), "{text}: {got:?}");
        }
        let deep = format!("{}batch{}", "(".repeat(40), ")".repeat(40));
        assert!(matches!(b.eval(&deep), Err(DimError::Refused(_))));
        assert!(matches!(b.eval(&"-".repeat(100)), Err(DimError::Refused(_))));
    }

    #[test]
    fn without_a_batch_an_expression_in_it_needs_one() {
        let b = symbols(&["batch"], None);
        assert_eq!(b.eval("2*batch"), Err(DimError::NeedsBatch));
        assert_eq!(b.eval("batch"), Err(DimError::NeedsBatch));
        assert!(matches!(b.eval("2*seq"), Err(DimError::Refused(_))));
    }
}
