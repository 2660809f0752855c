//! The names and the place of MIOpen's user perf database, exactly as MIOpen builds them.
//!
//! - The file: `{basename}.{suffix}.udb.txt` (text) or `{basename}_1.1.0.udb` (sqlite)
//!   (`src/include/miopen/execution_context.hpp`, `GetUserPerfDbPath`); MIOpen's user *find*
//!   database beside it is `{basename}.{suffix}.ufdb.txt` (and `.fusion.ufdb.txt`)
//!   (`src/find_db.cpp`, `GetUserPath`).
//! - The basename: the db id and the CU count (`src/include/miopen/handle.hpp`,
//!   `GetDbBasename`); the db id is the arch with `_xnack` when xnack is on
//!   (`src/target_properties.cpp`, `InitDbId`): `gfx942_xnacke4`, `gfx90a_xnack6e`.
//! - The suffix: `{backend}.{major}_{minor}_{patch}_{tweak}` in a release build,
//!   `{backend}.{major}_{minor}_{patch}` in a developer build (MIOpen's `CMakeLists.txt`,
//!   `MIOPEN_USER_DB_SUFFIX`); the tweak is what rocm-cmake's `rocm_setup_version` took from
//!   git (`36bb7fd4a-dirty`, a `git describe` string), or empty without git (`HIP.3_2_0_`).
//! - The directory: `$MIOPEN_USER_DB_PATH`, else `~/.config/miopen/`, else the temp directory
//!   when that is on a network filesystem (`src/db_path.cpp.in`, `PrepareUserDbPath`;
//!   `src/expanduser.cpp`: `~` is `$HOME`, or the temp directory when `HOME` is unset, empty
//!   or `/`).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

use super::{Format, SQLITE_SCHEMA_VERSION};

/// MIOpen's backends as its CMake names them (`MIOPEN_BACKEND`).
pub const BACKENDS: [&str; 4] = ["HIP", "OpenCL", "HIPOC", "HIPNOGPU"];

pub use crate::solvers::db_basename;

/// The version of the MIOpen installed under the first of [`rocm_roots`] that has one
/// ([`installed_suffix`]), if tuneinfer can tell it.
pub fn installed_version() -> Option<crate::solvers::MiopenVersion> {
    rocm_roots()
        .iter()
        .find_map(|r| installed_suffix(r))
        .and_then(|(s, _)| crate::solvers::MiopenVersion::parse(&s))
}

/// The file name of the user perf database.
pub fn file_name(basename: &str, format: Format, suffix: &str) -> String {
    match format {
        Format::Text => format!("{basename}.{suffix}.udb.txt"),
        Format::Sqlite => format!("{basename}_{SQLITE_SCHEMA_VERSION}.udb"),
    }
}

/// A GPU as MIOpen names its databases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbTarget {
    /// MIOpen's db id: the arch, with `_xnack` when xnack is on (`gfx942_xnack`).
    pub db_id: String,
    /// The plain arch (`gfx942`): its models are the ones used.
    pub arch: String,
    /// The compute units, when the name has them.
    pub compute_units: Option<u32>,
}

/// Reads a GPU name: a database name with or without its CU count and feature part
/// (`gfx906_60`, `gfx942130`, `gfx942_xnacke4`, `gfx90a_xnack6e`, `gfx942_xnack`), or a raw
/// device name as the runtime reports it (`gfx942:sramecc+:xnack+`; MIOpen's db id gets
/// `_xnack` for `xnack+` and, since it infers sramecc from the arch alone, nothing for
/// `sramecc`).
pub fn parse_arch(text: &str) -> Result<DbTarget> {
    let mut parts = text.split(':');
    let name = parts.next().unwrap_or_default();
    let mut xnack = false;
    for feature in parts {
        match feature {
            "xnack+" => xnack = true,
            "xnack-" | "sramecc+" | "sramecc-" => {}
            other => {
                return Err(Error::Usage(format!(
                    "--arch {}: unknown target feature '{}' (expected xnack+/-, sramecc+/-)",
                    crate::error::quote_short(text),
                    crate::error::quote_short(other)
                )))
            }
        }
    }
    let (arch, features, compute_units) = crate::solvers::split_db_name_features(name);
    let mut db_id = format!("{arch}{}", features.to_ascii_lowercase());
    if xnack && !db_id.ends_with("_xnack") {
        db_id.push_str("_xnack");
    }
    Ok(DbTarget {
        db_id,
        arch: arch.to_string(),
        compute_units,
    })
}

/// Is `text` a user-db suffix MIOpen can build: `{backend}.{major}_{minor}_{patch}`, then
/// nothing (a developer build) or `_` and the tweak (letters, digits, `-`, `.`, `+`, `_`, or
/// nothing)?
pub fn is_suffix(text: &str) -> bool {
    let Some((backend, version)) = text.split_once('.') else {
        return false;
    };
    if !BACKENDS.contains(&backend) {
        return false;
    }
    let mut parts = version.splitn(4, '_');
    let numbers_ok = (0..3).all(|_| {
        parts
            .next()
            .is_some_and(|p| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()))
    });
    let tweak_ok = parts.next().is_none_or(|tweak| {
        tweak
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'+' | b'_'))
    });
    numbers_ok && tweak_ok && !text.contains("..")
}

/// What `--miopen-version` should be, for the messages that ask for it.
pub fn suffix_help(basename: &str, dir: Option<&Path>) -> String {
    let listed = dir.map_or_else(
        || "MIOpen's user-db directory, ~/.config/miopen or $MIOPEN_USER_DB_PATH".to_string(),
        |d| d.display().to_string(),
    );
    format!(
        "MIOpen names its user databases {basename}.{{suffix}}.udb.txt, the suffix being \
         {{backend}}.{{major}}_{{minor}}_{{patch}}_{{tweak}} in a release build, where the tweak is \
         the git hash MIOpen was built from (e.g. HIP.3_2_0_36bb7fd4a-dirty), 0, or empty \
         (HIP.3_2_0_); a developer build has no tweak (HIP.3_2_0). A bare version cannot say \
         which, and a file of any other name is never read. Give --miopen-version the whole \
         part between '{basename}.' and '.udb.txt' (or '.ufdb.txt') of a database MIOpen wrote \
         (in {listed}: any run that used MIOpen's Find leaves a .ufdb.txt there), or run \
         the program once with MIOPEN_LOG_LEVEL=6: MIOpen prints 'Looking for key ... in cache \
         for file {{path}}', the path of its user perf database"
    )
}

/// The suffix of a text user database from `--miopen-version`: the whole suffix
/// (`HIP.3_2_0_36bb7fd4a-dirty`, `HIP.3_2_0_`, or a developer build's `HIP.3_2_0`). A bare
/// version (`3.2.0`) is refused, saying why and how to read the suffix (see [`suffix_help`]).
pub fn suffix_from_version(version: &str, basename: &str) -> Result<String> {
    if is_suffix(version) {
        return Ok(version.to_string());
    }
    let shown = crate::error::quote_short(version);
    let looks_bare = version.starts_with(|c: char| c.is_ascii_digit());
    Err(Error::Usage(format!(
        "--miopen-version {shown}: {} {}",
        if looks_bare {
            "a bare version names no file a release MIOpen reads."
        } else {
            "not a MIOpen user-database suffix."
        },
        suffix_help(basename, None)
    )))
}

/// The suffix in the name of a user database of `basename` (`{basename}.{suffix}.udb.txt`,
/// `{basename}.{suffix}.ufdb.txt`, `{basename}.{suffix}.fusion.ufdb.txt`), if it is one.
pub fn suffix_of_file_name(name: &str, basename: &str) -> Option<String> {
    let rest = name.strip_prefix(basename)?.strip_prefix('.')?;
    let middle = rest
        .strip_suffix(".udb.txt")
        .or_else(|| rest.strip_suffix(".fusion.ufdb.txt"))
        .or_else(|| rest.strip_suffix(".ufdb.txt"))?;
    is_suffix(middle).then(|| middle.to_string())
}

/// The suffixes of the user databases of `basename` already in `dir`: text perf databases
/// (`*.udb.txt`) and MIOpen's user find databases (`*.ufdb.txt`), sorted, each once.
pub fn existing_suffixes(dir: &Path, basename: &str) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(suffix) = suffix_of_file_name(name, basename) {
            found.push(suffix);
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

/// Where MIOpen may be installed, in order: `$ROCM_PATH`, `/opt/rocm`.
pub fn rocm_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(p) = std::env::var_os("ROCM_PATH").filter(|p| !p.is_empty()) {
        roots.push(PathBuf::from(p));
    }
    let opt = PathBuf::from("/opt/rocm");
    if !roots.contains(&opt) {
        roots.push(opt);
    }
    roots
}

/// The suffix of the MIOpen installed under `root`, and the file it was read from: its headers
/// (`include/miopen/version.h` for the version and tweak, `include/miopen/config.h` for the
/// backend and whether it is a developer build), else the suffix as the library holds it
/// (`lib/libMIOpen.so`: `GetUserDbSuffix` returns it as a string literal).
pub fn installed_suffix(root: &Path) -> Option<(String, PathBuf)> {
    let header = root.join("include/miopen/version.h");
    if let Ok(text) = std::fs::read_to_string(&header) {
        if let Some(suffix) = suffix_from_headers(
            &text,
            std::fs::read_to_string(root.join("include/miopen/config.h"))
                .ok()
                .as_deref(),
        ) {
            return Some((suffix, header));
        }
    }
    for lib in ["lib/libMIOpen.so", "lib64/libMIOpen.so"] {
        let path = root.join(lib);
        if let Some(suffix) = suffix_in_library(&path) {
            return Some((suffix, path));
        }
    }
    None
}

/// The suffix from MIOpen's installed `version.h` (`#define MIOPEN_VERSION_MAJOR 3` ...
/// `#define MIOPEN_VERSION_TWEAK 36bb7fd4a-dirty`, the tweak possibly empty) and `config.h`
/// (`MIOPEN_BACKEND_OPENCL`, `MIOPEN_MODE_NOGPU`, `MIOPEN_BUILD_DEV`; without it: HIP, release).
pub fn suffix_from_headers(version_h: &str, config_h: Option<&str>) -> Option<String> {
    let define = |text: &str, name: &str| -> Option<String> {
        text.lines().find_map(|line| {
            let rest = line.trim_start().strip_prefix("#define")?;
            let rest = rest.trim_start().strip_prefix(name)?;
            // `#define MIOPEN_VERSION_TWEAK` with nothing after it: an empty tweak.
            if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
                return None;
            }
            Some(rest.trim().to_string())
        })
    };
    let number =
        |name: &str| define(version_h, name).filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
    let (major, minor, patch) = (
        number("MIOPEN_VERSION_MAJOR")?,
        number("MIOPEN_VERSION_MINOR")?,
        number("MIOPEN_VERSION_PATCH")?,
    );
    let tweak = define(version_h, "MIOPEN_VERSION_TWEAK").unwrap_or_default();
    let on = |name: &str| config_h.and_then(|c| define(c, name)).is_some_and(|v| v == "1");
    let backend = if on("MIOPEN_BACKEND_OPENCL") {
        "OpenCL"
    } else if on("MIOPEN_MODE_NOGPU") {
        "HIPNOGPU"
    } else {
        "HIP"
    };
    let suffix = if on("MIOPEN_BUILD_DEV") {
        format!("{backend}.{major}_{minor}_{patch}")
    } else {
        format!("{backend}.{major}_{minor}_{patch}_{tweak}")
    };
    is_suffix(&suffix).then_some(suffix)
}

/// The user-db suffix a MIOpen library holds as a string literal (`HIP.3_2_0_36bb7fd4a-dirty`
/// between NUL bytes), when exactly one such string is in it.
pub fn suffix_in_library(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut found: Vec<String> = Vec::new();
    const CHUNK: usize = 8 << 20;
    const KEEP: usize = 256;
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + KEEP);
    loop {
        let start = buf.len();
        buf.resize(start + CHUNK, 0);
        let n = file.read(&mut buf[start..]).ok()?;
        buf.truncate(start + n);
        let last = n == 0;
        // Strings wholly inside the buffer (ending in a NUL), except near its end unless last.
        let limit = if last {
            buf.len()
        } else {
            buf.len().saturating_sub(KEEP)
        };
        let mut i = 0;
        while i < limit {
            if buf[i] == b'.' {
                if let Some(s) = literal_at(&buf, i) {
                    if !found.contains(&s) {
                        found.push(s);
                    }
                }
            }
            i += 1;
        }
        if last {
            break;
        }
        // Keep a few bytes before `limit`: the backend of a string whose `.` is past it.
        buf.drain(..limit.saturating_sub(16));
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The NUL-delimited string around the `.` at `dot`, if it is a user-db suffix (its backend,
/// at most 8 bytes, after a NUL or the start of `buf`).
fn literal_at(buf: &[u8], dot: usize) -> Option<String> {
    let from = dot.saturating_sub(9);
    let begin = match buf[from..dot].iter().rposition(|&b| b == 0) {
        Some(p) => from + p + 1,
        None if from == 0 => 0,
        None => return None,
    };
    let end = dot + buf[dot..].iter().take(200).position(|&b| b == 0)?;
    let text = std::str::from_utf8(&buf[begin..end]).ok()?;
    is_suffix(text).then(|| text.to_string())
}

/// The suffix of the user database to write, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suffix {
    pub suffix: String,
    /// Where it came from (`--miopen-version`, the databases in the directory, a header).
    pub source: String,
    /// What the user should know: where a suffix not given came from, or that the directory
    /// holds another MIOpen version's databases than the one given.
    pub note: Option<String>,
}

impl Suffix {
    fn found(suffix: String, source: String) -> Suffix {
        let note = Some(format!("MIOpen's version suffix {suffix} taken from {source}"));
        Suffix { suffix, source, note }
    }
}

/// The suffix of the text user database of `basename` in `dir`: `given` (`--miopen-version`)
/// when there is one; else the suffix of the user databases MIOpen already wrote there
/// (`*.udb.txt`, `*.ufdb.txt`: the MIOpen in use wrote them); else that of the MIOpen installed
/// under the first of `roots` that has one ([`installed_suffix`]); else an error that says
/// what to give. Several suffixes in `dir` (MIOpen was upgraded) are an error unless the
/// installed MIOpen's is one of them.
pub fn resolve_suffix(given: Option<&str>, dir: &Path, basename: &str, roots: &[PathBuf]) -> Result<Suffix> {
    if let Some(v) = given {
        let suffix = suffix_from_version(v, basename)?;
        let there = existing_suffixes(dir, basename)?;
        let note = (!there.is_empty() && !there.contains(&suffix)).then(|| {
            format!(
                "{} holds user databases of {basename} with the suffix {} only, not {suffix}: \
                 MIOpen reads the file of its own version alone; check --miopen-version",
                dir.display(),
                there.join(", ")
            )
        });
        return Ok(Suffix {
            suffix,
            source: "--miopen-version".into(),
            note,
        });
    }
    let found = existing_suffixes(dir, basename)?;
    let installed = || roots.iter().find_map(|r| installed_suffix(r));
    match found.as_slice() {
        [one] => {
            return Ok(Suffix::found(
                one.clone(),
                format!("the user databases already in {}", dir.display()),
            ))
        }
        [] => {}
        many => {
            if let Some((suffix, from)) = installed().filter(|(s, _)| many.contains(s)) {
                return Ok(Suffix::found(
                    suffix,
                    format!(
                        "the installed MIOpen ({}), one of several in {}",
                        from.display(),
                        dir.display()
                    ),
                ));
            }
            return Err(Error::Usage(format!(
                "user databases of several MIOpen versions for {basename} in {}: {}; choose the \
                 one of the MIOpen in use with --miopen-version (MIOPEN_LOG_LEVEL=6 makes MIOpen \
                 print the path it reads: 'Looking for key ... in cache for file {{path}}')",
                dir.display(),
                many.join(", ")
            )));
        }
    }
    if let Some((suffix, from)) = installed() {
        return Ok(Suffix::found(
            suffix,
            format!("the installed MIOpen ({})", from.display()),
        ));
    }
    let searched: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    Err(Error::Usage(format!(
        "no user database of {basename} in {} ({basename}.*.udb.txt or .ufdb.txt) and no MIOpen \
         installed under {} to take MIOpen's version from. {}",
        dir.display(),
        searched.join(" or "),
        suffix_help(basename, Some(dir))
    )))
}

/// What decides MIOpen's default user-db directory: the environment, the temp directory and
/// the filesystem type of a path (injectable, for tests).
pub struct DirEnv<'a> {
    /// `$MIOPEN_USER_DB_PATH`.
    pub user_db_path: Option<String>,
    /// `$HOME`.
    pub home: Option<String>,
    /// C++'s `std::filesystem::temp_directory_path()`.
    pub temp_dir: PathBuf,
    /// The filesystem type (`statfs`'s `f_type`) of an existing path; None when unknown.
    pub fs_type: &'a dyn Fn(&Path) -> Option<u64>,
}

/// The filesystem types MIOpen takes for network filesystems (`src/expanduser.cpp`,
/// `IsNetworked`): NFS, SMB, SMB2, CIFS, Coda, OCFS2, AFS, Lustre, Ceph.
pub const NETWORK_FS_TYPES: [(u64, &str); 9] = [
    (0x6969, "NFS"),
    (0x517b, "SMB"),
    (0xfe53_4d42, "SMB2"),
    (0xff53_4d42, "CIFS"),
    (0x7375_7245, "Coda"),
    (0x7461_636f, "OCFS2"),
    (0x5346_414f, "AFS"),
    (0x0bd0_0bd0, "Lustre"),
    (0x00c3_6400, "Ceph"),
];

impl DirEnv<'static> {
    /// This process's environment and filesystems.
    pub fn from_process() -> DirEnv<'static> {
        let var = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        DirEnv {
            user_db_path: var("MIOPEN_USER_DB_PATH"),
            home: var("HOME"),
            temp_dir: cxx_temp_directory(),
            fs_type: &statfs_type,
        }
    }
}

/// `std::filesystem::temp_directory_path()` as libstdc++ computes it: the first of `$TMPDIR`,
/// `$TMP`, `$TEMP`, `$TEMPDIR` that is set, else `/tmp`.
pub fn cxx_temp_directory() -> PathBuf {
    ["TMPDIR", "TMP", "TEMP", "TEMPDIR"]
        .iter()
        .find_map(|v| std::env::var_os(v).filter(|p| !p.is_empty()))
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

/// `statfs(path).f_type`.
#[cfg(target_os = "linux")]
pub fn statfs_type(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes one struct statfs; c is a NUL-terminated path.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers.
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut stat) };
    #[allow(clippy::unnecessary_cast)]
    (rc == 0).then_some(stat.f_type as u64 & 0xffff_ffff)
}

/// MIOpen checks the filesystem on Linux only.
#[cfg(not(target_os = "linux"))]
pub fn statfs_type(_path: &Path) -> Option<u64> {
    None
}

/// MIOpen's user-db directory, and why it is not the usual one when it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserDbDir {
    pub path: PathBuf,
    pub note: Option<String>,
}

/// MIOpen's user-db directory under `env` (`PrepareUserDbPath`): `$MIOPEN_USER_DB_PATH` when
/// set and not empty, every `~` in it replaced by the home directory (MIOpen's `ExpandUser`);
/// else `~/.config/miopen/`, unless the first existing directory on that path is on a network
/// filesystem ([`NETWORK_FS_TYPES`]): then the temp directory. The home directory is `$HOME`,
/// or the temp directory when `HOME` is unset, empty or `/`.
pub fn user_db_dir(env: &DirEnv) -> UserDbDir {
    let home = match env.home.as_deref() {
        Some(h) if !h.is_empty() && h != "/" => h.to_string(),
        _ => env.temp_dir.to_string_lossy().into_owned(),
    };
    if let Some(p) = env.user_db_path.as_deref().filter(|p| !p.is_empty()) {
        return UserDbDir {
            path: PathBuf::from(p.replace('~', &home)),
            note: None,
        };
    }
    let path = PathBuf::from("~/.config/miopen/".replace('~', &home));
    let note = match env.home.as_deref() {
        Some(h) if !h.is_empty() && h != "/" => None,
        Some(h) => Some(format!(
            "HOME is '{h}': MIOpen takes the temp directory {} as home",
            env.temp_dir.display()
        )),
        None => Some(format!(
            "HOME is not set: MIOpen takes the temp directory {} as home",
            env.temp_dir.display()
        )),
    };
    // IsNetworkedFilesystem: the first existing directory up the path (32 steps at most).
    let mut probe = path.clone();
    for _ in 0..32 {
        if probe.exists() {
            break;
        }
        match probe.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => probe = parent.to_path_buf(),
            _ => break,
        }
    }
    if let Some(fs_type) = (env.fs_type)(&probe) {
        if let Some((_, name)) = NETWORK_FS_TYPES.iter().find(|(t, _)| *t == fs_type) {
            return UserDbDir {
                path: env.temp_dir.clone(),
                note: Some(format!(
                    "{} is on {name}: MIOpen keeps user databases in the temp directory {} then \
                     (set MIOPEN_USER_DB_PATH for MIOpen and tuneinfer to use another)",
                    probe.display(),
                    env.temp_dir.display()
                )),
            };
        }
    }
    UserDbDir { path, note }
}

/// MIOpen's user-db directory for this process ([`user_db_dir`] of [`DirEnv::from_process`]).
pub fn default_dir() -> Result<PathBuf> {
    Ok(user_db_dir(&DirEnv::from_process()).path)
}
