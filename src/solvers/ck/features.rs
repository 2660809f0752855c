//! Encoder inputs of MIOpen's grouped-convolution KTN models, exactly as MIOpen builds them
//! (`GetFeatures` in `conv_hip_implicit_gemm_grouped_{fwd,bwd,wrw}_xdlops.cpp` at 2d1fd997a).
//!
//! "in"/"out" follow MIOpen's problem description: for forward, in = x and out = y; for both
//! backward directions, in = dy and out = dx (x).

use crate::problem::{ConvProblem, Precision};

/// Compute units MIOpen's gfx90a forward model is fed when the caller gives none (MI210).
pub const DEFAULT_GFX90A_COMPUTE_UNITS: u32 = 104;

fn precision_code(problem: &ConvProblem) -> f32 {
    if problem.precision == Precision::Fp32 {
        2.0
    } else {
        1.0
    }
}

/// An `n x n` matrix, zero except `values` on the diagonal.
fn diagonal(values: &[f32]) -> Vec<f32> {
    let n = values.len();
    let mut m = vec![0.0; n * n];
    for (i, &v) in values.iter().enumerate() {
        m[i * n + i] = v;
    }
    m
}

/// The convolution's geometry after the channels and sizes: Y, X, pads, strides, dilations, N.
fn geometry(p: &ConvProblem) -> [f32; 8] {
    [
        p.filter_h as f32,
        p.filter_w as f32,
        p.pad_h as f32,
        p.pad_w as f32,
        p.stride_h as f32,
        p.stride_w as f32,
        p.dilation_h as f32,
        p.dilation_w as f32,
    ]
}

fn in_tensor(p: &ConvProblem) -> [f32; 3] {
    let (h, w) = p.in_hw();
    [p.in_channels() as f32, h as f32, w as f32]
}

fn out_tensor(p: &ConvProblem) -> [f32; 3] {
    let (h, w) = p.out_hw();
    [p.out_channels() as f32, h as f32, w as f32]
}

/// Forward, gfx90a: a plain 18-vector
/// `prec, C, Hi, Wi, K, Ho, Wo, Y, X, padH, padW, strideH, strideW, dilH, dilW, N, G, CU`.
pub fn fwd_gfx90a(p: &ConvProblem, compute_units: u32) -> Vec<f32> {
    let mut v = vec![precision_code(p)];
    v.extend(in_tensor(p));
    v.extend(out_tensor(p));
    v.extend(geometry(p));
    v.extend([p.n as f32, p.groups as f32, compute_units as f32]);
    v
}

/// Forward, gfx942: diag of 17
/// `C, Hi, Wi, K, Ho, Wo, Y, X, padH, padW, strideH, strideW, dilH, dilW, N, prec, G`.
pub fn fwd_gfx942(p: &ConvProblem) -> Vec<f32> {
    let mut v = Vec::with_capacity(17);
    v.extend(in_tensor(p));
    v.extend(out_tensor(p));
    v.extend(geometry(p));
    v.extend([p.n as f32, precision_code(p), p.groups as f32]);
    diagonal(&v)
}

/// Backward data (both arches) and backward weights on gfx90a (model
/// `ConvHipIgemmGroupXdlops`): diag of 18 `code, outC, outH, outW, inC, inH, inW, Y, X, padH,
/// padW, sH, sW, dH, dW, N, prec, G` with direction code 0 (bwd) or 1 (wrw).
pub fn group_xdlops(p: &ConvProblem, direction_code: f32) -> Vec<f32> {
    let mut v = vec![direction_code];
    v.extend(out_tensor(p));
    v.extend(in_tensor(p));
    v.extend(geometry(p));
    v.extend([p.n as f32, precision_code(p), p.groups as f32]);
    diagonal(&v)
}

/// Backward weights, gfx942: diag of 17 `outC, outH, outW, inC, inH, inW, Y, X, padH, padW,
/// sH, sW, dH, dW, N, prec, G`.
pub fn wrw_gfx942(p: &ConvProblem) -> Vec<f32> {
    let mut v = Vec::with_capacity(17);
    v.extend(out_tensor(p));
    v.extend(in_tensor(p));
    v.extend(geometry(p));
    v.extend([p.n as f32, precision_code(p), p.groups as f32]);
    diagonal(&v)
}
