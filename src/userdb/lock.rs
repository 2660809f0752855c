//! MIOpen's lock on a database file, taken by tuneinfer too while it replaces the file.
//!
//! MIOpen serialises every access to a text database through
//! `{temp dir}/miopen-lockfiles/{md5 of the file's directory}_{file name}.lock`
//! (`src/lock_file.cpp`, `LockFilePath`), locked with `boost::interprocess::file_lock`, which on
//! Linux is an `fcntl` record lock over the whole file. tuneinfer takes the same lock (without
//! waiting): if MIOpen, or another `tuneinfer userdb`, holds it, the write is refused instead of
//! racing a process that may rewrite the file from its own copy.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::md5::md5_hex;

/// The lock files MIOpen would use for `db_file`: one for the directory as written (MIOpen
/// hashes the path string it built, `$MIOPEN_USER_DB_PATH` or `~/.config/miopen`), and one for
/// its canonical form when that differs (a link, a relative path).
pub fn lock_paths(db_file: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let Some(name) = db_file.file_name().and_then(|n| n.to_str()) else {
        return paths;
    };
    let dir_of = |file: &Path| -> String {
        let dir = file
            .parent()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let trimmed = dir.trim_end_matches('/');
        if trimmed.is_empty() && dir.starts_with('/') {
            "/".to_string()
        } else {
            trimmed.to_string()
        }
    };
    let lock_dir = std::env::temp_dir().join("miopen-lockfiles");
    let mut dirs = vec![dir_of(db_file)];
    if let Some(canonical) = db_file.parent().and_then(|d| std::fs::canonicalize(d).ok()) {
        let c = dir_of(&canonical.join(name));
        if !dirs.contains(&c) {
            dirs.push(c);
        }
    }
    for dir in dirs {
        paths.push(lock_dir.join(format!("{}_{name}.lock", md5_hex(dir.as_bytes()))));
    }
    paths
}

/// Held locks; released when dropped (closing a file releases its `fcntl` locks).
pub struct MiopenLock {
    _files: Vec<File>,
}

impl MiopenLock {
    /// Takes every lock of [`lock_paths`] without waiting. Errors name `db_file` and the lock
    /// file that is held.
    pub fn acquire(db_file: &Path) -> Result<MiopenLock> {
        MiopenLock::acquire_waiting(db_file, std::time::Duration::ZERO)
    }

    /// Takes every lock of [`lock_paths`], retrying while another process holds one, for up to
    /// `wait` (MIOpen itself holds the lock only while it reads or writes the file; it waits up to
    /// 60 s for it).
    pub fn acquire_waiting(db_file: &Path, wait: std::time::Duration) -> Result<MiopenLock> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            let mut files = Vec::new();
            let mut held = None;
            for lock in lock_paths(db_file) {
                match lock_one(db_file, &lock) {
                    Ok(f) => files.push(f),
                    Err(e) => {
                        held = Some(e);
                        break;
                    }
                }
            }
            match held {
                None => return Ok(MiopenLock { _files: files }),
                Some(e) if std::time::Instant::now() >= deadline => return Err(e),
                Some(_) => {
                    drop(files);
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        }
    }

    /// True when some process holds one of `db_file`'s locks (the locks are not taken).
    pub fn is_held(db_file: &Path) -> bool {
        lock_paths(db_file).iter().any(|lock| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(lock)
                .is_ok_and(|f| matches!(try_lock(&f), Ok(false)))
        })
    }
}

fn lock_one(db_file: &Path, lock: &Path) -> Result<File> {
    let io = |e: std::io::Error| Error::io(lock, e);
    if let Some(dir) = lock.parent() {
        if !dir.exists() {
            std::fs::create_dir_all(dir).map_err(io)?;
            set_mode(dir, 0o777);
        }
    }
    let created = !lock.exists();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock)
        .map_err(io)?;
    if created {
        // As MIOpen creates it: every user may lock it.
        set_mode(lock, 0o666);
    }
    match try_lock(&file) {
        Ok(true) => Ok(file),
        Ok(false) => Err(Error::io(
            db_file,
            std::io::Error::other(format!(
                "MIOpen's lock on this file ({}) is held by another process (a running MIOpen \
                 program, or another tuneinfer userdb) and was not released in time; nothing was \
                 written: try again when it has finished",
                lock.display()
            )),
        )),
        Err(e) => Err(io(e)),
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) {}

/// A non-blocking exclusive `fcntl` lock over the whole file: Ok(false) when another process
/// holds a conflicting one.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: `flock` is a plain C struct for which all-zero is a valid value; fcntl reads it
    // and the descriptor is open for the duration of the call.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = libc::F_WRLCK as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    request.l_start = 0;
    request.l_len = 0;
    // SAFETY: as above; F_SETLK with a valid flock pointer.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &request) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(code) if code == libc::EAGAIN || code == libc::EACCES => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(unix))]
fn try_lock(file: &File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}
