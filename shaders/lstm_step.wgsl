// Kernel: lstm_step (fused: gate pre-activations + Keras LSTM cell update, double-buffered state)
// CPU twin: cpu::dense(x, kernel, bias) + cpu::matmul_acc(h, recurrent) + cpu::lstm_cell, as in
// seq2seq::Decoder::step and seq2seq::Encoder::run (gate order i, f, g, o):
//   z = x·W + h·U + b;  c' = σ(f)·c + σ(i)·tanh(g);  h' = σ(o)·tanh(c')
// Each thread owns one unit of ROWS_PER_THREAD rows and sums its four gates in the CPU's order
// (bias, then x·W, then h·U, p ascending, fused multiply-add), with the CPU's exp/σ/tanh.
// Bindings (group 0):
//   0 x           storage read        input rows: row r at x_offset + r * x_stride, IN_DIM values
//   1 weights     storage read        [IN_DIM, 4U] kernel | [U, 4U] recurrent | [4U] bias
//   2 state_prev  storage read        [rows, U] h | [rows, U] c
//   3 state_next  storage read_write  [rows, U] h | [rows, U] c  (never the same buffer as 2)
//   4 seq_out     storage read_write  h copy at seq_offset + r * seq_stride (when WRITE_SEQ)
//   5 p           uniform             Params
// Overrides: IN_DIM, UNITS (model sizes), WG (workgroup size), WRITE_SEQ.
// Precision: `Weight` is f32, or f16 in the registry's f16 variant (which adds `enable f16;`);
// arithmetic and state are f32 either way.

alias Weight = f32;

override IN_DIM: u32 = 1u;
override UNITS: u32 = 1u;
override WG: u32 = 64u;
override WRITE_SEQ: bool = false;

struct Params {
    rows: u32,
    x_stride: u32,
    x_offset: u32,
    seq_stride: u32,
    seq_offset: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<Weight>;
@group(0) @binding(2) var<storage, read> state_prev: array<f32>;
@group(0) @binding(3) var<storage, read_write> state_next: array<f32>;
@group(0) @binding(4) var<storage, read_write> seq_out: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

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

fn sigmoid_ref(x: f32) -> f32 {
    return 1.0 / (1.0 + exp_ref(-x));
}

fn tanh_ref(x: f32) -> f32 {
    return 2.0 * sigmoid_ref(2.0 * x) - 1.0;
}

// Rows each thread computes: the four weights of a unit are loaded once per k and used for
// this many rows (the weights dominate memory traffic).
const ROWS_PER_THREAD: u32 = 4u;

fn weight4(at: u32) -> vec4<f32> {
    return vec4<f32>(f32(weights[at]), f32(weights[at + UNITS]), f32(weights[at + 2u * UNITS]), f32(weights[at + 3u * UNITS]));
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    let blocks = (p.rows + ROWS_PER_THREAD - 1u) / ROWS_PER_THREAD;
    if (i >= blocks * UNITS) {
        return;
    }
    let j = i % UNITS;
    let r0 = (i / UNITS) * ROWS_PER_THREAD;
    let n = min(ROWS_PER_THREAD, p.rows - r0);
    let g = 4u * UNITS;
    let rec0 = IN_DIM * g;
    // Gate pre-activations (i, f, g, o) of each row, summed like the CPU: bias, x·W, h·U.
    var acc: array<vec4<f32>, ROWS_PER_THREAD>;
    let bias = weight4(rec0 + UNITS * g + j);
    for (var r = 0u; r < ROWS_PER_THREAD; r++) {
        acc[r] = bias;
    }
    for (var k = 0u; k < IN_DIM; k++) {
        let w = weight4(k * g + j);
        for (var r = 0u; r < n; r++) {
            let xv = x[p.x_offset + (r0 + r) * p.x_stride + k];
            acc[r] = fma(vec4<f32>(xv), w, acc[r]);
        }
    }
    for (var k = 0u; k < UNITS; k++) {
        let u = weight4(rec0 + k * g + j);
        for (var r = 0u; r < n; r++) {
            let hv = state_prev[(r0 + r) * UNITS + k];
            acc[r] = fma(vec4<f32>(hv), u, acc[r]);
        }
    }
    let total = p.rows * UNITS;
    for (var r = 0u; r < n; r++) {
        let at = (r0 + r) * UNITS + j;
        let zi = sigmoid_ref(acc[r].x);
        let zf = sigmoid_ref(acc[r].y);
        let zg = tanh_ref(acc[r].z);
        let zo = sigmoid_ref(acc[r].w);
        let c_new = zf * state_prev[total + at] + zi * zg;
        let h_new = zo * tanh_ref(c_new);
        state_next[at] = h_new;
        state_next[total + at] = c_new;
        if (WRITE_SEQ) {
            seq_out[p.seq_offset + (r0 + r) * p.seq_stride + j] = h_new;
        }
    }
}
