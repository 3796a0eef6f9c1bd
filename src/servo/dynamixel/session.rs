//! The link session for Dynamixel X-series servos (Protocol 2.0).
//! Unregistered: nothing constructs it from a calibration yet; it is
//! written against [`Session`] and tested against the simulated bus.
//!
//! Opening, before anything moves: PING every id (a missing servo is
//! named, nothing is written), check each reports the model expected of
//! it, check its operating mode follows goal positions (position, extended
//! position or current-based position; otherwise refused with the fix),
//! read the present positions, then per servo WRITE goal = present and
//! torque on, each acknowledged, so no servo jumps to an old goal.
//!
//! Per tick: one SYNC WRITE of the goals (no reply), one SYNC READ of the
//! present positions (or one FAST SYNC READ when every servo's firmware
//! has it), whatever answers within a few milliseconds kept, the rest
//! taken next tick. A status packet with the alert bit makes the next tick
//! READ that servo's hardware error status, so the link status names the
//! error (overload, overheating, input voltage, electrical shock, motor
//! encoder).

use super::model::DynamixelModel;
use super::packet::{self, EncodeError};
use super::status::{ErrorByte, Status, StatusReader, split_fast_sync};
use super::table::{HardwareError, OperatingMode, Register, reg};
use crate::servo::link::{
    LinkSettings, LinkStatus, Session, SessionError, StartPose, TickOutcome, read_available,
};
use serialport::SerialPort;
use std::time::{Duration, Instant};

/// Longest one tick waits for the answers to its read; the rest is taken
/// at the next tick.
const COLLECT: Duration = Duration::from_millis(3);

/// Dynamixel bus session: servo ids in chain order, and the model each
/// must report.
pub struct DynamixelSession {
    ids: Vec<u8>,
    models: Vec<DynamixelModel>,
    reply_timeout: Duration,
    collect: Duration,
    torque_off_on_close: bool,
    reader: StatusReader,
    /// Status packets dropped for a bad length, CRC or stuffing.
    bad: u64,
    present: Vec<i32>,
    seen: Vec<Option<Instant>>,
    /// Error byte of each servo's last status packet.
    errors: Vec<ErrorByte>,
    /// Hardware error status read after an alert.
    hardware: Vec<HardwareError>,
    awaiting: Vec<bool>,
    /// Every servo answers FAST SYNC READ (learned from PING).
    fast: bool,
    running: bool,
}

impl DynamixelSession {
    /// `ids` and `models` in chain order (the same length).
    pub fn new(
        ids: Vec<u8>,
        models: Vec<DynamixelModel>,
        settings: &LinkSettings,
    ) -> DynamixelSession {
        let n = ids.len();
        let quarter = Duration::from_secs_f64(0.25 / settings.rate_hz);
        DynamixelSession {
            ids,
            models,
            reply_timeout: settings.reply_timeout,
            collect: COLLECT.min(quarter),
            torque_off_on_close: settings.torque_off_on_close,
            reader: StatusReader::new(),
            bad: 0,
            present: vec![0; n],
            seen: vec![None; n],
            errors: vec![ErrorByte::default(); n],
            hardware: vec![HardwareError::default(); n],
            awaiting: vec![false; n],
            fast: false,
            running: false,
        }
    }

    fn write(io: &mut dyn SerialPort, p: Result<Vec<u8>, EncodeError>) -> Result<(), SessionError> {
        let bytes = p.map_err(|e| SessionError::Device(format!("cannot encode: {e}")))?;
        io.write_all(&bytes).map_err(SessionError::Io)
    }

    fn poll(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        read_available(io, |b| self.reader.push(b))
    }

    /// The next status packet of one of our servos with its index, or a
    /// FAST SYNC READ reply (index `None`); corrupt ones are counted.
    fn next_status(&mut self, now: Instant) -> Option<(Option<usize>, Status)> {
        while let Some(r) = self.reader.next_status() {
            let Ok(s) = r else {
                self.bad += 1;
                continue;
            };
            if s.id == packet::BROADCAST_ID {
                return Some((None, s));
            }
            if let Some(k) = self.ids.iter().position(|&id| id == s.id) {
                self.seen[k] = Some(now);
                self.errors[k] = s.error;
                return Some((Some(k), s));
            }
        }
        None
    }

    /// One instruction to servo `ids[k]` and its status packet, waiting at
    /// most the reply timeout (opening only). An error number in the reply
    /// is an error naming `what`.
    fn request(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        p: Result<Vec<u8>, EncodeError>,
        what: &str,
    ) -> Result<Status, SessionError> {
        let id = self.ids[k];
        Self::write(io, p)?;
        let deadline = Instant::now() + self.reply_timeout;
        loop {
            while let Some((j, s)) = self.next_status(Instant::now()) {
                if j != Some(k) {
                    continue;
                }
                return match s.error.error() {
                    None => Ok(s),
                    Some(e) => Err(SessionError::Device(format!(
                        "servo id {id} refused {what}: {e}"
                    ))),
                };
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(SessionError::NoReply(format!(
                    "no reply from servo id {id} on the bus ({what}, waited {} ms)",
                    self.reply_timeout.as_millis()
                )));
            }
            self.poll(io)?;
            std::thread::sleep(Duration::from_micros(500).min(deadline - now));
        }
    }

    fn read(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        r: Register,
        what: &str,
    ) -> Result<i64, SessionError> {
        let id = self.ids[k];
        let s = self.request(io, k, packet::read_register(id, r), what)?;
        s.data(r.size.into())
            .ok()
            .and_then(|d| r.decode(d).ok())
            .ok_or_else(|| SessionError::Device(format!("servo id {id}, {what}: bad reply")))
    }

    /// PING every servo and check its model; true when all of them have
    /// FAST SYNC READ.
    fn check_models(&mut self, io: &mut dyn SerialPort) -> Result<bool, SessionError> {
        let mut fast = true;
        for k in 0..self.ids.len() {
            let id = self.ids[k];
            let s = self.request(io, k, packet::ping(id), "PING")?;
            let (number, firmware) = s
                .ping_reply()
                .map_err(|e| SessionError::Device(format!("servo id {id}: {e}")))?;
            let want = self.models[k];
            if number != want.number() {
                let found = DynamixelModel::from_number(number)
                    .map_or_else(|| format!("model {number}"), |m| m.to_string());
                return Err(SessionError::Device(format!(
                    "servo id {id} is {found}, not the calibration's {want}; refusing to drive it"
                )));
            }
            fast &= want.has_fast_sync_read(firmware);
        }
        Ok(fast)
    }

    /// Refuses a servo whose operating mode ignores goal positions.
    fn check_mode(&mut self, io: &mut dyn SerialPort, k: usize) -> Result<(), SessionError> {
        let id = self.ids[k];
        let code = self.read(io, k, reg::OPERATING_MODE, "operating mode")?;
        let mode = u8::try_from(code).ok().and_then(OperatingMode::from_code);
        match mode {
            Some(m) if m.follows_goal_position() => Ok(()),
            _ => Err(SessionError::Device(format!(
                "servo id {id} is in {} mode, which ignores goal positions; set its operating \
                 mode (register 11) to 3 (position) or 4 (extended position) with its torque off \
                 (register 64 = 0: the mode is in EEPROM, locked while the torque is on)",
                mode.map_or_else(|| format!("an unknown ({code})"), |m| m.name().to_string())
            ))),
        }
    }

    /// Takes every reply received so far; true when a present position
    /// came in.
    fn take_replies(&mut self, now: Instant) -> bool {
        let mut got = false;
        while let Some((k, s)) = self.next_status(now) {
            match k {
                None => got |= self.take_fast(&s, now),
                Some(k) if s.params.len() == 4 => {
                    if let Ok(p) = reg::PRESENT_POSITION.decode(&s.params) {
                        self.present[k] = p as i32;
                        self.awaiting[k] = false;
                        got = true;
                    }
                }
                Some(k) if s.params.len() == 1 => self.hardware[k] = HardwareError(s.params[0]),
                Some(_) => {}
            }
        }
        got
    }

    fn take_fast(&mut self, s: &Status, now: Instant) -> bool {
        let Ok(parts) = split_fast_sync(s, 4, &self.ids) else {
            self.bad += 1;
            return false;
        };
        for (k, part) in parts.iter().enumerate() {
            if let Ok(p) = reg::PRESENT_POSITION.decode(&part.data) {
                self.present[k] = p as i32;
                self.seen[k] = Some(now);
                self.errors[k] = part.error;
                self.awaiting[k] = false;
            }
        }
        true
    }
}

impl Session for DynamixelSession {
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError> {
        io.clear(serialport::ClearBuffer::Input)
            .map_err(SessionError::from)?;
        let n = self.ids.len();
        self.reader = StatusReader::new();
        self.running = false;
        self.seen = vec![None; n];
        self.errors = vec![ErrorByte::default(); n];
        self.hardware = vec![HardwareError::default(); n];
        self.awaiting = vec![false; n];
        self.fast = self.check_models(io)?;
        for k in 0..n {
            self.check_mode(io, k)?;
        }
        for k in 0..n {
            let p = self.read(io, k, reg::PRESENT_POSITION, "present position")?;
            self.present[k] = p as i32;
        }
        for k in 0..n {
            let (id, p) = (self.ids[k], i64::from(self.present[k]));
            let goal = packet::write_register(id, reg::GOAL_POSITION, p);
            self.request(io, k, goal, "goal = present position")?;
            let on = packet::write_register(id, reg::TORQUE_ENABLE, 1);
            self.request(io, k, on, "torque enable")?;
        }
        self.running = true;
        Ok(StartPose::Measured(self.present.clone()))
    }

    fn tick(
        &mut self,
        io: &mut dyn SerialPort,
        commands: Option<&[i32]>,
        now: Instant,
    ) -> Result<TickOutcome, SessionError> {
        let mut out = TickOutcome::default();
        self.poll(io)?;
        let mut got = self.take_replies(now);
        if let Some(c) = commands {
            let goals: Vec<(u8, i64)> = self
                .ids
                .iter()
                .zip(c)
                .map(|(&id, &t)| (id, t.into()))
                .collect();
            Self::write(io, packet::sync_write_register(reg::GOAL_POSITION, &goals))?;
            out.frames_sent += 1;
        }
        // One servo with an alert: read what it is (one per tick).
        if let Some(k) =
            (0..self.ids.len()).find(|&k| self.errors[k].alert() && self.hardware[k].is_ok())
        {
            Self::write(
                io,
                packet::read_register(self.ids[k], reg::HARDWARE_ERROR_STATUS),
            )?;
        }
        let read = if self.fast {
            packet::fast_sync_read(reg::PRESENT_POSITION.addr, 4, &self.ids)
        } else {
            packet::sync_read_register(reg::PRESENT_POSITION, &self.ids)
        };
        Self::write(io, read)?;
        self.awaiting.fill(true);
        let deadline = Instant::now() + self.collect;
        loop {
            self.poll(io)?;
            got |= self.take_replies(Instant::now());
            let t = Instant::now();
            if !self.awaiting.contains(&true) || t >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_micros(300).min(deadline - t));
        }
        if got {
            out.present = Some(self.present.clone());
        }
        Ok(out)
    }

    fn last_reply(&self) -> Option<Instant> {
        self.seen.iter().copied().min().flatten()
    }

    /// Names each servo quiet for the reply timeout, and each with a
    /// hardware error (named once its status register has been read).
    fn report(&self, status: &mut LinkStatus) {
        let now = Instant::now();
        status.servo_errors.clear();
        for (k, &id) in self.ids.iter().enumerate() {
            if let Some(t) = self.seen[k].filter(|_| self.running) {
                let quiet = now.duration_since(t);
                if quiet >= self.reply_timeout {
                    status.servo_errors.push(format!(
                        "servo id {id}: no reply for {} ms",
                        quiet.as_millis()
                    ));
                }
            }
            if self.errors[k].alert() {
                let what = match self.hardware[k].names() {
                    n if n.is_empty() => "hardware alert".to_string(),
                    n => n.join(", "),
                };
                status.servo_errors.push(format!("servo id {id}: {what}"));
            }
        }
        status.reply_garbage = self.reader.skipped() + self.bad;
    }

    /// Torque stays on (the arm holds its pose) unless the settings ask
    /// for a limp arm: then one SYNC WRITE switches the servos off.
    fn close(&mut self, io: &mut dyn SerialPort) {
        if self.torque_off_on_close {
            let off: Vec<(u8, i64)> = self.ids.iter().map(|&id| (id, 0)).collect();
            let _ = Self::write(io, packet::sync_write_register(reg::TORQUE_ENABLE, &off));
            let _ = io.flush();
        }
    }
}
