//! Writing a recorded pose into the poses file: the file is edited as
//! text, so its comments and the order of its poses stay as they were,
//! and replaced atomically (written beside it, then renamed), so an
//! interrupted write leaves the old file or the new one.
//!
//! The pose goes on one line, `name: {joint: value, ...}`, replacing the
//! pose's old entry (its key line and the indented lines under it) or
//! appended at the end. What the edit would lose is said: comments inside
//! the old entry; and a file whose text does not read back as the poses
//! it held plus the new one (YAML anchors, an entry written over several
//! unindented lines) is written anew from its poses, without comments,
//! which is said too.

use super::PoseError;
use crate::bag::output::{Existing, Inputs, write_file};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The poses as written in a file, before they meet a robot (no required
/// poses: a file being taught may not have them yet).
type Written = BTreeMap<String, BTreeMap<String, f64>>;

/// What became of the file's comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comments {
    /// All kept.
    Kept,
    /// The old entry of the pose had comments of its own; they went with it.
    LostInEntry,
    /// The file was written anew from its poses: no comments are left.
    Rewritten,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// The file did not exist and was created.
    pub created: bool,
    /// The pose was there and was replaced.
    pub replaced: bool,
    pub comments: Comments,
    /// The file's pose names, after the write.
    pub names: Vec<String>,
}

/// A poses file that recorded poses are written into.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseStore {
    path: PathBuf,
}

fn unreadable(path: &Path, detail: impl ToString) -> PoseError {
    PoseError::Unreadable {
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

impl PoseStore {
    pub fn new(path: impl Into<PathBuf>) -> PoseStore {
        PoseStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes pose `name` with `joints` (name, value) into the file; a
    /// file that exists but cannot be read as poses is left alone.
    pub fn write(&self, name: &str, joints: &[(String, f64)]) -> Result<Stored, PoseError> {
        let (text, created) = match std::fs::read_to_string(&self.path) {
            Ok(t) => (t, false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), true),
            Err(e) => return Err(unreadable(&self.path, e)),
        };
        let old = read(&text, &self.path)?;
        let mut want = old.clone();
        let pose: BTreeMap<String, f64> = joints.iter().cloned().collect();
        want.insert(name.to_owned(), pose);
        let line = entry(name, joints);
        let (edited, lost) = edit(&text, name, &line);
        let (out, comments) = match read(&edited, &self.path) {
            Ok(back) if back == want => (
                edited,
                if lost {
                    Comments::LostInEntry
                } else {
                    Comments::Kept
                },
            ),
            _ => (anew(&want, &line, name), Comments::Rewritten),
        };
        write_file(
            &self.path,
            out.as_bytes(),
            Existing::Replace,
            &Inputs::default(),
        )
        .map_err(|e| unreadable(&self.path, e))?;
        Ok(Stored {
            created,
            replaced: old.contains_key(name),
            comments,
            names: want.into_keys().collect(),
        })
    }
}

/// The poses of `text` (none for an empty file).
fn read(text: &str, path: &Path) -> Result<Written, PoseError> {
    if text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#')
    }) {
        return Ok(Written::new());
    }
    serde_norway::from_str(text).map_err(|e| PoseError::NotPoses {
        path: path.display().to_string(),
        detail: e.to_string(),
    })
}

/// A value as the file shows it: exact (Rust's shortest form that reads
/// back as the same number).
fn value(x: f64) -> String {
    format!("{x:?}")
}

/// The one-line entry of a pose.
fn entry(name: &str, joints: &[(String, f64)]) -> String {
    let fields: Vec<String> = joints
        .iter()
        .map(|(j, x)| format!("{j}: {}", value(*x)))
        .collect();
    format!("{name}: {{{}}}", fields.join(", "))
}

/// The top-level key a line starts, if it starts one.
fn key(line: &str) -> Option<&str> {
    if line.starts_with(|c: char| c.is_whitespace() || c == '#' || c == '-') {
        return None;
    }
    let (k, _) = line.split_once(':')?;
    Some(k.trim().trim_matches(|c| c == '"' || c == '\''))
}

/// `text` with the entry of `name` replaced by `line` (or `line` added at
/// the end); true when comments inside the old entry went with it.
fn edit(text: &str, name: &str, line: &str) -> (String, bool) {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 1);
    let mut lost = false;
    let mut found = false;
    let mut i = 0;
    while i < lines.len() {
        if !found && key(lines[i]) == Some(name) {
            found = true;
            lost |= lines[i].contains(" #");
            i += 1;
            // The entry's own lines: indented, up to the next line that
            // is not (a key, a comment or blank line at the margin).
            while i < lines.len() && lines[i].starts_with(char::is_whitespace) {
                lost |= lines[i].trim_start().starts_with('#') || lines[i].contains(" #");
                i += 1;
            }
            out.push(line.to_owned());
            continue;
        }
        out.push(lines[i].to_owned());
        i += 1;
    }
    if !found {
        out.push(line.to_owned());
    }
    let mut s = out.join("\n");
    s.push('\n');
    (s, lost)
}

/// The whole file written from its poses, `name` as `line`.
fn anew(poses: &Written, line: &str, name: &str) -> String {
    let mut s = String::from(
        "# Named poses (joint positions, URDF units), rewritten by arm_ik when a pose\n\
         # was recorded: the earlier text could not be edited line by line.\n",
    );
    for (pose, joints) in poses {
        if pose == name {
            s.push_str(line);
        } else {
            let joints: Vec<(String, f64)> = joints.iter().map(|(j, x)| (j.clone(), *x)).collect();
            s.push_str(&entry(pose, &joints));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("arm_ik-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("poses.yaml")
    }

    fn pose(values: &[(&str, f64)]) -> Vec<(String, f64)> {
        values.iter().map(|(j, x)| (j.to_string(), *x)).collect()
    }

    #[test]
    fn a_new_pose_is_appended_and_an_old_one_replaced_keeping_the_comments() {
        let path = temp("keep");
        let text = "# The arm's poses.\nhome: {a: 0.0, b: 0.5}  \n\n# Where it rests.\nrest:\n  a: 1.0\n  b: -0.25\n";
        std::fs::write(&path, text).unwrap();
        let store = PoseStore::new(&path);
        let s = store
            .write("pick", &pose(&[("a", 0.3), ("b", 0.1)]))
            .unwrap();
        assert_eq!(
            (s.created, s.replaced, s.comments),
            (false, false, Comments::Kept)
        );
        let now = std::fs::read_to_string(&path).unwrap();
        assert_eq!(now, format!("{text}pick: {{a: 0.3, b: 0.1}}\n"));
        let s = store
            .write("rest", &pose(&[("a", 0.7), ("b", 2.0943951023931953)]))
            .unwrap();
        assert!(s.replaced && s.comments == Comments::Kept, "{s:?}");
        let now = std::fs::read_to_string(&path).unwrap();
        assert!(
            now.contains("# Where it rests.\nrest: {a: 0.7, b: 2.0943951023931953}\npick:"),
            "{now}"
        );
        assert!(
            now.starts_with("# The arm's poses.\nhome: {a: 0.0, b: 0.5}"),
            "{now}"
        );
        assert_eq!(s.names, ["home", "pick", "rest"]);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn what_cannot_be_kept_is_said_and_a_bad_file_is_left_alone() {
        let path = temp("lost");
        std::fs::write(&path, "home:\n  # straight up\n  a: 0.0\n").unwrap();
        let store = PoseStore::new(&path);
        let s = store.write("home", &pose(&[("a", 0.1)])).unwrap();
        assert_eq!(s.comments, Comments::LostInEntry);
        // Anchors: the text does not read back edited line by line.
        std::fs::write(&path, "home: &h {a: 0.0}\nrest: *h\n").unwrap();
        let s = store.write("home", &pose(&[("a", 0.2)])).unwrap();
        assert_eq!(s.comments, Comments::Rewritten);
        let back: Written =
            serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!((back["home"]["a"], back["rest"]["a"]), (0.2, 0.0));
        std::fs::write(&path, "- not poses\n").unwrap();
        let e = store.write("home", &pose(&[("a", 0.2)])).unwrap_err();
        assert!(matches!(e, PoseError::NotPoses { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "- not poses\n");
        // No file yet: created.
        std::fs::remove_file(&path).unwrap();
        assert!(store.write("home", &pose(&[("a", 0.0)])).unwrap().created);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
