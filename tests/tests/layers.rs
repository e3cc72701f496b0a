//! The layers of each crate, as `docs/layers.txt` declares them, held against the code.
//!
//! The test reads every source file's imports (`use crate::…`, `use super::…`,
//! `use self::…` and `crate::…` paths in the code), resolves each to the file of the
//! module it names, and fails on:
//!
//! - a file that no layer names, or a layer entry that names no file;
//! - an import from a file to a file of a higher layer (the crate's root, `lib.rs` or
//!   `main.rs`, is above every layer);
//! - a circle of imports between files. A folder's module file (`mod.rs`, or `a.rs`
//!   beside `a/`) and its direct children may use each other: they are one place.
//!
//! An entry `a/b` of a layer names `a/b.rs` (or `a/b/mod.rs`) and every file under
//! `a/b/` that no longer entry names; `a/b/mod` names the folder's module file alone.
//!
//! Test code is left out: `tests.rs` files, files under a `tests/` folder, and a
//! file's inline `#[cfg(test)] mod … { … }` block.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's declared layers, bottom first.
struct Crate {
    src: String,
    layers: Vec<(String, Vec<String>)>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn declared() -> Vec<Crate> {
    let path = root().join("docs/layers.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut crates: Vec<Crate> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        if let Some(src) = line.strip_prefix("crate ") {
            crates.push(Crate {
                src: src.trim().to_string(),
                layers: Vec::new(),
            });
            continue;
        }
        let (name, modules) = line.split_once(':').unwrap_or_else(|| {
            panic!(
                "docs/layers.txt:{}: expected `crate PATH` or `LAYER: MODULES`",
                number + 1
            )
        });
        let current = crates
            .last_mut()
            .unwrap_or_else(|| panic!("docs/layers.txt:{}: a layer before any `crate PATH` line", number + 1));
        current.layers.push((
            name.trim().to_string(),
            modules.split_whitespace().map(str::to_string).collect(),
        ));
    }
    crates
}

/// A source file: its path relative to `src/` and its module path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct File {
    relative: String,
    module: Vec<String>,
}

fn is_test_file(relative: &str) -> bool {
    relative.ends_with("tests.rs") || relative.split('/').any(|part| part == "tests")
}

fn files(src: &Path) -> Vec<File> {
    fn walk(dir: &Path, src: &Path, out: &mut Vec<File>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
                if is_test_file(&relative) {
                    continue;
                }
                let stem = relative.trim_end_matches(".rs");
                let mut module: Vec<String> = stem.split('/').map(str::to_string).collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    module.pop();
                }
                out.push(File { relative, module });
            }
        }
    }
    let mut out = Vec::new();
    walk(src, src, &mut out);
    out
}

/// The file's text without comments and without its inline test module.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod ") && next.contains('{'))
        {
            // Skip the block: count braces from the `mod … {` line.
            let mut depth = 0i64;
            for inner in lines.by_ref() {
                depth += inner.matches('{').count() as i64 - inner.matches('}').count() as i64;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let base = join(prefix, head);
        let mut depth = 0;
        let mut start = 0;
        for (at, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..at], &base, out);
                    start = at + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &base, out);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap().trim();
        out.push(join(prefix, path));
    }
}

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (_, true) => prefix.to_string(),
        _ => format!("{prefix}::{path}"),
    }
}

/// Every path the code imports or names from its own crate, once each.
fn paths_of(code: &str) -> BTreeSet<String> {
    let mut out = Vec::new();
    // `use` statements, which may span lines and hold trees.
    let mut rest = code;
    while let Some(at) = find_word(rest, "use ") {
        let after = &rest[at + 4..];
        let end = after.find(';').unwrap_or(after.len());
        let tree: String = after[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        if tree.starts_with("crate::") || tree.starts_with("super::") || tree.starts_with("self::") {
            expand(&tree, "", &mut out);
        }
        rest = &after[end..];
    }
    // `crate::a::b` paths written in the code.
    let mut rest = code;
    while let Some(at) = find_word(rest, "crate::") {
        let after = &rest[at..];
        let end = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(after.len());
        out.push(after[..end].trim_end_matches(':').to_string());
        rest = &after[end..];
    }
    out.into_iter().collect()
}

/// Where `word` starts as a whole word (not inside an identifier).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let at = from + found;
        let before = text[..at].chars().next_back();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The file a path from `file` names: the deepest module of the crate it reaches.
fn resolve<'a>(path: &str, file: &File, by_module: &'a BTreeMap<Vec<String>, File>) -> Option<&'a File> {
    let mut segments = path.split("::").filter(|s| !s.is_empty());
    let mut module: Vec<String> = match segments.next()? {
        "crate" => Vec::new(),
        "self" => file.module.clone(),
        "super" => {
            let mut m = file.module.clone();
            m.pop();
            m
        }
        _ => return None,
    };
    let mut deepest = by_module.get(&module);
    for segment in segments {
        if segment == "super" {
            module.pop();
            deepest = by_module.get(&module);
            continue;
        }
        module.push(segment.to_string());
        match by_module.get(&module) {
            Some(found) => deepest = Some(found),
            None => break,
        }
    }
    deepest
}

/// Whether one file is the other's parent module file.
fn parent_and_child(a: &File, b: &File) -> bool {
    let is_parent = |p: &File, c: &File| c.module.len() == p.module.len() + 1 && c.module.starts_with(&p.module);
    is_parent(a, b) || is_parent(b, a)
}

/// Whether a layer's entry names a file: `a/b` names `a/b.rs`, `a/b/mod.rs` and every
/// file under `a/b/`; `a/mod` names the folder's module file alone.
fn names(entry: &str, file: &File) -> bool {
    let stem = file.relative.trim_end_matches(".rs").trim_end_matches("/mod");
    match entry.strip_suffix("/mod") {
        Some(folder) => stem == folder,
        None => stem == entry || stem.starts_with(&format!("{entry}/")),
    }
}

/// The layer that names a file: its longest matching entry.
fn layer_of(file: &File, krate: &Crate) -> Option<(usize, String)> {
    if file.module.is_empty() {
        return Some((usize::MAX, "the crate root".to_string()));
    }
    let mut best: Option<(usize, usize, String)> = None;
    for (index, (name, entries)) in krate.layers.iter().enumerate() {
        for entry in entries {
            if names(entry, file) && best.as_ref().is_none_or(|(length, _, _)| entry.len() > *length) {
                best = Some((entry.len(), index, name.clone()));
            }
        }
    }
    best.map(|(_, index, name)| (index, name))
}

/// Circles of two or more files (Tarjan's strongly connected components).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(node: &'a str, s: &mut State<'a>) {
        let next = s.index.len();
        s.index.insert(node, next);
        s.low.insert(node, next);
        s.stack.push(node);
        s.on_stack.insert(node);
        if let Some(targets) = s.edges.get(node) {
            for target in targets {
                let target = target.as_str();
                if !s.index.contains_key(target) {
                    visit(target, s);
                    let low = s.low[target].min(s.low[node]);
                    s.low.insert(node, low);
                } else if s.on_stack.contains(target) {
                    let low = s.index[target].min(s.low[node]);
                    s.low.insert(node, low);
                }
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = Vec::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.push(top.to_string());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(node, &mut state);
        }
    }
    state.found
}

/// Every broken rule of one crate, one line each.
fn problems(krate: &Crate) -> Vec<String> {
    let src = root().join(&krate.src);
    let files = files(&src);
    let by_module: BTreeMap<Vec<String>, File> = files.iter().map(|f| (f.module.clone(), f.clone())).collect();
    let mut problems = Vec::new();
    for (name, entries) in &krate.layers {
        for entry in entries {
            if !files.iter().any(|f| names(entry, f)) {
                problems.push(format!(
                    "{}: layer `{name}` names `{entry}`, which is no file",
                    krate.src
                ));
            }
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some((layer, layer_name)) = layer_of(file, krate) else {
            problems.push(format!(
                "{}/{}: no layer of docs/layers.txt names this file",
                krate.src, file.relative
            ));
            continue;
        };
        let text = std::fs::read_to_string(src.join(&file.relative)).unwrap();
        for path in paths_of(&code_of(&text)) {
            let Some(target) = resolve(&path, file, &by_module) else {
                continue;
            };
            if target == file {
                continue;
            }
            if let Some((target_layer, target_name)) = layer_of(target, krate)
                && target_layer > layer
            {
                problems.push(format!(
                    "{}/{} (layer `{layer_name}`) imports `{path}` from {} (layer `{target_name}`), a higher layer",
                    krate.src, file.relative, target.relative
                ));
            }
            if !parent_and_child(file, target) {
                edges
                    .entry(file.relative.clone())
                    .or_default()
                    .insert(target.relative.clone());
            }
        }
    }
    for circle in circles(&edges) {
        problems.push(format!(
            "{}: these files import each other in a circle: {}",
            krate.src,
            circle.join(", ")
        ));
    }
    problems
}

#[test]
fn every_crate_imports_only_downward_and_in_no_circle() {
    let crates = declared();
    assert!(!crates.is_empty(), "docs/layers.txt declares no crate");
    let mut all = Vec::new();
    for krate in &crates {
        all.extend(problems(krate));
    }
    assert!(
        all.is_empty(),
        "{} broken layering rules:\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn the_checker_sees_an_upward_import_and_a_circle() {
    // A toy crate written out: `low` imports `high`, and `a` and `b` import each other.
    let dir = std::env::temp_dir().join(format!("vesper-layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("parts")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod low;\npub mod high;\npub mod parts;\n").unwrap();
    std::fs::write(src.join("low.rs"), "use crate::high::Thing;\n").unwrap();
    std::fs::write(
        src.join("high.rs"),
        "pub struct Thing;\n// use crate::parts::a; (a comment)\n",
    )
    .unwrap();
    std::fs::write(src.join("parts/mod.rs"), "pub mod a;\npub mod b;\nuse self::a::A;\n").unwrap();
    std::fs::write(src.join("parts/a.rs"), "use super::b::B;\npub struct A;\n").unwrap();
    std::fs::write(
        src.join("parts/b.rs"),
        "pub struct B(crate::parts::a::A);\n#[cfg(test)]\nmod tests {\n    use crate::high::Thing;\n}\n",
    )
    .unwrap();
    let krate = Crate {
        src: dir.join("src").to_string_lossy().into_owned(),
        layers: vec![
            ("ground".to_string(), vec!["low".to_string(), "parts".to_string()]),
            ("top".to_string(), vec!["high".to_string()]),
        ],
    };
    let found = problems(&krate);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].contains("low.rs (layer `ground`) imports `crate::high::Thing` from high.rs (layer `top`)"));
    assert!(found[1].contains("in a circle: parts/a.rs, parts/b.rs"), "{}", found[1]);
    // A file no layer names, and an entry that names no file.
    std::fs::write(src.join("stray.rs"), "").unwrap();
    let krate = Crate {
        layers: vec![
            (
                "ground".to_string(),
                vec!["low".to_string(), "parts".to_string(), "gone".to_string()],
            ),
            ("top".to_string(), vec!["high".to_string()]),
        ],
        ..krate
    };
    let found = problems(&krate);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        found
            .iter()
            .any(|p| p.ends_with("layer `ground` names `gone`, which is no file")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.ends_with("stray.rs: no layer of docs/layers.txt names this file")),
        "{found:#?}"
    );
}
