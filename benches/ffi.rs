//! The C ABI's cost against the Rust API for single predictions (criterion). Names are
//! prefixed `ffi_`: `ffi_single/rust_*` is `ConvProblem::parse` + `Engine::predict_one`,
//! `ffi_single/c_*` is `tuneinfer_predict` + `tuneinfer_results_free` on the same text (the
//! exported functions called directly: the handle registry, the panic guard, the text and
//! result conversions; a call through the shared library's PLT adds nanoseconds).
//!
//! Run: `cargo bench --bench ffi`. Reads MIOpen's gfx908 model from `../shared/miopen` (or
//! `$TUNEINFER_MIOPEN_DATA`) and the project's gfx906 model from `weights/`. The Python
//! package's per-call cost: `tools/ffi_overhead.py` (the same problems and models).

use std::ffi::CString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{black_box, Criterion};
use tuneinfer::request::{self, Request};
use tuneinfer::ffi::*;
use tuneinfer::ConvProblem;

const KEY: &str = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F";

fn miopen_dir() -> PathBuf {
    std::env::var_os("TUNEINFER_MIOPEN_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/miopen"))
}

/// A predictor handle through `tuneinfer_open` (CPU).
fn open(arch: &str, models: Option<&str>) -> *mut tuneinfer_predictor {
    let arch_c = CString::new(arch).expect("arch");
    let models_c = models.map(|m| CString::new(m).expect("models"));
    let options = tuneinfer_options {
        arch: arch_c.as_ptr(),
        solver: std::ptr::null(),
        models: models_c.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
        device: c"cpu".as_ptr(),
        precision: std::ptr::null(),
        catalogue: std::ptr::null(),
        compute_units: 0,
        threads: 0,
        method: std::ptr::null(),
        system_db: std::ptr::null(),
    };
    let mut handle: *mut tuneinfer_predictor = std::ptr::null_mut();
    // SAFETY: valid options (strings alive for the call) and out pointer.
    assert_eq!(unsafe { tuneinfer_open(&options, &mut handle) }, TUNEINFER_OK);
    handle
}

/// One `tuneinfer_predict` of `key` (the default decoding) and its `tuneinfer_results_free`.
fn c_predict(handle: *mut tuneinfer_predictor, key: &CString) {
    let mut out: *mut tuneinfer_results = std::ptr::null_mut();
    // SAFETY: a live handle, a C string, NULL mode, a valid out pointer; the results are
    // read, then freed once.
    unsafe {
        assert_eq!(
            tuneinfer_predict(handle, black_box(key.as_ptr()), std::ptr::null(), &mut out),
            TUNEINFER_OK
        );
        black_box((*out).count);
        tuneinfer_results_free(out);
    }
}

fn bench_single(c: &mut Criterion) {
    let models = miopen_dir().join("models").display().to_string();
    let cases = [
        ("gfx908_miopen", "gfx908", Some(models.as_str())),
        ("gfx906_ours_auto", "gfx906", None),
    ];
    let mut group = c.benchmark_group("ffi_single");
    group.measurement_time(Duration::from_secs(8));
    for (name, arch, models) in cases {
        let opts = Request {
            arch: Some(arch),
            models,
            device: Some("cpu"),
            ..Request::default()
        };
        let engine = request::load(&opts).expect("model");
        let mode = engine.default_mode();
        group.bench_function(format!("rust_{name}"), |b| {
            b.iter(|| {
                let p = ConvProblem::parse(black_box(KEY)).expect("key");
                black_box(engine.predict_one(&p, mode).expect("prediction"))
            })
        });

        let handle = open(arch, models);
        let key = CString::new(KEY).expect("key");
        group.bench_function(format!("c_{name}"), |b| b.iter(|| c_predict(handle, &key)));
        assert_eq!(tuneinfer_predictor_free(handle), TUNEINFER_OK);
    }
    group.finish();
}

/// (median, minimum) of `rounds` alternating calls of `a` and of `b` (microseconds): on a
/// shared machine the alternation gives both the same background load, and the minimum is
/// the time with the least of it.
fn paired(rounds: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> ((f64, f64), (f64, f64)) {
    let (mut ta, mut tb) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for i in 0..rounds + rounds / 10 {
        // Which goes first alternates too: the second of a pair can find the caches (or the
        // scheduler) in another state.
        let time = |f: &mut dyn FnMut()| {
            let t = Instant::now();
            f();
            t.elapsed()
        };
        let (da, db) = if i % 2 == 0 {
            let da = time(&mut a);
            (da, time(&mut b))
        } else {
            let db = time(&mut b);
            (time(&mut a), db)
        };
        if i >= rounds / 10 {
            // The first tenth warms caches up.
            ta.push(da.as_secs_f64() * 1e6);
            tb.push(db.as_secs_f64() * 1e6);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0])
    };
    (median(&mut ta), median(&mut tb))
}

/// `ffi_paired`: the same two calls as `ffi_single`, alternated; prints medians and the ratio.
fn bench_paired() {
    if std::env::args().any(|a| a == "--list" || a.starts_with("--profile-time")) {
        return;
    }
    let models = miopen_dir().join("models").display().to_string();
    for (name, arch, models, rounds) in [
        ("gfx908_miopen", "gfx908", Some(models.as_str()), 4000),
        ("gfx906_ours_auto", "gfx906", None, 400),
    ] {
        let engine = request::load(&Request {
            arch: Some(arch),
            models,
            device: Some("cpu"),
            ..Request::default()
        })
        .expect("model");
        let mode = engine.default_mode();
        let handle = open(arch, models);
        let key = CString::new(KEY).expect("key");
        let (rust, c) = paired(
            rounds,
            || {
                let p = ConvProblem::parse(black_box(KEY)).expect("key");
                black_box(engine.predict_one(&p, mode).expect("prediction"));
            },
            || c_predict(handle, &key),
        );
        eprintln!(
            "ffi_paired/{name} ({rounds} alternating calls each): median rust {:.1} us, c {:.1} us, c/rust {:.4}; minimum rust {:.1} us, c {:.1} us, c/rust {:.4}",
            rust.0,
            c.0,
            c.0 / rust.0,
            rust.1,
            c.1,
            c.1 / rust.1
        );
        assert_eq!(tuneinfer_predictor_free(handle), TUNEINFER_OK);
    }
}

fn main() {
    bench_paired();
    bench_single(&mut Criterion::default().configure_from_args());
    Criterion::default().configure_from_args().final_summary();
}
