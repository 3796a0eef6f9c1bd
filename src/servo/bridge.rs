//! The firmware bridge's wire protocol (`firmware-bridge/PROTOCOL.md`):
//! frames, CRC, the status reply, and the link session that sets the
//! firmware up and streams pulse widths to it.
//!
//! Frame: `A5 5A | LEN | SEQ | CMD | payload | CRC16 (LE)`, the CRC being
//! CRC-16/CCITT-FALSE over LEN..payload. The codec is pure; the session
//! only moves its bytes through the port the link thread owns.

use super::calibration::Calibration;
use super::link::{
    LinkSettings, LinkStatus, Session, SessionError, StartPose, TickOutcome, WatchdogMode,
    read_available,
};
use serialport::SerialPort;
use std::time::{Duration, Instant};

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

/// The firmware's status reply (0x82), as PROTOCOL.md lays it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FirmwareStatus {
    pub estop: bool,
    pub watchdog_tripped: bool,
    pub watchdog_relax: bool,
    pub output_active: bool,
    /// SEQ of the last SET_TARGETS the firmware accepted.
    pub last_target_seq: u8,
    pub bad_crc: u16,
    pub bad_length: u16,
    pub garbage: u16,
    pub frame_timeouts: u16,
    pub watchdog_trips: u16,
    /// Valid frames received (wraps at 65535).
    pub frames_ok: u16,
    pub uptime_ms: u32,
    /// Pulse width output now per channel (µs, 0 = none).
    pub width_us: [u16; CHANNELS],
}

impl FirmwareStatus {
    pub const LEN: usize = 30;

    pub fn parse(p: &[u8]) -> Option<FirmwareStatus> {
        if p.len() != Self::LEN {
            return None;
        }
        let u16_at = |o: usize| u16::from_le_bytes([p[o], p[o + 1]]);
        let mut width_us = [0; CHANNELS];
        for (c, w) in width_us.iter_mut().enumerate() {
            *w = u16_at(18 + 2 * c);
        }
        Some(FirmwareStatus {
            estop: p[0] & 1 != 0,
            watchdog_tripped: p[0] & 2 != 0,
            watchdog_relax: p[0] & 4 != 0,
            output_active: p[0] & 8 != 0,
            last_target_seq: p[1],
            bad_crc: u16_at(2),
            bad_length: u16_at(4),
            garbage: u16_at(6),
            frame_timeouts: u16_at(8),
            watchdog_trips: u16_at(10),
            frames_ok: u16_at(12),
            uptime_ms: u32::from_le_bytes([p[14], p[15], p[16], p[17]]),
            width_us,
        })
    }
}

/// The link session for the firmware bridge: on open, sets the firmware's
/// watchdog and per-channel limits (each acknowledged); then one
/// SET_TARGETS per tick and a STATUS request about ten times a second,
/// whose replies tell the link the firmware is alive.
pub struct BridgeSession {
    /// Channel of each joint, chain order.
    channels: Vec<u8>,
    /// Limits sent to the firmware: each joint's calibrated range.
    limits: Vec<(u16, u16)>,
    watchdog_ms: u16,
    watchdog: WatchdogMode,
    reply_timeout: Duration,
    status_every: u32,
    ticks: u32,
    seq: u8,
    reader: FrameReader,
    last_reply: Option<Instant>,
    status: Option<FirmwareStatus>,
    /// The firmware's valid-frame counter after set-up, and the frames
    /// written since: at close, their difference is the frames lost.
    baseline: Option<u16>,
    written: u64,
    lost: Option<u64>,
}

impl BridgeSession {
    pub fn new(cal: &Calibration, settings: &LinkSettings) -> BridgeSession {
        BridgeSession {
            channels: cal.joints.iter().map(|j| j.output as u8).collect(),
            limits: cal
                .joints
                .iter()
                .map(|j| (j.min.max(0) as u16, j.max.max(0) as u16))
                .collect(),
            watchdog_ms: settings.watchdog_ms,
            watchdog: settings.watchdog,
            reply_timeout: settings.reply_timeout,
            status_every: (settings.rate_hz / 10.0).round().max(1.0) as u32,
            ticks: 0,
            seq: 0,
            reader: FrameReader::default(),
            last_reply: None,
            status: None,
            baseline: None,
            written: 0,
            lost: None,
        }
    }

    fn write(&mut self, io: &mut dyn SerialPort, bytes: &[u8]) -> Result<(), SessionError> {
        io.write_all(bytes).map_err(|e| {
            SessionError::Io(std::io::Error::new(
                e.kind(),
                format!("writing to the port failed ({e}): unplugged?"),
            ))
        })?;
        self.written += 1;
        Ok(())
    }

    fn next_seq(&mut self) -> u8 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Reads what the port has now, without waiting.
    fn poll(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        read_available(io, |b| self.reader.push(b))
    }

    /// Handles one reply; a status whose uptime went backwards means the
    /// board restarted and lost its settings.
    fn on_frame(&mut self, f: &Frame, now: Instant) -> Result<(), SessionError> {
        self.last_reply = Some(now);
        if f.command == cmd::STATUS | cmd::REPLY
            && let Some(s) = FirmwareStatus::parse(&f.payload)
        {
            if let Some(old) = self.status
                && s.uptime_ms < old.uptime_ms
            {
                self.status = Some(s);
                return Err(SessionError::Device(format!(
                    "the firmware restarted (uptime {} ms, was {} ms); setting it up again",
                    s.uptime_ms, old.uptime_ms
                )));
            }
            self.status = Some(s);
        }
        Ok(())
    }

    /// Sends a request and waits (at most the reply timeout) for its reply.
    fn request(
        &mut self,
        io: &mut dyn SerialPort,
        command: u8,
        bytes: impl FnOnce(u8) -> Vec<u8>,
        what: &str,
    ) -> Result<Vec<u8>, SessionError> {
        let seq = self.next_seq();
        self.write(io, &bytes(seq))?;
        let deadline = Instant::now() + self.reply_timeout;
        loop {
            while let Some(f) = self.reader.next_frame() {
                let now = Instant::now();
                self.on_frame(&f, now)?;
                if f.seq == seq && f.command == command | cmd::REPLY {
                    return Ok(f.payload);
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(SessionError::NoReply(format!(
                    "no reply from the firmware to {what} within {} ms",
                    self.reply_timeout.as_millis()
                )));
            }
            self.poll(io)?;
            if self.reader.buf.len() < 7 {
                std::thread::sleep(Duration::from_millis(2).min(deadline - now));
            }
        }
    }

    fn expect_ok(result: Vec<u8>, what: &str) -> Result<(), SessionError> {
        match result.first() {
            Some(0) => Ok(()),
            other => Err(SessionError::Device(format!(
                "the firmware refused {what} (result {other:?})"
            ))),
        }
    }
}

impl Session for BridgeSession {
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError> {
        io.clear(serialport::ClearBuffer::Input)
            .map_err(SessionError::from)?;
        self.reader = FrameReader::default();
        self.status = None;
        let (ms, mode) = (self.watchdog_ms, self.watchdog);
        let r = self.request(
            io,
            cmd::SET_WATCHDOG,
            |s| set_watchdog(s, ms, mode),
            "SET_WATCHDOG",
        )?;
        Self::expect_ok(r, "SET_WATCHDOG")?;
        for k in 0..self.channels.len() {
            let (ch, (lo, hi)) = (self.channels[k], self.limits[k]);
            let r = self.request(
                io,
                cmd::SET_LIMITS,
                |s| set_limits(s, ch, lo, hi),
                "SET_LIMITS",
            )?;
            Self::expect_ok(r, &format!("SET_LIMITS on channel {ch}"))?;
        }
        self.request(io, cmd::STATUS, |s| frame(s, cmd::STATUS, &[]), "STATUS")?;
        self.baseline = self.status.map(|s| s.frames_ok);
        self.written = 0;
        self.lost = None;
        // Hobby servos cannot tell where they are, but the firmware says
        // what it sends them: a board left pulsing (an earlier run, its
        // watchdog holding) has its servos at those widths. A channel
        // without pulses (a fresh or relaxed board): nobody knows.
        Ok(self
            .status
            .and_then(|s| {
                self.channels
                    .iter()
                    .map(|&ch| {
                        let w = s.width_us[usize::from(ch)];
                        (w != 0).then_some(i32::from(w))
                    })
                    .collect()
            })
            .map_or(StartPose::Unknown, StartPose::Commanded))
    }

    /// Asks for a last status and counts the frames the firmware did not
    /// get since set-up (its counter counts the request itself too).
    fn close(&mut self, io: &mut dyn SerialPort) {
        let reply = self.request(io, cmd::STATUS, |s| frame(s, cmd::STATUS, &[]), "STATUS");
        if let (Ok(p), Some(base)) = (reply, self.baseline)
            && let Some(fin) = FirmwareStatus::parse(&p)
        {
            let got = fin.frames_ok.wrapping_sub(base);
            self.lost = Some(self.written.saturating_sub(u64::from(got)) % 65_536);
        }
    }

    fn tick(
        &mut self,
        io: &mut dyn SerialPort,
        commands: Option<&[i32]>,
        now: Instant,
    ) -> Result<TickOutcome, SessionError> {
        let mut out = TickOutcome::default();
        if let Some(c) = commands {
            let mut widths = [0u16; CHANNELS];
            for (&ch, &us) in self.channels.iter().zip(c) {
                widths[usize::from(ch)] = us.clamp(0, i32::from(u16::MAX)) as u16;
            }
            let seq = self.next_seq();
            self.write(io, &set_targets(seq, &widths))?;
            out.frames_sent += 1;
        }
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks.is_multiple_of(self.status_every) || commands.is_none() {
            let seq = self.next_seq();
            self.write(io, &frame(seq, cmd::STATUS, &[]))?;
        }
        self.poll(io)?;
        while let Some(f) = self.reader.next_frame() {
            self.on_frame(&f, now)?;
        }
        Ok(out)
    }

    fn last_reply(&self) -> Option<Instant> {
        self.last_reply
    }

    fn report(&self, status: &mut LinkStatus) {
        status.firmware = self.status;
        status.frames_lost = self.lost;
        status.reply_garbage = self.reader.garbage + self.reader.bad;
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
    fn status_layout() {
        let mut p = [0u8; 30];
        p[0] = 0b1010;
        p[1] = 9;
        p[12..14].copy_from_slice(&500u16.to_le_bytes());
        p[14..18].copy_from_slice(&123_456u32.to_le_bytes());
        p[28..30].copy_from_slice(&1500u16.to_le_bytes());
        let s = FirmwareStatus::parse(&p).unwrap();
        assert!(s.watchdog_tripped && s.output_active && !s.estop);
        assert_eq!(
            (s.last_target_seq, s.frames_ok, s.uptime_ms),
            (9, 500, 123_456)
        );
        assert_eq!(s.width_us[5], 1500);
        assert_eq!(FirmwareStatus::parse(&p[..29]), None);
    }

    #[test]
    fn targets_frame_is_little_endian_by_channel() {
        let f = set_targets(3, &[1500, 0, 1000, 2000, 0, 0]);
        assert_eq!(f.len(), 7 + 12);
        assert_eq!(&f[5..9], &[0xDC, 0x05, 0, 0]);
        assert_eq!(&f[9..11], &1000u16.to_le_bytes());
    }
}
