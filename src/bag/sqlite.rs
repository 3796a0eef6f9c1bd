//! sqlite3 storage (rosbag2's default up to Humble) through `rusqlite`
//! with SQLite compiled in (`bundled`), so no system library is needed.
//!
//! Reading pages through the messages in (timestamp, id) order, a few
//! thousand rows at a time: memory stays flat whatever the bag size, and no
//! statement has to outlive a call (which a borrowing row iterator would).

use super::compression::TempCopy;
use super::{BagError, BagMessage, TopicInfo};
use rusqlite::{Connection, OpenFlags, params};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PAGE: i64 = 4096;

/// Messages of one `.db3` file in time order.
pub struct SqliteReader {
    path: PathBuf,
    conn: Connection,
    topics: HashMap<i64, (Arc<str>, Arc<str>)>,
    page: VecDeque<BagMessage>,
    /// (timestamp, id) of the last row read.
    after: (i64, i64),
    total: u64,
    read: u64,
    done: bool,
    /// The decompressed copy being read, deleted after the connection
    /// (fields drop in order).
    _copy: Option<TempCopy>,
}

fn sql_error(path: &Path, e: rusqlite::Error) -> BagError {
    BagError::Corrupt {
        path: path.to_path_buf(),
        why: format!("sqlite3: {e}"),
    }
}

impl SqliteReader {
    pub fn open(path: &Path) -> Result<SqliteReader, BagError> {
        SqliteReader::open_as(path, path)
    }

    /// Reads the decompressed copy of a file-mode compressed `path` (named
    /// in errors), and deletes the copy when dropped.
    pub(crate) fn open_copy(copy: TempCopy, path: &Path) -> Result<SqliteReader, BagError> {
        let mut r = SqliteReader::open_as(copy.path(), path)?;
        r._copy = Some(copy);
        Ok(r)
    }

    /// Opens `file`, naming `path` in errors.
    fn open_as(file: &Path, path: &Path) -> Result<SqliteReader, BagError> {
        if !file.is_file() {
            return Err(BagError::io(
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ));
        }
        let conn = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| sql_error(path, e))?;
        let mut topics = HashMap::new();
        {
            let mut st = conn
                .prepare("SELECT id, name, type FROM topics")
                .map_err(|e| sql_error(path, e))?;
            let rows = st
                .query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })
                .map_err(|e| sql_error(path, e))?;
            for row in rows {
                let (id, name, ty) = row.map_err(|e| sql_error(path, e))?;
                topics.insert(id, (Arc::from(name), Arc::from(ty)));
            }
        }
        let total: i64 = conn
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .map_err(|e| sql_error(path, e))?;
        Ok(SqliteReader {
            path: path.to_path_buf(),
            conn,
            topics,
            page: VecDeque::new(),
            after: (i64::MIN, i64::MIN),
            total: total as u64,
            read: 0,
            done: false,
            _copy: None,
        })
    }

    /// The topics table (message counts are not kept there).
    pub fn topics(&self) -> Vec<TopicInfo> {
        let mut v: Vec<TopicInfo> = self
            .topics
            .values()
            .map(|(n, t)| TopicInfo {
                name: n.to_string(),
                type_name: t.to_string(),
                message_count: None,
            })
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Fraction of the rows read.
    pub fn progress(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            self.read as f64 / self.total as f64
        }
    }

    fn fill(&mut self) -> Result<(), rusqlite::Error> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, topic_id, timestamp, data FROM messages \
             WHERE timestamp > ?1 OR (timestamp = ?1 AND id > ?2) \
             ORDER BY timestamp, id LIMIT ?3",
        )?;
        let mut rows = st.query(params![self.after.0, self.after.1, PAGE])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let topic_id: i64 = r.get(1)?;
            let ts: i64 = r.get(2)?;
            let data: Vec<u8> = r.get(3)?;
            self.after = (ts, id);
            let (topic, type_name) = self
                .topics
                .get(&topic_id)
                .cloned()
                .unwrap_or_else(|| (format!("<topic id {topic_id}>").into(), "".into()));
            self.page.push_back(BagMessage {
                topic,
                type_name,
                log_time_ns: ts.max(0) as u64,
                data,
            });
        }
        Ok(())
    }
}

impl Iterator for SqliteReader {
    type Item = Result<BagMessage, BagError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.page.is_empty()
            && let Err(e) = self.fill()
        {
            self.done = true;
            return Some(Err(sql_error(&self.path, e)));
        }
        match self.page.pop_front() {
            Some(m) => {
                self.read += 1;
                Some(Ok(m))
            }
            None => {
                self.done = true;
                None
            }
        }
    }
}

/// Writes a rosbag2 sqlite3 file (schema version 3, as Humble writes).
pub struct SqliteWriter {
    path: PathBuf,
    conn: Connection,
    pending: u64,
}

impl SqliteWriter {
    pub fn create(path: &Path) -> Result<SqliteWriter, BagError> {
        if path.exists() {
            std::fs::remove_file(path).map_err(|e| BagError::io(path, e))?;
        }
        let conn = Connection::open(path).map_err(|e| BagError::write(path, e))?;
        conn.execute_batch(
            "PRAGMA journal_mode = MEMORY;
             PRAGMA synchronous = OFF;
             CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
             INSERT INTO schema VALUES (3, 'humble');
             CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
                 serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
             CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
                 timestamp INTEGER NOT NULL, data BLOB NOT NULL);
             CREATE INDEX timestamp_idx ON messages (timestamp ASC);
             BEGIN;",
        )
        .map_err(|e| BagError::write(path, e))?;
        Ok(SqliteWriter {
            path: path.to_path_buf(),
            conn,
            pending: 0,
        })
    }

    pub fn add_topic(&mut self, topic: &str, type_name: &str) -> Result<i64, BagError> {
        self.conn
            .execute(
                "INSERT INTO topics(name, type, serialization_format, offered_qos_profiles) \
                 VALUES (?1, ?2, 'cdr', '')",
                params![topic, type_name],
            )
            .map_err(|e| BagError::write(&self.path, e))?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn write(&mut self, topic: i64, log_time_ns: u64, data: &[u8]) -> Result<(), BagError> {
        let path = &self.path;
        self.conn
            .prepare_cached("INSERT INTO messages(topic_id, timestamp, data) VALUES (?1, ?2, ?3)")
            .and_then(|mut st| st.execute(params![topic, log_time_ns as i64, data]))
            .map_err(|e| BagError::write(path, e))?;
        self.pending += 1;
        if self.pending >= 10_000 {
            self.pending = 0;
            self.conn
                .execute_batch("COMMIT; BEGIN;")
                .map_err(|e| BagError::write(path, e))?;
        }
        Ok(())
    }

    pub fn finish(self) -> Result<(), BagError> {
        self.conn
            .execute_batch("COMMIT;")
            .map_err(|e| BagError::write(&self.path, e))?;
        self.conn
            .close()
            .map_err(|(_, e)| BagError::write(&self.path, e))
    }
}
