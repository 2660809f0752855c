// Kernel: dense_log_softmax (the decoder's output layer fused with the log-softmax of its rows,
// for small batches: one dispatch instead of dense + log_softmax)
// CPU twin: cpu::dense (bias rows, then cpu::matmul_acc), then cpu::log_softmax_rows.
//   scores[r, n] = (HAS_BIAS ? bias[n] : 0) + sum_k a[r, k] * b[k, n]   (k ascending, fma)
//   logp[r, :]   = log_softmax(scores[r, :])
// One workgroup per row: thread i computes columns i, i + WG, ... (in dense.wgsl's order, so
// the same bits), then thread 0 the row's log-softmax (log_softmax.wgsl's code, same bits).
// Numerics (exp_ref, sigmoid_ref, tanh_ref, is_nan_bits): shaders/numerics.wgsl, prepended by the registry.
// Bindings (group 0):
//   0 a       storage read        [rows, K_DIM] f32 (row r starts at a_offset + r * a_stride)
//   1 b       storage read        [K_DIM, N_DIM]
//   2 bias    storage read        [N_DIM] (ignored unless HAS_BIAS)
//   3 scores  storage read_write  [rows, N_DIM] f32
//   4 logp    storage read_write  [rows, N_DIM] f32
//   5 p       uniform             Params
// Overrides: K_DIM, N_DIM (model sizes), WG (workgroup size), HAS_BIAS.
// Precision: `Weight` (b and bias) is f32, or f16 in the registry's f16 variant (which adds
// `enable f16;`); arithmetic is f32 either way.

alias Weight = f32;

override K_DIM: u32 = 1u;
override N_DIM: u32 = 1u;
override WG: u32 = 64u;
override HAS_BIAS: bool = true;

struct Params {
    rows: u32,
    a_stride: u32,
    a_offset: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<Weight>;
@group(0) @binding(2) var<storage, read> bias: array<Weight>;
@group(0) @binding(3) var<storage, read_write> scores: array<f32>;
@group(0) @binding(4) var<storage, read_write> logp: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

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
    let ab = p.a_offset + r * p.a_stride;
    let base = r * N_DIM;
    for (var n = lid; n < N_DIM; n += WG) {
        var acc = 0.0;
        if (HAS_BIAS) {
            acc = f32(bias[n]);
        }
        for (var k = 0u; k < K_DIM; k++) {
            acc = fma(a[ab + k], f32(b[k * N_DIM + n]), acc);
        }
        scores[base + n] = acc;
    }
    // Thread 0 reads the whole row below.
    storageBarrier();
    workgroupBarrier();
    if (lid != 0u) {
        return;
    }
    var m = scores[base];
    var nan = false;
    for (var j = 0u; j < N_DIM; j++) {
        let v = scores[base + j];
        nan = nan || is_nan_bits(v);
        m = max(m, v);
    }
    var sum = 0.0;
    for (var j = 0u; j < N_DIM; j++) {
        sum += exp_ref(scores[base + j] - m);
    }
    let log_sum = log(sum);
    for (var j = 0u; j < N_DIM; j++) {
        logp[base + j] = select(scores[base + j] - m - log_sum, bitcast<f32>(0x7fc00000u), nan);
    }
}
