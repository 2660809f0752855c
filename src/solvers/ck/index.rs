//! What MIOpen 3.5.1 can select for each CK grouped solver: the catalogue per (solver, data
//! type) = the reachable instance lists (the 2024 TSVs of `../shared/miopen/ck`, 2-D FP32/FP16)
//! plus every instance a tuned row of MIOpen 3.5.1's text databases names (each kernel id is
//! self-describing), deduplicated by type string; and the whole-corpus check of those rows
//! against the parser, the catalogue and the rules ([`corpus_report`]).
//!
//! Answering uses the index built into tuneinfer ([`CkIndex::builtin`]: the reachable lists and
//! the instances only tuned rows name, `src/solvers/ck/data/`, written by `tools/gen_data.sh`
//! with [`tuned_only_text`]). The full index with its tuned rows ([`CkIndex::build`], for the
//! corpus checks, evaluation and that tool) is built from `../shared/miopen` (or
//! `$TUNEINFER_MIOPEN_DATA`). The solvers' layer knows no perf-db reader (`tests/frontends/layering.rs`),
//! so the caller hands in the text reader (`tuneinfer::data::textdb::read_text`, which
//! decompresses bzip2). The three `perfdb/*.db.txt.bz2` files are read in a fixed order, so the
//! catalogue's order is deterministic: the TSV's factory order first, then the instances only
//! tuned rows name, by type string.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::problem::{Direction, Precision};

use super::catalogue::{file_name, Catalogue as TsvCatalogue};
use super::instance::{parse_kernel_id, parse_type_string, CkInstance, DeviceOp};
use super::rules::{check_kernel, parse_db_key, CkProblem, CkSolver, CkType, CkVersion, Reject, SPLIT_K_VALUES};

/// MIOpen 3.5.1's text databases with CK rows (file name in `perfdb/`, the arch MIOpen reports).
pub const DATABASES: [(&str, &str); 3] = [
    ("gfx942130.db.txt.bz2", "gfx942"),
    ("gfx90a68.db.txt.bz2", "gfx90a"),
    ("gfx90878.db.txt.bz2", "gfx908"),
];

/// `../shared/miopen` beside the checkout, or `$TUNEINFER_MIOPEN_DATA`.
pub fn default_data_dir() -> PathBuf {
    match std::env::var_os("TUNEINFER_MIOPEN_DATA") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen"),
    }
}

/// One tuned CK row: (database, line) and the solver's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunedRow {
    /// Index into [`DATABASES`].
    pub db: usize,
    /// 1-based line in the decompressed text.
    pub line: usize,
    pub solver: CkSolver,
    pub key: String,
    /// Index into [`CkIndex::values`] (the kernel id text).
    pub value: u32,
    /// False for a later entry of the same solver in the same line (MIOpen reads the first;
    /// the later ones are still kernel ids 3.5.1 tuned, and are checked too).
    pub first: bool,
}

/// A catalogue entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub instance: CkInstance,
    /// Position in the reachable TSV list, when the instance is on it.
    pub tsv_index: Option<usize>,
    /// Tuned rows (all databases) that name this instance.
    pub tuned_rows: u64,
}

/// Every instance MIOpen 3.5.1 can select for one (solver, data type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SolverCatalogue {
    pub solver: CkSolver,
    pub dtype: CkType,
    pub entries: Vec<Entry>,
    by_type: HashMap<String, usize>,
}

impl SolverCatalogue {
    /// The entry of a type string.
    pub fn find(&self, type_string: &str) -> Option<&Entry> {
        self.by_type.get(type_string).map(|&i| &self.entries[i])
    }

    /// The kernel ids (instance, split-k) MIOpen 3.5.1 would accept for `p` on `arch`
    /// ([`CkVersion::Miopen351`]), in catalogue order; split-k runs over MIOpen's values for the
    /// solvers that have one.
    pub fn supported<'a>(
        &'a self,
        p: &'a CkProblem,
        arch: &'a str,
    ) -> impl Iterator<Item = (&'a Entry, Option<u64>)> + 'a {
        let splits: &'static [u64] = if self.solver.has_split_k() {
            &SPLIT_K_VALUES
        } else {
            &[]
        };
        self.entries.iter().flat_map(move |e| {
            let ids: Vec<Option<u64>> = if splits.is_empty() {
                vec![None]
            } else {
                splits.iter().map(|&s| Some(s)).collect()
            };
            ids.into_iter()
                .filter(move |&sk| check_kernel(self.solver, &e.instance, sk, p, arch, CkVersion::Miopen351).is_ok())
                .map(move |sk| (e, sk))
        })
    }
}

/// The (direction, precision) of the 2024 list of a 2-D (solver, type), where one exists.
fn tsv_list(solver: CkSolver, dtype: CkType) -> Option<(Direction, Precision)> {
    let precision = match dtype {
        CkType::F32 => Precision::Fp32,
        CkType::F16 => Precision::Fp16,
        _ => return None,
    };
    (solver.spatial_dims() == 2).then_some((solver.direction(), precision))
}

/// The reachable list's instances of (solver, type) (the bwd-data CDE store vector, unprinted,
/// from the list's `all_params`): the list in `data_dir/ck/` (MIOpen's data beside the checkout).
pub fn tsv_instances(data_dir: &Path, solver: CkSolver, dtype: CkType) -> Result<Vec<CkInstance>> {
    let Some((direction, precision)) = tsv_list(solver, dtype) else {
        return Ok(Vec::new());
    };
    let path = data_dir.join("ck").join(file_name(direction, precision)?);
    Ok(TsvCatalogue::load(&path, direction, precision)?.instances)
}

/// [`tsv_instances`] of the lists built into tuneinfer ([`super::catalogue::builtin_text`]).
pub fn builtin_tsv_instances(solver: CkSolver, dtype: CkType) -> Result<Vec<CkInstance>> {
    let Some((direction, precision)) = tsv_list(solver, dtype) else {
        return Ok(Vec::new());
    };
    // The list answering parses anyway (the 2-D solvers' catalogue), parsed once.
    Ok(super::catalogue::load_cached(None, direction, precision)?.instances.clone())
}

/// The instances only MIOpen 3.5.1's tuned rows name (not on the reachable lists), built into
/// tuneinfer: `src/solvers/ck/data/miopen351_instances.tsv`, generated by `tools/gen_data.sh`
/// ([`tuned_only_text`]) from MIOpen 3.5.1's text databases.
pub const BUILTIN_TUNED_ONLY: &str = include_str!("data/miopen351_instances.tsv");

/// The name [`BUILTIN_TUNED_ONLY`] is shown by in errors.
fn builtin_tuned_only_path() -> String {
    format!("{}/miopen351_instances.tsv", crate::format::bundle::ROOT)
}

/// The header of [`tuned_only_text`].
const TUNED_ONLY_HEADER: &str = "solver\tdata_type\ttype_string";

/// The instances of `index`'s catalogues that are on no reachable list, one line each (solver,
/// data type, type string) in catalogue order, after a header: the text of
/// [`BUILTIN_TUNED_ONLY`].
pub fn tuned_only_text(index: &CkIndex) -> String {
    let mut out = format!("{TUNED_ONLY_HEADER}\n");
    for ((solver, dtype), c) in &index.catalogues {
        for e in c.entries.iter().filter(|e| e.tsv_index.is_none()) {
            out.push_str(&format!(
                "{}\t{}\t{}\n",
                solver.name(),
                dtype.name(),
                e.instance.type_string
            ));
        }
    }
    out
}

/// A row counted apart: why it did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsed {
    pub row: usize,
    pub what: &'static str,
    pub detail: String,
}

/// The tuned CK rows of MIOpen 3.5.1's databases and the catalogues built from them.
#[derive(Debug)]
pub struct CkIndex {
    pub data_dir: PathBuf,
    /// Rows per database (missing databases have none; see `missing`).
    pub rows: Vec<TunedRow>,
    /// Distinct kernel id texts.
    pub values: Vec<String>,
    /// Databases not found.
    pub missing: Vec<PathBuf>,
    /// Lines of the databases that are not `KEY=entries` or whose CK entry has no ':'.
    pub malformed_lines: u64,
    pub catalogues: BTreeMap<(CkSolver, CkType), SolverCatalogue>,
}

impl CkIndex {
    /// Reads the databases (with `read_text`: the whole text, decompressed) and TSVs under
    /// `data_dir` (`perfdb/`, `ck/`).
    pub fn build(data_dir: &Path, read_text: &dyn Fn(&Path) -> Result<String>) -> Result<CkIndex> {
        let mut rows = Vec::new();
        let mut values: Vec<String> = Vec::new();
        let mut value_ids: HashMap<String, u32> = HashMap::new();
        let mut missing = Vec::new();
        let mut malformed_lines = 0u64;
        for (db, (file, _)) in DATABASES.iter().enumerate() {
            let path = data_dir.join("perfdb").join(file);
            if !path.is_file() {
                missing.push(path);
                continue;
            }
            let text = read_text(&path)?;
            for (i, line) in text.lines().enumerate() {
                if !line.contains("ConvHipImplicitGemm") {
                    continue;
                }
                let Some((key, entries)) = line.split_once('=') else {
                    malformed_lines += 1;
                    continue;
                };
                let mut seen: Vec<CkSolver> = Vec::new();
                for entry in entries.split(';') {
                    let Some((name, value)) = entry.split_once(':') else {
                        continue;
                    };
                    let Some(solver) = CkSolver::from_name(name.trim()) else {
                        continue;
                    };
                    let first = !seen.contains(&solver);
                    seen.push(solver);
                    let value = value.trim();
                    let id = match value_ids.get(value) {
                        Some(&id) => id,
                        None => {
                            let id = values.len() as u32;
                            values.push(value.to_string());
                            value_ids.insert(value.to_string(), id);
                            id
                        }
                    };
                    rows.push(TunedRow {
                        db,
                        line: i + 1,
                        solver,
                        key: key.trim().to_string(),
                        value: id,
                        first,
                    });
                }
            }
        }
        // Instances each (solver, type) names, with their row counts.
        let parsed: Vec<Option<CkInstance>> = values
            .iter()
            .map(|v| parse_kernel_id(v).ok().map(|k| k.instance))
            .collect();
        let mut named: BTreeMap<(CkSolver, CkType), BTreeMap<String, u64>> = BTreeMap::new();
        for r in &rows {
            let Some(inst) = &parsed[r.value as usize] else {
                continue;
            };
            let Some(dtype) = key_type(&r.key) else { continue };
            if !r.solver.tunes(inst.op) {
                continue;
            }
            *named
                .entry((r.solver, dtype))
                .or_default()
                .entry(inst.type_string.clone())
                .or_insert(0) += 1;
        }
        let has_lists = data_dir.join("ck").is_dir();
        let catalogues = assemble(
            |solver, dtype| match has_lists {
                true => tsv_instances(data_dir, solver, dtype),
                false => Ok(Vec::new()),
            },
            named,
        )?;
        Ok(CkIndex {
            data_dir: data_dir.to_path_buf(),
            rows,
            values,
            missing,
            malformed_lines,
            catalogues,
        })
    }

    /// The index of `data_dir`, built once per process and shared.
    pub fn cached(data_dir: &Path, read_text: &dyn Fn(&Path) -> Result<String>) -> Result<Arc<CkIndex>> {
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<CkIndex>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Ok(map) = cache.lock() {
            if let Some(found) = map.get(data_dir) {
                return Ok(found.clone());
            }
        }
        let index = Arc::new(CkIndex::build(data_dir, read_text)?);
        if let Ok(mut map) = cache.lock() {
            map.insert(data_dir.to_path_buf(), index.clone());
        }
        Ok(index)
    }

    /// The catalogue of (solver, type), if any instance is known for it.
    pub fn catalogue(&self, solver: CkSolver, dtype: CkType) -> Option<&SolverCatalogue> {
        self.catalogues.get(&(solver, dtype))
    }

    /// The kernel id text of a row.
    pub fn value(&self, row: &TunedRow) -> &str {
        self.values.get(row.value as usize).map_or("", String::as_str)
    }
}

/// The catalogues of every (solver, type): the reachable list's instances (`tsv`) in its
/// order, then the instances only tuned rows name (`named`, with their row counts), by type
/// string.
fn assemble(
    tsv: impl Fn(CkSolver, CkType) -> Result<Vec<CkInstance>>,
    mut named: BTreeMap<(CkSolver, CkType), BTreeMap<String, u64>>,
) -> Result<BTreeMap<(CkSolver, CkType), SolverCatalogue>> {
    let mut catalogues = BTreeMap::new();
    for solver in CkSolver::ALL {
        for dtype in CkType::ALL {
            let tsv = tsv(solver, dtype)?;
            let tuned = named.remove(&(solver, dtype)).unwrap_or_default();
            let mut entries: Vec<Entry> = Vec::new();
            let mut by_type: HashMap<String, usize> = HashMap::new();
            for (i, inst) in tsv.into_iter().enumerate() {
                if by_type.contains_key(&inst.type_string) {
                    continue;
                }
                by_type.insert(inst.type_string.clone(), entries.len());
                entries.push(Entry {
                    tuned_rows: tuned.get(&inst.type_string).copied().unwrap_or(0),
                    instance: inst,
                    tsv_index: Some(i),
                });
            }
            for (ts, count) in tuned {
                if by_type.contains_key(&ts) {
                    continue;
                }
                let instance = parse_type_string(&ts)?;
                by_type.insert(ts, entries.len());
                entries.push(Entry {
                    instance,
                    tsv_index: None,
                    tuned_rows: count,
                });
            }
            if !entries.is_empty() {
                catalogues.insert(
                    (solver, dtype),
                    SolverCatalogue {
                        solver,
                        dtype,
                        entries,
                        by_type,
                    },
                );
            }
        }
    }
    Ok(catalogues)
}

impl CkIndex {
    /// The catalogues built into tuneinfer (the reachable lists and [`BUILTIN_TUNED_ONLY`]),
    /// without tuned rows (`rows` empty, `tuned_rows` 0): what answering needs, no file read.
    pub fn builtin() -> Result<CkIndex> {
        let mut named: BTreeMap<(CkSolver, CkType), BTreeMap<String, u64>> = BTreeMap::new();
        let path = builtin_tuned_only_path();
        let mut lines = BUILTIN_TUNED_ONLY.lines().enumerate();
        if lines.next().map(|(_, h)| h) != Some(TUNED_ONLY_HEADER) {
            return Err(Error::format(path, "the header is not solver, data_type, type_string"));
        }
        for (i, line) in lines {
            let mut f = line.split('\t');
            let (Some(solver), Some(dtype), Some(ts), None) = (
                f.next().and_then(CkSolver::from_name),
                f.next().and_then(CkType::from_name),
                f.next(),
                f.next(),
            ) else {
                return Err(Error::format(
                    format!("{path}:{}", i + 1),
                    "expected a solver, a data type and a type string",
                ));
            };
            named.entry((solver, dtype)).or_default().insert(ts.to_string(), 0);
        }
        Ok(CkIndex {
            data_dir: PathBuf::from(crate::format::bundle::ROOT),
            rows: Vec::new(),
            values: Vec::new(),
            missing: Vec::new(),
            malformed_lines: 0,
            catalogues: assemble(builtin_tsv_instances, named)?,
        })
    }

    /// [`CkIndex::builtin`], built once per process and shared.
    pub fn builtin_cached() -> Result<Arc<CkIndex>> {
        static CACHE: OnceLock<std::result::Result<Arc<CkIndex>, String>> = OnceLock::new();
        CACHE
            .get_or_init(|| CkIndex::builtin().map(Arc::new).map_err(|e| e.to_string()))
            .clone()
            .map_err(|e| Error::format(builtin_tuned_only_path(), e))
    }
}

/// The data type field of a 24-field key (the second to last).
fn key_type(key: &str) -> Option<CkType> {
    let mut it = key.rsplit('x');
    it.next()?;
    CkType::from_name(it.next()?)
}

/// Counts of one (solver, device op) over the corpus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpCounts {
    pub rows: u64,
    /// Rows whose instance is in the catalogue of their (solver, type).
    pub in_catalogue: u64,
    /// Rows whose instance is on the reachable (2024) list.
    pub in_reachable_list: u64,
    /// Rules of [`CkVersion::Miopen351`].
    pub pass: u64,
    pub fail: BTreeMap<Reject, u64>,
    /// Rules of [`CkVersion::Develop2025`].
    pub pass_reachable: u64,
    pub fail_reachable: BTreeMap<Reject, u64>,
    /// Passing rows whose check skipped an unprinted argument (bwd data CDE vector outside the
    /// 2024 lists; bwd data split-k > 1, which the reachable CK has no rule for).
    pub unchecked: BTreeMap<&'static str, u64>,
}

/// A row of the corpus report's examples: (database file, line, key, kernel id).
pub type ExampleRow = (String, usize, String, String);

/// The whole-corpus check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorpusReport {
    /// Rows per (database file, solver).
    pub rows: BTreeMap<(&'static str, CkSolver), u64>,
    /// Of them, later entries of a solver already in the line.
    pub repeated: BTreeMap<(&'static str, CkSolver), u64>,
    /// Rows parsed (key and kernel id) per solver.
    pub parsed: BTreeMap<CkSolver, u64>,
    /// Rows counted apart per (solver, what, first detail).
    pub unparsed: BTreeMap<(CkSolver, &'static str), (u64, String)>,
    pub by_op: BTreeMap<(CkSolver, DeviceOp), OpCounts>,
    /// Failing rows ([`CkVersion::Miopen351`]), first few per (solver, op, reason): (database,
    /// line, key, kernel id).
    pub examples: BTreeMap<(CkSolver, DeviceOp, Reject), Vec<ExampleRow>>,
    /// Catalogue sizes per (solver, type): (entries, of them on the reachable list).
    pub catalogue_sizes: BTreeMap<(CkSolver, CkType), (usize, usize)>,
    pub missing: Vec<PathBuf>,
}

/// Checks every tuned CK row of the index: parsed, in the catalogue, supported by the rules.
pub fn corpus_report(index: &CkIndex) -> CorpusReport {
    let mut report = CorpusReport {
        missing: index.missing.clone(),
        ..CorpusReport::default()
    };
    for ((s, t), c) in &index.catalogues {
        let reachable = c.entries.iter().filter(|e| e.tsv_index.is_some()).count();
        report.catalogue_sizes.insert((*s, *t), (c.entries.len(), reachable));
    }
    let parsed_ids: Vec<std::result::Result<super::instance::KernelId, String>> = index
        .values
        .iter()
        .map(|v| parse_kernel_id(v).map_err(|e| e.to_string()))
        .collect();
    for row in &index.rows {
        let (file, arch) = DATABASES[row.db];
        *report.rows.entry((file, row.solver)).or_insert(0) += 1;
        if !row.first {
            *report.repeated.entry((file, row.solver)).or_insert(0) += 1;
        }
        let apart = |report: &mut CorpusReport, what: &'static str, detail: String| {
            let e = report
                .unparsed
                .entry((row.solver, what))
                .or_insert((0, format!("{file}:{}: {detail}", row.line)));
            e.0 += 1;
        };
        let (problem, dtype) = match parse_db_key(&row.key) {
            Ok(x) => x,
            Err(e) => {
                apart(&mut report, "key", e.to_string());
                continue;
            }
        };
        let id = match &parsed_ids[row.value as usize] {
            Ok(id) => id,
            Err(e) => {
                apart(&mut report, "kernel id", e.clone());
                continue;
            }
        };
        let p = match CkProblem::new(&problem, dtype) {
            Ok(p) => p,
            Err(e) => {
                apart(&mut report, "problem", e.to_string());
                continue;
            }
        };
        *report.parsed.entry(row.solver).or_insert(0) += 1;
        let counts = report.by_op.entry((row.solver, id.instance.op)).or_default();
        counts.rows += 1;
        let entry = index
            .catalogue(row.solver, dtype)
            .and_then(|c| c.find(&id.instance.type_string));
        if let Some(e) = entry {
            counts.in_catalogue += 1;
            if e.tsv_index.is_some() {
                counts.in_reachable_list += 1;
            }
        }
        // The catalogue's instance carries what the list knows beyond the print.
        let inst = entry.map_or(&id.instance, |e| &e.instance);
        match check_kernel(row.solver, inst, id.split_k, &p, arch, CkVersion::Develop2025) {
            Ok(()) => counts.pass_reachable += 1,
            Err(why) => *counts.fail_reachable.entry(why).or_insert(0) += 1,
        }
        match check_kernel(row.solver, inst, id.split_k, &p, arch, CkVersion::Miopen351) {
            Ok(()) => {
                counts.pass += 1;
                if inst.op == DeviceOp::BwdDataV1 {
                    if inst.printed.e_vec.is_none() {
                        *counts
                            .unchecked
                            .entry("CDE vector unprinted (not on a 2024 list)")
                            .or_insert(0) += 1;
                    }
                    if id.split_k.is_some_and(|s| s > 1) {
                        *counts
                            .unchecked
                            .entry("bwd-data split-k > 1 (no k_batch in the reachable CK)")
                            .or_insert(0) += 1;
                    }
                }
            }
            Err(why) => {
                *counts.fail.entry(why).or_insert(0) += 1;
                let ex = report.examples.entry((row.solver, id.instance.op, why)).or_default();
                if ex.len() < 3 {
                    ex.push((
                        file.to_string(),
                        row.line,
                        row.key.clone(),
                        index.value(row).to_string(),
                    ));
                }
            }
        }
    }
    report
}

/// A data directory's index (built once per process, see [`CkIndex::build`]), or an error
/// naming where the data was looked for.
pub fn load_index(data_dir: &Path, read_text: &dyn Fn(&Path) -> Result<String>) -> Result<Arc<CkIndex>> {
    if !data_dir.join("perfdb").is_dir() {
        return Err(Error::format(
            data_dir.display().to_string(),
            "no perfdb/ here: MIOpen's data is kept beside the checkout as ../shared/miopen \
             (set TUNEINFER_MIOPEN_DATA to the folder holding perfdb/ and ck/)",
        ));
    }
    CkIndex::cached(data_dir, read_text)
}

/// How much the rules narrow a catalogue, over a sample of tuned rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Narrowing {
    /// Rows sampled.
    pub rows: u64,
    /// Kernel ids (instance, split-k) of their catalogues, summed over the rows.
    pub ids: u64,
    /// Of them, the ids [`SolverCatalogue::supported`] keeps, summed over the rows.
    pub supported: u64,
}

/// For every `every`-th row whose key parses (in index order): the catalogue's kernel ids and
/// how many the rules keep, per solver. A rule set that rejects nothing would keep them all.
pub fn narrowing(index: &CkIndex, every: usize) -> BTreeMap<CkSolver, Narrowing> {
    let mut out: BTreeMap<CkSolver, Narrowing> = BTreeMap::new();
    for row in index.rows.iter().step_by(every.max(1)) {
        let Ok((problem, dtype)) = parse_db_key(&row.key) else {
            continue;
        };
        let Ok(p) = CkProblem::new(&problem, dtype) else {
            continue;
        };
        let Some(cat) = index.catalogue(row.solver, dtype) else {
            continue;
        };
        let arch = DATABASES[row.db].1;
        let splits = if row.solver.has_split_k() {
            SPLIT_K_VALUES.len()
        } else {
            1
        };
        let n = out.entry(row.solver).or_default();
        n.rows += 1;
        n.ids += (cat.entries.len() * splits) as u64;
        n.supported += cat.supported(&p, arch).count() as u64;
    }
    out
}
