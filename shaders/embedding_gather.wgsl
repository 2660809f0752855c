// Kernel: embedding_gather
// CPU twin: cpu::embedding_gather.   out[i, :] = table[ids[i], :]
// An id outside the table (the CPU twin's callers reject those) writes NaN, so it can never
// pass for a real value.
// Bindings (group 0):
//   0 ids    storage read        [rows] u32
//   1 table  storage read        [VOCAB, DIM] f32
//   2 out    storage read_write  [rows, DIM] f32
//   3 p      uniform             Params
// Overrides: DIM, VOCAB (model sizes), WG (workgroup size).

override DIM: u32 = 1u;
override VOCAB: u32 = 1u;
override WG: u32 = 64u;

struct Params {
    rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= p.rows * DIM) {
        return;
    }
    let r = i / DIM;
    let d = i % DIM;
    let id = ids[r];
    if (id < VOCAB) {
        out[i] = table[id * DIM + d];
    } else {
        out[i] = bitcast<f32>(0x7fc00000u);
    }
}
