//! The GTC NHWC kernel catalogues: MIOpen's `kernel_param_list` of each direction
//! (`GetFwdXdlopsNHWCConfigList` and its bwd/wrw twins), read from the TSV files
//! `gtc_{fwd,bwd,wrw}_nhwc.tsv` described in `../shared/miopen/solvers/GTC_NHWC_COMMON.md` §8.
//!
//! One row per entry in MIOpen's order (`index` = the position MIOpen's tuner writes into the
//! params string's last field), then the 36 struct members in `Visit` order. In a catalogue the
//! `gemm_k_global_split` field is a flag: 0 = the entry cannot split GEMM-K, 1 = it can.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::problem::{Direction, Precision};

/// The 36 catalogue fields in `Visit` order (perf-db params positions 0-35; position 36 is the
/// entry's index).
pub const FIELDS: [&str; 36] = [
    "direction",
    "tensor_layout",
    "precision",
    "nxb",
    "nxe",
    "gemm_m_per_block",
    "gemm_n_per_block",
    "gemm_k_per_block",
    "wave_tile_m",
    "wave_tile_n",
    "wave_tile_k",
    "wave_step_m",
    "wave_step_n",
    "wave_repeat_m",
    "wave_repeat_n",
    "multihead",
    "vector_store",
    "gemm_k_global_split",
    "merge_e",
    "tensor_a_pass_through",
    "tensor_a_thread_lengths[0]",
    "tensor_a_thread_lengths[1]",
    "tensor_a_thread_lengths[2]",
    "tensor_a_thread_lengths[3]",
    "tensor_a_cluster_lengths[0]",
    "tensor_a_cluster_lengths[1]",
    "tensor_a_cluster_lengths[2]",
    "tensor_a_cluster_lengths[3]",
    "tensor_b_thread_lengths[0]",
    "tensor_b_thread_lengths[1]",
    "tensor_b_thread_lengths[2]",
    "tensor_b_thread_lengths[3]",
    "tensor_b_cluster_lengths[0]",
    "tensor_b_cluster_lengths[1]",
    "tensor_b_cluster_lengths[2]",
    "tensor_b_cluster_lengths[3]",
];

/// Position of `gemm_k_global_split` among [`FIELDS`] (and in the params string).
pub const GKS_FIELD: usize = 17;

/// One catalogue entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Position in the catalogue (MIOpen's `index`).
    pub index: usize,
    pub precision: Precision,
    pub nxb: i64,
    pub nxe: i64,
    /// Macro tile (`gemm_{m,n,k}_per_block`).
    pub mpb: i64,
    pub npb: i64,
    pub kpb: i64,
    pub multihead: i64,
    pub vector_store: i64,
    /// The catalogue flag: can the entry split GEMM-K?
    pub can_split: bool,
    pub merge_e: i64,
    /// `tensor_a_thread_lengths`, `tensor_a_cluster_lengths`, `tensor_b_thread_lengths`,
    /// `tensor_b_cluster_lengths`.
    pub ta: [i64; 4],
    pub ca: [i64; 4],
    pub tb: [i64; 4],
    pub cb: [i64; 4],
    /// The 36 fields as MIOpen prints them (the flag at [`GKS_FIELD`]).
    pub text: Vec<String>,
}

impl Entry {
    /// MIOpen's `BlockSize()`: the product of the A cluster lengths.
    pub fn block_size(&self) -> i128 {
        self.ca.iter().map(|&v| i128::from(v)).product()
    }

    /// "pad-c" entry: `ta[1] == 1 && tb[1] == 1` (supports any channel count).
    pub fn pad_c(&self) -> bool {
        self.ta[1] == 1 && self.tb[1] == 1
    }

    /// The params string MIOpen's perf db stores for this entry with split `gks`, tuned (field
    /// 36 = the entry's index).
    pub fn params_text(&self, gks: i64) -> String {
        let mut out = String::with_capacity(128);
        for (i, f) in self.text.iter().enumerate() {
            if i == GKS_FIELD {
                out.push_str(&gks.to_string());
            } else {
                out.push_str(f);
            }
            out.push(',');
        }
        out.push_str(&self.index.to_string());
        out
    }

    /// The identity MIOpen's `operator==` compares: fields 0-35 with the split as zero /
    /// non-zero.
    fn identity(&self) -> String {
        identity_of(&self.text, self.can_split)
    }
}

fn identity_of(fields: &[String], split: bool) -> String {
    let mut out = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i == GKS_FIELD {
            out.push_str(if split { "1" } else { "0" });
        } else {
            out.push_str(f.trim());
        }
        out.push(',');
    }
    out
}

/// One direction's catalogue.
#[derive(Debug)]
pub struct Catalogue {
    pub direction: Direction,
    pub path: PathBuf,
    pub entries: Vec<Entry>,
    /// [`Entry::identity`] -> index.
    by_identity: HashMap<String, usize>,
}

/// MIOpen's spelling of a direction in the params string.
pub fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "fwd",
        Direction::BackwardData => "bwd",
        Direction::BackwardWeights => "wrw",
    }
}

/// The catalogue file of a direction.
pub fn file_name(d: Direction) -> String {
    format!("gtc_{}_nhwc.tsv", direction_word(d))
}

fn precision_of(word: &str) -> Option<Precision> {
    match word {
        "fp32" => Some(Precision::Fp32),
        "fp16" => Some(Precision::Fp16),
        "bf16" => Some(Precision::Bf16),
        _ => None,
    }
}

/// MIOpen's spelling of a precision in the params string.
pub fn precision_word(p: Precision) -> &'static str {
    match p {
        Precision::Fp32 => "fp32",
        Precision::Fp16 => "fp16",
        Precision::Bf16 => "bf16",
    }
}

impl Catalogue {
    pub fn load(path: &Path, direction: Direction) -> Result<Catalogue> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Catalogue::parse(&text, path, direction)
    }

    /// Parses a catalogue TSV: a header naming `index`, the 36 [`FIELDS`] and `src_line`, then
    /// one entry per line with `index` = its 0-based position. Errors name the file and line.
    pub fn parse(text: &str, path: &Path, direction: Direction) -> Result<Catalogue> {
        let shown = path.display().to_string();
        let bad = |line: usize, detail: String| Error::format(format!("{shown}:{line}"), detail);
        let mut lines = text.lines().enumerate();
        let (_, header) = lines.next().ok_or_else(|| Error::format(&shown, "empty catalogue"))?;
        let cols: Vec<&str> = header.split('\t').map(str::trim).collect();
        let mut want = vec!["index"];
        want.extend(FIELDS);
        want.push("src_line");
        if cols != want {
            return Err(bad(
                1,
                format!(
                    "header is not the GTC catalogue's ({} columns: index, the 36 fields, src_line)",
                    want.len()
                ),
            ));
        }
        let mut entries = Vec::new();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').map(str::trim).collect();
            if f.len() != want.len() {
                return Err(bad(i + 1, format!("{} columns, expected {}", f.len(), want.len())));
            }
            let index: usize = f[0]
                .parse()
                .map_err(|_| bad(i + 1, format!("index '{}' is not a number", f[0])))?;
            if index != entries.len() {
                return Err(bad(
                    i + 1,
                    format!("index {index} out of order (expected {})", entries.len()),
                ));
            }
            let fields = &f[1..37];
            if fields[0] != direction_word(direction) || fields[1] != "nhwc" {
                return Err(bad(
                    i + 1,
                    format!(
                        "entry of direction '{}' layout '{}' in the {} catalogue",
                        fields[0],
                        fields[1],
                        direction_word(direction)
                    ),
                ));
            }
            let precision = precision_of(fields[2]).ok_or_else(|| {
                bad(
                    i + 1,
                    format!("precision '{}' (expected fp32, fp16 or bf16)", fields[2]),
                )
            })?;
            let mut ints = [0i64; 36];
            for (j, v) in fields.iter().enumerate().skip(3) {
                ints[j] = v
                    .parse::<i64>()
                    .ok()
                    .filter(|x| (0..=1 << 20).contains(x))
                    .ok_or_else(|| {
                        bad(
                            i + 1,
                            format!("field {} '{v}' is not a small non-negative integer", FIELDS[j]),
                        )
                    })?;
            }
            if !matches!(ints[GKS_FIELD], 0 | 1) {
                return Err(bad(
                    i + 1,
                    format!("gemm_k_global_split flag {} (expected 0 or 1)", ints[GKS_FIELD]),
                ));
            }
            let four = |at: usize| [ints[at], ints[at + 1], ints[at + 2], ints[at + 3]];
            let entry = Entry {
                index,
                precision,
                nxb: ints[3],
                nxe: ints[4],
                mpb: ints[5],
                npb: ints[6],
                kpb: ints[7],
                multihead: ints[15],
                vector_store: ints[16],
                can_split: ints[GKS_FIELD] == 1,
                merge_e: ints[18],
                ta: four(20),
                ca: four(24),
                tb: four(28),
                cb: four(32),
                text: fields.iter().map(|s| s.to_string()).collect(),
            };
            if entry.mpb == 0 || entry.npb == 0 || entry.kpb == 0 || entry.block_size() == 0 {
                return Err(bad(i + 1, "a zero tile or cluster size".into()));
            }
            entries.push(entry);
        }
        if entries.is_empty() {
            return Err(Error::format(&shown, "no entries"));
        }
        let mut by_identity = HashMap::with_capacity(entries.len());
        for e in &entries {
            by_identity.entry(e.identity()).or_insert(e.index);
        }
        Ok(Catalogue {
            direction,
            path: path.to_path_buf(),
            entries,
            by_identity,
        })
    }

    /// The entry a params string names, and its split: MIOpen's `Deserialize` (37 fields; the
    /// last parsed as its leading digits, so `ToString()`'s `[gks]` suffix is ignored) then
    /// `IsValidValue`'s catalogue lookup (fields 0-35, the split compared as zero / non-zero;
    /// the stored index is not compared). Errors say which field is wrong.
    pub fn lookup(&self, params: &str) -> std::result::Result<(usize, i64), String> {
        let fields: Vec<String> = params.split(',').map(|s| s.trim().to_string()).collect();
        if fields.len() != 37 {
            return Err(format!("expected 37 comma-separated fields, got {}", fields.len()));
        }
        let gks: i64 = fields[GKS_FIELD].parse().map_err(|_| {
            format!(
                "field 18 (gemm_k_global_split) '{}' is not an integer",
                fields[GKS_FIELD]
            )
        })?;
        let digits: String = fields[36].chars().take_while(|c| c.is_ascii_digit()).collect();
        if digits.is_empty() || digits.len() > 9 {
            return Err(format!(
                "field 37 (index) '{}' does not start with a number",
                fields[36]
            ));
        }
        let id = identity_of(&fields[..36], gks != 0);
        match self.by_identity.get(&id) {
            Some(&i) => Ok((i, gks)),
            None => Err(format!("fields 1-36 are no entry of {}", self.path.display())),
        }
    }

    /// The entry MIOpen's `operator==` equates with `e` given `vector_store` = `vs` and a split
    /// that is zero or not (`split`), if the catalogue has one. MIOpen's defaults rewrite
    /// `vector_store` and set a split on whichever entry they copied, also on one whose
    /// catalogue flag says 0 (fwd :599-615: `if(gks > 0) gemm_k_global_split = gks` after
    /// `CopyParameters`); the catalogue lists both variants of most entries, and the one with
    /// the matching flag is the config MIOpen then runs (its `index` is not compared).
    pub fn twin(&self, e: &Entry, vs: i64, split: bool) -> Option<usize> {
        let mut text = e.text.clone();
        text[16] = vs.to_string();
        self.by_identity.get(&identity_of(&text, split)).copied()
    }
}

/// The catalogue text shipped with tuneinfer (`src/solvers/gtc_nhwc/data/`, generated by
/// `tools/gen_data.sh` from MIOpen's catalogues; see that folder's NOTICE.md).
pub fn builtin_text(direction: Direction) -> &'static str {
    match direction {
        Direction::Forward => include_str!("data/gtc_fwd_nhwc.tsv"),
        Direction::BackwardData => include_str!("data/gtc_bwd_nhwc.tsv"),
        Direction::BackwardWeights => include_str!("data/gtc_wrw_nhwc.tsv"),
    }
}

/// The name a built-in catalogue is shown by in errors (`(built in)/gtc_fwd_nhwc.tsv`).
pub fn builtin_path(direction: Direction) -> PathBuf {
    PathBuf::from(crate::format::bundle::ROOT).join(file_name(direction))
}

fn cache() -> &'static Mutex<HashMap<Direction, Arc<Catalogue>>> {
    static CACHE: OnceLock<Mutex<HashMap<Direction, Arc<Catalogue>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The catalogue of a direction: the one built into tuneinfer ([`builtin_text`]), parsed once
/// per process and shared. Nothing on this path reads files.
pub fn load(direction: Direction) -> Result<Arc<Catalogue>> {
    if let Ok(map) = cache().lock() {
        if let Some(c) = map.get(&direction) {
            return Ok(c.clone());
        }
    }
    let catalogue = Arc::new(Catalogue::parse(
        builtin_text(direction),
        &builtin_path(direction),
        direction,
    )?);
    if let Ok(mut map) = cache().lock() {
        map.insert(direction, catalogue.clone());
    }
    Ok(catalogue)
}
