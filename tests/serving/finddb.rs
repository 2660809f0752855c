//! The find-db: both record forms, keys written as MIOpen writes them, the ranking on held-out
//! problems of ../shared/miopen/finddb, the user find-db writer (checked by a transcription of
//! MIOpen's reader), and `tuneinfer find`.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use tuneinfer::finddb::{self, eval, rules, Form, Params, Ranker, Record};
use tuneinfer::problem::ConvProblem;

fn finddb_file(name: &str) -> PathBuf {
    common::miopen_dir().join("finddb").join(name)
}

/// The records of a shared find-db, read once per test binary.
fn records(name: &str) -> Vec<Record> {
    static CACHE: std::sync::Mutex<Vec<(String, std::sync::Arc<Vec<Record>>)>> = std::sync::Mutex::new(Vec::new());
    let found = CACHE.lock().unwrap().iter().find(|(n, _)| n == name).map(|(_, r)| r.clone());
    let r = match found {
        Some(r) => r,
        None => {
            let r = std::sync::Arc::new(finddb::read_find_db(&finddb_file(name)).unwrap());
            CACHE.lock().unwrap().push((name.to_string(), r.clone()));
            r
        }
    };
    r.as_ref().clone()
}

/// The first `n` records of a shared find-db.
fn head(name: &str, n: usize) -> Vec<Record> {
    let mut r = records(name);
    r.truncate(n);
    r
}

const MI100: &str = "gfx90878.3.5.1.HIP.fdb.txt.bz2";

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tuneinfer-finddb-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---- A transcription of MIOpen's find-db reader (ROCm/MIOpen 2d1fd997a) -------------------
// `DbRecord::ParseContents` (src/db_record.cpp): items split on ';', ID before the first ':',
// a legacy item (an algorithm as its ID) transformed, a repeated ID ignored;
// `FindDbData::Deserialize` (serializable.hpp, SerDes<','>): `getline(',')` three times, each
// field read with `operator>>` (float, size_t, string); GetSolutions (convolutionocl.cpp:680)
// then resolves the algorithm with StringToConvolution{Fwd,BwdData,BwdWeights}Algo, which throws
// on an unknown name.

#[derive(Debug)]
struct MiopenItem {
    id: String,
    time: f32,
    workspace: u64,
    algorithm: String,
}

fn miopen_algorithms(direction: char) -> &'static [&'static str] {
    match direction {
        'F' => &["miopenConvolutionFwdAlgoGEMM", "miopenConvolutionFwdAlgoDirect", "miopenConvolutionFwdAlgoFFT",
                 "miopenConvolutionFwdAlgoWinograd", "miopenConvolutionFwdAlgoImplicitGEMM"],
        'B' => &["miopenConvolutionBwdDataAlgoGEMM", "miopenConvolutionBwdDataAlgoDirect", "miopenConvolutionBwdDataAlgoFFT",
                 "miopenConvolutionBwdDataAlgoWinograd", "miopenTransposeBwdDataAlgoGEMM",
                 "miopenConvolutionBwdDataAlgoImplicitGEMM"],
        _ => &["miopenConvolutionBwdWeightsAlgoGEMM", "miopenConvolutionBwdWeightsAlgoDirect",
               "miopenConvolutionBwdWeightsAlgoWinograd", "miopenConvolutionBwdWeightsAlgoImplicitGEMM"],
    }
}

/// MIOpen's reading of one line: the key and the items, or why MIOpen would not use it.
fn miopen_read_line(line: &str) -> Result<(String, Vec<MiopenItem>), String> {
    // PlainTextDb's FindRecord: the key is up to the first '='.
    let (key, contents) = line.split_once('=').ok_or("no '='")?;
    let mut items: Vec<MiopenItem> = Vec::new();
    for id_and_values in contents.split(';') {
        let (id, values) = id_and_values.split_once(':').ok_or_else(|| format!("ill-formed item '{id_and_values}'"))?;
        if items.iter().any(|i| i.id == id) {
            return Err(format!("duplicate ID {id}"));
        }
        let fields: Vec<&str> = values.split(',').collect();
        if fields.len() != 3 {
            return Err(format!("{id}: {} fields, FindDbData has 3", fields.len()));
        }
        // operator>> on float / size_t: a leading number; the whole field must be one here.
        let time: f32 = fields[0].parse().map_err(|_| format!("{id}: time '{}'", fields[0]))?;
        let workspace: u64 = fields[1].parse().map_err(|_| format!("{id}: workspace '{}'", fields[1]))?;
        items.push(MiopenItem {
            id: id.to_string(),
            time,
            workspace,
            algorithm: fields[2].to_string(),
        });
    }
    if items.is_empty() {
        return Err("no items".into());
    }
    Ok((key.to_string(), items))
}

#[test]
fn keys_of_the_shared_find_dbs_are_written_back_as_miopen_wrote_them() {
    for name in [MI100, "gfx906_60.3.5.1.HIP.fdb.txt.bz2"] {
        let records = records(name);
        let mut parsed = 0;
        for r in records.iter().step_by(11) {
            let Ok(p) = ConvProblem::from_perfdb_key(&r.key) else { continue };
            assert_eq!(finddb::key_of(&p), r.key, "{name}");
            parsed += 1;
        }
        assert!(parsed > 5000, "{name}: {parsed} keys parsed");
    }
}

#[test]
fn legacy_and_current_items_read_the_same_way() {
    // gfx906_60's file is in the legacy form, gfx90878's in the current one; both give entries
    // with a solver name as the ID and a direction's algorithm.
    for name in ["gfx906_60.3.5.1.HIP.fdb.txt.bz2", MI100] {
        let records = head(name, 3000);
        assert_eq!(records.len(), 3000);
        for r in &records {
            assert!(!r.entries.is_empty(), "{name}: {}", r.key);
            let dir = r.key.rsplit('-').next().unwrap().chars().next().unwrap();
            for e in &r.entries {
                assert!(!e.solver.starts_with("miopen"), "{name}: {}", r.key);
                assert!(miopen_algorithms(dir).contains(&e.algorithm.as_str()), "{name}: {} {}", r.key, e.algorithm);
            }
        }
    }
}

#[test]
fn the_ranking_beats_its_baselines_on_held_out_mi100_problems() {
    let records = records(MI100);
    let report = eval::evaluate("gfx908", records, Params::default(), finddb::Policy::default(), Some(400), false, None);
    let knn = report.overall["knn"];
    let dynamic = report.overall["dynamic"];
    assert!(knn.problems >= 390, "{}", knn.problems);
    // docs/finddb.md: 88.7% top-1, 1.016x on the whole held-out fifth; the dynamic-only choice 67.9%.
    assert!(knn.top1_share() > 0.80, "top-1 {}", knn.top1_share());
    assert!(knn.geomean() < 1.06, "geomean {}", knn.geomean());
    assert!(knn.unlisted_share() < 0.05, "unlisted {}", knn.unlisted_share());
    assert!(knn.geomean() < dynamic.geomean());
}

#[test]
fn a_held_out_problem_is_ranked_from_its_neighbours_never_from_its_own_record() {
    let records = records(MI100);
    let (train, test) = eval::split(records);
    let ranker = Ranker::new("gfx90878", train, Params::default());
    let mut ranked = 0;
    for (p, _) in test.iter().take(50) {
        assert!(!ranker.has_record(p));
        let r = ranker.rank(p).unwrap();
        for w in r.windows(2) {
            assert!(w[0].time_ms <= w[1].time_ms, "ordered by predicted time");
        }
        for x in &r {
            assert_eq!(x.source, finddb::Source::Neighbours);
            assert!(rules::debug_switch_refusal(&x.solver, "gfx908", p).is_none());
        }
        ranked += usize::from(!r.is_empty());
    }
    assert!(ranked >= 45);
}

/// Writes the user find-db of `problems` and checks every line with MIOpen's reader.
fn check_written(path: &Path, keys_before: &HashSet<String>) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let mut new = 0;
    for line in text.lines() {
        let (key, items) = miopen_read_line(line).unwrap_or_else(|e| panic!("MIOpen would not read '{line}': {e}"));
        if keys_before.contains(&key) {
            continue;
        }
        new += 1;
        let p = ConvProblem::from_perfdb_key(&key).unwrap();
        assert_eq!(finddb::key_of(&p), key);
        let dir = p.direction.as_char();
        let mut last = 0.0f32;
        for it in &items {
            assert!(miopen_algorithms(dir).contains(&it.algorithm.as_str()), "{line}");
            assert!(it.time >= last, "written fastest first: {line}");
            assert!(it.time > 0.0);
            last = it.time;
            let _ = it.workspace;
            assert!(!it.id.is_empty());
        }
    }
    new
}

#[test]
fn the_user_find_db_gets_records_only_for_problems_nobody_measured() {
    let records = records(MI100);
    let (train, test) = eval::split(records);
    let system_keys: HashSet<String> = train.iter().map(|r| r.key.clone()).collect();
    let ranker = Ranker::new("gfx90878", train.clone(), Params::default());
    // 20 held-out problems (the system lacks them) and 5 the system has.
    let mut problems: Vec<ConvProblem> = test.iter().take(20).map(|(p, _)| p.clone()).collect();
    let in_system: Vec<ConvProblem> = train.iter().filter_map(|r| ConvProblem::from_perfdb_key(&r.key).ok()).take(5).collect();
    problems.extend(in_system.iter().cloned());
    let plan = finddb::plan_records(&ranker, &system_keys, &problems, 4);
    assert_eq!(plan.in_system, 5);
    assert_eq!(plan.records.len() + plan.unranked + plan.class_refused + plan.find_is_better, 20);
    assert!(plan.records.len() >= 3, "{plan:?}");
    for r in &plan.records {
        assert!(!system_keys.contains(&r.key));
        assert!(r.entries.len() <= 4 && !r.entries.is_empty());
    }

    let dir = temp_dir("write");
    let path = finddb::user_find_db_path(&dir, "gfx90878", "HIP.3_5_1_0");
    assert_eq!(path.file_name().unwrap(), "gfx90878.HIP.3_5_1_0.ufdb.txt");
    // The user find-db already holds MIOpen's own measurement of the first problem, and a line
    // of another problem: both stay byte for byte.
    let measured = format!(
        "{}=ConvDirectNaiveConvFwd:0.5,0,{}\n",
        plan.records[0].key,
        "miopenConvolutionFwdAlgoDirect"
    );
    let other = "1-1-1-1x1-1-1-1-1-0x0-1x1-1x1-0-NCHW-FP32-F=GemmFwdRest:0.01,0,miopenConvolutionFwdAlgoGEMM\n";
    let before = format!("{measured}{other}");
    std::fs::write(&path, &before).unwrap();
    let keys_before: HashSet<String> = before.lines().map(|l| l.split_once('=').unwrap().0.to_string()).collect();
    let w = finddb::write_user_find_db(&path, &plan.records, Form::Miopen351, false).unwrap();
    assert_eq!(w.kept, 1, "the measured record is not replaced");
    assert_eq!(w.added, plan.records.len() - 1);
    let bak = w.backup.expect("a backup of the previous file");
    assert_eq!(std::fs::read_to_string(&bak).unwrap(), before);
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(&before), "existing lines kept in place");
    assert_eq!(check_written(&path, &keys_before), w.added);
    // A second run adds nothing and leaves the file as it is.
    let again = finddb::write_user_find_db(&path, &plan.records, Form::Miopen351, false).unwrap();
    assert_eq!((again.added, again.kept), (0, plan.records.len()));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
    let _ = std::fs::remove_dir_all(&dir);
}

fn tuneinfer(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer")).args(args).output().unwrap()
}

#[test]
fn find_prints_the_ranking_as_a_tsv_and_refuses_bad_input_clearly() {
    // A small find-db (every 25th of MI100's records), so that each run reads it quickly; the
    // directory form of --find-db picks `{GPU}.*fdb.txt` in it.
    let tmp = temp_dir("cli");
    let records: Vec<Record> = records(MI100).into_iter().step_by(25).collect();
    let text: String = records.iter().map(|r| format!("{}\n", finddb::record::serialize(&r.key, &r.entries, Form::Miopen2024))).collect();
    std::fs::write(tmp.join("gfx90878.HIP.fdb.txt"), text).unwrap();
    let dir = tmp.to_str().unwrap();
    // A key the file has and one it lacks (ranked from neighbours).
    let o = tuneinfer(&["find", "--arch", "gfx90878", "--find-db", dir, "--top", "3", &records[0].key,
                        "64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "problem\trank\tsolver\ttime_ms\tsource");
    assert!(lines[1].starts_with(&format!("{}\t1\t", records[0].key)) && lines[1].ends_with("\tfinddb"), "{out}");
    assert!(lines.iter().any(|l| l.starts_with("64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F\t1\t")));
    assert!(lines.len() <= 7);
    for l in &lines[1..] {
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(f.len(), 5);
        assert!(f[3].parse::<f64>().unwrap() > 0.0);
    }
    // Usage errors: exit 2 with a message, no panic.
    for bad in [
        vec!["find", "--arch", "gfx908", "--find-db", dir, "64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F"],
        vec!["find", "--arch", "gfx90878", "--find-db", dir, "--method", "best", "64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F"],
        vec!["find", "--arch", "gfx90878", "--find-db", dir],
    ] {
        let o = tuneinfer(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: "));
    }
    // A malformed problem: exit 1, the others still answered.
    let o = tuneinfer(&["find", "--arch", "gfx90878", "--find-db", dir, "not-a-key", "64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).lines().count() > 1);
    let _ = std::fs::remove_dir_all(&tmp);
    let o = tuneinfer(&["find", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("problem, rank, solver, time_ms, source"));
}

/// MIOpen's own gfx1030 record (`gfx1030_36.3.5.1.HIP.fdb.txt.bz2`, legacy form), verbatim.
const GFX1030_LINE: &str = "1008-14-14-1x1-192-14-14-1024-0x0-1x1-1x1-0-NCHW-FP16-F=miopenConvolutionFwdAlgoImplicitGEMM:ConvCkIgemmFwdV6r1DlopsNchw,3.93505,4096,miopenConvolutionFwdAlgoImplicitGEMM,<unused>;miopenConvolutionFwdAlgoWinograd:ConvBinWinogradRxSf3x2,4.95169,0,miopenConvolutionFwdAlgoWinograd,<unused>;miopenConvolutionFwdAlgoGEMM:GemmFwd1x1_0_1,5.45363,0,miopenConvolutionFwdAlgoGEMM,not used;miopenConvolutionFwdAlgoDirect:ConvDirectNaiveConvFwd,647.358,0,miopenConvolutionFwdAlgoDirect,not used";

#[test]
fn find_answers_a_recorded_problem_with_miopens_record_minus_the_debug_switched_solver() {
    // By hand from the line: MIOpen's default mode sorts the entries by time and skips
    // ConvCkIgemmFwdV6r1DlopsNchw (off unless MIOPEN_DEBUG_CONV_CK_IGEMM_FWD_V6R1_DLOPS_NCHW is
    // set, conv_ck_igemm_fwd_v6r1_dlops_nchw.cpp:92), though it is the fastest entry.
    let tmp = temp_dir("gfx1030");
    let db = tmp.join("gfx1030_36.HIP.fdb.txt");
    std::fs::write(&db, format!("{GFX1030_LINE}\n")).unwrap();
    let key = GFX1030_LINE.split_once('=').unwrap().0;
    let input = tmp.join("problems.txt");
    std::fs::write(&input, format!("{key}\nthis is not a problem\n")).unwrap();
    let out = tmp.join("out.tsv");
    let o = tuneinfer(&["find", "--arch", "gfx1030_36", "--find-db", db.to_str().unwrap(), "--input",
                        input.to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "the bad line fails: {}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("problems.txt:2: invalid problem"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!(
            "problem\trank\tsolver\ttime_ms\tsource\n\
             {key}\t1\tConvBinWinogradRxSf3x2\t4.95169\tfinddb\n\
             {key}\t2\tGemmFwd1x1_0_1\t5.45363\tfinddb\n\
             {key}\t3\tConvDirectNaiveConvFwd\t647.358\tfinddb\n"
        )
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn find_ranks_an_unrecorded_problem_from_hand_written_neighbours() {
    // One FP16 forward record: the k-NN has one neighbour, so its order is that record's and
    // each time scales with the FLOPs (N 16 -> 32: twice). Two FP32 records for the plain
    // nearest neighbour: the query (C 60) is closest to C 64 in log-geometry.
    let tmp = temp_dir("hand");
    let lines = "\
64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP16-F=GemmFwdRest:1,4096,miopenConvolutionFwdAlgoGEMM;ConvBinWinogradRxSf2x3g1:0.5,0,miopenConvolutionFwdAlgoWinograd
64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F=ConvOclDirectFwd:0.75,0,miopenConvolutionFwdAlgoDirect;GemmFwdRest:0.25,4096,miopenConvolutionFwdAlgoGEMM
512-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F=ConvOclDirectFwd:0.125,0,miopenConvolutionFwdAlgoDirect;GemmFwdRest:0.5,4096,miopenConvolutionFwdAlgoGEMM
";
    std::fs::write(tmp.join("gfx90878.HIP.fdb.txt"), lines).unwrap();
    let dir = tmp.to_str().unwrap();
    let fp16 = "64-28-28-3x3-64-28-28-32-1x1-1x1-1x1-0-NCHW-FP16-F";
    let o = tuneinfer(&["find", "--arch", "gfx90878", "--find-db", dir, fp16]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!(
            "problem\trank\tsolver\ttime_ms\tsource\n\
             {fp16}\t1\tConvBinWinogradRxSf2x3g1\t1\tknn\n\
             {fp16}\t2\tGemmFwdRest\t2\tknn\n"
        )
    );
    let fp32 = "60-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F";
    let o = tuneinfer(&["find", "--method", "nearest", "--arch", "gfx90878", "--find-db", dir, fp32, "--top", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("problem\trank\tsolver\ttime_ms\tsource\n{fp32}\t1\tGemmFwdRest\t0.25\tnearest\n")
    );
    // No record of the class (BF16): exit 1, said on stderr.
    let o = tuneinfer(&["find", "--arch", "gfx90878", "--find-db", dir, "64-28-28-3x3-64-28-28-32-1x1-1x1-1x1-0-NCHW-BF16-F"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no record of its direction"));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn find_method_tunanet_gives_miopens_fallback_order() {
    // TunaNet's gfx908 order for this problem is the numpy run's in tests/tunanet.rs
    // (tools/tunanet_check.py): ConvBinWinogradRxSf2x3g1, ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC,
    // GemmBwdRest, GemmBwd1x1_stride1, then Wrw, stride-2 and forward solvers. By hand from
    // MIOpen's rules on this NCHW FP32 3x3 backward-data problem: the 1x1 GEMMs and the other
    // directions do not apply; the "NHWC" GTC solver takes NCHW through transposes (MI100's
    // find-db lists it on 7,178 NCHW FP32 backward-data records). So the fallback keeps three,
    // at 10, 20 and 30 ms (convolutionocl.cpp:610-612).
    let models = common::miopen_dir().join("models");
    let line = "conv -n 64 -c 128 -k 128 -H 28 -W 28 -y 3 -x 3 -p 1 -q 1 -F 2";
    let mut args = vec!["find", "--arch", "gfx90878", "--method", "tunanet", "--models", models.to_str().unwrap()];
    args.extend(line.split(' '));
    let o = tuneinfer(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let key = "128-28-28-3x3-128-28-28-64-1x1-1x1-1x1-0-NCHW-FP32-B";
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!(
            "problem\trank\tsolver\ttime_ms\tsource\n\
             {key}\t1\tConvBinWinogradRxSf2x3g1\t10\ttunanet\n\
             {key}\t2\tConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC\t20\ttunanet\n\
             {key}\t3\tGemmBwdRest\t30\ttunanet\n"
        )
    );
    // A problem TunaNet does not take (gfx908's model: groups 1 only): exit 1 with MIOpen's reason.
    let o = tuneinfer(&["find", "--arch", "gfx90878", "--method", "tunanet", "--models", models.to_str().unwrap(),
                        "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F_g2"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("TunaNet"), "{}", String::from_utf8_lossy(&o.stderr));
    // No model there: exit 6.
    let empty = temp_dir("nomodel");
    let o = tuneinfer(&["find", "--arch", "gfx90878", "--method", "tunanet", "--models", empty.to_str().unwrap(),
                        "64-28-28-3x3-64-28-28-16-1x1-1x1-1x1-0-NCHW-FP32-F"]);
    let _ = std::fs::remove_dir_all(&empty);
    // The search goes on past --models (weights/, MIOpen's install); with no model anywhere: 6.
    if o.status.code() != Some(0) {
        assert_eq!(o.status.code(), Some(6), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn userdb_writes_the_user_find_db_keeping_every_existing_record() {
    // MIOpen's "system" find-db for gfx906_60: the training side of ../shared's file (the
    // held-out fifth is what MIOpen has no record of), in MIOPEN_SYSTEM_DB_PATH as MIOpen finds it.
    let tmp = temp_dir("userdb");
    let sys = tmp.join("sys");
    std::fs::create_dir_all(&sys).unwrap();
    let (train, test) = eval::split(records("gfx906_60.3.5.1.HIP.fdb.txt.bz2"));
    let text: String = train.iter().map(|r| format!("{}\n", finddb::record::serialize(&r.key, &r.entries, Form::Miopen351))).collect();
    std::fs::write(sys.join("gfx906_60.HIP.fdb.txt"), text).unwrap();
    // Problems: 12 held-out FP32 forward ones (MIOpen has no record), 2 the system has.
    let held: Vec<&str> = test
        .iter()
        .filter(|(_, r)| r.key.ends_with("-NCHW-FP32-F"))
        .map(|(_, r)| r.key.as_str())
        .take(12)
        .collect();
    let in_system: Vec<&str> = train.iter().map(|r| r.key.as_str()).filter(|k| k.ends_with("-NCHW-FP32-F")).take(2).collect();
    let input = tmp.join("net.txt");
    std::fs::write(&input, held.iter().chain(&in_system).map(|k| format!("{k}\n")).collect::<String>()).unwrap();
    // The user's find-db already has MIOpen's own measurement of the first held-out problem, and
    // a record of a problem not in the input: both stay byte for byte.
    let out = tmp.join("udb");
    std::fs::create_dir_all(&out).unwrap();
    let ufdb = out.join("gfx906_60.HIP.3_5_1_0.ufdb.txt");
    let before = format!(
        "{}=ConvDirectNaiveConvFwd:0.5,0,miopenConvolutionFwdAlgoDirect\n\
         1-1-1-1x1-1-1-1-1-0x0-1x1-1x1-0-NCHW-FP32-F=GemmFwdRest:0.01,0,miopenConvolutionFwdAlgoGEMM\n",
        held[0]
    );
    std::fs::write(&ufdb, &before).unwrap();
    let run = |extra: &[&str], dir: &Path| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
        cmd.args(["userdb", "--arch", "gfx906_60", "--device", "cpu", "--system-db", "none", "--miopen-version", "HIP.3_5_1_0"])
            .arg("--input")
            .arg(&input)
            .arg("--out")
            .arg(dir)
            .args(extra)
            .env("MIOPEN_SYSTEM_DB_PATH", &sys);
        cmd.output().unwrap()
    };
    let o = run(&[], &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    let line = stdout.lines().find(|l| l.starts_with("user find-db ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("kept 1 already there") && line.contains("2 problem(s) in the system find-db"), "{line}");
    let after = std::fs::read_to_string(&ufdb).unwrap();
    assert!(after.starts_with(&before), "existing lines kept in place:\n{after}");
    assert_eq!(std::fs::read_to_string(ufdb.with_extension("txt.bak")).unwrap(), before);
    let keys_before: HashSet<String> = before.lines().map(|l| l.split_once('=').unwrap().0.to_string()).collect();
    let added = check_written(&ufdb, &keys_before);
    assert!(added >= 1, "{line}");
    assert!(line.contains(&format!("added {added} record(s)")), "{line}");
    for k in &in_system {
        assert!(!after.lines().any(|l| l.starts_with(&format!("{k}="))), "a record MIOpen has: {k}");
    }
    assert_eq!(after.lines().filter(|l| l.starts_with(&format!("{}=", held[0]))).count(), 1);
    // Every record written puts a solver first that MIOpen's Find would not time.
    for l in after.lines().filter(|l| !keys_before.contains(l.split_once('=').unwrap().0)) {
        let first = l.split_once('=').unwrap().1.split(':').next().unwrap();
        assert!(!rules::is_dynamic(first), "{l}");
    }
    // A second run adds nothing; --no-find-db writes none; both options together: usage error.
    let o = run(&[], &out);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&ufdb).unwrap(), after);
    let other = tmp.join("udb2");
    let o = run(&["--no-find-db"], &other);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!other.join("gfx906_60.HIP.3_5_1_0.ufdb.txt").exists());
    assert!(!String::from_utf8_lossy(&o.stdout).contains("user find-db"));
    let o = run(&["--no-find-db", "--find-db", sys.to_str().unwrap()], &other);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn userdb_on_resnet50_writes_a_user_find_db_miopens_reader_takes_entry_by_entry() {
    // ResNet-50's convolutions (FP32 and FP16, all three directions) on gfx906_60 with MIOpen's
    // whole gfx906 find-db as the system one: a record only for the problems it lacks, each read
    // back by the transcription of MIOpen's reader above.
    let tmp = temp_dir("resnet50");
    let sys = tmp.join("sys");
    std::fs::create_dir_all(&sys).unwrap();
    let all = records("gfx906_60.3.5.1.HIP.fdb.txt.bz2");
    let system_keys: HashSet<String> = all.iter().map(|r| r.key.clone()).collect();
    let text: String = all.iter().map(|r| format!("{}\n", finddb::record::serialize(&r.key, &r.entries, Form::Miopen351))).collect();
    std::fs::write(sys.join("gfx906_60.HIP.fdb.txt"), text).unwrap();
    let workload = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/workloads/resnet50_nchw.txt");
    let out = tmp.join("udb");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuneinfer"))
        .args(["userdb", "--arch", "gfx906_60", "--device", "cpu", "--system-db", "none", "--miopen-version", "HIP.3_5_1_0"])
        .arg("--input")
        .arg(&workload)
        .arg("--out")
        .arg(&out)
        .env("MIOPEN_SYSTEM_DB_PATH", &sys)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    let ufdb = out.join("gfx906_60.HIP.3_5_1_0.ufdb.txt");
    let added = check_written(&ufdb, &HashSet::new());
    assert!(added >= 5, "{stdout}");
    let text = std::fs::read_to_string(&ufdb).unwrap();
    for line in text.lines() {
        let key = line.split_once('=').unwrap().0;
        assert!(!system_keys.contains(key), "a record the system find-db has: {line}");
        // At most four entries, none MIOpen refuses without a debug switch.
        let (_, items) = miopen_read_line(line).unwrap();
        assert!(items.len() <= 4, "{line}");
        let p = ConvProblem::from_perfdb_key(key).unwrap();
        for it in &items {
            assert!(rules::debug_switch_refusal(&it.id, "gfx906", &p).is_none(), "{line}");
        }
    }
    let summary = stdout.lines().find(|l| l.starts_with("user find-db ")).unwrap();
    assert!(summary.contains(&format!("added {added} record(s)")), "{summary}");
    let _ = std::fs::remove_dir_all(&tmp);
}
