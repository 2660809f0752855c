//! The `tuneinfer` binary: see `tuneinfer --help`.

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tuneinfer::cli::run(&argv));
}
