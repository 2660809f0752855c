// Function library (no entry point): ConvAsm1x1U's partial-validity rules.
// CPU twin: solvers::conv_asm_1x1u::Rules::prefix_valid (rules 1..8 of ../shared/miopen/README.md,
// "ConvAsm1x1U parameters and validity"); tested against it over random prefixes.
// The registry puts this text in front of every kernel that checks configs (greedy_step,
// rules_check); they call `solver_prefix_valid`.
//   rules:  Rules::gpu_words() = [e, backward, c_in, k_out, hw_out, hw_out % e, n, 0]
//   prefix: the first `len` values of a config (read_size, k_mult, chunks_per_wave, chunk_size,
//           n_mult, c_mult, waves_c_in_group, waves_k_in_group)
// All values fit i32: sizes are those of applicable problems (< 2^24, saturated otherwise) and
// every product is formed only after range checks bounded its factors.

// Longest prefix the kernels pass (a config has 8 values).
const SOLVER_MAX_LEN: u32 = 8u;

// Config length from the prefix: none of its own (every config has the kernel's MAX_LEN values).
fn solver_config_len(rules: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> u32 {
    return 0xffffffffu;
}

fn asm1x1u_pow2_in(v: i32, lo: i32, hi: i32) -> bool {
    return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

// ceil(a / b) for a >= 0, b > 0; -1 otherwise (no value, which every caller treats as failing).
fn asm1x1u_ceil_div(a: i32, b: i32) -> i32 {
    if (a < 0 || b <= 0) {
        return -1;
    }
    return a / b + select(0, 1, a % b != 0);
}

fn asm1x1u_vgprs(rules: array<i32, 8>, cpw: i32, n_mult: i32, c_mult: i32, k_mult: i32) -> i32 {
    let in_gprs = asm1x1u_ceil_div(cpw * n_mult * c_mult, rules[0]);
    return 4 + 2 * in_gprs + cpw * n_mult * k_mult + select(0, 1, rules[5] != 0) + 1;
}

fn solver_prefix_valid(rules: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> bool {
    let e = rules[0];
    let backward = rules[1] != 0;
    let c_in = rules[2];
    let k_out = rules[3];
    let hw_out = rules[4];
    let n = rules[6];
    if (len > 8u) {
        return false;
    }
    // 1. read_size in 1..4
    if (len > 0u) {
        if (c[0] < 1 || c[0] > 4) {
            return false;
        }
    }
    // 2. k_mult in {1, 4, 8, ..., 32}; k_mult % e == 0; backward: K_out % k_mult == 0
    if (len > 1u) {
        let k_mult = c[1];
        if (!(k_mult == 1 || (k_mult % 4 == 0 && k_mult >= 4 && k_mult <= 32))) {
            return false;
        }
        if (k_mult % e != 0) {
            return false;
        }
        if (backward && k_out % k_mult != 0) {
            return false;
        }
    }
    // 3. chunks_per_wave in 1..16; read_size * e <= chunks_per_wave; chunks_per_wave % e == 0
    if (len > 2u) {
        let cpw = c[2];
        if (cpw < 1 || cpw > 16 || c[0] * e > cpw || cpw % e != 0) {
            return false;
        }
    }
    // 4. chunk_size power of two in 1..64; chunks_per_wave <= ceil(HW_out / chunk_size)
    if (len > 3u) {
        if (!asm1x1u_pow2_in(c[3], 1, 64)) {
            return false;
        }
        let total_chunks = asm1x1u_ceil_div(hw_out, c[3]);
        if (total_chunks < 0 || c[2] > total_chunks) {
            return false;
        }
    }
    // 5. n_mult in 1..8; n_mult <= ceil(N / (64 / chunk_size))
    if (len > 4u) {
        let n_mult = c[4];
        if (n_mult < 1 || n_mult > 8) {
            return false;
        }
        let blocks = asm1x1u_ceil_div(n, 64 / c[3]);
        if (blocks < 0 || n_mult > blocks) {
            return false;
        }
    }
    // 6. c_mult power of two in 1..32; c_mult % e == 0; vgprs < 256; 25 + 2*k_mult*c_mult < 102
    if (len > 5u) {
        let c_mult = c[5];
        if (!asm1x1u_pow2_in(c_mult, 1, 32) || c_mult % e != 0) {
            return false;
        }
        if (asm1x1u_vgprs(rules, c[2], c[4], c_mult, c[1]) >= 256) {
            return false;
        }
        if (25 + 2 * c[1] * c_mult >= 102) {
            return false;
        }
    }
    // 7. waves_c_in_group in 1..8, <= C_in; ceil(C_in / waves) and the last wave's share
    //    (possibly negative) divisible by c_mult
    if (len > 6u) {
        let waves_c = c[6];
        if (waves_c < 1 || waves_c > 8 || waves_c > c_in) {
            return false;
        }
        let c_per_wave = asm1x1u_ceil_div(c_in, waves_c);
        if (c_per_wave < 0) {
            return false;
        }
        let c_per_last_wave = c_in - c_per_wave * (waves_c - 1);
        if (c_per_wave % c[5] != 0 || c_per_last_wave % c[5] != 0) {
            return false;
        }
    }
    // 8. waves_k_in_group power of two in 1..8; k_mult * waves_k <= K_out; waves_c * waves_k <= 16;
    //    (256 / vgprs) * 4 >= waves_c * waves_k
    if (len > 7u) {
        let waves_k = c[7];
        if (!asm1x1u_pow2_in(waves_k, 1, 8) || c[1] * waves_k > k_out) {
            return false;
        }
        let waves = c[6] * waves_k;
        if (waves > 16) {
            return false;
        }
        let vgprs = asm1x1u_vgprs(rules, c[2], c[4], c[5], c[1]);
        if ((256 / vgprs) * 4 < waves) {
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Look-ahead. CPU twin: Rules::completable (same walk, same answer): no search; position by
// position it takes the accepted value of `domain` that every later rule finds easiest (the
// smallest; for chunk_size, position 3, the largest), and the prefix is completable exactly when
// this reaches 8 values (the proof is at Rules::completable). At most 8 * SOLVER_DOMAIN_MAX
// prefix checks, a few hundred loop iterations: far below llvmpipe's 65,535 per invocation,
// after which it ends every loop (the memoised search this replaces ran past 600,000).
// `domain` holds the vocabulary's accepted integer values in its first `domain_len` entries
// (at most SOLVER_DOMAIN_MAX; any order).
// ---------------------------------------------------------------------------------------------

const SOLVER_DOMAIN_MAX: u32 = 64u;

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
    let dn = min(domain_len, SOLVER_DOMAIN_MAX);
    var buf = prefix;
    for (var d = len; d < 8u; d++) {
        var found = false;
        var best = 0;
        for (var k = 0u; k < dn; k++) {
            let x = domain[k];
            buf[d] = x;
            if (solver_prefix_valid(rules, buf, d + 1u)) {
                // (The comparisons sit in lets: `x < best, x > best` would read as a template.)
                let smaller = x < best;
                let larger = x > best;
                if (!found || select(smaller, larger, d == 3u)) {
                    best = x;
                }
                found = true;
            }
        }
        if (!found) {
            return false;
        }
        buf[d] = best;
    }
    return true;
}
