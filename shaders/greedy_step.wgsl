// Kernel: greedy_step (one position of MIOpen's greedy walk for every row, on the GPU)
// CPU twin: search::greedy_position (one position of search::greedy_miopen for one row).
// The registry prepends the solver's rules library, which defines `solver_prefix_valid`,
// `solver_config_len` and `SOLVER_MAX_LEN` (the longest prefix it takes).
// Per running row: tokens are walked by raw score (higher first, ties: larger token id); a token
// whose value is "-1" fails the row; the first token whose value the rules accept after the
// row's prefix is taken: appended, its log-softmax added to the score, fed to the next step.
// A NaN score or an exhausted vocabulary fails the row. A row is done once it has
// min(MAX_LEN, solver_config_len) values. Rows that are done or failed are left.
// Ranks compare raw scores by f32 total order (as search::rank_cmp).
// How: one workgroup (WG threads) per row. The walk takes the best-ranked token among those it
// would stop at ("-1", or accepted by the rules), so each thread finds the best such token among
// every WG-th one, and thread 0 combines them and updates the row.
// Numerics (is_nan_bits, order_key): shaders/numerics.wgsl, prepended by the registry.
// Bindings (group 0):
//   0 scores  storage read        [rows, V] raw decoder scores
//   1 logp    storage read        [rows, V] log-softmax of scores
//   2 vocab   storage read        [V] value id of each token | [values] value as i32
//                                 (END_VALUE for "-1", NEVER_VALUE for values never accepted)
//   3 rules   storage read        [rows, 8] i32 per-row rule context (the solver's gpu_words)
//   4 hyp     storage read_write  [rows, HYP_WORDS] u32: tokens[MAX_LEN] | values[MAX_LEN] |
//                                 len | status (0 running, 1 done, 2 failed) | score (f32 bits) | spare
//   5 feed    storage read_write  [rows] u32 token fed to the next decoder step
//   6 p       uniform             Params
// Overrides: V (vocabulary size), MAX_LEN (longest config, <= SOLVER_MAX_LEN), WG (threads per row).

override V: u32 = 1u;
override MAX_LEN: u32 = 8u;
override WG: u32 = 32u;

const END_VALUE: i32 = -2147483647 - 1;
const NEVER_VALUE: i32 = -2147483647;

struct Params {
    rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> scores: array<f32>;
@group(0) @binding(1) var<storage, read> logp: array<f32>;
@group(0) @binding(2) var<storage, read> vocab: array<i32>;
@group(0) @binding(3) var<storage, read> rules: array<i32>;
@group(0) @binding(4) var<storage, read_write> hyp: array<u32>;
@group(0) @binding(5) var<storage, read_write> feed: array<u32>;
@group(0) @binding(6) var<uniform> p: Params;

// Each thread's best stopping token (order key of its score, token; NONE if it has none) and
// whether it saw a NaN score.
var<workgroup> best_key: array<u32, WG>;
var<workgroup> best_token: array<u32, WG>;
var<workgroup> saw_nan: array<u32, WG>;

const NONE: u32 = 0xffffffffu;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    // The same for every thread of the workgroup.
    let r = wid.x + wid.y * nwg.x;
    if (r >= p.rows) {
        return;
    }
    let words = 2u * MAX_LEN + 4u;
    let h0 = r * words;
    let len_at = h0 + 2u * MAX_LEN;
    let running = hyp[len_at + 1u] == 0u;
    let len = hyp[len_at];
    let base = r * V;
    var rule: array<i32, 8>;
    var buf: array<i32, SOLVER_MAX_LEN>;
    for (var k = 0u; k < 8u; k++) {
        rule[k] = rules[r * 8u + k];
    }
    for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
        buf[k] = 0;
    }
    var nan = false;
    var bk = 0u;
    var bt = NONE;
    if (running) {
        for (var k = 0u; k < min(len, SOLVER_MAX_LEN); k++) {
            buf[k] = vocab[V + hyp[h0 + MAX_LEN + k]];
        }
        for (var t = tid; t < V; t += WG) {
            let s = scores[base + t];
            nan = nan || is_nan_bits(s);
            let value = vocab[V + u32(vocab[t])];
            var stops = value == END_VALUE;
            if (value != END_VALUE && value != NEVER_VALUE && len < MAX_LEN && len < SOLVER_MAX_LEN) {
                var cand = buf;
                cand[len] = value;
                stops = solver_prefix_valid(rule, cand, len + 1u);
            }
            let key = order_key(s);
            if (stops && (bt == NONE || key > bk || (key == bk && t > bt))) {
                bk = key;
                bt = t;
            }
        }
    }
    best_key[tid] = bk;
    best_token[tid] = bt;
    saw_nan[tid] = select(0u, 1u, nan);
    workgroupBarrier();
    if (tid != 0u || !running) {
        return;
    }
    var fail = false;
    bt = NONE;
    for (var i = 0u; i < WG; i++) {
        fail = fail || saw_nan[i] != 0u;
        let t = best_token[i];
        if (t != NONE && (bt == NONE || best_key[i] > bk || (best_key[i] == bk && t > bt))) {
            bk = best_key[i];
            bt = t;
        }
    }
    if (fail || bt == NONE || vocab[V + u32(vocab[bt])] == END_VALUE) {
        hyp[len_at + 1u] = 2u;
        return;
    }
    buf[len] = vocab[V + u32(vocab[bt])];
    hyp[h0 + len] = bt;
    hyp[h0 + MAX_LEN + len] = u32(vocab[bt]);
    hyp[len_at + 2u] = bitcast<u32>(bitcast<f32>(hyp[len_at + 2u]) + logp[base + bt]);
    hyp[len_at] = len + 1u;
    if (len + 1u >= min(MAX_LEN, solver_config_len(rule, buf, len + 1u))) {
        hyp[len_at + 1u] = 1u;
    }
    feed[r] = bt;
}
