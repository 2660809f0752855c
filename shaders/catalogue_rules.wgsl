// Function library (no entry point): the catalogue constraint as a table check.
// CPU twin: solvers::ck::constraint::CatalogueConstraint (accepts, accepts_miopen, completable,
// config_len); tested against it over random prefixes of generated CK problems.
// The registry puts this text in front of the kernels that check configs (greedy_step,
// beam_step, rules_check). Values are vocabulary value ids (the vocabulary words map each value
// id to itself), so a prefix is valid when some table row spells it.
//   rule:  [block offset in `rules`, MIOpen mode (1: accepts_miopen, 0: accepts), 0 ...]
//   block (CatalogueConstraint::gpu_block), i32 words in the kernel's `rules` binding:
//     [R rows, W width, NV values, fixed length (-1: by first value), MIOpen first-position
//      kind (0 none, 1 substring mask, 2 any), 0, 0, 0]
//     | length by first value [NV] | MIOpen first-position mask [NV]
//     | row lengths [R] | split-k position [R] (-1 none) | cells [R, W] (-1 past a row's end);
//     rows sorted by their cells (as i32), so the rows spelling a prefix are one run found by
//     binary search
// The library reads the kernel's module-scope `rules` array (every kernel that prepends a rules
// library declares it).

const SOLVER_MAX_LEN: u32 = 24u;
const SOLVER_DOMAIN_MAX: u32 = 1u;

fn cat_rows(b: u32) -> u32 {
    return u32(rules[b]);
}

fn cat_width(b: u32) -> u32 {
    return u32(rules[b + 1u]);
}

fn cat_values(b: u32) -> u32 {
    return u32(rules[b + 2u]);
}

// Index of row r's length (split-k position follows R words later, then the cells).
fn cat_lens_at(b: u32) -> u32 {
    return b + 8u + 2u * cat_values(b);
}

// Row r's first n cells against c[0..n): -1 before, 0 equal, 1 after (n <= W).
fn cat_cmp(b: u32, r: u32, c: array<i32, SOLVER_MAX_LEN>, n: u32) -> i32 {
    let cells = cat_lens_at(b) + 2u * cat_rows(b) + r * cat_width(b);
    var cc = c;
    for (var i = 0u; i < n; i++) {
        let x = rules[cells + i];
        if (x != cc[i]) {
            return select(1, -1, x < cc[i]);
        }
    }
    return 0;
}

// The rows are sorted by their cells, so the rows spelling c[0..n) are the contiguous run
// starting at this lower bound (n <= W).
fn cat_first(b: u32, c: array<i32, SOLVER_MAX_LEN>, n: u32) -> u32 {
    var lo = 0u;
    var hi = cat_rows(b);
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (cat_cmp(b, mid, c, n) < 0) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Constraint::config_len of c[0..n).
fn cat_config_len(b: u32, c: array<i32, SOLVER_MAX_LEN>, n: u32) -> u32 {
    let fixed = rules[b + 3u];
    if (fixed >= 0) {
        return u32(fixed);
    }
    if (n == 0u) {
        return 1u;
    }
    if (c[0] < 0 || u32(c[0]) >= cat_values(b)) {
        return 0u;
    }
    return u32(rules[b + 8u + u32(c[0])]);
}

// Constraint::accepts(c[0..n-1), c[n-1]): some row spells c[0..n) (cells past a row's end are
// -1, never a value id).
fn cat_accepts(b: u32, c: array<i32, SOLVER_MAX_LEN>, n: u32) -> bool {
    if (n == 0u || n > cat_width(b)) {
        return false;
    }
    let r = cat_first(b, c, n);
    return r < cat_rows(b) && cat_cmp(b, r, c, n) == 0;
}

// Constraint::accepts_miopen(c[0..n-1), c[n-1]).
fn cat_accepts_miopen(b: u32, c: array<i32, SOLVER_MAX_LEN>, n: u32) -> bool {
    if (n == 0u) {
        return false;
    }
    let pos = n - 1u;
    let rows = cat_rows(b);
    if (pos == 0u) {
        let kind = rules[b + 4u];
        if (kind == 2) {
            return rows > 0u;
        }
        let v = c[0];
        if (kind == 1 && v >= 0 && u32(v) < cat_values(b) && rules[b + 8u + cat_values(b) + u32(v)] != 0) {
            return true;
        }
    }
    // MIOpen builds a malformed kernel id at the split-k position, which never matches.
    let split_at = cat_lens_at(b) + rows;
    for (var r = cat_first(b, c, pos); r < rows && cat_cmp(b, r, c, pos) == 0; r++) {
        if (rules[split_at + r] == i32(pos)) {
            return false;
        }
    }
    return cat_accepts(b, c, n);
}

fn solver_prefix_valid(rule: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> bool {
    let b = u32(rule[0]);
    if (len == 0u) {
        return true;
    }
    if (rule[1] != 0) {
        return cat_accepts_miopen(b, c, len);
    }
    return cat_accepts(b, c, len);
}

// Constraint::completable(c[0..len)): a row of the length the config will have spells the
// prefix (any row for the empty prefix).
fn solver_completable(
    rule: array<i32, 8>,
    c: array<i32, SOLVER_MAX_LEN>,
    len: u32,
    domain: array<i32, SOLVER_DOMAIN_MAX>,
    domain_len: u32,
) -> bool {
    let b = u32(rule[0]);
    let rows = cat_rows(b);
    if (len == 0u) {
        return rows > 0u;
    }
    if (len > cat_width(b)) {
        return false;
    }
    let want = i32(cat_config_len(b, c, len));
    let lens = cat_lens_at(b);
    for (var r = cat_first(b, c, len); r < rows && cat_cmp(b, r, c, len) == 0; r++) {
        if (rules[lens + r] == want) {
            return true;
        }
    }
    return false;
}

// Constraint::config_len: a hypothesis is finished once it has this many values.
fn solver_config_len(rule: array<i32, 8>, c: array<i32, SOLVER_MAX_LEN>, len: u32) -> u32 {
    return cat_config_len(u32(rule[0]), c, len);
}
