//! `{arch}_metadata.tn.model`: what MIOpen's `immed_mode::Metadata` reads
//! (ROCm/MIOpen 2d1fd997a, `src/conv/heuristics/ai_heuristics.cpp:66-85`).

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, Result};

/// The metadata of one TunaNet model.
#[derive(Debug, Clone)]
pub struct Metadata {
    /// `conv_params_used_as_features`, in the order MIOpen normalises them.
    pub features: Vec<String>,
    /// `num_inputs`, `num_outputs`, `num_solvers`.
    pub num_inputs: usize,
    pub num_outputs: usize,
    pub num_solvers: usize,
    /// `encodings.solver` reversed: the solver name of each output index (after the offset).
    pub solvers: Vec<String>,
    /// `encodings.Direction` (`F`, `B`, `W`), `encodings.Precision` (`FP32`, `FP16`, `BF16`),
    /// `encodings.Layout`.
    pub direction: HashMap<String, i64>,
    pub precision: HashMap<String, i64>,
    pub layout: HashMap<String, i64>,
    /// `stats.overall.features.{mean,std}` and `stats.test.features.{mean,std}`, looked up by the
    /// feature names in [`Metadata::features`] order (MIOpen's `LookupValues`, `:76-83`).
    pub overall_mean: Vec<f32>,
    pub overall_std: Vec<f32>,
    pub test_mean: Vec<f32>,
    pub test_std: Vec<f32>,
}

impl Metadata {
    /// Parses the metadata text; `source` names the file in errors.
    pub fn parse(text: &str, source: &str) -> Result<Metadata> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| Error::format(source, format!("not valid JSON: {e}")))?;
        let err = |detail: String| Error::format(source, detail);
        let at = |path: &str| root.pointer(path).ok_or_else(|| err(format!("missing {path}")));
        let count = |key: &str| -> Result<usize> {
            at(&format!("/{key}"))?
                .as_u64()
                .map(|v| v as usize)
                .ok_or_else(|| err(format!("{key} is not a non-negative integer")))
        };
        let features: Vec<String> = at("/conv_params_used_as_features")?
            .as_array()
            .ok_or_else(|| err("conv_params_used_as_features is not a list".into()))?
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(|| err("a feature name is not text".into())))
            .collect::<Result<_>>()?;
        let encoding = |name: &str| -> Result<HashMap<String, i64>> {
            at(&format!("/encodings/{name}"))?
                .as_object()
                .ok_or_else(|| err(format!("encodings.{name} is not an object")))?
                .iter()
                .map(|(k, v)| {
                    v.as_i64()
                        .map(|i| (k.clone(), i))
                        .ok_or_else(|| err(format!("encodings.{name}.{k} is not an integer")))
                })
                .collect()
        };
        let stats = |which: &str, what: &str| -> Result<Vec<f32>> {
            let path = format!("/stats/{which}/features/{what}");
            let table = at(&path)?;
            features
                .iter()
                .map(|f| {
                    table
                        .get(f)
                        .and_then(Value::as_f64)
                        .map(|v| v as f32)
                        .ok_or_else(|| err(format!("{path} has no number for feature '{f}'")))
                })
                .collect()
        };
        let num_solvers = count("num_solvers")?;
        let num_outputs = count("num_outputs")?;
        let solver_codes = encoding("solver")?;
        let mut solvers = vec![String::new(); num_solvers];
        for (name, &code) in &solver_codes {
            let slot = usize::try_from(code)
                .ok()
                .and_then(|c| solvers.get_mut(c))
                .ok_or_else(|| err(format!("solver '{name}' has code {code}, outside 0..{num_solvers}")))?;
            if !slot.is_empty() {
                return Err(err(format!("solvers '{slot}' and '{name}' share code {code}")));
            }
            *slot = name.clone();
        }
        if let Some(i) = solvers.iter().position(String::is_empty) {
            return Err(err(format!("no solver has code {i} (num_solvers is {num_solvers})")));
        }
        if num_solvers > num_outputs {
            return Err(err(format!("num_solvers {num_solvers} exceeds num_outputs {num_outputs}")));
        }
        Ok(Metadata {
            num_inputs: count("num_inputs")?,
            num_outputs,
            num_solvers,
            solvers,
            direction: encoding("Direction")?,
            precision: encoding("Precision")?,
            layout: encoding("Layout")?,
            overall_mean: stats("overall", "mean")?,
            overall_std: stats("overall", "std")?,
            test_mean: stats("test", "mean")?,
            test_std: stats("test", "std")?,
            features,
        })
    }
}
