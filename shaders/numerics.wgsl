// Library: numerics shared by the kernels (prepended by the registry to every kernel whose
// ShaderFile has `uses_numerics`). CPU twins: cpu::activations::{exp, sigmoid, tanh},
// f32::is_nan and f32::total_cmp. Exact ties of exp's range reduction round away from zero here,
// half to even on the CPU (the only difference; it needs x * log2(e) to be exactly k + 0.5).

// NaN test on the bits: compilers may assume `x != x` is false (WGSL allows it).
fn is_nan_bits(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// f32 bits to a u32 whose unsigned order is f32::total_cmp's order (the search's rank_cmp).
fn order_key(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

// cpu::activations::exp: range reduction by ln 2 (hi/lo split), degree-6 Taylor polynomial;
// NaN stays NaN, as on the CPU.
fn exp_ref(x: f32) -> f32 {
    if (is_nan_bits(x)) {
        return x;
    }
    let xc = clamp(x, -87.3, 88.3);
    let v = xc * 1.442695;
    let t = trunc(v);
    let n = select(t, t + sign(v), abs(v - t) >= 0.5); // round half away from zero, like Rust
    let r = xc - n * 0.6933594 - n * -2.1219444e-4;
    let q = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    return q * bitcast<f32>(u32(i32(n) + 127) << 23u);
}

// cpu::activations::sigmoid
fn sigmoid_ref(x: f32) -> f32 {
    return 1.0 / (1.0 + exp_ref(-x));
}

// cpu::activations::tanh (through the logistic, as the CPU does)
fn tanh_ref(x: f32) -> f32 {
    return 2.0 * sigmoid_ref(2.0 * x) - 1.0;
}
