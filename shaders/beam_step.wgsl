// Kernel: beam_step (one position of the constrained beam search for every problem)
// CPU twin: search::beam_search (one iteration of its loop for one problem).
// The registry prepends the solver's rules library (`solver_prefix_valid`, `solver_completable`,
// `solver_config_len`, `SOLVER_MAX_LEN`, `SOLVER_DOMAIN_MAX`).
// One thread per problem, WIDTH hypothesis slots each. Candidates are every (live slot, token)
// whose value is not "-1", that the rules accept after the slot's prefix, and whose log-softmax
// is not NaN; score = slot score + log-softmax. They are taken best first (score, then raw
// score, then larger token id; then lower slot), skipping a candidate whose value prefix was
// already kept (merging) or cannot be completed (look-ahead), until WIDTH are kept. A kept
// hypothesis of min(MAX_LEN, solver_config_len) values is finished (status 1; it is not
// expanded again); unkept slots are dead (status 2). Every finished hypothesis also goes into
// the problem's finished list (the best WIDTH, ordered as search::beam_search's final sort:
// score, then larger last token, then finishing order), carried from hyp_in to hyp_out.
// Bindings (group 0):
//   0 scores   storage read        [problems * WIDTH, V] raw decoder scores
//   1 logp     storage read        [problems * WIDTH, V] log-softmax
//   2 vocab    storage read        [V] value id per token | [values] value as i32 (END_VALUE,
//                                  NEVER_VALUE) | [domain_len] accepted values ascending
//   3 rules    storage read        [problems, 8] i32 rule words
//   4 hyp_in   storage read        [2 * problems * WIDTH, HYP_WORDS] u32 (layout of greedy_step):
//                                  live slots, then each problem's WIDTH finished records
//   5 hyp_out  storage read_write  [2 * problems * WIDTH, HYP_WORDS] u32
//   6 parents  storage read_write  [problems * WIDTH] u32 state row each new slot continues
//   7 feed     storage read_write  [problems * WIDTH] u32 token fed to the next step
//   8 p        uniform             Params
// Overrides: V, WIDTH (<= 64), MAX_LEN (<= SOLVER_MAX_LEN), WG. V * WIDTH <= MAX_CANDIDATES.

override V: u32 = 1u;
override WIDTH: u32 = 1u;
override MAX_LEN: u32 = 8u;
override WG: u32 = 64u;

const END_VALUE: i32 = -2147483647 - 1;
const NEVER_VALUE: i32 = -2147483647;
const MAX_CANDIDATES: u32 = 2048u;

struct Params {
    problems: u32,
    values: u32,
    domain_len: u32,
    _pad0: u32,
}

@group(0) @binding(0) var<storage, read> scores: array<f32>;
@group(0) @binding(1) var<storage, read> logp: array<f32>;
@group(0) @binding(2) var<storage, read> vocab: array<i32>;
@group(0) @binding(3) var<storage, read> rules: array<i32>;
@group(0) @binding(4) var<storage, read> hyp_in: array<u32>;
@group(0) @binding(5) var<storage, read_write> hyp_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> parents: array<u32>;
@group(0) @binding(7) var<storage, read_write> feed: array<u32>;
@group(0) @binding(8) var<uniform> p: Params;

fn words() -> u32 {
    return 2u * MAX_LEN + 4u;
}

fn value_of(token: u32) -> i32 {
    return vocab[V + u32(vocab[token])];
}

// Rank order: is candidate a = (score, raw, token, slot) before b?
fn before(a_s: f32, ar: f32, at: u32, sa: u32, bs: f32, br: f32, bt: u32, sb: u32) -> bool {
    if (a_s != bs) {
        return a_s > bs;
    }
    if (ar != br) {
        return ar > br;
    }
    if (at != bt) {
        return at > bt;
    }
    return sa < sb;
}

// NaN test on the bits: compilers may assume `x != x` is false (WGSL allows it).
fn is_nan_bits(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let prob = gid.x + gid.y * nwg.x * WG;
    if (prob >= p.problems) {
        return;
    }
    let w = words();
    let base = prob * WIDTH;
    var rule: array<i32, 8>;
    for (var k = 0u; k < 8u; k++) {
        rule[k] = rules[prob * 8u + k];
    }
    var dom: array<i32, SOLVER_DOMAIN_MAX>;
    let dn = min(p.domain_len, SOLVER_DOMAIN_MAX);
    for (var k = 0u; k < dn; k++) {
        dom[k] = vocab[V + p.values + 1u + k];
    }
    // Candidate mask: bit (slot * V + token) set when the candidate is allowed.
    var allowed: array<u32, 64>;
    for (var k = 0u; k < 64u; k++) {
        allowed[k] = 0u;
    }
    for (var s = 0u; s < WIDTH; s++) {
        let h0 = (base + s) * w;
        let len = hyp_in[h0 + 2u * MAX_LEN];
        if (hyp_in[h0 + 2u * MAX_LEN + 1u] != 0u || len >= MAX_LEN) {
            continue;
        }
        var buf: array<i32, SOLVER_MAX_LEN>;
        for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
            buf[k] = 0;
        }
        for (var k = 0u; k < len; k++) {
            buf[k] = vocab[V + hyp_in[h0 + MAX_LEN + k]];
        }
        for (var t = 0u; t < V; t++) {
            let value = value_of(t);
            let lp = logp[(base + s) * V + t];
            if (value == END_VALUE || value == NEVER_VALUE || is_nan_bits(lp)) {
                continue;
            }
            var cand = buf;
            cand[len] = value;
            if (solver_prefix_valid(rule, cand, len + 1u)) {
                let bit = s * V + t;
                allowed[bit / 32u] |= 1u << (bit % 32u);
            }
        }
    }
    // This problem's finished list, carried forward.
    let fin0 = (p.problems * WIDTH + base) * w;
    for (var k = 0u; k < WIDTH * w; k++) {
        hyp_out[fin0 + k] = hyp_in[fin0 + k];
    }
    var kept = 0u;
    var have_prev = false;
    var ps = 0.0;
    var pr = 0.0;
    var pt = 0u;
    var pslot = 0u;
    loop {
        if (kept >= WIDTH) {
            break;
        }
        // The best allowed candidate after the previous one.
        var found = false;
        var bs = 0.0;
        var br = 0.0;
        var bt = 0u;
        var bslot = 0u;
        for (var s = 0u; s < WIDTH; s++) {
            let h0 = (base + s) * w;
            let slot_score = bitcast<f32>(hyp_in[h0 + 2u * MAX_LEN + 2u]);
            for (var t = 0u; t < V; t++) {
                let bit = s * V + t;
                if ((allowed[bit / 32u] & (1u << (bit % 32u))) == 0u) {
                    continue;
                }
                let sc = slot_score + logp[(base + s) * V + t];
                let raw = scores[(base + s) * V + t];
                if (have_prev && !before(ps, pr, pt, pslot, sc, raw, t, s)) {
                    continue;
                }
                if (!found || before(sc, raw, t, s, bs, br, bt, bslot)) {
                    found = true;
                    bs = sc;
                    br = raw;
                    bt = t;
                    bslot = s;
                }
            }
        }
        if (!found) {
            break;
        }
        have_prev = true;
        ps = bs;
        pr = br;
        pt = bt;
        pslot = bslot;
        // The new value prefix.
        let h0 = (base + bslot) * w;
        let len = hyp_in[h0 + 2u * MAX_LEN];
        var vals: array<u32, SOLVER_MAX_LEN>;
        var ints: array<i32, SOLVER_MAX_LEN>;
        for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
            vals[k] = 0u;
            ints[k] = 0;
        }
        for (var k = 0u; k < len; k++) {
            vals[k] = hyp_in[h0 + MAX_LEN + k];
            ints[k] = vocab[V + vals[k]];
        }
        vals[len] = u32(vocab[bt]);
        ints[len] = value_of(bt);
        // Merging: a kept hypothesis with the same value prefix wins (it ranked first).
        var duplicate = false;
        for (var q = 0u; q < kept && !duplicate; q++) {
            let o0 = (base + q) * w;
            var same = hyp_out[o0 + 2u * MAX_LEN] == len + 1u;
            for (var k = 0u; k <= len && same; k++) {
                same = hyp_out[o0 + MAX_LEN + k] == vals[k];
            }
            duplicate = same;
        }
        if (duplicate || !solver_completable(rule, ints, len + 1u, dom, dn)) {
            continue;
        }
        let o0 = (base + kept) * w;
        for (var k = 0u; k < MAX_LEN; k++) {
            hyp_out[o0 + k] = hyp_in[h0 + k];
            hyp_out[o0 + MAX_LEN + k] = hyp_in[h0 + MAX_LEN + k];
        }
        hyp_out[o0 + len] = bt;
        hyp_out[o0 + MAX_LEN + len] = vals[len];
        hyp_out[o0 + 2u * MAX_LEN] = len + 1u;
        let finished = len + 1u >= min(MAX_LEN, solver_config_len(rule, ints, len + 1u));
        hyp_out[o0 + 2u * MAX_LEN + 1u] = select(0u, 1u, finished);
        hyp_out[o0 + 2u * MAX_LEN + 2u] = bitcast<u32>(bs);
        parents[base + kept] = base + bslot;
        feed[base + kept] = bt;
        kept += 1u;
        if (finished) {
            // Insert after every listed record that ranks at least as high (a stable sort).
            var at = 0u;
            while (at < WIDTH) {
                let e0 = fin0 + at * w;
                if (hyp_out[e0 + 2u * MAX_LEN + 1u] != 1u) {
                    break;
                }
                let es = bitcast<f32>(hyp_out[e0 + 2u * MAX_LEN + 2u]);
                let et = hyp_out[e0 + hyp_out[e0 + 2u * MAX_LEN] - 1u];
                if (bs > es || (bs == es && bt > et)) {
                    break;
                }
                at += 1u;
            }
            if (at < WIDTH) {
                for (var q = WIDTH - 1u; q > at; q--) {
                    for (var k = 0u; k < w; k++) {
                        hyp_out[fin0 + q * w + k] = hyp_out[fin0 + (q - 1u) * w + k];
                    }
                }
                for (var k = 0u; k < w; k++) {
                    hyp_out[fin0 + at * w + k] = hyp_out[o0 + k];
                }
            }
        }
    }
    // Unkept slots are dead. (The same trip count in every thread: on lavapipe, a loop starting
    // at the per-thread `kept` skipped iterations in some threads; tests/gpu_ck.rs caught it.)
    for (var q = 0u; q < WIDTH; q++) {
        if (q >= kept) {
            let o0 = (base + q) * w;
            hyp_out[o0 + 2u * MAX_LEN] = 0u;
            hyp_out[o0 + 2u * MAX_LEN + 1u] = 2u;
            hyp_out[o0 + 2u * MAX_LEN + 2u] = 0u;
            parents[base + q] = base + q;
            feed[base + q] = 0u;
        }
    }
}
