//! The link session for Feetech bus servos (STS3215, STS3250, SCS0009):
//! checks every servo of the calibration is on the bus and of the model
//! the calibration names, makes switching the torque on harmless, then
//! streams goal positions and reads present positions back.
//!
//! Packets come from the pure codec ([`super::packet`], [`super::status`]);
//! this file only
//! decides what to send when and what the replies mean. Positions are
//! servo ticks throughout (the calibration maps them to radians). Each
//! joint's servo may be another model of the same family (an STS3250 in
//! the shoulder of an STS3215 arm): each is checked against its own.
//!
//! Per tick: one broadcast SYNC WRITE of all goal positions (no reply, so
//! it costs no bus time waiting), then one SYNC READ of the present
//! positions, each servo answering with its own status packet in list
//! order (SCS servos have no SYNC READ: they are READ one after another,
//! each answer awaited before the next request so that two servos never
//! talk at once, as many as fit in the tick's reply window, round robin).
//! Replies are collected for a few milliseconds at most; whatever arrives
//! later is taken at the next tick, so a slow USB adapter delays
//! feedback by one period instead of stalling the link.
//!
//! Assumes the servos' factory setting of answering every instruction
//! addressed to them: opening waits for each WRITE's acknowledgement, so a
//! servo set to answer reads only shows up as "no reply".

use super::model::{Endian, ServoModel};
use super::packet::{self as feetech, reg};
use super::status::{ServoFlags, StatusPacket, StatusReader};
use crate::servo::joint::{FieldError, JointMap};
use crate::servo::link::{
    LinkSettings, LinkStatus, Session, SessionError, StartPose, TickOutcome, read_available,
};
use serialport::SerialPort;
use std::time::{Duration, Instant};

/// Longest the link thread waits in one tick for the answers to a SYNC
/// READ; the rest is taken at the next tick. Reads one servo at a time
/// (SCS) may take a quarter period.
const COLLECT: Duration = Duration::from_millis(3);

/// Feetech bus session: servo ids from the calibration (`output`), chain
/// order.
pub struct FeetechSession {
    ids: Vec<u8>,
    /// What each servo must report.
    models: Vec<ServoModel>,
    /// The family's byte order (one per bus: the calibration checked it).
    endian: Endian,
    /// Whether the family answers SYNC READ; without it each servo is
    /// READ in turn.
    sync_read: bool,
    reply_timeout: Duration,
    collect: Duration,
    torque_off_on_close: bool,
    reader: StatusReader,
    /// Status packets dropped for a bad length or checksum.
    bad: u64,
    /// Last present position per servo (ticks).
    present: Vec<i32>,
    /// When each servo last answered: the bus is only as alive as its
    /// quietest servo.
    seen: Vec<Option<Instant>>,
    /// Error flags of each servo's last status packet.
    flags: Vec<ServoFlags>,
    /// Servos asked for their position by the last SYNC READ that have not
    /// answered yet.
    awaiting: Vec<bool>,
    /// Without SYNC READ: the servo to READ next (round robin over ticks).
    next_read: usize,
    /// Set up and streaming: only then is a quiet servo news (after a
    /// failed open, the error already says which servo failed).
    running: bool,
}

impl FeetechSession {
    /// The session for `joints` (chain order) as the calibration checked
    /// them; fails only on a model field the calibration would have
    /// refused.
    pub fn new(joints: &[JointMap], settings: &LinkSettings) -> Result<FeetechSession, FieldError> {
        let n = joints.len();
        let models = joints
            .iter()
            .map(|j| super::joint_model(&j.fields))
            .collect::<Result<Vec<_>, _>>()?;
        let first = models.first().copied().unwrap_or_default();
        // A quarter period at most, so the link keeps its rate.
        let quarter = Duration::from_secs_f64(0.25 / settings.rate_hz);
        Ok(FeetechSession {
            // The calibration checked every output is a valid servo id.
            ids: joints.iter().map(|j| j.output as u8).collect(),
            models,
            endian: first.endian(),
            sync_read: first.has_sync_read(),
            reply_timeout: settings.reply_timeout,
            collect: if first.has_sync_read() {
                COLLECT.min(quarter)
            } else {
                quarter
            },
            torque_off_on_close: settings.torque_off_on_close,
            reader: Self::new_reader(),
            bad: 0,
            present: vec![0; n],
            seen: vec![None; n],
            flags: vec![ServoFlags::default(); n],
            awaiting: vec![false; n],
            next_read: 0,
            running: false,
        })
    }

    /// Replies are at most a two-byte read (LEN 4) or a model number read:
    /// a corrupted large length byte is then rejected at once instead of
    /// swallowing the packets after it.
    fn new_reader() -> StatusReader {
        StatusReader::new().with_max_len(4)
    }

    fn write(
        io: &mut dyn SerialPort,
        packet: Result<Vec<u8>, feetech::EncodeError>,
    ) -> Result<(), SessionError> {
        // The ids were checked by the calibration, so encoding cannot fail;
        // if it ever did, say so rather than panic in the link thread.
        let bytes = packet.map_err(|e| SessionError::Device(format!("cannot encode: {e}")))?;
        io.write_all(&bytes).map_err(SessionError::Io)
    }

    /// Moves what the port has now into the decoder, without waiting.
    fn poll(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        read_available(io, |b| self.reader.push(b))
    }

    /// The next decoded status packet of one of our servos, with its index;
    /// corrupt packets are counted and skipped, packets of other ids
    /// (another device on the bus) ignored.
    fn next_status(&mut self, now: Instant) -> Option<(usize, StatusPacket)> {
        while let Some(r) = self.reader.next_status() {
            let Ok(s) = r else {
                self.bad += 1;
                continue;
            };
            if let Some(k) = self.ids.iter().position(|&id| id == s.id) {
                self.seen[k] = Some(now);
                self.flags[k] = s.flags;
                return Some((k, s));
            }
        }
        None
    }

    /// Sends one instruction to servo `ids[k]` and waits, at most the reply
    /// timeout, for its status packet: used only while opening, when the
    /// link has nothing else to do.
    fn request(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        packet: Result<Vec<u8>, feetech::EncodeError>,
        what: &str,
    ) -> Result<StatusPacket, SessionError> {
        let id = self.ids[k];
        Self::write(io, packet)?;
        let deadline = Instant::now() + self.reply_timeout;
        loop {
            while let Some((j, s)) = self.next_status(Instant::now()) {
                if j == k {
                    return Ok(s);
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(SessionError::NoReply(format!(
                    "no reply from servo id {id} on the bus ({what}, waited {} ms)",
                    self.reply_timeout.as_millis()
                )));
            }
            self.poll(io)?;
            if self.reader.pending() < 6 {
                std::thread::sleep(Duration::from_millis(1).min(deadline - now));
            }
        }
    }

    /// READ of a two-byte register of servo `ids[k]`.
    fn read_word(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        addr: u8,
        what: &str,
    ) -> Result<u16, SessionError> {
        let id = self.ids[k];
        let s = self.request(io, k, feetech::read(id, addr, 2), what)?;
        let d = s
            .data(2)
            .map_err(|e| SessionError::Device(format!("servo id {id}, {what}: {e}")))?;
        Ok(self.endian.read_word([d[0], d[1]]))
    }

    /// WRITE to servo `ids[k]`, waiting for its acknowledgement so that
    /// torque is never switched on before the goal is known to be set.
    fn write_acked(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        addr: u8,
        data: &[u8],
        what: &str,
    ) -> Result<(), SessionError> {
        let id = self.ids[k];
        self.request(io, k, feetech::write(id, addr, data), what)?;
        Ok(())
    }

    /// READs the model number of servo `ids[k]` and refuses anything but
    /// its joint's model: a different model may count positions
    /// differently (another resolution, or big-endian like the SCS
    /// series) and would be driven somewhere unintended.
    fn check_model(&mut self, io: &mut dyn SerialPort, k: usize) -> Result<(), SessionError> {
        let want = self.models[k];
        let model = self.read_word(io, k, reg::MODEL_NUMBER, "model number")?;
        if model == want.number() {
            return Ok(());
        }
        // Read in our byte order; a servo of the other family shows with
        // its bytes swapped.
        let found = ServoModel::from_number(model)
            .or_else(|| {
                ServoModel::from_number(model.swap_bytes()).filter(|m| m.endian() != self.endian)
            })
            .map_or_else(|| format!("model {model}"), |m| m.to_string());
        Err(SessionError::Device(format!(
            "servo id {} is {found}, not the calibration's {want}; \
             refusing to drive it in {} position units (set `model:` \
             in the calibration if the servos really are that model)",
            self.ids[k],
            want.name()
        )))
    }

    /// Takes every complete reply received so far; true when any present
    /// position came in.
    fn take_replies(&mut self, now: Instant) -> bool {
        let mut got = false;
        while let Some((k, s)) = self.next_status(now) {
            if let Some(p) = s.word(0, self.endian).filter(|_| s.params.len() == 2) {
                self.present[k] = i32::from(p);
                self.awaiting[k] = false;
                got = true;
            }
        }
        got
    }
}

impl Session for FeetechSession {
    /// Finds every servo and makes switching the torque on harmless:
    /// 1. PING each id: a missing servo fails the connection with its id
    ///    named, before anything is written, so nothing moves;
    /// 2. READ the model number: anything but the joint's model in the
    ///    calibration is refused (see `check_model`);
    /// 3. READ the present positions;
    /// 4. WRITE goal = present, then torque enable = 1, each acknowledged:
    ///    the servo already holds the goal when it starts to drive, so it
    ///    does not jump to a goal left over from before.
    ///
    /// Returns the present positions, from which the link moves slowly to
    /// the first command.
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError> {
        io.clear(serialport::ClearBuffer::Input)
            .map_err(SessionError::from)?;
        self.reader = Self::new_reader();
        self.running = false;
        let n = self.ids.len();
        self.seen = vec![None; n];
        self.flags = vec![ServoFlags::default(); n];
        self.awaiting = vec![false; n];
        for k in 0..n {
            self.request(io, k, feetech::ping(self.ids[k]), "PING")?;
        }
        for k in 0..n {
            self.check_model(io, k)?;
        }
        for k in 0..n {
            let p = self.read_word(io, k, reg::PRESENT_POSITION, "present position")?;
            self.present[k] = i32::from(p);
        }
        for k in 0..n {
            let goal = self.endian.word(self.present[k].clamp(0, 0xFFFF) as u16);
            self.write_acked(io, k, reg::GOAL_POSITION, &goal, "goal = present position")?;
            self.write_acked(io, k, reg::TORQUE_ENABLE, &[1], "torque enable")?;
        }
        self.running = true;
        Ok(StartPose::Measured(self.present.clone()))
    }

    /// Writes the goals (if any) in one SYNC WRITE and asks for the present
    /// positions with one SYNC READ, keeping what answers within a few
    /// milliseconds. Without commands (none yet) it still reads, so the
    /// caller gets feedback before it moves anything.
    fn tick(
        &mut self,
        io: &mut dyn SerialPort,
        commands: Option<&[i32]>,
        now: Instant,
    ) -> Result<TickOutcome, SessionError> {
        let mut out = TickOutcome::default();
        // Late replies to the previous tick's read.
        self.poll(io)?;
        let mut got = self.take_replies(now);
        if let Some(c) = commands {
            let goals: Vec<(u8, u16)> = self
                .ids
                .iter()
                .zip(c)
                .map(|(&id, &t)| (id, t.clamp(0, 0xFFFF) as u16))
                .collect();
            Self::write(io, feetech::sync_write_goal_positions(&goals, self.endian))?;
            out.frames_sent += 1;
        }
        // A servo that did not answer last tick is asked again, not waited for.
        self.awaiting.fill(false);
        let sync = self.sync_read;
        if sync {
            Self::write(io, feetech::sync_read(reg::PRESENT_POSITION, 2, &self.ids))?;
            self.awaiting.fill(true);
        }
        let n = self.ids.len();
        let mut asked = 0;
        let deadline = Instant::now() + self.collect;
        loop {
            self.poll(io)?;
            got |= self.take_replies(Instant::now());
            let waiting = self.awaiting.contains(&true);
            if !sync && !waiting && asked < n {
                let k = self.next_read;
                self.next_read = (k + 1) % n;
                asked += 1;
                Self::write(io, feetech::read(self.ids[k], reg::PRESENT_POSITION, 2))?;
                self.awaiting[k] = true;
                continue;
            }
            let t = Instant::now();
            if !waiting || t >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_micros(500).min(deadline - t));
        }
        if got {
            out.present = Some(self.present.clone());
        }
        Ok(out)
    }

    /// The oldest of the servos' last replies: one servo gone quiet makes
    /// the link [`Silent`](crate::servo::link::LinkState::Silent), and
    /// [`report`](Session::report) names it.
    fn last_reply(&self) -> Option<Instant> {
        self.seen.iter().copied().min().flatten()
    }

    /// Names each servo that has not answered for the reply timeout and
    /// each servo reporting an error flag (overload, overheat, voltage...).
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
            if !self.flags[k].is_ok() {
                status.servo_errors.push(format!(
                    "servo id {id}: {}",
                    self.flags[k].names().join(", ")
                ));
            }
        }
        status.reply_garbage = self.reader.skipped() + self.bad;
    }

    /// Leaves the torque on, so the arm holds its last pose instead of
    /// falling, unless `link.torque_off_on_close` asks for a limp arm: then
    /// one SYNC WRITE switches off the calibration's servos (no reply to
    /// wait for; another servo on the bus, e.g. a gripper, is left alone).
    fn close(&mut self, io: &mut dyn SerialPort) {
        if self.torque_off_on_close {
            let blocks: Vec<(u8, &[u8])> = self.ids.iter().map(|&id| (id, &[0u8][..])).collect();
            let _ = Self::write(io, feetech::sync_write(reg::TORQUE_ENABLE, 1, &blocks));
            let _ = io.flush();
        }
    }
}
