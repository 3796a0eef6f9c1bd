//! The firmware bridge's frames (`firmware-bridge/PROTOCOL.md`): CRC,
//! encoders for each command, and the reader that splits a byte stream
//! into frames.
//!
//! Frame: `A5 5A | LEN | SEQ | CMD | payload | CRC16 (LE)`, the CRC being
//! CRC-16/CCITT-FALSE over LEN..payload. Pure functions: the session only
//! moves their bytes through the port the link thread owns.

use crate::servo::link::WatchdogMode;

/// Start bytes of every frame.
pub const START: [u8; 2] = [0xA5, 0x5A];
/// Largest payload the firmware accepts.
pub const MAX_PAYLOAD: usize = 32;
/// Servo channels of the firmware.
pub const CHANNELS: usize = 6;

/// Command codes; a reply carries `cmd | REPLY`.
pub mod cmd {
    pub const SET_TARGETS: u8 = 0x01;
    pub const STATUS: u8 = 0x02;
    pub const SET_LIMITS: u8 = 0x03;
    pub const RELAX: u8 = 0x04;
    pub const ESTOP: u8 = 0x05;
    pub const SET_WATCHDOG: u8 = 0x06;
    pub const REPLY: u8 = 0x80;
}

/// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final
/// XOR): the check value of "123456789" is 0x29B1.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// One frame: `START`, length, sequence, command, payload, CRC. Panics
/// only on a payload over [`MAX_PAYLOAD`], which no caller here builds.
pub fn frame(seq: u8, command: u8, payload: &[u8]) -> Vec<u8> {
    assert!(
        payload.len() <= MAX_PAYLOAD,
        "payload over {MAX_PAYLOAD} bytes"
    );
    let mut f = Vec::with_capacity(payload.len() + 7);
    f.extend_from_slice(&START);
    f.extend_from_slice(&[payload.len() as u8, seq, command]);
    f.extend_from_slice(payload);
    let crc = crc16(&f[2..]);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// SET_TARGETS: a pulse width (µs) per channel, 0 for no pulse.
pub fn set_targets(seq: u8, widths: &[u16; CHANNELS]) -> Vec<u8> {
    let mut p = [0u8; 2 * CHANNELS];
    for (c, w) in p.chunks_exact_mut(2).zip(widths) {
        c.copy_from_slice(&w.to_le_bytes());
    }
    frame(seq, cmd::SET_TARGETS, &p)
}

/// SET_LIMITS for one channel (the firmware also clamps to its own range).
pub fn set_limits(seq: u8, channel: u8, min_us: u16, max_us: u16) -> Vec<u8> {
    let mut p = vec![channel];
    p.extend_from_slice(&min_us.to_le_bytes());
    p.extend_from_slice(&max_us.to_le_bytes());
    frame(seq, cmd::SET_LIMITS, &p)
}

/// SET_WATCHDOG: timeout (0 = off) and what to do when it trips.
pub fn set_watchdog(seq: u8, timeout_ms: u16, mode: WatchdogMode) -> Vec<u8> {
    let mut p = timeout_ms.to_le_bytes().to_vec();
    p.push(match mode {
        WatchdogMode::Hold => 0,
        WatchdogMode::Relax => 1,
    });
    frame(seq, cmd::SET_WATCHDOG, &p)
}

/// A decoded frame (CRC already checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub seq: u8,
    pub command: u8,
    pub payload: Vec<u8>,
}

/// Splits a byte stream into frames, skipping garbage and frames with a
/// bad CRC or length (counted), like the firmware's own receiver.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
    /// Bytes skipped while looking for a start.
    pub garbage: u64,
    /// Frames dropped for a bad CRC or a length over [`MAX_PAYLOAD`].
    pub bad: u64,
}

impl FrameReader {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet taken as a frame or dropped.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The next complete, valid frame, if the buffer holds one.
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            let start = self.buf.windows(2).position(|w| w == START);
            let Some(i) = start else {
                // Keep a trailing first start byte: its partner may follow.
                let keep = usize::from(self.buf.last() == Some(&START[0]));
                self.garbage += (self.buf.len() - keep) as u64;
                self.buf.drain(..self.buf.len() - keep);
                return None;
            };
            self.garbage += i as u64;
            self.buf.drain(..i);
            if self.buf.len() < 3 {
                return None;
            }
            let n = usize::from(self.buf[2]);
            if n > MAX_PAYLOAD {
                self.bad += 1;
                self.buf.drain(..3);
                continue;
            }
            if self.buf.len() < n + 7 {
                return None;
            }
            let body = &self.buf[2..5 + n];
            let crc = u16::from_le_bytes([self.buf[5 + n], self.buf[6 + n]]);
            if crc16(body) != crc {
                self.bad += 1;
                self.buf.drain(..n + 7);
                continue;
            }
            let f = Frame {
                seq: body[1],
                command: body[2],
                payload: body[3..].to_vec(),
            };
            self.buf.drain(..n + 7);
            return Some(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_check_value_and_protocol_example() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
        let f = frame(1, cmd::STATUS, &[]);
        assert_eq!(&f[..5], &[0xA5, 0x5A, 0, 1, 2]);
        assert_eq!(u16::from_le_bytes([f[5], f[6]]), crc16(&[0, 1, 2]));
    }

    #[test]
    fn reader_skips_garbage_and_bad_frames() {
        let mut r = FrameReader::default();
        let good = frame(7, cmd::STATUS | cmd::REPLY, &[0; 30]);
        let mut bad = frame(8, cmd::STATUS | cmd::REPLY, &[1, 2]);
        let last = bad.len() - 1;
        bad[last] ^= 0xFF;
        let mut stream = vec![0x00, 0xA5, 0x13];
        stream.extend(&bad);
        stream.extend(&[0xA5, 0x5A, 200]);
        stream.extend(&good);
        // Byte by byte, as a slow port delivers it.
        let mut frames = vec![];
        for b in stream {
            r.push(&[b]);
            while let Some(f) = r.next_frame() {
                frames.push(f);
            }
        }
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].seq, 7);
        assert_eq!(r.bad, 2, "bad CRC and length 200");
        assert_eq!(r.garbage, 3);
    }

    #[test]
    fn targets_frame_is_little_endian_by_channel() {
        let f = set_targets(3, &[1500, 0, 1000, 2000, 0, 0]);
        assert_eq!(f.len(), 7 + 12);
        assert_eq!(&f[5..9], &[0xDC, 0x05, 0, 0]);
        assert_eq!(&f[9..11], &1000u16.to_le_bytes());
    }
}
