//! The questions, in order: the zero pose, then for each joint a move in
//! its positive direction and its two stops (bus servos, read as the
//! person moves the relaxed arm); for hobby servos each joint's pulse is
//! stepped to its zero first. What was shown becomes each joint's
//! `zero`, `direction` and `range` ([`measure::derive`]).

use super::hardware::Arm;
use super::screen::{Input, Row, Ui, View};
use arm_ik::servo::calibration::measure::{self, Derived, Shown};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// One joint as the wizard asks about it.
pub struct Joint {
    pub name: String,
    pub output: u16,
    pub limits: (f64, f64),
    /// Where it points at zero, which way is positive.
    pub hint: String,
    /// Servo units per radian.
    pub scale: f64,
    pub device: [i32; 2],
    /// The old file's zero and direction, to show angles before new ones.
    pub old: Option<(f64, f64)>,
}

/// How the questions ended.
pub enum Answer<T> {
    Given(T),
    Interrupted,
}

pub struct Wizard<'a> {
    pub arm: &'a mut Arm,
    pub ui: &'a mut dyn Ui,
    pub stop: &'a AtomicBool,
    pub joints: Vec<Joint>,
    pub title: String,
    /// Zero and direction found so far, per joint.
    found: Vec<Option<(f64, f64)>>,
}

macro_rules! given {
    ($e:expr) => {
        match $e? {
            Answer::Given(v) => v,
            Answer::Interrupted => return Ok(Answer::Interrupted),
        }
    };
}

impl<'a> Wizard<'a> {
    pub fn new(
        arm: &'a mut Arm,
        ui: &'a mut dyn Ui,
        stop: &'a AtomicBool,
        joints: Vec<Joint>,
        title: String,
    ) -> Wizard<'a> {
        let found = vec![None; joints.len()];
        Wizard {
            arm,
            ui,
            stop,
            joints,
            title,
            found,
        }
    }

    /// Every joint's numbers, asked for until what is shown makes sense.
    pub fn measure(&mut self) -> anyhow::Result<Answer<Vec<Derived>>> {
        let n = self.joints.len();
        let mut zeros = vec![0; n];
        let hints: Vec<String> = std::iter::once("The URDF's zero pose (every joint at 0):".into())
            .chain(
                self.joints
                    .iter()
                    .map(|j| format!("  {}: {}", j.name, j.hint)),
            )
            .collect();
        if self.arm.measured() {
            let ask = "Servos relaxed. Put the arm in the zero pose above and press Enter.";
            zeros = given!(self.ask(None, &hints, ask, None));
        }
        let mut out = Vec::with_capacity(n);
        let mut k = 0;
        let mut note: Option<String> = None;
        while k < n {
            let j = &self.joints[k];
            let name = j.name.clone();
            let hint = vec![format!("{}: {}", j.name, j.hint)];
            if !self.arm.measured() {
                let ask = format!("Step {name} with the keys until it is at its zero pose; Enter.");
                zeros[k] = given!(self.ask(Some(k), &hint, &ask, note.take().as_deref()))[k];
            }
            let ask = format!("Move {name} a little in its positive direction; Enter.");
            let positive = given!(self.ask(Some(k), &hint, &ask, note.take().as_deref()))[k];
            let ask = format!("Move {name} to one of its stops; Enter.");
            let a = given!(self.ask(Some(k), &hint, &ask, None))[k];
            let ask = format!("Move {name} to its other stop; Enter.");
            let b = given!(self.ask(Some(k), &hint, &ask, None))[k];
            let shown = Shown {
                zero: zeros[k],
                positive,
                stops: [a, b],
            };
            let j = &self.joints[k];
            match measure::derive(&j.name, shown, j.scale, j.device) {
                Ok(d) => {
                    self.found[k] = Some((f64::from(d.zero), f64::from(d.direction)));
                    out.push(d);
                    k += 1;
                }
                Err(e) => note = Some(format!("{e}; again:")),
            }
            if note.is_none() && !self.arm.measured() {
                // The calibrated joint back at its zero before the next.
                self.arm.set(k - 1, zeros[k - 1]);
            }
        }
        Ok(Answer::Given(out))
    }

    /// Asks `ask` until Enter; the positions then. Hobby servos' pulses
    /// are stepped by the keys meanwhile (joint `current`).
    pub fn ask(
        &mut self,
        current: Option<usize>,
        lines: &[String],
        ask: &str,
        note: Option<&str>,
    ) -> anyhow::Result<Answer<Vec<i32>>> {
        let keys = if self.arm.measured() {
            "Enter: confirm, Ctrl-C: stop"
        } else {
            "Left/Right: -/+10 us, Down/Up: -/+1, PgDn/PgUp: -/+100, Enter: confirm, Ctrl-C: stop"
        };
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(Answer::Interrupted);
            }
            if !self.arm.measured() {
                self.arm.keep_alive();
            }
            let positions = self.arm.positions();
            self.show(current, lines, ask, keys, note, positions.as_deref())?;
            match self.ui.input(Duration::from_millis(50))? {
                Some(Input::Interrupt) => return Ok(Answer::Interrupted),
                Some(Input::Enter) => {
                    if let Some(p) = self.arm.fresh_positions() {
                        return Ok(Answer::Given(p));
                    }
                }
                Some(Input::Step(d)) => {
                    if let (Some(k), false) = (current, self.arm.measured()) {
                        self.arm.step(k, d);
                    }
                }
                Some(Input::Yes | Input::No) | None => {}
            }
        }
    }

    /// Asks a yes/no question.
    pub fn confirm(&mut self, lines: &[String], ask: &str) -> anyhow::Result<Answer<bool>> {
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(Answer::Interrupted);
            }
            if !self.arm.measured() {
                self.arm.keep_alive();
            }
            let positions = self.arm.positions();
            self.show(
                None,
                lines,
                ask,
                "y: yes, n: no, Ctrl-C: stop",
                None,
                positions.as_deref(),
            )?;
            match self.ui.input(Duration::from_millis(50))? {
                Some(Input::Interrupt) => return Ok(Answer::Interrupted),
                Some(Input::Yes) => return Ok(Answer::Given(true)),
                Some(Input::No) => return Ok(Answer::Given(false)),
                _ => {}
            }
        }
    }

    fn show(
        &mut self,
        current: Option<usize>,
        lines: &[String],
        ask: &str,
        keys: &str,
        note: Option<&str>,
        positions: Option<&[i32]>,
    ) -> anyhow::Result<()> {
        let rows = self
            .joints
            .iter()
            .enumerate()
            .map(|(k, j)| {
                let units = positions.and_then(|p| p.get(k).copied());
                let map = self.found[k].or(j.old);
                Row {
                    joint: j.name.clone(),
                    output: j.output,
                    units,
                    angle: units
                        .zip(map)
                        .map(|(u, (zero, dir))| (f64::from(u) - zero) / (dir * j.scale)),
                    limits: j.limits,
                    current: current == Some(k),
                }
            })
            .collect();
        self.ui.show(&View {
            title: &self.title,
            rows,
            lines,
            ask,
            keys,
            note,
        })
    }
}
