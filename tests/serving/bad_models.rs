//! Damaged or unsupported model files give errors naming what is wrong, never a panic.

#[allow(unused_imports)]
use crate::common;

use serde_json::{json, Value};
use tuneinfer::format::frugally::KerasModel;
use tuneinfer::format::metadata::KtnMetadata;
use tuneinfer::seq2seq::{Decoder, Encoder};
use tuneinfer::Error;

fn encoder_json() -> Value {
    let text = std::fs::read_to_string(common::models_dir().join("gfx908_ConvAsm1x1U_encoder.ktn.model")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn parse(v: &Value) -> tuneinfer::Result<KerasModel> {
    KerasModel::parse(&v.to_string(), "test.ktn.model")
}

#[test]
fn unsupported_layers_are_named_with_their_class() {
    // TunaNet uses ReLU and Add, which KTN models never do.
    let err = KerasModel::load(&common::models_dir().join("gfx908.tn.model")).unwrap_err();
    match &err {
        Error::UnsupportedLayer { layer, class, .. } => {
            assert_eq!((layer.as_str(), class.as_str()), ("re_lu", "ReLU"));
        }
        other => panic!("unexpected {other}"),
    }
    assert!(err.to_string().contains("re_lu") && err.to_string().contains("ReLU"));
    // An LSTM with a different activation is unsupported too, with the option named.
    let mut v = encoder_json();
    v["architecture"]["config"]["layers"][2]["config"]["activation"] = json!("relu");
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("'lstm'") && msg.contains("relu"), "{msg}");
}

#[test]
fn wrong_weight_shapes_are_shape_errors() {
    let mut v = encoder_json();
    v["trainable_params"]["lstm"]["recurrent_weights"] = json!([1.0, 2.0, 3.0]);
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("lstm") && msg.contains("recurrent"), "{msg}");
    let mut v = encoder_json();
    v["trainable_params"]["dense"]["weights"] = json!(vec![0.5f32; 32 * 7]);
    // Dense input 7 no longer matches the 8 features of the input layer.
    let model = parse(&v).unwrap();
    let msg = Encoder::from_keras(&model).unwrap_err().to_string();
    assert!(msg.contains("dense") && msg.contains('8') && msg.contains('7'), "{msg}");
}

#[test]
fn corrupt_arrays_and_json_are_format_errors() {
    let mut v = encoder_json();
    v["trainable_params"]["dense"]["weights"] = json!(["not*base64"]);
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("trainable_params.dense.weights"), "{msg}");
    let mut v = encoder_json();
    v["trainable_params"]["dense"]["weights"] = json!(["AAAA"]); // 3 bytes: not whole floats
    assert!(parse(&v).unwrap_err().to_string().contains("float32"));
    // A weight beyond f32's range (infinite once read) is refused with the array named: such a
    // model would otherwise decode NaN scores and fall back to the default silently.
    let mut v = encoder_json();
    let mut weights = vec![json!(0.25); 8 * 32];
    weights[77] = json!(1e39);
    v["trainable_params"]["dense"]["weights"] = Value::Array(weights);
    let msg = parse(&v).unwrap_err().to_string();
    assert!(
        msg.contains("trainable_params.dense.weights") && msg.contains("infinite"),
        "{msg}"
    );
    // Sizes that are zero or overflow are named, not divided by or wrapped.
    let mut v = encoder_json();
    v["architecture"]["config"]["layers"][2]["config"]["units"] = json!(0);
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("units 0"), "{msg}");
    let mut v = encoder_json();
    v["tests"][0]["inputs"][0]["shape"] = json!([99999999999u64, 99999999999u64]);
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("more than 2^64"), "{msg}");
    let mut v = encoder_json();
    v["trainable_params"].as_object_mut().unwrap().remove("lstm_1");
    assert!(parse(&v).unwrap_err().to_string().contains("lstm_1"));
    assert!(KerasModel::parse("{\"architecture\":", "cut.json")
        .unwrap_err()
        .to_string()
        .contains("cut.json"));
    assert!(KerasModel::parse("[]", "list.json").is_err());
    // Every truncation of a real file fails cleanly.
    let text = encoder_json().to_string();
    for cut in (0..text.len()).step_by(text.len() / 97 + 1) {
        assert!(KerasModel::parse(&text[..cut], "cut").is_err());
    }
}

#[test]
fn an_encoder_is_not_a_decoder() {
    let model = parse(&encoder_json()).unwrap();
    let msg = Decoder::from_keras(&model).unwrap_err().to_string();
    assert!(msg.contains("Embedding") || msg.contains("decoder"), "{msg}");
}

#[test]
fn bad_metadata() {
    assert!(KtnMetadata::parse("{}", "m")
        .unwrap_err()
        .to_string()
        .contains("predict_type"));
    let gap = r#"{"predict_type":0,"num_tuning_params":{"fwd":2},"decodings":{"tunings":{"0":"-1","2":"4"}}}"#;
    let msg = KtnMetadata::parse(gap, "m").unwrap_err().to_string();
    assert!(msg.contains("id 1 is missing"), "{msg}");
    let ok = r#"{"predict_type":0,"num_tuning_params":{"fwd":2},"decodings":{"tunings":{"0":"-1","1":"4"}}}"#;
    assert_eq!(KtnMetadata::parse(ok, "m").unwrap().token_values, vec!["-1", "4"]);
}

#[test]
fn a_conv_asm_1x1u_model_with_a_non_integer_token_value_is_refused_at_load() {
    // The metadata parses (values are text), but ConvAsm1x1U's parameters are integers: a
    // damaged value must not silently remove that token from every answer.
    let dir = std::env::temp_dir().join(format!("tuneinfer-bad-token-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    common::copy_gfx908_asm1x1u_model(&dir);
    let meta_path = dir.join("gfx908_ConvAsm1x1U_metadata.ktn.model");
    let mut meta: Value = serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    assert!(meta["decodings"]["tunings"]["5"].is_string());
    let load = || tuneinfer::Predictor::load("gfx908", "ConvAsm1x1U", std::slice::from_ref(&dir));
    assert!(load().is_ok(), "the undamaged copy loads");
    meta["decodings"]["tunings"]["5"] = json!("abc");
    std::fs::write(&meta_path, meta.to_string()).unwrap();
    let e = load().err().expect("a non-integer value must be refused");
    assert_eq!(e.exit_code(), 4, "{e}");
    assert!(
        e.to_string().contains("'abc'") && e.to_string().contains("metadata"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_model_in_an_earlier_directory_is_reported_not_skipped() {
    let (dirs, encoder) = common::damaged_model_before_intact_one("damaged-first-cpu");
    // The second directory alone loads: it is the damage that fails, not the search.
    assert!(tuneinfer::Predictor::load("gfx908", "ConvAsm1x1U", &dirs[1..]).is_ok());
    let e = tuneinfer::Predictor::load("gfx908", "ConvAsm1x1U", &dirs)
        .err()
        .expect("the damaged model comes first and must be reported");
    assert!(e.to_string().contains(&encoder.display().to_string()), "{e}");
    assert_eq!(e.exit_code(), 4, "{e}");
    let _ = std::fs::remove_dir_all(&dirs[0]);
}
