//! MIOpen 3.5.1's composable_kernel (CK) kernel ids parsed into structured instances.
//!
//! A tuned value of MIOpen 3.5.1's CK grouped solvers (`ConvHipImplicitGemm{,3D}Group{Fwd,Bwd,Wrw}Xdlops`)
//! is the instance's `GetTypeString()` (self-describing: the device operation and its printed
//! template arguments), followed by `+split_k` for the 2-D bwd, 2-D wrw and 3-D wrw solvers
//! (MIOpen 3.5.1 `conv_hip_implicit_gemm_grouped_wrw_xdlops.cpp:226`
//! `kernel_id = valid_kernels[index] + "+" + std::to_string(split_k)`).
//!
//! Printed argument orders (CK `develop` bcf7f811, 2025-02-18, `include/ck/tensor_operation/gpu/device/impl/`):
//! * `DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle` (`device_grouped_conv_fwd_multiple_abd_xdl_cshuffle.hpp:1588`):
//!   BlockSize, MPerBlock, NPerBlock, KPerBlock, ConvSpec, MPerXDL, NPerXDL, MXdlPerWave, NXdlPerWave,
//!   ABlockTransferSrcScalarPerVector, BBlockTransferSrcScalarPerVector, CDEBlockTransferScalarPerVector_NPerBlock,
//!   CShuffleMXdlPerWavePerShuffle, CShuffleNXdlPerWavePerShuffle, NumGroupsToMerge.
//! * `..._V3` (`..._xdl_cshuffle_v3.hpp:1490`): the first 14 as above, then `BlkGemmPipelineScheduler: X`,
//!   `BlkGemmPipelineVersion: vN` (no NumGroupsToMerge).
//! * `DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor` (`..._large_tensor_cshuffle.hpp:1023`): the first 14.
//! * `DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1` (`..._bwd_data_multiple_d_xdl_cshuffle_v1.hpp:980`):
//!   BlockSize, MPerBlock, NPerBlock, KPerBlock, AK1, BK1, ConvSpec, MPerXDL, NPerXDL, MXdlPerWave,
//!   NXdlPerWave, ABlockTransferSrcScalarPerVector, BBlockTransferSrcScalarPerVector,
//!   CShuffleMXdlPerWavePerShuffle, CShuffleNXdlPerWavePerShuffle (CDE vector not printed).
//! * `DeviceGroupedConvBwdWeight_Xdl_CShuffle` (`..._bwd_weight_xdl_cshuffle.hpp:746`) and
//!   `DeviceGroupedConvBwdWeight_Xdl_CShuffleV3` (`..._bwd_weight_xdl_cshuffle_v3.hpp:1320`): BlockSize,
//!   MPerBlock, NPerBlock, K0PerBlock, ConvSpec, K1, MXdlPerWave, NXdlPerWave, ASrcScalarPerVector,
//!   ADstScalarPerVector_K1, BSrcScalarPerVector, BDstScalarPerVector_K1, CShuffleMXdlPerWavePerShuffle,
//!   CShuffleNXdlPerWavePerShuffle, CBlockTransferScalarPerVector_NWaveNPerXdl.
//! * `DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle` (`..._two_stage_xdl_cshuffle.hpp:1721`): the 15 above
//!   (3 = KPerBlock), then `BlkGemmPipelineScheduler: X`, `BlkGemmPipelineVersion: vN`, NumGroupsToMerge.
//! * `DeviceGroupedConvBwdWeight_Explicit_Xdl<{gemm}>` (not in the reachable CK; CK
//!   `device_grouped_conv_bwd_weight_explicit_xdl.hpp` `GetTypeString`, found by the search index):
//!   the batched GEMM's own type string, `DeviceBatchedGemmXdlUniversal<{GemmSpec}, {ABC layouts}>
//!   BlkSize: B, BlkTile: MxNxK, WaveTile: MxN, WaveMap: MxN, VmemReadVec: AxB,
//!   BlkGemmPipelineScheduler: X, BlkGemmPipelineVersion: vN, BlkGemmPipelinePrefetchStages: P`.

use crate::error::{Error, Result};

/// The CK device operations MIOpen 3.5.1's grouped solvers tune.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceOp {
    FwdXdl,
    FwdXdlV3,
    FwdLargeTensor,
    BwdDataV1,
    WrwXdl,
    WrwXdlV3,
    WrwTwoStage,
    WrwExplicit,
}

impl DeviceOp {
    pub const ALL: [DeviceOp; 8] = [
        DeviceOp::FwdXdl,
        DeviceOp::FwdXdlV3,
        DeviceOp::FwdLargeTensor,
        DeviceOp::BwdDataV1,
        DeviceOp::WrwXdl,
        DeviceOp::WrwXdlV3,
        DeviceOp::WrwTwoStage,
        DeviceOp::WrwExplicit,
    ];

    /// CK's class name, as the type string starts.
    pub fn name(self) -> &'static str {
        match self {
            DeviceOp::FwdXdl => "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle",
            DeviceOp::FwdXdlV3 => "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3",
            DeviceOp::FwdLargeTensor => "DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor",
            DeviceOp::BwdDataV1 => "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1",
            DeviceOp::WrwXdl => "DeviceGroupedConvBwdWeight_Xdl_CShuffle",
            DeviceOp::WrwXdlV3 => "DeviceGroupedConvBwdWeight_Xdl_CShuffleV3",
            DeviceOp::WrwTwoStage => "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle",
            DeviceOp::WrwExplicit => "DeviceGroupedConvBwdWeight_Explicit_Xdl",
        }
    }

    pub fn from_name(name: &str) -> Option<DeviceOp> {
        DeviceOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The convolution direction the operation computes.
    pub fn direction(self) -> crate::problem::Direction {
        use crate::problem::Direction;
        match self {
            DeviceOp::FwdXdl | DeviceOp::FwdXdlV3 | DeviceOp::FwdLargeTensor => Direction::Forward,
            DeviceOp::BwdDataV1 => Direction::BackwardData,
            _ => Direction::BackwardWeights,
        }
    }
}

impl std::fmt::Display for DeviceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// CK's convolution specialisation (`ConvolutionForwardSpecialization`,
/// `ConvolutionBackwardDataSpecialization`, `ConvolutionBackwardWeightSpecialization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConvSpec {
    Default,
    OddC,
    Filter1x1Pad0,
    Filter1x1Stride1Pad0,
    Filter3x3,
}

impl ConvSpec {
    pub fn parse(s: &str) -> Option<ConvSpec> {
        Some(match s {
            "Default" => ConvSpec::Default,
            "OddC" => ConvSpec::OddC,
            "Filter1x1Pad0" => ConvSpec::Filter1x1Pad0,
            "Filter1x1Stride1Pad0" => ConvSpec::Filter1x1Stride1Pad0,
            "Filter3x3" => ConvSpec::Filter3x3,
            _ => return None,
        })
    }
}

/// `GemmSpecialization` of the explicit GEMM (`DeviceBatchedGemmXdlUniversal<{spec}, ...>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmSpec {
    Default,
    MnkPadding,
}

/// The template arguments an instance prints (fields an operation does not print are `None`,
/// except those with CK's own default, noted per field).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Printed {
    pub block_size: u64,
    pub m_per_block: u64,
    pub n_per_block: u64,
    /// `KPerBlock` (`K0PerBlock` for the wrw Xdl_CShuffle ops, as printed).
    pub k_per_block: u64,
    /// The convolution specialisation; `Filter1x1Stride1Pad0` for `Explicit_Xdl`, which only
    /// runs that case (its `IsSupportedArgument`).
    pub spec: ConvSpec,
    pub m_per_xdl: Option<u64>,
    pub n_per_xdl: Option<u64>,
    pub m_xdl_per_wave: Option<u64>,
    pub n_xdl_per_wave: Option<u64>,
    /// `AK1` (bwd data) or `K1` (wrw).
    pub ak1: Option<u64>,
    /// `BK1` (bwd data).
    pub bk1: Option<u64>,
    /// `ABlockTransferSrcScalarPerVector` (explicit GEMM: the first `VmemReadVec`).
    pub a_vec: u64,
    /// `BBlockTransferSrcScalarPerVector` (explicit GEMM: the second `VmemReadVec`).
    pub b_vec: u64,
    /// The output (C/CDE) store vector, when printed.
    pub e_vec: Option<u64>,
    pub a_dst_k1: Option<u64>,
    pub b_dst_k1: Option<u64>,
    pub cshuffle_m: Option<u64>,
    pub cshuffle_n: Option<u64>,
    /// `NumGroupsToMerge` (1 where the operation has none).
    pub groups_to_merge: u64,
    /// `BlkGemmPipelineScheduler` (`Intrawave`/`Interwave`).
    pub scheduler: Option<String>,
    /// `BlkGemmPipelineVersion` 1..5.
    pub pipeline: Option<u32>,
    /// `BlkGemmPipelinePrefetchStages` (explicit GEMM only).
    pub prefetch_stages: Option<u64>,
    /// Explicit GEMM only.
    pub gemm_spec: Option<GemmSpec>,
    /// Explicit GEMM only: the A, B, C layouts (`CRR`: A column-major, B and C row-major).
    pub gemm_layouts: Option<String>,
}

/// One CK instance, as its type string describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CkInstance {
    /// `GetTypeString()` exactly (MIOpen's kernel id without `+split_k`).
    pub type_string: String,
    pub op: DeviceOp,
    pub printed: Printed,
}

/// A parsed kernel id: the instance and the split-k suffix, if any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelId {
    pub instance: CkInstance,
    pub split_k: Option<u64>,
}

fn bad(id: &str, detail: impl Into<String>) -> Error {
    Error::format(
        format!("CK kernel id '{}'", crate::error::quote_short(id)),
        detail.into(),
    )
}

/// Parses a tuned value `TypeString` or `TypeString+split_k`.
pub fn parse_kernel_id(id: &str) -> Result<KernelId> {
    let text = id.trim();
    let (type_string, split_k) = match text.rsplit_once('+') {
        Some((head, tail)) if head.ends_with('>') => {
            let sk: u64 = tail
                .parse()
                .map_err(|_| bad(id, format!("split-k suffix '+{tail}' is not an integer")))?;
            if sk == 0 {
                return Err(bad(id, "split-k suffix '+0' (must be at least 1)"));
            }
            (head, Some(sk))
        }
        _ => (text, None),
    };
    Ok(KernelId {
        instance: parse_type_string(type_string).map_err(|e| match e {
            Error::Format { detail, .. } => bad(id, detail),
            other => other,
        })?,
        split_k,
    })
}

/// Parses an instance's type string (no `+split_k`).
pub fn parse_type_string(ts: &str) -> Result<CkInstance> {
    let open = ts
        .find('<')
        .ok_or_else(|| bad(ts, "no '<' after the device operation's name"))?;
    if !ts.ends_with('>') {
        return Err(bad(ts, "does not end with '>'"));
    }
    let name = &ts[..open];
    let op = DeviceOp::from_name(name).ok_or_else(|| {
        bad(
            ts,
            format!(
                "unknown CK device operation '{}' (known: {})",
                crate::error::quote_short(name),
                DeviceOp::ALL.map(DeviceOp::name).join(", ")
            ),
        )
    })?;
    let inner = &ts[open + 1..ts.len() - 1];
    let printed = if op == DeviceOp::WrwExplicit {
        parse_explicit(inner).map_err(|d| bad(ts, d))?
    } else {
        let tokens: Vec<&str> = inner.split(',').map(str::trim).collect();
        parse_tokens(op, &tokens).map_err(|d| bad(ts, d))?
    };
    Ok(CkInstance {
        type_string: ts.to_string(),
        op,
        printed,
    })
}

fn positive(tok: &str, what: &str) -> std::result::Result<u64, String> {
    tok.parse::<u64>()
        .ok()
        .filter(|&v| v > 0 && v <= 1 << 20)
        .ok_or_else(|| format!("{what} '{tok}' is not a positive integer"))
}

fn spec(tok: &str) -> std::result::Result<ConvSpec, String> {
    ConvSpec::parse(tok).ok_or_else(|| format!("unknown convolution specialisation '{tok}'"))
}

/// `Name: value` of the V3 / TwoStage / explicit GEMM tails.
fn labelled<'a>(tok: &'a str, label: &str) -> std::result::Result<&'a str, String> {
    tok.strip_prefix(label)
        .and_then(|r| r.strip_prefix(':'))
        .map(str::trim)
        .ok_or_else(|| format!("expected '{label}: ...', got '{tok}'"))
}

fn scheduler(tok: &str) -> std::result::Result<String, String> {
    let v = labelled(tok, "BlkGemmPipelineScheduler")?;
    match v {
        "Intrawave" | "Interwave" => Ok(v.to_string()),
        _ => Err(format!("unknown pipeline scheduler '{v}'")),
    }
}

fn version(tok: &str) -> std::result::Result<u32, String> {
    let v = labelled(tok, "BlkGemmPipelineVersion")?;
    v.strip_prefix('v')
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| (1..=5).contains(n))
        .ok_or_else(|| format!("pipeline version '{v}' is not v1..v5"))
}

fn empty(op: DeviceOp, t: &[&str]) -> std::result::Result<Printed, String> {
    let _ = op;
    Ok(Printed {
        block_size: positive(t[0], "BlockSize")?,
        m_per_block: positive(t[1], "MPerBlock")?,
        n_per_block: positive(t[2], "NPerBlock")?,
        k_per_block: positive(t[3], "KPerBlock")?,
        spec: ConvSpec::Default,
        m_per_xdl: None,
        n_per_xdl: None,
        m_xdl_per_wave: None,
        n_xdl_per_wave: None,
        ak1: None,
        bk1: None,
        a_vec: 1,
        b_vec: 1,
        e_vec: None,
        a_dst_k1: None,
        b_dst_k1: None,
        cshuffle_m: None,
        cshuffle_n: None,
        groups_to_merge: 1,
        scheduler: None,
        pipeline: None,
        prefetch_stages: None,
        gemm_spec: None,
        gemm_layouts: None,
    })
}

fn parse_tokens(op: DeviceOp, t: &[&str]) -> std::result::Result<Printed, String> {
    // MIOpen's develop of 2024-12 (gfx90a68.db.txt.bz2) ran a CK that printed the fwd op
    // without NumGroupsToMerge (14 arguments, as at CK 421588131's `:1584`): that is 1.
    let want = match op {
        DeviceOp::FwdXdl if t.len() == 14 => 14,
        DeviceOp::FwdXdl => 15,
        DeviceOp::FwdXdlV3 => 16,
        DeviceOp::FwdLargeTensor => 14,
        DeviceOp::BwdDataV1 | DeviceOp::WrwXdl | DeviceOp::WrwXdlV3 => 15,
        DeviceOp::WrwTwoStage => 18,
        DeviceOp::WrwExplicit => 0,
    };
    if t.len() != want {
        return Err(format!(
            "{} prints {want} template arguments, the id has {}",
            op.name(),
            t.len()
        ));
    }
    let mut p = empty(op, t)?;
    let n = |i: usize, what: &str| positive(t[i], what);
    match op {
        DeviceOp::FwdXdl | DeviceOp::FwdXdlV3 | DeviceOp::FwdLargeTensor => {
            p.spec = spec(t[4])?;
            p.m_per_xdl = Some(n(5, "MPerXDL")?);
            p.n_per_xdl = Some(n(6, "NPerXDL")?);
            p.m_xdl_per_wave = Some(n(7, "MXdlPerWave")?);
            p.n_xdl_per_wave = Some(n(8, "NXdlPerWave")?);
            p.a_vec = n(9, "ABlockTransferSrcScalarPerVector")?;
            p.b_vec = n(10, "BBlockTransferSrcScalarPerVector")?;
            p.e_vec = Some(n(11, "CDEBlockTransferScalarPerVector_NPerBlock")?);
            p.cshuffle_m = Some(n(12, "CShuffleMXdlPerWavePerShuffle")?);
            p.cshuffle_n = Some(n(13, "CShuffleNXdlPerWavePerShuffle")?);
            match op {
                DeviceOp::FwdXdl if t.len() == 15 => p.groups_to_merge = n(14, "NumGroupsToMerge")?,
                DeviceOp::FwdXdlV3 => {
                    p.scheduler = Some(scheduler(t[14])?);
                    p.pipeline = Some(version(t[15])?);
                }
                _ => {}
            }
        }
        DeviceOp::BwdDataV1 => {
            p.ak1 = Some(n(4, "AK1")?);
            p.bk1 = Some(n(5, "BK1")?);
            p.spec = spec(t[6])?;
            p.m_per_xdl = Some(n(7, "MPerXDL")?);
            p.n_per_xdl = Some(n(8, "NPerXDL")?);
            p.m_xdl_per_wave = Some(n(9, "MXdlPerWave")?);
            p.n_xdl_per_wave = Some(n(10, "NXdlPerWave")?);
            p.a_vec = n(11, "ABlockTransferSrcScalarPerVector")?;
            p.b_vec = n(12, "BBlockTransferSrcScalarPerVector")?;
            p.cshuffle_m = Some(n(13, "CShuffleMXdlPerWavePerShuffle")?);
            p.cshuffle_n = Some(n(14, "CShuffleNXdlPerWavePerShuffle")?);
        }
        DeviceOp::WrwXdl | DeviceOp::WrwXdlV3 | DeviceOp::WrwTwoStage => {
            p.spec = spec(t[4])?;
            p.ak1 = Some(n(5, "K1")?);
            p.m_xdl_per_wave = Some(n(6, "MXdlPerWave")?);
            p.n_xdl_per_wave = Some(n(7, "NXdlPerWave")?);
            p.a_vec = n(8, "ABlockTransferSrcScalarPerVector")?;
            p.a_dst_k1 = Some(n(9, "ABlockTransferDstScalarPerVector_K1")?);
            p.b_vec = n(10, "BBlockTransferSrcScalarPerVector")?;
            p.b_dst_k1 = Some(n(11, "BBlockTransferDstScalarPerVector_K1")?);
            p.cshuffle_m = Some(n(12, "CShuffleMXdlPerWavePerShuffle")?);
            p.cshuffle_n = Some(n(13, "CShuffleNXdlPerWavePerShuffle")?);
            p.e_vec = Some(n(14, "CBlockTransferScalarPerVector_NWaveNPerXdl")?);
            if op == DeviceOp::WrwTwoStage {
                p.scheduler = Some(scheduler(t[15])?);
                p.pipeline = Some(version(t[16])?);
                p.groups_to_merge = n(17, "NumGroupsToMerge")?;
            }
        }
        DeviceOp::WrwExplicit => return Err("internal: explicit GEMM ids are parsed apart".into()),
    }
    Ok(p)
}

/// `AxB` (or `AxBxC`) of positive integers.
fn dims(text: &str, n: usize, what: &str) -> std::result::Result<Vec<u64>, String> {
    let parts: Vec<&str> = text.split('x').collect();
    if parts.len() != n {
        return Err(format!("{what} '{text}' is not {n} sizes joined by 'x'"));
    }
    parts.iter().map(|p| positive(p, what)).collect()
}

/// The inside of `DeviceGroupedConvBwdWeight_Explicit_Xdl<...>`.
fn parse_explicit(inner: &str) -> std::result::Result<Printed, String> {
    const GEMM: &str = "DeviceBatchedGemmXdlUniversal<";
    let rest = inner
        .strip_prefix(GEMM)
        .ok_or_else(|| format!("the explicit GEMM is not '{GEMM}...>'"))?;
    let close = rest.find('>').ok_or("the GEMM's '<' has no '>'")?;
    let head: Vec<&str> = rest[..close].split(',').map(str::trim).collect();
    let [gemm_spec, layouts] = head.as_slice() else {
        return Err(format!(
            "the GEMM's '<...>' should hold a GemmSpecialization and the layouts, got '{}'",
            &rest[..close]
        ));
    };
    let gemm_spec = match *gemm_spec {
        "Default" => GemmSpec::Default,
        "MNKPadding" => GemmSpec::MnkPadding,
        other => {
            return Err(format!(
                "unsupported GemmSpecialization '{other}' (Default, MNKPadding)"
            ))
        }
    };
    if layouts.len() != 3 || !layouts.chars().all(|c| c == 'C' || c == 'R') {
        return Err(format!("GEMM layouts '{layouts}' are not three of C/R"));
    }
    let fields: Vec<&str> = rest[close + 1..].split(',').map(str::trim).collect();
    let labels = [
        "BlkSize",
        "BlkTile",
        "WaveTile",
        "WaveMap",
        "VmemReadVec",
        "BlkGemmPipelineScheduler",
        "BlkGemmPipelineVersion",
        "BlkGemmPipelinePrefetchStages",
    ];
    if fields.len() != labels.len() {
        return Err(format!(
            "the explicit GEMM prints {} fields ({}), the id has {}",
            labels.len(),
            labels.join(", "),
            fields.len()
        ));
    }
    let block_size = positive(labelled(fields[0], labels[0])?, "BlkSize")?;
    let tile = dims(labelled(fields[1], labels[1])?, 3, "BlkTile")?;
    let wave_tile = dims(labelled(fields[2], labels[2])?, 2, "WaveTile")?;
    let wave_map = dims(labelled(fields[3], labels[3])?, 2, "WaveMap")?;
    let vec = dims(labelled(fields[4], labels[4])?, 2, "VmemReadVec")?;
    let mut p = empty(
        DeviceOp::WrwExplicit,
        &[
            &block_size.to_string(),
            &tile[0].to_string(),
            &tile[1].to_string(),
            &tile[2].to_string(),
        ],
    )?;
    p.spec = ConvSpec::Filter1x1Stride1Pad0;
    p.m_per_xdl = Some(wave_tile[0]);
    p.n_per_xdl = Some(wave_tile[1]);
    p.m_xdl_per_wave = Some(wave_map[0]);
    p.n_xdl_per_wave = Some(wave_map[1]);
    p.a_vec = vec[0];
    p.b_vec = vec[1];
    p.scheduler = Some(scheduler(fields[5])?);
    p.pipeline = Some(version(fields[6])?);
    p.prefetch_stages = Some(
        labelled(fields[7], labels[7])?
            .parse::<u64>()
            .map_err(|_| format!("BlkGemmPipelinePrefetchStages '{}' is not an integer", fields[7]))?,
    );
    p.gemm_spec = Some(gemm_spec);
    p.gemm_layouts = Some(layouts.to_string());
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_form() {
        // Values from gfx942130.db.txt.bz2 rows.
        let id = parse_kernel_id("DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 64, 128, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 1, 2, 8, 8, 1, 1>+2").unwrap();
        assert_eq!(id.split_k, Some(2));
        assert_eq!(id.instance.op, DeviceOp::BwdDataV1);
        assert_eq!(id.instance.printed.spec, ConvSpec::Filter1x1Stride1Pad0);
        assert_eq!((id.instance.printed.a_vec, id.instance.printed.b_vec), (8, 8));
        let e = parse_kernel_id("DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<Default, CRR> BlkSize: 128, BlkTile: 128x16x64, WaveTile: 16x16, WaveMap: 4x1, VmemReadVec: 8x2, BlkGemmPipelineScheduler: Interwave, BlkGemmPipelineVersion: v2, BlkGemmPipelinePrefetchStages: 2>+16").unwrap();
        let p = &e.instance.printed;
        assert_eq!((p.m_per_block, p.n_per_block, p.k_per_block), (128, 16, 64));
        assert_eq!(
            (p.a_vec, p.b_vec, p.pipeline, p.prefetch_stages),
            (8, 2, Some(2), Some(2))
        );
        assert_eq!(e.split_k, Some(16));
        let v3 = parse_kernel_id("DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3<128, 128, 16, 64, Default, 16, 16, 4, 1, 8, 8, 2, 1, 1, BlkGemmPipelineScheduler: Interwave, BlkGemmPipelineVersion: v2>").unwrap();
        assert_eq!(v3.split_k, None);
        assert_eq!(v3.instance.printed.e_vec, Some(2));
    }

    #[test]
    fn rejects_bad_ids() {
        for bad in [
            "",
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<1, 2>",
            "NoSuchOp<1>",
            "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 64, 128, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 1, 2, 8, 8, 1, 1>+x",
            "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle<128, 128, 128, 16, Sideways, 32, 32, 4, 2, 4, 4, 4, 1, 1, 1>",
        ] {
            assert!(parse_kernel_id(bad).is_err(), "{bad}");
        }
    }
}
