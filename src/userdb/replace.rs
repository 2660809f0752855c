//! Replacing a file so that a failure at any point leaves the previous file as it was and no
//! temporary file behind: the new content goes to a temporary sibling, is synced, gets the old
//! file's permissions, the old file is kept as `{path}.bak`, and a rename puts the new one in
//! place.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Replaces `path` with what `build` writes to the temporary file it is given (which does not
/// exist when `build` starts). Returns the backup of the previous version, if there was one.
pub fn replace_file(path: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<Option<PathBuf>> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("userdb");
    let tmp = dir.join(format!(".{name}.{}.tuneinfer-tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    crate::format::remove_stale_temps(&dir, &format!(".{name}."), ".tuneinfer-tmp");
    let old = std::fs::metadata(path).ok();
    let result = (|| -> Result<Option<PathBuf>> {
        build(&tmp)?;
        if let Some(m) = &old {
            std::fs::set_permissions(&tmp, m.permissions()).map_err(|e| Error::io(&tmp, e))?;
        }
        let backup = match old {
            Some(_) => Some(keep_backup(path)?),
            None => None,
        };
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        // The rename itself reaches the disk with the directory.
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(backup)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Keeps the current `path` as `{path}.bak` (a hard link where the file system allows, else a
/// copy), itself replaced atomically.
fn keep_backup(path: &Path) -> Result<PathBuf> {
    let backup = super::backup_path(path);
    let mut staging = backup.clone().into_os_string();
    staging.push(format!(".{}.tmp", std::process::id()));
    let staging = PathBuf::from(staging);
    let _ = std::fs::remove_file(&staging);
    let staged = std::fs::hard_link(path, &staging)
        .or_else(|_| std::fs::copy(path, &staging).map(|_| ()))
        .and_then(|_| std::fs::rename(&staging, &backup));
    if let Err(e) = staged {
        let _ = std::fs::remove_file(&staging);
        return Err(Error::io(&backup, e));
    }
    Ok(backup)
}

/// Writes `bytes` to a new file at `path` and syncs it.
pub fn write_all_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |e: std::io::Error| Error::io(path, e);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)
}

/// Syncs the file at `path` to disk.
pub fn sync_file(path: &Path) -> Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(path, e))
}
