// Kernel: dense (matrix product with optional bias / accumulate)
// CPU twin: cpu::dense (bias rows, then cpu::matmul_acc) and cpu::matmul_acc (accumulate).
//   out[r, n] = (ACCUMULATE ? out[r, n] : (HAS_BIAS ? bias[n] : 0)) + sum_k a[r, k] * b[k, n]
// summed in the CPU's order (k ascending, one fused multiply-add per term), so both paths below
// give the same bits. Two paths (the override SMALL picks one):
// - SMALL (few rows, latency): each thread computes one column of SMALL_ROWS rows straight
//   from storage.
// - tiled (SMALL false; throughput; WG must be 256): a workgroup computes TILE_ROWS rows x
//   TILE_COLS columns; chunks of TILE_K k values of a and b are staged in workgroup memory (the
//   next chunk is loaded into registers while the current one is used); each thread holds 8 rows
//   x 4 columns: per k, 3 vector workgroup loads feed 32 multiply-adds. Tile edges are
//   bounds-checked; the last k chunk stops at K_DIM.
// Bindings (group 0):
//   0 a     storage read        [rows, K_DIM] f32 (row r starts at a_offset + r * a_stride)
//   1 b     storage read        [K_DIM, N_DIM] f32
//   2 bias  storage read        [N_DIM] f32 (ignored unless HAS_BIAS)
//   3 out   storage read_write  [rows, N_DIM] f32
//   4 p     uniform             Params
// Overrides: K_DIM, N_DIM (model sizes), WG (workgroup size), HAS_BIAS, ACCUMULATE, SMALL.
// Precision: `Weight` (b and bias) is f32, or f16 in the registry's f16 variant (which adds
// `enable f16;`); arithmetic is f32 either way.

alias Weight = f32;

override K_DIM: u32 = 1u;
override N_DIM: u32 = 1u;
override WG: u32 = 256u;
override HAS_BIAS: bool = true;
override ACCUMULATE: bool = false;
override SMALL: bool = false;

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

// The starting value of out[row, n] (row and n in range).
fn initial(row: u32, n: u32) -> f32 {
    if (ACCUMULATE) {
        return out[row * N_DIM + n];
    } else if (HAS_BIAS) {
        return f32(bias[n]);
    }
    return 0.0;
}

// ---- SMALL path -------------------------------------------------------------------------

// Rows one SMALL thread computes (rows past the end repeat the last row and are not written).
const SMALL_ROWS: u32 = 4u;

fn small_step(i: u32) {
    let blocks = (p.rows + SMALL_ROWS - 1u) / SMALL_ROWS;
    if (i >= blocks * N_DIM) {
        return;
    }
    let n = i % N_DIM;
    let r0 = (i / N_DIM) * SMALL_ROWS;
    let last = p.rows - 1u;
    let r1 = min(r0 + 1u, last);
    let r2 = min(r0 + 2u, last);
    let r3 = min(r0 + 3u, last);
    var s0 = initial(r0, n);
    var s1 = initial(r1, n);
    var s2 = initial(r2, n);
    var s3 = initial(r3, n);
    let a0 = p.a_offset + r0 * p.a_stride;
    let a1 = p.a_offset + r1 * p.a_stride;
    let a2 = p.a_offset + r2 * p.a_stride;
    let a3 = p.a_offset + r3 * p.a_stride;
    for (var k = 0u; k < K_DIM; k++) {
        let w = f32(b[k * N_DIM + n]);
        s0 = fma(a[a0 + k], w, s0);
        s1 = fma(a[a1 + k], w, s1);
        s2 = fma(a[a2 + k], w, s2);
        s3 = fma(a[a3 + k], w, s3);
    }
    out[r0 * N_DIM + n] = s0;
    if (r0 + 1u < p.rows) {
        out[r1 * N_DIM + n] = s1;
    }
    if (r0 + 2u < p.rows) {
        out[r2 * N_DIM + n] = s2;
    }
    if (r0 + 3u < p.rows) {
        out[r3 * N_DIM + n] = s3;
    }
}

// ---- tiled path -------------------------------------------------------------------------

const TILE_ROWS: u32 = 128u;
const TILE_COLS: u32 = 64u;
const TILE_K: u32 = 8u;

// Chunk of a, transposed: value (k, row) at as_[k * TILE_ROWS / 4 + row / 4][row % 4].
var<workgroup> as_: array<vec4<f32>, 256>;
// Chunk of b: columns c, c + 16, c + 32, c + 48 of row k at bs[k * 16 + c] (c < 16).
var<workgroup> bs: array<vec4<f32>, 128>;

// Sums of the thread's 8 rows (digit) x 4 columns (components).
var<private> acc0: vec4<f32>;
var<private> acc1: vec4<f32>;
var<private> acc2: vec4<f32>;
var<private> acc3: vec4<f32>;
var<private> acc4: vec4<f32>;
var<private> acc5: vec4<f32>;
var<private> acc6: vec4<f32>;
var<private> acc7: vec4<f32>;

fn a_value(row: u32, k: u32) -> f32 {
    if (row >= p.rows || k >= K_DIM) {
        return 0.0;
    }
    return a[p.a_offset + row * p.a_stride + k];
}

fn b_value(k: u32, n: u32) -> f32 {
    if (k >= K_DIM || n >= N_DIM) {
        return 0.0;
    }
    return f32(b[k * N_DIM + n]);
}

fn initial_or_zero(row: u32, n: u32) -> f32 {
    if (row >= p.rows || n >= N_DIM) {
        return 0.0;
    }
    return initial(row, n);
}

// Starting values of row `row`, columns col0 + 16 j.
fn tile_init(row: u32, col0: u32) -> vec4<f32> {
    return vec4<f32>(
        initial_or_zero(row, col0),
        initial_or_zero(row, col0 + 16u),
        initial_or_zero(row, col0 + 32u),
        initial_or_zero(row, col0 + 48u),
    );
}

fn tile_store(v: vec4<f32>, row: u32, col0: u32) {
    if (row >= p.rows) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let n = col0 + 16u * j;
        if (n < N_DIM) {
            out[row * N_DIM + n] = v[j];
        }
    }
}

// One k of the tile: 3 vector loads, 32 fused multiply-adds.
fn tile_mac(kk: u32, tx: u32, ty: u32) {
    let a0 = as_[kk * (TILE_ROWS / 4u) + ty * 2u];
    let a1 = as_[kk * (TILE_ROWS / 4u) + ty * 2u + 1u];
    let w = bs[kk * 16u + tx];
    acc0 = fma(vec4<f32>(a0.x), w, acc0);
    acc1 = fma(vec4<f32>(a0.y), w, acc1);
    acc2 = fma(vec4<f32>(a0.z), w, acc2);
    acc3 = fma(vec4<f32>(a0.w), w, acc3);
    acc4 = fma(vec4<f32>(a1.x), w, acc4);
    acc5 = fma(vec4<f32>(a1.y), w, acc5);
    acc6 = fma(vec4<f32>(a1.z), w, acc6);
    acc7 = fma(vec4<f32>(a1.w), w, acc7);
}

fn tiled_step(lid: u32, tile: u32) {
    let col_tiles = (N_DIM + TILE_COLS - 1u) / TILE_COLS;
    let row_base = (tile / col_tiles) * TILE_ROWS;
    let col_base = (tile % col_tiles) * TILE_COLS;
    let chunks = (K_DIM + TILE_K - 1u) / TILE_K;
    // Staging: a row `sr`, k sk .. sk + 3 of the chunk; b column `bc`, k bk and bk + 4.
    let sr = lid / 2u;
    let sk = (lid % 2u) * 4u;
    let bc = lid % TILE_COLS;
    let bk = lid / TILE_COLS;
    // Registers: rows row0 .. row0 + 7, columns col0 + 16 j.
    let tx = lid % 16u;
    let ty = lid / 16u;
    let row0 = row_base + ty * 8u;
    let col0 = col_base + tx;
    acc0 = tile_init(row0 + 0u, col0);
    acc1 = tile_init(row0 + 1u, col0);
    acc2 = tile_init(row0 + 2u, col0);
    acc3 = tile_init(row0 + 3u, col0);
    acc4 = tile_init(row0 + 4u, col0);
    acc5 = tile_init(row0 + 5u, col0);
    acc6 = tile_init(row0 + 6u, col0);
    acc7 = tile_init(row0 + 7u, col0);
    let srow = row_base + sr;
    let bcol = col_base + bc;
    var sa = vec4<f32>(a_value(srow, sk), a_value(srow, sk + 1u), a_value(srow, sk + 2u), a_value(srow, sk + 3u));
    var sb = vec2<f32>(b_value(bk, bcol), b_value(bk + 4u, bcol));
    for (var c = 0u; c < chunks; c++) {
        let at = sk * (TILE_ROWS / 4u) + sr / 4u;
        let lane = sr % 4u;
        as_[at][lane] = sa.x;
        as_[at + TILE_ROWS / 4u][lane] = sa.y;
        as_[at + 2u * (TILE_ROWS / 4u)][lane] = sa.z;
        as_[at + 3u * (TILE_ROWS / 4u)][lane] = sa.w;
        bs[bk * 16u + bc % 16u][bc / 16u] = sb.x;
        bs[(bk + 4u) * 16u + bc % 16u][bc / 16u] = sb.y;
        workgroupBarrier();
        if (c + 1u < chunks) {
            let k = (c + 1u) * TILE_K;
            sa = vec4<f32>(a_value(srow, k + sk), a_value(srow, k + sk + 1u), a_value(srow, k + sk + 2u), a_value(srow, k + sk + 3u));
            sb = vec2<f32>(b_value(k + bk, bcol), b_value(k + bk + 4u, bcol));
        }
        let n = min(TILE_K, K_DIM - c * TILE_K);
        if (n == TILE_K) {
            for (var kk = 0u; kk < TILE_K; kk++) {
                tile_mac(kk, tx, ty);
            }
        } else {
            for (var kk = 0u; kk < n; kk++) {
                tile_mac(kk, tx, ty);
            }
        }
        workgroupBarrier();
    }
    tile_store(acc0, row0 + 0u, col0);
    tile_store(acc1, row0 + 1u, col0);
    tile_store(acc2, row0 + 2u, col0);
    tile_store(acc3, row0 + 3u, col0);
    tile_store(acc4, row0 + 4u, col0);
    tile_store(acc5, row0 + 5u, col0);
    tile_store(acc6, row0 + 6u, col0);
    tile_store(acc7, row0 + 7u, col0);
}

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    if (SMALL) {
        small_step(gid.x + gid.y * nwg.x * WG);
        return;
    }
    let tile = wid.x + wid.y * nwg.x;
    let tiles = ((p.rows + TILE_ROWS - 1u) / TILE_ROWS) * ((N_DIM + TILE_COLS - 1u) / TILE_COLS);
    if (tile >= tiles) {
        return;
    }
    tiled_step(lid, tile);
}
