//! The link session for Feetech bus servos (STS3215, STS3250, SCS0009):
//! checks every servo of the calibration is on the bus and of the model
//! the calibration names, makes switching the torque on harmless, then
//! streams goal positions and reads positions and loads back.
//!
//! Packets come from the pure codec ([`super::packet`], [`super::status`]);
//! the exchange with the bus is the shared [`Servos`]; this file only
//! decides what to send when and what the replies mean. Positions are
//! servo ticks throughout (the calibration maps them to radians). Each
//! joint's servo may be another model of the same family (an STS3250 in
//! the shoulder of an STS3215 arm): each is checked against its own.
//!
//! Per tick: one broadcast SYNC WRITE of all goal positions (no reply, so
//! it costs no bus time waiting), then one SYNC READ of present position,
//! speed and load (six bytes from address 56), each servo answering with
//! its own status packet in list order (SCS servos have no SYNC READ: they
//! are READ one after another, each answer awaited before the next
//! request so that two servos never talk at once, as many as fit in the
//! tick's reply window, round robin). Replies are collected for a few
//! milliseconds at most; whatever arrives later is taken at the next
//! tick, so a slow USB adapter delays feedback by one period instead of
//! stalling the link.
//!
//! Assumes the servos' factory setting of answering every instruction
//! addressed to them: opening waits for each WRITE's acknowledgement, so a
//! servo set to answer reads only shows up as "no reply".

use super::model::{Endian, ServoModel};
use super::packet::{self as feetech, from_sign_magnitude, reg};
use super::status::{ServoFlags, StatusPacket, StatusReader};
use crate::servo::bus::{Servos, for_each_servo};
use crate::servo::joint::{Effort, FieldError, JointMap};
use crate::servo::link::{LinkSettings, LinkStatus, Session, SessionError, StartPose, TickOutcome};
use serialport::SerialPort;
use std::time::{Duration, Instant};

/// Longest the link thread waits in one tick for the answers to a SYNC
/// READ; the rest is taken at the next tick. Reads one servo at a time
/// (SCS) may take a quarter period.
const COLLECT: Duration = Duration::from_millis(3);

/// What each tick reads from every servo: present position, speed and
/// load, from address 56.
const FEEDBACK_LEN: u8 = 6;

/// The load register's sign bit; its magnitude is in 0.1 % of the
/// servo's maximum torque.
const LOAD_SIGN_BIT: u8 = 10;

/// The error flags that mean the servo must stop pushing.
const OVERLOADED: u8 = ServoFlags::OVERLOAD | ServoFlags::OVERHEAT | ServoFlags::OVERCURRENT;

/// Feetech bus session: servo ids from the calibration (`output`), chain
/// order.
pub struct FeetechSession {
    bus: Servos<StatusReader>,
    /// What each servo must report.
    models: Vec<ServoModel>,
    /// The family's byte order (one per bus: the calibration checked it).
    endian: Endian,
    /// Whether the family answers SYNC READ; without it each servo is
    /// READ in turn.
    sync_read: bool,
    collect: Duration,
    readings: Readings,
    /// Without SYNC READ: the servo to READ next (round robin over ticks).
    next_read: usize,
    /// What opening changed on the servos, for the caller to say once.
    notes: Vec<String>,
}

/// What the servos last reported, chain order.
struct Readings {
    endian: Endian,
    /// Present position per servo (ticks).
    present: Vec<i32>,
    /// Load per servo.
    effort: Vec<Effort>,
    /// Error flags of each servo's last status packet.
    flags: Vec<ServoFlags>,
}

impl Readings {
    /// Takes one reply of servo `k` (its flags, and position and load when
    /// it answers the feedback read); true when a position came in.
    fn take(&mut self, k: usize, s: &StatusPacket) -> bool {
        self.flags[k] = s.flags;
        let Ok(d) = s.data(FEEDBACK_LEN.into()) else {
            return false;
        };
        let word = |at: usize| self.endian.read_word([d[at], d[at + 1]]);
        self.present[k] = i32::from(word(0));
        let load = from_sign_magnitude(word(4), LOAD_SIGN_BIT);
        self.effort[k] = Effort {
            load: Some((f64::from(load) / 1000.0).clamp(-1.0, 1.0)),
            overload: s.flags.0 & OVERLOADED != 0,
        };
        true
    }
}

/// Replies are at most the feedback read (LEN 8) or a model number read:
/// a corrupted large length byte is then rejected at once instead of
/// swallowing the packets after it.
fn new_reader() -> StatusReader {
    StatusReader::new().with_max_len(FEEDBACK_LEN + 2)
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
        // The calibration checked every output is a valid servo id.
        let ids = joints.iter().map(|j| j.output as u8).collect();
        // Paced by its caller, a tick waits up to half a period for its
        // own replies (see LinkSettings::paced).
        let half = Duration::from_secs_f64(0.5 / settings.rate_hz);
        Ok(FeetechSession {
            bus: Servos::new(ids, settings.reply_timeout, new_reader).latest_only(settings.paced),
            models,
            endian: first.endian(),
            sync_read: first.has_sync_read(),
            collect: if settings.paced {
                half
            } else if first.has_sync_read() {
                COLLECT.min(quarter)
            } else {
                quarter
            },
            readings: Readings {
                endian: first.endian(),
                present: vec![0; n],
                effort: vec![Effort::default(); n],
                flags: vec![ServoFlags::default(); n],
            },
            next_read: 0,
            notes: Vec::new(),
        })
    }

    /// One instruction to servo `ids[k]` and its reply of `len` bytes,
    /// keeping its flags.
    fn request(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        packet: Result<Vec<u8>, feetech::EncodeError>,
        len: usize,
        what: &str,
    ) -> Result<StatusPacket, SessionError> {
        let s = self.bus.request(io, k, packet, len, what)?;
        self.readings.flags[k] = s.flags;
        Ok(s)
    }

    /// READ of a one-byte register of servo `ids[k]`.
    fn read_byte(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        addr: u8,
        what: &str,
    ) -> Result<u8, SessionError> {
        let [b] = self.read_register(io, k, addr, what)?;
        Ok(b)
    }

    /// READ of a two-byte register of servo `ids[k]`.
    fn read_word(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        addr: u8,
        what: &str,
    ) -> Result<u16, SessionError> {
        let d = self.read_register(io, k, addr, what)?;
        Ok(self.endian.read_word(d))
    }

    /// READ of the `N` bytes at `addr` of servo `ids[k]`, an error naming
    /// the servo and `what` when the reply does not carry them.
    fn read_register<const N: usize>(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        addr: u8,
        what: &str,
    ) -> Result<[u8; N], SessionError> {
        let id = self.bus.ids[k];
        let s = self.request(io, k, feetech::read(id, addr, N as u8), N, what)?;
        let d = s
            .data(N)
            .map_err(|e| SessionError::Device(format!("servo id {id}, {what}: {e}")))?;
        let mut out = [0u8; N];
        out.copy_from_slice(&d[..N]);
        Ok(out)
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
        let id = self.bus.ids[k];
        self.request(io, k, feetech::write(id, addr, data), 0, what)?;
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
            self.bus.ids[k],
            want.name()
        )))
    }

    /// Return delay time 0 on every servo that has another, as LeRobot's
    /// `configure_motors` does: the factory 250 (2 µs units: 500 µs) is
    /// waited before every reply, six times in a six-servo SYNC READ.
    /// Read first, written only where not already 0, so the EEPROM is not
    /// rewritten at every start. The register is in EEPROM, kept at
    /// power-off only while the lock flag (55 on STS servos) is 0: a
    /// locked STS servo is unlocked for the write and locked again (SCS
    /// servos keep their lock elsewhere, which is left alone: the write
    /// then holds until power-off).
    fn set_return_delay(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        let mut changed = Vec::new();
        for k in 0..self.bus.len() {
            let delay = self.read_byte(io, k, reg::RETURN_DELAY_TIME, "return delay time")?;
            if delay == 0 {
                continue;
            }
            let lock = match self.endian {
                Endian::Little => self.read_byte(io, k, reg::LOCK, "lock")?,
                Endian::Big => 0,
            };
            if lock != 0 {
                self.write_acked(io, k, reg::LOCK, &[0], "unlock the EEPROM")?;
            }
            self.write_acked(io, k, reg::RETURN_DELAY_TIME, &[0], "return delay time 0")?;
            if lock != 0 {
                self.write_acked(io, k, reg::LOCK, &[lock], "lock the EEPROM again")?;
            }
            let delay = u32::from(delay);
            changed.push(format!(
                "id {} from {delay} ({} µs)",
                self.bus.ids[k],
                2 * delay
            ));
        }
        if !changed.is_empty() {
            self.notes.push(format!(
                "Feetech return delay time set to 0 (replies at once, as LeRobot sets it) on servo {}",
                changed.join(", ")
            ));
        }
        Ok(())
    }

    /// Reads every servo's feedback: one SYNC READ, or without it one READ
    /// at a time, as many as fit in the reply window; true when any
    /// position came in (late replies to the previous tick included).
    fn read_feedback(&mut self, io: &mut dyn SerialPort) -> Result<bool, SessionError> {
        // A servo that did not answer last tick is asked again, not waited for.
        self.bus.awaiting.fill(false);
        let sync = self.sync_read;
        if sync {
            Servos::<StatusReader>::write(
                io,
                feetech::sync_read(reg::PRESENT_POSITION, FEEDBACK_LEN, &self.bus.ids),
            )?;
            self.bus.ask_all();
        }
        let n = self.bus.len();
        let (mut asked, mut got) = (0, false);
        let readings = &mut self.readings;
        let next_read = &mut self.next_read;
        let window = self.bus.window(self.collect);
        self.bus.collect(
            io,
            window,
            |bus, k, s, _| {
                if let Some(k) = k.filter(|&k| readings.take(k, &s)) {
                    bus.answered(k);
                    got = true;
                }
            },
            |bus, io| {
                if sync || asked >= n {
                    return Ok(false);
                }
                let k = *next_read;
                *next_read = (k + 1) % n;
                asked += 1;
                Servos::<StatusReader>::write(
                    io,
                    feetech::read(bus.ids[k], reg::PRESENT_POSITION, FEEDBACK_LEN),
                )?;
                bus.ask(k);
                Ok(true)
            },
        )?;
        Ok(got)
    }
}

impl Session for FeetechSession {
    /// Finds every servo without moving anything:
    /// 1. PING each id: a missing servo fails the connection with its id
    ///    named, before anything is written;
    /// 2. READ the model number: anything but the joint's model in the
    ///    calibration is refused (see `check_model`);
    /// 3. set the return delay time to 0 where it is not (see
    ///    `set_return_delay`), the one register opening may write.
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        self.bus.restart(io)?;
        self.readings.flags.fill(ServoFlags::default());
        for k in 0..self.bus.len() {
            let id = self.bus.ids[k];
            self.request(io, k, feetech::ping(id), 0, "PING")?;
        }
        for k in 0..self.bus.len() {
            self.check_model(io, k)?;
        }
        self.set_return_delay(io)?;
        self.bus.set_running();
        Ok(())
    }

    /// Makes switching the torque on harmless: READ each present position,
    /// then WRITE goal = present and torque enable = 1, each acknowledged,
    /// so the servo already holds the goal when it starts to drive and
    /// does not jump to a goal left over from before. Returns the present
    /// positions, from which the link moves slowly to the next command.
    fn enable(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError> {
        for k in 0..self.bus.len() {
            let p = self.read_word(io, k, reg::PRESENT_POSITION, "present position")?;
            self.readings.present[k] = i32::from(p);
        }
        for k in 0..self.bus.len() {
            let p = self.readings.present[k].clamp(0, 0xFFFF) as u16;
            let goal = self.endian.word(p);
            self.write_acked(io, k, reg::GOAL_POSITION, &goal, "goal = present position")?;
            self.write_acked(io, k, reg::TORQUE_ENABLE, &[1], "torque enable")?;
        }
        Ok(StartPose::Measured(self.readings.present.clone()))
    }

    /// Torque enable = 0 on every servo, each acknowledged; a servo that
    /// does not answer does not keep the others holding (the first failure
    /// is returned after all were asked).
    fn relax(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        let n = self.bus.len();
        for_each_servo(n, |k| {
            self.write_acked(io, k, reg::TORQUE_ENABLE, &[0], "torque off")
        })
    }

    /// Writes the goals (if any) in one SYNC WRITE and reads position and
    /// load back, keeping what answers within a few milliseconds. Without
    /// commands (none yet, or relaxed) it still reads, so the caller gets
    /// feedback before it moves anything and while the arm is limp.
    fn tick(
        &mut self,
        io: &mut dyn SerialPort,
        commands: Option<&[i32]>,
        _now: Instant,
    ) -> Result<TickOutcome, SessionError> {
        let mut out = TickOutcome::default();
        if let Some(c) = commands {
            let goals: Vec<(u8, u16)> = self
                .bus
                .ids
                .iter()
                .zip(c)
                .map(|(&id, &t)| (id, t.clamp(0, 0xFFFF) as u16))
                .collect();
            Servos::<StatusReader>::write(
                io,
                feetech::sync_write_goal_positions(&goals, self.endian),
            )?;
            out.frames_sent += 1;
        }
        if self.read_feedback(io)? {
            out.present = Some(self.readings.present.clone());
            out.effort = Some(self.readings.effort.clone());
        }
        Ok(out)
    }

    /// The oldest of the servos' last replies: one servo gone quiet makes
    /// the link [`Silent`](crate::servo::link::LinkState::Silent), and
    /// [`report`](Session::report) names it.
    fn last_reply(&self) -> Option<Instant> {
        self.bus.last_reply()
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Names each servo that has not answered for the reply timeout and
    /// each servo reporting an error flag (overload, overheat, voltage...).
    fn report(&self, status: &mut LinkStatus) {
        let flags = &self.readings.flags;
        self.bus.report(status, |k| {
            (!flags[k].is_ok()).then(|| flags[k].names().join(", "))
        });
    }
}
