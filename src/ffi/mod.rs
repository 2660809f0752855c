//! The C ABI (`include/tuneinfer.h`, built as `libtuneinfer.so` / `libtuneinfer.a`): the same
//! answers as `tuneinfer predict` and `tuneinfer batch`, through [`Engine`].
//!
//! - Status codes are the CLI's exit codes ([`Error::exit_code`]) plus [`TUNEINFER_PARTIAL`]
//!   (a batch where some problems failed, `batch`'s exit 1), [`TUNEINFER_ERR_HANDLE`] and
//!   [`TUNEINFER_ERR_INTERNAL`] (a caught panic). The message of the last failure on the calling
//!   thread is `tuneinfer_last_error()`.
//! - No panic crosses the boundary: every entry point runs under `catch_unwind`.
//! - Predictor handles are ids in a registry, never dereferenced pointers: a NULL, freed or
//!   made-up handle is [`TUNEINFER_ERR_HANDLE`], not undefined behaviour. A handle may be used
//!   from any number of threads at once; freeing it while another thread predicts is safe (the
//!   prediction finishes on its own reference).
//! - Results are library-owned structs the caller reads directly; only live ones are freed
//!   (a double free is [`TUNEINFER_ERR_HANDLE`] as long as the address was not reused by a
//!   later result).
//!
//! The Rust types here mirror the header's; `tests/ffi_c.rs` compares their sizes and field
//! offsets with what the C compiler makes of the header.

#![allow(non_camel_case_types)]

#[cfg(feature = "python")]
pub mod python;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::engine::Engine;
use crate::error::Error;
use crate::predict::{DecodeMode, Prediction, Source};
use crate::problem::ConvProblem;
use crate::request::{self, Decode, Request};

/// `TUNEINFER_ABI_VERSION` of the header this library implements.
pub const ABI_VERSION: u32 = 2;

pub const TUNEINFER_OK: c_int = 0;
/// A batch in which some problems failed (each result has its own status).
pub const TUNEINFER_PARTIAL: c_int = 1;
pub const TUNEINFER_ERR_USAGE: c_int = 2;
pub const TUNEINFER_ERR_IO: c_int = 3;
pub const TUNEINFER_ERR_FORMAT: c_int = 4;
pub const TUNEINFER_ERR_PROBLEM: c_int = 5;
pub const TUNEINFER_ERR_MODEL_NOT_FOUND: c_int = 6;
pub const TUNEINFER_ERR_DATABASE: c_int = 7;
pub const TUNEINFER_ERR_VERIFY: c_int = 8;
pub const TUNEINFER_ERR_GPU: c_int = 9;
/// A NULL, freed or unknown predictor or results handle.
pub const TUNEINFER_ERR_HANDLE: c_int = 10;
/// A panic inside the library, caught at the boundary (a bug: please report it).
pub const TUNEINFER_ERR_INTERNAL: c_int = 11;

pub const TUNEINFER_DECODE_DEFAULT: i32 = 0;
pub const TUNEINFER_DECODE_GREEDY: i32 = 1;
pub const TUNEINFER_DECODE_BEAM: i32 = 2;

pub const TUNEINFER_SOURCE_MODEL: i32 = 0;
pub const TUNEINFER_SOURCE_DEFAULT: i32 = 1;
pub const TUNEINFER_SOURCE_NEIGHBOUR: i32 = 2;
pub const TUNEINFER_SOURCE_PERF_DB: i32 = 3;

pub const TUNEINFER_LAYOUT_NCHW: i32 = 0;
pub const TUNEINFER_LAYOUT_NHWC: i32 = 1;

pub const TUNEINFER_TYPE_FP32: i32 = 0;
pub const TUNEINFER_TYPE_FP16: i32 = 1;
pub const TUNEINFER_TYPE_BF16: i32 = 2;

/// Marks a live `tuneinfer_results` (checked besides the registry of live results).
const RESULTS_MAGIC: u64 = 0x7475_6e65_7265_7331; // "tuners1"

/// How to load a predictor; zero-initialised means the CLI's defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tuneinfer_options {
    pub arch: *const c_char,
    pub solver: *const c_char,
    pub models: *const c_char,
    pub device: *const c_char,
    pub precision: *const c_char,
    pub catalogue: *const c_char,
    pub compute_units: u32,
    pub threads: u32,
    /// `--method`: "best" (default), "model", "neighbour" or "default" (ABI 2).
    pub method: *const c_char,
    /// `--system-db`: NULL = MIOpen's installed one, as the CLI finds it; "none"; or a file (ABI 2).
    pub system_db: *const c_char,
}

/// How to decode; zero-initialised means the model's default (`--decode auto`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tuneinfer_decode {
    pub kind: i32,
    pub beam_width: u32,
    /// 0: all `beam_width` answers.
    pub top: u32,
}

/// One problem as MIOpenDriver's flags describe it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tuneinfer_problem {
    pub n: i64,
    pub c: i64,
    pub h: i64,
    pub w: i64,
    pub k: i64,
    pub y: i64,
    pub x: i64,
    pub pad_h: i64,
    pub pad_w: i64,
    pub stride_h: i64,
    pub stride_w: i64,
    pub dilation_h: i64,
    pub dilation_w: i64,
    pub groups: i64,
    pub bias: i32,
    pub layout: i32,
    pub data_type: i32,
    /// MIOpenDriver's `-F`: 1 forward, 2 backward data, 4 backward weights.
    pub direction: i32,
}

#[repr(C)]
#[derive(Debug)]
pub struct tuneinfer_prediction {
    pub config: *const c_char,
    pub score: f64,
    pub has_score: i32,
    pub source: i32,
}

#[repr(C)]
#[derive(Debug)]
pub struct tuneinfer_result {
    pub status: c_int,
    /// The failure's message (NULL when `status` is TUNEINFER_OK).
    pub message: *const c_char,
    pub count: usize,
    pub predictions: *const tuneinfer_prediction,
}

/// What a predict call returns. The header declares the first two fields only; the rest is
/// the library's.
#[repr(C)]
pub struct tuneinfer_results {
    pub count: usize,
    pub items: *const tuneinfer_result,
    magic: u64,
    /// The owned storage behind the pointers (a `Box<Store>`).
    store: *mut std::ffi::c_void,
}

/// The opaque predictor handle (a registry id, never dereferenced).
#[repr(C)]
pub struct tuneinfer_predictor {
    _private: [u8; 0],
}

/// The strings and arrays the pointers of a `tuneinfer_results` point into.
struct Store {
    _strings: Vec<CString>,
    _predictions: Vec<Vec<tuneinfer_prediction>>,
    _items: Vec<tuneinfer_result>,
}

/// A loaded predictor and the strings its accessors hand out.
struct Handle {
    engine: Engine,
    /// The CLI's answering path ([`crate::method::Answering`]): tuned values, then `--method`.
    answering: crate::method::Answering,
    solver: CString,
    device: CString,
    /// What `tuneinfer predict` prints on stderr after loading, if anything.
    note: Option<CString>,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
static PREDICTORS: RwLock<BTreeMap<usize, Arc<Handle>>> = RwLock::new(BTreeMap::new());
static LIVE_RESULTS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// A failed call: its status code and message.
struct Fail {
    code: c_int,
    message: String,
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail {
            code: e.exit_code(),
            message: e.to_string(),
        }
    }
}

fn usage(message: impl Into<String>) -> Fail {
    Fail {
        code: TUNEINFER_ERR_USAGE,
        message: message.into(),
    }
}

fn bad_handle(what: &str) -> Fail {
    Fail {
        code: TUNEINFER_ERR_HANDLE,
        message: format!("{what}: not a live handle (NULL, freed, or never returned by tuneinfer)"),
    }
}

/// A C string of `text` (a NUL inside becomes U+FFFD, so nothing is cut short).
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{fffd}")).unwrap_or_default()
}

fn set_error(message: &str) {
    LAST_ERROR.with(|e| *e.borrow_mut() = c_string(message));
}

/// Runs an entry point: clears the thread's last error, catches panics, records a failure.
fn guard(f: impl FnOnce() -> Result<c_int, Fail>) -> c_int {
    set_error("");
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err(fail)) => {
            set_error(&fail.message);
            fail.code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_error(&format!("internal error (caught panic): {what}"));
            TUNEINFER_ERR_INTERNAL
        }
    }
}

/// An optional UTF-8 argument (NULL is None).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn opt_str<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>, Fail> {
    if p.is_null() {
        return Ok(None);
    }
    CStr::from_ptr(p)
        .to_str()
        .map(Some)
        .map_err(|_| usage(format!("argument '{name}' is not UTF-8 text")))
}

/// A required UTF-8 argument.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn req_str<'a>(p: *const c_char, name: &str) -> Result<&'a str, Fail> {
    opt_str(p, name)?.ok_or_else(|| usage(format!("argument '{name}' is NULL")))
}

fn lookup(p: *const tuneinfer_predictor) -> Result<Arc<Handle>, Fail> {
    let map = PREDICTORS.read().unwrap_or_else(|e| e.into_inner());
    map.get(&(p as usize)).cloned().ok_or_else(|| bad_handle("predictor"))
}

/// The decode request of a `tuneinfer_decode` (NULL: the default).
///
/// # Safety
/// `mode` is NULL or points to a `tuneinfer_decode`.
unsafe fn decode_of(mode: *const tuneinfer_decode) -> Result<Decode, Fail> {
    let Some(m) = mode.as_ref() else {
        return Ok(Decode::Default);
    };
    match m.kind {
        TUNEINFER_DECODE_DEFAULT => Ok(Decode::Default),
        TUNEINFER_DECODE_GREEDY => Ok(Decode::Greedy),
        TUNEINFER_DECODE_BEAM => Ok(Decode::Beam {
            width: m.beam_width as usize,
            top: (m.top != 0).then_some(m.top as usize),
        }),
        other => Err(usage(format!(
            "decode kind {other}: expected TUNEINFER_DECODE_DEFAULT (0), _GREEDY (1) or _BEAM (2)"
        ))),
    }
}

/// A problem struct as the MIOpenDriver arguments it stands for, parsed (so every check and
/// message is the driver parser's).
pub fn problem_from_struct(p: &tuneinfer_problem) -> crate::error::Result<ConvProblem> {
    let command = match p.data_type {
        TUNEINFER_TYPE_FP32 => "conv",
        TUNEINFER_TYPE_FP16 => "convfp16",
        TUNEINFER_TYPE_BF16 => "convbfp16",
        other => {
            return Err(Error::InvalidProblem {
                input: format!("tuneinfer_problem{{data_type = {other}}}"),
                reason: "data_type: expected TUNEINFER_TYPE_FP32 (0), _FP16 (1) or _BF16 (2)".into(),
            })
        }
    };
    let layout = match p.layout {
        TUNEINFER_LAYOUT_NCHW => "NCHW",
        TUNEINFER_LAYOUT_NHWC => "NHWC",
        other => {
            return Err(Error::InvalidProblem {
                input: format!("tuneinfer_problem{{layout = {other}}}"),
                reason: "layout: expected TUNEINFER_LAYOUT_NCHW (0) or _NHWC (1)".into(),
            })
        }
    };
    let line = format!(
        "{command} -n {} -c {} -H {} -W {} -k {} -y {} -x {} -p {} -q {} -u {} -v {} -l {} -j {} -g {} -F {} -b {} --in_layout {layout}",
        p.n,
        p.c,
        p.h,
        p.w,
        p.k,
        p.y,
        p.x,
        p.pad_h,
        p.pad_w,
        p.stride_h,
        p.stride_w,
        p.dilation_h,
        p.dilation_w,
        p.groups,
        p.direction,
        p.bias,
    );
    ConvProblem::from_driver_line(&line)
}

/// Builds a library-owned `tuneinfer_results` and registers it as live.
fn make_results(outcomes: Vec<Result<Vec<Prediction>, Fail>>) -> *mut tuneinfer_results {
    let mut strings = Vec::new();
    let mut predictions: Vec<Vec<tuneinfer_prediction>> = Vec::with_capacity(outcomes.len());
    let mut items = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        match outcome {
            Ok(list) => {
                let row: Vec<tuneinfer_prediction> = list
                    .iter()
                    .map(|p| {
                        let config = c_string(&p.config);
                        let ptr = config.as_ptr();
                        strings.push(config);
                        tuneinfer_prediction {
                            config: ptr,
                            score: p.score.map(f64::from).unwrap_or(0.0),
                            has_score: i32::from(p.score.is_some()),
                            source: match p.source {
                                Source::Model => TUNEINFER_SOURCE_MODEL,
                                Source::Default => TUNEINFER_SOURCE_DEFAULT,
                                Source::Neighbour => TUNEINFER_SOURCE_NEIGHBOUR,
                                Source::PerfDb => TUNEINFER_SOURCE_PERF_DB,
                            },
                        }
                    })
                    .collect();
                items.push(tuneinfer_result {
                    status: TUNEINFER_OK,
                    message: std::ptr::null(),
                    count: row.len(),
                    predictions: if row.is_empty() { std::ptr::null() } else { row.as_ptr() },
                });
                // Moving the Vec into the store keeps its heap buffer (and the pointer) in place.
                predictions.push(row);
            }
            Err(fail) => {
                let message = c_string(&fail.message);
                items.push(tuneinfer_result {
                    status: fail.code,
                    message: message.as_ptr(),
                    count: 0,
                    predictions: std::ptr::null(),
                });
                strings.push(message);
            }
        }
    }
    let count = items.len();
    let items_ptr = if items.is_empty() {
        std::ptr::null()
    } else {
        items.as_ptr()
    };
    let store = Box::new(Store {
        _strings: strings,
        _predictions: predictions,
        _items: items,
    });
    let results = Box::into_raw(Box::new(tuneinfer_results {
        count,
        items: items_ptr,
        magic: RESULTS_MAGIC,
        store: Box::into_raw(store).cast(),
    }));
    LIVE_RESULTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(results as usize);
    results
}

/// Checks `out`, clears it, and returns it.
///
/// # Safety
/// `out` is NULL or points to writable storage for a pointer.
unsafe fn out_slot<'a>(out: *mut *mut tuneinfer_results) -> Result<&'a mut *mut tuneinfer_results, Fail> {
    let slot = out.as_mut().ok_or_else(|| usage("argument 'out' is NULL"))?;
    *slot = std::ptr::null_mut();
    Ok(slot)
}

/// Predicts already-parsed problems (a parse failure stays in its slot) and stores the results.
fn predict_parsed(
    handle: &Handle,
    parsed: Vec<Result<ConvProblem, Fail>>,
    decode: Decode,
    single: bool,
    slot: &mut *mut tuneinfer_results,
) -> Result<c_int, Fail> {
    let (mode, _) = decode.resolve(&handle.engine)?;
    let ok: Vec<ConvProblem> = parsed.iter().filter_map(|p| p.as_ref().ok().cloned()).collect();
    let mut predicted = request::answer(&handle.answering, &handle.engine, &ok, mode).into_iter();
    let outcomes: Vec<Result<Vec<Prediction>, Fail>> = parsed
        .into_iter()
        .map(|p| {
            p.and_then(|_| match predicted.next() {
                Some(Ok(list)) if list.is_empty() => Err(usage("no prediction")),
                Some(Ok(list)) => Ok(list),
                Some(Err(e)) => Err(Fail::from(e)),
                None => Err(usage("internal: no result")),
            })
        })
        .collect();
    if single {
        if let Some(Err(fail)) = outcomes.first() {
            return Err(Fail {
                code: fail.code,
                message: fail.message.clone(),
            });
        }
    }
    let failed: Vec<(usize, &Fail)> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.as_ref().err().map(|f| (i, f)))
        .collect();
    let status = match failed.first() {
        None => TUNEINFER_OK,
        Some((i, first)) => {
            set_error(&format!(
                "{} of {} problems failed; the first, problem {i}: {}",
                failed.len(),
                outcomes.len(),
                first.message
            ));
            TUNEINFER_PARTIAL
        }
    };
    *slot = make_results(outcomes);
    Ok(status)
}

/// Parses every problem text of a batch (a NULL entry fails on its own).
///
/// # Safety
/// `problems` points to `count` entries, each NULL or a NUL-terminated string.
unsafe fn parse_texts(problems: *const *const c_char, count: usize) -> Result<Vec<Result<ConvProblem, Fail>>, Fail> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if problems.is_null() {
        return Err(usage("argument 'problems' is NULL"));
    }
    let texts = std::slice::from_raw_parts(problems, count);
    Ok(texts
        .iter()
        .map(|&t| req_str(t, "problem").and_then(|text| ConvProblem::parse(text).map_err(Fail::from)))
        .collect())
}

// ----- entry points -----

/// The ABI version this library implements (the header's `TUNEINFER_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn tuneinfer_abi_version() -> u32 {
    ABI_VERSION
}

/// The crate's version, e.g. "0.1.0" (a static string).
#[no_mangle]
pub extern "C" fn tuneinfer_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The message of the last failed call on this thread ("" after a successful one); valid
/// until the thread's next call into the library.
#[no_mangle]
pub extern "C" fn tuneinfer_last_error() -> *const c_char {
    catch_unwind(|| LAST_ERROR.with(|e| e.borrow().as_ptr())).unwrap_or(c"internal error".as_ptr())
}

/// A status code's name, e.g. "TUNEINFER_ERR_PROBLEM" (a static string; "unknown status"
/// for a code the library never returns).
#[no_mangle]
pub extern "C" fn tuneinfer_status_name(status: c_int) -> *const c_char {
    let name: &CStr = match status {
        TUNEINFER_OK => c"TUNEINFER_OK",
        TUNEINFER_PARTIAL => c"TUNEINFER_PARTIAL",
        TUNEINFER_ERR_USAGE => c"TUNEINFER_ERR_USAGE",
        TUNEINFER_ERR_IO => c"TUNEINFER_ERR_IO",
        TUNEINFER_ERR_FORMAT => c"TUNEINFER_ERR_FORMAT",
        TUNEINFER_ERR_PROBLEM => c"TUNEINFER_ERR_PROBLEM",
        TUNEINFER_ERR_MODEL_NOT_FOUND => c"TUNEINFER_ERR_MODEL_NOT_FOUND",
        TUNEINFER_ERR_DATABASE => c"TUNEINFER_ERR_DATABASE",
        TUNEINFER_ERR_VERIFY => c"TUNEINFER_ERR_VERIFY",
        TUNEINFER_ERR_GPU => c"TUNEINFER_ERR_GPU",
        TUNEINFER_ERR_HANDLE => c"TUNEINFER_ERR_HANDLE",
        TUNEINFER_ERR_INTERNAL => c"TUNEINFER_ERR_INTERNAL",
        _ => c"unknown status",
    };
    name.as_ptr()
}

/// Fills `problem` with MIOpenDriver's defaults (n 100, c 3, H 32, W 32, k 32, y 3, x 3, pads
/// 0, strides and dilations 1, 1 group, no bias, NCHW, FP32) and forward direction.
///
/// # Safety
/// `problem` is NULL or points to a writable `tuneinfer_problem`.
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_problem_init(problem: *mut tuneinfer_problem) -> c_int {
    guard(|| {
        let p = problem.as_mut().ok_or_else(|| usage("argument 'problem' is NULL"))?;
        *p = tuneinfer_problem {
            n: 100,
            c: 3,
            h: 32,
            w: 32,
            k: 32,
            y: 3,
            x: 3,
            pad_h: 0,
            pad_w: 0,
            stride_h: 1,
            stride_w: 1,
            dilation_h: 1,
            dilation_w: 1,
            groups: 1,
            bias: 0,
            layout: TUNEINFER_LAYOUT_NCHW,
            data_type: TUNEINFER_TYPE_FP32,
            direction: 1,
        };
        Ok(TUNEINFER_OK)
    })
}

/// Loads the predictor the options name (NULL options: every default) into `*out`.
///
/// # Safety
/// `options` is NULL or points to a `tuneinfer_options` whose strings are NULL or
/// NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_open(
    options: *const tuneinfer_options,
    out: *mut *mut tuneinfer_predictor,
) -> c_int {
    guard(|| {
        let slot = out.as_mut().ok_or_else(|| usage("argument 'out' is NULL"))?;
        *slot = std::ptr::null_mut();
        let o = options.as_ref().copied().unwrap_or(tuneinfer_options {
            arch: std::ptr::null(),
            solver: std::ptr::null(),
            models: std::ptr::null(),
            device: std::ptr::null(),
            precision: std::ptr::null(),
            catalogue: std::ptr::null(),
            compute_units: 0,
            threads: 0,
            method: std::ptr::null(),
            system_db: std::ptr::null(),
        });
        let opts = Request {
            arch: opt_str(o.arch, "arch")?,
            solver: opt_str(o.solver, "solver")?,
            models: opt_str(o.models, "models")?,
            device: opt_str(o.device, "device")?,
            precision: opt_str(o.precision, "precision")?,
            catalogue: opt_str(o.catalogue, "catalogue")?,
            compute_units: (o.compute_units != 0).then_some(o.compute_units),
            threads: (o.threads != 0).then_some(o.threads as usize),
            method: opt_str(o.method, "method")?,
            system_db: opt_str(o.system_db, "system_db")?,
        };
        let (engine, note) = request::load_noting(&opts)?;
        let answering = request::answering(&opts, &engine)?;
        let handle = Handle {
            answering,
            solver: c_string(engine.host().solver.name()),
            device: c_string(&engine.device_name()),
            note: note.as_deref().map(c_string),
            engine,
        };
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        PREDICTORS
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, Arc::new(handle));
        *slot = id as *mut tuneinfer_predictor;
        Ok(TUNEINFER_OK)
    })
}

/// Frees a predictor. NULL is a no-op; a freed or unknown handle is TUNEINFER_ERR_HANDLE.
/// A prediction running on another thread finishes first on its own reference.
#[no_mangle]
pub extern "C" fn tuneinfer_predictor_free(predictor: *mut tuneinfer_predictor) -> c_int {
    guard(|| {
        if predictor.is_null() {
            return Ok(TUNEINFER_OK);
        }
        let removed = PREDICTORS
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(predictor as usize));
        match removed {
            Some(_) => Ok(TUNEINFER_OK),
            None => Err(bad_handle("predictor")),
        }
    })
}

/// The solver's name as MIOpen spells it; NULL for a bad handle (see tuneinfer_last_error).
/// Valid until the predictor is freed.
#[no_mangle]
pub extern "C" fn tuneinfer_predictor_solver(predictor: *const tuneinfer_predictor) -> *const c_char {
    handle_string(predictor, |h| h.solver.as_ptr())
}

/// The note `tuneinfer predict` prints on stderr after loading (e.g. that device "auto" found no
/// hardware GPU and computes on the CPU), or NULL when there is none (or for a bad handle: then
/// tuneinfer_last_error says so). The library prints nothing itself. Valid until the predictor
/// is freed.
#[no_mangle]
pub extern "C" fn tuneinfer_predictor_note(predictor: *const tuneinfer_predictor) -> *const c_char {
    handle_string(predictor, |h| h.note.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()))
}

/// "cpu" or the GPU adapter's description; NULL for a bad handle. Valid until the predictor
/// is freed.
#[no_mangle]
pub extern "C" fn tuneinfer_predictor_device(predictor: *const tuneinfer_predictor) -> *const c_char {
    handle_string(predictor, |h| h.device.as_ptr())
}

/// The decode mode TUNEINFER_DECODE_DEFAULT stands for on this predictor (GREEDY for
/// MIOpen's models, BEAM 16 top 1 for tuneinfer's).
///
/// # Safety
/// `out` is NULL or points to a writable `tuneinfer_decode`.
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_predictor_default_decode(
    predictor: *const tuneinfer_predictor,
    out: *mut tuneinfer_decode,
) -> c_int {
    guard(|| {
        let slot = out.as_mut().ok_or_else(|| usage("argument 'out' is NULL"))?;
        let handle = lookup(predictor)?;
        *slot = match handle.engine.default_mode() {
            DecodeMode::Miopen => tuneinfer_decode {
                kind: TUNEINFER_DECODE_GREEDY,
                beam_width: 0,
                top: 0,
            },
            DecodeMode::Beam { width, top } => tuneinfer_decode {
                kind: TUNEINFER_DECODE_BEAM,
                beam_width: u32::try_from(width).unwrap_or(u32::MAX),
                top: u32::try_from(top).unwrap_or(u32::MAX),
            },
        };
        Ok(TUNEINFER_OK)
    })
}

fn handle_string(predictor: *const tuneinfer_predictor, f: impl Fn(&Handle) -> *const c_char) -> *const c_char {
    let mut ptr = std::ptr::null();
    guard(|| {
        ptr = f(lookup(predictor)?.as_ref());
        Ok(TUNEINFER_OK)
    });
    ptr
}

/// Predicts one problem given as a perf-db key or a MIOpenDriver line.
///
/// # Safety
/// `problem` is NULL or NUL-terminated; `mode` NULL or a `tuneinfer_decode`; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_predict(
    predictor: *const tuneinfer_predictor,
    problem: *const c_char,
    mode: *const tuneinfer_decode,
    out: *mut *mut tuneinfer_results,
) -> c_int {
    guard(|| {
        let slot = out_slot(out)?;
        let handle = lookup(predictor)?;
        let decode = decode_of(mode)?;
        let parsed = ConvProblem::parse(req_str(problem, "problem")?)?;
        predict_parsed(&handle, vec![Ok(parsed)], decode, true, slot)
    })
}

/// Predicts `count` problems given as texts; one result each, in order.
///
/// # Safety
/// `problems` points to `count` entries, each NULL or NUL-terminated; `mode` NULL or a
/// `tuneinfer_decode`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_predict_batch(
    predictor: *const tuneinfer_predictor,
    problems: *const *const c_char,
    count: usize,
    mode: *const tuneinfer_decode,
    out: *mut *mut tuneinfer_results,
) -> c_int {
    guard(|| {
        let slot = out_slot(out)?;
        let handle = lookup(predictor)?;
        let decode = decode_of(mode)?;
        let parsed = parse_texts(problems, count)?;
        predict_parsed(&handle, parsed, decode, false, slot)
    })
}

/// Predicts one problem given as a struct.
///
/// # Safety
/// `problem` is NULL or points to a `tuneinfer_problem`; `mode` NULL or a
/// `tuneinfer_decode`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_predict_problem(
    predictor: *const tuneinfer_predictor,
    problem: *const tuneinfer_problem,
    mode: *const tuneinfer_decode,
    out: *mut *mut tuneinfer_results,
) -> c_int {
    guard(|| {
        let slot = out_slot(out)?;
        let handle = lookup(predictor)?;
        let decode = decode_of(mode)?;
        let p = problem.as_ref().ok_or_else(|| usage("argument 'problem' is NULL"))?;
        let parsed = problem_from_struct(p)?;
        predict_parsed(&handle, vec![Ok(parsed)], decode, true, slot)
    })
}

/// Predicts `count` problems given as an array of structs; one result each, in order.
///
/// # Safety
/// `problems` points to `count` `tuneinfer_problem`s; `mode` NULL or a `tuneinfer_decode`;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_predict_problems(
    predictor: *const tuneinfer_predictor,
    problems: *const tuneinfer_problem,
    count: usize,
    mode: *const tuneinfer_decode,
    out: *mut *mut tuneinfer_results,
) -> c_int {
    guard(|| {
        let slot = out_slot(out)?;
        let handle = lookup(predictor)?;
        let decode = decode_of(mode)?;
        let parsed = if count == 0 {
            Vec::new()
        } else if problems.is_null() {
            return Err(usage("argument 'problems' is NULL"));
        } else {
            std::slice::from_raw_parts(problems, count)
                .iter()
                .map(|p| problem_from_struct(p).map_err(Fail::from))
                .collect()
        };
        predict_parsed(&handle, parsed, decode, false, slot)
    })
}

/// Frees results. NULL is a no-op; results that are not live (freed already, or never
/// returned by the library) are TUNEINFER_ERR_HANDLE and left alone.
///
/// # Safety
/// `results` is NULL or any pointer value (only live results are dereferenced).
#[no_mangle]
pub unsafe extern "C" fn tuneinfer_results_free(results: *mut tuneinfer_results) -> c_int {
    guard(|| {
        if results.is_null() {
            return Ok(TUNEINFER_OK);
        }
        let live = LIVE_RESULTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(results as usize));
        if !live || (*results).magic != RESULTS_MAGIC {
            return Err(bad_handle("results"));
        }
        let boxed = Box::from_raw(results);
        drop(Box::from_raw(boxed.store.cast::<Store>()));
        drop(boxed);
        Ok(TUNEINFER_OK)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        // SAFETY: tuneinfer_last_error never returns NULL and its string lives until the
        // thread's next call.
        unsafe { CStr::from_ptr(tuneinfer_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_the_internal_error_code_with_its_message() {
        let status = guard(|| panic!("boom at the boundary"));
        assert_eq!(status, TUNEINFER_ERR_INTERNAL);
        assert_eq!(last_error(), "internal error (caught panic): boom at the boundary");
        // The next successful call clears it.
        assert_eq!(guard(|| Ok(TUNEINFER_OK)), TUNEINFER_OK);
        assert_eq!(last_error(), "");
    }

    #[test]
    fn the_last_error_is_per_thread() {
        assert_eq!(
            tuneinfer_predictor_free(0x51 as *mut tuneinfer_predictor),
            TUNEINFER_ERR_HANDLE
        );
        let other = std::thread::spawn(last_error).join().expect("thread");
        assert_eq!(other, "");
        assert!(last_error().starts_with("predictor: not a live handle"));
    }

    #[test]
    fn messages_with_a_nul_are_kept_whole() {
        assert_eq!(c_string("a\0b").to_str(), Ok("a\u{fffd}b"));
    }
}
