//! The `tuneinfer` binary: see `tuneinfer --help`.

fn main() {
    restore_default_sigpipe();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tuneinfer::cli::run(&argv));
}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`tuneinfer info | head -1`) would panic
/// in `println!`. A command-line tool should instead end quietly, as `cat` does.
#[cfg(unix)]
fn restore_default_sigpipe() {
    const SIGPIPE: i32 = 13; // the same on Linux and the BSDs/macOS
    const SIG_DFL: usize = 0;
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    // SAFETY: called once at start-up before any thread exists; SIG_DFL is a valid disposition.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_default_sigpipe() {}
