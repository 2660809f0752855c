//! The layering ARCHITECTURE.md states (issue 36 item 5): file formats know no model or solver,
//! the solvers know no model, the search knows no model type, the models know no model search,
//! and the error type imports nothing of the crate; so there is no import circle across
//! `format/`, `search/`, `seq2seq/`, `solvers/` and `error.rs`. Read from the source text: every `crate::` path a layer names.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `crate::X` module names `path` (a file or a folder) refers to, with where.
fn crate_refs(path: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(path);
    let mut files = Vec::new();
    if root.is_dir() {
        rust_files(&root, &mut files);
    } else {
        files.push(root);
    }
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                let name: String = rest[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.push((name, format!("{}:{}", f.display(), n + 1)));
                rest = &rest[i + 7..];
            }
        }
    }
    out
}

fn assert_only(layer: &str, allowed: &[&str]) {
    let bad: Vec<String> = crate_refs(layer)
        .into_iter()
        .filter(|(name, _)| !allowed.contains(&name.as_str()))
        .map(|(name, at)| format!("{at}: crate::{name}"))
        .collect();
    assert!(bad.is_empty(), "{layer} reaches outside its layer: {bad:#?}");
}

#[test]
fn formats_solvers_models_and_the_error_type_import_no_layer_above_them() {
    assert_only("error.rs", &["error"]);
    assert_only("problem", &["problem", "error"]);
    // The search knows no model type: decoders are a trait (`StepDecoder`) over `States`.
    assert_only("search", &["search", "error", "cpu"]);
    assert_only("format", &["format", "error"]);
    // ONNX networks to problems: the problem types and the error type, nothing of models.
    assert_only("onnx", &["onnx", "error", "problem"]);
    // The solvers read problems, the search's constraint types and MIOpen's metadata format.
    assert_only("solvers", &["solvers", "error", "format", "problem", "search", "cpu"]);
    // The models: their files (format), their features (solvers), their search (search, cpu).
    // (`testutil`: the seeded random numbers of its initialisers, a leaf.)
    assert_only(
        "seq2seq",
        &[
            "seq2seq", "error", "format", "solvers", "problem", "search", "cpu", "testutil",
        ],
    );
}

/// Issue 52 item 7: no import circle among the modules of `src/` (each file or folder at its
/// top): the `crate::` paths each names form a graph without a cycle, so every layer, the
/// serving layer's `figures` -> `method` -> `written` -> `cli` included, builds on those below.
#[test]
fn no_import_circle_among_the_modules_of_src() {
    use std::collections::{BTreeMap, BTreeSet};
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_file() && p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let refs = crate_refs(p.file_name().unwrap().to_str().unwrap());
        let deps = graph.entry(name.clone()).or_default();
        deps.extend(refs.into_iter().map(|(n, _)| n).filter(|n| *n != name));
    }
    assert!(graph.contains_key("figures") && graph.contains_key("written"), "{:?}", graph.keys());
    // Depth-first search; a grey node met again closes a circle.
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let at = path.iter().position(|p| p == n).unwrap();
                let mut circle = path[at..].to_vec();
                circle.push(n.to_string());
                return Some(circle);
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for d in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if let Some(circle) = visit(n, &graph, &mut state, &mut Vec::new()) {
            panic!("import circle in src/: {}", circle.join(" -> "));
        }
    }
    // The serving layer's direction: the figures know no answering path, the answering path
    // nothing of what userdb writes, and eval reads the figures without the answering path.
    let deps = |m: &str| graph.get(m).cloned().unwrap_or_default();
    for (m, not) in [
        ("figures", ["method", "written", "eval", "cli"]),
        ("method", ["written", "eval", "cli", "ffi"]),
        ("eval", ["method", "written", "cli", "ffi"]),
        ("written", ["cli", "ffi", "eval", "train"]),
    ] {
        for n in not {
            assert!(!deps(m).contains(n), "src/{m} imports crate::{n}");
        }
    }
}
