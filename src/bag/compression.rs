//! rosbag2 compression, as `ros2 bag record --compression-mode file|message
//! --compression-format zstd` writes it (and `rosbags`, the same way):
//!
//! - `file`: each storage file, once closed, is compressed whole into
//!   `<name>.mcap.zstd` or `<name>.db3.zstd`, which `relative_file_paths`
//!   then lists. MCAP is decompressed as it streams; sqlite3 needs a real
//!   file, so it is decompressed into a temporary file (in `$TMPDIR`, never
//!   beside the bag), removed when the file has been read.
//! - `message`: the storage file is plain; each message's data is one zstd
//!   frame.
//!
//! `metadata.yaml` says which (`compression_mode`: `FILE`, `MESSAGE`,
//! `NONE` or empty, any case; `compression_format`: `zstd`, the only
//! format rosbag2 ships). Both are also recognised without it: a zstd frame
//! starts with its magic number, and CDR data (the only serialization
//! read here) always starts with a zero byte, so neither is mistaken for
//! the other.

use super::BagError;
use super::metadata::BagInfo;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The magic number at the start of every zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// True when `bytes` start a zstd frame.
pub(crate) fn is_zstd(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZSTD_MAGIC)
}

/// Checks what `metadata.yaml` says about compression: anything but zstd
/// in `file` or `message` mode (or none) is refused, naming the command
/// that writes an uncompressed copy.
pub(crate) fn check_metadata(info: &BagInfo, yaml: &Path) -> Result<(), BagError> {
    let mode = info.compression_mode.to_ascii_lowercase();
    let format = info.compression_format.to_ascii_lowercase();
    let unsupported = |why: String| BagError::Unsupported {
        path: yaml.to_path_buf(),
        why: format!(
            "{why}; arm_ik reads zstd in file or message mode. Write an uncompressed copy with \
             `ros2 bag convert -i BAG -o out.yaml`, where out.yaml holds \
             `output_bags: [{{uri: BAG_plain, storage_id: mcap, all_topics: true}}]` \
             (Humble: `all: true`)"
        ),
    };
    match mode.as_str() {
        "" | "none" => Ok(()),
        "file" | "message" if format == "zstd" => Ok(()),
        "file" | "message" => Err(unsupported(format!(
            "compression_format '{}'",
            info.compression_format
        ))),
        _ => Err(unsupported(format!(
            "compression_mode '{}'",
            info.compression_mode
        ))),
    }
}

/// One message's data as stored: decompressed when it is a zstd frame
/// (message mode), else as it is.
pub(crate) fn message_data(data: Vec<u8>) -> std::io::Result<Vec<u8>> {
    if is_zstd(&data) {
        zstd::stream::decode_all(data.as_slice())
    } else {
        Ok(data)
    }
}

/// The first bytes of a file, decompressed when the file is one zstd
/// stream (file mode): enough to tell MCAP from sqlite3 by their magic.
pub(crate) fn peek(path: &Path) -> Result<(Vec<u8>, bool), BagError> {
    let mut head = Vec::with_capacity(16);
    let f = File::open(path).map_err(|e| BagError::io(path, e))?;
    f.take(16)
        .read_to_end(&mut head)
        .map_err(|e| BagError::io(path, e))?;
    if !is_zstd(&head) {
        return Ok((head, false));
    }
    let mut inner = Vec::with_capacity(16);
    zstd::stream::read::Decoder::new(File::open(path).map_err(|e| BagError::io(path, e))?)
        .and_then(|d| d.take(16).read_to_end(&mut inner))
        .map_err(|e| corrupt(path, e))?;
    Ok((inner, true))
}

/// A stream of the decompressed contents of a file-mode storage file.
pub(crate) fn decoder<R: Read>(
    inner: R,
    path: &Path,
) -> Result<zstd::stream::read::Decoder<'static, std::io::BufReader<R>>, BagError> {
    zstd::stream::read::Decoder::new(inner).map_err(|e| corrupt(path, e))
}

/// A decompressed copy of a file, deleted on drop.
#[derive(Debug)]
pub(crate) struct TempCopy {
    path: PathBuf,
}

impl TempCopy {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Decompresses a file-mode storage file into the temporary folder.
pub(crate) fn decompress_to_temp(path: &Path) -> Result<TempCopy, BagError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "arm_ik_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        path.file_stem().unwrap_or_default().to_string_lossy()
    );
    let copy = TempCopy {
        path: std::env::temp_dir().join(name),
    };
    let src = File::open(path).map_err(|e| BagError::io(path, e))?;
    let mut out = File::create(copy.path()).map_err(|e| BagError::io(copy.path(), e))?;
    let mut dec = zstd::stream::read::Decoder::new(src).map_err(|e| corrupt(path, e))?;
    std::io::copy(&mut dec, &mut out).map_err(|e| corrupt(path, e))?;
    Ok(copy)
}

fn corrupt(path: &Path, e: std::io::Error) -> BagError {
    BagError::Corrupt {
        path: path.to_path_buf(),
        why: format!("zstd: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_data_is_decompressed_only_when_it_is_a_zstd_frame() {
        let cdr = vec![0u8, 1, 0, 0, 42, 0, 0, 0];
        assert_eq!(message_data(cdr.clone()).unwrap(), cdr);
        let packed = zstd::stream::encode_all(cdr.as_slice(), 3).unwrap();
        assert!(is_zstd(&packed));
        assert_eq!(message_data(packed).unwrap(), cdr);
        let mut cut = zstd::stream::encode_all(cdr.as_slice(), 3).unwrap();
        cut.truncate(cut.len() - 3);
        assert!(message_data(cut).is_err());
    }

    #[test]
    fn only_zstd_in_file_or_message_mode_is_read() {
        let info = |mode: &str, format: &str| BagInfo {
            compression_mode: mode.into(),
            compression_format: format.into(),
            ..BagInfo::default()
        };
        let yaml = Path::new("bag/metadata.yaml");
        for (mode, format) in [
            ("", ""),
            ("NONE", ""),
            ("FILE", "zstd"),
            ("message", "ZSTD"),
        ] {
            assert!(
                check_metadata(&info(mode, format), yaml).is_ok(),
                "{mode} {format}"
            );
        }
        let e = check_metadata(&info("FILE", "lz4"), yaml)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'lz4'") && e.contains("ros2 bag convert"), "{e}");
        let e = check_metadata(&info("chunk", "zstd"), yaml)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'chunk'"), "{e}");
    }
}
