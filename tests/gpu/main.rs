//! The GPU engine: every WGSL kernel against its CPU twin, the resident searches, GPU == CPU on the shipped models (lavapipe in CI; "skipped: no GPU adapter" without one).
//! One test binary per area (issue 52 item 6): each file of tests/gpu/ is a module.

#[path = "../common/mod.rs"]
mod common;

mod corpus_gpu_cpu;
mod f16_weights;
mod gpu_attention;
mod gpu_ck;
mod gpu_end_to_end;
mod gpu_faults;
mod gpu_fused;
mod gpu_hard_classes;
mod gpu_hybrid;
mod gpu_kernels;
mod gpu_mlir_igemm;
mod gpu_ocl_rules;
mod gpu_pool;
mod gpu_profile;
mod gpu_rules;
mod gpu_search_forms;
mod gpu_single;
mod gpu_tiny_models;
mod gpu_wrw1x1_rules;
mod gpu_wrw3x3_rules;
