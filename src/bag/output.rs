//! Where a command may write its outputs (bags, reports, plots):
//!
//! - never onto a file it reads: a bag file, or a bag folder, any file in
//!   it or a new file inside it. Files are compared by device and inode
//!   and by canonical path, so a symlink, a hard link or another spelling
//!   of the path is caught;
//! - over an existing output only when the caller says so (`ros2 bag
//!   record` refuses an existing folder; so do we, unless `--overwrite`),
//!   and over a folder only when it holds nothing but a bag's files;
//! - under a temporary name in the destination's folder, renamed into
//!   place once complete ([`Staged`]), so an interrupted run leaves the
//!   old output or the new one, never a truncated file or a folder whose
//!   `metadata.yaml` names files that are gone.

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why an output may not be written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OutputError {
    #[error("{}: already exists; give --overwrite to replace it", .path.display())]
    Exists { path: PathBuf },
    #[error(
        "{}: {what} {input_is} ({}); write the output elsewhere",
        .path.display(),
        .input.display()
    )]
    IsInput {
        path: PathBuf,
        input: PathBuf,
        /// `is`, `is a file of` or `is inside the folder of`.
        what: &'static str,
        /// What the input is: `the bag being read`, `the scenario being
        /// read`.
        input_is: &'static str,
    },
    #[error(
        "{}: a folder that is not a bag (it holds {entry}); not replacing it, even with --overwrite",
        .path.display()
    )]
    NotABag { path: PathBuf, entry: String },
    #[error("{}: {why}", .path.display())]
    WrongKind { path: PathBuf, why: &'static str },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What to do with an output that exists already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    Refuse,
    Replace,
}

/// A file's identity: device and inode (on Unix), and its canonical path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileId {
    dev_ino: Option<(u64, u64)>,
    canonical: PathBuf,
}

impl FileId {
    fn of(path: &Path) -> std::io::Result<FileId> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        let dev_ino = {
            use std::os::unix::fs::MetadataExt;
            Some((meta.dev(), meta.ino()))
        };
        #[cfg(not(unix))]
        let dev_ino = {
            let _ = meta;
            None
        };
        Ok(FileId {
            dev_ino,
            canonical: std::fs::canonicalize(path)?,
        })
    }

    fn same(&self, other: &FileId) -> bool {
        match (self.dev_ino, other.dev_ino) {
            (Some(a), Some(b)) => a == b,
            _ => self.canonical == other.canonical,
        }
    }
}

/// What a command reads, which none of its outputs may touch.
#[derive(Debug, Default, Clone)]
pub struct Inputs {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// The input as given, for messages.
    input: PathBuf,
    /// What it is, for messages (`the bag being read`).
    noun: &'static str,
    id: FileId,
    role: Role,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The input itself, a file or a folder.
    Itself { folder: bool },
    /// A file in an input folder.
    InFolder,
}

impl Inputs {
    /// One input: a bag file, or a bag folder (and every file in it).
    pub fn of(path: &Path) -> Result<Inputs, OutputError> {
        Inputs::named(path, "the bag being read")
    }

    /// One input of any kind, which messages call `noun` (`the scenario
    /// being read`).
    pub fn named(path: &Path, noun: &'static str) -> Result<Inputs, OutputError> {
        let mut inputs = Inputs::default();
        inputs.add_named(path, noun)?;
        Ok(inputs)
    }

    /// Adds a bag (file or folder).
    pub fn add(&mut self, path: &Path) -> Result<(), OutputError> {
        self.add_named(path, "the bag being read")
    }

    /// Adds any file or folder read, which messages call `noun`.
    pub fn add_named(&mut self, path: &Path, noun: &'static str) -> Result<(), OutputError> {
        let id = FileId::of(path).map_err(|e| io(path, e))?;
        let folder = std::fs::metadata(path).map_err(|e| io(path, e))?.is_dir();
        let input = path.to_path_buf();
        if folder {
            for entry in std::fs::read_dir(path).map_err(|e| io(path, e))? {
                let p = entry.map_err(|e| io(path, e))?.path();
                if let Ok(id) = FileId::of(&p) {
                    let (input, role) = (input.clone(), Role::InFolder);
                    self.entries.push(Entry {
                        input,
                        noun,
                        id,
                        role,
                    });
                }
            }
        }
        let role = Role::Itself { folder };
        self.entries.push(Entry {
            input,
            noun,
            id,
            role,
        });
        Ok(())
    }

    /// Refuses `path` (existing) when it is an input or an input's file.
    fn refuse_input(&self, path: &Path, id: &FileId) -> Result<(), OutputError> {
        match self.entries.iter().find(|e| e.id.same(id)) {
            Some(e) => Err(OutputError::IsInput {
                path: path.to_path_buf(),
                input: e.input.clone(),
                what: if e.role == Role::InFolder {
                    "is a file of"
                } else {
                    "is"
                },
                input_is: e.noun,
            }),
            None => Ok(()),
        }
    }

    /// Refuses a path whose folder is an input bag folder.
    fn refuse_inside(&self, path: &Path, folder: &Path) -> Result<(), OutputError> {
        let Ok(id) = FileId::of(folder) else {
            return Ok(());
        };
        let inside = |e: &&Entry| e.role == Role::Itself { folder: true } && e.id.same(&id);
        match self.entries.iter().find(inside) {
            Some(e) => Err(OutputError::IsInput {
                path: path.to_path_buf(),
                input: e.input.clone(),
                what: "is inside the folder of",
                input_is: e.noun,
            }),
            None => Ok(()),
        }
    }
}

/// An output being written under a temporary name beside its destination;
/// [`Staged::commit`] renames it into place, dropping it uncommitted
/// deletes it.
#[derive(Debug)]
pub struct Staged {
    dest: PathBuf,
    tmp: PathBuf,
    folder: bool,
    done: bool,
}

impl Staged {
    /// A file output (a report, a bare `.mcap`).
    pub fn file(dest: &Path, existing: Existing, inputs: &Inputs) -> Result<Staged, OutputError> {
        Staged::new(dest, false, existing, inputs)
    }

    /// A bag folder output; the temporary folder is created empty.
    pub fn folder(dest: &Path, existing: Existing, inputs: &Inputs) -> Result<Staged, OutputError> {
        let s = Staged::new(dest, true, existing, inputs)?;
        std::fs::create_dir(&s.tmp).map_err(|e| io(&s.tmp, e))?;
        Ok(s)
    }

    fn new(
        dest: &Path,
        folder: bool,
        existing: Existing,
        inputs: &Inputs,
    ) -> Result<Staged, OutputError> {
        // Write through a symlink to what it points at, as a plain write
        // would; errors name the path as given.
        let given = dest;
        let is_link = std::fs::symlink_metadata(dest).is_ok_and(|m| m.file_type().is_symlink());
        let dest = if is_link {
            std::fs::canonicalize(dest).map_err(|e| io(dest, e))?
        } else {
            dest.to_path_buf()
        };
        let name = dest
            .file_name()
            .ok_or(OutputError::WrongKind {
                path: dest.clone(),
                why: "has no file name",
            })?
            .to_string_lossy()
            .into_owned();
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        inputs.refuse_inside(given, &parent)?;
        if let Ok(id) = FileId::of(&dest) {
            inputs.refuse_input(given, &id)?;
            refuse_existing(&dest, folder, existing, inputs)?;
        }
        std::fs::create_dir_all(&parent).map_err(|e| io(&parent, e))?;
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let tmp = parent.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        Ok(Staged {
            dest,
            tmp,
            folder,
            done: false,
        })
    }

    /// Where to write now.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Where the output goes.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Flushes the written data to disk and renames it into place.
    pub fn commit(mut self) -> Result<(), OutputError> {
        sync(&self.tmp)?;
        if self.folder && self.dest.exists() {
            // Two renames: the old bag moves aside, the new one in, then
            // the old one goes. Between them both are complete.
            let mut old = self.tmp.clone().into_os_string();
            old.push(".old");
            let old = PathBuf::from(old);
            std::fs::rename(&self.dest, &old).map_err(|e| io(&self.dest, e))?;
            if let Err(e) = std::fs::rename(&self.tmp, &self.dest) {
                let _ = std::fs::rename(&old, &self.dest);
                return Err(io(&self.dest, e));
            }
            let _ = std::fs::remove_dir_all(&old);
        } else {
            std::fs::rename(&self.tmp, &self.dest).map_err(|e| io(&self.dest, e))?;
        }
        self.done = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = if self.folder {
                std::fs::remove_dir_all(&self.tmp)
            } else {
                std::fs::remove_file(&self.tmp)
            };
        }
    }
}

/// An existing destination may be replaced only when asked, only by the
/// same kind, and a folder only when it holds a bag's files and nothing of
/// the inputs.
fn refuse_existing(
    dest: &Path,
    folder: bool,
    existing: Existing,
    inputs: &Inputs,
) -> Result<(), OutputError> {
    let is_dir = dest.is_dir();
    if is_dir != folder {
        return Err(OutputError::WrongKind {
            path: dest.to_path_buf(),
            why: if is_dir {
                "is a folder; a file was expected"
            } else {
                "is a file; a bag folder (or a path ending in .mcap) was expected"
            },
        });
    }
    if existing == Existing::Refuse {
        return Err(OutputError::Exists {
            path: dest.to_path_buf(),
        });
    }
    if !folder {
        return Ok(());
    }
    for entry in std::fs::read_dir(dest).map_err(|e| io(dest, e))? {
        let entry = entry.map_err(|e| io(dest, e))?;
        let p = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let bag_file = name == "metadata.yaml" || super::is_storage_file(&p);
        if !bag_file || !entry.file_type().is_ok_and(|t| t.is_file()) {
            return Err(OutputError::NotABag {
                path: dest.to_path_buf(),
                entry: name,
            });
        }
        if let Ok(id) = FileId::of(&p) {
            inputs.refuse_input(&p, &id)?;
        }
    }
    Ok(())
}

/// fsync of a file, or of every file in a folder.
fn sync(path: &Path) -> Result<(), OutputError> {
    let sync_file = |p: &Path| {
        std::fs::File::open(p)
            .and_then(|f| f.sync_all())
            .map_err(|e| io(p, e))
    };
    if path.is_dir() {
        for entry in std::fs::read_dir(path).map_err(|e| io(path, e))? {
            sync_file(&entry.map_err(|e| io(path, e))?.path())?;
        }
        Ok(())
    } else {
        sync_file(path)
    }
}

/// Writes a whole file: staged, then renamed into place.
pub fn write_file(
    dest: &Path,
    bytes: &[u8],
    existing: Existing,
    inputs: &Inputs,
) -> Result<(), OutputError> {
    let staged = Staged::file(dest, existing, inputs)?;
    std::fs::write(staged.path(), bytes).map_err(|e| io(dest, e))?;
    staged.commit()
}

/// Checks now that [`write_file`] will be allowed to write `dest` later,
/// so a long run does not end in a refusal.
pub fn check_file(dest: &Path, existing: Existing, inputs: &Inputs) -> Result<(), OutputError> {
    Staged::file(dest, existing, inputs).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("arm_ik_output_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_uncommitted_output_leaves_the_old_file_and_no_temporary() {
        let d = temp("staged");
        let dest = d.join("report.json");
        std::fs::write(&dest, "old").unwrap();
        let none = Inputs::default();
        {
            let s = Staged::file(&dest, Existing::Replace, &none).unwrap();
            std::fs::write(s.path(), "half").unwrap();
            // Dropped: an interrupted write.
        }
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "temporary left");
        write_file(&dest, b"new", Existing::Replace, &none).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        let e = write_file(&dest, b"x", Existing::Refuse, &none).unwrap_err();
        assert!(matches!(e, OutputError::Exists { .. }), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_folder_is_replaced_whole_and_only_when_it_holds_a_bag() {
        let d = temp("folder");
        let dest = d.join("bag");
        std::fs::create_dir(&dest).unwrap();
        std::fs::write(dest.join("bag_0.mcap"), "old").unwrap();
        std::fs::write(dest.join("metadata.yaml"), "old").unwrap();
        let s = Staged::folder(&dest, Existing::Replace, &Inputs::default()).unwrap();
        std::fs::write(s.path().join("bag_0.db3"), "new").unwrap();
        s.commit().unwrap();
        let names: Vec<String> = std::fs::read_dir(&dest)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["bag_0.db3"], "no orphaned files of the old bag");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "old bag left aside"
        );
        std::fs::write(dest.join("notes.txt"), "mine").unwrap();
        let e = Staged::folder(&dest, Existing::Replace, &Inputs::default()).unwrap_err();
        assert!(matches!(e, OutputError::NotABag { .. }), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
