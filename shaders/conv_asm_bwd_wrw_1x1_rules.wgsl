// Function library (no entry point): ConvAsmBwdWrW1x1's partial-validity rules and look-ahead.
// CPU twin: solvers::conv_asm_bwd_wrw_1x1::Rules::prefix_valid and Rules::completable (rules 1..10
// of ../shared/miopen/solvers/ConvAsmBwdWrW1x1.md, section 4); tested against them over random
// prefixes (tests/gpu_wrw1x1_rules.rs).
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
// Look-ahead. CPU twin: Rules::completable (the same bounded check; it equals the depth-first
// search over the domain, Rules::completable_by_search, tested on random prefixes and on every
// valid prefix of eight domains in tests/gpu_wrw1x1_rules.rs). Every rule accepts only values in
// 0..16, so only the domain's values there matter (`in_dom`, bit v for value v). A free position
// whose later readers all get easier with a smaller value takes the domain's smallest value its
// own rule allows: k_per_gpr, k_mult, n_per_gpr, n_part_cnt, read_size, data_prefetch. The
// others take every allowed domain value: chunk_size and c_per_gpr (pruned by rule 2), c_mult
// and short_store.
// Loop iterations per call, at most: 64 (domain) + 6 (the smallest values) + 5 + 5*5
// (chunk_size, c_per_gpr) + 5*5 + 5*5*2 (c_mult, short_store: rule 2 leaves 5 pairs) = 175;
// prefix_valid has no loops. The depth-first search with a 64-entry memo it replaces took up to
// 1,752,711 (fp32, domain {1,2,4,8,16}, empty prefix: nothing completes without short_store 0),
// 233,149 over {2,3,4,8,16}, and 35 over the shipped models' values {0,1,2,3,4,8,16}, counted on
// the CPU over every valid prefix; lavapipe cuts one invocation's loops at 65,535.
// `domain` holds the vocabulary's accepted integer values, ascending, in its first `domain_len`
// entries (at most SOLVER_DOMAIN_MAX).
// ---------------------------------------------------------------------------------------------

const SOLVER_DOMAIN_MAX: u32 = 64u;

// Bits 1, 2, 4, 8, 16: the values rules 1..5 accept.
const WRW1X1_POW2: u32 = 0x10116u;

fn wrw1x1_lowest(m: u32) -> i32 {
    return i32(firstTrailingBit(m));
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
    var in_dom = 0u;
    let dn = min(domain_len, SOLVER_DOMAIN_MAX);
    for (var i = 0u; i < dn; i++) {
        let v = domain[i];
        if (v > 16) {
            break;
        }
        if (v >= 0) {
            in_dom |= 1u << u32(v);
        }
    }
    var buf = prefix;
    // k_per_gpr, k_mult, n_per_gpr, n_part_cnt, read_size, data_prefetch: the smallest allowed.
    var pos = array<u32, 6>(3u, 4u, 5u, 6u, 7u, 9u);
    var allowed = array<u32, 6>(WRW1X1_POW2, WRW1X1_POW2, 0x16u, 0x1feu, 0x1eu, 0x1fu);
    for (var i = 0u; i < 6u; i++) {
        if (len <= pos[i]) {
            let m = in_dom & allowed[i];
            if (m == 0u) {
                return false;
            }
            buf[pos[i]] = wrw1x1_lowest(m);
        }
    }
    // chunk_size, c_per_gpr, c_mult, short_store: the prefix's value (valid, so in its set),
    // else every allowed domain value.
    var m0 = in_dom & WRW1X1_POW2;
    if (len > 0u) {
        m0 = 1u << u32(buf[0]);
    }
    var m1 = in_dom & WRW1X1_POW2;
    if (len > 1u) {
        m1 = 1u << u32(buf[1]);
    }
    var m2 = in_dom & WRW1X1_POW2;
    if (len > 2u) {
        m2 = 1u << u32(buf[2]);
    }
    var m8 = in_dom & 0x3u;
    if (len > 8u) {
        m8 = 1u << u32(buf[8]);
    }
    var r0 = m0;
    while (r0 != 0u) {
        buf[0] = wrw1x1_lowest(r0);
        r0 &= r0 - 1u;
        var r1 = m1;
        while (r1 != 0u) {
            buf[1] = wrw1x1_lowest(r1);
            r1 &= r1 - 1u;
            if (!solver_prefix_valid(rules, buf, 2u)) {
                continue;
            }
            var r2 = m2;
            while (r2 != 0u) {
                buf[2] = wrw1x1_lowest(r2);
                r2 &= r2 - 1u;
                var r8 = m8;
                while (r8 != 0u) {
                    buf[8] = wrw1x1_lowest(r8);
                    r8 &= r8 - 1u;
                    if (solver_prefix_valid(rules, buf, 10u)) {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}
