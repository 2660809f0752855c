//! The `tuneinfer` binary: see `tuneinfer --help`.

/// The models of `weights/`, carried inside the binary (build.rs lists them), so that an installed
/// or copied binary answers with no source tree beside it. With the feature `bundled` the library
/// carries them itself.
#[cfg(not(feature = "bundled"))]
static MODELS: &[tuneinfer::format::bundle::BundledFile] = include!(concat!(env!("OUT_DIR"), "/bundled_models.rs"));

fn main() {
    restore_default_sigpipe();
    #[cfg(not(feature = "bundled"))]
    tuneinfer::format::bundle::register(MODELS);
    // Arguments that are not UTF-8 are a usage error, not a panic in `std::env::args`.
    let mut argv = Vec::new();
    for (i, arg) in std::env::args_os().skip(1).enumerate() {
        match arg.into_string() {
            Ok(a) => argv.push(a),
            Err(bad) => {
                eprintln!("error: argument {} is not UTF-8 text: {}", i + 1, bad.to_string_lossy());
                std::process::exit(2);
            }
        }
    }
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
