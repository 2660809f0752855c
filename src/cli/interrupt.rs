//! Ctrl-C (SIGINT) for `userdb`: before the database is written, the process ends at once
//! (nothing is on disk yet: no temporary file, no lock); while it is written, the signal is
//! noted and the write finishes (the temporary file renamed into place or removed, the `.time`
//! file updated), then the command ends with exit code 130. A database is never left without
//! its `.time`, nor a `.tuneinfer-tmp` file behind.

use std::sync::atomic::{AtomicBool, Ordering};

/// The database is being written: a SIGINT is noted, not acted on.
static WRITING: AtomicBool = AtomicBool::new(false);
/// A SIGINT came while writing.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit code of a command ended by SIGINT (128 + 2, as a shell reports it).
pub(super) const EXIT_INTERRUPTED: i32 = 130;

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    if WRITING.load(Ordering::SeqCst) {
        INTERRUPTED.store(true, Ordering::SeqCst);
        const MSG: &[u8] = b"\ninterrupted: finishing the database write first (a few seconds at most)\n";
        // SAFETY: write(2) and a static buffer are async-signal-safe.
        unsafe { libc::write(2, MSG.as_ptr().cast(), MSG.len()) };
    } else {
        const MSG: &[u8] = b"\ninterrupted: nothing written; the database is as it was\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe; nothing needs cleaning up
        // before the write phase (no temporary file, no lock held).
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(EXIT_INTERRUPTED);
        }
    }
}

/// Installs the SIGINT handler (once per process; later calls do nothing new).
pub(super) fn install() {
    #[cfg(unix)]
    {
        // SAFETY: a zeroed sigaction with a handler of the right signature and an empty mask;
        // SA_RESTART so that the write's system calls are not cut short.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        }
    }
}

/// Runs `write` with SIGINT deferred; returns its result and whether a SIGINT came meanwhile.
pub(super) fn while_writing<T>(write: impl FnOnce() -> T) -> (T, bool) {
    WRITING.store(true, Ordering::SeqCst);
    let out = write();
    WRITING.store(false, Ordering::SeqCst);
    (out, INTERRUPTED.load(Ordering::SeqCst))
}
