//! rosbag2 bags without ROS: read and write bag folders (`metadata.yaml`
//! plus `.mcap` or `.db3` files) and bare `.mcap` files, and the CDR
//! messages the node uses. MCAP goes through the `mcap` crate, sqlite3
//! through `rusqlite`; neither format is parsed here by hand.
//!
//! Reading streams: [`BagReader`] yields one [`BagMessage`] at a time, so a
//! bag of any size replays in the same memory. A read error ends the stream
//! after the messages before it (a truncated bag still replays up to the
//! cut).
//!
//! The storage formats, CDR and the messages are private modules; what a
//! caller needs is re-exported here. [`output`] stays a module of its own:
//! its rules cover every file a command writes, not only bags, and its
//! functions read right with its name (`output::write_file`).

mod cdr;
mod compression;
mod mcap;
mod messages;
mod metadata;
pub mod output;
mod qos;
mod robot;
mod scenario;
mod sqlite;
mod tf_tree;
mod viz;
mod writer;

pub use cdr::{CdrError, Endian};
pub use messages::{
    CLOCK, Header, JOINT_STATE, JointStateMsg, POINT_STAMPED, POSE_STAMPED, StampedTarget,
    TargetType, decode_clock,
};
pub use qos::Qos;
pub use robot::{Outgoing, RobotTopics, Topic};
pub use scenario::{Scenario, TooBig, Waypoint};
pub use tf_tree::{Point, TfTree};
pub use viz::{MARKER, STRING, TF_MESSAGE, TransformStamped, decode_string, decode_tf};
pub use writer::{BagWriter, TopicId};

use metadata::{BagInfo, MetadataFile};
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// The `ros2msg` schema text (dependencies included, as rosbag2 stores
/// it in MCAP) of a message type the project reads or writes; `None` for
/// any other.
pub fn ros2msg_definition(type_name: &str) -> Option<String> {
    messages::ros2msg_definition(type_name).or_else(|| viz::ros2msg_definition(type_name))
}

/// A `ros2msg` schema text as rosbag2 writes it: the type's own fields, then
/// each dependency once under a separator line and `MSG: <name>`.
fn definition(main: &str, deps: &[(&str, &str)]) -> String {
    const SEPARATOR: &str =
        "================================================================================\n";
    let mut s = main.to_string();
    for (name, text) in deps {
        s.push_str(SEPARATOR);
        s.push_str("MSG: ");
        s.push_str(name);
        s.push('\n');
        s.push_str(text);
    }
    s
}

/// What went wrong with a bag, always naming the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BagError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a rosbag2 bag: {why}", path.display())]
    NotABag { path: PathBuf, why: String },
    #[error("{}: bad metadata.yaml: {why}", path.display())]
    Metadata { path: PathBuf, why: String },
    #[error("{}: unsupported: {why}", path.display())]
    Unsupported { path: PathBuf, why: String },
    #[error("{}: corrupt or truncated: {why}", path.display())]
    Corrupt { path: PathBuf, why: String },
    #[error("{}: cannot write: {why}", path.display())]
    Write { path: PathBuf, why: String },
    /// The output may not be written there (see [`output`]).
    #[error(transparent)]
    Output(#[from] output::OutputError),
}

impl BagError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> BagError {
        BagError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn write(path: &Path, e: impl Display) -> BagError {
        BagError::Write {
            path: path.to_path_buf(),
            why: e.to_string(),
        }
    }
}

/// One serialized message: topic, ROS type name (empty when the bag does
/// not say), receive time and CDR bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct BagMessage {
    pub topic: Arc<str>,
    pub type_name: Arc<str>,
    pub log_time_ns: u64,
    pub data: Vec<u8>,
}

/// A topic as a bag declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    pub name: String,
    pub type_name: String,
    /// From `metadata.yaml`, when there is one.
    pub message_count: Option<u64>,
}

/// A rosbag2 storage plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Mcap,
    Sqlite3,
}

impl Storage {
    pub const ALL: [Storage; 2] = [Storage::Mcap, Storage::Sqlite3];

    pub fn identifier(self) -> &'static str {
        match self {
            Storage::Mcap => "mcap",
            Storage::Sqlite3 => "sqlite3",
        }
    }

    /// The file extension of its storage files.
    fn extension(self) -> &'static str {
        match self {
            Storage::Mcap => "mcap",
            Storage::Sqlite3 => "db3",
        }
    }

    /// From a file's first bytes (magic), looking inside a zstd-compressed
    /// file (file-mode compression, which the `bool` says).
    fn sniff(path: &Path) -> Result<(Storage, bool), BagError> {
        let (magic, zstd) = compression::peek(path)?;
        if magic.starts_with(b"\x89MCAP") {
            Ok((Storage::Mcap, zstd))
        } else if magic.starts_with(b"SQLite format 3\0") {
            Ok((Storage::Sqlite3, zstd))
        } else {
            Err(BagError::NotABag {
                path: path.to_path_buf(),
                why: format!(
                    "neither MCAP nor SQLite magic bytes at the start{} ({} bytes read)",
                    if zstd {
                        " of the zstd-compressed data"
                    } else {
                        ""
                    },
                    magic.len()
                ),
            })
        }
    }
}

/// By rosbag2's plugin identifier (`mcap`, `sqlite3`), as `ros2 bag
/// record --storage` takes it.
impl std::str::FromStr for Storage {
    type Err = String;
    fn from_str(s: &str) -> Result<Storage, String> {
        Storage::ALL
            .into_iter()
            .find(|st| st.identifier() == s)
            .ok_or_else(|| format!("unknown storage '{s}' (choose mcap or sqlite3)"))
    }
}

impl Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.identifier())
    }
}

/// One reader alive per bag, so the size difference does not matter.
#[allow(clippy::large_enum_variant)]
enum Inner {
    Mcap(mcap::McapReader),
    Sqlite(sqlite::SqliteReader),
}

/// Messages of a bag (a folder or one `.mcap`/`.db3` file), file by file,
/// in storage order (time order for sqlite3, write order for MCAP, which is
/// time order for what rosbag2 records).
pub struct BagReader {
    path: PathBuf,
    files: VecDeque<PathBuf>,
    current: Option<Inner>,
    /// The storage file being read, for errors.
    current_file: PathBuf,
    info: Option<BagInfo>,
    /// Topics seen so far in the stream: name -> type.
    seen: BTreeMap<String, String>,
    total_bytes: u64,
    done_bytes: u64,
    file_bytes: u64,
    failed: bool,
}

impl BagReader {
    /// Opens a bag folder (using its `metadata.yaml` when present, else
    /// every `.mcap`/`.db3` file in it) or a single bag file.
    pub fn open(path: impl AsRef<Path>) -> Result<BagReader, BagError> {
        let path = path.as_ref();
        let meta = std::fs::metadata(path).map_err(|e| BagError::io(path, e))?;
        let (files, info) = if meta.is_dir() {
            let yaml = path.join("metadata.yaml");
            if yaml.is_file() {
                let info = read_metadata(&yaml)?;
                compression::check_metadata(&info, &yaml)?;
                let files: Vec<PathBuf> = info
                    .relative_file_paths
                    .iter()
                    .map(|f| {
                        // rosbag2 has written these both relative to the folder
                        // and with the folder's name in front.
                        let name = Path::new(f).file_name().unwrap_or_default();
                        path.join(name)
                    })
                    .collect();
                if files.is_empty() {
                    return Err(BagError::Metadata {
                        path: yaml,
                        why: "relative_file_paths is empty".into(),
                    });
                }
                (files, Some(info))
            } else {
                let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                    .map_err(|e| BagError::io(path, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| is_storage_file(p))
                    .collect();
                files.sort();
                if files.is_empty() {
                    return Err(BagError::NotABag {
                        path: path.to_path_buf(),
                        why: "a folder without metadata.yaml or any .mcap or .db3 file \
                              (or .mcap.zstd, .db3.zstd)"
                            .into(),
                    });
                }
                (files, None)
            }
        } else {
            (vec![path.to_path_buf()], None)
        };
        let mut total = 0;
        for f in &files {
            total += std::fs::metadata(f).map_err(|e| BagError::io(f, e))?.len();
        }
        let mut r = BagReader {
            path: path.to_path_buf(),
            files: files.into(),
            current: None,
            current_file: PathBuf::new(),
            info,
            seen: BTreeMap::new(),
            total_bytes: total,
            done_bytes: 0,
            file_bytes: 0,
            failed: false,
        };
        r.open_next()?;
        Ok(r)
    }

    fn open_next(&mut self) -> Result<bool, BagError> {
        self.done_bytes += self.file_bytes;
        self.current = None;
        let Some(f) = self.files.pop_front() else {
            return Ok(false);
        };
        self.file_bytes = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
        self.current = Some(match Storage::sniff(&f)? {
            (Storage::Mcap, zstd) => Inner::Mcap(mcap::McapReader::open(&f, zstd)?),
            (Storage::Sqlite3, false) => Inner::Sqlite(sqlite::SqliteReader::open(&f)?),
            (Storage::Sqlite3, true) => {
                let copy = compression::decompress_to_temp(&f)?;
                Inner::Sqlite(sqlite::SqliteReader::open_copy(copy, &f)?)
            }
        });
        self.current_file = f;
        Ok(true)
    }

    /// The bag's path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The topics the bag declares up front (`metadata.yaml` or the sqlite3
    /// topics table); `None` for a bare MCAP file, whose channels are only
    /// known once read (see [`BagReader::seen_topics`]).
    pub fn declared_topics(&self) -> Option<Vec<TopicInfo>> {
        if let Some(info) = &self.info {
            return Some(
                info.topics_with_message_count
                    .iter()
                    .map(|t| TopicInfo {
                        name: t.topic_metadata.name.clone(),
                        type_name: t.topic_metadata.type_name.clone(),
                        message_count: Some(t.message_count),
                    })
                    .collect(),
            );
        }
        match &self.current {
            Some(Inner::Sqlite(s)) => Some(s.topics()),
            _ => None,
        }
    }

    /// Topics (name -> type) of the messages read so far.
    pub fn seen_topics(&self) -> &BTreeMap<String, String> {
        &self.seen
    }

    /// Messages the bag's metadata promises, if it has any.
    pub fn message_count(&self) -> Option<u64> {
        self.info.as_ref().map(|i| i.message_count)
    }

    /// Fraction of the bag read, 0 to 1 (by bytes across files).
    pub fn progress(&self) -> f64 {
        let cur = match &self.current {
            Some(Inner::Mcap(m)) => m.bytes_read() as f64,
            Some(Inner::Sqlite(s)) => s.progress() * self.file_bytes as f64,
            None => 0.0,
        };
        if self.total_bytes == 0 {
            1.0
        } else {
            ((self.done_bytes as f64 + cur) / self.total_bytes as f64).min(1.0)
        }
    }
}

impl Iterator for BagReader {
    type Item = Result<BagMessage, BagError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let item = match self.current.as_mut()? {
                Inner::Mcap(m) => m.next(),
                Inner::Sqlite(s) => s.next(),
            };
            let item = item.map(|r| r.and_then(|m| self.decompressed(m)));
            match item {
                Some(Ok(m)) => {
                    if !self.seen.contains_key(&*m.topic) {
                        self.seen
                            .insert(m.topic.to_string(), m.type_name.to_string());
                    }
                    return Some(Ok(m));
                }
                Some(Err(e)) => {
                    self.failed = true;
                    return Some(Err(e));
                }
                None => match self.open_next() {
                    Ok(true) => continue,
                    Ok(false) => return None,
                    Err(e) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                },
            }
        }
    }
}

impl BagReader {
    /// The message with its data decompressed when it was stored
    /// compressed (message mode).
    fn decompressed(&self, mut m: BagMessage) -> Result<BagMessage, BagError> {
        m.data = compression::message_data(std::mem::take(&mut m.data)).map_err(|e| {
            BagError::Corrupt {
                path: self.current_file.clone(),
                why: format!("message on {} at {} ns: zstd: {e}", m.topic, m.log_time_ns),
            }
        })?;
        Ok(m)
    }
}

/// A storage file by its name: `.mcap`, `.db3`, or either with `.zstd`.
pub(crate) fn is_storage_file(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = name.strip_suffix(".zstd").unwrap_or(name);
    name.ends_with(".mcap") || name.ends_with(".db3")
}

fn read_metadata(path: &Path) -> Result<BagInfo, BagError> {
    let text = std::fs::read_to_string(path).map_err(|e| BagError::io(path, e))?;
    let m: MetadataFile = serde_norway::from_str(&text).map_err(|e| BagError::Metadata {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    Ok(m.rosbag2_bagfile_information)
}
