//! File formats: frugally-deep JSON models (MIOpen's KernelTuningNet files) and their metadata,
//! safetensors, and tuneinfer's own weights (safetensors + a metadata JSON).

pub mod base64;
pub mod frugally;
pub mod metadata;
pub mod safetensors;
pub mod sha256;
pub mod weights;
