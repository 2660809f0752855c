//! File formats: frugally-deep JSON models (MIOpen's KernelTuningNet files) and their metadata,
//! safetensors, and tuneinfer's own weights (safetensors + a metadata JSON).

pub mod base64;
pub mod frugally;
pub mod md5;
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
/// one was: into a new temporary sibling, then renamed into place (keeping the old file's
/// permissions). A link is followed (its target is replaced, the link stays, even when the
/// target does not exist yet). Paths under `/dev` and `/proc` (`/dev/stdout`, `/dev/null`, a
/// pipe) and anything that is not a regular file are appended to in place, since renaming over
/// them (or truncating them) would replace the device or the file behind a redirection.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let in_place = |p: &Path| p.starts_with("/dev") || p.starts_with("/proc");
    let mut target = path.to_path_buf();
    // Follow links by hand (a dangling one too); give up after a few hops like the OS would.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = std::fs::read_link(&target).map_err(|e| Error::io(path, e))?;
                target = match target.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
                if in_place(&target) {
                    break;
                }
            }
            _ => break,
        }
    }
    let existing = std::fs::metadata(&target).ok();
    if in_place(path) || in_place(&target) || existing.as_ref().is_some_and(|m| !m.is_file() && !m.is_dir()) {
        // Append, never truncate: `/dev/stdout` may reopen the file behind a `>>` redirection.
        use std::io::Write;
        return std::fs::OpenOptions::new()
            .append(true)
            .open(&target)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| Error::io(path, e));
    }
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    let tmp = target.with_file_name(format!(".{name}.{}.tmp-write", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        use std::io::Write;
        // create_new: never follow a link someone left at the temporary name.
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Some(m) = &existing {
            f.set_permissions(m.permissions())?;
        }
        Ok(())
    })();
    let renamed = written
        .map_err(|e| Error::io(&tmp, e))
        .and_then(|_| std::fs::rename(&tmp, &target).map_err(|e| Error::io(path, e)));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
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
