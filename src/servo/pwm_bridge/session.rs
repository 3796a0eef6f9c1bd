//! The link session for the firmware bridge.

use super::frame::{
    CHANNELS, Frame, FrameReader, cmd, frame, set_limits, set_targets, set_watchdog,
};
use super::status::FirmwareStatus;
use crate::servo::joint::JointMap;
use crate::servo::link::{
    LinkSettings, LinkStatus, Session, SessionError, StartPose, TickOutcome, WatchdogMode,
    await_reply, read_available,
};
use serialport::SerialPort;
use std::time::{Duration, Instant};

/// How long after the port opens the firmware gets to answer its first
/// request. An Uno or a Nano resets when a program opens its port (the
/// USB adapter's DTR line is wired to RESET): its boot loader runs for
/// about a second, eats what the host sends meanwhile, then starts the
/// firmware. The first request is sent again each reply timeout until
/// this has passed; waiting one reply timeout and reopening the port
/// would reset the board again, every attempt, and never connect.
pub const BOOT_WAIT: Duration = Duration::from_millis(2500);

/// How many reply timeouts the requests as the link closes (the RELAX of
/// `link.on_exit: relax`, the last status) wait for their reply.
const CLOSE_REPLY_TIMEOUTS: u32 = 5;

/// The link session for the firmware bridge: on open, sets the firmware's
/// watchdog and per-channel limits (each acknowledged); then one
/// SET_TARGETS per tick and a STATUS request about ten times a second,
/// whose replies tell the link the firmware is alive. Relaxing is one
/// RELAX of every channel of the calibration: the firmware finishes the
/// pulse in progress and sends no more until the next SET_TARGETS.
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
    /// The session for `joints` (chain order) as the calibration checked
    /// them: every output a channel of the firmware.
    pub fn new(joints: &[JointMap], settings: &LinkSettings) -> BridgeSession {
        BridgeSession {
            channels: joints.iter().map(|j| j.output as u8).collect(),
            limits: joints
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
        self.request_within(io, command, bytes, what, self.reply_timeout)
    }

    /// Sends a request and waits at most `wait` for its reply.
    fn request_within(
        &mut self,
        io: &mut dyn SerialPort,
        command: u8,
        bytes: impl FnOnce(u8) -> Vec<u8>,
        what: &str,
        wait: Duration,
    ) -> Result<Vec<u8>, SessionError> {
        let seq = self.next_seq();
        self.write(io, &bytes(seq))?;
        let reply = await_reply(io, wait, |io| {
            self.poll(io)?;
            while let Some(f) = self.reader.next_frame() {
                self.on_frame(&f, Instant::now())?;
                if f.seq == seq && f.command == command | cmd::REPLY {
                    return Ok(Some(f.payload));
                }
            }
            Ok(None)
        })?;
        reply.ok_or_else(|| {
            SessionError::NoReply(format!(
                "no reply from the firmware to {what} within {} ms",
                wait.as_millis()
            ))
        })
    }

    /// The first request after the port opened, SET_WATCHDOG, sent again
    /// each reply timeout until [`BOOT_WAIT`] has passed (a board that
    /// resets as its port opens is in its boot loader until then).
    fn set_watchdog_after_boot(
        &mut self,
        io: &mut dyn SerialPort,
    ) -> Result<Vec<u8>, SessionError> {
        let (ms, mode) = (self.watchdog_ms, self.watchdog);
        let opened = Instant::now();
        loop {
            let set = |s| set_watchdog(s, ms, mode);
            match self.request(io, cmd::SET_WATCHDOG, set, "SET_WATCHDOG") {
                Err(SessionError::NoReply(_)) if opened.elapsed() < BOOT_WAIT => continue,
                Err(SessionError::NoReply(_)) => {
                    return Err(SessionError::NoReply(format!(
                        "no reply from the firmware to SET_WATCHDOG, sent every {} ms for {:.1} s \
                         after the port opened (longer than a board that resets on opening takes \
                         to boot): is arm_ik's firmware flashed, at the link's baud rate?",
                        self.reply_timeout.as_millis(),
                        opened.elapsed().as_secs_f64()
                    )));
                }
                other => return other,
            }
        }
    }

    /// A STATUS request and its reply.
    fn status(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        self.request(io, cmd::STATUS, |s| frame(s, cmd::STATUS, &[]), "STATUS")?;
        Ok(())
    }

    /// One RELAX of the calibration's channels, its acknowledgement
    /// awaited at most `wait`.
    fn relax_within(
        &mut self,
        io: &mut dyn SerialPort,
        wait: Duration,
    ) -> Result<(), SessionError> {
        let mask = self.channels.iter().fold(0u8, |m, &ch| m | (1 << ch));
        let relax = |s| frame(s, cmd::RELAX, &[mask]);
        let r = self.request_within(io, cmd::RELAX, relax, "RELAX", wait)?;
        Self::expect_ok(r, "RELAX")
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
    /// Sets the firmware's watchdog and each channel's limits (the
    /// calibrated range), each acknowledged, and reads its status: nothing
    /// that changes the pulses.
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        io.clear(serialport::ClearBuffer::Input)
            .map_err(SessionError::from)?;
        self.reader = FrameReader::default();
        self.status = None;
        let r = self.set_watchdog_after_boot(io)?;
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
        self.status(io)?;
        self.baseline = self.status.map(|s| s.frames_ok);
        self.written = 0;
        self.lost = None;
        Ok(())
    }

    /// Nothing to switch on: the next SET_TARGETS starts the pulses. Hobby
    /// servos cannot tell where they are, but the firmware says what it
    /// sends them: a board left pulsing (an earlier run, its watchdog
    /// holding) has its servos at those widths. A channel without pulses
    /// (a fresh or relaxed board): nobody knows.
    fn enable(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError> {
        self.status(io)?;
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

    /// One RELAX of the calibration's channels, acknowledged: their pulses
    /// stop after the one in progress.
    fn relax(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        self.relax_within(io, self.reply_timeout)
    }

    /// The RELAX with `CLOSE_REPLY_TIMEOUTS` reply timeouts for its
    /// acknowledgement.
    fn relax_on_exit(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        self.relax_within(io, self.reply_timeout * CLOSE_REPLY_TIMEOUTS)
    }

    /// Asks for a last status and counts the frames the firmware did not
    /// get since set-up (its counter counts the request itself too). The
    /// link is going away and nothing waits on it: the reply gets
    /// `CLOSE_REPLY_TIMEOUTS` reply timeouts, so one slow reply (a loaded
    /// host, a slow USB adapter) does not leave the count unknown.
    fn close(&mut self, io: &mut dyn SerialPort) {
        let wait = self.reply_timeout * CLOSE_REPLY_TIMEOUTS;
        let status = |s| frame(s, cmd::STATUS, &[]);
        let reply = self.request_within(io, cmd::STATUS, status, "STATUS", wait);
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
        status.details = self.status.map(|s| s.details()).unwrap_or_default();
        status.frames_lost = self.lost;
        status.reply_garbage = self.reader.garbage + self.reader.bad;
    }
}
