//! Fault injection for every file tuneinfer reads, through the public loaders: damaged copies
//! of real files (truncated at every offset class: headers, inside arrays, the last byte; bit
//! flips; wrong JSON types; huge declared sizes) in a temporary directory must give an error
//! that names the damaged file, never a panic, an abort on allocation or a hang.
//! (`tests/serving/bad_models.rs` covers unsupported layers, wrong shapes and bad base64 of parsed
//! JSON; this file covers the damage classes it lacks, on the loaders.)

#[allow(unused_imports)]
use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tuneinfer::format::sha256;
use tuneinfer::Predictor;

/// Longest a loader may take on a damaged file (an intact model loads in well under a second).
const PATIENCE: Duration = Duration::from_secs(20);

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `load` (which must fail) and checks its error names `file`, in bounded time.
fn fails_naming<T>(what: &str, file: &Path, load: impl FnOnce() -> tuneinfer::Result<T>) -> String {
    let started = Instant::now();
    let result = load();
    assert!(started.elapsed() < PATIENCE, "{what}: took {:?}", started.elapsed());
    let e = match result {
        Ok(_) => panic!("{what}: the damaged file loaded"),
        Err(e) => e.to_string(),
    };
    let name = file.file_name().unwrap().to_string_lossy();
    assert!(e.contains(&*name), "{what}: error does not name {name}: {e}");
    e
}

/// Cut points of every offset class of a `len`-byte file: the first bytes (headers), about
/// `spread` points inside, the last byte.
fn cut_points(len: usize, head: usize, spread: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..head.min(len)).collect();
    cuts.extend((1..spread).map(|k| k * len / spread));
    cuts.push(len - 1);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

// ---- tuneinfer's own weights: safetensors + metadata JSON ----

const ARCH: &str = "gfx900";
const SOLVER: &str = "ConvAsm1x1U";

struct WeightsCopy {
    dir: PathBuf,
    tensors: PathBuf,
    json: PathBuf,
    tensor_bytes: Vec<u8>,
    meta: Value,
}

impl WeightsCopy {
    fn new(name: &str) -> WeightsCopy {
        let dir = temp_dir(name);
        let tensors = dir.join(format!("{ARCH}_{SOLVER}.safetensors"));
        let json = dir.join(format!("{ARCH}_{SOLVER}.json"));
        let tensor_bytes = std::fs::read(common::weights_dir().join(tensors.file_name().unwrap())).unwrap();
        let meta: Value = serde_json::from_str(
            &std::fs::read_to_string(common::weights_dir().join(json.file_name().unwrap())).unwrap(),
        )
        .unwrap();
        WeightsCopy {
            dir,
            tensors,
            json,
            tensor_bytes,
            meta,
        }
    }

    /// Writes `tensors` and `meta`; with `matching_digest`, the JSON's `tensors_sha256` is
    /// that of the (damaged) tensors, so the safetensors parser itself meets the damage.
    fn write(&self, tensors: &[u8], meta: &Value, matching_digest: bool) {
        let mut meta = meta.clone();
        if matching_digest {
            let mut h = sha256::Sha256::new();
            h.update(tensors);
            meta["tensors_sha256"] = json!(sha256::hex(&h.finish()));
        }
        std::fs::write(&self.tensors, tensors).unwrap();
        std::fs::write(&self.json, meta.to_string()).unwrap();
    }

    fn load(&self) -> tuneinfer::Result<Predictor> {
        Predictor::load(ARCH, SOLVER, std::slice::from_ref(&self.dir))
    }

    fn header_len(&self) -> usize {
        u64::from_le_bytes(self.tensor_bytes[..8].try_into().unwrap()) as usize
    }

    /// The tensors file with its JSON header replaced by `header` (padded to 8 bytes).
    fn with_header(&self, header: &Value) -> Vec<u8> {
        let mut text = header.to_string().into_bytes();
        while !text.len().is_multiple_of(8) {
            text.push(b' ');
        }
        let mut out = (text.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(&text);
        out.extend_from_slice(&self.tensor_bytes[8 + self.header_len()..]);
        out
    }

    fn header(&self) -> Value {
        serde_json::from_slice(&self.tensor_bytes[8..8 + self.header_len()]).unwrap()
    }
}

impl Drop for WeightsCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn the_intact_weights_copy_loads() {
    let w = WeightsCopy::new("intact");
    w.write(&w.tensor_bytes, &w.meta, false);
    assert!(w.load().is_ok());
}

#[test]
fn safetensors_declaring_huge_sizes_are_refused_naming_the_file() {
    let w = WeightsCopy::new("huge-sizes");
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for claimed in [1u64 << 60, u64::MAX, u64::MAX - 7, w.tensor_bytes.len() as u64 - 7] {
        let mut b = w.tensor_bytes.clone();
        b[..8].copy_from_slice(&claimed.to_le_bytes());
        cases.push((format!("header length {claimed}"), b));
    }
    let name = w
        .header()
        .as_object()
        .unwrap()
        .keys()
        .find(|k| *k != "__metadata__")
        .unwrap()
        .clone();
    for (field, value) in [
        ("data_offsets", json!([0u64, 1u64 << 60])),
        ("data_offsets", json!([u64::MAX, u64::MAX])),
        ("data_offsets", json!([1u64 << 62, 1u64 << 61])),
        ("shape", json!([1u64 << 40, 1u64 << 40])),
        ("shape", json!([u64::MAX, 2])),
        ("shape", json!([1_000_000_000u64])),
        ("shape", json!(vec![1_000_000_000u64; 64])),
        ("shape", json!("big")),
        ("dtype", json!(32)),
    ] {
        let mut h = w.header();
        h[&name][field] = value.clone();
        cases.push((format!("{name}.{field} = {value}"), w.with_header(&h)));
    }
    for (what, bytes) in cases {
        w.write(&bytes, &w.meta, true);
        fails_naming(&what, &w.tensors, || w.load());
    }
}

#[test]
fn truncated_and_flipped_safetensors_are_refused_naming_the_file() {
    let w = WeightsCopy::new("truncated");
    let len = w.tensor_bytes.len();
    let header_end = 8 + w.header_len();
    let mut cuts = cut_points(len, 16, 24);
    // Inside the JSON header and at its end.
    cuts.extend((1..12).map(|k| 8 + k * w.header_len() / 12));
    cuts.extend([header_end - 1, header_end, header_end + 1]);
    for cut in cuts {
        // The checksum matching (the parser meets the cut) and not (the checksum does).
        w.write(&w.tensor_bytes[..cut], &w.meta, true);
        fails_naming(&format!("cut at {cut}"), &w.tensors, || w.load());
        w.write(&w.tensor_bytes[..cut], &w.meta, false);
        let e = fails_naming(&format!("cut at {cut}, old digest"), &w.tensors, || w.load());
        assert!(e.contains("sha256") || e.contains("damaged"), "{e}");
    }
    // Bit flips in the header: refused naming the file, or (a flip in padding or a digit of an
    // equivalent value) loaded; never a panic.
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..60 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let at = (rng as usize) % header_end;
        let mut b = w.tensor_bytes.clone();
        b[at] ^= 1 << (rng >> 60 & 7);
        w.write(&b, &w.meta, true);
        if let Err(e) = w.load() {
            let e = e.to_string();
            assert!(e.contains("safetensors") || e.contains(".json"), "flip at {at}: {e}");
        }
    }
    // A flip in the tensor data that makes a weight infinite is named.
    let mut b = w.tensor_bytes.clone();
    b[header_end..header_end + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    w.write(&b, &w.meta, true);
    let e = fails_naming("an infinite weight", &w.tensors, || w.load());
    assert!(e.contains("infinite"), "{e}");
}

#[test]
fn weights_metadata_with_wrong_types_and_huge_sizes_is_refused_naming_the_file() {
    let w = WeightsCopy::new("meta-types");
    let mut cases: Vec<(String, Value)> = Vec::new();
    let set = |path: &[&str], value: Value| {
        let mut m = w.meta.clone();
        let mut at = &mut m;
        for key in &path[..path.len() - 1] {
            at = &mut at[*key];
        }
        at[path[path.len() - 1]] = value.clone();
        (format!("{} = {value}", path.join(".")), m)
    };
    for (path, value) in [
        (&["format"][..], json!(7)),
        (&["version"][..], json!("1")),
        (&["version"][..], json!(1u64 << 60)),
        (&["arch"][..], json!(["gfx900"])),
        (&["solver"][..], Value::Null),
        (&["model"][..], json!("small")),
        (&["model", "vocab"][..], json!(1_000_000_000u64)),
        (&["model", "hidden"][..], json!(1u64 << 60)),
        (&["model", "steps"][..], json!(-1)),
        (&["model", "seq_len"][..], json!(8.5)),
        (&["model", "embed"][..], json!(0)),
        (&["members"][..], json!(1_000_000_000u64)),
        (&["members"][..], json!("5")),
        (&["tokens"][..], json!({"0": "-1"})),
        (&["tokens"][..], json!([1, 2, 3])),
        (&["features"][..], json!([])),
        (&["features", "mean"][..], json!("0.5")),
        (&["features", "std"][..], json!([0.0])),
        (&["tensors_sha256"][..], json!(42)),
    ] {
        cases.push(set(path, value));
    }
    for key in ["format", "model", "tokens", "features", "tensors_sha256", "arch"] {
        let mut m = w.meta.clone();
        m.as_object_mut().unwrap().remove(key);
        cases.push((format!("no {key}"), m));
    }
    for (what, meta) in cases {
        w.write(&w.tensor_bytes, &meta, false);
        fails_naming(&what, &w.json, || w.load());
    }
    // Every truncation of the JSON text.
    let text = w.meta.to_string();
    for cut in cut_points(text.len(), 8, 40) {
        std::fs::write(&w.json, &text[..cut]).unwrap();
        fails_naming(&format!("json cut at {cut}"), &w.json, || w.load());
    }
}

// ---- MIOpen's KTN models (frugally-deep JSON + metadata) ----

const KTN_PARTS: [&str; 3] = ["encoder", "decoder", "metadata"];

fn ktn_path(dir: &Path, part: &str) -> PathBuf {
    dir.join(format!("gfx908_ConvAsm1x1U_{part}.ktn.model"))
}

fn load_ktn(dir: &Path) -> tuneinfer::Result<Predictor> {
    Predictor::load("gfx908", "ConvAsm1x1U", &[dir.to_path_buf()])
}

#[test]
fn truncated_ktn_files_are_refused_naming_the_file() {
    let dir = temp_dir("ktn-cuts");
    common::copy_gfx908_asm1x1u_model(&dir);
    assert!(load_ktn(&dir).is_ok());
    for part in KTN_PARTS {
        let path = ktn_path(&dir, part);
        let good = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&good).into_owned();
        // The last byte that matters (the files end in a newline, which JSON may lose).
        let significant = text.trim_end().len();
        let mut cuts = cut_points(significant, 4, if part == "metadata" { 60 } else { 20 });
        // Inside the float arrays: just after an opening quote of a base64 chunk.
        if let Some(at) = text.find("\"weights\": [\"").or_else(|| text.find("\"weights\":[\"")) {
            cuts.extend([at + 14, at + 100]);
        }
        for cut in cuts {
            std::fs::write(&path, &good[..cut]).unwrap();
            fails_naming(&format!("{part} cut at {cut}"), &path, || load_ktn(&dir));
        }
        std::fs::write(&path, &good).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A JSON value of a KTN file, changed by `damage`, written over the copy.
fn damage_json(path: &Path, good: &Value, damage: impl FnOnce(&mut Value)) {
    let mut v = good.clone();
    damage(&mut v);
    std::fs::write(path, v.to_string()).unwrap();
}

#[test]
fn ktn_files_declaring_huge_sizes_or_wrong_types_are_refused_naming_the_file() {
    let dir = temp_dir("ktn-huge");
    common::copy_gfx908_asm1x1u_model(&dir);
    let read = |part: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(ktn_path(&dir, part)).unwrap()).unwrap()
    };
    let (encoder, decoder, metadata) = (read("encoder"), read("decoder"), read("metadata"));
    let layer_index = |model: &Value, class: &str| {
        model["architecture"]["config"]["layers"]
            .as_array()
            .unwrap()
            .iter()
            .position(|l| l["class_name"] == class)
            .unwrap_or_else(|| panic!("no {class} layer"))
    };
    let enc_lstm = layer_index(&encoder, "LSTM");
    let enc_input = layer_index(&encoder, "InputLayer");
    let dec_embedding = layer_index(&decoder, "Embedding");
    type Damage = Box<dyn Fn(&mut Value)>;
    let encoder_cases: Vec<(&str, Damage)> = vec![
        (
            "LSTM units 10^9",
            Box::new(move |v| {
                v["architecture"]["config"]["layers"][enc_lstm]["config"]["units"] = json!(1_000_000_000u64)
            }),
        ),
        (
            "LSTM units 2^63",
            Box::new(move |v| v["architecture"]["config"]["layers"][enc_lstm]["config"]["units"] = json!(1u64 << 63)),
        ),
        (
            "LSTM units as text",
            Box::new(move |v| v["architecture"]["config"]["layers"][enc_lstm]["config"]["units"] = json!("128")),
        ),
        (
            "input shape 10^9 x 10^9",
            Box::new(move |v| {
                v["architecture"]["config"]["layers"][enc_input]["config"]["batch_input_shape"] =
                    json!([null, 1_000_000_000u64, 1_000_000_000u64])
            }),
        ),
        (
            "input shape as an object",
            Box::new(move |v| {
                v["architecture"]["config"]["layers"][enc_input]["config"]["batch_input_shape"] = json!({})
            }),
        ),
        (
            "layers as an object",
            Box::new(|v| v["architecture"]["config"]["layers"] = json!({"a": 1})),
        ),
        (
            "trainable_params as a list",
            Box::new(|v| v["trainable_params"] = json!([1, 2])),
        ),
        (
            "test shape of 10^9 elements",
            Box::new(|v| v["tests"][0]["inputs"][0]["shape"] = json!([1_000_000_000u64])),
        ),
        (
            "test values as a number",
            Box::new(|v| v["tests"][0]["inputs"][0]["values"] = json!(3)),
        ),
        (
            "an enormous base64 chunk list",
            Box::new(|v| {
                // 400,000 chunks of one float each: ~4 MB of JSON declaring 400,000 weights.
                v["trainable_params"]["lstm"]["weights"] = Value::Array(vec![json!("AAAAAA=="); 400_000]);
            }),
        ),
        (
            "one enormous base64 chunk",
            Box::new(|v| v["trainable_params"]["lstm"]["weights"] = json!(["AAAA".repeat(1_000_000)])),
        ),
    ];
    let decoder_cases: Vec<(&str, Damage)> = vec![
        (
            "Embedding 10^9 x 10^9",
            Box::new(move |v| {
                let cfg = &mut v["architecture"]["config"]["layers"][dec_embedding]["config"];
                cfg["input_dim"] = json!(1_000_000_000u64);
                cfg["output_dim"] = json!(1_000_000_000u64);
            }),
        ),
        (
            "Embedding 2^32 x 2^32 (wraps to 0 in 64 bits)",
            Box::new(move |v| {
                let cfg = &mut v["architecture"]["config"]["layers"][dec_embedding]["config"];
                cfg["input_dim"] = json!(1u64 << 32);
                cfg["output_dim"] = json!(1u64 << 32);
            }),
        ),
        (
            "Embedding input_dim as a list",
            Box::new(move |v| {
                v["architecture"]["config"]["layers"][dec_embedding]["config"]["input_dim"] = json!([38])
            }),
        ),
    ];
    let metadata_cases: Vec<(&str, Damage)> = vec![
        (
            "num_tuning_params 10^9",
            Box::new(|v| v["num_tuning_params"]["fwd"] = json!(1_000_000_000u64)),
        ),
        (
            "token id 10^9",
            Box::new(|v| v["decodings"]["tunings"]["1000000000"] = json!("4")),
        ),
        (
            "tunings as a list",
            Box::new(|v| v["decodings"]["tunings"] = json!(["-1", "4"])),
        ),
        ("predict_type as text", Box::new(|v| v["predict_type"] = json!("0"))),
        (
            "a token value as an object",
            Box::new(|v| v["decodings"]["tunings"]["3"] = json!({"v": 4})),
        ),
    ];
    for (part, good, cases) in [
        ("encoder", &encoder, encoder_cases),
        ("decoder", &decoder, decoder_cases),
        ("metadata", &metadata, metadata_cases),
    ] {
        let path = ktn_path(&dir, part);
        for (what, damage) in cases {
            damage_json(&path, good, damage);
            fails_naming(&format!("{part}: {what}"), &path, || load_ktn(&dir));
        }
        std::fs::write(&path, good.to_string()).unwrap();
    }
    assert!(load_ktn(&dir).is_ok(), "the restored copy loads");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- CK catalogues and perf databases ----

#[test]
fn damaged_ck_catalogues_are_refused_naming_the_file() {
    use tuneinfer::problem::{Direction, Precision};
    use tuneinfer::solvers::ck::catalogue::Catalogue;
    let dir = temp_dir("ck");
    let good = std::fs::read(common::ck_dir().join("bwd_f32.tsv")).unwrap();
    let path = dir.join("bwd_f32.tsv");
    let load = || Catalogue::load(&path, Direction::BackwardData, Precision::Fp32);
    std::fs::write(&path, &good).unwrap();
    assert!(load().is_ok());
    let text = String::from_utf8(good.clone()).unwrap();
    let second_line = text.find('\n').unwrap() + 1;
    // Cuts inside the header, inside the first instance (a cut after a whole line leaves a
    // shorter valid catalogue, so the others are only required not to panic).
    for cut in (0..second_line).chain([second_line + 10, second_line + 200]) {
        std::fs::write(&path, &good[..cut]).unwrap();
        fails_naming(&format!("cut at {cut}"), &path, load);
    }
    for cut in cut_points(good.len(), 0, 40) {
        std::fs::write(&path, &good[..cut]).unwrap();
        if let Err(e) = load() {
            assert!(e.to_string().contains("bwd_f32.tsv"), "cut at {cut}: {e}");
        }
    }
    // Not UTF-8, a number past u64, a huge token count.
    let mut binary = good.clone();
    binary[second_line + 3] = 0xff;
    let huge = text.replacen("\t256\t", "\t99999999999999999999999\t", 1);
    let many = {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let mut cols: Vec<String> = lines[1].split('\t').map(String::from).collect();
        cols[3] = "1000000000".into();
        lines[1] = cols.join("\t");
        lines.join("\n")
    };
    for (what, bytes) in [
        ("not UTF-8", binary),
        ("huge number", huge.into_bytes()),
        ("10^9 tokens", many.into_bytes()),
    ] {
        std::fs::write(&path, &bytes).unwrap();
        fails_naming(what, &path, load);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_perf_databases_are_refused_naming_the_file_or_read_partly() {
    use tuneinfer::data::{perfdb, textdb};
    let dir = temp_dir("perfdb");
    let good = std::fs::read(common::perfdb_dir().join("gfx1030_36.db")).unwrap();
    let path = dir.join("gfx1030_36.db");
    // sqlite: the 100-byte header, page boundaries, inside pages, the last byte.
    let page = u16::from_be_bytes([good[16], good[17]]) as usize;
    let mut cuts: Vec<usize> = vec![0, 1, 15, 16, 99, 100, 101];
    cuts.extend((1..8).map(|k| k * page));
    cuts.extend([page + 1, 3 * page - 1, good.len() / 2, good.len() - 1]);
    for cut in cuts {
        std::fs::write(&path, &good[..cut]).unwrap();
        let started = Instant::now();
        let result = perfdb::solver_rows(&path, "ConvOclDirectFwd");
        assert!(started.elapsed() < PATIENCE, "cut at {cut}");
        if let Err(e) = result {
            assert!(e.to_string().contains("gfx1030_36.db"), "cut at {cut}: {e}");
        }
    }
    for cut in [0usize, 1, 16, 100] {
        std::fs::write(&path, &good[..cut]).unwrap();
        fails_naming(&format!("sqlite cut at {cut}"), &path, || {
            perfdb::solver_rows(&path, "ConvOclDirectFwd")
        });
    }
    // Bit flips in the header and the schema page.
    for at in [0usize, 16, 17, 18, 24, 28, 40, 44, 52, 56, 96, 100, 105, 200, page - 1] {
        let mut b = good.clone();
        b[at] ^= 0x41;
        std::fs::write(&path, &b).unwrap();
        let started = Instant::now();
        if let Err(e) = perfdb::solver_rows(&path, "ConvOclDirectFwd") {
            assert!(e.to_string().contains("gfx1030_36.db"), "flip at {at}: {e}");
        }
        assert!(started.elapsed() < PATIENCE, "flip at {at}");
    }
    // A text database that is not UTF-8 is named.
    let text_path = dir.join("gfx906_60.2019.cd.pdb.txt");
    let mut text = std::fs::read(common::perfdb_dir().join("history/gfx906_60.2019.cd.pdb.txt")).unwrap();
    text.truncate(5000);
    text[4000] = 0xfe;
    std::fs::write(&text_path, &text).unwrap();
    fails_naming("text db not UTF-8", &text_path, || {
        textdb::solver_rows(&text_path, "ConvAsm1x1U")
    });
    let _ = std::fs::remove_dir_all(&dir);
}
