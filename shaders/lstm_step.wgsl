// Kernel: lstm_step (fused: gate pre-activations + Keras LSTM cell update, double-buffered state)
// CPU twin: cpu::lstm_step (cpu::dense(x, kernel, bias) + cpu::matmul_acc(h, recurrent) +
// cpu::lstm_cell), as in seq2seq::Decoder::step and seq2seq::Encoder::run (gate order i, f, g, o):
//   z = x·W + h·U + b;  c' = σ(f)·c + σ(i)·tanh(g);  h' = σ(o)·tanh(c')
// Every output sums its four gates in the CPU's order (bias, then x·W, then h·U, k ascending,
// one fused multiply-add per term) with the CPU's exp/σ/tanh, so both paths below give the
// same bits. Two paths (the override SMALL picks one):
// - SMALL (few rows, latency): each thread owns one unit of SMALL_ROWS rows, reading weights
//   and inputs straight from storage (4 weights + 4 inputs per 16 fused multiply-adds).
// - tiled (SMALL false; throughput; WG must be TILE_THREADS = 256): a workgroup computes a tile
//   of TILE_ROWS rows x TILE_UNITS units x 4 gates. The operand [x | h] (k = 0 .. IN_DIM + UNITS)
//   and the weights [W; U] are walked in chunks of TILE_K k values, staged in workgroup memory
//   (the next chunk is loaded into registers while the current one is used); each thread holds
//   8 rows x 2 units x 4 gates in registers: per k, 4 vector workgroup loads feed 64
//   multiply-adds. Tile edges (rows, units, k) are bounds-checked; the last k chunk stops at K.
// With EMBED_VOCAB > 0 the input is an embedding: x is the [EMBED_VOCAB, IN_DIM] table and row r
// of the input is table row ids[r] (twin cpu::embedding_gather; an id outside the table gives a
// NaN input row, as embedding_gather.wgsl does).
// With GATHER, row r continues the state of row parents[r] of state_prev (which has prev_rows
// rows): the beam's reorder (twin States::gather_from, reorder_rows.wgsl) read in place.
// Numerics (exp_ref, sigmoid_ref, tanh_ref, is_nan_bits): shaders/numerics.wgsl, prepended by the registry.
// Bindings (group 0):
//   0 x           storage read        input rows: row r at x_offset + r * x_stride, IN_DIM values
//                                     (or the embedding table)
//   1 weights     storage read        [IN_DIM, 4U] kernel | [U, 4U] recurrent | [4U] bias
//   2 state_prev  storage read        [rows, U] h | [rows, U] c  ([prev_rows, U] each with GATHER)
//   3 state_next  storage read_write  [rows, U] h | [rows, U] c  (never the same buffer as 2)
//   4 seq_out     storage read_write  h copy at seq_offset + r * seq_stride (when WRITE_SEQ)
//   5 ids         storage read        [rows] u32 embedding ids (when EMBED_VOCAB > 0)
//   6 parents     storage read        [rows] u32 state row each row continues (when GATHER)
//   7 p           uniform             Params
// Overrides: IN_DIM, UNITS (model sizes), WG (workgroup size), WRITE_SEQ, SMALL, EMBED_VOCAB,
// GATHER.
// Precision: `Weight` is f32, or f16 in the registry's f16 variant (which adds `enable f16;`);
// arithmetic and state are f32 either way.

alias Weight = f32;

override IN_DIM: u32 = 1u;
override UNITS: u32 = 1u;
override WG: u32 = 256u;
override WRITE_SEQ: bool = false;
override SMALL: bool = false;
override EMBED_VOCAB: u32 = 0u;
override GATHER: bool = false;

struct Params {
    rows: u32,
    x_stride: u32,
    x_offset: u32,
    seq_stride: u32,
    seq_offset: u32,
    prev_rows: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<Weight>;
@group(0) @binding(2) var<storage, read> state_prev: array<f32>;
@group(0) @binding(3) var<storage, read_write> state_next: array<f32>;
@group(0) @binding(4) var<storage, read_write> seq_out: array<f32>;
@group(0) @binding(5) var<storage, read> ids: array<u32>;
@group(0) @binding(6) var<storage, read> parents: array<u32>;
@group(0) @binding(7) var<uniform> p: Params;

// The row of state_prev that row `row` continues.
fn prev_row(row: u32) -> u32 {
    if (GATHER) {
        return parents[row];
    }
    return row;
}

// Rows of state_prev (its c half starts after this many rows of h).
fn prev_rows() -> u32 {
    if (GATHER) {
        return p.prev_rows;
    }
    return p.rows;
}

// Where input row `row` starts in x; NAN_ROW for an embedding id outside the table.
const NAN_ROW: u32 = 0xffffffffu;

fn x_row(row: u32) -> u32 {
    if (EMBED_VOCAB > 0u) {
        let id = ids[row];
        return select(NAN_ROW, id * IN_DIM, id < EMBED_VOCAB);
    }
    return p.x_offset + row * p.x_stride;
}

// Input value k of the row starting at `start` (from x_row).
fn x_value(start: u32, k: u32) -> f32 {
    if (start == NAN_ROW) {
        return bitcast<f32>(0x7fc00000u);
    }
    return x[start + k];
}

// The four gate weights (i, f, g, o) of column `at` of a [*, 4U] matrix.
fn weight4(at: u32) -> vec4<f32> {
    return vec4<f32>(f32(weights[at]), f32(weights[at + UNITS]), f32(weights[at + 2u * UNITS]), f32(weights[at + 3u * UNITS]));
}

// The cell update of one (row, unit) from its gate pre-activations z = (i, f, g, o).
fn cell(z: vec4<f32>, row: u32, unit: u32) {
    let total = p.rows * UNITS;
    let at = row * UNITS + unit;
    let zi = sigmoid_ref(z.x);
    let zf = sigmoid_ref(z.y);
    let zg = tanh_ref(z.z);
    let zo = sigmoid_ref(z.w);
    let c_prev = state_prev[(prev_rows() + prev_row(row)) * UNITS + unit];
    let c_new = zf * c_prev + zi * zg;
    let h_new = zo * tanh_ref(c_new);
    state_next[at] = h_new;
    state_next[total + at] = c_new;
    if (WRITE_SEQ) {
        seq_out[p.seq_offset + row * p.seq_stride + unit] = h_new;
    }
}

// ---- SMALL path -------------------------------------------------------------------------

// Rows one SMALL thread computes (rows past the end repeat the last row and are not written).
const SMALL_ROWS: u32 = 4u;

fn small_step(i: u32) {
    let blocks = (p.rows + SMALL_ROWS - 1u) / SMALL_ROWS;
    if (i >= blocks * UNITS) {
        return;
    }
    let j = i % UNITS;
    let r0 = (i / UNITS) * SMALL_ROWS;
    let last = p.rows - 1u;
    let r1 = min(r0 + 1u, last);
    let r2 = min(r0 + 2u, last);
    let r3 = min(r0 + 3u, last);
    let g = 4u * UNITS;
    let bias = weight4((IN_DIM + UNITS) * g + j);
    var s0 = bias;
    var s1 = bias;
    var s2 = bias;
    var s3 = bias;
    let x0 = x_row(r0);
    let x1 = x_row(r1);
    let x2 = x_row(r2);
    let x3 = x_row(r3);
    for (var k = 0u; k < IN_DIM; k++) {
        let w = weight4(k * g + j);
        s0 = fma(vec4<f32>(x_value(x0, k)), w, s0);
        s1 = fma(vec4<f32>(x_value(x1, k)), w, s1);
        s2 = fma(vec4<f32>(x_value(x2, k)), w, s2);
        s3 = fma(vec4<f32>(x_value(x3, k)), w, s3);
    }
    let h0 = prev_row(r0) * UNITS;
    let h1 = prev_row(r1) * UNITS;
    let h2 = prev_row(r2) * UNITS;
    let h3 = prev_row(r3) * UNITS;
    let rec0 = IN_DIM * g;
    for (var k = 0u; k < UNITS; k++) {
        let u = weight4(rec0 + k * g + j);
        s0 = fma(vec4<f32>(state_prev[h0 + k]), u, s0);
        s1 = fma(vec4<f32>(state_prev[h1 + k]), u, s1);
        s2 = fma(vec4<f32>(state_prev[h2 + k]), u, s2);
        s3 = fma(vec4<f32>(state_prev[h3 + k]), u, s3);
    }
    cell(s0, r0, j);
    if (r0 + 1u < p.rows) {
        cell(s1, r0 + 1u, j);
    }
    if (r0 + 2u < p.rows) {
        cell(s2, r0 + 2u, j);
    }
    if (r0 + 3u < p.rows) {
        cell(s3, r0 + 3u, j);
    }
}

// ---- tiled path -------------------------------------------------------------------------

const TILE_ROWS: u32 = 128u;
const TILE_UNITS: u32 = 32u;
const TILE_K: u32 = 8u;
// Threads of a tile: 16 row groups (8 consecutive rows each) x 16 unit groups (units u, u + 16).
const TILE_THREADS: u32 = 256u;

// Chunk of [x | h], transposed: value (k, row) at xs[k * TILE_ROWS / 4 + row / 4][row % 4].
var<workgroup> xs: array<vec4<f32>, 256>;
// Chunk of the weights: gates (i, f, g, o) of (k, unit) at ws[k * TILE_UNITS + unit].
var<workgroup> ws: array<vec4<f32>, 256>;

// Gate sums of the thread's 8 rows (first digit) x 2 units (second digit).
var<private> acc00: vec4<f32>;
var<private> acc01: vec4<f32>;
var<private> acc10: vec4<f32>;
var<private> acc11: vec4<f32>;
var<private> acc20: vec4<f32>;
var<private> acc21: vec4<f32>;
var<private> acc30: vec4<f32>;
var<private> acc31: vec4<f32>;
var<private> acc40: vec4<f32>;
var<private> acc41: vec4<f32>;
var<private> acc50: vec4<f32>;
var<private> acc51: vec4<f32>;
var<private> acc60: vec4<f32>;
var<private> acc61: vec4<f32>;
var<private> acc70: vec4<f32>;
var<private> acc71: vec4<f32>;

// Element (row, k) of the operand [x | h] (`start`: x_row(row), `h_start`: where the row's h
// starts in state_prev); 0 outside it.
fn operand(row: u32, start: u32, h_start: u32, k: u32) -> f32 {
    if (row >= p.rows) {
        return 0.0;
    }
    if (k < IN_DIM) {
        return x_value(start, k);
    }
    if (k < IN_DIM + UNITS) {
        return state_prev[h_start + k - IN_DIM];
    }
    return 0.0;
}

// Gate weights of (k, unit) in [W; U]; 0 outside it.
fn tile_weight(k: u32, unit: u32) -> vec4<f32> {
    if (k >= IN_DIM + UNITS || unit >= UNITS) {
        return vec4<f32>(0.0);
    }
    return weight4(k * 4u * UNITS + unit);
}

// One k of the tile: 2 + 2 vector loads, 64 fused multiply-adds.
fn tile_mac(kk: u32, tx: u32, ty: u32) {
    let a0 = xs[kk * (TILE_ROWS / 4u) + ty * 2u];
    let a1 = xs[kk * (TILE_ROWS / 4u) + ty * 2u + 1u];
    let w0 = ws[kk * TILE_UNITS + tx];
    let w1 = ws[kk * TILE_UNITS + tx + 16u];
    acc00 = fma(vec4<f32>(a0.x), w0, acc00);
    acc01 = fma(vec4<f32>(a0.x), w1, acc01);
    acc10 = fma(vec4<f32>(a0.y), w0, acc10);
    acc11 = fma(vec4<f32>(a0.y), w1, acc11);
    acc20 = fma(vec4<f32>(a0.z), w0, acc20);
    acc21 = fma(vec4<f32>(a0.z), w1, acc21);
    acc30 = fma(vec4<f32>(a0.w), w0, acc30);
    acc31 = fma(vec4<f32>(a0.w), w1, acc31);
    acc40 = fma(vec4<f32>(a1.x), w0, acc40);
    acc41 = fma(vec4<f32>(a1.x), w1, acc41);
    acc50 = fma(vec4<f32>(a1.y), w0, acc50);
    acc51 = fma(vec4<f32>(a1.y), w1, acc51);
    acc60 = fma(vec4<f32>(a1.z), w0, acc60);
    acc61 = fma(vec4<f32>(a1.z), w1, acc61);
    acc70 = fma(vec4<f32>(a1.w), w0, acc70);
    acc71 = fma(vec4<f32>(a1.w), w1, acc71);
}

fn tile_cell(z: vec4<f32>, row: u32, unit: u32) {
    if (row < p.rows && unit < UNITS) {
        cell(z, row, unit);
    }
}

fn tiled_step(lid: u32, tile: u32) {
    let unit_tiles = (UNITS + TILE_UNITS - 1u) / TILE_UNITS;
    let row_base = (tile / unit_tiles) * TILE_ROWS;
    let unit_base = (tile % unit_tiles) * TILE_UNITS;
    let k_total = IN_DIM + UNITS;
    let chunks = (k_total + TILE_K - 1u) / TILE_K;
    // Staging: [x | h] row `sr`, k sk .. sk + 3 of the chunk; weights of unit `wu`, k `wk`.
    let sr = lid / 2u;
    let sk = (lid % 2u) * 4u;
    let wu = lid % TILE_UNITS;
    let wk = lid / TILE_UNITS;
    // Registers: rows row0 .. row0 + 7, units unit0 and unit0 + 16.
    let tx = lid % 16u;
    let ty = lid / 16u;
    let row0 = row_base + ty * 8u;
    let unit0 = unit_base + tx;
    let bias0 = tile_weight_bias(unit0);
    let bias1 = tile_weight_bias(unit0 + 16u);
    acc00 = bias0;
    acc01 = bias1;
    acc10 = bias0;
    acc11 = bias1;
    acc20 = bias0;
    acc21 = bias1;
    acc30 = bias0;
    acc31 = bias1;
    acc40 = bias0;
    acc41 = bias1;
    acc50 = bias0;
    acc51 = bias1;
    acc60 = bias0;
    acc61 = bias1;
    acc70 = bias0;
    acc71 = bias1;
    let srow = row_base + sr;
    var sx = 0u;
    var sh = 0u;
    if (srow < p.rows) {
        sx = x_row(srow);
        sh = prev_row(srow) * UNITS;
    }
    var sa = vec4<f32>(operand(srow, sx, sh, sk), operand(srow, sx, sh, sk + 1u), operand(srow, sx, sh, sk + 2u), operand(srow, sx, sh, sk + 3u));
    var sw = tile_weight(wk, unit_base + wu);
    for (var c = 0u; c < chunks; c++) {
        let at = sk * (TILE_ROWS / 4u) + sr / 4u;
        let lane = sr % 4u;
        xs[at][lane] = sa.x;
        xs[at + TILE_ROWS / 4u][lane] = sa.y;
        xs[at + 2u * (TILE_ROWS / 4u)][lane] = sa.z;
        xs[at + 3u * (TILE_ROWS / 4u)][lane] = sa.w;
        ws[wk * TILE_UNITS + wu] = sw;
        workgroupBarrier();
        if (c + 1u < chunks) {
            let k = (c + 1u) * TILE_K;
            sa = vec4<f32>(operand(srow, sx, sh, k + sk), operand(srow, sx, sh, k + sk + 1u), operand(srow, sx, sh, k + sk + 2u), operand(srow, sx, sh, k + sk + 3u));
            sw = tile_weight(k + wk, unit_base + wu);
        }
        let n = min(TILE_K, k_total - c * TILE_K);
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
    tile_cell(acc00, row0 + 0u, unit0 + 0u);
    tile_cell(acc01, row0 + 0u, unit0 + 16u);
    tile_cell(acc10, row0 + 1u, unit0 + 0u);
    tile_cell(acc11, row0 + 1u, unit0 + 16u);
    tile_cell(acc20, row0 + 2u, unit0 + 0u);
    tile_cell(acc21, row0 + 2u, unit0 + 16u);
    tile_cell(acc30, row0 + 3u, unit0 + 0u);
    tile_cell(acc31, row0 + 3u, unit0 + 16u);
    tile_cell(acc40, row0 + 4u, unit0 + 0u);
    tile_cell(acc41, row0 + 4u, unit0 + 16u);
    tile_cell(acc50, row0 + 5u, unit0 + 0u);
    tile_cell(acc51, row0 + 5u, unit0 + 16u);
    tile_cell(acc60, row0 + 6u, unit0 + 0u);
    tile_cell(acc61, row0 + 6u, unit0 + 16u);
    tile_cell(acc70, row0 + 7u, unit0 + 0u);
    tile_cell(acc71, row0 + 7u, unit0 + 16u);
}

// The bias gates of `unit` (0 past the last unit).
fn tile_weight_bias(unit: u32) -> vec4<f32> {
    if (unit >= UNITS) {
        return vec4<f32>(0.0);
    }
    return weight4((IN_DIM + UNITS) * 4u * UNITS + unit);
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
    let tiles = ((p.rows + TILE_ROWS - 1u) / TILE_ROWS) * ((UNITS + TILE_UNITS - 1u) / TILE_UNITS);
    if (tile >= tiles) {
        return;
    }
    tiled_step(lid, tile);
}
