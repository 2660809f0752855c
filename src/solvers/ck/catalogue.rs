//! composable_kernel (CK) instance catalogues: the lists of kernel instances MIOpen's grouped
//! convolution solvers enumerate, read from the TSV files described in
//! `../shared/miopen/ck/README.md`, and CK's `IsSupportedArgument` rules for a problem.
//!
//! A catalogue file holds one row per instance, in `DeviceOperationInstanceFactory` order (=
//! MIOpen's `valid_kernels` order before filtering). The rules below are the README's "Q3"
//! section; each names the CK check it stands for.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Direction, Precision};

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

/// The CK device operations that occur in the catalogues; each has its own support rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle` (also the merged-groups instances).
    FwdXdl,
    /// `DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3`.
    FwdXdlV3,
    /// `DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor`.
    FwdLargeTensor,
    /// `DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1`.
    BwdData,
    /// `DeviceGroupedConvBwdWeight_Xdl_CShuffle`.
    BwdWeight,
    /// `DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle`.
    BwdWeightTwoStage,
}

impl OpKind {
    pub fn from_op(op: &str) -> Option<OpKind> {
        Some(match op {
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle" => OpKind::FwdXdl,
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3" => OpKind::FwdXdlV3,
            "DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor" => OpKind::FwdLargeTensor,
            "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1" => OpKind::BwdData,
            "DeviceGroupedConvBwdWeight_Xdl_CShuffle" => OpKind::BwdWeight,
            "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle" => OpKind::BwdWeightTwoStage,
            _ => return None,
        })
    }

    /// The convolution direction the operation computes.
    pub fn direction(self) -> Direction {
        match self {
            OpKind::FwdXdl | OpKind::FwdXdlV3 | OpKind::FwdLargeTensor => Direction::Forward,
            OpKind::BwdData => Direction::BackwardData,
            OpKind::BwdWeight | OpKind::BwdWeightTwoStage => Direction::BackwardWeights,
        }
    }
}

/// CK's convolution specialisation template argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Specialization {
    Default,
    OddC,
    Filter1x1Pad0,
    Filter1x1Stride1Pad0,
    Filter3x3,
}

impl Specialization {
    fn parse(s: &str) -> Option<Specialization> {
        Some(match s {
            "Default" => Specialization::Default,
            "OddC" => Specialization::OddC,
            "Filter1x1Pad0" => Specialization::Filter1x1Pad0,
            "Filter1x1Stride1Pad0" => Specialization::Filter1x1Stride1Pad0,
            "Filter3x3" => Specialization::Filter3x3,
            _ => return None,
        })
    }
}

/// The template arguments the support rules read (from the `all_params` column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub spec: Specialization,
    pub block_size: u64,
    pub m_per_block: u64,
    pub n_per_block: u64,
    /// `KPerBlock` (or `K0PerBlock` for `BwdWeight_Xdl_CShuffle`).
    pub k_per_block: u64,
    /// `AK1` (fwd, bwd data) or `K1` (bwd weight).
    pub ak1: u64,
    pub a_vector_dim: u64,
    pub a_scalar_per_vector: u64,
    pub b_vector_dim: u64,
    pub b_scalar_per_vector: u64,
    /// `CDEBlockTransferScalarPerVector_NPerBlock` or `CBlockTransferScalarPerVector_NWaveNPerXdl`.
    pub e_scalar_per_vector: u64,
    /// `NumGroupsToMerge` (1 when the operation has none).
    pub groups_to_merge: u64,
    /// `BlkGemmPipelineVer` 1..5 (None when the operation has none).
    pub pipeline_version: Option<u32>,
}

/// One kernel instance of a catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// Position in the factory's list (0-based).
    pub factory_index: usize,
    /// `GetTypeString()` exactly as CK prints it (and MIOpen stores as kernel id).
    pub type_string: String,
    pub op: String,
    pub kind: OpKind,
    /// The printed template arguments as MIOpen's `GetKernelAsTokens` sees them.
    pub tokens: Vec<String>,
    pub params: Params,
}

/// All instances of one (direction, data type) catalogue file.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    pub path: PathBuf,
    pub direction: Direction,
    pub precision: Precision,
    pub instances: Vec<Instance>,
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
            let type_string = cols[1].to_string();
            let op = cols[2].to_string();
            let kind = OpKind::from_op(&op).ok_or_else(|| at(line_no, format!("unknown CK operation '{op}'")))?;
            if kind.direction() != direction {
                return Err(at(
                    line_no,
                    format!("operation '{op}' does not compute direction {direction}"),
                ));
            }
            if !type_string.starts_with(&format!("{op}<")) {
                return Err(at(line_no, format!("type_string does not start with '{op}<'")));
            }
            let n_tokens: usize = cols[3]
                .parse()
                .map_err(|_| at(line_no, format!("n_tokens '{}' is not an integer", cols[3])))?;
            let tokens: Vec<String> = cols[6..24].iter().take(n_tokens).map(|t| t.to_string()).collect();
            if n_tokens > 18
                || tokens.iter().any(|t| t.is_empty())
                || cols[6 + n_tokens.min(18)..24].iter().any(|t| !t.is_empty())
            {
                return Err(at(line_no, format!("expected exactly {n_tokens} token columns t0..")));
            }
            if kernel_tokens(&type_string).as_ref() != Some(&tokens) {
                return Err(at(
                    line_no,
                    "tokens t0.. differ from the type_string's template arguments".into(),
                ));
            }
            let params = parse_params(cols[24], kind, precision).map_err(|d| at(line_no, d))?;
            instances.push(Instance {
                factory_index,
                type_string,
                op,
                kind,
                tokens,
                params,
            });
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

    /// The instances that support `dims`, in factory order (MIOpen's `valid_kernels`).
    pub fn supported(&self, dims: &CkDims) -> impl Iterator<Item = &Instance> + '_ {
        let dims = *dims;
        self.instances.iter().filter(move |i| supports(i, &dims))
    }
}

/// Parses the `all_params` column into the arguments the rules need.
fn parse_params(all: &str, kind: OpKind, precision: Precision) -> std::result::Result<Params, String> {
    let map: HashMap<&str, &str> = all.split(';').filter_map(|kv| kv.split_once('=')).collect();
    let text = |key: &str| {
        map.get(key)
            .copied()
            .ok_or_else(|| format!("all_params has no '{key}'"))
    };
    let int = |key: &str| -> std::result::Result<u64, String> {
        let v = text(key)?;
        v.parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("all_params: {key}={v} is not a positive integer"))
    };
    let first_int = |keys: &[&str]| -> std::result::Result<u64, String> {
        match keys.iter().find(|k| map.contains_key(*k)) {
            Some(k) => int(k),
            None => Err(format!("all_params has none of {}", keys.join(", "))),
        }
    };
    let spec_key = match kind.direction() {
        Direction::Forward => "ConvForwardSpecialization",
        Direction::BackwardData => "ConvBackwardDataSpecialization",
        Direction::BackwardWeights => "ConvBackwardWeightSpecialization",
    };
    let spec_text = text(spec_key)?;
    let spec = Specialization::parse(spec_text).ok_or_else(|| format!("unknown specialisation '{spec_text}'"))?;
    let type_key = match kind.direction() {
        Direction::Forward | Direction::BackwardData => "ADataType",
        Direction::BackwardWeights => "InDataType",
    };
    let want = match precision {
        Precision::Fp32 => "F32",
        Precision::Fp16 => "F16",
        Precision::Bf16 => "BF16",
    };
    if text(type_key)? != want {
        return Err(format!("{type_key}={} but this is the {want} list", text(type_key)?));
    }
    let pipeline_version = match map.get("BlkGemmPipelineVer") {
        None => None,
        Some(v) => Some(
            v.strip_prefix('v')
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| (1..=5).contains(n))
                .ok_or_else(|| format!("all_params: BlkGemmPipelineVer={v} is not v1..v5"))?,
        ),
    };
    Ok(Params {
        spec,
        block_size: int("BlockSize")?,
        m_per_block: int("MPerBlock")?,
        n_per_block: int("NPerBlock")?,
        k_per_block: first_int(&["KPerBlock", "K0PerBlock"])?,
        ak1: first_int(&["AK1", "K1"])?,
        a_vector_dim: int("ABlockTransferSrcVectorDim")?,
        a_scalar_per_vector: int("ABlockTransferSrcScalarPerVector")?,
        b_vector_dim: int("BBlockTransferSrcVectorDim")?,
        b_scalar_per_vector: int("BBlockTransferSrcScalarPerVector")?,
        e_scalar_per_vector: first_int(&[
            "CDEBlockTransferScalarPerVector_NPerBlock",
            "CBlockTransferScalarPerVector_NWaveNPerXdl",
        ])?,
        groups_to_merge: if map.contains_key("NumGroupsToMerge") {
            int("NumGroupsToMerge")?
        } else {
            1
        },
        pipeline_version,
    })
}

/// A problem as CK's grouped-convolution argument sees it (MIOpen `CKArgs`): per-group
/// channels, forward tensor sizes whatever the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CkDims {
    pub g: u64,
    pub n: u64,
    /// Input channels per group (`C1 / G`).
    pub c: u64,
    /// Output channels per group (`K1 / G`).
    pub k: u64,
    pub hi: u64,
    pub wi: u64,
    pub ho: u64,
    pub wo: u64,
    pub y: u64,
    pub x: u64,
    pub stride_h: u64,
    pub stride_w: u64,
    pub pad_h: u64,
    pub pad_w: u64,
    /// Bytes per element.
    pub elem_bytes: u64,
    pub precision: Precision,
}

impl CkDims {
    /// Fails when the group count does not divide the channels.
    pub fn new(problem: &ConvProblem) -> Result<CkDims> {
        let g = problem.groups;
        if g == 0 || !problem.c.is_multiple_of(g) || !problem.k.is_multiple_of(g) {
            return Err(Error::problem(
                problem.to_perfdb_key(),
                format!(
                    "groups: group count {g} must divide both input channels C={} and output channels K={}",
                    problem.c, problem.k
                ),
            ));
        }
        Ok(CkDims {
            g,
            n: problem.n,
            c: problem.c / g,
            k: problem.k / g,
            hi: problem.in_h,
            wi: problem.in_w,
            ho: problem.out_h,
            wo: problem.out_w,
            y: problem.filter_h,
            x: problem.filter_w,
            stride_h: problem.stride_h,
            stride_w: problem.stride_w,
            pad_h: problem.pad_h,
            pad_w: problem.pad_w,
            elem_bytes: problem.precision.bytes(),
            precision: problem.precision,
        })
    }

    fn is_1x1_pad0(&self) -> bool {
        self.y == 1 && self.x == 1 && self.pad_h == 0 && self.pad_w == 0
    }

    fn is_1x1_stride1_pad0(&self) -> bool {
        self.is_1x1_pad0() && self.stride_h == 1 && self.stride_w == 1
    }
}

/// Number of K-loop iterations a blockwise GEMM pipeline must exceed (CK's `PrefetchStages`);
/// v1 has no requirement (0). v2: `blockwise_gemm_pipeline_xdlops_v2.hpp`, warpSize 64.
pub fn prefetch_stages(version: u32, p: &Params, elem_bytes: u64) -> u64 {
    match version {
        2 => {
            let lds = 32768 / (256 / p.block_size).max(1);
            // Saturating: a catalogue's sizes are outside input (a damaged file must not overflow).
            let per_k = p
                .m_per_block
                .saturating_add(p.n_per_block)
                .saturating_mul(elem_bytes)
                .saturating_mul(p.k_per_block);
            lds.div_ceil(per_k.max(1)).clamp(2, 8)
        }
        3 => 2,
        4 => 4,
        5 => 3,
        _ => 0,
    }
}

/// The convolution specialisation check (common to every operation).
fn spec_ok(spec: Specialization, d: &CkDims) -> bool {
    match spec {
        Specialization::Filter1x1Stride1Pad0 => d.is_1x1_stride1_pad0(),
        Specialization::Filter1x1Pad0 => d.is_1x1_pad0(),
        Specialization::Filter3x3 => d.c == 1 && d.y == 3 && d.x == 3,
        // OddC is not referenced by the forward transform at the pinned CK: like Default.
        Specialization::Default | Specialization::OddC => true,
    }
}

/// CK's `IsSupportedArgument` for `inst` on this problem, as MIOpen calls it to fill
/// `valid_kernels` (bwd weight: split_k 1 with a dummy workspace). Tensors are assumed to be
/// under 2 GB (CK's N-split and 2 GB descriptor checks are not modelled).
pub fn supports(inst: &Instance, d: &CkDims) -> bool {
    let p = &inst.params;
    if !spec_ok(p.spec, d) {
        return false;
    }
    match inst.kind {
        OpKind::FwdXdl | OpKind::FwdLargeTensor | OpKind::FwdXdlV3 => {
            let ngm = p.groups_to_merge;
            if ngm > 1 && !(d.c == 1 && d.g.is_multiple_of(ngm)) {
                return false;
            }
            let a_ok = if p.a_vector_dim == 2 && d.c.is_multiple_of(p.a_scalar_per_vector) {
                true
            } else {
                inst.kind != OpKind::FwdXdlV3
                    && p.a_vector_dim == 1
                    && (d.c == 1 || ngm == 1)
                    && d.g.is_multiple_of(p.a_scalar_per_vector)
            };
            let b_ok = p.b_vector_dim == 2 && d.c.is_multiple_of(p.b_scalar_per_vector);
            let e_ok = d.k.is_multiple_of(p.e_scalar_per_vector);
            if !(a_ok && b_ok && e_ok) {
                return false;
            }
            if inst.kind == OpKind::FwdXdlV3 {
                let gemm_k = match p.spec {
                    Specialization::Filter1x1Pad0 | Specialization::Filter1x1Stride1Pad0 => d.c,
                    _ => d.y.saturating_mul(d.x).saturating_mul(d.c),
                };
                let num_k_loop = gemm_k.div_ceil(p.k_per_block);
                let stages = prefetch_stages(p.pipeline_version.unwrap_or(1), p, d.elem_bytes);
                return num_k_loop > stages;
            }
            true
        }
        OpKind::BwdData => {
            if p.spec == Specialization::Filter1x1Stride1Pad0
                && !(d.k.div_ceil(p.ak1) * p.ak1).is_multiple_of(p.k_per_block)
            {
                return false;
            }
            p.a_vector_dim == 2
                && d.k.is_multiple_of(p.a_scalar_per_vector)
                && p.b_vector_dim == 1
                && d.c.is_multiple_of(p.b_scalar_per_vector)
                && d.c.is_multiple_of(p.e_scalar_per_vector)
        }
        OpKind::BwdWeight => {
            p.a_vector_dim == 2
                && p.b_vector_dim == 2
                && d.k.is_multiple_of(p.a_scalar_per_vector)
                && d.c.is_multiple_of(p.b_scalar_per_vector)
                && d.c.is_multiple_of(p.e_scalar_per_vector)
        }
        OpKind::BwdWeightTwoStage => two_stage_ok(p, d, 1, true),
    }
}

/// `DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle::IsSupportedArgument` with `k_batch`
/// (split-k) and whether a workspace pointer is set. The specialisation is checked by the caller.
fn two_stage_ok(p: &Params, d: &CkDims, k_batch: u64, has_workspace: bool) -> bool {
    let num_k_loop =
        d.n.saturating_mul(d.ho)
            .saturating_mul(d.wo)
            .div_ceil(p.k_per_block.saturating_mul(k_batch));
    if num_k_loop <= prefetch_stages(p.pipeline_version.unwrap_or(1), p, d.elem_bytes) {
        return false;
    }
    if !has_workspace {
        return false;
    }
    let ngm = p.groups_to_merge;
    if ngm > 1
        && !(d.k.saturating_mul(ngm) <= p.m_per_block
            && d.c.saturating_mul(d.y).saturating_mul(d.x).saturating_mul(ngm) <= p.n_per_block
            && d.c == 1
            && d.k == 1
            && d.g.is_multiple_of(ngm))
    {
        return false;
    }
    let vectors_fit = d.c.is_multiple_of(p.b_scalar_per_vector) && d.k.is_multiple_of(p.a_scalar_per_vector);
    if !(vectors_fit || d.k == 1 && d.c == 1) {
        return false;
    }
    // Vector loads of A and B along dimension 1 (`two_stage_xdl_cshuffle.hpp` at the pin).
    if !(p.a_vector_dim == 1 && p.b_vector_dim == 1) {
        return false;
    }
    d.c.is_multiple_of(p.e_scalar_per_vector)
}

/// MIOpen's `CKWrwRequireWorkspace` (default alpha/beta): fp16 with an odd channel count per group.
pub fn wrw_requires_workspace(d: &CkDims) -> bool {
    d.precision == Precision::Fp16 && (!d.c.is_multiple_of(2) || !d.k.is_multiple_of(2))
}

/// The split-k values MIOpen's wrw tuning walks (`NextTwoPower<1, 128>`).
pub const SPLIT_K_VALUES: [u64; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// MIOpen's `IsCKArgsSupported` for a wrw kernel id `instance+split_k`
/// (`IsSupportedBySplitK`: the workspace pointer is set only when `CKWrwRequireWorkspace`).
pub fn supports_split_k(inst: &Instance, d: &CkDims, split_k: u64) -> bool {
    match inst.kind {
        OpKind::BwdWeight => supports(inst, d),
        OpKind::BwdWeightTwoStage => {
            spec_ok(inst.params.spec, d) && two_stage_ok(&inst.params, d, split_k, wrw_requires_workspace(d))
        }
        _ => false,
    }
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
