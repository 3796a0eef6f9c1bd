//! rosbag2's `metadata.yaml`: which storage plugin and files a bag folder
//! has, its topics with their types and message counts. Read for any
//! version rosbag2 writes (unknown keys ignored, so newer versions' extra
//! fields do not break us); written as version 5, the oldest with the
//! per-file section, which every rosbag2 since Humble and `rosbags` read.

use serde::{Deserialize, Serialize};

/// The top-level key of `metadata.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetadataFile {
    pub rosbag2_bagfile_information: BagInfo,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BagInfo {
    pub version: u32,
    pub storage_identifier: String,
    #[serde(default)]
    pub duration: Nanoseconds,
    #[serde(default)]
    pub starting_time: SinceEpoch,
    #[serde(default)]
    pub message_count: u64,
    #[serde(default)]
    pub topics_with_message_count: Vec<TopicWithCount>,
    #[serde(default)]
    pub compression_format: String,
    #[serde(default)]
    pub compression_mode: String,
    #[serde(default)]
    pub relative_file_paths: Vec<String>,
    #[serde(default)]
    pub files: Vec<FileInfo>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Nanoseconds {
    pub nanoseconds: u64,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct SinceEpoch {
    pub nanoseconds_since_epoch: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopicWithCount {
    pub topic_metadata: TopicMetadata,
    #[serde(default)]
    pub message_count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopicMetadata {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(default)]
    pub serialization_format: String,
    /// A YAML string up to version 8, a list from version 9; kept as is.
    #[serde(default)]
    pub offered_qos_profiles: serde_norway::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileInfo {
    pub path: String,
    pub starting_time: SinceEpoch,
    pub duration: Nanoseconds,
    pub message_count: u64,
}
