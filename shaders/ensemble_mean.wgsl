// Kernel: ensemble_mean (adds one member's share to an ensemble's mean log-probabilities)
// CPU twin: cpu::ensemble_add (seq2seq::AttentionModel's step with several members): `scores[i] += share * logp[i]`
// (scores start at zero; the members are added in order).
// Bindings (group 0):
//   0 x    storage read        [n] f32 one member's log-probabilities
//   1 out  storage read_write  [n] f32 the running mean
//   2 p    uniform             Params (share as f32 bits)
// Overrides: WG (workgroup size).

override WG: u32 = 64u;

struct Params {
    n: u32,
    share_bits: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= p.n) {
        return;
    }
    let share = bitcast<f32>(p.share_bits);
    out[i] = out[i] + share * x[i];
}
