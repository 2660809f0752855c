//! Fuzz harnesses: one function per parser of outside input, shared by the cargo-fuzz targets
//! (`fuzz/fuzz_targets/*.rs`, libFuzzer) and the seeded mutation tests of `cargo test`
//! (`tests/frontends/fuzz_parsers.rs`).
//!
//! Each harness takes arbitrary bytes, hands them to the parser and checks what must hold for
//! any input: the parser returns (an answer or an [`Error`](crate::Error)) and never panics,
//! aborts or hangs, and what it accepts is consistent (a parsed problem's keys and driver line
//! parse back to the same problem, a parsed safetensors file writes back to the same tensors, a
//! merge into a user perf-db keeps every old line). A panic inside a parser propagates (that is
//! the crash the fuzzer reports); a broken invariant comes back as `Err(description)`, which the
//! fuzz targets turn into a panic. Nothing here prints.

use std::path::{Path, PathBuf};

use crate::data::{perfdb, textdb};
use crate::format::{frugally::KerasModel, metadata::KtnMetadata, safetensors};
use crate::problem::{self, ConvProblem, Direction, InputLine, Precision};
use crate::seq2seq::weights;
use crate::seq2seq::{verify::verify_model, Decoder, Encoder};
use crate::solvers::ck::catalogue::Catalogue;
use crate::solvers::ck::instance::{parse_type_string, DeviceOp};
use crate::solvers::ck::rules::{supports, CkProblem, CkVersion, SPLIT_K_VALUES};
use crate::solvers::gtc_nhwc;
use crate::userdb::{text as udb, Entry};

/// What a harness found wrong (an invariant that does not hold), as one line.
pub type Violation = String;

/// `Ok(())`, or the first broken invariant.
pub type Outcome = std::result::Result<(), Violation>;

/// The input as text: the parsers read `&str`; invalid UTF-8 becomes U+FFFD, so every byte
/// sequence still reaches them.
fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// A parsed problem's three printed forms parse back to it: the dash key and the driver line
/// exactly, the 24-field key (which, like a sqlite row, has no x size for backward problems) to
/// [`ConvProblem::as_stored_in_sqlite`], as do its `config` columns.
pub fn check_problem_round_trips(p: &ConvProblem, input: &str) -> Outcome {
    let key = p.to_perfdb_key();
    match ConvProblem::from_perfdb_key(&key) {
        Ok(q) if &q == p => {}
        other => {
            return Err(format!(
                "{input:?}: dash key {key:?} parses back as {other:?}, not {p:?}"
            ))
        }
    }
    let stored = p.as_stored_in_sqlite();
    let db_key = p.to_db_key();
    match ConvProblem::from_db_key(&db_key) {
        Ok(q) if q == stored => {}
        other => {
            return Err(format!(
                "{input:?}: 24-field key {db_key:?} parses back as {other:?}, not {stored:?}"
            ))
        }
    }
    match ConvProblem::from_perfdb_columns(&p.to_perfdb_columns()) {
        Ok(q) if q == stored => {}
        other => {
            return Err(format!(
                "{input:?}: config columns parse back as {other:?}, not {stored:?}"
            ))
        }
    }
    let line = p.to_driver_line();
    match ConvProblem::from_driver_line(&line) {
        Ok(q) if &q == p => {}
        other => {
            return Err(format!(
                "{input:?}: driver line {line:?} parses back as {other:?}, not {p:?}"
            ))
        }
    }
    Ok(())
}

/// [`problem::parse_line`]: any line (dash key, 24-field key, MIOpenDriver arguments, MIOpen
/// log line); every problem it gives round-trips, and [`ConvProblem::parse`] agrees on it.
pub fn problem_line(data: &[u8]) -> Outcome {
    let line = text(data);
    let parsed = problem::parse_line(&line);
    if let Ok(InputLine::Problems(problems)) = &parsed {
        if problems.is_empty() || problems.len() > 3 {
            return Err(format!("{line:?}: {} problems from one line", problems.len()));
        }
        for p in problems {
            check_problem_round_trips(p, &line)?;
        }
    }
    if let Ok(p) = ConvProblem::parse(&line) {
        check_problem_round_trips(&p, &line)?;
    }
    Ok(())
}

/// [`ConvProblem::from_perfdb_key`] (dash key).
pub fn perfdb_key(data: &[u8]) -> Outcome {
    let key = text(data);
    match ConvProblem::from_perfdb_key(&key) {
        Ok(p) => check_problem_round_trips(&p, &key),
        Err(_) => Ok(()),
    }
}

/// [`ConvProblem::from_db_key`] (MIOpen's 24-field key): a parsed key is already as a sqlite
/// row stores it, and it round-trips.
pub fn db_key(data: &[u8]) -> Outcome {
    let key = text(data);
    match ConvProblem::from_db_key(&key) {
        Ok(p) => {
            if p.as_stored_in_sqlite() != p {
                return Err(format!("{key:?}: parsed {p:?} is not its own sqlite form"));
            }
            check_problem_round_trips(&p, &key)
        }
        Err(_) => Ok(()),
    }
}

/// [`ConvProblem::from_driver_line`] and [`ConvProblem::from_driver_line_all`].
pub fn driver_line(data: &[u8]) -> Outcome {
    let line = text(data);
    if let Ok(p) = ConvProblem::from_driver_line(&line) {
        check_problem_round_trips(&p, &line)?;
    }
    if let Ok(all) = ConvProblem::from_driver_line_all(&line) {
        for p in &all {
            check_problem_round_trips(p, &line)?;
        }
    }
    Ok(())
}

/// [`KerasModel::parse`] (a frugally-deep JSON model), then what loading does with a parsed
/// model: [`Encoder::from_keras`], [`Decoder::from_keras`] and running its embedded tests
/// ([`verify_model`]).
pub fn frugally_model(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(model) = KerasModel::parse(text, "fuzz.ktn.model") else {
        return Ok(());
    };
    let encoder = Encoder::from_keras(&model).is_ok();
    let decoder = Decoder::from_keras(&model).is_ok();
    if encoder && decoder {
        return Err("one model is both an encoder and a decoder".into());
    }
    if encoder || decoder {
        if let Ok(report) = verify_model(&model) {
            if report.tests != model.tests.len() {
                return Err(format!("{} tests run of {}", report.tests, model.tests.len()));
            }
        }
    }
    Ok(())
}

/// [`KtnMetadata::parse`]: a parsed metadata has a vocabulary and sequence lengths in 1..=64.
pub fn ktn_metadata(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(m) = KtnMetadata::parse(text, "fuzz_metadata.ktn.model") else {
        return Ok(());
    };
    if m.token_values.is_empty() || m.predict_type > 1 {
        return Err(format!("accepted {m:?}"));
    }
    if m.num_tuning_params.values().any(|&n| n == 0 || n > 64) {
        return Err(format!("accepted counts {:?}", m.num_tuning_params));
    }
    Ok(())
}

/// [`safetensors::from_bytes`]: whatever parses writes back ([`safetensors::to_bytes`]) to the
/// same tensors (bit for bit) and metadata.
pub fn safetensors(data: &[u8]) -> Outcome {
    let Ok((tensors, metadata)) = safetensors::from_bytes(data, "fuzz.safetensors") else {
        return Ok(());
    };
    for t in &tensors {
        let count = t.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if count != Some(t.data.len()) {
            return Err(format!(
                "tensor '{}': shape {:?} but {} values",
                t.name,
                t.shape,
                t.data.len()
            ));
        }
    }
    let bytes = safetensors::to_bytes(&tensors, &metadata);
    let (again, meta_again) =
        safetensors::from_bytes(&bytes, "rewritten").map_err(|e| format!("a parsed file, written back, fails: {e}"))?;
    let bits = |ts: &[safetensors::Tensor]| -> Vec<(String, Vec<usize>, Vec<u32>)> {
        ts.iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.shape.clone(),
                    t.data.iter().map(|v| v.to_bits()).collect(),
                )
            })
            .collect()
    };
    if bits(&again) != bits(&tensors) || meta_again != metadata {
        return Err("safetensors written back differ from what was read".into());
    }
    Ok(())
}

/// [`weights::parse_info`] (tuneinfer's weights metadata JSON): accepted sizes are within the
/// limits, and the KTN-style metadata derived from it is consistent.
pub fn weights_info(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok((info, _digest)) = weights::parse_info(text, "fuzz.json") else {
        return Ok(());
    };
    let c = info.config;
    if [c.steps, c.hidden, c.embed, c.vocab, c.seq_len]
        .iter()
        .any(|&n| n == 0 || n > weights::MAX_MODEL_SIZE)
        || info.members == 0
        || info.members > weights::MAX_MEMBERS
    {
        return Err(format!("accepted sizes {c:?}, {} members", info.members));
    }
    let meta = weights::ktn_metadata(&info.token_values, c.seq_len);
    if meta.token_values != info.token_values {
        return Err("the vocabulary changed on the way to the search".into());
    }
    Ok(())
}

/// Solvers whose rows the perf-db harnesses ask for (rows of others are skipped, not parsed).
const DB_SOLVERS: [&str; 4] = [
    "ConvAsm1x1U",
    "ConvOclDirectFwd",
    "ConvAsmBwdWrW1x1",
    "ConvHipImplicitGemmGroupFwdXdlops",
];

/// Every row's problem round-trips; ids name lines or rows that exist.
fn check_rows(rows: &perfdb::SolverRows, max_id: Option<i64>, input: &str) -> Outcome {
    for r in &rows.rows {
        check_problem_round_trips(&r.problem, input)?;
        if max_id.is_some_and(|m| r.config_id < 1 || r.config_id > m) {
            return Err(format!("row id {} outside 1..={max_id:?}", r.config_id));
        }
    }
    for (id, _) in &rows.rejected {
        if max_id.is_some_and(|m| *id < 1 || *id > m) {
            return Err(format!("rejected line {id} outside 1..={max_id:?}"));
        }
    }
    Ok(())
}

/// [`textdb::solver_rows_from_text`] (MIOpen's text perf db, `KEY=Solver:params;...`): every
/// row is a problem that round-trips and names a line of the text.
pub fn text_perfdb(data: &[u8]) -> Outcome {
    let content = text(data);
    let lines = content.lines().count() as i64;
    for solver in DB_SOLVERS {
        let rows = textdb::solver_rows_from_text(&content, solver);
        if (rows.rows.len() + rows.rejected.len()) as i64 > lines {
            return Err(format!("{solver}: more rows than lines"));
        }
        check_rows(&rows, Some(lines), "text perf db")?;
    }
    Ok(())
}

/// A file of this thread's own under the temporary directory (the sqlite harness writes its
/// input there; threads of one test binary and parallel fuzz jobs never share one).
fn scratch_file(suffix: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    let id = ID.with(|id| *id);
    std::env::temp_dir().join(format!("tuneinfer-fuzz-{}-{id}{suffix}", std::process::id()))
}

/// [`perfdb::solver_rows`] on the bytes written to a temporary file (sqlite reads files): an
/// error or rows whose problems round-trip; opening never writes next to the file.
pub fn sqlite_perfdb(data: &[u8]) -> Outcome {
    let path = scratch_file(".db");
    if std::fs::write(&path, data).is_err() {
        return Ok(());
    }
    let result = sqlite_rows(&path);
    let journal = Path::new(&format!("{}-journal", path.display())).exists()
        || Path::new(&format!("{}-wal", path.display())).exists();
    let _ = std::fs::remove_file(&path);
    if journal {
        return Err("reading the database left a journal beside it".into());
    }
    result
}

fn sqlite_rows(path: &Path) -> Outcome {
    for solver in DB_SOLVERS {
        if let Ok(rows) = perfdb::solver_rows(path, solver) {
            check_rows(&rows, None, "sqlite perf db")?;
            for r in &rows.rows {
                if r.problem.as_stored_in_sqlite() != r.problem {
                    return Err(format!("row {} is not in its own sqlite form", r.config_id));
                }
            }
        }
    }
    Ok(())
}

/// Problems the CK support rules are asked about for every instance a fuzzed catalogue holds:
/// 1x1, 3x3, strided, grouped, tiny and huge sizes.
const CK_PROBLEMS: [&str; 5] = [
    "conv -n 128 -c 64 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 1 -F 1 --in_layout NHWC --out_layout NHWC --fil_layout NHWC",
    "convfp16 -n 256 -c 2016 -H 7 -W 7 -k 192 -y 1 -x 1 -g 16 -F 2 --in_layout NHWC --out_layout NHWC --fil_layout NHWC",
    "conv -n 1 -c 3 -H 219 -W 219 -k 64 -y 11 -x 11 -p 2 -q 2 -u 4 -v 4 -F 4 --in_layout NHWC --out_layout NHWC --fil_layout NHWC",
    "convfp16 -n 1 -c 1 -H 1 -W 1 -k 1 -y 1 -x 1 -g 1 -F 4 --in_layout NHWC --out_layout NHWC --fil_layout NHWC",
    "conv -n 4000000 -c 4000000 -H 4000000 -W 4000000 -k 4000000 -y 3 -x 3 -F 1 --in_layout NHWC --out_layout NHWC --fil_layout NHWC",
];

/// [`Catalogue::parse`] (a composable_kernel instance list, `../shared/miopen/ck/*.tsv`) for
/// every direction and data type; every parsed instance is its type string's (but for the
/// bwd-data CDE vector, which only the list gives), and the support rules answer for each
/// instance on a few problems.
pub fn ck_catalogue(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let problems: Vec<ConvProblem> = CK_PROBLEMS.iter().filter_map(|l| ConvProblem::parse(l).ok()).collect();
    for direction in [Direction::Forward, Direction::BackwardData, Direction::BackwardWeights] {
        for precision in [Precision::Fp32, Precision::Fp16] {
            let Ok(cat) = Catalogue::parse(text, Path::new("fuzz.tsv"), direction, precision) else {
                continue;
            };
            for (i, inst) in cat.instances.iter().enumerate() {
                let mut again = parse_type_string(&inst.type_string).map_err(|e| format!("instance {i}: {e}"))?;
                if again.op == DeviceOp::BwdDataV1 {
                    again.printed.e_vec = inst.printed.e_vec;
                }
                if again != *inst {
                    return Err(format!("instance {i}: disagrees with its type string"));
                }
            }
            for p in &problems {
                let mut p = p.clone();
                p.direction = direction;
                p.precision = precision;
                let Ok(dims) = CkProblem::new(&p, p.precision.into()) else { continue };
                let _ = cat.supported(&dims).count();
                for inst in &cat.instances {
                    for split_k in SPLIT_K_VALUES {
                        let _ = supports(inst, &dims, Some(split_k), CkVersion::Miopen2024);
                    }
                }
            }
        }
    }
    Ok(())
}

/// GTC catalogue harness problems: unit, 3x3, strided, odd and tiny channel counts, N = 1.
const GTC_PROBLEMS: [&str; 5] = [
    "64-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F",
    "3-17-17-5x5-9-7-7-1-0x0-2x2-1x1-0-NCHW-FP16-F",
    "1-1-1-1x1-1-1-1-1-0x0-1x1-1x1-0-NHWC-FP16-F",
    "255-14-14-3x3-1023-14-14-7-1x1-1x1-2x2-0-NCHW-FP32-F",
    "64-1-1-3x3-33-1-1-2-1x1-1x1-1x1-0-NCHW-FP16-F",
];

/// [`gtc_nhwc::catalogue::Catalogue::parse`] (a GTC NHWC kernel catalogue,
/// `../shared/miopen/solvers/gtc_*_nhwc.tsv`) as each direction's; for what parses, every
/// entry's params text looks up to an entry with the same fields, and each line of the input read
/// as a params string, the rules over every entry and the static default answer without
/// panicking on a few problems per direction.
pub fn gtc_catalogue(data: &[u8]) -> Outcome {
    use gtc_nhwc::catalogue::Catalogue as Gtc;
    let text = text(data);
    for direction in [Direction::Forward, Direction::BackwardData, Direction::BackwardWeights] {
        let Ok(cat) = Gtc::parse(&text, Path::new("fuzz.tsv"), direction) else {
            continue;
        };
        for e in &cat.entries {
            let gks = i64::from(e.can_split);
            match cat.lookup(&e.params_text(gks)) {
                Ok((i, g)) if g == gks && cat.entries[i].text == e.text => {}
                other => return Err(format!("entry {}: its params text looks up to {other:?}", e.index)),
            }
        }
        for line in text.lines() {
            let _ = cat.lookup(line);
        }
        for key in GTC_PROBLEMS {
            let Ok(mut p) = ConvProblem::from_perfdb_key(key) else {
                continue;
            };
            p.direction = direction;
            let _ = gtc_nhwc::GtcRules::new(direction, Some(&cat), &p).pairs();
            let d = gtc_nhwc::rules::Dims::new(&p);
            if let Some((entry, _, _)) = gtc_nhwc::rules::static_default(&d, &cat, 304) {
                if entry >= cat.entries.len() {
                    return Err(format!("static default names entry {entry} of {}", cat.entries.len()));
                }
            }
        }
    }
    Ok(())
}

/// Solvers the user perf-db harness merges entries of.
const USERDB_SOLVERS: [&str; 3] = ["ConvAsm1x1U", "ConvOclDirectFwd", "ConvAsmBwdWrW1x1"];

/// [`udb::read_entries`] and [`udb::merge`] (a user perf-db text file, `*.udb.txt`): merging
/// entries for keys of the file and a new key keeps every old line (byte for byte, or extended
/// at its end with `;Solver:params`; with `replace`, values of merged (key, solver)s change),
/// keeps what MIOpen reads of every other (key, solver), makes every entry readable, and a
/// second merge of the same entries changes nothing.
pub fn userdb_text(data: &[u8]) -> Outcome {
    let old = text(data);
    let old_read = udb::read_entries(&old);
    let Ok(problem) = ConvProblem::parse("conv -n 1 -c 8 -H 7 -W 7 -k 8 -y 1 -x 1 -F 1") else {
        return Err("the harness's own problem does not parse".into());
    };
    // Entries for up to four keys of the file (in a fixed order) and one key it may lack.
    let mut keys: Vec<&String> = old_read.keys().collect();
    keys.sort();
    let mut entries: Vec<Entry> = Vec::new();
    let seed = data
        .iter()
        .fold(0usize, |h, &b| h.wrapping_mul(31).wrapping_add(b as usize));
    for (n, key) in keys
        .iter()
        .map(|k| k.as_str())
        .take(4)
        .chain([problem.to_db_key().as_str()])
        .enumerate()
    {
        entries.push(Entry {
            key: key.to_string(),
            problem: problem.clone(),
            solver: USERDB_SOLVERS[(seed + n) % USERDB_SOLVERS.len()],
            params: format!("{},{}", n, seed % 7),
        });
    }
    for replace in [false, true] {
        let (merged, _counts) = udb::merge(&old, &entries, replace);
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = merged.split_inclusive('\n').collect();
        if new_lines.len() < old_lines.len() {
            return Err(format!(
                "replace {replace}: {} lines became {}",
                old_lines.len(),
                new_lines.len()
            ));
        }
        for (i, (o, n)) in old_lines.iter().zip(&new_lines).enumerate() {
            let o_body = o.trim_end_matches(['\n', '\r']);
            let n_body = n.trim_end_matches(['\n', '\r']);
            let kept = n_body == o_body || n_body.starts_with(o_body) && n_body[o_body.len()..].starts_with(';');
            if !replace && !kept {
                return Err(format!("line {i}: {o:?} became {n:?}"));
            }
            if o.ends_with('\n') && o[o_body.len()..] != n[n_body.len()..] {
                return Err(format!("line {i}: its ending {:?} changed", &o[o_body.len()..]));
            }
        }
        let new_read = udb::read_entries(&merged);
        for (key, items) in &old_read {
            let Some(now) = new_read.get(key) else {
                return Err(format!("replace {replace}: key {key:?} lost"));
            };
            for (solver, values) in items {
                let found = now.iter().find(|(s, _)| s == solver).map(|(_, v)| v);
                let merged_value = entries
                    .iter()
                    .find(|e| &e.key == key && e.solver == solver)
                    .map(|e| &e.params);
                let want = match (replace, merged_value) {
                    (true, Some(p)) => p,
                    _ => values,
                };
                if found != Some(want) {
                    return Err(format!(
                        "replace {replace}: {key:?} {solver:?} reads {found:?}, not {want:?}"
                    ));
                }
            }
        }
        for e in &entries {
            let readable = new_read
                .get(&e.key)
                .is_some_and(|items| items.iter().any(|(s, _)| s == e.solver));
            if !readable {
                return Err(format!(
                    "replace {replace}: entry {:?} {} not readable",
                    e.key, e.solver
                ));
            }
        }
        let (again, counts) = udb::merge(&merged, &entries, replace);
        if again != merged || counts.added != 0 {
            return Err(format!("replace {replace}: a second merge changed the file"));
        }
    }
    Ok(())
}

/// A harness: bytes in, `Ok(())` or the broken invariant out.
pub type Harness = fn(&[u8]) -> Outcome;

/// Every harness by name (the cargo-fuzz target names and `tools/fuzz.sh`'s fallback).
pub const HARNESSES: [(&str, Harness); 14] = [
    ("problem_line", problem_line),
    ("perfdb_key", perfdb_key),
    ("db_key", db_key),
    ("driver_line", driver_line),
    ("frugally_model", frugally_model),
    ("ktn_metadata", ktn_metadata),
    ("safetensors", safetensors),
    ("weights_info", weights_info),
    ("text_perfdb", text_perfdb),
    ("sqlite_perfdb", sqlite_perfdb),
    ("ck_catalogue", ck_catalogue),
    ("gtc_catalogue", gtc_catalogue),
    ("userdb_text", userdb_text),
    ("onnx_model", onnx_model),
];

/// An ONNX model (`crate::onnx`): its problems or an error, never a panic, for inference, for
/// inference with a batch and for training with a batch; every line it gives reads back (as
/// `batch --input` reads it) to the problem it came with. Two rewrites of the same model must
/// give the same answer:
/// - its convolutions' weights moved from initializers to graph inputs with the same shapes and
///   no initializer (inference): the same lines, or an error for both;
/// - where every graph input's batch is a fixed 1, each made a symbol and every stated shape's
///   first dimension `v` written `v*symbol` (as `torch.export` writes them), at batch 1: the
///   same lines, or an error for both.
pub fn onnx_model(data: &[u8]) -> Outcome {
    let training = crate::onnx::Options {
        batch: Some(2),
        training: true,
        ..crate::onnx::Options::default()
    };
    let batch = crate::onnx::Options {
        batch: Some(3),
        ..crate::onnx::Options::default()
    };
    for options in [crate::onnx::Options::default(), batch, training] {
        onnx_lines(data, &options)?;
    }
    let Ok(model) = crate::onnx::read_model(data, "fuzz.onnx") else {
        return Ok(());
    };
    if let Some(moved) = onnx_weights_as_inputs(&model) {
        let options = crate::onnx::Options::default();
        let (a, b) = (onnx_lines(data, &options)?, onnx_lines(&moved, &options)?);
        if a != b {
            return Err(format!("weights as graph inputs give {b:?}, as initializers {a:?}"));
        }
    }
    if let Some(symbolic) = onnx_symbolic_batch(&model) {
        let options = crate::onnx::Options {
            batch: Some(1),
            ..crate::onnx::Options::default()
        };
        let (a, b) = (onnx_lines(data, &options)?, onnx_lines(&symbolic, &options)?);
        if a != b {
            return Err(format!(
                "the batch as a symbol (stated dims v*N) gives {b:?}, fixed at 1 {a:?}"
            ));
        }
    }
    Ok(())
}

/// The lines of a model (`None` where it is refused), each checked to read back.
fn onnx_lines(data: &[u8], options: &crate::onnx::Options) -> std::result::Result<Option<Vec<String>>, Violation> {
    let Ok(network) = crate::onnx::problems_from_bytes(data, "fuzz.onnx", options) else {
        return Ok(None);
    };
    for p in &network.problems {
        let back =
            ConvProblem::from_driver_line(&p.line).map_err(|e| format!("{}: does not read back: {e}", p.line))?;
        if back != p.problem {
            return Err(format!("{}: reads back as {back:?}, not {:?}", p.line, p.problem));
        }
    }
    Ok(Some(network.lines().iter().map(|s| s.to_string()).collect()))
}

/// The model with every initializer used only as a convolution's weights (and not already a
/// graph input, its name unique) given as a graph input of its shape and type instead; `None`
/// when there is none.
fn onnx_weights_as_inputs(model: &crate::onnx::proto::ModelProto) -> Option<Vec<u8>> {
    use crate::onnx::proto::{tensor_shape_proto, type_proto, TensorShapeProto, TypeProto, ValueInfoProto};
    use prost::Message;
    let graph = model.graph.as_ref()?;
    let mut uses: std::collections::HashMap<&str, (usize, bool)> = std::collections::HashMap::new();
    for node in &graph.node {
        let conv = matches!(node.op_type.as_deref(), Some("Conv" | "ConvTranspose"))
            && matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx"));
        for (i, input) in node.input.iter().enumerate() {
            let e = uses.entry(input.as_str()).or_insert((0, true));
            e.0 += 1;
            e.1 &= conv && i == 1;
        }
    }
    for o in &graph.output {
        if let Some(e) = o.name.as_deref().and_then(|n| uses.get_mut(n)) {
            e.1 = false;
        }
    }
    let listed: std::collections::HashSet<&str> = graph.input.iter().filter_map(|i| i.name.as_deref()).collect();
    let mut seen = std::collections::HashMap::new();
    for t in &graph.initializer {
        *seen.entry(t.name.as_deref().unwrap_or("")).or_insert(0) += 1;
    }
    let movable = |t: &crate::onnx::proto::TensorProto| {
        let n = t.name.as_deref().unwrap_or("");
        !n.is_empty() && seen.get(n) == Some(&1) && !listed.contains(n) && uses.get(n).is_some_and(|u| u.0 > 0 && u.1)
    };
    if !graph.initializer.iter().any(movable) {
        return None;
    }
    let mut out = model.clone();
    let g = out.graph.as_mut()?;
    let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut g.initializer).into_iter().partition(|t| movable(t));
    g.initializer = kept;
    for t in moved {
        let dim = t
            .dims
            .iter()
            .map(|&d| tensor_shape_proto::Dimension {
                denotation: None,
                value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
            })
            .collect();
        g.input.push(ValueInfoProto {
            name: t.name.clone(),
            r#type: Some(TypeProto {
                denotation: None,
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type: t.data_type,
                    shape: Some(TensorShapeProto { dim }),
                })),
            }),
            ..Default::default()
        });
    }
    Some(out.encode_to_vec())
}

/// The model with its graph inputs' fixed batch 1 made a new symbol and every stated shape's
/// fixed first dimension `v` written as an expression in it; `None` unless every graph input
/// of rank 2 or more (not an initializer) has a fixed first dimension of 1, and one does.
fn onnx_symbolic_batch(model: &crate::onnx::proto::ModelProto) -> Option<Vec<u8>> {
    use crate::onnx::proto::{tensor_shape_proto::dimension::Value, type_proto, ValueInfoProto};
    use prost::Message;
    const SYMBOL: &str = "fuzz_batch_symbol";
    let graph = model.graph.as_ref()?;
    let initializers: std::collections::HashSet<&str> =
        graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
    let dims_of = |vi: &ValueInfoProto| match vi.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(t)) => t.shape.as_ref().map(|s| s.dim.clone()),
        _ => None,
    };
    let mut any = false;
    for input in &graph.input {
        if input.name.as_deref().is_some_and(|n| initializers.contains(n)) {
            continue;
        }
        let Some(dims) = dims_of(input) else { continue };
        if dims.len() < 2 {
            continue;
        }
        match dims[0].value {
            Some(Value::DimValue(1)) => any = true,
            _ => return None,
        }
    }
    if !any {
        return None;
    }
    let mut out = model.clone();
    let g = out.graph.as_mut()?;
    fn first_dim(vi: &mut ValueInfoProto) -> Option<&mut Option<Value>> {
        match vi.r#type.as_mut()?.value.as_mut()? {
            type_proto::Value::TensorType(t) => t.shape.as_mut()?.dim.first_mut().map(|d| &mut d.value),
            _ => None,
        }
    }
    for input in &mut g.input {
        if input.name.as_deref().is_some_and(|n| initializers.contains(n)) || dims_of(input).is_none_or(|d| d.len() < 2)
        {
            continue;
        }
        if let Some(v) = first_dim(input) {
            *v = Some(Value::DimParam(SYMBOL.to_string()));
        }
    }
    for (i, vi) in g.value_info.iter_mut().chain(g.output.iter_mut()).enumerate() {
        if let Some(v) = first_dim(vi) {
            if let Some(Value::DimValue(d)) = *v {
                if d >= 1 {
                    let text = match i % 3 {
                        0 => format!("{d}*{SYMBOL}"),
                        1 => format!("{SYMBOL}*{d}"),
                        _ => format!("({SYMBOL} * {d})"),
                    };
                    *v = Some(Value::DimParam(text));
                }
            }
        }
    }
    Some(out.encode_to_vec())
}

/// The seeds of [`onnx_model`]: [`onnx_seed`], and [`onnx_seed_inputs`].
pub fn onnx_seeds() -> Vec<Vec<u8>> {
    vec![onnx_seed(), onnx_seed_inputs()]
}

/// [`onnx_seed`] as a graph built for shape analysis gives it: the convolutions' weights as
/// graph inputs without initializers, a `[4, 1]` scale as a graph input multiplied in, a
/// rank-1 input of the batch's length `[N]`, and after the last convolution an op not known
/// here whose output the model states as `[2*N, 4, 1024]` (as `torch.export` writes it),
/// feeding one more convolution (weights `[4, 4, 3]`, a graph input).
pub fn onnx_seed_inputs() -> Vec<u8> {
    use crate::onnx::proto::{
        tensor_proto::DataType, tensor_shape_proto, type_proto, AttributeProto, ModelProto, NodeProto,
        TensorShapeProto, TypeProto, ValueInfoProto,
    };
    use prost::Message;
    let Ok(model) = ModelProto::decode(onnx_seed().as_slice()) else {
        return onnx_seed();
    };
    let Some(moved) = onnx_weights_as_inputs(&model).and_then(|b| ModelProto::decode(b.as_slice()).ok()) else {
        return onnx_seed();
    };
    let mut model = moved;
    let Some(g) = model.graph.as_mut() else {
        return onnx_seed();
    };
    let vi = |name: &str, dims: &[tensor_shape_proto::dimension::Value]| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            denotation: None,
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(DataType::Float as i32),
                shape: Some(TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|d| tensor_shape_proto::Dimension {
                            denotation: None,
                            value: Some(d.clone()),
                        })
                        .collect(),
                }),
            })),
        }),
        ..Default::default()
    };
    use tensor_shape_proto::dimension::Value::{DimParam, DimValue};
    let node =
        |op: &str, inputs: &[&str], output: &str, domain: Option<&str>, attribute: Vec<AttributeProto>| NodeProto {
            op_type: Some(op.into()),
            name: Some(output.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            domain: domain.map(|d| d.into()),
            attribute,
            ..Default::default()
        };
    g.input.push(vi("gamma", &[DimValue(4), DimValue(1)]));
    g.input.push(vi("len", &[DimParam("N".into())]));
    g.input.push(vi("w4", &[DimValue(4), DimValue(4), DimValue(3)]));
    g.node.push(node("Mul", &["c3", "gamma"], "scaled", None, vec![]));
    g.node.push(node(
        "Frobnicate",
        &["scaled", "len"],
        "fz",
        Some("com.example"),
        vec![],
    ));
    g.value_info
        .push(vi("fz", &[DimParam("2*N".into()), DimValue(4), DimValue(1024)]));
    g.node.push(node(
        "Conv",
        &["fz", "w4"],
        "c4",
        None,
        vec![AttributeProto {
            name: Some("pads".into()),
            r#type: Some(crate::onnx::proto::attribute_proto::AttributeType::Ints as i32),
            ints: vec![1, 1],
            ..Default::default()
        }],
    ));
    model.encode_to_vec()
}

/// A small ONNX model for [`onnx_model`]'s seed corpus: a 2-D convolution with SAME padding, a
/// Resize, a Concat, a transposed convolution with output padding and a 1-D-shaped Reshape
/// feeding a grouped convolution, the batch symbolic.
pub fn onnx_seed() -> Vec<u8> {
    use crate::onnx::proto::{
        attribute_proto::AttributeType, tensor_proto::DataType, tensor_shape_proto, type_proto, AttributeProto,
        GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto,
        ValueInfoProto,
    };
    use prost::Message;
    let ints = |name: &str, v: &[i64]| AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    };
    let tensor = |name: &str, dims: &[i64], ty: DataType, i64s: &[i64], f32s: &[f32]| TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(ty as i32),
        int64_data: i64s.to_vec(),
        float_data: f32s.to_vec(),
        ..Default::default()
    };
    let node = |op: &str, inputs: &[&str], output: &str, attribute: Vec<AttributeProto>| NodeProto {
        op_type: Some(op.into()),
        name: Some(output.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        attribute,
        ..Default::default()
    };
    let dim = |v: tensor_shape_proto::dimension::Value| tensor_shape_proto::Dimension {
        denotation: None,
        value: Some(v),
    };
    use tensor_shape_proto::dimension::Value::{DimParam, DimValue};
    let input = ValueInfoProto {
        name: Some("x".into()),
        r#type: Some(TypeProto {
            denotation: None,
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(DataType::Float as i32),
                shape: Some(TensorShapeProto {
                    dim: vec![
                        dim(DimParam("N".into())),
                        dim(DimValue(3)),
                        dim(DimValue(16)),
                        dim(DimValue(16)),
                    ],
                }),
            })),
        }),
        ..Default::default()
    };
    let same = AttributeProto {
        name: Some("auto_pad".into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(b"SAME_UPPER".to_vec()),
        ..Default::default()
    };
    let group = AttributeProto {
        name: Some("group".into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(2),
        ..Default::default()
    };
    let graph = GraphProto {
        name: Some("seed".into()),
        node: vec![
            node("Conv", &["x", "w1"], "c1", vec![same, ints("strides", &[2, 2])]),
            node("Relu", &["c1"], "r1", vec![]),
            node("Resize", &["r1", "", "scales"], "up", vec![]),
            node(
                "Concat",
                &["up", "up"],
                "cat",
                vec![AttributeProto {
                    name: Some("axis".into()),
                    r#type: Some(AttributeType::Int as i32),
                    i: Some(1),
                    ..Default::default()
                }],
            ),
            node(
                "ConvTranspose",
                &["cat", "w2"],
                "t1",
                vec![
                    ints("strides", &[2, 2]),
                    ints("pads", &[1, 1, 1, 1]),
                    ints("output_padding", &[1, 1]),
                ],
            ),
            node("Reshape", &["t1", "shape"], "rs", vec![]),
            node("Conv", &["rs", "w3"], "c3", vec![group, ints("pads", &[1, 1])]),
        ],
        initializer: vec![
            tensor("w1", &[8, 3, 3, 3], DataType::Float, &[], &[]),
            tensor("scales", &[4], DataType::Float, &[], &[1.0, 1.0, 2.0, 2.0]),
            tensor("w2", &[16, 4, 3, 3], DataType::Float, &[], &[]),
            tensor("shape", &[3], DataType::Int64, &[0, 4, -1], &[]),
            tensor("w3", &[4, 2, 3], DataType::Float, &[], &[]),
        ],
        input: vec![input],
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}
