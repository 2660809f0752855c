//! Files built into tuneinfer: the models of `weights/` carried inside the binary (and inside
//! the library with the feature `bundled`), read as if they were in a directory named
//! [`ROOT`] (`(built in)`). Every reader of model files goes through [`read`], [`is_file`] and
//! [`file_names`], which look in the bundle for a path under [`ROOT`] and in the file system for
//! any other, so a model search that lists [`ROOT`] among its directories finds the built-in
//! models exactly as it finds files.
//!
//! The binary registers its bundle at start-up ([`register`]); the library with the feature
//! `bundled` has its own. Nothing here knows what a model is.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One built-in file: its name and bytes.
pub type BundledFile = (&'static str, &'static [u8]);

/// The directory name the built-in files are read under (no such directory exists).
pub const ROOT: &str = crate::error::BUILT_IN_DIR;

static REGISTERED: OnceLock<&'static [BundledFile]> = OnceLock::new();

#[cfg(feature = "bundled")]
static OWN: &[BundledFile] = include!(concat!(env!("OUT_DIR"), "/bundled_models.rs"));

/// Makes `files` the built-in files (the binary's, at start-up). The first registration stays;
/// the library's own bundle (feature `bundled`) is used where none is registered.
pub fn register(files: &'static [BundledFile]) {
    let _ = REGISTERED.set(files);
}

/// The built-in files: the registered ones, else the library's own (feature `bundled`), else none.
pub fn files() -> &'static [BundledFile] {
    if let Some(f) = REGISTERED.get() {
        return f;
    }
    #[cfg(feature = "bundled")]
    {
        OWN
    }
    #[cfg(not(feature = "bundled"))]
    {
        &[]
    }
}

/// The built-in directory as a path ([`ROOT`]), when any file is built in.
pub fn dir() -> Option<PathBuf> {
    (!files().is_empty()).then(|| PathBuf::from(ROOT))
}

/// The name under [`ROOT`] of `path`, when `path` is a built-in file's path.
fn bundled_name(path: &Path) -> Option<&str> {
    let rest = path.strip_prefix(ROOT).ok()?;
    let name = rest.to_str()?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// Is `path` under [`ROOT`] (so never read from the file system)?
pub fn is_bundled_path(path: &Path) -> bool {
    path.starts_with(ROOT)
}

fn lookup(name: &str) -> Option<&'static [u8]> {
    files().iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// The bytes of `path`: a built-in file's (borrowed) or the file system's.
pub fn read(path: &Path) -> std::io::Result<Cow<'static, [u8]>> {
    if is_bundled_path(path) {
        return bundled_name(path)
            .and_then(lookup)
            .map(Cow::Borrowed)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file built into tuneinfer"));
    }
    std::fs::read(path).map(Cow::Owned)
}

/// Is `path` a file (built in, or in the file system)?
pub fn is_file(path: &Path) -> bool {
    if is_bundled_path(path) {
        return bundled_name(path).and_then(lookup).is_some();
    }
    path.is_file()
}

/// Does `path` exist (a built-in file, or anything in the file system)?
pub fn exists(path: &Path) -> bool {
    if is_bundled_path(path) {
        return is_file(path);
    }
    path.exists()
}

/// The names of the entries of `dir` (the built-in files for [`ROOT`]), unsorted; None when
/// `dir` cannot be listed.
pub fn file_names(dir: &Path) -> Option<Vec<String>> {
    if is_bundled_path(dir) {
        return (dir == Path::new(ROOT)).then(|| files().iter().map(|(n, _)| n.to_string()).collect());
    }
    let entries = std::fs::read_dir(dir).ok()?;
    Some(
        entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_root_never_touch_the_file_system() {
        // Without a registered bundle (the library's tests, feature `bundled` off) nothing is
        // built in, and a built-in path reads as missing, whatever the working directory holds.
        if files().is_empty() {
            assert!(dir().is_none());
            assert!(!is_file(&Path::new(ROOT).join("gfx906_ConvAsm1x1U.json")));
            assert!(read(&Path::new(ROOT).join("x.json")).is_err());
        }
        assert!(bundled_name(Path::new("(built in)/a.json")) == Some("a.json"));
        assert!(bundled_name(Path::new("(built in)")).is_none());
        assert!(bundled_name(Path::new("weights/a.json")).is_none());
        assert_eq!(file_names(Path::new("(built in)/sub")), None);
    }
}
