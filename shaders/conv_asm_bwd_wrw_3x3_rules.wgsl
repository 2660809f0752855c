// Function library (no entry point): ConvAsmBwdWrW3x3's prefix rules and look-ahead.
// CPU twin: solvers::conv_asm_bwd_wrw_3x3::Rules::prefix_valid and Rules::completable (rules 1..6
// of ../shared/miopen/solvers/ConvAsmBwdWrW3x3.md, section 4); tested against them over random
// prefixes (tests/gpu_wrw3x3_rules.rs).
// The registry puts this text in front of every kernel that checks configs (greedy_step,
// beam_step, rules_check); the library reads the kernels' module-scope `rules` array.
//   rule:   [offset, 13, 0, 0, 0, 0, 0, 0] (solvers::RuleWords::Table): the problem's words are
//           rules[offset .. offset + 13] = Rules::gpu_words() =
//           [C, K, G, N, H, W, fil_h, fil_w, pad_w, stride_h, stride_w, e, dot2_emulate]
//           (C: x's channels, K: dy's, H, W: x's size, e: 2 for FP16 else 1, dot2_emulate 0/1)
//   prefix: the first `len` values of a config (limit_wave_cnt, reverse_inout, chunk_size,
//           k_per_wave, pipe_lines_depth, n_per_group)
// i32 arithmetic is exact: the solver passes words only for problems its IsApplicable accepts
// (ConvAsmBwdWrW3x3Solver::wgsl_rule_words), so filter 3x3, pad_w 1, strides 1 or 2, W <= 512,
// C, K, N, H < 2^16, G >= 1; and each value of the prefix is range-checked before it is used. Then
// accums_cnt <= 72, gprs_per_line_in <= 75, vgprs < 6,000, loops <= 592, v_instr <= 28,800 and
// total < 2^26 (rule 5's arithmetic, Rules::cost).

// Longest prefix the kernels pass (a config has 6 values).
const SOLVER_MAX_LEN: u32 = 6u;
// The look-ahead's domain: the vocabulary's accepted values, ascending (at most this many).
const SOLVER_DOMAIN_MAX: u32 = 64u;

// Config length from the prefix: none of its own (every config has the kernel's MAX_LEN values).
fn solver_config_len(rule: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> u32 {
    return 0xffffffffu;
}

struct Wrw3x3Problem {
    c: i32,
    k: i32,
    g: i32,
    n: i32,
    h: i32,
    w: i32,
    fil_h: i32,
    fil_w: i32,
    pad_w: i32,
    stride_h: i32,
    stride_w: i32,
    e: i32,
    dot2_emulate: bool,
}

// The problem's words from the rules buffer (Rules::gpu_words).
fn wrw3x3_problem(rule: array<i32, 8>) -> Wrw3x3Problem {
    let b = u32(rule[0]);
    return Wrw3x3Problem(
        rules[b],
        rules[b + 1u],
        rules[b + 2u],
        rules[b + 3u],
        rules[b + 4u],
        rules[b + 5u],
        rules[b + 6u],
        rules[b + 7u],
        rules[b + 8u],
        rules[b + 9u],
        rules[b + 10u],
        rules[b + 11u],
        rules[b + 12u] != 0,
    );
}

// b divides a (false for b == 0, where MIOpen would divide by zero).
fn wrw3x3_divides(a: i32, b: i32) -> bool {
    return b != 0 && a % b == 0;
}

// What rule 5 computes of (reverse_inout, chunk_size, k_per_wave, pipe_lines_depth); ok is false
// where MIOpen would divide by zero (Rules::cost's None).
struct Wrw3x3Cost {
    ok: bool,
    accums_cnt: i32,
    vgprs: i32,
    total: i32,
}

// Rules::cost: C++ int (truncating) arithmetic; chunk is 8 or 16 and pld >= 1 (checked before).
fn wrw3x3_cost(p: Wrw3x3Problem, rio: i32, chunk: i32, kpw: i32, pld: i32) -> Wrw3x3Cost {
    var out = Wrw3x3Cost(false, 0, 0, 0);
    let e = p.e;
    let cpw = 64 / chunk;
    let accums_cnt = (p.fil_w * p.fil_h * cpw * kpw * chunk) / 64;
    let out_w_vec = (p.w + e - 1) / e;
    var gprs_per_line_in = (out_w_vec + chunk - 1) / chunk;
    if (chunk != 16) {
        if (chunk - p.pad_w == 0) {
            return out;
        }
        gprs_per_line_in = (out_w_vec + chunk - p.pad_w - 1) / (chunk - p.pad_w);
    }
    if (p.stride_w == 0 || p.stride_h == 0 || p.g == 0) {
        return out;
    }
    gprs_per_line_in += gprs_per_line_in % p.stride_w;
    var gprs_per_line_out = 1;
    if (gprs_per_line_in > 1) {
        gprs_per_line_out = gprs_per_line_in / p.stride_w;
    }
    let vgprs_for_lines_in = (pld + p.fil_h - 1) * e * gprs_per_line_in;
    let lines_out = (pld + p.stride_h - 1) / p.stride_h;
    let vgprs_for_lines_out = lines_out * e * gprs_per_line_out;
    let vgprs_for_division = select(4, 0, vgprs_for_lines_in >= 4) + select(3, 0, vgprs_for_lines_out >= 3);
    let k_group_size = (p.k / select(kpw, cpw, rio != 0)) / p.g;
    let pow2 = (k_group_size & (k_group_size - 1)) == 0;
    let vgprs = accums_cnt + vgprs_for_lines_in + vgprs_for_lines_out + select(vgprs_for_division, 0, pow2) + 6
        + (e - 1);
    let unroll_factor = pld * (pld + 2);
    let steps = max(p.h - 1 - pld, 0);
    let loops = pld + unroll_factor + steps % unroll_factor + 1;
    let m_instr = 3 + (gprs_per_line_in + 3) / 4;
    let v_instr = (kpw * p.fil_h * gprs_per_line_out * p.fil_w * 4 * select(1, 2, p.dot2_emulate)) / 3 * e;
    let exch_instr = select(0, 3 * m_instr, e == 2);
    out.ok = true;
    out.accums_cnt = accums_cnt;
    out.vgprs = vgprs;
    out.total = loops * (m_instr + v_instr + exch_instr) * e;
    return out;
}

// Rules::prefix_valid: rules 1..len hold.
fn wrw3x3_valid(p: Wrw3x3Problem, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> bool {
    if (len > 6u) {
        return false;
    }
    // 1. limit_wave_cnt in 0..9.
    if (len > 0u && (c[0] < 0 || c[0] > 9)) {
        return false;
    }
    // 2. reverse_inout in {0,1}; if reverse_inout == 1: stride_h == 1 and stride_w == 1.
    if (len > 1u) {
        let rio = c[1];
        if ((rio != 0 && rio != 1) || (rio == 1 && !(p.stride_h == 1 && p.stride_w == 1))) {
            return false;
        }
    }
    // 3. chunk_size in {8,16}; (a) (rio == 0 ? C : K) % (cpw*G) == 0; (b) C % cpw == 0 or
    //    K % cpw == 0; (c) (rio != 0 ? K : C) % cpw == 0.
    if (len > 2u) {
        let rio = c[1];
        let chunk = c[2];
        if (chunk != 8 && chunk != 16) {
            return false;
        }
        let cpw = 64 / chunk;
        if (!wrw3x3_divides(select(p.k, p.c, rio == 0), cpw * p.g)
            || !(wrw3x3_divides(p.c, cpw) || wrw3x3_divides(p.k, cpw))
            || !wrw3x3_divides(select(p.c, p.k, rio != 0), cpw)) {
            return false;
        }
    }
    // 4. k_per_wave in {1,2,4,8}; (a) (rio == 0 ? K : C) % (k_per_wave*G) == 0;
    //    (b) chunk_size*k_per_wave <= 64; (c) (rio != 0 ? C : K) % k_per_wave == 0.
    if (len > 3u) {
        let rio = c[1];
        let kpw = c[3];
        if ((kpw != 1 && kpw != 2 && kpw != 4 && kpw != 8)
            || !wrw3x3_divides(select(p.c, p.k, rio == 0), kpw * p.g)
            || c[2] * kpw > 64
            || !wrw3x3_divides(select(p.k, p.c, rio != 0), kpw)) {
            return false;
        }
    }
    // 5. pipe_lines_depth in 1..16; pipe_lines_depth <= min(H, 16); vgprs <= 256; total < 32000.
    if (len > 4u) {
        let pld = c[4];
        if (pld < 1 || pld > 16 || pld > min(p.h, 16)) {
            return false;
        }
        let cost = wrw3x3_cost(p, c[1], c[2], c[3], pld);
        if (!cost.ok || cost.vgprs > 256 || cost.total >= 32000) {
            return false;
        }
    }
    // 6. n_per_group in 1..8; n_per_group <= N; if n_per_group > 4: vgprs <= 128;
    //    if limit_wave_cnt != 0: limit_wave_cnt*4 >= n_per_group;
    //    LDS = (n_per_group - 1)*64*4*accums_cnt <= 65536.
    if (len > 5u) {
        let lwc = c[0];
        let npg = c[5];
        if (npg < 1 || npg > 8 || npg > p.n) {
            return false;
        }
        let cost = wrw3x3_cost(p, c[1], c[2], c[3], c[4]);
        if (!cost.ok || (npg > 4 && cost.vgprs > 128) || (lwc != 0 && lwc * 4 < npg)
            || (npg - 1) * 64 * 4 * cost.accums_cnt > 65536) {
            return false;
        }
    }
    return true;
}

fn solver_prefix_valid(rule: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> bool {
    return wrw3x3_valid(wrw3x3_problem(rule), c, len);
}

// ---------------------------------------------------------------------------------------------
// Look-ahead. CPU twin: Rules::completable (the same bounded check; it equals the plain
// depth-first search over the domain, Rules::completable_by_search). A rule accepts only values
// of a small set (1: 0..9, 2: {0,1}, 3: {8,16}, 4: {1,2,4,8}, 5: 1..16, 6: 1..8), so only the
// domain's values in 0..16 matter (`in_dom`, bit v for value v). limit_wave_cnt and n_per_group
// are read only by rules 1 and 6, where 0 is the easiest limit_wave_cnt (then the largest) and
// the smallest n_per_group the easiest (every check of rule 6 holds for it if it holds for a
// larger one): a free one of them takes that value. The other free positions take every domain
// value their rule allows, pruned after k_per_wave.
// Loop iterations per call, at most: 64 (domain) + 2 + 2*2 + 2*2*4 + 2*2*4*16 (reverse_inout,
// chunk_size, k_per_wave, pipe_lines_depth) = 342; prefix_valid has no loops.
// ---------------------------------------------------------------------------------------------

fn wrw3x3_lowest(m: u32) -> i32 {
    return i32(firstTrailingBit(m));
}

fn solver_completable(
    rule: array<i32, 8>,
    prefix: array<i32, SOLVER_MAX_LEN>,
    len: u32,
    domain: array<i32, SOLVER_DOMAIN_MAX>,
    domain_len: u32,
) -> bool {
    let p = wrw3x3_problem(rule);
    if (!wrw3x3_valid(p, prefix, len)) {
        return false;
    }
    if (len >= 6u) {
        return len == 6u;
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
    // limit_wave_cnt (rule 1: 0..9): 0, else the largest.
    if (len == 0u) {
        if ((in_dom & 1u) != 0u) {
            buf[0] = 0;
        } else {
            let m = in_dom & 0x3feu;
            if (m == 0u) {
                return false;
            }
            buf[0] = i32(firstLeadingBit(m));
        }
    }
    // n_per_group (rule 6: 1..8): the smallest.
    let npg = in_dom & 0x1feu;
    if (npg == 0u) {
        return false;
    }
    buf[5] = wrw3x3_lowest(npg);
    // reverse_inout (rule 2), chunk_size (3), k_per_wave (4), pipe_lines_depth (5): the prefix's
    // value (valid, so in its set), else every allowed domain value.
    var m1 = in_dom & 0x3u;
    if (len > 1u) {
        m1 = 1u << u32(buf[1]);
    }
    var m2 = in_dom & 0x10100u;
    if (len > 2u) {
        m2 = 1u << u32(buf[2]);
    }
    var m3 = in_dom & 0x116u;
    if (len > 3u) {
        m3 = 1u << u32(buf[3]);
    }
    var m4 = in_dom & 0x1fffeu;
    if (len > 4u) {
        m4 = 1u << u32(buf[4]);
    }
    var r1 = m1;
    while (r1 != 0u) {
        buf[1] = wrw3x3_lowest(r1);
        r1 &= r1 - 1u;
        var r2 = m2;
        while (r2 != 0u) {
            buf[2] = wrw3x3_lowest(r2);
            r2 &= r2 - 1u;
            var r3 = m3;
            while (r3 != 0u) {
                buf[3] = wrw3x3_lowest(r3);
                r3 &= r3 - 1u;
                if (!wrw3x3_valid(p, buf, 4u)) {
                    continue;
                }
                var r4 = m4;
                while (r4 != 0u) {
                    buf[4] = wrw3x3_lowest(r4);
                    r4 &= r4 - 1u;
                    if (wrw3x3_valid(p, buf, 6u)) {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}
