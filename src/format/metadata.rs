//! KernelTuningNet metadata (`*_metadata.ktn.model`): how many parameters each direction or
//! kernel type has, and the value of every token id.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// Parsed KTN metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct KtnMetadata {
    /// 0: the sequence length is fixed per direction; 1: the first value names a kernel type
    /// and the sequence length is `num_tuning_params[that type]`.
    pub predict_type: u32,
    /// Number of tuning parameters per direction (`fwd`, `bwd`, `wrw`) or per kernel type.
    pub num_tuning_params: BTreeMap<String, usize>,
    /// Value text of each token id (index = token id). `"-1"` ends a sequence.
    pub token_values: Vec<String>,
}

impl KtnMetadata {
    pub fn load(path: &Path) -> Result<KtnMetadata> {
        let text = crate::format::read_text(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, source: &str) -> Result<KtnMetadata> {
        let err = |d: String| Error::format(source, d);
        let root: Value = serde_json::from_str(text).map_err(|e| err(format!("not valid JSON: {e}")))?;
        let predict_type = root
            .get("predict_type")
            .and_then(Value::as_u64)
            .filter(|&p| p <= 1)
            .ok_or_else(|| err("'predict_type' is missing or not 0 or 1".into()))? as u32;
        let counts = root
            .get("num_tuning_params")
            .and_then(Value::as_object)
            .ok_or_else(|| err("'num_tuning_params' is missing or not an object".into()))?;
        let mut num_tuning_params = BTreeMap::new();
        for (k, v) in counts {
            let n = v
                .as_u64()
                .filter(|&n| n > 0 && n <= 64)
                .ok_or_else(|| err(format!("num_tuning_params.{k} is not an integer in 1..64")))?;
            num_tuning_params.insert(k.clone(), n as usize);
        }
        let tunings = root
            .get("decodings")
            .and_then(|d| d.get("tunings"))
            .and_then(Value::as_object)
            .ok_or_else(|| err("'decodings.tunings' is missing or not an object".into()))?;
        let mut token_values = vec![None; tunings.len()];
        for (k, v) in tunings {
            let id: usize = k.parse().ok().filter(|&i| i < tunings.len()).ok_or_else(|| {
                let n = tunings.len();
                let missing = (0..n).find(|i| !tunings.contains_key(&i.to_string()));
                err(match missing {
                    Some(gap) if k.parse::<usize>().is_ok() => {
                        format!("token ids must be 0..{n} without gaps: id {gap} is missing (found '{k}')")
                    }
                    _ => format!("token id '{k}' is not an integer below {n}"),
                })
            })?;
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(err(format!("token {k}: value is neither text nor a number"))),
            };
            token_values[id] = Some(value);
        }
        let token_values: Vec<String> = token_values
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| err(format!("token id {i} has no value"))))
            .collect::<Result<_>>()?;
        if token_values.is_empty() {
            return Err(err("the vocabulary is empty".into()));
        }
        Ok(KtnMetadata {
            predict_type,
            num_tuning_params,
            token_values,
        })
    }
}
