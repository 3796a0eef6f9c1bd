//! The library's public error enums are `#[non_exhaustive]`, checked on its
//! source: a new way to fail is then a new variant, not a breaking change
//! for the crates that match on the errors.

use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The library's source files: everything under `src/` but the binaries
/// (`main.rs`, `cli/`, `bin/`), whose types nobody else sees.
fn library_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let top = path.parent() == Some(Path::new(SRC));
        let name = path.file_name().unwrap().to_string_lossy();
        if top && ["main.rs", "cli", "bin"].contains(&name.as_ref()) {
            continue;
        }
        if path.is_dir() {
            library_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// `(file:line, enum name)` of every `pub enum` whose attributes derive
/// `Error` without `#[non_exhaustive]`.
fn exhaustive_errors(file: &Path, text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("pub enum ") else {
            continue;
        };
        // The attributes above the enum, a derive list that rustfmt split
        // over several lines included; doc comments left out.
        let start = lines[..i]
            .iter()
            .rposition(|l| {
                let l = l.trim();
                l.is_empty() || l.ends_with('}') || l.ends_with(';')
            })
            .map_or(0, |p| p + 1);
        let attributes: String = lines[start..i]
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.starts_with("//"))
            .collect::<Vec<_>>()
            .join(" ");
        let derives_error = attributes.split("#[").any(|a| {
            a.starts_with("derive(")
                && a.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == "Error")
        });
        if derives_error && !attributes.contains("#[non_exhaustive]") {
            let name = rest
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .next();
            found.push((
                format!("{}:{}", file.display(), i + 1),
                name.unwrap_or_default().to_string(),
            ));
        }
    }
    found
}

#[test]
fn public_error_enums_are_non_exhaustive() {
    let mut files = Vec::new();
    library_files(Path::new(SRC), &mut files);
    assert!(files.len() > 20, "found only {files:?} under {SRC}");
    let mut missing = Vec::new();
    let mut seen = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        seen += text.matches("pub enum").count();
        missing.extend(exhaustive_errors(f, &text));
    }
    assert!(seen > 0, "no pub enum found under {SRC}");
    assert!(
        missing.is_empty(),
        "public error enums without #[non_exhaustive]: {missing:#?}"
    );
}

#[test]
fn the_check_sees_a_missing_attribute() {
    let text = "/// Why.\n#[derive(Debug, thiserror::Error)]\npub enum Oops {\n}\n\
                #[derive(Debug, Error)]\n#[non_exhaustive]\npub enum Fine {}\n\
                /// An Error in words only.\n#[derive(Debug)]\npub enum NotAnError {}\n\
                #[derive(\n    Debug,\n    Clone,\n    Error,\n)]\npub enum Split {}\n";
    let found = exhaustive_errors(Path::new("x.rs"), text);
    assert_eq!(
        found,
        [
            ("x.rs:3".to_string(), "Oops".to_string()),
            ("x.rs:16".to_string(), "Split".to_string())
        ]
    );
}
