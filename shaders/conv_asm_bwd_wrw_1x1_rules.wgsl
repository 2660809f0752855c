// Function library (no entry point): ConvAsmBwdWrW1x1's partial-validity rules and look-ahead.
// CPU twin: solvers::conv_asm_bwd_wrw_1x1::Rules::prefix_valid and Rules::completable (rules 1..10
// of ../shared/miopen/solvers/ConvAsmBwdWrW1x1.md, section 4); tested against them over random
// prefixes (tests/gpu_rules.rs).
// The registry puts this text in front of every kernel that checks configs (greedy_step,
// beam_step, rules_check).
//   rules:  Rules::gpu_words() = [fp32, bf16, c_even, 0, 0, 0, 0, 0] (0/1 each)
//   prefix: the first `len` values of a config (chunk_size, c_per_gpr, c_mult, k_per_gpr, k_mult,
//           n_per_gpr, n_part_cnt, read_size, short_store, data_prefetch)
// Every product is formed only after range checks bounded its factors (all values <= 16), so
// everything fits i32.

// Longest prefix the kernels pass (a config has 10 values).
const SOLVER_MAX_LEN: u32 = 10u;

// Config length from the prefix: none of its own (every config has the kernel's MAX_LEN values).
fn solver_config_len(rules: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> u32 {
    return 0xffffffffu;
}

// v is one of 1, 2, 4, 8, 16.
fn wrw1x1_pow2_to_16(v: i32) -> bool {
    return v >= 1 && v <= 16 && (v & (v - 1)) == 0;
}

// acc_gprs = c_mult * k_mult * k_per_gpr (values already range-checked).
fn wrw1x1_acc_gprs(c: array<i32, SOLVER_MAX_LEN>) -> i32 {
    return c[2] * c[4] * c[3];
}

fn solver_prefix_valid(rules: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> bool {
    let fp32 = rules[0] != 0;
    let bf16 = rules[1] != 0;
    let c_even = rules[2] != 0;
    if (len > 10u) {
        return false;
    }
    // 1. chunk_size in {1,2,4,8,16}
    if (len > 0u && !wrw1x1_pow2_to_16(c[0])) {
        return false;
    }
    // 2. c_per_gpr in {1,2,4,8,16}; chunk_size*c_per_gpr >= 16 and (chunk 1 or product <= 16)
    if (len > 1u) {
        let chunk = c[0];
        let cpg = c[1];
        if (!wrw1x1_pow2_to_16(cpg) || chunk * cpg < 16 || (chunk != 1 && cpg * chunk > 16)) {
            return false;
        }
    }
    // 3. c_mult in {1,2,4,8,16}
    if (len > 2u && !wrw1x1_pow2_to_16(c[2])) {
        return false;
    }
    // 4. k_per_gpr in {1,2,4,8,16}; k_per_gpr <= c_per_gpr
    if (len > 3u && (!wrw1x1_pow2_to_16(c[3]) || c[3] > c[1])) {
        return false;
    }
    // 5. k_mult in {1,2,4,8,16}
    if (len > 4u && !wrw1x1_pow2_to_16(c[4])) {
        return false;
    }
    // 6. n_per_gpr in {1,2,4}; hw_per_gpr = 64 / (c_per_gpr*n_per_gpr*chunk_size) in {1,2,4}
    //    and c_per_gpr*n_per_gpr*hw_per_gpr*chunk_size == 64
    if (len > 5u) {
        let npg = c[5];
        if (npg != 1 && npg != 2 && npg != 4) {
            return false;
        }
        let per = c[1] * npg * c[0];
        let hw_per_gpr = 64 / per;
        if ((hw_per_gpr != 1 && hw_per_gpr != 2 && hw_per_gpr != 4) || per * hw_per_gpr != 64) {
            return false;
        }
    }
    // 7. n_part_cnt in 1..8; if > 1: (n_part_cnt-1) * 64 * 4 * acc_gprs <= 65536
    if (len > 6u) {
        let npc = c[6];
        if (npc < 1 || npc > 8) {
            return false;
        }
        if (npc > 1 && (npc - 1) * 256 * wrw1x1_acc_gprs(c) > 65536) {
            return false;
        }
    }
    // 8. read_size in 1..4
    if (len > 7u && (c[7] < 1 || c[7] > 4)) {
        return false;
    }
    // 9. short_store in {0,1}; fp32: 0; fp16/bf16 with 0: c_mult and C even
    if (len > 8u) {
        let ss = c[8];
        if (ss != 0 && ss != 1) {
            return false;
        }
        if (fp32 && ss != 0) {
            return false;
        }
        if (!fp32 && ss == 0 && (c[2] % 2 != 0 || !c_even)) {
            return false;
        }
    }
    // 10. data_prefetch in 0..4; vgprs <= (n_part_cnt > 4 ? 128 : 256), vgprs = acc_gprs + 12 +
    //     (c_mult + k_mult)*read_size*(data_prefetch + 1) + (bf16 ? (c_mult + k_mult)*read_size : 0)
    if (len > 9u) {
        let prefetch = c[9];
        if (prefetch < 0 || prefetch > 4) {
            return false;
        }
        let loads = (c[2] + c[4]) * c[7];
        let vgprs = wrw1x1_acc_gprs(c) + 12 + loads * (prefetch + 1) + select(0, loads, bf16);
        if (vgprs > select(256, 128, c[6] > 4)) {
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Look-ahead. CPU twin: Rules::completable (the same depth-first search, the same early prune, a
// bounded memo of failed states: the memo only saves work, the answer is the search's).
// `domain` holds the vocabulary's accepted integer values, ascending, in its first `domain_len`
// entries (at most SOLVER_DOMAIN_MAX).
// ---------------------------------------------------------------------------------------------

const SOLVER_DOMAIN_MAX: u32 = 64u;
const WRW1X1_MEMO: u32 = 64u;

// What the rules after position depth - 1 read of the first `depth` values (Rules::state_key):
// chunk_size, c_per_gpr, c_mult, k_per_gpr * 64 + k_mult, n_part_cnt, read_size (0 when unset).
fn wrw1x1_state_key(c: array<i32, SOLVER_MAX_LEN>, depth: u32) -> array<i32, 6> {
    var key: array<i32, 6>;
    key[0] = select(0, c[0], depth > 0u);
    key[1] = select(0, c[1], depth > 1u);
    key[2] = select(0, c[2], depth > 2u);
    key[3] = select(0, c[3], depth > 3u) * 64 + select(0, c[4], depth > 4u);
    key[4] = select(0, c[6], depth > 6u);
    key[5] = select(0, c[7], depth > 7u);
    return key;
}

fn wrw1x1_same_key(a: array<i32, 6>, b: array<i32, 6>) -> bool {
    for (var i = 0u; i < 6u; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

// Rule 10 at its weakest (read_size 1, data_prefetch 0, limit 256) fails for every completion.
fn wrw1x1_dead(rules: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, depth: u32) -> bool {
    if (depth <= 4u || depth > 9u) {
        return false;
    }
    let loads = c[2] + c[4];
    let least = wrw1x1_acc_gprs(c) + 12 + loads * select(1, 2, rules[1] != 0);
    return least > 256;
}

fn solver_completable(
    rules: array<i32, 8>,
    prefix: array<i32, SOLVER_MAX_LEN>,
    len: u32,
    domain: array<i32, SOLVER_DOMAIN_MAX>,
    domain_len: u32,
) -> bool {
    if (!solver_prefix_valid(rules, prefix, len)) {
        return false;
    }
    if (len >= 10u) {
        return len == 10u;
    }
    let dn = min(domain_len, SOLVER_DOMAIN_MAX);
    var buf = prefix;
    var next: array<u32, 11>;
    var memo_depth: array<u32, WRW1X1_MEMO>;
    var memo_key: array<array<i32, 6>, WRW1X1_MEMO>;
    var memo_n = 0u;
    var d = len;
    next[d] = 0u;
    loop {
        if (d >= 10u) {
            return true;
        }
        // Entering depth d: dead by the prune or failed before (both CPU twin's early returns).
        var failed_before = false;
        if (next[d] == 0u) {
            if (wrw1x1_dead(rules, buf, d)) {
                failed_before = true;
            } else {
                let key = wrw1x1_state_key(buf, d);
                for (var m = 0u; m < memo_n; m++) {
                    if (memo_depth[m] == d && wrw1x1_same_key(memo_key[m], key)) {
                        failed_before = true;
                        break;
                    }
                }
            }
        }
        var advanced = false;
        if (!failed_before) {
            while (next[d] < dn) {
                buf[d] = domain[next[d]];
                next[d] += 1u;
                if (solver_prefix_valid(rules, buf, d + 1u)) {
                    advanced = true;
                    break;
                }
            }
        }
        if (advanced) {
            d += 1u;
            if (d < 10u) {
                next[d] = 0u;
            }
            continue;
        }
        // Every value failed at depth d: remember the state, go back up.
        if (!failed_before && memo_n < WRW1X1_MEMO) {
            memo_depth[memo_n] = d;
            memo_key[memo_n] = wrw1x1_state_key(buf, d);
            memo_n += 1u;
        }
        if (d == len) {
            return false;
        }
        d -= 1u;
    }
    return false;
}
