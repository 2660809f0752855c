//! The GTC NHWC solvers (`ConvAsmImplicitGemmGTCDynamic{Fwd,Bwd,Wrw}XdlopsNHWC`) against
//! `../shared/miopen/solvers/GTC_NHWC_COMMON.md` and the three solver write-ups: the catalogues,
//! hand-derived rule cases, every tuned row of gfx942130.db, the static default against the
//! write-ups' counts, and bad input.

#[allow(unused_imports)]
use crate::common;

use tuneinfer::data::dataset::{build, read_rows};
use tuneinfer::problem::{ConvProblem, Direction, Layout, Precision};
use tuneinfer::solvers::gtc_nhwc::catalogue::{self, Catalogue};
use tuneinfer::solvers::gtc_nhwc::rules::{self, Dims};
use tuneinfer::solvers::gtc_nhwc::{GtcRules, GtcSolver, BWD, FWD, WRW};
use tuneinfer::solvers::{IntRules, Target, Tunable};

fn solvers() -> [&'static GtcSolver; 3] {
    [&FWD, &BWD, &WRW]
}

fn gfx942() -> Target {
    Target::new("gfx942130")
}

fn cat(d: Direction) -> std::sync::Arc<Catalogue> {
    common::miopen_dir();
    catalogue::load(d).unwrap_or_else(|e| panic!("{e}"))
}

/// A problem from a perf-db key.
fn key(k: &str) -> ConvProblem {
    ConvProblem::from_perfdb_key(k).unwrap_or_else(|e| panic!("{k}: {e}"))
}

#[test]
fn catalogues_have_the_write_ups_sizes_and_identities() {
    for (d, total, per) in [
        (Direction::Forward, 259, [73, 110, 76]),
        (Direction::BackwardData, 329, [94, 141, 94]),
        (Direction::BackwardWeights, 244, [60, 92, 92]),
    ] {
        let c = cat(d);
        assert_eq!(c.entries.len(), total, "{d:?}");
        for (p, n) in [Precision::Fp32, Precision::Fp16, Precision::Bf16].into_iter().zip(per) {
            assert_eq!(c.entries.iter().filter(|e| e.precision == p).count(), n, "{d:?} {p:?}");
        }
        // COMMON §2's identities (not checked by MIOpen; a transcription check of the reader).
        for e in &c.entries {
            let prod = |v: [i64; 4]| v.iter().product::<i64>();
            assert_eq!(prod(e.ca), prod(e.cb), "{d:?} {}", e.index);
            assert_eq!(prod(e.ta) * prod(e.ca), e.mpb * e.kpb, "{d:?} {}", e.index);
            assert_eq!(prod(e.tb) * prod(e.cb), e.npb * e.kpb, "{d:?} {}", e.index);
        }
        // The catalogue's own params text reads back as its entry.
        for e in &c.entries {
            assert_eq!(
                c.lookup(&e.params_text(i64::from(e.can_split))),
                Ok((e.index, i64::from(e.can_split)))
            );
        }
    }
}

#[test]
fn helpers_hand_derived() {
    // igemm_split_batch_size: 1 when n * image <= 0xffffffff; 0 when one image is 4 GiB.
    // image = 64*224*224*4 = 12,845,056 bytes; max_n = 334 < 256? no: 334 > 256 -> 1 split.
    assert_eq!(rules::split_batch_size(224, 224, 224, 224, 256, 64, 64, 4), 1);
    // image = 1024*224*224*4 = 205,520,896; max_n = 20 < 256: m = 12, 256 % 12 != 0, m = 13..16,
    // 256 % 16 == 0 -> max_n = 16, 16 splits.
    assert_eq!(rules::split_batch_size(224, 224, 224, 224, 256, 1024, 1024, 4), 16);
    // One image of 2^32 bytes: not applicable.
    assert_eq!(rules::split_batch_size(1 << 15, 1 << 15, 1, 1, 1, 1, 1, 4), 0);
    // ComputeMatrixPadSize(10, 4, 6, 4): ce = 2, re = 2: 2*6 + 2*10 + 4 = 36.
    assert_eq!(rules::pad_size(10, 4, 6, 4), 36);
    // ComputeLog2GemmKGlobalSplitsWith2DMerge: grid 100 doubles up to 1200 at gs = 3 (800),
    // d0 = 64 halves stay multiples of kpb 8 down to 8 (gs = 3): 3.
    assert_eq!(rules::log2_splits(100, 1200, 64, 1, 8, 8), 3);
    // d0 = 24: 24 % 8 != 0 at gs = 3, (24 >> 2) = 6 % 8 != 0 at gs = 2; gs = 1: 12 % 8 != 0: 0.
    assert_eq!(rules::log2_splits(100, 1200, 24, 1, 8, 8), 0);
}

#[test]
fn occupancy_hand_derived() {
    // wrw entry 0 (fp32 256x128x16, ca = 1x16x1x16, ta = 1x1x1x16, tb = 1x1x1x8, nxe 0):
    // acc = 256*128/256 = 128; lds = 2*max(4*256*16, 4*128*16) = 32768; vgpr = 16 + 8 + 16 + 8 + 36 = 84;
    // occupancy = min(65536/32768, 256/128, 256/84) = 2.
    let c = cat(Direction::BackwardWeights);
    let e = c
        .entries
        .iter()
        .find(|e| {
            e.precision == Precision::Fp32
                && (e.mpb, e.npb, e.kpb) == (256, 128, 16)
                && e.nxe == 0
                && e.ta == [1, 1, 1, 16]
        })
        .expect("the largest fp32 wrw tile is in the catalogue");
    assert_eq!(e.tb, [1, 1, 1, 8]);
    assert_eq!(rules::occupancy(e), 2);
}

#[test]
fn wrw_split_values_that_launch_the_same_kernel_are_one_answer() {
    // wrw entry 1 (fp32 256x128x16, nxe 0, tb[3] = 8, can split) on K = 256, C = 128, 1x1,
    // dy 14x14, N = 32 (gfx942130, 304 CUs). By hand: c_padded = 128, gemm_n = 128, grid =
    // ceil(256/256) * ceil(128/128) = 1; gemmk = 32 * 14 * 14 = 6272, nb_per_block = kpb = 16.
    // gks 1: s = 304, per_wg = ceil(6272/304) = 21 -> 32, s = 196. gks 2: s = 608, per_wg = 11
    // -> 16, s = 392; gks 3..10: per_wg rounds up to 16 as well: 392.
    let p = key("256-14-14-1x1-128-14-14-32-0x0-1x1-1x1-0-NCHW-FP32-W");
    let c = cat(Direction::BackwardWeights);
    let e = &c.entries[1];
    assert!(e.can_split && (e.mpb, e.npb, e.kpb, e.nxe, e.tb[3]) == (256, 128, 16, 0, 8));
    let d = Dims::new(&p);
    let splits: Vec<i128> = (1..=10).map(|g| rules::wrw_launched_splits(&d, e, g, 304)).collect();
    assert_eq!(splits, [196, 392, 392, 392, 392, 392, 392, 392, 392, 392]);
    let t = gfx942();
    assert_eq!(WRW.canonical(&t, &p, &[1, 1]), vec![1, 1]);
    for g in 2..=10 {
        assert_eq!(WRW.canonical(&t, &p, &[1, g]), vec![1, 2], "gks {g}");
    }
    // Entries that cannot split, and the other directions (their split is the kernel's argument).
    assert_eq!(WRW.canonical(&t, &p, &[0, 0]), vec![0, 0]);
    let f = key("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert_eq!(FWD.canonical(&t, &f, &[2, 5]), vec![2, 5]);
}

/// The first entry of `d`'s catalogue matching `pred`.
fn entry(d: Direction, pred: impl Fn(&catalogue::Entry) -> bool) -> catalogue::Entry {
    cat(d).entries.iter().find(|e| pred(e)).cloned().expect("such an entry")
}

#[test]
fn each_rule_hand_derived() {
    use Direction::*;
    // fwd, fp32, 3x3 pad 1: C = 64, K = 64, 56x56, N = 32.
    let p = key("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F");
    let d = Dims::new(&p);
    assert!(!d.unit_conv);
    // F9: an nxe = 0 entry (unit convolutions only) is invalid for a 3x3 filter.
    let nxe0 = entry(Forward, |e| e.precision == Precision::Fp32 && e.nxe == 0);
    assert!(!rules::is_valid(&d, &nxe0, 0, false));
    // F1: an fp16 entry for an fp32 problem.
    let fp16 = entry(Forward, |e| {
        e.precision == Precision::Fp16 && e.nxe == 1 && !e.can_split
    });
    assert!(!rules::is_valid(&d, &fp16, 0, false));
    // F6: a non-pad-c entry with kpb = 16 needs C / 2^gks divisible by 16: C = 64 with gks 2
    // (16) passes, gks 3 (8) fails.
    let split = entry(Forward, |e| {
        e.precision == Precision::Fp32 && e.nxe == 1 && e.can_split && !e.pad_c() && e.kpb == 16
    });
    assert!(rules::is_valid(&d, &split, 2, true));
    assert!(!rules::is_valid(&d, &split, 3, true));
    // ... and C = 24 (not a multiple of 16) fails at gks 0 while a pad-c entry accepts it.
    let p24 = key("24-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F");
    let d24 = Dims::new(&p24);
    let plain = entry(Forward, |e| {
        e.precision == Precision::Fp32 && e.nxe == 1 && !e.can_split && !e.pad_c() && e.kpb == 16
    });
    assert!(!rules::is_valid(&d24, &plain, 0, true));
    let padc = entry(Forward, |e| e.precision == Precision::Fp32 && e.pad_c() && !e.can_split);
    assert!(rules::is_valid(&d24, &padc, 0, true));
    // F10 (spare set only): a unit convolution and a general (nxe != 0) non-pad-c entry.
    let unit = key("64-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F");
    let du = Dims::new(&unit);
    assert!(du.unit_conv);
    assert!(rules::is_valid(&du, &plain, 0, false));
    assert!(!rules::is_valid(&du, &plain, 0, true));
    // F7: fp16, gks 0, K = 36: gcd(npb, 8) = 8 does not divide 36 (non-pad-c entry).
    let h = key("64-56-56-3x3-36-56-56-32-1x1-1x1-1x1-0-NCHW-FP16-F");
    let dh = Dims::new(&h);
    let e16 = entry(Forward, |e| {
        e.precision == Precision::Fp16 && e.nxe == 1 && !e.can_split && !e.pad_c() && e.kpb <= 64 && e.vector_store == 0
    });
    assert!(!rules::is_valid(&dh, &e16, 0, true));
    let h40 = key("64-56-56-3x3-40-56-56-32-1x1-1x1-1x1-0-NCHW-FP16-F");
    assert!(rules::is_valid(&Dims::new(&h40), &e16, 0, true) || 64 % e16.kpb != 0);

    // bwd B5: gks != 0 needs kpb << gks <= K: K = 64, kpb 16: gks 2 (64) passes, 3 (128) fails.
    let b = key("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-B");
    let db = Dims::new(&b);
    let bs = entry(BackwardData, |e| {
        e.precision == Precision::Fp32 && e.nxe == 1 && e.can_split && e.kpb == 16 && !(e.ta[1] == 1 && e.merge_e == 1)
    });
    assert!(rules::is_valid(&db, &bs, 2, true));
    assert!(!rules::is_valid(&db, &bs, 3, true));

    // wrw W4: fp16 needs C % tb[3] == 0 and K % ta[3] == 0: C = 3 fails every entry with tb[3] > 1.
    let w = key("64-56-56-3x3-3-112-112-32-1x1-2x2-1x1-0-NCHW-FP16-W");
    let dw = Dims::new(&w);
    let wv = entry(BackwardWeights, |e| {
        e.precision == Precision::Fp16 && e.nxe == 1 && e.tb[3] > 1
    });
    assert!(!rules::is_valid(&dw, &wv, i64::from(wv.can_split), true));
    // W5 (spare): unit convolution with an nxe = 1 entry.
    let wu = key("64-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-W");
    let w1 = entry(BackwardWeights, |e| e.precision == Precision::Fp32 && e.nxe == 1);
    assert!(rules::is_valid(&Dims::new(&wu), &w1, i64::from(w1.can_split), false));
    assert!(!rules::is_valid(&Dims::new(&wu), &w1, i64::from(w1.can_split), true));
}

#[test]
fn rules_prefixes_and_look_ahead() {
    let p = key("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F");
    let c = cat(Direction::Forward);
    let r = GtcRules::new(Direction::Forward, Some(&c), &p);
    assert!(r.pairs() > 0);
    let d = Dims::new(&p);
    for e in &c.entries {
        let any = rules::gks_domain(Direction::Forward, e).any(|g| rules::is_valid(&d, e, g, true));
        assert_eq!(r.prefix_valid(&[e.index as i64]), any, "entry {}", e.index);
        for g in -1..=11 {
            let want = rules::gks_domain(Direction::Forward, e).contains(&g) && rules::is_valid(&d, e, g, true);
            assert_eq!(r.prefix_valid(&[e.index as i64, g]), want, "entry {} gks {g}", e.index);
        }
    }
    assert!(!r.prefix_valid(&[999]) && !r.prefix_valid(&[0, 0, 0]));
    let domain: Vec<i64> = (0..=300).collect();
    assert!(r.completable(&[], &domain));
    // A domain without any split value the valid entries take: nothing completes.
    let valid_entry = c
        .entries
        .iter()
        .find(|e| r.prefix_valid(&[e.index as i64]))
        .unwrap()
        .index as i64;
    assert!(r.completable(&[valid_entry], &domain));
    assert!(!r.completable(&[valid_entry], &[1000]));
}

/// Rows of one GTC solver in gfx942130.db.
fn tuned_rows(s: &GtcSolver) -> tuneinfer::data::perfdb::SolverRows {
    let (db, _) = common::perf_database("gfx942130.db");
    read_rows(&db, s.name).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_tuned_row_parses_maps_to_its_entry_and_passes_the_rules() {
    let target = gfx942();
    // (rows, FP32, FP16, rows with the `[gks]` suffix): the write-ups' verification sections.
    let expected = [
        (2264, 1203, 1061, 193),
        (2006, 1006, 1000, 91),
        (2063, 1034, 1029, 2019),
    ];
    for (s, (rows_n, fp32, fp16, suffixed)) in solvers().into_iter().zip(expected) {
        let rows = tuned_rows(s);
        assert!(rows.rejected.is_empty(), "{}: {:?}", s.name, rows.rejected.first());
        assert_eq!(rows.rows.len(), rows_n, "{}", s.name);
        let count = |p| rows.rows.iter().filter(|r| r.problem.precision == p).count();
        assert_eq!(
            (count(Precision::Fp32), count(Precision::Fp16)),
            (fp32, fp16),
            "{}",
            s.name
        );
        assert_eq!(
            rows.rows.iter().filter(|r| r.params.ends_with(']')).count(),
            suffixed,
            "{}",
            s.name
        );
        let c = cat(s.direction);
        for row in &rows.rows {
            let what = format!("{} {} {}", s.name, row.problem.to_perfdb_key(), row.params);
            let config = s.parse_params(&row.params).unwrap_or_else(|e| panic!("{what}: {e}"));
            // Field 36 is the entry's position; a suffix equals field 17.
            let fields: Vec<&str> = row.params.split(',').collect();
            let index: String = fields[36].chars().take_while(char::is_ascii_digit).collect();
            assert_eq!(index.parse::<i64>().unwrap(), config[0], "{what}");
            if let Some(suffix) = fields[36].strip_suffix(']') {
                let gks = suffix.split('[').nth(1).unwrap();
                assert_eq!(gks, fields[17], "{what}");
            }
            s.applicable(&target, &row.problem)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(s.rules(&target, &row.problem).is_valid(&config), "{what}");
            // MIOpen's Serialize form (what we write) is the row without the suffix.
            let plain = row.params.split('[').next().unwrap();
            assert_eq!(s.format_params(&config), plain, "{what}");
            // Stride > 1 backward rows: x's size is not stored; the largest x gives the same verdict.
            if !row.problem.direction.is_forward() && row.problem.stride_h > 1 {
                let mut q = row.problem.clone();
                q.in_h += q.stride_h - 1;
                q.in_w += q.stride_w - 1;
                assert!(s.rules(&target, &q).is_valid(&config), "{what} (largest x)");
            }
        }
        let ds = build(&rows, s, &target);
        assert_eq!(
            ds.report.used + ds.report.duplicates,
            rows_n,
            "{}: {}",
            s.name,
            ds.report.summary()
        );
        assert_eq!(
            (
                ds.report.malformed_params,
                ds.report.rule_violations,
                ds.report.not_applicable
            ),
            (0, 0, 0)
        );
        let _ = c;
    }
}

#[test]
fn static_default_matches_the_write_ups_replica_counts() {
    // The write-ups' Python replica of HeuristicInit, compared with the tuned rows: same entry and
    // gks in (FP32, FP16) rows; same entry, other gks in (FP32, FP16) rows. The replica gives the
    // entry HeuristicInit starts from (`rules::static_default`), before the default's
    // vector_store/split rewrite is mapped to the catalogue twin MIOpen's `operator==` equates.
    let target = gfx942();
    let cus = i128::from(tuneinfer::solvers::gtc_nhwc::compute_units(&target));
    let expected = [((188, 131), (49, 49)), ((77, 56), (17, 27)), ((1, 0), (3, 13))];
    for (s, (same, entry_only)) in solvers().into_iter().zip(expected) {
        let rows = tuned_rows(s);
        let c = cat(s.direction);
        let mut got_same = (0, 0);
        let mut got_entry = (0, 0);
        for row in &rows.rows {
            let tuned = s.parse_params(&row.params).unwrap();
            let dims = Dims::new(&row.problem);
            let (entry, gks, vs) = rules::static_default(&dims, &c, cus)
                .unwrap_or_else(|| panic!("{}: no default", row.problem.to_perfdb_key()));
            let raw = vec![entry as i64, gks];
            let e = &c.entries[entry];
            // The default is valid for the problem (non-spare IsValid), as the write-ups found.
            if s.direction != Direction::BackwardWeights {
                assert!(
                    rules::is_valid(&dims, e, gks, false),
                    "{} {:?}",
                    row.problem.to_perfdb_key(),
                    raw
                );
            }
            // What tuneinfer serves as the default: the raw entry, or where HeuristicInit
            // rewrote vector_store or set a split on a flag-0 entry, an entry whose catalogue
            // line differs from the raw one in exactly those two fields.
            let d = s.static_default(&target, &row.problem);
            assert_eq!(d.len(), 2, "{}", row.problem.to_perfdb_key());
            assert_eq!(d[1], gks, "{}", row.problem.to_perfdb_key());
            if vs == e.vector_store && (gks != 0) == e.can_split {
                assert_eq!(d, raw, "{}", row.problem.to_perfdb_key());
            } else if d != raw {
                let t = &c.entries[d[0] as usize];
                assert_eq!((t.vector_store, t.can_split), (vs, gks != 0));
                let differing: Vec<usize> = (0..e.text.len()).filter(|&i| e.text[i] != t.text[i]).collect();
                assert!(
                    differing.iter().all(|&i| i == 16 || i == catalogue::GKS_FIELD),
                    "{}: twin differs in fields {differing:?}",
                    row.problem.to_perfdb_key()
                );
            }
            let slot = |t: &mut (usize, usize)| {
                if row.problem.precision == Precision::Fp32 {
                    t.0 += 1
                } else {
                    t.1 += 1
                }
            };
            if raw == tuned {
                slot(&mut got_same);
            } else if raw[0] == tuned[0] {
                slot(&mut got_entry);
            }
        }
        assert_eq!((got_same, got_entry), (same, entry_only), "{}", s.name);
    }
}

#[test]
fn bad_input_names_the_reason() {
    let t = gfx942();
    let err = |s: &GtcSolver, k: &str| s.applicable(&t, &key(k)).unwrap_err().to_string();
    // bf16: applicable on gfx90a and gfx94x (MIOpen 3.5.1's databases tune it there), not on gfx908.
    let bf16 = key("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-BF16-F");
    for arch in ["gfx942", "gfx90a", "gfx90a68", "gfx942130"] {
        assert!(FWD.applicable(&Target::new(arch), &bf16).is_ok(), "{arch}");
    }
    for arch in ["gfx908", "gfx90878"] {
        let e = FWD.applicable(&Target::new(arch), &bf16).unwrap_err().to_string();
        assert!(
            e.contains("BF16 on gfx908") && e.contains("gfx90a and gfx94x only"),
            "{arch}: {e}"
        );
    }
    // Groups: not applicable at this commit.
    let e = err(&FWD, "64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F_g2");
    assert!(
        e.contains("group count 2") && e.contains("WORKAROUND_ISSUE_1979"),
        "{e}"
    );
    // Wrong direction, wrong arch.
    let e = err(&FWD, "64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-B");
    assert!(e.contains("direction"), "{e}");
    let e = FWD
        .applicable(
            &Target::new("gfx906"),
            &key("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F"),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("gfx906") && e.contains("gfx94x"), "{e}");
    // 4 GB: one image of 2^32 bytes and more (C = 1024, 1024x1024 fp32).
    let e = err(&FWD, "1024-1024-1024-1x1-64-1024-1024-1-0x0-1x1-1x1-0-NCHW-FP32-F");
    assert!(e.contains("4 GiB"), "{e}");
    // fwd's small-C dilation workaround.
    let e = err(&FWD, "3-224-224-3x3-64-222-222-16-1x1-1x1-2x2-0-NCHW-FP32-F");
    assert!(e.contains("WORKAROUND_ISSUE_2624"), "{e}");
    // NCHW and NHWC both apply (MIOpen transposes NCHW around the NHWC kernels).
    let mut p = key("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F");
    assert!(FWD.applicable(&t, &p).is_ok());
    p.layout = Layout::Nhwc;
    assert!(FWD.applicable(&t, &p).is_ok());
    // Params strings: wrong length, a field not in the catalogue, a bad index.
    for bad in [
        "1,2,3",
        "fwd,nhwc,fp32",
        &"0,".repeat(36),
        "fwd,nhwc,fp32,0,1,256,64,16,32,32,2,1,1,2,2,0,0,0,0,0,1,4,4,1,1,4,1,64,1,4,1,1,1,4,1,64,x",
    ] {
        let e = FWD.parse_params(bad).unwrap_err().to_string();
        assert!(e.contains("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC config"), "{e}");
    }
    // An entry with another precision's field values is no entry.
    let e = FWD
        .parse_params("fwd,nhwc,fp16,0,1,256,64,16,32,32,2,1,1,2,2,0,0,0,0,0,1,4,4,1,1,4,1,64,1,4,1,1,1,4,1,64,0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no entry"), "{e}");
    let _ = GtcRules::new(Direction::Forward, None, &p);
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("TUNEINFER_MODELS")
        .output()
        .expect("run tuneinfer");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn cli_predicts_37_field_answers_and_names_bad_input() {
    let _ = common::miopen_dir();
    let t = gfx942();
    for (s, k) in [
        (&FWD, "64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NHWC-FP16-F"),
        (&BWD, "64-28-28-3x3-128-56-56-8-1x1-2x2-1x1-0-NCHW-FP32-B"),
        (&WRW, "256-14-14-1x1-128-14-14-32-0x0-1x1-1x1-0-NCHW-FP32-W"),
    ] {
        for arch in ["gfx942", "gfx942130"] {
            let (rc, out, err) = cli(&["predict", "--arch", arch, "--solver", s.name, "--device", "cpu", k]);
            assert_eq!(rc, 0, "{} {arch}: {err}", s.name);
            let line = out.trim();
            assert_eq!(line.split(',').count(), 37, "{line}");
            assert!(!line.contains('['), "{line}");
            let config = s.parse_params(line).unwrap();
            assert!(s.rules(&t, &key(k)).is_valid(&config), "{line}");
            // An NCHW problem: a note that MIOpen transposes it.
            assert_eq!(err.contains("transpose"), k.contains("NCHW"), "{err}");
        }
    }
    // Bad input: exit 5, one line naming the reason.
    for (args, needle) in [
        (
            vec![
                "conv", "-n", "8", "-c", "64", "-H", "56", "-W", "56", "-k", "64", "-y", "3", "-x", "3", "-p", "1",
                "-q", "1", "-g", "2",
            ],
            "group count 2",
        ),
        (
            vec![
                "conv", "-n", "1", "-c", "1024", "-H", "1024", "-W", "1024", "-k", "64", "-y", "1", "-x", "1",
            ],
            "4 GiB",
        ),
    ] {
        let mut a = vec!["predict", "--arch", "gfx942", "--solver", FWD.name, "--device", "cpu"];
        a.extend(args);
        let (rc, _, err) = cli(&a);
        assert_eq!(rc, 5, "{err}");
        assert!(err.contains(needle) && err.lines().count() == 1, "{err}");
    }
}
