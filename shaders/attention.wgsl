// Kernel: attention (Luong dot-product attention over the encoder outputs, fused with the
// attention model's combine layer)
// CPU twin: cpu::attention (scores, softmax, context), then cpu::dense + cpu::activations::tanh
// on [h, ctx], as in seq2seq::AttentionModel's decoder step:
//   s_t = h · enc[t];  a = softmax_t(s);  ctx = sum_t a_t enc[t];  o = tanh([h, ctx] · Wc + bc)
// One workgroup per row. Threads t < STEPS compute the scores (j ascending, like the CPU's
// iterator sum), thread 0 the softmax (the CPU's max, exp and order), then each thread owns units
// j, j + WG, ...: first ctx[j] (t ascending), then o[j] (bias, then h·Wc, then ctx·Wc, k
// ascending, fused multiply-add, like cpu::dense). A NaN score makes the whole row NaN.
// Bindings (group 0):
//   0 h        storage read        row r at h_offset + r * h_stride, UNITS values
//   1 enc      storage read        [rows / enc_div, STEPS, UNITS] encoder outputs: row r reads
//                                 block r / enc_div (a beam's rows share their problem's)
//   2 combine  storage read        [2 * UNITS, UNITS] kernel | [UNITS] bias
//   3 attn     storage read_write  [rows, STEPS] attention weights a
//   4 ctx      storage read_write  [rows, UNITS] context
//   5 out      storage read_write  [rows, UNITS] o
//   6 p        uniform             Params
// Overrides: STEPS (encoder steps, at most MAX_STEPS), UNITS (model sizes), WG (workgroup size).
// Precision: `Weight` (combine) is f32, or f16 in the registry's f16 variant (which adds
// `enable f16;`); arithmetic is f32 either way.

alias Weight = f32;

override STEPS: u32 = 1u;
override UNITS: u32 = 1u;
override WG: u32 = 64u;

const MAX_STEPS: u32 = 64u;

struct Params {
    rows: u32,
    h_stride: u32,
    h_offset: u32,
    enc_div: u32,
}

@group(0) @binding(0) var<storage, read> h: array<f32>;
@group(0) @binding(1) var<storage, read> enc: array<f32>;
@group(0) @binding(2) var<storage, read> combine: array<Weight>;
@group(0) @binding(3) var<storage, read_write> attn: array<f32>;
@group(0) @binding(4) var<storage, read_write> ctx: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

var<workgroup> weights: array<f32, MAX_STEPS>;

// cpu::activations::exp: range reduction by ln 2 (hi/lo split), degree-6 Taylor polynomial;
// NaN stays NaN (as on the CPU).
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

fn sigmoid_ref(x: f32) -> f32 {
    return 1.0 / (1.0 + exp_ref(-x));
}

fn tanh_ref(x: f32) -> f32 {
    return 2.0 * sigmoid_ref(2.0 * x) - 1.0;
}

// NaN test on the bits: compilers may assume `x != x` is false (WGSL allows it).
fn is_nan_bits(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let r = wid.x + wid.y * nwg.x;
    if (r >= p.rows) {
        return;
    }
    let hb = p.h_offset + r * p.h_stride;
    let eb = (r / p.enc_div) * STEPS * UNITS;
    // Scores.
    for (var t = lid; t < STEPS; t += WG) {
        var s = 0.0;
        for (var j = 0u; j < UNITS; j++) {
            s = s + h[hb + j] * enc[eb + t * UNITS + j];
        }
        weights[t] = s;
    }
    workgroupBarrier();
    // Softmax over the steps, in one thread (the CPU's order).
    if (lid == 0u) {
        var m = weights[0];
        var nan = false;
        for (var t = 0u; t < STEPS; t++) {
            let v = weights[t];
            nan = nan || is_nan_bits(v);
            if (v > m) {
                m = v;
            }
        }
        var sum = 0.0;
        for (var t = 0u; t < STEPS; t++) {
            let e = exp_ref(weights[t] - m);
            weights[t] = e;
            sum = sum + e;
        }
        for (var t = 0u; t < STEPS; t++) {
            let w = select(weights[t] / sum, bitcast<f32>(0x7fc00000u), nan);
            weights[t] = w;
            attn[r * STEPS + t] = w;
        }
    }
    workgroupBarrier();
    // Context.
    let cb = r * UNITS;
    for (var j = lid; j < UNITS; j += WG) {
        var c = 0.0;
        for (var t = 0u; t < STEPS; t++) {
            c = c + weights[t] * enc[eb + t * UNITS + j];
        }
        ctx[cb + j] = c;
    }
    // Every thread reads the whole context below.
    storageBarrier();
    workgroupBarrier();
    // Combine: o = tanh([h, ctx] · Wc + bc).
    let bias0 = 2u * UNITS * UNITS;
    for (var j = lid; j < UNITS; j += WG) {
        var acc = f32(combine[bias0 + j]);
        for (var k = 0u; k < UNITS; k++) {
            acc = fma(h[hb + k], f32(combine[k * UNITS + j]), acc);
        }
        for (var k = 0u; k < UNITS; k++) {
            acc = fma(ctx[cb + k], f32(combine[(UNITS + k) * UNITS + j]), acc);
        }
        out[cb + j] = tanh_ref(acc);
    }
}
