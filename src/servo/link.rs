//! The serial link to servo hardware: one thread per port that owns all
//! the I/O, so the solver, the node's timer and the ROS executor never wait
//! on a serial port.
//!
//! The caller only swaps the latest commands into a slot ([`Link::send`])
//! and reads a snapshot of the state ([`Link::status`]); both take a mutex
//! the thread holds only for copies, never across I/O. The thread, at the
//! configured rate:
//! - opens the port and lets the protocol's [`Session`] set the hardware up
//!   (on failure: back-off doubling from 100 ms to 2 s, state
//!   [`LinkState::Disconnected`], and again);
//! - moves its output toward the latest commands no faster than each
//!   joint's speed limit, and, right after connecting to servos that report
//!   where they are (or, the first time, from the park pose the calibration
//!   gives for servos that cannot), no faster than the start-up speed
//!   (never a jump);
//! - sends one frame per period and reads the replies; no reply for the
//!   reply timeout is [`LinkState::Silent`], an I/O error (adapter
//!   unplugged) closes the port and reconnects, resuming from the pose the
//!   output had reached.
//!
//! Commands are in servo units (µs or ticks), already clamped by the
//! [`Calibration`]; the ramp only interpolates between in-range values and
//! clamps again, so the thread cannot produce anything the calibration
//! would not.

use super::bridge::FirmwareStatus;
use super::calibration::{Calibration, OutputKind};
use serde::Deserialize;
use serialport::SerialPort;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use thiserror::Error;

/// What the firmware bridge does when its watchdog trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchdogMode {
    /// Keep sending the last pulses (the arm stays where it was).
    #[default]
    Hold,
    /// Stop the pulses (the servos go limp).
    Relax,
}

/// The `link:` section of a servo configuration file, as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFile {
    pub baud: Option<u32>,
    pub rate_hz: Option<f64>,
    pub reply_timeout_ms: Option<u64>,
    pub watchdog_ms: Option<u16>,
    pub watchdog: Option<WatchdogMode>,
    pub startup_speed: Option<f64>,
    pub command_timeout_ms: Option<u64>,
    pub torque_off_on_close: Option<bool>,
}

/// Checked link settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSettings {
    /// Port speed (baud).
    pub baud: u32,
    /// Frames per second.
    pub rate_hz: f64,
    /// No reply for this long: the hardware is reported silent (and an
    /// opening handshake gives up).
    pub reply_timeout: Duration,
    /// Firmware bridge watchdog (ms, 0 = off) and what it does.
    pub watchdog_ms: u16,
    pub watchdog: WatchdogMode,
    /// Joint speed (rad/s or m/s) of the move from where bus servos are at
    /// connection to the first command.
    pub startup_speed: f64,
    /// The host-side watchdog: when the caller (the node) has sent no
    /// commands for this long, the link stops writing to the port, so a
    /// hung solver or node cannot keep the arm streaming a stale pose: the
    /// firmware's own watchdog then holds or relaxes; bus servos hold.
    pub command_timeout: Duration,
    /// Bus servos: switch the torque off when the link is closed. Off by
    /// default, because a limp arm falls: the servos keep holding their
    /// last goal unless the file asks for this.
    pub torque_off_on_close: bool,
    /// Reconnection back-off: first wait and cap.
    pub backoff_min: Duration,
    pub backoff_max: Duration,
}

impl LinkFile {
    /// Fills in the defaults of `kind` and checks every value; an error
    /// names the field.
    pub fn resolve(&self, kind: OutputKind) -> Result<LinkSettings, (&'static str, String)> {
        let baud = self.baud.unwrap_or(match kind {
            OutputKind::Pwm => 115_200,
            OutputKind::Feetech => 1_000_000,
        });
        if baud == 0 {
            return Err(("baud", "must be positive".into()));
        }
        let rate_hz = self.rate_hz.unwrap_or(50.0);
        if !(rate_hz.is_finite() && rate_hz > 0.0 && rate_hz <= 1000.0) {
            return Err((
                "rate_hz",
                format!("{rate_hz} is not a frame rate in (0, 1000] Hz"),
            ));
        }
        let reply_ms = self.reply_timeout_ms.unwrap_or(match kind {
            OutputKind::Pwm => 300,
            OutputKind::Feetech => 100,
        });
        if reply_ms == 0 || reply_ms > 60_000 {
            return Err((
                "reply_timeout_ms",
                format!("{reply_ms} is not in 1..=60000 ms"),
            ));
        }
        let startup_speed = self.startup_speed.unwrap_or(0.3);
        if !(startup_speed.is_finite() && startup_speed > 0.0) {
            return Err((
                "startup_speed",
                format!("{startup_speed} is not a positive speed"),
            ));
        }
        let command_ms = self.command_timeout_ms.unwrap_or(500);
        if command_ms == 0 || command_ms > 60_000 {
            return Err((
                "command_timeout_ms",
                format!("{command_ms} is not in 1..=60000 ms"),
            ));
        }
        Ok(LinkSettings {
            command_timeout: Duration::from_millis(command_ms),
            baud,
            rate_hz,
            reply_timeout: Duration::from_millis(reply_ms),
            watchdog_ms: self.watchdog_ms.unwrap_or(500),
            watchdog: self.watchdog.unwrap_or_default(),
            startup_speed,
            torque_off_on_close: self.torque_off_on_close.unwrap_or(false),
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(2),
        })
    }
}

/// Why a session step failed; decides what the link does next.
#[derive(Debug, Error)]
pub enum SessionError {
    /// The port failed (unplugged, closed): close it and reconnect.
    #[error("{0}")]
    Io(std::io::Error),
    /// The hardware did not answer in time.
    #[error("{0}")]
    NoReply(String),
    /// The hardware answered, but not as it should (refused a setting,
    /// restarted, reported an error): set it up again.
    #[error("{0}")]
    Device(String),
}

impl From<serialport::Error> for SessionError {
    fn from(e: serialport::Error) -> SessionError {
        SessionError::Io(e.into())
    }
}

/// Reads whatever the port holds now, without waiting for more, and hands
/// it to `sink`: the one read both protocol sessions make each tick, so a
/// quiet port never stalls the link thread.
pub fn read_available(
    io: &mut dyn SerialPort,
    sink: impl FnOnce(&[u8]),
) -> Result<(), SessionError> {
    let n = io.bytes_to_read().map_err(SessionError::from)? as usize;
    if n > 0 {
        let mut buf = vec![0u8; n];
        let got = io.read(&mut buf).map_err(SessionError::Io)?;
        sink(&buf[..got]);
    }
    Ok(())
}

/// Where the servos are when a session has set the hardware up: the start
/// of the link's slow start-up move.
#[derive(Debug, Clone, PartialEq)]
pub enum StartPose {
    /// Read from the servos themselves (bus servos): also reported as
    /// their present positions.
    Measured(Vec<i32>),
    /// What the hardware has been sending them (a firmware bridge left
    /// pulsing by an earlier run, its watchdog holding): the servos have
    /// gone there, but nothing measured it.
    Commanded(Vec<i32>),
    /// Nobody can tell (hobby servos without pulses: just powered, or
    /// relaxed).
    Unknown,
}

/// What one tick produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TickOutcome {
    /// Command frames written.
    pub frames_sent: u64,
    /// Present positions read back (servo units, chain order), when the
    /// protocol reads them this tick.
    pub present: Option<Vec<i32>>,
}

/// One protocol's conversation with its hardware, run by the link thread
/// on the port it owns. Implemented by the firmware bridge and the Feetech
/// bus; the link supplies the timing, ramp, back-off and state.
pub trait Session: Send {
    /// Sets the hardware up after the port opened; returns where the servos
    /// are (servo units, chain order), as far as the hardware can tell.
    fn open(&mut self, io: &mut dyn SerialPort) -> Result<StartPose, SessionError>;
    /// One period: sends `commands` (none yet: only keep the link alive)
    /// and reads replies without waiting for them.
    fn tick(
        &mut self,
        io: &mut dyn SerialPort,
        commands: Option<&[i32]>,
        now: Instant,
    ) -> Result<TickOutcome, SessionError>;
    /// When the hardware last answered.
    fn last_reply(&self) -> Option<Instant>;
    /// Copies protocol details (firmware counters, servo errors) into the
    /// status.
    fn report(&self, status: &mut LinkStatus);
    /// Called on [`Link::close`] while the port is still open.
    fn close(&mut self, _io: &mut dyn SerialPort) {}
}

/// Where the link is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LinkState {
    /// Opening the port and setting the hardware up.
    #[default]
    Connecting,
    /// Frames going out, replies coming back.
    Connected,
    /// Frames going out, but no reply for `for_ms`.
    Silent { for_ms: u64 },
    /// The port could not be opened or failed; retrying.
    Disconnected { error: String, retry_in_ms: u64 },
    /// [`Link::close`] was called.
    Closed,
}

/// A snapshot of the link for status reports and tests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkStatus {
    pub port: String,
    pub state: LinkState,
    /// Successful connections so far (more than 1: it reconnected).
    pub connects: u32,
    /// Failed attempts since the last successful connection.
    pub attempts: u32,
    /// Command frames written since the link started.
    pub frames_sent: u64,
    /// The last error, kept after recovering from it.
    pub last_error: Option<String>,
    /// The start-up move from the servos' positions is under way.
    pub ramping: bool,
    /// No commands from the caller for the command timeout: nothing is
    /// written until they come again.
    pub paused: bool,
    /// The commands of the last frame (servo units).
    pub output: Option<Vec<i32>>,
    /// Present positions of the servos (servo units), when they report them.
    pub present: Option<Vec<i32>>,
    /// The firmware bridge's last status reply.
    pub firmware: Option<FirmwareStatus>,
    /// Problems of individual bus servos, one line each naming the servo
    /// ("servo id 3: no reply for 250 ms", "servo id 2: overload"); empty
    /// when all is well.
    pub servo_errors: Vec<String>,
    /// Reply bytes that were not valid frames or packets.
    pub reply_garbage: u64,
    /// Frames the hardware did not receive, when it can tell (the firmware
    /// bridge counts valid frames; known after [`Link::close`]).
    pub frames_lost: Option<u64>,
}

impl LinkStatus {
    /// One line for logs and diagnostics.
    pub fn describe(&self) -> String {
        let line = self.describe_state();
        if self.servo_errors.is_empty() || matches!(self.state, LinkState::Closed) {
            line
        } else {
            format!("{line}; {}", self.servo_errors.join("; "))
        }
    }

    fn describe_state(&self) -> String {
        match &self.state {
            LinkState::Connecting => format!("connecting to {}", self.port),
            LinkState::Connected if self.paused => format!(
                "{}: connected, paused: no new commands (the firmware watchdog takes over)",
                self.port
            ),
            LinkState::Connected if self.ramping => {
                format!(
                    "{}: connected, moving slowly to the first command",
                    self.port
                )
            }
            LinkState::Connected => format!("{}: connected", self.port),
            LinkState::Silent { for_ms } => {
                format!("{}: silent, no reply for {for_ms} ms", self.port)
            }
            LinkState::Disconnected { error, retry_in_ms } => format!(
                "{}: disconnected ({error}); retrying in {retry_in_ms} ms",
                self.port
            ),
            LinkState::Closed => format!("{}: closed", self.port),
        }
    }
}

/// Moves the output toward the commands at bounded speed (servo units).
#[derive(Debug, Clone)]
pub(crate) struct Ramp {
    current: Option<Vec<f64>>,
    speed: Vec<f64>,
    startup_speed: Vec<f64>,
    range: Vec<(i32, i32)>,
    /// Where servos that cannot report their position are assumed to rest
    /// at switch-on (commands), from the calibration's park pose.
    park: Option<Vec<f64>>,
    starting: bool,
}

impl Ramp {
    pub(crate) fn new(cal: &Calibration, startup_speed: f64) -> Ramp {
        Ramp {
            current: None,
            speed: cal.joints.iter().map(|j| j.speed_command()).collect(),
            startup_speed: cal.joints.iter().map(|j| startup_speed * j.scale).collect(),
            range: cal.joints.iter().map(|j| (j.min, j.max)).collect(),
            park: cal
                .park_commands()
                .map(|p| p.into_iter().map(f64::from).collect()),
            starting: false,
        }
    }

    /// The hardware told where the servos are (clamped into range: a
    /// servo found beyond its range is brought back to it first); the
    /// next commands start from there at the start-up speed. When it
    /// cannot tell, the output resumes from where it was; on the first
    /// connection, when nothing was sent yet, it starts from the park
    /// pose, if the calibration gives one, at the start-up speed too.
    pub(crate) fn connected(&mut self, start: &StartPose) {
        match start {
            StartPose::Measured(p) | StartPose::Commanded(p) => {
                self.current = Some(
                    p.iter()
                        .zip(&self.range)
                        .map(|(&x, &(lo, hi))| f64::from(x.clamp(lo, hi)))
                        .collect(),
                );
                self.starting = true;
            }
            StartPose::Unknown if self.current.is_none() && self.park.is_some() => {
                self.current = self.park.clone();
                self.starting = true;
            }
            StartPose::Unknown => {}
        }
    }

    pub(crate) fn starting(&self) -> bool {
        self.starting
    }

    /// One period of `dt` s toward `target`; `None` until the first
    /// command. Without a known start (hobby servos without a park pose)
    /// the first command is sent as it is.
    pub(crate) fn step(&mut self, target: Option<&[i32]>, dt: f64) -> Option<Vec<i32>> {
        let target = target?;
        let cur = self
            .current
            .get_or_insert_with(|| target.iter().map(|&t| f64::from(t)).collect());
        let speeds = if self.starting {
            &self.startup_speed
        } else {
            &self.speed
        };
        let mut arrived = true;
        let out = cur
            .iter_mut()
            .zip(target)
            .zip(speeds)
            .zip(&self.range)
            .map(|(((c, &t), &v), &(lo, hi))| {
                let max = v * dt;
                *c += (f64::from(t) - *c).clamp(-max, max);
                *c = c.clamp(f64::from(lo), f64::from(hi));
                if (f64::from(t) - *c).abs() > 0.5 {
                    arrived = false;
                }
                (c.round() as i32).clamp(lo, hi)
            })
            .collect();
        if arrived {
            self.starting = false;
        }
        Some(out)
    }
}

struct Slot {
    target: Option<Vec<i32>>,
    /// When the caller last sent commands.
    sent_at: Option<Instant>,
    status: LinkStatus,
    stop: bool,
}

struct Shared {
    slot: Mutex<Slot>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        // A panic in the other thread while copying cannot leave the slot
        // half-written in a way that matters; keep going.
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Handle to a running link thread. Dropping it closes the link.
pub struct Link {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// Opens a serial port at `baud` with a short I/O timeout, so a stalled
/// port costs the thread at most that long per call.
fn open_port(path: &str, baud: u32) -> Result<Box<dyn SerialPort>, SessionError> {
    serialport::new(path, baud)
        .timeout(Duration::from_millis(50))
        .open()
        .map_err(|e| {
            let io: std::io::Error = e.into();
            SessionError::Io(std::io::Error::new(
                io.kind(),
                format!("cannot open {path}: {io}"),
            ))
        })
}

impl Link {
    /// Starts the link thread on `port` for `session`. Returns at once; the
    /// connection is made (and remade) in the background.
    pub fn start(
        port: &str,
        cal: &Calibration,
        settings: LinkSettings,
        session: Box<dyn Session>,
    ) -> std::io::Result<Link> {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot {
                target: None,
                sent_at: None,
                status: LinkStatus {
                    port: port.to_string(),
                    ..LinkStatus::default()
                },
                stop: false,
            }),
            wake: Condvar::new(),
        });
        let ramp = Ramp::new(cal, settings.startup_speed);
        let worker = Worker {
            shared: shared.clone(),
            path: port.to_string(),
            settings,
            session,
            ramp,
        };
        let thread = std::thread::Builder::new()
            .name(format!("servo-link {port}"))
            .spawn(move || worker.run())?;
        Ok(Link {
            shared,
            thread: Some(thread),
        })
    }

    /// Replaces the commands to stream (servo units, chain order). Never
    /// waits on I/O.
    pub fn send(&self, commands: &[i32]) {
        let mut s = self.shared.lock();
        s.sent_at = Some(Instant::now());
        match &mut s.target {
            Some(t) if t.len() == commands.len() => t.copy_from_slice(commands),
            t => *t = Some(commands.to_vec()),
        }
    }

    /// A copy of the link's state.
    pub fn status(&self) -> LinkStatus {
        self.shared.lock().status.clone()
    }

    /// Present positions, when the servos report them.
    pub fn present(&self) -> Option<Vec<i32>> {
        self.shared.lock().status.present.clone()
    }

    /// Stops the thread (letting the session close the hardware politely)
    /// and returns the final state.
    pub fn close(mut self) -> LinkStatus {
        self.stop();
        self.status()
    }

    fn stop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Worker {
    shared: Arc<Shared>,
    path: String,
    settings: LinkSettings,
    session: Box<dyn Session>,
    ramp: Ramp,
}

impl Worker {
    /// Sleeps until `until` or a stop request; true when asked to stop.
    fn wait(&self, until: Instant) -> bool {
        let mut s = self.shared.lock();
        loop {
            if s.stop {
                return true;
            }
            let now = Instant::now();
            if now >= until {
                return false;
            }
            s = self
                .shared
                .wake
                .wait_timeout(s, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn connect(&mut self) -> Result<Box<dyn SerialPort>, SessionError> {
        let mut port = open_port(&self.path, self.settings.baud)?;
        let start = self.session.open(port.as_mut())?;
        self.ramp.connected(&start);
        let mut s = self.shared.lock();
        s.status.present = match start {
            StartPose::Measured(p) => Some(p),
            _ => None,
        };
        Ok(port)
    }

    fn run(mut self) {
        let period = Duration::from_secs_f64(1.0 / self.settings.rate_hz);
        let mut backoff = self.settings.backoff_min;
        let mut port: Option<Box<dyn SerialPort>> = None;
        let mut next = Instant::now();
        loop {
            if self.wait(next) {
                break;
            }
            let now = Instant::now();
            let Some(io) = port.as_mut() else {
                match self.connect() {
                    Ok(p) => {
                        port = Some(p);
                        backoff = self.settings.backoff_min;
                        let mut s = self.shared.lock();
                        s.status.connects += 1;
                        s.status.attempts = 0;
                        s.status.state = LinkState::Connected;
                        s.status.ramping = self.ramp.starting();
                        next = now;
                    }
                    Err(e) => {
                        let mut s = self.shared.lock();
                        s.status.attempts += 1;
                        s.status.last_error = Some(e.to_string());
                        s.status.state = LinkState::Disconnected {
                            error: e.to_string(),
                            retry_in_ms: backoff.as_millis() as u64,
                        };
                        self.session.report(&mut s.status);
                        next = now + backoff;
                        backoff = (backoff * 2).min(self.settings.backoff_max);
                    }
                }
                continue;
            };
            let (target, sent_at) = {
                let s = self.shared.lock();
                (s.target.clone(), s.sent_at)
            };
            let stale =
                sent_at.is_some_and(|t| now.duration_since(t) > self.settings.command_timeout);
            if stale {
                // Write nothing, not even a heartbeat: the firmware's
                // watchdog must see the silence.
                let mut s = self.shared.lock();
                s.status.paused = true;
                next += period;
                if next < now {
                    next = now + period;
                }
                continue;
            }
            let output = self.ramp.step(target.as_deref(), period.as_secs_f64());
            let result = self.session.tick(io.as_mut(), output.as_deref(), now);
            let mut s = self.shared.lock();
            s.status.paused = false;
            match result {
                Ok(t) => {
                    s.status.frames_sent += t.frames_sent;
                    if let Some(p) = t.present {
                        s.status.present = Some(p);
                    }
                    if output.is_some() {
                        s.status.output = output;
                    }
                    s.status.ramping = self.ramp.starting();
                    let quiet = self
                        .session
                        .last_reply()
                        .map_or(self.settings.reply_timeout, |r| now.duration_since(r));
                    s.status.state = if quiet >= self.settings.reply_timeout {
                        LinkState::Silent {
                            for_ms: quiet.as_millis() as u64,
                        }
                    } else {
                        LinkState::Connected
                    };
                    next += period;
                    if next < now {
                        // Late (the machine was busy): skip, do not burst.
                        next = now + period;
                    }
                }
                Err(e) => {
                    // Close and reconnect after the shortest back-off; the
                    // ramp keeps the pose reached, to resume from.
                    port = None;
                    s.status.last_error = Some(e.to_string());
                    s.status.state = LinkState::Disconnected {
                        error: e.to_string(),
                        retry_in_ms: backoff.as_millis() as u64,
                    };
                    next = now + backoff;
                }
            }
            self.session.report(&mut s.status);
        }
        if let Some(io) = port.as_mut() {
            self.session.close(io.as_mut());
        }
        let mut s = self.shared.lock();
        self.session.report(&mut s.status);
        s.status.state = LinkState::Closed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Chain;

    fn load(config: &str) -> Calibration {
        let root = env!("CARGO_MANIFEST_DIR");
        let chain = Chain::from_urdf_file(format!("{root}/urdf/arm.urdf"), None, None).unwrap();
        Calibration::load(format!("{root}/{config}"), &chain).unwrap()
    }

    fn cal() -> Calibration {
        load("config/servos_feetech.yaml")
    }

    #[test]
    fn start_up_move_is_slow_then_joint_speed() {
        let c = cal();
        let mut r = Ramp::new(&c, 0.3);
        assert_eq!(r.step(None, 0.02), None, "nothing before a command");
        r.connected(&StartPose::Measured(vec![1500, 2048, 2048, 2048, 2048]));
        let target = [2500, 2048, 2048, 2048, 2048];
        let per_tick = 0.3 * c.joints[0].scale * 0.02;
        let mut last = 1500.0;
        let mut ticks = 0;
        while r.starting() {
            let out = r.step(Some(&target), 0.02).unwrap();
            let x = f64::from(out[0]);
            assert!(x - last <= per_tick + 1.0, "{x} after {last}");
            last = x;
            ticks += 1;
            assert!(ticks < 10_000);
        }
        assert_eq!(last, 2500.0);
        // After arriving, the joint speed limit (3 rad/s) applies.
        let out = r.step(Some(&[1500, 2048, 2048, 2048, 2048]), 0.02).unwrap();
        let fast = 3.0 * c.joints[0].scale * 0.02;
        assert!((f64::from(2500 - out[0]) - fast).abs() <= 1.0);
    }

    #[test]
    fn hobby_servos_start_from_the_park_pose_on_the_first_connection_only() {
        let mut c = load("config/servos_pwm.yaml");
        let target: Vec<i32> = c.joints.iter().map(|j| j.zero as i32 + 300).collect();
        // Without a park pose the first command goes out as it is.
        let mut r = Ramp::new(&c, 0.3);
        r.connected(&StartPose::Unknown);
        assert!(!r.starting());
        assert_eq!(r.step(Some(&target), 0.02).unwrap(), target);

        for j in &mut c.joints {
            j.park = Some(0.0);
        }
        let park = c.park_commands().unwrap();
        let mut r = Ramp::new(&c, 0.3);
        r.connected(&StartPose::Unknown);
        assert!(r.starting());
        let mut last = park.clone();
        let mut ticks = 0;
        while r.starting() {
            let out = r.step(Some(&target), 0.02).unwrap();
            for ((o, l), j) in out.iter().zip(&last).zip(&c.joints) {
                let step = f64::from((o - l).abs());
                assert!(step <= 0.3 * j.scale * 0.02 + 1.0, "{out:?} after {last:?}");
            }
            last = out;
            ticks += 1;
            assert!(ticks < 10_000);
        }
        assert_eq!(last, target);
        // A reconnection (the board was replugged) resumes from the pose
        // reached, not from the park pose: nothing to ramp.
        r.connected(&StartPose::Unknown);
        assert!(!r.starting());
        assert_eq!(r.step(Some(&target), 0.02).unwrap(), target);
    }

    #[test]
    fn present_outside_range_is_brought_into_it() {
        let c = cal();
        let mut r = Ramp::new(&c, 0.3);
        r.connected(&StartPose::Measured(vec![0, 2048, 2048, 2048, 2048]));
        let out = r.step(Some(&[2048; 5]), 0.02).unwrap();
        let per_tick = 0.3 * c.joints[0].scale * 0.02;
        let min = c.joints[0].min;
        assert!(
            out[0] >= min && f64::from(out[0] - min) <= per_tick + 1.0,
            "{} from below {min}",
            out[0]
        );
    }

    #[test]
    fn link_settings_defaults_and_errors() {
        let s = LinkFile::default().resolve(OutputKind::Pwm).unwrap();
        assert_eq!((s.baud, s.rate_hz, s.watchdog_ms), (115_200, 50.0, 500));
        let f = LinkFile {
            reply_timeout_ms: Some(0),
            ..LinkFile::default()
        };
        assert_eq!(
            f.resolve(OutputKind::Feetech).unwrap_err().0,
            "reply_timeout_ms"
        );
        let f = LinkFile {
            command_timeout_ms: Some(0),
            ..LinkFile::default()
        };
        assert_eq!(
            f.resolve(OutputKind::Pwm).unwrap_err().0,
            "command_timeout_ms"
        );
        let f = LinkFile {
            startup_speed: Some(f64::NAN),
            ..LinkFile::default()
        };
        assert_eq!(
            f.resolve(OutputKind::Feetech).unwrap_err().0,
            "startup_speed"
        );
    }
}
