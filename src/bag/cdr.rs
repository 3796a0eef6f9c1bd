//! OMG CDR (XCDR1, "plain CDR"), the encoding rosbag2 stores ROS 2 messages
//! in: a 4-byte encapsulation header (`00 01` little endian, `00 00` big
//! endian, then two option bytes), then the fields, each primitive aligned
//! to its own size counted from the end of the header.
//!
//! Written here rather than taken from a crate: the three messages the node
//! needs use six primitive kinds, and the ROS 2 CDR crates either bring a
//! serde data model we would have to mirror message by message or are
//! unmaintained. What matters (alignment from offset 4, strings with their
//! NUL counted in the length, both byte orders) is tested below and
//! against the independent Python `rosbags` library (`tests/bag.rs`).

use thiserror::Error;

/// Byte order of a CDR payload, from its encapsulation header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

/// What is wrong with a CDR payload. Offsets count from the start of the
/// message, header included.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CdrError {
    #[error("message is {len} bytes, shorter than the 4-byte CDR encapsulation header")]
    NoHeader { len: usize },
    #[error("unsupported CDR encapsulation {0:#06x} (expected 0x0000 CDR_BE or 0x0001 CDR_LE)")]
    Encapsulation(u16),
    #[error("message ends at byte {len} while reading {what} at byte {at}")]
    Truncated {
        what: &'static str,
        at: usize,
        len: usize,
    },
    #[error("{what} at byte {at}: {why}")]
    Invalid {
        what: &'static str,
        at: usize,
        why: String,
    },
}

/// Reads a CDR payload field by field.
pub struct CdrReader<'a> {
    data: &'a [u8],
    pos: usize,
    endian: Endian,
}

const HEADER: usize = 4;

impl<'a> CdrReader<'a> {
    /// Checks the encapsulation header and positions after it.
    pub fn new(data: &'a [u8]) -> Result<CdrReader<'a>, CdrError> {
        if data.len() < HEADER {
            return Err(CdrError::NoHeader { len: data.len() });
        }
        let endian = match (data[0], data[1]) {
            (0, 1) => Endian::Little,
            (0, 0) => Endian::Big,
            (a, b) => return Err(CdrError::Encapsulation(u16::from_be_bytes([a, b]))),
        };
        Ok(CdrReader {
            data,
            pos: HEADER,
            endian,
        })
    }

    /// Bytes not yet read (trailing padding is allowed by CDR).
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], CdrError> {
        // Alignment is relative to the end of the encapsulation header.
        let rel = self.pos - HEADER;
        let at = self.pos + (N - rel % N) % N;
        let end = at.checked_add(N).filter(|&e| e <= self.data.len());
        let Some(end) = end else {
            return Err(CdrError::Truncated {
                what,
                at,
                len: self.data.len(),
            });
        };
        let mut b = [0u8; N];
        b.copy_from_slice(&self.data[at..end]);
        self.pos = end;
        Ok(b)
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, CdrError> {
        let b = self.take::<4>(what)?;
        Ok(match self.endian {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        })
    }

    pub fn i32(&mut self, what: &'static str) -> Result<i32, CdrError> {
        Ok(self.u32(what)? as i32)
    }

    pub fn f64(&mut self, what: &'static str) -> Result<f64, CdrError> {
        let b = self.take::<8>(what)?;
        Ok(match self.endian {
            Endian::Little => f64::from_le_bytes(b),
            Endian::Big => f64::from_be_bytes(b),
        })
    }

    /// A sequence length, checked against the bytes left so a corrupt
    /// length cannot make the caller allocate gigabytes.
    pub fn len(&mut self, what: &'static str, element_size: usize) -> Result<usize, CdrError> {
        let at = self.pos;
        let n = self.u32(what)? as usize;
        if n.saturating_mul(element_size.max(1)) > self.remaining() + element_size {
            return Err(CdrError::Invalid {
                what,
                at,
                why: format!(
                    "length {n} needs more than the {} bytes left",
                    self.remaining()
                ),
            });
        }
        Ok(n)
    }

    /// A CDR string: length (NUL included), bytes, NUL.
    pub fn string(&mut self, what: &'static str) -> Result<String, CdrError> {
        let at = self.pos;
        let n = self.len(what, 1)?;
        if n == 0 {
            // Not what ROS writes (it always counts the NUL) but harmless.
            return Ok(String::new());
        }
        let start = self.pos;
        let end = start + n;
        if end > self.data.len() {
            return Err(CdrError::Truncated {
                what,
                at: start,
                len: self.data.len(),
            });
        }
        let bytes = &self.data[start..end - 1];
        if self.data[end - 1] != 0 {
            return Err(CdrError::Invalid {
                what,
                at,
                why: "string is not NUL-terminated".into(),
            });
        }
        self.pos = end;
        String::from_utf8(bytes.to_vec()).map_err(|e| CdrError::Invalid {
            what,
            at,
            why: format!("not UTF-8: {e}"),
        })
    }

    pub fn f64_seq(&mut self, what: &'static str) -> Result<Vec<f64>, CdrError> {
        let n = self.len(what, 8)?;
        (0..n).map(|_| self.f64(what)).collect()
    }

    pub fn string_seq(&mut self, what: &'static str) -> Result<Vec<String>, CdrError> {
        let n = self.len(what, 5)?;
        (0..n).map(|_| self.string(what)).collect()
    }
}

/// Builds a CDR payload; `finish` returns the bytes.
pub struct CdrWriter {
    buf: Vec<u8>,
    endian: Endian,
}

impl CdrWriter {
    pub fn new(endian: Endian) -> CdrWriter {
        let mut buf = Vec::with_capacity(128);
        buf.extend_from_slice(match endian {
            Endian::Little => &[0, 1, 0, 0],
            Endian::Big => &[0, 0, 0, 0],
        });
        CdrWriter { buf, endian }
    }

    fn align(&mut self, n: usize) {
        let rel = self.buf.len() - HEADER;
        let pad = (n - rel % n) % n;
        self.buf.resize(self.buf.len() + pad, 0);
    }

    pub fn u32(&mut self, x: u32) {
        self.align(4);
        self.buf.extend_from_slice(&match self.endian {
            Endian::Little => x.to_le_bytes(),
            Endian::Big => x.to_be_bytes(),
        });
    }

    pub fn i32(&mut self, x: i32) {
        self.u32(x as u32);
    }

    pub fn f64(&mut self, x: f64) {
        self.align(8);
        self.buf.extend_from_slice(&match self.endian {
            Endian::Little => x.to_le_bytes(),
            Endian::Big => x.to_be_bytes(),
        });
    }

    pub fn f32(&mut self, x: f32) {
        self.align(4);
        self.buf.extend_from_slice(&match self.endian {
            Endian::Little => x.to_le_bytes(),
            Endian::Big => x.to_be_bytes(),
        });
    }

    /// A `uint8`, `byte` or `bool` (0 or 1).
    pub fn u8(&mut self, x: u8) {
        self.buf.push(x);
    }

    pub fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }

    pub fn f64_seq(&mut self, xs: &[f64]) {
        self.u32(xs.len() as u32);
        for &x in xs {
            self.f64(x);
        }
    }

    pub fn string_seq(&mut self, xs: &[impl AsRef<str>]) {
        self.u32(xs.len() as u32);
        for s in xs {
            self.string(s.as_ref());
        }
    }

    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_counts_from_after_the_header_in_both_byte_orders() {
        for endian in [Endian::Little, Endian::Big] {
            let mut w = CdrWriter::new(endian);
            w.string("ab"); // 4 + 3 bytes: ends at rel 7
            w.f64(1.5); // padded to rel 8
            w.i32(-3);
            let b = w.finish();
            assert_eq!(b.len(), 4 + 8 + 8 + 4);
            assert_eq!(&b[8..11], b"ab\0");
            let mut r = CdrReader::new(&b).unwrap();
            assert_eq!(r.endian, endian);
            assert_eq!(r.string("s").unwrap(), "ab");
            assert_eq!(r.f64("x").unwrap(), 1.5);
            assert_eq!(r.i32("i").unwrap(), -3);
        }
    }

    #[test]
    fn byte_order_follows_the_header() {
        let mut w = CdrWriter::new(Endian::Big);
        w.u32(1);
        assert_eq!(w.finish(), [0, 0, 0, 0, 0, 0, 0, 1]);
        let mut w = CdrWriter::new(Endian::Little);
        w.u32(1);
        assert_eq!(w.finish(), [0, 1, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert_eq!(
            CdrReader::new(&[0, 1]).err(),
            Some(CdrError::NoHeader { len: 2 })
        );
        assert!(matches!(
            CdrReader::new(&[0, 7, 0, 0]).err(),
            Some(CdrError::Encapsulation(7))
        ));
        let mut r = CdrReader::new(&[0, 1, 0, 0, 1, 0]).unwrap();
        assert!(matches!(r.u32("x"), Err(CdrError::Truncated { .. })));
        // A sequence claiming 2^32-1 elements is refused before allocating.
        let mut r = CdrReader::new(&[0, 1, 0, 0, 255, 255, 255, 255]).unwrap();
        assert!(matches!(r.f64_seq("v"), Err(CdrError::Invalid { .. })));
        let mut r = CdrReader::new(&[0, 1, 0, 0, 2, 0, 0, 0, b'a', b'b']).unwrap();
        assert!(matches!(r.string("s"), Err(CdrError::Invalid { .. })));
    }
}
