//! The user database's name and directory are exactly MIOpen's.
//!
//! Goldens hand-derived from MIOpen's source: `CMakeLists.txt` (`MIOPEN_USER_DB_SUFFIX`:
//! `${MIOPEN_BACKEND}.${MAJOR}_${MINOR}_${PATCH}_${TWEAK}` in a release build, no `_${TWEAK}`
//! in a developer one), `include/miopen/version.h.in`, `include/miopen/config.h.in`,
//! `src/find_db.cpp` (`GetUserPath`: `{basename}.{suffix}[.{path_suffix}].ufdb.txt`, the
//! fusion one `.fusion.ufdb.txt`), `src/target_properties.cpp` (`InitDbId`: `_xnack` when
//! the raw device name has `:xnack+`), `src/include/miopen/handle.hpp` (`GetDbBasename`: the
//! CU count after `_` up to 64, in hex with no `_` above: 228 = e4, 110 = 6e),
//! `src/db_path.cpp.in` (`PrepareUserDbPath`) and `src/expanduser.cpp` (`GetHomeDir`,
//! `IsNetworkedFilesystem`: NFS 0x6969, Lustre 0x0BD00BD0, Ceph 0x00c36400, SMB 0x517b, AFS
//! 0x5346414f, ...).

#[allow(unused_imports)]
use crate::common;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tuneinfer::userdb::naming::{self, DirEnv};
use tuneinfer::userdb::{self, Format};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tuneinfer-names-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"").unwrap();
}

#[test]
fn the_suffix_is_taken_from_miopens_find_database_in_the_directory() {
    let dir = temp_dir("ufdb");
    // What a user who never tuned has after running the network once: the find databases.
    touch(&dir.join("gfx942130.HIP.3_2_0_36bb7fd4a-dirty.ufdb.txt"));
    touch(&dir.join("gfx942130.HIP.3_2_0_36bb7fd4a-dirty.fusion.ufdb.txt"));
    // Another GPU's and other files are no evidence.
    touch(&dir.join("gfx90a68.HIP.3_1_0_aaaaaaa.ufdb.txt"));
    touch(&dir.join("gfx942130.HIP.3_2_0_36bb7fd4a-dirty.udb.txt.bak"));
    touch(&dir.join("gfx942130_1.1.0.udb"));
    assert_eq!(
        userdb::existing_suffixes(&dir, "gfx942130").unwrap(),
        ["HIP.3_2_0_36bb7fd4a-dirty"]
    );
    let found = naming::resolve_suffix(None, &dir, "gfx942130", &[]).unwrap();
    assert_eq!(found.suffix, "HIP.3_2_0_36bb7fd4a-dirty");
    // An empty tweak (a build without git) and a perf db of the same suffix: one suffix.
    let dir2 = temp_dir("ufdb-empty-tweak");
    touch(&dir2.join("gfx1030_20.HIP.3_2_0_.ufdb.txt"));
    touch(&dir2.join("gfx1030_20.HIP.3_2_0_.udb.txt"));
    assert_eq!(
        naming::resolve_suffix(None, &dir2, "gfx1030_20", &[]).unwrap().suffix,
        "HIP.3_2_0_"
    );
    // A --miopen-version other than the directory's: taken, with a note saying so.
    let given = naming::resolve_suffix(Some("HIP.3_3_0_4f7e1c2"), &dir2, "gfx1030_20", &[]).unwrap();
    assert_eq!(given.suffix, "HIP.3_3_0_4f7e1c2");
    assert!(given.note.is_some_and(|n| n.contains("HIP.3_2_0_")));
    let given = naming::resolve_suffix(Some("HIP.3_2_0_"), &dir2, "gfx1030_20", &[]).unwrap();
    assert_eq!(given.note, None);
    // Two MIOpen versions' files and no installed MIOpen to choose: an error naming both.
    touch(&dir2.join("gfx1030_20.HIP.3_3_0_4f7e1c2.ufdb.txt"));
    let e = naming::resolve_suffix(None, &dir2, "gfx1030_20", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("HIP.3_2_0_") && e.contains("HIP.3_3_0_4f7e1c2"), "{e}");
    // ... unless the installed MIOpen's suffix is one of them.
    let rocm = temp_dir("ufdb-rocm");
    write_headers(&rocm, "3", "3", "0", "4f7e1c2", None);
    assert_eq!(
        naming::resolve_suffix(None, &dir2, "gfx1030_20", std::slice::from_ref(&rocm))
            .unwrap()
            .suffix,
        "HIP.3_3_0_4f7e1c2"
    );
    for d in [dir, dir2, rocm] {
        let _ = std::fs::remove_dir_all(d);
    }
}

fn write_headers(root: &Path, major: &str, minor: &str, patch: &str, tweak: &str, config: Option<&str>) {
    let inc = root.join("include/miopen");
    std::fs::create_dir_all(&inc).unwrap();
    // version.h.in as CMake configures it (`@MIOpen_VERSION_TWEAK@` may be empty).
    std::fs::write(
        inc.join("version.h"),
        format!(
            "#ifndef MIOPEN_VERSION_H_\n#define MIOPEN_VERSION_H_\n\n// clang-format off\n\
             #define MIOPEN_VERSION_MAJOR {major}\n#define MIOPEN_VERSION_MINOR {minor}\n\
             #define MIOPEN_VERSION_PATCH {patch}\n#define MIOPEN_VERSION_TWEAK {tweak}\n\
             // clang-format on\n\n#endif\n"
        ),
    )
    .unwrap();
    if let Some(c) = config {
        std::fs::write(inc.join("config.h"), c).unwrap();
    }
}

#[test]
fn the_suffix_of_the_installed_miopen_from_its_headers_or_its_library() {
    let root = temp_dir("rocm");
    write_headers(&root, "3", "2", "0", "36bb7fd4a-dirty", None);
    assert_eq!(
        naming::installed_suffix(&root).map(|(s, _)| s).as_deref(),
        Some("HIP.3_2_0_36bb7fd4a-dirty")
    );
    // `#cmakedefine01`: an OpenCL build; a developer build has no tweak; an empty tweak.
    write_headers(
        &root,
        "3",
        "2",
        "0",
        "",
        Some("#define MIOPEN_BACKEND_OPENCL 1\n#define MIOPEN_BACKEND_HIP 0\n#define MIOPEN_BUILD_DEV 0\n"),
    );
    assert_eq!(naming::installed_suffix(&root).unwrap().0, "OpenCL.3_2_0_");
    write_headers(
        &root,
        "3",
        "2",
        "0",
        "36bb7fd4a",
        Some("#define MIOPEN_BACKEND_OPENCL 0\n#define MIOPEN_BACKEND_HIP 1\n#define MIOPEN_BUILD_DEV 1\n"),
    );
    assert_eq!(naming::installed_suffix(&root).unwrap().0, "HIP.3_2_0");
    // No headers (a runtime-only install): the library's string literal.
    std::fs::remove_dir_all(root.join("include")).unwrap();
    let mut lib = b"\x7fELF junk\0HIP\0HIP.\0%s.%s\0".to_vec();
    lib.extend(std::iter::repeat_n(7u8, 20 << 20)); // past the first read
    lib.extend(b"\0HIP.3_2_0_36bb7fd4a-dirty\0more\0");
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::write(root.join("lib/libMIOpen.so"), &lib).unwrap();
    let (suffix, from) = naming::installed_suffix(&root).unwrap();
    assert_eq!(
        (suffix.as_str(), from),
        ("HIP.3_2_0_36bb7fd4a-dirty", root.join("lib/libMIOpen.so"))
    );
    // The installed MIOpen names the file when the directory has none.
    let dir = temp_dir("rocm-empty-out");
    let found =
        naming::resolve_suffix(None, &dir, "gfx906_60", &[PathBuf::from("/nonexistent"), root.clone()]).unwrap();
    assert_eq!(found.suffix, "HIP.3_2_0_36bb7fd4a-dirty");
    // Nothing anywhere: an error that says what to give and how to find it.
    let e = naming::resolve_suffix(None, &dir, "gfx906_60", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--miopen-version") && e.contains("MIOPEN_LOG_LEVEL=6"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn miopen_version_takes_whole_suffixes_and_refuses_a_bare_version_saying_why() {
    for whole in [
        "HIP.3_2_0_36bb7fd4a-dirty",
        "HIP.3_2_0_",
        "HIP.3_2_0",
        "HIP.3_2_0_0",
        "OpenCL.2_19_0_abc",
    ] {
        assert_eq!(userdb::suffix_from_version(whole, "gfx942130").unwrap(), whole);
    }
    let e = userdb::suffix_from_version("3.2.0", "gfx942130")
        .unwrap_err()
        .to_string();
    for needle in [
        "tweak",
        "HIP.3_2_0_36bb7fd4a-dirty",
        "MIOPEN_LOG_LEVEL=6",
        "gfx942130.",
        ".ufdb.txt",
    ] {
        assert!(e.contains(needle), "{needle}: {e}");
    }
    for bad in [
        "3_2_0",
        "HIP.",
        "HIP.3_2",
        "HIP.3_2_0_a/b",
        "../x",
        "HIP.3_2_0_..",
        "CUDA.3_2_0_",
    ] {
        assert!(userdb::suffix_from_version(bad, "gfx906_60").is_err(), "{bad}");
    }
    assert_eq!(
        userdb::file_name("gfx942130", Format::Text, "HIP.3_2_0_36bb7fd4a-dirty"),
        "gfx942130.HIP.3_2_0_36bb7fd4a-dirty.udb.txt"
    );
}

#[test]
fn xnack_db_ids_name_the_file_and_the_plain_arch_names_the_models() {
    let cases = [
        ("gfx942_xnacke4", "gfx942_xnack", "gfx942", Some(228)),
        ("gfx90a_xnack6e", "gfx90a_xnack", "gfx90a", Some(110)),
        ("gfx906_xnack_60", "gfx906_xnack", "gfx906", Some(60)),
        ("gfx942_xnack", "gfx942_xnack", "gfx942", None),
        ("gfx942:sramecc+:xnack+", "gfx942_xnack", "gfx942", None),
        ("gfx90a:sramecc-:xnack+", "gfx90a_xnack", "gfx90a", None),
        ("gfx906:sramecc+:xnack-", "gfx906", "gfx906", None),
        ("gfx942130", "gfx942", "gfx942", Some(304)),
        ("gfx906_60", "gfx906", "gfx906", Some(60)),
    ];
    for (text, db_id, arch, cu) in cases {
        let t = naming::parse_arch(text).unwrap();
        assert_eq!(
            (t.db_id.as_str(), t.arch.as_str(), t.compute_units),
            (db_id, arch, cu),
            "{text}"
        );
        assert_eq!(
            tuneinfer::solvers::split_db_name(text.split(':').next().unwrap()),
            (arch, cu),
            "{text}"
        );
    }
    assert_eq!(userdb::db_basename("gfx942_xnack", 228), "gfx942_xnacke4");
    assert_eq!(userdb::db_basename("gfx90a_xnack", 110), "gfx90a_xnack6e");
    // The solver target of an xnack name is the plain arch's.
    let t = tuneinfer::solvers::Target::new("gfx942_xnacke4");
    assert_eq!((t.arch.as_str(), t.compute_units), ("gfx942", Some(228)));
    assert!(naming::parse_arch("gfx942:banana+").is_err());
}

fn env<'a>(
    user_db_path: Option<&str>,
    home: Option<&str>,
    temp: &Path,
    fs_type: &'a dyn Fn(&Path) -> Option<u64>,
) -> DirEnv<'a> {
    DirEnv {
        user_db_path: user_db_path.map(String::from),
        home: home.map(String::from),
        temp_dir: temp.to_path_buf(),
        fs_type,
    }
}

#[test]
fn the_default_directory_follows_miopens_rules() {
    let local = |_: &Path| Some(0xef53u64); // ext4
    let tmp = Path::new("/scratch/tmp");
    let dir = |e: &DirEnv| naming::user_db_dir(e).path;
    assert_eq!(
        dir(&env(None, Some("/home/u"), tmp, &local)),
        Path::new("/home/u/.config/miopen/")
    );
    // HOME unset, empty or `/`: the temp directory is home.
    for home in [None, Some(""), Some("/")] {
        let d = naming::user_db_dir(&env(None, home, tmp, &local));
        assert_eq!(d.path, Path::new("/scratch/tmp/.config/miopen/"), "{home:?}");
        assert!(d.note.is_some_and(|n| n.contains("HOME")), "{home:?}");
    }
    // A home on a network filesystem: the temp directory itself. The filesystem checked is that
    // of the first existing directory up the path (this one does not exist: `/`).
    let asked = RefCell::new(Vec::new());
    for (magic, name) in [
        (0x6969u64, "NFS"),
        (0x0bd0_0bd0, "Lustre"),
        (0x00c3_6400, "Ceph"),
        (0x517b, "SMB"),
        (0xff53_4d42, "CIFS"),
        (0x5346_414f, "AFS"),
    ] {
        let networked = |p: &Path| {
            asked.borrow_mut().push(p.to_path_buf());
            Some(magic)
        };
        let d = naming::user_db_dir(&env(None, Some("/nonexistent-home/u"), tmp, &networked));
        assert_eq!(d.path, tmp, "{name}");
        assert!(d.note.is_some_and(|n| n.contains(name)), "{name}");
    }
    assert!(
        asked.borrow().iter().all(|p| p == Path::new("/")),
        "{:?}",
        asked.borrow()
    );
    // An existing home is checked itself.
    let home = temp_dir("home");
    let asked = RefCell::new(Vec::new());
    let record = |p: &Path| {
        asked.borrow_mut().push(p.to_path_buf());
        Some(0xef53)
    };
    naming::user_db_dir(&env(None, Some(home.to_str().unwrap()), tmp, &record));
    assert_eq!(*asked.borrow(), std::slice::from_ref(&home));
    // MIOPEN_USER_DB_PATH is taken as it is (every `~` replaced by home), network or not.
    let nfs = |_: &Path| Some(0x6969u64);
    assert_eq!(
        dir(&env(Some("/data/udb"), Some("/home/u"), tmp, &nfs)),
        Path::new("/data/udb")
    );
    assert_eq!(
        dir(&env(Some("~/udb"), Some("/home/u"), tmp, &nfs)),
        Path::new("/home/u/udb")
    );
    assert_eq!(
        dir(&env(Some("~/udb"), Some("/"), tmp, &nfs)),
        Path::new("/scratch/tmp/udb")
    );
    // An empty MIOPEN_USER_DB_PATH is unset.
    assert_eq!(
        dir(&env(Some(""), Some("/home/u"), tmp, &local)),
        Path::new("/home/u/.config/miopen/")
    );
    let _ = std::fs::remove_dir_all(home);
}

#[cfg(target_os = "linux")]
#[test]
fn the_filesystem_type_is_statfs() {
    // PROC_SUPER_MAGIC.
    assert_eq!(naming::statfs_type(Path::new("/proc")), Some(0x9fa0));
    assert_eq!(naming::statfs_type(Path::new("/nonexistent/x")), None);
}

fn userdb_cli(args: &[&str], envs: &[(&str, &Path)], removed: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuneinfer"));
    cmd.arg("userdb")
        .args(args)
        .args(["--device", "cpu", "--dry-run", "--input", "-"])
        .env_remove("TUNEINFER_MODELS")
        .env_remove("MIOPEN_USER_DB_PATH")
        .env("ROCM_PATH", "/nonexistent-rocm")
        .stdin(std::process::Stdio::null());
    for name in removed {
        cmd.env_remove(name);
    }
    for (name, value) in envs {
        cmd.env(name, value);
    }
    cmd.output().expect("run tuneinfer")
}

fn stdout_of(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn userdb_names_the_file_as_miopen_reads_it() {
    let dir = temp_dir("cli");
    let d = dir.to_str().unwrap();
    // The suffix from MIOpen's find database in the directory.
    touch(&dir.join("gfx906_60.HIP.3_2_0_36bb7fd4a-dirty.ufdb.txt"));
    let out = stdout_of(&userdb_cli(&["--arch", "gfx906_60", "--out", d], &[], &[]));
    assert!(out.contains("gfx906_60.HIP.3_2_0_36bb7fd4a-dirty.udb.txt"), "{out}");
    // An xnack device: the file of its db id, gfx942's models (tuneinfer's GTC models of the
    // 304-CU gfx942; MIOpen's per-arch CK models for the 228-CU MI300A).
    let out = stdout_of(&userdb_cli(
        &[
            "--arch",
            "gfx942_xnack130",
            "--out",
            d,
            "--miopen-version",
            "HIP.3_2_0_36bb7fd4a-dirty",
        ],
        &[],
        &[],
    ));
    assert!(
        out.contains("gfx942_xnack130.HIP.3_2_0_36bb7fd4a-dirty.udb.txt"),
        "{out}"
    );
    assert!(out.contains("ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC"), "{out}");
    let models = common::models_dir();
    let out = stdout_of(&userdb_cli(
        &[
            "--arch",
            "gfx942_xnacke4",
            "--out",
            d,
            "--miopen-version",
            "HIP.3_2_0_36bb7fd4a-dirty",
            "--models",
            models.to_str().unwrap(),
        ],
        &[],
        &[],
    ));
    assert!(
        out.contains("gfx942_xnacke4.HIP.3_2_0_36bb7fd4a-dirty.udb.txt"),
        "{out}"
    );
    assert!(out.contains("ConvHipImplicitGemmGroupFwdXdlops"), "{out}");
    let out = stdout_of(&userdb_cli(
        &[
            "--arch",
            "gfx942:sramecc+:xnack+",
            "--cu",
            "304",
            "--out",
            d,
            "--miopen-version",
            "HIP.3_2_0_",
        ],
        &[],
        &[],
    ));
    assert!(out.contains("gfx942_xnack130.HIP.3_2_0_.udb.txt"), "{out}");
    // No database there: the suffix of the MIOpen installed under $ROCM_PATH.
    let empty = temp_dir("cli-empty");
    let rocm = temp_dir("cli-rocm");
    write_headers(&rocm, "3", "2", "0", "36bb7fd4a-dirty", None);
    let out = stdout_of(&userdb_cli(
        &["--arch", "gfx906_60", "--out", empty.to_str().unwrap()],
        &[("ROCM_PATH", rocm.as_path())],
        &[],
    ));
    assert!(out.contains("gfx906_60.HIP.3_2_0_36bb7fd4a-dirty.udb.txt"), "{out}");
    let _ = std::fs::remove_dir_all(empty);
    let _ = std::fs::remove_dir_all(rocm);
    // A bare version is refused, saying what to give.
    let o = userdb_cli(
        &["--arch", "gfx906_60", "--out", d, "--miopen-version", "3.2.0"],
        &[],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("tweak"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn userdb_with_home_unset_or_root_writes_where_miopen_reads() {
    let tmp = temp_dir("home-root");
    let expected = tmp.join(".config/miopen/gfx906_60.HIP.3_2_0_.udb.txt");
    for (envs, removed) in [
        (vec![("HOME", Path::new("/")), ("TMPDIR", tmp.as_path())], vec![]),
        (vec![("TMPDIR", tmp.as_path())], vec!["HOME"]),
    ] {
        let o = userdb_cli(
            &["--arch", "gfx906_60", "--miopen-version", "HIP.3_2_0_"],
            &envs,
            &removed,
        );
        let out = stdout_of(&o);
        assert!(out.contains(&expected.display().to_string()), "{out}");
    }
    let _ = std::fs::remove_dir_all(tmp);
}
