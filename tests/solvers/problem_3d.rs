//! 3-D problems end to end: MIOpen's 3-D keys (the 24-field key of its text and sqlite
//! databases, the dash key of `ProblemDescription::Serialize`) and MIOpenDriver's 3-D command
//! lines (`--spatial_dim 3` and the depth flags, as `ConvArgsForMIOpenDriver` logs them), parsed
//! into one problem and written back in MIOpen's own form; every solver tuneinfer implements for
//! 2-D problems only refuses them with a reason (the ones that take 3-D problems: [`takes_3d`]).
//!
//! The goldens come from outside the code under test: every 3-D key MIOpen wrote into the shared
//! databases (counted with `bzcat FILE | grep -c '^3x'`), and the dash keys and driver lines
//! this file builds from each key's 24 fields by MIOpen's own recipes (read in MIOpen 3.5.1's
//! `src/conv/problem_description.cpp`, `src/driver_arguments.cpp`), with its own output-size
//! arithmetic.

#[allow(unused_imports)]
use crate::common;

use std::collections::BTreeMap;

use tuneinfer::data::textdb;
use tuneinfer::problem::{parse_line, ConvProblem, Depth, Direction, InputLine, Layout, PerfDbConfigRow, Precision};
use tuneinfer::solvers::{self, Target};
use tuneinfer::Error;

/// The shared text databases with 3-D keys: how many (`bzcat FILE | grep -c '^3x'`), and how
/// many of them are forward problems whose output would be empty in some dimension (input + 2*pad
/// smaller than the dilated filter, e.g. H 2 with a 3x3 filter and no pad; counted with awk over
/// the 24 fields). MIOpen clamps such an output to 1 (`GetForwardOutputTensorWithLayout`);
/// tuneinfer refuses these keys, 3-D as 2-D ones (gfx942130.db.txt.bz2 has 65 such 2-D keys).
const TEXT_DBS: [(&str, usize, usize); 4] = [
    ("gfx90878.db.txt.bz2", 12_067, 0),
    ("gfx90a68.db.txt.bz2", 12_209, 0),
    ("gfx942130.db.txt.bz2", 56_584, 25),
    ("history/gfx942130.2024-12.db.txt.bz2", 34_871, 17),
];

/// Every 3-D key (the part before `=`) of a shared text database, in file order.
fn three_d_keys(db: &str) -> Vec<String> {
    let text = textdb::read_text(&common::perfdb_dir().join(db)).unwrap_or_else(|e| panic!("{e}"));
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k.to_string())
        .filter(|k| k.starts_with("3x"))
        .collect()
}

/// A 24-field key's fields, by MIOpen's column names.
struct Fields<'a> {
    v: BTreeMap<&'static str, u64>,
    layout: &'a str,
    data_type: &'a str,
    direction: &'a str,
}

const COLUMNS: [&str; 21] = [
    "spatial_dim",
    "in_channels",
    "in_h",
    "in_w",
    "in_d",
    "fil_h",
    "fil_w",
    "fil_d",
    "out_channels",
    "batchsize",
    "pad_h",
    "pad_w",
    "pad_d",
    "conv_stride_h",
    "conv_stride_w",
    "conv_stride_d",
    "dilation_h",
    "dilation_w",
    "dilation_d",
    "bias",
    "group_count",
];

fn fields(key: &str) -> Fields<'_> {
    let parts: Vec<&str> = key.split('x').collect();
    assert_eq!(parts.len(), 24, "{key}");
    Fields {
        v: COLUMNS
            .iter()
            .zip(&parts)
            .map(|(c, t)| (*c, t.parse().unwrap_or_else(|_| panic!("{key}: {c}"))))
            .collect(),
        layout: parts[21],
        data_type: parts[22],
        direction: parts[23],
    }
}

/// The forward output size of one dimension.
fn conv_out(x: u64, pad: u64, fil: u64, stride: u64, dil: u64) -> u64 {
    (x + 2 * pad - dil * (fil - 1) - 1) / stride + 1
}

/// The smallest forward input whose output is `y` (what a 24-field key of a backward problem
/// stands for: its x size is not stored).
fn smallest_x(y: u64, pad: u64, fil: u64, stride: u64, dil: u64) -> u64 {
    let x = ((y - 1) * stride + dil * (fil - 1) + 1).saturating_sub(2 * pad).max(1);
    assert_eq!(conv_out(x, pad, fil, stride, dil), y);
    x
}

/// One key's sizes in the forward convention: (x, y) per dimension (D, H, W), C and K.
struct Sizes {
    x: [u64; 3],
    y: [u64; 3],
    c: u64,
    k: u64,
}

fn sizes(f: &Fields) -> Sizes {
    let v = &f.v;
    let dims = [
        ("in_d", "fil_d", "pad_d", "conv_stride_d", "dilation_d"),
        ("in_h", "fil_h", "pad_h", "conv_stride_h", "dilation_h"),
        ("in_w", "fil_w", "pad_w", "conv_stride_w", "dilation_w"),
    ];
    let (mut x, mut y) = ([0; 3], [0; 3]);
    for (i, (size, fil, pad, stride, dil)) in dims.into_iter().enumerate() {
        let (s, fl, p, st, dl) = (v[size], v[fil], v[pad], v[stride], v[dil]);
        if f.direction == "F" {
            x[i] = s;
            y[i] = conv_out(s, p, fl, st, dl);
        } else {
            y[i] = s;
            x[i] = smallest_x(s, p, fl, st, dl);
        }
    }
    let (c, k) = if f.direction == "F" {
        (v["in_channels"], v["out_channels"])
    } else {
        (v["out_channels"], v["in_channels"])
    };
    Sizes { x, y, c, k }
}

/// MIOpen's dash key of a 3-D 24-field key (`ProblemDescription::Serialize`): in the direction
/// convention, depth first in every group, NCDHW once, any other layout three times.
fn miopen_dash_key(key: &str) -> String {
    let f = fields(key);
    let v = &f.v;
    let s = sizes(&f);
    let (din, dout) = if f.direction == "F" { (s.x, s.y) } else { (s.y, s.x) };
    let layout = if f.layout == "NCDHW" {
        f.layout.to_string()
    } else {
        format!("{0}-{0}-{0}", f.layout)
    };
    let groups = match v["group_count"] {
        1 => String::new(),
        g => format!("_g{g}"),
    };
    format!(
        "{}-{}-{}-{}-{}x{}x{}-{}-{}-{}-{}-{}-{}x{}x{}-{}x{}x{}-{}x{}x{}-{}-{layout}-{}-{}{groups}",
        v["in_channels"],
        din[0],
        din[1],
        din[2],
        v["fil_d"],
        v["fil_h"],
        v["fil_w"],
        v["out_channels"],
        dout[0],
        dout[1],
        dout[2],
        v["batchsize"],
        v["pad_d"],
        v["pad_h"],
        v["pad_w"],
        v["conv_stride_d"],
        v["conv_stride_h"],
        v["conv_stride_w"],
        v["dilation_d"],
        v["dilation_h"],
        v["dilation_w"],
        v["bias"],
        f.data_type,
        f.direction,
    )
}

/// The MIOpen log line of a 3-D 24-field key's problem (`ConvArgsForMIOpenDriver`: x's sizes,
/// `--in_d`/`--fil_d`/... long flags, `--spatial_dim 3`, a layout other than NCDHW named for the
/// three tensors).
fn miopen_log_line(key: &str) -> String {
    let f = fields(key);
    let v = &f.v;
    let s = sizes(&f);
    let command = match f.data_type {
        "FP32" => "conv",
        "FP16" => "convfp16",
        "BF16" => "convbfp16",
        other => panic!("{key}: data type {other}"),
    };
    let layouts = if f.layout == "NCDHW" {
        String::new()
    } else {
        format!(" --in_layout {0} --fil_layout {0} --out_layout {0}", f.layout)
    };
    let forw = match f.direction {
        "F" => 1,
        "B" => 2,
        _ => 4,
    };
    format!(
        "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver {command} -n {} -c {} --in_d {} -H {} -W {} -k {} \
         --fil_d {} -y {} -x {} --pad_d {} -p {} -q {} --conv_stride_d {} -u {} -v {} --dilation_d {} -l {} -j {} \
         --spatial_dim 3{layouts} -m conv -g {} -F {forw} -t 1",
        v["batchsize"],
        s.c,
        s.x[0],
        s.x[1],
        s.x[2],
        s.k,
        v["fil_d"],
        v["fil_h"],
        v["fil_w"],
        v["pad_d"],
        v["pad_h"],
        v["pad_w"],
        v["conv_stride_d"],
        v["conv_stride_h"],
        v["conv_stride_w"],
        v["dilation_d"],
        v["dilation_h"],
        v["dilation_w"],
        v["group_count"],
    )
}

fn one_problem(line: &str) -> ConvProblem {
    match parse_line(line) {
        Ok(InputLine::Problems(mut p)) if p.len() == 1 => p.remove(0),
        other => panic!("{line}: {other:?}"),
    }
}

fn reason(e: Error) -> String {
    match e {
        Error::InvalidProblem { reason, .. } | Error::NotApplicable { reason, .. } => reason,
        other => panic!("unexpected error kind: {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Every 3-D key of the shared databases

/// True for a forward key whose output would be empty in some dimension (this file's own
/// arithmetic, signed).
fn empty_output(key: &str) -> bool {
    let f = fields(key);
    let v = |c: &str| f.v[c] as i64;
    f.direction == "F"
        && ["d", "h", "w"].iter().any(|a| {
            v(&format!("in_{a}")) + 2 * v(&format!("pad_{a}"))
                < v(&format!("dilation_{a}")) * (v(&format!("fil_{a}")) - 1) + 1
        })
}

/// Every 3-D key of the shared text databases parses and is written back exactly; its MIOpen
/// dash key and its MIOpen log line give the same problem, and the dash key is written back
/// exactly; the driver line tuneinfer writes reads back to the problem. The keys whose output
/// would be empty are refused, saying so.
#[test]
fn every_3d_key_of_the_shared_databases_round_trips() {
    let mut total = 0;
    let mut depth_one = 0;
    let mut ndhwc = 0;
    for (db, want, want_empty) in TEXT_DBS {
        let keys = three_d_keys(db);
        assert_eq!(keys.len(), want, "{db}: 3-D keys");
        let (empty, keys): (Vec<&String>, Vec<&String>) = keys.iter().partition(|k| empty_output(k));
        assert_eq!(empty.len(), want_empty, "{db}: keys whose output would be empty");
        for key in empty {
            let why = reason(ConvProblem::from_db_key(key).unwrap_err());
            assert!(why.contains("would be empty"), "{key}: {why}");
        }
        let mut failures = Vec::new();
        for key in keys.iter().copied() {
            let p = match ConvProblem::from_db_key(key) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{key}: {e}"));
                    continue;
                }
            };
            if p.to_db_key() != *key {
                failures.push(format!("{key}: written back as {}", p.to_db_key()));
            }
            assert!(p.is_3d() && p.spatial_dims() == 3, "{key}");
            assert_eq!(p.layout_name(), fields(key).layout, "{key}");
            let dash = miopen_dash_key(key);
            match ConvProblem::from_perfdb_key(&dash) {
                Ok(q) if q == p && q.to_perfdb_key() == dash => {}
                other => failures.push(format!("{key}: dash key {dash}: {other:?}")),
            }
            let log = miopen_log_line(key);
            let q = one_problem(&log);
            if q != p {
                failures.push(format!("{key}: log line {log}: {q:?}"));
            }
            match ConvProblem::from_driver_line(&p.to_driver_line()) {
                Ok(q) if q == p => {}
                other => failures.push(format!("{key}: driver line {}: {other:?}", p.to_driver_line())),
            }
            // Also through the entry point a user's line takes.
            if ConvProblem::parse(key).ok().as_ref() != Some(&p) {
                failures.push(format!("{key}: ConvProblem::parse differs"));
            }
            depth_one += usize::from(p.depth.is_some_and(|d| d.in_d == 1 && d.out_d == 1));
            ndhwc += usize::from(p.layout == Layout::Nhwc);
        }
        assert!(
            failures.is_empty(),
            "{db}: {} of {} keys: {:#?}",
            failures.len(),
            keys.len(),
            &failures[..failures.len().min(5)]
        );
        total += keys.len();
    }
    assert_eq!(total, 115_731 - 42);
    // Many are 2-D problems in 3-D form (D = 1), and some NDHWC (only gfx942130's).
    assert!(depth_one > 50_000 && depth_one < total, "{depth_one}");
    assert!(ndhwc > 400, "{ndhwc}");
}

/// The 3-D rows of the shared sqlite databases: gfx1030_36's 33 `config` rows (NCDHW) read and
/// write back column for column; gfx900_56's 36 (no tuned values) are labelled with the 2-D
/// layout NCHW, which MIOpen 3.5.1 never writes for a 3-D problem: refused, saying so.
#[test]
fn the_3d_rows_of_the_sqlite_databases() {
    let read = |db: &str| -> Vec<PerfDbConfigRow> {
        let conn = rusqlite::Connection::open_with_flags(
            common::perfdb_dir().join(db),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT layout, data_type, direction, spatial_dim, in_channels, in_h, in_w, in_d, fil_h, fil_w, fil_d, \
                 out_channels, batchsize, pad_h, pad_w, pad_d, conv_stride_h, conv_stride_w, conv_stride_d, \
                 dilation_h, dilation_w, dilation_d, bias, group_count FROM config WHERE spatial_dim = 3",
            )
            .unwrap();
        stmt.query_map([], |r| {
            Ok(PerfDbConfigRow {
                layout: r.get(0)?,
                data_type: r.get(1)?,
                direction: r.get(2)?,
                spatial_dim: r.get(3)?,
                in_channels: r.get(4)?,
                in_h: r.get(5)?,
                in_w: r.get(6)?,
                in_d: r.get(7)?,
                fil_h: r.get(8)?,
                fil_w: r.get(9)?,
                fil_d: r.get(10)?,
                out_channels: r.get(11)?,
                batchsize: r.get(12)?,
                pad_h: r.get(13)?,
                pad_w: r.get(14)?,
                pad_d: r.get(15)?,
                conv_stride_h: r.get(16)?,
                conv_stride_w: r.get(17)?,
                conv_stride_d: r.get(18)?,
                dilation_h: r.get(19)?,
                dilation_w: r.get(20)?,
                dilation_d: r.get(21)?,
                bias: r.get(22)?,
                group_count: r.get(23)?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let rows = read("gfx1030_36.db");
    assert_eq!(rows.len(), 33);
    let strided = rows.iter().filter(|r| r.conv_stride_d == 2).count();
    assert!(strided > 0, "a depth stride of 2 among them");
    for row in &rows {
        let p = ConvProblem::from_perfdb_columns(row).unwrap_or_else(|e| panic!("{row:?}: {e}"));
        assert!(p.is_3d());
        assert_eq!(&p.to_perfdb_columns(), row);
        assert_eq!(ConvProblem::from_db_key(&row.to_db_key()).unwrap(), p);
    }
    let legacy = read("gfx900_56.db");
    assert_eq!(legacy.len(), 36);
    for row in &legacy {
        let why = reason(ConvProblem::from_perfdb_columns(row).unwrap_err());
        assert!(
            why.contains("column 'layout'") && why.contains("2-D layout 'NCHW' in a 3-D problem"),
            "{why}"
        );
    }
}

/// A 3-D key names the record MIOpen tuned: the problem of a driver line finds its tuned value in
/// MIOpen's text system database (the key written back is the one MIOpen looks up).
#[test]
fn a_3d_problem_finds_its_tuned_row_in_the_system_database() {
    let db = tuneinfer::userdb::system::SystemDb::open(&common::perfdb_dir().join("gfx942130.db.txt.bz2")).unwrap();
    let text = textdb::read_text(&common::perfdb_dir().join("gfx942130.db.txt.bz2")).unwrap();
    let mut found = 0;
    let three_d = |l: &&str| l.starts_with("3x") && !l.split_once('=').is_some_and(|(k, _)| empty_output(k));
    for line in text.lines().filter(three_d).step_by(500) {
        let (key, entries) = line.split_once('=').unwrap();
        let (solver, params) = entries.split(';').next().unwrap().split_once(':').unwrap();
        let p = one_problem(&miopen_log_line(key));
        assert_eq!(db.tuned_for(&p, solver).unwrap().as_deref(), Some(params), "{key}");
        // Its 2-D twin (the depth dropped) is another record.
        let mut flat = p.clone();
        flat.depth = None;
        assert_ne!(flat.to_db_key(), *key);
        found += 1;
    }
    assert!(found > 100, "{found}");
}

// ---------------------------------------------------------------------------------------------
// Hand-derived cases

/// A forward 3-D key of gfx942130.db.txt.bz2 (ConvHipImplicitGemm3DGroupFwdXdlops), read by
/// hand: spatial_dim 3, C 288, H 48, W 32, D 8, filter 1x1 (H, W) and depth 3, K 288, N 10,
/// pads 0 (H, W) and 1 (D), strides 1, dilations 1, no bias, 3 groups, NCDHW, BF16, F.
/// y's depth: (8 + 2*1 - 1*(3-1) - 1)/1 + 1 = 8.
#[test]
fn a_forward_key_by_hand() {
    let key = "3x288x48x32x8x1x1x3x288x10x0x0x1x1x1x1x1x1x1x0x3xNCDHWxBF16xF";
    let p = ConvProblem::from_db_key(key).unwrap();
    let want = ConvProblem {
        n: 10,
        c: 288,
        k: 288,
        in_h: 48,
        in_w: 32,
        out_h: 48,
        out_w: 32,
        filter_h: 1,
        filter_w: 1,
        pad_h: 0,
        pad_w: 0,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        groups: 3,
        bias: false,
        layout: Layout::Nchw,
        precision: Precision::Bf16,
        direction: Direction::Forward,
        depth: Some(Depth {
            in_d: 8,
            out_d: 8,
            filter_d: 3,
            pad_d: 1,
            stride_d: 1,
            dilation_d: 1,
        }),
    };
    assert_eq!(p, want);
    assert_eq!(p.to_db_key(), key);
    // MIOpen's Serialize: C-D-H-W, FdxFhxFw, K-D-H-W, N, PdxPhxPw, SdxShxSw, DdxDhxDw, bias,
    // NCDHW once, type, direction, `_g3`.
    let dash = "288-8-48-32-3x1x1-288-8-48-32-10-1x0x0-1x1x1-1x1x1-0-NCDHW-BF16-F_g3";
    assert_eq!(p.to_perfdb_key(), dash);
    assert_eq!(ConvProblem::from_perfdb_key(dash).unwrap(), p);
    assert_eq!((p.in_d(), p.out_d(), p.layout_name()), (Some(8), Some(8), "NCDHW"));
    // As MIOpen logs it.
    let log = "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 -n 10 -c 288 --in_d 8 -H 48 \
               -W 32 -k 288 --fil_d 3 -y 1 -x 1 --pad_d 1 -p 0 -q 0 --conv_stride_d 1 -u 1 -v 1 --dilation_d 1 -l 1 \
               -j 1 --spatial_dim 3 -m conv -g 3 -F 1 -t 1";
    assert_eq!(one_problem(log), p);
}

/// A backward-weights NDHWC problem with a depth stride: x depth 9, filter 3, stride 2, pad 0:
/// dy depth (9 - 3)/2 + 1 = 4; the 24-field key carries dy's size (in_d 4), its dash key both,
/// in the direction convention (dy first), NDHWC three times; groups as `_g4`.
#[test]
fn a_backward_weights_ndhwc_key_by_hand() {
    let line = "convbfp16 -n 4 -c 32 --in_d 9 -H 14 -W 14 -k 64 --fil_d 3 -y 1 -x 1 --pad_d 0 -p 0 -q 0 \
                --conv_stride_d 2 -u 1 -v 1 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 --in_layout NDHWC \
                --fil_layout NDHWC --out_layout NDHWC -m conv -g 4 -F 4 -t 1";
    let p = ConvProblem::parse(line).unwrap();
    assert_eq!(
        (p.c, p.k, p.groups, p.layout, p.direction),
        (32, 64, 4, Layout::Nhwc, Direction::BackwardWeights)
    );
    let d = p.depth.unwrap();
    assert_eq!((d.in_d, d.out_d, d.filter_d, d.pad_d, d.stride_d), (9, 4, 3, 0, 2));
    assert_eq!(
        p.to_db_key(),
        "3x64x14x14x4x1x1x3x32x4x0x0x0x1x1x2x1x1x1x0x4xNDHWCxBF16xW"
    );
    let dash = "64-4-14-14-3x1x1-32-9-14-14-4-0x0x0-2x1x1-1x1x1-0-NDHWC-NDHWC-NDHWC-BF16-W_g4";
    assert_eq!(p.to_perfdb_key(), dash);
    assert_eq!(ConvProblem::from_perfdb_key(dash).unwrap(), p);
    // The layout once parses too (tuneinfer's 2-D form).
    let once = dash.replace("NDHWC-NDHWC-NDHWC", "NDHWC");
    assert_eq!(ConvProblem::from_perfdb_key(&once).unwrap(), p);
    // The 24-field key has no x depth: the smallest x giving dy depth 4 with stride 2 is 9.
    assert_eq!(
        ConvProblem::from_db_key(&p.to_db_key()).unwrap(),
        p.as_stored_in_sqlite()
    );
    assert_eq!(p.as_stored_in_sqlite(), p);
    // x depth 10 gives dy depth 4 too: another dash key, the same 24-field record.
    let ten = ConvProblem::parse(&line.replace("--in_d 9", "--in_d 10")).unwrap();
    assert_ne!(ten, p);
    assert_eq!(ten.to_db_key(), p.to_db_key());
    assert_eq!(ten.as_stored_in_sqlite(), p);
    assert_eq!(ten.to_perfdb_key(), dash.replace("32-9-14-14", "32-10-14-14"));
}

/// A problem of depth 1 stays 3-D: MIOpen keys it `3x...x1x...xNCDHW`, another record than the
/// 2-D problem of the same H and W.
#[test]
fn depth_one_stays_3d() {
    let p = ConvProblem::parse("conv -n 8 -c 16 -H 7 -W 7 -k 32 -y 1 -x 1 --spatial_dim 3 --in_d 1 --fil_d 1 -F 1")
        .unwrap();
    assert!(p.is_3d());
    let d = p.depth.unwrap();
    assert_eq!(
        (d.in_d, d.out_d, d.filter_d, d.pad_d, d.stride_d, d.dilation_d),
        (1, 1, 1, 0, 1, 1)
    );
    assert_eq!(
        p.to_db_key(),
        "3x16x7x7x1x1x1x1x32x8x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF"
    );
    assert_eq!(
        p.to_perfdb_key(),
        "16-1-7-7-1x1x1-32-1-7-7-8-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F"
    );
    let flat = ConvProblem::parse("conv -n 8 -c 16 -H 7 -W 7 -k 32 -y 1 -x 1 -F 1").unwrap();
    assert!(!flat.is_3d());
    assert_ne!(flat, p);
    assert_eq!(
        flat.to_db_key(),
        "2x16x7x7x1x1x1x1x32x8x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP32xF"
    );
    assert_eq!(flat.to_perfdb_key(), "16-7-7-1x1-32-7-7-8-0x0-1x1-1x1-0-NCHW-FP32-F");
}

/// MIOpenDriver's short depth flags (`-!` in_d, `-@` fil_d, `-#` stride, `-$` pad, `-^`
/// dilation, `-_` spatial_dim, `-I`/`-f`/`-O` layouts) and its defaults (in_d 32, fil_d 3,
/// stride, dilation 1, pad 0; NCDHW).
#[test]
fn driver_short_flags_and_defaults() {
    let long = ConvProblem::parse(
        "convfp16 -n 2 -c 8 --in_d 6 -H 9 -W 9 -k 8 --fil_d 3 --conv_stride_d 2 --pad_d 1 --dilation_d 2 \
         --spatial_dim 3 --in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC -F 2",
    )
    .unwrap();
    let short = ConvProblem::parse(
        "convfp16 -n 2 -c 8 -! 6 -H 9 -W 9 -k 8 -@ 3 -# 2 -$ 1 -^ 2 -_ 3 -I NDHWC -f NDHWC -O NDHWC -F 2",
    )
    .unwrap();
    assert_eq!(long, short);
    // (6 + 2 - 2*2 - 1)/2 + 1 = 2.
    let d = short.depth.unwrap();
    assert_eq!(
        (d.in_d, d.out_d, d.filter_d, d.pad_d, d.stride_d, d.dilation_d),
        (6, 2, 3, 1, 2, 2)
    );
    assert_eq!(short.direction, Direction::BackwardData);
    let defaults = ConvProblem::parse("conv --spatial_dim 3").unwrap();
    let d = defaults.depth.unwrap();
    assert_eq!(
        (d.in_d, d.out_d, d.filter_d, d.pad_d, d.stride_d, d.dilation_d),
        (32, 30, 3, 0, 1, 1)
    );
    assert_eq!(defaults.layout_name(), "NCDHW");
    // -F 0: the three directions, all 3-D.
    match parse_line("MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv --spatial_dim 3 -F 0").unwrap() {
        InputLine::Problems(p) => {
            assert_eq!(p.len(), 3);
            assert!(p.iter().all(|p| p.is_3d()));
        }
        other => panic!("{other:?}"),
    }
}

/// `-m trans` in 3-D: the convolution MIOpen runs has x and y swapped in every dimension. x depth
/// 4, filter 3, stride 2, pad 1, output padding 1: the transposed y's depth is
/// 2*(4-1) + 1 + (3-1) + 1 - 2 = 8, which the ordinary convolution reads (as its backward data
/// for a transposed forward): (8 + 2 - 2 - 1)/2 + 1 = 4.
#[test]
fn transposed_3d() {
    let p = ConvProblem::parse(
        "conv -n 1 -c 16 --in_d 4 -H 5 -W 5 -k 8 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 --conv_stride_d 2 -u 1 -v 1 \
         --spatial_dim 3 -m trans -% 1 -F 1",
    )
    .unwrap();
    assert_eq!((p.c, p.k, p.direction), (8, 16, Direction::BackwardData));
    let d = p.depth.unwrap();
    assert_eq!((d.in_d, d.out_d), (8, 4));
    assert_eq!((p.in_h, p.out_h), (5, 5));
    let err = reason(ConvProblem::parse("conv --spatial_dim 3 --conv_stride_d 2 -m trans -% 2").unwrap_err());
    assert!(err.contains("-%") && err.contains("smaller"), "{err}");
}

/// What a 3-D line or key cannot be, each refused with its reason.
#[test]
fn malformed_3d_inputs_say_why() {
    let cases: [(&str, &str); 14] = [
        ("conv -n 2 --in_d 4", "needs --spatial_dim 3"),
        ("conv -n 2 -! 4", "needs --spatial_dim 3"),
        ("conv --spatial_dim 4", "expected 2 or 3"),
        (
            "conv --spatial_dim 3 --in_layout NHWC",
            "2-D layout 'NHWC' in a 3-D problem",
        ),
        ("conv --in_layout NDHWC", "3-D layout 'NDHWC' in a 2-D problem"),
        (
            "conv --spatial_dim 3 --in_layout NDHWC --out_layout NCDHW",
            "layout NCDHW differs from the input layout NDHWC",
        ),
        ("conv --spatial_dim 3 --in_d 2 --fil_d 3", "output depth would be empty"),
        ("conv --spatial_dim 3 --in_d 0", "a positive integer"),
        // A pad can make an output larger than MIOpen's C int sizes (2-D too: a fuzz find; the
        // key written from it could not be read back). 1e9 + 2*1184467440 - 3 + 1:
        (
            "conv --spatial_dim 3 --in_d 1000000000 --pad_d 1184467440",
            "output depth 3368934878 is out of range",
        ),
        (
            "conv -n 19 -c 256 -H 38 -W 38 -k 256 -y 3 -x 3 -p 1 -q 1709551616",
            "output width 3419103268 is out of range",
        ),
        (
            "16-1-7-7-1x1x1-32-1-7-7-8-0x0x0-1x1x1-1x1x1-0-NCHW-FP32-F",
            "2-D layout 'NCHW' in a 3-D problem",
        ),
        (
            "16-7-7-1x1-32-7-7-8-0x0-1x1-1x1-0-NCDHW-FP32-F",
            "3-D layout 'NCDHW' in a 2-D problem",
        ),
        (
            "16-1-7-7-1x1x1-32-2-7-7-8-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F",
            "field 'D_out': inconsistent output size 2",
        ),
        (
            "16-1-7-7-1x1x1-32-1-7-7-8-0x0-1x1x1-1x1x1-0-NCDHW-FP32-F",
            "field 'pad': expected 'PadDxPadHxPadW'",
        ),
    ];
    for (input, want) in cases {
        let why = reason(ConvProblem::parse(input).unwrap_err());
        assert!(why.contains(want), "{input}: {why}");
    }
    for key in [
        "3x16x7x7x1x1x1x0x32x8x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF",
        "3x16x7x7x1x1x1x1x32x8x0x0x0x1x1x0x1x1x1x0x1xNCDHWxFP32xF",
        "3x16x7x7x1x1x1x1x32x8x0x0x0x1x1x1x1x1x1x0x1xNCHWxFP32xF",
        "4x16x7x7x1x1x1x1x32x8x0x0x0x1x1x1x1x1x1x0x1xNCDHWxFP32xF",
    ] {
        assert!(ConvProblem::from_db_key(key).is_err(), "{key}");
    }
}

// ---------------------------------------------------------------------------------------------
// Every solver refuses 3-D problems

const ARCHES: [&str; 8] = [
    "gfx803",
    "gfx900",
    "gfx906",
    "gfx908",
    "gfx90a",
    "gfx942",
    "gfx1030",
    "gfx942130",
];

fn assert_refused(s: &dyn solvers::Solver, target: &Target, p: &ConvProblem) {
    let why = match s.check(target, p) {
        Err(Error::NotApplicable { reason, .. }) => reason,
        other => panic!("{} on {}: {p}: {other:?}", s.name(), target.arch),
    };
    assert!(
        why.contains("a 3-D problem") && why.contains("2-D problems only"),
        "{}: {why}",
        s.name()
    );
    if let Some(t) = s.tunable() {
        assert!(
            matches!(t.applicable(target, p), Err(Error::NotApplicable { reason, .. }) if reason == why),
            "{}",
            s.name()
        );
    }
}

/// The solvers that take 3-D problems (MIOpen 3.5.1's 3-D CK grouped solvers,
/// `tests/ck/ck_tunable.rs`; the non-xdlops HIP implicit-GEMM V4R4Fwd, V4R4WrW and BwdDataV1R1,
/// `tests/solvers/hip_igemm_3d.rs`); every other solver refuses them.
fn takes_3d(s: &dyn solvers::Solver) -> bool {
    s.name().starts_with("ConvHipImplicitGemm3DGroup")
        || matches!(
            s.name(),
            "ConvHipImplicitGemmV4R4Fwd" | "ConvHipImplicitGemmV4R4WrW" | "ConvHipImplicitGemmBwdDataV1R1"
        )
}

/// Every solver refuses the 3-D problems of the shared databases on every arch (a sample of
/// each database's keys, D = 1 among them), with the 3-D reason.
#[test]
fn every_solver_refuses_the_3d_keys() {
    let mut checked = 0;
    for (db, ..) in TEXT_DBS {
        for key in three_d_keys(db).iter().filter(|k| !empty_output(k)).step_by(997) {
            let p = ConvProblem::from_db_key(key).unwrap();
            for arch in ARCHES {
                let target = Target::new(arch);
                for s in solvers::all().into_iter().filter(|s| !takes_3d(*s)) {
                    assert_refused(s, &target, &p);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

/// The refusal is the depth's doing: for every solver, 2-D problems of its own tuned rows that
/// it applies to are refused once they become 3-D with depth 1 (everything else the same).
#[test]
fn every_solver_refuses_the_3d_twin_of_a_problem_it_takes() {
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut dbs: Vec<String> = ["gfx906_60.db", "gfx900_56.db", "gfx1030_36.db", "gfx942130.db"]
        .map(String::from)
        .to_vec();
    dbs.extend(TEXT_DBS[..3].iter().map(|(d, ..)| d.to_string()));
    let mut lacking = Vec::new();
    for s in solvers::all().into_iter().filter(|s| !takes_3d(*s)) {
        let mut twins = 0;
        for db in &dbs {
            let target = Target::new(db.split('.').next().unwrap());
            let rows = if db.ends_with(".bz2") {
                let text = texts
                    .entry(db.clone())
                    .or_insert_with(|| textdb::read_text(&common::perfdb_dir().join(db)).unwrap());
                textdb::solver_rows_from_text(text, s.name())
            } else {
                tuneinfer::data::perfdb::solver_rows(&common::perfdb_dir().join(db), s.name()).unwrap()
            };
            for row in rows.rows.iter().filter(|r| !r.problem.is_3d()).step_by(7) {
                if s.check(&target, &row.problem).is_err() {
                    continue;
                }
                let mut twin = row.problem.clone();
                twin.depth = Some(Depth {
                    in_d: 1,
                    out_d: 1,
                    filter_d: 1,
                    pad_d: 0,
                    stride_d: 1,
                    dilation_d: 1,
                });
                assert_refused(s, &target, &twin);
                twins += 1;
                if twins == 20 {
                    break;
                }
            }
            if twins == 20 {
                break;
            }
        }
        if twins == 0 {
            lacking.push(s.name());
        }
    }
    assert!(lacking.is_empty(), "no applicable 2-D row found for {lacking:?}");
}

/// The command line on a 3-D problem: `predict` says, per solver, that it takes 2-D problems
/// only (an error naming the reason, never a silent answer, never a panic).
#[test]
fn predict_on_a_3d_problem_says_why() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args([
            "predict",
            "--arch",
            "gfx908",
            "--solver",
            "ConvAsm1x1U",
            "--models",
            &common::models_dir().display().to_string(),
            "16-1-7-7-1x1x1-32-1-7-7-8-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F",
        ])
        .env_remove("TUNEINFER_MODELS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("3-D problem") && stderr.contains("2-D problems only"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
