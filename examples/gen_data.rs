//! Writes (or checks) the run-time data tuneinfer ships: the kernel catalogues under
//! `src/solvers/gtc_nhwc/data/` and `src/solvers/ck/data/`, from MIOpen's data beside the
//! checkout (`../shared/miopen`, or the folder given). Run through `tools/gen_data.sh`.
//!
//! ```sh
//! cargo run --release --example gen_data -- [--check] [MIOPEN_DATA_DIR]
//! ```
//!
//! `--check` writes nothing and exits 1 when a shipped file differs from what would be written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tuneinfer::data::textdb::read_text;
use tuneinfer::solvers::ck::index::{tuned_only_text, CkIndex};

/// (source under the data folder, destination under the checkout): copied byte for byte.
const COPIED: [(&str, &str); 9] = [
    ("solvers/gtc_fwd_nhwc.tsv", "src/solvers/gtc_nhwc/data/gtc_fwd_nhwc.tsv"),
    ("solvers/gtc_bwd_nhwc.tsv", "src/solvers/gtc_nhwc/data/gtc_bwd_nhwc.tsv"),
    ("solvers/gtc_wrw_nhwc.tsv", "src/solvers/gtc_nhwc/data/gtc_wrw_nhwc.tsv"),
    ("ck/fwd_f32.tsv", "src/solvers/ck/data/fwd_f32.tsv"),
    ("ck/fwd_f16.tsv", "src/solvers/ck/data/fwd_f16.tsv"),
    ("ck/bwd_f32.tsv", "src/solvers/ck/data/bwd_f32.tsv"),
    ("ck/bwd_f16.tsv", "src/solvers/ck/data/bwd_f16.tsv"),
    ("ck/wrw_f32.tsv", "src/solvers/ck/data/wrw_f32.tsv"),
    ("ck/wrw_f16.tsv", "src/solvers/ck/data/wrw_f16.tsv"),
];

/// Where the instances only MIOpen 3.5.1's tuned rows name are written.
const TUNED_ONLY: &str = "src/solvers/ck/data/miopen351_instances.tsv";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let data = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/miopen"));
    match run(&root, &data, check) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(n) => {
            eprintln!(
                "{n} file(s) differ from what {} gives: run tools/gen_data.sh",
                data.display()
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Writes or checks every file; returns how many differ (check) or were changed (write).
fn run(root: &Path, data: &Path, check: bool) -> Result<usize, String> {
    let mut outputs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for (src, dst) in COPIED {
        let from = data.join(src);
        let bytes = std::fs::read(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        outputs.push((root.join(dst), bytes));
    }
    let index = CkIndex::build(data, &read_text).map_err(|e| e.to_string())?;
    if !index.missing.is_empty() {
        return Err(format!("MIOpen 3.5.1's databases are missing: {:?}", index.missing));
    }
    outputs.push((root.join(TUNED_ONLY), tuned_only_text(&index).into_bytes()));
    let mut differ = 0;
    for (path, bytes) in outputs {
        let same = std::fs::read(&path).is_ok_and(|old| old == bytes);
        if same {
            continue;
        }
        differ += 1;
        if check {
            eprintln!("differs: {}", path.display());
        } else {
            std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!("wrote {} ({} bytes)", path.display(), bytes.len());
        }
    }
    Ok(if check { differ } else { 0 })
}
