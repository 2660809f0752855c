//! Issue 44: configs are compared as MIOpen runs them, and MIOpen's own default passes
//! tuneinfer's rules. Goldens are MIOpen's: rows of `../shared/miopen/perfdb` (MIOpen stored its
//! default as the tuned value there, index 0 and the `[gks]` suffix of `ToString`), and cases
//! derived by hand from MIOpen's source (`conv_ocl_dir2Dfwd.cpp:305-347`,
//! `conv_ocl_dir2Dfwd1x1.cpp:101-440` at ROCm/MIOpen 2d1fd997a).

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::dataset;
use tuneinfer::problem::ConvProblem;
use tuneinfer::solvers::{self, Target, Tunable};

fn problem(key: &str) -> ConvProblem {
    ConvProblem::parse(key).unwrap_or_else(|e| panic!("{key}: {e}"))
}

fn tunable(name: &str) -> &'static dyn Tunable {
    solvers::tunable(solvers::by_name(name).unwrap()).unwrap()
}

/// MI100's tuned config of `key` for `solver` in MIOpen 3.5.1's perf db.
fn mi100_row(solver: &str, key: &str) -> (ConvProblem, Vec<i64>) {
    let db = common::perfdb_dir().join("gfx90878.db.txt.bz2");
    let rows = dataset::read_rows(&db, solver).unwrap();
    let p = problem(key);
    let row = rows
        .rows
        .iter()
        .find(|r| r.problem == p)
        .unwrap_or_else(|| panic!("{key}: no {solver} row in {}", db.display()));
    (p, tunable(solver).parse_params(&row.params).unwrap())
}

#[test]
fn gtc_defaults_that_set_a_split_on_a_flag_0_entry_are_the_twin_miopen_equates_and_valid() {
    // The row MIOpen stored (its default: `...,1,0,0,...,64,0[1]`, split 1 on a 128x128x16 entry
    // whose catalogue flag is 0): MIOpen's HeuristicInit copies the entry, then sets the split
    // (fwd :599-615); the tuned text names the flag-1 twin. tuneinfer's default used to keep the
    // flag-0 entry with split 1, which the rules refused (issue 44: 7,882 MI100 forward problems).
    let t = Target::new("gfx90878");
    let s = tunable("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC");
    let (p, tuned) = mi100_row(
        s.solver_name(),
        "2x992x7x7x1x1x1x1x128x512x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP32xF",
    );
    let default = s.static_default(&t, &p);
    assert_eq!(s.canonical(&t, &p, &default), s.canonical(&t, &p, &tuned));
    assert!(s.rules(&t, &p).is_valid(&default), "{default:?}");
}

#[test]
fn a_gtc_wrw_default_outside_the_spare_set_is_valid_as_miopen_stores_it() {
    // A unit convolution whose default is an nxe=1 entry (the pad fallback): the spare set's
    // rule (W5) refuses it, but a config read from a perf db is not of the spare set, and MIOpen
    // stored exactly this default as MI100's tuned value (`...,64,0[3]`).
    let t = Target::new("gfx90878");
    let s = tunable("ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC");
    let (p, tuned) = mi100_row(
        s.solver_name(),
        "2x58x28x28x1x1x1x1x58x4x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP16xW",
    );
    let rules = s.rules(&t, &p);
    assert!(rules.is_valid(&tuned), "MIOpen's tuned value {tuned:?} refused");
    let default = s.static_default(&t, &p);
    assert_eq!(s.canonical(&t, &p, &default), s.canonical(&t, &p, &tuned));
    assert!(rules.is_valid(&default));
}

// MIOpen's default passing the rules on every problem: tests/solvers/defaults_pass_rules.rs.

#[test]
fn ocl_direct_fwd_configs_that_build_the_same_kernel_compare_equal() {
    let t = Target::new("gfx906_60");
    let s = tunable("ConvOclDirectFwd");
    // F 3x3: grp_tile0' = max(8, in_tile0 / out_pix_tile0) = 8 for in_tile0 8, 16 and 32 with
    // out_pix_tile0 4 (in_tile0' = 32); the stored grp_tile values and n_stacks (always 1 after
    // :337-338) are not read.
    let f = problem("64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP32-F");
    let a = s.canonical(&t, &f, &[16, 16, 16, 8, 2, 4, 2, 2, 1]);
    let b = s.canonical(&t, &f, &[8, 8, 16, 16, 2, 4, 2, 2, 2]);
    let c = s.canonical(&t, &f, &[32, 64, 16, 32, 2, 4, 2, 2, 1]);
    assert_eq!(a, vec![8, 8, 16, 32, 2, 4, 2, 2, 1]);
    assert_eq!((a.clone(), a.clone()), (b, c));
    // in_tile0 64: grp_tile0' 16, another kernel.
    assert_ne!(s.canonical(&t, &f, &[16, 16, 16, 64, 2, 4, 2, 2, 1]), a);
    // n_out_pix_tiles is clamped to Cout / G (:307-308): 8 and 4 are one on K = 4.
    let k4 = problem("64-56-56-3x3-4-56-56-16-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert_eq!(
        s.canonical(&t, &k4, &[8, 8, 16, 16, 2, 2, 8, 2, 1]),
        s.canonical(&t, &k4, &[8, 8, 16, 16, 2, 2, 4, 2, 1])
    );
    // B with stride 2: the stored out_pix_tile values are replaced by the stride (:311-316).
    let b2 = problem("64-28-28-3x3-64-56-56-16-1x1-2x2-1x1-0-NCHW-FP32-B");
    assert_eq!(
        s.canonical(&t, &b2, &[8, 8, 16, 16, 1, 1, 2, 2, 1]),
        s.canonical(&t, &b2, &[8, 8, 16, 16, 4, 4, 2, 2, 1])
    );
}

#[test]
fn ocl_direct_fwd1x1_compares_only_what_each_kernel_version_reads() {
    let t = Target::new("gfx906_60");
    let s = tunable("ConvOclDirectFwd1x1");
    // Version 1 (F, FP32, C and K multiples of 16; :110-150): only out_pix_tile0,
    // n_out_pix_tiles and n_in_data_tiles, the latter kept when 0 < it < C and it % 8 == 0,
    // else C: 12 and 64 both run with 64 input maps on C = 64.
    let v1 = problem("64-28-28-1x1-128-28-28-8-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert_eq!(
        s.canonical(&t, &v1, &[1, 64, 1, 64, 1, 0, 16, 12, 1]),
        s.canonical(&t, &v1, &[4, 256, 2, 128, 2, 0, 16, 64, 2])
    );
    assert_ne!(
        s.canonical(&t, &v1, &[1, 64, 1, 64, 1, 0, 16, 16, 1]),
        s.canonical(&t, &v1, &[1, 64, 1, 64, 1, 0, 16, 64, 1])
    );
    // Version 0 (FP16): the read unit is out_pix_tile0 halved until it divides the widths
    // (:281-297): 4 and 2 are one on a width of 14 (14 % 4 != 0 -> 2).
    let v0 = problem("64-14-14-1x1-128-14-14-8-0x0-1x1-1x1-0-NCHW-FP16-F");
    assert_eq!(
        s.canonical(&t, &v0, &[1, 64, 1, 64, 1, 4, 4, 4, 1]),
        s.canonical(&t, &v0, &[2, 64, 4, 32, 4, 2, 4, 4, 1])
    );
    // ... but the work-group size (grp_tile0) and n_stacks are read.
    assert_ne!(
        s.canonical(&t, &v0, &[1, 64, 1, 64, 1, 2, 4, 4, 1]),
        s.canonical(&t, &v0, &[1, 128, 1, 64, 1, 2, 4, 4, 1])
    );
    assert_ne!(
        s.canonical(&t, &v0, &[1, 64, 1, 64, 1, 2, 4, 4, 1]),
        s.canonical(&t, &v0, &[1, 64, 1, 64, 1, 2, 4, 4, 2])
    );
}

#[test]
fn solvers_whose_operator_eq_compares_every_field_compare_every_field() {
    // MIOpen's operator== compares all serialised fields for these (survey in
    // docs/methods.md); one field changed is another config for tuneinfer too.
    let t = Target::new("gfx906_60");
    let cases: [(&str, &str, &[i64]); 7] = [
        (
            "ConvBinWinogradRxSf3x2",
            "64-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-F",
            &[20],
        ),
        (
            "ConvMlirIgemmFwd",
            "64-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-F",
            &[256, 128, 128, 8, 4, 4],
        ),
        (
            "ConvHipImplicitGemmForwardV4R4Xdlops",
            "64-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-F",
            &[128, 128, 4, 64, 64, 4, 0, 0, 1],
        ),
        // GTC forward passes the split to the kernel as is (2 and 5 are one under MIOpen's
        // operator==, which compares it as zero / non-zero, but launch different grids).
        (
            "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
            "64-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NHWC-FP16-F",
            &[5, 2],
        ),
        (
            "ConvAsm1x1U",
            "64-28-28-1x1-128-28-28-8-0x0-1x1-1x1-0-NCHW-FP32-F",
            &[1, 8, 4, 16, 1, 4, 1, 4],
        ),
        (
            "ConvHipImplicitGemmV4R4Fwd",
            "64-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-F",
            &[256, 128, 128, 8, 4, 4],
        ),
        (
            "ConvOclBwdWrW2<1>",
            "64-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-W",
            &[1, 1, 2, 1, 2],
        ),
    ];
    for (name, key, config) in cases {
        let s = tunable(name);
        let p = problem(key);
        for i in 0..config.len() {
            let mut other = config.to_vec();
            other[i] += 1;
            assert_ne!(
                s.canonical(&t, &p, config),
                s.canonical(&t, &p, &other),
                "{name} field {i}"
            );
        }
    }
}
