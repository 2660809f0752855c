//! composable_kernel (CK) instance lists of MIOpen 2024: the kernel instances its grouped
//! convolution solvers enumerate, read from the TSV files described in
//! `../shared/miopen/ck/README.md`, as [`CkInstance`]s (their rules: [`super::rules`],
//! [`CkVersion::Miopen2024`]).
//!
//! A list holds one row per instance, in `DeviceOperationInstanceFactory` order (= MIOpen's
//! `valid_kernels` order before filtering).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::problem::{Direction, Precision};

use super::instance::{parse_type_string, CkInstance, ConvSpec, DeviceOp};
use super::rules::{supports, CkProblem, CkVersion};

/// Columns of a catalogue file, in order.
pub const COLUMNS: [&str; 25] = [
    "factory_index",
    "type_string",
    "op",
    "n_tokens",
    "tuple_alias",
    "source_file",
    "t0",
    "t1",
    "t2",
    "t3",
    "t4",
    "t5",
    "t6",
    "t7",
    "t8",
    "t9",
    "t10",
    "t11",
    "t12",
    "t13",
    "t14",
    "t15",
    "t16",
    "t17",
    "all_params",
];

/// All instances of one (direction, data type) catalogue file.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    pub path: PathBuf,
    pub direction: Direction,
    pub precision: Precision,
    pub instances: Vec<CkInstance>,
}

/// The file name of a catalogue: `{fwd,bwd,wrw}_{f32,f16}.tsv`.
pub fn file_name(direction: Direction, precision: Precision) -> Result<String> {
    let dir = match direction {
        Direction::Forward => "fwd",
        Direction::BackwardData => "bwd",
        Direction::BackwardWeights => "wrw",
    };
    let ty = match precision {
        Precision::Fp32 => "f32",
        Precision::Fp16 => "f16",
        Precision::Bf16 => {
            return Err(Error::NotApplicable {
                solver: "composable_kernel catalogue".into(),
                reason: "no BF16 instance list (only FP32 and FP16 are supported)".into(),
            })
        }
    };
    Ok(format!("{dir}_{ty}.tsv"))
}

/// MIOpen's `GetKernelAsTokens`: the text between `<` and the first `>`, split on `,`, with
/// whitespace removed.
pub fn kernel_tokens(type_string: &str) -> Option<Vec<String>> {
    let open = type_string.find('<')?;
    let close = type_string.find('>')?;
    let inner = type_string.get(open + 1..close)?;
    Some(
        inner
            .split(',')
            .map(|t| t.chars().filter(|c| !c.is_whitespace()).collect())
            .collect(),
    )
}

impl Catalogue {
    /// Reads and checks a catalogue file.
    pub fn load(path: &Path, direction: Direction, precision: Precision) -> Result<Catalogue> {
        let text = crate::format::read_text(path)?;
        Catalogue::parse(&text, path, direction, precision)
    }

    /// Parses catalogue text; errors name `path:line` and what is wrong.
    pub fn parse(text: &str, path: &Path, direction: Direction, precision: Precision) -> Result<Catalogue> {
        let at = |line: usize, detail: String| Error::format(format!("{}:{line}", path.display()), detail);
        let mut lines = text.lines().enumerate();
        let header: Vec<&str> = match lines.next() {
            Some((_, h)) => h.split('\t').collect(),
            None => return Err(at(1, "empty file (expected a header line)".into())),
        };
        if header != COLUMNS {
            return Err(at(
                1,
                format!(
                    "header does not match the catalogue columns ({} ... all_params)",
                    COLUMNS[0]
                ),
            ));
        }
        let mut instances = Vec::new();
        for (i, line) in lines {
            let line_no = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() != COLUMNS.len() {
                return Err(at(
                    line_no,
                    format!("expected {} columns, got {}", COLUMNS.len(), cols.len()),
                ));
            }
            let factory_index: usize = cols[0]
                .parse()
                .map_err(|_| at(line_no, format!("factory_index '{}' is not an integer", cols[0])))?;
            if factory_index != instances.len() {
                return Err(at(
                    line_no,
                    format!(
                        "factory_index {factory_index} out of order (expected {})",
                        instances.len()
                    ),
                ));
            }
            let inst = parse_row(&cols, direction, precision).map_err(|d| at(line_no, d))?;
            instances.push(inst);
        }
        if instances.is_empty() {
            return Err(at(1, "no instances".into()));
        }
        Ok(Catalogue {
            path: path.to_path_buf(),
            direction,
            precision,
            instances,
        })
    }

    /// The instances that support `p` as MIOpen 2024 lists them, in factory order (MIOpen's
    /// `valid_kernels`).
    pub fn supported<'a>(&'a self, p: &'a CkProblem) -> impl Iterator<Item = &'a CkInstance> + 'a {
        self.instances
            .iter()
            .filter(move |i| supports(i, p, None, CkVersion::Miopen2024).is_ok())
    }
}

/// One row of a list: the instance its type string describes, checked against the row's other
/// columns, with the bwd-data CDE store vector (not printed) from `all_params`.
fn parse_row(cols: &[&str], direction: Direction, precision: Precision) -> std::result::Result<CkInstance, String> {
    let (type_string, op) = (cols[1], cols[2]);
    let kind = DeviceOp::from_name(op).ok_or_else(|| format!("unknown CK operation '{op}'"))?;
    if kind.direction() != direction {
        return Err(format!("operation '{op}' does not compute direction {direction}"));
    }
    if !type_string.starts_with(&format!("{op}<")) {
        return Err(format!("type_string does not start with '{op}<'"));
    }
    let n_tokens: usize = cols[3]
        .parse()
        .map_err(|_| format!("n_tokens '{}' is not an integer", cols[3]))?;
    let tokens: Vec<String> = cols[6..24].iter().take(n_tokens).map(|t| t.to_string()).collect();
    if n_tokens > 18 || tokens.iter().any(|t| t.is_empty()) || cols[6 + n_tokens.min(18)..24].iter().any(|t| !t.is_empty())
    {
        return Err(format!("expected exactly {n_tokens} token columns t0.."));
    }
    if kernel_tokens(type_string).as_ref() != Some(&tokens) {
        return Err("tokens t0.. differ from the type_string's template arguments".into());
    }
    let mut inst = parse_type_string(type_string).map_err(|e| e.to_string())?;
    let map: HashMap<&str, &str> = cols[24].split(';').filter_map(|kv| kv.split_once('=')).collect();
    let text = |keys: &[&str]| match keys.iter().find_map(|k| map.get(k)) {
        Some(v) => Ok(*v),
        None => Err(format!("all_params has none of {}", keys.join(", "))),
    };
    let int = |keys: &[&str]| -> std::result::Result<u64, String> {
        let v = text(keys)?;
        v.parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("all_params: {}={v} is not a positive integer", keys[0]))
    };
    let want = match precision {
        Precision::Fp32 => "F32",
        Precision::Fp16 => "F16",
        Precision::Bf16 => "BF16",
    };
    let ty = text(&["ADataType", "InDataType"])?;
    if ty != want {
        return Err(format!("the data type is {ty} but this is the {want} list"));
    }
    let q = &mut inst.printed;
    if kind == DeviceOp::BwdDataV1 {
        q.e_vec = Some(int(&["CDEBlockTransferScalarPerVector_NPerBlock"])?);
    }
    let spec = text(&[
        "ConvForwardSpecialization",
        "ConvBackwardDataSpecialization",
        "ConvBackwardWeightSpecialization",
    ])?;
    if ConvSpec::parse(spec) != Some(q.spec) {
        return Err(format!("specialisation '{spec}' differs from the type string's"));
    }
    // The rules read what the type string prints; `all_params` must say the same, and the
    // vector dimensions must be those the rules assume for the operation (A along G exactly for
    // merged groups).
    let vector_dims = match kind {
        DeviceOp::FwdXdl | DeviceOp::FwdXdlV3 | DeviceOp::FwdLargeTensor if q.groups_to_merge > 1 => (1, 2),
        DeviceOp::FwdXdl | DeviceOp::FwdXdlV3 | DeviceOp::FwdLargeTensor => (2, 2),
        DeviceOp::BwdDataV1 => (2, 1),
        DeviceOp::WrwXdl | DeviceOp::WrwXdlV3 => (2, 2),
        DeviceOp::WrwTwoStage | DeviceOp::WrwExplicit => (1, 1),
    };
    let checks = [
        (&["BlockSize"][..], Some(q.block_size)),
        (&["MPerBlock"], Some(q.m_per_block)),
        (&["NPerBlock"], Some(q.n_per_block)),
        (&["KPerBlock", "K0PerBlock"], Some(q.k_per_block)),
        (&["AK1", "K1"], q.ak1),
        (&["ABlockTransferSrcScalarPerVector"], Some(q.a_vec)),
        (&["BBlockTransferSrcScalarPerVector"], Some(q.b_vec)),
        (
            &["CDEBlockTransferScalarPerVector_NPerBlock", "CBlockTransferScalarPerVector_NWaveNPerXdl"],
            q.e_vec,
        ),
        (&["ABlockTransferSrcVectorDim"], Some(vector_dims.0)),
        (&["BBlockTransferSrcVectorDim"], Some(vector_dims.1)),
    ];
    for (keys, printed) in checks {
        let v = int(keys)?;
        if printed.is_some_and(|p| p != v) {
            return Err(format!("all_params: {}={v}, the rules read {}", keys[0], printed.unwrap_or(0)));
        }
    }
    let merge = map.get("NumGroupsToMerge").map_or(Ok(1), |_| int(&["NumGroupsToMerge"]))?;
    let pipeline = map.get("BlkGemmPipelineVer").map(|v| v.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()));
    if merge != q.groups_to_merge || pipeline.is_some_and(|v| v != q.pipeline) {
        return Err("all_params: NumGroupsToMerge or BlkGemmPipelineVer differs from the type string's".into());
    }
    Ok(inst)
}

/// Catalogues already read, by file path (they are read once per process; the built-in ones by
/// their [`builtin_path`]).
fn cache() -> &'static Mutex<HashMap<PathBuf, Arc<Catalogue>>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Catalogue>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The instance list of (direction, precision) shipped with tuneinfer (`src/solvers/ck/data/`,
/// generated by `tools/gen_data.sh` from the composable_kernel lists; see that folder's
/// NOTICE.md). Errors as [`file_name`] (no BF16 list).
pub fn builtin_text(direction: Direction, precision: Precision) -> Result<&'static str> {
    Ok(match file_name(direction, precision)?.as_str() {
        "fwd_f32.tsv" => include_str!("data/fwd_f32.tsv"),
        "fwd_f16.tsv" => include_str!("data/fwd_f16.tsv"),
        "bwd_f32.tsv" => include_str!("data/bwd_f32.tsv"),
        "bwd_f16.tsv" => include_str!("data/bwd_f16.tsv"),
        "wrw_f32.tsv" => include_str!("data/wrw_f32.tsv"),
        _ => include_str!("data/wrw_f16.tsv"),
    })
}

/// The name a built-in list is shown by in errors (`(built in)/fwd_f16.tsv`).
pub fn builtin_path(direction: Direction, precision: Precision) -> Result<PathBuf> {
    Ok(PathBuf::from(crate::format::bundle::ROOT).join(file_name(direction, precision)?))
}

/// The catalogue of (direction, precision): the file in `dir` where one is given ([`default_dir`]),
/// else the built-in list ([`builtin_text`]); read once and shared.
pub fn load_cached(dir: Option<&Path>, direction: Direction, precision: Precision) -> Result<Arc<Catalogue>> {
    let path = match dir {
        Some(dir) => dir.join(file_name(direction, precision)?),
        None => builtin_path(direction, precision)?,
    };
    if let Ok(map) = cache().lock() {
        if let Some(c) = map.get(&path) {
            return Ok(c.clone());
        }
    }
    let catalogue = Arc::new(match dir {
        Some(_) => Catalogue::load(&path, direction, precision)?,
        None => Catalogue::parse(builtin_text(direction, precision)?, &path, direction, precision)?,
    });
    if let Ok(mut map) = cache().lock() {
        map.insert(path, catalogue.clone());
    }
    Ok(catalogue)
}

/// Where catalogue files are read from: `flag` (`--catalogue DIR`), else `$TUNEINFER_CK`, else
/// None: the lists built into tuneinfer.
pub fn default_dir(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(f) = flag {
        return Some(f.to_path_buf());
    }
    std::env::var_os("TUNEINFER_CK")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
