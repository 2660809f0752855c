// Kernel: attention (Luong dot-product attention over the encoder outputs, fused with the
// attention model's combine layer)
// CPU twin: cpu::attention (scores, softmax, context), then cpu::dense + cpu::activations::tanh
// on [h, ctx], as in seq2seq::AttentionModel's decoder step:
//   s_t = h · enc[t];  a = softmax_t(s);  ctx = sum_t a_t enc[t];  o = tanh([h, ctx] · Wc + bc)
// One workgroup per GROUP_ROWS consecutive rows (each combine weight loaded once feeds all of
// them). Per row: one thread per step computes its score (j ascending, like the CPU's iterator
// sum), one thread the softmax (the CPU's max, exp and order), then each thread owns units
// j, j + WG, ...: first ctx[j] (t ascending), then o[j] (bias, then h·Wc, then ctx·Wc, k
// ascending, fused multiply-add, like cpu::dense). A NaN score makes the whole row NaN.
// Numerics (exp_ref, sigmoid_ref, tanh_ref, is_nan_bits): shaders/numerics.wgsl, prepended by the registry.
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
// Rows per workgroup (rows past the end repeat the group's last row and are not written).
const GROUP_ROWS: u32 = 4u;

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

// Attention weights of the group's rows: row q's at weights[q * MAX_STEPS + t].
var<workgroup> weights: array<f32, 256>;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let r0 = (wid.x + wid.y * nwg.x) * GROUP_ROWS;
    if (r0 >= p.rows) {
        return;
    }
    let n = min(GROUP_ROWS, p.rows - r0);
    // Scores: one (row, step) pair per thread.
    for (var i = lid; i < n * STEPS; i += WG) {
        let r = r0 + i / STEPS;
        let t = i % STEPS;
        let hb = p.h_offset + r * p.h_stride;
        let eb = (r / p.enc_div) * STEPS * UNITS;
        var s = 0.0;
        for (var j = 0u; j < UNITS; j++) {
            s = s + h[hb + j] * enc[eb + t * UNITS + j];
        }
        weights[(i / STEPS) * MAX_STEPS + t] = s;
    }
    workgroupBarrier();
    // Softmax over the steps, one thread per row (the CPU's order).
    if (lid < n) {
        let r = r0 + lid;
        let w0 = lid * MAX_STEPS;
        var m = weights[w0];
        var nan = false;
        for (var t = 0u; t < STEPS; t++) {
            let v = weights[w0 + t];
            nan = nan || is_nan_bits(v);
            if (v > m) {
                m = v;
            }
        }
        var sum = 0.0;
        for (var t = 0u; t < STEPS; t++) {
            let e = exp_ref(weights[w0 + t] - m);
            weights[w0 + t] = e;
            sum = sum + e;
        }
        for (var t = 0u; t < STEPS; t++) {
            let w = select(weights[w0 + t] / sum, bitcast<f32>(0x7fc00000u), nan);
            weights[w0 + t] = w;
            attn[r * STEPS + t] = w;
        }
    }
    workgroupBarrier();
    // Context: one (row, unit) pair per thread.
    for (var i = lid; i < n * UNITS; i += WG) {
        let q = i / UNITS;
        let j = i % UNITS;
        let r = r0 + q;
        let eb = (r / p.enc_div) * STEPS * UNITS;
        var c = 0.0;
        for (var t = 0u; t < STEPS; t++) {
            c = c + weights[q * MAX_STEPS + t] * enc[eb + t * UNITS + j];
        }
        ctx[r * UNITS + j] = c;
    }
    // Every thread reads the group's whole context below.
    storageBarrier();
    workgroupBarrier();
    // Combine: o = tanh([h, ctx] · Wc + bc), each weight feeding the group's rows.
    let last = n - 1u;
    let r1 = r0 + min(1u, last);
    let r2 = r0 + min(2u, last);
    let r3 = r0 + min(3u, last);
    let h0 = p.h_offset + r0 * p.h_stride;
    let h1 = p.h_offset + r1 * p.h_stride;
    let h2 = p.h_offset + r2 * p.h_stride;
    let h3 = p.h_offset + r3 * p.h_stride;
    let bias0 = 2u * UNITS * UNITS;
    for (var j = lid; j < UNITS; j += WG) {
        let b = f32(combine[bias0 + j]);
        var a0 = b;
        var a1 = b;
        var a2 = b;
        var a3 = b;
        for (var k = 0u; k < UNITS; k++) {
            let w = f32(combine[k * UNITS + j]);
            a0 = fma(h[h0 + k], w, a0);
            a1 = fma(h[h1 + k], w, a1);
            a2 = fma(h[h2 + k], w, a2);
            a3 = fma(h[h3 + k], w, a3);
        }
        for (var k = 0u; k < UNITS; k++) {
            let w = f32(combine[(UNITS + k) * UNITS + j]);
            a0 = fma(ctx[r0 * UNITS + k], w, a0);
            a1 = fma(ctx[r1 * UNITS + k], w, a1);
            a2 = fma(ctx[r2 * UNITS + k], w, a2);
            a3 = fma(ctx[r3 * UNITS + k], w, a3);
        }
        out[r0 * UNITS + j] = tanh_ref(a0);
        if (1u < n) {
            out[r1 * UNITS + j] = tanh_ref(a1);
        }
        if (2u < n) {
            out[r2 * UNITS + j] = tanh_ref(a2);
        }
        if (3u < n) {
            out[r3 * UNITS + j] = tanh_ref(a3);
        }
    }
}
