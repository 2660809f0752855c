// Kernel: dense (matrix product with optional bias / accumulate)
// CPU twin: cpu::dense (bias rows, then cpu::matmul_acc) and cpu::matmul_acc (accumulate).
//   out[r, n] = (ACCUMULATE ? out[r, n] : (HAS_BIAS ? bias[n] : 0)) + sum_p a[r, p] * b[p, n]
// summed in the CPU's order (p ascending, fused multiply-add); each thread computes one column
// for ROWS_PER_THREAD rows.
// Bindings (group 0):
//   0 a     storage read        [rows, K_DIM] f32 (row r starts at a_offset + r * a_stride)
//   1 b     storage read        [K_DIM, N_DIM] f32
//   2 bias  storage read        [N_DIM] f32 (ignored unless HAS_BIAS)
//   3 out   storage read_write  [rows, N_DIM] f32
//   4 p     uniform             Params
// Overrides: K_DIM, N_DIM (model sizes), WG (workgroup size), HAS_BIAS, ACCUMULATE.
// Precision: `Weight` (b and bias) is f32, or f16 in the registry's f16 variant (which adds
// `enable f16;`); arithmetic is f32 either way.

alias Weight = f32;

override K_DIM: u32 = 1u;
override N_DIM: u32 = 1u;
override WG: u32 = 64u;
override HAS_BIAS: bool = true;
override ACCUMULATE: bool = false;

struct Params {
    rows: u32,
    a_stride: u32,
    a_offset: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<Weight>;
@group(0) @binding(2) var<storage, read> bias: array<Weight>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

// Rows each thread computes: each weight is loaded once per k for all of them.
const ROWS_PER_THREAD: u32 = 4u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    let blocks = (p.rows + ROWS_PER_THREAD - 1u) / ROWS_PER_THREAD;
    if (i >= blocks * N_DIM) {
        return;
    }
    let n = i % N_DIM;
    let r0 = (i / N_DIM) * ROWS_PER_THREAD;
    let count = min(ROWS_PER_THREAD, p.rows - r0);
    var acc: array<f32, ROWS_PER_THREAD>;
    for (var r = 0u; r < count; r++) {
        if (ACCUMULATE) {
            acc[r] = out[(r0 + r) * N_DIM + n];
        } else if (HAS_BIAS) {
            acc[r] = f32(bias[n]);
        } else {
            acc[r] = 0.0;
        }
    }
    for (var k = 0u; k < K_DIM; k++) {
        let w = f32(b[k * N_DIM + n]);
        for (var r = 0u; r < count; r++) {
            acc[r] = fma(a[p.a_offset + (r0 + r) * p.a_stride + k], w, acc[r]);
        }
    }
    for (var r = 0u; r < count; r++) {
        out[(r0 + r) * N_DIM + n] = acc[r];
    }
}
