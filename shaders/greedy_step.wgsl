// Kernel: greedy_step (one position of MIOpen's greedy walk for every row, on the GPU)
// CPU twin: search::greedy_miopen (one iteration of its loop for one row).
// The registry prepends the solver's rules library, which defines `solver_prefix_valid`,
// `solver_config_len` and `SOLVER_MAX_LEN` (the longest prefix it takes).
// Per running row: tokens are walked by raw score (higher first, ties: larger token id); a token
// whose value is "-1" fails the row; the first token whose value the rules accept after the
// row's prefix is taken: appended, its log-softmax added to the score, fed to the next step.
// A NaN score or an exhausted vocabulary fails the row. A row is done once it has
// min(MAX_LEN, solver_config_len) values. Rows that are done or failed are left.
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
// Overrides: V (vocabulary size), MAX_LEN (longest config, <= SOLVER_MAX_LEN), WG (workgroup size).

override V: u32 = 1u;
override MAX_LEN: u32 = 8u;
override WG: u32 = 64u;

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

// NaN test on the bits: compilers may assume `x != x` is false (WGSL allows it).
fn is_nan_bits(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = gid.x + gid.y * nwg.x * WG;
    if (r >= p.rows) {
        return;
    }
    let words = 2u * MAX_LEN + 4u;
    let h0 = r * words;
    let len_at = h0 + 2u * MAX_LEN;
    if (hyp[len_at + 1u] != 0u) {
        return;
    }
    let len = hyp[len_at];
    let base = r * V;
    var fail = false;
    for (var t = 0u; t < V; t++) {
        let s = scores[base + t];
        fail = fail || is_nan_bits(s);
    }
    var rule: array<i32, 8>;
    var buf: array<i32, SOLVER_MAX_LEN>;
    for (var k = 0u; k < 8u; k++) {
        rule[k] = rules[r * 8u + k];
    }
    for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
        buf[k] = 0;
    }
    for (var k = 0u; k < min(len, SOLVER_MAX_LEN); k++) {
        buf[k] = vocab[V + hyp[h0 + MAX_LEN + k]];
    }
    var taken = false;
    var taken_token = 0u;
    var taken_buf = buf;
    var prev_s = 0.0;
    var prev_t = 0u;
    for (var step = 0u; step < V && !fail && !taken; step++) {
        // The next token in rank order after (prev_s, prev_t).
        var found = false;
        var bs = 0.0;
        var bt = 0u;
        for (var t = 0u; t < V; t++) {
            let s = scores[base + t];
            let after = step == 0u || s < prev_s || (s == prev_s && t < prev_t);
            if (after && (!found || s > bs || (s == bs && t > bt))) {
                found = true;
                bs = s;
                bt = t;
            }
        }
        if (!found) {
            break;
        }
        prev_s = bs;
        prev_t = bt;
        let value = vocab[V + u32(vocab[bt])];
        if (value == END_VALUE) {
            fail = true;
            break;
        }
        if (value != NEVER_VALUE && len < MAX_LEN && len < SOLVER_MAX_LEN) {
            var cand = buf;
            cand[len] = value;
            if (solver_prefix_valid(rule, cand, len + 1u)) {
                taken = true;
                taken_token = bt;
                taken_buf = cand;
            }
        }
    }
    if (!taken) {
        hyp[len_at + 1u] = 2u;
        return;
    }
    hyp[h0 + len] = taken_token;
    hyp[h0 + MAX_LEN + len] = u32(vocab[taken_token]);
    hyp[len_at + 2u] = bitcast<u32>(bitcast<f32>(hyp[len_at + 2u]) + logp[base + taken_token]);
    hyp[len_at] = len + 1u;
    if (len + 1u >= min(MAX_LEN, solver_config_len(rule, taken_buf, len + 1u))) {
        hyp[len_at + 1u] = 1u;
    }
    feed[r] = taken_token;
}
