//! The library's layering, checked on its source: no module imports from a
//! layer above its own, and no two modules import each other, at the top
//! level or among the submodules of one module.
//!
//! The layer order is read from the "Layers" paragraph of `src/lib.rs`'s doc, so
//! the rule is written once, where readers look for it. A reference is any
//! `crate::a::b` path or `super::` path outside comments and outside the
//! unit-test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The top-level modules of the library, grouped by layer, lowest first, as
/// the paragraph of `src/lib.rs`'s doc that starts with "Layers" gives them:
/// groups separated by arrows, each module named in backticks (the first
/// name of each comma-separated item; words without backticks, like "the
/// binaries", name no library module).
fn layers() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(Path::new(SRC).join("lib.rs")).unwrap();
    let doc: Vec<&str> = lib
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = doc
        .iter()
        .position(|l| l.starts_with("Layers"))
        .expect("src/lib.rs's doc has no paragraph starting with `Layers` stating the layer order");
    let paragraph = doc[start..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let order = paragraph
        .split_once(':')
        .map_or(paragraph.as_str(), |(_, rest)| rest);
    let layers: Vec<Vec<String>> = order
        .split('\u{2192}')
        .map(|group| {
            group
                .split(',')
                .filter_map(|item| item.split('`').nth(1).map(str::to_string))
                .collect::<Vec<_>>()
        })
        .filter(|g: &Vec<String>| !g.is_empty())
        .collect();
    assert!(
        layers.len() > 1,
        "the Layers paragraph names one layer: {paragraph}"
    );
    layers
}

/// A source file and the module path it defines (`src/servo/link.rs` ->
/// `["servo", "link"]`, `src/servo/mod.rs` -> `["servo"]`).
fn library_files() -> Vec<(PathBuf, Vec<String>)> {
    fn walk(dir: &Path, prefix: &[String], out: &mut Vec<(PathBuf, Vec<String>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let mut module = prefix.to_vec();
            if path.is_dir() {
                module.push(name);
                walk(&path, &module, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                if name != "mod" {
                    module.push(name);
                }
                out.push((path, module));
            }
        }
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(SRC).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // The binaries (main.rs with cli/, bin/) sit on top of everything.
        if ["lib", "main", "cli", "bin"].contains(&name.as_str()) {
            continue;
        }
        let module = vec![name];
        if path.is_dir() {
            walk(&path, &module, &mut out);
        } else {
            out.push((path, module));
        }
    }
    out
}

/// The module paths (up to two segments) a file refers to.
fn references(text: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    let mut refs = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        for (at, _) in code.match_indices("crate::") {
            // `$crate::` and `other_crate::` are not this crate's paths.
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            expand(&code[at + "crate::".len()..], &[], &mut refs);
        }
        let mut from = 0;
        while let Some(at) = code[from..].find("super::").map(|i| i + from) {
            let mut rest = &code[at..];
            let mut base = module.to_vec();
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            from = code.len() - rest.len();
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            expand(rest, &base, &mut refs);
        }
    }
    refs.retain(|r| !r.is_empty());
    refs
}

/// Adds the module paths `rest` names below `base`: `a::b::X`, or each item
/// of a `{a::X, b}` group.
fn expand(rest: &str, base: &[String], refs: &mut BTreeSet<Vec<String>>) {
    let Some(group) = rest.strip_prefix('{') else {
        refs.insert(path_segments(rest, base.to_vec()));
        return;
    };
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                refs.insert(path_segments(group[start..i].trim(), base.to_vec()));
                return;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                refs.insert(path_segments(group[start..i].trim(), base.to_vec()));
                start = i + 1;
            }
            _ => {}
        }
    }
    // A group spread over several lines: its first line's items.
    refs.insert(path_segments(group[start..].trim(), base.to_vec()));
}

/// `prefix` followed by the leading `a::b` identifiers of `rest`, two module
/// levels at most; `self`, `*` and type names end it.
fn path_segments(rest: &str, mut prefix: Vec<String>) -> Vec<String> {
    let mut s = rest;
    while prefix.len() < 2 {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        let ident = &s[..end];
        if ident.is_empty() || ident == "self" || ident.starts_with(char::is_uppercase) {
            break;
        }
        prefix.push(ident.to_string());
        match s[end..].strip_prefix("::") {
            Some(r) => s = r,
            None => break,
        }
    }
    prefix
}

/// The file without its unit-test module: tests may build fixtures from
/// any layer (a link test loads a calibration); what the library itself
/// compiles is what must be layered.
fn library_code(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |at| &text[..at])
}

type Graph = BTreeMap<String, BTreeSet<String>>;

fn module_graphs() -> (Graph, BTreeMap<String, Graph>) {
    let mut top: Graph = BTreeMap::new();
    let mut inner: BTreeMap<String, Graph> = BTreeMap::new();
    for (path, module) in library_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for r in references(library_code(&text), &module) {
            if r[0] != module[0] {
                top.entry(module[0].clone())
                    .or_default()
                    .insert(r[0].clone());
            } else if let (Some(from), Some(to)) = (module.get(1), r.get(1))
                && from != to
            {
                inner
                    .entry(module[0].clone())
                    .or_default()
                    .entry(from.clone())
                    .or_default()
                    .insert(to.clone());
            }
        }
    }
    (top, inner)
}

/// Every cycle's members, as found by a depth-first search.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        found: &mut Vec<Vec<String>>,
    ) {
        if let Some(at) = stack.iter().position(|n| n == node) {
            found.push(stack[at..].to_vec());
            return;
        }
        if !done.insert(node.to_string()) {
            return;
        }
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, stack, done, found);
        }
        stack.pop();
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, graph, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let layers = layers();
    let rank = |m: &str| layers.iter().position(|l| l.iter().any(|x| x == m));
    let (top, _) = module_graphs();
    let mut wrong = Vec::new();
    for (from, tos) in &top {
        let Some(from_rank) = rank(from) else {
            wrong.push(format!(
                "module `{from}` is not in src/lib.rs's Layers paragraph"
            ));
            continue;
        };
        for to in tos {
            match rank(to) {
                Some(r) if r < from_rank => {}
                Some(r) if r == from_rank => wrong.push(format!(
                    "`{from}` imports `{to}`, a module of its own layer: put one below the other"
                )),
                Some(_) => wrong.push(format!("`{from}` imports `{to}`, a layer above it")),
                None => wrong.push(format!(
                    "`{from}` imports `{to}`, which is not in src/lib.rs's Layers paragraph"
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn submodules_of_a_module_do_not_import_each_other_in_a_cycle() {
    let (_, inner) = module_graphs();
    let mut found = Vec::new();
    for (module, graph) in &inner {
        for c in cycles(graph) {
            found.push(format!("{module}: {} -> {}", c.join(" -> "), c[0]));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The checks can fail: a made-up upward import and a made-up cycle are
/// both seen by the same parsing.
#[test]
fn the_parser_sees_upward_imports_and_cycles() {
    let refs = references(
        "use crate::node::NodeCore;\nuse super::{link::Link, bridge};\n// use crate::cli::x;\n",
        &["servo".into(), "output".into()],
    );
    let has = |path: &[&str]| refs.iter().any(|r| r == path);
    assert!(has(&["node"]), "{refs:?}");
    assert!(
        has(&["servo", "link"]) && has(&["servo", "bridge"]),
        "{refs:?}"
    );
    assert!(
        !refs.iter().any(|r| r[0] == "cli"),
        "comments are not imports"
    );
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("a".into());
    assert_eq!(cycles(&g).len(), 1);
}
