//! Protocol 2.0 status packets: the error byte, a reader that finds them
//! in whatever a half-duplex bus delivers, and the one-packet reply of
//! FAST SYNC READ.
//!
//! StatusPacket packet: `FF FF FD 00 ID LEN_L LEN_H 55 ERR P1..Pn CRC_L CRC_H`,
//! stuffed like an instruction packet. ERR: bit 7 is the alert (a
//! hardware error is latched: read register 70), bits 0-6 an error number
//! about this instruction (e-manual, "StatusPacket Packet").

use super::crc::crc16;
use super::packet::{BROADCAST_ID, EncodeError, HEADER, MAX_ID, MAX_PACKET_LEN, frame, inst};
use crate::servo::bus::{self, BusStatus, RxBuffer, StatusStream};
use thiserror::Error;

/// Largest LEN accepted by default: a packet of [`MAX_PACKET_LEN`] bytes
/// (the vendor SDK's receive limit too).
pub const MAX_STATUS_LEN: u16 = (MAX_PACKET_LEN - 7) as u16;

/// What the servo says went wrong with the instruction (bits 0-6 of the
/// error byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorNumber {
    /// It could not process the instruction.
    ResultFail,
    /// Unknown instruction, or ACTION without REG WRITE.
    Instruction,
    /// The CRC of our packet did not match.
    Crc,
    /// A value outside the register's range.
    DataRange,
    /// Fewer bytes than the register holds.
    DataLength,
    /// A value beyond a limit register.
    DataLimit,
    /// Read-only or undefined address, or EEPROM while the torque is on.
    Access,
    Other(u8),
}

impl ErrorNumber {
    pub fn from_code(code: u8) -> ErrorNumber {
        match code {
            1 => ErrorNumber::ResultFail,
            2 => ErrorNumber::Instruction,
            3 => ErrorNumber::Crc,
            4 => ErrorNumber::DataRange,
            5 => ErrorNumber::DataLength,
            6 => ErrorNumber::DataLimit,
            7 => ErrorNumber::Access,
            n => ErrorNumber::Other(n),
        }
    }

    pub fn code(self) -> u8 {
        match self {
            ErrorNumber::ResultFail => 1,
            ErrorNumber::Instruction => 2,
            ErrorNumber::Crc => 3,
            ErrorNumber::DataRange => 4,
            ErrorNumber::DataLength => 5,
            ErrorNumber::DataLimit => 6,
            ErrorNumber::Access => 7,
            ErrorNumber::Other(n) => n,
        }
    }
}

impl std::fmt::Display for ErrorNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorNumber::ResultFail => write!(f, "result fail"),
            ErrorNumber::Instruction => write!(f, "instruction error"),
            ErrorNumber::Crc => write!(f, "CRC error"),
            ErrorNumber::DataRange => write!(f, "data range error"),
            ErrorNumber::DataLength => write!(f, "data length error"),
            ErrorNumber::DataLimit => write!(f, "data limit error"),
            ErrorNumber::Access => write!(f, "access error"),
            ErrorNumber::Other(n) => write!(f, "error {n}"),
        }
    }
}

/// The error byte of a status packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ErrorByte(pub u8);

impl ErrorByte {
    pub const ALERT: u8 = 0x80;

    /// A hardware error is latched (the torque is off until a reboot).
    pub fn alert(self) -> bool {
        self.0 & Self::ALERT != 0
    }

    /// The instruction's error, if any.
    pub fn error(self) -> Option<ErrorNumber> {
        match self.0 & !Self::ALERT {
            0 => None,
            n => Some(ErrorNumber::from_code(n)),
        }
    }

    pub fn is_ok(self) -> bool {
        self.0 == 0
    }
}

impl std::fmt::Display for ErrorByte {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.error(), self.alert()) {
            (None, false) => write!(f, "ok"),
            (Some(e), false) => write!(f, "{e}"),
            (None, true) => write!(f, "hardware alert"),
            (Some(e), true) => write!(f, "{e}, hardware alert"),
        }
    }
}

/// A decoded status packet (parameters unstuffed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusPacket {
    pub id: u8,
    pub error: ErrorByte,
    pub params: Vec<u8>,
}

impl StatusPacket {
    /// The parameters, checked to be exactly `len` bytes: a reply to a
    /// READ of `len` bytes that is longer or shorter is not trusted.
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

    /// The model number and firmware version of a PING reply.
    pub fn ping_reply(&self) -> Result<(u16, u8), StatusError> {
        let p = self.data(3)?;
        Ok((u16::from_le_bytes([p[0], p[1]]), p[2]))
    }
}

/// Why bytes on the bus were not a usable status packet.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum StatusError {
    #[error("status packet from id {id}: CRC {got:#06x}, expected {expected:#06x}")]
    BadCrc { id: u8, expected: u16, got: u16 },
    #[error("status packet from id {id}: length {len} is outside 4..={max}")]
    BadLength { id: u8, len: u16, max: u16 },
    #[error("status packet from id {id}: a header inside its parameters (bad byte stuffing)")]
    BadStuffing { id: u8 },
    #[error("status packet from id {id}: {got} data bytes, expected {expected}")]
    UnexpectedLength { id: u8, expected: usize, got: usize },
    #[error(
        "fast sync read reply: servo {got} where servo {expected} was expected (position {index})"
    )]
    FastSyncOrder { index: usize, expected: u8, got: u8 },
}

/// A status packet with a valid CRC, stuffed like a servo's. Used by tests
/// and simulated servos; real servos produce these.
pub fn encode_status(id: u8, error: u8, params: &[u8]) -> Result<Vec<u8>, EncodeError> {
    if id > MAX_ID {
        return Err(EncodeError::BadId { id });
    }
    frame(id, &[inst::STATUS, error], &[params])
}

/// Splits a byte stream from the bus into status packets.
///
/// Robust by construction: bytes before a header are dropped (and counted
/// in [`skipped`](Self::skipped)). `FF FF FD` is a header only when the
/// reserved byte 0 follows (so a stuffed `FF FF FD FD` is not one), the
/// ID is a servo's or the broadcast ID (FAST SYNC READ replies), and the
/// instruction is 0x55 (so the echo of our own instruction on an adapter
/// that hears itself is skipped); otherwise the search moves on by one
/// byte. A bad length, CRC or stuffing is reported and the search
/// restarts just after that header, so a real packet hiding inside a
/// corrupt one is still found. Every index is bounds-checked: no input
/// makes it panic, and the buffer never holds more than one maximal
/// packet plus what was pushed since.
#[derive(Debug, Clone)]
pub struct StatusReader {
    rx: RxBuffer,
    max_len: u16,
}

impl Default for StatusReader {
    fn default() -> Self {
        Self::new()
    }
}

/// Bytes from the header to the instruction: enough to judge a header.
const HEAD: usize = 8;

impl StatusReader {
    pub fn new() -> StatusReader {
        StatusReader {
            rx: RxBuffer::default(),
            max_len: MAX_STATUS_LEN,
        }
    }

    /// Accept LEN up to `max` only. When the longest expected reply is
    /// known, a corrupted large LEN is then rejected at once instead of
    /// swallowing the following packets.
    pub fn with_max_len(mut self, max: u16) -> StatusReader {
        self.max_len = max.clamp(4, MAX_STATUS_LEN);
        self
    }

    /// Whether the bytes after a found `FF FF FD` rule it out as a status
    /// header, judged on as many of them as have arrived.
    fn not_a_header(&self) -> bool {
        let b = self.rx.bytes();
        let bad_reserved = b.get(3).is_some_and(|&r| r != HEADER[3]);
        let bad_id = b
            .get(4)
            .is_some_and(|&id| id > MAX_ID && id != BROADCAST_ID);
        let not_status = b.get(7).is_some_and(|&i| i != inst::STATUS);
        bad_reserved || bad_id || not_status
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
            if !self.rx.seek(&HEADER[..3]) {
                return None;
            }
            if self.not_a_header() {
                self.rx.drop_front(1, true);
                continue;
            }
            let buf = self.rx.bytes();
            if buf.len() < HEAD {
                return None;
            }
            let id = buf[4];
            let len = u16::from_le_bytes([buf[5], buf[6]]);
            if !(4..=self.max_len).contains(&len) {
                self.rx.drop_front(3, false);
                return Some(Err(StatusError::BadLength {
                    id,
                    len,
                    max: self.max_len,
                }));
            }
            let total = 7 + usize::from(len);
            if buf.len() < total {
                return None;
            }
            let expected = crc16(&buf[..total - 2]);
            let got = u16::from_le_bytes([buf[total - 2], buf[total - 1]]);
            if expected != got {
                self.rx.drop_front(3, false);
                return Some(Err(StatusError::BadCrc { id, expected, got }));
            }
            // FAST SYNC READ replies (from the broadcast ID) are not stuffed.
            let body = &buf[8..total - 2];
            let body = if id == BROADCAST_ID {
                Some(body.to_vec())
            } else {
                super::packet::unstuff(body)
            };
            let Some(body) = body else {
                self.rx.drop_front(3, false);
                return Some(Err(StatusError::BadStuffing { id }));
            };
            self.rx.drop_front(total, false);
            return Some(Ok(StatusPacket {
                id,
                error: ErrorByte(body[0]),
                params: body[1..].to_vec(),
            }));
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

/// One servo's part of a FAST SYNC READ reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FastSyncPart {
    pub id: u8,
    pub error: ErrorByte,
    pub data: Vec<u8>,
}

/// The reply to a FAST SYNC READ of `len` bytes from `ids`: one status
/// packet from the broadcast ID in which each servo in turn appends its
/// error byte, ID, data and a running CRC (e-manual, "Fast Sync Read");
/// the last servo's CRC is the packet's own. The packet CRC, checked by
/// the reader, covers all of it, so the running CRCs are skipped here.
pub fn split_fast_sync(
    status: &StatusPacket,
    len: usize,
    ids: &[u8],
) -> Result<Vec<FastSyncPart>, StatusError> {
    let segment = len + 4;
    // The error byte of the first servo sits where a status's error is.
    let expected = (segment * ids.len()).saturating_sub(3);
    if status.id != BROADCAST_ID || ids.is_empty() || status.params.len() != expected {
        return Err(StatusError::UnexpectedLength {
            id: status.id,
            expected,
            got: status.params.len(),
        });
    }
    let mut bytes = Vec::with_capacity(expected + 1);
    bytes.push(status.error.0);
    bytes.extend_from_slice(&status.params);
    ids.iter()
        .enumerate()
        .map(|(index, &want)| {
            let s = &bytes[index * segment..];
            if s[1] != want {
                return Err(StatusError::FastSyncOrder {
                    index,
                    expected: want,
                    got: s[1],
                });
            }
            Ok(FastSyncPart {
                id: want,
                error: ErrorByte(s[0]),
                data: s[2..2 + len].to_vec(),
            })
        })
        .collect()
}

/// The FAST SYNC READ reply the servos `parts` (in order) send together:
/// for tests and simulated servos.
pub fn encode_fast_sync(parts: &[FastSyncPart]) -> Result<Vec<u8>, EncodeError> {
    if parts.is_empty() {
        return Err(EncodeError::NoServos {
            instruction: "FAST SYNC READ reply",
        });
    }
    let mut packet = Vec::new();
    let total_len: usize = 1 + parts.iter().map(|p| p.data.len() + 4).sum::<usize>();
    packet.extend_from_slice(&HEADER);
    packet.push(BROADCAST_ID);
    packet.extend_from_slice(&(total_len.min(0xFFFF) as u16).to_le_bytes());
    packet.push(inst::STATUS);
    for (k, p) in parts.iter().enumerate() {
        packet.push(p.error.0);
        packet.push(p.id);
        packet.extend_from_slice(&p.data);
        if k + 1 < parts.len() {
            let crc = crc16(&packet);
            packet.extend_from_slice(&crc.to_le_bytes());
        }
    }
    if packet.len() + 2 > MAX_PACKET_LEN {
        return Err(EncodeError::TooLong {
            len: packet.len() + 2,
            max: MAX_PACKET_LEN,
        });
    }
    let crc = crc16(&packet);
    packet.extend_from_slice(&crc.to_le_bytes());
    Ok(packet)
}
