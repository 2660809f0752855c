//! File formats: frugally-deep JSON models (MIOpen's KernelTuningNet files) and their metadata,
//! safetensors, and tuneinfer's own weights (safetensors + a metadata JSON).

pub mod base64;
pub mod bundle;
pub mod frugally;
pub mod md5;
pub mod metadata;
pub mod safetensors;
pub mod sha256;

use std::path::Path;

use crate::error::{Error, Result};

/// Reads a text file (JSON, TSV). A file that cannot be read is an I/O error; one that is not
/// UTF-8 text (a binary file given by mistake) is a format error naming it.
/// Largest size (steps, units, embedding width, vocabulary, positions) a model file may give
/// (tuneinfer's weights and MIOpen's frugally-deep graphs alike).
pub const MAX_MODEL_SIZE: usize = 4096;

pub fn read_text(path: &Path) -> Result<String> {
    let bytes = bundle::read(path).map_err(|e| Error::io(path, e))?.into_owned();
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

/// True when `bytes` start like a bzip2 stream: `BZh` and a block size digit 1-9.
pub fn is_bzip2(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && &bytes[..3] == b"BZh" && (b'1'..=b'9').contains(&bytes[3])
}

/// Decompresses a bzip2 file's bytes: every stream of a multi-stream file, as `bzcat` reads it.
pub fn bunzip2(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::with_capacity(bytes.len() * 8);
    bzip2::read::MultiBzDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

/// Reads a text file that may be bzip2-compressed (MIOpen ships its text perf databases as
/// `*.db.txt.bz2`): decompressed when it starts like a bzip2 stream (`BZh` and a block-size
/// digit), else read as is. Errors as [`read_text`], or a format error for a damaged stream.
pub fn read_text_or_bzip2(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let bytes = if is_bzip2(&bytes) {
        bunzip2(&bytes)
            .map_err(|e| Error::format(path.display().to_string(), format!("not a readable bzip2 file: {e}")))?
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|e| {
        Error::format(
            path.display().to_string(),
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
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
    use std::io::Write;
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes).map_err(|e| file.error(e))?;
    file.commit()
}

/// A file being written as [`write_file_atomic`] writes one, a piece at a time: created (its
/// directory checked) before anything is computed, committed (synced, renamed into place) at
/// the end; dropped uncommitted, it removes its temporary file and leaves the old file as it was.
pub struct AtomicFile {
    /// The path the user gave (named in errors).
    path: std::path::PathBuf,
    /// Where the file lands.
    target: std::path::PathBuf,
    /// The temporary sibling (None when writing in place).
    tmp: Option<std::path::PathBuf>,
    file: Option<std::io::BufWriter<std::fs::File>>,
    permissions: Option<std::fs::Permissions>,
}

impl AtomicFile {
    /// Resolves links, checks that the directory exists and opens the temporary file (or, for a
    /// device or other non-regular file, the file itself for appending).
    pub fn create(path: &Path) -> Result<AtomicFile> {
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
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(&target)
                .map_err(|e| Error::io(path, e))?;
            return Ok(AtomicFile {
                path: path.to_path_buf(),
                target,
                tmp: None,
                file: Some(std::io::BufWriter::new(f)),
                permissions: None,
            });
        }
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(Error::io(path, std::io::Error::other("is a directory")));
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(Error::io(
                path,
                std::io::Error::other(format!("directory {} does not exist", dir.display())),
            ));
        }
        let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("output");
        let tmp = target.with_file_name(format!(".{name}.{}.tmp-write", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        remove_stale_temps(&dir, &format!(".{name}."), ".tmp-write");
        // create_new: never follow a link someone left at the temporary name.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| {
                Error::io(
                    path,
                    std::io::Error::new(e.kind(), format!("cannot create a file in {}: {e}", dir.display())),
                )
            })?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            target,
            tmp: Some(tmp),
            file: Some(std::io::BufWriter::new(f)),
            permissions: existing.map(|m| m.permissions()),
        })
    }

    /// An I/O error of this file, naming the path the user gave.
    pub fn error(&self, e: std::io::Error) -> Error {
        Error::io(&self.path, e)
    }

    /// Syncs and renames the file into place.
    pub fn commit(mut self) -> Result<()> {
        let Some(writer) = self.file.take() else {
            return Ok(());
        };
        let file = writer.into_inner().map_err(|e| Error::io(&self.path, e.into_error()))?;
        let Some(tmp) = self.tmp.clone() else {
            return Ok(());
        };
        let done = file
            .sync_all()
            .and_then(|_| match &self.permissions {
                Some(p) => file.set_permissions(p.clone()),
                None => Ok(()),
            })
            .and_then(|_| std::fs::rename(&tmp, &self.target));
        done.map_err(|e| Error::io(&self.path, e))?;
        self.tmp = None;
        Ok(())
    }
}

impl std::io::Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.file = None;
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Removes the temporary files `{prefix}{pid}{suffix}` in `dir` that a process which no longer
/// runs left behind (killed between writing and renaming): a later write of the same file
/// cleans up after it. Files of running processes are left alone.
pub fn remove_stale_temps(dir: &Path, prefix: &str, suffix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(suffix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_runs(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Does a process with this id run (or exist, as far as this user can tell)?
#[cfg(unix)]
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 only checks that the process exists; no signal is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_runs(_pid: u32) -> bool {
    true
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
