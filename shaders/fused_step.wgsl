// Kernel: fused_step (one whole decoder step of a KTN model for a block of rows: every decoder
// LSTM layer, the output layer, the log-softmax and one position of MIOpen's greedy walk, in one
// dispatch; workgroup g takes rows g B .. g B + B - 1)
// CPU twin: one step of Predictor::predict_batch with DecodeMode::Miopen (seq2seq::Decoder::step,
// cpu::log_softmax_rows, search::greedy_position); gpu::fused is its host side (the encoder runs
// as in the multi-dispatch path, then one of these a step, then one read-back of the records).
// The registry prepends numerics.wgsl and the solver's rules library (`solver_prefix_valid`,
// `solver_config_len`, `SOLVER_MAX_LEN`), as for greedy_step.
// The same arithmetic as the multi-dispatch kernels, in the same order, so the same bits:
// - LSTM gates as lstm_step.wgsl: bias, then x·W (k ascending), then h·U (k ascending), one
//   fused multiply-add per term, the cell with exp_ref / sigmoid_ref / tanh_ref;
// - the output layer as dense_log_softmax.wgsl: bias (0 without one), then k ascending, fma;
//   its log-softmax (one thread per row, serial sums; only the taken token's value is formed);
// - the walk as greedy_step.wgsl (the best stopping token by f32 total order of the raw score,
//   ties to the larger token id; "-1" or NaN or nothing accepted fails the row; rows done or
//   failed are left).
// Rows that are not running are not computed (their states and records stay); a block without a
// running row returns at once. The fed token is the record's last token (token 0 at length 0),
// so the records are the only search state.
// How: a thread takes (unit j, 4 rows) at a time (B is a multiple of 4), so each weight vec4
// (the four gates of a (k, unit), single_predict.wgsl's layout) it reads feeds four rows' gate
// sums, kept in registers, and the cell follows at once. The block's h lives in workgroup
// memory for the step (each layer's old h read from `state`, the new h of the layer below
// beside it, written back by the cell); c is read and written by the thread that owns it, in
// `state`.
// Weights (binding 0): gpu::single::pack_weights' layout; EMB_OFF is the offset (vec4s) of the
// embedding, after which come the decoder LSTM layers and the output layer.
// Loop iterations per invocation (llvmpipe cuts every loop past 65,535 in one invocation,
// silently): gpu::fused::loop_iterations counts them; for gfx908 ConvAsm1x1U (2 x 128 units,
// E 8, V 38, 8 positions, WG 128) at most 955 a step for B 16 (599 for B 8, 421 for B 4).
// Bindings (group 0):
//   0 weights  storage read        packed weights (above)
//   1 vocab    storage read        greedy_step's vocabulary words
//   2 rules    storage read        [rows, 8] i32 rule words, then the tables they index
//   3 state    storage read_write  per layer l, at l 2 rows U: [rows, U] h | [rows, U] c
//   4 hyp      storage read_write  [rows, 2 MAX_LEN + 4] u32 records (greedy_step's layout)
//   5 p        uniform             Params
// Overrides: NL (decoder LSTM layers), U, E, V, MAX_LEN, B (rows a workgroup), WG, EMB_OFF,
// H_N (B U), H2_N (2 B U) and SV_N (B V).

override NL: u32 = 1u;
override U: u32 = 4u;
override E: u32 = 4u;
override V: u32 = 1u;
override MAX_LEN: u32 = 8u;
override B: u32 = 1u;
override WG: u32 = 128u;
override EMB_OFF: u32 = 0u;
override H_N: u32 = 4u;
override H2_N: u32 = 8u;
override SV_N: u32 = 1u;

const END_VALUE: i32 = -2147483647 - 1;
const NEVER_VALUE: i32 = -2147483647;
const NONE: u32 = 0xffffffffu;

struct Params {
    rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> weights: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> vocab: array<i32>;
@group(0) @binding(2) var<storage, read> rules: array<i32>;
@group(0) @binding(3) var<storage, read_write> state: array<f32>;
@group(0) @binding(4) var<storage, read_write> hyp: array<u32>;
@group(0) @binding(5) var<uniform> p: Params;

// The current layer's old h of the block ([B, U], from `state`), and the new h of the last two
// layers ([2, B, U]: layer l's at l % 2).
var<workgroup> hold: array<f32, H_N>;
var<workgroup> hnew: array<f32, H2_N>;
// Raw scores of the step, [B, V], and whether the walk would stop at each token.
var<workgroup> scores: array<f32, SV_N>;
var<workgroup> cand_stop: array<u32, SV_N>;
// Per row: running (and in range), the fed token, the log-softmax's max and log-sum.
var<workgroup> live: array<u32, B>;
var<workgroup> feed: array<u32, B>;
var<workgroup> row_max: array<f32, B>;
var<workgroup> row_log_sum: array<f32, B>;
var<workgroup> live_n: u32;
// The block's first row.
var<private> row0: u32;

// ---- weight layout (gpu::single::pack_weights) -------------------------------------------

fn k4(k: u32) -> u32 {
    return (k + 3u) / 4u;
}

fn lstm_size(in4: u32) -> u32 {
    return (4u * in4 + U) * U + U;
}

fn dec_lstm_off(l: u32) -> u32 {
    return EMB_OFF + V * k4(E) + select(0u, lstm_size(k4(E)) + (l - 1u) * lstm_size(U / 4u), l > 0u);
}

fn out_off() -> u32 {
    return dec_lstm_off(NL);
}

fn weight_scalar(off: u32, i: u32) -> f32 {
    return weights[off + i / 4u][i % 4u];
}

// ---- records -----------------------------------------------------------------------------

fn words() -> u32 {
    return 2u * MAX_LEN + 4u;
}

// Where row r of the block's record starts.
fn rec_at(r: u32) -> u32 {
    return (row0 + r) * words();
}

fn rule_of(r: u32) -> array<i32, 8> {
    var rule: array<i32, 8>;
    for (var k = 0u; k < 8u; k++) {
        rule[k] = rules[(row0 + r) * 8u + k];
    }
    return rule;
}

// The integer values of row r's prefix (greedy_step's `buf`).
fn prefix_of(r: u32) -> array<i32, SOLVER_MAX_LEN> {
    var buf: array<i32, SOLVER_MAX_LEN>;
    for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
        buf[k] = 0;
    }
    let h0 = rec_at(r);
    let len = hyp[h0 + 2u * MAX_LEN];
    for (var k = 0u; k < min(len, SOLVER_MAX_LEN); k++) {
        buf[k] = vocab[V + hyp[h0 + MAX_LEN + k]];
    }
    return buf;
}

// ---- layers ------------------------------------------------------------------------------

// Input values 4 k .. 4 k + 3 of row r of decoder layer l: the fed token's embedding (layer 0)
// or layer l - 1's new h.
fn input4(l: u32, r: u32, k: u32) -> vec4<f32> {
    if (l == 0u) {
        return weights[EMB_OFF + feed[r] * k4(E) + k];
    }
    let b = ((l - 1u) % 2u) * H_N + r * U + 4u * k;
    return vec4<f32>(hnew[b], hnew[b + 1u], hnew[b + 2u], hnew[b + 3u]);
}

// Layer l's old h of row r, values 4 k .. 4 k + 3.
fn old4(r: u32, k: u32) -> vec4<f32> {
    let b = r * U + 4u * k;
    return vec4<f32>(hold[b], hold[b + 1u], hold[b + 2u], hold[b + 3u]);
}

// The gate sums of one row get the four terms of one input vec4 (k ascending within it).
fn acc4(s: vec4<f32>, x: vec4<f32>, w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>) -> vec4<f32> {
    var a = fma(vec4<f32>(x.x), w0, s);
    a = fma(vec4<f32>(x.y), w1, a);
    a = fma(vec4<f32>(x.z), w2, a);
    return fma(vec4<f32>(x.w), w3, a);
}

// lstm_step.wgsl's cell of (row r, unit j) from its gate sums; h and c to `state` and hnew.
fn cell(l: u32, r: u32, j: u32, g: vec4<f32>) {
    if (live[r] == 0u) {
        return;
    }
    let h_base = l * 2u * p.rows * U;
    let c_base = h_base + p.rows * U;
    let at = (row0 + r) * U + j;
    let zi = sigmoid_ref(g.x);
    let zf = sigmoid_ref(g.y);
    let zg = tanh_ref(g.z);
    let zo = sigmoid_ref(g.w);
    let c_new = zf * state[c_base + at] + zi * zg;
    let h_new = zo * tanh_ref(c_new);
    hnew[(l % 2u) * H_N + r * U + j] = h_new;
    state[h_base + at] = h_new;
    state[c_base + at] = c_new;
}

// One LSTM step of decoder layer l for the block's running rows: a thread takes (unit j, 4 rows)
// at a time, each weight vec4 read once for the 4 rows' sums.
fn lstm_layer(tid: u32, l: u32) {
    let off = dec_lstm_off(l);
    let in4 = select(U / 4u, k4(E), l == 0u);
    let rec0 = off + 4u * in4 * U;
    // The layer's old h of the block.
    let h_base = l * 2u * p.rows * U;
    for (var o = tid; o < B * U; o += WG) {
        let r = o / U;
        var h = 0.0;
        if (live[r] != 0u) {
            h = state[h_base + (row0 + r) * U + o % U];
        }
        hold[o] = h;
    }
    workgroupBarrier();
    for (var o = tid; o < (B / 4u) * U; o += WG) {
        let r = 4u * (o / U);
        let j = o % U;
        if (live[r] + live[r + 1u] + live[r + 2u] + live[r + 3u] == 0u) {
            continue;
        }
        let bias = weights[rec0 + U * U + j];
        var s0 = bias;
        var s1 = bias;
        var s2 = bias;
        var s3 = bias;
        for (var k = 0u; k < in4; k++) {
            let w = off + 4u * k * U + j;
            let w0 = weights[w];
            let w1 = weights[w + U];
            let w2 = weights[w + 2u * U];
            let w3 = weights[w + 3u * U];
            s0 = acc4(s0, input4(l, r, k), w0, w1, w2, w3);
            s1 = acc4(s1, input4(l, r + 1u, k), w0, w1, w2, w3);
            s2 = acc4(s2, input4(l, r + 2u, k), w0, w1, w2, w3);
            s3 = acc4(s3, input4(l, r + 3u, k), w0, w1, w2, w3);
        }
        for (var k = 0u; k < U / 4u; k++) {
            let w = rec0 + 4u * k * U + j;
            let w0 = weights[w];
            let w1 = weights[w + U];
            let w2 = weights[w + 2u * U];
            let w3 = weights[w + 3u * U];
            s0 = acc4(s0, old4(r, k), w0, w1, w2, w3);
            s1 = acc4(s1, old4(r + 1u, k), w0, w1, w2, w3);
            s2 = acc4(s2, old4(r + 2u, k), w0, w1, w2, w3);
            s3 = acc4(s3, old4(r + 3u, k), w0, w1, w2, w3);
        }
        cell(l, r, j, s0);
        cell(l, r + 1u, j, s1);
        cell(l, r + 2u, j, s2);
        cell(l, r + 3u, j, s3);
    }
    workgroupBarrier();
}

// The output layer and the log-softmax's max and log-sum of every running row.
fn output_layer(tid: u32) {
    let off = out_off();
    let bias = off + (U / 4u) * V;
    let last = ((NL - 1u) % 2u) * H_N;
    for (var o = tid; o < B * V; o += WG) {
        let r = o / V;
        let n = o % V;
        if (live[r] != 0u) {
            var acc = weight_scalar(bias, n);
            let hb = last + r * U;
            for (var k = 0u; k < U / 4u; k++) {
                let w = weights[off + k * V + n];
                let b = hb + 4u * k;
                acc = fma(hnew[b], w.x, acc);
                acc = fma(hnew[b + 1u], w.y, acc);
                acc = fma(hnew[b + 2u], w.z, acc);
                acc = fma(hnew[b + 3u], w.w, acc);
            }
            scores[o] = acc;
        }
    }
    workgroupBarrier();
    if (tid < B && live[tid] != 0u) {
        let base = tid * V;
        var m = scores[base];
        for (var j = 0u; j < V; j++) {
            m = max(m, scores[base + j]);
        }
        var sum = 0.0;
        for (var j = 0u; j < V; j++) {
            sum += exp_ref(scores[base + j] - m);
        }
        row_max[tid] = m;
        row_log_sum[tid] = log(sum);
    }
    // (The walk's candidates below read only the scores, its update reads these after the
    // candidates' barrier.)
}

// ---- one position of the greedy walk (greedy_step.wgsl) ----------------------------------

fn greedy_position(tid: u32) {
    // Every (row, token): does the walk stop there.
    for (var o = tid; o < B * V; o += WG) {
        let r = o / V;
        let t = o % V;
        var stops = false;
        if (live[r] != 0u) {
            let len = hyp[rec_at(r) + 2u * MAX_LEN];
            let value = vocab[V + u32(vocab[t])];
            stops = value == END_VALUE;
            if (value != END_VALUE && value != NEVER_VALUE && len < MAX_LEN && len < SOLVER_MAX_LEN) {
                var cand = prefix_of(r);
                cand[len] = value;
                stops = solver_prefix_valid(rule_of(r), cand, len + 1u);
            }
        }
        cand_stop[o] = select(0u, 1u, stops);
    }
    workgroupBarrier();
    // One thread per row takes the best stopping token and updates the record.
    if (tid < B && live[tid] != 0u) {
        let r = tid;
        let base = r * V;
        let h0 = rec_at(r);
        let len_at = h0 + 2u * MAX_LEN;
        var fail = false;
        var bk = 0u;
        var bt = NONE;
        for (var t = 0u; t < V; t++) {
            let s = scores[base + t];
            fail = fail || is_nan_bits(s);
            let key = order_key(s);
            if (cand_stop[base + t] != 0u && (bt == NONE || key > bk || (key == bk && t > bt))) {
                bk = key;
                bt = t;
            }
        }
        if (fail || bt == NONE || vocab[V + u32(vocab[bt])] == END_VALUE) {
            hyp[len_at + 1u] = 2u;
        } else {
            let len = hyp[len_at];
            var buf = prefix_of(r);
            buf[len] = vocab[V + u32(vocab[bt])];
            // dense_log_softmax.wgsl's value of the taken token (no NaN: the row would fail).
            let logp = scores[base + bt] - row_max[r] - row_log_sum[r];
            hyp[h0 + len] = bt;
            hyp[h0 + MAX_LEN + len] = u32(vocab[bt]);
            hyp[len_at + 2u] = bitcast<u32>(bitcast<f32>(hyp[len_at + 2u]) + logp);
            hyp[len_at] = len + 1u;
            if (len + 1u >= min(MAX_LEN, solver_config_len(rule_of(r), buf, len + 1u))) {
                hyp[len_at + 1u] = 1u;
            }
        }
    }
}

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    row0 = (wid.x + wid.y * nwg.x) * B;
    // Which rows run, and the token each was fed.
    if (tid < B) {
        let row = row0 + tid;
        var run = 0u;
        var fed = 0u;
        if (row < p.rows) {
            let h0 = row * words();
            let len = hyp[h0 + 2u * MAX_LEN];
            if (hyp[h0 + 2u * MAX_LEN + 1u] == 0u && len < MAX_LEN) {
                run = 1u;
                if (len > 0u) {
                    fed = min(hyp[h0 + len - 1u], V - 1u);
                }
            }
        }
        live[tid] = run;
        feed[tid] = fed;
    }
    workgroupBarrier();
    if (tid == 0u) {
        var n = 0u;
        for (var r = 0u; r < B; r++) {
            n += live[r];
        }
        live_n = n;
    }
    if (workgroupUniformLoad(&live_n) == 0u) {
        return;
    }
    for (var l = 0u; l < NL; l++) {
        lstm_layer(tid, l);
    }
    output_layer(tid);
    greedy_position(tid);
}
