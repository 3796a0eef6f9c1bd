//! The receive buffer of a status reader: bytes from the bus waiting to be
//! decoded, and the count of those thrown away while looking for a header.

/// Bytes received from a bus and not decoded yet.
#[derive(Debug, Clone, Default)]
pub struct RxBuffer {
    buf: Vec<u8>,
    skipped: u64,
}

impl RxBuffer {
    /// Appends bytes received from the bus.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The bytes waiting, oldest first.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes received but not decoded yet (an incomplete packet).
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Bytes dropped so far while looking for a header.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Drops everything pending (after a timeout, before a new request).
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Drops the first `n` bytes (or all there are): counted as skipped
    /// when they are `garbage`, not when they were a packet or a header
    /// already reported as bad.
    pub fn drop_front(&mut self, n: usize, garbage: bool) {
        let n = n.min(self.buf.len());
        self.buf.drain(..n);
        if garbage {
            self.skipped += n as u64;
        }
    }

    /// Moves the buffer to the next `header`, dropping what comes before
    /// it as garbage; false when there is none yet, keeping only a tail
    /// that may be the start of one.
    pub fn seek(&mut self, header: &[u8]) -> bool {
        if let Some(i) = self.buf.windows(header.len()).position(|w| w == header) {
            self.drop_front(i, true);
            return true;
        }
        let keep = (1..header.len())
            .rev()
            .find(|&k| self.buf.ends_with(&header[..k]))
            .unwrap_or(0);
        self.drop_front(self.buf.len() - keep, true);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_drops_garbage_and_keeps_a_partial_header() {
        let mut r = RxBuffer::default();
        r.push(&[1, 2, 0xFF, 0xFF]);
        assert!(!r.seek(&[0xFF, 0xFF, 0xFD]));
        assert_eq!((r.bytes(), r.skipped()), (&[0xFF, 0xFF][..], 2));
        r.push(&[0xFD, 9]);
        assert!(r.seek(&[0xFF, 0xFF, 0xFD]));
        assert_eq!(r.bytes(), [0xFF, 0xFF, 0xFD, 9]);
        r.drop_front(3, false);
        assert_eq!((r.pending(), r.skipped()), (1, 2));
        r.push(&[0xFF, 0x00]);
        assert!(!r.seek(&[0xFF, 0xFF]));
        assert_eq!((r.pending(), r.skipped()), (0, 5));
    }
}
