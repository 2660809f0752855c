//! MIOpen's text perf-db format: one problem per line, `KEY=Solver:params;Solver:params`,
//! where KEY is a perf-db key (`1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F`, the
//! 2019 files) or the 24-field key of current MIOpen (`2x1024x14x14x1x1x1x1x...xNCHWxFP32xF`,
//! user databases). As MIOpen does, the first entry of a solver in a line counts.

use std::path::Path;

use super::perfdb::{SolverRows, TunedRow};
use crate::error::{Error, Result};
use crate::problem::ConvProblem;

/// Every row of `solver` in the text `content`; malformed lines are listed in `rejected` with
/// their 1-based line number as the id. Blank lines and `#` comments are skipped.
pub fn solver_rows_from_text(content: &str, solver: &str) -> SolverRows {
    let mut out = SolverRows::default();
    for (i, line) in content.lines().enumerate() {
        let line_no = i as i64 + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, entries)) = line.split_once('=') else {
            out.rejected.push((line_no, "no '=' between key and entries".into()));
            continue;
        };
        let mut params = None;
        let mut bad = None;
        for entry in entries.split(';').filter(|e| !e.trim().is_empty()) {
            match entry.split_once(':') {
                Some((name, p)) if name.trim() == solver && params.is_none() => params = Some(p.trim().to_string()),
                Some(_) => {}
                None => bad = Some(format!("entry '{entry}' has no ':' between solver and params")),
            }
        }
        if let Some(why) = bad {
            out.rejected.push((line_no, why));
            continue;
        }
        let Some(params) = params else { continue };
        let parsed = if key.contains('-') {
            ConvProblem::from_perfdb_key(key)
        } else {
            ConvProblem::from_db_key(key)
        };
        match parsed {
            Ok(problem) => out.rows.push(TunedRow {
                config_id: line_no,
                problem,
                params,
            }),
            Err(e) => out.rejected.push((line_no, e.to_string())),
        }
    }
    out
}

/// Reads a text perf-db file: plain (`.db.txt`, `.udb.txt`, the 2019 `.cd.pdb.txt`) or
/// bzip2-compressed (`.db.txt.bz2`, the form MIOpen keeps in its source tree), told apart by the
/// bzip2 magic `BZh`, not by the name.
pub fn solver_rows(path: &Path, solver: &str) -> Result<SolverRows> {
    let text = read_text(path)?;
    Ok(solver_rows_from_text(&text, solver))
}

/// The whole text of a text perf db, decompressed when it is bzip2 (every stream of a
/// multi-stream file, as `bzcat` reads it).
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let bytes = if is_bzip2(&bytes) {
        crate::format::bunzip2(&bytes).map_err(|e| Error::Database {
            path: path.display().to_string(),
            detail: format!("not a readable bzip2 file: {e}"),
        })?
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|_| Error::Database {
        path: path.display().to_string(),
        detail: "neither a sqlite database nor UTF-8 text (plain or bzip2)".into(),
    })
}

pub use crate::format::is_bzip2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_rejects_bad_ones() {
        let text = "# comment\n\
            1024-14-14-1x1-2048-14-14-128-0x0-1x1-1x1-0-NCHW-FP32-F=ConvAsm1x1U:4,8,4,16,1,4,1,8;ConvOclDirectFwd1x1:1,2\n\
            garbage line\n\
            64-7-7-1x1-64-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F=ConvOclDirectFwd1x1:1\n\
            1-1-1=ConvAsm1x1U:1,2\n";
        let rows = solver_rows_from_text(text, "ConvAsm1x1U");
        assert_eq!(rows.rows.len(), 1);
        assert_eq!(rows.rows[0].params, "4,8,4,16,1,4,1,8");
        assert_eq!(rows.rows[0].problem.c, 1024);
        assert_eq!(rows.rejected.len(), 2);
        assert_eq!(rows.rejected[0].0, 3);
        assert_eq!(rows.rejected[1].0, 5);
    }

    #[test]
    fn bzip2_files_read_like_plain_ones() {
        use std::io::Write;
        let text = "2x64x56x56x1x1x1x1x256x32x0x0x0x1x1x0x1x1x0x0x1xNCHWxBF16xF=ConvAsm1x1U:1,8,2,32,1,4,4,1\n";
        let dir = std::env::temp_dir().join(format!("tuneinfer-bz2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plain = dir.join("a.db.txt");
        let packed = dir.join("a.db.txt.bz2");
        std::fs::write(&plain, text).unwrap();
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        enc.write_all(text.as_bytes()).unwrap();
        let bytes = enc.finish().unwrap();
        assert!(is_bzip2(&bytes));
        std::fs::write(&packed, &bytes).unwrap();
        assert_eq!(read_text(&packed).unwrap(), text);
        assert_eq!(
            solver_rows(&packed, "ConvAsm1x1U").unwrap().rows,
            solver_rows(&plain, "ConvAsm1x1U").unwrap().rows
        );
        // A truncated bzip2 file is an error naming the file, not a panic or an empty db.
        std::fs::write(&packed, &bytes[..bytes.len() / 2]).unwrap();
        let err = read_text(&packed).unwrap_err().to_string();
        assert!(err.contains("a.db.txt.bz2"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
