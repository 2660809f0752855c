// Kernel: single_predict (a whole KTN prediction in one dispatch, one workgroup per ROWS problems:
// the encoder, every decoder step, the output layer, the log-softmax and MIOpen's greedy walk)
// CPU twin: Predictor::predict_batch with DecodeMode::Miopen (seq2seq::Encoder::run,
// seq2seq::Decoder::step, cpu::log_softmax_rows, search::greedy_miopen). Workgroups share
// nothing: gpu::single runs one problem a workgroup (ROWS 1), so a few problems spread over
// the device's cores (ROWS > 1 puts several problems in one workgroup, sharing each weight load).
// The registry prepends numerics.wgsl and the solver's rules library (`solver_prefix_valid`,
// `solver_config_len`, `SOLVER_MAX_LEN`), as for greedy_step.
// The same arithmetic as the multi-dispatch path, in the same order, so the same bits:
// - LSTM gates as lstm_step.wgsl: bias, then x·W (k ascending), then h·U (k ascending), one
//   fused multiply-add per term, the cell with exp_ref / sigmoid_ref / tanh_ref;
// - dense layers as dense.wgsl: bias (0 without one), then k ascending, fma;
// - the log-softmax as dense_log_softmax.wgsl (one thread per row, serial sums);
// - the greedy walk as greedy_step.wgsl (the best stopping token by f32 total order of the raw
//   score, ties to the larger token id; "-1" or NaN or nothing accepted fails the row).
// The encoder runs time-major (at step t every layer in turn: layer l reads layer l - 1's new h),
// which gives every layer the inputs the layer-by-layer CPU encoder gives it.
// State: every layer's h and c, the scores and the records in workgroup memory (a thread's
// gate sums in its registers);
// weights are read from storage once per step (per row group), four k at a time as vec4s.
// Weights (binding 1, vec4 units; layout built by gpu::single::pack_weights; k dimensions
// padded with zeros to a multiple of 4, units a multiple of 4):
//   encoder dense (ED > 0): [F4, ED] vec4 (k4, n) = W[4 k4 .. 4 k4 + 3, n] | [ED4] bias (0s)
//   each encoder LSTM layer: [4 IN4 + U, U] vec4 (k, unit) = gates i, f, g, o of [W; U] | [U] bias
//   embedding: [V, E4] vec4
//   each decoder LSTM layer: as the encoder's (layer 0's input is the embedding, IN4 = E4)
//   output dense: [U4, V] vec4 | [V4] bias (0s without one)
// Loop iterations per invocation (llvmpipe cuts every loop past 65,535 in one invocation,
// silently): gpu::single::loop_iterations counts them; for gfx908 ConvAsm1x1U (T 8, F 8, ED 32,
// 2 x 128 units, E 8, V 38, 8 positions) at most 4,114 for one problem, 9,905 for 8.
// Bindings (group 0):
//   0 input    storage read        [problems, T, F] f32 encoder inputs
//   1 weights  storage read        packed weights (above)
//   2 vocab    storage read        greedy_step's vocabulary words
//   3 rules    storage read        [problems, 8] i32 rule words, then the tables they index
//   4 hyp      storage read_write  [problems, 2 MAX_LEN + 4] u32 records (greedy_step's layout)
//   5 p        uniform             Params
// Overrides: T, F, ED, NL (LSTM layers of encoder and decoder), U, E, V, MAX_LEN, ROWS, WG and
// the workgroup array sizes the host derives from them (S_N, XW, X_N, SV_N, PL_N).

override T: u32 = 1u;
override F: u32 = 1u;
override ED: u32 = 0u;
override NL: u32 = 1u;
override U: u32 = 4u;
override E: u32 = 4u;
override V: u32 = 1u;
override MAX_LEN: u32 = 8u;
override ROWS: u32 = 1u;
override WG: u32 = 256u;
// NL * ROWS * U; layer 0's padded input width; ROWS * XW; ROWS * V; ROWS * MAX_LEN.
override S_N: u32 = 4u;
override XW: u32 = 4u;
override X_N: u32 = 4u;
override SV_N: u32 = 1u;
override PL_N: u32 = 8u;

const END_VALUE: i32 = -2147483647 - 1;
const NEVER_VALUE: i32 = -2147483647;
const NONE: u32 = 0xffffffffu;
// Most (row, unit) outputs of an LSTM layer one thread computes: ROWS * U <= ZMAX * WG.
const ZMAX: u32 = 8u;

struct Params {
    rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> vocab: array<i32>;
@group(0) @binding(3) var<storage, read> rules: array<i32>;
@group(0) @binding(4) var<storage, read_write> hyp: array<u32>;
@group(0) @binding(5) var<uniform> p: Params;

// Every layer's state: [NL, ROWS, U] h and c.
var<workgroup> hs: array<f32, S_N>;
var<workgroup> cs: array<f32, S_N>;
// The encoder's layer-0 input at the current time step, [ROWS, XW] (zero padded).
var<workgroup> xin: array<f32, X_N>;
// Raw scores and log-softmax of the current decoder step, [ROWS, V].
var<workgroup> scores: array<f32, SV_N>;
var<workgroup> logp: array<f32, SV_N>;
// Each candidate's order key and whether the walk would stop at it.
var<workgroup> cand_key: array<u32, SV_N>;
var<workgroup> cand_stop: array<u32, SV_N>;
// Records: tokens, value ids and integer values of the prefix; len, status (0 running, 1 done,
// 2 failed), score and the fed token per row.
var<workgroup> rec_tok: array<u32, PL_N>;
var<workgroup> rec_val: array<u32, PL_N>;
var<workgroup> rec_int: array<i32, PL_N>;
var<workgroup> rec_len: array<u32, ROWS>;
var<workgroup> rec_status: array<u32, ROWS>;
var<workgroup> rec_score: array<f32, ROWS>;
var<workgroup> feed: array<u32, ROWS>;
var<workgroup> running_n: u32;
// The first problem of this workgroup (workgroup g takes problems g ROWS .. g ROWS + ROWS - 1).
var<private> row0: u32;

// ---- weight layout ----------------------------------------------------------------------

fn k4(k: u32) -> u32 {
    return (k + 3u) / 4u;
}

fn lstm_size(in4: u32) -> u32 {
    return (4u * in4 + U) * U + U;
}

fn enc_dense_size() -> u32 {
    return select(0u, k4(F) * ED + k4(ED), ED > 0u);
}

// vec4s of layer 0's input (the encoder's is the dense output, or the raw features).
fn enc_in4() -> u32 {
    return select(k4(F), k4(ED), ED > 0u);
}

fn enc_lstm_off(l: u32) -> u32 {
    return enc_dense_size() + select(0u, lstm_size(enc_in4()) + (l - 1u) * lstm_size(U / 4u), l > 0u);
}

fn emb_off() -> u32 {
    return enc_lstm_off(NL);
}

fn dec_lstm_off(l: u32) -> u32 {
    return emb_off() + V * k4(E) + select(0u, lstm_size(k4(E)) + (l - 1u) * lstm_size(U / 4u), l > 0u);
}

fn out_off() -> u32 {
    return dec_lstm_off(NL);
}

// Scalar `i` of the vec4 array starting at `off`.
fn weight_scalar(off: u32, i: u32) -> f32 {
    return weights[off + i / 4u][i % 4u];
}

// ---- layers -----------------------------------------------------------------------------

// Where a layer's input comes from.
const SRC_XIN: u32 = 0u;
const SRC_EMBED: u32 = 1u;
const SRC_BELOW: u32 = 2u;

// Input values 4 k4 .. 4 k4 + 3 of row r of layer l.
fn input4(src: u32, l: u32, r: u32, k: u32) -> vec4<f32> {
    if (src == SRC_XIN) {
        let b = r * XW + 4u * k;
        return vec4<f32>(xin[b], xin[b + 1u], xin[b + 2u], xin[b + 3u]);
    }
    if (src == SRC_EMBED) {
        return weights[emb_off() + feed[r] * k4(E) + k];
    }
    let b = ((l - 1u) * ROWS + r) * U + 4u * k;
    return vec4<f32>(hs[b], hs[b + 1u], hs[b + 2u], hs[b + 3u]);
}

// Encoder feature k of row r at time step t; 0 past F.
fn feature(r: u32, t: u32, k: u32) -> f32 {
    if (k >= F) {
        return 0.0;
    }
    return input[((row0 + r) * T + t) * F + k];
}

// One LSTM step of layer l (weights at `off`, input of in4 vec4s from `src`) for every row.
fn lstm_layer(tid: u32, l: u32, off: u32, in4: u32, src: u32) {
    let rec0 = off + 4u * in4 * U;
    // The thread's gate sums (i, f, g, o), its i-th output in z[i], kept until every thread has
    // read the old h.
    var z: array<vec4<f32>, ZMAX>;
    var i = 0u;
    for (var o = tid; o < ROWS * U; o += WG) {
        let r = o / U;
        let j = o % U;
        var s = weights[rec0 + U * U + j];
        for (var k = 0u; k < in4; k++) {
            let xv = input4(src, l, r, k);
            let w = off + 4u * k * U + j;
            s = fma(vec4<f32>(xv.x), weights[w], s);
            s = fma(vec4<f32>(xv.y), weights[w + U], s);
            s = fma(vec4<f32>(xv.z), weights[w + 2u * U], s);
            s = fma(vec4<f32>(xv.w), weights[w + 3u * U], s);
        }
        let hb = (l * ROWS + r) * U;
        for (var k = 0u; k < U / 4u; k++) {
            let b = hb + 4u * k;
            let w = rec0 + 4u * k * U + j;
            s = fma(vec4<f32>(hs[b]), weights[w], s);
            s = fma(vec4<f32>(hs[b + 1u]), weights[w + U], s);
            s = fma(vec4<f32>(hs[b + 2u]), weights[w + 2u * U], s);
            s = fma(vec4<f32>(hs[b + 3u]), weights[w + 3u * U], s);
        }
        z[i] = s;
        i += 1u;
    }
    workgroupBarrier();
    // lstm_step.wgsl's cell.
    i = 0u;
    for (var o = tid; o < ROWS * U; o += WG) {
        let at = (l * ROWS) * U + o;
        let g = z[i];
        i += 1u;
        let zi = sigmoid_ref(g.x);
        let zf = sigmoid_ref(g.y);
        let zg = tanh_ref(g.z);
        let zo = sigmoid_ref(g.w);
        let c_new = zf * cs[at] + zi * zg;
        let h_new = zo * tanh_ref(c_new);
        hs[at] = h_new;
        cs[at] = c_new;
    }
    workgroupBarrier();
}

// The encoder dense layer at time step t into xin (dense.wgsl's order).
fn encoder_dense(tid: u32, t: u32) {
    let bias = k4(F) * ED;
    for (var o = tid; o < ROWS * ED; o += WG) {
        let r = o / ED;
        let n = o % ED;
        var acc = weight_scalar(bias, n);
        for (var k = 0u; k < k4(F); k++) {
            let w = weights[k * ED + n];
            acc = fma(feature(r, t, 4u * k), w.x, acc);
            acc = fma(feature(r, t, 4u * k + 1u), w.y, acc);
            acc = fma(feature(r, t, 4u * k + 2u), w.z, acc);
            acc = fma(feature(r, t, 4u * k + 3u), w.w, acc);
        }
        xin[r * XW + n] = acc;
    }
    workgroupBarrier();
}

// The raw features of time step t into xin (no encoder dense layer).
fn encoder_features(tid: u32, t: u32) {
    for (var o = tid; o < ROWS * XW; o += WG) {
        xin[o] = feature(o / XW, t, o % XW);
    }
    workgroupBarrier();
}

// The output layer and the log-softmax of every row (dense_log_softmax.wgsl's order).
fn output_layer(tid: u32) {
    let off = out_off();
    let bias = off + (U / 4u) * V;
    let last = (NL - 1u) * ROWS;
    for (var o = tid; o < ROWS * V; o += WG) {
        let r = o / V;
        let n = o % V;
        var acc = weight_scalar(bias, n);
        let hb = (last + r) * U;
        for (var k = 0u; k < U / 4u; k++) {
            let w = weights[off + k * V + n];
            let b = hb + 4u * k;
            acc = fma(hs[b], w.x, acc);
            acc = fma(hs[b + 1u], w.y, acc);
            acc = fma(hs[b + 2u], w.z, acc);
            acc = fma(hs[b + 3u], w.w, acc);
        }
        scores[o] = acc;
    }
    workgroupBarrier();
    if (tid < ROWS) {
        let base = tid * V;
        var m = scores[base];
        var nan = false;
        for (var j = 0u; j < V; j++) {
            let v = scores[base + j];
            nan = nan || is_nan_bits(v);
            m = max(m, v);
        }
        var sum = 0.0;
        for (var j = 0u; j < V; j++) {
            sum += exp_ref(scores[base + j] - m);
        }
        let log_sum = log(sum);
        for (var j = 0u; j < V; j++) {
            logp[base + j] = select(scores[base + j] - m - log_sum, bitcast<f32>(0x7fc00000u), nan);
        }
    }
    workgroupBarrier();
}

// ---- the greedy walk (greedy_step.wgsl) -------------------------------------------------

fn rule_of(r: u32) -> array<i32, 8> {
    var rule: array<i32, 8>;
    for (var k = 0u; k < 8u; k++) {
        rule[k] = rules[(row0 + r) * 8u + k];
    }
    return rule;
}

fn prefix_of(r: u32) -> array<i32, SOLVER_MAX_LEN> {
    var buf: array<i32, SOLVER_MAX_LEN>;
    for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
        buf[k] = 0;
    }
    let len = rec_len[r];
    for (var k = 0u; k < min(len, SOLVER_MAX_LEN); k++) {
        buf[k] = rec_int[r * MAX_LEN + k];
    }
    return buf;
}

fn greedy_position(tid: u32) {
    // Every (row, token): does the walk stop there, and its rank key.
    for (var o = tid; o < ROWS * V; o += WG) {
        let r = o / V;
        let t = o % V;
        var stops = false;
        if (rec_status[r] == 0u) {
            let len = rec_len[r];
            let value = vocab[V + u32(vocab[t])];
            stops = value == END_VALUE;
            if (value != END_VALUE && value != NEVER_VALUE && len < MAX_LEN && len < SOLVER_MAX_LEN) {
                var cand = prefix_of(r);
                cand[len] = value;
                stops = solver_prefix_valid(rule_of(r), cand, len + 1u);
            }
        }
        cand_key[o] = order_key(scores[o]);
        cand_stop[o] = select(0u, 1u, stops);
    }
    workgroupBarrier();
    // One thread per row takes the best stopping token and updates the record.
    if (tid < ROWS && rec_status[tid] == 0u) {
        let r = tid;
        let base = r * V;
        var fail = false;
        var bk = 0u;
        var bt = NONE;
        for (var t = 0u; t < V; t++) {
            fail = fail || is_nan_bits(scores[base + t]);
            let key = cand_key[base + t];
            if (cand_stop[base + t] != 0u && (bt == NONE || key > bk || (key == bk && t > bt))) {
                bk = key;
                bt = t;
            }
        }
        if (fail || bt == NONE || vocab[V + u32(vocab[bt])] == END_VALUE) {
            rec_status[r] = 2u;
        } else {
            let len = rec_len[r];
            let value = vocab[V + u32(vocab[bt])];
            var buf = prefix_of(r);
            buf[len] = value;
            rec_tok[r * MAX_LEN + len] = bt;
            rec_val[r * MAX_LEN + len] = u32(vocab[bt]);
            rec_int[r * MAX_LEN + len] = value;
            rec_score[r] = rec_score[r] + logp[base + bt];
            rec_len[r] = len + 1u;
            if (len + 1u >= min(MAX_LEN, solver_config_len(rule_of(r), buf, len + 1u))) {
                rec_status[r] = 1u;
            }
            feed[r] = bt;
        }
    }
    workgroupBarrier();
    if (tid == 0u) {
        var n = 0u;
        for (var r = 0u; r < ROWS; r++) {
            n += select(0u, 1u, rec_status[r] == 0u);
        }
        running_n = n;
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    row0 = wid.x * ROWS;
    // Zero states, a zero-padded encoder input, empty running records fed token 0.
    for (var o = tid; o < S_N; o += WG) {
        hs[o] = 0.0;
        cs[o] = 0.0;
    }
    for (var o = tid; o < X_N; o += WG) {
        xin[o] = 0.0;
    }
    for (var o = tid; o < PL_N; o += WG) {
        rec_tok[o] = 0u;
        rec_val[o] = 0u;
        rec_int[o] = 0;
    }
    if (tid < ROWS) {
        rec_len[tid] = 0u;
        rec_status[tid] = 0u;
        rec_score[tid] = 0.0;
        feed[tid] = 0u;
    }
    workgroupBarrier();

    // The encoder, time-major; its final states are the decoder's initial ones.
    for (var t = 0u; t < T; t++) {
        if (ED > 0u) {
            encoder_dense(tid, t);
        } else {
            encoder_features(tid, t);
        }
        lstm_layer(tid, 0u, enc_lstm_off(0u), enc_in4(), SRC_XIN);
        for (var l = 1u; l < NL; l++) {
            lstm_layer(tid, l, enc_lstm_off(l), U / 4u, SRC_BELOW);
        }
    }

    // The decoder steps and the walk, until every row is done or failed.
    for (var step = 0u; step < MAX_LEN; step++) {
        lstm_layer(tid, 0u, dec_lstm_off(0u), k4(E), SRC_EMBED);
        for (var l = 1u; l < NL; l++) {
            lstm_layer(tid, l, dec_lstm_off(l), U / 4u, SRC_BELOW);
        }
        output_layer(tid);
        greedy_position(tid);
        if (workgroupUniformLoad(&running_n) == 0u) {
            break;
        }
    }

    // The records in greedy_step's layout.
    let words = 2u * MAX_LEN + 4u;
    for (var o = tid; o < ROWS * words; o += WG) {
        let r = o / words;
        let i = o % words;
        var v = 0u;
        if (i < MAX_LEN) {
            v = rec_tok[r * MAX_LEN + i];
        } else if (i < 2u * MAX_LEN) {
            v = rec_val[r * MAX_LEN + i - MAX_LEN];
        } else if (i == 2u * MAX_LEN) {
            v = rec_len[r];
        } else if (i == 2u * MAX_LEN + 1u) {
            v = rec_status[r];
        } else if (i == 2u * MAX_LEN + 2u) {
            v = bitcast<u32>(rec_score[r]);
        }
        hyp[row0 * words + o] = v;
    }
}
