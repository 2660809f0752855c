// Function library (no entry point): ConvOclDirectFwd's prefix rules and look-ahead.
// CPU twin: solvers::conv_ocl_direct_fwd::Rules::prefix_valid and Rules::completable (rules 1..9
// of ../shared/miopen/solvers/ConvOclDirectFwd.md, section 4: the D sets and the V checks, each V
// check at the first position that decides it); tested against them over random prefixes
// (tests/gpu_ocl_rules.rs).
// The registry puts this text in front of every kernel that checks configs (greedy_step,
// beam_step, rules_check); the library reads the kernels' module-scope `rules` array.
//   rule:   [offset, 9, 0, 0, 0, 0, 0, 0] (solvers::RuleWords::Table): the problem's words are
//           rules[offset .. offset + 9] = Rules::gpu_words() =
//           [fwd (0/1), Cin/G, Cout/G, N, fy, fx, sh, sw, sizeof] (each 0..=i32::MAX)
//   prefix: the first `len` values of a config (grp_tile1, grp_tile0, in_tile1, in_tile0,
//           out_pix_tile1, out_pix_tile0, n_out_pix_tiles, n_in_data_tiles, n_stacks)
// Exact for every problem: each value of the prefix is range-checked before it is used, and V5's
// LDS size, whose factors may be as large as the problem's sizes, is computed saturating at
// OCL_CAP (each saturating step gives min(true value, OCL_CAP), and OCL_CAP > 65536).

// Longest prefix the kernels pass (a config has 9 values).
const SOLVER_MAX_LEN: u32 = 9u;
// The look-ahead's domain: the vocabulary's accepted values, ascending (at most this many).
const SOLVER_DOMAIN_MAX: u32 = 64u;

// Config length from the prefix: none of its own (every config has the kernel's MAX_LEN values).
fn solver_config_len(rule: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> u32 {
    return 0xffffffffu;
}

struct OclProblem {
    fwd: bool,
    cin_g: i32,
    cout_g: i32,
    n: i32,
    fy: i32,
    fx: i32,
    sh: i32,
    sw: i32,
    type_size: i32,
}

// The problem's words from the rules buffer (Rules::gpu_words).
fn ocl_problem(rule: array<i32, 8>) -> OclProblem {
    let b = u32(rule[0]);
    return OclProblem(
        rules[b] != 0,
        rules[b + 1u],
        rules[b + 2u],
        rules[b + 3u],
        rules[b + 4u],
        rules[b + 5u],
        rules[b + 6u],
        rules[b + 7u],
        rules[b + 8u],
    );
}

// v is one of 8, 16, 32, 64 (rules 1-4).
fn ocl_tile(v: i32) -> bool {
    return v == 8 || v == 16 || v == 32 || v == 64;
}

// v is one of 1, 2, 4 (rules 5, 6, 8).
fn ocl_in_one_two_four(v: i32) -> bool {
    return v == 1 || v == 2 || v == 4;
}

// B with stride > 1 ignores the stored out_pix_tile1 (out_pix_tile0): opt1' (opt0') is the
// stride; gt1' is then known after in_tile1 (2), else after out_pix_tile1 (4).
fn ocl_stride_tile1(p: OclProblem) -> bool {
    return !p.fwd && p.sh > 1;
}

fn ocl_stride_tile0(p: OclProblem) -> bool {
    return !p.fwd && p.sw > 1;
}

fn ocl_opt1(p: OclProblem, c: array<i32, SOLVER_MAX_LEN>) -> i32 {
    return select(c[4], p.sh, ocl_stride_tile1(p));
}

fn ocl_opt0(p: OclProblem, c: array<i32, SOLVER_MAX_LEN>) -> i32 {
    return select(c[5], p.sw, ocl_stride_tile0(p));
}

// gt' = max(8, in_tile / opt') (opt' > 0; in_tile is 8..64).
fn ocl_gt(in_tile: i32, opt: i32) -> i32 {
    return max(8, in_tile / opt);
}

const OCL_CAP: u32 = 1073741824u;

// min(a * b, OCL_CAP) for a, b <= OCL_CAP.
fn ocl_mul(a: u32, b: u32) -> u32 {
    if (a == 0u || b == 0u) {
        return 0u;
    }
    if (a > OCL_CAP / b) {
        return OCL_CAP;
    }
    return min(a * b, OCL_CAP);
}

// min(a + b, OCL_CAP) for a, b <= OCL_CAP.
fn ocl_add(a: u32, b: u32) -> u32 {
    return min(a + b, OCL_CAP);
}

// A non-negative size, saturated.
fn ocl_sat(v: i32) -> u32 {
    return min(u32(max(v, 0)), OCL_CAP);
}

// in_lcl (width or height) of one dimension: fwd: (it' - 1)*s + f; B: (it' + f - 1 + s - 1)/s,
// where it' = gt' * opt'. B with s > 1 has opt' = s, so it' is a multiple of s and the quotient
// is gt' + (f + s - 2)/s (everything non-negative); B with s == 1: it' + f - 1. Saturated at
// OCL_CAP; false in .y where MIOpen would divide by zero (B with s == 0).
fn ocl_in_lcl(p: OclProblem, gt: i32, opt: i32, f: i32, s: i32) -> vec2<u32> {
    if (p.fwd) {
        // opt' is out_pix_tile (1, 2, 4): it' <= 64.
        let it = u32(gt * opt);
        return vec2<u32>(ocl_add(ocl_mul(it - 1u, ocl_sat(s)), ocl_sat(f)), 1u);
    }
    if (s == 0) {
        return vec2<u32>(0u, 0u);
    }
    if (s > 1) {
        // f + s - 2 < 2^32.
        let q = (u32(f) + u32(s) - 2u) / u32(s);
        return vec2<u32>(ocl_add(u32(gt), min(q, OCL_CAP)), 1u);
    }
    let it = u32(gt * opt);
    return vec2<u32>(ocl_add(it - 1u, ocl_sat(f)), 1u);
}

// V5 (Rules::lds_fits) for a prefix of 8 values: (in_lcl_w*in_lcl_h*nidt'*n_stacks' +
// nopt'*nidt'*fy*fx) * sizeof <= 65536, n_stacks' = min(1, N). False where MIOpen would divide
// by zero.
fn ocl_lds_fits(p: OclProblem, c: array<i32, SOLVER_MAX_LEN>) -> bool {
    let opt1 = ocl_opt1(p, c);
    let opt0 = ocl_opt0(p, c);
    if (opt1 <= 0 || opt0 <= 0) {
        return false;
    }
    let w = ocl_in_lcl(p, ocl_gt(c[3], opt0), opt0, p.fx, p.sw);
    let h = ocl_in_lcl(p, ocl_gt(c[2], opt1), opt1, p.fy, p.sh);
    if (w.y == 0u || h.y == 0u) {
        return false;
    }
    let nopt = u32(min(p.cout_g, c[6]));
    let nidt = u32(min(p.cin_g, c[7]));
    let n_stacks = u32(min(p.n, 1));
    let lcl = ocl_mul(ocl_mul(ocl_mul(w.x, h.x), nidt), n_stacks);
    let wts = ocl_mul(ocl_mul(ocl_mul(nopt, nidt), ocl_sat(p.fy)), ocl_sat(p.fx));
    return ocl_mul(ocl_add(lcl, wts), ocl_sat(p.type_size)) <= 65536u;
}

// Rules::prefix_valid: rules 1..len hold.
fn ocl_valid(p: OclProblem, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> bool {
    if (len > 9u) {
        return false;
    }
    let gt1_known_at = select(4u, 2u, ocl_stride_tile1(p));
    let gt0_known_at = select(5u, 3u, ocl_stride_tile0(p));
    // 1. D: grp_tile1 in {8,16,32,64}.
    if (len > 0u && !ocl_tile(c[0])) {
        return false;
    }
    // 2. D: grp_tile0 in {8,16,32,64}.
    if (len > 1u && !ocl_tile(c[1])) {
        return false;
    }
    // 3. D: in_tile1 in {8,16,32,64}.
    if (len > 2u && !ocl_tile(c[2])) {
        return false;
    }
    // 4. D: in_tile0 in {8,16,32,64}. (For B with stride > 1, rules 6 V1/V2 below are already
    //    decidable here.)
    if (len > 3u && !ocl_tile(c[3])) {
        return false;
    }
    // 5. D: out_pix_tile1 in {1,2,4}; V1: opt1' != 0.
    if (len > 4u && !ocl_in_one_two_four(c[4])) {
        return false;
    }
    if (len > gt1_known_at && ocl_opt1(p, c) == 0) {
        return false;
    }
    // 6. D: out_pix_tile0 in {1,2,4}; V1: opt0' != 0; V2: alu_tiles_sz = gt0'*gt1' <= 256.
    if (len > 5u && !ocl_in_one_two_four(c[5])) {
        return false;
    }
    if (len > gt0_known_at && ocl_opt0(p, c) == 0) {
        return false;
    }
    if (len > max(gt1_known_at, gt0_known_at)) {
        let opt1 = ocl_opt1(p, c);
        let opt0 = ocl_opt0(p, c);
        // opt' < 0 cannot happen (the problem's sizes are non-negative); Rules::tiles divides
        // by it all the same.
        if (opt1 == 0 || opt0 == 0) {
            return false;
        }
        if (ocl_gt(c[3], opt0) * ocl_gt(c[2], opt1) > 256) {
            return false;
        }
    }
    // 7. D: n_out_pix_tiles in {1,2,4,8}; V4: n_out_tiles_perstack = nopt' != 0.
    if (len > 6u) {
        let nopt = c[6];
        if ((nopt != 1 && nopt != 2 && nopt != 4 && nopt != 8) || min(p.cout_g, nopt) == 0) {
            return false;
        }
    }
    // 8. D: n_in_data_tiles in {1,2,4}. (Rule 9's V5, the LDS limit, is decided here:
    //    n_stacks' = 1 for every n_stacks >= 1.)
    if (len > 7u && (!ocl_in_one_two_four(c[7]) || !ocl_lds_fits(p, c))) {
        return false;
    }
    // 9. D: n_stacks in {1,2}; V3: n_stacks' = min(n_stacks, 1, N) != 0;
    //    V5: (in_lcl_w*in_lcl_h*nidt'*n_stacks' + nopt'*nidt'*fy*fx) * sizeof <= 65536
    //    (checked at 8).
    if (len > 8u) {
        let n_stacks = c[8];
        if ((n_stacks != 1 && n_stacks != 2) || min(min(n_stacks, 1), p.n) == 0) {
            return false;
        }
    }
    return true;
}

fn solver_prefix_valid(rule: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> bool {
    return ocl_valid(ocl_problem(rule), c, len);
}

// ---------------------------------------------------------------------------------------------
// Look-ahead. CPU twin: Rules::completable (the same bounded check; it equals the memoised
// depth-first search over the domain, Rules::completable_by_search). Every rule accepts only
// powers of two up to 64, so only those domain values matter (`in_dom`, bit i for value 2^i).
// The grp tiles are read by rules 1 and 2 only, n_stacks by rule 9 only (V3 holds for every
// n_stacks >= 1 or none), V4 holds for every n_out_pix_tiles or none, and V5 grows with nopt'
// and nidt': a free one of these takes its smallest domain value. The tiles (in_tile1, in_tile0,
// out_pix_tile1, out_pix_tile0) take every allowed domain value, pruned after in_tile0 and
// out_pix_tile1.
// Loop iterations per call, at most: 64 (domain) + 4 + 4*4 + 4*4*3 + 4*4*3*3 (in_tile1,
// in_tile0, out_pix_tile1, out_pix_tile0) = 276; prefix_valid has no loops.
// ---------------------------------------------------------------------------------------------

// Bits of the values 8, 16, 32, 64 and of 1, 2, 4 (bit i: 2^i).
const OCL_TILES: u32 = 0x78u;
const OCL_ONE_TWO_FOUR: u32 = 0x7u;

// The smallest value of the set bits of m (m != 0): 2^(lowest bit).
fn ocl_lowest(m: u32) -> i32 {
    return 1 << firstTrailingBit(m);
}

// The bit of a power of two v (1..64).
fn ocl_bit(v: i32) -> u32 {
    return 1u << firstTrailingBit(u32(v));
}

fn solver_completable(
    rule: array<i32, 8>,
    prefix: array<i32, SOLVER_MAX_LEN>,
    len: u32,
    domain: array<i32, SOLVER_DOMAIN_MAX>,
    domain_len: u32,
) -> bool {
    let p = ocl_problem(rule);
    if (!ocl_valid(p, prefix, len)) {
        return false;
    }
    if (len >= 9u) {
        return len == 9u;
    }
    var in_dom = 0u;
    let dn = min(domain_len, SOLVER_DOMAIN_MAX);
    for (var i = 0u; i < dn; i++) {
        let v = domain[i];
        if (v > 64) {
            break;
        }
        if (v >= 1 && (v & (v - 1)) == 0) {
            in_dom |= ocl_bit(v);
        }
    }
    var buf = prefix;
    // grp_tile1, grp_tile0 (rules 1, 2), n_out_pix_tiles (7), n_in_data_tiles (8), n_stacks (9):
    // the smallest domain value of the set, where free.
    let grp = in_dom & OCL_TILES;
    let nopt = in_dom & 0xfu;
    let nidt = in_dom & OCL_ONE_TWO_FOUR;
    let n_stacks = in_dom & 0x3u;
    if ((len <= 1u && grp == 0u) || (len <= 6u && nopt == 0u)
        || (len <= 7u && nidt == 0u) || n_stacks == 0u) {
        return false;
    }
    if (len <= 0u) {
        buf[0] = ocl_lowest(grp);
    }
    if (len <= 1u) {
        buf[1] = ocl_lowest(grp);
    }
    if (len <= 6u) {
        buf[6] = ocl_lowest(nopt);
    }
    if (len <= 7u) {
        buf[7] = ocl_lowest(nidt);
    }
    buf[8] = ocl_lowest(n_stacks);
    // in_tile1 (3), in_tile0 (4), out_pix_tile1 (5), out_pix_tile0 (6): the prefix's value
    // (valid, so a power of two), else every allowed domain value.
    var m2 = in_dom & OCL_TILES;
    if (len > 2u) {
        m2 = ocl_bit(buf[2]);
    }
    var m3 = in_dom & OCL_TILES;
    if (len > 3u) {
        m3 = ocl_bit(buf[3]);
    }
    var m4 = in_dom & OCL_ONE_TWO_FOUR;
    if (len > 4u) {
        m4 = ocl_bit(buf[4]);
    }
    var m5 = in_dom & OCL_ONE_TWO_FOUR;
    if (len > 5u) {
        m5 = ocl_bit(buf[5]);
    }
    var r2 = m2;
    while (r2 != 0u) {
        buf[2] = ocl_lowest(r2);
        r2 &= r2 - 1u;
        var r3 = m3;
        while (r3 != 0u) {
            buf[3] = ocl_lowest(r3);
            r3 &= r3 - 1u;
            if (!ocl_valid(p, buf, 4u)) {
                continue;
            }
            var r4 = m4;
            while (r4 != 0u) {
                buf[4] = ocl_lowest(r4);
                r4 &= r4 - 1u;
                if (!ocl_valid(p, buf, 5u)) {
                    continue;
                }
                var r5 = m5;
                while (r5 != 0u) {
                    buf[5] = ocl_lowest(r5);
                    r5 &= r5 - 1u;
                    if (ocl_valid(p, buf, 9u)) {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}
