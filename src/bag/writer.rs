//! Writing bags: a folder as `ros2 bag record` makes it, or one bare MCAP
//! file, staged under a temporary name and renamed into place by
//! [`BagWriter::finish`] (see [`super::output`]), so an existing output is
//! never half replaced and an unfinished one never appears.

use super::metadata::{BagInfo, FileInfo, MetadataFile, Nanoseconds, SinceEpoch, TopicMetadata};
use super::output::{Existing, Inputs, Staged};
use super::{BagError, Qos, Storage, mcap, metadata, sqlite};
use std::path::Path;

/// One writer per bag, so the size difference does not matter.
#[allow(clippy::large_enum_variant)]
enum Out {
    Mcap(mcap::McapWriter),
    Sqlite(sqlite::SqliteWriter),
}

struct TopicCount {
    name: String,
    type_name: String,
    /// `offered_qos_profiles` as rosbag2 writes it; empty when not said.
    qos: String,
    id: i64,
    count: u64,
}

/// A topic added to a [`BagWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicId(usize);

/// Writes a bag: a folder `<dir>/` with `<dir name>_0.<ext>` and
/// `metadata.yaml` as `ros2 bag record` makes, or, for a path ending in
/// `.mcap`, one bare MCAP file (which `ros2 bag play` and Foxglove open
/// too).
pub struct BagWriter {
    /// A bag folder (else one bare MCAP file).
    folder: bool,
    file_name: String,
    storage: Storage,
    out: Out,
    topics: Vec<TopicCount>,
    first: Option<u64>,
    last: u64,
    /// Where it is written until [`BagWriter::finish`].
    staged: Staged,
}

impl BagWriter {
    /// A new bag at `path`, which must not exist.
    pub fn create(path: impl AsRef<Path>, storage: Storage) -> Result<BagWriter, BagError> {
        BagWriter::create_with(path, storage, Existing::Refuse, &Inputs::default())
    }

    /// A bag at `path`, replacing an existing one when `existing` says so,
    /// and never touching `inputs` (see [`super::output`]).
    pub fn create_with(
        path: impl AsRef<Path>,
        storage: Storage,
        existing: Existing,
        inputs: &Inputs,
    ) -> Result<BagWriter, BagError> {
        let path = path.as_ref();
        let bare = storage == Storage::Mcap && path.extension().is_some_and(|e| e == "mcap");
        let (staged, file) = if bare {
            let staged = Staged::file(path, existing, inputs)?;
            let file = staged.path().to_path_buf();
            (staged, file)
        } else {
            let staged = Staged::folder(path, existing, inputs)?;
            let stem = staged
                .dest()
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "bag".into());
            let file = staged
                .path()
                .join(format!("{stem}_0.{}", storage.extension()));
            (staged, file)
        };
        let out = match storage {
            Storage::Mcap => Out::Mcap(mcap::McapWriter::create(&file)?),
            Storage::Sqlite3 => Out::Sqlite(sqlite::SqliteWriter::create(&file)?),
        };
        Ok(BagWriter {
            folder: !bare,
            file_name: file
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            storage,
            out,
            topics: Vec::new(),
            first: None,
            last: 0,
            staged,
        })
    }

    /// A topic without a recorded QoS (`ros2 bag play` offers its
    /// defaults).
    pub fn add_topic(&mut self, name: &str, type_name: &str) -> Result<TopicId, BagError> {
        self.add_topic_as(name, type_name, String::new())
    }

    /// A topic recorded as offered with `qos`, which `ros2 bag play`
    /// offers again (a latched topic stays latched).
    pub fn add_topic_with_qos(
        &mut self,
        name: &str,
        type_name: &str,
        qos: Qos,
    ) -> Result<TopicId, BagError> {
        self.add_topic_as(name, type_name, qos.rosbag2_yaml())
    }

    fn add_topic_as(
        &mut self,
        name: &str,
        type_name: &str,
        qos: String,
    ) -> Result<TopicId, BagError> {
        let id = match &mut self.out {
            Out::Mcap(w) => w.add_topic(name, type_name, &qos)? as i64,
            Out::Sqlite(w) => w.add_topic(name, type_name)?,
        };
        self.topics.push(TopicCount {
            name: name.into(),
            type_name: type_name.into(),
            qos,
            id,
            count: 0,
        });
        Ok(TopicId(self.topics.len() - 1))
    }

    pub fn write(&mut self, topic: TopicId, log_time_ns: u64, data: &[u8]) -> Result<(), BagError> {
        let t = &mut self.topics[topic.0];
        match &mut self.out {
            Out::Mcap(w) => w.write(t.id as u16, log_time_ns, data)?,
            Out::Sqlite(w) => w.write(t.id, log_time_ns, data)?,
        }
        t.count += 1;
        self.first = Some(self.first.map_or(log_time_ns, |f| f.min(log_time_ns)));
        self.last = self.last.max(log_time_ns);
        Ok(())
    }

    /// Closes the storage file, writes `metadata.yaml` for a folder, and
    /// renames the bag into place.
    pub fn finish(self) -> Result<(), BagError> {
        if self.folder {
            write_metadata(&self)?;
        }
        match self.out {
            Out::Mcap(w) => w.finish()?,
            Out::Sqlite(w) => w.finish()?,
        }
        self.staged.commit()?;
        Ok(())
    }
}

/// `metadata.yaml` of a finished folder bag, as rosbag2 writes version 5.
fn write_metadata(w: &BagWriter) -> Result<(), BagError> {
    let dir = w.staged.path();
    let start = w.first.unwrap_or(0);
    let duration = Nanoseconds {
        nanoseconds: w.last.saturating_sub(start),
    };
    let count: u64 = w.topics.iter().map(|t| t.count).sum();
    let info = BagInfo {
        version: 5,
        storage_identifier: w.storage.identifier().into(),
        duration,
        starting_time: SinceEpoch {
            nanoseconds_since_epoch: start,
        },
        message_count: count,
        topics_with_message_count: w
            .topics
            .iter()
            .map(|t| metadata::TopicWithCount {
                topic_metadata: TopicMetadata {
                    name: t.name.clone(),
                    type_name: t.type_name.clone(),
                    serialization_format: "cdr".into(),
                    offered_qos_profiles: serde_norway::Value::String(t.qos.clone()),
                },
                message_count: t.count,
            })
            .collect(),
        compression_format: String::new(),
        compression_mode: String::new(),
        relative_file_paths: vec![w.file_name.clone()],
        files: vec![FileInfo {
            path: w.file_name.clone(),
            starting_time: SinceEpoch {
                nanoseconds_since_epoch: start,
            },
            duration,
            message_count: count,
        }],
    };
    let yaml = serde_norway::to_string(&MetadataFile {
        rosbag2_bagfile_information: info,
    })
    .map_err(|e| BagError::write(dir, e))?;
    let p = dir.join("metadata.yaml");
    std::fs::write(&p, yaml).map_err(|e| BagError::io(&p, e))
}
