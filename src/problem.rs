//! Convolution problems: what a user asks a prediction for.
//!
//! A [`ConvProblem`] always stores the *forward* convolution (x -> y with weights w) plus the
//! direction that is being tuned. MIOpen's "direction convention" (the tensor called `in` is x
//! for forward and dy for backward data / backward weights) is exposed through
//! [`ConvProblem::in_channels`] and friends, so solvers can read features exactly as MIOpen does.

use crate::error::{Error, Result};

/// Data type of the convolution's tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    Fp32,
    Fp16,
    Bf16,
}

/// Which convolution is being tuned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// y = conv(x, w) ("F").
    Forward,
    /// dx from dy and w ("B").
    BackwardData,
    /// dw from dy and x ("W").
    BackwardWeights,
}

/// Memory layout of the activation tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    Nchw,
    Nhwc,
}

/// One 2-D convolution problem, stored as its forward convolution plus the tuned direction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConvProblem {
    /// Batch size N.
    pub n: u64,
    /// Channels of the forward input x (all groups together).
    pub c: u64,
    /// Channels of the forward output y (all groups together).
    pub k: u64,
    /// Spatial size of x.
    pub in_h: u64,
    pub in_w: u64,
    /// Spatial size of y (derived from the others, checked when given).
    pub out_h: u64,
    pub out_w: u64,
    pub filter_h: u64,
    pub filter_w: u64,
    pub pad_h: u64,
    pub pad_w: u64,
    pub stride_h: u64,
    pub stride_w: u64,
    pub dilation_h: u64,
    pub dilation_w: u64,
    pub groups: u64,
    pub bias: bool,
    pub layout: Layout,
    pub precision: Precision,
    pub direction: Direction,
}
