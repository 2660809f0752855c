// Kernel: rules_check (test kernel for a solver's WGSL rules library)
// CPU twin: the solver's Rules::prefix_valid and Rules::completable (for ConvAsm1x1U:
// solvers::conv_asm_1x1u). The registry prepends the solver's rules library.
//   ok[i] = (solver_prefix_valid(rules[i], prefixes[i], lens[i]) ? 1 : 0)
//         | (solver_completable(rules[i], prefixes[i], lens[i], domain) ? 2 : 0)
// Bindings (group 0):
//   0 rules     storage read        [n, 8] i32 (then any data the library reads by offset)
//   1 prefixes  storage read        [n, SOLVER_MAX_LEN] i32
//   2 lens      storage read        [n] u32
//   3 domain    storage read        [domain_len] i32, ascending
//   4 ok        storage read_write  [n] u32
//   5 p         uniform             Params
// Overrides: WG (workgroup size).

override WG: u32 = 64u;

struct Params {
    count: u32,
    domain_len: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> rules: array<i32>;
@group(0) @binding(1) var<storage, read> prefixes: array<i32>;
@group(0) @binding(2) var<storage, read> lens: array<u32>;
@group(0) @binding(3) var<storage, read> domain: array<i32>;
@group(0) @binding(4) var<storage, read_write> ok: array<u32>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= p.count) {
        return;
    }
    var r: array<i32, 8>;
    var c: array<i32, SOLVER_MAX_LEN>;
    for (var k = 0u; k < 8u; k++) {
        r[k] = rules[i * 8u + k];
    }
    for (var k = 0u; k < SOLVER_MAX_LEN; k++) {
        c[k] = prefixes[i * SOLVER_MAX_LEN + k];
    }
    var dom: array<i32, SOLVER_DOMAIN_MAX>;
    let dn = min(p.domain_len, SOLVER_DOMAIN_MAX);
    for (var k = 0u; k < dn; k++) {
        dom[k] = domain[k];
    }
    let valid = solver_prefix_valid(r, c, lens[i]);
    let done = solver_completable(r, c, lens[i], dom, dn);
    ok[i] = select(0u, 1u, valid) | select(0u, 2u, done);
}
