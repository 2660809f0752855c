//! Matrix products: `Gemm` and `MatMul`.

use super::super::graph::{Info, Tensor};
use super::super::proto::NodeProto;
use super::elementwise::broadcast;
use super::{attr_i, input, Fail, Rule};

/// `[M, N]` from A `[M, K]` (or `[K, M]` with `transA`) and B `[K, N]` (or `[N, K]` with
/// `transB`).
pub(super) fn gemm(node: &NodeProto, inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let a = input(inputs, 0)?;
    let b = input(inputs, 1)?;
    if a.rank() != 2 || b.rank() != 2 {
        return Err("Gemm of inputs that are not matrices".into());
    }
    let m = if attr_i(node, "transA").unwrap_or(0) == 1 {
        a.dims[1]
    } else {
        a.dims[0]
    };
    let n = if attr_i(node, "transB").unwrap_or(0) == 1 {
        b.dims[0]
    } else {
        b.dims[1]
    };
    Ok(vec![Tensor::new(vec![m, n], a.ty)])
}

/// numpy's matmul: a 1-D A is a row (its 1 removed after), a 1-D B a column; the batch axes
/// broadcast.
pub(super) fn matmul(inputs: &[Option<Info>]) -> Rule<Vec<Tensor>> {
    let a = input(inputs, 0)?;
    let b = input(inputs, 1)?;
    if a.rank() == 0 || b.rank() == 0 {
        return Err("MatMul of a scalar".into());
    }
    let mut ad = a.dims.clone();
    let mut bd = b.dims.clone();
    let (a1, b1) = (ad.len() == 1, bd.len() == 1);
    if a1 {
        ad.insert(0, 1);
    }
    if b1 {
        bd.push(1);
    }
    let (m, ka) = (ad[ad.len() - 2], ad[ad.len() - 1]);
    let (kb, n) = (bd[bd.len() - 2], bd[bd.len() - 1]);
    if ka != kb {
        return Err(Fail::Here(format!("MatMul of {:?} and {:?}", a.dims, b.dims)));
    }
    let mut d = broadcast(&[&ad[..ad.len() - 2], &bd[..bd.len() - 2]])?;
    if !a1 {
        d.push(m);
    }
    if !b1 {
        d.push(n);
    }
    Ok(vec![Tensor::new(d, a.ty)])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    /// Gemm: A `[M, K]` times B `[K, N]`, either transposed by transA / transB.
    #[test]
    fn gemm_with_and_without_transposes() {
        let g = |attrs: &[(&str, A)], a: &[u64], b: &[u64]| dims(&node("Gemm", 1, attrs), &[t(a), t(b), t(&[4])], 17);
        assert_eq!(g(&[], &[3, 5], &[5, 4]), [3, 4]);
        assert_eq!(g(&[("transA", A::I(1))], &[5, 3], &[5, 4]), [3, 4]);
        assert_eq!(g(&[("transB", A::I(1))], &[3, 5], &[4, 5]), [3, 4]);
        assert_eq!(g(&[("transA", A::I(1)), ("transB", A::I(1))], &[5, 3], &[4, 5]), [3, 4]);
        let why = fails(&node("Gemm", 1, &[]), &[t(&[2, 3, 5]), t(&[5, 4])], 17);
        assert!(why.contains("not matrices"), "{why}");
    }

    fn matmul(a: &[u64], b: &[u64]) -> Vec<u64> {
        dims(&node("MatMul", 1, &[]), &[t(a), t(b)], 17)
    }

    /// MatMul as numpy.matmul: a 1-D first input is a row vector and a 1-D second a column, the
    /// added 1 removed from the result; the leading (batch) axes broadcast.
    #[test]
    fn matmul_as_numpy() {
        assert_eq!(matmul(&[2, 3], &[3, 4]), [2, 4]);
        assert_eq!(matmul(&[3], &[3, 4]), [4]);
        assert_eq!(matmul(&[2, 3], &[3]), [2]);
        assert_eq!(matmul(&[3], &[3]), Vec::<u64>::new());
        assert_eq!(matmul(&[7, 2, 3], &[3, 4]), [7, 2, 4]);
        assert_eq!(matmul(&[2, 1, 3, 4], &[5, 4, 6]), [2, 5, 3, 6]);
        assert_eq!(matmul(&[3], &[5, 3, 4]), [5, 4]);
    }

    #[test]
    fn matmul_refuses_what_does_not_multiply() {
        let m = node("MatMul", 1, &[]);
        assert!(fails(&m, &[t(&[2, 3]), t(&[4, 5])], 17).contains("MatMul of [2, 3] and [4, 5]"));
        assert!(fails(&m, &[t(&[2, 2, 3]), t(&[3, 3, 4])], 17).contains("do not broadcast"));
        assert!(fails(&m, &[t(&[]), t(&[3])], 17).contains("scalar"));
    }
}
