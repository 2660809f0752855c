//! The kernel ids a given MIOpen reads (issue 47): the form of a CK solver's perf-db value and
//! the instances its composable_kernel has, per MIOpen version.
//!
//! - MIOpen 3.3 (`ROCm/MIOpen` 2d1fd997a, late 2024; the instance lists of `data/*.tsv`): the
//!   value of the forward and backward-data solvers is the instance's type string, whole
//!   (`implicitgemm_ck_util.hpp:100-106`, `FindConvPtrByID`, and `:150-151`: any other text is
//!   no instance); the backward-weights value is `TYPE+split_k` (`:138-147`, the last `+`).
//! - MIOpen 3.5 (3.5.1, `stulebaevLuxoft/MIOpen` 8c96f1c5d): backward data carries `+split_k`
//!   too (`conv_hip_implicit_gemm_grouped_bwd_xdlops.cpp:226`), and its CK has the instances of
//!   [`super::index`] (the 2024 lists and more).
//! - Other versions (3.4, or none known): only an id both forms write alike, of an instance
//!   both have, is written.
//!
//! The 3-D solvers' instance lists of MIOpen 3.3 are not at hand: for it they write nothing.

use super::catalogue;
use super::rules::{CkSolver, CkType, CkVersion};
use crate::problem::Precision;
pub use crate::solvers::MiopenVersion;

impl CkVersion {
    /// The CK side of a MIOpen version: 3.3 and older read [`CkVersion::Miopen2024`]'s ids, 3.5
    /// and newer [`CkVersion::Miopen351`]'s; None for 3.4 (neither is at hand).
    pub fn of(version: MiopenVersion) -> Option<CkVersion> {
        match (version.major, version.minor) {
            v if v <= (3, 3) => Some(CkVersion::Miopen2024),
            v if v >= (3, 5) => Some(CkVersion::Miopen351),
            _ => None,
        }
    }
}

/// A kernel id split into its type string and split-k (`TYPE+4` -> (TYPE, Some(4))).
fn split_id(id: &str) -> (&str, Option<u64>) {
    let id = id.trim();
    match id.rsplit_once('+') {
        Some((head, tail)) if head.ends_with('>') => match tail.parse::<u64>() {
            Ok(sk) => (head, Some(sk)),
            Err(_) => (id, None),
        },
        _ => (id, None),
    }
}

/// `id` (either form) in MIOpen 3.5.1's form: `+1` added where 3.5.1 writes a split-k and the
/// id has none (MIOpen 3.3's backward-data ids, MIOpen's 2024 KTN answers).
pub fn to_351_form(solver: CkSolver, id: &str) -> String {
    let (head, split) = split_id(id);
    match (solver.has_split_k(), split) {
        (true, None) => format!("{head}+1"),
        (true, Some(s)) => format!("{head}+{s}"),
        (false, _) => id.trim().to_string(),
    }
}

/// Is `type_string` an instance of MIOpen 3.3's list of (solver, type)?
fn in_2024_list(solver: CkSolver, dtype: CkType, type_string: &str) -> Result<bool, String> {
    let precision = match dtype {
        CkType::F32 => Precision::Fp32,
        CkType::F16 => Precision::Fp16,
        other => return Err(format!("no {} instance list of MIOpen 3.3 is at hand", other.name())),
    };
    if solver.spatial_dims() != 2 {
        return Err("no instance list of MIOpen 3.3's 3-D CK solvers is at hand".into());
    }
    let list = catalogue::load_cached(None, solver.direction(), precision).map_err(|e| e.to_string())?;
    Ok(list.instances.iter().any(|i| i.type_string == type_string))
}

/// `id` (a kernel id of either form, valid for MIOpen 3.5.1 as checked elsewhere) as the MIOpen
/// of `version` reads it (None: a version neither form is known for, which gets only an id both
/// forms write alike), or why that MIOpen would not accept it.
pub fn written_form(solver: CkSolver, dtype: CkType, id: &str, version: Option<CkVersion>) -> Result<String, String> {
    let (head, split) = split_id(id);
    let split = split.unwrap_or(1);
    let as_2024 = || -> Result<String, String> {
        if !in_2024_list(solver, dtype, head)? {
            return Err("an instance MIOpen 3.3's composable_kernel does not have".into());
        }
        match solver.direction() {
            crate::problem::Direction::BackwardWeights => Ok(format!("{head}+{split}")),
            _ if split == 1 => Ok(head.to_string()),
            _ => Err(format!(
                "split-k {split}, which MIOpen 3.3 does not run for this solver"
            )),
        }
    };
    match version {
        Some(CkVersion::Miopen2024) => as_2024(),
        Some(_) => Ok(to_351_form(solver, id)),
        None => {
            let old = as_2024()?;
            if old == to_351_form(solver, id) {
                Ok(old)
            } else {
                Err("MIOpen 3.3 and 3.5 write this kernel id differently, and the version is not known".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_suffixes_and_choose_the_form() {
        let v = |t: &str| MiopenVersion::parse(t);
        assert_eq!(
            v("HIP.3_3_0_2d1fd997a").map(|v| v.to_string()).as_deref(),
            Some("3.3.0")
        );
        assert_eq!(
            v("HIP.3_2_0_36bb7fd4a-dirty").map(|v| v.to_string()).as_deref(),
            Some("3.2.0")
        );
        assert_eq!(v("3.5.1").map(|v| v.to_string()).as_deref(), Some("3.5.1"));
        assert_eq!(v("HIP"), None);
        let ck = |t: &str| v(t).and_then(CkVersion::of);
        assert_eq!(ck("HIP.3_3_0_2d1fd997a"), Some(CkVersion::Miopen2024));
        assert_eq!(ck("HIP.3_5_1_abc"), Some(CkVersion::Miopen351));
        assert_eq!(ck("HIP.3_4_0_abc"), None);
    }

    #[test]
    fn split_k_comes_and_goes_as_each_version_writes_it() {
        // The example: a 3.5.1-form backward-data id, and MIOpen 3.3's bwd_f16 list
        // entry of that type string.
        let ts = "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle_v1<256, 128, 64, 32, 8, 8, Filter1x1Stride1Pad0, 32, 32, 2, 1, 8, 8, 1, 1>";
        let bwd = CkSolver::Bwd2d;
        assert_eq!(to_351_form(bwd, ts), format!("{ts}+1"));
        assert_eq!(to_351_form(bwd, &format!("{ts}+1")), format!("{ts}+1"));
        // (The type string is on the bwd_f16 list of the composable_kernel MIOpen 3.3 pins.)
        assert!(in_2024_list(bwd, CkType::F16, ts).unwrap());
        let old = written_form(bwd, CkType::F16, &format!("{ts}+1"), Some(CkVersion::Miopen2024));
        assert_eq!(old.as_deref(), Ok(ts));
        // An instance only MIOpen 3.5.1's CK has is not in MIOpen 3.3.
        let new_only = super::super::index::BUILTIN_TUNED_ONLY
            .lines()
            .find(|l| l.starts_with("ConvHipImplicitGemmGroupBwdXdlops\tFP16\t"))
            .and_then(|l| l.split('\t').nth(2))
            .expect("3.5.1 has bwd FP16 instances of its own");
        assert!(written_form(bwd, CkType::F16, &format!("{new_only}+1"), Some(CkVersion::Miopen2024)).is_err());
        assert!(written_form(bwd, CkType::F16, &format!("{ts}+4"), Some(CkVersion::Miopen2024)).is_err());
        assert!(written_form(bwd, CkType::F16, &format!("{ts}+1"), None).is_err());
        assert_eq!(
            written_form(bwd, CkType::F16, ts, Some(CkVersion::Miopen351)).as_deref(),
            Ok(format!("{ts}+1").as_str())
        );
        // No 3-D list of MIOpen 3.3: nothing for it.
        assert!(written_form(CkSolver::Fwd3d, CkType::F16, "X<1>", Some(CkVersion::Miopen2024)).is_err());
    }
}
