//! Solvers whose GPU search is the table of valid configs (`shaders/catalogue_rules.wgsl`), each
//! with a tiny model trained here (independent of the shipped ones): the model answers only
//! configs the rules accept on a few hundred tuned problems, and the GPU gives exactly the CPU's
//! configs (MIOpen's greedy walk and beam 4). Without a GPU adapter the GPU comparison is
//! skipped, loudly (CI: lavapipe). The HIP implicit-GEMM solvers by their two rule types (V4R1:
//! ConvHipImplicitGemmV4R1Fwd on gfx906; V4R4: ConvHipImplicitGemmV4R4WrW on gfx908),
//! ConvAsm3x3U (its table shared between problems of one table key) and ConvOclBwdWrW2<4>.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

#[test]
fn hip_igemm_v4r1() {
    common::tiny_model_valid_and_gpu_same("hip", "gfx906_60.db", "gfx906", "ConvHipImplicitGemmV4R1Fwd", 9, 300);
}

#[test]
fn hip_igemm_v4r4() {
    common::tiny_model_valid_and_gpu_same(
        "hip",
        "gfx90878.db.txt.bz2",
        "gfx908",
        "ConvHipImplicitGemmV4R4WrW",
        25,
        300,
    );
}

#[test]
fn conv_asm_3x3u() {
    common::tiny_model_valid_and_gpu_same("asm3x3u", "gfx906_60.db", "gfx906", "ConvAsm3x3U", 2, 290);
}

#[test]
fn conv_ocl_bwd_wrw2() {
    common::tiny_model_valid_and_gpu_same("wrw2", "gfx900_56.db", "gfx900", "ConvOclBwdWrW2<4>", 2, 300);
}

/// A model with the GPU as an input (trained with gfx906's and gfx1030's rows beside gfx900's):
/// its encoder reads 19 steps; valid answers, GPU == CPU.
#[test]
fn conv_ocl_bwd_wrw2_gpu_input() {
    common::pooled_tiny_model_valid_and_gpu_same(
        "wrw2-pooled",
        "gfx900_56.db",
        "gfx900",
        "ConvOclBwdWrW2<4>",
        &["gfx906_60.db", "gfx1030_36.db"],
        2,
        300,
    );
}
