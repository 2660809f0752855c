// Kernel: conv1d (the hybrid encoder's convolution over the encoder steps)
// CPU twin: seq2seq::conv_encoder::conv1d_same_tanh.
//   out[r, t, c] = tanh_ref(b[c] + sum_{k=0..3} sum_f x[r, t + k - 1, f] * w[k, f, c])
// with 'same' zero padding (steps outside 0..STEPS add nothing); the twin's order: the bias,
// then k ascending, f ascending, each a fused multiply-add. One thread per output value.
// Weights stay f32 (like the embedding table) in the f16-weight mode.
// Bindings (group 0):
//   0 x    storage read        [rows, STEPS, FIN] f32 encoder inputs
//   1 w    storage read        [3, FIN, CH] kernel, then [CH] bias (one buffer)
//   2 out  storage read_write  [rows, STEPS, CH] f32
//   3 p    uniform             Params
// Overrides: STEPS, FIN, CH (model sizes), WG (workgroup size).

override STEPS: u32 = 1u;
override FIN: u32 = 1u;
override CH: u32 = 1u;
override WG: u32 = 64u;

struct Params {
    rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= p.rows * STEPS * CH) {
        return;
    }
    let c = i % CH;
    let t = (i / CH) % STEPS;
    let r = i / (CH * STEPS);
    var acc = w[3u * FIN * CH + c];
    for (var k = 0u; k < 3u; k = k + 1u) {
        // Input step t + k - 1.
        if (t + k < 1u || t + k - 1u >= STEPS) {
            continue;
        }
        let xs = (r * STEPS + t + k - 1u) * FIN;
        for (var f = 0u; f < FIN; f = f + 1u) {
            acc = fma(x[xs + f], w[(k * FIN + f) * CH + c], acc);
        }
    }
    out[i] = tanh_ref(acc);
}
