//! Datasets for training and evaluation: one (arch, solver) perf database -> problem ->
//! parameter sequence samples, with every row that cannot be used counted, and a reproducible
//! split by geometry (all directions and precisions of one geometry land on the same side).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::perfdb::{self, SolverRows};
use super::textdb;
use crate::error::{Error, Result};
use crate::format::sha256::Sha256;
use crate::problem::{ConvProblem, Direction, Precision};
use crate::solvers::{Target, Tunable};

/// One usable training example.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// perf-db config id (sqlite) or line number (text).
    pub source_id: i64,
    pub problem: ConvProblem,
    /// The tuned best parameters (the solver's config length).
    pub config: Vec<i64>,
}

/// What happened to the database's rows. Every row is counted in exactly one bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataReport {
    /// Rows of the solver in the database (including malformed ones).
    pub rows: usize,
    /// Rows whose problem columns could not be read or parsed.
    pub malformed_problem: usize,
    /// Rows whose parameter string is not the solver's number of integers.
    pub malformed_params: usize,
    /// Rows holding the solver's "no entry" marker instead of tuned values
    /// ([`Tunable::is_default_request`], e.g. the MLIR solvers' `-2,...`): never trained on.
    pub default_requests: usize,
    /// Rows the solver does not apply to (e.g. stride 2; `check_applicable`).
    pub not_applicable: usize,
    /// Rows whose parameters break the solver's rules for their problem.
    pub rule_violations: usize,
    /// Rows repeating an earlier row's problem with the same parameters.
    pub duplicates: usize,
    /// Rows repeating an earlier row's problem with different parameters (the first is kept).
    pub conflicting_duplicates: usize,
    /// Of those, rows of an older source whose problem a newer source tuned differently (the
    /// newer source wins).
    pub source_conflicts: usize,
    /// Rows used from each source, in the order given (one entry per source).
    pub used_per_source: Vec<usize>,
    /// Rows kept.
    pub used: usize,
    /// The not-applicable rows by the solver's reason (its `applicable` message with the
    /// problem's numbers replaced by `N`, so that one rule is one line).
    pub not_applicable_reasons: BTreeMap<String, usize>,
    /// The rule-violating rows by the first parameter at which no valid config remains (the
    /// solver's `param_names`): where in the config the rules reject the tuned value.
    pub violations_at: BTreeMap<String, usize>,
    /// The malformed problems by the reader's reason (e.g. a key with a field too many),
    /// numbers as `N`.
    pub malformed_reasons: BTreeMap<String, usize>,
    /// Applicable rows (each problem once) whose MIOpen static default
    /// ([`Tunable::static_default`]) breaks tuneinfer's rules for the problem: MIOpen runs its
    /// default there, so each is a rule (or default) to fix (issue 44 item 2).
    pub default_rule_violations: usize,
    /// Those by the first parameter at which the default leaves no valid config, with the
    /// first such problem's key.
    pub default_violations_at: BTreeMap<String, (usize, String)>,
}

impl DataReport {
    /// The reasons behind the not-applicable and rule-violating rows, one per line, most
    /// frequent first (empty when there are none).
    pub fn reasons(&self) -> Vec<String> {
        let mut lines: Vec<(usize, String)> = self
            .not_applicable_reasons
            .iter()
            .map(|(r, &n)| (n, format!("{n} not applicable: {r}")))
            .chain(
                self.malformed_reasons
                    .iter()
                    .map(|(r, &n)| (n, format!("{n} malformed problems: {r}"))),
            )
            .chain(
                self.violations_at
                    .iter()
                    .map(|(p, &n)| (n, format!("{n} rule violations, first failing at parameter {p}"))),
            )
            .chain(self.default_violations_at.iter().map(|(p, (n, key))| {
                (
                    *n,
                    format!("{n} problems whose MIOpen default breaks the rules, first failing at parameter {p} (e.g. {key})"),
                )
            }))
            .collect();
        lines.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        lines.into_iter().map(|(_, l)| l).collect()
    }

    /// One line for logs: `13772 rows: 13463 used, 309 not applicable, ...`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} rows: {} used, {} not applicable, {} rule violations, {} malformed problems, {} malformed params, \
             {} duplicates, {} conflicting duplicates",
            self.rows,
            self.used,
            self.not_applicable,
            self.rule_violations,
            self.malformed_problem,
            self.malformed_params,
            self.duplicates,
            self.conflicting_duplicates
        );
        if self.default_rule_violations > 0 {
            s.push_str(&format!(
                ", {} problems whose MIOpen default breaks the rules",
                self.default_rule_violations
            ));
        }
        if self.default_requests > 0 {
            s.push_str(&format!(
                ", {} default requests (no tuned values)",
                self.default_requests
            ));
        }
        if self.used_per_source.len() > 1 {
            let per: Vec<String> = self.used_per_source.iter().map(|n| n.to_string()).collect();
            s.push_str(&format!(
                " ({} between sources, the newer kept); used per source {}",
                self.source_conflicts,
                per.join(" + ")
            ));
        }
        s
    }
}

/// The usable samples of one database plus the accounting of the rest.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub samples: Vec<Sample>,
    pub report: DataReport,
    /// sha256 (hex) over the used samples (keys and configs), to identify the training data.
    pub data_hash: String,
}

/// Reads the rows of `solver` from a perf database: sqlite (`config`/`perf_db` tables) or
/// MIOpen's text format, told apart by the sqlite header.
pub fn read_rows(path: &Path, solver: &str) -> Result<SolverRows> {
    let db_err = |detail: &str| Error::Database {
        path: path.display().to_string(),
        detail: detail.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.len() == 0 {
        return Err(db_err("the file is empty"));
    }
    let mut head = [0u8; 16];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let n = f.read(&mut head).map_err(|e| Error::io(path, e))?;
        if n < 16 {
            head[n..].fill(0);
        }
    }
    if &head == b"SQLite format 3\0" {
        perfdb::solver_rows(path, solver)
    } else {
        textdb::solver_rows(path, solver)
    }
}

/// Builds the dataset of a solver on `target` from a database file. Errors when the solver has
/// no [`Tunable`] side (tuneinfer trains no models for it) or no usable row.
pub fn load(path: &Path, solver: &str, target: &Target) -> Result<Dataset> {
    load_sources(&[path.to_path_buf()], solver, target)
}

/// Builds the dataset from several databases at once, newest first: a problem tuned by several
/// sources keeps the newest source's parameters (the others are counted in
/// [`DataReport::source_conflicts`] when they differ).
pub fn load_sources(paths: &[std::path::PathBuf], solver: &str, target: &Target) -> Result<Dataset> {
    let s = crate::solvers::by_name(solver)?;
    let tunable = crate::solvers::tunable(s)?;
    let names = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let rows = paths
        .iter()
        .map(|p| read_rows(p, s.name()))
        .collect::<Result<Vec<_>>>()?;
    let ds = build_sources(&rows, tunable, target);
    if ds.report.rows == 0 {
        return Err(Error::Database {
            path: names,
            detail: format!("no rows for solver {}", s.name()),
        });
    }
    if ds.samples.is_empty() {
        return Err(Error::Database {
            path: names,
            detail: format!("no usable rows for solver {} ({})", s.name(), ds.report.summary()),
        });
    }
    Ok(ds)
}

/// Filters and deduplicates a solver's rows (order kept: first occurrence wins).
pub fn build(rows: &SolverRows, solver: &dyn Tunable, target: &Target) -> Dataset {
    build_sources(std::slice::from_ref(rows), solver, target)
}

/// [`build`] over several sources, newest first (the first occurrence of a problem wins).
pub fn build_sources(sources: &[SolverRows], solver: &dyn Tunable, target: &Target) -> Dataset {
    let mut report = DataReport {
        rows: sources.iter().map(|r| r.rows.len() + r.rejected.len()).sum(),
        malformed_problem: sources.iter().map(|r| r.rejected.len()).sum(),
        used_per_source: vec![0; sources.len()],
        ..DataReport::default()
    };
    for (_, why) in sources.iter().flat_map(|r| r.rejected.iter()) {
        *report.malformed_reasons.entry(without_quotes(why)).or_default() += 1;
    }
    // The parameters of each problem kept so far and the source they came from.
    let mut seen: HashMap<ConvProblem, (Vec<i64>, usize)> = HashMap::new();
    // The source of each problem as a sqlite database keys it: a text key's stride-2 backward
    // problem with a larger x than the smallest is the sqlite row of a newer source, while
    // within one text source two x sizes are two problems.
    let mut stored: HashMap<ConvProblem, (Vec<i64>, usize)> = HashMap::new();
    let mut samples = Vec::new();
    for (source, row) in sources
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.rows.iter().map(move |row| (i, row)))
    {
        let Ok(config) = solver.parse_params(&row.params) else {
            report.malformed_params += 1;
            continue;
        };
        if solver.is_default_request(&config) {
            report.default_requests += 1;
            continue;
        }
        if let Err(e) = solver.applicable(target, &row.problem) {
            report.not_applicable += 1;
            let reason = match e {
                Error::NotApplicable { reason, .. } => reason,
                other => other.to_string(),
            };
            *report.not_applicable_reasons.entry(numbers_as_n(&reason)).or_default() += 1;
            continue;
        }
        let rules = solver.rules(target, &row.problem);
        if !seen.contains_key(&row.problem) {
            let default = solver.static_default(target, &row.problem);
            if !default.is_empty() && !solver.is_default_request(&default) && !rules.is_valid(&default) {
                report.default_rule_violations += 1;
                let at = first_failing(rules.as_ref(), &default);
                let name = solver.param_names().get(at - 1).copied().unwrap_or("(whole config)");
                let e = report
                    .default_violations_at
                    .entry(format!("{at} ({name})"))
                    .or_insert_with(|| (0, row.problem.to_perfdb_key()));
                e.0 += 1;
            }
        }
        if !rules.is_valid(&config) {
            report.rule_violations += 1;
            let at = first_failing(rules.as_ref(), &config);
            let name = solver.param_names().get(at - 1).copied().unwrap_or("(whole config)");
            *report.violations_at.entry(format!("{at} ({name})")).or_default() += 1;
            continue;
        }
        let record = row.problem.as_stored_in_sqlite();
        let earlier = match seen.get(&row.problem) {
            Some(e) => Some(e),
            None => stored.get(&record).filter(|(_, from)| *from != source),
        };
        match earlier {
            // Configs MIOpen runs identically are one config (Tunable::canonical).
            Some((c, _))
                if *c == config
                    || solver.canonical(target, &row.problem, c) == solver.canonical(target, &row.problem, &config) =>
            {
                report.duplicates += 1
            }
            Some((_, from)) => {
                report.conflicting_duplicates += 1;
                report.source_conflicts += usize::from(*from != source);
            }
            None => {
                report.used_per_source[source] += 1;
                seen.insert(row.problem.clone(), (config.clone(), source));
                stored.entry(record).or_insert((config.clone(), source));
                samples.push(Sample {
                    source_id: row.config_id,
                    problem: row.problem.clone(),
                    config,
                });
            }
        }
    }
    report.used = samples.len();
    let mut h = Sha256::new();
    for s in &samples {
        h.update(s.problem.to_perfdb_key().as_bytes());
        h.update(b"=");
        h.update(solver.format_params(&s.config).as_bytes());
        h.update(b"\n");
    }
    Dataset {
        samples,
        report,
        data_hash: crate::format::sha256::hex(&h.finish()),
    }
}

/// The 1-based position of the first prefix of `config` the rules reject (its length when only
/// the whole config is rejected).
fn first_failing(rules: &dyn crate::solvers::IntRules, config: &[i64]) -> usize {
    (1..=config.len())
        .find(|&k| !rules.prefix_valid(&config[..k]))
        .unwrap_or(config.len())
}

/// `text` with each long quoted input ('...', e.g. the offending key) shortened to '…', so that one
/// reason is one line however many keys it rejected.
fn without_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut parts = text.split('\'');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let rest: Vec<&str> = parts.collect();
    for (i, part) in rest.iter().enumerate() {
        // Odd pieces are inside quotes (when the quote closes).
        if i % 2 == 0 && i + 1 < rest.len() {
            // A long quote is the input itself; a short one ('-') is part of the message.
            if part.chars().count() > 24 {
                out.push_str("'…'");
            } else {
                out.push('\'');
                out.push_str(part);
                out.push('\'');
            }
        } else if i % 2 == 1 {
            out.push_str(part);
        } else {
            out.push('\'');
            out.push_str(part);
        }
    }
    out
}

/// `text` with every number that is not part of a word (`gfx90a`, `FP16` stay) replaced by `N`,
/// so that messages naming a problem's sizes group by rule. A number followed by a unit (`2 GiB`,
/// `32-bit`) is a limit of the rule, not a size of the problem, and stays.
pub fn numbers_as_n(text: &str) -> String {
    // Units, and "-D" of "2-D" / "3-D" (a problem's dimensions are a category, not a size).
    const UNITS: [&str; 7] = [" GiB", " MiB", " KiB", " bytes", "-bit", " bit", "-D "];
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if !c.is_ascii_digit() {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let run: String = chars[start..i].iter().collect();
        let in_word = start > 0 && (chars[start - 1].is_alphabetic() || chars[start - 1] == '_');
        let rest: String = chars[i..].iter().take(8).collect();
        if in_word || UNITS.iter().any(|u| rest.starts_with(u)) {
            out.push_str(&run);
        } else {
            out.push('N');
        }
    }
    out
}

/// The geometry of a problem: everything but direction and precision.
pub fn geometry_key(p: &ConvProblem) -> String {
    let mut g = p.clone();
    g.direction = Direction::Forward;
    g.precision = Precision::Fp32;
    g.to_perfdb_key()
}

/// A number in [0, 1) fixed by (seed, geometry): the side of the split.
pub fn geometry_draw(seed: u64, p: &ConvProblem) -> f64 {
    let mut h = Sha256::new();
    h.update(&seed.to_le_bytes());
    h.update(geometry_key(p).as_bytes());
    let d = h.finish();
    let mut x = [0u8; 8];
    x.copy_from_slice(&d[..8]);
    (u64::from_le_bytes(x) >> 11) as f64 / (1u64 << 53) as f64
}

/// Splits by geometry: a geometry goes to the second part when its seeded draw is below
/// `fraction`. Same seed and data -> same split; no geometry is on both sides.
pub fn split_by_geometry(samples: &[Sample], fraction: f64, seed: u64) -> (Vec<Sample>, Vec<Sample>) {
    let mut first = Vec::new();
    let mut second = Vec::new();
    for s in samples {
        if geometry_draw(seed, &s.problem) < fraction {
            second.push(s.clone());
        } else {
            first.push(s.clone());
        }
    }
    (first, second)
}

/// The seeds of the two splits made from a training seed: held-out validation (reported
/// accuracy) and early-stopping (model selection, carved out of the training side).
pub fn validation_seed(seed: u64) -> u64 {
    seed
}

pub fn early_stop_seed(seed: u64) -> u64 {
    seed ^ 0x5eed_0fe5
}

/// The standard three-way split of a dataset: (train, early-stop, validation).
pub fn three_way_split(samples: &[Sample], val_fraction: f64, es_fraction: f64, seed: u64) -> [Vec<Sample>; 3] {
    let (rest, val) = split_by_geometry(samples, val_fraction, validation_seed(seed));
    let (train, es) = split_by_geometry(&rest, es_fraction, early_stop_seed(seed));
    [train, es, val]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_gives_every_unused_row_its_reason() {
        // A 3-D key (17 dash fields: ConvAsm1x1U is 2-D only), a key with a field too many, a
        // padded ConvAsm1x1U problem (the solver takes pad 0 only), a config whose first value
        // is outside the rules, and one usable row.
        let text = "\
            64-1-7-7-1x1x1-64-1-7-7-1-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F=ConvAsm1x1U:1,4,2,1,1,2,1,1\n\
            64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-0-NCHW-FP32-F=ConvAsm1x1U:1,4,2,1,1,2,1,1\n\
            64-14-14-1x1-64-16-16-8-1x1-1x1-1x1-0-NCHW-FP32-F=ConvAsm1x1U:1,4,2,1,1,2,1,1\n\
            64-7-7-1x1-64-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F=ConvAsm1x1U:5,4,2,1,1,2,1,1\n\
            64-14-14-1x1-64-14-14-8-0x0-1x1-1x1-0-NCHW-FP32-F=ConvAsm1x1U:1,4,1,1,1,1,1,1\n";
        let rows = textdb::solver_rows_from_text(text, "ConvAsm1x1U");
        let solver = crate::solvers::tunable(crate::solvers::by_name("ConvAsm1x1U").unwrap()).unwrap();
        let ds = build(&rows, solver, &Target::new("gfx906"));
        let r = &ds.report;
        assert_eq!(
            (r.rows, r.used, r.malformed_problem, r.not_applicable, r.rule_violations),
            (5, 1, 1, 2, 1)
        );
        let reasons = r.reasons().join("\n");
        assert!(
            reasons.contains("1 not applicable: a 3-D problem (NCDHW, depth N, filter depth N): tuneinfer models ConvAsm1x1U for 2-D problems only"),
            "{reasons}"
        );
        assert!(reasons.contains("1 malformed problems:"), "{reasons}");
        assert!(
            reasons.contains("invalid problem '…': expected 15 '-'-separated"),
            "{reasons}"
        );
        assert!(reasons.contains("1 not applicable: pad"), "{reasons}");
        assert!(
            reasons.contains("1 rule violations, first failing at parameter 1"),
            "{reasons}"
        );
    }

    #[test]
    fn numbers_as_n_keeps_words() {
        assert_eq!(
            numbers_as_n("C=17 on gfx90a, FP16 needs K % 4 == 0 (1x1)"),
            "C=N on gfx90a, FP16 needs K % N == N (Nx1)"
        );
        assert_eq!(numbers_as_n("120 CUs"), "N CUs");
        // A rule's limit stays; the problem's sizes go.
        assert_eq!(
            numbers_as_n("64-7-7-1x1: a tensor of 2 GiB or more (X indexes with 32-bit offsets)"),
            "N-N-N-Nx1: a tensor of 2 GiB or more (X indexes with 32-bit offsets)"
        );
        assert_eq!(numbers_as_n(""), "");
        assert_eq!(
            numbers_as_n("a 3-D problem (NCDHW, depth 4): X for 2-D problems only; 64-D-7"),
            "a 3-D problem (NCDHW, depth N): X for 2-D problems only; N-D-N"
        );
    }
    use crate::data::perfdb::TunedRow;
    use crate::solvers::conv_asm_1x1u::ConvAsm1x1USolver as ASM;

    fn row(id: i64, key: &str, params: &str) -> TunedRow {
        TunedRow {
            config_id: id,
            problem: ConvProblem::from_perfdb_key(key).unwrap(),
            params: params.into(),
        }
    }

    #[test]
    fn bad_rows_are_counted_not_used() {
        let good = "4,8,4,16,1,4,1,8";
        let rows = SolverRows {
            rows: vec![
                row(1, "1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F", good),
                row(2, "1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F", good),
                row(
                    3,
                    "1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F",
                    "1,4,1,8,1,1,1,1",
                ),
                row(4, "1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP16-F", "1,2,3"),
                // read_size 9 breaks rule 1
                row(
                    5,
                    "1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-B",
                    "9,8,4,16,1,4,1,8",
                ),
                // pad 1: the solver does not apply
                row(6, "1024-14-14-1x1-2048-16-16-128-1x1-1x1-1x1-0-NCHW-FP32-F", good),
            ],
            rejected: vec![(7, "bad".into())],
        };
        let ds = build(&rows, &ASM, &Target::new("gfx906"));
        let r = &ds.report;
        assert_eq!(r.rows, 7);
        assert_eq!(
            (r.used, r.duplicates, r.conflicting_duplicates, r.malformed_params),
            (1, 1, 1, 1)
        );
        assert_eq!((r.rule_violations, r.not_applicable, r.malformed_problem), (1, 1, 1));
        assert_eq!(ds.samples[0].source_id, 1);
        assert!(r.summary().contains("1 rule violations"));
    }

    #[test]
    fn the_newest_source_wins_and_conflicts_between_sources_are_counted() {
        let key = "1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F";
        let other = "64-7-7-1x1-64-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F";
        let newer = SolverRows {
            rows: vec![row(1, key, "4,8,4,16,1,4,1,8")],
            rejected: vec![],
        };
        let older = SolverRows {
            rows: vec![
                row(1, key, "1,4,1,8,1,1,1,1"),
                row(2, key, "4,8,4,16,1,4,1,8"),
                row(3, other, "1,4,1,1,1,1,1,1"),
            ],
            rejected: vec![],
        };
        let ds = build_sources(&[newer, older], &ASM, &Target::new("gfx906"));
        let r = &ds.report;
        assert_eq!((r.rows, r.used, r.duplicates, r.conflicting_duplicates), (4, 2, 1, 1));
        assert_eq!((r.source_conflicts, r.used_per_source.clone()), (1, vec![1, 1]));
        assert_eq!(
            ds.samples[0].config,
            vec![4, 8, 4, 16, 1, 4, 1, 8],
            "the newer source's best"
        );
        assert!(r.summary().contains("1 between sources") && r.summary().contains("1 + 1"));
    }

    #[test]
    fn a_text_key_with_the_tuned_x_size_is_the_same_record_as_the_sqlite_row() {
        // Stride 2, 1x1: x 27 and x 28 both give dy 14; sqlite keeps dy only (x = 27).
        let sqlite = SolverRows {
            rows: vec![row(
                1,
                "64-14-14-1x1-128-27-27-16-0x0-2x2-1x1-0-NCHW-FP32-W",
                "4,4,2,4,2,1,2,4,0,1",
            )],
            rejected: vec![],
        };
        let text = SolverRows {
            rows: vec![row(
                1,
                "64-14-14-1x1-128-28-28-16-0x0-2x2-1x1-0-NCHW-FP32-W",
                "4,4,2,4,2,1,1,4,0,1",
            )],
            rejected: vec![],
        };
        let wrw = crate::solvers::conv_asm_bwd_wrw_1x1::ConvAsmBwdWrW1x1Solver;
        let ds = build_sources(&[sqlite, text], &wrw, &Target::new("gfx906"));
        assert_eq!((ds.report.used, ds.report.source_conflicts), (1, 1));
        assert_eq!((ds.samples[0].problem.in_h, ds.samples[0].config[6]), (27, 2));
        // Within one text source the two x sizes are two problems.
        let both = SolverRows {
            rows: vec![
                row(
                    1,
                    "64-14-14-1x1-128-27-27-16-0x0-2x2-1x1-0-NCHW-FP32-W",
                    "4,4,2,4,2,1,2,4,0,1",
                ),
                row(
                    2,
                    "64-14-14-1x1-128-28-28-16-0x0-2x2-1x1-0-NCHW-FP32-W",
                    "4,4,2,4,2,1,1,4,0,1",
                ),
            ],
            rejected: vec![],
        };
        assert_eq!(build(&both, &wrw, &Target::new("gfx906")).report.used, 2);
    }

    #[test]
    fn split_is_seeded_and_keeps_geometries_together() {
        let mut rows = SolverRows::default();
        let mut id = 0;
        for c in [64, 128, 256, 512] {
            for hw in [7, 14, 28] {
                for n in [1, 32] {
                    for (t, d) in [("FP32", "F"), ("FP16", "F"), ("FP32", "B"), ("FP16", "B")] {
                        id += 1;
                        let key = format!("{c}-{hw}-{hw}-1x1-256-{hw}-{hw}-{n}-0x0-1x1-1x1-0-NCHW-{t}-{d}");
                        rows.rows.push(row(id, &key, "1,4,2,1,1,2,1,1"));
                    }
                }
            }
        }
        let ds = build(&rows, &ASM, &Target::new("gfx906"));
        assert_eq!(ds.samples.len(), 96);
        let (a1, b1) = split_by_geometry(&ds.samples, 0.3, 7);
        let (a2, b2) = split_by_geometry(&ds.samples, 0.3, 7);
        assert_eq!((a1.clone(), b1.clone()), (a2, b2));
        assert!(!b1.is_empty() && !a1.is_empty());
        assert_eq!(b1.len() % 4, 0, "all 4 direction/precision variants go together");
        for s in &b1 {
            let g = geometry_key(&s.problem);
            assert!(a1.iter().all(|t| geometry_key(&t.problem) != g));
        }
        let (_, b3) = split_by_geometry(&ds.samples, 0.3, 8);
        assert_ne!(b1, b3, "another seed gives another split");
        let [tr, es, val] = three_way_split(&ds.samples, 0.2, 0.1, 7);
        assert_eq!(tr.len() + es.len() + val.len(), 96);
    }
}
