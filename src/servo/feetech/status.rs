//! Status packets from the bus: the servos' error flags, the decoded
//! packet, and the reader that finds packets in a noisy byte stream.

use super::model::Endian;
use super::packet::{HEADER, MAX_ID, MAX_STATUS_LEN, checksum};
use crate::servo::bus::{self, BusStatus, RxBuffer, StatusStream};
use thiserror::Error;

/// The error byte of a status packet: what the servo reports about itself.
/// Bit meanings are those of the vendor SDK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServoFlags(pub u8);

impl ServoFlags {
    pub const VOLTAGE: u8 = 1;
    pub const ANGLE: u8 = 2;
    pub const OVERHEAT: u8 = 4;
    pub const OVERCURRENT: u8 = 8;
    pub const OVERLOAD: u8 = 32;

    pub fn is_ok(self) -> bool {
        self.0 == 0
    }

    /// Names of the set bits, for logs and the node's link status.
    pub fn names(self) -> Vec<&'static str> {
        [
            (Self::VOLTAGE, "voltage"),
            (Self::ANGLE, "angle sensor"),
            (Self::OVERHEAT, "overheat"),
            (Self::OVERCURRENT, "overcurrent"),
            (Self::OVERLOAD, "overload"),
        ]
        .into_iter()
        .filter(|(bit, _)| self.0 & bit != 0)
        .map(|(_, name)| name)
        .collect()
    }
}

/// A decoded status packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusPacket {
    pub id: u8,
    pub flags: ServoFlags,
    pub params: Vec<u8>,
}

impl StatusPacket {
    /// The parameters, checked to be exactly `len` bytes: a reply to a READ
    /// of `len` bytes that is longer or shorter is not trusted.
    pub fn data(&self, len: usize) -> Result<&[u8], StatusError> {
        if self.params.len() == len {
            Ok(&self.params)
        } else {
            Err(StatusError::UnexpectedLength {
                id: self.id,
                expected: len,
                got: self.params.len(),
            })
        }
    }

    /// A two-byte value at `offset` in the parameters.
    pub fn word(&self, offset: usize, endian: Endian) -> Option<u16> {
        let b = self.params.get(offset..offset.checked_add(2)?)?;
        Some(endian.read_word([b[0], b[1]]))
    }
}

/// Why bytes on the bus were not a usable status packet.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum StatusError {
    #[error("status packet from id {id}: checksum {got:#04x}, expected {expected:#04x}")]
    BadChecksum { id: u8, expected: u8, got: u8 },
    #[error("status packet from id {id}: length byte {len} is outside 2..={max}")]
    BadLength { id: u8, len: u8, max: u8 },
    #[error("status packet from id {id}: {got} data bytes, expected {expected}")]
    UnexpectedLength { id: u8, expected: usize, got: usize },
}

/// Splits a byte stream from the bus into status packets.
///
/// Robust by construction: bytes before a plausible header are dropped
/// (and counted in [`skipped`](Self::skipped)); a header followed by an
/// impossible ID (above [`MAX_ID`]) or an error byte with bit 7 set (never
/// used by the servos) is not a header, so the search moves on by one byte,
/// which also handles a third `FF` before the real header. A bad length or
/// checksum is reported and the search restarts just after that header, so
/// a real packet hiding inside a corrupt one is still found. Every index is
/// bounds-checked: no input makes it panic, and the buffer never holds more
/// than one maximal packet plus what was pushed since.
#[derive(Debug, Clone)]
pub struct StatusReader {
    rx: RxBuffer,
    max_len: u8,
}

impl Default for StatusReader {
    fn default() -> Self {
        Self::new()
    }
}

impl StatusReader {
    pub fn new() -> StatusReader {
        StatusReader {
            rx: RxBuffer::default(),
            max_len: MAX_STATUS_LEN,
        }
    }

    /// Accept `LEN` bytes up to `max` only. When the longest expected reply
    /// is known (e.g. 4 for a 2-byte read), a corrupted large `LEN` is then
    /// rejected at once instead of swallowing the following packets.
    pub fn with_max_len(mut self, max: u8) -> StatusReader {
        self.max_len = max.max(2);
        self
    }
}

impl StatusStream for StatusReader {
    type Status = StatusPacket;
    type Error = StatusError;

    fn rx(&self) -> &RxBuffer {
        &self.rx
    }

    fn rx_mut(&mut self) -> &mut RxBuffer {
        &mut self.rx
    }

    fn next_status(&mut self) -> Option<Result<StatusPacket, StatusError>> {
        loop {
            // Find a header; a trailing FF is kept, it may start one.
            if !self.rx.seek(&HEADER) {
                return None;
            }
            let buf = self.rx.bytes();
            let (&id, &len, &err) = match (buf.get(2), buf.get(3), buf.get(4)) {
                (Some(id), Some(len), Some(err)) => (id, len, err),
                // Not enough to judge the header yet, unless what we have
                // already rules it out.
                (Some(&id), _, _) if id > MAX_ID => {
                    self.rx.drop_front(1, true);
                    continue;
                }
                _ => return None,
            };
            if id > MAX_ID || err & 0x80 != 0 {
                self.rx.drop_front(1, true);
                continue;
            }
            if !(2..=self.max_len).contains(&len) {
                self.rx.drop_front(2, false);
                return Some(Err(StatusError::BadLength {
                    id,
                    len,
                    max: self.max_len,
                }));
            }
            let total = usize::from(len) + 4;
            if buf.len() < total {
                return None;
            }
            let expected = checksum(&buf[2..total - 1]);
            let got = buf[total - 1];
            if expected != got {
                self.rx.drop_front(2, false);
                return Some(Err(StatusError::BadChecksum { id, expected, got }));
            }
            let status = StatusPacket {
                id,
                flags: ServoFlags(err),
                params: buf[5..total - 1].to_vec(),
            };
            self.rx.drop_front(total, false);
            return Some(Ok(status));
        }
    }
}

impl BusStatus for StatusPacket {
    fn id(&self) -> u8 {
        self.id
    }

    fn params(&self) -> &[u8] {
        &self.params
    }
}

/// Decodes every complete status packet in `bytes` (a convenience over
/// [`StatusReader`] for one buffer). An incomplete tail is ignored.
pub fn decode_all(bytes: &[u8]) -> Vec<Result<StatusPacket, StatusError>> {
    bus::decode_all::<StatusReader>(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servo::feetech::packet::encode_status;
    use proptest::prelude::*;

    #[test]
    fn decodes_after_garbage_and_split_reads() {
        let pkt = encode_status(1, 0, &[0x00, 0x08]).unwrap();
        let mut r = StatusReader::new();
        r.push(&[0x12, 0xFF, 0x00, 0xFF]);
        assert_eq!(r.next_status(), None);
        r.push(&[0xFF]); // FF FF FF: the first FF is not a header
        r.push(&pkt[..5]);
        assert_eq!(r.next_status(), None);
        r.push(&pkt[5..]);
        let s = r.next_status().unwrap().unwrap();
        assert_eq!(s.id, 1);
        assert_eq!(s.word(0, Endian::Little), Some(2048));
        assert_eq!(s.data(2).unwrap(), &[0x00, 0x08]);
        assert!(s.data(3).is_err());
        assert_eq!(r.next_status(), None);
        assert_eq!(r.pending(), 0);
        assert_eq!(r.skipped(), 5);
    }

    #[test]
    fn rejects_bad_checksum_then_recovers() {
        let mut bad = encode_status(2, 0, &[7]).unwrap();
        *bad.last_mut().unwrap() ^= 0x55;
        let good = encode_status(3, 0x20, &[]).unwrap();
        let out = decode_all(&[bad, good].concat());
        assert!(matches!(
            out[0],
            Err(StatusError::BadChecksum { id: 2, .. })
        ));
        let s = out.last().unwrap().as_ref().unwrap();
        assert_eq!((s.id, s.flags.names()), (3, vec!["overload"]));
    }

    #[test]
    fn rejects_bad_lengths() {
        assert_eq!(
            decode_all(&[0xFF, 0xFF, 1, 1, 0, 0xFD]),
            vec![Err(StatusError::BadLength {
                id: 1,
                len: 1,
                max: 250
            })]
        );
        let mut r = StatusReader::new().with_max_len(4);
        r.push(&[0xFF, 0xFF, 1, 200, 0]);
        assert!(matches!(
            r.next_status(),
            Some(Err(StatusError::BadLength { len: 200, .. }))
        ));
    }

    proptest! {
        #[test]
        fn decoder_never_panics_and_stays_bounded(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..32),
            max in any::<u8>(),
        ) {
            let mut r = StatusReader::new().with_max_len(max);
            for c in &chunks {
                r.push(c);
                while let Some(res) = r.next_status() {
                    if let Ok(s) = res {
                        prop_assert!(s.id <= MAX_ID);
                        prop_assert!(s.params.len() + 2 <= usize::from(max.max(2)));
                    }
                }
                prop_assert!(r.pending() <= usize::from(max.max(2)) + 4);
            }
        }

        #[test]
        fn packets_survive_garbage_without_headers(
            id in 0..=MAX_ID,
            err in 0u8..0x80,
            params in proptest::collection::vec(any::<u8>(), 0..20),
            garbage in proptest::collection::vec(0u8..0xFF, 0..20),
            split in 0usize..64,
        ) {
            let pkt = encode_status(id, err, &params).unwrap();
            let stream = [garbage.clone(), pkt].concat();
            let split = split.min(stream.len());
            let mut r = StatusReader::new();
            r.push(&stream[..split]);
            let mut got: Vec<_> = std::iter::from_fn(|| r.next_status()).collect();
            r.push(&stream[split..]);
            got.extend(std::iter::from_fn(|| r.next_status()));
            prop_assert_eq!(got, vec![Ok(StatusPacket { id, flags: ServoFlags(err), params })]);
        }
    }
}
