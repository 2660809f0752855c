//! File formats: frugally-deep JSON models (MIOpen's KernelTuningNet files) and their metadata,
//! safetensors, and tuneinfer's own weights (safetensors + a metadata JSON).

pub mod base64;
pub mod frugally;
pub mod metadata;
pub mod safetensors;
pub mod sha256;
pub mod weights;

use std::path::Path;

use crate::error::{Error, Result};

/// Reads a text file (JSON, TSV). A file that cannot be read is an I/O error; one that is not
/// UTF-8 text (a binary file given by mistake) is a format error naming it.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        Error::format(
            path.display().to_string(),
            format!(
                "not UTF-8 text (byte {}): expected a text file",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Writes `bytes` to `path` so an interrupted run never leaves a half-written file where a good
/// one was: into a temporary sibling, then renamed into place. A link is followed (its target
/// is replaced, the link stays); a path that is not a regular file (`/dev/null`, a pipe) is
/// written in place, since renaming over it would replace the device.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if std::fs::metadata(&target).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return std::fs::write(&target, bytes).map_err(|e| Error::io(path, e));
    }
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    let tmp = target.with_file_name(format!(".{name}.tmp-write"));
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, &target).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Creates `dir` and its parents; a path in the way that is not a directory is named as such
/// (the OS only says "File exists").
pub fn create_dir(dir: &Path) -> Result<()> {
    for ancestor in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        if ancestor.exists() && !ancestor.is_dir() {
            return Err(Error::io(
                ancestor,
                std::io::Error::other(format!("is a file, not a directory (needed for {})", dir.display())),
            ));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_the_way_of_a_directory_is_named() {
        let base = std::env::temp_dir().join(format!("tuneinfer-create-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let file = base.join("plain.txt");
        std::fs::write(&file, "x").unwrap();
        let e = create_dir(&file.join("sub")).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(
            e.to_string().contains("plain.txt") && e.to_string().contains("not a directory"),
            "{e}"
        );
        create_dir(&base.join("a/b")).unwrap();
        assert!(base.join("a/b").is_dir());
        let _ = std::fs::remove_dir_all(&base);
    }
}
