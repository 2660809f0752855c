// Kernel: reorder_rows (how a beam reorders its hypotheses' states)
// CPU twin: seq2seq::States::gather_from.   dst[r, :] = src[rows[r], :] for the h half and the
// c half of an LSTM state ([rows, U] h | [rows, U] c).
// Bindings (group 0):
//   0 rows  storage read        [dst_rows] u32 source row of each destination row
//   1 src   storage read        [src_rows, U] h | [src_rows, U] c
//   2 dst   storage read_write  [dst_rows, U] h | [dst_rows, U] c
//   3 p     uniform             Params
// Overrides: UNITS (model size), WG (workgroup size).

override UNITS: u32 = 1u;
override WG: u32 = 64u;

struct Params {
    dst_rows: u32,
    src_rows: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read> rows: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= p.dst_rows * UNITS) {
        return;
    }
    let r = i / UNITS;
    let j = i % UNITS;
    let s = rows[r];
    if (s >= p.src_rows) {
        dst[i] = bitcast<f32>(0x7fc00000u);
        dst[p.dst_rows * UNITS + i] = bitcast<f32>(0x7fc00000u);
        return;
    }
    dst[i] = src[s * UNITS + j];
    dst[p.dst_rows * UNITS + i] = src[p.src_rows * UNITS + s * UNITS + j];
}
