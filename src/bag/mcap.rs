//! MCAP storage (rosbag2's default since Iron) through the `mcap` crate:
//! a streaming reader (one chunk in memory at a time) and a writer with the
//! `ros2` profile, `ros2msg` schemas and `cdr` channels rosbag2 writes.

use super::{BagError, BagMessage, ros2msg_definition};
use mcap::records::MessageHeader;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Counts the bytes read, for the progress bar.
struct Counting<R> {
    inner: R,
    count: Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// The bytes an [`McapReader`] parses: the file, or its decompressed
/// stream for a file-mode compressed `.mcap.zstd`.
type Source = Box<dyn Read + Send>;

/// Messages of one `.mcap` file in file order.
pub struct McapReader {
    path: PathBuf,
    inner: mcap::io::MessageReader<Source>,
    read: Arc<std::sync::atomic::AtomicU64>,
    /// Topic and type per channel id, so messages share them.
    channels: HashMap<u16, (Arc<str>, Arc<str>)>,
    done: bool,
}

impl McapReader {
    /// Opens `path`; `zstd` when the whole file is one zstd stream (file
    /// mode compression), which is then decompressed as it is read.
    pub fn open(path: &Path, zstd: bool) -> Result<McapReader, BagError> {
        let f = File::open(path).map_err(|e| BagError::io(path, e))?;
        let read = Arc::new(std::sync::atomic::AtomicU64::new(0));
        // Bytes of the file are counted (not of the decompressed stream),
        // so progress compares with the file's size.
        let counted = Counting {
            inner: BufReader::with_capacity(1 << 16, f),
            count: read.clone(),
        };
        let src: Source = if zstd {
            Box::new(BufReader::with_capacity(
                1 << 16,
                super::compression::decoder(counted, path)?,
            ))
        } else {
            Box::new(counted)
        };
        Ok(McapReader {
            path: path.to_path_buf(),
            inner: mcap::io::MessageReader::new(src),
            read,
            channels: HashMap::new(),
            done: false,
        })
    }

    /// Bytes consumed so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Iterator for McapReader {
    type Item = Result<BagMessage, BagError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.inner.next()? {
            Ok(m) => {
                let (topic, type_name) = self
                    .channels
                    .entry(m.channel.id)
                    .or_insert_with(|| {
                        let ty = m.channel.schema.as_ref().map_or("", |s| s.name.as_str());
                        (m.channel.topic.as_str().into(), ty.into())
                    })
                    .clone();
                Some(Ok(BagMessage {
                    topic,
                    type_name,
                    log_time_ns: m.log_time,
                    data: m.data.into_owned(),
                }))
            }
            Err(e) => {
                self.done = true;
                Some(Err(BagError::Corrupt {
                    path: self.path.clone(),
                    why: format!("MCAP: {e}"),
                }))
            }
        }
    }
}

/// Writes a rosbag2-style MCAP file.
pub struct McapWriter {
    path: PathBuf,
    inner: mcap::Writer<BufWriter<File>>,
    sequence: u32,
}

impl McapWriter {
    pub fn create(path: &Path) -> Result<McapWriter, BagError> {
        let f = File::create(path).map_err(|e| BagError::io(path, e))?;
        // zstd chunks as rosbag2's MCAP plugin writes by default.
        let inner = mcap::WriteOptions::new()
            .profile("ros2")
            .library(concat!("arm_ik ", env!("CARGO_PKG_VERSION")))
            .compression(Some(mcap::Compression::Zstd))
            .create(BufWriter::new(f))
            .map_err(|e| BagError::write(path, e))?;
        Ok(McapWriter {
            path: path.to_path_buf(),
            inner,
            sequence: 0,
        })
    }

    /// Adds a topic (with its schema when the type is one we know) and
    /// returns its channel id.
    /// `qos` is the `offered_qos_profiles` YAML (empty: not said).
    pub fn add_topic(&mut self, topic: &str, type_name: &str, qos: &str) -> Result<u16, BagError> {
        let schema = match ros2msg_definition(type_name) {
            Some(text) => self
                .inner
                .add_schema(type_name, "ros2msg", text.as_bytes())
                .map_err(|e| BagError::write(&self.path, e))?,
            None => 0,
        };
        let mut meta = BTreeMap::new();
        meta.insert("offered_qos_profiles".to_string(), qos.to_string());
        self.inner
            .add_channel(schema, topic, "cdr", &meta)
            .map_err(|e| BagError::write(&self.path, e))
    }

    pub fn write(&mut self, channel: u16, log_time_ns: u64, data: &[u8]) -> Result<(), BagError> {
        self.sequence = self.sequence.wrapping_add(1);
        let header = MessageHeader {
            channel_id: channel,
            sequence: self.sequence,
            log_time: log_time_ns,
            publish_time: log_time_ns,
        };
        self.inner
            .write_to_known_channel(&header, data)
            .map_err(|e| BagError::write(&self.path, e))
    }

    pub fn finish(mut self) -> Result<(), BagError> {
        self.inner
            .finish()
            .map_err(|e| BagError::write(&self.path, e))?;
        use std::io::Write;
        self.inner
            .into_inner()
            .flush()
            .map_err(|e| BagError::io(&self.path, e))
    }
}
