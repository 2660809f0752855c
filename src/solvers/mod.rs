//! Solvers: one file (or folder) per MIOpen kernel family, the one place that knows about it.
//! Each turns a problem into model features, states its parameter rules (as a [`Constraint`])
//! and its static default. Solvers with integer parameters that tuneinfer trains its own models
//! for also implement [`Tunable`]: the params string, applicability, the rules over integer
//! values ([`IntRules`]), the default and the features of tuneinfer's model; the dataset,
//! training, `eval` and the search's [`IntConstraint`] all go through it.
//!
//! Adding a solver: one file here, its WGSL rules library in `shaders/` (optional: without one
//! the GPU runs the model and the host runs the search), one line in [`all`].

pub mod ck;
pub mod conv_asm_1x1u;
pub mod conv_asm_3x3u;
pub mod conv_asm_bwd_wrw_1x1;
pub mod conv_asm_bwd_wrw_3x3;
pub mod conv_bin_winograd_rxs;
pub mod conv_ocl_bwd_wrw2;
pub mod conv_ocl_direct_fwd;
pub mod conv_ocl_direct_fwd1x1;
pub mod gtc_nhwc;
pub mod hip_igemm;
pub mod hip_xdlops;
pub mod mlir_igemm;
pub mod tunable;
pub mod version;

pub use version::MiopenVersion;

pub use tunable::{
    gpu_features, IntConstraint, IntRules, OwnModelsOnly, Tunable, GPU_FAMILIES, GPU_FEATURE_NAMES, NUM_FEATURES,
    NUM_GPU_FEATURES,
};

use crate::error::{Error, Result};
use crate::format::metadata::KtnMetadata;
use crate::problem::ConvProblem;
use crate::search::{Constraint, Vocabulary};

/// The GPU a prediction is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Architecture name, e.g. `gfx908`.
    pub arch: String,
    /// Compute units, for solvers whose features use them (None: the solver's default).
    pub compute_units: Option<u32>,
    /// Where catalogue solvers read their kernel-instance lists (None: `$TUNEINFER_CK`, else
    /// the lists built into tuneinfer).
    pub catalogue_dir: Option<std::path::PathBuf>,
    /// XNACK on (a db id with `_xnack`, `gfx942_xnacke4`; a raw device name with `xnack+`):
    /// MIOpen's assembly solvers do not run then ([`refuse_xnack`]).
    pub xnack: bool,
}

/// MIOpen's solvers that refuse a target with XNACK on (`if(target.Xnack() && *target.Xnack())
/// return false;` in their `IsApplicable`, the same lines in `ROCm/MIOpen` 2d1fd997a and in MIOpen
/// 3.5.1), with the line of 2d1fd997a that says so.
pub const XNACK_REFUSED: [(&str, &str); 9] = [
    ("ConvAsm1x1U", "src/solver/conv/conv_asm_1x1u.cpp:549"),
    ("ConvAsm3x3U", "src/solver/conv/conv_asm_3x3u.cpp:196"),
    ("ConvAsmBwdWrW1x1", "src/solver/conv/conv_asm_dir_BwdWrW1x1.cpp:500"),
    ("ConvAsmBwdWrW3x3", "src/solver/conv/conv_asm_dir_BwdWrW3x3.cpp:414"),
    ("ConvBinWinogradRxSf2x3", "src/solver/conv/conv_winoRxS.cpp:675"),
    ("ConvBinWinogradRxSf3x2", "src/solver/conv/conv_winoRxS.cpp:675"),
    (
        "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
        "src/solver/conv/conv_asm_implicit_gemm_gtc_fwd_nhwc.cpp:916",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
        "src/solver/conv/conv_asm_implicit_gemm_gtc_bwd_nhwc.cpp:973",
    ),
    (
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
        "src/solver/conv/conv_asm_implicit_gemm_gtc_wrw_nhwc.cpp:922",
    ),
];

/// Not applicable when `target` has XNACK on and MIOpen's `solver` refuses such a target
/// ([`XNACK_REFUSED`]): MIOpen would never read a user-db entry of it there.
pub fn refuse_xnack(target: &Target, solver: &str) -> Result<()> {
    match XNACK_REFUSED.iter().find(|(name, _)| *name == solver) {
        Some((name, line)) if target.xnack => Err(Error::NotApplicable {
            solver: (*name).to_string(),
            reason: format!(
                "MIOpen does not run {name} on a GPU with XNACK on (its IsApplicable, {line}); \
                 the GPU name says xnack+"
            ),
        }),
        _ => Ok(()),
    }
}

/// The architectures whose MIOpen database names (`{arch}_{CU}`, or `{arch}{CU in hex}` above
/// 64 CUs) [`split_db_name`] recognises.
pub const KNOWN_ARCHES: [&str; 12] = [
    "gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx1030", "gfx1100", "gfx1101",
    "gfx1102",
];

/// The feature parts MIOpen's db id may carry after the arch (`src/target_properties.cpp`,
/// `InitDbId`: `_nosramecc` for gfx906/gfx908 with sramecc off, `_sramecc` for other arches
/// with it on, then `_xnack` with xnack on), longest first.
pub const DB_ID_FEATURES: [&str; 5] = ["_nosramecc_xnack", "_sramecc_xnack", "_nosramecc", "_sramecc", "_xnack"];

/// The feature part at the start of what follows the arch in a database name (`_xnack` of
/// `_xnacke4`), or "".
pub fn db_name_features(rest: &str) -> &str {
    DB_ID_FEATURES
        .iter()
        .find(|f| rest.len() >= f.len() && rest[..f.len()].eq_ignore_ascii_case(f))
        .map_or("", |f| &rest[..f.len()])
}

/// Splits a MIOpen database name into (arch, db-id features, compute units): `gfx906_60` ->
/// (gfx906, "", 60); above 64 CUs MIOpen writes the count in hex with no underscore:
/// `gfx90a68` -> (gfx90a, "", 104), `gfx942130` -> (gfx942, "", 304); with xnack on the db id
/// is `{arch}_xnack` (`gfx942_xnacke4` -> (gfx942, "_xnack", 228), `gfx90a_xnack6e` -> (gfx90a,
/// "_xnack", 110), `gfx942_xnack` -> (gfx942, "_xnack", None)). A plain arch (`gfx906`) or
/// anything else: (name, "", None).
pub fn split_db_name_features(name: &str) -> (&str, &str, Option<u32>) {
    let lower = name.to_ascii_lowercase();
    for arch in KNOWN_ARCHES {
        let Some(after_arch) = lower.strip_prefix(arch) else {
            continue;
        };
        let n = arch.len();
        let features = db_name_features(after_arch);
        let rest = &after_arch[features.len()..];
        let m = n + features.len();
        if rest.is_empty() && !features.is_empty() {
            return (&name[..n], &name[n..m], None);
        }
        if let Some(dec) = rest.strip_prefix('_') {
            if let Ok(cu) = dec.parse::<u32>() {
                if (1..=64).contains(&cu) && !dec.starts_with('+') {
                    return (&name[..n], &name[n..m], Some(cu));
                }
            }
        } else if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_hexdigit()) {
            if let Ok(cu) = u32::from_str_radix(rest, 16) {
                if cu > 64 {
                    return (&name[..n], &name[n..m], Some(cu));
                }
            }
        }
    }
    (name, "", None)
}

/// Splits a MIOpen database name into (arch, compute units) ([`split_db_name_features`]
/// without the features: the plain arch's models serve an xnack db id too).
pub fn split_db_name(name: &str) -> (&str, Option<u32>) {
    let (arch, _, cu) = split_db_name_features(name);
    (arch, cu)
}

/// MIOpen's database basename of a GPU: `gfx906_60`; above 64 compute units the count in hex
/// with no underscore (`gfx90a68`, `gfx942130`). `db_id` is the arch as MIOpen's
/// `TargetProperties::DbId` gives it (`gfx906`, or with xnack on `gfx942_xnack`); the inverse of
/// [`split_db_name_features`].
pub fn db_basename(db_id: &str, compute_units: u32) -> String {
    if compute_units <= 64 {
        format!("{db_id}_{compute_units}")
    } else {
        format!("{db_id}{compute_units:x}")
    }
}

impl Target {
    /// The target of an arch or of a MIOpen database name (`gfx906_64`: arch gfx906 with 64
    /// compute units; see [`split_db_name`]).
    pub fn new(arch: &str) -> Target {
        // A raw device name's features (`gfx90a:sramecc+:xnack-`): xnack+ turns XNACK on
        // (sramecc changes no rule).
        let mut parts = arch.split(':');
        let name = parts.next().unwrap_or(arch);
        let raw_xnack = parts.any(|f| f.eq_ignore_ascii_case("xnack+"));
        let (arch, features, compute_units) = split_db_name_features(name);
        Target {
            arch: arch.to_string(),
            compute_units,
            catalogue_dir: None,
            xnack: raw_xnack || features.to_ascii_lowercase().ends_with("_xnack"),
        }
    }
}

/// The per-problem words a solver's WGSL rules library reads ([`Solver::wgsl_rule_words`]);
/// the variant is the solver's declaration of how they reach the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleWords {
    /// Eight words, passed as the library's `rule` argument itself.
    Fixed([i32; 8]),
    /// Words of the solver's own length and layout: the GPU appends them to the rules buffer
    /// after every problem's 8 rule words (with any other tables) and passes
    /// `[offset, length, 0, 0, 0, 0, 0, 0]` as the problem's rule words; the library reads
    /// them as `rules[u32(rule[0]) + i]` (the kernels' module-scope `rules` binding).
    Table(Vec<i32>),
}

/// The GPU form of a solver's constraint: what keeps its search in GPU buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuSearch {
    /// The GPU runs the model, the host runs the search.
    Host,
    /// The solver's WGSL rules library in `shaders/` (a file defining `solver_prefix_valid` and
    /// `solver_completable`, the twins of [`Constraint::accepts`] and
    /// [`Constraint::completable`] for integer values), fed each problem's
    /// [`Solver::wgsl_rule_words`].
    Rules(&'static str),
    /// Each problem's valid configs as a table ([`Constraint::gpu_table`]), checked by
    /// `shaders/catalogue_rules.wgsl`.
    Table,
}

/// What the engine needs of a solver.
pub trait Solver: Send + Sync {
    /// MIOpen's solver name, e.g. `ConvAsm1x1U`.
    fn name(&self) -> &'static str;

    /// The `{solver}` part of the model file names on this arch
    /// (`{arch}_{model}_{encoder,decoder,metadata}.ktn.model`).
    fn model_name(&self, arch: &str) -> Result<&'static str>;

    /// Ok when the solver applies to the problem on this arch (MIOpen's applicability, what a
    /// cell without a network checks); otherwise [`Error::NotApplicable`] /
    /// [`Error::InvalidProblem`] saying why.
    fn check(&self, target: &Target, problem: &ConvProblem) -> Result<()>;

    /// Ok when the solver's network applies to the problem (what a predictor with a network
    /// checks before encoding); by default [`Solver::check`]. A solver whose MIOpen model covers
    /// less than the solver refuses the rest here: the CK grouped solvers' 2024 KTN models
    /// (NHWC, FP32/FP16, the 2024 instance lists), where [`Solver::check`] is MIOpen 3.5.1's
    /// applicability (NCHW and BF16 too).
    fn check_network(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        self.check(target, problem)
    }

    /// The encoder input `[T, F]`, row-major, exactly as MIOpen builds it.
    fn encoder_input(&self, target: &Target, problem: &ConvProblem) -> Result<Vec<f32>>;

    /// The parameter rules for this problem over the model's vocabulary.
    fn constraint(
        &self,
        target: &Target,
        problem: &ConvProblem,
        vocab: &Vocabulary,
        metadata: &KtnMetadata,
    ) -> Result<Box<dyn Constraint + Send + Sync>>;

    /// MIOpen's answer when the model fails (its static default), as the values of each position.
    fn fallback(&self, target: &Target, problem: &ConvProblem) -> Result<Vec<String>>;

    /// How MIOpen prints a config (e.g. `4,8,4,16,1,4,1,8`).
    fn format_config(&self, values: &[String]) -> String;

    /// Checks that a model's token values are values this solver's parameters can take (a
    /// damaged metadata file is refused at load, not turned into silently different answers).
    /// `source` names the model in the error.
    fn check_vocabulary(&self, _vocab: &Vocabulary, _source: &str) -> Result<()> {
        Ok(())
    }

    /// The solver that serves tuneinfer's own models of this solver, where it is not this one:
    /// the 2-D CK solvers serve MIOpen's KTN models over the 2024 instance lists and tuneinfer's
    /// own over MIOpen 3.5.1's catalogue ([`ck::tunable`]). None: this one.
    fn own_model_solver(&self) -> Option<&'static dyn Solver> {
        None
    }

    /// Turns a model file's token values into the values the solver's constraint reads, then
    /// checks them ([`Solver::check_vocabulary`]); every model of tuneinfer's own is loaded
    /// through it. By default the file's values are those values.
    fn read_vocabulary(&self, vocab: &mut Vocabulary, source: &str) -> Result<()> {
        if let Some(t) = self.tunable() {
            tunable::read_int_vocabulary(t, vocab);
        }
        self.check_vocabulary(vocab, source)
    }

    /// How the GPU searches this solver's configs (see [`GpuSearch`]); by default the host does.
    fn gpu_search(&self) -> GpuSearch {
        GpuSearch::Host
    }

    /// The per-problem words the WGSL rules library reads (None without a library, or for a
    /// problem the library does not take: the host then runs the search).
    fn wgsl_rule_words(&self, _target: &Target, _problem: &ConvProblem) -> Option<RuleWords> {
        None
    }

    /// What a user should know about running this solver on the problem (e.g. that MIOpen
    /// wraps an NCHW problem in transpose kernels); the CLI prints it as a note.
    fn problem_note(&self, _target: &Target, _problem: &ConvProblem) -> Option<String> {
        None
    }

    /// The solver's integer-parameter side, for solvers tuneinfer trains its own models for
    /// (None: only MIOpen's models, e.g. the catalogue solvers).
    fn tunable(&self) -> Option<&dyn Tunable> {
        None
    }

    /// An answer's config as the perf db of MIOpen `version` holds it (None: a MIOpen of unknown
    /// version, which gets only a form every known MIOpen reads alike), or why that MIOpen would
    /// not run it. By default every MIOpen reads a config as tuneinfer writes it; the CK grouped
    /// solvers' kernel ids differ by version ([`ck::versions::written_form`]).
    fn written_form(
        &self,
        _problem: &ConvProblem,
        config: &str,
        _version: Option<MiopenVersion>,
    ) -> std::result::Result<String, String> {
        Ok(config.to_string())
    }
}

/// Refuses a 3-D problem (MIOpen's `spatial_dim` 3, any depth, even 1) for a solver that
/// tuneinfer models for 2-D problems only: [`Error::NotApplicable`] saying so. Every such
/// solver's applicability check calls this first, so a 3-D problem is never read as a 2-D one
/// (its depth silently dropped) by rules, features or defaults written for 2-D.
pub fn two_d_only(solver: &str, problem: &ConvProblem) -> Result<()> {
    match problem.depth {
        None => Ok(()),
        Some(d) => Err(Error::NotApplicable {
            solver: solver.to_string(),
            reason: format!(
                "a 3-D problem ({}, depth {}, filter depth {}): tuneinfer models {solver} for 2-D problems only",
                problem.layout_name(),
                d.in_d,
                d.filter_d
            ),
        }),
    }
}

/// The [`Tunable`] side of a solver, or a usage error naming the solvers that have one.
pub fn tunable(solver: &dyn Solver) -> Result<&dyn Tunable> {
    solver.tunable().ok_or_else(|| {
        Error::Usage(format!(
            "{}: tuneinfer trains and evaluates its own models only for {} (this solver has MIOpen's models only)",
            solver.name(),
            all()
                .iter()
                .filter(|s| s.tunable().is_some())
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// Every solver tuneinfer implements.
pub fn all() -> Vec<&'static dyn Solver> {
    vec![
        &conv_asm_1x1u::ConvAsm1x1USolver,
        &conv_asm_3x3u::ConvAsm3x3USolver,
        &conv_asm_bwd_wrw_1x1::ConvAsmBwdWrW1x1Solver,
        &conv_asm_bwd_wrw_3x3::ConvAsmBwdWrW3x3Solver,
        &conv_ocl_direct_fwd::ConvOclDirectFwdSolver,
        &conv_ocl_direct_fwd1x1::ConvOclDirectFwd1x1Solver,
        &conv_ocl_bwd_wrw2::NB1,
        &conv_ocl_bwd_wrw2::NB2,
        &conv_ocl_bwd_wrw2::NB4,
        &conv_ocl_bwd_wrw2::NB8,
        &conv_ocl_bwd_wrw2::NB16,
        &conv_bin_winograd_rxs::F2X3,
        &conv_bin_winograd_rxs::F3X2,
        &ck::FWD,
        &ck::BWD,
        &ck::WRW,
        &ck::tunable::FWD_3D,
        &ck::tunable::BWD_3D,
        &ck::tunable::WRW_3D,
        &gtc_nhwc::FWD,
        &gtc_nhwc::BWD,
        &gtc_nhwc::WRW,
        &mlir_igemm::FWD,
        &mlir_igemm::BWD,
        &mlir_igemm::WRW,
        &mlir_igemm::FWD_XDLOPS,
        &mlir_igemm::BWD_XDLOPS,
        &mlir_igemm::WRW_XDLOPS,
        &hip_igemm::V4R1_FWD,
        &hip_igemm::V4R1_WRW,
        &hip_igemm::V4R4_FWD_ENGINE,
        &hip_igemm::V4R4_WRW_ENGINE,
        &hip_igemm::BWD_V1R1_ENGINE,
        &hip_xdlops::FWD_V4R4,
        &hip_xdlops::FWD_V4R4_PADDED,
        &hip_xdlops::FWD_V4R5,
        &hip_xdlops::WRW_V4R4,
        &hip_xdlops::WRW_V4R4_PADDED,
        &hip_xdlops::BWD_V4R1,
    ]
}

/// Finds a solver by MIOpen's name (case-insensitive).
pub fn by_name(name: &str) -> Result<&'static dyn Solver> {
    all()
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| Error::UnknownSolver {
            solver: name.to_string(),
            known: all().iter().map(|s| s.name()).collect(),
        })
}

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn miopen_database_names_split_as_miopen_builds_them() {
        assert_eq!(split_db_name("gfx906_60"), ("gfx906", Some(60)));
        assert_eq!(split_db_name("gfx906_64"), ("gfx906", Some(64)));
        assert_eq!(split_db_name("gfx900_56"), ("gfx900", Some(56)));
        assert_eq!(split_db_name("gfx1030_36"), ("gfx1030", Some(36)));
        // Above 64 CUs: hex, no underscore (0x68 = 104, 0x130 = 304).
        assert_eq!(split_db_name("gfx90a68"), ("gfx90a", Some(104)));
        assert_eq!(split_db_name("gfx942130"), ("gfx942", Some(304)));
        assert_eq!(split_db_name("gfx906"), ("gfx906", None));
        // Not MIOpen's spelling: left whole (hex below 65, decimal above 64, junk).
        for name in [
            "gfx90640",
            "gfx906_104",
            "gfx906_x",
            "gfx906_",
            "gfx906_+6",
            "foo_60",
            "",
        ] {
            assert_eq!(split_db_name(name), (name, None), "{name}");
        }
        let t = Target::new("gfx942130");
        assert_eq!((t.arch.as_str(), t.compute_units), ("gfx942", Some(304)));
    }
}
