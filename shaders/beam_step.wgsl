// Kernel: beam_step (one position of the constrained beam search for every problem)
// CPU twin: search::beam_iteration (one iteration of search::beam_search for one problem).
// The registry prepends the solver's rules library (`solver_prefix_valid`, `solver_completable`,
// `solver_config_len`, `SOLVER_MAX_LEN`, `SOLVER_DOMAIN_MAX`).
// One workgroup (WG threads) per problem, WIDTH hypothesis slots each. Candidates are every
// (live slot, token) whose value is not "-1", that the rules accept after the slot's prefix, and
// whose log-softmax is not NaN; score = slot score + log-softmax. They are taken best first
// (score, then raw score, both by f32 total order as search::rank_cmp; then larger token id;
// then lower slot), skipping a candidate whose value prefix was already kept (merging) or
// cannot be completed (look-ahead), until WIDTH are kept. A kept hypothesis of
// min(MAX_LEN, solver_config_len) values is finished (status 1; it is not expanded again);
// unkept slots are dead (status 2). Every finished hypothesis also goes into the problem's
// finished list (the best WIDTH, ordered as search::beam_search's final sort: score, then larger
// last token, then finishing order), carried from hyp_in to hyp_out.
// How: the threads check every candidate against the rules in parallel and bitonic-sort the rank
// keys of the accepted ones in workgroup memory (padded to a power of two, at most SORT).
// Candidates with an equal value prefix are equally completable, so only the first of each
// prefix in rank order counts (the rest are merged or fail alike); thread 0 walks the sorted
// list picking the next firsts, as many as slots are still open, and the threads run the
// look-ahead on those in parallel, until WIDTH are kept or none is left. The new slots and the
// merged finished list are then written in parallel.
// Numerics (is_nan_bits, order_key): shaders/numerics.wgsl, prepended by the registry.
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
// Overrides: V, WIDTH (<= MAX_WIDTH), MAX_LEN (<= SOLVER_MAX_LEN), WG (threads per problem),
// SORT (a power of two >= WIDTH * V; WIDTH * V <= MAX_CANDIDATES).
// Workgroup memory: 12 * SORT bytes of sort keys + about 3 KiB (kernels::beam_workgroup_bytes).

override V: u32 = 1u;
override WIDTH: u32 = 1u;
override MAX_LEN: u32 = 8u;
override WG: u32 = 32u;
override SORT: u32 = 64u;

const END_VALUE: i32 = -2147483647 - 1;
const NEVER_VALUE: i32 = -2147483647;
const MAX_CANDIDATES: u32 = 2048u;
const MAX_WIDTH: u32 = 64u;

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

// Rank keys of the accepted candidates (in any order before the sort, by rank after): order keys
// of the score and the raw score, then token << 16 | (0xffff - slot); 0 0 0 pads (ranks last).
var<workgroup> key_score: array<u32, SORT>;
var<workgroup> key_raw: array<u32, SORT>;
var<workgroup> key_tie: array<u32, SORT>;
var<workgroup> accepted_n: atomic<u32>;
var<workgroup> sort_n: u32;
// Value prefixes met so far, bit (slot_class * values + value id).
var<workgroup> seen: array<u32, 64>;
// Each live slot's lowest slot with the same value prefix.
var<workgroup> slot_class: array<u32, MAX_WIDTH>;
// Ranks whose look-ahead runs this round, and its results.
var<workgroup> batch: array<u32, MAX_WIDTH>;
var<workgroup> batch_ok: array<u32, MAX_WIDTH>;
var<workgroup> batch_n: u32;
var<workgroup> cursor: u32;
// Ranks of the kept candidates, in keeping order (= new slot order).
var<workgroup> keep: array<u32, MAX_WIDTH>;
var<workgroup> kept_n: u32;
// Finished-list merge: elements 0..WIDTH are the carried list, WIDTH + q the new slot q.
var<workgroup> fin_key: array<u32, 128>; // 2 * MAX_WIDTH
var<workgroup> fin_tok: array<u32, 128>;
var<workgroup> fin_valid: array<u32, 128>;
var<workgroup> carried_n: atomic<u32>;

fn words() -> u32 {
    return 2u * MAX_LEN + 4u;
}

fn value_of(token: u32) -> i32 {
    return vocab[V + u32(vocab[token])];
}

// The inverse of order_key.
fn key_value(k: u32) -> f32 {
    return bitcast<f32>(select(~k, k ^ 0x80000000u, (k & 0x80000000u) != 0u));
}

// Does entry a rank before entry b?
fn ranks_before(a: u32, b: u32) -> bool {
    if (key_score[a] != key_score[b]) {
        return key_score[a] > key_score[b];
    }
    if (key_raw[a] != key_raw[b]) {
        return key_raw[a] > key_raw[b];
    }
    return key_tie[a] > key_tie[b];
}

fn tie_token(tie: u32) -> u32 {
    return tie >> 16u;
}

fn tie_slot(tie: u32) -> u32 {
    return 0xffffu - (tie & 0xffffu);
}

// Slot h0's prefix as integer values with `token`'s value appended.
fn extended_prefix(h0: u32, len: u32, token: u32) -> array<i32, SOLVER_MAX_LEN> {
    var ints: array<i32, SOLVER_MAX_LEN>;
    for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
        ints[k] = 0;
    }
    for (var k = 0u; k < len; k++) {
        ints[k] = vocab[V + hyp_in[h0 + MAX_LEN + k]];
    }
    ints[len] = value_of(token);
    return ints;
}

// Writes the record of slot h0 extended by `token` (len + 1 values, `status`, `score`) at o0;
// the spare word is left.
fn write_record(o0: u32, h0: u32, len: u32, token: u32, status: u32, score: f32) {
    for (var k = 0u; k < MAX_LEN; k++) {
        hyp_out[o0 + k] = hyp_in[h0 + k];
        hyp_out[o0 + MAX_LEN + k] = hyp_in[h0 + MAX_LEN + k];
    }
    hyp_out[o0 + len] = token;
    hyp_out[o0 + MAX_LEN + len] = u32(vocab[token]);
    hyp_out[o0 + 2u * MAX_LEN] = len + 1u;
    hyp_out[o0 + 2u * MAX_LEN + 1u] = status;
    hyp_out[o0 + 2u * MAX_LEN + 2u] = bitcast<u32>(score);
}

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    // The same for every thread of the workgroup.
    let prob = wid.x + wid.y * nwg.x;
    if (prob >= p.problems) {
        return;
    }
    let w = words();
    let base = prob * WIDTH;
    let fin0 = (p.problems * WIDTH + base) * w;
    var rule: array<i32, 8>;
    for (var k = 0u; k < 8u; k++) {
        rule[k] = rules[prob * 8u + k];
    }

    // 1. Setup: merge classes of the live slots, empty sets.
    for (var k = tid; k < 64u; k += WG) {
        seen[k] = 0u;
    }
    if (tid == 0u) {
        cursor = 0u;
        kept_n = 0u;
        atomicStore(&carried_n, WIDTH);
        atomicStore(&accepted_n, 0u);
    }
    for (var s = tid; s < WIDTH; s += WG) {
        let h0 = (base + s) * w;
        let len = hyp_in[h0 + 2u * MAX_LEN];
        var first_same = s;
        for (var q = 0u; q < s; q++) {
            let q0 = (base + q) * w;
            var same = hyp_in[q0 + 2u * MAX_LEN + 1u] == 0u && hyp_in[q0 + 2u * MAX_LEN] == len;
            for (var k = 0u; k < len && same; k++) {
                same = hyp_in[q0 + MAX_LEN + k] == hyp_in[h0 + MAX_LEN + k];
            }
            if (same) {
                first_same = q;
                break;
            }
        }
        slot_class[s] = first_same;
    }

    workgroupBarrier();

    // 2. Every candidate against the rules; each thread takes consecutive ones (mostly of one
    //    slot, whose prefix it loads once). Accepted ones are appended to the keys.
    let per_thread = (WIDTH * V + WG - 1u) / WG;
    var buf: array<i32, SOLVER_MAX_LEN>;
    var buf_slot = 0xffffffffu;
    for (var i = 0u; i < per_thread; i++) {
        let c = tid * per_thread + i;
        if (c >= WIDTH * V) {
            break;
        }
        let s = c / V;
        let t = c % V;
        let h0 = (base + s) * w;
        let len = hyp_in[h0 + 2u * MAX_LEN];
        let value = value_of(t);
        let lp = logp[(base + s) * V + t];
        let live = hyp_in[h0 + 2u * MAX_LEN + 1u] == 0u && len < MAX_LEN;
        if (!live || value == END_VALUE || value == NEVER_VALUE || is_nan_bits(lp)) {
            continue;
        }
        if (buf_slot != s) {
            buf_slot = s;
            for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
                buf[k] = 0;
            }
            for (var k = 0u; k < len; k++) {
                buf[k] = vocab[V + hyp_in[h0 + MAX_LEN + k]];
            }
        }
        var cand = buf;
        cand[len] = value;
        if (solver_prefix_valid(rule, cand, len + 1u)) {
            let at = atomicAdd(&accepted_n, 1u);
            key_score[at] = order_key(bitcast<f32>(hyp_in[h0 + 2u * MAX_LEN + 2u]) + lp);
            key_raw[at] = order_key(scores[(base + s) * V + t]);
            key_tie[at] = (t << 16u) | (0xffffu - s);
        }
    }
    workgroupBarrier();
    if (tid == 0u) {
        sort_n = atomicLoad(&accepted_n);
    }
    let n_sort = workgroupUniformLoad(&sort_n);
    // Padded with "no candidate" keys to a power of two.
    var span = 1u;
    while (span < n_sort) {
        span = span << 1u;
    }
    for (var i = n_sort + tid; i < span; i += WG) {
        key_score[i] = 0u;
        key_raw[i] = 0u;
        key_tie[i] = 0u;
    }
    workgroupBarrier();

    // 3. Bitonic sort, best first.
    for (var k = 2u; k <= span; k = k << 1u) {
        for (var j = k >> 1u; j > 0u; j = j >> 1u) {
            for (var i = tid; i < span / 2u; i += WG) {
                let a = 2u * i - (i & (j - 1u));
                let b = a + j;
                let best_first = (a & k) == 0u;
                if (ranks_before(b, a) == best_first) {
                    let s0 = key_score[a];
                    let r0 = key_raw[a];
                    let t0 = key_tie[a];
                    key_score[a] = key_score[b];
                    key_raw[a] = key_raw[b];
                    key_tie[a] = key_tie[b];
                    key_score[b] = s0;
                    key_raw[b] = r0;
                    key_tie[b] = t0;
                }
            }
            workgroupBarrier();
        }
    }

    // 4. Selection in rounds: thread 0 picks the next first-of-prefix candidates, as many as slots
    //    are open; the threads look ahead on them in parallel; thread 0 keeps those that pass.
    loop {
        if (tid == 0u) {
            let need = WIDTH - kept_n;
            var n = 0u;
            var at = cursor;
            while (n < need && at < sort_n) {
                let tie = key_tie[at];
                let s = tie_slot(tie);
                let bit = slot_class[s] * p.values + u32(vocab[tie_token(tie)]);
                let mask = 1u << (bit % 32u);
                if ((seen[bit / 32u] & mask) == 0u) {
                    seen[bit / 32u] |= mask;
                    batch[n] = at;
                    n += 1u;
                }
                at += 1u;
            }
            cursor = at;
            batch_n = n;
        }
        let n = workgroupUniformLoad(&batch_n);
        if (n == 0u) {
            break;
        }
        for (var j = tid; j < n; j += WG) {
            let tie = key_tie[batch[j]];
            let s = tie_slot(tie);
            let h0 = (base + s) * w;
            let len = hyp_in[h0 + 2u * MAX_LEN];
            let ints = extended_prefix(h0, len, tie_token(tie));
            var dom: array<i32, SOLVER_DOMAIN_MAX>;
            let dn = min(p.domain_len, SOLVER_DOMAIN_MAX);
            for (var k = 0u; k < dn; k++) {
                dom[k] = vocab[V + p.values + 1u + k];
            }
            batch_ok[j] = select(0u, 1u, solver_completable(rule, ints, len + 1u, dom, dn));
        }
        workgroupBarrier();
        if (tid == 0u) {
            for (var j = 0u; j < n; j++) {
                if (batch_ok[j] != 0u) {
                    keep[kept_n] = batch[j];
                    kept_n += 1u;
                }
            }
        }
    }
    workgroupBarrier();
    let kept = kept_n;

    // 5. The new slots (thread q writes slot q); the finished list's merge keys.
    for (var q = tid; q < WIDTH; q += WG) {
        let o0 = (base + q) * w;
        fin_valid[WIDTH + q] = 0u;
        if (q < kept) {
            let pos = keep[q];
            let tie = key_tie[pos];
            let s = tie_slot(tie);
            let t = tie_token(tie);
            let h0 = (base + s) * w;
            let len = hyp_in[h0 + 2u * MAX_LEN];
            let ints = extended_prefix(h0, len, t);
            let finished = len + 1u >= min(MAX_LEN, solver_config_len(rule, ints, len + 1u));
            write_record(o0, h0, len, t, select(0u, 1u, finished), key_value(key_score[pos]));
            parents[base + q] = base + s;
            feed[base + q] = t;
            if (finished) {
                fin_valid[WIDTH + q] = 1u;
                fin_key[WIDTH + q] = key_score[pos];
                fin_tok[WIDTH + q] = t;
            }
        } else {
            hyp_out[o0 + 2u * MAX_LEN] = 0u;
            hyp_out[o0 + 2u * MAX_LEN + 1u] = 2u;
            hyp_out[o0 + 2u * MAX_LEN + 2u] = 0u;
            parents[base + q] = base + q;
            feed[base + q] = 0u;
        }
        // The carried list: its leading finished records.
        let e0 = fin0 + q * w;
        if (hyp_in[e0 + 2u * MAX_LEN + 1u] == 1u) {
            fin_key[q] = order_key(bitcast<f32>(hyp_in[e0 + 2u * MAX_LEN + 2u]));
            fin_tok[q] = hyp_in[e0 + hyp_in[e0 + 2u * MAX_LEN] - 1u];
        } else {
            atomicMin(&carried_n, q);
        }
    }
    workgroupBarrier();

    // 6. The finished list: the carried records, then this step's in keeping order, sorted stably
    //    by (score, last token), the best WIDTH; then the carried list's unused records.
    let carried = atomicLoad(&carried_n);
    var new_n = 0u;
    for (var q = 0u; q < WIDTH; q++) {
        new_n += fin_valid[WIDTH + q];
    }
    for (var q = tid; q < WIDTH; q += WG) {
        fin_valid[q] = select(0u, 1u, q < carried);
    }
    workgroupBarrier();
    for (var e = tid; e < 2u * WIDTH; e += WG) {
        if (fin_valid[e] == 0u) {
            continue;
        }
        var pos = 0u;
        for (var f = 0u; f < 2u * WIDTH; f++) {
            if (fin_valid[f] == 0u || f == e) {
                continue;
            }
            let better = fin_key[f] > fin_key[e] || (fin_key[f] == fin_key[e] && fin_tok[f] > fin_tok[e]);
            let tied = fin_key[f] == fin_key[e] && fin_tok[f] == fin_tok[e] && f < e;
            if (better || tied) {
                pos += 1u;
            }
        }
        if (pos >= WIDTH) {
            continue;
        }
        let o0 = fin0 + pos * w;
        if (e < WIDTH) {
            for (var k = 0u; k < w; k++) {
                hyp_out[o0 + k] = hyp_in[fin0 + e * w + k];
            }
        } else {
            let q = e - WIDTH;
            let pos_q = keep[q];
            let tie = key_tie[pos_q];
            let h0 = (base + tie_slot(tie)) * w;
            write_record(o0, h0, hyp_in[h0 + 2u * MAX_LEN], tie_token(tie), 1u, key_value(key_score[pos_q]));
            hyp_out[o0 + w - 1u] = hyp_in[h0 + w - 1u];
        }
    }
    for (var q = tid; q < WIDTH; q += WG) {
        if (q >= carried + new_n) {
            for (var k = 0u; k < w; k++) {
                hyp_out[fin0 + q * w + k] = hyp_in[fin0 + (q - new_n) * w + k];
            }
        }
    }
}
