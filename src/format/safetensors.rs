//! safetensors, read and written by hand: an 8-byte little-endian header length, a JSON header
//! `{"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//! "__metadata__": {"key": "text"}}` padded with spaces to 8 bytes, then the raw little-endian
//! tensor bytes. Tensors are F32, or F16 (IEEE half, stored by [`to_bytes_as`] to halve a model's
//! size; read back as the exact f32 of each half value).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// One named f32 tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// How tensor values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F32,
    /// IEEE binary16, rounded to nearest even.
    F16,
}

impl Dtype {
    fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "F32",
            Dtype::F16 => "F16",
        }
    }

    fn bytes(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 => 2,
        }
    }
}

/// Serialises tensors (in the given order) and string metadata, as F32.
pub fn to_bytes(tensors: &[Tensor], metadata: &BTreeMap<String, String>) -> Vec<u8> {
    to_bytes_as(tensors, metadata, Dtype::F32)
}

/// Serialises tensors (in the given order) and string metadata, storing every value as `dtype`.
pub fn to_bytes_as(tensors: &[Tensor], metadata: &BTreeMap<String, String>, dtype: Dtype) -> Vec<u8> {
    let mut header = Map::new();
    if !metadata.is_empty() {
        header.insert("__metadata__".into(), json!(metadata));
    }
    let mut offset = 0usize;
    for t in tensors {
        let bytes = t.data.len() * dtype.bytes();
        header.insert(
            t.name.clone(),
            json!({"dtype": dtype.name(), "shape": t.shape, "data_offsets": [offset, offset + bytes]}),
        );
        offset += bytes;
    }
    let mut text = Value::Object(header).to_string().into_bytes();
    while !text.len().is_multiple_of(8) {
        text.push(b' ');
    }
    let mut out = Vec::with_capacity(8 + text.len() + offset);
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(&text);
    for t in tensors {
        for &v in &t.data {
            match dtype {
                Dtype::F32 => out.extend_from_slice(&v.to_le_bytes()),
                Dtype::F16 => out.extend_from_slice(&half::f16::from_f32(v).to_le_bytes()),
            }
        }
    }
    out
}

/// The dtype of every tensor in safetensors bytes (`None` when there are none or they differ,
/// or the bytes do not parse).
pub fn stored_dtype(bytes: &[u8]) -> Option<Dtype> {
    let (len, rest) = bytes.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    let header: Value = serde_json::from_slice(rest.get(..len)?).ok()?;
    let mut found = None;
    for (name, entry) in header.as_object()? {
        if name == "__metadata__" {
            continue;
        }
        let d = match entry.get("dtype")?.as_str()? {
            "F32" => Dtype::F32,
            "F16" => Dtype::F16,
            _ => return None,
        };
        if found.is_some_and(|f| f != d) {
            return None;
        }
        found = Some(d);
    }
    found
}

/// Parses safetensors bytes; `source` names the file in errors. Tensors come back in data order.
pub fn from_bytes(bytes: &[u8], source: &str) -> Result<(Vec<Tensor>, BTreeMap<String, String>)> {
    let err = |d: String| Error::format(source, format!("not a valid safetensors file: {d}"));
    if bytes.len() < 8 {
        return Err(err(format!(
            "{} bytes, shorter than the 8-byte header length",
            bytes.len()
        )));
    }
    let mut len8 = [0u8; 8];
    len8.copy_from_slice(&bytes[..8]);
    let header_len = u64::from_le_bytes(len8);
    let data_start = 8u64
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len() as u64)
        .ok_or_else(|| {
            err(format!(
                "header length {header_len} exceeds the file size {}",
                bytes.len()
            ))
        })? as usize;
    let header: Value =
        serde_json::from_slice(&bytes[8..data_start]).map_err(|e| err(format!("header is not JSON: {e}")))?;
    let Value::Object(header) = header else {
        return Err(err("header is not a JSON object".into()));
    };
    let data = &bytes[data_start..];
    let mut metadata = BTreeMap::new();
    let mut tensors = Vec::new();
    let mut ranges = Vec::new();
    for (name, entry) in &header {
        if name == "__metadata__" {
            let Value::Object(m) = entry else {
                return Err(err("__metadata__ is not an object".into()));
            };
            for (k, v) in m {
                let s = v.as_str().ok_or_else(|| err(format!("__metadata__.{k} is not text")))?;
                metadata.insert(k.clone(), s.to_string());
            }
            continue;
        }
        let dtype = match entry.get("dtype").and_then(Value::as_str).unwrap_or("") {
            "F32" => Dtype::F32,
            "F16" => Dtype::F16,
            other => {
                return Err(err(format!(
                    "tensor '{name}': dtype '{other}', only F32 and F16 are supported"
                )))
            }
        };
        let shape: Vec<usize> = entry
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|d| d.as_u64().map(|d| d as usize))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| err(format!("tensor '{name}': 'shape' is not a list of sizes")))?;
        let offs: Vec<usize> = entry
            .get("data_offsets")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|d| d.as_u64().map(|d| d as usize))
                    .collect::<Option<Vec<_>>>()
            })
            .filter(|o| o.len() == 2 && o[0] <= o[1] && o[1] <= data.len())
            .ok_or_else(|| {
                err(format!(
                    "tensor '{name}': 'data_offsets' missing or outside the {} data bytes (truncated file?)",
                    data.len()
                ))
            })?;
        let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if count.and_then(|c| c.checked_mul(dtype.bytes())) != Some(offs[1] - offs[0]) {
            return Err(err(format!(
                "tensor '{name}': shape {shape:?} does not match {} data bytes",
                offs[1] - offs[0]
            )));
        }
        let raw = &data[offs[0]..offs[1]];
        let values = match dtype {
            Dtype::F32 => raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            Dtype::F16 => raw
                .chunks_exact(2)
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        };
        ranges.push((offs[0], offs[1]));
        tensors.push((
            offs[0],
            Tensor {
                name: name.clone(),
                shape,
                data: values,
            },
        ));
    }
    ranges.sort_unstable();
    if ranges.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err(err("tensor data ranges overlap".into()));
    }
    tensors.sort_by_key(|(o, _)| *o);
    Ok((tensors.into_iter().map(|(_, t)| t).collect(), metadata))
}

/// Writes a file atomically (temporary file, then rename).
pub fn write(path: &Path, tensors: &[Tensor], metadata: &BTreeMap<String, String>) -> Result<()> {
    write_bytes_atomic(path, &to_bytes(tensors, metadata))
}

pub fn read(path: &Path) -> Result<(Vec<Tensor>, BTreeMap<String, String>)> {
    let bytes = super::bundle::read(path).map_err(|e| Error::io(path, e))?;
    from_bytes(&bytes, &path.display().to_string())
}

/// Replaces `path` only once all bytes are written (see [`crate::format::write_file_atomic`]).
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::format::write_file_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Vec<Tensor>, BTreeMap<String, String>) {
        let t = vec![
            Tensor {
                name: "b".into(),
                shape: vec![2, 3],
                data: vec![1.0, -2.0, 3.5, 0.0, 1e-8, f32::MAX],
            },
            Tensor {
                name: "a".into(),
                shape: vec![1],
                data: vec![7.0],
            },
        ];
        let mut m = BTreeMap::new();
        m.insert("format".into(), "test".into());
        (t, m)
    }

    #[test]
    fn round_trip() {
        let (t, m) = sample();
        let bytes = to_bytes(&t, &m);
        assert_eq!((8 + u64::from_le_bytes(bytes[..8].try_into().unwrap())) % 8, 0);
        let (t2, m2) = from_bytes(&bytes, "x").unwrap();
        assert_eq!((t2, m2), (t, m));
    }

    #[test]
    fn f16_round_trip_is_each_values_nearest_half() {
        let (t, m) = sample();
        let bytes = to_bytes_as(&t, &m, Dtype::F16);
        assert_eq!(stored_dtype(&bytes), Some(Dtype::F16));
        assert_eq!(stored_dtype(&to_bytes(&t, &m)), Some(Dtype::F32));
        let (t2, m2) = from_bytes(&bytes, "x").unwrap();
        assert_eq!(m2, m);
        // Hand-derived: 1, -2, 3.5 and 7 are halves; 1e-8 is below the smallest subnormal half
        // (2^-24 = 5.96e-8) and rounds to 0; f32::MAX overflows to infinity.
        assert_eq!(t2[0].data[..4], [1.0, -2.0, 3.5, 0.0]);
        assert_eq!(t2[0].data[4], 0.0);
        assert!(t2[0].data[5].is_infinite());
        assert_eq!(t2[1].data, [7.0]);
        // 1/3 as a half: 0x3555 = (1 + 341/1024) / 4 = 1365/4096.
        let third = vec![Tensor {
            name: "t".into(),
            shape: vec![1],
            data: vec![1.0 / 3.0],
        }];
        let (t3, _) = from_bytes(&to_bytes_as(&third, &BTreeMap::new(), Dtype::F16), "x").unwrap();
        assert_eq!(t3[0].data, [1365.0 / 4096.0]);
    }

    #[test]
    fn damaged_files_give_clear_errors() {
        let (t, m) = sample();
        let bytes = to_bytes(&t, &m);
        let truncated = from_bytes(&bytes[..bytes.len() - 3], "w.safetensors")
            .unwrap_err()
            .to_string();
        assert!(
            truncated.contains("w.safetensors") && truncated.contains("data_offsets"),
            "{truncated}"
        );
        assert!(from_bytes(&bytes[..5], "w")
            .unwrap_err()
            .to_string()
            .contains("shorter"));
        let mut big = bytes.clone();
        big[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(from_bytes(&big, "w").unwrap_err().to_string().contains("header length"));
        let mut garbled = bytes.clone();
        garbled[9] = b'#';
        assert!(from_bytes(&garbled, "w").unwrap_err().to_string().contains("not JSON"));
    }
}
