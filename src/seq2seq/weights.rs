//! tuneinfer's own model files: `{arch}_{solver}.safetensors` (the tensors of an attention
//! model) next to `{arch}_{solver}.json` (what the tensors mean: format magic and version,
//! arch, solver, sizes, vocabulary, feature transform, training data hash, seed, metrics and the
//! sha256 of the tensors file, so a damaged or mismatched pair is refused with a clear error).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::format::metadata::KtnMetadata;
use crate::format::safetensors::{self, Tensor};
use crate::format::sha256::{hex, Sha256};
use crate::seq2seq::attention::{AttentionConfig, AttentionParams, EncoderKind, FeatureTransform};
use crate::seq2seq::conv_encoder::CONV_WIDTH;

/// `format` field of the metadata JSON and of the safetensors `__metadata__`.
pub const MAGIC: &str = "tuneinfer-attention-seq2seq";
/// Version of the layout this build reads and writes.
pub const VERSION: u64 = 1;

/// Largest size (steps, units, embedding width, vocabulary, positions) a weights file may give.
pub use crate::format::MAX_MODEL_SIZE;

/// Most ensemble members a weights file may hold.
pub const MAX_MEMBERS: usize = 64;

/// The two files of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightsFiles {
    pub tensors: PathBuf,
    pub metadata: PathBuf,
}

/// How a solver's name is spelt in file names: MIOpen's `ConvOclBwdWrW2<4>` as
/// `ConvOclBwdWrW2_4` (`<` and `>` are not allowed in file names everywhere); other names as
/// they are.
pub fn file_solver_name(solver: &str) -> std::borrow::Cow<'_, str> {
    if solver.contains(['<', '>']) {
        std::borrow::Cow::Owned(solver.replace('<', "_").replace('>', ""))
    } else {
        std::borrow::Cow::Borrowed(solver)
    }
}

impl WeightsFiles {
    /// `{arch}_{solver}.safetensors` and `.json` in `dir` (the solver as [`file_solver_name`]
    /// spells it).
    pub fn in_dir(dir: &Path, arch: &str, solver: &str) -> WeightsFiles {
        let solver = file_solver_name(solver);
        WeightsFiles {
            tensors: dir.join(format!("{arch}_{solver}.safetensors")),
            metadata: dir.join(format!("{arch}_{solver}.json")),
        }
    }

    pub fn exist(&self) -> bool {
        crate::format::bundle::is_file(&self.tensors) && crate::format::bundle::is_file(&self.metadata)
    }
}

/// The first directory holding both files of (arch, solver).
pub fn find(dirs: &[PathBuf], arch: &str, solver: &str) -> Option<WeightsFiles> {
    dirs.iter()
        .map(|d| WeightsFiles::in_dir(d, arch, solver))
        .find(WeightsFiles::exist)
}

/// Everything in the metadata JSON besides the tensors.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsInfo {
    pub arch: String,
    pub solver: String,
    pub config: AttentionConfig,
    /// Ensemble members (1 for a single network).
    pub members: usize,
    pub token_values: Vec<String>,
    pub transform: FeatureTransform,
    /// Free-form training facts (data hash, seed, options, timings) and validation metrics.
    pub training: Value,
    pub metrics: Value,
    /// A model trained across GPUs (`train --other-gpu-perf-db`): its figures on the held-out
    /// problems of other GPUs of its training pool, by database name (`{"gfx90a68": {...}}`,
    /// each as `metrics`), as `eval --model FILE --record` writes them. A GPU listed here is
    /// one the model was validated on, so it may serve it ([`crate::models::resolve`]).
    /// Null for none.
    pub pool_metrics: Value,
}

impl WeightsInfo {
    /// The database names of the other GPUs this model was validated on ([`WeightsInfo::pool_metrics`]).
    pub fn validated_gpus(&self) -> Vec<String> {
        self.pool_metrics
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether the GPU `db_name` (`gfx90a68`) is one of the other GPUs whose rows it was trained
    /// with (`train --other-gpu-perf-db`: `training.other_gpu_perf_dbs`).
    pub fn trained_with(&self, db_name: &str) -> bool {
        self.training["other_gpu_perf_dbs"].as_array().is_some_and(|a| {
            a.iter()
                .any(|g| g["gpu"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(db_name)))
        })
    }

    /// The figures recorded for the GPU `db_name`: the model's own `validation` when it is the
    /// GPU the model was trained for (or `db_name` is None), else that pool GPU's.
    pub fn metrics_for(&self, db_name: Option<&str>) -> &Value {
        match db_name {
            Some(gpu) if !gpu.eq_ignore_ascii_case(&self.arch) => self.pool_metrics.get(gpu).unwrap_or(&Value::Null),
            _ => &self.metrics,
        }
    }
}

/// The KTN-style metadata the search and the solver constraint need (fixed length per
/// direction, predict_type 0).
pub fn ktn_metadata(token_values: &[String], seq_len: usize) -> KtnMetadata {
    let mut num = BTreeMap::new();
    num.insert("fwd".to_string(), seq_len);
    num.insert("bwd".to_string(), seq_len);
    num.insert("wrw".to_string(), seq_len);
    KtnMetadata {
        predict_type: 0,
        num_tuning_params: num,
        token_values: token_values.to_vec(),
    }
}

/// The tensors of a model in file order.
pub fn params_to_tensors(params: &AttentionParams, prefix: &str) -> Vec<Tensor> {
    params
        .config
        .tensor_shapes()
        .into_iter()
        .zip(&params.tensors)
        .map(|((name, shape), data)| Tensor {
            name: format!("{prefix}{name}"),
            shape,
            data: data.clone(),
        })
        .collect()
}

/// Picks the tensors named `{prefix}{name}` out of `tensors`, checking every shape.
pub fn params_from_tensors(
    config: AttentionConfig,
    tensors: &[Tensor],
    prefix: &str,
    source: &str,
) -> Result<AttentionParams> {
    let mut out = AttentionParams::zeros(config);
    for (i, (name, shape)) in config.tensor_shapes().into_iter().enumerate() {
        let full = format!("{prefix}{name}");
        let t = tensors
            .iter()
            .find(|t| t.name == full)
            .ok_or_else(|| Error::format(source, format!("tensor '{full}' is missing")))?;
        if t.shape != shape {
            return Err(Error::Shape {
                what: format!("{source}: tensor '{full}'"),
                expected: format!("{shape:?}"),
                got: format!("{:?}", t.shape),
            });
        }
        if t.data.iter().any(|v| !v.is_finite()) {
            return Err(Error::format(
                source,
                format!("tensor '{full}' holds NaN or infinite values"),
            ));
        }
        out.tensors[i] = t.data.clone();
    }
    Ok(out)
}

fn config_json(c: &AttentionConfig) -> Value {
    let mut m = json!({"steps": c.steps, "hidden": c.hidden, "embed": c.embed, "vocab": c.vocab, "seq_len": c.seq_len});
    // Only hybrid models name their encoder: a plain model's file stays as it always was.
    if let (Some(ch), Some(o)) = (c.encoder.conv_channels(), m.as_object_mut()) {
        o.insert("encoder".into(), json!("hybrid"));
        o.insert("conv_channels".into(), json!(ch));
        o.insert("conv_width".into(), json!(CONV_WIDTH));
        o.insert("conv_activation".into(), json!("tanh"));
    }
    m
}

/// The encoder a metadata file's `model` names: absent (every file before the hybrid encoder)
/// or "lstm" is the plain LSTM encoder; "hybrid" needs its channels, width 3 and tanh.
fn encoder_from_json(m: &Value, source: &str) -> Result<EncoderKind> {
    let err = |d: String| Error::format(source, d);
    match m.get("encoder").map(|e| e.as_str()) {
        None | Some(Some("lstm")) => Ok(EncoderKind::Lstm),
        Some(Some("hybrid")) => {
            let channels = m
                .get("conv_channels")
                .and_then(Value::as_u64)
                .filter(|&x| x > 0 && x <= MAX_MODEL_SIZE as u64)
                .ok_or_else(|| {
                    err(format!(
                        "model.conv_channels is missing or not an integer in 1..={MAX_MODEL_SIZE}"
                    ))
                })?;
            if m.get("conv_width")
                .is_some_and(|w| w.as_u64() != Some(CONV_WIDTH as u64))
            {
                return Err(err(format!(
                    "model.conv_width: this tuneinfer reads width {CONV_WIDTH} only"
                )));
            }
            if m.get("conv_activation").is_some_and(|a| a.as_str() != Some("tanh")) {
                return Err(err("model.conv_activation: this tuneinfer reads tanh only".into()));
            }
            Ok(EncoderKind::Hybrid {
                channels: channels as usize,
            })
        }
        Some(_) => Err(err(format!(
            "model.encoder {}: expected \"lstm\" or \"hybrid\"",
            m["encoder"]
        ))),
    }
}

/// Writes both files of a model into `dir`; returns their paths.
/// Member k's tensors are named `{name}` for k = 0 and `member{k}.{name}` otherwise.
pub fn member_prefix(k: usize) -> String {
    if k == 0 {
        String::new()
    } else {
        format!("member{k}.")
    }
}

/// Writes both files of a model (one or more ensemble members) into `dir`; returns their paths.
pub fn save(dir: &Path, members: &[AttentionParams], info: &WeightsInfo) -> Result<WeightsFiles> {
    crate::format::create_dir(dir)?;
    let files = WeightsFiles::in_dir(dir, &info.arch, &info.solver);
    let mut st_meta = BTreeMap::new();
    st_meta.insert("format".to_string(), MAGIC.to_string());
    st_meta.insert("version".to_string(), VERSION.to_string());
    st_meta.insert("arch".to_string(), info.arch.clone());
    st_meta.insert("solver".to_string(), info.solver.clone());
    let mut tensors = Vec::new();
    for (k, m) in members.iter().enumerate() {
        tensors.extend(params_to_tensors(m, &member_prefix(k)));
    }
    let bytes = safetensors::to_bytes(&tensors, &st_meta);
    // The solver's names of its features (documentation in the file; loading does not read them).
    let mut feature_names: Vec<&str> = crate::solvers::by_name(&info.solver)
        .ok()
        .and_then(|s| s.tunable())
        .map(|t| t.feature_names().to_vec())
        .unwrap_or_default();
    if info.transform.gpu.is_some() {
        feature_names.extend(crate::solvers::GPU_FEATURE_NAMES);
    }
    let digest = {
        let mut h = Sha256::new();
        h.update(&bytes);
        hex(&h.finish())
    };
    let meta = json!({
        "format": MAGIC,
        "version": VERSION,
        "arch": info.arch,
        "solver": info.solver,
        "model": config_json(&info.config),
        "members": members.len(),
        "tokens": info.token_values,
        "features": features_json(&feature_names, &info.transform),
        "tensors_sha256": digest,
        "training": info.training,
        "validation": info.metrics,
    });
    let mut meta = meta;
    if !info.pool_metrics.is_null() {
        meta["validation_by_gpu"] = info.pool_metrics.clone();
    }
    safetensors::write_bytes_atomic(&files.tensors, &bytes)?;
    let text = serde_json::to_string_pretty(&meta)
        .map_err(|e| Error::format(files.metadata.display().to_string(), e.to_string()))?;
    safetensors::write_bytes_atomic(&files.metadata, format!("{text}\n").as_bytes())?;
    Ok(files)
}

/// The metadata's `features` section: names, the transform and, for a model with the GPU as an
/// input, the GPU it was trained for.
fn features_json(names: &[&str], t: &FeatureTransform) -> Value {
    let mut f = json!({"names": names, "mean": t.mean, "std": t.std,
        "transform": "z = (raw - mean) / std; raw features as `names` says (the solver's Tunable::features, \
                      then the GPU's features when `gpu` is present)"});
    if let Some(gpu) = &t.gpu {
        f["gpu"] = json!({"arch": gpu.arch, "compute_units": gpu.compute_units,
            "note": "the GPU is an input: its features follow the solver's; these compute units stand in when a target names none"});
    }
    f
}

/// The tensors file's bytes, checked against the sha256 its metadata names.
fn read_checked(files: &WeightsFiles, digest: &str) -> Result<Vec<u8>> {
    let bytes = crate::format::bundle::read(&files.tensors)
        .map_err(|e| Error::io(&files.tensors, e))?
        .into_owned();
    let got = {
        let mut h = Sha256::new();
        h.update(&bytes);
        hex(&h.finish())
    };
    if got != digest {
        return Err(Error::format(
            files.tensors.display().to_string(),
            format!(
                "damaged or replaced: its sha256 is {got}, {} expects {digest}",
                files.metadata.display()
            ),
        ));
    }
    Ok(bytes)
}

/// Copies a model (both files) into `out_dir` with its tensors stored as `dtype` (F16 halves the
/// file; every value becomes its nearest half), the metadata's `tensors_sha256` updated and its
/// `storage` field naming the dtype. The source must load (its checksum is checked first).
pub fn store_as(files: &WeightsFiles, out_dir: &Path, dtype: safetensors::Dtype) -> Result<WeightsFiles> {
    let meta_src = files.metadata.display().to_string();
    let (info, digest) = read_info(&files.metadata)?;
    let bytes = read_checked(files, &digest)?;
    let (tensors, st_meta) = safetensors::from_bytes(&bytes, &files.tensors.display().to_string())?;
    let out_bytes = safetensors::to_bytes_as(&tensors, &st_meta, dtype);
    let new_digest = {
        let mut h = Sha256::new();
        h.update(&out_bytes);
        hex(&h.finish())
    };
    let mut meta: serde_json::Value = serde_json::from_str(&crate::format::read_text(&files.metadata)?)
        .map_err(|e| Error::format(&meta_src, e.to_string()))?;
    if let Some(m) = meta.as_object_mut() {
        m.insert("tensors_sha256".into(), json!(new_digest));
        m.insert(
            "storage".into(),
            json!(match dtype {
                safetensors::Dtype::F32 => "F32",
                safetensors::Dtype::F16 => "F16 (each weight rounded to the nearest IEEE half; computed in f32)",
            }),
        );
    }
    crate::format::create_dir(out_dir)?;
    let out = WeightsFiles::in_dir(out_dir, &info.arch, &info.solver);
    safetensors::write_bytes_atomic(&out.tensors, &out_bytes)?;
    let text = serde_json::to_string_pretty(&meta).map_err(|e| Error::format(&meta_src, e.to_string()))?;
    safetensors::write_bytes_atomic(&out.metadata, format!("{text}\n").as_bytes())?;
    Ok(out)
}

/// Replaces the `validation` figures in a model's metadata JSON (the tensors and their checksum
/// are untouched), e.g. after evaluating an f16 copy made by [`store_as`].
pub fn set_validation(files: &WeightsFiles, validation: &serde_json::Value) -> Result<()> {
    let src = files.metadata.display().to_string();
    let mut meta: serde_json::Value = serde_json::from_str(&crate::format::read_text(&files.metadata)?)
        .map_err(|e| Error::format(&src, e.to_string()))?;
    let Some(m) = meta.as_object_mut() else {
        return Err(Error::format(&src, "the metadata is not a JSON object".to_string()));
    };
    m.insert("validation".into(), validation.clone());
    let text = serde_json::to_string_pretty(&meta).map_err(|e| Error::format(&src, e.to_string()))?;
    safetensors::write_bytes_atomic(&files.metadata, format!("{text}\n").as_bytes())
}

/// Records `validation` as the model's figures on the other GPU `gpu` of its training pool
/// (`validation_by_gpu`, [`WeightsInfo::pool_metrics`]); the tensors are untouched.
pub fn set_gpu_validation(files: &WeightsFiles, gpu: &str, validation: &serde_json::Value) -> Result<()> {
    let src = files.metadata.display().to_string();
    let mut meta: serde_json::Value = serde_json::from_str(&crate::format::read_text(&files.metadata)?)
        .map_err(|e| Error::format(&src, e.to_string()))?;
    let Some(m) = meta.as_object_mut() else {
        return Err(Error::format(&src, "the metadata is not a JSON object".to_string()));
    };
    let by_gpu = m.entry("validation_by_gpu").or_insert_with(|| json!({}));
    if !by_gpu.is_object() {
        *by_gpu = json!({});
    }
    by_gpu[gpu] = validation.clone();
    let text = serde_json::to_string_pretty(&meta).map_err(|e| Error::format(&src, e.to_string()))?;
    safetensors::write_bytes_atomic(&files.metadata, format!("{text}\n").as_bytes())
}

/// Reads and checks the metadata JSON.
pub fn read_info(path: &Path) -> Result<(WeightsInfo, String)> {
    let text = crate::format::read_text(path)?;
    parse_info(&text, &path.display().to_string())
}

/// Parses and checks the metadata JSON text ([`read_info`] without the file); `source` names it
/// in errors. Returns the info and the tensors file's expected sha256.
pub fn parse_info(text: &str, source: &str) -> Result<(WeightsInfo, String)> {
    let err = |d: String| Error::format(source, d);
    let v: Value = serde_json::from_str(text).map_err(|e| err(format!("not valid JSON: {e}")))?;
    if v.get("format").and_then(Value::as_str) != Some(MAGIC) {
        return Err(err(format!(
            "not a tuneinfer weights metadata file ('format' is not \"{MAGIC}\")"
        )));
    }
    let version = v.get("version").and_then(Value::as_u64).unwrap_or(0);
    if version != VERSION {
        return Err(err(format!(
            "weights format version {version}, this tuneinfer reads version {VERSION}: retrain with `tuneinfer train` or use a matching tuneinfer"
        )));
    }
    let s = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| err(format!("'{k}' is missing or not text")))
    };
    let m = v.get("model").ok_or_else(|| err("'model' is missing".into()))?;
    let n = |k: &str| {
        m.get(k)
            .and_then(Value::as_u64)
            .filter(|&x| x > 0 && x <= MAX_MODEL_SIZE as u64)
            .map(|x| x as usize)
            .ok_or_else(|| {
                err(format!(
                    "model.{k} is missing or not an integer in 1..={MAX_MODEL_SIZE}"
                ))
            })
    };
    let config = AttentionConfig {
        steps: n("steps")?,
        hidden: n("hidden")?,
        embed: n("embed")?,
        vocab: n("vocab")?,
        seq_len: n("seq_len")?,
        encoder: encoder_from_json(m, source)?,
    };
    let token_values: Vec<String> = v
        .get("tokens")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .map(|t| t.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| err("'tokens' is missing or not a list of texts".into()))?;
    let floats = |k: &str| {
        v.get("features")
            .and_then(|f| f.get(k))
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|x| x.as_f64().map(|x| x as f32))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| err(format!("features.{k} is missing or not a list of numbers")))
    };
    let gpu = match v.get("features").and_then(|f| f.get("gpu")) {
        None | Some(Value::Null) => None,
        Some(g) => Some(crate::seq2seq::attention::GpuInput {
            arch: g
                .get("arch")
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| err("features.gpu.arch is missing or not text".into()))?,
            compute_units: g
                .get("compute_units")
                .and_then(Value::as_u64)
                .filter(|&n| (1..=65_536).contains(&n))
                .map(|n| n as u32)
                .ok_or_else(|| err("features.gpu.compute_units is missing or not an integer in 1..=65536".into()))?,
        }),
    };
    let transform = FeatureTransform {
        mean: floats("mean")?,
        std: floats("std")?,
        gpu,
    };
    if transform.std.iter().any(|&s| s <= 0.0) || transform.mean.len() != transform.std.len() {
        return Err(err("features: std must be positive and as long as mean".into()));
    }
    let info = WeightsInfo {
        arch: s("arch")?,
        solver: s("solver")?,
        config,
        members: v
            .get("members")
            .map(|m| {
                m.as_u64()
                    .filter(|&m| (1..=MAX_MEMBERS as u64).contains(&m))
                    .map(|m| m as usize)
            })
            .unwrap_or(Some(1))
            .ok_or_else(|| err(format!("'members' is not an integer in 1..={MAX_MEMBERS}")))?,
        token_values,
        transform,
        training: v.get("training").cloned().unwrap_or(Value::Null),
        metrics: v.get("validation").cloned().unwrap_or(Value::Null),
        pool_metrics: match v.get("validation_by_gpu") {
            None | Some(Value::Null) => Value::Null,
            Some(m) if m.is_object() => m.clone(),
            Some(_) => return Err(err("'validation_by_gpu' is not an object of GPU names".into())),
        },
    };
    Ok((info, s("tensors_sha256")?))
}

/// Loads a model pair, checking format, version, arch, solver, shapes and the checksum.
/// The members' tensors of a model pair, with its metadata (the model is built by
/// [`AttentionModel::load`]).
pub fn load(files: &WeightsFiles, arch: &str, solver: &str) -> Result<(Vec<AttentionParams>, WeightsInfo)> {
    let (info, digest) = read_info(&files.metadata)?;
    let meta_src = files.metadata.display().to_string();
    if !info.arch.eq_ignore_ascii_case(arch) || !info.solver.eq_ignore_ascii_case(solver) {
        return Err(Error::format(
            meta_src,
            format!(
                "these weights are for {} {}, not {arch} {solver}",
                info.arch, info.solver
            ),
        ));
    }
    let src = files.tensors.display().to_string();
    let bytes = read_checked(files, &digest)?;
    let (tensors, st_meta) = safetensors::from_bytes(&bytes, &src)?;
    if st_meta.get("format").map(String::as_str) != Some(MAGIC)
        || st_meta.get("version").map(String::as_str) != Some(&VERSION.to_string())
    {
        return Err(Error::format(
            src,
            format!("not a {MAGIC} version {VERSION} tensors file"),
        ));
    }
    let members = (0..info.members)
        .map(|k| params_from_tensors(info.config, &tensors, &member_prefix(k), &src))
        .collect::<Result<Vec<_>>>()?;
    Ok((members, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq2seq::attention::NUM_FEATURES;

    fn tiny_info(arch: &str) -> (AttentionParams, WeightsInfo) {
        let config = AttentionConfig {
            steps: NUM_FEATURES,
            hidden: 4,
            embed: 3,
            vocab: 5,
            seq_len: 8,
            encoder: Default::default(),
        };
        let info = WeightsInfo {
            arch: arch.into(),
            solver: "ConvAsm1x1U".into(),
            config,
            members: 1,
            token_values: ["-1", "1", "2", "4", "8"].iter().map(|s| s.to_string()).collect(),
            transform: FeatureTransform {
                mean: vec![1.0; NUM_FEATURES],
                std: vec![2.0; NUM_FEATURES],
                gpu: None,
            },
            training: json!({"seed": 1}),
            metrics: json!({"exact": 0.5}),
            pool_metrics: json!({"gfx90a68": {"exact": 0.25}}),
        };
        (AttentionParams::init(config, 3), info)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tuneinfer-weights-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_model_with_the_gpu_as_an_input_round_trips_and_is_checked() {
        use crate::seq2seq::attention::GpuInput;
        use crate::solvers::NUM_GPU_FEATURES;
        let dir = temp_dir("gpu-input");
        let (_, mut info) = tiny_info("gfx1030");
        let steps = NUM_FEATURES + NUM_GPU_FEATURES;
        info.config.steps = steps;
        info.transform = FeatureTransform {
            mean: vec![0.5; steps],
            std: vec![1.5; steps],
            gpu: Some(GpuInput {
                arch: "gfx1030".into(),
                compute_units: 36,
            }),
        };
        let params = AttentionParams::init(info.config, 5);
        let files = save(&dir, std::slice::from_ref(&params), &info).unwrap();
        let (_, back) = load(&files, "gfx1030", "ConvAsm1x1U").unwrap();
        assert_eq!(back.transform, info.transform);
        let text = std::fs::read_to_string(&files.metadata).unwrap();
        assert!(
            text.contains("log2_compute_units") && text.contains("is_gfx103x"),
            "{text}"
        );
        // A model whose transform is one GPU feature short of its steps is refused on loading.
        let mut short = info.clone();
        short.transform.mean.pop();
        short.transform.std.pop();
        save(&dir, std::slice::from_ref(&params), &short).unwrap();
        let e = crate::seq2seq::AttentionModel::load(&files, "gfx1030", "ConvAsm1x1U")
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("{steps} features")), "{e}");
        // A GPU section without its compute units is named.
        let v = text.replace("\"compute_units\": 36", "\"compute_units\": 0");
        std::fs::write(&files.metadata, v).unwrap();
        let e = read_info(&files.metadata).unwrap_err().to_string();
        assert!(e.contains("features.gpu.compute_units"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn round_trip_and_errors() {
        let dir = temp_dir("rt");
        let (params, info) = tiny_info("gfx906");
        let files = save(&dir, std::slice::from_ref(&params), &info).unwrap();
        assert_eq!(
            find(std::slice::from_ref(&dir), "gfx906", "ConvAsm1x1U"),
            Some(files.clone())
        );
        let (members, info2) = load(&files, "gfx906", "ConvAsm1x1U").unwrap();
        assert_eq!(members, vec![params.clone()]);
        assert_eq!(info2, info);
        // Another arch.
        let e = load(&files, "gfx900", "ConvAsm1x1U").unwrap_err().to_string();
        assert!(e.contains("for gfx906 ConvAsm1x1U, not gfx900"), "{e}");
        // Another version.
        let text = std::fs::read_to_string(&files.metadata).unwrap();
        std::fs::write(&files.metadata, text.replace("\"version\": 1", "\"version\": 7")).unwrap();
        let e = load(&files, "gfx906", "ConvAsm1x1U").unwrap_err().to_string();
        assert!(e.contains("version 7") && e.contains("reads version 1"), "{e}");
        std::fs::write(&files.metadata, &text).unwrap();
        // A damaged tensors file.
        let mut bytes = std::fs::read(&files.tensors).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x55;
        std::fs::write(&files.tensors, &bytes).unwrap();
        let e = load(&files, "gfx906", "ConvAsm1x1U").unwrap_err().to_string();
        assert!(e.contains("damaged"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stored_as_f16_loads_with_each_weight_its_nearest_half() {
        let dir = temp_dir("f16");
        let (params, info) = tiny_info("gfx906");
        let files = save(&dir, std::slice::from_ref(&params), &info).unwrap();
        let out = store_as(&files, &dir.join("half"), safetensors::Dtype::F16).unwrap();
        assert!(std::fs::metadata(&out.tensors).unwrap().len() < std::fs::metadata(&files.tensors).unwrap().len());
        let (members, info2) = load(&out, "gfx906", "ConvAsm1x1U").unwrap();
        assert_eq!(info2, info);
        let want: Vec<Tensor> = params_to_tensors(&params, &member_prefix(0))
            .into_iter()
            .map(|mut t| {
                t.data.iter_mut().for_each(|v| *v = half::f16::from_f32(*v).to_f32());
                t
            })
            .collect();
        assert_eq!(params_to_tensors(&members[0], &member_prefix(0)), want);
        let text = std::fs::read_to_string(&out.metadata).unwrap();
        assert!(text.contains("\"storage\": \"F16"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn hybrid_encoder_round_trips_and_old_files_load_as_lstm() {
        let dir = temp_dir("hybrid");
        let (_, mut info) = tiny_info("gfx906");
        info.config.encoder = EncoderKind::Hybrid { channels: 5 };
        let params = AttentionParams::init(info.config, 4);
        assert_eq!(params.tensors.len(), 13);
        let files = save(&dir, std::slice::from_ref(&params), &info).unwrap();
        let text = std::fs::read_to_string(&files.metadata).unwrap();
        assert!(
            text.contains("\"encoder\": \"hybrid\"") && text.contains("\"conv_channels\": 5"),
            "{text}"
        );
        let (members, info2) = load(&files, "gfx906", "ConvAsm1x1U").unwrap();
        assert_eq!(members, vec![params.clone()]);
        assert_eq!(info2.config.encoder, EncoderKind::Hybrid { channels: 5 });
        // An unknown encoder, a width this build does not read, missing channels.
        for (from, to, what) in [
            (
                "\"encoder\": \"hybrid\"",
                "\"encoder\": \"transformer\"",
                "expected \"lstm\" or \"hybrid\"",
            ),
            ("\"conv_width\": 3", "\"conv_width\": 5", "width 3 only"),
            (
                "\"conv_channels\": 5",
                "\"conv_channels\": 0",
                "conv_channels is missing",
            ),
        ] {
            let e = parse_info(&text.replace(from, to), "m.json").unwrap_err().to_string();
            assert!(e.contains(what), "{to}: {e}");
        }
        // A plain model's file names no encoder (files from before the hybrid encoder).
        let (plain, plain_info) = tiny_info("gfx906");
        let files = save(&dir, std::slice::from_ref(&plain), &plain_info).unwrap();
        let text = std::fs::read_to_string(&files.metadata).unwrap();
        assert!(!text.contains("encoder") && !text.contains("conv_"), "{text}");
        assert_eq!(
            load(&files, "gfx906", "ConvAsm1x1U").unwrap().1.config.encoder,
            EncoderKind::Lstm
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
