// Kernel: log_softmax (row-wise, max-subtracted)
// CPU twin: cpu::log_softmax_rows.
//   out[r, j] = x[r, j] - max_r - ln(sum_j e^(x[r, j] - max_r))
// One thread per row, summing in the CPU's order with the CPU's exp (cpu::activations::exp).
// Bindings (group 0):
//   0 x    storage read        [rows, V] f32
//   1 out  storage read_write  [rows, V] f32
//   2 p    uniform             Params
// Overrides: V (vocabulary size), WG (workgroup size).

override V: u32 = 1u;
override WG: u32 = 64u;

struct Params {
    rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

// cpu::activations::exp: range reduction by ln 2 (hi/lo split), degree-6 Taylor polynomial.
fn exp_ref(x: f32) -> f32 {
    let xc = clamp(x, -87.3, 88.3);
    let v = xc * 1.442695;
    let t = trunc(v);
    let n = select(t, t + sign(v), abs(v - t) >= 0.5); // round half away from zero, like Rust
    let r = xc - n * 0.6933594 - n * -2.1219444e-4;
    let q = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    return q * bitcast<f32>(u32(i32(n) + 127) << 23u);
}

// NaN test on the bits: compilers may assume `x != x` is false (WGSL allows it).
fn is_nan_bits(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = gid.x + gid.y * nwg.x * WG;
    if (r >= p.rows) {
        return;
    }
    let base = r * V;
    var m = x[base];
    var nan = false;
    for (var j = 0u; j < V; j++) {
        let v = x[base + j];
        nan = nan || is_nan_bits(v);
        m = max(m, v);
    }
    var sum = 0.0;
    for (var j = 0u; j < V; j++) {
        sum += exp_ref(x[base + j] - m);
    }
    let log_sum = log(sum);
    for (var j = 0u; j < V; j++) {
        out[base + j] = select(x[base + j] - m - log_sum, bitcast<f32>(0x7fc00000u), nan);
    }
}
