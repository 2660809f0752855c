//! Weights re-laid for the CPU hot path (see [`PackedMatrix`]), built once at model load.

use crate::cpu::{self, PackedMatrix};
use crate::format::frugally::{DenseWeights, LstmWeights};

/// An LSTM's input and recurrent kernels, packed.
#[derive(Debug, Clone)]
pub(crate) struct PackedLstm {
    pub kernel: PackedMatrix,
    pub recurrent: PackedMatrix,
}

impl PackedLstm {
    pub fn new(l: &LstmWeights) -> PackedLstm {
        PackedLstm {
            kernel: PackedMatrix::pack(&l.kernel, l.input_dim, 4 * l.units),
            recurrent: PackedMatrix::pack(&l.recurrent, l.units, 4 * l.units),
        }
    }
}

/// `out[rows, units] = x · kernel + bias` with a packed kernel.
pub(crate) fn dense_packed(x: &[f32], kernel: &PackedMatrix, bias: Option<&[f32]>, out: &mut [f32], rows: usize) {
    cpu::add_bias_rows(out, bias, rows, kernel.n);
    cpu::matmul_packed_acc(x, kernel, out, rows);
}

/// A Dense layer's kernel, packed.
pub(crate) fn pack_dense(d: &DenseWeights) -> PackedMatrix {
    PackedMatrix::pack(&d.kernel, d.input_dim, d.units)
}
