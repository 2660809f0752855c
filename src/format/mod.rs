//! File formats: frugally-deep JSON models (MIOpen's KernelTuningNet files) and their metadata,
//! safetensors, and tuneinfer's own weights (safetensors + a metadata JSON).

pub mod base64;
pub mod frugally;
pub mod metadata;
pub mod safetensors;
pub mod sha256;
pub mod weights;

use std::path::Path;

use crate::error::{Error, Result};

/// Reads a text file (JSON, TSV). A file that cannot be read is an I/O error; one that is not
/// UTF-8 text (a binary file given by mistake) is a format error naming it.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        Error::format(
            path.display().to_string(),
            format!(
                "not UTF-8 text (byte {}): expected a text file",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}
