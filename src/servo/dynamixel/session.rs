//! The link session for Dynamixel X-series servos (Protocol 2.0).
//!
//! Opening, before anything moves: PING every id (a missing servo is
//! named, nothing is written), check each reports the model its joint
//! names and has no hardware error latched, check its operating mode
//! follows goal positions (position, extended position or current-based
//! position; otherwise refused with the fix), and read the current limit
//! of the models that sense current; then set each servo's Return Delay
//! Time to 0 where it is not (`set_return_delay` says why).
//! Enabling reads the present positions,
//! then per servo writes the goal current (joints that set one), goal =
//! present and torque on, each acknowledged, so no servo jumps to an old
//! goal. Relaxing writes torque off to every servo, each acknowledged.
//!
//! Per tick: one SYNC WRITE of the goals (no reply), one SYNC READ of
//! present current (or load), velocity and position, ten bytes from
//! address 126 (or one FAST SYNC READ when every servo's firmware has
//! it and all are answering), whatever answers within a few milliseconds
//! kept, the rest taken next tick. A status packet with the alert bit makes the next tick READ
//! that servo's hardware error status, so the link status names the error
//! (overload, overheating, input voltage, electrical shock, motor
//! encoder).

use super::model::DynamixelModel;
use super::packet;
use super::status::{ErrorByte, StatusPacket, StatusReader, split_fast_sync};
use super::table::{HardwareError, OperatingMode, Register, reg};
use crate::servo::bus::{EncodeError, Servos, for_each_servo};
use crate::servo::joint::{Effort, FieldError, Fields, JointMap};
use crate::servo::link::{LinkSettings, LinkStatus, Session, SessionError, StartPose, TickOutcome};
use serialport::SerialPort;
use std::time::{Duration, Instant};

/// Longest one tick waits for the answers to its read; the rest is taken
/// at the next tick.
const COLLECT: Duration = Duration::from_millis(3);

/// What each tick reads from every servo: present current (or load, 2
/// bytes), velocity (4) and position (4), from address 126.
const FEEDBACK: Register = Register {
    addr: reg::PRESENT_CURRENT.addr,
    size: 10,
    signed: false,
};

/// Dynamixel bus session: servo ids in chain order, and what each must be.
pub struct DynamixelSession {
    bus: Servos<StatusReader>,
    models: Vec<DynamixelModel>,
    /// The goal current (register units) of joints in current-based
    /// position mode that set one (`goal_current_ma`).
    goal_current: Vec<Option<i64>>,
    collect: Duration,
    readings: Readings,
    /// Every servo answers FAST SYNC READ (learned from PING).
    fast: bool,
    /// What opening changed on the servos, for the caller to say once.
    notes: Vec<String>,
}

/// What the servos last reported, chain order.
struct Readings {
    present: Vec<i32>,
    effort: Vec<Effort>,
    /// Error byte of each servo's last status packet.
    errors: Vec<ErrorByte>,
    /// Hardware error status, read after an alert.
    hardware: Vec<Option<HardwareError>>,
    /// What a full load reads in the current register: the current limit
    /// of models that sense current, 1000 (0.1 % units) of those that
    /// report a load.
    full_load: Vec<f64>,
}

impl Readings {
    /// Takes servo `k`'s feedback bytes; false when they are not ten.
    fn take(&mut self, k: usize, error: ErrorByte, data: &[u8]) -> bool {
        self.errors[k] = error;
        if !error.alert() {
            self.hardware[k] = None;
        }
        let (Ok(current), Ok(position)) = (
            reg::PRESENT_CURRENT.decode(data.get(0..2).unwrap_or_default()),
            reg::PRESENT_POSITION.decode(data.get(6..10).unwrap_or_default()),
        ) else {
            return false;
        };
        self.present[k] = position as i32;
        let stop = HardwareError::OVERLOAD | HardwareError::OVERHEATING;
        self.effort[k] = Effort {
            load: Some((current as f64 / self.full_load[k]).clamp(-1.0, 1.0)),
            overload: self.hardware[k].map_or(error.alert(), |h| h.0 & stop != 0),
        };
        true
    }
}

/// The goal current of a joint in register units: its `goal_current_ma`
/// on a model that senses current (the calibration checked both).
pub(super) fn goal_current(
    fields: &Fields,
    model: DynamixelModel,
) -> Result<Option<i64>, FieldError> {
    let Some(ma) = fields.parse::<f64>("goal_current_ma")? else {
        return Ok(None);
    };
    let refuse = |why: String| FieldError {
        field: "goal_current_ma",
        why,
    };
    let unit = model.current_unit_ma().ok_or_else(|| {
        refuse(format!(
            "{} servos do not sense current (no current-based position mode)",
            model.name()
        ))
    })?;
    if !(ma.is_finite() && ma > 0.0) {
        return Err(refuse(format!("{ma} is not a positive current (mA)")));
    }
    Ok(Some((ma / unit).round().max(1.0) as i64))
}

impl DynamixelSession {
    /// The session for `joints` (chain order) as the calibration checked
    /// them; fails only on fields the calibration would have refused.
    pub fn new(
        joints: &[JointMap],
        settings: &LinkSettings,
    ) -> Result<DynamixelSession, FieldError> {
        let n = joints.len();
        let models = joints
            .iter()
            .map(|j| super::joint_model(&j.fields))
            .collect::<Result<Vec<_>, _>>()?;
        let goal_current = joints
            .iter()
            .zip(&models)
            .map(|(j, &m)| goal_current(&j.fields, m))
            .collect::<Result<Vec<_>, _>>()?;
        let quarter = Duration::from_secs_f64(0.25 / settings.rate_hz);
        let ids = joints.iter().map(|j| j.output as u8).collect();
        // Paced by its caller, a tick waits up to half a period for its
        // own replies (see LinkSettings::paced).
        let half = Duration::from_secs_f64(0.5 / settings.rate_hz);
        Ok(DynamixelSession {
            bus: Servos::new(ids, settings.reply_timeout, StatusReader::new)
                .latest_only(settings.paced),
            models,
            goal_current,
            collect: if settings.paced {
                half
            } else {
                COLLECT.min(quarter)
            },
            readings: Readings {
                present: vec![0; n],
                effort: vec![Effort::default(); n],
                errors: vec![ErrorByte::default(); n],
                hardware: vec![None; n],
                full_load: vec![1000.0; n],
            },
            fast: false,
            notes: Vec::new(),
        })
    }

    /// One instruction to servo `ids[k]` and its status packet of `len`
    /// bytes; an error number in the reply is an error naming `what`.
    fn request(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        p: Result<Vec<u8>, EncodeError>,
        len: usize,
        what: &str,
    ) -> Result<StatusPacket, SessionError> {
        let s = self.bus.request(io, k, p, len, what)?;
        self.readings.errors[k] = s.error;
        match s.error.error() {
            None => Ok(s),
            Some(e) => Err(SessionError::Device(format!(
                "servo id {} refused {what}: {e}",
                self.bus.ids[k]
            ))),
        }
    }

    fn read(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        r: Register,
        what: &str,
    ) -> Result<i64, SessionError> {
        let id = self.bus.ids[k];
        let s = self.request(io, k, packet::read_register(id, r), r.size.into(), what)?;
        s.data(r.size.into())
            .ok()
            .and_then(|d| r.decode(d).ok())
            .ok_or_else(|| SessionError::Device(format!("servo id {id}, {what}: bad reply")))
    }

    fn write(
        &mut self,
        io: &mut dyn SerialPort,
        k: usize,
        r: Register,
        value: i64,
        what: &str,
    ) -> Result<(), SessionError> {
        let id = self.bus.ids[k];
        self.request(io, k, packet::write_register(id, r, value), 0, what)?;
        Ok(())
    }

    /// PINGs servo `k`, checks its model and that no hardware error is
    /// latched; true when its firmware answers FAST SYNC READ.
    fn check_servo(&mut self, io: &mut dyn SerialPort, k: usize) -> Result<bool, SessionError> {
        let id = self.bus.ids[k];
        let s = self.request(io, k, packet::ping(id), 3, "PING")?;
        let (number, firmware) = s
            .ping_reply()
            .map_err(|e| SessionError::Device(format!("servo id {id}: {e}")))?;
        let want = self.models[k];
        if number != want.number() {
            let found = DynamixelModel::from_number(number)
                .map_or_else(|| format!("model {number}"), |m| m.to_string());
            return Err(SessionError::Device(format!(
                "servo id {id} is {found}, not the calibration's {want}; refusing to drive it \
                 (set `model:` in the calibration if the servo really is that model)"
            )));
        }
        if s.error.alert() {
            let bits = self.read(io, k, reg::HARDWARE_ERROR_STATUS, "hardware error status")?;
            let names = HardwareError(bits as u8).names().join(", ");
            return Err(SessionError::Device(format!(
                "servo id {id} has a hardware error latched ({names}): it keeps its torque off \
                 until it is rebooted (switch its power off and on)"
            )));
        }
        Ok(want.has_fast_sync_read(firmware))
    }

    /// Refuses a servo whose operating mode ignores goal positions, or that
    /// is told a goal current but is not in current-based position mode.
    fn check_mode(&mut self, io: &mut dyn SerialPort, k: usize) -> Result<(), SessionError> {
        let id = self.bus.ids[k];
        let code = self.read(io, k, reg::OPERATING_MODE, "operating mode")?;
        let mode = u8::try_from(code).ok().and_then(OperatingMode::from_code);
        let name = mode.map_or_else(|| format!("an unknown ({code})"), |m| m.name().to_string());
        let fix = "(the torque must be off to change it: the mode is in EEPROM, which the servo \
                   locks while its torque is on)";
        match mode {
            Some(m) if !m.follows_goal_position() => Err(SessionError::Device(format!(
                "servo id {id} is in {name} mode, which ignores goal positions; set its operating \
                 mode (register 11) to 3 (position) or 4 (extended position) {fix}"
            ))),
            Some(m)
                if self.goal_current[k].is_some() && m != OperatingMode::CurrentBasedPosition =>
            {
                Err(SessionError::Device(format!(
                    "servo id {id} is in {name} mode, which ignores goal_current_ma; set its \
                     operating mode (register 11) to 5 (current-based position) {fix}"
                )))
            }
            Some(_) => Ok(()),
            None => Err(SessionError::Device(format!(
                "servo id {id} is in {name} mode; set its operating mode (register 11) to 3 \
                 (position) {fix}"
            ))),
        }
    }

    /// Reads the current limit of a model that senses current (what a full
    /// load reads), and checks the joint's goal current is within it.
    fn check_current(&mut self, io: &mut dyn SerialPort, k: usize) -> Result<(), SessionError> {
        if !self.models[k].senses_current() {
            return Ok(());
        }
        let limit = self.read(io, k, reg::CURRENT_LIMIT, "current limit")?;
        self.readings.full_load[k] = limit.max(1) as f64;
        match self.goal_current[k] {
            Some(goal) if goal > limit => {
                let unit = self.models[k].current_unit_ma().unwrap_or(1.0);
                Err(SessionError::Device(format!(
                    "servo id {}: goal_current_ma {:.0} is above its current limit of {:.0} mA \
                     (register 38); lower goal_current_ma",
                    self.bus.ids[k],
                    goal as f64 * unit,
                    limit as f64 * unit
                )))
            }
            _ => Ok(()),
        }
    }

    /// Return Delay Time 0 on every servo that has another, as LeRobot's
    /// `configure_motors` does: the factory 250 (2 µs units: 500 µs, the
    /// ROBOTIS e-manual's control table, address 9) is waited before every
    /// reply, 1.42 ms of the six-servo FAST SYNC READ at 1 Mbaud instead
    /// of 0.92. Read first, written only where not already 0, so the
    /// EEPROM is not rewritten at every start. The register is in EEPROM,
    /// which the servo locks while its torque is on: such a servo (left
    /// holding by an earlier run) is left as it is and named, since
    /// switching its torque off here would let the arm drop; it is set at
    /// the next start from power-on.
    fn set_return_delay(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        let (mut changed, mut held) = (Vec::new(), Vec::new());
        for k in 0..self.bus.len() {
            let delay = self.read(io, k, reg::RETURN_DELAY_TIME, "return delay time")?;
            if delay == 0 {
                continue;
            }
            let id = self.bus.ids[k];
            if self.read(io, k, reg::TORQUE_ENABLE, "torque enable")? != 0 {
                held.push(format!("id {id} ({delay})"));
                continue;
            }
            self.write(io, k, reg::RETURN_DELAY_TIME, 0, "return delay time 0")?;
            changed.push(format!("id {id} from {delay} ({} µs)", 2 * delay));
        }
        if !changed.is_empty() {
            self.notes.push(format!(
                "Dynamixel return delay time set to 0 (replies at once, as LeRobot sets it) on servo {}",
                changed.join(", ")
            ));
        }
        if !held.is_empty() {
            self.notes.push(format!(
                "Dynamixel return delay time left as it is on servo {} (2 µs units): the torque \
                 is on, which locks the EEPROM; it is set to 0 at a start with the torque off",
                held.join(", ")
            ));
        }
        Ok(())
    }

    /// READs the hardware error status of one servo that raised the alert
    /// and has not been asked yet, so the status can name its error.
    fn read_hardware_error(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        let r = &self.readings;
        let Some(k) = (0..self.bus.len()).find(|&k| r.errors[k].alert() && r.hardware[k].is_none())
        else {
            return Ok(());
        };
        let id = self.bus.ids[k];
        let read = packet::read_register(id, reg::HARDWARE_ERROR_STATUS);
        let s = self.bus.request(io, k, read, 1, "hardware error status")?;
        if let Ok(&[bits]) = s.data(1) {
            self.readings.hardware[k] = Some(HardwareError(bits));
        }
        Ok(())
    }

    /// Reads every servo's feedback (one SYNC READ, or one FAST SYNC READ)
    /// and keeps what answers within the reply window; true when any
    /// position came in (late replies to the previous tick included).
    fn read_feedback(&mut self, io: &mut dyn SerialPort) -> Result<bool, SessionError> {
        let len = u16::from(FEEDBACK.size);
        // FAST SYNC READ's one packet is cut short for all by a servo that
        // does not answer: while any servo is overdue, SYNC READ, where
        // each answers on its own, so the others keep reporting and the
        // quiet one is the one named.
        let overdue = self.bus.reply_timeout / 2;
        let fast = self.fast && self.bus.all_heard_within(overdue, Instant::now());
        let read = if fast {
            packet::fast_sync_read(FEEDBACK.addr, len, &self.bus.ids)
        } else {
            packet::sync_read(FEEDBACK.addr, len, &self.bus.ids)
        };
        Servos::<StatusReader>::write(io, read)?;
        self.bus.ask_all();
        let mut got = false;
        let readings = &mut self.readings;
        let window = self.bus.window(self.collect);
        self.bus.collect(
            io,
            window,
            |bus, k, s, now| match k {
                Some(k) if readings.take(k, s.error, &s.params) => {
                    bus.answered(k);
                    got = true;
                }
                Some(_) => {}
                None => match split_fast_sync(&s, FEEDBACK.size.into(), &bus.ids) {
                    Ok(parts) => {
                        for (k, part) in parts.iter().enumerate() {
                            bus.heard(k, now);
                            if readings.take(k, part.error, &part.data) {
                                bus.answered(k);
                                got = true;
                            }
                        }
                    }
                    Err(_) => bus.count_bad(),
                },
            },
            |_, _| Ok(false),
        )?;
        Ok(got)
    }
}

impl Session for DynamixelSession {
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        self.bus.restart(io)?;
        let n = self.bus.len();
        self.readings.errors.fill(ErrorByte::default());
        self.readings.hardware.fill(None);
        let mut fast = true;
        for k in 0..n {
            fast &= self.check_servo(io, k)?;
        }
        for k in 0..n {
            self.check_mode(io, k)?;
            self.check_current(io, k)?;
        }
        self.set_return_delay(io)?;
        self.fast = fast;
        self.bus.set_running();
        Ok(())
    }

    fn enable(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError> {
        for k in 0..self.bus.len() {
            let p = self.read(io, k, reg::PRESENT_POSITION, "present position")?;
            self.readings.present[k] = p as i32;
        }
        for k in 0..self.bus.len() {
            if let Some(goal) = self.goal_current[k] {
                self.write(io, k, reg::GOAL_CURRENT, goal, "goal current")?;
            }
            let p = i64::from(self.readings.present[k]);
            self.write(io, k, reg::GOAL_POSITION, p, "goal = present position")?;
            self.write(io, k, reg::TORQUE_ENABLE, 1, "torque enable")?;
        }
        Ok(StartPose::Measured(self.readings.present.clone()))
    }

    /// Torque enable = 0 on every servo, each acknowledged; a servo that
    /// does not answer does not keep the others holding (the first failure
    /// is returned after all were asked).
    fn relax(&mut self, io: &mut dyn SerialPort) -> Result<(), SessionError> {
        let n = self.bus.len();
        for_each_servo(n, |k| {
            self.write(io, k, reg::TORQUE_ENABLE, 0, "torque off")
        })
    }

    fn tick(
        &mut self,
        io: &mut dyn SerialPort,
        commands: Option<&[i32]>,
        _now: Instant,
    ) -> Result<TickOutcome, SessionError> {
        let mut out = TickOutcome::default();
        if let Some(c) = commands {
            let goals: Vec<(u8, i64)> = self
                .bus
                .ids
                .iter()
                .zip(c)
                .map(|(&id, &t)| (id, t.into()))
                .collect();
            Servos::<StatusReader>::write(
                io,
                packet::sync_write_register(reg::GOAL_POSITION, &goals),
            )?;
            out.frames_sent += 1;
        }
        self.read_hardware_error(io)?;
        if self.read_feedback(io)? {
            out.present = Some(self.readings.present.clone());
            out.effort = Some(self.readings.effort.clone());
        }
        Ok(out)
    }

    fn last_reply(&self) -> Option<Instant> {
        self.bus.last_reply()
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Names each servo quiet for the reply timeout, and each with a
    /// hardware error (named once its status register has been read).
    fn report(&self, status: &mut LinkStatus) {
        let r = &self.readings;
        self.bus.report(status, |k| {
            r.errors[k]
                .alert()
                .then(|| match r.hardware[k].map(|h| h.names()) {
                    Some(n) if !n.is_empty() => n.join(", "),
                    _ => "hardware alert".to_string(),
                })
        });
    }
}
