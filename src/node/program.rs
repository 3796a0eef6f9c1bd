//! Programs: a YAML list of steps the arm carries out one after the
//! other, each once the one before has finished, so that a pick and place
//! fits in ten lines:
//!
//! ```yaml
//! - pose: home                                   # a named pose of the poses file
//! - gripper: open                                # open, close, or a position
//! - target: {position: [0.18, 0.0, 0.06]}        # a tip target (orientation optional)
//! - gripper: close
//! - joints: {shoulder: 0.2, elbow: 1.2}          # any joints, in joint space
//! - wait: 0.5                                    # seconds
//! ```
//!
//! A step has finished when the arm has come to rest (a target when it was
//! solved and reached; one found out of reach stops the program, naming
//! the step). Each step moves the arm through the same commands as the
//! topics do (so through the same motion limits and checks); the file is
//! checked against the robot before anything moves ([`mod@file`]). Any other
//! command that moves the arm, and relax, stop a running program.

pub mod file;

pub use file::{GripperGoal, Program, ProgramError, Programs, RobotView, Step, TargetStep};

use serde::Serialize;
use std::sync::Arc;

/// A step that has not finished in this long (s) stops the program: an
/// arm that never comes to rest is not doing what the program says.
pub const STEP_TIMEOUT_S: f64 = 60.0;

/// Where a program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramState {
    Running,
    Done,
    /// A step could not be carried out.
    Failed,
    /// Stopped by another command or by relax.
    Stopped,
}

/// The latest program run, as the status and `/diagnostics` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgramStatus {
    pub name: String,
    pub state: ProgramState,
    /// The step under way (1-based), or the last one.
    pub step: usize,
    pub steps: usize,
    /// Why it failed or stopped.
    pub message: Option<String>,
}

/// What the core does for the program this tick.
#[derive(Debug, Clone, PartialEq)]
pub enum Advance {
    /// Nothing: a step is under way.
    Busy,
    /// Carry out this step now.
    Issue(Step),
    Done,
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// The next step is to be issued.
    Ready,
    /// A move under way since `since`; `unreachable` targets counted before it.
    Moving {
        since: f64,
        unreachable: u64,
    },
    Waiting {
        until: f64,
    },
}

/// One run of a program.
#[derive(Debug, Clone)]
pub struct ProgramRun {
    program: Arc<Program>,
    next: usize,
    phase: Phase,
    pub status: ProgramStatus,
}

impl ProgramRun {
    pub fn new(program: Arc<Program>) -> ProgramRun {
        ProgramRun {
            status: ProgramStatus {
                name: program.name.clone(),
                state: ProgramState::Running,
                step: 0,
                steps: program.steps.len(),
                message: None,
            },
            program,
            next: 0,
            phase: Phase::Ready,
        }
    }

    /// The step at index `k`, as a person reads it in a message.
    fn describe(&self, k: usize) -> String {
        format!(
            "step {} of {} ({})",
            k + 1,
            self.program.steps.len(),
            self.program.steps[k].describe()
        )
    }

    /// The tick at `now`: `settled` when the arm is at rest with nothing
    /// pending, `unreachable` the core's count of unreachable targets.
    pub fn advance(&mut self, now: f64, settled: bool, unreachable: u64) -> Advance {
        match self.phase {
            Phase::Ready => {
                let Some(step) = self.program.steps.get(self.next).cloned() else {
                    self.status.state = ProgramState::Done;
                    return Advance::Done;
                };
                self.status.step = self.next + 1;
                if let Step::Wait(s) = step {
                    self.phase = Phase::Waiting { until: now + s };
                    return self.advance(now, settled, unreachable);
                }
                self.phase = Phase::Moving {
                    since: now,
                    unreachable,
                };
                Advance::Issue(step)
            }
            Phase::Moving {
                since,
                unreachable: before,
            } => {
                if unreachable > before {
                    return self.fail(format!("{}: out of reach", self.describe(self.next)));
                }
                if settled {
                    return self.finish_step(now, settled, unreachable);
                }
                if now - since > STEP_TIMEOUT_S {
                    return self.fail(format!(
                        "{}: not finished within {STEP_TIMEOUT_S} s",
                        self.describe(self.next)
                    ));
                }
                Advance::Busy
            }
            Phase::Waiting { until } if now >= until => self.finish_step(now, settled, unreachable),
            Phase::Waiting { .. } => Advance::Busy,
        }
    }

    fn finish_step(&mut self, now: f64, settled: bool, unreachable: u64) -> Advance {
        self.next += 1;
        self.phase = Phase::Ready;
        self.advance(now, settled, unreachable)
    }

    /// The step just issued was refused by the core: the program fails.
    pub fn refused(&mut self, why: &str) -> Advance {
        self.fail(format!("{}: refused, {why}", self.describe(self.next)))
    }

    fn fail(&mut self, why: String) -> Advance {
        self.status.state = ProgramState::Failed;
        self.status.message = Some(why.clone());
        Advance::Failed(why)
    }

    /// Stopped by something else (a command, relax).
    pub fn stop(&mut self, why: String) {
        self.status.state = ProgramState::Stopped;
        self.status.message = Some(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(steps: Vec<Step>) -> Arc<Program> {
        Arc::new(Program {
            name: "p".into(),
            steps,
        })
    }

    #[test]
    fn each_step_waits_for_the_one_before_and_waits_wait() {
        let p = program(vec![
            Step::Gripper(GripperGoal::Open),
            Step::Wait(0.5),
            Step::Pose("home".into()),
        ]);
        let mut r = ProgramRun::new(p);
        assert_eq!(
            r.advance(0.0, true, 0),
            Advance::Issue(Step::Gripper(GripperGoal::Open))
        );
        assert_eq!(r.advance(0.02, false, 0), Advance::Busy);
        // Settled: the wait begins at once and holds for its time.
        assert_eq!(r.advance(0.04, true, 0), Advance::Busy);
        assert_eq!(r.status.step, 2);
        assert_eq!(r.advance(0.5, true, 0), Advance::Busy);
        assert_eq!(
            r.advance(0.54, true, 0),
            Advance::Issue(Step::Pose("home".into()))
        );
        assert_eq!(r.advance(0.56, true, 0), Advance::Done);
        assert_eq!(r.status.state, ProgramState::Done);
    }

    #[test]
    fn an_unreachable_target_fails_the_program_naming_the_step() {
        let target = Step::Target(TargetStep {
            position: [1.0, 0.0, 0.0],
            orientation: None,
        });
        let mut r = ProgramRun::new(program(vec![target.clone()]));
        assert_eq!(r.advance(0.0, true, 3), Advance::Issue(target));
        let Advance::Failed(why) = r.advance(0.02, true, 4) else {
            panic!("not failed");
        };
        assert!(
            why.starts_with("step 1 of 1 (target (1.000, 0.000, 0.000) m)"),
            "{why}"
        );
        assert_eq!(r.status.state, ProgramState::Failed);
    }
}
