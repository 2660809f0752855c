//! Walking a frugally-deep functional graph as the chain of layers KTN models are.

use crate::error::{Error, Result};
use crate::format::frugally::{KerasModel, Layer, TensorRef};

/// The single layer that consumes `name`'s first output, if any.
pub(super) fn next_in_chain<'m>(model: &'m KerasModel, name: &str) -> Result<Option<&'m Layer>> {
    let consumers: Vec<&Layer> = model
        .layers
        .iter()
        .filter(|l| l.inbound.first().is_some_and(|r| r.layer == name))
        .collect();
    match consumers.len() {
        0 => Ok(None),
        1 => Ok(Some(consumers[0])),
        _ => Err(Error::format(
            &model.source,
            format!("layer '{name}' feeds several layers; only a chain is supported"),
        )),
    }
}

/// Error unless `refs` equals `want` (layer names and tensor indices), naming `what`.
pub(super) fn expect_refs(model: &KerasModel, what: &str, refs: &[TensorRef], want: &[(&str, usize)]) -> Result<()> {
    let same = refs.len() == want.len()
        && refs
            .iter()
            .zip(want)
            .all(|(r, (l, i))| r.layer == *l && r.tensor_index == *i);
    if same {
        return Ok(());
    }
    let show = |v: Vec<String>| v.join(", ");
    Err(Error::format(
        &model.source,
        format!(
            "{what} are [{}], expected [{}]",
            show(refs.iter().map(|r| format!("{}:{}", r.layer, r.tensor_index)).collect()),
            show(want.iter().map(|(l, i)| format!("{l}:{i}")).collect())
        ),
    ))
}

/// The state outputs KTN expects of a chain of LSTMs: h (tensor 1) then c (tensor 2) of each.
pub(super) fn state_refs(lstm_names: &[&str]) -> Vec<(String, usize)> {
    lstm_names
        .iter()
        .flat_map(|n| [(n.to_string(), 1), (n.to_string(), 2)])
        .collect()
}
