//! MIOpen's TunaNet, run as MIOpen runs it: the immediate-mode solver predictor.
//!
//! TunaNet is a small residual MLP (`{arch}.tn.model`, frugally-deep JSON) with a metadata file
//! (`{arch}_metadata.tn.model`). For a convolution problem it scores each solver of its
//! metadata's solver map; MIOpen orders the solvers by score and, in its immediate-mode fallback
//! (a problem with no find-db record, asked through `miopenConvolution*GetSolution*`), offers
//! the applicable dynamic ones in that order. Everything here follows ROCm/MIOpen 2d1fd997a
//! (2024-10-24; "MIOpen" below), `src/conv/heuristics/ai_heuristics.cpp` ("ai:" below) and
//! `src/ocl/convolutionocl.cpp` ("ocl:"), and MIOpen 3.5.1 where it differs (its gfx942 model,
//! [`Variant::Gfx942V351`]):
//!
//! - Which model: `GetModel` (ai:496-503): device `gfx942` -> the gfx942 model, `gfx90a` -> the
//!   gfx90a model, any other device -> the gfx908 model ([`model_arch`]).
//! - Which problems: each model's `IsProblemSupported` (ai:203-267, 313-368, 406-461;
//!   [`TunaNet::supports`]), then "some solver of the map applies" ([`TunaNet::fallback`]).
//! - Features: each model's `ToFeatures` (ai:270-306, 371-399, 464-493;
//!   [`TunaNet::raw_features`]), always in the forward convention (x's channels and size first,
//!   then y's, whatever the direction), normalised `(f - mean) / std` with the metadata's
//!   `stats.overall` (gfx908, gfx90a) or `stats.test` (gfx942) statistics, looked up by the
//!   names in `conv_params_used_as_features` (ai:76-83, 301-303, 394-396, 487-490).
//! - Scores: the network's output from index `num_outputs - num_solvers` on (ai:131, 158-165);
//!   output `i` is the solver the metadata's `encodings.solver` maps to `i` (ai:75). The scores are
//!   the raw last-layer values (MIOpen calls them probabilities; no softmax is applied).
//! - Order: descending score (ai:541-548), solvers MIOpen does not know removed (ai:553-561:
//!   none here, every name the three models use is registered in MIOpen's `src/solver.cpp`).
//! - Pick: `GetSolutionsFallback` (ocl:601-633) walks that order and keeps a solver when its
//!   algorithm is not disabled, it `IsDynamic`, it `IsApplicable` and its workspace fits; the k-th
//!   kept gets the time `10 * k` ms and the first is run. With none kept, MIOpen falls back to its
//!   WTI estimates (ocl:636-669).
//!
//! The network is read by tuneinfer's frugally-deep reader ([`crate::format::frugally`]); the
//! ReLU and Add layers it lacks are evaluated here ([`graph`]) with [`crate::cpu::dense`].
//! On load, the embedded test vectors (gfx90a and gfx942 have one; gfx908 none) are checked as
//! frugally-deep's `load_model(..., verify = true)` does for MIOpen (ai:129).

pub mod graph;
pub mod metadata;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, Precision};

pub use graph::Net;
pub use metadata::Metadata;

/// Which of MIOpen's TunaNet classes a model is run by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// `Gfx908Model` (ai:199-307): 24 features, overall statistics. MIOpen's default model: it
    /// serves every device but gfx90a and gfx942.
    Gfx908,
    /// `Gfx90aModel` (ai:309-400): 18 features, overall statistics.
    Gfx90a,
    /// `Gfx942Model` of ROCm/MIOpen 2d1fd997a (ai:402-494): 18 features, test statistics, NCHW.
    Gfx942,
    /// `Gfx942Model` of MIOpen 3.5.1 (its `ai_heuristics.cpp:400-493`): NCHW or NHWC, 19 features
    /// (the layout's code before the precision's), test statistics; its own model files.
    Gfx942V351,
}

/// `Gfx908Model::ToFeatures`'s order (ai:273-299), as `conv_params_used_as_features` names it.
const GFX908_FEATURES: [&str; 24] = [
    "InChannels",
    "InDepth",
    "InHeight",
    "InWidth",
    "FilterDim0",
    "FilterDim1",
    "FilterDim2",
    "OutChannels",
    "OutDepth",
    "OutHeight",
    "OutWidth",
    "BatchSize",
    "Padding0",
    "Padding1",
    "Padding2",
    "Stride0",
    "Stride1",
    "Stride2",
    "Dilation1",
    "Dilation2",
    "Layout",
    "Precision",
    "Direction",
    "GroupSize",
];

/// `Gfx90aModel::ToFeatures` and 2d1fd997a's `Gfx942Model::ToFeatures` (ai:374-392, 467-485).
const GFX90A_FEATURES: [&str; 18] = [
    "Inp_0",
    "Inp_2",
    "Inp_3",
    "Out_0",
    "Out_2",
    "Out_3",
    "Fil_1",
    "Fil_2",
    "Pad_1",
    "Pad_2",
    "Str_1",
    "Str_2",
    "Dil_1",
    "Dil_2",
    "BatchSize",
    "Precision",
    "Direction",
    "GroupSize",
];

/// MIOpen 3.5.1's `Gfx942Model::ToFeatures` (its ai_heuristics.cpp:465-484): the layout's code
/// before the precision's.
const GFX942_V351_FEATURES: [&str; 19] = [
    "Inp_0",
    "Inp_2",
    "Inp_3",
    "Out_0",
    "Out_2",
    "Out_3",
    "Fil_1",
    "Fil_2",
    "Pad_1",
    "Pad_2",
    "Str_1",
    "Str_2",
    "Dil_1",
    "Dil_2",
    "BatchSize",
    "Layout",
    "Precision",
    "Direction",
    "GroupSize",
];

impl Variant {
    /// The feature names MIOpen's class reads, in its order.
    pub fn feature_names(self) -> &'static [&'static str] {
        match self {
            Variant::Gfx908 => &GFX908_FEATURES,
            Variant::Gfx90a | Variant::Gfx942 => &GFX90A_FEATURES,
            Variant::Gfx942V351 => &GFX942_V351_FEATURES,
        }
    }

    /// The arch in the model's file names.
    pub fn model_arch(self) -> &'static str {
        match self {
            Variant::Gfx908 => "gfx908",
            Variant::Gfx90a => "gfx90a",
            Variant::Gfx942 | Variant::Gfx942V351 => "gfx942",
        }
    }

    /// True when MIOpen normalises with the metadata's `stats.test` statistics (gfx942,
    /// ai:489-490), false for `stats.overall` (ai:303, 396).
    pub fn uses_test_stats(self) -> bool {
        matches!(self, Variant::Gfx942 | Variant::Gfx942V351)
    }
}

/// The model MIOpen runs on `device` (`GetModel`, ai:496-503): `gfx942` and `gfx90a` have their
/// own; every other device, gfx906 and gfx1030 included, runs the gfx908 model. `device` may be
/// a MIOpen database name (`gfx90a68`, `gfx906_60`) or a raw device name (`gfx90a:sramecc+:xnack-`);
/// MIOpen compares the stream's device name, the bare arch.
pub fn model_arch(device: &str) -> &'static str {
    let bare = device.split(':').next().unwrap_or(device);
    match crate::solvers::split_db_name(bare).0.to_ascii_lowercase().as_str() {
        "gfx942" => "gfx942",
        "gfx90a" => "gfx90a",
        _ => "gfx908",
    }
}

/// The solvers of TunaNet's maps that are not dynamic, so that MIOpen's fallback skips them
/// (ocl:621-622), with the line that says so (2d1fd997a `src/include/miopen/conv/solvers.hpp`;
/// `fft` has no override of `solver.hpp:86`'s `IsDynamic() { return false; }`). Every other
/// solver in the three models' maps overrides it to return true.
pub const NOT_DYNAMIC: [(&str, &str); 2] = [
    ("fft", "conv/solvers.hpp:2565 (no override of solver.hpp:86, false)"),
    ("ConvCkIgemmFwdV6r1DlopsNchw", "conv/solvers.hpp:2810"),
];

/// Whether MIOpen's solver `IsDynamic` (of the solvers in TunaNet's maps; [`NOT_DYNAMIC`]).
pub fn is_dynamic(solver: &str) -> bool {
    !NOT_DYNAMIC.iter().any(|(s, _)| *s == solver)
}

/// One solution of MIOpen's TunaNet fallback (ocl:610-630).
#[derive(Debug, Clone, PartialEq)]
pub struct FallbackSolution {
    /// MIOpen's solver name.
    pub solver: String,
    /// TunaNet's score of it.
    pub score: f32,
    /// The time MIOpen reports for it: `10 * k` ms for the k-th solution kept (ocl:610-612).
    pub time_ms: f32,
}

/// A loaded TunaNet model: network, metadata and the MIOpen class that runs them.
#[derive(Debug, Clone)]
pub struct TunaNet {
    variant: Variant,
    net: Net,
    meta: Metadata,
    /// `num_outputs - num_solvers` (ai:131).
    offset: usize,
    /// Where the network and the metadata were read from.
    pub model_file: PathBuf,
    pub metadata_file: PathBuf,
}

impl TunaNet {
    /// The TunaNet MIOpen runs on `device` ([`model_arch`]), from the first directory of
    /// [`crate::models::search_dirs`] that holds its two files: `$TUNEINFER_MODELS`, the
    /// project's `weights/`, then MIOpen's system db directory (`$MIOPEN_SYSTEM_DB_PATH`, the
    /// install's `share/miopen/db`), where MIOpen itself reads them (ai:67, 182).
    pub fn load(device: &str) -> Result<TunaNet> {
        Self::load_in(device, &crate::models::search_dirs(None))
    }

    /// [`TunaNet::load`] over the directories `dirs`, in order. A directory that holds one of the
    /// two files without the other is an error, not skipped.
    pub fn load_in(device: &str, dirs: &[PathBuf]) -> Result<TunaNet> {
        let arch = model_arch(device);
        let model_name = format!("{arch}.tn.model");
        let meta_name = format!("{arch}_metadata.tn.model");
        for dir in dirs {
            let (model, meta) = (dir.join(&model_name), dir.join(&meta_name));
            match (model.exists(), meta.exists()) {
                (true, true) => return Self::load_files(&model, &meta, arch),
                (false, false) => continue,
                (true, false) | (false, true) => {
                    let missing = if model.exists() { meta } else { model };
                    return Err(Error::format(
                        missing.display().to_string(),
                        "missing, while the other TunaNet file is in the same directory",
                    ));
                }
            }
        }
        Err(Error::ModelNotFound {
            looked_for: vec![format!("{model_name} + {meta_name}")],
            searched: dirs.to_vec(),
        })
    }

    /// Loads the network `model` and its metadata `metadata`, run as MIOpen runs the model of
    /// `arch` (`gfx908`, `gfx90a` or `gfx942`; another device name maps as [`model_arch`] says).
    pub fn load_files(model: &Path, metadata: &Path, arch: &str) -> Result<TunaNet> {
        let model_text = crate::format::read_text(model)?;
        let meta_text = crate::format::read_text(metadata)?;
        let mut net = Self::parse(&model_text, &meta_text, arch, &model.display().to_string())?;
        net.model_file = model.to_path_buf();
        net.metadata_file = metadata.to_path_buf();
        Ok(net)
    }

    /// [`TunaNet::load_files`] from the two files' texts; `source` names the model in errors.
    pub fn parse(model_text: &str, metadata_text: &str, arch: &str, source: &str) -> Result<TunaNet> {
        let meta_source = format!("{source} (metadata)");
        let meta = Metadata::parse(metadata_text, &meta_source)?;
        let names: Vec<&str> = meta.features.iter().map(String::as_str).collect();
        let variant = match model_arch(arch) {
            "gfx942" if names == GFX942_V351_FEATURES => Variant::Gfx942V351,
            "gfx942" => Variant::Gfx942,
            "gfx90a" => Variant::Gfx90a,
            _ => Variant::Gfx908,
        };
        if names != variant.feature_names() {
            return Err(Error::format(
                meta_source,
                format!(
                    "conv_params_used_as_features is {names:?}; MIOpen's {} class builds {:?}",
                    variant.model_arch(),
                    variant.feature_names()
                ),
            ));
        }
        let net = Net::parse(model_text, source)?;
        if net.input_width != meta.num_inputs || meta.num_inputs != names.len() {
            return Err(Error::Shape {
                what: format!("{source}: TunaNet input"),
                expected: format!("{} features (metadata num_inputs {})", names.len(), meta.num_inputs),
                got: net.input_width.to_string(),
            });
        }
        if net.output_width != meta.num_outputs {
            return Err(Error::Shape {
                what: format!("{source}: TunaNet output"),
                expected: format!("metadata num_outputs {}", meta.num_outputs),
                got: net.output_width.to_string(),
            });
        }
        let encodings = [
            (&meta.direction, &["F", "B", "W"][..], "Direction"),
            (&meta.precision, &["FP32", "FP16", "BF16"][..], "Precision"),
            (&meta.layout, &["NCHW"][..], "Layout"),
        ];
        for (map, keys, what) in encodings {
            if let Some(k) = keys.iter().find(|k| !map.contains_key(**k)) {
                return Err(Error::format(&meta_source, format!("encodings.{what} has no code for {k}")));
            }
        }
        if variant == Variant::Gfx942V351 && !meta.layout.contains_key("NHWC") {
            return Err(Error::format(&meta_source, "encodings.Layout has no code for NHWC"));
        }
        net.verify(source)?;
        Ok(TunaNet {
            variant,
            offset: meta.num_outputs - meta.num_solvers,
            net,
            meta,
            model_file: PathBuf::from(source),
            metadata_file: PathBuf::from(meta_source),
        })
    }

    /// The MIOpen class that runs this model.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The solvers TunaNet scores, in output order (the metadata's solver map).
    pub fn solvers(&self) -> &[String] {
        &self.meta.solvers
    }

    /// The metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The network.
    pub fn net(&self) -> &Net {
        &self.net
    }

    fn refuse(&self, reason: impl Into<String>) -> Error {
        Error::NotApplicable {
            solver: format!("TunaNet ({} model)", self.variant.model_arch()),
            reason: reason.into(),
        }
    }

    /// Ok when the model's `IsProblemSupported` takes the problem's kind (its checks up to the
    /// data type, in MIOpen's order); otherwise [`Error::NotApplicable`] with MIOpen's reason. The
    /// last check of `IsProblemSupported`, that some solver of the map applies, needs MIOpen's
    /// applicability rules and is made by [`TunaNet::fallback`].
    ///
    /// - gfx908 (ai:207-247): 2-D; one group; NCHW (or NCDHW, which a 2-D problem is not); square
    ///   filter; equal pads; equal strides; dilation 1; FP32, FP16 or BF16.
    /// - gfx90a and 2d1fd997a's gfx942 (ai:317-346, 410-439): 2-D; NCHW; equal strides; equal
    ///   dilations (MIOpen's message says "must be 1", its test is equality); no bias; FP32, FP16
    ///   or BF16. MIOpen 3.5.1's gfx942 takes NHWC too (its ai_heuristics.cpp:413).
    pub fn supports(&self, p: &ConvProblem) -> Result<()> {
        if p.depth.is_some() {
            return Err(self.refuse("problem not 2D"));
        }
        let layout = p.layout_name();
        match self.variant {
            Variant::Gfx908 => {
                if p.groups != 1 {
                    return Err(self.refuse("group count not 1"));
                }
                if layout != "NCHW" && layout != "NCDHW" {
                    return Err(self.refuse(format!("layout {layout} not supported (NCHW only)")));
                }
                if p.filter_h != p.filter_w {
                    return Err(self.refuse("filters must be square (fil_h == fil_w)"));
                }
                if p.pad_h != p.pad_w {
                    return Err(self.refuse("padding must be equal along all axes"));
                }
                if p.stride_h != p.stride_w {
                    return Err(self.refuse("stride must be equal along all axes"));
                }
                if p.dilation_h != 1 || p.dilation_w != 1 {
                    return Err(self.refuse("dilation must be 1"));
                }
            }
            Variant::Gfx90a | Variant::Gfx942 | Variant::Gfx942V351 => {
                let nhwc_too = self.variant == Variant::Gfx942V351;
                if layout != "NCHW" && !(nhwc_too && layout == "NHWC") {
                    let taken = if nhwc_too { "NCHW or NHWC" } else { "NCHW only" };
                    return Err(self.refuse(format!("layout {layout} not supported ({taken})")));
                }
                if p.stride_h != p.stride_w {
                    return Err(self.refuse("stride must be equal along all axes"));
                }
                if p.dilation_h != p.dilation_w {
                    return Err(self.refuse("dilation must be equal along both axes"));
                }
                if p.bias {
                    return Err(self.refuse("bias must be 0"));
                }
            }
        }
        // FP32, FP16 and BF16, the only types a ConvProblem has, are all taken (ai:242-247).
        match p.precision {
            Precision::Fp32 | Precision::Fp16 | Precision::Bf16 => Ok(()),
        }
    }

    fn code(&self, map: &std::collections::HashMap<String, i64>, key: &str, what: &str) -> Result<f32> {
        map.get(key)
            .map(|&v| v as f32)
            .ok_or_else(|| self.refuse(format!("the metadata has no {what} code for {key}")))
    }

    /// The feature vector MIOpen's `ToFeatures` builds, before normalisation, in the order of
    /// [`Variant::feature_names`]; an error when [`TunaNet::supports`] refuses the problem.
    /// The values are in the forward convention: MIOpen's `isFwd ? GetIn.. : GetOut..` picks x's
    /// channels and size and y's whatever the direction, which is how a [`ConvProblem`] stores
    /// them. gfx908's depth features are 1 (2-D problems only), and its `Padding0` and `Stride0`
    /// are 1, not the pad and stride depth: "TunaNet was trained on a dataset of 2D problems
    /// where PadD was incorrectly set to 1" (ai:286-291).
    pub fn raw_features(&self, p: &ConvProblem) -> Result<Vec<f32>> {
        self.supports(p)?;
        let f = |v: u64| v as f32;
        let dir = self.code(&self.meta.direction, &p.direction.as_char().to_string(), "direction")?;
        let prec = self.code(&self.meta.precision, p.precision.as_str(), "precision")?;
        let groups = f(p.groups);
        Ok(match self.variant {
            Variant::Gfx908 => {
                let layout = self.code(&self.meta.layout, p.layout_name(), "layout")?;
                vec![
                    f(p.c),
                    1.0,
                    f(p.in_h),
                    f(p.in_w),
                    1.0,
                    f(p.filter_h),
                    f(p.filter_w),
                    f(p.k),
                    1.0,
                    f(p.out_h),
                    f(p.out_w),
                    f(p.n),
                    1.0,
                    f(p.pad_h),
                    f(p.pad_w),
                    1.0,
                    f(p.stride_h),
                    f(p.stride_w),
                    f(p.dilation_h),
                    f(p.dilation_w),
                    layout,
                    prec,
                    dir,
                    groups,
                ]
            }
            Variant::Gfx90a | Variant::Gfx942 | Variant::Gfx942V351 => {
                let mut v = vec![
                    f(p.c),
                    f(p.in_h),
                    f(p.in_w),
                    f(p.k),
                    f(p.out_h),
                    f(p.out_w),
                    f(p.filter_h),
                    f(p.filter_w),
                    f(p.pad_h),
                    f(p.pad_w),
                    f(p.stride_h),
                    f(p.stride_w),
                    f(p.dilation_h),
                    f(p.dilation_w),
                    f(p.n),
                ];
                if self.variant == Variant::Gfx942V351 {
                    v.push(self.code(&self.meta.layout, p.layout_name(), "layout")?);
                }
                v.extend([prec, dir, groups]);
                v
            }
        })
    }

    /// The network's input for the problem: [`TunaNet::raw_features`] normalised as MIOpen does,
    /// `(f - mean) / std` in f32 with the statistics [`Variant::uses_test_stats`] names.
    pub fn features(&self, p: &ConvProblem) -> Result<Vec<f32>> {
        let mut v = self.raw_features(p)?;
        let (mean, std) = if self.variant.uses_test_stats() {
            (&self.meta.test_mean, &self.meta.test_std)
        } else {
            (&self.meta.overall_mean, &self.meta.overall_std)
        };
        for ((x, m), s) in v.iter_mut().zip(mean).zip(std) {
            *x = (*x - m) / s;
        }
        Ok(v)
    }

    /// The network's score of every solver, in [`TunaNet::solvers`] order (MIOpen's `Forward`,
    /// ai:158-165).
    pub fn scores(&self, p: &ConvProblem) -> Result<Vec<f32>> {
        let x = self.features(p)?;
        let out = self.net.forward(&x, 1)?;
        Ok(out[self.offset..].to_vec())
    }

    /// MIOpen's order of the solvers for the problem (`PredictSolver`, ai:505-574), each with its
    /// score: descending score (a tie keeps the solver map's order; MIOpen's `std::sort` leaves
    /// it unspecified). Every solver of the map is listed, applicable or not; an error when the
    /// model does not take the problem ([`TunaNet::supports`]).
    pub fn rank(&self, p: &ConvProblem) -> Result<Vec<(String, f32)>> {
        let scores = self.scores(p)?;
        Ok(self.order(&scores))
    }

    fn order(&self, scores: &[f32]) -> Vec<(String, f32)> {
        let mut idx: Vec<usize> = (0..scores.len()).collect();
        idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        idx.into_iter().map(|i| (self.meta.solvers[i].clone(), scores[i])).collect()
    }

    /// [`TunaNet::rank`] of many problems, with one pass of the network over all that the model
    /// takes.
    pub fn rank_many(&self, problems: &[ConvProblem]) -> Vec<Result<Vec<(String, f32)>>> {
        let feats: Vec<Result<Vec<f32>>> = problems.iter().map(|p| self.features(p)).collect();
        let width = self.net.input_width;
        let x: Vec<f32> = feats.iter().flatten().flat_map(|v| v.iter().copied()).collect();
        let rows = x.len() / width;
        let out = match self.net.forward(&x, rows) {
            Ok(out) => out,
            Err(e) => {
                let msg = e.to_string();
                return feats
                    .into_iter()
                    .map(|f| f.and_then(|_| Err(Error::Internal(msg.clone()))))
                    .collect();
            }
        };
        let out_w = self.net.output_width;
        let mut row = 0;
        feats
            .into_iter()
            .map(|f| {
                f.map(|_| {
                    let scores = &out[row * out_w + self.offset..(row + 1) * out_w];
                    row += 1;
                    self.order(scores)
                })
            })
            .collect()
    }

    /// What MIOpen's immediate-mode fallback makes of TunaNet's order (ocl:601-633):
    /// `is_applicable(solver)` is MIOpen's `IsApplicable` for the problem on the device together
    /// with its workspace check (immediate mode's `GetSolution*` passes no workspace, so every
    /// size fits there). The result keeps, in [`TunaNet::rank`] order, each applicable solver that
    /// [`is_dynamic`] (no algorithm is disabled in MIOpen's default settings), the k-th with the
    /// time `10 * k` ms; MIOpen runs the first. Empty: MIOpen falls back to its WTI estimates.
    ///
    /// # Errors
    /// [`Error::NotApplicable`] when the model's `IsProblemSupported` refuses the problem: its
    /// kind ([`TunaNet::supports`]), or no solver of the map, dynamic or not, applies (ai:249-265);
    /// MIOpen then uses its WTI estimates too.
    pub fn fallback(&self, p: &ConvProblem, is_applicable: &mut dyn FnMut(&str) -> bool) -> Result<Vec<FallbackSolution>> {
        let ranked = self.rank(p)?;
        let applicable: Vec<bool> = ranked.iter().map(|(s, _)| is_applicable(s)).collect();
        if !applicable.iter().any(|&a| a) {
            return Err(self.refuse("no solver that TunaNet may predict applies"));
        }
        let mut out = Vec::new();
        for ((solver, score), ok) in ranked.into_iter().zip(applicable) {
            if ok && is_dynamic(&solver) {
                let time_ms = 10.0 * (out.len() + 1) as f32;
                out.push(FallbackSolution { solver, score, time_ms });
            }
        }
        Ok(out)
    }
}
