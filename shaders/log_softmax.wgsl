// Kernel: log_softmax (row-wise, max-subtracted)
// CPU twin: cpu::log_softmax_rows.
//   out[r, j] = x[r, j] - max_r - ln(sum_j e^(x[r, j] - max_r))
// One thread per row, summing in the CPU's order with the CPU's exp (cpu::activations::exp).
// Numerics (exp_ref, sigmoid_ref, tanh_ref, is_nan_bits): shaders/numerics.wgsl, prepended by the registry.
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
