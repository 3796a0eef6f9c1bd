//! The arm's servos during calibration: found on the bus, driven through
//! the project's own link thread with a provisional calibration (every
//! joint's full device range, moving at the start-up speed), relaxed and
//! read (bus servos) or stepped pulse by pulse (hobby servos).

use anyhow::{Context, bail};
use arm_ik::model::Chain;
use arm_ik::servo::calibration::{Calibration, CalibrationFile, JointEntry};
use arm_ik::servo::joint::Fields;
use arm_ik::servo::link::{Link, LinkFile, OnExit, Pacing};
use arm_ik::servo::protocol::{FoundServo, Protocol};
use std::time::{Duration, Instant};

/// How long the answers to a broadcast are awaited at each speed (a
/// reply restarts a quarter of it): generous, a scan is done once.
const SCAN_WINDOW: Duration = Duration::from_millis(200);

/// µs per radian assumed for a hobby servo the old file gives no scale:
/// 1000 µs for 90°, what most servos roughly do.
pub const PWM_SCALE: f64 = 636.62;

/// The servos found at one speed.
pub struct Found {
    pub baud: u32,
    pub servos: Vec<FoundServo>,
}

/// Finds the servos: at `baud` first, then at the protocol's usual
/// speeds; the first speed any servo answers at.
pub fn scan(protocol: &Protocol, port: &str, baud: u32) -> anyhow::Result<Found> {
    let Some(scanner) = protocol.scan else {
        bail!("{protocol} servos cannot be scanned");
    };
    let mut tried = vec![baud];
    tried.extend(scanner.bauds.iter().filter(|&&b| b != baud));
    for &b in &tried {
        let mut io = serialport::new(port, b)
            .timeout(Duration::from_millis(20))
            .open()
            .with_context(|| format!("cannot open {port}"))?;
        let servos = (scanner.find)(io.as_mut(), SCAN_WINDOW)
            .map_err(|e| anyhow::anyhow!("{port} at {b} baud: {e}"))?;
        if !servos.is_empty() {
            return Ok(Found { baud: b, servos });
        }
    }
    let list: Vec<String> = tried.iter().map(u32::to_string).collect();
    bail!(
        "no {protocol} servo answered on {port} at {} baud: check the power and the wiring",
        list.join(", ")
    )
}

/// The provisional file the wizard drives the servos with: each joint's
/// output and fields (over the file's `fields`), its full device range, zero in the middle, moving
/// at the start-up speed.
pub fn provisional(
    chain: &Chain,
    kind: &str,
    link: &LinkFile,
    fields: &Fields,
    entries: &[JointEntry],
) -> anyhow::Result<Calibration> {
    let startup = link.startup_speed.unwrap_or(0.3);
    let joints = entries
        .iter()
        .map(|e| JointEntry {
            zero: f64::from(e.range[0] + e.range[1]) / 2.0,
            direction: 1.0,
            speed_limit: startup,
            park: None,
            ..e.clone()
        })
        .collect();
    let file = CalibrationFile {
        kind: kind.to_string(),
        link: link.clone(),
        joints,
        fields: fields.clone(),
    };
    Calibration::check(&file, chain).context("the servos found do not fit the robot")
}

/// The servos of a calibration on the port, through the link thread.
pub struct Arm {
    pub link: Link,
    pub cal: Calibration,
    /// The pulses held (hobby servos), chain order.
    pub held: Vec<i32>,
}

impl Arm {
    /// Starts the link; bus servos are relaxed at once.
    pub fn start(port: &str, cal: Calibration, held: Vec<i32>) -> anyhow::Result<Arm> {
        let session = (cal.protocol.session)(&cal.joints, &cal.link)?;
        let link = Link::start(port, &cal.joints, cal.link.clone(), session, Pacing::Own)?;
        let measured = cal.protocol.measures_positions;
        if measured {
            link.relax();
        } else {
            link.send(&held);
        }
        Ok(Arm { link, cal, held })
    }

    pub fn measured(&self) -> bool {
        self.cal.protocol.measures_positions
    }

    /// Where each joint is (servo units, chain order): measured, or the
    /// pulse held.
    pub fn positions(&self) -> Option<Vec<i32>> {
        if self.measured() {
            self.link.present()
        } else {
            Some(self.held.clone())
        }
    }

    /// Where each joint is now: for bus servos, positions read after
    /// this call (two reports later, or what there is after a second), so
    /// a press of Enter takes the pose the arm is in, not one a report
    /// ago.
    pub fn fresh_positions(&self) -> Option<Vec<i32>> {
        if self.measured() {
            let from = self.link.status().readings;
            let start = Instant::now();
            while self.link.status().readings < from + 2 && start.elapsed() < Duration::from_secs(1)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.positions()
    }

    /// Hobby servos: steps joint `k`'s pulse by `delta` within the device.
    pub fn step(&mut self, k: usize, delta: i32) {
        let j = &self.cal.joints[k];
        self.held[k] = (self.held[k] + delta).clamp(j.min, j.max);
        self.link.send(&self.held);
    }

    /// Hobby servos: joint `k`'s pulse set to `units`.
    pub fn set(&mut self, k: usize, units: i32) {
        let j = &self.cal.joints[k];
        self.held[k] = units.clamp(j.min, j.max);
        self.link.send(&self.held);
    }

    /// Hobby servos: the pulses sent again, so the link's command timeout
    /// never stops them while the person thinks.
    pub fn keep_alive(&self) {
        self.link.send(&self.held);
    }

    /// Waits (at most `timeout`) for the servos' first report.
    pub fn wait_ready(&self, timeout: Duration, stop: &dyn Fn() -> bool) -> anyhow::Result<()> {
        let start = Instant::now();
        while self.positions().is_none() {
            if stop() {
                return Ok(());
            }
            if start.elapsed() > timeout {
                let s = self.link.status();
                bail!(
                    "the servos on {} did not report: {:?} {}",
                    s.port,
                    s.state,
                    s.last_error.unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Moves to `goal` (servo units) at the start-up speed and waits until
    /// the servos are there (or `timeout`).
    pub fn move_to(&mut self, goal: &[i32], timeout: Duration, stop: &dyn Fn() -> bool) {
        if self.link.relaxed() {
            self.link.enable();
        }
        self.held = goal.to_vec();
        let start = Instant::now();
        while start.elapsed() < timeout && !stop() {
            self.link.send(goal);
            let there = self
                .positions()
                .is_some_and(|p| p.iter().zip(goal).all(|(a, b)| (a - b).abs() <= 8));
            if there && (self.measured() || start.elapsed() > Duration::from_millis(200)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the link as `link.on_exit` (set by the caller before
    /// [`start`](Arm::start)) says; bus servos that were relaxed for the
    /// calibration hold where the arm is first when it says hold.
    pub fn close(self) {
        if self.cal.link.on_exit == OnExit::Hold && self.measured() && self.link.relaxed() {
            self.link.enable();
            let start = Instant::now();
            while self.link.status().relaxed && start.elapsed() < Duration::from_millis(500) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.link.close();
    }
}
