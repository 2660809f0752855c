//! File formats: frugally-deep JSON models (MIOpen's KernelTuningNet files) and their metadata.

pub mod base64;
pub mod frugally;
pub mod metadata;
pub mod sha256;
