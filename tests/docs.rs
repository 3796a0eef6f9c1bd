//! The documentation stays true: the README's "First five minutes" print
//! what it shows (its picture included), every relative link of the README
//! and `docs/` leads to a file (and heading) that exists, and every page of
//! `docs/` is reachable from the README. The ```sh and ```bash blocks of
//! these pages are run by `scripts/readme-commands`.

// Runs the `arm_ik` binary (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use common::{TempDir, project_dir};
use std::path::{Path, PathBuf};

/// The pages a reader finds from the README, as paths from the project root.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![
        PathBuf::from("README.md"),
        PathBuf::from("benches/README.md"),
        PathBuf::from("firmware-bridge/README.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(project_dir().join("docs"))
        .expect("docs/ is there")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(project_dir()).unwrap().to_path_buf())
        .collect();
    docs.sort();
    assert!(docs.len() >= 6, "docs/ has only {docs:?}");
    pages.extend(docs);
    pages
}

fn read(page: &Path) -> String {
    std::fs::read_to_string(project_dir().join(page))
        .unwrap_or_else(|e| panic!("{}: {e}", page.display()))
}

/// A fence line: three backticks and at most a language, indented or not.
fn is_fence(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("```")
        .is_some_and(|lang| lang.chars().all(|c| c.is_alphanumeric()))
}

/// The lines of a page outside its code blocks (fenced, indented or not).
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if is_fence(l) {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The anchor GitHub gives a heading: lower case, punctuation other than
/// `-` and `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .iter()
        .filter_map(|l| {
            let hashes = l.len() - l.trim_start_matches('#').len();
            (hashes > 0 && l[hashes..].starts_with(' ')).then(|| slug(&l[hashes..]))
        })
        .collect()
}

/// The targets of the inline links and images of a line, `[text](target)`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        targets.push(&rest[..end]);
        rest = &rest[end..];
    }
    targets
}

/// Every relative link of the README, benches/README.md,
/// firmware-bridge/README.md and docs/*.md names a file or folder that
/// exists, and an `#anchor` a heading of the page it points at.
#[test]
fn every_relative_link_leads_to_a_file_and_heading_that_exist() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in pages() {
        let text = read(&page);
        for line in prose(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target, None),
                };
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(path)
                };
                if !project_dir().join(&file).exists() {
                    broken.push(format!(
                        "{}: {target}: no file {}",
                        page.display(),
                        file.display()
                    ));
                    continue;
                }
                if let Some(anchor) = anchor
                    && !anchors(&read(&file)).iter().any(|a| a == anchor)
                {
                    broken.push(format!(
                        "{}: {target}: no heading #{anchor} in {}",
                        page.display(),
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 30,
        "only {checked} links found: is the parser blind?"
    );
}

/// Every page of docs/ is linked from the README, the landing page.
#[test]
fn the_readme_links_every_page_of_docs() {
    let readme = read(Path::new("README.md"));
    let linked: Vec<&str> = prose(&readme).into_iter().flat_map(link_targets).collect();
    for page in pages().iter().filter(|p| p.starts_with("docs")) {
        let page = page.to_str().unwrap();
        assert!(
            linked.iter().any(|t| t.split('#').next() == Some(page)),
            "README.md does not link {page}"
        );
    }
}

/// One `$ command` of the README's "First five minutes" and the lines it
/// shows under it.
struct Shown {
    command: String,
    output: Vec<String>,
}

fn first_five_minutes() -> Vec<Shown> {
    let readme = read(Path::new("README.md"));
    let section: Vec<&str> = readme
        .lines()
        .skip_while(|l| *l != "## First five minutes")
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect();
    let mut shown: Vec<Shown> = Vec::new();
    let mut in_console = false;
    for line in section {
        let line = line.trim_start();
        if is_fence(line) {
            in_console = line == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            shown.push(Shown {
                command: command.to_string(),
                output: Vec::new(),
            });
        } else {
            shown
                .last_mut()
                .expect("output before a command")
                .output
                .push(line.to_string());
        }
    }
    shown
}

/// A word of the shown output that is a wall-clock measurement: a number
/// before `us`, `messages/s` or `s wall`. Those may differ run to run;
/// nothing else may.
fn is_timing(words: &[&str], i: usize) -> bool {
    let bare = |w: &str| w.trim_matches(|c| "(),;".contains(c)).to_string();
    let next = words.get(i + 1).map(|w| bare(w)).unwrap_or_default();
    let after = words.get(i + 2).map(|w| bare(w)).unwrap_or_default();
    bare(words[i]).parse::<f64>().is_ok()
        && (next == "us" || next == "messages/s" || (next == "s" && after == "wall"))
}

fn same_but_timings(shown: &str, printed: &str) -> bool {
    let s: Vec<&str> = shown.split_whitespace().collect();
    let p: Vec<&str> = printed.split_whitespace().collect();
    s.len() == p.len()
        && (0..s.len()).all(|i| {
            s[i] == p[i]
                || (is_timing(&s, i)
                    && p[i]
                        .trim_matches(|c| "(),;".contains(c))
                        .parse::<f64>()
                        .is_ok())
        })
}

/// The README's "First five minutes" print what they show. Each `$ cargo
/// run --release -- ...` runs this build's binary from the project
/// directory, with `target/` a scratch folder; stdout must match the
/// shown lines except wall-clock times. The picture it draws
/// (`--plot docs/replay.svg`) must be the committed `docs/replay.svg`;
/// `ARM_IK_UPDATE_DOCS=1` rewrites it instead.
#[test]
fn the_first_five_minutes_print_what_the_readme_shows() {
    let shown = first_five_minutes();
    assert!(shown.len() >= 6, "{} commands found", shown.len());
    let scratch = TempDir::new("docs");
    let tmp = format!("{}/", scratch.path().display());
    let bin = env!("CARGO_BIN_EXE_arm_ik");
    let mut drew_picture = false;
    for Shown { command, output } in &shown {
        assert!(command.contains("cargo run --release -- "), "{command}");
        drew_picture |= command.contains("--plot docs/replay.svg");
        let run = command
            .replace("target/", &tmp)
            .replace("docs/replay.svg", &format!("{tmp}replay.svg"))
            .replace("cargo run --release -- ", &format!("'{bin}' "));
        let out = std::process::Command::new("bash")
            .args(["-o", "pipefail", "-c", &run])
            .current_dir(project_dir())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8(out.stdout)
            .unwrap()
            .replace(&tmp, "target/");
        let printed: Vec<&str> = printed.lines().collect();
        assert_eq!(
            printed.len(),
            output.len(),
            "{command} printed:\n{}",
            printed.join("\n")
        );
        for (s, p) in output.iter().zip(&printed) {
            assert!(
                same_but_timings(s, p),
                "{command}\n README shows: {s}\n it printed:   {p}"
            );
        }
    }
    assert!(drew_picture, "no command draws docs/replay.svg");
    let drawn = std::fs::read_to_string(scratch.path().join("replay.svg"))
        .unwrap()
        .replace(&tmp, "target/");
    let picture = project_dir().join("docs/replay.svg");
    if std::env::var_os("ARM_IK_UPDATE_DOCS").is_some() {
        std::fs::write(&picture, &drawn).unwrap();
    }
    assert!(
        std::fs::read_to_string(&picture).ok().as_deref() == Some(drawn.as_str()),
        "docs/replay.svg is not what the README's replay draws now: \
         ARM_IK_UPDATE_DOCS=1 cargo test --release --test docs rewrites it"
    );
}

/// The tolerance of the comparison above is only for wall-clock figures.
#[test]
fn only_wall_clock_figures_may_differ() {
    let line = "solve time: p50 3 us, p99 5 us, max 8089 us (1001 solves)";
    assert!(same_but_timings(
        line,
        "solve time: p50 4 us, p99 9 us, max 120 us (1001 solves)"
    ));
    assert!(!same_but_timings(
        line,
        "solve time: p50 3 us, p99 5 us, max 8089 us (1000 solves)"
    ));
    let line = "arm_ik sim: 20.0 s simulated in 0.012 s wall (1001 ticks at 50.0 Hz)";
    assert!(same_but_timings(
        line,
        "arm_ik sim: 20.0 s simulated in 0.3 s wall (1001 ticks at 50.0 Hz)"
    ));
    assert!(!same_but_timings(
        line,
        "arm_ik sim: 21.0 s simulated in 0.012 s wall (1001 ticks at 50.0 Hz)"
    ));
    assert!(!same_but_timings("max 1.83 mm", "max 1.84 mm"));
}

/// The picture of docs/collisions.md is what the command in its caption
/// (`... --svg docs/collisions.svg`) draws now; `ARM_IK_UPDATE_DOCS=1`
/// rewrites it instead.
#[test]
fn the_collision_picture_is_what_its_caption_command_draws() {
    let page = read(Path::new("docs/collisions.md"));
    let command = prose(&page)
        .into_iter()
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .find(|c| c.contains("--svg docs/collisions.svg"))
        .expect("docs/collisions.md names the command that draws its picture");
    assert!(command.starts_with("cargo run --release -- "), "{command}");
    let scratch = TempDir::new("docs-collisions");
    let drawn_path = scratch.path().join("collisions.svg");
    let args: Vec<String> = command["cargo run --release -- ".len()..]
        .split_whitespace()
        .map(|w| w.replace("docs/collisions.svg", drawn_path.to_str().unwrap()))
        .collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arm_ik"))
        .args(&args)
        .current_dir(project_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{command}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let drawn = std::fs::read_to_string(&drawn_path).unwrap();
    let picture = project_dir().join("docs/collisions.svg");
    if std::env::var_os("ARM_IK_UPDATE_DOCS").is_some() {
        std::fs::write(&picture, &drawn).unwrap();
    }
    assert!(
        std::fs::read_to_string(&picture).ok().as_deref() == Some(drawn.as_str()),
        "docs/collisions.svg is not what its caption's command draws now: \
         ARM_IK_UPDATE_DOCS=1 cargo test --release --test docs rewrites it"
    );
}

/// The README's picture of the arm (`docs/arm.svg`) is what the commands
/// of its "See the arm" block draw now (a replay's output bag, then `arm_ik
/// draw` of it); `ARM_IK_UPDATE_DOCS=1` rewrites it instead.
#[test]
fn the_arm_picture_is_what_the_readme_commands_draw() {
    let readme = read(Path::new("README.md"));
    let lines: Vec<&str> = readme.lines().collect();
    let draw = lines
        .iter()
        .position(|l| l.contains("--svg docs/arm.svg"))
        .expect("the README draws docs/arm.svg");
    let start = lines[..draw]
        .iter()
        .rposition(|l| is_fence(l))
        .expect("in a code block");
    let scratch = TempDir::new("docs-arm");
    let tmp = format!("{}/", scratch.path().display());
    for command in &lines[start + 1..=draw] {
        let args: Vec<String> = command
            .strip_prefix("cargo run --release -- ")
            .unwrap_or_else(|| panic!("{command}"))
            .split_whitespace()
            .map(|w| {
                w.replace("target/", &tmp)
                    .replace("docs/arm.svg", &format!("{tmp}arm.svg"))
            })
            .collect();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arm_ik"))
            .args(&args)
            .current_dir(project_dir())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let drawn = std::fs::read_to_string(scratch.path().join("arm.svg")).unwrap();
    let picture = project_dir().join("docs/arm.svg");
    if std::env::var_os("ARM_IK_UPDATE_DOCS").is_some() {
        std::fs::write(&picture, &drawn).unwrap();
    }
    assert!(
        std::fs::read_to_string(&picture).ok().as_deref() == Some(drawn.as_str()),
        "docs/arm.svg is not what the README's commands draw now: \
         ARM_IK_UPDATE_DOCS=1 cargo test --release --test docs rewrites it"
    );
}
