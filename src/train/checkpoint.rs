//! Training checkpoints: one safetensors file per ensemble member, written after every epoch,
//! read back by `--resume` (same data and sizes).

use super::*;

const CHECKPOINT_FORMAT: &str = "tuneinfer-train-checkpoint";

pub(super) fn save_checkpoint(
    path: &Path,
    s: &State,
    data_hash: &str,
    tokens: &TokenTable,
    transform: &FeatureTransform,
    opts: &TrainOptions,
) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::format::create_dir(dir)?;
    }
    let mut tensors: Vec<Tensor> = params_to_tensors(&s.params, "param.");
    tensors.extend(params_to_tensors(&s.best, "best."));
    tensors.extend(params_to_tensors(&s.average, "average."));
    tensors.extend(params_to_tensors(&s.adam.m, "adam_m."));
    tensors.extend(params_to_tensors(&s.adam.v, "adam_v."));
    let c = s.params.config;
    let state = json!({
        "epoch": s.epoch, "lr": s.lr, "best_loss": if s.best_loss.is_finite() { s.best_loss } else { -1.0 },
        "best_epoch": s.best_epoch, "bad_epochs": s.bad_epochs, "elapsed_s": s.elapsed_s,
        "samples_seen": s.samples_seen, "adam_step": s.adam.step, "history": s.history,
        "data_sha256": data_hash, "tokens": tokens.token_values, "token_positions": tokens.token_positions(),
        "model": {"steps": c.steps, "hidden": c.hidden, "embed": c.embed, "vocab": c.vocab, "seq_len": c.seq_len,
                  "encoder": c.encoder.name(), "conv_channels": c.encoder.conv_channels()},
        "mean": transform.mean, "std": transform.std,
        "averaging": {"ema": opts.ema, "weight_decay": opts.weight_decay},
    });
    let mut meta = BTreeMap::new();
    meta.insert("format".to_string(), CHECKPOINT_FORMAT.to_string());
    meta.insert("version".to_string(), weights::VERSION.to_string());
    meta.insert("state".to_string(), state.to_string());
    safetensors::write(path, &tensors, &meta)
}

pub(super) fn load_checkpoint(
    path: &Path,
    config: AttentionConfig,
    data_hash: &str,
    tokens: &TokenTable,
    opts: &TrainOptions,
) -> Result<State> {
    let src = path.display().to_string();
    let err = |d: String| Error::format(src.clone(), d);
    let (tensors, meta) = safetensors::read(path)?;
    if meta.get("format").map(String::as_str) != Some(CHECKPOINT_FORMAT) {
        return Err(err("not a tuneinfer training checkpoint".into()));
    }
    if meta.get("version").map(String::as_str) != Some(&weights::VERSION.to_string()) {
        return Err(err(format!("checkpoint version is not {}", weights::VERSION)));
    }
    let st: Value = serde_json::from_str(meta.get("state").map(String::as_str).unwrap_or(""))
        .map_err(|e| err(format!("checkpoint state is not JSON: {e}")))?;
    if st["data_sha256"].as_str() != Some(data_hash) {
        return Err(err(
            "the checkpoint was trained on other data (data hash differs)".into()
        ));
    }
    let m = &st["model"];
    let same = m["hidden"].as_u64() == Some(config.hidden as u64)
        && m["embed"].as_u64() == Some(config.embed as u64)
        && m["vocab"].as_u64() == Some(config.vocab as u64)
        && st["tokens"] == json!(tokens.token_values);
    // Checkpoints from before the hybrid encoder have no record: the plain LSTM encoder.
    let encoder = m["encoder"].as_str().unwrap_or("lstm");
    let channels = m["conv_channels"].as_u64().map(|c| c as usize);
    if encoder != config.encoder.name() || channels != config.encoder.conv_channels() {
        return Err(Error::Usage(format!(
            "{src} was trained with --encoder {encoder}{}; resume with the same encoder",
            channels.map_or(String::new(), |c| format!(" --conv-channels {c}"))
        )));
    }
    if !same {
        return Err(err(format!(
            "the checkpoint's model (hidden {}, embed {}, vocabulary {}) differs from the requested one \
             (hidden {}, embed {}, vocabulary {})",
            m["hidden"], m["embed"], m["vocab"], config.hidden, config.embed, config.vocab
        )));
    }
    // The average and the decay shape every step: a resumed run must keep them (checkpoints from
    // before they existed have no record and are taken as they are).
    let averaging = &st["averaging"];
    let recorded = |key: &str| averaging[key].as_f64().map(|v| v as f32);
    let (ema, decay) = (recorded("ema"), recorded("weight_decay"));
    if ema.is_some_and(|e| e != opts.ema) || decay.is_some_and(|d| d != opts.weight_decay) {
        return Err(Error::Usage(format!(
            "{src} was trained with --ema {} --weight-decay {}; resume with the same values",
            ema.map_or("?".to_string(), |v| v.to_string()),
            decay.map_or("?".to_string(), |v| v.to_string())
        )));
    }
    let get = |prefix: &str| params_from_tensors(config, &tensors, prefix, &src);
    let params = get("param.")?;
    let mut adam = Adam::new(&params);
    adam.m = get("adam_m.")?;
    adam.v = get("adam_v.")?;
    adam.step = st["adam_step"].as_u64().unwrap_or(0);
    let best_loss = st["best_loss"].as_f64().filter(|&l| l >= 0.0).unwrap_or(f64::INFINITY);
    let n = |k: &str| st[k].as_u64().unwrap_or(0) as usize;
    Ok(State {
        best: get("best.")?,
        // Checkpoints written before the average existed start it from the weights.
        average: get("average.").or_else(|_| get("param."))?,
        params,
        adam,
        epoch: n("epoch"),
        lr: st["lr"].as_f64().unwrap_or(0.0) as f32,
        best_loss,
        best_epoch: n("best_epoch"),
        bad_epochs: n("bad_epochs"),
        elapsed_s: st["elapsed_s"].as_f64().unwrap_or(0.0),
        samples_seen: st["samples_seen"].as_u64().unwrap_or(0),
        history: st["history"].as_array().cloned().unwrap_or_default(),
    })
}
